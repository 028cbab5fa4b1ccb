#include <stdio.h>
__attribute__((constructor)) static void hello(void) { puts("perimeter.o constructor"); }
__attribute__((destructor)) static void bye(void) { puts("perimeter.o destructor"); }
int geo_perimeter(int w, int h) { return 2 * (w + h); }
