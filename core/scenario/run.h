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
#include "base/progress.h"
#include "scenario.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tw::network {
struct StepSimulation;
}

namespace tw::scenario {

struct Derivation;
class Deriver;

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

// A phase of the scenario's batch ramp with its own simulated step.
struct PhaseStep {
    BatchPhase phase;             // as the scenario gives it
    std::uint64_t sequenceLength = 0; // its T (the batch's when the phase leaves it out)
    double gpus = 0;                  // its cluster's (fewer with a smaller dp)
    double stepSeconds = 0;
    double mfu = 0;
};

// The scenario of phase `i` of its run.batch_ramp: the batch block with the phase's G and T (B kept), and
// with the phase's dp the plan's dp and the nodes that hold dp · pp · tp GPUs. Errors at
// "run.batch_ramp[i].dp": those GPUs are not whole nodes, or the plan places every GPU itself.
[[nodiscard]] Result<Scenario> phaseScenario(const Scenario& scenario, std::size_t i);

// Every phase of the scenario's batch ramp derived (by `deriver`, which tokenizes the text once; null: a
// deriver of the call's own) and its step simulated as stage 5 simulates the scenario's, without link
// samples; progress over the phases. Errors, each at "run.batch_ramp[i]": the phase's scenario cannot be
// derived, its plan cannot run at that batch (the sequences do not divide among the data-parallel
// ranks, too few micro-batches …), its simulation failed or was stopped.
[[nodiscard]] Result<std::vector<PhaseStep>> simulateRamp(const Scenario& scenario, Deriver* deriver = nullptr,
                                                          const Progress& progress = {});

// One phase of a run: the tokens it trains and its steps.
struct PhaseRun {
    double untilTokens = 0;       // where it ends (the run's D for the last, the scenario's own batch)
    double tokens = 0;            // D_i = min(until, D) − the phase before's until (0 past D)
    double tokensPerStep = 0;     // G_i
    std::uint64_t sequenceLength = 0;
    double gpus = 0;
    double steps = 0;             // ⌈D_i / G_i⌉
    double stepSeconds = 0, mfu = 0;
    double goodput = 1;           // Daly's on the phase's cluster (resilienceOf), at its own Young/Daly interval
};

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
    // With a batch ramp: its phases, then the scenario's own batch from the last phase's until to D
    // (steps, seconds, GPU-hours and the times with failures are their sums, MFU time-weighted; each
    // phase fails at its own cluster's rate); empty without a ramp.
    std::vector<PhaseRun> phases;
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
// checkpoint), its batch ramp's phases on their steps `ramp` (simulateRamp; one per phase, in order).
// Errors, each at its scenario path: no tokens (run.tokens), fewer tokens than one step, a custom GPU
// without run.gpu_power_w, a ramp whose phases were not simulated (run.batch_ramp).
[[nodiscard]] Result<RunEstimate> estimateRun(const Scenario& scenario, const Derivation& derivation,
                                              const network::StepSimulation& step,
                                              std::optional<double> tokens = std::nullopt,
                                              UnsetTokens unset = UnsetTokens::Refuse,
                                              const std::vector<PhaseStep>& ramp = {});

} // namespace tw::scenario
