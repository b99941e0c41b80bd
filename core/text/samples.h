#pragma once
// The texts shipped inside the program (the Canto I excerpts of resources/text), available to core,
// the CLI and the tests without Qt or files on disk.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::text {

struct Sample {
    std::string_view id;    // "inferno-canto1-it"
    std::string_view title; // "Inferno, Canto I, lines 1–21 (Italian)"
    std::string_view text;  // the UTF-8 bytes of the file
};

// Every embedded sample, in a fixed order (Italian first: the paper's text).
[[nodiscard]] const std::vector<Sample>& samples();
[[nodiscard]] std::vector<std::string> sampleIds();
// The sample named id, or nullopt.
[[nodiscard]] std::optional<Sample> findSample(std::string_view id);

} // namespace tw::text
