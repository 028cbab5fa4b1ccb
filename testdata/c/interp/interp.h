/* A tiny interpreted language: integers, strings, variables, functions,
 * if/while, print. Lexer, parser (to an AST) and evaluator live in their
 * own objects. */
#ifndef INTERP_H
#define INTERP_H

#include <stddef.h>

enum token_kind {
  T_EOF, T_NUM, T_STR, T_IDENT, T_LET, T_IF, T_ELSE, T_WHILE, T_PRINT, T_FN, T_RETURN,
  T_LPAREN, T_RPAREN, T_LBRACE, T_RBRACE, T_COMMA, T_SEMI, T_ASSIGN,
  T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_LT, T_GT, T_LE, T_GE, T_EQ, T_NE, T_AND, T_OR, T_NOT,
};

struct token {
  enum token_kind kind;
  long number;
  char text[64];
  int line;
};

struct lexer {
  const char *src;
  size_t pos;
  int line;
};

void lexer_init(struct lexer *lx, const char *src);
struct token lexer_next(struct lexer *lx);
const char *token_name(enum token_kind kind);

enum node_kind { N_NUM, N_STR, N_VAR, N_BINARY, N_UNARY, N_CALL, N_ASSIGN, N_LET, N_IF, N_WHILE, N_PRINT,
                 N_BLOCK, N_FN, N_RETURN, N_EXPR };

struct node {
  enum node_kind kind;
  int op;
  long number;
  char name[64];
  struct node *a, *b, *c;
  struct node **items;
  int nitems;
  int line;
};

struct node *parse_program(const char *src);
void free_node(struct node *n);

struct value {
  int is_string;
  long number;
  const char *string;
};

int run_program(struct node *program);
extern int interp_errors;
void interp_error(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
