#pragma once
// A whole training run from one simulated step (issue #40, docs/model.md §5.6): D tokens at G tokens
// per optimizer step take ⌈D / G⌉ steps; wall-clock time, GPU-hours, tokens per second per GPU, and the
// energy and cost they imply. Energy counts each GPU at its power (by default its datasheet TDP, as
// Meta's model cards count their GPU-hours: Llama 2, arXiv 2307.09288 §2.2.1; Llama 3.1's card), plus
// the rest of the server per GPU if given, times the facility's PUE.
// Failures (§5.7): interruptions at the scenario's per-part rates scaled with the cluster, checkpoints of
// the model's weights and optimizer state written every Young/Daly interval, and each interruption's
// lost work, restart and checkpoint read give the goodput (Daly 2006) and the run's days with failures;
// energy and cost count those days (the GPUs are held and powered through every restart).

#include "base/error.h"
#include "base/figure.h"
#include "scenario.h"

#include <optional>
#include <string_view>
#include <vector>

namespace tw::network {
struct StepSimulation;
}

namespace tw::scenario {

struct Derivation;

// A catalog GPU's board power (TDP) in W, from its datasheet: V100 SXM2 300, A100 SXM 400, H100 SXM 700,
// H100 PCIe 350, H200 SXM 700, MI300X 750, L40S 350, RTX 4090 450. Nullopt for other ids (custom).
[[nodiscard]] std::optional<double> gpuTdpWatts(std::string_view gpuId);

// The job's interruptions and checkpoints on a cluster of `gpus` GPUs in `servers` servers.
struct Resilience {
    double gpus = 0, servers = 0;
    double interruptionsPerHour = 0; // Σ rate · parts / 10^6
    double mtbfSeconds = 0;          // M = 3,600 / interruptions per hour
    double checkpointBytes = 0;
    double writeSeconds = 0;         // δ = checkpoint / (storage per GPU · GPUs)
    double recoverySeconds = 0;      // R = restart + the checkpoint read back (as fast as it is written)
    double youngSeconds = 0;         // √(2 δ M)
    double intervalSeconds = 0;      // τ: the given interval or Young's, in whole steps
    double goodput = 0;              // τ / (M · e^{R/M} · (e^{(τ+δ)/M} − 1)), Daly 2006
};

// Interruptions per hour of `gpus` GPUs in `servers` servers at `rates`.
[[nodiscard]] double interruptionsPerHour(const FailureRates& rates, double gpus, double servers);
// Young's first-order optimal checkpoint interval √(2 δ M) (Young 1974, CACM 17(9); Daly 2006's to first order).
[[nodiscard]] double youngInterval(double writeSeconds, double mtbfSeconds);
// The fraction of wall time that advances the run: work τ per segment, a checkpoint write δ after each,
// failures at rate 1/M (exponential), each costing the recovery R plus the segment's work so far: Daly's
// expected wall time T_w = M e^{R/M} (e^{(τ+δ)/M} − 1) T_s / τ (Daly 2006, FGCS 22(3)), goodput = T_s / T_w.
[[nodiscard]] double goodputOf(double intervalSeconds, double writeSeconds, double recoverySeconds, double mtbfSeconds);
// The resilience of the scenario's checkpoint settings on a cluster of `gpus` GPUs (`gpusPerNode` each
// server), a checkpoint of `checkpointBytes`, steps of `stepSeconds` (the interval rounds to whole steps,
// at least one).
[[nodiscard]] Resilience resilienceOf(const RunSettings& run, double gpus, double gpusPerNode, double checkpointBytes,
                                      double stepSeconds);

// One point of the goodput-against-cluster-size chart.
struct GoodputPoint {
    double gpus = 0;
    Resilience at;
};
// Goodput of the scenario's model, checkpoints and failure rates from `fromGpus` to `toGpus` (by default
// 1,000 to 100,000: 17 points, 8 a decade, from the lower end), each at its own Young/Daly interval (or
// the given one), storage per GPU held.
[[nodiscard]] std::vector<GoodputPoint> goodputAgainstClusterSize(const RunSettings& run, double gpusPerNode,
                                                                  double checkpointBytes, double stepSeconds,
                                                                  double fromGpus = 1000, double toGpus = 100000);

struct RunEstimate {
    double tokens = 0, tokensPerStep = 0;
    bool chinchilla = false;         // D is 20 · P (UnsetTokens::Chinchilla)
    double steps = 0;                // ⌈D / G⌉
    double stepSeconds = 0, seconds = 0, days = 0;
    double gpus = 0, gpuHours = 0;
    double tokensPerSecondPerGpu = 0;
    double mfu = 0;
    double gpuPowerWatts = 0, hostPowerWattsPerGpu = 0, pue = 1;
    Resilience resilience;
    double secondsWithFailures = 0;  // seconds / goodput
    double daysWithFailures = 0, gpuHoursWithFailures = 0;
    double interruptions = 0;        // expected over the run: seconds with failures / M
    double energyKwh = 0;            // the facility's: GPU-hours with failures · (GPU + host W) · PUE / 1000
    std::optional<double> cost;      // GPU-hours with failures · price, when a price is given
    FigureSet figures; // "run.*", their inputs "sim.step_time_s", "dataset.G", "hardware.gpu_count", "memory.*"
};

// What D is when neither `tokens` nor run.tokens gives it.
enum class UnsetTokens {
    Refuse,     // an error at run.tokens (the CLI: a run is asked for with its tokens)
    Chinchilla, // 20 tokens per parameter, Chinchilla's compute-optimal ratio (Hoffmann et al. 2022,
                // arXiv 2203.15556; stage 5's Run tab, until the user gives a count)
};

// The run of `scenario` (its run settings, D = `tokens` when given, else run.tokens) on the simulated
// step of its `derivation` (whose "memory.weights_bytes" and "memory.optimizer_bytes" make the
// checkpoint). Errors, each at its scenario path: no tokens (run.tokens), fewer tokens than one step, a
// custom GPU without run.gpu_power_w.
[[nodiscard]] Result<RunEstimate> estimateRun(const Scenario& scenario, const Derivation& derivation,
                                              const network::StepSimulation& step,
                                              std::optional<double> tokens = std::nullopt,
                                              UnsetTokens unset = UnsetTokens::Refuse);

} // namespace tw::scenario
