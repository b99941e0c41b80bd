// Stage 3: the plan's mesh (Megatron's rank order) and every reason a plan cannot run a model on a
// cluster, each naming its JSON path under "parallel." (docs/model.md §3).

#include "plan.h"
#include "planbuilder_p.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace tw::parallel {

using namespace detail;

namespace detail {

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

} // namespace detail

namespace {



std::string joinList(const std::vector<std::uint64_t>& values)
{
    std::string s;
    for (std::size_t i = 0; i < values.size(); ++i)
        s += (i ? ", " : "") + I(values[i]);
    return s;
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

} // namespace

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

namespace {

// The plan's problems, each with its JSON path.
struct Problems {
    std::vector<Error> errors;
    void fail(std::string path, std::string message)
    {
        Location where;
        where.jsonPath = std::move(path);
        errors.push_back(makeError(std::move(message), std::move(where)));
    }
};

// Scalars that do not depend on the degrees: efficiency, bucket, reserve, NCCL buffers, layer times.
void checkScalars(const ParallelPlan& plan, std::size_t L, Problems& out)
{
    if (!(plan.computeEfficiency >= 0 && plan.computeEfficiency <= 1))
        out.fail("parallel.compute_efficiency",
             "must be in (0, 1] (achieved / peak FLOP/s) or \"auto\" (0), got " + N(plan.computeEfficiency, 3));
    if (plan.bucketBytes && !(std::isfinite(*plan.bucketBytes) && *plan.bucketBytes > 0))
        out.fail("parallel.bucket_bytes", "must be a positive number of bytes or \"auto\", got " + N(*plan.bucketBytes));
    if (!(std::isfinite(plan.memoryReserveBytes) && plan.memoryReserveBytes >= 0 && plan.memoryReserveBytes < 1e15))
        out.fail("parallel.memory_reserve_bytes", "must be a number of bytes from 0 to 10^15, got " + N(plan.memoryReserveBytes));
    if (!(std::isfinite(plan.memoryHeadroomFraction) && plan.memoryHeadroomFraction >= 0 && plan.memoryHeadroomFraction <= 0.5))
        out.fail("parallel.memory_headroom", "must be a share of the GPU's memory from 0 to 0.5 (0.1 = 10 %), got "
                                                 + N(plan.memoryHeadroomFraction));
    if (!(std::isfinite(plan.commBufferBytes) && plan.commBufferBytes >= 0 && plan.commBufferBytes < 1e15))
        out.fail("parallel.comm_buffer_bytes", "must be a number of bytes from 0 to 10^15, got " + N(plan.commBufferBytes));
    if (!plan.layerForwardSeconds.empty() && plan.layerForwardSeconds.size() != 1
        && plan.layerForwardSeconds.size() != L)
        out.fail("parallel.layer_forward_time_s",
             I(plan.layerForwardSeconds.size()) + " values; give none (compute model), one (every layer) or L = "
                 + I(L) + " (one per layer)");
    for (std::size_t i = 0; i < plan.layerForwardSeconds.size(); ++i) {
        const double s = plan.layerForwardSeconds[i];
        if (!(std::isfinite(s) && s > 0))
            out.fail("parallel.layer_forward_time_s[" + std::to_string(i) + "]",
                 "must be a positive number of seconds, got " + N(s, 6));
    }

}

// Each degree within 1 … kMaxDegree; false when one is not (nothing else can be checked then).
bool checkDegrees(const ParallelPlan& plan, Problems& out)
{
    bool degreesOk = true;
    auto degree = [&](const char* path, std::uint64_t v) {
        if (v < 1 || v > kMaxDegree) {
            out.fail(path, "must be between 1 and " + I(kMaxDegree) + ", got " + I(v));
            degreesOk = false;
        }
    };
    degree("parallel.dp", plan.dp);
    degree("parallel.pp", plan.pp);
    degree("parallel.tp", plan.tp);
    degree("parallel.ep", plan.ep);
    degree("parallel.virtual_stages", plan.virtualStages);
    return degreesOk;

}

// The degrees against the cluster and the model: dp·pp·tp GPUs, TP by heads, EP out of DP, a layer per stage.
void checkShape(const ParallelPlan& plan, const Cluster& cluster, const model::ModelConfig& model, Problems& out)
{
    const std::uint64_t dp = plan.dp, pp = plan.pp, tp = plan.tp, ep = plan.ep;
    const std::size_t L = model.layers;
    const std::uint64_t gpus = dp * pp * tp; // each ≤ 2^20: no overflow
    const double clusterGpus = static_cast<double>(cluster.nodes) * static_cast<double>(cluster.gpusPerNode);
    if (static_cast<double>(gpus) != clusterGpus)
        out.fail("parallel.dp", "dp·pp·tp = " + I(dp) + "·" + I(pp) + "·" + I(tp) + " = " + I(gpus)
                                + " GPUs, but the cluster has " + N(clusterGpus) + " (" + I(cluster.nodes) + " node"
                                + (cluster.nodes == 1 ? "" : "s") + " × " + I(cluster.gpusPerNode)
                                + " GPUs): the degrees must multiply to the number of GPUs");
    if (gpus > kMaxGpus)
        out.fail("parallel.dp", "dp·pp·tp = " + I(gpus) + " GPUs is more than this program models (" + I(kMaxGpus) + ")");

    // Megatron TP splits attention by heads (and GQA by key/value heads).
    const std::uint64_t kv = model.kvHeads == 0 ? model.heads : model.kvHeads;
    if (model.heads % tp != 0)
        out.fail("parallel.tp", I(tp) + " does not divide the " + I(model.heads) + " attention heads of " + modelName(model)
                                + "; valid tensor-parallel degrees: " + joinList(validTensorDegrees(model)));
    else if (kv % tp != 0)
        out.fail("parallel.tp", I(tp) + " does not divide the " + I(kv) + " key/value heads of " + modelName(model)
                                + " (grouped-query attention); valid tensor-parallel degrees: "
                                + joinList(validTensorDegrees(model)));
    else if (model.ffnSize % tp != 0)
        out.fail("parallel.tp", I(tp) + " does not divide the MLP width d_ff = " + I(model.ffnSize) + " of " + modelName(model)
                                + " (Megatron splits the MLP by columns); valid tensor-parallel degrees: "
                                + joinList(validTensorDegrees(model)));

    // EP is carved out of DP (docs/model.md §3).
    const bool moe = model.moe.experts > 0 && model.moeLayers() > 0;
    if (ep > 1 && !moe)
        out.fail("parallel.ep", I(ep) + " needs a Mixture-of-Experts model; " + modelName(model)
                                + " has no experts (model.moe.experts = " + I(model.moe.experts) + ")");
    else if (ep > 1 && (dp % ep != 0 || model.moe.experts % ep != 0))
        out.fail("parallel.ep", I(ep) + (dp % ep != 0 ? " does not divide dp = " + I(dp) + " (expert parallelism is carved out of data parallelism)"
                                                  : " does not divide the " + I(model.moe.experts) + " experts")
                                + "; valid expert-parallel degrees: " + joinList(commonDivisors(model.moe.experts, dp)));

    if (pp > L)
        out.fail("parallel.pp", I(pp) + " stages for " + I(L) + " layers: every stage needs at least one layer (pp ≤ "
                                + I(L) + ")");

}

// N_acc = G/(B·T·dp) (docs/model.md §6, Example 5.1): a whole number ≥ 1, or nothing.
std::optional<std::uint64_t> checkAccumulation(const ParallelPlan& plan, const model::BatchShape& batch, Problems& out)
{
    const std::uint64_t dp = plan.dp;
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
        out.fail("parallel.dp", "the global batch G = " + N(G) + " tokens is not a multiple of B·T·dp = "
                                + I(batch.microBatch) + "·" + I(batch.sequenceLength) + "·" + I(dp) + " = " + N(perMicroStep)
                                + " tokens: N_acc = " + N(G) + "/" + N(perMicroStep) + " = "
                                + N(perMicroStep > 0 ? G / perMicroStep : 0) + " micro-batches per replica must be a whole number ≥ 1");

    return nAccOk ? std::optional<std::uint64_t>(nAcc) : std::nullopt;
}

// Interleaving (Megatron, arXiv 2104.04473 §2.2.2: v chunks per stage, m a multiple of p), the layer
// partition and the hybrid shard group size.
void checkSchedule(const ParallelPlan& plan, std::size_t L, std::optional<std::uint64_t> nAccOk, Problems& out)
{
    const std::uint64_t dp = plan.dp, pp = plan.pp, v = plan.virtualStages;
    const std::uint64_t nAcc = nAccOk.value_or(0);
    const bool interleaved = plan.schedule == PipelineSchedule::Interleaved;
    if (v > 1 && !interleaved)
        out.fail("parallel.virtual_stages", I(v) + " model chunks per stage need parallel.schedule = \"interleaved\"");
    if (interleaved) {
        if (pp < 2)
            out.fail("parallel.schedule", "the interleaved schedule needs at least 2 pipeline stages (pp = " + I(pp) + ")");
        else if (nAccOk && nAcc % pp != 0)
            out.fail("parallel.schedule", "Megatron's interleaved schedule needs the micro-batches per replica (N_acc = "
                                          + I(nAcc) + ") to be a multiple of pp = " + I(pp));
        if (pp * v > L && pp <= L)
            out.fail("parallel.virtual_stages", "pp·v = " + I(pp) + "·" + I(v) + " = " + I(pp * v) + " model chunks for "
                                                + I(L) + " layers: every chunk needs at least one layer");
    }

    if (!plan.layerPartition.empty()) {
        if (plan.layerPartition.size() != pp * v) {
            out.fail("parallel.layer_partition", I(plan.layerPartition.size()) + " entries, need pp·v = " + I(pp * v)
                                                 + " (one per " + (v > 1 ? "virtual stage" : "stage") + ")");
        } else {
            double sum = 0;
            for (std::size_t i = 0; i < plan.layerPartition.size(); ++i) {
                sum += static_cast<double>(plan.layerPartition[i]);
                if (plan.layerPartition[i] < 1)
                    out.fail("parallel.layer_partition[" + std::to_string(i) + "]",
                         "0 layers: every stage needs at least one layer");
            }
            if (sum != static_cast<double>(L))
                out.fail("parallel.layer_partition",
                     "the entries sum to " + N(sum) + " layers, the model has " + I(L));
        }
    }

    if (plan.sharding == Sharding::FsdpHybrid && plan.shardGroupSize > 0 && dp % plan.shardGroupSize != 0)
        out.fail("parallel.shard_group_size", I(plan.shardGroupSize) + " does not divide dp = " + I(dp)
                                              + "; valid shard group sizes: " + joinList(divisorsOf(dp)));

}

// The assignment: a bijection from GPUs onto the mesh.
void checkAssignment(const ParallelPlan& plan, Problems& out)
{
    const std::uint64_t dp = plan.dp, pp = plan.pp, tp = plan.tp;
    const std::uint64_t gpus = dp * pp * tp; // each ≤ 2^20: no overflow
    if (plan.assignment.empty())
        return;
    if (plan.assignment.size() != gpus || gpus > kMaxGpus) {
        out.fail("parallel.assignment", I(plan.assignment.size()) + " entries for dp·pp·tp = " + I(gpus)
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
                out.fail(path, "GPU " + I(g) + ": " + what);
                continue;
            }
            const std::uint64_t cell = (std::uint64_t(c.pp) * dp + c.dp) * tp + c.tp;
            if (first[cell] != std::numeric_limits<std::uint32_t>::max())
                out.fail(path, "GPU " + I(g) + " has the same place (dp " + I(c.dp) + ", pp " + I(c.pp) + ", tp "
                               + I(c.tp) + ") as GPU " + I(first[cell]));
            else
                first[cell] = static_cast<std::uint32_t>(g);
        }
    }
}

} // namespace

// Every problem of a plan on a cluster for a model and batch, each with its JSON path.
std::vector<Error> validate(const ParallelPlan& plan, const Cluster& cluster, const model::ModelConfig& model,
                            const model::BatchShape& batch)
{
    Problems out;
    checkScalars(plan, model.layers, out);
    if (!checkDegrees(plan, out))
        return out.errors;
    checkShape(plan, cluster, model, out);
    const std::optional<std::uint64_t> nAcc = checkAccumulation(plan, batch, out);
    checkSchedule(plan, model.layers, nAcc, out);
    checkAssignment(plan, out);
    return out.errors;
}

} // namespace tw::parallel
