// Stage 3, pipeline parallelism: the default layer partition and the per-stage timeline of one
// optimizer step under GPipe, 1F1B (PipeDream-Flush) and Megatron's interleaved schedule.

#include "plan.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tw::parallel {

std::vector<std::uint64_t> defaultPartition(std::uint64_t layers, std::uint64_t stages)
{
    if (stages == 0 || stages > layers)
        return {};
    // Extras (L mod n) on one centred block of stages from (n − extras)/2, rounded down; the ends carry
    // embedding and head (docs/model.md §6, Example 5.2: 12 on 8 → [1,1,2,2,2,2,1,1]; 13 on 4 → [3,4,3,3]).
    const std::uint64_t base = layers / stages;
    const std::uint64_t extras = layers % stages;
    const std::uint64_t first = (stages - extras) / 2;
    std::vector<std::uint64_t> partition(stages, base);
    for (std::uint64_t s = first; s < first + extras; ++s)
        ++partition[s];
    return partition;
}

namespace {

// Beyond this many blocks the timeline holds only the per-stage sums (no blocks, makespan 0):
// 4·2^20 blocks of 32 B is 128 MiB; m = 4,096 on 64 stages is 2^19 blocks.
constexpr std::uint64_t kMaxBlocks = std::uint64_t(1) << 22;

// One unit of work on a stage: a forward or backward pass of one micro-batch through one chunk.
struct Op {
    std::uint32_t microBatch = 0;
    std::uint32_t chunk = 0;
    bool backward = false;
};

// A stage's order, computed on demand rather than stored (m = 4,096 on 64 stages is 2^19 ops).
// Every schedule here is the same shape: `warmup` forwards, then one forward and one backward
// alternately, then the remaining backwards (1F1B: Narayanan et al. 2021 §2.2; Megatron's
// interleaved schedule likewise); GPipe is the case warmup = all (Huang et al. 2019).
struct StageOrder {
    std::uint32_t p = 1, v = 1, m = 1;
    bool grouped = false;    // Megatron's interleaved micro-op sequence, else micro-batch major
    std::uint64_t warmup = 0; // ≤ n
    [[nodiscard]] std::uint64_t n() const { return std::uint64_t(m) * v; } // forwards (= backwards) per stage
    [[nodiscard]] std::uint64_t size() const { return 2 * n(); }

    // The k-th forward (or backward) micro-op of the sequence.
    [[nodiscard]] Op nth(std::uint64_t k, bool backward) const
    {
        Op op;
        op.backward = backward;
        if (v == 1) {
            op.microBatch = std::uint32_t(k);
        } else if (!grouped) {
            // Micro-batch major: the chunks of a micro-batch in order (forward) or reverse (backward).
            op.microBatch = std::uint32_t(k / v);
            op.chunk = std::uint32_t(k % v);
        } else {
            // Megatron (arXiv 2104.04473 §2.2): groups of p micro-batches run through chunk 0, 1, …;
            // micro-op k is chunk (k/p) % v of micro-batch (k/(p·v))·p + k % p. With m % p ≠ 0 the
            // last group holds the m % p left over (megatron-core get_schedule_table).
            const std::uint64_t full = std::uint64_t(m / p) * p * v;
            if (k < full) {
                op.microBatch = std::uint32_t((k / (std::uint64_t(p) * v)) * p + k % p);
                op.chunk = std::uint32_t((k / p) % v);
            } else {
                const std::uint64_t rest = m % p, j = k - full;
                op.microBatch = std::uint32_t(m / p * p + j % rest);
                op.chunk = std::uint32_t(j / rest);
            }
        }
        if (backward)
            op.chunk = v - 1 - op.chunk;
        return op;
    }

    // The i-th op the stage runs: F[0..W), then F[W+j], B[j] alternately, then B[n−W..n).
    [[nodiscard]] Op at(std::uint64_t i) const
    {
        const std::uint64_t total = n();
        if (i < warmup)
            return nth(i, false);
        if (i >= 2 * total - warmup)
            return nth(i - total, true);
        const std::uint64_t j = i - warmup;
        return j % 2 == 0 ? nth(warmup + j / 2, false) : nth(j / 2, true);
    }
};

// GPipe: every forward in micro-batch order, then every backward. Each stage's order is a
// restriction of one global topological order, so it never deadlocks.
StageOrder gpipeOrder(std::uint32_t p, std::uint32_t v, std::uint32_t m) { return {p, v, m, false, std::uint64_t(m) * v}; }

// The schedule's order on stage s.
StageOrder orderOf(PipelineSchedule schedule, std::uint32_t s, std::uint32_t p, std::uint32_t v, std::uint32_t m)
{
    if (schedule == PipelineSchedule::Interleaved && v > 1) {
        // Megatron's warm-up: (p − s − 1)·2 + (v − 1)·p micro-ops, or all of them when m == p
        // (forward_backward_pipelining_with_interleaving, "all_warmup_microbatches").
        const std::uint64_t total = std::uint64_t(m) * v;
        const std::uint64_t warmup = m == p ? total : std::uint64_t(p - s - 1) * 2 + std::uint64_t(v - 1) * p;
        return {p, v, m, true, std::min(warmup, total)};
    }
    if (schedule != PipelineSchedule::GPipe && v == 1) // 1F1B; interleaved with v = 1 is 1F1B
        return {p, 1, m, false, std::min<std::uint64_t>(p - s - 1, m)};
    return gpipeOrder(p, v, m); // GPipe, or 1F1B asked for with several chunks per stage
}

// Runs every stage's order with no communication time: a block starts when its stage is free and
// its dependency has ended. Start times follow from the orders alone, so each stage is advanced
// as far as its dependencies allow and woken when the block it waits for ends: O(blocks).
// Stage s's blocks go to blocks[s·2·m·v …]. Returns false when the orders deadlock.
bool simulate(const std::vector<StageOrder>& orders, std::uint32_t p, std::uint32_t v, std::uint32_t m,
              const std::vector<double>& forward, const std::vector<double>& backward,
              std::vector<PipelineBlock>& blocks)
{
    const std::uint64_t chunks = std::uint64_t(p) * v;
    const std::uint64_t perStage = 2 * std::uint64_t(m) * v;
    // Block id: (micro-batch · p·v + virtual stage) · 2 + backward.
    auto blockId = [&](std::uint32_t mb, std::uint64_t k, bool bw) { return ((mb * chunks + k) << 1) | (bw ? 1u : 0u); };
    std::vector<double> endOf(std::size_t(m) * chunks * 2, -1.0);
    std::vector<std::uint64_t> next(p, 0);
    std::vector<double> freeAt(p, 0.0);
    std::vector<char> waiting(p, 0);
    std::vector<std::uint32_t> work;
    work.reserve(p);
    for (std::uint32_t s = p; s-- > 0;)
        work.push_back(s);
    blocks.resize(std::size_t(perStage) * p);

    while (!work.empty()) {
        const std::uint32_t s = work.back();
        work.pop_back();
        waiting[s] = 0;
        const StageOrder& order = orders[s];
        while (next[s] < perStage) {
            const Op op = order.at(next[s]);
            const std::uint64_t k = std::uint64_t(op.chunk) * p + s; // virtual stage: chunk k runs on stage k % p
            double ready = 0;
            if (op.backward || k > 0) {
                const std::uint64_t dep = !op.backward ? blockId(op.microBatch, k - 1, false) // F(mb,k) after F(mb,k−1)
                    : k + 1 == chunks ? blockId(op.microBatch, k, false)    // B(mb,last) after F(mb,last)
                                      : blockId(op.microBatch, k + 1, true); // B(mb,k) after B(mb,k+1)
                if (endOf[dep] < 0) {
                    waiting[s] = 1; // woken when `dep` ends
                    break;
                }
                ready = endOf[dep];
            }
            const double start = std::max(freeAt[s], ready);
            const double end = start + (op.backward ? backward[k] : forward[k]);
            endOf[blockId(op.microBatch, k, op.backward)] = end;
            freeAt[s] = end;
            blocks[s * perStage + next[s]] = {s, op.microBatch, op.chunk, op.backward, start, end};
            ++next[s];
            // Wake the stage of the one block that depends on this one, if it waits.
            if (op.backward && k == 0)
                continue;
            // F(mb,k+1) runs on the next stage (k % p = s), B(mb,k−1) on the previous one, wrapping.
            const std::uint32_t dependentStage = !op.backward ? (k + 1 == chunks ? s : (s + 1 == p ? 0 : s + 1))
                                                              : (s == 0 ? p - 1 : s - 1);
            if (dependentStage != s && waiting[dependentStage]) {
                waiting[dependentStage] = 0;
                work.push_back(dependentStage);
            }
        }
    }
    for (std::uint32_t s = 0; s < p; ++s)
        if (next[s] < perStage)
            return false; // no stage can progress: the orders deadlock
    return true;
}

// A duration as used: missing, negative or non-finite entries count as 0.
double durationAt(const std::vector<double>& seconds, std::size_t k)
{
    const double t = k < seconds.size() ? seconds[k] : 0.0;
    return std::isfinite(t) && t > 0 ? t : 0.0;
}

} // namespace

PipelineTimeline pipelineTimeline(PipelineSchedule schedule, std::uint64_t stages, std::uint64_t virtualStages,
                                  std::uint64_t microBatches, const std::vector<double>& chunkForwardSeconds,
                                  const std::vector<double>& chunkBackwardSeconds)
{
    PipelineTimeline timeline;
    if (stages == 0 || virtualStages == 0 || stages > kMaxBlocks || virtualStages > kMaxBlocks)
        return timeline;
    const std::uint64_t chunks = stages * virtualStages;
    if (chunks > kMaxBlocks)
        return timeline;
    const auto p = std::uint32_t(stages);
    const auto v = std::uint32_t(virtualStages);

    std::vector<double> forward(chunks), backward(chunks);
    for (std::uint64_t k = 0; k < chunks; ++k) {
        forward[k] = durationAt(chunkForwardSeconds, k);
        backward[k] = durationAt(chunkBackwardSeconds, k);
    }
    timeline.stageForwardSeconds.assign(p, 0.0);
    timeline.stageBackwardSeconds.assign(p, 0.0);
    timeline.stageBusySeconds.assign(p, 0.0);
    for (std::uint64_t k = 0; k < chunks; ++k) {
        timeline.stageForwardSeconds[k % p] += forward[k];
        timeline.stageBackwardSeconds[k % p] += backward[k];
    }
    for (std::uint32_t s = 0; s < p; ++s)
        timeline.stageBusySeconds[s] = double(microBatches) * (timeline.stageForwardSeconds[s] + timeline.stageBackwardSeconds[s]);
    if (microBatches == 0 || microBatches > kMaxBlocks / (2 * chunks))
        return timeline;
    const auto m = std::uint32_t(microBatches);

    std::vector<StageOrder> orders(p);
    for (std::uint32_t s = 0; s < p; ++s)
        orders[s] = orderOf(schedule, s, p, v, m);
    if (!simulate(orders, p, v, m, forward, backward, timeline.blocks)) {
        // A deadlocking order (e.g. interleaving with m % p ≠ 0) falls back to GPipe's, which cannot deadlock.
        orders.assign(p, gpipeOrder(p, v, m));
        simulate(orders, p, v, m, forward, backward, timeline.blocks);
    }
    for (const PipelineBlock& b : timeline.blocks)
        timeline.makespan = std::max(timeline.makespan, b.end);
    // Bubble: idle stage-time over all stage-time (docs/model.md §3: (p−1)/m is idle over ideal).
    double busy = 0;
    for (double b : timeline.stageBusySeconds)
        busy += b;
    if (timeline.makespan > 0)
        timeline.bubbleFraction = std::max(0.0, 1.0 - busy / (double(p) * timeline.makespan));
    return timeline;
}

} // namespace tw::parallel
