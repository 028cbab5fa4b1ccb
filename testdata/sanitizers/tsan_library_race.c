/* A race through a library built without -fsanitize=thread: its memcpy
 * goes through the runtime's interceptor, which reports the race (66).
 * The writer fills the buffer, then the copy overwrites it while the writer
 * still lives; relaxed atomics order the two without synchronising them in
 * ThreadSanitizer's eyes, so the race is seen on every run. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

void copy_bytes(char *to, const char *from, int n); /* in libcopy.so */

static char buffer[64], source[64];
static int step;

static void wait_for(int value) {
    while (__atomic_load_n(&step, __ATOMIC_RELAXED) != value)
        sched_yield();
}

static void *fill(void *arg) {
    for (int i = 0; i < 64; i++)
        buffer[i] = (char)i;
    __atomic_store_n(&step, 1, __ATOMIC_RELAXED);
    wait_for(2);
    return arg;
}

int main(void) {
    pthread_t writer;
    pthread_create(&writer, NULL, fill, NULL);
    wait_for(1);
    copy_bytes(buffer, source, 64);
    __atomic_store_n(&step, 2, __ATOMIC_RELAXED);
    pthread_join(writer, NULL);
    printf("done\n");
    return 0;
}
