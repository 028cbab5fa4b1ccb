/* A NULL read: ASan and TSan report it themselves (exit status 1, 66),
 * UBSan reports the load and the process dies from SIGSEGV. */
#include <stdio.h>

int main(int argc, char **argv) {
    (void)argv;
    int *p = argc > 5 ? &argc : NULL;
    printf("before\n");
    fflush(stdout);
    return *p;
}
