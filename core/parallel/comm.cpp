// Stage 3: the groups a plan's mesh forms and every collective call of one optimizer step, with the
// per-strategy communication signature (Megatron-LM arXiv 2104.04473 §3; Korthikanti et al. arXiv
// 2205.05198 §4.2.2; ZeRO arXiv 1910.02054 §7; PyTorch FSDP; docs/model.md §3–§4).

#include "plan.h"
#include "planbuilder_p.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tw::parallel {

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

namespace detail {

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
    // A DP-kind group on stage s, tensor rank t: the dp ranks first, first + stride, … (count of them).
    auto addDpGroup = [&](std::uint64_t s, std::uint64_t t, std::uint64_t first, std::uint64_t stride,
                          std::uint64_t count, const char* name) {
        std::vector<std::uint32_t> mem(count);
        for (std::uint64_t j = 0; j < count; ++j)
            mem[j] = at(first + j * stride, s, t);
        addGroup(Strategy::DP, name, std::move(mem));
    };

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
            for (std::uint64_t t = 0; t < Tt; ++t)
                addDpGroup(s, t, 0, 1, D, "dp");
    }
    shardBase = index();
    if (hybrid && H > 1) {
        for (std::uint64_t s = 0; s < P; ++s)
            for (std::uint64_t t = 0; t < Tt; ++t)
                for (std::uint64_t j = 0; j < D / H; ++j)
                    addDpGroup(s, t, j * H, 1, H, "dp-shard");
    }
    replicaBase = index();
    if (hybrid && D / H > 1) {
        haveReplica = true;
        for (std::uint64_t s = 0; s < P; ++s)
            for (std::uint64_t t = 0; t < Tt; ++t)
                for (std::uint64_t r = 0; r < H; ++r)
                    addDpGroup(s, t, r, H, D / H, "dp-replica");
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
                for (std::uint64_t r = 0; r < EP; ++r)
                    addDpGroup(s, t, r, EP, D / EP, "dp-expert");
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
    // FSDP's FP8 all-gather: a layer's weights on the wire in FP8 (torchtitan casts the shard before the
    // gather; the embedding and the head are not FP8 layers).
    const bool fp8 = gather && p.fp8AllGather && m.fp8Recipe != model::Fp8Recipe::None && layer >= 0;
    const double s = fp8 ? 1.0 : gather ? sw : sg;
    const std::string sName = fp8 ? "s_fp8 (parallel.fp8_all_gather) " : gather ? "s_w " : "s_g ";
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
            bwd.back().overlapsWeightGradient = true; // MLP up's ∂weight GEMM (parallel.tpOverlap)
            call(bwd, CollectiveKind::AllGather, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "sequence-parallel AllGather of the attention output gradient (backward of the ReduceScatter after "
                 "attention)",
                 tpFormula);
            call(bwd, CollectiveKind::ReduceScatter, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "sequence-parallel ReduceScatter of the attention input gradient (backward of the AllGather before "
                 "attention)",
                 tpFormula);
            bwd.back().overlapsWeightGradient = true; // QKV's ∂weight GEMM
        } else {
            call(bwd, CollectiveKind::AllReduce, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "MLP input-gradient AllReduce", tpFormula);
            bwd.back().overlapsWeightGradient = true; // MLP up's ∂weight GEMM (parallel.tpOverlap)
            call(bwd, CollectiveKind::AllReduce, Strategy::TP, Phase::Backward, first, count, tpM, nAcc, layer,
                 "attention input-gradient AllReduce", tpFormula);
            bwd.back().overlapsWeightGradient = true; // QKV's ∂weight GEMM
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

// The payloads and formulas of the calls: TP's, PP's and (MoE) EP's M.
void Builder::payloadFormulas()
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

}

// Forward, chunk by chunk: ZeRO/FSDP gathers per unit, TP calls per layer, PP sends between chunks.
void Builder::forwardCalls()
{
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
}

// Backward, chunk by chunk in reverse: gathers, TP calls and gradient reductions per unit, PP sends.
void Builder::backwardCalls()
{
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

}

// Once per step (or per micro-step) at the end of the backward pass, then the optimizer: each stage's
// DP reductions under its sharding, and the tied embedding's AllReduce.
void Builder::stepEndCalls()
{
    const std::string sd = I(m.hiddenSize), st = I(Tt);
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
                     mainG + " (once per optimizer step, in " + N(std::ceil(st.main * sg / bucket))
                         + " buckets of ≤ " + Bytes(bucket) + ")");
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

}

// Every call of the step: payloads, forward, backward, step end, in that order.
void Builder::buildCalls()
{
    payloadFormulas();
    forwardCalls();
    backwardCalls();
    stepEndCalls();
    auto& calls = out.comm.calls;
    calls.reserve(fwd.size() + bwd.size() + bwdEnd.size() + opt.size());
    for (auto* list : {&fwd, &bwd, &bwdEnd, &opt})
        for (CollectiveCall& c : *list)
            calls.push_back(std::move(c));
}

// Per GPU and strategy: Σ repeat·(bytes one member sends) and the calls, over the calls it takes part in.
// Calls over the same groups (every layer's TP AllReduces of one stage …) are summed first when the
// range's groups have one size, so each GPU is visited once per range rather than once per call.
void Builder::perGpuSums()
{
    auto& comm = out.comm;
    for (std::size_t s = 0; s < kStrategyCount; ++s) {
        gpuBytes[s].assign(gpus, 0.0);
        gpuCalls[s].assign(gpus, 0.0);
    }
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
}

// Each strategy's signature: bytes per GPU and in all, calls, the busiest GPU, groups, peers, and the
// payload of the call that moves the most bytes per step.
void Builder::signatureTotals()
{
    auto& comm = out.comm;
    comm.bytesSentPerGpu.assign(gpus, 0.0);
    comm.signature.clear();
    for (std::size_t s = 0; s < kStrategyCount; ++s) {
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
}

// How often each strategy communicates, in words ("not used" at degree 1).
void Builder::signatureFrequencies()
{
    auto& comm = out.comm;
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

// The communication signature (docs/model.md §3): per-GPU sums, totals, frequencies.
void Builder::buildSignature()
{
    perGpuSums();
    signatureTotals();
    signatureFrequencies();
}

} // namespace detail

} // namespace tw::parallel
