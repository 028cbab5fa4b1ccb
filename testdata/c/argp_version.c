// jitrun-test: args=--version
/* A program's definitions of variables libc also defines take their place,
 * as an executable's do: glibc's argp reads argp_program_version through
 * its GOT, which the loader binds to the executable's definition. */
#include <argp.h>
#include <stdio.h>

const char *argp_program_version = "demo 1.2";
const char *argp_program_bug_address = "<bugs@example.org>";

int main(int argc, char **argv) {
    static struct argp parser = {0, 0, 0, "A demo of argp's --version."};
    argp_parse(&parser, argc, argv, 0, 0, 0);
    puts("parsed without --version");
    return 0;
}
