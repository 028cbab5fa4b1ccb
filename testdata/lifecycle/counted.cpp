// Used by tests/lifecycle.rs: every constructor, destructor and atexit
// handler appends a letter to a file named by $LIFECYCLE_LOG, so a test can
// see how often and in which order they ran across loads and unloads.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static void note(const char* what) {
    if (const char* path = std::getenv("LIFECYCLE_LOG")) {
        if (FILE* f = std::fopen(path, "a")) { std::fputs(what, f); std::fclose(f); }
    }
}
struct Static { Static() { note("C"); } ~Static() { note("D"); } };
static Static object;
__attribute__((constructor)) static void ctor() { note("c"); }
__attribute__((destructor)) static void dtor() { note("d"); }
static void handler() { note("a"); }
thread_local int tl_value = 3;

extern "C" int entry(int argc, char**) {
    std::atexit(handler);
    try { if (argc > 0) throw std::runtime_error("x"); } catch (const std::exception&) { note("x"); }
    return tl_value + argc;
}
