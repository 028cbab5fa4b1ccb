/* Allocates ten telltale blocks after using libm, which jitrun loads for
   it first: the preloaded malloc_counter.so must see them all, as
   natively, whichever library jitrun found malloc through. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  (void)argv;
  printf("%.3f\n", cbrt(27.0 + argc - 1));
  for (int i = 0; i < 10; i++) {
    char *volatile block = malloc(100000 + i);
    block[0] = 1;
    free(block);
  }
  return 0;
}
