/* Two threads, no race: a sanitized program that reports nothing
 * (tests/sanitizers.rs runs it through a link cache directory). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int counter;

static void *add(void *arg) {
    int *amounts = arg;
    for (int i = 0; i < 1000; i++)
        __atomic_fetch_add(&counter, amounts[i % 4], __ATOMIC_SEQ_CST);
    return NULL;
}

int main(void) {
    int *amounts = malloc(4 * sizeof *amounts);
    for (int i = 0; i < 4; i++)
        amounts[i] = i + 1;
    pthread_t thread;
    pthread_create(&thread, NULL, add, amounts);
    add(amounts);
    pthread_join(thread, NULL);
    printf("counter %d\n", counter);
    free(amounts);
    return 0;
}
