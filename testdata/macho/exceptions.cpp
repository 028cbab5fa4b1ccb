// jitrun-test: args=4
// C++ built as Mach-O: exceptions unwind through __eh_frame (whose
// pc_begin and LSDA pointers carry no relocations), static constructors
// and destructors run through __mod_init_func and __cxa_atexit, and
// inline functions become weak definitions.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

struct Tracker {
  std::string name;
  explicit Tracker(const char *n) : name(n) { std::printf("construct %s\n", name.c_str()); }
  ~Tracker() { std::printf("destroy %s\n", name.c_str()); }
};

static Tracker global_tracker("global");

struct Failure : std::runtime_error {
  int code;
  Failure(const std::string &what, int c) : std::runtime_error(what), code(c) {}
};

__attribute__((noinline)) static int risky(int depth) {
  Tracker local("frame");
  if (depth == 0) throw Failure("bottom reached", 42);
  return risky(depth - 1) + 1;
}

int main(int argc, char **argv) {
  int depth = argc > 1 ? std::atoi(argv[1]) : 2;
  std::vector<int> values;
  for (int i = 0; i < depth; i++) values.push_back(i * i);
  try {
    risky(depth);
  } catch (const Failure &f) {
    std::printf("caught %s code %d\n", f.what(), f.code);
  }
  try {
    values.at(100);
  } catch (const std::out_of_range &) {
    std::printf("out of range\n");
  }
  std::printf("sum %d\n", values.empty() ? 0 : values.back());
  return 0;
}
