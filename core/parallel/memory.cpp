#include "memory.h"

#include "base/units.h"
#include "planbuilder_p.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tw::parallel {

namespace {

using S = std::vector<std::string>;

std::string I(std::uint64_t v) { return formatUnsigned(v); }
std::string N(double v, int decimals = 2) { return formatCount(v, decimals); }
std::string Bytes(double v) { return formatCount(v, 0) + " B"; }

bool shardsWeights(Sharding s) { return s == Sharding::Zero3 || s == Sharding::FsdpFull || s == Sharding::FsdpHybrid; }
bool shardsGradients(Sharding s) { return s == Sharding::Zero2 || shardsWeights(s); }
bool shardsOptimizer(Sharding s) { return s != Sharding::Ddp; }

using model::masterBytes;

// ⌈P/n⌉ parameters per rank: ZeRO and FSDP pad their flat buffers to a multiple of the ranks.
double shardOf(double parameters, std::uint64_t ranks, bool sharded)
{
    return sharded && ranks > 1 ? std::ceil(parameters / static_cast<double>(ranks)) : parameters;
}

} // namespace

bool attentionScoresStored(const model::ModelConfig& model, const model::GpuSpec& gpu)
{
    switch (model.attention) {
    case model::Attention::Fused: return false;
    case model::Attention::Unfused: return true;
    case model::Attention::Auto: break;
    }
    // Flash attention (Dao et al. 2022) needs Ampere or newer (or CDNA3); those GPUs have bf16
    // tensor cores, Volta does not (gpucatalog: V100's bf16 peak is 0).
    return !(gpu.peakBf16 > 0);
}

LayerActivations layerActivationBytes(const model::ModelConfig& m, const model::BatchShape& batch,
                                      const ActivationShape& shape, bool moeLayer)
{
    // Korthikanti et al. 2022 §4.1 (Table 2), per element e bytes (2 for 16-bit), masks 1 byte:
    // attention 11sbh + 5as²b = QKV input 2sbh + Q, K 4sbh + V 2sbh + output-projection input 2sbh +
    // dropout mask sbh; scores = softmax output 2as²b + its dropout mask as²b + dropped probabilities 2as²b;
    // MLP 19sbh = input 2sbh + two d_ff tensors 2·8sbh (d_ff = 4h) + dropout mask sbh; norms 4sbh.
    // TP splits Q, K, V, the output-projection input, the d_ff tensors and the scores (÷t); SP also
    // the rest. Generalized: K and V are [s,b,d_kv] (GQA), SwiGLU keeps gate, up and their product.
    const double s = static_cast<double>(batch.sequenceLength), b = static_cast<double>(batch.microBatch);
    const double h = static_cast<double>(m.hiddenSize), a = static_cast<double>(m.heads);
    const double dkv = static_cast<double>(m.kvDim()), ff = static_cast<double>(m.ffnSize);
    const double t = static_cast<double>(std::max<std::uint64_t>(1, shape.t));
    const double rep = shape.sequenceParallel ? t : 1.0; // what TP alone leaves replicated, SP splits
    const double e = model::bytesPerElement(m.activations);
    const bool dropout = m.family == model::Family::Gpt2;
    const double sbh = s * b * h, mask = dropout ? sbh / rep : 0.0;
    LayerActivations x;
    x.attention = e * sbh / rep + e * s * b * (h + 2 * dkv) / t + e * sbh / t + mask;
    if (shape.scoresStored) {
        const double as2b = a * s * s * b;
        x.scores = (e * as2b + (dropout ? as2b + e * as2b : 0.0)) / t;
    }
    const double ffTensors = m.family == model::Family::Gpt2 ? 2.0 : 3.0;
    // An MoE layer's experts see k·CF of the tokens on average (Switch Transformer capacity).
    const double routed = moeLayer ? static_cast<double>(m.moe.topK) * m.moe.capacityFactor : 1.0;
    x.mlp = e * sbh / rep + routed * ffTensors * e * s * b * ff / t + mask;
    x.norms = 2 * e * sbh / rep;
    switch (shape.recompute) {
    case model::Recompute::None: x.total = x.attention + x.scores + x.mlp + x.norms; break;
    case model::Recompute::Selective: x.total = x.attention + x.mlp + x.norms; break;
    case model::Recompute::Full: x.total = e * sbh / rep; break;
    }
    return x;
}

std::vector<std::uint64_t> microBatchesInFlight(PipelineSchedule schedule, std::uint64_t stages,
                                                std::uint64_t virtualStages, std::uint64_t microBatches,
                                                std::uint64_t stage)
{
    const std::uint64_t p = std::max<std::uint64_t>(1, stages), m = std::max<std::uint64_t>(1, microBatches);
    const std::uint64_t v = schedule == PipelineSchedule::Interleaved ? std::max<std::uint64_t>(1, virtualStages) : 1;
    std::vector<std::uint64_t> n(v, 0);
    switch (schedule) {
    case PipelineSchedule::GPipe: // every forward before any backward (Huang et al. 2019)
        n[0] = m;
        break;
    case PipelineSchedule::OneFOneB: // p − r warm-up forwards at most (Narayanan et al. 2021 §2.2.1)
        n[0] = std::min(m, p - std::min(stage, p - 1));
        break;
    case PipelineSchedule::Interleaved: {
        // Megatron schedules.py, forward_backward_pipelining_with_interleaving: warm-up =
        // (p − r − 1)·2 + (v − 1)·p forwards, capped at m·v; one more before the first backward.
        // Forward i runs model chunk (i / p) mod v.
        const std::uint64_t r = std::min(stage, p - 1);
        const std::uint64_t k = std::min(m * v, 2 * (p - r - 1) + (v - 1) * p + 1);
        for (std::uint64_t i = 0; i < k; ++i)
            ++n[(i / p) % v];
        break;
    }
    }
    return n;
}

StateBytes modelStateBytes(double parameters, const model::ModelConfig& m, Sharding sharding, std::uint64_t shardRanks)
{
    const double sw = model::bytesPerElement(m.weights), sg = model::bytesPerElement(m.gradients);
    const double so = model::bytesPerElement(m.optimizerState);
    StateBytes out;
    out.weights = shardOf(parameters, shardRanks, shardsWeights(sharding)) * sw;
    out.gradients = shardOf(parameters, shardRanks, shardsGradients(sharding)) * sg;
    out.optimizer = shardOf(parameters, shardRanks, shardsOptimizer(sharding)) * (2 * so + masterBytes(m));
    return out;
}

namespace {

// Everything one stage's GPUs hold, before the figures are written.
struct RoleInputs {
    double layerMain = 0, expert = 0, embedding = 0, output = 0, largestUnit = 0;
    double layerActivations = 0;     // Σ over chunks of in-flight × Σ of the chunk's layers
    double embeddingActivations = 0; // per micro-batch, first stage
    double outputActivations = 0;    // per micro-batch, last stage
    std::uint64_t moeLayers = 0;
    std::uint64_t communicators = 0;
    double bucketBytes = 0, gatherBytes = 0, commBytes = 0;
};

// What derivePlanMemory's steps share: the plan's degrees, the chunks' layers, the activation shape and
// the bytes per layer and outside the blocks.
struct MemoryContext {
    std::uint64_t D = 1, P = 1, Tt = 1, EP = 1, V = 1, chunks = 1, L = 0, H = 1, mainRanks = 1, expertRanks = 1, nAcc = 1;
    bool hybrid = false, moe = false;
    double t = 1, sg = 0, sa = 0, emb = 0;
    model::ParameterBreakdown pb;
    std::vector<std::uint64_t> chunkFirst;
    ActivationShape shape;
    LayerActivations denseAct, moeAct;
    double embAct = 0, outAct = 0;
};

MemoryContext memoryContext(const ParallelPlan& plan, const Cluster& cluster, const model::ModelConfig& m,
                            const model::BatchShape& batch, const model::GpuSpec& gpu)
{
    MemoryContext c;
    c.D = std::max<std::uint64_t>(1, plan.dp);
    c.P = std::max<std::uint64_t>(1, plan.pp);
    c.Tt = std::max<std::uint64_t>(1, plan.tp);
    c.EP = std::max<std::uint64_t>(1, plan.ep);
    c.V = plan.schedule == PipelineSchedule::Interleaved ? std::max<std::uint64_t>(1, plan.virtualStages) : 1;
    c.chunks = c.P * c.V;
    c.L = m.layers;
    c.hybrid = plan.sharding == Sharding::FsdpHybrid;
    c.H = c.hybrid ? hybridShardGroupSize(plan, cluster) : 1;
    c.mainRanks = plan.sharding == Sharding::Ddp ? 1 : (c.hybrid ? c.H : c.D);
    c.expertRanks = plan.sharding == Sharding::Ddp ? 1 : std::max<std::uint64_t>(1, c.D / c.EP);
    const std::uint64_t unit = batch.microBatch * batch.sequenceLength * c.D;
    c.nAcc = unit > 0 ? std::max<std::uint64_t>(1, batch.globalBatchTokens / unit) : 1; // as plan.cpp
    c.t = static_cast<double>(c.Tt);
    c.sg = model::bytesPerElement(m.gradients);
    c.sa = model::bytesPerElement(m.activations);
    c.pb = model::parameterBreakdown(m);
    c.emb = static_cast<double>(c.pb.embedding);
    c.moe = m.moe.experts > 0 && m.moeLayers() > 0;

    std::vector<std::uint64_t> partition = plan.layerPartition;
    if (partition.size() != c.chunks)
        partition = defaultPartition(std::max(c.L, c.chunks), c.chunks);
    c.chunkFirst.assign(c.chunks + 1, 0);
    for (std::uint64_t k = 0; k < c.chunks; ++k)
        c.chunkFirst[k + 1] = std::min<std::uint64_t>(c.L, c.chunkFirst[k] + (k < partition.size() ? partition[k] : 0));

    c.shape.t = c.Tt;
    c.shape.sequenceParallel = plan.sequenceParallel && c.Tt > 1;
    c.shape.scoresStored = attentionScoresStored(m, gpu);
    c.shape.recompute = m.recompute;
    c.denseAct = layerActivationBytes(m, batch, c.shape, false);
    c.moeAct = c.moe ? layerActivationBytes(m, batch, c.shape, true) : c.denseAct;
    const double sTok = static_cast<double>(batch.sequenceLength) * static_cast<double>(batch.microBatch);
    const double rep = c.shape.sequenceParallel ? c.t : 1.0;
    const double hidden = static_cast<double>(m.hiddenSize);
    // Outside the blocks (Korthikanti §4.3; Megatron theoretical_memory_usage.py): the token ids (int64)
    // and the embedding dropout mask on the first stage; the final-norm and output-layer inputs and the
    // fp32 logits the cross-entropy keeps on the last.
    c.embAct = 8 * sTok + (m.family == model::Family::Gpt2 ? sTok * hidden / rep : 0.0);
    c.outAct = 2 * c.sa * sTok * hidden / rep + 4 * sTok * static_cast<double>(m.paddedVocab()) / c.t;
    return c;
}

// Stage r's GPUs: their layers and parameters, model states, activations in flight and buffers.
void fillRole(const MemoryContext& c, const ParallelPlan& plan, const model::ModelConfig& m, std::uint64_t r,
              const PlanMemory& out, RoleMemory& role, RoleInputs& x)
{
    const std::uint64_t D = c.D, P = c.P, Tt = c.Tt, EP = c.EP, V = c.V, H = c.H;
    const std::uint64_t mainRanks = c.mainRanks, expertRanks = c.expertRanks;
    const bool hybrid = c.hybrid;
    const double t = c.t, sg = c.sg, sa = c.sa, emb = c.emb, embAct = c.embAct, outAct = c.outAct;
    const model::ParameterBreakdown& pb = c.pb;
    const std::vector<std::uint64_t>& chunkFirst = c.chunkFirst;
    const LayerActivations &denseAct = c.denseAct, &moeAct = c.moeAct;
    // Parameters of one layer on one TP (and EP) rank, as stage 3 counts them.
    auto expertOf = [&](std::uint64_t l) { return detail::layerExpertParamsOf(m, pb, Tt, EP, l); };
    auto mainOf = [&](std::uint64_t l) { return detail::layerMainParamsOf(m, pb, Tt, EP, l); };
    role.inFlight = microBatchesInFlight(plan.schedule, P, V, c.nAcc, r);
    for (std::uint64_t k = 0; k < V; ++k) {
        const std::uint64_t chunk = r + k * P;
        double chunkAct = 0;
        for (std::uint64_t l = chunkFirst[chunk]; l < chunkFirst[chunk + 1]; ++l) {
            const bool isMoe = m.isMoeLayer(l);
            const double lm = mainOf(l), le = EP > 1 ? expertOf(l) : 0.0;
            x.layerMain += lm;
            x.expert += le;
            x.largestUnit = std::max(x.largestUnit, lm + le);
            chunkAct += isMoe ? moeAct.total : denseAct.total;
            x.moeLayers += isMoe ? 1 : 0;
            ++role.layers;
        }
        x.layerActivations += static_cast<double>(role.inFlight[k]) * chunkAct;
    }
    role.holdsEmbedding = r == 0;
    role.holdsOutput = r == P - 1;
    if (role.holdsEmbedding) {
        x.embedding = emb / t + static_cast<double>(pb.positions);
        x.largestUnit = std::max(x.largestUnit, x.embedding);
        x.embeddingActivations = embAct;
    }
    if (role.holdsOutput) {
        x.output = static_cast<double>(pb.finalNorm) + static_cast<double>(pb.head) / t
                   + (m.tiedEmbeddings && P > 1 ? emb / t : 0.0);
        x.largestUnit = std::max(x.largestUnit, x.output);
        x.outputActivations = outAct;
    }
    role.expertParameters = x.expert;
    role.parameters = x.layerMain + x.embedding + x.output + x.expert;
    const StateBytes mainStates = modelStateBytes(role.parameters - x.expert, m, plan.sharding, mainRanks);
    const StateBytes expertStates = modelStateBytes(x.expert, m, plan.sharding, expertRanks);
    role.weights = mainStates.weights + expertStates.weights;
    role.gradients = mainStates.gradients + expertStates.gradients;
    role.optimizer = mainStates.optimizer + expertStates.optimizer;
    role.activations = x.layerActivations
                       + (role.holdsEmbedding ? static_cast<double>(role.inFlight.front()) * embAct : 0.0)
                       + (role.holdsOutput ? static_cast<double>(role.inFlight.back()) * outAct : 0.0);

    // Buffers. PyTorch DDP (gradient_as_bucket_view=False) copies every gradient into its buckets;
    // ZeRO-1/2 reduce one bucket at a time; ZeRO-3/FSDP hold the unit being computed and the one
    // prefetched, gathered in the compute precision; NCCL its buffers per communicator.
    const double gradBytes = role.parameters * sg;
    if (plan.sharding == Sharding::Ddp && D > 1)
        x.bucketBytes = gradBytes;
    else if ((plan.sharding == Sharding::Zero1 || plan.sharding == Sharding::Zero2) && D > 1)
        x.bucketBytes = std::min(bucketBytesFor(plan, m), gradBytes);
    if (shardsWeights(plan.sharding) && (mainRanks > 1 || (x.expert > 0 && expertRanks > 1)))
        x.gatherBytes = 2 * x.largestUnit * sa;
    x.communicators = (Tt > 1 ? 1 : 0) + (P > 1 ? 1 : 0) + (EP > 1 ? 1 : 0)
                      + (hybrid ? (H > 1 ? 1 : 0) + (D / H > 1 ? 1 : 0) : (D > 1 ? 1 : 0))
                      + (EP > 1 && D / EP > 1 && x.moeLayers > 0 ? 1 : 0)
                      + (m.tiedEmbeddings && P > 1 && (role.holdsEmbedding || role.holdsOutput) ? 1 : 0);
    x.commBytes = static_cast<double>(x.communicators) * plan.commBufferBytes;
    role.buffers = x.bucketBytes + x.gatherBytes + x.commBytes;
    role.total = role.weights + role.gradients + role.optimizer + role.activations + role.buffers;
    role.headroom = out.capacityBytes - out.keptFreeBytes() - role.total;
    role.fits = role.total + out.keptFreeBytes() <= out.capacityBytes;
}

// Every GPU of the cluster to its role through the mesh; the plan's peak stage and GPU and whether all fit.
void mapGpusToRoles(const ParallelPlan& plan, const MemoryContext& c, PlanMemory& out)
{
    const std::uint64_t D = c.D, P = c.P, Tt = c.Tt;
    std::vector<MeshCoord> mesh = effectiveAssignment(plan);
    if (mesh.size() != D * P * Tt)
        mesh = defaultAssignment(plan);
    out.roleOfGpu.resize(mesh.size());
    for (std::size_t g = 0; g < mesh.size(); ++g) {
        const std::uint32_t r = std::min<std::uint32_t>(mesh[g].pp, static_cast<std::uint32_t>(P - 1));
        out.roleOfGpu[g] = r;
        ++out.roles[r].gpus;
    }
    out.fits = true;
    for (const RoleMemory& role : out.roles) {
        if (role.stage == 0 || role.total > out.peakBytes) {
            out.peakBytes = role.total;
            out.peakStage = role.stage;
        }
        out.fits = out.fits && role.fits;
    }
    for (std::size_t g = 0; g < out.roleOfGpu.size(); ++g)
        if (out.roleOfGpu[g] == out.peakStage) {
            out.peakGpu = g;
            break;
        }
}

// The ids of `ids` defined by the figures so far or by the inputs (a figure cites only what exists).
struct Citer {
    const FigureSet& f;
    const FigureSet& inputs;
    S operator()(S ids) const
    {
        S kept;
        for (std::string& id : ids)
            if (f.find(id) || inputs.find(id))
                kept.push_back(std::move(id));
        return kept;
    }
};

// The plan-wide inputs of the memory figures: reserve, NCCL buffers, micro-batches, one layer's activations.
void addMemoryInputs(FigureSet& f, const Citer& cite, const MemoryContext& c, const ParallelPlan& plan,
                     const model::ModelConfig& m, const model::BatchShape& batch, const PlanMemory& out)
{
    const std::uint64_t D = c.D, Tt = c.Tt, nAcc = c.nAcc;
    const ActivationShape& shape = c.shape;
    const LayerActivations& denseAct = c.denseAct;
    f.add({"memory.plan.reserve_bytes", "Framework reserve per GPU", out.reserveBytes, "B",
           "input: " + Bytes(out.reserveBytes) + " for the CUDA context, library workspaces and allocator slack "
               + "(parallel.memory_reserve_bytes; docs/memory.md)",
           {}});
    f.add({"memory.plan.allocator_headroom_bytes", "Allocator headroom per GPU", out.allocatorHeadroomBytes, "B",
           "headroom share · capacity = " + N(plan.memoryHeadroomFraction, 2) + " · " + Bytes(out.capacityBytes) + " = "
               + Bytes(out.allocatorHeadroomBytes)
               + " kept free for the caching allocator's fragmentation (parallel.memory_headroom; GMLake, "
                 "ASPLOS 2024: 9.2 GB of 80 on average; docs/memory.md)",
           cite({"memory.gpu_capacity_bytes"})});
    f.add({"memory.plan.comm_buffer_bytes", "NCCL buffers per communicator", plan.commBufferBytes, "B",
           "input: " + Bytes(plan.commBufferBytes) + " (parallel.comm_buffer_bytes; default 16 channels × NCCL_BUFFSIZE 4 MiB)",
           {}});
    f.add({"memory.plan.micro_batches", "Micro-batches per replica per step m", static_cast<double>(nAcc), "",
           "N_acc = G/(B·T·dp) = " + I(batch.globalBatchTokens) + "/(" + I(batch.microBatch) + "·"
               + I(batch.sequenceLength) + "·" + I(D) + ") = " + I(nAcc),
           cite({"dp.n_acc"})});
    const std::string shapeText = std::string(shape.sequenceParallel ? "TP + SP" : (Tt > 1 ? "TP" : "no parallelism"))
                                  + ", t = " + I(Tt) + ", " + std::string(model::toString(m.recompute)) + " recomputation, "
                                  + (shape.scoresStored ? "unfused attention (scores stored)"
                                                        : "fused attention (no scores stored)");
    f.add({"memory.plan.layer_activation_bytes", "Activations per layer per micro-batch (one GPU)", denseAct.total, "B",
           "attention " + Bytes(denseAct.attention) + " + scores " + Bytes(denseAct.scores) + " + MLP " + Bytes(denseAct.mlp)
               + " + norms " + Bytes(denseAct.norms) + " → " + Bytes(denseAct.total) + " kept (" + shapeText
               + "; Korthikanti et al. 2022 Table 2 decomposed, docs/memory.md)",
           cite({"batch.T", "batch.B", "model.hidden_size", "model.heads", "model.kv_dim", "model.ffn_size",
                 "model.bytes.activations", "plan.tp"})});
}

// Stage r's figures: parameters, weights, gradients, optimizer state, activations, buffers, total,
// headroom and whether it fits.
void addStageFigures(FigureSet& f, const Citer& cite, const MemoryContext& c, const ParallelPlan& plan,
                     const model::ModelConfig& m, const PlanMemory& out, std::uint64_t r, const RoleInputs& x)
{
    const std::uint64_t P = c.P, Tt = c.Tt, EP = c.EP, mainRanks = c.mainRanks, expertRanks = c.expertRanks;
    const double sg = c.sg, sa = c.sa, embAct = c.embAct, outAct = c.outAct;
    const RoleMemory& role = out.roles[r];
    const std::string shardName(toString(plan.sharding));
    const std::string id = "memory.plan.stage" + std::to_string(r) + ".";
    const std::string who = "Stage " + std::to_string(r) + ": ";
    std::string parts = N(x.layerMain, 0) + " in " + I(role.layers) + " layers";
    if (role.holdsEmbedding)
        parts += " + embedding " + N(x.embedding, 0);
    if (role.holdsOutput)
        parts += " + final norm, head" + std::string(m.tiedEmbeddings && P > 1 ? " and the tied copy " : " ") + N(x.output, 0);
    if (x.expert > 0)
        parts += " + experts " + N(x.expert, 0) + " (E/ep = " + I(m.moe.experts / EP) + " per layer)";
    f.add({id + "parameters", who + "parameters per GPU", role.parameters, "",
           parts + " = " + N(role.parameters, 0) + " (÷ t = " + I(Tt) + " for matrices and the vocabulary; norms, "
               + "row-parallel biases, positions and routers replicated)",
           cite({"model.parameters", "plan.tp", "plan.pp", "plan.ep"})});
    std::string shardText;
    if (mainRanks > 1)
        shardText = " (" + shardName + ": ⌈P/" + I(mainRanks) + "⌉"
                    + (x.expert > 0 ? ", experts ⌈P_e/" + I(expertRanks) + "⌉" : "") + ")";
    auto stateFigure = [&](const char* key, const char* label, double value, const std::string& how, bool sharded,
                           const char* precisionId) {
        f.add({id + key, who + label, value, "B",
               how + " = " + Bytes(value) + (sharded ? shardText : " (not sharded by " + shardName + ")"),
               cite({id + "parameters", precisionId, "plan.dp", "plan.shard_group_size"})});
    };
    stateFigure("weights_bytes", "weights", role.weights, "parameters·s_w = " + N(role.parameters, 0) + "·"
                                                             + N(model::bytesPerElement(m.weights)),
                shardsWeights(plan.sharding), "model.bytes.weights");
    stateFigure("gradients_bytes", "gradients", role.gradients,
                "parameters·s_g = " + N(role.parameters, 0) + "·" + N(sg), shardsGradients(plan.sharding),
                "model.bytes.gradients");
    stateFigure("optimizer_bytes", "optimizer state", role.optimizer,
                "parameters·(2·s_opt + master " + N(masterBytes(m)) + ") = " + N(role.parameters, 0) + "·"
                    + N(2 * model::bytesPerElement(m.optimizerState) + masterBytes(m)) + " (Adam m, v"
                    + (masterBytes(m) > 0 ? " and the master copy" : "") + "; ZeRO §3.1)",
                shardsOptimizer(plan.sharding), "model.bytes.optimizer_state");
    std::string inflight;
    for (std::uint64_t k = 0; k < role.inFlight.size(); ++k)
        inflight += (k ? ", " : "") + I(role.inFlight[k]);
    const std::string schedText = plan.schedule == PipelineSchedule::GPipe       ? "GPipe: all m"
                                  : plan.schedule == PipelineSchedule::OneFOneB ? "1F1B: min(m, p − stage)"
                                                                                : "interleaved: Megatron's warm-up + 1 per chunk";
    f.add({id + "activations_bytes", who + "activations", role.activations, "B",
           "layers " + Bytes(x.layerActivations) + " (micro-batches in flight per chunk [" + inflight + "], " + schedText
               + ")" + (role.holdsEmbedding ? " + embedding " + Bytes(embAct) + "·" + I(role.inFlight.front()) : "")
               + (role.holdsOutput ? " + final norm, output layer and fp32 logits " + Bytes(outAct) + "·"
                                         + I(role.inFlight.back())
                                   : "")
               + " = " + Bytes(role.activations),
           cite({"memory.plan.layer_activation_bytes", "memory.plan.micro_batches", "plan.pp", "model.vocab_padded"})});
    std::string buffers;
    if (plan.sharding == Sharding::Ddp && x.bucketBytes > 0)
        buffers = "DDP bucket copy of the gradients " + Bytes(x.bucketBytes) + " (gradient_as_bucket_view=False) + ";
    else if (x.bucketBytes > 0)
        buffers = "one reduce bucket " + Bytes(x.bucketBytes) + " + ";
    if (x.gatherBytes > 0)
        buffers += "the unit computed and the one prefetched, gathered: 2·" + N(x.largestUnit, 0) + "·" + N(sa) + " = "
                   + Bytes(x.gatherBytes) + " + ";
    buffers += "NCCL buffers of " + I(x.communicators) + (x.communicators == 1 ? " communicator · " : " communicators · ")
               + Bytes(plan.commBufferBytes) + " → " + Bytes(role.buffers);
    f.add({id + "buffers_bytes", who + "buffers", role.buffers, "B", buffers,
           cite({"memory.plan.comm_buffer_bytes", "plan.bucket_bytes"})});
    f.add({id + "total_bytes", who + "memory per GPU", role.total, "B",
           "weights + gradients + optimizer + activations + buffers = " + Bytes(role.weights) + " + "
               + Bytes(role.gradients) + " + " + Bytes(role.optimizer) + " + " + Bytes(role.activations) + " + "
               + Bytes(role.buffers) + " = " + Bytes(role.total) + " on each of its " + I(role.gpus) + " GPUs",
           {id + "weights_bytes", id + "gradients_bytes", id + "optimizer_bytes", id + "activations_bytes",
            id + "buffers_bytes"}});
    f.add({id + "headroom_bytes", who + "memory left", role.headroom, "B",
           "capacity − reserve − allocator headroom − total = " + Bytes(out.capacityBytes) + " − "
               + Bytes(out.reserveBytes) + " − " + Bytes(out.allocatorHeadroomBytes) + " − " + Bytes(role.total) + " = "
               + Bytes(role.headroom),
           cite({"memory.gpu_capacity_bytes", "memory.plan.reserve_bytes", "memory.plan.allocator_headroom_bytes",
                 id + "total_bytes"})});
    f.add({id + "fits", who + "fits", role.fits ? 1.0 : 0.0, "",
           "total + reserve + allocator headroom ≤ capacity: " + Bytes(role.total + out.keptFreeBytes())
               + (role.fits ? " ≤ " : " > ") + Bytes(out.capacityBytes),
           cite({id + "total_bytes", "memory.plan.reserve_bytes", "memory.plan.allocator_headroom_bytes",
                 "memory.gpu_capacity_bytes"})});
}

// The plan's peak: its bytes and stage, the largest GPU's kinds, and whether every GPU fits.
void addPeakFigures(FigureSet& f, const PlanMemory& out, std::uint64_t P)
{
    const std::string peakId = "memory.plan.stage" + std::to_string(out.peakStage) + ".total_bytes";
    f.add({"memory.plan.peak_bytes", "Largest GPU memory of the plan", out.peakBytes, "B",
           "max over stages = " + Bytes(out.peakBytes) + " on stage " + I(out.peakStage) + " (GPU " + I(out.peakGpu)
               + " and the others of its stage)",
           {peakId}});
    f.add({"memory.plan.peak_stage", "Stage of the largest GPU memory", static_cast<double>(out.peakStage), "",
           "stage " + I(out.peakStage), {peakId}});
    // The largest GPU's kinds (what Compare's memory chart sets side by side).
    {
        const RoleMemory& peak = out.roles[out.peakStage];
        const std::string stageId = "memory.plan.stage" + std::to_string(out.peakStage) + ".";
        const std::pair<const char*, double> kinds[] = {{"weights", peak.weights},         {"gradients", peak.gradients},
                                                        {"optimizer", peak.optimizer},     {"activations", peak.activations},
                                                        {"buffers", peak.buffers}};
        for (const auto& [kind, value] : kinds)
            f.add({std::string("memory.plan.peak_") + kind + "_bytes", std::string("Largest GPU: ") + kind, value, "B",
                   "stage " + I(out.peakStage) + "'s " + kind + " = " + Bytes(value), {stageId + kind + "_bytes"}});
    }
    S fitIds;
    for (std::uint64_t r = 0; r < P; ++r)
        fitIds.push_back("memory.plan.stage" + std::to_string(r) + ".fits");
    f.add({"memory.plan.fits", "Every GPU fits", out.fits ? 1.0 : 0.0, "",
           std::string(out.fits ? "every stage fits (1)" : "some stage does not fit (0)") + ": peak " + Bytes(out.peakBytes)
               + " + reserve " + Bytes(out.reserveBytes) + " + allocator headroom " + Bytes(out.allocatorHeadroomBytes)
               + (out.fits ? " ≤ " : " > ") + Bytes(out.capacityBytes),
           fitIds});
}

} // namespace

// Every stage's GPU memory (docs/memory.md): the context, each role's bytes, the GPUs' roles and the
// peak, then (withFigures) the figures.
PlanMemory derivePlanMemory(const ParallelPlan& plan, const Cluster& cluster, const model::ModelConfig& m,
                            const model::BatchShape& batch, const model::GpuSpec& gpu, const FigureSet& inputs,
                            bool withFigures)
{
    const MemoryContext c = memoryContext(plan, cluster, m, batch, gpu);
    PlanMemory out;
    out.capacityBytes = gpu.memoryBytes;
    out.reserveBytes = plan.memoryReserveBytes;
    out.allocatorHeadroomBytes = plan.memoryHeadroomFraction * gpu.memoryBytes;
    out.roles.resize(c.P);
    std::vector<RoleInputs> in(c.P);
    for (std::uint64_t r = 0; r < c.P; ++r) {
        out.roles[r].stage = r;
        fillRole(c, plan, m, r, out, out.roles[r], in[r]);
    }
    mapGpusToRoles(plan, c, out);
    if (!withFigures)
        return out;
    FigureSet& f = out.figures;
    const Citer cite{f, inputs};
    addMemoryInputs(f, cite, c, plan, m, batch, out);
    for (std::uint64_t r = 0; r < c.P; ++r)
        addStageFigures(f, cite, c, plan, m, out, r, in[r]);
    addPeakFigures(f, out, c.P);
    return out;
}

} // namespace tw::parallel
