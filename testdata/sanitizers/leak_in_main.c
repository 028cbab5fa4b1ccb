/* LeakSanitizer's own first example: the only pointer to the block was a
 * local of main. Its check at exit scans the stack conservatively, so it
 * finds the leak only if what main left below the frame that calls exit
 * is overwritten, as natively, where exit is called right where main
 * returned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *p = malloc(16);
    strcpy(p, "leak");
    puts(p);
    return 0;
}
