// Fuzz target: countText and firstInvalidUtf8 agree on any bytes (no invalid byte iff no error) and
// the counts are consistent with the bytes.

#include "fuzzcheck.h"

#include "text/utf8.h"

#include <algorithm>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace tw;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const text::TextCounts c = text::countText(input);
    const auto error = text::firstInvalidUtf8(input, "fuzz.txt");
    fuzz::check((c.invalidBytes == 0) == !error.has_value(), "countText and firstInvalidUtf8 disagree");
    fuzz::check(c.bytes == size, "byte count differs from the size");
    fuzz::check(c.codePoints <= c.bytes && c.invalidBytes <= c.codePoints, "more code points than bytes");
    fuzz::check(c.words <= c.codePoints, "more words than code points");
    const auto newlines = std::uint64_t(std::count(input.begin(), input.end(), '\n'));
    const auto nuls = std::uint64_t(std::count(input.begin(), input.end(), '\0'));
    fuzz::check(c.nulBytes == nuls, "NUL count differs");
    fuzz::check(c.lines == newlines + (!input.empty() && input.back() != '\n' ? 1 : 0), "line count differs");
    if (error) {
        fuzz::check(error->where.file == "fuzz.txt", "error without the file name");
        fuzz::check(error->where.line >= 1 && std::uint64_t(error->where.line) <= newlines + 1, "error line out of range");
        fuzz::check(error->where.column >= 1, "error column out of range");
        fuzz::check(error->message.starts_with("invalid UTF-8 byte 0x"), "unexpected message", error->message);
        // The text before the first bad line is valid; cutting there must give no error.
        std::size_t lineStart = 0;
        for (int l = 1; l < error->where.line; ++l)
            lineStart = input.find('\n', lineStart) + 1;
        fuzz::check(!text::firstInvalidUtf8(input.substr(0, lineStart), "fuzz.txt"), "an error before the first error");
        fuzz::check(text::countText(input.substr(0, lineStart)).invalidBytes == 0, "invalid bytes before the first error");
    } else {
        // Pure code points: every code point counted is one well-formed sequence.
        std::uint64_t leads = 0;
        for (unsigned char b : input)
            leads += (b & 0xC0) != 0x80;
        fuzz::check(c.codePoints == leads, "code points differ from the lead-byte count of valid UTF-8");
    }
    return 0;
}
