#pragma once
// Private to core/parallel: the builder derivePlan runs (plan.cpp), whose steps live in one file each —
// the groups and collective calls (comm.cpp), the figures (plan_figures.cpp) — and the small helpers
// they and the validation (plan_validate.cpp) share.

#include "plan.h"

#include "base/units.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tw::parallel::detail {

using model::Phase;
using S = std::vector<std::string>;

// Degrees and GPU counts past these are not laid out (validate() names them).
inline constexpr std::uint64_t kMaxDegree = std::uint64_t(1) << 20;
inline constexpr std::uint64_t kMaxGpus = std::uint64_t(1) << 22;

inline std::string I(std::uint64_t v) { return formatUnsigned(v); }
inline std::string N(double v, int decimals = 2) { return formatCount(v, decimals); }
inline std::string Bytes(double v) { return formatCount(v, 2) + " B"; }

inline std::size_t strategyIndex(Strategy s) { return static_cast<std::size_t>(s); }

// Parameters of block l on one TP (and EP) rank under tp × ep (plan.cpp; memory.cpp counts the same).
// Main: all but the experts, plus the experts when ep = 1; expert: the EP rank's experts (0 outside
// MoE blocks).
[[nodiscard]] double layerMainParamsOf(const model::ModelConfig& m, const model::ParameterBreakdown& pb,
                                       std::uint64_t tp, std::uint64_t ep, std::uint64_t l);
[[nodiscard]] double layerExpertParamsOf(const model::ModelConfig& m, const model::ParameterBreakdown& pb,
                                         std::uint64_t tp, std::uint64_t ep, std::uint64_t l);

// The divisors of n in increasing order (plan_validate.cpp).
[[nodiscard]] std::vector<std::uint64_t> divisorsOf(std::uint64_t n);

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
    double bucket = kPytorchBucketBytes; // bucketBytesFor(p, m)
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
    void payloadFormulas(); // buildCalls' steps (comm.cpp)
    void forwardCalls();
    void backwardCalls();
    void stepEndCalls();
    void buildSignature();
    void perGpuSums(); // buildSignature's steps (comm.cpp)
    void signatureTotals();
    void signatureFrequencies();
    void buildTiming();
    void buildFigures();
    // buildFigures' steps (plan_figures.cpp).
    void addPlanInputs();
    void signatureHead(Strategy st, const std::string& prefix);
    void signatureTail(Strategy st, const std::string& prefix);
    [[nodiscard]] std::uint64_t largestStage() const;
    void addDpFigures();
    void addZeroFigures();
    void addPpFigures();
    double addLayerTimeFigure();
    void addStageTimeFigures();
    void addTpFigures(double slowest);
    void addEpFigures();
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

} // namespace tw::parallel::detail
