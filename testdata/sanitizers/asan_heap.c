/* -fsanitize=address code: clean with no arguments; with "overflow" it
 * writes past a heap block, with "leak" it loses one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *volatile kept; /* volatile: -O2 keeps the malloc */
/* Reachable through a global until exit: not a leak. */
static char *volatile cached;

int main(int argc, char **argv) {
    cached = malloc(32);
    int *p = malloc(4 * sizeof *p);
    for (int i = 0; i < 4; i++)
        p[i] = i * i;
    printf("%d %d\n", p[2], p[3]);
    const char *preload = getenv("LD_PRELOAD");
    printf("LD_PRELOAD %s\n", preload ? preload : "unset");
    if (argc > 1 && strcmp(argv[1], "overflow") == 0)
        p[4] = 1;
    if (argc > 1 && strcmp(argv[1], "leak") == 0) {
        kept = malloc(24);
        kept = NULL;
    }
    free(p);
    fflush(stdout);
    return 0;
}
