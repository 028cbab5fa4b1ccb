#include <stdio.h>

int main(void) {
  volatile int *nowhere = 0;
  puts("about to crash");
  fflush(stdout);
  return *nowhere;
}
