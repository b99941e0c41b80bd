#pragma once
// The nearest valid value of one plan input: when a degree makes the plan impossible (stage 3 says why
// beside it), the value closest to the one typed that makes parallel::validate accept the whole plan,
// every other input as it is. The edit is applied as the stage 3 form applies it
// (scenario::setParallelDegree: when pp or tp changes, DP takes the rest of the GPUs), so the value
// offered is the value that, typed there, gives a plan that runs. Rules: docs/model.md §3.1.

#include "scenario/scenario.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tw::scenario {

// The inputs nearestValidValue knows: parallel.dp, parallel.pp, parallel.tp, parallel.ep,
// parallel.virtual_stages.
[[nodiscard]] const std::vector<std::string_view>& nearestValidPaths();

// The value of the input at `jsonPath` nearest to its current one (ties: the smaller) for which the plan
// validates; the current value when it already does; nullopt when no value of this input alone makes
// the plan valid (another input is wrong too), for a path not in nearestValidPaths(), or when the
// search bound (the larger of twice the value, the GPUs, L, the heads and the experts) holds none.
[[nodiscard]] std::optional<std::uint64_t> nearestValidValue(const Scenario& scenario, std::string_view jsonPath);

// The scenario with the input at `jsonPath` set to `value` as the stage 3 form sets it (see above);
// the scenario as it is for a path not in nearestValidPaths().
[[nodiscard]] Scenario withPlanInput(const Scenario& scenario, std::string_view jsonPath, std::uint64_t value);

} // namespace tw::scenario
