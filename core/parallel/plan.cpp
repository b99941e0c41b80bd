// Stage 3 of "The Life of a Token" (Avesani et al., §3 and the worked examples of §5): the GPUs as a
// data × pipeline × tensor (× expert) parallel mesh, the groups that mesh forms, every collective
// call of one optimizer step, the per-strategy communication signature and the figures a teacher
// shows. Formulas: docs/model.md §3; Megatron-LM (Narayanan et al., arXiv 2104.04473);
// Korthikanti et al. (arXiv 2205.05198); ZeRO (Rajbhandari et al., arXiv 1910.02054); PyTorch FSDP.
// This file: the names of the plan's enums and the derivation's driver (parameters per stage, timing);
// validation in plan_validate.cpp, groups and calls in comm.cpp, figures in plan_figures.cpp.

#include "plan.h"
#include "planbuilder_p.h"
#include "memory.h"

#include "base/enumnames.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tw::parallel {

namespace {

// The fsdp-hybrid shard group size: the plan's, or the DP ranks of one node in the default layout
// (gpusPerNode / t), lowered to the largest divisor of dp.
std::uint64_t hybridShardSize(const ParallelPlan& plan, const Cluster& cluster)
{
    if (plan.shardGroupSize > 0)
        return plan.shardGroupSize;
    const std::uint64_t t = std::max<std::uint64_t>(1, plan.tp);
    const std::uint64_t perNode = std::max<std::uint64_t>(1, cluster.gpusPerNode / t);
    std::uint64_t best = 1;
    for (std::uint64_t k : detail::divisorsOf(std::max<std::uint64_t>(1, plan.dp)))
        if (k <= perNode)
            best = k;
    return best;
}

constexpr std::array kShardingNames{
    EnumName{Sharding::Ddp, "ddp"},   EnumName{Sharding::Zero1, "zero1"},         EnumName{Sharding::Zero2, "zero2"},
    EnumName{Sharding::Zero3, "zero3"}, EnumName{Sharding::FsdpFull, "fsdp-full"}, EnumName{Sharding::FsdpHybrid, "fsdp-hybrid"}};
constexpr std::array kScheduleNames{EnumName{PipelineSchedule::GPipe, "gpipe"}, EnumName{PipelineSchedule::OneFOneB, "1f1b"},
                                    EnumName{PipelineSchedule::Interleaved, "interleaved"}};
constexpr std::array kStrategyNames{EnumName{Strategy::DP, "DP"}, EnumName{Strategy::PP, "PP"}, EnumName{Strategy::TP, "TP"},
                                    EnumName{Strategy::EP, "EP"}};
constexpr std::array kCollectiveKindNames{
    EnumName{CollectiveKind::AllReduce, "allreduce", "AllReduce"},
    EnumName{CollectiveKind::ReduceScatter, "reducescatter", "ReduceScatter"},
    EnumName{CollectiveKind::AllGather, "allgather", "AllGather"},
    EnumName{CollectiveKind::Broadcast, "broadcast", "Broadcast"},
    EnumName{CollectiveKind::AllToAll, "alltoall", "All-to-All"},
    EnumName{CollectiveKind::SendRecv, "sendrecv", "Send/Recv"}};

} // namespace

// ---------------------------------------------------------------------------------------------
// Names

std::string_view toString(Sharding s) { return nameOf(kShardingNames, s); }
std::optional<Sharding> shardingFromString(std::string_view s) { return valueOf(kShardingNames, s); }
std::string_view toString(PipelineSchedule s) { return nameOf(kScheduleNames, s); }
std::optional<PipelineSchedule> scheduleFromString(std::string_view s) { return valueOf(kScheduleNames, s); }
std::string_view toString(Strategy s) { return nameOf(kStrategyNames, s); }
std::string_view toString(CollectiveKind k) { return displayOf(kCollectiveKindNames, k); }
std::string_view slug(CollectiveKind k) { return nameOf(kCollectiveKindNames, k); }

// ---------------------------------------------------------------------------------------------
// The derivation

namespace detail {

double layerMainParamsOf(const model::ModelConfig& m, const model::ParameterBreakdown& pb, std::uint64_t tp,
                         std::uint64_t ep, std::uint64_t l)
{
    // Megatron TP (arXiv 2104.04473 §3): attention and MLP weights and column-parallel biases are split
    // over t; norms, the row-parallel biases b_o, b_proj (one of them: bOut) and the router are replicated.
    const double t = static_cast<double>(tp), bOut = static_cast<double>(pb.rowParallelBiasesPerLayer) / 2;
    const double attn = static_cast<double>(pb.attentionPerLayer), mlp = static_cast<double>(pb.mlpPerLayer);
    const double norms = static_cast<double>(pb.normsPerLayer);
    if (m.isMoeLayer(l)) {
        const double mainPart = (attn - bOut) / t + bOut + norms + static_cast<double>(pb.routerPerMoeLayer);
        return ep > 1 ? mainPart : mainPart + layerExpertParamsOf(m, pb, tp, ep, l);
    }
    return (attn + mlp - 2 * bOut) / t + 2 * bOut + norms;
}

double layerExpertParamsOf(const model::ModelConfig& m, const model::ParameterBreakdown& pb, std::uint64_t tp,
                           std::uint64_t ep, std::uint64_t l)
{
    if (!m.isMoeLayer(l))
        return 0;
    // Each EP rank holds E/ep experts, each split over t like a dense MLP.
    const double t = static_cast<double>(tp), mlp = static_cast<double>(pb.mlpPerLayer);
    const double bOut = static_cast<double>(pb.rowParallelBiasesPerLayer) / 2;
    return static_cast<double>(m.moe.experts / ep) * ((mlp - bOut) / t + bOut);
}

double Builder::layerMainParams(std::uint64_t l) const
{
    return layerMainParamsOf(m, pb, Tt, EP, l);
}

double Builder::layerExpertParams(std::uint64_t l) const
{
    return layerExpertParamsOf(m, pb, Tt, EP, l);
}

void Builder::buildParams()
{
    const double t = static_cast<double>(Tt);
    const double emb = static_cast<double>(pb.embedding);
    stages.assign(P, StageParams{});
    stageHasExperts.assign(P, 0);
    for (std::uint64_t c = 0; c < chunks; ++c) {
        StageParams& st = stages[c % P];
        for (std::uint64_t l = chunkFirst[c]; l < chunkFirst[c + 1]; ++l) {
            st.layers.push_back(l);
            st.layerMain += layerMainParams(l);
            st.expert += EP > 1 ? layerExpertParams(l) : 0.0;
            if (m.isMoeLayer(l)) {
                ++st.moeLayers;
                stageHasExperts[c % P] = 1;
            } else {
                ++st.denseLayers;
            }
        }
    }
    for (StageParams& st : stages) {
        st.layerCount = st.layers.size();
    }
    // Stage 0: the vocab-parallel embedding (V_p·d/t) and the positions (replicated).
    stages[0].embedding = emb / t + static_cast<double>(pb.positions);
    // Last stage: final norm (replicated) and head (vocab-parallel); a tied head on pp > 1 is a copy of
    // the embedding kept in sync by one AllReduce per step (Megatron, arXiv 2104.04473).
    StageParams& last = stages[P - 1];
    last.embeddingCopy = tied && P > 1 ? emb / t : 0.0;
    last.output = static_cast<double>(pb.finalNorm) + static_cast<double>(pb.head) / t + last.embeddingCopy;
    for (StageParams& st : stages)
        st.main = st.layerMain + st.embedding + st.output;
}

void Builder::buildTiming()
{
    const double B = static_cast<double>(b.microBatch), T = static_cast<double>(b.sequenceLength);
    const double d = static_cast<double>(m.hiddenSize), t = static_cast<double>(Tt);
    // The kernel model (model/kernels.h, docs/compute.md): every distinct block shape once.
    ComputeKernels& k = out.kernels;
    k.setup = model::KernelSetup{b.microBatch, b.sequenceLength, Tt, sp, EP, !attentionScoresStored(m, gpu)};
    k.dense = model::layerKernels(m, gpu, k.setup, false);
    if (moe)
        k.moe = model::layerKernels(m, gpu, k.setup, true);
    k.embedding = model::embeddingKernels(m, gpu, k.setup);
    k.head = model::headKernels(m, gpu, k.setup);
    {
        // The most loaded GPU's model states (parallel/memory.h): its stage's parameters, sharded as the
        // plan shards them; experts over their data-parallel group of dp/ep ranks.
        double worst = -1;
        for (const StageParams& st : stages) {
            const std::uint64_t ranks = hybrid ? H : D;
            const StateBytes main = modelStateBytes(st.main, m, p.sharding, ranks);
            const StateBytes expert = modelStateBytes(st.expert, m, p.sharding, std::max<std::uint64_t>(1, D / EP));
            // The parameters whose optimizer state the GPU holds (and so steps): its states' bytes over the
            // bytes per parameter (2·s_opt + master, modelStateBytes).
            const double perParameter = 2 * model::bytesPerElement(m.optimizerState) + model::masterBytes(m);
            const double stepped = perParameter > 0 ? (main.optimizer + expert.optimizer) / perParameter : 0.0;
            const model::Kernel opt = model::optimizerKernel(stepped, m, gpu);
            if (opt.seconds > worst) {
                worst = opt.seconds;
                k.optimizer = opt;
            }
        }
    }
    k.timed = p.layerForwardSeconds.empty() && p.computeEfficiency == 0;
    k.smCount = gpu.smCount;

    // Fixed-rate model: FLOPs / achieved FLOP/s with FLOPs = 2·P_layer·B·T + 4·B·T²·d (docs/model.md §2.4), /t.
    const double rate = model::gemmPeak(gpu, m) * p.computeEfficiency;
    auto& lf = out.layerForwardSeconds;
    auto& lb = out.layerBackwardSeconds;
    lf.assign(L, 0.0);
    lb.assign(L, 0.0);
    // Backward = 2× forward, +1× forward with full recomputation (arXiv 2104.04473 §5.1).
    const double bwdFactor = fullRecompute ? 3.0 : 2.0;
    for (std::uint64_t l = 0; l < L; ++l) {
        if (p.layerForwardSeconds.size() == 1)
            lf[l] = p.layerForwardSeconds[0];
        else if (p.layerForwardSeconds.size() == L && L > 0)
            lf[l] = p.layerForwardSeconds[l];
        else if (k.timed) {
            const model::KernelList& list = m.isMoeLayer(l) ? k.moe : k.dense;
            lf[l] = list.forwardSeconds();
            lb[l] = list.backwardSeconds();
            continue;
        } else {
            const bool moeLayer = m.isMoeLayer(l);
            const double active = static_cast<double>(pb.attentionPerLayer + pb.normsPerLayer)
                                  + (moeLayer ? static_cast<double>(pb.routerPerMoeLayer + m.moe.topK * pb.mlpPerLayer)
                                              : static_cast<double>(pb.mlpPerLayer));
            const double flops = (2 * active * B * T + 4 * B * T * T * d) / t;
            lf[l] = rate > 0 ? flops / rate : 0.0;
        }
        lb[l] = bwdFactor * lf[l];
    }
    // The head: 2·B·T·d·V_p/t forward, only in the compute model; the kernel model adds the embedding to
    // the first chunk and the head (final norm, logits, loss) to the last.
    headForward = p.layerForwardSeconds.empty() && rate > 0
                      ? 2 * B * T * d * static_cast<double>(m.paddedVocab()) / t / rate
                      : 0.0;
    chunkForward.assign(chunks, 0.0);
    chunkBackward.assign(chunks, 0.0);
    for (std::uint64_t c = 0; c < chunks; ++c) {
        for (std::uint64_t l = chunkFirst[c]; l < chunkFirst[c + 1]; ++l) {
            chunkForward[c] += lf[l];
            chunkBackward[c] += lb[l];
        }
    }
    if (k.timed) {
        chunkForward[0] += k.embedding.forwardSeconds();
        chunkBackward[0] += k.embedding.backwardSeconds();
        chunkForward[chunks - 1] += k.head.forwardSeconds();
        chunkBackward[chunks - 1] += k.head.backwardSeconds();
    } else {
        chunkForward[chunks - 1] += headForward;
        chunkBackward[chunks - 1] += 2 * headForward;
    }
    out.timeline = pipelineTimeline(p.schedule, P, V, nAcc, chunkForward, chunkBackward);
}

void Builder::run()
{
    out.plan = p;
    bucket = bucketBytesFor(p, m);
    out.plan.bucketBytes = bucket; // as derived: the stages after read the bucket used
    // Not validated and too large to lay out: nothing is derived (validate() names the problem).
    if (p.dp > kMaxDegree || p.pp > kMaxDegree || p.tp > kMaxDegree || p.ep > kMaxDegree
        || p.virtualStages > kMaxDegree
        || static_cast<double>(p.dp) * static_cast<double>(p.pp) * static_cast<double>(p.tp) > static_cast<double>(kMaxGpus))
        return;
    D = std::max<std::uint64_t>(1, p.dp);
    P = std::max<std::uint64_t>(1, p.pp);
    Tt = std::max<std::uint64_t>(1, p.tp);
    EP = std::max<std::uint64_t>(1, p.ep);
    V = p.schedule == PipelineSchedule::Interleaved ? std::max<std::uint64_t>(1, p.virtualStages) : 1;
    chunks = P * V;
    L = m.layers;
    gpus = D * P * Tt;
    moe = m.moe.experts > 0 && m.moeLayers() > 0;
    tied = m.tiedEmbeddings;
    hybrid = p.sharding == Sharding::FsdpHybrid;
    zero3 = p.sharding == Sharding::Zero3 || p.sharding == Sharding::FsdpFull || hybrid;
    sp = p.sequenceParallel && Tt > 1;
    fullRecompute = m.recompute == model::Recompute::Full;
    sa = model::bytesPerElement(m.activations);
    sg = model::bytesPerElement(m.gradients);
    sw = model::bytesPerElement(m.weights);
    pb = model::parameterBreakdown(m);
    bOut = static_cast<double>(pb.rowParallelBiasesPerLayer) / 2;
    H = hybrid ? hybridShardGroupSize(p, cl) : 1;
    const std::uint64_t unit = b.microBatch * b.sequenceLength * D;
    nAcc = unit > 0 ? std::max<std::uint64_t>(1, b.globalBatchTokens / unit) : 1;

    // The plan as derived: partition, assignment and gradient bucket filled in.
    out.plan = p;
    out.plan.bucketBytes = bucket;
    if (out.plan.layerPartition.empty())
        out.plan.layerPartition = defaultPartition(L, chunks);
    if (out.plan.layerPartition.size() != chunks) // not validated: one layer block per chunk as far as possible
        out.plan.layerPartition = defaultPartition(std::max<std::uint64_t>(L, chunks), chunks);
    out.mesh = effectiveAssignment(p);
    if (out.mesh.size() != gpus)
        out.mesh = defaultAssignment(p);
    out.plan.assignment = out.mesh;
    chunkFirst.assign(chunks + 1, 0);
    for (std::uint64_t c = 0; c < chunks; ++c)
        chunkFirst[c + 1] = std::min<std::uint64_t>(L, chunkFirst[c] + out.plan.layerPartition[c]);
    gpuAt.assign(gpus, 0);
    for (std::size_t g = 0; g < out.mesh.size(); ++g) {
        const MeshCoord& c = out.mesh[g];
        if (c.dp < D && c.pp < P && c.tp < Tt)
            gpuAt[(std::uint64_t(c.pp) * D + c.dp) * Tt + c.tp] = static_cast<std::uint32_t>(g);
    }

    buildParams();
    buildGroups();
    buildCalls();
    buildSignature();
    buildTiming();
    buildFigures();
}

} // namespace detail

std::uint64_t hybridShardGroupSize(const ParallelPlan& plan, const Cluster& cluster)
{
    const std::uint64_t h = hybridShardSize(plan, cluster);
    return h == 0 || std::max<std::uint64_t>(1, plan.dp) % h != 0 ? 1 : h;
}

double bucketBytesFor(const ParallelPlan& plan, const model::ModelConfig& model)
{
    if (plan.bucketBytes)
        return *plan.bucketBytes;
    if (plan.sharding == Sharding::Ddp)
        return kPytorchBucketBytes;
    const double parameters = std::max(40e6, 1e6 * static_cast<double>(std::max<std::uint64_t>(1, plan.dp)));
    return parameters * model::bytesPerElement(model.gradients);
}

PlanDerivation derivePlan(const ParallelPlan& plan, const Cluster& cluster, const model::ModelConfig& model,
                          const model::BatchShape& batch, const model::GpuSpec& gpu, const FigureSet& inputs)
{
    PlanDerivation out;
    detail::Builder(plan, cluster, model, batch, gpu, inputs, out).run();
    return out;
}

} // namespace tw::parallel
