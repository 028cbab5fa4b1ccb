/* References to one version of a glibc function, as code built to run on
 * older glibc releases pins them (`.symver`): the object's undefined
 * symbols are named `fmemopen@GLIBC_2.2.5` (on x86-64) and so on, and bind to that
 * version (an older, hidden one too), not to the default. The old and the
 * new fmemopen disagree on where SEEK_END is; the old realpath refuses a
 * NULL buffer. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first version of each CPU's glibc: 2.2.5 on x86-64, 2.17 on aarch64
 * (whose realpath has only that one, the default). */
#if defined(__aarch64__)
#define FIRST_GLIBC "GLIBC_2.17"
#else
#define FIRST_GLIBC "GLIBC_2.2.5"
#endif
__asm__(".symver fmemopen_old, fmemopen@" FIRST_GLIBC);
__asm__(".symver fmemopen_new, fmemopen@GLIBC_2.22");
__asm__(".symver realpath_old, realpath@" FIRST_GLIBC);
extern FILE *fmemopen_old(void *, size_t, const char *);
extern FILE *fmemopen_new(void *, size_t, const char *);
extern char *realpath_old(const char *, char *);

static long end_of(FILE *(*open)(void *, size_t, const char *)) {
    char text[8] = "xyz";
    FILE *f = open(text, sizeof text, "r");
    fseek(f, 0, SEEK_END);
    long at = ftell(f);
    fclose(f);
    return at;
}

int main(void) {
    printf("SEEK_END: old %ld, new %ld, default %ld\n", end_of(fmemopen_old), end_of(fmemopen_new), end_of(fmemopen));
    errno = 0;
    char *old = realpath_old("/", NULL);
    printf("old realpath with no buffer: %s (errno %d)\n", old ? old : "refused", errno);
    char *now = realpath("/", NULL);
    printf("realpath with no buffer: %s\n", now ? now : "refused");
    free(now);
    return 0;
}
