// setjmp/longjmp: error recovery from deep frames, volatile locals,
// nested jump buffers, sigsetjmp/siglongjmp.
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static jmp_buf on_error;
static int depth_reached;

static void descend(int depth, int fail_at) {
  depth_reached = depth;
  if (depth == fail_at) longjmp(on_error, depth * 10);
  descend(depth + 1, fail_at);
}

static int try_descend(int fail_at) {
  int code = setjmp(on_error);
  if (code == 0) {
    descend(0, fail_at);
    return -1;
  }
  return code;
}

static jmp_buf outer, inner;

static void nested(void) {
  if (setjmp(inner) == 0) {
    puts("inner set");
    longjmp(inner, 1);
  }
  puts("back in inner handler, now jumping outer");
  longjmp(outer, 0); /* 0 becomes 1 */
}

int main(void) {
  for (int f = 1; f <= 4; f++) printf("fail_at=%d code=%d depth=%d\n", f, try_descend(f), depth_reached);

  volatile int counter = 0;
  jmp_buf loop;
  if (setjmp(loop) < 5) {
    counter++;
    if (counter < 5) longjmp(loop, counter);
  }
  printf("counter=%d\n", counter);

  int r = setjmp(outer);
  if (r == 0) nested();
  else printf("outer got %d\n", r);

  sigjmp_buf sj;
  if (sigsetjmp(sj, 1) == 0) {
    puts("sigsetjmp first time");
    siglongjmp(sj, 7);
  } else {
    puts("siglongjmp arrived");
  }
  return 0;
}
