// Static objects in several translation units, a cross-unit registry,
// templates and inline functions merged across objects (COMDAT), static
// destructors in reverse order of construction, atexit interleaving.
#include <cstdio>
#include <cstdlib>
#include "registry.h"

struct Local { const char* n; explicit Local(const char* x) : n(x) { std::printf("construct %s\n", n); } ~Local() { std::printf("destroy %s\n", n); } };
static Local main_static("main.cpp static");

static void at_exit_handler() { std::printf("atexit handler\n"); }

int main() {
    std::atexit(at_exit_handler);
    std::printf("registered: %zu\n", registry().size());
    for (const auto& [name, fn] : registry()) std::printf("%s -> %d\n", name.c_str(), fn(10));
    std::printf("twice<int> %d twice<double> %.1f counter %d\n", twice(21), twice(1.25), bump());
    static Local function_static("function static");
    return 0;
}
