/* Names every executable has from crt1.o, crti.o and the linker, which
   some programs read: the data's and the code's bounds (a garbage
   collector's roots), libio's version marker, the dynamic section's
   DT_DEBUG (where debuggers and GCs find the loader's list). */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdio.h>

extern char __data_start[], data_start[], _edata[], _start[], etext[], _init[], _fini[];
extern const int _IO_stdin_used;
extern ElfW(Dyn) _DYNAMIC[];

int initialized = 7;

int main(void) {
    char *data = (char *)&initialized;
    printf("data between __data_start and _edata: %d, data_start too: %d\n", __data_start <= data && data < _edata,
           data_start == __data_start);
    /* main itself may lie before _start (gcc puts it in .text.startup). */
    printf("_start in the code: %d\n", _start != 0 && _start < etext);
    printf("_init and _fini: %d %d\n", _init != 0 && _init < etext, _fini != 0 && _fini < etext);
    printf("_IO_stdin_used: %#x\n", _IO_stdin_used);
    const ElfW(Dyn) *debug = 0;
    for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_DEBUG) debug = d;
    const struct r_debug *r = debug ? (const struct r_debug *)debug->d_un.d_ptr : 0;
    printf("DT_DEBUG leads to the loaded objects: %d\n", r && r->r_version >= 1 && r->r_map != 0);
    return 0;
}
