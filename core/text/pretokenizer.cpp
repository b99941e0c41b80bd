#include "pretokenizer.h"

#include "pretokenizer_p.h"
#include "unicodeextra.h"

#include <pcre2.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <atomic>
#include <bit>
#include <stdexcept>
#include <string>

namespace tw::text {

namespace {

// GPT-2's pattern (encoder.py; tiktoken "gpt2": '(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+|
// ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+) with \s, \p{L} and \p{N} spelled out (see unicodeextra.h).
std::string letterClass() { return "\\p{L}" + std::string(unicode::kExtraLetterClass); }
std::string numberClass() { return "\\p{N}" + std::string(unicode::kExtraNumberClass); }
std::string spaceClass() { return std::string(unicode::kWhiteSpaceClass); }

std::string gpt2Pattern()
{
    const std::string ws = spaceClass();
    const std::string letters = letterClass();
    const std::string numbers = numberClass();
    return "'s|'t|'re|'ve|'m|'ll|'d"
           "| ?[" + letters + "]+"
           "| ?[" + numbers + "]+"
           "| ?[^" + ws + letters + numbers + "]+"
           "|[" + ws + "]+(?![^" + ws + "])"
           "|[" + ws + "]+";
}

// "[" + cls + "]", spelled out (GCC 12 warns falsely about operator+ on a literal here).
std::string bracketed(const std::string& cls)
{
    std::string r(1, '[');
    r.append(cls);
    r.push_back(']');
    return r;
}

pcre2_code* compile(const std::string& pattern)
{
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &errorCode, &errorOffset, nullptr);
    if (!code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(errorCode, message, sizeof message);
        throw std::logic_error("GPT-2 pattern does not compile: " + std::string(reinterpret_cast<char*>(message)));
    }
    return code;
}

// The class of a code point for the fast path. The pattern's alternatives only ask whether a code
// point is a letter, a number, white space or none of these (the classes are disjoint).
enum Class : unsigned char {
    kUnknown = 0, // not classified yet
    kLetter = 1,
    kNumber = 2,
    kSpace = 3,
    kOther = 4,
    kUndecided = 5, // the fast path stops: invalid UTF-8, or a code point above U+FFFF
};

} // namespace

struct PreTokenizer::Compiled {
    pcre2_code* code = nullptr;
    // One-code-point classes, compiled from the same strings as the pattern: they classify each
    // code point the fast path meets, once, so that PCRE2 stays the definition.
    pcre2_code* letter = nullptr;
    pcre2_code* number = nullptr;
    pcre2_code* space = nullptr;
    unsigned char ascii[128] = {};
    bool asciiLettersAreAz = false; // the letters among ASCII are exactly A–Z and a–z (SIMD runs)
    // Classes of U+0080…U+FFFF, filled lazily (kUnknown until first met). Racing threads store the
    // same value, so relaxed atomics suffice.
    std::unique_ptr<std::atomic<unsigned char>[]> bmp;

    ~Compiled()
    {
        pcre2_code_free(code);
        pcre2_code_free(letter);
        pcre2_code_free(number);
        pcre2_code_free(space);
    }

    unsigned char classifyWithPcre2(char32_t cp) const
    {
        unsigned char buf[4];
        std::size_t n = 0;
        if (cp < 0x80) {
            buf[n++] = static_cast<unsigned char>(cp);
        } else if (cp < 0x800) {
            buf[n++] = static_cast<unsigned char>(0xC0 | (cp >> 6));
            buf[n++] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
        } else {
            buf[n++] = static_cast<unsigned char>(0xE0 | (cp >> 12));
            buf[n++] = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
            buf[n++] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
        }
        pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
        auto is = [&](const pcre2_code* c) {
            return pcre2_match(c, buf, n, 0, PCRE2_ANCHORED, md, nullptr) >= 0
                && pcre2_get_ovector_pointer(md)[1] == n;
        };
        const unsigned char k = is(letter) ? kLetter : is(number) ? kNumber : is(space) ? kSpace : kOther;
        pcre2_match_data_free(md);
        return k;
    }

    unsigned char bmpClass(char32_t cp) const
    {
        unsigned char k = bmp[cp].load(std::memory_order_relaxed);
        if (k == kUnknown) [[unlikely]] {
            k = classifyWithPcre2(cp);
            bmp[cp].store(k, std::memory_order_relaxed);
        }
        return k;
    }
};

PreTokenizer::PreTokenizer() : m_compiled(std::make_unique<Compiled>())
{
    Compiled& c = *m_compiled;
    c.code = compile(gpt2Pattern());
    // JIT is an accelerator only: without it (rc < 0) pcre2_match interprets the same pattern.
    pcre2_jit_compile(c.code, PCRE2_JIT_COMPLETE);
    c.letter = compile(bracketed(letterClass()));
    c.number = compile(bracketed(numberClass()));
    c.space = compile(bracketed(spaceClass()));
    c.asciiLettersAreAz = true;
    for (char32_t cp = 0; cp < 128; ++cp) {
        c.ascii[cp] = c.classifyWithPcre2(cp);
        const bool az = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
        c.asciiLettersAreAz = c.asciiLettersAreAz && az == (c.ascii[cp] == kLetter);
    }
    c.bmp = std::make_unique<std::atomic<unsigned char>[]>(0x10000);
}

PreTokenizer::~PreTokenizer() = default;

const PreTokenizer& PreTokenizer::gpt2()
{
    static const PreTokenizer instance;
    return instance;
}

// ---------------------------------------------------------------------------------------------
// Scanner

namespace detail {

namespace {

// Class and byte length of the multi-byte code point at s[i] (s[i] ≥ 0x80, i < n).
inline unsigned char multiByteClass(const PreTokenizer::Compiled& c, const unsigned char* s, std::size_t i,
                                    std::size_t n, std::size_t& len)
{
    const unsigned b0 = s[i];
    if (b0 < 0xC2 || b0 >= 0xF0 || i + 1 >= n)
        return kUndecided; // continuation byte, overlong lead, 4-byte sequence (or invalid), truncated
    const unsigned b1 = s[i + 1];
    if ((b1 & 0xC0) != 0x80)
        return kUndecided;
    if (b0 < 0xE0) {
        len = 2;
        return c.bmpClass(((b0 & 0x1F) << 6) | (b1 & 0x3F));
    }
    if (i + 2 >= n)
        return kUndecided;
    const unsigned b2 = s[i + 2];
    if ((b2 & 0xC0) != 0x80 || (b0 == 0xE0 && b1 < 0xA0) || (b0 == 0xED && b1 >= 0xA0))
        return kUndecided; // overlong or surrogate
    len = 3;
    return c.bmpClass(((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F));
}

inline unsigned char classAt(const PreTokenizer::Compiled& c, const unsigned char* s, std::size_t i, std::size_t n,
                             std::size_t& len)
{
    if (s[i] < 0x80) {
        len = 1;
        return c.ascii[s[i]];
    }
    return multiByteClass(c, s, i, n, len);
}

#if defined(__SSE2__)
// The first index ≥ r (r + 16 ≤ n) whose byte is not an ASCII letter, 16 bytes at a time.
inline std::size_t asciiLetterRun(const unsigned char* s, std::size_t r, std::size_t n)
{
    const __m128i caseBit = _mm_set1_epi8(0x20);
    const __m128i a = _mm_set1_epi8('a');
    const __m128i span = _mm_set1_epi8(25);
    while (r + 16 <= n) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + r));
        const __m128i t = _mm_sub_epi8(_mm_or_si128(v, caseBit), a); // letters: 0…25
        const __m128i letter = _mm_cmpeq_epi8(_mm_min_epu8(t, span), t);
        const unsigned notLetter = ~unsigned(_mm_movemask_epi8(letter)) & 0xFFFFu;
        if (notLetter)
            return r + std::size_t(std::countr_zero(notLetter));
        r += 16;
    }
    return r;
}
#endif

// The end of the piece starting at p (p < n), following the pattern's alternatives in order; 0
// when a byte the state machine does not decide (invalid UTF-8, a code point above U+FFFF) is met.
inline std::size_t fastEnd(const PreTokenizer::Compiled& c, const unsigned char* s, std::size_t n, std::size_t p)
{
    const unsigned char b = s[p];
    if (b == '\'' && p + 1 < n) { // 's 't 'm 'd, 'll 've 're
        const unsigned char d = s[p + 1];
        if (d == 's' || d == 't' || d == 'm' || d == 'd')
            return p + 2;
        if (p + 2 < n) {
            const unsigned char e = s[p + 2];
            if ((d == 'l' && e == 'l') || (d == 'v' && e == 'e') || (d == 'r' && e == 'e'))
                return p + 3;
        }
    }
    std::size_t len = 0;
    unsigned char kind = classAt(c, s, p, n, len);
    if (kind == kUndecided)
        return 0;
    std::size_t r = p + len;
    if (b == ' ' && r < n) { // " ?X+": the space joins a following letter, number or other run
        std::size_t len2 = 0;
        const unsigned char next = classAt(c, s, r, n, len2);
        if (next == kUndecided)
            return 0;
        if (next != kSpace) {
            kind = next;
            r += len2;
        }
    }
    if (kind != kSpace) { // X+ for X = letter, number, other: the longest run of the class
        for (;;) {
#if defined(__SSE2__)
            if (kind == kLetter && c.asciiLettersAreAz)
                r = asciiLetterRun(s, r, n);
#endif
            while (r < n && s[r] < 0x80 && c.ascii[s[r]] == kind)
                ++r;
            if (r >= n || s[r] < 0x80)
                return r;
            const unsigned char k = multiByteClass(c, s, r, n, len);
            if (k == kUndecided)
                return 0;
            if (k != kind)
                return r;
            r += len;
        }
    }
    // \s+(?!\S) | \s+: a white-space run; before a non-space it gives back its last code point
    // (which then prefixes the next piece), unless that would leave it empty.
    std::size_t last = p;
    for (;;) {
        if (r >= n)
            return n;
        const unsigned char k = classAt(c, s, r, n, len);
        if (k == kUndecided)
            return 0;
        if (k != kSpace)
            break;
        last = r;
        r += len;
    }
    return last > p ? last : r;
}

} // namespace

PieceScanner::PieceScanner(const PreTokenizer& pre, std::string_view text, Mode mode)
    : m_compiled(&pre.compiled()),
      m_text(reinterpret_cast<const unsigned char*>(text.data())),
      m_size(text.size()),
      m_regexOnly(mode == Mode::RegexOnly)
{
}

PieceScanner::~PieceScanner() { pcre2_match_data_free(static_cast<pcre2_match_data*>(m_match)); }

bool PieceScanner::fastPiece(Piece& piece)
{
    const std::size_t end = fastEnd(*m_compiled, m_text, m_size, m_pos);
    if (!end)
        return false;
    piece = {m_pos, end};
    return true;
}

void PieceScanner::regexPiece(Piece& piece)
{
    auto* md = static_cast<pcre2_match_data*>(m_match);
    if (!md) {
        md = pcre2_match_data_create_from_pattern(m_compiled->code, nullptr);
        m_match = md;
    }
    const int rc = pcre2_match(m_compiled->code, m_text, m_size, m_pos, 0, md, nullptr);
    if (rc < 0) { // no match: the rest is invalid UTF-8
        piece = {m_pos, m_size};
        return;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    if (ov[0] > m_pos) { // invalid bytes before the match form their own piece
        piece = {m_pos, ov[0]};
        m_pending = true;
        m_pendingPiece = {ov[0], ov[1]};
        return;
    }
    piece = {ov[0], ov[1]};
}

bool PieceScanner::next(Piece& piece)
{
    if (m_pending) {
        m_pending = false;
        piece = m_pendingPiece;
    } else {
        if (m_pos >= m_size)
            return false;
        if (m_regexOnly || !fastPiece(piece))
            regexPiece(piece);
    }
    m_pos = piece.end;
    return true;
}

std::size_t PieceScanner::next(Piece* out, std::size_t max)
{
    std::size_t k = 0;
    while (k < max) {
        if (!m_regexOnly && !m_pending) { // the fast path in a tight loop, state in registers
            const PreTokenizer::Compiled& c = *m_compiled;
            const unsigned char* s = m_text;
            const std::size_t n = m_size;
            std::size_t pos = m_pos;
            while (k < max && pos < n) {
                const std::size_t end = fastEnd(c, s, n, pos);
                if (!end)
                    break;
                out[k++] = {pos, end};
                pos = end;
            }
            m_pos = pos;
            if (k == max)
                break;
        }
        if (!next(out[k])) // a pending piece, the end, or one piece through PCRE2
            break;
        ++k;
    }
    return k;
}

} // namespace detail

// ---------------------------------------------------------------------------------------------
// Cursor

struct PreTokenizer::Cursor::State {
    detail::PieceScanner scanner;
    State(const PreTokenizer& pre, std::string_view text) : scanner(pre, text) {}
};

PreTokenizer::Cursor::Cursor(const PreTokenizer& pre, std::string_view text)
    : m_state(std::make_unique<State>(pre, text))
{
}

PreTokenizer::Cursor::~Cursor() = default;

bool PreTokenizer::Cursor::next(Piece& piece) { return m_state->scanner.next(piece); }

} // namespace tw::text
