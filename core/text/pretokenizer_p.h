#pragma once
// Private to core (and its tests): the scanner behind PreTokenizer::Cursor, with a batch interface
// for the encoder and a regex-only mode that the tests use as the reference for the fast path.

#include "pretokenizer.h"

#include <cstddef>
#include <string_view>

namespace tw::text::detail {

class PieceScanner {
public:
    enum class Mode {
        Fast,      // hand-written state machine for valid UTF-8 up to U+FFFF, PCRE2 for the rest
        RegexOnly, // every piece through PCRE2: the definition
    };

    PieceScanner(const PreTokenizer& pre, std::string_view text, Mode mode = Mode::Fast);
    ~PieceScanner();
    PieceScanner(const PieceScanner&) = delete;
    PieceScanner& operator=(const PieceScanner&) = delete;

    bool next(Piece& piece);
    // Up to max next pieces into out; returns how many (0 once the text is done).
    std::size_t next(Piece* out, std::size_t max);

private:
    bool fastPiece(Piece& piece);
    void regexPiece(Piece& piece);

    const PreTokenizer::Compiled* m_compiled = nullptr;
    void* m_match = nullptr; // pcre2_match_data*, created on first use
    const unsigned char* m_text = nullptr;
    std::size_t m_size = 0;
    std::size_t m_pos = 0;
    bool m_regexOnly = false;
    bool m_pending = false; // a regex match found after an invalid-byte gap, still to be returned
    Piece m_pendingPiece;
};

} // namespace tw::text::detail
