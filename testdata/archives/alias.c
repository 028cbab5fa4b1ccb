// --alias and --define: compute() is never defined by an object; the
// command line says what it is.
#include <stdio.h>
int compute(int x);
int triple(int x);
extern char marker[];
int main(void) {
    printf("compute(5) = %d\n", compute(5));
    printf("triple(5) = %d\n", triple(5));
    printf("marker = %#lx\n", (unsigned long)marker);
    return 0;
}
