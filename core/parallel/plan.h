#pragma once
// Stage 3: GPUs arranged in a data × pipeline × tensor (× expert) parallel mesh, and the
// communication that arrangement causes in one optimizer step — every collective call with its
// group, payload, repeat count, phase and position, and per-strategy totals (the paper's
// "communication signature"). Formulas: docs/model.md §3; Megatron-LM (arXiv 2104.04473),
// Korthikanti et al. (arXiv 2205.05198), ZeRO (arXiv 1910.02054), PyTorch FSDP docs.

#include "base/error.h"
#include "base/figure.h"
#include "model/gpucatalog.h"
#include "model/kernels.h"
#include "model/model.h"
#include "model/tensors.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::parallel {

// The machines: nodes × GPUs per node. GPU g (0-based, global) is local GPU g % gpusPerNode of node
// g / gpusPerNode. Stage 5 attaches links to this same numbering.
struct Cluster {
    std::uint64_t nodes = 1;
    std::uint64_t gpusPerNode = 8;
    bool operator==(const Cluster&) const = default;
    [[nodiscard]] std::uint64_t gpuCount() const { return nodes * gpusPerNode; }
    [[nodiscard]] std::uint64_t nodeOf(std::uint64_t gpu) const { return gpu / gpusPerNode; }
};

// How data-parallel replicas hold and exchange model state.
// ddp: every replica holds everything, gradients AllReduced once per optimizer step.
// zero1/zero2/zero3: ZeRO stages 1–3 (Rajbhandari et al.); fsdp-full = FULL_SHARD (the ZeRO-3
// traffic pattern); fsdp-hybrid = HYBRID_SHARD: ZeRO-3 inside shard groups of `shardGroupSize`
// consecutive DP ranks, gradients AllReduced across the groups.
enum class Sharding { Ddp, Zero1, Zero2, Zero3, FsdpFull, FsdpHybrid };
enum class PipelineSchedule { GPipe, OneFOneB, Interleaved };
enum class Strategy { DP, PP, TP, EP };
inline constexpr int kStrategyCount = 4; // loops over the strategies: for (s = 0; s < kStrategyCount; ++s)
// One value per strategy: indexed by Strategy (bytes[Strategy::TP]) or, in loops, by 0 … kStrategyCount - 1.
template <class T>
struct PerStrategy : std::array<T, kStrategyCount> {
    using Base = std::array<T, kStrategyCount>;
    using Base::operator[];
    constexpr T& operator[](Strategy s) { return Base::operator[](static_cast<std::size_t>(s)); }
    constexpr const T& operator[](Strategy s) const { return Base::operator[](static_cast<std::size_t>(s)); }
};
// The operations a plan calls: stage 4's collective::Op (core/collective/schedule.h) without Reduce, in
// its order and with its values, so that collective::opFor is a cast (checked there at compile time).
enum class CollectiveKind { AllReduce = 0, ReduceScatter = 1, AllGather = 2, Broadcast = 3, AllToAll = 5, SendRecv = 6 };

[[nodiscard]] std::string_view toString(Sharding s);         // "ddp","zero1","zero2","zero3","fsdp-full","fsdp-hybrid"
[[nodiscard]] std::optional<Sharding> shardingFromString(std::string_view s);
[[nodiscard]] std::string_view toString(PipelineSchedule s); // "gpipe","1f1b","interleaved"
[[nodiscard]] std::optional<PipelineSchedule> scheduleFromString(std::string_view s);
[[nodiscard]] std::string_view toString(Strategy s);         // "DP","PP","TP","EP"
[[nodiscard]] std::string_view toString(CollectiveKind k);   // "AllReduce","ReduceScatter","AllGather","Broadcast","All-to-All","Send/Recv"
[[nodiscard]] std::string_view slug(CollectiveKind k);
// One value per collective kind, indexed by the CollectiveKind's value (4 is unused).
using PerKind = std::array<double, 7>;       // "allreduce", … "alltoall", "sendrecv" (ids, as collective::Op's names)

// A GPU's place in the mesh. ep is not a coordinate of its own: EP is carved out of DP, and a
// GPU's expert-parallel rank is dp % ep (EP groups are blocks of ep consecutive DP ranks).
struct MeshCoord {
    std::uint32_t dp = 0, pp = 0, tp = 0;
    bool operator==(const MeshCoord&) const = default;
};

struct ParallelPlan {
    std::uint64_t dp = 8, pp = 1, tp = 1, ep = 1;
    Sharding sharding = Sharding::Ddp;
    std::uint64_t shardGroupSize = 0;      // fsdp-hybrid only; 0 = the DP ranks of one node (default layout)
    bool sequenceParallel = false;         // Megatron SP: each TP AllReduce becomes ReduceScatter + AllGather
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    std::uint64_t virtualStages = 1;       // v, interleaved only: model chunks per pipeline stage
    std::vector<std::uint64_t> layerPartition; // layers per (virtual) stage, pp·v entries; empty = defaultPartition
    std::vector<double> layerForwardSeconds;   // per-layer forward time per micro-batch: empty = compute model,
                                               // one value = every layer, L values = each layer
    double computeEfficiency = 0;          // 0 = "auto": layer times from the kernel model (model/kernels.h,
                                           // docs/compute.md); (0, 1] = the fixed-rate model, achieved / peak FLOP/s
    std::optional<double> bucketBytes;     // gradient bucket, B; nullopt ("auto") = the framework's (bucketBytesFor)
    bool ddpOverlap = true;                // stage 5: true = PyTorch DDP's buckets overlap the backward; false =
                                           // Megatron-LM 2021: one reduction after the last backward (docs/model.md §7)
    // ZeRO-3 / FSDP gathers the layers' weights in FP8 (torchtitan's enable_fsdp_float8_all_gather, beside
    // model.fp8_recipe): 1 byte per parameter on the wire instead of s_w; the embedding and the head stay
    // 16-bit (docs/compute.md, "FP8 recipes").
    bool fp8AllGather = false;             // inert (a warning says so) without ZeRO-3/FSDP or an FP8 recipe
    bool tpOverlap = false;                // stage 5: true = the backward's input-gradient TP collective of a
                                           // column-parallel linear overlaps its weight-gradient GEMM (Megatron-LM
                                           // since late 2021, Korthikanti et al. 2022 §6.2); false = synchronous
                                           // (Megatron-LM 2021, Narayanan et al. 2021). docs/compute.md
    // Memory per GPU (parallel/memory.h, docs/memory.md): the framework reserve (CUDA context, cuBLAS
    // workspace, allocator slack) counted against the capacity, and the NCCL buffers of one communicator
    // (16 channels × NCCL_BUFFSIZE, 4 MiB by default).
    double memoryReserveBytes = 1024.0 * 1024 * 1024;
    // The share of the GPU's memory kept free for the caching allocator's fragmentation (docs/memory.md,
    // "Allocator headroom"): GMLake (Guo et al., ASPLOS 2024, arXiv 2401.08156) measured PyTorch's
    // allocator leaving on average 9.2 GB (up to 25 GB) of an 80 GB A100 reserved but unusable across
    // eight LLMs, 15 % fragmentation on average: 0.10 of the capacity, about 8 GiB of 80.
    double memoryHeadroomFraction = 0.10;
    double commBufferBytes = 16 * 4.0 * 1024 * 1024;
    std::vector<MeshCoord> assignment;     // coordinates of GPU 0, 1, …; empty = defaultAssignment
    bool operator==(const ParallelPlan&) const = default;
};

// Layers over n stages as even as possible, the extra layers on the middle stages:
// 12 on 8 → [1,1,2,2,2,2,1,1] (docs/model.md §6, Example 5.2). Empty when stages is 0 or > layers.
[[nodiscard]] std::vector<std::uint64_t> defaultPartition(std::uint64_t layers, std::uint64_t stages);

// fsdp-hybrid's shard group: plan.shardGroupSize, or (0) the DP ranks of one node in the default
// layout (gpusPerNode / t) lowered to the largest divisor of dp; 1 when that does not divide dp.
[[nodiscard]] std::uint64_t hybridShardGroupSize(const ParallelPlan& plan, const Cluster& cluster);

// Megatron's rank order: TP fastest, then DP, then PP (g = tp + t·(dp + d·pp)), so TP groups sit
// inside a node whenever t divides the GPUs per node.
[[nodiscard]] std::vector<MeshCoord> defaultAssignment(const ParallelPlan& plan);

// The plan's assignment, or the default one when it has none.
[[nodiscard]] std::vector<MeshCoord> effectiveAssignment(const ParallelPlan& plan);

// Every reason the plan cannot run this model on this cluster, each naming its JSON path under
// "parallel." and the valid choices where there are few ("parallel.tp: 8 does not divide the 12
// attention heads of GPT-2 small; valid tensor-parallel degrees: 1, 2, 3, 4, 6, 12"). Checks
// dp·pp·tp = GPUs, tp | a and tp | n_kv, ep | dp and ep | E, pp ≤ L and the partition, G divisible
// by B·T·dp, the assignment a bijection onto the mesh, interleaving's extra conditions.
[[nodiscard]] std::vector<Error> validate(const ParallelPlan& plan, const Cluster& cluster,
                                          const model::ModelConfig& model, const model::BatchShape& batch);

// Valid degrees for one dimension, the others as given (for messages and the UI's spin boxes).
[[nodiscard]] std::vector<std::uint64_t> validTensorDegrees(const model::ModelConfig& model);

// A set of GPUs that communicate: a TP group, a DP group, a pipeline pair, an EP group …
struct Group {
    Strategy strategy = Strategy::DP;
    std::string kind;                   // "tp", "dp", "dp-expert", "dp-shard", "dp-replica", "pp-pair", "pp-embedding", "ep"
    std::vector<std::uint32_t> members; // GPU ids in rank order within the group (Send/Recv: {sender, receiver})
    bool crossesNodes = false;          // members on more than one node
};

// One collective, issued concurrently by every group in [firstGroup, firstGroup + groupCount) of
// CommPlan::groups (e.g. "the forward AllReduce after attention of layer 3, in every TP group of
// stage 0"), `repeat` times per optimizer step.
struct CollectiveCall {
    CollectiveKind kind = CollectiveKind::AllReduce;
    Strategy strategy = Strategy::DP;
    model::Phase phase = model::Phase::Backward;
    std::uint32_t firstGroup = 0, groupCount = 0;
    double payloadBytes = 0;  // M: the AllReduce buffer; AllGather's output / ReduceScatter's input (unsharded);
                              // All-to-All: each rank's whole buffer; Send/Recv: the bytes sent
    std::uint64_t repeat = 1; // per optimizer step, per group (e.g. N_acc micro-batches)
    int layer = -1;           // 0-based block index, -1 outside the blocks or for the whole model
    int microBatch = -1;      // -1 = every micro-batch (then repeat counts them) or once per step
    std::string what;         // "gradient AllReduce (non-expert parameters)", "attention output AllReduce"
    std::string formula;      // how payloadBytes was computed, with the numbers
    // TP backward: the input-gradient collective of a column-parallel linear (QKV, MLP up), which
    // parallel.tpOverlap runs alongside that linear's weight-gradient GEMM in stage 5.
    bool overlapsWeightGradient = false;
    // Bytes one member sends for one call with the bandwidth-optimal algorithm (ring / pairwise):
    // AllReduce 2(N−1)/N·M, ReduceScatter/AllGather/All-to-All (N−1)/N·M, Send/Recv M (sender), Broadcast M.
    [[nodiscard]] double bytesSentPerMember(std::uint64_t groupSize) const;
};

// One row of the communication signature.
struct StrategySignature {
    Strategy strategy = Strategy::DP;
    bool present = false;           // this plan uses the strategy (degree > 1)
    double payloadBytes = 0;        // M of the call that carries most of the strategy's bytes per step
                                    // (the PP boundary Send/Recv, not the once-per-step tied-embedding AllReduce)
    double callsPerStep = 0;        // calls one GPU takes part in per optimizer step
    std::uint64_t peers = 0;        // other members in that GPU's largest group of this strategy
    double bytesPerGpuPerStep = 0;  // bytes the busiest GPU sends per step for this strategy (ring/pairwise)
    double totalBytesPerStep = 0;   // summed over all GPUs
    std::uint64_t groupsCrossingNodes = 0, groups = 0; // how many of its groups leave a node
    std::string frequency;          // "once per optimizer step", "4× per layer per micro-batch" …
};

struct CommPlan {
    std::vector<Group> groups;
    std::vector<CollectiveCall> calls; // in step order: forward, backward, optimizer
    std::vector<StrategySignature> signature; // DP, PP, TP, EP (always four rows)
    std::vector<double> bytesSentPerGpu;      // per GPU per step, all strategies
};

// Where one token of the text lands (stage 1 → stage 3).
struct TokenPlacement {
    std::uint64_t token = 0, sequence = 0, position = 0; // position inside its sequence of T
    std::uint64_t step = 0;        // optimizer step
    std::uint32_t dpReplica = 0;   // DP rank that trains it
    std::uint64_t microBatch = 0;  // within that replica's N_acc micro-batches
    std::uint64_t row = 0;         // row b of the micro-batch [B,T]
    std::vector<std::uint32_t> gpus; // every GPU holding its activations: its replica's pp × tp GPUs
    // Per TP rank: the hidden columns [colBegin, colEnd) and heads [headBegin, headEnd) it computes;
    // with sequence parallelism each TP rank also holds a slice of the positions between layers.
    struct Slice {
        std::uint32_t tpRank = 0;
        std::uint64_t colBegin = 0, colEnd = 0, headBegin = 0, headEnd = 0;
        bool holdsPositionBetweenLayers = true; // false under SP when another TP rank holds this position
    };
    std::vector<Slice> slices;
};

// The pipeline schedule of one optimizer step: per stage, forward and backward blocks per
// micro-batch (and model chunk when interleaved), from per-layer times; idle time is the bubble.
struct PipelineBlock {
    std::uint32_t stage = 0;
    std::uint32_t microBatch = 0;
    std::uint32_t chunk = 0;  // virtual stage index within the stage (interleaved), else 0
    bool backward = false;
    double start = 0, end = 0; // s from the start of the step
};
struct PipelineTimeline {
    std::vector<PipelineBlock> blocks;   // in start order per stage
    std::vector<double> stageBusySeconds; // per stage
    std::vector<double> stageForwardSeconds;  // per stage, one micro-batch, all its chunks
    std::vector<double> stageBackwardSeconds;
    double makespan = 0;                 // s, first block start to last block end
    double bubbleFraction = 0;           // idle / (stages × makespan)
};

// The kernel model of one GPU (model/kernels.h, docs/compute.md): one dense and one MoE block (each
// distinct shape once), the embedding, the head, the optimizer step. `timed` = the plan's times come
// from it (parallel.compute_efficiency auto and no layer_forward_time_s); otherwise only its FLOPs are used.
struct ComputeKernels {
    bool timed = false;
    model::KernelSetup setup;
    model::KernelList dense, moe, embedding, head;
    model::Kernel optimizer;
    std::uint64_t smCount = 0; // the GPU's SMs (stage 5: the SMs an overlapped NCCL kernel takes from a GEMM)
};

struct PlanDerivation {
    ParallelPlan plan;                   // as derived: partition and assignment filled in
    std::vector<MeshCoord> mesh;         // per GPU
    CommPlan comm;
    PipelineTimeline timeline;
    std::vector<double> layerForwardSeconds; // per layer, one micro-batch, as used
    std::vector<double> layerBackwardSeconds; // per layer, one micro-batch, with recomputation, as used
    ComputeKernels kernels;
    FigureSet figures;                   // "plan.*", "dp.*", "pp.*", "tp.*", "ep.*", "zero.*"
};

// PyTorch DDP's default gradient bucket (torch.nn.parallel.DistributedDataParallel, bucket_cap_mb = 25).
inline constexpr double kPytorchBucketBytes = 25.0 * 1024 * 1024;
// The gradient bucket of `plan`, B: parallel.bucket_bytes when given; else the framework that shards that
// way: PyTorch DDP's 25 MiB for DDP, and for ZeRO-1/2/3 and FSDP Megatron-core's default of max(40·10⁶,
// 10⁶·dp) parameters of gradients ("larger DP sizes need larger buckets to ensure collectives do not become
// latency-bound": megatron/core/distributed/distributed_data_parallel.py; also its FSDP). docs/model.md §5.4.
[[nodiscard]] double bucketBytesFor(const ParallelPlan& plan, const model::ModelConfig& model);

// Pure. Expects validate() to have returned no errors. `inputs` are the stage 1–2 figures this
// stage may cite ("model.parameters", "batch.B", "compute.gpu_peak_flops" …).
[[nodiscard]] PlanDerivation derivePlan(const ParallelPlan& plan, const Cluster& cluster,
                                        const model::ModelConfig& model, const model::BatchShape& batch,
                                        const model::GpuSpec& gpu, const FigureSet& inputs = {});

// Pipeline timeline alone (exposed for tests and benchmarks). stageForward/Backward are per
// (virtual) stage per micro-batch, pp·v entries.
[[nodiscard]] PipelineTimeline pipelineTimeline(PipelineSchedule schedule, std::uint64_t stages,
                                                std::uint64_t virtualStages, std::uint64_t microBatches,
                                                const std::vector<double>& chunkForwardSeconds,
                                                const std::vector<double>& chunkBackwardSeconds);

// Where token `token` of the training text goes under this plan.
[[nodiscard]] TokenPlacement placeToken(const PlanDerivation& plan, const model::ModelConfig& model,
                                        const model::BatchShape& batch, std::uint64_t token);

} // namespace tw::parallel
