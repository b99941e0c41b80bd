#pragma once
// Stage 5's scaling sweep: the same scenario on a list of cluster sizes, one simulated step each
// (derive → fabric → simulateStep), and the paper's appendix A.3 quantities per point: step time,
// throughput, speedup and efficiency against the smallest point of the sweep, and the exposed
// AllReduce (communication) share.
//
// Scaling (documented choice): weak scaling of data parallelism, as PyTorch DDP benchmarks and the
// paper's testbed measure it: each point keeps the scenario's micro-batch, accumulation steps and
// tp/pp/ep degrees, and DP takes the GPUs (dp = GPUs / (pp·tp)); the global batch grows with dp.
// Throughput = global batch tokens / step time; speedup(N) = throughput(N) / (throughput(N₀) / N₀)
// where N₀ is the smallest size of the sweep that ran (so with N₀ = 1 it is the usual T(1)/T(N)
// ratio of throughputs), efficiency = speedup / N.
// Strong scaling (SweepOptions::strong) keeps the global batch instead (accumulation shrinks; a
// size that cannot split the batch evenly is an error of that point).
//
// The cluster of a point: GPUs ≤ gpus per node of the scenario → one node of that many GPUs,
// else nodes = GPUs / gpus per node (a size that is not a multiple is an error naming it); the
// topology kind follows (scenario::fitPlanToCluster). For the paper testbed every GPU is a node.

#include "base/error.h"
#include "base/figure.h"
#include "base/progress.h"
#include "scenario/scenario.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tw::scenario {

// The sweep's limits: at most this many points, each at most this many GPUs (a simulation each).
inline constexpr std::size_t kMaxSweepPoints = 64;
inline constexpr std::uint64_t kMaxSweepGpus = 4096;

struct SweepOptions {
    std::vector<std::uint64_t> gpus;   // ascending after parsing; duplicates are an error
    bool strong = false;               // keep the global batch (strong scaling) instead of weak scaling
    bool operator==(const SweepOptions&) const = default;
};

struct SweepPoint {
    std::uint64_t gpus = 0;
    std::uint64_t nodes = 0, gpusPerNode = 0;
    std::uint64_t dp = 0, pp = 0, tp = 0, ep = 0;
    double stepSeconds = 0;
    double computeSeconds = 0;          // mean per GPU
    double exposedCommSeconds = 0;      // mean per GPU
    double commShare = 0;               // exposed / step ("AllReduce share" for a DDP plan)
    double tokensPerSecond = 0;         // global batch tokens / step
    double speedup = 0;                 // tokens/s ÷ (tokens/s of the base point / base GPUs)
    double efficiency = 0;              // speedup / GPUs
    double mfu = 0;
    bool ok = false;                    // false: `error` says why this size cannot run
    Error error;
};

// A point measured in the paper, drawn beside the prediction (the testbed preset's A.3 row).
struct MeasuredPoint {
    std::uint64_t gpus = 0;
    double commShare = -1;              // < 0: not measured
    double efficiency = -1;
    double speedup = -1;
    std::string source;                 // "arXiv 2609.19924 appendix A.3"
};

struct Sweep {
    std::vector<SweepPoint> points;     // in the order of SweepOptions::gpus
    std::uint64_t baseGpus = 0;         // the point speedups are measured against (the smallest that ran)
    std::vector<MeasuredPoint> measured; // the scenario's published measurements (testbed preset), else empty
    // The model's gap at each measured point, stated in words, one line per measured quantity ("At 7
    // GPUs the paper measured 67 % efficiency (speedup 4.69×); the model predicts …"), then how much of
    // the measured slowdown (1/efficiency − 1) the model explains and what the paper's own figures
    // imply (docs/model.md: a 24.5 % share predicts 75.5 % efficiency, ≈12.7 % other overhead).
    // Efficiency is compared only when the sweep's base is 1 GPU, as the paper's speedup is.
    std::vector<std::string> gaps;
    FigureSet figures;                  // "sweep.*"
};

// Parses "1,2,4,8" or "1-7" or "1,2,4-8" (the CLI's --gpus); errors name the bad item and the limits:
// "\"1,x\": item 2 is not a positive integer". The list comes back ascending; a size given twice
// (also through a range) is an error, as are more than kMaxSweepPoints sizes or one above kMaxSweepGpus.
[[nodiscard]] Result<std::vector<std::uint64_t>> parseGpuList(std::string_view text);

// The sweep's default sizes for this scenario (the stage 5 pane's first list): sizes that
// scenarioAtSize accepts and that are multiples of pp·tp·ep (so dp = GPUs/(pp·tp) keeps the expert
// degree, instead of silently dropping it to 1). The paper testbed: every accepted size from 1 to its
// node count (at least 2). Otherwise the smallest accepted size, then doubling (each next accepted size
// at least twice the last) up to the scenario's own cluster, which ends the list when it is not on the
// doubling path; at most 8 sizes. gpt3-175b (pp·tp = 64, 768 GPUs): 64, 128, 256, 512, 768.
[[nodiscard]] std::vector<std::uint64_t> defaultSweepSizes(const Scenario& scenario);
// A list as parseGpuList reads it, runs of three or more consecutive sizes as a range: "1-7", "64,128".
[[nodiscard]] std::string gpuListText(const std::vector<std::uint64_t>& gpus);

// The scenario of one point: the cluster of `gpus` GPUs (see the top of this file), the plan fitted
// to it (dp takes the GPUs, pp·tp kept), the batch scaled (weak) or kept (strong). An Error names why
// the size cannot be built from this scenario (not a multiple of the GPUs per node, or of pp·tp, an
// accumulation count that is not whole).
[[nodiscard]] Result<Scenario> scenarioAtSize(const Scenario& scenario, std::uint64_t gpus, bool strong = false);

// Runs the sweep. Errors: an empty list, too many points or GPUs (the limits above), an invalid
// scenario, a stop request ("cancelled"). A size that cannot run (plan, topology or batch) is a point
// with ok = false, not an error of the sweep. Progress is reported per point (and within a point).
[[nodiscard]] Result<Sweep> runSweep(const Scenario& scenario, const SweepOptions& options, const Progress& progress = {});

// The published measurements that apply to this scenario: the paper's appendix A.3 row (AllReduce share
// 15 % on the smallest run with an AllReduce, 2 nodes; 24.5 %, 67 % efficiency and a 4.69× speedup
// on 7 nodes) for a pure-DDP plan (pp = tp = 1) on the paper-testbed fabric; empty otherwise.
[[nodiscard]] std::vector<MeasuredPoint> publishedMeasurements(const Scenario& scenario);

// The compute time that gives the exposed communication share `targetShare` at `gpus` GPUs: the
// per-layer forward time of the plan (parallel.layer_forward_time_s, one value for every layer; the
// backward takes twice as long, stage 3's model) found by bisection on the simulated step. The share
// falls as compute grows (the exposed communication can only shrink and the step only grow), so the
// bisection converges. Errors: a target outside (0, 1), a size that cannot run, no exposed
// communication at that size (no compute time gives the share), a stop request.
struct Calibration {
    std::uint64_t gpus = 0;
    double targetShare = 0;
    double layerForwardSeconds = 0; // the result
    double share = 0;               // the simulated share with it
    double stepSeconds = 0;
    double computeSeconds = 0;
    int iterations = 0;
};
[[nodiscard]] Result<Calibration> calibrateComputeForShare(const Scenario& scenario, std::uint64_t gpus, double targetShare,
                                                           const Progress& progress = {});

} // namespace tw::scenario
