// An exception thrown out of an atexit handler, after main returned:
// nothing catches it on the way out of exit(), so std::terminate says so
// on stderr and aborts (134), as under __libc_start_main.
#include <cstdio>
#include <cstdlib>

static void throws_at_exit() { throw 5; }

int main() {
    std::atexit(throws_at_exit);
    std::printf("main returns\n");
    return 0;
}
