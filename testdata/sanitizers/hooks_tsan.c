/* -fsanitize=thread code whose own default options make a report exit 5.
 * The report is of a mutex unlocked while unlocked, which both runtimes
 * report from the current stack alone, on every run. A data race would not
 * do: clang-14's runtime (ThreadSanitizer v3) missed the race of two
 * threads taking turns in about 2% of runs, with no warning at all. */
#include <pthread.h>
#include <stdio.h>

const char *__tsan_default_options(void) { return "exitcode=5"; }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(void) {
    pthread_mutex_unlock(&lock);
    puts("unlocked");
    return 0;
}
