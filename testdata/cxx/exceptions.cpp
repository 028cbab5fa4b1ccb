// Exceptions thrown through several frames, through C callbacks (qsort),
// std::function, and rethrown; custom exception hierarchies.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

struct AppError : std::runtime_error {
    int code;
    AppError(const std::string& what, int c) : std::runtime_error(what), code(c) {}
};
struct Tracer {
    const char* name;
    explicit Tracer(const char* n) : name(n) { std::printf("enter %s\n", name); }
    ~Tracer() { std::printf("leave %s\n", name); }
};

int depth3(int x) {
    Tracer t("depth3");
    if (x > 1) throw AppError("depth3 failed", x);
    return x;
}
int depth2(int x) { Tracer t("depth2"); return depth3(x) + 1; }
int depth1(int x) { Tracer t("depth1"); return depth2(x) + 1; }

static int throwing_compare(const void* a, const void* b) {
    int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
    if (x == 42 || y == 42) throw std::out_of_range("found 42 in qsort");
    return (x > y) - (x < y);
}

int main() {
    try { depth1(5); } catch (const AppError& e) { std::printf("caught AppError '%s' code %d\n", e.what(), e.code); }
    int values[] = {5, 3, 42, 1};
    try { std::qsort(values, 4, sizeof(int), throwing_compare); }
    catch (const std::exception& e) { std::printf("caught through qsort: %s\n", e.what()); }
    std::function<int(int)> f = [](int x) { return depth1(x); };
    try { f(3); } catch (const std::runtime_error& e) { std::printf("through std::function: %s\n", e.what()); }
    try {
        try { throw std::logic_error("inner"); }
        catch (...) { std::printf("rethrowing\n"); throw; }
    } catch (const std::logic_error& e) { std::printf("outer got %s\n", e.what()); }
    try { std::vector<int> v(3); (void)v.at(10); }
    catch (const std::out_of_range&) { std::printf("vector::at threw out_of_range\n"); }
    try { throw 7; } catch (int n) { std::printf("int %d\n", n); }
    try { throw std::string("a string"); } catch (const std::string& s) { std::printf("string %s\n", s.c_str()); }
    std::printf("noexcept ok: %d\n", noexcept(depth1(0)) ? 1 : 0);
    return 0;
}
