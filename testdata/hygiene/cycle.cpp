/* One load/run/unload cycle's worth of everything that registers something
   with the process: a thread-local (TLS module), an exception thrown and
   caught (eh_frame registration, the unwinder's caches), a static object
   with a destructor (__cxa_atexit against the image's __dso_handle), a
   library variable (possible copy relocation) and a thread. Silent; the
   exit status says whether everything worked. */
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

thread_local int per_thread = 7;
static std::string greeting = "hello";

static int thrower(int x) {
    if (x > 0) throw std::runtime_error("boom");
    return x;
}

int main(int argc, char **) {
    int caught = 0;
    try {
        thrower(argc);
    } catch (const std::runtime_error &e) {
        caught = std::string(e.what()) == "boom";
    }
    int in_thread = 0;
    std::thread t([&] { in_thread = per_thread + 1; });
    t.join();
    per_thread += 1;
    bool streams = stdout != nullptr && stderr != nullptr;
    return caught && in_thread == 8 && per_thread == 8 && greeting.size() == 5 && streams ? 0 : 1;
}
