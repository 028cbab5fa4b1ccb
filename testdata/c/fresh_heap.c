/* Reads memory from malloc without initializing it. That is undefined
   behaviour, but in a fresh native process the first allocations come
   from pages the kernel zeroed, and real programs come to rely on it:
   jitrun links on another thread (another malloc arena) so the program's
   heap is as fresh as natively. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    long sum = 0;
    for (int round = 0; round < 40; round++) {
        int *block = malloc(256 * sizeof(int));
        for (int i = 0; i < 256; i++) sum += block[i];
        /* leaked on purpose: a freed block would be reused with our writes */
    }
    char *text = malloc(100);
    int zeros = 0;
    for (int i = 0; i < 100; i++) zeros += text[i] == 0;
    printf("sum of fresh memory %ld, zero bytes %d of 100\n", sum, zeros);
    return 0;
}
