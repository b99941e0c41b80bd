#pragma once
// The scenarios shipped with the program (resources/presets/*.json, embedded at build time).

#include "base/error.h"
#include "scenario.h"

#include <string>
#include <string_view>
#include <vector>

namespace tw::scenario {

struct PresetInfo {
    std::string name;        // "paper-reference"
    std::string description; // one line: the model, batch, GPUs and why
};

// paper-reference, paper-dp, paper-pp, paper-tp, paper-moe, gpt2-xl, llama2-7b, llama3-70b, gpt3-175b,
// mixtral-8x7b, paper-testbed (in this order).
[[nodiscard]] std::vector<std::string> presetNames();
[[nodiscard]] std::vector<PresetInfo> presetList();
// The preset named name; an unknown name is an Error listing the known ones.
[[nodiscard]] Result<Scenario> preset(std::string_view name);
// The embedded JSON of a preset (empty for an unknown name).
[[nodiscard]] std::string_view presetJson(std::string_view name);

} // namespace tw::scenario
