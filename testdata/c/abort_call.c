// abort(): the process dies of SIGABRT (shell status 134); stdout output
// still in the buffer is lost, stderr output and flushed output are not.
#include <stdio.h>
#include <stdlib.h>

static void never(void) { printf("atexit handler must not run\n"); }
__attribute__((destructor)) static void nor_this(void) { printf("destructor must not run\n"); }

int main(void) {
  atexit(never);
  printf("flushed before abort\n");
  fflush(stdout);
  printf("lost in the buffer\n");
  fprintf(stderr, "aborting now\n");
  abort();
}
