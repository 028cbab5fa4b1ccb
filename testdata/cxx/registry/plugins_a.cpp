#include <cstdio>
#include "registry.h"
static Registrar square("square", [](int x) { return x * x + bump() * 0; });
static Registrar negate("negate", [](int x) { return -x; });
struct Noisy { Noisy() { std::printf("plugins_a ready %d\n", twice(3)); } ~Noisy() { std::printf("plugins_a gone\n"); } };
static Noisy noisy;
int plugin_count() { return static_cast<int>(registry().size()); }
