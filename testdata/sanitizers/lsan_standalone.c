/* LeakSanitizer without AddressSanitizer (gcc -fsanitize=leak): it
 * instruments nothing, so the objects do not ask for its runtime; the
 * command line does. LeakSanitizer's documented example: the only pointer
 * to a block was a global, overwritten. */
#include <stdio.h>
#include <stdlib.h>

void *volatile p;

int main(void) {
    p = malloc(7);
    p = 0; /* The memory is leaked here. */
    puts("overwritten");
    return 0;
}
