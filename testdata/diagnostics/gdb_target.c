#include <stdio.h>
#include <string.h>
__attribute__((noinline)) int my_function(int x) { printf("x=%d\n", x); return x * 2; }
/* A frame of its own without a frame pointer: unwinding through it needs
   its CFI. */
__attribute__((noinline)) int middle(int x) {
  volatile char buffer[256];
  memset((char *)buffer, x, sizeof buffer);
  return my_function(buffer[x]) + buffer[3];
}
int main(void) { return middle(21) - 63; }
