/* -fsanitize=address code in two objects, built with -g: with an argument,
 * sum_first (asan_lines_sum.c) reads past the block main allocated. The
 * report's frames and summary name both files' lines, as natively. */
#include <stdio.h>
#include <stdlib.h>

int sum_first(const int *values, int count);

int main(int argc, char **argv) {
    int *values = malloc(4 * sizeof *values);
    for (int i = 0; i < 4; i++)
        values[i] = i + 1;
    printf("%d\n", sum_first(values, argc > 1 ? 5 : 4));
    free(values);
    return 0;
}
