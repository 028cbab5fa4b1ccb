// Static functions and static variables with the same names in three
// objects, static locals that keep state across calls, and identical
// string literals in several objects (mergeable .rodata.str sections):
// each object must see its own statics.
#include <stdio.h>
#include <string.h>

const char *alpha_name(void);
const char *beta_name(void);
int alpha_next(void);
int beta_next(void);
const char *alpha_greeting(void);
const char *beta_greeting(void);

static int counter = 1000;
static const char *helper(void) { return "main helper"; }

static int next_id(void) {
  static int id;
  return ++id;
}

static const char *greeting(void) { return "hello, shared literal"; }

int main(void) {
  printf("%s / %s / %s\n", helper(), alpha_name(), beta_name());
  for (int i = 0; i < 3; i++) printf("ids: main %d alpha %d beta %d\n", next_id(), alpha_next(), beta_next());
  counter++;
  printf("main counter %d\n", counter);
  printf("greetings equal by content: %d %d\n", strcmp(greeting(), alpha_greeting()) == 0,
         strcmp(alpha_greeting(), beta_greeting()) == 0);
  printf("%s|%s|%s\n", greeting(), alpha_greeting(), beta_greeting());
  return 0;
}
