/* -fsanitize=thread code whose own default options make a race exit 5. */
#include <pthread.h>
#include <stdio.h>

const char *__tsan_default_options(void) { return "exitcode=5"; }

int shared;

static void *work(void *unused) {
    (void)unused;
    shared++;
    return NULL;
}

int main(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, work, NULL);
    shared++;
    pthread_join(thread, NULL);
    puts("joined");
    return 0;
}
