#include <stdio.h>
#include <stdlib.h>
#include "stats.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s NUMBER...\n", argv[0]);
    return 3;
  }
  long values[16];
  int count = 0;
  for (int i = 1; i < argc && count < 16; i++) values[count++] = strtol(argv[i], NULL, 10);
  printf("sum %ld mean %.2f\n", stats_sum(values, count), stats_mean(values, count));
  return stats_sum(values, count) == 10 ? 0 : 1;
}
