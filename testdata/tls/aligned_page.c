// jitrun-test: libs=-lpthread
/* Thread-locals aligned to a page: natively the executable's TLS
   alignment sets that of every thread's static TLS area; jitrun's own is
   128, and glibc takes the image's thread-locals (loaded later) only up to
   the alignment it started with, so jitrun starts again with a module of
   this alignment preloaded. Threads started before and after a first
   touch each get a fresh, aligned page, and the program sees the
   environment it was given. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static __thread unsigned char page[4096] __attribute__((aligned(4096)));

static void *fill(void *arg) {
    unsigned sum = 0;
    for (int i = 0; i < 4096; i++) sum += page[i];
    page[4095] = (unsigned char)(uintptr_t)arg;
    return (void *)(uintptr_t)(sum + page[4095] + ((uintptr_t)page % 4096 ? 1000 : 0));
}

int main(void) {
    printf("LD_PRELOAD %s\n", getenv("LD_PRELOAD") ? "set" : "unset");
    for (uintptr_t i = 1; i <= 3; i++) {
        pthread_t t;
        void *result;
        pthread_create(&t, 0, fill, (void *)i);
        pthread_join(t, &result);
        printf("thread %u: %u\n", (unsigned)i, (unsigned)(uintptr_t)result);
    }
    printf("main: %u\n", (unsigned)(uintptr_t)fill((void *)9));
    return 0;
}
