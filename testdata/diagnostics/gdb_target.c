#include <stdio.h>
__attribute__((noinline)) int my_function(int x) { printf("x=%d\n", x); return x * 2; }
int main(void) { return my_function(21) - 42; }
