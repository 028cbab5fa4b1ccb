/* -fsanitize=thread code whose own default options make a race exit 5.
 * The two writes are ordered by relaxed atomics, which ThreadSanitizer does
 * not count as synchronisation, and both happen while both threads live:
 * the race is reported on every run, whatever the scheduler does. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

const char *__tsan_default_options(void) { return "exitcode=5"; }

int shared;
static int step;

static void wait_for(int value) {
    while (__atomic_load_n(&step, __ATOMIC_RELAXED) != value)
        sched_yield();
}

static void *work(void *unused) {
    (void)unused;
    shared++;
    __atomic_store_n(&step, 1, __ATOMIC_RELAXED);
    wait_for(2);
    return NULL;
}

int main(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, work, NULL);
    wait_for(1);
    shared++;
    __atomic_store_n(&step, 2, __ATOMIC_RELAXED);
    pthread_join(thread, NULL);
    puts("joined");
    return 0;
}
