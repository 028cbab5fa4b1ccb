/* -fsanitize=address code that sets its own defaults, as test harnesses
 * do: exit status 42 for an error, and a suppressed leak. With an argument
 * it writes past a heap block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

const char *__asan_default_options(void) { return "exitcode=42"; }
const char *__lsan_default_suppressions(void) { return "leak:known_leak"; }

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
    int jitruns = 0; /* variables of jitrun's own restarts: none, as natively */
    for (char **e = environ; *e; e++)
        jitruns += strncmp(*e, "JITRUN_", 7) == 0;
    printf("done, %d JITRUN_ variables\n", jitruns);
    return 0;
}
