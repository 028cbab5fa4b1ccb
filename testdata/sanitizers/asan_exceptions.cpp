// -fsanitize=address C++: the runtime wraps __cxa_throw and operator new
// and delete, which it finds in libstdc++ when it starts.
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

static int parse(const std::string &text) {
    if (text.empty())
        throw std::invalid_argument("empty");
    return std::stoi(text);
}

int main() {
    std::map<std::string, std::unique_ptr<int>> values;
    for (const char *text : {"12", "", "x", "40"}) {
        try {
            values[text] = std::make_unique<int>(parse(text));
        } catch (const std::exception &e) {
            std::cout << "rejected '" << text << "': " << e.what() << "\n";
        }
    }
    int total = 0;
    for (const auto &entry : values)
        total += *entry.second;
    std::cout << "total " << total << std::endl;
    return 0;
}
