// jitrun-test: cflags=-pthread
// Thread-local variables of a Mach-O object: initialized (__thread_data)
// and zero-filled (__thread_bss), from the main thread and new threads.
#include <pthread.h>
#include <stdio.h>

__thread int tls_counter = 10;
__thread long tls_zero;
__thread char tls_name[16] = "main";

static void *worker(void *arg) {
  int id = (int)(long)arg;
  tls_counter += id;
  tls_zero += 2 * id;
  snprintf(tls_name, sizeof tls_name, "worker%d", id);
  return (void *)(long)(tls_counter * 1000 + tls_zero);
}

int main(void) {
  pthread_t threads[4];
  for (long i = 0; i < 4; i++) pthread_create(&threads[i], NULL, worker, (void *)(i + 1));
  for (int i = 0; i < 4; i++) {
    void *ret;
    pthread_join(threads[i], &ret);
    printf("thread %d: %ld\n", i + 1, (long)ret);
  }
  tls_counter++;
  printf("main: %d %ld %s\n", tls_counter, tls_zero, tls_name);
  return 0;
}
