// jitrun-test: env=TZ=UTC
// <time.h> without the clock: mktime, gmtime, localtime, strftime and
// difftime on fixed dates in UTC.
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(void) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  tm.tm_year = 2024 - 1900;
  tm.tm_mon = 1;
  tm.tm_mday = 29;
  tm.tm_hour = 13;
  tm.tm_min = 37;
  tm.tm_sec = 42;
  tm.tm_isdst = -1;
  time_t t = mktime(&tm);
  printf("mktime=%lld wday=%d yday=%d\n", (long long)t, tm.tm_wday, tm.tm_yday);
  char buf[128];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %A %B %j %Z", &tm);
  printf("strftime: %s\n", buf);
  tm.tm_mday += 400; /* normalization */
  t = mktime(&tm);
  strftime(buf, sizeof buf, "%F %T (%a)", &tm);
  printf("normalized: %s = %lld\n", buf, (long long)t);
  time_t epoch = 0;
  struct tm *g = gmtime(&epoch);
  printf("epoch: %04d-%02d-%02d wday %d\n", g->tm_year + 1900, g->tm_mon + 1, g->tm_mday, g->tm_wday);
  time_t big = 4102444800; /* 2100-01-01 */
  struct tm local;
  localtime_r(&big, &local);
  strftime(buf, sizeof buf, "%c", &local);
  printf("2100: %s\n", buf);
  printf("difftime: %.0f\n", difftime(big, t));
  printf("asctime: %s", asctime(gmtime(&big)));
  printf("tzname[0]=%s timezone=%ld\n", tzname[0], timezone);
  return 0;
}
