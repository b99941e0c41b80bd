// The function-lengths checker's own test (tests/CMakeLists.txt: function_lengths_checker): every
// function body below is listed in an "expect NAME LINES" line, and the checker must find exactly
// these, with these lengths (first line = the opening brace, last = the closing brace).
// expect plain 2
// expect Widget::operator() 3
// expect Widget::same 1
// expect Widget::Widget 5
// expect Widget::~Widget 1
// expect literals 12
// expect withLambda 9
// expect kScale 3
// expect trailing 2
// expect afterTable 2
// expect Inline::size 1
// expect Inline::twice 3
// expect withDefault 3
#include <array>
#include <string>

namespace sample {
namespace {

int plain(int x)
{
    return x + 1; }

struct Pair { int a; int b; };
const std::array<Pair, 2> kTable{ Pair{1, 2}, Pair{3, 4} };
constexpr int kOther[] = {
    1, 2, 3,
};
} // namespace

#define OPEN_BRACE {
class Widget
{
public:
    Widget(int a, int b);
    ~Widget();
    int operator()(int x) const
    {
        return x * a_;
    }
    bool operator==(const Widget&) const = default;
    bool same(const Widget& o) const { return a_ == o.a_; }

private:
    int a_{0};
    std::array<int, 2> b_{};
};

Widget::Widget(int a, int b)
    : a_{a}, b_{b, 2}
{
    if (a > b) {
        a_ = b;
    }
}

Widget::~Widget()
{ }

// A brace in a comment: {
/* and in a block comment: { { */
std::string literals()
{
    std::string s = "{ \" {";
    char c = '{';
    char q = '\'';
    int big = 1'000'000;
    auto raw = R"x({ ")" })x";
    s += c;
    s += q;
    (void)big;
    (void)raw;
    return s; // }
}

int withLambda(int n)
{
    auto f = [n](int k) {
        struct Local { int v; int get() const { return v; } };
        return Local{k + n}.get();
    };
    int total = 0;
    for (int i = 0; i < n; ++i) { total += f(i); }
    return total;
}

const auto kScale = [](double x) {
    return 2.0 * x;
};

auto trailing(int x) -> std::array<int, 1>
{
    return {x}; }

extern "C" {
int afterTable(int x)
{
    return x; }
}

} // namespace sample

struct Inline {
    int size() const { return 1; }
    int twice(int x) const
    {
        return 2 * x;
    }
};

int withDefault(const std::string& s = {}, int k = int{3})
{
    return static_cast<int>(s.size()) + k;
}
