#pragma once
// Levenshtein distance, for "did you mean …" on misspelled keys, ids and names.

#include <cstddef>
#include <string_view>

namespace tw {

[[nodiscard]] std::size_t editDistance(std::string_view a, std::string_view b);

} // namespace tw
