// tokenwire-cli fit: the plans that fit the scenario's model on its cluster (issue #18).

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "scenario/fitsearch.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

namespace tw::cli {

namespace {

using json = nlohmann::ordered_json;

std::string pad(std::string s, std::size_t width, bool right = false)
{
    while (s.size() < width)
        s = right ? " " + s : s + " ";
    return s;
}

std::string scheduleText(const parallel::ParallelPlan& p)
{
    if (p.pp == 1)
        return "-";
    if (p.schedule == parallel::PipelineSchedule::Interleaved)
        return "interleaved v" + std::to_string(p.virtualStages);
    return std::string(parallel::toString(p.schedule));
}

} // namespace

int runFit(const FitCommandOptions& o, std::ostream& out, std::ostream& err)
{
    const auto loaded = readScenario(o.scenario, err);
    if (!loaded)
        return kExitInput;
    const scenario::Scenario& s = *loaded;
    scenario::FitOptions options;
    options.top = o.top;
    options.simulate = o.simulate;
    auto found = scenario::searchFittingPlans(s, options);
    if (!found) {
        printError(err, inScenarioFile(found.error(), o.scenario));
        return kExitInput;
    }
    const scenario::FitSearch& r = found.value();
    const double capacity = r.fitting.empty() ? 0.0 : r.fitting.front().capacityBytes;
    if (o.scenario.json) {
        json plans = json::array();
        for (const scenario::FitPlan& f : r.plans) {
            const parallel::ParallelPlan& p = f.plan;
            plans.push_back({{"dp", p.dp},
                             {"pp", p.pp},
                             {"tp", p.tp},
                             {"ep", p.ep},
                             {"sharding", std::string(parallel::toString(p.sharding))},
                             {"sequence_parallel", p.sequenceParallel},
                             {"schedule", std::string(parallel::toString(p.schedule))},
                             {"virtual_stages", p.virtualStages},
                             {"micro_batch", f.microBatch},
                             {"accumulation", f.accumulation},
                             {"recompute", std::string(model::toString(f.recompute))},
                             {"simulated", f.simulated},
                             {"step_time_s", f.stepSeconds},
                             {"coarse_step_time_s", f.coarseSeconds},
                             {"mfu", f.simulated ? json(f.mfu) : json(nullptr)},
                             {"exposed_comm_s", f.simulated ? json(f.exposedCommSeconds) : json(nullptr)},
                             {"peak_bytes", f.peakBytes}});
        }
        json errors = json::array();
        for (const Error& e : r.simulationErrors)
            errors.push_back(e.toString());
        const json doc{{"scenario", s.name},         {"gpus", s.hardware.gpuCount()},
                       {"capacity_bytes", capacity}, {"candidates", r.candidates},
                       {"valid", r.valid},           {"fitting", r.fitting.size()},
                       {"truncated", r.truncated},   {"budget_reached", r.budgetReached},
                       {"plans", plans},
                       {"simulation_errors", errors}};
        out << doc.dump(2) << '\n';
        return kExitOk;
    }
    const DisplayUnits& u = o.scenario.units;
    out << "Scenario:   " << s.name << "\n";
    out << "Searched:   " << formatUnsigned(r.candidates) << " layouts" << (r.truncated ? " (stopped at the bound)" : "")
        << ", " << formatUnsigned(r.valid) << " valid, " << formatUnsigned(r.fitting.size()) << " fit in "
        << formatBytes(capacity, u) << " per GPU\n";
    if (r.plans.empty()) {
        out << "\nNo plan fits: every valid layout needs more memory than one GPU has.\n";
        return kExitOk;
    }
    out << "\n" << pad("#", 4) << pad("dp x pp x tp (ep)", 18) << pad("sharding", 9) << pad("SP", 4) << pad("schedule", 16)
        << pad("B", 4, true) << pad("N_acc", 7, true) << "  " << pad("recompute", 10) << pad("step", 10, true)
        << pad("MFU", 8, true) << pad("exposed comm", 14, true) << pad("peak memory", 13, true) << "\n";
    std::size_t rank = 0;
    for (const scenario::FitPlan& f : r.plans) {
        const parallel::ParallelPlan& p = f.plan;
        char mfu[32] = "-";
        if (f.simulated)
            std::snprintf(mfu, sizeof mfu, "%.1f %%", f.mfu * 100);
        const std::string degrees = std::to_string(p.dp) + " x " + std::to_string(p.pp) + " x " + std::to_string(p.tp)
                                    + (p.ep > 1 ? " (" + std::to_string(p.ep) + ")" : "");
        out << pad(std::to_string(++rank), 4) << pad(degrees, 18)
            << pad(std::string(parallel::toString(p.sharding)), 9) << pad(p.sequenceParallel ? "yes" : "no", 4)
            << pad(scheduleText(p), 16) << pad(std::to_string(f.microBatch), 4, true)
            << pad(std::to_string(f.accumulation), 7, true) << "  " << pad(std::string(model::toString(f.recompute)), 10)
            << pad((f.simulated ? "" : "~") + formatSeconds(f.stepSeconds), 10, true) << pad(mfu, 8, true)
            << pad(f.simulated ? formatSeconds(f.exposedCommSeconds) : "-", 14, true)
            << pad(formatBytes(f.peakBytes, u), 13, true) << "\n";
    }
    out << "\nstep: simulated on the scenario's fabric as `simulate` does; ~ = coarse estimate (compute, pipeline\n"
           "bubble, communication at nominal rates without overlap). peak memory: the largest GPU with the reserve and the allocator headroom.\n";
    if (r.budgetReached)
        out << "The 20 s budget for simulations ran out: the plans marked ~ were not simulated.\n";
    for (const Error& e : r.simulationErrors)
        out << "not simulated: " << e.toString() << "\n";
    return kExitOk;
}

} // namespace tw::cli
