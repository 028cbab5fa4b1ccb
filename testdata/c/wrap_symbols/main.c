// jitrun-test: libs=-Wl,--wrap=compute -Wl,--wrap,malloc -Wl,--wrap=main -Wl,--wrap=absent
// ld's --wrap, given the compiler driver's way: undefined references to a
// wrapped name go to __wrap_NAME, references to __real_NAME to NAME (here
// a function of another object, one of libc, and main itself, which crt1.o
// refers to); a reference inside the object that defines the name stays.
#include <stdio.h>
#include <stdlib.h>

int compute(int x);
int compute_twice(int x);
int wrapped_mallocs(void);
/* Wrapped, defined nowhere, referenced weakly: still 0. */
extern int absent(void) __attribute__((weak));

int main(int argc, char **argv) {
    char *copy = malloc(16);
    snprintf(copy, 16, "%d", argc * 42);
    printf("copied %s\n", copy);
    printf("compute(3) = %d\n", compute(3));
    printf("compute_twice(4) = %d (its own calls are not wrapped)\n", compute_twice(4));
    printf("absent is %s\n", absent ? "defined" : "null");
    printf("mallocs through the wrapper: %d, argc %d\n", wrapped_mallocs(), argc);
    free(copy);
    return 7;
}
