// jitrun-test: args=7
// exit() from deep in the call stack, with atexit handlers and
// destructors pending and output still buffered.
#include <stdio.h>
#include <stdlib.h>

static int deepest;
static char *heap_note;

static void report(void) { printf("atexit: deepest frame %d, note '%s'\n", deepest, heap_note); }
__attribute__((destructor)) static void goodbye(void) { printf("destructor after atexit\n"); }

static int recurse(int depth, int limit) {
  char frame[128];
  snprintf(frame, sizeof frame, "frame %d", depth);
  deepest = depth;
  if (depth == limit) {
    printf("exiting from %s\n", frame);
    exit(depth + 10);
  }
  return recurse(depth + 1, limit) + frame[0];
}

int main(int argc, char **argv) {
  heap_note = malloc(32);
  snprintf(heap_note, 32, "limit %s", argc > 1 ? argv[1] : "?");
  atexit(report);
  int limit = argc > 1 ? atoi(argv[1]) * 100 : 50;
  printf("start, limit %d\n", limit);
  int r = recurse(0, limit);
  printf("not reached %d\n", r);
  return 0;
}
