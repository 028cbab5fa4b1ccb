#include <stdio.h>

__thread long shared_tls_counter = 100;
__thread char shared_tls_name[16] = "initial";
static __thread long bumps;

void counters_bump(int times) {
  for (int i = 0; i < times; i++) {
    shared_tls_counter++;
    bumps++;
  }
}

long counters_total(void) { return shared_tls_counter * 1000 + bumps; }
