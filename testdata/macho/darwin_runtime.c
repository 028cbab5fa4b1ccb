// jitrun-test: args=7 three
// jitrun-test: libs=-lm
// jitrun-test: cflags=-fno-math-errno -fstack-protector-all
// Exercises what a Mach-O build turns into Darwin runtime calls and
// relocation forms: __bzero (memset of a variable size with zero),
// __sincos_stret (sin and cos of one value), the stack-protector guard
// word, jump tables, pointer tables in __DATA,__const, literal pools,
// zero-fill and common data, constructors and destructors.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int square(int x) { return x * x; }
static int negate(int x) { return -x; }
static int twice(int x) { return 2 * x; }
static int (*const ops[])(int) = {square, negate, twice};
static const char *const names[] = {"square", "negate", "twice"};

char big_zeroed[1 << 16];
int counters[8];
static double scale = 1.5;

__attribute__((noinline)) static void wipe(char *p, size_t n) { memset(p, 0, n); }

__attribute__((noinline)) static const char *classify(int v) {
  switch (v) {
  case 0: return "zero";
  case 1: return "one";
  case 2: return "two";
  case 3: return "three";
  case 4: return "four";
  case 5: return "five";
  case 6: return "six";
  case 7: return "seven";
  default: return "many";
  }
}

__attribute__((noinline)) static void fill(char *buf, const char *s) {
  char local[32];
  snprintf(local, sizeof local, "[%s]", s);
  strcpy(buf, local);
}

__attribute__((constructor)) static void init(void) { counters[0] = 100; }
__attribute__((destructor)) static void fini(void) { printf("fini %d\n", counters[0]); }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  for (int i = 0; i < 3; i++) printf("%s(%d) = %d\n", names[i], n, ops[i](n));
  for (int i = 0; i < 10; i++) printf("%s ", classify(i));
  printf("\n");
  double x = n * scale;
  double s = sin(x), c = cos(x);
  printf("sin %.6f cos %.6f\n", s, c);
  float xf = (float)n / 3.0f;
  float sf = sinf(xf), cf = cosf(xf);
  printf("sinf %.4f cosf %.4f\n", sf, cf);
  memset(big_zeroed, 'x', sizeof big_zeroed);
  wipe(big_zeroed, (size_t)n * 1000);
  printf("zeroed %d x %d\n", big_zeroed[n * 1000 - 1], big_zeroed[n * 1000]);
  char buf[64];
  fill(buf, argc > 2 ? argv[2] : "none");
  printf("%s\n", buf);
  errno = 0;
  strtol("99999999999999999999999", NULL, 10);
  printf("errno %s\n", errno == ERANGE ? "ERANGE" : "other");
  counters[0] += n;
  fprintf(stderr, "done\n");
  return n;
}
