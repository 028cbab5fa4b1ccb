// Reads memory from malloc and new[] before writing it. That is undefined
// behaviour, but a native program's first blocks come from pages the
// kernel zeroed, and real programs come to rely on it: under jitrun, the
// dynamic loader's frees while jitrun loaded libstdc++ came back to the
// program's first blocks of up to 80 bytes, holding the loader's old
// tables. The program's heap must start as a native one's: nothing free
// in the tcache or the bins, fresh memory from the top, and a new thread's
// arena as fresh. Blocks are never freed (a freed block would come back
// with our own writes).
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

// Nonzero bytes in `size` bytes at `block`, read as the program would
// (volatile: the compiler may not assume anything about them).
__attribute__((noinline)) static int dirty(const volatile unsigned char *block, std::size_t size) {
    int count = 0;
    for (std::size_t i = 0; i < size; i++) count += block[i] != 0;
    return count;
}

// Sizes in every tcache bin range (up to 1032 bytes), small bins, large
// bins and the top chunk, and one served by mmap. The heap grows by less
// than 200 KiB: under qemu-user (the aarch64 tests) a native program's
// heap cannot grow much further, and glibc then frees the rest of its top
// chunk into the bins, where later blocks find its list pointers.
static const std::size_t sizes[] = {1,    8,    16,   24,   32,   40,   48,    56,    64,   72,  80,
                                    96,   112,  128,  200,  256,  400,  512,   1000,  1032, 1100,
                                    1500, 2000, 4096, 8000, 12000, 20000, 300000};
static const int count = sizeof sizes / sizeof sizes[0];

struct Record {  // no constructor: `new Record` leaves its members as they are
    long id;
    double weight;
    char name[40];
    Record *next;
};

// The first three blocks of each size from malloc, then new[], then new.
static std::vector<int> first_blocks() {
    std::vector<int> found;
    found.reserve(8 * count);  // the vector's own block is taken first
    for (std::size_t size : sizes)
        for (int i = 0; i < 3; i++) found.push_back(dirty(static_cast<unsigned char *>(std::malloc(size)), size));
    for (std::size_t size : sizes)
        for (int i = 0; i < 2; i++) found.push_back(dirty(new unsigned char[size], size));
    for (int i = 0; i < 8; i++) {
        Record *r = new Record;
        found.push_back(dirty(reinterpret_cast<unsigned char *>(r), sizeof *r));
    }
    return found;
}

static void print(const char *what, const std::vector<int> &found) {
    int blocks = 0, total = 0;
    for (int n : found) blocks += n != 0, total += n;
    std::printf("%s: %zu blocks, %d with nonzero bytes (%d bytes):", what, found.size(), blocks, total);
    for (int n : found) std::printf(" %d", n);
    std::printf("\n");
}

int main() {
    std::vector<int> main_thread = first_blocks();
    std::vector<int> other_thread;
    std::thread([&] { other_thread = first_blocks(); }).join();
    print("main thread", main_thread);
    print("a new thread", other_thread);
    return 0;
}
