#pragma once
#include <functional>
#include <map>
#include <string>

using Plugin = std::function<int(int)>;
inline std::map<std::string, Plugin>& registry() {
    static std::map<std::string, Plugin> plugins;
    return plugins;
}
struct Registrar {
    Registrar(const char* name, Plugin p) { registry().emplace(name, std::move(p)); }
};
template <class T> T twice(T x) { return x + x; }
inline int bump() { static int counter = 0; return ++counter; }
int plugin_count();
