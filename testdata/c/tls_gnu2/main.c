// jitrun-test: cflags=-pthread
// jitrun-test: x86_64:gcc-cflags=-mtls-dialect=gnu2
// jitrun-test: aarch64:clang-cannot=-mcmodel=large
// Thread-local variables through TLS descriptors (-mtls-dialect=gnu2 on
// x86-64; aarch64's default dialect):
// several static thread-locals read in one function (local-dynamic, via
// _TLS_MODULE_BASE_ under -fPIC), thread-locals defined in another object
// (general-dynamic), initialized .tdata and zeroed .tbss, in several threads.
#include <pthread.h>
#include <stdio.h>

extern __thread long shared_tls_counter;
extern __thread char shared_tls_name[16];
void counters_bump(int times);
long counters_total(void);

static __thread int local_a = 5;
static __thread int local_b;
static __thread double local_c = 0.5;
static __thread int local_array[64];

static long use_locals(int seed) {
  local_a += seed;
  local_b += 2 * seed;
  local_c *= 2;
  for (int i = 0; i < 64; i++) local_array[i] += i * seed;
  long s = 0;
  for (int i = 0; i < 64; i++) s += local_array[i];
  return local_a + local_b + (long)local_c + s;
}

struct result {
  int id;
  long locals, shared, total;
  char name[16];
};

static void *worker(void *arg) {
  struct result *r = arg;
  snprintf(shared_tls_name, sizeof shared_tls_name, "worker-%d", r->id);
  for (int i = 0; i < 3; i++) r->locals = use_locals(r->id + 1);
  counters_bump(r->id * 10);
  r->shared = shared_tls_counter;
  r->total = counters_total();
  snprintf(r->name, sizeof r->name, "%s", shared_tls_name);
  return NULL;
}

int main(void) {
  struct result results[3];
  pthread_t threads[3];
  for (int i = 0; i < 3; i++) {
    results[i] = (struct result){.id = i};
    pthread_create(&threads[i], NULL, worker, &results[i]);
  }
  for (int i = 0; i < 3; i++) pthread_join(threads[i], NULL);
  for (int i = 0; i < 3; i++)
    printf("thread %d: locals=%ld shared=%ld total=%ld name=%s\n", results[i].id, results[i].locals,
           results[i].shared, results[i].total, results[i].name);
  printf("main: locals=%ld shared=%ld name='%s' a=%d c=%.1f\n", use_locals(7), shared_tls_counter, shared_tls_name,
         local_a, local_c);
  return 0;
}
