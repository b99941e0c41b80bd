// Stage 1 → stage 3: where one token of the packed training text is trained — its optimizer
// step, DP replica, micro-batch and row, the GPUs holding its activations, and each TP rank's share.

#include "plan.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tw::parallel {

TokenPlacement placeToken(const PlanDerivation& plan, const model::ModelConfig& model,
                          const model::BatchShape& batch, std::uint64_t token)
{
    TokenPlacement p;
    p.token = token;
    const std::uint64_t T = batch.sequenceLength;
    const std::uint64_t B = batch.microBatch;
    const std::uint64_t dp = std::max<std::uint64_t>(1, plan.plan.dp);
    if (T == 0)
        return p;
    // GPT-style packing (docs/model.md §1): token i is position i mod T of sequence i / T.
    p.sequence = token / T;
    p.position = token % T;
    // S = G/T sequences per optimizer step; each DP replica takes N_acc·B consecutive ones,
    // N_acc = G/(B·T·dp) (docs/model.md §6, Example 5.1), as N_acc micro-batches of B rows.
    const std::uint64_t perStep = std::max<std::uint64_t>(1, batch.globalBatchTokens / T);
    p.step = p.sequence / perStep;
    const std::uint64_t q = p.sequence % perStep;
    if (B > 0) {
        const std::uint64_t tokensPerMicroStep = B * T * dp;
        const std::uint64_t accumulation = tokensPerMicroStep ? batch.globalBatchTokens / tokensPerMicroStep : 0;
        const std::uint64_t perReplica = std::max<std::uint64_t>(1, accumulation) * B;
        p.dpReplica = std::uint32_t(std::min(q / perReplica, dp - 1));
        p.microBatch = (q % perReplica) / B;
        p.row = q % B;
    }

    // Its replica's pp × tp GPUs hold its activations (mesh: one coordinate per GPU).
    const std::vector<MeshCoord>& mesh = plan.mesh.empty() ? plan.plan.assignment : plan.mesh;
    for (std::size_t g = 0; g < mesh.size(); ++g)
        if (mesh[g].dp == p.dpReplica)
            p.gpus.push_back(std::uint32_t(g));

    // Megatron TP (arXiv 2104.04473 §2.3): attention split by heads, the MLP by columns; the hidden
    // vector between layers is whole on every rank, or with sequence parallelism (arXiv 2205.05198
    // §4.2.2) split into t contiguous blocks of ⌈T/t⌉ positions.
    const std::uint64_t t = std::max<std::uint64_t>(1, plan.plan.tp);
    const std::uint64_t a = model.heads, d = model.hiddenSize;
    const std::uint64_t positionsPerRank = (T + t - 1) / t;
    for (std::uint64_t r = 0; r < t; ++r) {
        TokenPlacement::Slice slice;
        slice.tpRank = std::uint32_t(r);
        slice.headBegin = r * a / t;
        slice.headEnd = (r + 1) * a / t;
        slice.colBegin = r * d / t;
        slice.colEnd = (r + 1) * d / t;
        slice.holdsPositionBetweenLayers = !plan.plan.sequenceParallel || p.position / positionsPerRank == r;
        p.slices.push_back(slice);
    }
    return p;
}

} // namespace tw::parallel
