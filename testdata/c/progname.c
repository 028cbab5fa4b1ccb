/* glibc's names for the program (what error(), err() and assert() print)
 * are set from argv[0]. Code built with -fno-pic reads them from a copy of
 * the variables in the executable, which libc then reads too. (Under
 * jitrun `prog.o` runs as `prog`: the names may drop argv[0]'s `.o`.) */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    (void)argc;
    size_t full = strlen(program_invocation_name), brief = strlen(program_invocation_short_name);
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    printf("full name set: %d, begins argv[0]: %d\n", full > 0, strncmp(argv[0], program_invocation_name, full) == 0);
    printf("short name set: %d, begins its last part: %d\n", brief > 0,
           strncmp(base, program_invocation_short_name, brief) == 0);
    return 0;
}
