/* W^X while running under jitrun: finds the mappings that hold a function,
   a const global, a relocated const pointer (.data.rel.ro, read-only once
   relocated) and a plain global in /proc/self/maps and prints their
   permissions; then reports any mapping of the process that is both
   writable and executable. Expected: text r-x, rodata r--, relro r--,
   data rw-, and no w+x mapping. */
#include <stdio.h>
#include <string.h>

int counter = 1;
const int answer[64] = {42};
static int target;
int *const relocated_pointer = &target;

int work(int x) { return x * counter + answer[0]; }

static const char *permissions_of(const void *address, char *out) {
    FILE *maps = fopen("/proc/self/maps", "r");
    unsigned long a = (unsigned long)address, lo, hi;
    char perms[5], line[512];
    strcpy(out, "unmapped");
    while (maps && fgets(line, sizeof line, maps)) {
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= a && a < hi) {
            memcpy(out, perms, 3);
            out[3] = 0;
            break;
        }
    }
    if (maps) fclose(maps);
    return out;
}

int main(void) {
    char buf[16];
    printf("text %s\n", permissions_of((const void *)work, buf));
    printf("rodata %s\n", permissions_of(answer, buf));
    printf("relro %s\n", permissions_of(&relocated_pointer, buf));
    printf("data %s\n", permissions_of(&counter, buf));
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512], perms[5];
    unsigned long lo, hi;
    int writable_and_executable = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && perms[1] == 'w' && perms[2] == 'x') {
            printf("w+x mapping: %s", line);
            writable_and_executable++;
        }
    }
    if (maps) fclose(maps);
    printf("w+x mappings %d\n", writable_and_executable);
    return work(0) == 42 && *relocated_pointer == 0 ? 0 : 1;
}
