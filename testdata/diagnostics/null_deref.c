#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) int crash_here(int *p) { return *p + 1; }
__attribute__((noinline)) int middle(int *p) { int r = crash_here(p); printf("%d\n", r); return r; }
int main(int argc, char **argv) { int *p = argc > 5 ? &argc : NULL; return middle(p); }
