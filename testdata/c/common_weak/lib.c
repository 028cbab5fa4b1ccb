#include <stdio.h>

int shared_counter;
int tentative_array[32];
int initialized_elsewhere = 77;
int weak_with_default __attribute__((weak)) = 11;

extern int tentative_array[32];

void bump(void) {
  shared_counter += 10;
  tentative_array[31] = 1;
}

const char *who(void) { return "strong definition in lib.c"; }
