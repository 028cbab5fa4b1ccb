/* A shared library whose constructor starts a thread that lives on (as
   some runtimes' and loggers' do): the process is no longer single-
   threaded when the program starts. */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg) {
  for (;;) pause();
  return arg;
}

__attribute__((constructor)) static void start_thread(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, idle, NULL) == 0) pthread_detach(thread);
}

int thread_lib_ready(void) { return 1; }
