// RTTI, dynamic_cast, virtual and virtual inheritance, STL containers and algorithms.
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

struct Shape { virtual ~Shape() = default; virtual double area() const = 0; virtual std::string name() const { return "shape"; } };
struct Rect : Shape { double w, h; Rect(double a, double b) : w(a), h(b) {} double area() const override { return w * h; } std::string name() const override { return "rect"; } };
struct Square : Rect { explicit Square(double s) : Rect(s, s) {} std::string name() const override { return "square"; } };
struct Circle : Shape { double r; explicit Circle(double x) : r(x) {} double area() const override { return 3.0 * r * r; } };

struct Base { int b = 1; virtual ~Base() = default; virtual int id() const { return b; } };
struct Left : virtual Base { int l = 2; int id() const override { return b + l; } };
struct Right : virtual Base { int r = 3; };
struct Diamond : Left, Right { int d = 4; int id() const override { return b + l + r + d; } };

int main() {
    std::vector<std::unique_ptr<Shape>> shapes;
    shapes.push_back(std::make_unique<Rect>(2, 3));
    shapes.push_back(std::make_unique<Square>(4));
    shapes.push_back(std::make_unique<Circle>(1));
    for (const auto& s : shapes) {
        std::cout << s->name() << " area " << s->area();
        if (auto* r = dynamic_cast<Rect*>(s.get())) std::cout << " is-a rect w=" << r->w;
        std::cout << " typeid " << (typeid(*s) == typeid(Square) ? "Square" : "other") << "\n";
    }
    Diamond d;
    Base& b = d;
    std::cout << "diamond id " << b.id() << " left->base " << static_cast<Left&>(d).b << "\n";
    std::cout << "cross cast ok " << (dynamic_cast<Right*>(static_cast<Left*>(&d)) != nullptr) << "\n";

    std::map<std::string, int> counts;
    std::istringstream text("the quick brown fox jumps over the lazy dog the end");
    for (std::string w; text >> w;) counts[w]++;
    for (const auto& [w, c] : counts) std::cout << w << ":" << c << " ";
    std::cout << "\n";
    std::vector<int> v(20);
    std::iota(v.begin(), v.end(), 1);
    std::reverse(v.begin(), v.end());
    std::stable_sort(v.begin(), v.end(), [](int a, int b) { return a % 3 < b % 3; });
    for (int x : v) std::cout << x << ",";
    std::cout << "\nsum " << std::accumulate(v.begin(), v.end(), 0) << "\n";
    std::set<std::string> uniq(counts.size() > 3 ? std::set<std::string>{"b", "a", "c", "a"} : std::set<std::string>{});
    for (const auto& s : uniq) std::cout << s;
    std::unordered_map<int, std::string> um{{1, "one"}, {2, "two"}};
    std::cout << "\n" << um.at(2) << " " << um.count(3) << std::endl;
    return 0;
}
