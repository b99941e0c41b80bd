#pragma once
// Private to scenariojson.cpp: the scenario file's JSON document built with positions — line and column
// of a syntax error, the JSON path of a duplicate key or of nesting deeper than kMaxJsonDepth, and each
// number as written (for messages).

#include "scenariojson.h"

#include "base/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace tw::scenario::detail {

using Json = nlohmann::ordered_json;

inline std::string inQuotes(std::string_view s)
{
    std::string out(1, '"');
    out.append(s);
    out.push_back('"');
    return out;
}

inline std::string childPath(const std::string& parent, const std::string& key)
{
    return parent.empty() ? key : parent + "." + key;
}

// Line and column (1-based, columns in code points) of byte offset `pos` in `text`.
inline std::pair<int, int> lineColumn(std::string_view text, std::size_t pos)
{
    pos = std::min(pos, text.size());
    int line = 1;
    int column = 1;
    for (std::size_t i = 0; i < pos; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++line;
            column = 1;
        } else if ((c & 0xC0) != 0x80) {
            ++column;
        }
    }
    return {line, column};
}

// Builds the document through nlohmann's SAX interface (its parser is iterative), refusing nesting
// deeper than kMaxJsonDepth and duplicate keys before anything deeper is built.
class DomBuilder : public nlohmann::json_sax<Json> {
public:
    DomBuilder(std::string_view text, const std::string& file, std::vector<Error>& errors)
        : m_text(text), m_file(file), m_errors(errors)
    {
    }

    Json root;
    std::map<std::string, std::string> floatText; // JSON path → the number as written (for messages)

    bool null() override { return scalar(nullptr); }
    bool boolean(bool v) override { return scalar(v); }
    bool number_integer(number_integer_t v) override { return scalar(v); }
    bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
    bool number_float(number_float_t v, const string_t& s) override
    {
        floatText[currentPath()] = s;
        return scalar(v);
    }
    bool string(string_t& v) override { return scalar(v); }
    bool binary(binary_t&) override { return scalar(nullptr); }
    bool start_object(std::size_t) override { return open(Json::object()); }
    bool start_array(std::size_t) override { return open(Json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override
    {
        Frame& f = m_stack.back();
        if (f.value->contains(k)) {
            fail(childPath(f.path, k), "duplicate key " + inQuotes(k));
            return false;
        }
        f.key = k;
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override
    {
        std::string what = ex.what();
        // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error …" → "syntax error …"
        if (const auto close = what.find("] "); close != std::string::npos)
            what = what.substr(close + 2);
        if (what.starts_with("parse error")) {
            if (const auto colon = what.find(": "); colon != std::string::npos)
                what = what.substr(colon + 2);
        }
        Location where;
        where.file = m_file;
        std::size_t pos = position;
        if (const auto* pe = dynamic_cast<const nlohmann::detail::parse_error*>(&ex))
            pos = pe->byte;
        const std::size_t at = pos > 0 ? pos - 1 : 0;
        std::tie(where.line, where.column) = lineColumn(m_text, at);
        // nlohmann's lexer takes a NUL byte for the end of the input: say what is really there.
        if (at < m_text.size() && m_text[at] == '\0' && what.find("U+0000") == std::string::npos)
            what = "a NUL byte (binary data?) where JSON text was expected";
        m_errors.push_back(makeError("invalid JSON: " + what, std::move(where)));
        return false;
    }

private:
    struct Frame {
        Json* value;
        std::string path;
        std::string key;  // objects: the key of the next value
        std::size_t index = 0; // arrays: the index of the next value
    };

    std::string currentPath() const
    {
        if (m_stack.empty())
            return {};
        const Frame& f = m_stack.back();
        if (f.value->is_object())
            return childPath(f.path, f.key);
        return f.path + "[" + std::to_string(f.index) + "]";
    }

    // Where the next value goes: the root, a member or an array element.
    Json* slot()
    {
        if (m_stack.empty())
            return &root;
        Frame& f = m_stack.back();
        if (f.value->is_object())
            return &(*f.value)[f.key];
        f.value->push_back(nullptr);
        ++f.index;
        return &f.value->back();
    }

    bool scalar(Json v)
    {
        *slot() = std::move(v);
        return true;
    }

    bool open(Json container)
    {
        std::string path = currentPath();
        if (m_stack.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
            fail(path, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
            return false;
        }
        Json* target = slot();
        *target = std::move(container);
        m_stack.push_back({target, std::move(path), {}, 0});
        return true;
    }

    bool close()
    {
        m_stack.pop_back();
        return true;
    }

    void fail(const std::string& path, std::string message)
    {
        Location where;
        where.file = m_file;
        where.jsonPath = path;
        m_errors.push_back(makeError(std::move(message), std::move(where)));
    }

    std::string_view m_text;
    const std::string& m_file;
    std::vector<Error>& m_errors;
    std::vector<Frame> m_stack;
};

} // namespace tw::scenario::detail
