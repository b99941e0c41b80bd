#pragma once
// Errors a user can cause are values: a message and where it happened. Never a crash, never a
// silent default.

#include <string>
#include <utility>
#include <variant>

namespace tw {

struct Location {
    std::string file;     // path or a name such as "<stdin>" / "<editor>"
    int line = 0;         // 1-based; 0 when not known
    int column = 0;       // 1-based; 0 when not known
    std::string jsonPath; // e.g. "model.merges[12]"
    std::string field;    // a form field or option name, e.g. "--vocab-size"
    bool operator==(const Location&) const = default;
};

struct Error {
    std::string message;
    Location where;
    bool operator==(const Error&) const = default;

    // "file:3:7: model.merges[12]: message" with the parts that are known.
    [[nodiscard]] std::string toString() const;
};

// A value or an Error. Small on purpose: std::expected arrives with C++23.
template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Error error) : m_v(std::move(error)) {}

    [[nodiscard]] bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    [[nodiscard]] T& value() & { return std::get<0>(m_v); }
    [[nodiscard]] const T& value() const& { return std::get<0>(m_v); }
    [[nodiscard]] T&& value() && { return std::get<0>(std::move(m_v)); }
    [[nodiscard]] const Error& error() const { return std::get<1>(m_v); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

private:
    std::variant<T, Error> m_v;
};

// For operations that return nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

[[nodiscard]] inline Error makeError(std::string message, Location where = {})
{
    return Error{std::move(message), std::move(where)};
}

// An error about the value at a JSON path of a document ("parallel.tp", "topology.kind").
[[nodiscard]] inline Error errorAt(std::string jsonPath, std::string message)
{
    Location where;
    where.jsonPath = std::move(jsonPath);
    return makeError(std::move(message), std::move(where));
}

} // namespace tw
