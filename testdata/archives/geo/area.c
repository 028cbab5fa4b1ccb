#include <stdio.h>
const char *fmt_number(double v);
double geo_area(double r) {
    printf("area of radius %s\n", fmt_number(r));
    return 3.14159 * r * r;
}
