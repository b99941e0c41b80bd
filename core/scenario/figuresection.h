#pragma once
// Where each figure's formula is explained: the section of docs/model.md for a figure id, from its id's
// prefix through one table (figuresection.cpp; the longest matching prefix wins). The figure tables'
// tooltips and derivation chains link there (Help → "How the numbers are computed" at that section).

#include <string_view>
#include <utility>
#include <vector>

namespace tw::scenario {

// "§2.4" for "compute.flops_per_step"; empty for an id no entry covers.
[[nodiscard]] std::string_view modelSectionOf(std::string_view figureId);

// The table: (id prefix, section), for tests that check every section exists in docs/model.md.
[[nodiscard]] const std::vector<std::pair<std::string_view, std::string_view>>& modelSectionTable();

} // namespace tw::scenario
