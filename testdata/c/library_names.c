// jitrun-test: libs=-lz -lm
/* The loader names a library by the path it opened it by: for `-lz` a
 * native program's DT_NEEDED is the SONAME, libz.so.1, which the loader's
 * cache resolves; the link-time name libz.so is only a symlink for ld. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

/* Which file defines `name`: the library's name as the loader knows it.
 * (Looked up with dlsym: a -fno-pic program's own `&deflate` would be its
 * PLT entry.) */
static const char *file_of(const char *name, const char *soname) {
    Dl_info info;
    if (!dladdr(dlsym(RTLD_DEFAULT, name), &info) || !info.dli_fname) return "(none)";
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (strcmp(base, soname) == 0) return soname;
    return strstr(base, ".so") ? base : "the program";
}

int main(void) {
    printf("deflate in %s\n", file_of("deflate", "libz.so.1"));
    printf("lgamma in %s\n", file_of("lgamma", "libm.so.6"));
    printf("zlib %s, lgamma(3.5) = %.3f\n", zlibVersion(), lgamma(3.5));
    return 0;
}
