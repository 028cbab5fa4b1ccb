#define _GNU_SOURCE
/* Variadic calls as a Mach-O arm64 object makes them (every variadic
 * argument on the stack) to glibc's functions (which read registers
 * first): jitrun's bridges must pass them through. Also a variadic
 * function of the program itself, with va_arg and a va_list handed on. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int sum_ints(int n, ...) {
    va_list ap;
    va_start(ap, n);
    int total = 0;
    for (int i = 0; i < n; i++)
        total += va_arg(ap, int);
    va_end(ap);
    return total;
}

static double mix(const char *kinds, ...) {
    va_list ap, copy;
    va_start(ap, kinds);
    va_copy(copy, ap);
    double total = 0;
    for (const char *k = kinds; *k; k++)
        total += *k == 'd' ? va_arg(ap, double) : (double)va_arg(ap, long);
    /* the copy reads the same arguments again */
    double again = 0;
    for (const char *k = kinds; *k; k++)
        again += *k == 'd' ? va_arg(copy, double) : (double)va_arg(copy, long);
    va_end(copy);
    va_end(ap);
    return total + again;
}

static void logf_to(FILE *out, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("log: ", out);
    vfprintf(out, fmt, ap);
    va_end(ap);
}

int main(int argc, char **argv) {
    (void)argv;
    printf("%d %d %d %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, argc);
    printf("%.3f %.3f %g %e %.2f %.1f %.1f %.1f %.1f %.1f\n", 1.5, -2.25, 3.0e10, 4.5e-3, 5.0f, 6.0, 7.0, 8.0, 9.0, 10.5);
    printf("%s|%c|%ld|%llu|%x|%p|%5.2f|%-4d|\n", "str", 'c', -123456789012L, 18446744073709551615ULL, 0xbeef,
           (void *)0, 3.14159, 42);
    fprintf(stderr, "to stderr %d %s %.2f\n", 7, "x", 0.5);
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%d-%d-%d %.1f %s", 10, 20, 30, 4.5, "end");
    printf("snprintf %d [%s]\n", n, buf);
    sprintf(buf, "%05d|%+.2e", 42, 12345.678);
    printf("sprintf [%s]\n", buf);
    int a = 0, b = 0;
    double d = 0;
    char word[16];
    int got = sscanf("12 34 5.5 word", "%d %d %lf %15s", &a, &b, &d, word);
    printf("sscanf %d: %d %d %.1f %s\n", got, a, b, d, word);
    printf("sum %d\n", sum_ints(10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
    printf("mix %.2f\n", mix("dldld", 1.5, 2L, 3.25, 4L, 0.125));
    logf_to(stdout, "%s has %d items at %.2f\n", "cart", 3, 9.99);
    char path[] = "/tmp/jitrun-variadic-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0640);
    dprintf(fd, "%d %s\n", 99, "dprintf");
    struct stat st;
    fstat(fd, &st);
    printf("mode %o flags %d\n", (unsigned)(st.st_mode & 0777), fcntl(fd, F_GETFL) & O_ACCMODE);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    printf("cloexec %d\n", fcntl(fd, F_GETFD));
    close(fd);
    fd = openat(AT_FDCWD, path, O_RDONLY);
    ssize_t len = read(fd, buf, sizeof buf - 1);
    buf[len > 0 ? len : 0] = 0;
    printf("read back [%s]", buf);
    close(fd);
    unlink(path);
    char *s = NULL;
    if (asprintf(&s, "%s-%d", "asprintf", 5) > 0)
        printf("%s\n", s);
    free(s);
    return 0;
}
