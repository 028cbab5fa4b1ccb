// jitrun-test: libs=-lpthread
/* Thread-locals aligned to a page: natively the executable's TLS
   alignment sets that of every thread's static TLS area; jitrun's own is
   128, and glibc takes the image's thread-locals (loaded later) only up to
   the alignment it started with, so jitrun starts again with a module of
   this alignment preloaded. Each thread checks its own copies' alignment
   and contents, and the program sees the environment it was given. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static __thread char pair[16] __attribute__((aligned(128))) = "line pair";
static __thread char page[4096] __attribute__((aligned(4096)));
static __thread long counter = 5;

static void *check(void *arg) {
    long id = (long)arg;
    page[0] = (char)id;
    counter += id;
    int aligned = (uintptr_t)pair % 128 == 0 && (uintptr_t)page % 4096 == 0;
    printf("thread %ld: aligned %d, %s, page[0] %d, counter %ld\n", id, aligned, pair, page[0], counter);
    return 0;
}

int main(void) {
    printf("LD_PRELOAD %s\n", getenv("LD_PRELOAD") ? "set" : "unset");
    check(0);
    for (long i = 1; i <= 3; i++) {
        pthread_t t;
        pthread_create(&t, 0, check, (void *)i);
        pthread_join(t, 0);
    }
    return 0;
}
