// jitrun-test: cflags=-pthread
// std::thread, std::async, std::mutex, condition variables, call_once, and
// thread_local objects with constructors and destructors, deterministic output.
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <numeric>
#include <queue>
#include <string>
#include <thread>
#include <vector>

struct PerThread {
    int id = -1;
    std::string tag = "fresh";
    PerThread() { std::printf("PerThread constructed\n"); }
    ~PerThread() { std::printf("PerThread %d (%s) destroyed\n", id, tag.c_str()); }
};
thread_local PerThread per_thread;
thread_local int tl_counter = 100;
std::once_flag once;

int main() {
    for (int i = 0; i < 3; i++) {
        std::thread t([i] { per_thread.id = i; per_thread.tag = "worker"; tl_counter += i; std::call_once(once, [] { std::printf("call_once ran\n"); }); std::printf("worker %d counter %d\n", i, tl_counter); });
        t.join();
    }
    std::mutex m;
    std::condition_variable cv;
    std::queue<int> q;
    long total = 0;
    std::thread consumer([&] {
        for (int n = 0; n < 1000; n++) {
            std::unique_lock<std::mutex> lock(m);
            cv.wait(lock, [&] { return !q.empty(); });
            total += q.front();
            q.pop();
        }
    });
    for (int n = 1; n <= 1000; n++) { { std::lock_guard<std::mutex> g(m); q.push(n); } cv.notify_one(); }
    consumer.join();
    std::printf("total %ld\n", total);
    std::vector<std::future<long>> parts;
    for (int p = 0; p < 4; p++) parts.push_back(std::async(std::launch::async, [p] { std::vector<long> v(1000); std::iota(v.begin(), v.end(), p * 1000L); return std::accumulate(v.begin(), v.end(), 0L); }));
    long sum = 0;
    for (auto& f : parts) sum += f.get();
    std::printf("async sum %ld, main counter %d\n", sum, tl_counter);
    per_thread.id = 99;
    return 0;
}
