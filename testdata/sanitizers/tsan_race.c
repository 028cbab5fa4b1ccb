/* -fsanitize=thread code: two threads update a counter without a lock,
 * which ThreadSanitizer reports (exit status 66). The updates take turns
 * through relaxed atomics, which ThreadSanitizer does not count as
 * synchronisation: T1 writes, then T2 writes while T1 still lives, so the
 * one report is the same on every run. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static int counter;
static int turn;

static void wait_for(int value) {
    while (__atomic_load_n(&turn, __ATOMIC_RELAXED) != value)
        sched_yield();
}

static void *work(void *arg) {
    int mine = (int)(long)arg;
    wait_for(mine);
    counter++;
    __atomic_store_n(&turn, mine + 1, __ATOMIC_RELAXED);
    wait_for(2);
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, work, (void *)0L);
    pthread_create(&b, NULL, work, (void *)1L);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    const char *options = getenv("TSAN_OPTIONS");
    printf("joined; TSAN_OPTIONS %s\n", options ? options : "unset");
    return 0;
}
