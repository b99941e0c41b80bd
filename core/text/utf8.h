#pragma once
// UTF-8 facts about a text: validity (with the line/column of the first bad byte), code points,
// words and lines.

#include "base/error.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace tw::text {

struct TextCounts {
    std::uint64_t bytes = 0;
    std::uint64_t codePoints = 0;     // each invalid byte counts as one
    std::uint64_t invalidBytes = 0;   // bytes that are not part of a well-formed UTF-8 sequence
    std::uint64_t nulBytes = 0;
    std::uint64_t words = 0;          // maximal runs of non-white-space code points (as `wc -w`)
    std::uint64_t lines = 0;          // '\n' count, plus one if the text ends without '\n'
    bool operator==(const TextCounts&) const = default;
};

[[nodiscard]] TextCounts countText(std::string_view text);

// The first invalid UTF-8 sequence, as an Error with line/column (1-based, columns in code points).
[[nodiscard]] std::optional<Error> firstInvalidUtf8(std::string_view text, const std::string& fileName);

} // namespace tw::text
