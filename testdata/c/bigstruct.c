// Large structs passed and returned by value (memory class in the ABI),
// small structs in registers, mixed int/float structs, arrays of structs
// and struct assignment.
#include <stdio.h>
#include <string.h>

struct big {
  int id;
  double values[32];
  char label[40];
  long tail;
};

struct pair {
  long a, b;
};

struct mixed {
  float x;
  int n;
  double y;
};

struct tiny {
  char c;
  short s;
};

static struct big make_big(int id, const char *label) {
  struct big b;
  memset(&b, 0, sizeof b);
  b.id = id;
  for (int i = 0; i < 32; i++) b.values[i] = id * 0.5 + i;
  snprintf(b.label, sizeof b.label, "%s#%d", label, id);
  b.tail = (long)id * 1000003;
  return b;
}

static double sum_big(struct big b) {
  double s = b.tail;
  for (int i = 0; i < 32; i++) s += b.values[i];
  b.values[0] = -1e9; /* modifies the callee's copy only */
  return s;
}

static struct big scale(struct big b, double k) {
  for (int i = 0; i < 32; i++) b.values[i] *= k;
  strcat(b.label, "*");
  return b;
}

static struct pair swap(struct pair p) { return (struct pair){p.b, p.a}; }
static struct mixed combine(struct mixed m, struct mixed n) {
  return (struct mixed){m.x + n.x, m.n * n.n, m.y - n.y};
}
static struct tiny bump(struct tiny t) {
  t.c++;
  t.s *= 2;
  return t;
}

static double many_args(struct big a, int i, struct pair p, double d, struct big b, struct mixed m, struct tiny t) {
  return a.values[i] + p.a + p.b + d + b.values[31 - i] + m.x + m.n + m.y + t.c + t.s;
}

int main(void) {
  struct big b = make_big(7, "seven");
  printf("%s id=%d tail=%ld sum=%.2f\n", b.label, b.id, b.tail, sum_big(b));
  printf("original values[0] still %.2f\n", b.values[0]);
  struct big c = scale(b, 2.0);
  printf("%s sum=%.2f, b is %s\n", c.label, sum_big(c), b.label);
  struct big arr[4];
  for (int i = 0; i < 4; i++) arr[i] = make_big(i, "arr");
  arr[3] = arr[1];
  printf("arr[3] %s %.1f\n", arr[3].label, arr[3].values[5]);
  struct pair p = swap((struct pair){1, 2});
  printf("pair %ld %ld\n", p.a, p.b);
  struct mixed m = combine((struct mixed){1.5f, 3, 10.25}, (struct mixed){2.0f, 4, 0.25});
  printf("mixed %.2f %d %.2f\n", m.x, m.n, m.y);
  struct tiny t = bump((struct tiny){'a', 300});
  printf("tiny %c %d\n", t.c, t.s);
  printf("many %.3f\n", many_args(b, 3, p, 0.125, c, m, t));
  return 0;
}
