// Function-pointer tables: static const tables of operations, a command
// table searched by name, a state machine driven by a table, and function
// pointers stored in writable data and passed across calls.
#include <stdio.h>
#include <string.h>

typedef long (*binop)(long, long);

static long add(long a, long b) { return a + b; }
static long sub(long a, long b) { return a - b; }
static long mul(long a, long b) { return a * b; }
static long divide(long a, long b) { return b ? a / b : 0; }
static long mod(long a, long b) { return b ? a % b : 0; }
long power(long a, long b) {
  long r = 1;
  while (b-- > 0) r *= a;
  return r;
}

static const binop ops[] = {add, sub, mul, divide, mod, power};
static const char op_symbols[] = "+-*/%^";

struct command {
  const char *name;
  int (*run)(int argc, const char **argv);
  const char *help;
};

static int cmd_echo(int argc, const char **argv) {
  for (int i = 0; i < argc; i++) printf("%s%s", argv[i], i + 1 < argc ? " " : "\n");
  return 0;
}
static int cmd_count(int argc, const char **argv) {
  (void)argv;
  printf("%d arguments\n", argc);
  return argc;
}
static int cmd_reverse(int argc, const char **argv) {
  for (int i = argc - 1; i >= 0; i--) printf("%s%s", argv[i], i ? " " : "\n");
  return 1;
}

static const struct command commands[] = {
    {"echo", cmd_echo, "print the arguments"},
    {"count", cmd_count, "count the arguments"},
    {"reverse", cmd_reverse, "print the arguments backwards"},
};

static int dispatch(const char *name, int argc, const char **argv) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, name) == 0) return commands[i].run(argc, argv);
  printf("unknown command %s\n", name);
  return -1;
}

enum state { START, IN_NUMBER, IN_WORD, DONE, NSTATES };
typedef enum state (*transition)(char c, int *counter);
static enum state from_start(char c, int *n) {
  if (c >= '0' && c <= '9') { ++*n; return IN_NUMBER; }
  if (c == 0) return DONE;
  if (c != ' ') return IN_WORD;
  return START;
}
static enum state in_number(char c, int *n) {
  (void)n;
  if (c >= '0' && c <= '9') return IN_NUMBER;
  return c == 0 ? DONE : START;
}
static enum state in_word(char c, int *n) {
  (void)n;
  if (c == ' ') return START;
  return c == 0 ? DONE : IN_WORD;
}
static const transition machine[NSTATES - 1] = {from_start, in_number, in_word};

/* Writable table filled at run time. */
static void (*hooks[4])(const char *);
static void hook_upper(const char *s) {
  for (; *s; s++) putchar(*s >= 'a' && *s <= 'z' ? *s - 32 : *s);
  putchar('\n');
}
static void hook_len(const char *s) { printf("len %zu\n", strlen(s)); }

static long apply_all(binop f, const long *xs, int n) {
  long acc = xs[0];
  for (int i = 1; i < n; i++) acc = f(acc, xs[i]);
  return acc;
}

int main(void) {
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    printf("17 %c 5 = %ld\n", op_symbols[i], ops[i](17, 5));
  const char *args[] = {"one", "two", "three"};
  printf("-> %d\n", dispatch("echo", 3, args));
  printf("-> %d\n", dispatch("count", 2, args));
  printf("-> %d\n", dispatch("reverse", 3, args));
  printf("-> %d\n", dispatch("missing", 0, args));
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    printf("%-8s %s\n", commands[i].name, commands[i].help);

  const char *text = "abc 12 x 345 67y 8";
  int numbers = 0;
  enum state s = START;
  for (const char *p = text;; p++) {
    s = machine[s](*p, &numbers);
    if (s == DONE) break;
  }
  printf("numbers in '%s': %d\n", text, numbers);

  hooks[0] = hook_upper;
  hooks[2] = hook_len;
  for (int i = 0; i < 4; i++)
    if (hooks[i]) hooks[i]("function pointers");
  long xs[] = {2, 3, 4, 5};
  printf("fold add=%ld mul=%ld pow=%ld\n", apply_all(add, xs, 4), apply_all(mul, xs, 4), apply_all(power, xs, 2));
  binop chosen = (xs[0] & 1) ? sub : power;
  printf("chosen %s: %ld\n", chosen == power ? "power" : "sub", chosen(2, 10));
  return 0;
}
