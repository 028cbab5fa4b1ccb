// Variadic functions: own vprintf-style wrappers, va_copy, walking
// arguments of mixed types, passing a va_list down several levels.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int log_level = 2;

static int emit(FILE *out, const char *prefix, const char *fmt, va_list ap) {
  int n = fprintf(out, "%s", prefix);
  n += vfprintf(out, fmt, ap);
  return n;
}

__attribute__((format(printf, 2, 3))) static int logf_at(int level, const char *fmt, ...) {
  if (level > log_level) return 0;
  va_list ap;
  va_start(ap, fmt);
  int n = emit(level == 0 ? stderr : stdout, level == 0 ? "[error] " : "[info] ", fmt, ap);
  va_end(ap);
  return n;
}

/* Formats twice: once to measure, once to fill, which needs va_copy. */
static char *format_twice(char *dest, size_t cap, const char *fmt, ...) {
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if ((size_t)need < cap) vsnprintf(dest, cap, fmt, again);
  else strcpy(dest, "<too long>");
  va_end(again);
  return dest;
}

static long sum_ints(int count, ...) {
  va_list ap;
  va_start(ap, count);
  long total = 0;
  for (int i = 0; i < count; i++) total += va_arg(ap, int);
  va_end(ap);
  return total;
}

/* A little type-tagged format: i=int, d=double, s=string, l=long long. */
static void typed(const char *types, ...) {
  va_list ap;
  va_start(ap, types);
  for (const char *t = types; *t; t++) {
    switch (*t) {
    case 'i': printf("int %d; ", va_arg(ap, int)); break;
    case 'd': printf("double %.3f; ", va_arg(ap, double)); break;
    case 's': printf("string %s; ", va_arg(ap, const char *)); break;
    case 'l': printf("llong %lld; ", va_arg(ap, long long)); break;
    }
  }
  va_end(ap);
  putchar('\n');
}

static double average(int n, ...) {
  va_list ap;
  va_start(ap, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, double);
  va_end(ap);
  return n ? s / n : 0;
}

int main(void) {
  logf_at(1, "%s has %d items\n", "list", 3);
  logf_at(0, "failure code %d\n", -7);
  logf_at(3, "not shown %d\n", 1);
  char buf[32];
  puts(format_twice(buf, sizeof buf, "%d-%s-%.1f", 12, "mid", 0.5));
  puts(format_twice(buf, sizeof buf, "%0100d", 1));
  printf("sum=%ld\n", sum_ints(6, 1, 2, 3, 4, 5, -6));
  printf("sum many=%ld\n", sum_ints(12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
  typed("idsl", 5, 2.25, "text", 1LL << 40);
  typed("dddddddddi", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10);
  printf("avg=%.4f\n", average(9, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.5));
  return 0;
}
