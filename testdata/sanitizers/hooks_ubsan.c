/* -fsanitize=undefined code whose own default options stop at the first
 * error with status 9. */
#include <limits.h>
#include <stdio.h>

const char *__ubsan_default_options(void) { return "halt_on_error=1:exitcode=9"; }

int main(int argc, char **argv) {
    (void)argv;
    int x = INT_MAX;
    x += argc;
    printf("after %d\n", x);
    return 0;
}
