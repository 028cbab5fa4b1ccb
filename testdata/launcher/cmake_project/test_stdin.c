#include <stdio.h>
#include <stdlib.h>
#include "stats.h"

/* Sums the numbers on stdin and compares with argv[1]. */
int main(int argc, char **argv) {
  long values[64];
  int count = 0;
  while (count < 64 && scanf("%ld", &values[count]) == 1) count++;
  long sum = stats_sum(values, count);
  printf("read %d numbers, sum %ld\n", count, sum);
  return argc > 1 && sum == strtol(argv[1], NULL, 10) ? 0 : 1;
}
