/* Reads memory from malloc without initializing it. That is undefined
   behaviour, but in a fresh native process the first allocations come
   from pages the kernel zeroed, and real programs come to rely on it:
   jitrun keeps its own memory apart and looks symbols up without the
   loader's dlsym where it can, so the program's heap is as fresh as
   natively. */
#include <stdio.h>
#include <stdlib.h>

/* Nonzero bytes in a fresh block of `size` bytes. */
static int dirty(size_t size) {
    unsigned char *block = malloc(size);
    int count = 0;
    for (size_t i = 0; i < size; i++) count += block[i] != 0;
    return count;
}

int main(void) {
    /* The first small blocks first: freed error strings of the loader's
       failed lookups (dlsym) would come back here from malloc's cache. */
    printf("dirty bytes in the first blocks of 24 and 48: %d %d\n", dirty(24), dirty(48));
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
