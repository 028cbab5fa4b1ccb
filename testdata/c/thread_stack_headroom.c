// jitrun-test: libs=-lpthread
/* A thread created with a small explicit stack (64 KiB, as micropython's
   threads) recurses until 55 KiB below its start routine, where the
   program's own limit check stops it. glibc takes each thread's static
   TLS area out of the requested size; under jitrun that area must not be
   much larger than natively (page-aligned, it took 9.8 KB more, and this
   overflowed). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uintptr_t base;

static __attribute__((noinline)) int dive(int depth) {
    volatile char buf[512];
    memset((char *)buf, depth, sizeof buf);
    if (base - (uintptr_t)buf >= 65536 - 8192 - 1024) return depth;
    return dive(depth + 1) + buf[0] * 0;
}

static void *entry(void *arg) {
    (void)arg;
    char here;
    base = (uintptr_t)&here;
    printf("reached the program's own stack limit: %s\n", dive(0) > 0 ? "yes" : "no");
    return 0;
}

int main(void) {
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 65536);
    if (pthread_create(&t, &attr, entry, 0) != 0) return 1;
    pthread_join(t, 0);
    puts("done");
    return 0;
}
