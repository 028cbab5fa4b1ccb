#include "shared_statics.h"

extern "C" void library_touch() {
    Registry<int>::count += 1;
    Registry<int>::name += "+lib";
    calls() += 1;
    label() += "+lib";
    inline_variable += 1;
}

extern "C" Addresses library_addresses() {
    return {&Registry<int>::count, &Registry<int>::name, &calls(), &label(), &inline_variable};
}
