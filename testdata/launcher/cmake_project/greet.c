#include <stdio.h>

static char buffer[64];

const char *greet(const char *name) {
  snprintf(buffer, sizeof buffer, "hello, %s", name);
  return buffer;
}
