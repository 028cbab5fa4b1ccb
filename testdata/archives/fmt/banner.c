#include <stdio.h>
const char *geo_unit(void);
const char *fmt_banner(void) {
    static char buf[32];
    snprintf(buf, sizeof buf, "units: %s", geo_unit());
    return buf;
}
