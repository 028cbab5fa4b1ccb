// jitrun-test: stdin=3\n1 2 3\nalpha beta\n
// iostreams: cin parsing, formatting, manipulators, cerr, getline.
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>
int main() {
    int n;
    std::cin >> n;
    std::vector<int> v(n);
    for (auto& x : v) std::cin >> x;
    std::string rest, line;
    std::getline(std::cin, rest);
    std::getline(std::cin, line);
    long sum = 0;
    for (int x : v) sum += x;
    std::cout << "n=" << n << " sum=" << sum << " line='" << line << "'\n";
    std::cout << std::setw(8) << std::setfill('*') << 42 << std::hex << " " << 255 << std::dec << " " << std::fixed << std::setprecision(3) << 3.14159 << "\n";
    std::cerr << "diagnostic on cerr\n";
    std::ostringstream os;
    os << std::boolalpha << true << " " << std::scientific << 12345.678;
    std::cout << os.str() << std::endl;
    return sum == 6 ? 0 : 1;
}
