#include <stdio.h>
const char *geo_unit(void);
int fmt_calls;
const char *fmt_number(double v) {
    static char buf[64];
    fmt_calls++;
    snprintf(buf, sizeof buf, "%.2f%s", v, geo_unit());
    return buf;
}
