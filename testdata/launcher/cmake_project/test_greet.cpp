#include <iostream>
#include <stdexcept>
#include <string>
#include "stats.h"

extern "C" const char *greet(const char *name);

static std::string checked(const char *name) {
  if (!name) throw std::invalid_argument("no name");
  return greet(name);
}

int main(int argc, char **argv) {
  std::string line = checked(argc > 1 ? argv[1] : "nobody");
  try {
    checked(nullptr);
  } catch (const std::exception &e) {
    line += std::string("; caught: ") + e.what();
  }
  const long values[] = {1, 2};
  std::cout << line << "; sum " << stats_sum(values, 2) << std::endl;
  return 0;
}
