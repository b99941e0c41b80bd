#pragma once
// The paper's own rounded numbers (arXiv 2609.19924's worked examples), shown beside the exact values
// the program computes: "248.9 MB (the paper, Example 5.1: 128M × 2 B ≈ 256 MB)". A rounding applies
// only where the figure is exactly the example's value, so another model or batch never borrows it.

#include <string>

namespace tw {

// The paper's text for figure `id` when `value` is its example's exact value: "Example 5.1: 128M × 2 B
// ≈ 256 MB"; empty otherwise.
[[nodiscard]] std::string paperRounding(const std::string& id, double value);

} // namespace tw
