// jitrun-test: cflags=-pthread
/* Many threads at once, each hammering its own thread-local accumulator;
   results gathered in order after joining. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 8
__thread unsigned long acc;
__thread unsigned long seed = 12345;
static unsigned long results[THREADS];

static unsigned long next(void) { seed = seed * 6364136223846793005UL + 1442695040888963407UL; return seed >> 33; }

static void *run(void *arg) {
    long id = (long)arg;
    seed += (unsigned long)id;
    for (int i = 0; i < 200000; i++) acc += next() % 1000;
    results[id] = acc;
    return NULL;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, run, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) printf("thread %d: %lu\n", i, results[i]);
    printf("main acc %lu seed %lu\n", acc, seed);
    return 0;
}
