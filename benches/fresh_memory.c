/* The first write of fresh memory, as a reference for the spread of
 * jitrun's fixup phase (issue 32): how long a new process takes to write
 * BYTES bytes of memory it just mapped, backed as jitrun backs an image it
 * fills (src/memory/in_process.rs): transparent huge pages for each 2 MiB
 * of which at least 1 MiB is written, the small-page rest populated in one
 * call from 64 KiB on. Prints microseconds.
 *
 *     fresh_memory BYTES
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define HUGE_PAGE (2UL << 20)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: fresh_memory BYTES\n");
        return 2;
    }
    size_t bytes = strtoull(argv[1], NULL, 0);
    size_t huge = bytes % HUGE_PAGE >= HUGE_PAGE / 2 ? (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE
                                                     : bytes / HUGE_PAGE * HUGE_PAGE;
    size_t len = (huge > bytes ? huge : bytes) + HUGE_PAGE;
    char *mapped = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    char *start = (char *)(((uintptr_t)mapped + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
    double begin = now_us();
    if (huge)
        madvise(start, huge, MADV_HUGEPAGE);
    if (bytes > huge && bytes - huge >= (64 << 10))
        madvise(start + huge, bytes - huge, MADV_POPULATE_WRITE);
    memset(start, 0x90, bytes);
    double end = now_us();
    printf("%.1f\n", end - begin);
    return 0;
}
