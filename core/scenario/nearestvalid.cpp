#include "nearestvalid.h"

#include "parallel/plan.h"

#include <algorithm>

namespace tw::scenario {

namespace {

// Values above this are not searched (a degree beyond any cluster the program simulates).
constexpr std::uint64_t kMaxSearched = 1u << 20;

// The inputs searched: their JSON path, the degree the form sets through setParallelDegree (none: v),
// the plan member that holds them.
struct PlanInput {
    std::string_view path;
    std::optional<parallel::Strategy> strategy;
    std::uint64_t parallel::ParallelPlan::*value;
};
const PlanInput kInputs[] = {
    {"parallel.dp", parallel::Strategy::DP, &parallel::ParallelPlan::dp},
    {"parallel.pp", parallel::Strategy::PP, &parallel::ParallelPlan::pp},
    {"parallel.tp", parallel::Strategy::TP, &parallel::ParallelPlan::tp},
    {"parallel.ep", parallel::Strategy::EP, &parallel::ParallelPlan::ep},
    {"parallel.virtual_stages", std::nullopt, &parallel::ParallelPlan::virtualStages},
};

const PlanInput* inputAt(std::string_view path)
{
    for (const PlanInput& input : kInputs)
        if (input.path == path)
            return &input;
    return nullptr;
}

bool planValid(const Scenario& s)
{
    return parallel::validate(s.parallel, {s.hardware.nodes, s.hardware.gpusPerNode}, s.model, s.batch).empty();
}

} // namespace

const std::vector<std::string_view>& nearestValidPaths()
{
    static const std::vector<std::string_view> paths = [] {
        std::vector<std::string_view> out;
        for (const PlanInput& input : kInputs)
            out.push_back(input.path);
        return out;
    }();
    return paths;
}

Scenario withPlanInput(const Scenario& scenario, std::string_view jsonPath, std::uint64_t value)
{
    Scenario s = scenario;
    const PlanInput* input = inputAt(jsonPath);
    if (input && input->strategy) {
        setParallelDegree(s, *input->strategy, value);
    } else if (input) {
        s.parallel.*input->value = value;
        dropStalePlanParts(s);
    }
    return s;
}

std::optional<std::uint64_t> nearestValidValue(const Scenario& scenario, std::string_view jsonPath)
{
    const PlanInput* input = inputAt(jsonPath);
    if (!input)
        return std::nullopt;
    const std::uint64_t v = scenario.parallel.*input->value;
    const std::uint64_t hi = std::max({std::min<std::uint64_t>(v, kMaxSearched) * 2, scenario.hardware.gpuCount(), std::uint64_t(scenario.model.layers),
                                       std::uint64_t(scenario.model.heads), std::uint64_t(scenario.model.moe.experts),
                                       std::uint64_t(2)});
    auto valid = [&](std::uint64_t c) { return c >= 1 && c <= hi && planValid(withPlanInput(scenario, jsonPath, c)); };
    if (v >= 1 && valid(v))
        return v;
    // Outwards from the value typed, the smaller side first.
    for (std::uint64_t d = 1; d <= hi; ++d) {
        if (v > d && valid(v - d))
            return v - d;
        if (valid(v + d))
            return v + d;
    }
    return std::nullopt;
}

} // namespace tw::scenario
