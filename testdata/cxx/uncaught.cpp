// An exception nobody catches: std::terminate, message on stderr, abort (134).
#include <cstdio>
#include <stdexcept>
struct Guard { ~Guard() { std::printf("must not run: unwinding stops before main's frames\n"); } };
void fail() { throw std::runtime_error("nobody catches this"); }
int main() {
    Guard g;
    std::printf("about to throw\n");
    std::fflush(stdout);
    fail();
    return 0;
}
