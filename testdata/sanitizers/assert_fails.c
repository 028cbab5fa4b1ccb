/* Sanitized code whose assertion fails: abort(), status 134, as natively,
 * with jitrun's crash report (source lines included) and nothing from the
 * sanitizer about jitrun's report itself. */
#include <assert.h>
#include <stdlib.h>

__attribute__((noinline)) int check(int *values) {
    assert(values[0] != 7);
    return values[1];
}

int main(void) {
    int *values = calloc(4, sizeof *values);
    values[0] = 7;
    int result = check(values);
    free(values);
    return result;
}
