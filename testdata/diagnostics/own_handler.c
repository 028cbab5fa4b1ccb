#include <signal.h>
#include <string.h>
#include <unistd.h>
static void on_segv(int sig) { (void)sig; write(1, "handled\n", 8); _exit(3); }
__attribute__((noinline)) int poke(volatile int *p) { return *p; }
int main(int argc, char **argv) {
    (void)argv;
    signal(SIGSEGV, on_segv);
    return poke(argc > 5 ? &argc : 0);
}
