// atexit handlers: several, run in reverse order of registration,
// interleaved with destructors; a handler that registers another handler;
// output still buffered in stdout when handlers run.
#include <stdio.h>
#include <stdlib.h>

static int order;

static void late(void) { printf("%d: late handler (registered by a handler)\n", ++order); }
static void first(void) { printf("%d: first registered\n", ++order); }
static void second(void) {
  printf("%d: second registered, registering another\n", ++order);
  atexit(late);
}
static void third(void) { printf("%d: third registered\n", ++order); }
static void stderr_handler(void) { fprintf(stderr, "%d: stderr handler\n", ++order); }

__attribute__((destructor)) static void dtor(void) { printf("%d: destructor\n", ++order); }

int main(void) {
  atexit(first);
  atexit(second);
  atexit(stderr_handler);
  for (int i = 0; i < 3; i++) atexit(third);
  printf("main returns 5 with buffered output\n");
  return 5;
}
