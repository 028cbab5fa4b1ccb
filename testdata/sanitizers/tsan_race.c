/* -fsanitize=thread code: two threads update a counter without a lock,
 * which ThreadSanitizer reports (exit status 66). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int counter;

static void *work(void *arg) {
    for (int i = 0; i < 10000; i++)
        counter++;
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, work, NULL);
    pthread_create(&b, NULL, work, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    const char *options = getenv("TSAN_OPTIONS");
    printf("joined; TSAN_OPTIONS %s\n", options ? options : "unset");
    return 0;
}
