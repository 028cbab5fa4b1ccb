#include <stdio.h>

static int counter = 400;
static const char *helper(void) { return "beta helper"; }
static int next_id(void) {
  static int id = 40;
  counter++;
  return id += 2;
}
const char *beta_name(void) { return helper(); }
int beta_next(void) { return next_id() + counter; }
const char *beta_greeting(void) { return "hello, shared literal"; }
