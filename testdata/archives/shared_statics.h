// C++ statics of vague linkage that a program and its shared library both
// define: natively there is one of each, the executable's, which the
// library's references are bound to (shared_statics_lib.cpp,
// shared_statics_host.cpp).
#include <string>

template <class T> struct Registry {
    static int count;
    static std::string name;
};
template <class T> int Registry<T>::count = 0;
template <class T> std::string Registry<T>::name = std::string("registry-") + std::to_string(sizeof(T));

inline int &calls() {
    static int n = 100;
    return n;
}
inline std::string &label() {
    static std::string s = std::string("label-") + std::to_string(calls());
    return s;
}
inline int inline_variable = 7;

struct Addresses {
    const void *count, *name, *calls, *label, *inline_variable;
};

extern "C" void library_touch();
extern "C" Addresses library_addresses();
