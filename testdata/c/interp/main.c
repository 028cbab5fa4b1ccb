// jitrun-test: stdin=# a program for the interpreter\nfn fact(n) { if (n <= 1) { return 1; } return n * fact(n - 1); }\nfn fib(n) { let a = 0; let b = 1; while (n > 0) { let t = a + b; a = b; b = t; n = n - 1; } return a; }\nfn gcd(a, b) { while (b != 0) { let t = a % b; a = b; b = t; } return a; }\nlet i = 1;\nwhile (i <= 10) { print "fact", i, fact(i), "fib", fib(i * 5); i = i + 1; }\nprint "gcd", gcd(1071, 462), gcd(17, 5);\nlet s = "hello";\nif (s == "hello" && len(s) == 5) { print "strings work"; } else { print "broken"; }\nlet primes = 0; let n = 2;\nwhile (n < 2000) { let d = 2; let p = 1; while (d * d <= n && p) { if (n % d == 0) { p = 0; } d = d + 1; } primes = primes + p; n = n + 1; }\nprint "primes below 2000:", primes;\nprint -3 * (4 + 5) % 7, !0, !5, 7 / 2, 1 < 2 || 3 > 4;\nprint undefined_var;\nprint 1 / 0;\nlet bad = ;\nreturn primes % 256;
// A small interpreter, spread over four objects: the program comes from
// stdin, output goes to stdout, diagnostics to stderr, and the script's
// return value becomes the exit status.
#include <stdio.h>
#include <stdlib.h>

#include "interp.h"

static char *read_all(FILE *in, size_t *len) {
  size_t cap = 256, n = 0;
  char *buf = malloc(cap);
  int c;
  while ((c = fgetc(in)) != EOF) {
    if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    buf[n++] = (char)c;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

int main(void) {
  size_t len;
  char *src = read_all(stdin, &len);
  fprintf(stderr, "read %zu bytes\n", len);
  struct node *program = parse_program(src);
  int parse_errors = interp_errors;
  fprintf(stderr, "%d statements, %d parse errors\n", program->nitems, parse_errors);
  int status = run_program(program);
  fprintf(stderr, "%d runtime errors\n", interp_errors - parse_errors);
  free_node(program);
  free(src);
  return status;
}
