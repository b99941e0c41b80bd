#pragma once
// GPT-2's pre-tokenizer: the regex that cuts text into pieces before BPE, run through PCRE2
// (UTF + UCP + JIT + MATCH_INVALID_UTF). Pattern (GPT-2 encoder.py / tiktoken "gpt2"):
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// with \s, \p{L} and \p{N} spelled as explicit classes so that the pieces match tiktoken's
// (Rust regex: White_Space without U+180E, and newer Unicode letters/digits than PCRE2 10.42).

#include <cstddef>
#include <memory>
#include <string_view>

namespace tw::text {

struct Piece {
    std::size_t begin = 0;
    std::size_t end = 0; // one past the last byte
};

class PreTokenizer {
public:
    PreTokenizer();
    ~PreTokenizer();
    PreTokenizer(const PreTokenizer&) = delete;
    PreTokenizer& operator=(const PreTokenizer&) = delete;

    // The shared, compiled pattern (thread-safe to use from many Cursors).
    static const PreTokenizer& gpt2();

    // Walks the pieces of one text in order. The pieces cover the text exactly, without gaps;
    // a run of invalid UTF-8 bytes is a piece of its own. One Cursor per thread.
    class Cursor {
    public:
        Cursor(const PreTokenizer& pre, std::string_view text);
        ~Cursor();
        Cursor(const Cursor&) = delete;
        Cursor& operator=(const Cursor&) = delete;
        bool next(Piece& piece);

    private:
        struct State;
        std::unique_ptr<State> m_state;
    };

    struct Compiled;
    const Compiled& compiled() const { return *m_compiled; }

private:
    std::unique_ptr<Compiled> m_compiled;
};

} // namespace tw::text
