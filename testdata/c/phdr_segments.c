/* dl_iterate_phdr lists the program itself, with a loaded segment for
   each of its parts and the protections they have: how a garbage
   collector (Boehm's) finds its roots, the globals, and how programs find
   their own code. The program's entry has an empty name, as natively. */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int initialized = 42;
int zeroed;
static const char text_constant[] = "read only";

struct probe {
    const char *what;
    uintptr_t address;
    int flags;    /* PF_* of the segment holding it, -1 if none */
    int in_named; /* held by an object with a non-empty name */
};

static int visit(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct probe *probes = data;
    for (struct probe *p = probes; p->what; p++) {
        for (int i = 0; i < info->dlpi_phnum; i++) {
            const ElfW(Phdr) *h = &info->dlpi_phdr[i];
            uintptr_t start = info->dlpi_addr + h->p_vaddr;
            if (h->p_type == PT_LOAD && p->address >= start && p->address < start + h->p_memsz && p->flags < 0) {
                p->flags = (int)h->p_flags;
                p->in_named = info->dlpi_name && info->dlpi_name[0] != 0;
            }
        }
    }
    return 0;
}

int main(void) {
    struct probe probes[] = {
        {"main", (uintptr_t)&main, -1, 0},
        {"initialized data", (uintptr_t)&initialized, -1, 0},
        {"zero-filled data", (uintptr_t)&zeroed, -1, 0},
        {"read-only data", (uintptr_t)text_constant, -1, 0},
        {"libc's printf", (uintptr_t)&printf, -1, 0},
        {0, 0, 0, 0},
    };
    dl_iterate_phdr(visit, probes);
    for (struct probe *p = probes; p->what; p++) {
        if (p->flags < 0) {
            printf("%s: in no loaded segment\n", p->what);
            continue;
        }
        printf("%s: %c%c%c, %s\n", p->what, p->flags & PF_R ? 'r' : '-', p->flags & PF_W ? 'w' : '-',
               p->flags & PF_X ? 'x' : '-', p->in_named ? "a named object" : "the program");
    }
    return zeroed + (int)strlen(text_constant) - 9;
}
