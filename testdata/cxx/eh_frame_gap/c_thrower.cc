#include <execinfo.h>
#include <stdexcept>
void thrower(int x) {
  if (x) throw std::runtime_error("boom");
}
__attribute__((noinline)) static int frames() {
  void *buffer[16];
  return backtrace(buffer, 16);
}
// frames, this function, main: at least 3 when this object's FDEs are seen.
int depth_from_last_object() { return frames(); }
