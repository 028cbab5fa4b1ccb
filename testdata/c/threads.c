// jitrun-test: cflags=-pthread
// Threads: pthread_create/join, a mutex-protected counter, a condition
// variable handing work between threads, thread-local variables, a
// once-initializer, and results printed only after joining.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define ITERATIONS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_total;
static __thread long per_thread_count;
static __thread int thread_tag = -1;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;

static void init_once(void) { once_runs++; }

struct job {
  int id;
  long result;
  int tag_seen;
};

static void *worker(void *arg) {
  struct job *job = arg;
  pthread_once(&once, init_once);
  thread_tag = job->id;
  for (int i = 0; i < ITERATIONS; i++) {
    per_thread_count++;
    pthread_mutex_lock(&lock);
    shared_total += job->id + 1;
    pthread_mutex_unlock(&lock);
  }
  job->result = per_thread_count;
  job->tag_seen = thread_tag;
  return job;
}

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_ready = PTHREAD_COND_INITIALIZER;
static int queue[64], queue_len, queue_closed;

static void *consumer(void *arg) {
  long *sum = arg;
  for (;;) {
    pthread_mutex_lock(&queue_lock);
    while (queue_len == 0 && !queue_closed) pthread_cond_wait(&queue_ready, &queue_lock);
    if (queue_len == 0 && queue_closed) {
      pthread_mutex_unlock(&queue_lock);
      return NULL;
    }
    int item = queue[--queue_len];
    pthread_mutex_unlock(&queue_lock);
    *sum += item;
  }
}

int main(void) {
  pthread_t threads[THREADS];
  struct job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (struct job){i, 0, -1};
    if (pthread_create(&threads[i], NULL, worker, &jobs[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (int i = 0; i < THREADS; i++) {
    void *ret;
    pthread_join(threads[i], &ret);
    struct job *j = ret;
    printf("thread %d counted %ld, tag %d\n", j->id, j->result, j->tag_seen);
  }
  printf("shared_total=%ld once_runs=%d main tag=%d main count=%ld\n", shared_total, once_runs, thread_tag,
         per_thread_count);

  long consumed = 0;
  pthread_t c;
  pthread_create(&c, NULL, consumer, &consumed);
  for (int i = 1; i <= 1000; i++) {
    pthread_mutex_lock(&queue_lock);
    while (queue_len == 64) {
      pthread_mutex_unlock(&queue_lock);
      sched_yield();
      pthread_mutex_lock(&queue_lock);
    }
    queue[queue_len++] = i;
    pthread_cond_signal(&queue_ready);
    pthread_mutex_unlock(&queue_lock);
  }
  pthread_mutex_lock(&queue_lock);
  queue_closed = 1;
  pthread_cond_broadcast(&queue_ready);
  pthread_mutex_unlock(&queue_lock);
  pthread_join(c, NULL);
  printf("consumed sum %ld\n", consumed);
  return 0;
}
