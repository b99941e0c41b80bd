// Stage 3: the figures a teacher shows for a plan — per-strategy bytes with the busiest GPU's sum,
// parameters per stage, ZeRO/FSDP shards, pipeline bubble and the kernel model's times, each with its
// formula and the figures it cites (docs/model.md §3, docs/compute.md).

#include "plan.h"
#include "planbuilder_p.h"

#include "base/papervalues.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tw::parallel::detail {

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
           "Megatron-LM's optimizer step over " + k.optimizer.shape + " ("
               + (model::masterBytes(m) > 0 ? "gradients to fp32, unscale, norm, Adam, weights back" : "norm, Adam")
               + "): " + Bytes(k.optimizer.bytes) + " / ("
               + N(gpu.memoryBandwidth / 1e9) + " GB/s·" + N(gpu.memoryFraction, 2) + ") = "
               + formatSeconds(k.optimizer.seconds) + " (kernel model; not in the pipeline timeline)",
           {}});
    // The kernels' own count: model FLOPs (2 per multiply-add forward, 4 backward, no recomputation) and
    // the FLOPs they execute (the recomputed kernels too, flash attention's causal half with its backward
    // recomputation: Chowdhery et al. 2022, App. B; docs/compute.md).
    double kernelFlops = 0, hwFlops = 0;
    for (std::uint64_t l = 0; l < L; ++l) {
        const model::KernelList& list = m.isMoeLayer(l) ? k.moe : k.dense;
        kernelFlops += list.flops(KernelPass::Forward) + list.flops(KernelPass::Backward);
        hwFlops += list.hardwareFlops();
    }
    for (const model::KernelList* list : {&k.embedding, &k.head}) {
        kernelFlops += list->flops(KernelPass::Forward) + list->flops(KernelPass::Backward);
        hwFlops += list->hardwareFlops();
    }
    const double scale = static_cast<double>(nAcc * D * Tt); // micro-batches × DP replicas × TP shards
    kernelFlops *= scale;
    hwFlops *= scale;
    f.add({"plan.model_flops_per_step", "Model FLOPs per step (kernel list)", kernelFlops, "FLOP",
           "Σ GEMM and attention FLOPs of every layer and the head, forward + backward, per GPU × micro-batches "
           + I(nAcc) + " × dp " + I(D) + " × tp " + I(Tt) + " = " + N(kernelFlops)
           + " (a cross-check of compute.model_flops_per_step: the matrix products only)",
           {}});
    f.add({"plan.hardware_flops_per_step", "FLOPs the kernels execute per step", hwFlops, "FLOP",
           "the kernels with recomputation; flash attention computes the causal half, its backward 2.5× = " + N(hwFlops),
           {}});
    // MFU and HFU as everywhere else (docs/compute.md, "MFU and HFU"): the model's FLOPs (no
    // recomputation) and the executed ones (with it), over GPUs × the GEMM precision's peak × the step.
    const bool formula = in.find("compute.model_flops_per_step") && in.find("compute.flops_per_step");
    const double modelFlops = formula ? in.valueOf("compute.model_flops_per_step") : kernelFlops;
    const double execFlops = formula ? in.valueOf("compute.flops_per_step") : hwFlops;
    const char* modelId = formula ? "compute.model_flops_per_step" : "plan.model_flops_per_step";
    const char* execId = formula ? "compute.flops_per_step" : "plan.hardware_flops_per_step";
    const double stepSeconds = out.timeline.makespan + k.optimizer.seconds;
    const double peak = model::gemmPeak(gpu, m);
    const double denom = static_cast<double>(gpus) * peak * stepSeconds;
    const std::string over = " / (" + I(gpus) + "·" + N(peak / 1e12) + "·10¹²·" + formatSeconds(stepSeconds) + ")";
    f.add({"plan.mfu", "Model FLOPs utilization (compute timeline)", denom > 0 ? modelFlops / denom : 0.0, "",
           "model FLOPs (no recomputation) / (GPUs · GEMM peak · (pipeline makespan + optimizer step)) = "
               + N(modelFlops) + over + " (no communication)",
           cite({modelId, "plan.peak_flops", "pp.makespan", "plan.optimizer_step_seconds"})});
    f.add({"plan.hfu", "Hardware FLOPs utilization (compute timeline)", denom > 0 ? execFlops / denom : 0.0, "",
           "FLOPs with recomputation / (GPUs · GEMM peak · (pipeline makespan + optimizer step)) = " + N(execFlops) + over,
           cite({execId, "plan.peak_flops", "pp.makespan", "plan.optimizer_step_seconds"})});
}

// The plan's inputs: the cluster, the degrees, the efficiency, the peak and the bucket size.
void Builder::addPlanInputs()
{
    FigureSet& f = out.figures;
    const std::string sdp = I(D), spp = I(P), stp = I(Tt), sep = I(EP);
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
    f.add({"plan.peak_flops", "GPU peak FLOP/s (GEMM precision)", model::gemmPeak(gpu, m), "FLOP/s",
           model::gemmPeakText(gpu, m) + " (datasheet; the GEMMs run at the activations' precision)", {}});
    f.add({"plan.bucket_bytes", "Gradient bucket size", bucket, "B",
           p.bucketBytes ? "input: " + Bytes(bucket)
           : p.sharding == Sharding::Ddp
               ? "PyTorch DDP's default: " + Bytes(bucket) + " (25 MiB)"
               : "Megatron-core's default: max(40·10⁶, 10⁶·dp) = " + N(bucket / sg, 0) + " parameters · s_g = " + Bytes(bucket),
           {}});

}

// The signature's numbers as figures of each strategy's namespace (docs/model.md §3): calls and peers
// first (signatureHead), the largest payload and the total after the strategy's own figures (signatureTail).
void Builder::signatureHead(Strategy st, const std::string& prefix)
{
    FigureSet& f = out.figures;
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
}

void Builder::signatureTail(Strategy st, const std::string& prefix)
{
    FigureSet& f = out.figures;
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
    std::string formula = "the " + name + " call that moves the most bytes per step: " + what;
    if (const std::string paper = paperRounding(prefix + "payload_bytes", r.payloadBytes); !paper.empty())
        formula += "; the paper rounds it (" + paper + ")";
    f.add({prefix + "payload_bytes", name + " payload M (the call moving most bytes)", r.payloadBytes, "B", formula, {}});
    f.add({prefix + "total_bytes_per_step", name + " bytes sent per step, all GPUs", r.totalBytesPerStep, "B",
           "Σ over the " + I(gpus) + " GPUs of the bytes each sends for " + name + " = " + Bytes(r.totalBytesPerStep)
               + " (" + I(r.groups) + " groups, " + I(r.groupsCrossingNodes) + " leave a node)",
           {prefix + "bytes_per_gpu_per_step"}});
}

// The pipeline stage holding the most parameters (the first of equals).
std::uint64_t Builder::largestStage() const
{
    std::uint64_t bigStage = 0;
    for (std::uint64_t s = 0; s < P; ++s)
        if (stages[s].main > stages[bigStage].main)
            bigStage = s;
    return bigStage;
}

// DP (docs/model.md §6, Example 5.1): micro-batches, the gradient payload and buckets, bytes per GPU.
void Builder::addDpFigures()
{
    FigureSet& f = out.figures;
    const std::string sB = I(b.microBatch), sT = I(b.sequenceLength), sG = I(b.globalBatchTokens), sdp = I(D);
    f.add({"dp.n_acc", "Micro-batches per replica per step N_acc", static_cast<double>(nAcc), "",
           "G/(B·T·dp) = " + sG + "/(" + sB + "·" + sT + "·" + sdp + ") = " + I(nAcc)
               + " (gradient accumulation micro-steps)",
           cite({"batch.G", "batch.B", "batch.T", "plan.dp"})});
    signatureHead(Strategy::DP, "dp.");
    const std::uint64_t bigStage = largestStage();
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
    f.add({"dp.buckets", "Gradient buckets", std::ceil(gradBytes / bucket), "",
           "⌈M_DP / bucket⌉ = ⌈" + Bytes(gradBytes) + " / " + Bytes(bucket) + "⌉ = "
               + N(std::ceil(gradBytes / bucket)) + " (reductions that overlap the backward pass)",
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

}

// ZeRO / FSDP: the shard each rank keeps and the DP traffic against DDP's.
void Builder::addZeroFigures()
{
    FigureSet& f = out.figures;
    const auto& sig = out.comm.signature;
    const StageParams& big = stages[largestStage()];
    const double gradBytes = big.main * sg;
    const std::string sdp = I(D);
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
    const bool fp8Gather = p.fp8AllGather && m.fp8Recipe != model::Fp8Recipe::None;
    if (zero3 && !fp8Gather) {
        const double perMicro = D > 1 || H > 1 ? 3 * (n - 1) / n * gradBytes : 0.0;
        f.add({"zero.bytes_per_gpu_per_microstep", "ZeRO-3 bytes per GPU per micro-step (s_w = s_g)", perMicro, "B",
               "3·(N−1)/N·M (AllGather forward, AllGather backward, ReduceScatter) = 3·(" + N(n) + "−1)/" + N(n) + "·"
                   + Bytes(gradBytes) + " = " + Bytes(perMicro),
               {"dp.grad_allreduce_bytes", hybrid ? "plan.shard_group_size" : "plan.dp"}});
    } else if (zero3) {
        // The layers' weights gathered in FP8 (1 B), the embedding and the head at s_w; gradients at s_g.
        const double gathered = big.layerMain * 1.0 + (big.main - big.layerMain) * sw;
        const double perMicro = D > 1 || H > 1 ? (n - 1) / n * (2 * gathered + gradBytes) : 0.0;
        f.add({"zero.bytes_per_gpu_per_microstep", "ZeRO-3 bytes per GPU per micro-step (FP8 all-gather)", perMicro, "B",
               "(N−1)/N·(2·W_gather + M) (AllGather forward, AllGather backward, ReduceScatter), W_gather = the "
               "layers' " + N(big.layerMain) + " params · 1 B + the rest's " + N(big.main - big.layerMain) + " · s_w "
                   + N(sw) + " = " + Bytes(gathered) + ": (" + N(n) + "−1)/" + N(n) + "·(2·" + Bytes(gathered) + " + "
                   + Bytes(gradBytes) + ") = " + Bytes(perMicro),
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

// PP (docs/model.md §6, Example 5.2): boundaries, boundary bytes, Send/Recv calls, bytes per GPU.
void Builder::addPpFigures()
{
    FigureSet& f = out.figures;
    const auto& sig = out.comm.signature;
    const std::string sd = I(m.hiddenSize), spp = I(P), stp = I(Tt);
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

}

// The slowest layer's forward time per micro-batch, with how it was found (input, kernel model or
// FLOPs at the compute efficiency); returns it.
double Builder::addLayerTimeFigure()
{
    FigureSet& f = out.figures;
    const std::string sB = I(b.microBatch), sT = I(b.sequenceLength), sd = I(m.hiddenSize), stp = I(Tt);
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
                      + sB + "·" + sT + "²·" + sd + ")/" + stp + " / (" + N(model::gemmPeak(gpu, m) / 1e12) + "·10¹² FLOP/s·"
                      + N(p.computeEfficiency, 3) + ") = " + N(flops) + " FLOP / "
                      + N(model::gemmPeak(gpu, m) * p.computeEfficiency / 1e12) + "·10¹² FLOP/s = " + formatSeconds(slowest)
                      + (moeLayer ? " (MoE layer: k experts active per token)" : "");
            inputs = cite({"batch.B", "batch.T", "model.hidden_size", "plan.tp", "plan.peak_flops",
                           "plan.compute_efficiency", "model.params.attention", "model.params.mlp"});
        }
        f.add({"plan.layer_forward_seconds", "Layer forward time per micro-batch", slowest, "s", formula, inputs});
    }
    return slowest;
}

// Each stage's time per micro-batch, the bottleneck, the balance, the bubble and the makespan.
void Builder::addStageTimeFigures()
{
    FigureSet& f = out.figures;
    const std::string spp = I(P);
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

}

// TP (docs/model.md §6, Example 5.3): the AllReduce payload, how many per layer, how often, bytes per GPU.
void Builder::addTpFigures(double slowest)
{
    FigureSet& f = out.figures;
    const auto& sig = out.comm.signature;
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

}

// EP (docs/model.md §3.2): experts per rank, the All-to-All payload, bytes per layer and per GPU.
void Builder::addEpFigures()
{
    FigureSet& f = out.figures;
    const auto& sig = out.comm.signature;
    const std::string sep = I(EP);
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

// Stage 3's figures: the inputs, then per strategy its bytes (with ZeRO's shards), the layer and stage
// times with the pipeline bubble, the kernel model.
void Builder::buildFigures()
{
    addPlanInputs();
    addDpFigures();
    if (p.sharding != Sharding::Ddp)
        addZeroFigures();
    addPpFigures();
    const double slowest = addLayerTimeFigure();
    addKernelFigures(out.figures);
    addStageTimeFigures();
    addTpFigures(slowest);
    if (moe)
        addEpFigures();
}

} // namespace tw::parallel::detail
