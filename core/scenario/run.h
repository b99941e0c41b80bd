#pragma once
// A whole training run from one simulated step (issue #40, docs/model.md §5.6): D tokens at G tokens
// per optimizer step take ⌈D / G⌉ steps; wall-clock time, GPU-hours, tokens per second per GPU, and the
// energy and cost they imply. Energy counts each GPU at its power (by default its datasheet TDP, as
// Meta's model cards count their GPU-hours: Llama 2, arXiv 2307.09288 §2.2.1; Llama 3.1's card), plus
// the rest of the server per GPU if given, times the facility's PUE. No failures yet: the run is the
// steps back to back.

#include "base/error.h"
#include "base/figure.h"
#include "scenario.h"

#include <optional>
#include <string_view>

namespace tw::network {
struct StepSimulation;
}

namespace tw::scenario {

// A catalog GPU's board power (TDP) in W, from its datasheet: V100 SXM2 300, A100 SXM 400, H100 SXM 700,
// H100 PCIe 350, H200 SXM 700, MI300X 750, L40S 350, RTX 4090 450. Nullopt for other ids (custom).
[[nodiscard]] std::optional<double> gpuTdpWatts(std::string_view gpuId);

struct RunEstimate {
    double tokens = 0, tokensPerStep = 0;
    double steps = 0;                // ⌈D / G⌉
    double stepSeconds = 0, seconds = 0, days = 0;
    double gpus = 0, gpuHours = 0;
    double tokensPerSecondPerGpu = 0;
    double mfu = 0;
    double gpuPowerWatts = 0, hostPowerWattsPerGpu = 0, pue = 1;
    double energyKwh = 0;            // the facility's: GPU-hours · (GPU + host W) · PUE / 1000
    std::optional<double> cost;      // GPU-hours · price, when a price is given
    FigureSet figures;               // "run.*", their inputs "sim.step_time_s", "dataset.G", "hardware.gpu_count"
};

// The run of `scenario` (its run settings, D = `tokens` when given, else run.tokens) on the simulated
// step. Errors, each at its scenario path: no tokens (run.tokens), fewer tokens than one step, a custom
// GPU without run.gpu_power_w.
[[nodiscard]] Result<RunEstimate> estimateRun(const Scenario& scenario, const network::StepSimulation& step,
                                              std::optional<double> tokens = std::nullopt);

} // namespace tw::scenario
