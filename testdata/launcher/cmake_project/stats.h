#ifndef STATS_H
#define STATS_H
#ifdef __cplusplus
extern "C" {
#endif
long stats_sum(const long *values, int count);
double stats_mean(const long *values, int count);
#ifdef __cplusplus
}
#endif
#endif
