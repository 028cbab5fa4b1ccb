// jitrun-test: libs=-lpthread
/* Thread-locals aligned past a cache line (128 bytes, as code that keeps
   per-thread counters apart on CPUs prefetching line pairs does):
   natively the executable's TLS alignment sets that of every thread's
   static TLS area; under jitrun the image's thread-locals are loaded
   later, and glibc takes them only up to the alignment it started with.
   Each thread checks its own copies' alignment and contents. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

static __thread char pair[16] __attribute__((aligned(128))) = "line pair";
static __thread char other[200] __attribute__((aligned(128)));
static __thread long counter = 5;

static void *check(void *arg) {
    long id = (long)arg;
    other[0] = (char)id;
    counter += id;
    int aligned = (uintptr_t)pair % 128 == 0 && (uintptr_t)other % 128 == 0;
    printf("thread %ld: aligned %d, %s, other[0] %d, counter %ld\n", id, aligned, pair, other[0], counter);
    return 0;
}

int main(void) {
    check(0);
    for (long i = 1; i <= 3; i++) {
        pthread_t t;
        pthread_create(&t, 0, check, (void *)i);
        pthread_join(t, 0);
    }
    return 0;
}
