// jitrun-test: cflags=-pthread
/* Thread-locals in every thread: initialized (.tdata) and zeroed (.tbss),
   static and global, arrays, address-taking, accessed from several
   functions; the access model comes from the flag set. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

__thread int counter = 42;
__thread long big[64];
static __thread char name[16] = "main";
static __thread double ratio = 1.5;
extern __thread int shared_tls;
__thread int shared_tls = 7;

static int *counter_address(void) { return &counter; }

static void *worker(void *arg) {
    long id = (long)arg;
    char label[16];
    snprintf(label, sizeof label, "worker%ld", id);
    strcpy(name, label);
    counter += (int)id;
    ratio *= (double)id;
    for (int i = 0; i < 64; i++) big[i] = id * i;
    shared_tls += (int)id;
    long s = 0;
    for (int i = 0; i < 64; i++) s += big[i];
    printf("%s: counter=%d ratio=%.1f big-sum=%ld shared=%d addr-ok=%d\n", name, counter, ratio, s, shared_tls,
           counter_address() == &counter);
    return NULL;
}

int main(void) {
    for (long i = 1; i <= 4; i++) {
        pthread_t t;
        pthread_create(&t, NULL, worker, (void *)i);
        pthread_join(t, NULL);
    }
    long s = 0;
    for (int i = 0; i < 64; i++) s += big[i];
    printf("%s: counter=%d ratio=%.1f big-sum=%ld shared=%d\n", name, counter, ratio, s, shared_tls);
    return 0;
}
