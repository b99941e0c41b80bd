// tokenwire-cli run (issue #40): the whole training run of the scenario's simulated step.

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "network/simulate.h"
#include "scenario/derivationjson.h"
#include "scenario/derive.h"
#include "scenario/run.h"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace tw::cli {

using json = nlohmann::ordered_json;

namespace {

// The batch ramp's phases, one row each (none without a ramp).
void addRampRows(const scenario::RunEstimate& r, std::vector<std::vector<std::string>>& rows)
{
    for (std::size_t i = 0; i < r.phases.size(); ++i) {
        const scenario::PhaseRun& p = r.phases[i];
        const std::string span = (i == 0 ? std::string("0") : formatCount(r.phases[i - 1].untilTokens, 0)) + " to "
                                 + formatCount(p.untilTokens, 0) + " tokens";
        rows.push_back({i + 1 == r.phases.size() ? std::string("  Then") : "  Ramp phase " + std::to_string(i + 1),
                        span + ": G " + formatCount(p.tokensPerStep, 0) + ", T " + formatCount(double(p.sequenceLength), 0)
                            + " on " + formatCount(p.gpus, 0) + " GPUs, " + formatCount(p.steps, 0) + " steps of "
                            + formatSeconds(p.stepSeconds) + " (MFU " + formatCount(100 * p.mfu, 1) + " %)"});
    }
}

} // namespace

int runRun(const RunCommandOptions& o, std::ostream& out, std::ostream& err)
{
    const auto derived = deriveScenarioFor(o.scenario, err);
    if (!derived)
        return kExitInput;
    scenario::Scenario s = derived->scenario;
    const auto& d = derived->derivation;
    if (!d->stage3) {
        for (const Error& e : d->planErrors)
            printError(err, e);
        err << kTool << ": the plan cannot run, so there is no step to repeat (see tokenwire-cli plan)\n";
        return kExitInput;
    }
    if (o.price)
        s.run.pricePerGpuHour = *o.price;
    const auto step = scenario::simulateDerived(s, *d, false);
    if (!step) {
        printError(err, step.error());
        return kExitInput;
    }
    const auto ramp = simulateRampFor(*derived, err);
    if (!ramp)
        return kExitInput;
    const auto run = scenario::estimateRun(s, *d, *step.value().simulation, o.tokens, scenario::UnsetTokens::Refuse, *ramp);
    if (!run) {
        printError(err, run.error());
        return kExitInput;
    }
    const scenario::RunEstimate& r = run.value();
    const scenario::Resilience& x = r.resilience;
    if (o.scenario.json) {
        json figures = json::array();
        for (const Figure& f : r.figures.all())
            figures.push_back(scenario::figureJson(f));
        json curve = json::array();
        for (const scenario::GoodputPoint& p :
             scenario::goodputAgainstClusterSize(s.run, double(s.hardware.gpusPerNode), x.checkpointBytes, r.stepSeconds))
            curve.push_back({{"gpus", p.gpus}, {"mtbf_s", p.at.mtbfSeconds}, {"checkpoint_interval_s", p.at.intervalSeconds},
                             {"goodput", p.at.goodput}});
        json phases = json::array();
        for (const scenario::PhaseRun& p : r.phases)
            phases.push_back({{"until_tokens", p.untilTokens}, {"tokens", p.tokens}, {"tokens_per_step", p.tokensPerStep},
                              {"sequence_length", p.sequenceLength}, {"gpus", p.gpus}, {"steps", p.steps},
                              {"step_time_s", p.stepSeconds}, {"mfu", p.mfu}, {"goodput", p.goodput}});
        const json doc{{"scenario", s.name},
                       {"tokens", r.tokens},
                       {"tokens_per_step", r.tokensPerStep},
                       {"steps", r.steps},
                       {"step_time_s", r.stepSeconds},
                       {"seconds", r.seconds},
                       {"days", r.days},
                       {"gpus", r.gpus},
                       {"gpu_hours", r.gpuHours},
                       {"tokens_per_s_per_gpu", r.tokensPerSecondPerGpu},
                       {"mfu", r.mfu},
                       {"gpu_power_w", r.gpuPowerWatts},
                       {"host_power_w_per_gpu", r.hostPowerWattsPerGpu},
                       {"pue", r.pue},
                       {"interruptions", r.interruptions},
                       {"interruptions_per_day", 24 * x.interruptionsPerHour},
                       {"mtbf_s", x.mtbfSeconds},
                       {"checkpoint_bytes", x.checkpointBytes},
                       {"checkpoint_write_s", x.writeSeconds},
                       {"recovery_s", x.recoverySeconds},
                       {"checkpoint_interval_s", x.intervalSeconds},
                       {"goodput", x.goodput},
                       {"days_with_failures", r.daysWithFailures},
                       {"gpu_hours_with_failures", r.gpuHoursWithFailures},
                       {"energy_kwh", r.energyKwh},
                       {"cost", r.cost ? json(*r.cost) : json(nullptr)},
                       {"batch_ramp", phases},
                       {"goodput_by_cluster_size", curve},
                       {"figures", figures}};
        out << dumpJson(doc) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    out << "Scenario:   " << s.name << '\n';
    out << "Model:      " << d->model.name << " on " << gpuLine(s, *d) << '\n' << '\n';
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Tokens to train", formatCount(r.tokens, 0)});
    rows.push_back({"Tokens per step (G)", formatCount(r.tokensPerStep, 0)});
    rows.push_back({"Optimizer steps", formatCount(r.steps, 0)});
    rows.push_back({"Step time (simulated)", formatSeconds(r.stepSeconds)});
    addRampRows(r, rows);
    rows.push_back({"Training time", formatCount(r.days, 2) + " days (" + formatCount(r.seconds / 3600, 1) + " h)"});
    rows.push_back({"GPU-hours", formatCount(r.gpuHours, 0)});
    rows.push_back({"Tokens per second per GPU", formatCount(r.tokensPerSecondPerGpu, 1)});
    rows.push_back({"MFU", formatCount(100 * r.mfu, 1) + " %" + (r.phases.empty() ? "" : " (over the run's time)")});
    rows.push_back({"Interruptions", formatCount(24 * x.interruptionsPerHour, 2) + " a day, one every "
                                         + formatDuration(x.mtbfSeconds) + "; " + formatCount(r.interruptions, 0)
                                         + " over the run"});
    rows.push_back({"Checkpoint", formatBytes(x.checkpointBytes) + ", written in " + formatSeconds(x.writeSeconds)
                                      + ", every " + formatDuration(x.intervalSeconds) + " ("
                                      + formatCount(x.intervalSeconds / r.stepSeconds, 0) + " steps"
                                      + (s.run.checkpoint.intervalSeconds ? ")" : ", Young/Daly)")});
    rows.push_back({"Recovery", formatDuration(x.recoverySeconds) + " (restart + checkpoint read)"});
    rows.push_back({"Goodput", formatCount(100 * x.goodput, 1) + " % of wall time"});
    rows.push_back({"With failures", formatCount(r.daysWithFailures, 2) + " days, "
                                         + formatCount(r.gpuHoursWithFailures, 0) + " GPU-hours"});
    rows.push_back({"Power per GPU", formatCount(r.gpuPowerWatts, 0) + " W" + (s.run.gpuPowerWatts ? "" : " (datasheet TDP)")
                                         + (r.hostPowerWattsPerGpu > 0 ? " + " + formatCount(r.hostPowerWattsPerGpu, 0)
                                                                              + " W host"
                                                                        : std::string())});
    rows.push_back({"Energy (PUE " + formatCount(r.pue, 2) + ")", r.energyKwh >= 1000 ? formatCount(r.energyKwh / 1000, 1) + " MWh"
                                                                                 : formatCount(r.energyKwh, 1) + " kWh"});
    rows.push_back({"Cost", r.cost ? formatCount(*r.cost, 0) + " (at " + formatCount(s.run.pricePerGpuHour, 2)
                                         + " per GPU-hour)"
                                   : std::string("— (give --price or run.price_per_gpu_hour)")});
    printRows(out, rows);
    out << "\nTraining time and GPU-hours count the steps back to back; \"with failures\" adds checkpoints, lost\n"
           "work and restarts at run.failures' rates (Llama 3's by default). Energy and cost count the time with\n"
           "failures. Formulas: docs/model.md §5.6 and §5.7; every figure with --json.\n";
    return out.good() ? kExitOk : kExitInput;
}

} // namespace tw::cli
