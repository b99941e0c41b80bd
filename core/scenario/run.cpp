#include "run.h"

#include "base/units.h"
#include "derive.h"
#include "network/simulate.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tw::scenario {

std::optional<double> gpuTdpWatts(std::string_view id)
{
    // NVIDIA V100, A100, H100, H200, L40S and GeForce RTX 4090 datasheets; AMD Instinct MI300X datasheet.
    if (id == "v100-32gb")
        return 300;
    if (id == "a100-40gb" || id == "a100-80gb")
        return 400;
    if (id == "h100-sxm" || id == "h200")
        return 700;
    if (id == "h100-pcie" || id == "l40s")
        return 350;
    if (id == "mi300x")
        return 750;
    if (id == "rtx4090")
        return 450;
    return std::nullopt;
}

double interruptionsPerHour(const FailureRates& r, double gpus, double servers)
{
    return (gpus * (r.gpu + r.gpuMemory + r.network + r.software) + servers * r.host) / 1e6;
}

double youngInterval(double writeSeconds, double mtbfSeconds) { return std::sqrt(2 * writeSeconds * mtbfSeconds); }

double goodputOf(double tau, double delta, double recovery, double mtbf)
{
    if (!(tau > 0) || !(mtbf > 0))
        return 0;
    // expm1 keeps the digits when τ + δ ≪ M (the usual case: minutes against hours).
    const double wallPerWork = mtbf * std::exp(recovery / mtbf) * std::expm1((tau + delta) / mtbf) / tau;
    return std::isfinite(wallPerWork) && wallPerWork > 0 ? 1 / wallPerWork : 0;
}

Resilience resilienceOf(const RunSettings& run, double gpus, double gpusPerNode, double checkpointBytes,
                        double stepSeconds)
{
    Resilience r;
    r.gpus = gpus;
    r.servers = std::ceil(gpus / std::max(1.0, gpusPerNode));
    r.interruptionsPerHour = interruptionsPerHour(run.failures, r.gpus, r.servers);
    r.mtbfSeconds = r.interruptionsPerHour > 0 ? 3600 / r.interruptionsPerHour : 0;
    r.checkpointBytes = checkpointBytes;
    r.writeSeconds = checkpointBytes / (run.checkpoint.storageGBpsPerGpu * 1e9 * gpus);
    r.recoverySeconds = run.checkpoint.restartSeconds + r.writeSeconds;
    r.youngSeconds = youngInterval(r.writeSeconds, r.mtbfSeconds);
    const double wanted = run.checkpoint.intervalSeconds.value_or(r.youngSeconds);
    r.intervalSeconds = stepSeconds > 0 ? std::max(1.0, std::round(wanted / stepSeconds)) * stepSeconds : wanted;
    r.goodput = goodputOf(r.intervalSeconds, r.writeSeconds, r.recoverySeconds, r.mtbfSeconds);
    return r;
}

std::vector<GoodputPoint> goodputAgainstClusterSize(const RunSettings& run, double gpusPerNode, double checkpointBytes,
                                                    double stepSeconds, double fromGpus, double toGpus)
{
    std::vector<GoodputPoint> points;
    if (!(fromGpus >= 1) || !(toGpus >= fromGpus))
        return points;
    const int last = int(std::ceil(8 * std::log10(toGpus / fromGpus) - 1e-9));
    for (int k = 0; k <= last && k <= 80; ++k) {
        const double gpus = std::min(toGpus, std::round(fromGpus * std::pow(10.0, k / 8.0)));
        points.push_back({gpus, resilienceOf(run, gpus, gpusPerNode, checkpointBytes, stepSeconds)});
    }
    return points;
}

Result<Scenario> phaseScenario(const Scenario& scenario, std::size_t i)
{
    Scenario s = scenario;
    const BatchPhase& p = scenario.run.batchRamp.at(i);
    s.batch.globalBatchTokens = p.globalBatchTokens;
    if (p.sequenceLength != 0)
        s.batch.sequenceLength = p.sequenceLength;
    s.run.batchRamp.clear();
    if (p.dp != 0 && p.dp != s.parallel.dp) {
        const std::string at = "run.batch_ramp[" + std::to_string(i) + "].dp";
        if (!s.parallel.assignment.empty())
            return errorAt(at, "the plan places every GPU itself (parallel.assignment): a phase cannot change its dp");
        const std::uint64_t gpus = p.dp * s.parallel.pp * s.parallel.tp;
        const std::uint64_t perNode = std::max<std::uint64_t>(1, s.hardware.gpusPerNode);
        if (gpus % perNode != 0)
            return errorAt(at, "dp · pp · tp = " + formatCount(double(p.dp)) + " · " + formatCount(double(s.parallel.pp)) + " · "
                                   + formatCount(double(s.parallel.tp)) + " = " + formatCount(double(gpus))
                                   + " GPUs are not whole servers of " + formatCount(double(perNode)));
        s.parallel.dp = p.dp;
        s.hardware.nodes = gpus / perNode;
    }
    return s;
}

Result<std::vector<PhaseStep>> simulateRamp(const Scenario& scenario, Deriver* deriver, const Progress& progress)
{
    Deriver own;
    Deriver& d = deriver ? *deriver : own;
    std::vector<PhaseStep> out;
    const std::size_t n = scenario.run.batchRamp.size();
    for (std::size_t i = 0; i < n; ++i) {
        const std::string at = "run.batch_ramp[" + std::to_string(i) + "]";
        const auto phase = phaseScenario(scenario, i);
        if (!phase)
            return phase.error();
        const Scenario& s = phase.value();
        const std::string shape = "phase " + std::to_string(i + 1) + " (G = " + formatCount(double(s.batch.globalBatchTokens))
                                  + " tokens, T = " + formatCount(double(s.batch.sequenceLength)) + ", dp = "
                                  + formatCount(double(s.parallel.dp)) + ")";
        const Progress part = subProgress(progress, double(i) / double(n), double(i + 1) / double(n));
        auto derived = d.derive(s, subProgress(part, 0, 0.2));
        if (!derived)
            return errorAt(at, shape + " cannot be derived: " + derived.error().message);
        const Derivation& dv = *derived.value();
        if (!dv.stage3) {
            std::string why;
            for (const Error& e : dv.planErrors)
                why += (why.empty() ? "" : "; ") + e.message;
            return errorAt(at, "the plan cannot run " + shape + ": " + why);
        }
        auto step = simulateDerived(s, dv, false, subProgress(part, 0.2, 1));
        if (!step)
            return errorAt(at, "the step of " + shape + " was not simulated: " + step.error().message);
        out.push_back({scenario.run.batchRamp[i], s.batch.sequenceLength, double(s.hardware.gpuCount()),
                       step.value().simulation->stepSeconds, step.value().simulation->mfu});
    }
    progress(1.0);
    return out;
}

namespace {

std::string N(double v, int decimals = 0) { return formatCount(v, decimals); }

// The failure figures of an estimate (§5.7).
void addFailureFigures(RunEstimate& r, const Scenario& s)
{
    FigureSet& f = r.figures;
    const Resilience& x = r.resilience;
    const FailureRates& q = s.run.failures;
    const CheckpointSettings& c = s.run.checkpoint;
    f.add({"run.interruptions_per_day", "Interruptions per day", 24 * x.interruptionsPerHour, "per day",
           "24 · (GPUs · (GPU + GPU memory + network + software) + servers · host) / 10^6 = 24 · (" + N(x.gpus) + " · ("
               + N(q.gpu, 2) + " + " + N(q.gpuMemory, 2) + " + " + N(q.network, 2) + " + " + N(q.software, 2) + ") + "
               + N(x.servers) + " · " + N(q.host, 1) + ") / 10^6 = " + N(24 * x.interruptionsPerHour, 2)
               + " (rates per 10^6 hours: run.failures, Llama 3's by default)",
           {"hardware.gpu_count"}});
    f.add({"run.mtbf_s", "Mean time between interruptions M", x.mtbfSeconds, "s",
           "86,400 / interruptions per day = " + N(x.mtbfSeconds) + " s (" + formatDuration(x.mtbfSeconds) + ")",
           {"run.interruptions_per_day"}});
    f.add({"run.checkpoint_bytes", "Checkpoint (weights + optimizer state)", x.checkpointBytes, "B",
           "weights + optimizer state of the whole model = " + formatBytes(x.checkpointBytes),
           {"memory.weights_bytes", "memory.optimizer_bytes"}});
    f.add({"run.checkpoint_write_s", "Checkpoint write δ", x.writeSeconds, "s",
           "checkpoint / (storage per GPU · GPUs) = " + formatBytes(x.checkpointBytes) + " / (" + N(c.storageGBpsPerGpu, 3)
               + " GB/s · " + N(x.gpus) + ") = " + formatSeconds(x.writeSeconds),
           {"run.checkpoint_bytes", "hardware.gpu_count"}});
    f.add({"run.recovery_s", "Recovery R (restart + read)", x.recoverySeconds, "s",
           "restart + checkpoint read = " + formatDuration(c.restartSeconds) + " + " + formatSeconds(x.writeSeconds) + " = "
               + formatDuration(x.recoverySeconds),
           {"run.checkpoint_write_s"}});
    const std::string interval =
        c.intervalSeconds ? "input: run.checkpoint.interval_s = " + formatDuration(*c.intervalSeconds)
                          : "Young/Daly √(2 δ M) = √(2 · " + formatSeconds(x.writeSeconds) + " · " + N(x.mtbfSeconds)
                                + " s) = " + formatDuration(x.youngSeconds);
    f.add({"run.checkpoint_interval_s", "Checkpoint interval τ", x.intervalSeconds, "s",
           interval + ", in whole steps of " + formatSeconds(r.stepSeconds) + ": " + N(x.intervalSeconds / r.stepSeconds)
               + " steps = " + formatDuration(x.intervalSeconds),
           {"run.checkpoint_write_s", "run.mtbf_s", "sim.step_time_s"}});
    f.add({"run.goodput", "Goodput (useful share of wall time)", x.goodput, "",
           "τ / (M · e^{R/M} · (e^{(τ+δ)/M} − 1)) (Daly 2006) = " + N(100 * x.goodput, 1) + " % (≈ 1 − δ/τ − τ/2M − R/M = "
               + N(100 * (1 - x.writeSeconds / x.intervalSeconds - x.intervalSeconds / (2 * x.mtbfSeconds)
                          - x.recoverySeconds / x.mtbfSeconds),
                   1)
               + " %)",
           {"run.checkpoint_interval_s", "run.checkpoint_write_s", "run.recovery_s", "run.mtbf_s"}});
    if (r.phases.empty()) {
        f.add({"run.days_with_failures", "Training time with failures", r.daysWithFailures, "days",
               "days / goodput = " + N(r.days, 2) + " / " + N(x.goodput, 4) + " = " + N(r.daysWithFailures, 2),
               {"run.days", "run.goodput"}});
        f.add({"run.gpu_hours_with_failures", "GPU-hours with failures", r.gpuHoursWithFailures, "GPU·h",
               "GPU-hours / goodput = " + N(r.gpuHours) + " / " + N(x.goodput, 4) + " = " + N(r.gpuHoursWithFailures),
               {"run.gpu_hours", "run.goodput"}});
        f.add({"run.interruptions", "Interruptions over the run", r.interruptions, "",
               "days with failures · interruptions per day = " + N(r.daysWithFailures, 2) + " · "
                   + N(24 * x.interruptionsPerHour, 2) + " = " + N(r.interruptions, 1),
               {"run.days_with_failures", "run.interruptions_per_day"}});
        return;
    }
    // A ramp: each phase fails at its own cluster's rate and checkpoints at its own Young/Daly interval.
    std::string days, gpuHours;
    for (std::size_t i = 0; i < r.phases.size(); ++i) {
        const PhaseRun& p = r.phases[i];
        const double phaseDays = p.steps * p.stepSeconds / 86400;
        days += (i ? " + " : "") + N(phaseDays, 2) + " / " + N(p.goodput, 4);
        gpuHours += (i ? " + " : "") + N(p.gpus) + " · " + N(phaseDays * 24, 1) + " h / " + N(p.goodput, 4);
    }
    f.add({"run.days_with_failures", "Training time with failures", r.daysWithFailures, "days",
           "Σ each phase's days / its goodput (Daly on the phase's GPUs; the last is run.goodput) = " + days + " = "
               + N(r.daysWithFailures, 2),
           {"run.days", "run.goodput"}});
    f.add({"run.gpu_hours_with_failures", "GPU-hours with failures", r.gpuHoursWithFailures, "GPU·h",
           "Σ GPUs · hours / goodput of each phase = " + gpuHours + " = " + N(r.gpuHoursWithFailures),
           {"run.gpu_hours", "run.days_with_failures"}});
    f.add({"run.interruptions", "Interruptions over the run", r.interruptions, "",
           "Σ each phase's days with failures · its interruptions per day (" + N(24 * x.interruptionsPerHour, 2)
               + " on the whole cluster) = " + N(r.interruptions, 1),
           {"run.days_with_failures", "run.interruptions_per_day"}});
}

// run.steps and run.seconds of a run with a batch ramp, through each phase's own figures
// "run.phase<i>.steps" and "run.phase<i>.step_time_s" (i from 1; the last phase is the scenario's batch,
// whose step is sim.step_time_s).
void addPhaseFigures(RunEstimate& r)
{
    FigureSet& f = r.figures;
    std::string stepSum, secondSum;
    std::vector<std::string> stepInputs{"run.tokens", "dataset.G"}, secondInputs{"run.steps", "sim.step_time_s"};
    for (std::size_t i = 0; i < r.phases.size(); ++i) {
        const PhaseRun& p = r.phases[i];
        const bool own = i + 1 == r.phases.size(); // the scenario's batch, to D
        const std::string before = i == 0 ? std::string("0") : N(r.phases[i - 1].untilTokens);
        const std::string tokens = own ? "(D − " + before + ")" : "(min(" + N(p.untilTokens) + ", D) − " + before + ")";
        stepSum += (i ? " + " : "") + ("⌈" + N(p.tokens) + " / " + N(p.tokensPerStep) + "⌉");
        secondSum += (i ? " + " : "") + (N(p.steps) + " · " + formatSeconds(p.stepSeconds));
        if (own)
            break;
        const std::string id = "run.phase" + std::to_string(i + 1);
        f.add({id + ".step_time_s", "Step time of ramp phase " + std::to_string(i + 1), p.stepSeconds, "s",
               "simulated: the scenario's step at run.batch_ramp[" + std::to_string(i) + "]'s G = " + N(p.tokensPerStep)
                   + " tokens in sequences of T = " + N(double(p.sequenceLength)) + " (" + N(p.tokensPerStep / double(p.sequenceLength))
                   + " sequences) on " + N(p.gpus) + " GPUs = " + formatSeconds(p.stepSeconds) + ", MFU " + N(100 * p.mfu, 1)
                   + " %",
               {}});
        f.add({id + ".steps", "Steps of ramp phase " + std::to_string(i + 1), p.steps, "",
               "⌈" + tokens + " / G_" + std::to_string(i + 1) + "⌉ = ⌈" + N(p.tokens) + " / " + N(p.tokensPerStep) + "⌉ = " + N(p.steps),
               {"run.tokens"}});
        stepInputs.push_back(id + ".steps");
        secondInputs.push_back(id + ".step_time_s");
    }
    f.add({"run.steps", "Optimizer steps", r.steps, "",
           "the ramp's phases, then ⌈(D − " + N(r.phases[r.phases.size() - 2].untilTokens)
               + ") / G⌉ at the batch's G: " + stepSum + " = " + N(r.steps),
           stepInputs});
    f.add({"run.seconds", "Training time (steps back to back)", r.seconds, "s",
           "Σ steps · step time of each phase = " + secondSum + " = " + formatSeconds(r.seconds), secondInputs});
}

// The "run.*" figures of an estimate.
void addFigures(RunEstimate& r, const Scenario& s, bool tdp)
{
    FigureSet& f = r.figures;
    if (r.chinchilla)
        f.add({"run.tokens", "Tokens to train D", r.tokens, "tokens",
               "no run.tokens given: 20 · P = 20 · " + N(r.tokens / 20) + " = " + N(r.tokens)
                   + " tokens, Chinchilla's compute-optimal 20 tokens per parameter (Hoffmann et al. 2022, arXiv 2203.15556)",
               {"model.parameters"}});
    else
        f.add({"run.tokens", "Tokens to train D", r.tokens, "tokens", "input: D = " + N(r.tokens) + " tokens", {}});
    if (r.phases.empty()) {
        f.add({"run.steps", "Optimizer steps", r.steps, "",
               "⌈D / G⌉ = ⌈" + N(r.tokens) + " / " + N(r.tokensPerStep) + "⌉ = " + N(r.steps),
               {"run.tokens", "dataset.G"}});
        f.add({"run.seconds", "Training time (steps back to back)", r.seconds, "s",
               "steps · step time = " + N(r.steps) + " · " + formatSeconds(r.stepSeconds) + " = " + formatSeconds(r.seconds),
               {"run.steps", "sim.step_time_s"}});
    } else {
        addPhaseFigures(r);
    }
    f.add({"run.days", "Training time in days", r.days, "days",
           "seconds / 86,400 = " + N(r.seconds) + " / 86,400 = " + N(r.days, 2), {"run.seconds"}});
    if (r.phases.empty()) {
        f.add({"run.gpu_hours", "GPU-hours", r.gpuHours, "GPU·h",
               "GPUs · seconds / 3,600 = " + N(r.gpus) + " · " + N(r.seconds) + " / 3,600 = " + N(r.gpuHours),
               {"hardware.gpu_count", "run.seconds"}});
    } else {
        std::string sum;
        for (std::size_t i = 0; i < r.phases.size(); ++i)
            sum += (i ? " + " : "") + N(r.phases[i].gpus) + " · " + N(r.phases[i].steps * r.phases[i].stepSeconds);
        f.add({"run.gpu_hours", "GPU-hours", r.gpuHours, "GPU·h",
               "Σ GPUs · seconds of each phase / 3,600 = (" + sum + ") / 3,600 = " + N(r.gpuHours),
               {"hardware.gpu_count", "run.seconds"}});
    }
    if (r.phases.empty())
        f.add({"run.tokens_per_s_per_gpu", "Tokens per second per GPU", r.tokensPerSecondPerGpu, "tokens/s",
               "G / (step time · GPUs) = " + N(r.tokensPerStep) + " / (" + formatSeconds(r.stepSeconds) + " · " + N(r.gpus)
                   + ") = " + N(r.tokensPerSecondPerGpu, 1),
               {"dataset.G", "sim.step_time_s", "hardware.gpu_count"}});
    else
        f.add({"run.tokens_per_s_per_gpu", "Tokens per second per GPU", r.tokensPerSecondPerGpu, "tokens/s",
               "D / (GPU-hours · 3,600) = " + N(r.tokens) + " / (" + N(r.gpuHours) + " · 3,600) = "
                   + N(r.tokensPerSecondPerGpu, 1) + ", the ramp's phases included",
               {"run.tokens", "run.gpu_hours"}});
    f.add({"run.gpu_power_w", "Power per GPU", r.gpuPowerWatts, "W",
           tdp ? "auto: the " + s.hardware.gpu + "'s datasheet TDP, " + N(r.gpuPowerWatts) + " W"
               : "input: run.gpu_power_w = " + N(r.gpuPowerWatts) + " W",
           {}});
    addFailureFigures(r, s);
    f.add({"run.energy_kwh", "Energy of the run (facility)", r.energyKwh, "kWh",
           "GPU-hours with failures · (GPU + host W per GPU) · PUE / 1,000 = " + N(r.gpuHoursWithFailures) + " · ("
               + N(r.gpuPowerWatts) + " + " + N(r.hostPowerWattsPerGpu) + ") · " + N(r.pue, 2) + " / 1,000 = "
               + N(r.energyKwh),
           {"run.gpu_hours_with_failures", "run.gpu_power_w"}});
    if (r.cost)
        f.add({"run.cost", "Cost of the run", *r.cost, "",
               "GPU-hours with failures · price per GPU-hour = " + N(r.gpuHoursWithFailures) + " · "
                   + N(s.run.pricePerGpuHour, 2) + " = " + N(*r.cost),
               {"run.gpu_hours_with_failures"}});
}

// The run's steps, seconds and MFU: ⌈D / G⌉ steps of the simulated step, or each phase of the batch ramp
// on its own step and then the scenario's batch to D (§5.6). An error when the ramp's steps do not match
// its phases.
std::optional<Error> countSteps(RunEstimate& r, const Scenario& s, const network::StepSimulation& step,
                                const std::vector<PhaseStep>& ramp)
{
    r.stepSeconds = step.stepSeconds;
    r.mfu = step.mfu;
    if (s.run.batchRamp.empty()) {
        r.steps = std::ceil(r.tokens / r.tokensPerStep);
        r.seconds = r.steps * r.stepSeconds;
        return std::nullopt;
    }
    bool simulated = ramp.size() == s.run.batchRamp.size();
    for (std::size_t i = 0; simulated && i < ramp.size(); ++i)
        simulated = ramp[i].phase == s.run.batchRamp[i];
    if (!simulated)
        return errorAt("run.batch_ramp", "the steps of the batch ramp's phases have not been simulated for it");
    double before = 0;
    for (const PhaseStep& p : ramp) {
        const double tokens = std::max(0.0, std::min(p.phase.untilTokens, r.tokens) - before);
        const double g = double(p.phase.globalBatchTokens);
        r.phases.push_back({p.phase.untilTokens, tokens, g, p.sequenceLength, p.gpus, std::ceil(tokens / g), p.stepSeconds,
                            p.mfu});
        before = p.phase.untilTokens;
    }
    const double rest = std::max(0.0, r.tokens - before);
    r.phases.push_back({r.tokens, rest, r.tokensPerStep, s.batch.sequenceLength, double(s.hardware.gpuCount()),
                        std::ceil(rest / r.tokensPerStep), step.stepSeconds, step.mfu});
    double steps = 0, seconds = 0, busy = 0; // busy: Σ seconds · MFU
    for (const PhaseRun& p : r.phases) {
        steps += p.steps;
        seconds += p.steps * p.stepSeconds;
        busy += p.steps * p.stepSeconds * p.mfu;
    }
    r.steps = steps;
    r.seconds = seconds;
    r.mfu = seconds > 0 ? busy / seconds : 0;
    return std::nullopt;
}

// The time, GPU-hours and interruptions with failures: the run's goodput on its cluster, or with a ramp
// each phase's on the phase's cluster (its interruption rate and Young/Daly interval, the same
// checkpoint and storage per GPU).
void addFailures(RunEstimate& r, const Scenario& s, double checkpointBytes)
{
    const double perNode = double(s.hardware.gpusPerNode);
    if (r.phases.empty()) {
        const double goodput = r.resilience.goodput;
        r.secondsWithFailures = r.seconds / goodput;
        r.gpuHoursWithFailures = r.gpuHours / goodput;
        r.interruptions = r.secondsWithFailures / 3600 * r.resilience.interruptionsPerHour;
    } else {
        r.secondsWithFailures = r.gpuHoursWithFailures = r.interruptions = 0;
        for (PhaseRun& p : r.phases) {
            const Resilience x = resilienceOf(s.run, p.gpus, perNode, checkpointBytes, p.stepSeconds);
            p.goodput = x.goodput > 1e-9 ? x.goodput : r.resilience.goodput;
            const double wall = p.steps * p.stepSeconds / p.goodput;
            r.secondsWithFailures += wall;
            r.gpuHoursWithFailures += p.gpus * wall / 3600;
            r.interruptions += wall / 3600 * x.interruptionsPerHour;
        }
    }
    r.daysWithFailures = r.secondsWithFailures / 86400;
}

} // namespace

Result<RunEstimate> estimateRun(const Scenario& s, const Derivation& d, const network::StepSimulation& step,
                                std::optional<double> tokens, UnsetTokens unset, const std::vector<PhaseStep>& ramp)
{
    RunEstimate r;
    r.tokens = tokens.value_or(s.run.tokens);
    const double parameters = d.figures.valueOf("model.parameters");
    if (r.tokens == 0 && unset == UnsetTokens::Chinchilla && parameters > 0) {
        r.tokens = 20 * parameters;
        r.chinchilla = true;
    }
    if (!(r.tokens > 0) || !std::isfinite(r.tokens) || r.tokens > kMaxRunTokens)
        return errorAt("run.tokens", "give the tokens to train (run.tokens, or --tokens such as 15.6T): between 1 and "
                                     "10^16, got " + N(r.tokens));
    r.tokensPerStep = double(s.batch.globalBatchTokens);
    const double firstStep = s.run.batchRamp.empty() ? r.tokensPerStep : double(s.run.batchRamp.front().globalBatchTokens);
    if (r.tokens < firstStep)
        return errorAt("run.tokens", N(r.tokens) + " tokens are fewer than one optimizer step's G = " + N(firstStep));
    const std::optional<double> tdp = gpuTdpWatts(s.hardware.gpu);
    if (!s.run.gpuPowerWatts && !tdp)
        return errorAt("run.gpu_power_w", "no datasheet TDP is known for GPU \"" + s.hardware.gpu
                                              + "\": give run.gpu_power_w (W per GPU)");
    if (auto e = countSteps(r, s, step, ramp))
        return *e;
    r.days = r.seconds / 86400;
    r.gpus = double(s.hardware.gpuCount());
    r.gpuHours = r.gpus * r.seconds / 3600;
    if (r.phases.empty()) {
        r.tokensPerSecondPerGpu = r.stepSeconds > 0 ? r.tokensPerStep / (r.stepSeconds * r.gpus) : 0;
    } else {
        r.gpuHours = 0;
        for (const PhaseRun& p : r.phases)
            r.gpuHours += p.gpus * p.steps * p.stepSeconds / 3600;
        r.tokensPerSecondPerGpu = r.gpuHours > 0 ? r.tokens / (r.gpuHours * 3600) : 0;
    }
    r.gpuPowerWatts = s.run.gpuPowerWatts.value_or(tdp.value_or(0));
    r.hostPowerWattsPerGpu = s.run.hostPowerWattsPerGpu;
    r.pue = s.run.pue;
    const double checkpoint = d.figures.valueOf("memory.weights_bytes") + d.figures.valueOf("memory.optimizer_bytes");
    r.resilience = resilienceOf(s.run, r.gpus, double(s.hardware.gpusPerNode), std::isfinite(checkpoint) ? checkpoint : 0,
                                r.stepSeconds);
    const double goodput = r.resilience.goodput;
    if (!(goodput > 1e-9))
        return errorAt("run.failures", "the run cannot progress: an interruption every " + formatSeconds(r.resilience.mtbfSeconds)
                                           + " against a recovery of " + formatSeconds(r.resilience.recoverySeconds)
                                           + " (lower the failure rates or the restart time)");
    addFailures(r, s, std::isfinite(checkpoint) ? checkpoint : 0);
    r.energyKwh = r.gpuHoursWithFailures * (r.gpuPowerWatts + r.hostPowerWattsPerGpu) * r.pue / 1000;
    if (s.run.pricePerGpuHour > 0)
        r.cost = r.gpuHoursWithFailures * s.run.pricePerGpuHour;
    addFigures(r, s, !s.run.gpuPowerWatts);
    return r;
}

} // namespace tw::scenario
