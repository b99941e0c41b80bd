#pragma once
// The plans that fit (issue #18): a search over the layouts of a scenario's model on its cluster —
// dp × pp × tp (× ep), sharding (DDP, ZeRO-1/2/3), sequence parallelism, recomputation, micro-batch
// size, pipeline schedule and v — keeping those that parallel::validate accepts and whose every GPU
// fits (parallel::derivePlanMemory without figures), ranked coarse first, then the best few simulated
// exactly as `tokenwire-cli simulate` does (derive → fabric → network::simulateStep).
//
// Fixed: the cluster, the model, T and the global batch G (micro-batch × accumulation × dp = G/T),
// the fabric, the collectives. Pruned (documented, docs/memory.md "The plans that fit"): TP stays
// inside a node (t divides the GPUs per node), v ≤ 4, micro-batch sizes are the divisors of G/(T·dp)
// up to 64, FSDP full shard is ZeRO-3's traffic and memory and is not listed apart, hybrid FSDP is
// left out. The enumeration stops at FitOptions::maxCandidates (FitSearch::truncated says so).
//
// Coarse estimate (no network): compute = FLOPs per step (compute.flops_per_step under the candidate's
// recomputation) / (GPUs · peak · efficiency) — the scenario's fixed rate, or with the kernel model (auto)
// the efficiency its kernels give the scenario's own plan (FLOPs per GPU / (peak · the busiest stage's
// compute per step)) — stretched by the pipeline bubble — 1F1B and GPipe
// (m + p − 1)/m, interleaved (m + (p − 1)/v)/m (Narayanan et al. 2021, arXiv 2104.04473 §2.2) — with
// ties broken towards less traffic (DDP before ZeRO-1/2/3), less recomputation, less TP, the larger
// micro-batch, then less memory.
// plus a communication term (coarseCommSeconds): the bytes one GPU sends per step for TP, PP and DP
// over nominal rates, as if nothing overlapped — a ranking proxy that keeps communication-bound
// layouts (ZeRO-3 over 1,024 GPUs, TP across nodes) from the top; EP's All-to-All is left to the
// exact stage. Then the best candidate of each distinct layout (degrees,
// schedule, v) in coarse order, up to FitOptions::simulate of them, is simulated and the list re-ranked
// by simulated step time.

#include "base/error.h"
#include "base/progress.h"
#include "scenario/scenario.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tw::scenario {

struct FitOptions {
    std::size_t top = 10;                // plans returned
    std::size_t simulate = 6;            // layouts simulated exactly (0 = coarse only); a 1,024-GPU step takes
                                         // 0.6–11 s to simulate (release build), so the default stays few
    std::size_t maxCandidates = 500000;  // layouts enumerated at most
    double simulateBudgetSeconds = 20;   // no new simulation starts after this much wall time (0 = no limit)
    bool operator==(const FitOptions&) const = default;
};

struct FitPlan {
    parallel::ParallelPlan plan;         // the scenario's plan with the candidate's degrees and choices
    std::uint64_t microBatch = 1;        // B
    model::Recompute recompute = model::Recompute::None;
    std::uint64_t accumulation = 1;      // N_acc = G/(B·T·dp)
    double peakBytes = 0;                // the largest GPU, with the framework reserve and the allocator headroom
    double capacityBytes = 0;
    double coarseSeconds = 0;            // the coarse estimate of the step (compute + communication)
    double coarseCommSeconds = 0;        // of which communication
    bool simulated = false;              // the figures below come from the simulation
    double stepSeconds = 0;              // simulated step (coarse estimate until simulated)
    double mfu = 0;
    double exposedCommSeconds = 0;       // mean per GPU
    bool operator==(const FitPlan&) const = default;
};

struct FitSearch {
    std::vector<FitPlan> plans;          // the best, simulated first by step time, then coarse ones
    std::vector<FitPlan> fitting;        // every candidate that validates and fits, in coarse order
    std::size_t candidates = 0;          // enumerated
    std::size_t valid = 0;               // accepted by parallel::validate
    bool truncated = false;              // the enumeration stopped at maxCandidates
    bool budgetReached = false;          // fewer layouts simulated than asked: the time budget ran out
    std::vector<Error> simulationErrors; // candidates whose simulation failed (left out of `plans`)
};

// The scenario with one candidate applied: plan, micro-batch and recomputation (one edit).
[[nodiscard]] Scenario applyFitPlan(const Scenario& scenario, const FitPlan& plan);

// The coarse estimate of a candidate (exposed for the tests): flopsPerStep under its recomputation.
[[nodiscard]] double coarseStepSeconds(double flopsPerStep, std::uint64_t gpus, double peakFlops, double efficiency,
                                       parallel::PipelineSchedule schedule, std::uint64_t pp, std::uint64_t v,
                                       std::uint64_t microBatches);

// The coarse communication term: per step, one GPU's bytes over nominal rates, nothing overlapped.
// TP: 4 ring AllReduces per layer per micro-batch (6 with full recomputation; SP's ReduceScatter +
// AllGather move the same bytes) of M = B·T·d·s_act, each 2(t−1)/t·M, on the L/pp layers of a stage,
// m micro-batches, over `intraBandwidth`. PP: each micro-batch's activations forward and gradients
// backward, 2·M per boundary (v times when interleaved), over `ppBandwidth`. DP: the gradients of the
// GPU's P/(t·pp) parameters, 2(d−1)/d·P·s_g (ZeRO-3/FSDP 3(d−1)/d: two AllGathers and a
// ReduceScatter, ZeRO §7), over `dpBandwidth`.
struct CoarseComm {
    std::uint64_t dp = 1, pp = 1, tp = 1, v = 1, microBatches = 1, layers = 1;
    double activationBytes = 0;   // M = B·T·d·s_act
    double gradientBytes = 0;     // P/(t·pp)·s_g
    bool fullRecompute = false, zero3 = false;
    double intraBandwidth = 0, ppBandwidth = 0, dpBandwidth = 0; // B/s
};
[[nodiscard]] double coarseCommSeconds(const CoarseComm& c);

// Runs the search. `partial` (optional, called from the working thread) gets the list as it stands:
// once after the coarse ranking, then after each exact simulation. Errors: a scenario that does not
// derive, a stop request ("cancelled"). No plan fitting is not an error (empty lists).
[[nodiscard]] Result<FitSearch> searchFittingPlans(const Scenario& scenario, const FitOptions& options = {},
                                                   const Progress& progress = {},
                                                   const std::function<void(const FitSearch&)>& partial = {});

} // namespace tw::scenario
