/* Uses thread_lib.so, whose constructor started a thread: glibc's
   __libc_single_threaded must say so, as natively (libstdc++'s reference
   counts and glibc's malloc trust it). */
#include <stdio.h>
#include <sys/single_threaded.h>

int thread_lib_ready(void);

int main(void) {
  printf("library ready: %d\n", thread_lib_ready());
  printf("single-threaded: %d\n", __libc_single_threaded);
  return 0;
}
