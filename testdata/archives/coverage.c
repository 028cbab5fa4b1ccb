/* Built with --coverage: the program writes its .gcda counters at exit,
 * through the profiling runtime the compiler driver links. */
#include <stdio.h>
static int classify(int x) {
    if (x < 0) return -1;
    if (x == 0) return 0;
    return 1;
}
int main(int argc, char **argv) {
    int sum = 0;
    for (int i = -3; i < argc; i++) sum += classify(i);
    printf("sum %d\n", sum);
    return 0;
}
