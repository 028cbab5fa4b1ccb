#include <cstdio>
#include "registry.h"
static Registrar triple("triple", [](int x) { return 3 * x; });
struct Noisy { Noisy() { std::printf("plugins_b ready %d\n", twice(4)); } ~Noisy() { std::printf("plugins_b gone\n"); } };
static Noisy noisy_b;
