#include <math.h>
#include "stats.h"

long stats_sum(const long *values, int count) {
  long sum = 0;
  for (int i = 0; i < count; i++) sum += values[i];
  return sum;
}

double stats_mean(const long *values, int count) {
  return count ? floor(100.0 * stats_sum(values, count) / count) / 100.0 : NAN;
}
