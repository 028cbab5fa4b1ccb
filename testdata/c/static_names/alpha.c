#include <stdio.h>

static int counter = 500;
static const char *helper(void) { return "alpha helper"; }
static int next_id(void) {
  static int id = 50;
  counter++;
  return id += 2;
}
const char *alpha_name(void) { return helper(); }
int alpha_next(void) { return next_id() + counter; }
const char *alpha_greeting(void) { return "hello, shared literal"; }
