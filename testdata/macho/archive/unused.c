#include <stdio.h>
__attribute__((constructor)) static void noisy(void) { puts("unused member must not load"); }
int unused_fn(void) { return 7; }
