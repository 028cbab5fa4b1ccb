#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "interp.h"

static const struct {
  const char *word;
  enum token_kind kind;
} keywords[] = {
    {"let", T_LET}, {"if", T_IF}, {"else", T_ELSE}, {"while", T_WHILE},
    {"print", T_PRINT}, {"fn", T_FN}, {"return", T_RETURN},
};

static const char *const names[] = {
    "end of input", "number", "string", "identifier", "let", "if", "else", "while", "print", "fn", "return",
    "(", ")", "{", "}", ",", ";", "=", "+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&&", "||", "!",
};

const char *token_name(enum token_kind kind) { return names[kind]; }

void lexer_init(struct lexer *lx, const char *src) {
  lx->src = src;
  lx->pos = 0;
  lx->line = 1;
}

static int peek(struct lexer *lx, size_t ahead) { return (unsigned char)lx->src[lx->pos + ahead]; }

struct token lexer_next(struct lexer *lx) {
  struct token t;
  memset(&t, 0, sizeof t);
  for (;;) {
    int c = peek(lx, 0);
    if (c == '\n') lx->line++;
    if (isspace(c)) {
      lx->pos++;
    } else if (c == '#') {
      while (peek(lx, 0) && peek(lx, 0) != '\n') lx->pos++;
    } else {
      break;
    }
  }
  t.line = lx->line;
  int c = peek(lx, 0);
  if (c == 0) {
    t.kind = T_EOF;
    return t;
  }
  if (isdigit(c)) {
    t.kind = T_NUM;
    while (isdigit(peek(lx, 0))) t.number = t.number * 10 + (lx->src[lx->pos++] - '0');
    return t;
  }
  if (isalpha(c) || c == '_') {
    size_t n = 0;
    while (isalnum(peek(lx, 0)) || peek(lx, 0) == '_') {
      if (n < sizeof t.text - 1) t.text[n++] = lx->src[lx->pos];
      lx->pos++;
    }
    t.kind = T_IDENT;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
      if (strcmp(keywords[i].word, t.text) == 0) t.kind = keywords[i].kind;
    return t;
  }
  if (c == '"') {
    size_t n = 0;
    lx->pos++;
    while (peek(lx, 0) && peek(lx, 0) != '"') {
      char ch = lx->src[lx->pos++];
      if (ch == '\\' && peek(lx, 0) == 'n') {
        ch = '\n';
        lx->pos++;
      }
      if (n < sizeof t.text - 1) t.text[n++] = ch;
    }
    if (peek(lx, 0) == '"') lx->pos++;
    t.kind = T_STR;
    return t;
  }
  lx->pos++;
  int next = peek(lx, 0);
  switch (c) {
  case '(': t.kind = T_LPAREN; break;
  case ')': t.kind = T_RPAREN; break;
  case '{': t.kind = T_LBRACE; break;
  case '}': t.kind = T_RBRACE; break;
  case ',': t.kind = T_COMMA; break;
  case ';': t.kind = T_SEMI; break;
  case '+': t.kind = T_PLUS; break;
  case '-': t.kind = T_MINUS; break;
  case '*': t.kind = T_STAR; break;
  case '/': t.kind = T_SLASH; break;
  case '%': t.kind = T_PERCENT; break;
  case '<': t.kind = next == '=' ? (lx->pos++, T_LE) : T_LT; break;
  case '>': t.kind = next == '=' ? (lx->pos++, T_GE) : T_GT; break;
  case '=': t.kind = next == '=' ? (lx->pos++, T_EQ) : T_ASSIGN; break;
  case '!': t.kind = next == '=' ? (lx->pos++, T_NE) : T_NOT; break;
  case '&':
    if (next == '&') {
      lx->pos++;
      t.kind = T_AND;
      break;
    }
    /* fallthrough */
  case '|':
    if (c == '|' && next == '|') {
      lx->pos++;
      t.kind = T_OR;
      break;
    }
    /* fallthrough */
  default:
    interp_error(t.line, "unexpected character '%c'", c);
    return lexer_next(lx);
  }
  return t;
}
