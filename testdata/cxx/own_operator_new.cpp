// A program that replaces operator new and delete (memory tracking, pool
// allocators): natively libstdc++'s own code allocates with them too, so a
// string that libstdc++'s getline grows can be freed by the program's
// inlined destructor. This delete checks a header and aborts on a block its
// new did not make.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {
constexpr std::uint64_t kMagic = 0x6f70657261746f72ULL;
struct alignas(16) Header {
  std::uint64_t magic;
  std::size_t size;
};
volatile int news, deletes;
}  // namespace

void *operator new(std::size_t size) {
  auto *h = static_cast<Header *>(std::malloc(sizeof(Header) + size));
  if (!h) throw std::bad_alloc();
  h->magic = kMagic;
  h->size = size;
  news = news + 1;
  return h + 1;
}

void operator delete(void *p) noexcept {
  if (!p) return;
  Header *h = static_cast<Header *>(p) - 1;
  if (h->magic != kMagic) {
    static const char message[] = "operator delete: a block this operator new did not make\n";
    write(2, message, sizeof message - 1);
    std::abort();
  }
  h->magic = 0;
  deletes = deletes + 1;
  std::free(h);
}

void operator delete(void *p, std::size_t) noexcept { operator delete(p); }
void *operator new[](std::size_t size) { return operator new(size); }
void operator delete[](void *p) noexcept { operator delete(p); }
void operator delete[](void *p, std::size_t) noexcept { operator delete(p); }

int main() {
  int before = news;
  std::istringstream in("a line long enough to need the heap, not the small-string buffer\nsecond\n");
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) lines++;
  std::printf("%d lines; libstdc++ allocated with the program's operator new: %s\n", lines,
              news > before ? "yes" : "no");
  {
    std::string grown = std::to_string(123456789) + std::string(100, 'x');
    std::printf("%zu characters\n", grown.size());
  }
  std::printf("every block came back: %s\n", deletes > 0 ? "yes" : "no");
  return 0;
}
