/* The second object of asan_lines_main.c. Its strings and its own line
 * program come after the first object's in the merged DWARF. */
#include <string.h>

static const char *const label = "a string that moves this object's .debug_str offsets";

int sum_first(const int *values, int count) {
    int sum = 0;
    for (int i = 0; i < count; i++)
        sum += values[i];
    return sum + (int)(strlen(label) - strlen(label));
}
