#include "run.h"

#include "base/units.h"
#include "network/simulate.h"

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

namespace {

std::string N(double v, int decimals = 0) { return formatCount(v, decimals); }

// The "run.*" figures of an estimate.
void addFigures(RunEstimate& r, const Scenario& s, bool tdp)
{
    FigureSet& f = r.figures;
    f.add({"run.tokens", "Tokens to train D", r.tokens, "tokens", "input: D = " + N(r.tokens) + " tokens", {}});
    f.add({"run.steps", "Optimizer steps", r.steps, "",
           "⌈D / G⌉ = ⌈" + N(r.tokens) + " / " + N(r.tokensPerStep) + "⌉ = " + N(r.steps),
           {"run.tokens", "dataset.G"}});
    f.add({"run.seconds", "Training time (steps back to back)", r.seconds, "s",
           "steps · step time = " + N(r.steps) + " · " + formatSeconds(r.stepSeconds) + " = " + formatSeconds(r.seconds),
           {"run.steps", "sim.step_time_s"}});
    f.add({"run.days", "Training time in days", r.days, "days",
           "seconds / 86,400 = " + N(r.seconds) + " / 86,400 = " + N(r.days, 2), {"run.seconds"}});
    f.add({"run.gpu_hours", "GPU-hours", r.gpuHours, "GPU·h",
           "GPUs · seconds / 3,600 = " + N(r.gpus) + " · " + N(r.seconds) + " / 3,600 = " + N(r.gpuHours),
           {"hardware.gpu_count", "run.seconds"}});
    f.add({"run.tokens_per_s_per_gpu", "Tokens per second per GPU", r.tokensPerSecondPerGpu, "tokens/s",
           "G / (step time · GPUs) = " + N(r.tokensPerStep) + " / (" + formatSeconds(r.stepSeconds) + " · " + N(r.gpus)
               + ") = " + N(r.tokensPerSecondPerGpu, 1),
           {"dataset.G", "sim.step_time_s", "hardware.gpu_count"}});
    f.add({"run.gpu_power_w", "Power per GPU", r.gpuPowerWatts, "W",
           tdp ? "auto: the " + s.hardware.gpu + "'s datasheet TDP, " + N(r.gpuPowerWatts) + " W"
               : "input: run.gpu_power_w = " + N(r.gpuPowerWatts) + " W",
           {}});
    f.add({"run.energy_kwh", "Energy of the run (facility)", r.energyKwh, "kWh",
           "GPU-hours · (GPU + host W per GPU) · PUE / 1,000 = " + N(r.gpuHours) + " · (" + N(r.gpuPowerWatts) + " + "
               + N(r.hostPowerWattsPerGpu) + ") · " + N(r.pue, 2) + " / 1,000 = " + N(r.energyKwh),
           {"run.gpu_hours", "run.gpu_power_w"}});
    if (r.cost)
        f.add({"run.cost", "Cost of the run", *r.cost, "",
               "GPU-hours · price per GPU-hour = " + N(r.gpuHours) + " · " + N(s.run.pricePerGpuHour, 2) + " = "
                   + N(*r.cost),
               {"run.gpu_hours"}});
}

} // namespace

Result<RunEstimate> estimateRun(const Scenario& s, const network::StepSimulation& step, std::optional<double> tokens)
{
    RunEstimate r;
    r.tokens = tokens.value_or(s.run.tokens);
    if (!(r.tokens > 0) || !std::isfinite(r.tokens) || r.tokens > kMaxRunTokens)
        return errorAt("run.tokens", "give the tokens to train (run.tokens, or --tokens such as 15.6T): between 1 and "
                                     "10^16, got " + N(r.tokens));
    r.tokensPerStep = double(s.batch.globalBatchTokens);
    if (r.tokens < r.tokensPerStep)
        return errorAt("run.tokens", N(r.tokens) + " tokens are fewer than one optimizer step's G = " + N(r.tokensPerStep));
    const std::optional<double> tdp = gpuTdpWatts(s.hardware.gpu);
    if (!s.run.gpuPowerWatts && !tdp)
        return errorAt("run.gpu_power_w", "no datasheet TDP is known for GPU \"" + s.hardware.gpu
                                              + "\": give run.gpu_power_w (W per GPU)");
    r.steps = std::ceil(r.tokens / r.tokensPerStep);
    r.stepSeconds = step.stepSeconds;
    r.seconds = r.steps * r.stepSeconds;
    r.days = r.seconds / 86400;
    r.gpus = double(s.hardware.gpuCount());
    r.gpuHours = r.gpus * r.seconds / 3600;
    r.tokensPerSecondPerGpu = r.stepSeconds > 0 ? r.tokensPerStep / (r.stepSeconds * r.gpus) : 0;
    r.mfu = step.mfu;
    r.gpuPowerWatts = s.run.gpuPowerWatts.value_or(tdp.value_or(0));
    r.hostPowerWattsPerGpu = s.run.hostPowerWattsPerGpu;
    r.pue = s.run.pue;
    r.energyKwh = r.gpuHours * (r.gpuPowerWatts + r.hostPowerWattsPerGpu) * r.pue / 1000;
    if (s.run.pricePerGpuHour > 0)
        r.cost = r.gpuHours * s.run.pricePerGpuHour;
    addFigures(r, s, !s.run.gpuPowerWatts);
    return r;
}

} // namespace tw::scenario
