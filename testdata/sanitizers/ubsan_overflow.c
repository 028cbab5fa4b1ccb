/* -fsanitize=undefined code: each check calls libubsan, which reports
 * and lets the program go on. */
#include <limits.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int big = INT_MAX;
    big += argc;                 /* signed overflow */
    int shift = 33 - argc;
    printf("%d %u\n", big, 1u << (shift - 1)); /* unsigned: defined */
    int array[4] = {1, 2, 3, 4};
    int index = argc + 3;
    printf("%d\n", index < 5 ? array[index - 1] : 0);
    return 0;
}
