// jitrun-test: cflags=-pthread
/* 200 KB of thread-locals: more than glibc's default static TLS surplus, so
   jitrun must re-run itself with a larger glibc.rtld.optional_static_tls. */
#include <stdio.h>
#include <string.h>
#include <pthread.h>
__thread char big[200000] = "start";
__thread int tail = 5;
static void *w(void *a) { big[199999] = 1; tail += 1; printf("thread %s %d %d\n", big, big[199999], tail); return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, w, 0); pthread_join(t, 0); printf("main %s %d %d\n", big, big[199999], tail); return 0; }
