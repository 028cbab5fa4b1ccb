/* An IFUNC resolver that reads the environment: natively the dynamic
   loader runs the executable's resolvers before the C library sets
   `environ` up, so the resolver sees none and picks its default; a
   resolver must pick the same implementation under jitrun. (Calling libc
   from a resolver is outside glibc's contract, but programs do.) */
#include <stdio.h>
#include <stdlib.h>

extern char **environ;
static int saw_environ = -1, saw_home = -1;
static int portable(void) { return 100; }
static int tuned(void) { return 200; }

static void *choose(void) {
    saw_environ = environ != 0;
    saw_home = getenv("HOME") != 0 || getenv("PATH") != 0;
    return saw_home ? (void *)tuned : (void *)portable;
}

#ifdef __code_model_large__
/* ld cannot link R_X86_64_PLTOFF64 against an IFUNC: resolved by hand. */
int pick(void) { return ((int (*)(void))choose())(); }
#else
int pick(void) __attribute__((ifunc("choose")));
#endif

int main(void) {
    int chosen = pick();
    printf("chose %d; the resolver saw environ %d, HOME or PATH %d; main sees PATH %d\n", chosen, saw_environ,
           saw_home, getenv("PATH") != 0);
    return 0;
}
