/* -fsanitize=address code that sets its own defaults, as test harnesses
 * do: exit status 42 for an error, and a suppressed leak. With an argument
 * it writes past a heap block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

const char *__asan_default_options(void) { return "exitcode=42"; }
const char *__lsan_default_suppressions(void) { return "leak:known_leak"; }
int __lsan_is_turned_off(void) { return 0; }

static void *volatile sink;

__attribute__((noinline)) void known_leak(void) {
    sink = malloc(77);
    sink = NULL;
}

int main(int argc, char **argv) {
    known_leak();
    int *p = malloc(4 * sizeof *p);
    if (argc > 1)
        p[4] = 1;
    free(p);
    /* Variables of jitrun's own restarts (the sanitizer's preload, the
     * hooks' answers): none, as natively, in environ and in /proc. */
    int jitruns = 0, in_proc = 0;
    unsigned order = 0; /* changes if the variables come in another order */
    for (char **e = environ; *e; e++) {
        jitruns += strncmp(*e, "JITRUN_", 7) == 0;
        for (const char *c = *e; *c && *c != '='; c++)
            order = order * 31 + (unsigned char)*c;
    }
    static char block[1 << 16];
    FILE *f = fopen("/proc/self/environ", "r");
    size_t n = f ? fread(block, 1, sizeof block - 1, f) : 0;
    for (char *e = block; e < block + n; e += strlen(e) + 1)
        in_proc += strncmp(e, "JITRUN_", 7) == 0 || strncmp(e, "LD_PRELOAD=", 11) == 0;
    printf("done, %d JITRUN_ variables, %d in /proc/self/environ, order %08x\n", jitruns, in_proc, order);
    return 0;
}
