// C++ exceptions thrown from an object whose .eh_frame comes after one that
// lost an FDE (to a discarded COMDAT copy). The merged .eh_frame must have
// no zero word between objects: the unwinder reads one as the end of the
// section, and the throw would end in std::terminate.
#include <cstdio>
#include <execinfo.h>
#include <stdexcept>

void thrower(int);
int depth_from_last_object();
int use_first(int);
int use_second(int);

int main(int argc, char **) {
  std::printf("backtrace from the last object reaches main: %s\n", depth_from_last_object() >= 3 ? "yes" : "no");
  try {
    thrower(argc);
  } catch (const std::exception &e) {
    std::printf("caught: %s (%d)\n", e.what(), use_first(1) + use_second(2));
    return 0;
  }
  std::printf("not thrown\n");
  return 1;
}
