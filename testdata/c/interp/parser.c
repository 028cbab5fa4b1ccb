#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"

struct parser {
  struct lexer lx;
  struct token tok;
};

static void advance(struct parser *p) { p->tok = lexer_next(&p->lx); }

static int accept(struct parser *p, enum token_kind k) {
  if (p->tok.kind != k) return 0;
  advance(p);
  return 1;
}

static void expect(struct parser *p, enum token_kind k) {
  /* No token is skipped here: primary() consumes the token it cannot use,
   * so parsing always makes progress. */
  if (!accept(p, k)) interp_error(p->tok.line, "expected %s, found %s", token_name(k), token_name(p->tok.kind));
}

static struct node *new_node(enum node_kind kind, int line) {
  struct node *n = calloc(1, sizeof *n);
  n->kind = kind;
  n->line = line;
  return n;
}

static void push_item(struct node *n, struct node *item) {
  n->items = realloc(n->items, (size_t)(n->nitems + 1) * sizeof *n->items);
  n->items[n->nitems++] = item;
}

static struct node *expression(struct parser *p);
static struct node *statement(struct parser *p);

static struct node *primary(struct parser *p) {
  struct token t = p->tok;
  if (accept(p, T_NUM)) {
    struct node *n = new_node(N_NUM, t.line);
    n->number = t.number;
    return n;
  }
  if (accept(p, T_STR)) {
    struct node *n = new_node(N_STR, t.line);
    memcpy(n->name, t.text, sizeof n->name);
    return n;
  }
  if (accept(p, T_IDENT)) {
    if (accept(p, T_LPAREN)) {
      struct node *call = new_node(N_CALL, t.line);
      memcpy(call->name, t.text, sizeof call->name);
      if (!accept(p, T_RPAREN)) {
        do push_item(call, expression(p));
        while (accept(p, T_COMMA));
        expect(p, T_RPAREN);
      }
      return call;
    }
    struct node *n = new_node(N_VAR, t.line);
    memcpy(n->name, t.text, sizeof n->name);
    return n;
  }
  if (accept(p, T_LPAREN)) {
    struct node *n = expression(p);
    expect(p, T_RPAREN);
    return n;
  }
  interp_error(t.line, "unexpected %s in expression", token_name(t.kind));
  advance(p);
  return new_node(N_NUM, t.line);
}

static struct node *unary(struct parser *p) {
  int line = p->tok.line;
  enum token_kind op = p->tok.kind;
  if (accept(p, T_MINUS) || accept(p, T_NOT)) {
    struct node *n = new_node(N_UNARY, line);
    n->op = op;
    n->a = unary(p);
    return n;
  }
  return primary(p);
}

static int precedence(enum token_kind k) {
  switch (k) {
  case T_OR: return 1;
  case T_AND: return 2;
  case T_EQ: case T_NE: return 3;
  case T_LT: case T_GT: case T_LE: case T_GE: return 4;
  case T_PLUS: case T_MINUS: return 5;
  case T_STAR: case T_SLASH: case T_PERCENT: return 6;
  default: return 0;
  }
}

static struct node *binary(struct parser *p, int min_prec) {
  struct node *left = unary(p);
  for (;;) {
    enum token_kind op = p->tok.kind;
    int prec = precedence(op);
    if (prec == 0 || prec < min_prec) return left;
    int line = p->tok.line;
    advance(p);
    struct node *n = new_node(N_BINARY, line);
    n->op = op;
    n->a = left;
    n->b = binary(p, prec + 1);
    left = n;
  }
}

static struct node *expression(struct parser *p) {
  if (p->tok.kind == T_IDENT) {
    /* Look ahead for assignment: IDENT '=' (not '=='). */
    struct parser saved = *p;
    struct token name = p->tok;
    advance(p);
    if (accept(p, T_ASSIGN)) {
      struct node *n = new_node(N_ASSIGN, name.line);
      memcpy(n->name, name.text, sizeof n->name);
      n->a = expression(p);
      return n;
    }
    *p = saved;
  }
  return binary(p, 1);
}

static struct node *block(struct parser *p) {
  struct node *b = new_node(N_BLOCK, p->tok.line);
  expect(p, T_LBRACE);
  while (p->tok.kind != T_RBRACE && p->tok.kind != T_EOF) push_item(b, statement(p));
  expect(p, T_RBRACE);
  return b;
}

static struct node *statement(struct parser *p) {
  int line = p->tok.line;
  if (accept(p, T_LET)) {
    struct node *n = new_node(N_LET, line);
    memcpy(n->name, p->tok.text, sizeof n->name);
    expect(p, T_IDENT);
    expect(p, T_ASSIGN);
    n->a = expression(p);
    expect(p, T_SEMI);
    return n;
  }
  if (accept(p, T_IF)) {
    struct node *n = new_node(N_IF, line);
    expect(p, T_LPAREN);
    n->a = expression(p);
    expect(p, T_RPAREN);
    n->b = block(p);
    if (accept(p, T_ELSE)) n->c = p->tok.kind == T_IF ? statement(p) : block(p);
    return n;
  }
  if (accept(p, T_WHILE)) {
    struct node *n = new_node(N_WHILE, line);
    expect(p, T_LPAREN);
    n->a = expression(p);
    expect(p, T_RPAREN);
    n->b = block(p);
    return n;
  }
  if (accept(p, T_PRINT)) {
    struct node *n = new_node(N_PRINT, line);
    do push_item(n, expression(p));
    while (accept(p, T_COMMA));
    expect(p, T_SEMI);
    return n;
  }
  if (accept(p, T_FN)) {
    struct node *n = new_node(N_FN, line);
    memcpy(n->name, p->tok.text, sizeof n->name);
    expect(p, T_IDENT);
    expect(p, T_LPAREN);
    if (!accept(p, T_RPAREN)) {
      do {
        struct node *param = new_node(N_VAR, p->tok.line);
        memcpy(param->name, p->tok.text, sizeof param->name);
        expect(p, T_IDENT);
        push_item(n, param);
      } while (accept(p, T_COMMA));
      expect(p, T_RPAREN);
    }
    n->a = block(p);
    return n;
  }
  if (accept(p, T_RETURN)) {
    struct node *n = new_node(N_RETURN, line);
    n->a = expression(p);
    expect(p, T_SEMI);
    return n;
  }
  if (p->tok.kind == T_LBRACE) return block(p);
  struct node *n = new_node(N_EXPR, line);
  n->a = expression(p);
  expect(p, T_SEMI);
  return n;
}

struct node *parse_program(const char *src) {
  struct parser p;
  lexer_init(&p.lx, src);
  advance(&p);
  struct node *program = new_node(N_BLOCK, 1);
  while (p.tok.kind != T_EOF) push_item(program, statement(&p));
  return program;
}

void free_node(struct node *n) {
  if (!n) return;
  free_node(n->a);
  free_node(n->b);
  free_node(n->c);
  for (int i = 0; i < n->nitems; i++) free_node(n->items[i]);
  free(n->items);
  free(n);
}
