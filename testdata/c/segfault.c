// A deliberate NULL write: the process dies of SIGSEGV (shell status 139).
#include <stdio.h>

static volatile int *volatile target;

static void crash(int depth) {
  if (depth == 0) *target = 1;
  else crash(depth - 1);
}

int main(void) {
  printf("before the crash\n");
  fflush(stdout);
  fprintf(stderr, "crashing\n");
  crash(3);
  printf("not reached\n");
  return 0;
}
