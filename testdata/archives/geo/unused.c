/* Nothing needs this member: if it is loaded, its constructor tells. */
#include <stdio.h>
__attribute__((constructor)) static void loaded(void) { puts("unused.o LOADED"); }
int geo_never_called(void) { return 1; }
