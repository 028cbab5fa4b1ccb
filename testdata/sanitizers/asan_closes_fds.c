/* -fsanitize=address code that, like a daemon, closes every descriptor
 * above stderr up to 1024 and puts a pipe on descriptor 3, then writes
 * past a heap block. Its first open() gets 3, as natively. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void overflow(int *p) { p[4] = 1; }

int main(void) {
    int fd = open("/dev/null", O_RDONLY);
    printf("first descriptor %d\n", fd);
    fflush(stdout);
    for (int i = 3; i < 1024; i++)
        close(i);
    int ends[2];
    if (pipe(ends) == 0 && ends[0] != 3)
        dup2(ends[0], 3);
    int *p = malloc(4 * sizeof *p);
    overflow(p);
    free(p);
    return 0;
}
