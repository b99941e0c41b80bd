// Stage 3 of "The Life of a Token" (Avesani et al., §3 and the worked examples of §5): the GPUs as a
// data × pipeline × tensor (× expert) parallel mesh, the groups that mesh forms, every collective
// call of one optimizer step, the per-strategy communication signature and the figures a teacher
// shows. Formulas: docs/model.md §3; Megatron-LM (Narayanan et al., arXiv 2104.04473);
// Korthikanti et al. (arXiv 2205.05198); ZeRO (Rajbhandari et al., arXiv 1910.02054); PyTorch FSDP.

#include "plan.h"
#include "memory.h"

#include "base/units.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tw::parallel {

namespace {

using model::Phase;
using S = std::vector<std::string>;

constexpr std::uint64_t kMaxDegree = std::uint64_t(1) << 20;
constexpr std::uint64_t kMaxGpus = std::uint64_t(1) << 22;

std::string I(std::uint64_t v) { return formatUnsigned(v); }
std::string N(double v, int decimals = 2) { return formatCount(v, decimals); }
std::string Bytes(double v) { return formatCount(v, 2) + " B"; }

std::string joinList(const std::vector<std::uint64_t>& values)
{
    std::string s;
    for (std::size_t i = 0; i < values.size(); ++i)
        s += (i ? ", " : "") + I(values[i]);
    return s;
}

std::vector<std::uint64_t> divisorsOf(std::uint64_t n)
{
    std::vector<std::uint64_t> small, large;
    for (std::uint64_t k = 1; k * k <= n; ++k)
        if (n % k == 0) {
            small.push_back(k);
            if (k != n / k)
                large.push_back(n / k);
        }
    small.insert(small.end(), large.rbegin(), large.rend());
    return small;
}

std::vector<std::uint64_t> commonDivisors(std::uint64_t a, std::uint64_t b)
{
    std::vector<std::uint64_t> out;
    for (std::uint64_t k : divisorsOf(a))
        if (b % k == 0)
            out.push_back(k);
    return out;
}

std::string modelName(const model::ModelConfig& m) { return m.name.empty() ? std::string("the model") : m.name; }

std::size_t strategyIndex(Strategy s) { return static_cast<std::size_t>(s); }

// The fsdp-hybrid shard group size: the plan's, or the DP ranks of one node in the default layout
// (gpusPerNode / t), lowered to the largest divisor of dp.
std::uint64_t hybridShardSize(const ParallelPlan& plan, const Cluster& cluster)
{
    if (plan.shardGroupSize > 0)
        return plan.shardGroupSize;
    const std::uint64_t t = std::max<std::uint64_t>(1, plan.tp);
    const std::uint64_t perNode = std::max<std::uint64_t>(1, cluster.gpusPerNode / t);
    std::uint64_t best = 1;
    for (std::uint64_t k : divisorsOf(std::max<std::uint64_t>(1, plan.dp)))
        if (k <= perNode)
            best = k;
    return best;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Names

std::string_view toString(Sharding s)
{
    switch (s) {
    case Sharding::Ddp: return "ddp";
    case Sharding::Zero1: return "zero1";
    case Sharding::Zero2: return "zero2";
    case Sharding::Zero3: return "zero3";
    case Sharding::FsdpFull: return "fsdp-full";
    case Sharding::FsdpHybrid: return "fsdp-hybrid";
    }
    return "?";
}

std::optional<Sharding> shardingFromString(std::string_view s)
{
    for (Sharding v : {Sharding::Ddp, Sharding::Zero1, Sharding::Zero2, Sharding::Zero3, Sharding::FsdpFull,
                       Sharding::FsdpHybrid})
        if (toString(v) == s)
            return v;
    return std::nullopt;
}

std::string_view toString(PipelineSchedule s)
{
    switch (s) {
    case PipelineSchedule::GPipe: return "gpipe";
    case PipelineSchedule::OneFOneB: return "1f1b";
    case PipelineSchedule::Interleaved: return "interleaved";
    }
    return "?";
}

std::optional<PipelineSchedule> scheduleFromString(std::string_view s)
{
    for (PipelineSchedule v : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved})
        if (toString(v) == s)
            return v;
    return std::nullopt;
}

std::string_view toString(Strategy s)
{
    switch (s) {
    case Strategy::DP: return "DP";
    case Strategy::PP: return "PP";
    case Strategy::TP: return "TP";
    case Strategy::EP: return "EP";
    }
    return "?";
}

std::string_view toString(CollectiveKind k)
{
    switch (k) {
    case CollectiveKind::AllReduce: return "AllReduce";
    case CollectiveKind::ReduceScatter: return "ReduceScatter";
    case CollectiveKind::AllGather: return "AllGather";
    case CollectiveKind::AllToAll: return "All-to-All";
    case CollectiveKind::SendRecv: return "Send/Recv";
    case CollectiveKind::Broadcast: return "Broadcast";
    }
    return "?";
}

// Ring AllReduce 2(N−1)/N·M, ring ReduceScatter/AllGather and pairwise All-to-All (N−1)/N·M,
// Send/Recv and Broadcast M (docs/model.md §4; nccl-tests doc/PERFORMANCE.md).
double CollectiveCall::bytesSentPerMember(std::uint64_t groupSize) const
{
    if (groupSize <= 1)
        return 0;
    const double n = static_cast<double>(groupSize);
    switch (kind) {
    case CollectiveKind::AllReduce: return 2 * (n - 1) / n * payloadBytes;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather:
    case CollectiveKind::AllToAll: return (n - 1) / n * payloadBytes;
    case CollectiveKind::SendRecv:
    case CollectiveKind::Broadcast: return payloadBytes;
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Mesh and validation

std::vector<MeshCoord> defaultAssignment(const ParallelPlan& plan)
{
    // Megatron's rank order (arXiv 2104.04473 §3): g = tp + t·(dp + d·pp).
    const std::uint64_t t = std::max<std::uint64_t>(1, plan.tp), d = std::max<std::uint64_t>(1, plan.dp);
    const std::uint64_t p = std::max<std::uint64_t>(1, plan.pp);
    const std::uint64_t n = t * d * p;
    std::vector<MeshCoord> mesh;
    if (t > kMaxDegree || d > kMaxDegree || p > kMaxDegree || n > kMaxGpus)
        return mesh;
    mesh.resize(n);
    for (std::uint64_t g = 0; g < n; ++g)
        mesh[g] = MeshCoord{static_cast<std::uint32_t>((g / t) % d), static_cast<std::uint32_t>(g / (t * d)),
                            static_cast<std::uint32_t>(g % t)};
    return mesh;
}

std::vector<MeshCoord> effectiveAssignment(const ParallelPlan& plan)
{
    return plan.assignment.empty() ? defaultAssignment(plan) : plan.assignment;
}

std::vector<std::uint64_t> validTensorDegrees(const model::ModelConfig& model)
{
    // Megatron splits attention by heads and the MLP by columns: t must divide a, n_kv and d_ff.
    std::vector<std::uint64_t> out;
    for (std::uint64_t t : commonDivisors(model.heads, model.kvHeads == 0 ? model.heads : model.kvHeads))
        if (model.ffnSize % t == 0)
            out.push_back(t);
    return out;
}

std::vector<Error> validate(const ParallelPlan& plan, const Cluster& cluster, const model::ModelConfig& model,
                            const model::BatchShape& batch)
{
    std::vector<Error> errors;
    auto fail = [&](std::string path, std::string message) {
        Location where;
        where.jsonPath = std::move(path);
        errors.push_back(makeError(std::move(message), std::move(where)));
    };

    // Scalars that do not depend on the degrees.
    if (!(plan.computeEfficiency >= 0 && plan.computeEfficiency <= 1))
        fail("parallel.compute_efficiency",
             "must be in (0, 1] (achieved / peak FLOP/s) or \"auto\" (0), got " + N(plan.computeEfficiency, 3));
    if (!(std::isfinite(plan.bucketBytes) && plan.bucketBytes > 0))
        fail("parallel.bucket_bytes", "must be a positive number of bytes, got " + N(plan.bucketBytes));
    if (!(std::isfinite(plan.memoryReserveBytes) && plan.memoryReserveBytes >= 0 && plan.memoryReserveBytes < 1e15))
        fail("parallel.memory_reserve_bytes", "must be a number of bytes from 0 to 10^15, got " + N(plan.memoryReserveBytes));
    if (!(std::isfinite(plan.commBufferBytes) && plan.commBufferBytes >= 0 && plan.commBufferBytes < 1e15))
        fail("parallel.comm_buffer_bytes", "must be a number of bytes from 0 to 10^15, got " + N(plan.commBufferBytes));
    const std::size_t L = model.layers;
    if (!plan.layerForwardSeconds.empty() && plan.layerForwardSeconds.size() != 1
        && plan.layerForwardSeconds.size() != L)
        fail("parallel.layer_forward_time_s",
             I(plan.layerForwardSeconds.size()) + " values; give none (compute model), one (every layer) or L = "
                 + I(L) + " (one per layer)");
    for (std::size_t i = 0; i < plan.layerForwardSeconds.size(); ++i) {
        const double s = plan.layerForwardSeconds[i];
        if (!(std::isfinite(s) && s > 0))
            fail("parallel.layer_forward_time_s[" + std::to_string(i) + "]",
                 "must be a positive number of seconds, got " + N(s, 6));
    }

    bool degreesOk = true;
    auto degree = [&](const char* path, std::uint64_t v) {
        if (v < 1 || v > kMaxDegree) {
            fail(path, "must be between 1 and " + I(kMaxDegree) + ", got " + I(v));
            degreesOk = false;
        }
    };
    degree("parallel.dp", plan.dp);
    degree("parallel.pp", plan.pp);
    degree("parallel.tp", plan.tp);
    degree("parallel.ep", plan.ep);
    degree("parallel.virtual_stages", plan.virtualStages);
    if (!degreesOk)
        return errors;

    const std::uint64_t dp = plan.dp, pp = plan.pp, tp = plan.tp, ep = plan.ep, v = plan.virtualStages;
    const std::uint64_t gpus = dp * pp * tp; // each ≤ 2^20: no overflow
    const double clusterGpus = static_cast<double>(cluster.nodes) * static_cast<double>(cluster.gpusPerNode);
    if (static_cast<double>(gpus) != clusterGpus)
        fail("parallel.dp", "dp·pp·tp = " + I(dp) + "·" + I(pp) + "·" + I(tp) + " = " + I(gpus)
                                + " GPUs, but the cluster has " + N(clusterGpus) + " (" + I(cluster.nodes) + " node"
                                + (cluster.nodes == 1 ? "" : "s") + " × " + I(cluster.gpusPerNode)
                                + " GPUs): the degrees must multiply to the number of GPUs");
    if (gpus > kMaxGpus)
        fail("parallel.dp", "dp·pp·tp = " + I(gpus) + " GPUs is more than this program models (" + I(kMaxGpus) + ")");

    // Megatron TP splits attention by heads (and GQA by key/value heads).
    const std::uint64_t kv = model.kvHeads == 0 ? model.heads : model.kvHeads;
    if (model.heads % tp != 0)
        fail("parallel.tp", I(tp) + " does not divide the " + I(model.heads) + " attention heads of " + modelName(model)
                                + "; valid tensor-parallel degrees: " + joinList(validTensorDegrees(model)));
    else if (kv % tp != 0)
        fail("parallel.tp", I(tp) + " does not divide the " + I(kv) + " key/value heads of " + modelName(model)
                                + " (grouped-query attention); valid tensor-parallel degrees: "
                                + joinList(validTensorDegrees(model)));
    else if (model.ffnSize % tp != 0)
        fail("parallel.tp", I(tp) + " does not divide the MLP width d_ff = " + I(model.ffnSize) + " of " + modelName(model)
                                + " (Megatron splits the MLP by columns); valid tensor-parallel degrees: "
                                + joinList(validTensorDegrees(model)));

    // EP is carved out of DP (docs/model.md §3).
    const bool moe = model.moe.experts > 0 && model.moeLayers() > 0;
    if (ep > 1 && !moe)
        fail("parallel.ep", I(ep) + " needs a Mixture-of-Experts model; " + modelName(model)
                                + " has no experts (model.moe.experts = " + I(model.moe.experts) + ")");
    else if (ep > 1 && (dp % ep != 0 || model.moe.experts % ep != 0))
        fail("parallel.ep", I(ep) + (dp % ep != 0 ? " does not divide dp = " + I(dp) + " (expert parallelism is carved out of data parallelism)"
                                                  : " does not divide the " + I(model.moe.experts) + " experts")
                                + "; valid expert-parallel degrees: " + joinList(commonDivisors(model.moe.experts, dp)));

    if (pp > L)
        fail("parallel.pp", I(pp) + " stages for " + I(L) + " layers: every stage needs at least one layer (pp ≤ "
                                + I(L) + ")");

    // N_acc = G/(B·T·dp) (docs/model.md §6, Example 5.1).
    const double bt = static_cast<double>(batch.microBatch) * static_cast<double>(batch.sequenceLength);
    const double perMicroStep = bt * static_cast<double>(dp);
    const double G = static_cast<double>(batch.globalBatchTokens);
    bool nAccOk = false;
    std::uint64_t nAcc = 0;
    if (perMicroStep > 0 && perMicroStep < 9.0e18) {
        const std::uint64_t unit = batch.microBatch * batch.sequenceLength * dp;
        nAccOk = batch.globalBatchTokens % unit == 0 && batch.globalBatchTokens >= unit;
        nAcc = batch.globalBatchTokens / unit;
    }
    if (!nAccOk)
        fail("parallel.dp", "the global batch G = " + N(G) + " tokens is not a multiple of B·T·dp = "
                                + I(batch.microBatch) + "·" + I(batch.sequenceLength) + "·" + I(dp) + " = " + N(perMicroStep)
                                + " tokens: N_acc = " + N(G) + "/" + N(perMicroStep) + " = "
                                + N(perMicroStep > 0 ? G / perMicroStep : 0) + " micro-batches per replica must be a whole number ≥ 1");

    // Interleaving (Megatron, arXiv 2104.04473 §2.2.2): v chunks per stage, m a multiple of p.
    const bool interleaved = plan.schedule == PipelineSchedule::Interleaved;
    if (v > 1 && !interleaved)
        fail("parallel.virtual_stages", I(v) + " model chunks per stage need parallel.schedule = \"interleaved\"");
    if (interleaved) {
        if (pp < 2)
            fail("parallel.schedule", "the interleaved schedule needs at least 2 pipeline stages (pp = " + I(pp) + ")");
        else if (nAccOk && nAcc % pp != 0)
            fail("parallel.schedule", "Megatron's interleaved schedule needs the micro-batches per replica (N_acc = "
                                          + I(nAcc) + ") to be a multiple of pp = " + I(pp));
        if (pp * v > L && pp <= L)
            fail("parallel.virtual_stages", "pp·v = " + I(pp) + "·" + I(v) + " = " + I(pp * v) + " model chunks for "
                                                + I(L) + " layers: every chunk needs at least one layer");
    }

    if (!plan.layerPartition.empty()) {
        if (plan.layerPartition.size() != pp * v) {
            fail("parallel.layer_partition", I(plan.layerPartition.size()) + " entries, need pp·v = " + I(pp * v)
                                                 + " (one per " + (v > 1 ? "virtual stage" : "stage") + ")");
        } else {
            double sum = 0;
            for (std::size_t i = 0; i < plan.layerPartition.size(); ++i) {
                sum += static_cast<double>(plan.layerPartition[i]);
                if (plan.layerPartition[i] < 1)
                    fail("parallel.layer_partition[" + std::to_string(i) + "]",
                         "0 layers: every stage needs at least one layer");
            }
            if (sum != static_cast<double>(L))
                fail("parallel.layer_partition",
                     "the entries sum to " + N(sum) + " layers, the model has " + I(L));
        }
    }

    if (plan.sharding == Sharding::FsdpHybrid && plan.shardGroupSize > 0 && dp % plan.shardGroupSize != 0)
        fail("parallel.shard_group_size", I(plan.shardGroupSize) + " does not divide dp = " + I(dp)
                                              + "; valid shard group sizes: " + joinList(divisorsOf(dp)));

    // The assignment: a bijection from GPUs onto the mesh.
    if (!plan.assignment.empty()) {
        if (plan.assignment.size() != gpus || gpus > kMaxGpus) {
            fail("parallel.assignment", I(plan.assignment.size()) + " entries for dp·pp·tp = " + I(gpus)
                                            + " GPUs: give one place [dp, pp, tp] per GPU");
        } else {
            std::vector<std::uint32_t> first(gpus, std::numeric_limits<std::uint32_t>::max());
            for (std::size_t g = 0; g < plan.assignment.size(); ++g) {
                const MeshCoord& c = plan.assignment[g];
                const std::string path = "parallel.assignment[" + std::to_string(g) + "]";
                if (c.dp >= dp || c.pp >= pp || c.tp >= tp) {
                    std::string what;
                    if (c.dp >= dp)
                        what = "dp " + I(c.dp) + " is out of range 0–" + I(dp - 1);
                    else if (c.pp >= pp)
                        what = "pp " + I(c.pp) + " is out of range 0–" + I(pp - 1);
                    else
                        what = "tp " + I(c.tp) + " is out of range 0–" + I(tp - 1);
                    fail(path, "GPU " + I(g) + ": " + what);
                    continue;
                }
                const std::uint64_t cell = (std::uint64_t(c.pp) * dp + c.dp) * tp + c.tp;
                if (first[cell] != std::numeric_limits<std::uint32_t>::max())
                    fail(path, "GPU " + I(g) + " has the same place (dp " + I(c.dp) + ", pp " + I(c.pp) + ", tp "
                                   + I(c.tp) + ") as GPU " + I(first[cell]));
                else
                    first[cell] = static_cast<std::uint32_t>(g);
            }
        }
    }
    return errors;
}

// ---------------------------------------------------------------------------------------------
// The derivation

namespace {

// Parameters one GPU holds for its stage, split by where the gradients are reduced: "main" over
// the DP group, "expert" over the expert-DP group (EP > 1 only; with EP = 1 experts are main).
struct StageParams {
    std::uint64_t layerCount = 0;
    std::vector<std::uint64_t> layers; // every layer the stage holds, in order (all its chunks)
    std::uint64_t denseLayers = 0, moeLayers = 0;
    double layerMain = 0;      // Σ over its layers of the main parameters
    double embedding = 0;      // stage 0: V_p·d/t + positions
    double output = 0;         // last stage: final norm + head/t (+ tied copy V_p·d/t when pp > 1)
    double embeddingCopy = 0;  // the tied copy alone
    double main = 0, expert = 0;
};

class Builder {
public:
    Builder(const ParallelPlan& plan, const Cluster& cluster, const model::ModelConfig& m,
            const model::BatchShape& b, const model::GpuSpec& gpu, const FigureSet& inputs, PlanDerivation& out)
        : p(plan), cl(cluster), m(m), b(b), gpu(gpu), in(inputs), out(out)
    {
    }

    void run();

private:
    const ParallelPlan& p;
    const Cluster& cl;
    const model::ModelConfig& m;
    const model::BatchShape& b;
    const model::GpuSpec& gpu;
    const FigureSet& in;
    PlanDerivation& out;

    std::uint64_t D = 1, P = 1, Tt = 1, EP = 1, V = 1, chunks = 1, L = 0, nAcc = 1, H = 1, gpus = 1;
    bool moe = false, tied = true, hybrid = false, zero3 = false, sp = false, fullRecompute = false;
    double sa = 2, sg = 2, sw = 2;
    model::ParameterBreakdown pb;
    std::vector<std::uint64_t> chunkFirst; // first layer of each chunk
    std::vector<std::uint32_t> gpuAt;      // (pp·D + dp)·t + tp → GPU
    std::vector<StageParams> stages;
    double bOut = 0; // one row-parallel bias (b_o or b_proj), replicated under TP

    // Group bases (index of the first group of each family; stage ranges derived from them).
    std::uint32_t tpBase = 0, dpBase = 0, shardBase = 0, replicaBase = 0, ppFwdBase = 0, ppBwdBase = 0,
                  ppEmbBase = 0, epBase = 0, expertBase = 0;
    bool haveDp = false, haveReplica = false, haveExpertDp = false;
    std::vector<char> stageHasExperts;
    std::vector<std::uint32_t> expertFirstOf; // first expert-DP group of each stage that has one

    std::vector<CollectiveCall> fwd, bwd, bwdEnd, opt;

    // Per-layer parameter counts on one TP (and EP) rank.
    double layerMainParams(std::uint64_t l) const;
    double layerExpertParams(std::uint64_t l) const;
    std::uint32_t at(std::uint64_t dp, std::uint64_t pp, std::uint64_t tp) const
    {
        return gpuAt[(pp * D + dp) * Tt + tp];
    }
    void addGroup(Strategy s, const char* kind, std::vector<std::uint32_t> members);
    void buildGroups();
    void buildParams();
    void buildCalls();
    void buildSignature();
    void buildTiming();
    void buildFigures();
    void addKernelFigures(FigureSet& f) const;

    CollectiveCall& call(std::vector<CollectiveCall>& list, CollectiveKind kind, Strategy s, Phase phase,
                         std::uint32_t first, std::uint32_t count, double payload, std::uint64_t repeat, int layer,
                         std::string what, const std::string& formula)
    {
        CollectiveCall& c = list.emplace_back();
        c.kind = kind;
        c.strategy = s;
        c.phase = phase;
        c.firstGroup = first;
        c.groupCount = count;
        c.payloadBytes = payload;
        c.repeat = repeat;
        c.layer = layer;
        c.microBatch = -1;
        c.what = std::move(what);
        c.formula = formula;
        return c;
    }

    // Stage ranges of the group families.
    std::uint32_t tpFirst(std::uint64_t stage) const { return tpBase + static_cast<std::uint32_t>(stage * D); }
    std::uint32_t dpFirst(std::uint64_t stage) const { return dpBase + static_cast<std::uint32_t>(stage * Tt); }
    std::uint32_t shardFirst(std::uint64_t stage) const
    {
        return shardBase + static_cast<std::uint32_t>(stage * Tt * (D / H));
    }
    std::uint32_t replicaFirst(std::uint64_t stage) const { return replicaBase + static_cast<std::uint32_t>(stage * Tt * H); }

    // ZeRO-3 pattern on one unit of parameters (arXiv 1910.02054 §7; FSDP FULL_SHARD).
    enum class ZeroOp { GatherForForward, GatherForBackward, ReduceGradients };
    void zeroUnitCall(ZeroOp op, std::uint64_t stage, double mainParams, double expertParams, int layer,
                      const std::string& unit);
    void tpLayerForward(std::uint64_t stage, int layer, Phase phase, const char* prefix, bool moeLayer);
    void tpLayerBackward(std::uint64_t stage, int layer, bool moeLayer);
    void epCalls(std::uint64_t stage, int layer, Phase phase, bool backward, const char* prefix);

    // Strings and numbers used by many calls.
    double tpM = 0, ppM = 0, epM = 0;
    std::string tpFormula, ppFormula, epFormula;
    std::uint32_t mainShardSize() const { return static_cast<std::uint32_t>(hybrid ? H : D); }

    // Signature bookkeeping: per strategy, per GPU.
    std::array<std::vector<double>, 4> gpuBytes, gpuCalls;
    std::array<std::uint32_t, 4> busiest{};

    // Timing.
    std::vector<double> chunkForward, chunkBackward;
    double headForward = 0;

    // Figures.
    S cite(std::initializer_list<const char*> ids) const
    {
        S s;
        for (const char* id : ids)
            if (out.figures.find(id) || in.find(id))
                s.emplace_back(id);
        return s;
    }
    std::string busiestFormula(Strategy s) const;
    std::string stageParamsFormula(std::uint64_t stage) const;
};

double Builder::layerMainParams(std::uint64_t l) const
{
    // Megatron TP (arXiv 2104.04473 §3): attention and MLP weights and column-parallel biases are split
    // over t; norms and the row-parallel biases b_o, b_proj are replicated.
    const double t = static_cast<double>(Tt);
    const double attn = static_cast<double>(pb.attentionPerLayer), mlp = static_cast<double>(pb.mlpPerLayer);
    const double norms = static_cast<double>(pb.normsPerLayer);
    if (m.isMoeLayer(l)) {
        const double mainPart = (attn - bOut) / t + bOut + norms + static_cast<double>(pb.routerPerMoeLayer);
        return EP > 1 ? mainPart : mainPart + layerExpertParams(l);
    }
    return (attn + mlp - 2 * bOut) / t + 2 * bOut + norms;
}

double Builder::layerExpertParams(std::uint64_t l) const
{
    if (!m.isMoeLayer(l))
        return 0;
    // Each EP rank holds E/ep experts, each split over t like a dense MLP.
    const double t = static_cast<double>(Tt), mlp = static_cast<double>(pb.mlpPerLayer);
    return static_cast<double>(m.moe.experts / EP) * ((mlp - bOut) / t + bOut);
}

void Builder::addGroup(Strategy s, const char* kind, std::vector<std::uint32_t> members)
{
    Group& g = out.comm.groups.emplace_back();
    g.strategy = s;
    g.kind = kind;
    const std::uint64_t perNode = std::max<std::uint64_t>(1, cl.gpusPerNode);
    const std::uint64_t node = members.empty() ? 0 : members.front() / perNode;
    for (std::uint32_t x : members)
        if (x / perNode != node) {
            g.crossesNodes = true;
            break;
        }
    g.members = std::move(members);
}

void Builder::buildGroups()
{
    auto& groups = out.comm.groups;
    std::size_t expected = 0;
    if (Tt > 1)
        expected += P * D;
    if (D > 1)
        expected += P * Tt * (hybrid ? D / H + H : 1) + (moe && EP > 1 ? P * Tt * EP : 0);
    if (P > 1)
        expected += 2 * (chunks - 1) * D * Tt + D * Tt;
    if (EP > 1)
        expected += P * Tt * (D / EP);
    groups.reserve(expected);
    auto index = [&] { return static_cast<std::uint32_t>(groups.size()); };

    // TP groups (fixed dp, pp; ordered by tp), by pp then dp.
    tpBase = index();
    if (Tt > 1)
        for (std::uint64_t s = 0; s < P; ++s)
            for (std::uint64_t d = 0; d < D; ++d) {
                std::vector<std::uint32_t> mem(Tt);
                for (std::uint64_t t = 0; t < Tt; ++t)
                    mem[t] = at(d, s, t);
                addGroup(Strategy::TP, "tp", std::move(mem));
            }
    // DP groups (fixed pp, tp; ordered by dp), by pp then tp — or fsdp-hybrid's shard and replica groups.
    dpBase = index();
    if (D > 1 && !hybrid) {
        haveDp = true;
        for (std::uint64_t s = 0; s < P; ++s)
            for (std::uint64_t t = 0; t < Tt; ++t) {
                std::vector<std::uint32_t> mem(D);
                for (std::uint64_t d = 0; d < D; ++d)
                    mem[d] = at(d, s, t);
                addGroup(Strategy::DP, "dp", std::move(mem));
            }
    }
    shardBase = index();
    if (hybrid && H > 1) {
        for (std::uint64_t s = 0; s < P; ++s)
            for (std::uint64_t t = 0; t < Tt; ++t)
                for (std::uint64_t j = 0; j < D / H; ++j) {
                    std::vector<std::uint32_t> mem(H);
                    for (std::uint64_t r = 0; r < H; ++r)
                        mem[r] = at(j * H + r, s, t);
                    addGroup(Strategy::DP, "dp-shard", std::move(mem));
                }
    }
    replicaBase = index();
    if (hybrid && D / H > 1) {
        haveReplica = true;
        for (std::uint64_t s = 0; s < P; ++s)
            for (std::uint64_t t = 0; t < Tt; ++t)
                for (std::uint64_t r = 0; r < H; ++r) {
                    std::vector<std::uint32_t> mem(D / H);
                    for (std::uint64_t j = 0; j < D / H; ++j)
                        mem[j] = at(j * H + r, s, t);
                    addGroup(Strategy::DP, "dp-replica", std::move(mem));
                }
    }
    // Expert-DP groups (fixed pp, tp, dp % ep; the dp/ep ranks holding the same experts), only on
    // stages that hold experts. Ordered by pp, tp, dp % ep.
    expertBase = index();
    expertFirstOf.assign(P, expertBase);
    if (moe && EP > 1 && D / EP > 1) {
        for (std::uint64_t s = 0; s < P; ++s) {
            if (!stageHasExperts[s])
                continue;
            haveExpertDp = true;
            expertFirstOf[s] = index();
            for (std::uint64_t t = 0; t < Tt; ++t)
                for (std::uint64_t r = 0; r < EP; ++r) {
                    std::vector<std::uint32_t> mem(D / EP);
                    for (std::uint64_t j = 0; j < D / EP; ++j)
                        mem[j] = at(j * EP + r, s, t);
                    addGroup(Strategy::DP, "dp-expert", std::move(mem));
                }
        }
    }
    // Pipeline pairs per boundary b between chunk b (stage b mod pp) and chunk b+1, by (b, dp, tp):
    // first every forward pair {sender, receiver}, then the backward pairs {receiver, sender}.
    ppFwdBase = index();
    if (P > 1) {
        for (int dir = 0; dir < 2; ++dir) {
            if (dir == 1)
                ppBwdBase = index();
            for (std::uint64_t c = 0; c + 1 < chunks; ++c)
                for (std::uint64_t d = 0; d < D; ++d)
                    for (std::uint64_t t = 0; t < Tt; ++t) {
                        const std::uint32_t from = at(d, c % P, t), to = at(d, (c + 1) % P, t);
                        addGroup(Strategy::PP, "pp-pair", dir == 0 ? std::vector<std::uint32_t>{from, to}
                                                                   : std::vector<std::uint32_t>{to, from});
                    }
        }
    }
    // Tied embedding: first and last stage AllReduce the two copies' gradients (Megatron), by (dp, tp).
    ppEmbBase = index();
    if (P > 1 && tied)
        for (std::uint64_t d = 0; d < D; ++d)
            for (std::uint64_t t = 0; t < Tt; ++t)
                addGroup(Strategy::PP, "pp-embedding", {at(d, 0, t), at(d, P - 1, t)});
    // EP groups: blocks of ep consecutive DP ranks (fixed pp, tp), by pp, tp, dp / ep.
    epBase = index();
    if (EP > 1) {
        for (std::uint64_t s = 0; s < P; ++s)
            for (std::uint64_t t = 0; t < Tt; ++t)
                for (std::uint64_t j = 0; j < D / EP; ++j) {
                    std::vector<std::uint32_t> mem(EP);
                    for (std::uint64_t r = 0; r < EP; ++r)
                        mem[r] = at(j * EP + r, s, t);
                    addGroup(Strategy::EP, "ep", std::move(mem));
                }
    }
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

// One ZeRO-3 / FSDP collective of a unit (a layer, the embedding, the head), for the main parameters
// over the shard group and for the expert parameters over the expert-DP group.
void Builder::zeroUnitCall(ZeroOp op, std::uint64_t stage, double mainParams, double expertParams, int layer,
                           const std::string& unit)
{
    if (!zero3)
        return;
    const bool gather = op != ZeroOp::ReduceGradients;
    auto& list = op == ZeroOp::GatherForForward ? fwd : bwd;
    const Phase phase = op == ZeroOp::GatherForForward ? Phase::Forward : Phase::Backward;
    const CollectiveKind kind = gather ? CollectiveKind::AllGather : CollectiveKind::ReduceScatter;
    const double s = gather ? sw : sg;
    const std::string sName = gather ? "s_w " : "s_g ";
    const std::string what = op == ZeroOp::GatherForForward  ? "parameter AllGather before forward: "
                             : op == ZeroOp::GatherForBackward ? "parameter AllGather before backward: "
                                                               : "gradient ReduceScatter: ";
    const std::uint32_t n = mainShardSize();
    if (n > 1 && mainParams > 0) {
        const std::string why = op == ZeroOp::GatherForForward  ? " (gathered from " + I(n) + " shards; ZeRO-3 / FSDP)"
                                : op == ZeroOp::GatherForBackward ? " (freed after forward, gathered again; ZeRO-3 / FSDP)"
                                                                  : " (each rank keeps 1/" + I(n) + " of the summed gradients)";
        call(list, kind, Strategy::DP, phase, hybrid ? shardFirst(stage) : dpFirst(stage),
             static_cast<std::uint32_t>(hybrid ? Tt * (D / H) : Tt), mainParams * s, nAcc, layer, what + unit,
             N(mainParams) + " parameters per rank of this unit · " + sName + N(s) + " = " + Bytes(mainParams * s) + why);
    }
    if (haveExpertDp && expertParams > 0)
        call(list, kind, Strategy::DP, phase, expertFirstOf[stage], static_cast<std::uint32_t>(Tt * EP),
             expertParams * s, nAcc, layer, "expert " + what + unit,
             N(expertParams) + " expert parameters per EP rank · " + sName + N(s) + " = " + Bytes(expertParams * s));
}

// Megatron TP forward of one layer (arXiv 2104.04473 §3, Fig. 4: g after attention and after the MLP);
// with sequence parallelism each AllReduce is a ReduceScatter + AllGather pair (arXiv 2205.05198 §4.2.2).
void Builder::tpLayerForward(std::uint64_t stage, int layer, Phase phase, const char* prefix, bool moeLayer)
{
    auto& list = phase == Phase::Forward ? fwd : bwd;
    const std::string pre = prefix;
    const std::uint32_t first = tpFirst(stage), count = static_cast<std::uint32_t>(D);
    if (Tt > 1) {
        if (sp) {
            call(list, CollectiveKind::AllGather, Strategy::TP, phase, first, count, tpM, nAcc, layer,
                 pre + "sequence-parallel AllGather before attention", tpFormula);
            call(list, CollectiveKind::ReduceScatter, Strategy::TP, phase, first, count, tpM, nAcc, layer,
                 pre + "sequence-parallel ReduceScatter after attention", tpFormula);
            call(list, CollectiveKind::AllGather, Strategy::TP, phase, first, count, tpM, nAcc, layer,
                 pre + "sequence-parallel AllGather before the MLP", tpFormula);
        } else {
            call(list, CollectiveKind::AllReduce, Strategy::TP, phase, first, count, tpM, nAcc, layer,
                 pre + "attention output AllReduce", tpFormula);
        }
    }
    if (moeLayer && EP > 1)
        epCalls(stage, layer, phase, false, prefix);
    if (Tt > 1) {
        if (sp)
            call(list, CollectiveKind::ReduceScatter, Strategy::TP, phase, first, count, tpM, nAcc, layer,
                 pre + "sequence-parallel ReduceScatter after the MLP", tpFormula);
        else
            call(list, CollectiveKind::AllReduce, Strategy::TP, phase, first, count, tpM, nAcc, layer,
                 pre + "MLP output AllReduce", tpFormula);
    }
}

// Backward of one layer: the conjugate operators (f's AllReduce of the input gradients; under SP the
// AllGathers become ReduceScatters and vice versa); full recomputation first re-runs the forward.
void Builder::tpLayerBackward(std::uint64_t stage, int layer, bool moeLayer)
{
    if (fullRecompute)
        tpLayerForward(stage, layer, Phase::Backward, "recomputed forward: ", moeLayer);
    const std::uint32_t first = tpFirst(stage), count = static_cast<std::uint32_t>(D);
    if (Tt > 1) {
        if (sp) {
            call(bwd, CollectiveKind::AllGather, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "sequence-parallel AllGather of the output gradient (backward of the ReduceScatter after the MLP)",
                 tpFormula);
        }
    }
    if (moeLayer && EP > 1)
        epCalls(stage, layer, Phase::Backward, true, "");
    if (Tt > 1) {
        if (sp) {
            call(bwd, CollectiveKind::ReduceScatter, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "sequence-parallel ReduceScatter of the MLP input gradient (backward of the AllGather before the MLP)",
                 tpFormula);
            call(bwd, CollectiveKind::AllGather, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "sequence-parallel AllGather of the attention output gradient (backward of the ReduceScatter after "
                 "attention)",
                 tpFormula);
            call(bwd, CollectiveKind::ReduceScatter, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "sequence-parallel ReduceScatter of the attention input gradient (backward of the AllGather before "
                 "attention)",
                 tpFormula);
        } else {
            call(bwd, CollectiveKind::AllReduce, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "MLP input-gradient AllReduce", tpFormula);
            call(bwd, CollectiveKind::AllReduce, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "attention input-gradient AllReduce", tpFormula);
        }
    }
}

// MoE dispatch and combine All-to-All in the EP group (Switch Transformer, Fedus et al. 2021; GShard).
void Builder::epCalls(std::uint64_t stage, int layer, Phase phase, bool backward, const char* prefix)
{
    auto& list = phase == Phase::Forward ? fwd : bwd;
    const std::uint32_t first = epBase + static_cast<std::uint32_t>(stage * Tt * (D / EP));
    const std::uint32_t count = static_cast<std::uint32_t>(Tt * (D / EP));
    const std::string pre = prefix;
    if (!backward) {
        call(list, CollectiveKind::AllToAll, Strategy::EP, phase, first, count, epM, nAcc, layer,
             pre + "MoE dispatch All-to-All (tokens to their experts)", epFormula);
        call(list, CollectiveKind::AllToAll, Strategy::EP, phase, first, count, epM, nAcc, layer,
             pre + "MoE combine All-to-All (expert outputs back)", epFormula);
    } else {
        call(list, CollectiveKind::AllToAll, Strategy::EP, phase, first, count, epM, nAcc, layer,
             "MoE combine backward All-to-All (output gradients to the experts)", epFormula);
        call(list, CollectiveKind::AllToAll, Strategy::EP, phase, first, count, epM, nAcc, layer,
             "MoE dispatch backward All-to-All (input gradients back)", epFormula);
    }
}

void Builder::buildCalls()
{
    const std::string sB = I(b.microBatch), sT = I(b.sequenceLength), sd = I(m.hiddenSize), st = I(Tt);
    const double BTd = static_cast<double>(b.microBatch) * static_cast<double>(b.sequenceLength)
                       * static_cast<double>(m.hiddenSize);
    // TP: B·T·d·s_a per AllReduce, independent of t (docs/model.md §6, Example 5.3).
    tpM = BTd * sa;
    tpFormula = "B·T·d·s_a = " + sB + "·" + sT + "·" + sd + "·" + N(sa) + " = " + Bytes(tpM)
                + " (the hidden state [B,T,d]; does not depend on t)";
    // PP: B·T·d·s_a per boundary, /t with Megatron's scatter/gather or SP (docs/model.md §6, Example 5.2).
    ppM = Tt > 1 ? BTd * sa / static_cast<double>(Tt) : BTd * sa;
    ppFormula = Tt > 1 ? "B·T·d·s_a/t = " + sB + "·" + sT + "·" + sd + "·" + N(sa) + "/" + st + " = " + Bytes(ppM)
                             + (sp ? " (sequence parallelism: each TP rank sends its T/t positions)"
                                   : " (Megatron's scatter/gather: each TP rank sends 1/t, arXiv 2104.04473 §4.1)")
                       : "B·T·d·s_a = " + sB + "·" + sT + "·" + sd + "·" + N(sa) + " = " + Bytes(ppM)
                             + " (the hidden state at the boundary)";
    // EP: k·CF·B·T·d·s_a per rank per All-to-All (docs/model.md §3), /t under SP.
    if (moe) {
        const double k = static_cast<double>(m.moe.topK), cf = m.moe.capacityFactor;
        epM = k * cf * BTd * sa / (sp ? static_cast<double>(Tt) : 1.0);
        epFormula = std::string(sp ? "k·CF·B·T·d·s_a/t = " : "k·CF·B·T·d·s_a = ") + I(m.moe.topK) + "·" + N(cf) + "·"
                    + sB + "·" + sT + "·" + sd + "·" + N(sa) + (sp ? "/" + st : std::string()) + " = " + Bytes(epM)
                    + " (the rank's routed tokens, uniform routing)";
    }

    // Forward, chunk by chunk.
    for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t s = c % P;
        if (c == 0) {
            zeroUnitCall(ZeroOp::GatherForForward, 0, stages[0].embedding, 0, -1, "embedding");
            if (Tt > 1)
                call(fwd, sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, Strategy::TP, Phase::Forward,
                     tpFirst(0), static_cast<std::uint32_t>(D), tpM, nAcc, -1,
                     sp ? "vocab-parallel embedding output ReduceScatter (into sequence-parallel slices)"
                        : "vocab-parallel embedding output AllReduce",
                     tpFormula);
        }
        for (std::uint64_t l = chunkFirst[c]; l < chunkFirst[c + 1]; ++l) {
            const int li = static_cast<int>(l);
            const std::string unit = "layer " + std::to_string(l);
            zeroUnitCall(ZeroOp::GatherForForward, s, layerMainParams(l), layerExpertParams(l), li, unit);
            tpLayerForward(s, li, Phase::Forward, "", m.isMoeLayer(l));
        }
        if (c + 1 == chunks) {
            zeroUnitCall(ZeroOp::GatherForForward, s, stages[s].output, 0, -1, "final norm and head");
            if (Tt > 1 && sp)
                call(fwd, CollectiveKind::AllGather, Strategy::TP, Phase::Forward, tpFirst(s),
                     static_cast<std::uint32_t>(D), tpM, nAcc, -1,
                     "sequence-parallel AllGather before the head", tpFormula);
        } else if (P > 1) {
            const std::uint64_t to = (c + 1) % P;
            call(fwd, CollectiveKind::SendRecv, Strategy::PP, Phase::Forward,
                 ppFwdBase + static_cast<std::uint32_t>(c * D * Tt), static_cast<std::uint32_t>(D * Tt), ppM, nAcc,
                 static_cast<int>(chunkFirst[c + 1] - 1),
                 "activations stage " + std::to_string(s) + " → stage " + std::to_string(to)
                     + (V > 1 ? " (chunk " + std::to_string(c) + " → " + std::to_string(c + 1) + ")" : std::string())
                     + "; members {sender, receiver}",
                 ppFormula);
        }
    }
    // Backward, chunk by chunk in reverse.
    for (std::uint64_t c = chunks; c-- > 0;) {
        const std::uint64_t s = c % P;
        if (c + 1 == chunks) {
            zeroUnitCall(ZeroOp::GatherForBackward, s, stages[s].output, 0, -1, "final norm and head");
            if (Tt > 1)
                call(bwd, sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, Strategy::TP, Phase::Backward,
                     tpFirst(s), static_cast<std::uint32_t>(D), tpM, nAcc, -1,
                     sp ? "head input-gradient ReduceScatter (backward of the AllGather before the head)"
                        : "head input-gradient AllReduce",
                     tpFormula);
            zeroUnitCall(ZeroOp::ReduceGradients, s, stages[s].output, 0, -1, "final norm and head");
        } else if (P > 1) {
            const std::uint64_t from = (c + 1) % P;
            call(bwd, CollectiveKind::SendRecv, Strategy::PP, Phase::Backward,
                 ppBwdBase + static_cast<std::uint32_t>(c * D * Tt), static_cast<std::uint32_t>(D * Tt), ppM, nAcc,
                 static_cast<int>(chunkFirst[c + 1] - 1),
                 "activation gradients stage " + std::to_string(from) + " → stage " + std::to_string(s)
                     + (V > 1 ? " (chunk " + std::to_string(c + 1) + " → " + std::to_string(c) + ")" : std::string())
                     + "; members {sender, receiver}",
                 ppFormula);
        }
        for (std::uint64_t l = chunkFirst[c + 1]; l-- > chunkFirst[c];) {
            const int li = static_cast<int>(l);
            const std::string unit = "layer " + std::to_string(l);
            zeroUnitCall(ZeroOp::GatherForBackward, s, layerMainParams(l), layerExpertParams(l), li, unit);
            tpLayerBackward(s, li, m.isMoeLayer(l));
            zeroUnitCall(ZeroOp::ReduceGradients, s, layerMainParams(l), layerExpertParams(l), li, unit);
        }
        if (c == 0) {
            zeroUnitCall(ZeroOp::GatherForBackward, 0, stages[0].embedding, 0, -1, "embedding");
            if (Tt > 1 && sp)
                call(bwd, CollectiveKind::AllGather, Strategy::TP, Phase::Backward, tpFirst(0),
                     static_cast<std::uint32_t>(D), tpM, nAcc, -1,
                     "embedding output-gradient AllGather (backward of its ReduceScatter)", tpFormula);
            zeroUnitCall(ZeroOp::ReduceGradients, 0, stages[0].embedding, 0, -1, "embedding");
        }
    }

    // Once per step (or per micro-step) at the end of the backward pass, then the optimizer.
    for (std::uint64_t s = 0; s < P; ++s) {
        const StageParams& st = stages[s];
        const std::string where = P > 1 ? " (stage " + std::to_string(s) + ")" : std::string();
        const std::string mainG = N(st.main) + " parameters per rank · s_g " + N(sg) + " = " + Bytes(st.main * sg);
        const std::string mainW = N(st.main) + " parameters per rank · s_w " + N(sw) + " = " + Bytes(st.main * sw);
        const std::string expG = N(st.expert) + " expert parameters per EP rank · s_g " + N(sg) + " = " + Bytes(st.expert * sg);
        const std::string expW = N(st.expert) + " expert parameters per EP rank · s_w " + N(sw) + " = " + Bytes(st.expert * sw);
        const std::string nonExpert = EP > 1 && moe ? " (non-expert parameters)" : "";
        const bool expertGroups = haveExpertDp && stageHasExperts[s];
        const std::uint32_t expertFirst = expertFirstOf[s];
        const auto expertCount = static_cast<std::uint32_t>(Tt * EP);
        switch (p.sharding) {
        case Sharding::Ddp:
            // DDP: one AllReduce of P·s_g per step, no_sync during accumulation (docs/model.md §6, Example 5.1).
            if (haveDp)
                call(bwdEnd, CollectiveKind::AllReduce, Strategy::DP, Phase::Backward, dpFirst(s),
                     static_cast<std::uint32_t>(Tt), st.main * sg, 1, -1, "gradient AllReduce" + nonExpert + where,
                     mainG + " (once per optimizer step, in " + N(std::ceil(st.main * sg / p.bucketBytes))
                         + " buckets of ≤ " + Bytes(p.bucketBytes) + ")");
            if (expertGroups)
                call(bwdEnd, CollectiveKind::AllReduce, Strategy::DP, Phase::Backward, expertFirst, expertCount,
                     st.expert * sg, 1, -1, "expert gradient AllReduce" + where, expG);
            break;
        case Sharding::Zero1:
        case Sharding::Zero2: {
            // ZeRO-1: gradients reduce-scattered once per step; ZeRO-2 every micro-step; updated
            // parameters all-gathered after the optimizer step (arXiv 1910.02054 §5, §7).
            const std::uint64_t rep = p.sharding == Sharding::Zero2 ? nAcc : 1;
            if (haveDp) {
                call(bwdEnd, CollectiveKind::ReduceScatter, Strategy::DP, Phase::Backward, dpFirst(s),
                     static_cast<std::uint32_t>(Tt), st.main * sg, rep, -1, "gradient ReduceScatter" + nonExpert + where,
                     mainG);
                call(opt, CollectiveKind::AllGather, Strategy::DP, Phase::Optimizer, dpFirst(s),
                     static_cast<std::uint32_t>(Tt), st.main * sw, 1, -1,
                     "updated parameter AllGather" + nonExpert + where, mainW);
            }
            if (expertGroups) {
                call(bwdEnd, CollectiveKind::ReduceScatter, Strategy::DP, Phase::Backward, expertFirst, expertCount,
                     st.expert * sg, rep, -1, "expert gradient ReduceScatter" + where, expG);
                call(opt, CollectiveKind::AllGather, Strategy::DP, Phase::Optimizer, expertFirst, expertCount,
                     st.expert * sw, 1, -1, "updated expert parameter AllGather" + where, expW);
            }
            break;
        }
        case Sharding::Zero3:
        case Sharding::FsdpFull: break; // all per unit above
        case Sharding::FsdpHybrid:
            // HYBRID_SHARD: the gradient shard of each rank is AllReduced across the replica groups.
            if (haveReplica)
                call(bwdEnd, CollectiveKind::AllReduce, Strategy::DP, Phase::Backward, replicaFirst(s),
                     static_cast<std::uint32_t>(Tt * H), st.main * sg / static_cast<double>(H), 1, -1,
                     "gradient shard AllReduce across replicas" + nonExpert + where,
                     "parameters per rank·s_g/h = " + N(st.main) + "·" + N(sg) + "/" + I(H) + " = "
                         + Bytes(st.main * sg / static_cast<double>(H)) + " (each rank's 1/h shard)");
            break;
        }
    }
    if (P > 1 && tied) {
        const double M = static_cast<double>(pb.embedding) / static_cast<double>(Tt) * sg;
        call(bwdEnd, CollectiveKind::AllReduce, Strategy::PP, Phase::Backward, ppEmbBase,
             static_cast<std::uint32_t>(D * Tt), M, 1, -1,
             "tied embedding gradient AllReduce between the first and the last stage",
             "V_p·d/t·s_g = " + I(m.paddedVocab()) + "·" + sd + "/" + st + "·" + N(sg) + " = " + Bytes(M)
                 + " (Megatron keeps a copy of the word embedding on the last stage)");
    }

    auto& calls = out.comm.calls;
    calls.reserve(fwd.size() + bwd.size() + bwdEnd.size() + opt.size());
    for (auto* list : {&fwd, &bwd, &bwdEnd, &opt})
        for (CollectiveCall& c : *list)
            calls.push_back(std::move(c));
}

void Builder::buildSignature()
{
    auto& comm = out.comm;
    for (std::size_t s = 0; s < 4; ++s) {
        gpuBytes[s].assign(gpus, 0.0);
        gpuCalls[s].assign(gpus, 0.0);
    }
    // Per GPU: Σ repeat·(bytes one member sends) over the calls it takes part in. Calls over the same
    // groups (every layer's TP AllReduces of one stage …) are summed first when the range's groups have
    // one size, so each GPU is visited once per range rather than once per call.
    struct RangeSum {
        double bytes = 0, calls = 0;
    };
    std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, RangeSum> ranges;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> rangeSize; // 0: sizes differ
    auto uniformSize = [&](std::uint32_t first, std::uint32_t count) {
        auto [it, fresh] = rangeSize.try_emplace({first, count}, 0);
        if (fresh && count > 0) {
            const std::size_t n = comm.groups[first].members.size();
            bool same = true;
            for (std::uint32_t gi = first; gi < first + count && same; ++gi)
                same = comm.groups[gi].members.size() == n;
            it->second = same ? n : 0;
        }
        return it->second;
    };
    for (const CollectiveCall& c : comm.calls) {
        if (c.kind == CollectiveKind::SendRecv || c.groupCount == 0)
            continue;
        const std::size_t n = uniformSize(c.firstGroup, c.groupCount);
        if (n == 0)
            continue;
        RangeSum& r = ranges[{strategyIndex(c.strategy), c.firstGroup, c.groupCount}];
        r.bytes += static_cast<double>(c.repeat) * c.bytesSentPerMember(n);
        r.calls += static_cast<double>(c.repeat);
    }
    for (const auto& [key, r] : ranges) {
        const auto [s, first, count] = key;
        double* bytes = gpuBytes[s].data();
        double* calls = gpuCalls[s].data();
        for (std::uint32_t gi = first; gi < first + count; ++gi)
            for (std::uint32_t g : comm.groups[gi].members) {
                bytes[g] += r.bytes;
                calls[g] += r.calls;
            }
    }
    for (const CollectiveCall& c : comm.calls) {
        if (c.kind != CollectiveKind::SendRecv && (c.groupCount == 0 || uniformSize(c.firstGroup, c.groupCount) != 0))
            continue; // summed above
        const std::size_t s = strategyIndex(c.strategy);
        double* bytes = gpuBytes[s].data();
        double* calls = gpuCalls[s].data();
        const double rep = static_cast<double>(c.repeat);
        std::size_t lastSize = 0;
        double perMember = 0;
        for (std::uint32_t gi = c.firstGroup; gi < c.firstGroup + c.groupCount; ++gi) {
            const auto& mem = comm.groups[gi].members;
            if (c.kind == CollectiveKind::SendRecv) {
                if (mem.size() == 2) {
                    bytes[mem[0]] += rep * c.payloadBytes;
                    calls[mem[0]] += rep;
                    calls[mem[1]] += rep;
                }
                continue;
            }
            if (mem.size() != lastSize) {
                lastSize = mem.size();
                perMember = rep * c.bytesSentPerMember(lastSize);
            }
            for (std::uint32_t g : mem) {
                bytes[g] += perMember;
                calls[g] += rep;
            }
        }
    }
    comm.bytesSentPerGpu.assign(gpus, 0.0);
    comm.signature.clear();
    for (std::size_t s = 0; s < 4; ++s) {
        StrategySignature sig;
        sig.strategy = static_cast<Strategy>(s);
        std::uint32_t arg = 0;
        for (std::size_t g = 0; g < gpus; ++g) {
            comm.bytesSentPerGpu[g] += gpuBytes[s][g];
            sig.totalBytesPerStep += gpuBytes[s][g];
            sig.callsPerStep = std::max(sig.callsPerStep, gpuCalls[s][g]);
            if (gpuBytes[s][g] > gpuBytes[s][arg])
                arg = static_cast<std::uint32_t>(g);
        }
        busiest[s] = arg;
        sig.bytesPerGpuPerStep = gpus ? gpuBytes[s][arg] : 0.0;
        comm.signature.push_back(std::move(sig));
    }
    for (const Group& g : comm.groups) {
        StrategySignature& sig = comm.signature[strategyIndex(g.strategy)];
        ++sig.groups;
        sig.groupsCrossingNodes += g.crossesNodes ? 1 : 0;
        sig.peers = std::max<std::uint64_t>(sig.peers, g.members.empty() ? 0 : g.members.size() - 1);
    }
    // The signature's payload: M of the call that moves the most bytes per step (ties: the larger M).
    double dominant[4] = {-1, -1, -1, -1};
    for (const CollectiveCall& c : comm.calls) {
        if (c.groupCount == 0)
            continue;
        const std::size_t s = strategyIndex(c.strategy);
        const std::uint64_t size = comm.groups[c.firstGroup].members.size();
        const double moved = static_cast<double>(c.repeat) * c.groupCount * static_cast<double>(size) * c.bytesSentPerMember(size);
        StrategySignature& sig = comm.signature[s];
        if (moved > dominant[s] || (moved == dominant[s] && c.payloadBytes > sig.payloadBytes)) {
            dominant[s] = moved;
            sig.payloadBytes = c.payloadBytes;
        }
    }
    StrategySignature& dpSig = comm.signature[0];
    dpSig.present = D > 1;
    const std::string accText = "N_acc = " + I(nAcc);
    switch (p.sharding) {
    case Sharding::Ddp: dpSig.frequency = "once per optimizer step (gradient AllReduce)"; break;
    case Sharding::Zero1: dpSig.frequency = "once per optimizer step (gradient ReduceScatter + parameter AllGather)"; break;
    case Sharding::Zero2:
        dpSig.frequency = "gradient ReduceScatter every micro-batch (" + accText + "× per step), parameter AllGather once per step";
        break;
    case Sharding::Zero3:
    case Sharding::FsdpFull:
        dpSig.frequency = "3× per layer per micro-batch (AllGather before forward and backward, gradient ReduceScatter)";
        break;
    case Sharding::FsdpHybrid:
        dpSig.frequency = "3× per layer per micro-batch inside shard groups of " + I(H)
                          + ", gradient shard AllReduce across replicas once per optimizer step";
        break;
    }
    StrategySignature& ppSig = comm.signature[1];
    ppSig.present = P > 1;
    ppSig.frequency = "2× per boundary per micro-batch (activations forward, gradients backward)"
                      + std::string(tied && P > 1 ? "; tied embedding AllReduce once per step" : "");
    StrategySignature& tpSig = comm.signature[2];
    tpSig.present = Tt > 1;
    const int perLayer = fullRecompute ? 6 : 4;
    tpSig.frequency = sp ? std::to_string(2 * perLayer) + "× per layer per micro-batch (ReduceScatter + AllGather for each of "
                               + std::to_string(perLayer) + " AllReduces)"
                         : std::to_string(perLayer) + "× per layer per micro-batch (2 forward, " + std::to_string(perLayer - 2)
                               + " backward)";
    StrategySignature& epSig = comm.signature[3];
    epSig.present = EP > 1;
    epSig.frequency = std::to_string(fullRecompute ? 6 : 4)
                      + "× per MoE layer per micro-batch (dispatch + combine, forward and backward"
                      + (fullRecompute ? ", recomputed forward)" : ")");
    for (StrategySignature& sig : comm.signature)
        if (!sig.present)
            sig.frequency = "not used (degree 1)";
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
            const model::Kernel opt = model::optimizerKernel(main.weights + expert.weights,
                                                             main.gradients + expert.gradients,
                                                             main.optimizer + expert.optimizer, gpu);
            if (opt.seconds > worst) {
                worst = opt.seconds;
                k.optimizer = opt;
            }
        }
    }
    k.timed = p.layerForwardSeconds.empty() && p.computeEfficiency == 0;

    // Fixed-rate model: FLOPs / achieved FLOP/s with FLOPs = 2·P_layer·B·T + 4·B·T²·d (docs/model.md §2.4), /t.
    const double rate = gpu.peak(m.weights) * p.computeEfficiency;
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

// "GPU 3: 1 AllReduce over 8 ranks: 2·(8−1)/8·248,879,616 B = 435,539,328 B" — the busiest GPU's calls
// of one strategy, summed by kind and group size.
std::string Builder::busiestFormula(Strategy s) const
{
    const std::size_t si = strategyIndex(s);
    const auto& comm = out.comm;
    if (gpus == 0 || gpuBytes[si][busiest[si]] <= 0)
        return "no " + std::string(toString(s)) + " calls: 0 B";
    const std::uint32_t g = busiest[si];
    struct Term {
        CollectiveKind kind;
        std::size_t n;
        double calls = 0, payload = 0, bytes = 0;
        double firstPayload = -1; // the payload when every call of the term has the same one
        bool samePayload = true;
    };
    std::vector<Term> terms;
    std::vector<char> member(comm.groups.size(), 0);
    for (std::size_t gi = 0; gi < comm.groups.size(); ++gi) {
        const Group& grp = comm.groups[gi];
        if (grp.strategy == s && std::find(grp.members.begin(), grp.members.end(), g) != grp.members.end())
            member[gi] = 1;
    }
    for (const CollectiveCall& c : comm.calls) {
        if (c.strategy != s)
            continue;
        for (std::uint32_t gi = c.firstGroup; gi < c.firstGroup + c.groupCount; ++gi) {
            if (!member[gi])
                continue;
            const auto& mem = comm.groups[gi].members;
            const bool sends = c.kind != CollectiveKind::SendRecv || mem.front() == g;
            if (!sends)
                break;
            auto it = std::find_if(terms.begin(), terms.end(),
                                   [&](const Term& t) { return t.kind == c.kind && t.n == mem.size(); });
            if (it == terms.end()) {
                terms.push_back(Term{c.kind, mem.size()});
                it = terms.end() - 1;
            }
            const double rep = static_cast<double>(c.repeat);
            if (it->firstPayload < 0)
                it->firstPayload = c.payloadBytes;
            else if (it->firstPayload != c.payloadBytes)
                it->samePayload = false;
            it->calls += rep;
            it->payload += rep * c.payloadBytes;
            it->bytes += c.kind == CollectiveKind::SendRecv ? rep * c.payloadBytes : rep * c.bytesSentPerMember(mem.size());
            break;
        }
    }
    std::string text = "GPU " + I(g) + " (busiest): ";
    double total = 0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        const Term& t = terms[i];
        const std::string n = I(t.n);
        std::string factor;
        switch (t.kind) {
        case CollectiveKind::AllReduce: factor = "2·(" + n + "−1)/" + n + "·"; break;
        case CollectiveKind::SendRecv:
        case CollectiveKind::Broadcast: factor = ""; break;
        default: factor = "(" + n + "−1)/" + n + "·"; break;
        }
        text += (i ? " + " : "") + N(t.calls) + "× " + std::string(toString(t.kind))
                + (t.kind == CollectiveKind::SendRecv ? " sent" : " in groups of " + n) + ": ";
        if (t.samePayload)
            text += (t.calls == 1 ? std::string() : N(t.calls) + "·") + factor + Bytes(t.firstPayload);
        else
            text += factor + Bytes(t.payload) + " (M summed over the calls)";
        text += " = " + Bytes(t.bytes);
        total += t.bytes;
    }
    if (terms.size() > 1)
        text += "; total " + Bytes(total);
    return text + " (ring / pairwise algorithms)";
}

std::string Builder::stageParamsFormula(std::uint64_t s) const
{
    const StageParams& st = stages[s];
    if (P == 1 && Tt == 1 && EP == 1)
        return "P = " + N(st.main) + " (every DP rank holds the whole model)";
    const std::string t = I(Tt);
    std::string text = P > 1 ? "stage " + I(s) + " (" + I(st.layerCount) + " layer" + (st.layerCount == 1 ? "" : "s")
                                   + ")"
                             : std::string("every rank");
    if (Tt > 1)
        text += ", one TP rank of " + t;
    text += ": ";
    std::vector<std::string> parts;
    if (st.denseLayers > 0) {
        const double one = (static_cast<double>(pb.attentionPerLayer + pb.mlpPerLayer) - 2 * bOut) / static_cast<double>(Tt)
                           + 2 * bOut + static_cast<double>(pb.normsPerLayer);
        parts.push_back(I(st.denseLayers) + " layers·"
                        + (Tt > 1 ? "((attention " + I(pb.attentionPerLayer) + " + MLP " + I(pb.mlpPerLayer)
                                        + " − row-parallel biases " + N(2 * bOut) + ")/" + t + " + norms "
                                        + I(pb.normsPerLayer) + " + biases " + N(2 * bOut) + ")"
                                  : "(attention " + I(pb.attentionPerLayer) + " + MLP " + I(pb.mlpPerLayer) + " + norms "
                                        + I(pb.normsPerLayer) + ")")
                        + " = " + I(st.denseLayers) + "·" + N(one));
    }
    if (st.moeLayers > 0) {
        double sum = 0;
        for (std::uint64_t l : st.layers)
            if (m.isMoeLayer(l))
                sum += layerMainParams(l);
        parts.push_back(I(st.moeLayers) + " MoE layers (attention, norms, router"
                        + std::string(EP > 1 ? "; experts counted apart" : ", " + I(m.moe.experts) + " experts") + ") = "
                        + N(sum));
    }
    if (st.embedding > 0)
        parts.push_back("embedding " + I(pb.embedding) + (Tt > 1 ? "/" + t : std::string()) + " + positions "
                        + I(pb.positions));
    if (st.output > 0) {
        std::string o = "final norm " + I(pb.finalNorm);
        if (pb.head > 0)
            o += " + head " + I(pb.head) + (Tt > 1 ? "/" + t : std::string());
        if (st.embeddingCopy > 0)
            o += " + tied embedding copy " + I(pb.embedding) + (Tt > 1 ? "/" + t : std::string());
        parts.push_back(o);
    }
    for (std::size_t i = 0; i < parts.size(); ++i)
        text += (i ? " + " : "") + parts[i];
    return text + " = " + N(st.main);
}

// The kernel model's figures (docs/compute.md): one layer's time by kernel class and pass, the optimizer
// step, and the step's MFU and HFU on the compute-only timeline.
void Builder::addKernelFigures(FigureSet& f) const
{
    using model::KernelClass;
    using model::KernelPass;
    const ComputeKernels& k = out.kernels;
    const bool denseAny = L > m.moeLayers() || !moe;
    const model::KernelList& layer = denseAny ? k.dense : k.moe;
    const std::string which = denseAny ? "one dense layer" : "one MoE layer";
    const std::array<std::pair<KernelClass, const char*>, 3> kinds{
        {{KernelClass::Gemm, "gemm"}, {KernelClass::Attention, "attention"}, {KernelClass::MemoryBound, "memory"}}};
    const std::array<std::pair<KernelPass, const char*>, 3> passes{
        {{KernelPass::Forward, "forward"}, {KernelPass::Backward, "backward"}, {KernelPass::Recompute, "recompute"}}};
    for (const auto& [kind, kname] : kinds) {
        for (const auto& [pass, pname] : passes) {
            double secs = 0, flops = 0, bytes = 0, count = 0;
            for (const model::Kernel& x : layer.kernels)
                if (x.kind == kind && x.pass == pass) {
                    secs += x.seconds;
                    flops += x.flops;
                    bytes += x.bytes;
                    ++count;
                }
            f.add({"plan.kernel." + std::string(kname) + "." + pname,
                   "Kernel time: " + std::string(kname) + ", " + pname + " (" + which + ")", secs, "s",
                   "Σ over " + I(count) + " " + kname + " kernels (" + pname + ") of " + which + " on one GPU: "
                       + N(flops) + " FLOP, " + Bytes(bytes) + " → " + formatSeconds(secs)
                       + (k.timed ? "" : " (not used: fixed-rate model or override)"),
                   {}});
        }
    }
    double slowestBwd = 0;
    for (double x : out.layerBackwardSeconds)
        slowestBwd = std::max(slowestBwd, x);
    f.add({"plan.layer_backward_seconds", "Layer backward time per micro-batch (with recomputation)", slowestBwd, "s",
           k.timed ? "backward + recomputed kernels of the slowest layer = " + formatSeconds(slowestBwd)
                   : std::string(fullRecompute ? "3× forward (2× backward + 1× recomputed)" : "2× forward") + " = "
                         + formatSeconds(slowestBwd),
           k.timed ? cite({"plan.kernel.gemm.backward", "plan.kernel.attention.backward", "plan.kernel.memory.backward",
                           "plan.kernel.gemm.recompute", "plan.kernel.attention.recompute",
                           "plan.kernel.memory.recompute"})
                   : cite({"plan.layer_forward_seconds"})});
    f.add({"plan.optimizer_step_seconds", "Optimizer step time (busiest GPU)", k.optimizer.seconds, "s",
           "read + write weights and optimizer states, read gradients: " + Bytes(k.optimizer.bytes) + " / ("
               + N(gpu.memoryBandwidth / 1e9) + " GB/s·" + N(gpu.memoryFraction, 2) + ") = "
               + formatSeconds(k.optimizer.seconds) + " (kernel model; not in the pipeline timeline)",
           {}});
    // Model FLOPs: 2 per multiply-add forward, 4 backward (no recomputation); hardware FLOPs are what the
    // GPUs execute: the recomputed kernels too, flash attention's causal half with its backward
    // recomputation (Chowdhery et al. 2022, App. B; docs/compute.md).
    double modelFlops = 0, hwFlops = 0;
    for (std::uint64_t l = 0; l < L; ++l) {
        const model::KernelList& list = m.isMoeLayer(l) ? k.moe : k.dense;
        modelFlops += list.flops(KernelPass::Forward) + list.flops(KernelPass::Backward);
        hwFlops += list.hardwareFlops();
    }
    for (const model::KernelList* list : {&k.embedding, &k.head}) {
        modelFlops += list->flops(KernelPass::Forward) + list->flops(KernelPass::Backward);
        hwFlops += list->hardwareFlops();
    }
    const double scale = static_cast<double>(nAcc * D * Tt); // micro-batches × DP replicas × TP shards
    modelFlops *= scale;
    hwFlops *= scale;
    const double stepSeconds = out.timeline.makespan + k.optimizer.seconds;
    const double peak = gpu.peak(m.weights);
    const double denom = static_cast<double>(gpus) * peak * stepSeconds;
    f.add({"plan.model_flops_per_step", "Model FLOPs per step (kernel list)", modelFlops, "FLOP",
           "Σ GEMM and attention FLOPs of every layer and the head, forward + backward, per GPU × micro-batches "
           + I(nAcc) + " × dp " + I(D) + " × tp " + I(Tt) + " = " + N(modelFlops),
           {}});
    f.add({"plan.hardware_flops_per_step", "Hardware FLOPs per step (with recomputation)", hwFlops, "FLOP",
           "executed FLOPs: the kernels with recomputation; flash attention's causal half, its backward 2.5× = " + N(hwFlops), {}});
    f.add({"plan.mfu", "Model FLOPs utilization (compute timeline)", denom > 0 ? modelFlops / denom : 0.0, "",
           "model FLOPs / (GPUs · peak · (pipeline makespan + optimizer step)) = " + N(modelFlops) + " / (" + I(gpus)
               + "·" + N(peak / 1e12) + "·10¹²·" + formatSeconds(stepSeconds) + ") (no communication)",
           cite({"plan.model_flops_per_step", "plan.peak_flops", "pp.makespan", "plan.optimizer_step_seconds"})});
    f.add({"plan.hfu", "Hardware FLOPs utilization (compute timeline)", denom > 0 ? hwFlops / denom : 0.0, "",
           "hardware FLOPs / (GPUs · peak · (pipeline makespan + optimizer step)) = " + N(hwFlops) + " / (" + I(gpus)
               + "·" + N(peak / 1e12) + "·10¹²·" + formatSeconds(stepSeconds) + ")",
           cite({"plan.hardware_flops_per_step", "plan.peak_flops", "pp.makespan", "plan.optimizer_step_seconds"})});
}

void Builder::buildFigures()
{
    FigureSet& f = out.figures;
    const std::string sB = I(b.microBatch), sT = I(b.sequenceLength), sd = I(m.hiddenSize), sG = I(b.globalBatchTokens);
    const std::string sdp = I(D), spp = I(P), stp = I(Tt), sep = I(EP);

    // The plan's inputs.
    f.add({"plan.nodes", "Nodes", static_cast<double>(cl.nodes), "",
           "input: " + I(cl.nodes) + (cl.nodes == 1 ? " node" : " nodes"), {}});
    f.add({"plan.gpus_per_node", "GPUs per node", static_cast<double>(cl.gpusPerNode), "",
           "input: " + I(cl.gpusPerNode) + " GPUs per node", {}});
    f.add({"plan.gpus", "GPUs", static_cast<double>(cl.gpuCount()), "",
           "nodes × GPUs per node = " + I(cl.nodes) + " × " + I(cl.gpusPerNode) + " = " + I(cl.gpuCount())
               + " = dp·pp·tp = " + sdp + "·" + spp + "·" + stp,
           {"plan.nodes", "plan.gpus_per_node"}});
    f.add({"plan.dp", "Data-parallel degree dp", static_cast<double>(D), "",
           "input: " + sdp + " model replicas, each trained on its own micro-batches", {}});
    f.add({"plan.pp", "Pipeline-parallel degree pp", static_cast<double>(P), "",
           "input: " + spp + " pipeline stage" + (P == 1 ? "" : "s") + ", each holding consecutive layers", {}});
    f.add({"plan.tp", "Tensor-parallel degree tp", static_cast<double>(Tt), "",
           "input: each layer split over " + stp + " GPU" + (Tt == 1 ? "" : "s") + " (Megatron: heads and MLP columns)", {}});
    f.add({"plan.ep", "Expert-parallel degree ep", static_cast<double>(EP), "",
           "input: " + (EP > 1 ? "the experts spread over " + sep + " DP ranks (E/ep = " + I(m.moe.experts / EP)
                                     + " experts each)"
                               : std::string("every DP rank holds all experts")),
           {}});
    f.add({"plan.virtual_stages", "Model chunks per stage v", static_cast<double>(V), "",
           "input: v = " + I(V) + (V > 1 ? " (interleaved schedule)" : ""), {}});
    if (hybrid)
        f.add({"plan.shard_group_size", "FSDP shard group size h", static_cast<double>(H), "",
               p.shardGroupSize > 0 ? "input: h = " + I(H) + " consecutive DP ranks"
                                    : "the DP ranks of one node: largest divisor of dp = " + sdp + " ≤ GPUs per node / t = "
                                          + I(cl.gpusPerNode) + "/" + stp + " → " + I(H),
               p.shardGroupSize > 0 ? S{} : S{"plan.dp", "plan.gpus_per_node", "plan.tp"}});
    f.add({"plan.compute_efficiency", "Achieved / peak FLOP/s", p.computeEfficiency, "",
           p.computeEfficiency > 0 ? "input: " + N(p.computeEfficiency * 100, 1) + "% (Megatron-LM Table 1 reports 44–52%)"
                                   : std::string("auto (0): layer times from the kernel model (docs/compute.md)"),
           {}});
    f.add({"plan.peak_flops", "GPU peak FLOP/s (weights precision)", gpu.peak(m.weights), "FLOP/s",
           (gpu.name.empty() ? gpu.id : gpu.name) + ", dense " + std::string(model::toString(m.weights)) + ": "
               + N(gpu.peak(m.weights) / 1e12) + " TFLOP/s (datasheet)",
           {}});
    f.add({"plan.bucket_bytes", "DDP bucket size", p.bucketBytes, "B",
           "input: " + Bytes(p.bucketBytes) + (p.bucketBytes == 25.0 * 1024 * 1024 ? " (PyTorch's default 25 MiB)" : ""), {}});

    // The signature's numbers as figures of each strategy's namespace (docs/model.md §3):
    // calls and peers first, the largest payload and the total after the strategy's own figures.
    auto signatureHead = [&](Strategy st, const std::string& prefix) {
        const StrategySignature& r = out.comm.signature[strategyIndex(st)];
        if (!r.present)
            return;
        const std::string name(toString(st));
        f.add({prefix + "calls_per_gpu_per_step", name + " calls per GPU per step", r.callsPerStep, "",
               "Σ repeat over the " + name + " calls the busiest GPU takes part in = " + N(r.callsPerStep) + " ("
                   + r.frequency + ")",
               {"dp.n_acc"}});
        f.add({prefix + "peers", name + " peers per GPU", static_cast<double>(r.peers), "",
               "members of the largest " + name + " group − 1 = " + I(r.peers + 1) + " − 1 = " + I(r.peers), {}});
    };
    auto signatureTail = [&](Strategy st, const std::string& prefix) {
        const StrategySignature& r = out.comm.signature[strategyIndex(st)];
        if (!r.present)
            return;
        const std::string name(toString(st));
        std::string what;
        for (const CollectiveCall& c : out.comm.calls)
            if (c.strategy == st && c.payloadBytes == r.payloadBytes) {
                what = std::string(toString(c.kind)) + ", " + c.what + ": " + c.formula;
                break;
            }
        f.add({prefix + "payload_bytes", name + " payload M (the call moving most bytes)", r.payloadBytes, "B",
               "the " + name + " call that moves the most bytes per step: " + what, {}});
        f.add({prefix + "total_bytes_per_step", name + " bytes sent per step, all GPUs", r.totalBytesPerStep, "B",
               "Σ over the " + I(gpus) + " GPUs of the bytes each sends for " + name + " = " + Bytes(r.totalBytesPerStep)
                   + " (" + I(r.groups) + " groups, " + I(r.groupsCrossingNodes) + " leave a node)",
               {prefix + "bytes_per_gpu_per_step"}});
    };

    // DP (docs/model.md §6, Example 5.1).
    f.add({"dp.n_acc", "Micro-batches per replica per step N_acc", static_cast<double>(nAcc), "",
           "G/(B·T·dp) = " + sG + "/(" + sB + "·" + sT + "·" + sdp + ") = " + I(nAcc)
               + " (gradient accumulation micro-steps)",
           cite({"batch.G", "batch.B", "batch.T", "plan.dp"})});
    signatureHead(Strategy::DP, "dp.");
    std::uint64_t bigStage = 0;
    for (std::uint64_t s = 0; s < P; ++s)
        if (stages[s].main > stages[bigStage].main)
            bigStage = s;
    const StageParams& big = stages[bigStage];
    const bool pure = P == 1 && Tt == 1 && EP == 1;
    f.add({"dp.params_per_rank", "Parameters one DP rank reduces", big.main, "params", stageParamsFormula(bigStage),
           pure ? cite({"model.parameters"})
                : cite({"model.params.attention", "model.params.mlp", "model.params.norms", "model.params.embedding",
                        "model.params.positions", "model.params.head", "model.params.router", "plan.pp", "plan.tp",
                        "model.layers"})});
    const double gradBytes = big.main * sg;
    f.add({"dp.grad_allreduce_bytes", "DP gradient payload M_DP", gradBytes, "B",
           std::string(pure ? "P·s_g = " : "parameters per rank·s_g = ") + N(big.main) + "·" + N(sg) + " = "
               + Bytes(gradBytes)
               + (p.sharding == Sharding::Ddp ? " (one AllReduce per optimizer step)"
                                              : " (reduce-scattered instead of AllReduced under " + std::string(toString(p.sharding)) + ")"),
           cite({pure ? "model.parameters" : "dp.params_per_rank", "model.bytes.gradients"})});
    f.add({"dp.buckets", "DDP gradient buckets", std::ceil(gradBytes / p.bucketBytes), "",
           "⌈M_DP / bucket⌉ = ⌈" + Bytes(gradBytes) + " / " + Bytes(p.bucketBytes) + "⌉ = "
               + N(std::ceil(gradBytes / p.bucketBytes)) + " (AllReduces that overlap the backward pass)",
           {"dp.grad_allreduce_bytes", "plan.bucket_bytes"}});
    if (moe && EP > 1) {
        double expert = 0;
        for (const StageParams& st : stages)
            expert = std::max(expert, st.expert);
        f.add({"dp.expert_grad_bytes", "Expert gradient payload (expert-DP group)", expert * sg, "B",
               "expert parameters per EP rank·s_g = " + N(expert) + "·" + N(sg) + " = " + Bytes(expert * sg)
                   + " (E/ep = " + I(m.moe.experts / EP) + " experts per layer; reduced over dp/ep = " + I(D / EP)
                   + " ranks" + (D / EP > 1 ? ")" : ": no other rank holds them, nothing to reduce)"),
               cite({"model.params.experts", "plan.ep", "plan.dp", "model.bytes.gradients"})});
    }
    const auto& sig = out.comm.signature;
    f.add({"dp.bytes_per_gpu_per_step", "DP bytes sent per GPU per step", sig[0].bytesPerGpuPerStep, "B",
           busiestFormula(Strategy::DP), {"dp.grad_allreduce_bytes", "dp.n_acc", "plan.dp"}});
    signatureTail(Strategy::DP, "dp.");

    // ZeRO / FSDP.
    if (p.sharding != Sharding::Ddp) {
        const double n = static_cast<double>(hybrid ? H : D);
        f.add({"zero.shard_params", "Parameters each rank keeps (sharded)", big.main / n, "params",
               "parameters per rank / " + std::string(hybrid ? "h" : "dp") + " = " + N(big.main) + " / " + N(n) + " = "
                   + N(big.main / n) + (p.sharding == Sharding::Zero1 ? " (ZeRO-1 shards only the optimizer state)"
                                        : p.sharding == Sharding::Zero2 ? " (ZeRO-2 shards optimizer state and gradients)"
                                                                        : " (parameters, gradients and optimizer state)"),
               cite({"dp.params_per_rank", hybrid ? "plan.shard_group_size" : "plan.dp"})});
        // The same plan under DDP: 2(N−1)/N·M_DP per step (per rank, ring).
        const double ddp = D > 1 ? 2 * (static_cast<double>(D) - 1) / static_cast<double>(D) * gradBytes : 0.0;
        f.add({"zero.ddp_bytes_per_gpu_per_step", "DDP bytes per GPU per step (for comparison)", ddp, "B",
               "2·(dp−1)/dp·M_DP = 2·(" + sdp + "−1)/" + sdp + "·" + Bytes(gradBytes) + " = " + Bytes(ddp),
               {"plan.dp", "dp.grad_allreduce_bytes"}});
        const double ratio = ddp > 0 ? sig[0].bytesPerGpuPerStep / ddp : 0.0;
        f.add({"zero.ratio_to_ddp", "DP traffic relative to DDP", ratio, "",
               "DP bytes per GPU per step / DDP's = " + Bytes(sig[0].bytesPerGpuPerStep) + " / " + Bytes(ddp) + " = "
                   + N(ratio, 3)
                   + (zero3 && !hybrid ? " (ZeRO-3 / FSDP: 1.5× DDP per micro-step, 3× per step at N_acc = 2; arXiv 1910.02054 §7)"
                                       : ""),
               {"dp.bytes_per_gpu_per_step", "zero.ddp_bytes_per_gpu_per_step"}});
        if (zero3) {
            const double perMicro = D > 1 || H > 1 ? 3 * (n - 1) / n * gradBytes : 0.0;
            f.add({"zero.bytes_per_gpu_per_microstep", "ZeRO-3 bytes per GPU per micro-step (s_w = s_g)", perMicro, "B",
                   "3·(N−1)/N·M (AllGather forward, AllGather backward, ReduceScatter) = 3·(" + N(n) + "−1)/" + N(n) + "·"
                       + Bytes(gradBytes) + " = " + Bytes(perMicro),
                   {"dp.grad_allreduce_bytes", hybrid ? "plan.shard_group_size" : "plan.dp"}});
        }
        if (hybrid)
            f.add({"zero.replica_allreduce_bytes", "Gradient shard AllReduced across replicas", gradBytes / static_cast<double>(H),
                   "B",
                   "M_DP / h = " + Bytes(gradBytes) + " / " + I(H) + " = " + Bytes(gradBytes / static_cast<double>(H))
                       + " over dp/h = " + I(D / H) + " replicas"
                       + (D / H > 1 ? " once per step" : ": one replica, nothing to reduce"),
                   {"dp.grad_allreduce_bytes", "plan.shard_group_size"}});
    }

    // PP (docs/model.md §6, Example 5.2).
    signatureHead(Strategy::PP, "pp.");
    f.add({"pp.boundaries", "Pipeline boundaries", static_cast<double>(chunks - 1), "",
           "pp·v − 1 = " + spp + "·" + I(V) + " − 1 = " + I(chunks - 1), {"plan.pp", "plan.virtual_stages"}});
    f.add({"pp.boundary_bytes_fwd", "Boundary activation per micro-batch (forward)", ppM, "B",
           ppFormula + "; the same size flows back as its gradient",
           cite({"batch.B", "batch.T", "model.hidden_size", "model.bytes.activations", "plan.tp"})});
    f.add({"pp.boundary_bytes_fwd_bwd", "Boundary traffic per micro-batch (forward + backward)", 2 * ppM, "B",
           "2·" + Bytes(ppM) + " = " + Bytes(2 * ppM), {"pp.boundary_bytes_fwd"}});
    f.add({"pp.sendrecv_per_step", "Send/Recv calls per pipeline per step", 2.0 * static_cast<double>((chunks - 1) * nAcc),
           "", "2·boundaries·N_acc = 2·" + I(chunks - 1) + "·" + I(nAcc) + " = " + I(2 * (chunks - 1) * nAcc),
           {"pp.boundaries", "dp.n_acc"}});
    if (P > 1 && tied)
        f.add({"pp.embedding_allreduce_bytes", "Tied embedding gradient AllReduce (first ↔ last stage)",
               static_cast<double>(pb.embedding) / static_cast<double>(Tt) * sg, "B",
               "V_p·d/t·s_g = " + I(m.paddedVocab()) + "·" + sd + "/" + stp + "·" + N(sg) + " = "
                   + Bytes(static_cast<double>(pb.embedding) / static_cast<double>(Tt) * sg) + " once per step (Megatron)",
               cite({"model.vocab_padded", "model.hidden_size", "plan.tp", "model.bytes.gradients"})});
    f.add({"pp.bytes_per_gpu_per_step", "PP bytes sent per GPU per step", sig[1].bytesPerGpuPerStep, "B",
           busiestFormula(Strategy::PP), {"pp.boundary_bytes_fwd", "dp.n_acc"}});
    signatureTail(Strategy::PP, "pp.");

    // Layer times and stage times.
    double slowest = 0;
    std::uint64_t slowestLayer = 0;
    for (std::uint64_t l = 0; l < L; ++l)
        if (out.layerForwardSeconds[l] > slowest) {
            slowest = out.layerForwardSeconds[l];
            slowestLayer = l;
        }
    {
        std::string formula;
        S inputs;
        if (!p.layerForwardSeconds.empty()) {
            formula = "input: " + formatSeconds(slowest) + " per layer forward per micro-batch"
                      + (p.layerForwardSeconds.size() == 1 ? " (every layer)" : " (slowest layer " + I(slowestLayer) + ")");
        } else if (out.kernels.timed) {
            const model::KernelList& list = m.isMoeLayer(slowestLayer) ? out.kernels.moe : out.kernels.dense;
            formula = "Σ forward kernels of one layer on one GPU: GEMMs "
                      + formatSeconds(list.seconds(model::KernelClass::Gemm, model::KernelPass::Forward)) + " + attention "
                      + formatSeconds(list.seconds(model::KernelClass::Attention, model::KernelPass::Forward))
                      + " + memory-bound "
                      + formatSeconds(list.seconds(model::KernelClass::MemoryBound, model::KernelPass::Forward)) + " = "
                      + formatSeconds(slowest) + " (kernel model, docs/compute.md; tokenwire-cli kernels lists them)";
            inputs = cite({"plan.kernel.gemm.forward", "plan.kernel.attention.forward", "plan.kernel.memory.forward"});
        } else {
            const double B = static_cast<double>(b.microBatch), T = static_cast<double>(b.sequenceLength);
            const bool moeLayer = m.isMoeLayer(slowestLayer);
            const double active = static_cast<double>(pb.attentionPerLayer + pb.normsPerLayer)
                                  + (moeLayer ? static_cast<double>(pb.routerPerMoeLayer + m.moe.topK * pb.mlpPerLayer)
                                              : static_cast<double>(pb.mlpPerLayer));
            const double flops = (2 * active * B * T + 4 * B * T * T * static_cast<double>(m.hiddenSize)) / static_cast<double>(Tt);
            formula = "(2·P_layer·B·T + 4·B·T²·d)/t / (peak·efficiency) = (2·" + N(active) + "·" + sB + "·" + sT + " + 4·"
                      + sB + "·" + sT + "²·" + sd + ")/" + stp + " / (" + N(gpu.peak(m.weights) / 1e12) + "·10¹² FLOP/s·"
                      + N(p.computeEfficiency, 3) + ") = " + N(flops) + " FLOP / "
                      + N(gpu.peak(m.weights) * p.computeEfficiency / 1e12) + "·10¹² FLOP/s = " + formatSeconds(slowest)
                      + (moeLayer ? " (MoE layer: k experts active per token)" : "");
            inputs = cite({"batch.B", "batch.T", "model.hidden_size", "plan.tp", "plan.peak_flops",
                           "plan.compute_efficiency", "model.params.attention", "model.params.mlp"});
        }
        f.add({"plan.layer_forward_seconds", "Layer forward time per micro-batch", slowest, "s", formula, inputs});
    }
    addKernelFigures(f);
    const double bwdFactor = fullRecompute ? 3.0 : 2.0;
    std::vector<double> stageTime(P, 0.0);
    for (std::uint64_t c = 0; c < chunks; ++c)
        stageTime[c % P] += chunkForward[c] + chunkBackward[c];
    double maxStage = 0, sumStage = 0;
    std::uint64_t bottleneck = 0;
    for (std::uint64_t s = 0; s < P; ++s) {
        sumStage += stageTime[s];
        if (stageTime[s] > maxStage) {
            maxStage = stageTime[s];
            bottleneck = s;
        }
        const StageParams& st = stages[s];
        std::string formula = "forward + backward per micro-batch over " + I(st.layerCount) + " layer"
                              + (st.layerCount == 1 ? "" : "s") + ": ";
        double layerSum = 0, layerBwd = 0;
        for (std::uint64_t l : st.layers) {
            layerSum += out.layerForwardSeconds[l];
            layerBwd += out.layerBackwardSeconds[l];
        }
        if (out.kernels.timed) {
            formula += "Σ layer forward + Σ layer backward (kernel model) = " + formatSeconds(layerSum) + " + "
                       + formatSeconds(layerBwd);
            if (s == 0)
                formula += " + embedding " + formatSeconds(out.kernels.embedding.forwardSeconds()
                                                           + out.kernels.embedding.backwardSeconds());
            if (s == P - 1)
                formula += " + head " + formatSeconds(out.kernels.head.forwardSeconds()
                                                      + out.kernels.head.backwardSeconds());
            formula += " = " + formatSeconds(stageTime[s]);
        } else {
            formula += "(1 + " + N(bwdFactor) + ")·Σ layer forward = " + N(1 + bwdFactor) + "·" + formatSeconds(layerSum);
            if (s == P - 1 && headForward > 0)
                formula += " + head 3·" + formatSeconds(headForward);
            formula += " = " + formatSeconds(stageTime[s])
                       + (fullRecompute ? " (backward 2× forward + 1× recomputed)" : " (backward = 2× forward)");
        }
        f.add({"pp.stage_time.s" + std::to_string(s), "Stage " + std::to_string(s) + " time per micro-batch",
               stageTime[s], "s", formula, {"plan.layer_forward_seconds"}});
    }
    f.add({"pp.bottleneck_stage_time", "Bottleneck stage time per micro-batch", maxStage, "s",
           "max over stages = stage " + I(bottleneck) + ": " + formatSeconds(maxStage) + " ("
               + I(stages[bottleneck].layerCount) + " layers)",
           {"pp.stage_time.s" + std::to_string(bottleneck)}});
    const double mean = P ? sumStage / static_cast<double>(P) : 0.0;
    const double balance = maxStage > 0 ? mean / maxStage : 1.0;
    f.add({"pp.balance", "Pipeline balance (mean / slowest stage)", balance, "",
           "mean stage time / bottleneck = " + formatSeconds(mean) + " / " + formatSeconds(maxStage) + " = " + N(balance, 3)
               + " (1 = perfectly balanced)",
           {"pp.bottleneck_stage_time"}});
    const double m_ = static_cast<double>(nAcc);
    const double analytic = m_ > 0 ? (static_cast<double>(P) - 1) / (static_cast<double>(V) * m_) : 0.0;
    f.add({"pp.bubble_fraction_formula", "Bubble fraction, textbook formula", analytic, "",
           V > 1 ? "(p−1)/(v·m) = (" + spp + "−1)/(" + I(V) + "·" + I(nAcc) + ") = " + N(analytic, 4)
                       + " (Megatron interleaved, arXiv 2104.04473 §2.2.2; idle over ideal time, balanced stages)"
                 : "(p−1)/m = (" + spp + "−1)/" + I(nAcc) + " = " + N(analytic, 4)
                       + " (GPipe / 1F1B, arXiv 2104.04473 §2.2; idle over ideal time, balanced stages)",
           {"plan.pp", "plan.virtual_stages", "dp.n_acc"}});
    f.add({"pp.makespan", "Pipeline time per step (compute only)", out.timeline.makespan, "s",
           "first block start to last block end of the " + std::string(toString(p.schedule)) + " schedule = "
               + formatSeconds(out.timeline.makespan),
           {"pp.bottleneck_stage_time", "dp.n_acc"}});
    f.add({"pp.bubble_fraction", "Bubble fraction (simulated)", out.timeline.bubbleFraction, "",
           "idle / (stages × makespan) from the " + std::string(toString(p.schedule)) + " timeline = "
               + N(out.timeline.bubbleFraction, 4) + " (includes imbalance between stages)",
           {"pp.makespan"}});

    // TP (docs/model.md §6, Example 5.3).
    signatureHead(Strategy::TP, "tp.");
    const std::string tpNote = Tt > 1 ? "" : " (no TP in this plan: t = 1)";
    f.add({"tp.allreduce_bytes", "TP AllReduce payload", tpM, "B", tpFormula + tpNote,
           cite({"batch.B", "batch.T", "model.hidden_size", "model.bytes.activations"})});
    f.add({"tp.allreduces_per_layer_fwd", "TP AllReduces per layer (forward)", 2, "",
           std::string("2: after attention and after the MLP (Megatron, arXiv 2104.04473 §3)")
               + (sp ? "; with sequence parallelism each is a ReduceScatter + AllGather of the same M" : "") + tpNote,
           {}});
    f.add({"tp.allreduces_per_layer_bwd", "TP AllReduces per layer (backward)", fullRecompute ? 4.0 : 2.0, "",
           fullRecompute ? std::string("4: 2 input-gradient AllReduces + the 2 of the recomputed forward (full recomputation)")
                         : std::string("2: the input gradients of the MLP and of attention")
                               + (m.recompute == model::Recompute::Selective ? " (selective recomputation adds none)" : "")
                               + tpNote,
           {}});
    const double interval = slowest / 2;
    f.add({"tp.allreduce_interval", "Time between TP AllReduces (forward)", interval, "s",
           "layer forward time / 2 = " + formatSeconds(slowest) + " / 2 = " + formatSeconds(interval), {"plan.layer_forward_seconds"}});
    f.add({"tp.bytes_per_gpu_per_step", "TP bytes sent per GPU per step", sig[2].bytesPerGpuPerStep, "B",
           busiestFormula(Strategy::TP), {"tp.allreduce_bytes", "tp.allreduces_per_layer_fwd", "tp.allreduces_per_layer_bwd", "plan.tp", "dp.n_acc"}});
    signatureTail(Strategy::TP, "tp.");

    // EP (docs/model.md §3.2).
    if (moe) {
        signatureHead(Strategy::EP, "ep.");
        f.add({"ep.experts_per_rank", "Experts per EP rank", static_cast<double>(m.moe.experts / EP), "",
               "E/ep = " + I(m.moe.experts) + "/" + sep + " = " + I(m.moe.experts / EP), cite({"model.moe.experts", "plan.ep"})});
        f.add({"ep.alltoall_bytes", "EP All-to-All payload per rank", epM, "B", epFormula,
               cite({"model.moe.top_k", "model.moe.capacity_factor", "batch.B", "batch.T", "model.hidden_size",
                     "model.bytes.activations"})});
        const double calls = fullRecompute ? 6 : 4;
        const double perLayer = EP > 1 ? calls * (static_cast<double>(EP) - 1) / static_cast<double>(EP) * epM : 0.0;
        f.add({"ep.alltoall_bytes_per_layer", "EP bytes per GPU per MoE layer per micro-batch", perLayer, "B",
               N(calls) + "·(ep−1)/ep·M = " + N(calls) + "·(" + sep + "−1)/" + sep + "·" + Bytes(epM) + " = " + Bytes(perLayer)
                   + (fullRecompute ? " (dispatch + combine, forward, recomputed forward and backward)"
                                    : " (dispatch + combine, forward and backward)")
                   + (EP > 1 ? "" : " (ep = 1: every expert is local)"),
               {"ep.alltoall_bytes", "plan.ep"}});
        f.add({"ep.bytes_per_gpu_per_step", "EP bytes sent per GPU per step", sig[3].bytesPerGpuPerStep, "B",
               busiestFormula(Strategy::EP), {"ep.alltoall_bytes_per_layer", "dp.n_acc"}});
        signatureTail(Strategy::EP, "ep.");
    }
}

void Builder::run()
{
    out.plan = p;
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

    // The plan as derived: partition and assignment filled in.
    out.plan = p;
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

} // namespace

std::uint64_t hybridShardGroupSize(const ParallelPlan& plan, const Cluster& cluster)
{
    const std::uint64_t h = hybridShardSize(plan, cluster);
    return h == 0 || std::max<std::uint64_t>(1, plan.dp) % h != 0 ? 1 : h;
}

PlanDerivation derivePlan(const ParallelPlan& plan, const Cluster& cluster, const model::ModelConfig& model,
                          const model::BatchShape& batch, const model::GpuSpec& gpu, const FigureSet& inputs)
{
    PlanDerivation out;
    Builder(plan, cluster, model, batch, gpu, inputs, out).run();
    return out;
}

} // namespace tw::parallel
