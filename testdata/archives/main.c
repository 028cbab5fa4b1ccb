// Linked against libgeo.a and libfmt.a (built by tests/archives.rs) whose
// members need each other in both directions, and libshout.so.
#include <stdio.h>

double geo_area(double r);       /* libgeo.a(area.o), needs libfmt.a(number.o) */
int geo_perimeter(int w, int h); /* libgeo.a(perimeter.o), has a constructor */
const char *fmt_banner(void);    /* libfmt.a(banner.o), needs libgeo.a(unit.o) */
extern int fmt_calls;            /* data in libfmt.a(number.o) */
/* Defined by libfmt.a(plugin.o); a weak reference must not load it. */
extern void optional_plugin(void) __attribute__((weak));
void shout(const char *what); /* libshout.so */

/* Runs after main: the shared library must still be loaded. */
__attribute__((destructor)) static void goodbye(void) { shout("main.o destructor"); }

int main(int argc, char **argv) {
    (void)argv;
    printf("%s\n", fmt_banner());
    printf("area %.3f\n", geo_area(argc + 0.5));
    printf("perimeter %d\n", geo_perimeter(argc, 7));
    printf("fmt_calls %d\n", fmt_calls);
    printf("plugin %s\n", optional_plugin ? "present" : "absent");
    fflush(stdout);
    return argc + 40;
}
