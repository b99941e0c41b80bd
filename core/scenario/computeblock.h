#pragma once
// The kernels behind one compute block of stage 5's simulated step (issue #19: "stage 5's compute blocks
// carry the breakdown on hover"): a GpuInterval names its pass, micro-batch and model chunk; this looks
// the chunk's layers up in the plan's kernel model (plan.kernels, model/kernels.h) and sums each kernel
// over them, with the embedding on the first chunk and the head on the last. Qt-free, for the hover text
// of whatever view draws the GPU timeline. docs/compute.md.

#include "model/model.h"
#include "network/simulate.h"
#include "parallel/plan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tw::scenario {

struct BlockKernel {
    std::string name;         // "MLP up (h→4h) ∂weight"
    double seconds = 0;       // over the block's layers (and launches)
    double flops = 0;         // executed (hardware) FLOPs
    double bytes = 0;
    bool computeBound = true; // GEMMs and attention: TFLOP/s; memory-bound kernels: GB/s
    [[nodiscard]] double rate() const { return seconds > 0 ? (computeBound ? flops : bytes) / seconds : 0; }
    bool operator==(const BlockKernel&) const = default;
};

struct ComputeBlockBreakdown {
    bool timed = false;               // false: the plan's times do not come from the kernel model
    std::string title;                // "Backward of micro-batch 3: 12 layers, recomputation included"
    std::uint64_t layers = 0;         // in the block's chunk
    std::vector<BlockKernel> top;     // the longest kernels, longest first
    std::size_t others = 0;           // kernels not in `top`
    double otherSeconds = 0;          // their time
    double kernelSeconds = 0;         // Σ of every kernel of the block (the pass of the whole chunk)
    double intervalSeconds = 0;       // the hovered interval (a part of the pass when TP calls cut it)
    bool operator==(const ComputeBlockBreakdown&) const = default;
};

// The block of `interval` (a compute interval) on a GPU of pipeline stage `stage`; `top` kernels listed.
[[nodiscard]] ComputeBlockBreakdown computeBlockBreakdown(const parallel::PlanDerivation& plan,
                                                          const model::ModelConfig& model, std::uint64_t stage,
                                                          const network::GpuInterval& interval, std::size_t top = 5);
// Hover text: the title, one line per top kernel (time, achieved TFLOP/s or GB/s, bound), the rest, the total.
[[nodiscard]] std::string toText(const ComputeBlockBreakdown& b);

} // namespace tw::scenario
