// jitrun-test: cflags=-pthread -fexceptions
// Thread exit and cancellation unwind through the program's own frames
// (glibc forces an unwind with libgcc_s): cleanup handlers and
// __attribute__((cleanup)) variables run only if the unwinder finds the
// image's frame descriptions.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void say(void *what) { printf("cleanup: %s\n", (const char *)what); }
static void release(int *slot) { printf("scope exit: slot %d\n", *slot); }

static __attribute__((noinline)) void leave_from_deep(int depth) {
    int slot __attribute__((cleanup(release))) = depth;
    if (depth == 0)
        pthread_exit((void *)42);
    leave_from_deep(depth - 1);
    printf("not reached %d\n", slot);
}

static void *exiting(void *arg) {
    pthread_cleanup_push(say, "exiting thread");
    leave_from_deep(3);
    pthread_cleanup_pop(0);
    return arg;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started = PTHREAD_COND_INITIALIZER;
static int ready;

static void *cancelled(void *arg) {
    int slot __attribute__((cleanup(release))) = 7;
    pthread_cleanup_push(say, "cancelled thread");
    pthread_mutex_lock(&lock);
    ready = 1;
    pthread_cond_signal(&started);
    pthread_mutex_unlock(&lock);
    for (;;)
        pause(); // a cancellation point
    pthread_cleanup_pop(0);
    return arg;
}

int main(void) {
    pthread_t t;
    void *result;
    pthread_create(&t, NULL, exiting, NULL);
    pthread_join(t, &result);
    printf("exit value %ld\n", (long)result);
    fflush(stdout);

    pthread_create(&t, NULL, cancelled, NULL);
    pthread_mutex_lock(&lock);
    while (!ready)
        pthread_cond_wait(&started, &lock);
    pthread_mutex_unlock(&lock);
    pthread_cancel(t);
    pthread_join(t, &result);
    printf("cancelled: %s\n", result == PTHREAD_CANCELED ? "yes" : "no");
    return 0;
}
