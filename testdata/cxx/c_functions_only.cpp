// A C++ program that calls only C functions (sqrt from libm, assert's
// __assert_fail and printf from libc): no mangled name, no C++ runtime
// symbol. `g++ x.o` still links it, since the g++ driver always names
// -lstdc++ -lm; jitrun must too (issue 33 item 1).
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
    double x = std::sqrt(static_cast<double>(argc + 15) + std::atoi(argc > 1 ? argv[1] : "0"));
    assert(x == 4.0);
    std::printf("sqrt: %g, cbrt: %g\n", x, std::cbrt(x * 2.0));
    return static_cast<int>(x);
}
