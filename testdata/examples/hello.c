/* A shipped example: `cargo run --release -- testdata/examples/hello.o -- world`.
   Regenerate the object with: cc -c -O2 hello.c -o hello.o */
#include <stdio.h>

__attribute__((constructor)) static void announce(void) { fputs("constructor ran\n", stderr); }

int main(int argc, char **argv) {
    printf("hello, %s!\n", argc > 1 ? argv[1] : "world");
    return argc > 1 ? 0 : 1;
}
