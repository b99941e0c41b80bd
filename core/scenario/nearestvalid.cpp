#include "nearestvalid.h"

#include "parallel/plan.h"

#include <algorithm>

namespace tw::scenario {

namespace {

// Values above this are not searched (a degree beyond any cluster the program simulates).
constexpr std::uint64_t kMaxSearched = 1u << 20;

std::optional<parallel::Strategy> strategyOf(std::string_view path)
{
    if (path == "parallel.dp")
        return parallel::Strategy::DP;
    if (path == "parallel.pp")
        return parallel::Strategy::PP;
    if (path == "parallel.tp")
        return parallel::Strategy::TP;
    if (path == "parallel.ep")
        return parallel::Strategy::EP;
    return std::nullopt;
}

std::uint64_t currentValue(const Scenario& s, std::string_view path)
{
    const parallel::ParallelPlan& p = s.parallel;
    if (path == "parallel.dp")
        return p.dp;
    if (path == "parallel.pp")
        return p.pp;
    if (path == "parallel.tp")
        return p.tp;
    if (path == "parallel.ep")
        return p.ep;
    return p.virtualStages;
}

bool planValid(const Scenario& s)
{
    return parallel::validate(s.parallel, {s.hardware.nodes, s.hardware.gpusPerNode}, s.model, s.batch).empty();
}

} // namespace

const std::vector<std::string_view>& nearestValidPaths()
{
    static const std::vector<std::string_view> paths = {"parallel.dp", "parallel.pp", "parallel.tp", "parallel.ep",
                                                        "parallel.virtual_stages"};
    return paths;
}

Scenario withPlanInput(const Scenario& scenario, std::string_view jsonPath, std::uint64_t value)
{
    Scenario s = scenario;
    if (const auto strategy = strategyOf(jsonPath)) {
        setParallelDegree(s, *strategy, value);
    } else if (jsonPath == "parallel.virtual_stages") {
        s.parallel.virtualStages = value;
        dropStalePlanParts(s);
    }
    return s;
}

std::optional<std::uint64_t> nearestValidValue(const Scenario& scenario, std::string_view jsonPath)
{
    const auto& paths = nearestValidPaths();
    if (std::find(paths.begin(), paths.end(), jsonPath) == paths.end())
        return std::nullopt;
    const std::uint64_t v = currentValue(scenario, jsonPath);
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
