// jitrun-test: libs=-lm
/* Reads memory from malloc without initializing it. That is undefined
   behaviour, but in a fresh native process the first allocations come
   from pages the kernel zeroed, and real programs come to rely on it:
   jitrun keeps its own memory apart, looks symbols up without the
   loader's dlsym where it can, and leaves nothing that the loader freed
   while it loaded the program's libraries (libm here) in the program's
   tcache or bins, so the program's heap is as fresh as natively. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Nonzero bytes in a fresh block of `size` bytes (read through volatile:
   the compiler may assume nothing about them). */
static int dirty(size_t size) {
    const volatile unsigned char *block = malloc(size);
    int count = 0;
    for (size_t i = 0; i < size; i++) count += block[i] != 0;
    return count;
}

/* The first three blocks of each size, the smallest first: one size in
   each of malloc's cached sizes (16-byte steps to 1032 bytes; freed error
   strings of the loader's failed lookups, dlsym, would come back there),
   then larger ones. None is freed (a freed block would come back with our
   own writes). Writes a line naming the blocks with nonzero bytes. */
static void first_blocks(char *line) {
    static const size_t larger[] = {1100, 1500, 2000, 4096, 20000, 100000};
    int blocks = 0, found = 0;
    *line = 0;
    for (size_t i = 0; i < 65 + sizeof larger / sizeof larger[0]; i++) {
        size_t size = i < 65 ? 8 + 16 * i : larger[i - 65];
        for (int j = 0; j < 3; j++, blocks++) {
            int n = dirty(size);
            if (n) found++, line += sprintf(line, " %zu#%d:%d", size, j, n);
        }
    }
    sprintf(line, "%s (%d of %d blocks)", found ? "" : " none", found, blocks);
}

int main(int argc, char **argv) {
    (void)argv;
    static char found[8192];
    first_blocks(found);
    printf("nonzero bytes in the first blocks:%s\n", found);
    long sum = 0;
    for (int round = 0; round < 40; round++) {
        const volatile int *block = malloc(256 * sizeof(int));
        for (int i = 0; i < 256; i++) sum += block[i];
    }
    const volatile char *text = malloc(100);
    int zeros = 0;
    for (int i = 0; i < 100; i++) zeros += text[i] == 0;
    printf("sum of fresh memory %ld, zero bytes %d of 100\n", sum, zeros);
    printf("%.3f\n", sqrt(argc + 1.0));
    return 0;
}
