#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"

int interp_errors;

void interp_error(int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "line %d: ", line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  interp_errors++;
}

struct binding {
  char name[64];
  struct value value;
};

struct frame {
  struct binding vars[32];
  int nvars;
  struct frame *parent;
};

static struct node *functions[32];
static int nfunctions;
static long steps;

enum flow { FLOW_NEXT, FLOW_RETURN };

static struct binding *lookup(struct frame *f, const char *name) {
  for (; f; f = f->parent)
    for (int i = f->nvars - 1; i >= 0; i--)
      if (strcmp(f->vars[i].name, name) == 0) return &f->vars[i];
  return NULL;
}

static void define(struct frame *f, const char *name, struct value v) {
  if (f->nvars == 32) {
    interp_error(0, "too many variables");
    return;
  }
  struct binding *b = &f->vars[f->nvars++];
  snprintf(b->name, sizeof b->name, "%s", name);
  b->value = v;
}

static struct value number(long n) { return (struct value){0, n, NULL}; }

static struct value eval(struct node *n, struct frame *f);
static enum flow exec(struct node *n, struct frame *f, struct value *ret);

static struct value call(struct node *n, struct frame *f) {
  if (strcmp(n->name, "len") == 0 && n->nitems == 1) {
    struct value v = eval(n->items[0], f);
    return number(v.is_string ? (long)strlen(v.string) : 0);
  }
  for (int i = 0; i < nfunctions; i++) {
    struct node *fn = functions[i];
    if (strcmp(fn->name, n->name) != 0) continue;
    if (fn->nitems != n->nitems) {
      interp_error(n->line, "%s takes %d arguments, %d given", fn->name, fn->nitems, n->nitems);
      return number(0);
    }
    struct frame *callee = calloc(1, sizeof *callee);
    for (int a = 0; a < n->nitems; a++) define(callee, fn->items[a]->name, eval(n->items[a], f));
    struct value ret = number(0);
    exec(fn->a, callee, &ret);
    free(callee);
    return ret;
  }
  interp_error(n->line, "unknown function %s", n->name);
  return number(0);
}

static long arith(int op, long a, long b, int line) {
  switch (op) {
  case T_PLUS: return a + b;
  case T_MINUS: return a - b;
  case T_STAR: return a * b;
  case T_SLASH:
  case T_PERCENT:
    if (b == 0) {
      interp_error(line, "division by zero");
      return 0;
    }
    return op == T_SLASH ? a / b : a % b;
  case T_LT: return a < b;
  case T_GT: return a > b;
  case T_LE: return a <= b;
  case T_GE: return a >= b;
  case T_EQ: return a == b;
  case T_NE: return a != b;
  default: return 0;
  }
}

static struct value eval(struct node *n, struct frame *f) {
  steps++;
  switch (n->kind) {
  case N_NUM: return number(n->number);
  case N_STR: return (struct value){1, 0, n->name};
  case N_VAR: {
    struct binding *b = lookup(f, n->name);
    if (!b) {
      interp_error(n->line, "undefined variable %s", n->name);
      return number(0);
    }
    return b->value;
  }
  case N_ASSIGN: {
    struct binding *b = lookup(f, n->name);
    struct value v = eval(n->a, f);
    if (b) b->value = v;
    else interp_error(n->line, "assignment to undefined %s", n->name);
    return v;
  }
  case N_UNARY: {
    long v = eval(n->a, f).number;
    return number(n->op == T_MINUS ? -v : !v);
  }
  case N_BINARY: {
    if (n->op == T_AND) return number(eval(n->a, f).number && eval(n->b, f).number);
    if (n->op == T_OR) return number(eval(n->a, f).number || eval(n->b, f).number);
    struct value a = eval(n->a, f), b = eval(n->b, f);
    if (a.is_string && b.is_string && (n->op == T_EQ || n->op == T_NE))
      return number((strcmp(a.string, b.string) == 0) == (n->op == T_EQ));
    return number(arith(n->op, a.number, b.number, n->line));
  }
  case N_CALL: return call(n, f);
  default: interp_error(n->line, "not an expression"); return number(0);
  }
}

static enum flow exec(struct node *n, struct frame *f, struct value *ret) {
  switch (n->kind) {
  case N_LET: define(f, n->name, eval(n->a, f)); return FLOW_NEXT;
  case N_PRINT:
    for (int i = 0; i < n->nitems; i++) {
      struct value v = eval(n->items[i], f);
      if (v.is_string) fputs(v.string, stdout);
      else printf("%ld", v.number);
      putchar(i + 1 < n->nitems ? ' ' : '\n');
    }
    return FLOW_NEXT;
  case N_IF:
    if (eval(n->a, f).number) return exec(n->b, f, ret);
    if (n->c) return exec(n->c, f, ret);
    return FLOW_NEXT;
  case N_WHILE:
    while (eval(n->a, f).number)
      if (exec(n->b, f, ret) == FLOW_RETURN) return FLOW_RETURN;
    return FLOW_NEXT;
  case N_BLOCK: {
    int saved = f->nvars;
    for (int i = 0; i < n->nitems; i++)
      if (exec(n->items[i], f, ret) == FLOW_RETURN) {
        f->nvars = saved;
        return FLOW_RETURN;
      }
    f->nvars = saved;
    return FLOW_NEXT;
  }
  case N_FN:
    if (nfunctions < 32) functions[nfunctions++] = n;
    return FLOW_NEXT;
  case N_RETURN: *ret = eval(n->a, f); return FLOW_RETURN;
  case N_EXPR: eval(n->a, f); return FLOW_NEXT;
  default: eval(n, f); return FLOW_NEXT;
  }
}

int run_program(struct node *program) {
  struct frame *global = calloc(1, sizeof *global);
  struct value ret = number(0);
  /* Functions first, so calls may precede definitions. */
  for (int i = 0; i < program->nitems; i++)
    if (program->items[i]->kind == N_FN) exec(program->items[i], global, &ret);
  for (int i = 0; i < program->nitems; i++)
    if (program->items[i]->kind != N_FN && exec(program->items[i], global, &ret) == FLOW_RETURN) break;
  free(global);
  fprintf(stderr, "%ld evaluation steps\n", steps);
  return (int)ret.number;
}
