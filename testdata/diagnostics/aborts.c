#include <stdlib.h>
__attribute__((noinline)) void give_up(void) { abort(); }
int main(void) { give_up(); return 0; }
