#include <cstdio>

#include "shared_statics.h"

int main() {
    Registry<int>::count += 10;
    Registry<int>::name += "+main";
    calls() += 10;
    label() += "+main";
    inline_variable += 10;
    library_touch();
    Addresses lib = library_addresses();
    std::printf("count %d name %s calls %d label %s inline %d\n", Registry<int>::count, Registry<int>::name.c_str(),
                calls(), label().c_str(), inline_variable);
    std::printf("shared: count %d name %d calls %d label %d inline %d\n", lib.count == &Registry<int>::count,
                lib.name == &Registry<int>::name, lib.calls == &calls(), lib.label == &label(),
                lib.inline_variable == &inline_variable);
    return 0;
}
