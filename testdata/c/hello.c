// jitrun-test: args=world
#include <stdio.h>
#include <stdlib.h>
static void bye(void) { printf("bye\n"); }
__attribute__((constructor)) static void ctor(void) { printf("ctor\n"); }
__attribute__((destructor)) static void dtor(void) { printf("dtor\n"); }
int counter = 5;
int main(int argc, char **argv) {
  atexit(bye);
  printf("hello %s %d\n", argc > 1 ? argv[1] : "nobody", counter);
  fprintf(stderr, "to stderr\n");
  return 3;
}
