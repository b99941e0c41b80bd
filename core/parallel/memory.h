#pragma once
// Memory of every GPU of a parallel plan (issue #18): model states (weights, gradients, optimizer
// state) divided as TP / PP / EP / ZeRO / FSDP divide them, activations per layer after Korthikanti
// et al. (arXiv 2205.05198, Table 2) times the micro-batches in flight on each pipeline stage, and
// the buffers (DDP buckets, ZeRO-3 gathered units, NCCL buffers). Computed once per distinct role
// (pipeline stage) and mapped to every GPU through the plan's mesh. docs/memory.md explains each term.

#include "base/figure.h"
#include "model/gpucatalog.h"
#include "model/model.h"
#include "model/tensors.h"
#include "parallel/plan.h"

#include <cstdint>
#include <vector>

namespace tw::parallel {

// Whether the attention scores [b,a,s,s] are stored for the backward pass: model.attention, with
// "auto" = fused (flash attention, nothing stored) on GPUs with bf16 tensor cores (Ampere and newer,
// MI300X), unfused on older ones (V100).
[[nodiscard]] bool attentionScoresStored(const model::ModelConfig& model, const model::GpuSpec& gpu);

// Korthikanti et al. Table 2, decomposed into the tensors each term stands for, in bytes per
// micro-batch of one layer on one TP rank (docs/memory.md, "Activations"). Without recomputation
// total = attention + scores + mlp + norms; selective drops the scores, full keeps the layer input.
struct LayerActivations {
    double attention = 0; // LayerNorm output (QKV input), Q, K, V, output-projection input, dropout mask
    double scores = 0;    // softmax output, its dropout mask and the dropped-out probabilities (unfused only)
    double mlp = 0;       // MLP input, the d_ff tensors (GeLU: 2; SwiGLU: gate, up, product), dropout mask
    double norms = 0;     // the two LayerNorm / RMSNorm inputs
    double total = 0;     // with recomputation applied
    bool operator==(const LayerActivations&) const = default;
};
struct ActivationShape {
    std::uint64_t t = 1;          // TP degree
    bool sequenceParallel = false;
    bool scoresStored = true;     // unfused attention
    model::Recompute recompute = model::Recompute::None;
};
[[nodiscard]] LayerActivations layerActivationBytes(const model::ModelConfig& model, const model::BatchShape& batch,
                                                    const ActivationShape& shape, bool moeLayer = false);

// Micro-batches whose activations one stage holds at its peak, per model chunk of that stage
// (v entries): GPipe all m; 1F1B min(m, p − stage); interleaved the first min(m·v, 2(p−r−1) +
// (v−1)·p + 1) forwards of Megatron's schedule (its warm-up count + 1), chunk (i / p) mod v each.
[[nodiscard]] std::vector<std::uint64_t> microBatchesInFlight(PipelineSchedule schedule, std::uint64_t stages,
                                                              std::uint64_t virtualStages, std::uint64_t microBatches,
                                                              std::uint64_t stage);

// Model states of one GPU from its parameter count (ZeRO arXiv 1910.02054 §3.1, §5.1): weights P·s_w,
// gradients P·s_g, optimizer Adam m, v (2·s_opt) plus a master copy in s_opt when the weights are
// narrower. Sharding over n ranks gives each ⌈P/n⌉ parameters of what the stage shards.
struct StateBytes {
    double weights = 0, gradients = 0, optimizer = 0;
    [[nodiscard]] double total() const { return weights + gradients + optimizer; }
    bool operator==(const StateBytes&) const = default;
};
[[nodiscard]] StateBytes modelStateBytes(double parameters, const model::ModelConfig& precisions, Sharding sharding,
                                         std::uint64_t shardRanks);

// One distinct role: every GPU of one pipeline stage holds the same bytes.
struct RoleMemory {
    std::uint64_t stage = 0;
    std::uint64_t gpus = 0;              // GPUs with this role
    std::uint64_t layers = 0;            // blocks on the stage (all its chunks)
    bool holdsEmbedding = false, holdsOutput = false;
    double parameters = 0;               // on one GPU before data-parallel sharding (÷ t, E/ep experts)
    double expertParameters = 0;         // of those, sharded over the expert-DP group (ep > 1)
    std::vector<std::uint64_t> inFlight; // micro-batches held per chunk
    double weights = 0, gradients = 0, optimizer = 0, activations = 0, buffers = 0;
    double total = 0;                    // the peak without the reserve
    double headroom = 0;                 // memory left: capacity − reserve − allocator headroom − total
    bool fits = false;                   // total + reserve + allocator headroom ≤ capacity
};

struct PlanMemory {
    std::vector<RoleMemory> roles;        // one per pipeline stage
    std::vector<std::uint32_t> roleOfGpu; // per GPU id: index into roles
    double capacityBytes = 0, reserveBytes = 0;
    double allocatorHeadroomBytes = 0;    // kept free for the allocator's fragmentation: fraction · capacity
    // What every GPU keeps free besides its own bytes: the reserve and the allocator headroom.
    [[nodiscard]] double keptFreeBytes() const { return reserveBytes + allocatorHeadroomBytes; }
    double peakBytes = 0;                 // the largest role total (without the reserve)
    std::uint64_t peakStage = 0, peakGpu = 0; // the first GPU with the peak
    bool fits = false;                    // every GPU fits
    FigureSet figures;                    // "memory.plan.*" (empty when figures were not asked for)
};

// Pure; expects validate(plan, …) to have returned no errors. `inputs` are figures this stage may
// cite. Cheap enough for a plan search (figures = false skips the formula texts).
[[nodiscard]] PlanMemory derivePlanMemory(const ParallelPlan& plan, const Cluster& cluster,
                                          const model::ModelConfig& model, const model::BatchShape& batch,
                                          const model::GpuSpec& gpu, const FigureSet& inputs = {},
                                          bool figures = true);

} // namespace tw::parallel
