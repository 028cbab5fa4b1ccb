// main returns a non-zero status after writing to both streams.
#include <stdio.h>

int main(void) {
  printf("about to fail\n");
  fprintf(stderr, "error: something went wrong\n");
  return 42;
}
