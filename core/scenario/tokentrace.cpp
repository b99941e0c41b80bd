#include "tokentrace.h"

#include "base/units.h"
#include "collective/binding.h"
#include "collective/schedule.h"
#include "network/routing.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace tw::scenario {

namespace {

using parallel::CollectiveKind;
using parallel::Strategy;

std::string I(std::uint64_t v) { return formatUnsigned(v); }
std::string N(double v, int decimals = 2) { return formatCount(v, decimals); }
std::string Bytes(double v) { return formatCount(v, 2) + " B"; }

// The ids of `ids` that the set defines (a figure cites only what exists, so the graph stays closed).
std::vector<std::string> cite(const FigureSet& figures, std::initializer_list<const char*> ids)
{
    std::vector<std::string> out;
    for (const char* id : ids)
        if (figures.find(id))
            out.emplace_back(id);
    return out;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
    return out;
}

// "tp", "allreduce" … for figure ids.
std::string idPart(Strategy s) { return lower(parallel::toString(s)); }
std::string idPart(CollectiveKind k) { return std::string(collective::toString(collective::opFor(k))); }

// The part of the token a transfer carries: a byte range of the call's buffer (TP, PP), or, for an
// All-to-All, the blocks leaving (outbound) or reaching (inbound) the token's rank, of which its
// expected share under uniform routing is `fraction` of every byte.
struct Selector {
    enum class Kind { Range, Outbound, Inbound };
    Kind kind = Kind::Range;
    double lo = 0, hi = 0;       // Range
    std::uint32_t rank = 0;      // Outbound / Inbound
    double fraction = 0;         // Outbound / Inbound
    bool operator<(const Selector& o) const
    {
        return std::tie(kind, lo, hi, rank, fraction) < std::tie(o.kind, o.lo, o.hi, o.rank, o.fraction);
    }
};

// Overlap of the cyclic run [offset, offset + bytes) of a buffer of M bytes with [lo, hi).
double overlap(double offset, double bytes, double M, double lo, double hi)
{
    auto one = [&](double a, double b) { return std::max(0.0, std::min(b, hi) - std::max(a, lo)); };
    double sum = one(offset, offset + bytes);
    if (M > 0 && offset + bytes > M) // a Bruck AllGather chunk wrapping past the end
        sum += one(offset - M, offset + bytes - M);
    return sum;
}

struct RankPair {
    std::uint32_t src = 0, dst = 0;
    double bytes = 0; // the token's bytes (0 for gradient pairs: only the path matters)
};

using SpecKey = std::tuple<int, int, std::uint64_t, double, std::uint32_t, std::uint64_t, std::uint64_t>;
SpecKey specKey(const collective::ScheduleSpec& s)
{
    return {int(s.op), int(s.algorithm), s.ranks, s.bytes, s.root, s.ranksPerNode, s.pipelineChunks};
}

// The (source, destination) rank pairs of a schedule that carry the selected part of the token, with
// its bytes in them (rows), or every pair (gradients: `selector` null).
std::vector<RankPair> pairsOf(const collective::ScheduleSpec& spec, const Selector* selector)
{
    collective::Schedule schedule(spec);
    std::map<std::pair<std::uint32_t, std::uint32_t>, double> sum;
    std::vector<collective::Transfer> step;
    const double M = spec.bytes;
    while (schedule.next(step)) {
        for (const collective::Transfer& t : step) {
            if (t.src == t.dst)
                continue;
            double bytes = 0;
            if (selector) {
                const collective::Chunk c = schedule.chunk(t.chunk);
                switch (selector->kind) {
                case Selector::Kind::Range:
                    // A transfer carries its whole chunk (Transfer::bytes is the chunk's size).
                    bytes = overlap(c.offset, c.bytes, M, selector->lo, selector->hi);
                    break;
                case Selector::Kind::Outbound:
                    bytes = c.origin == selector->rank ? t.bytes * selector->fraction : 0;
                    break;
                case Selector::Kind::Inbound:
                    bytes = c.destination == selector->rank ? t.bytes * selector->fraction : 0;
                    break;
                }
                if (!(bytes > 0))
                    continue;
            }
            sum[{t.src, t.dst}] += bytes;
        }
    }
    std::vector<RankPair> out;
    out.reserve(sum.size());
    for (const auto& [k, b] : sum)
        out.push_back({k.first, k.second, b});
    return out;
}

} // namespace

const TokenTraceCall* TokenTrace::findCall(std::uint32_t call) const
{
    for (const TokenTraceCall& c : calls)
        if (c.call == call)
            return &c;
    return nullptr;
}

std::vector<std::uint32_t> TokenTrace::rowLinks() const
{
    std::vector<std::uint32_t> out;
    for (const TokenTraceLink& l : links)
        if (l.rowBytes > 0)
            out.push_back(l.link);
    return out;
}

std::vector<std::uint32_t> TokenTrace::gradientOnlyLinks() const
{
    std::vector<std::uint32_t> out;
    for (const TokenTraceLink& l : links)
        if (!(l.rowBytes > 0) && l.gradients)
            out.push_back(l.link);
    return out;
}

namespace {

// What the steps of traceToken share: the derivation's figures, its plan and bound calls, the batch
// shape and the plan's degrees, and where the token's row sits in the [T,B,d] hidden state.
struct TraceContext {
    const FigureSet& in;
    const parallel::PlanDerivation* plan = nullptr;
    const collective::CollectiveDerivation* bound = nullptr;
    std::uint64_t B = 1, T = 1, perStep = 1, dp = 1, tpDeg = 1, ppDeg = 1, nAcc = 1;
    bool sp = false;          // sequence parallelism with tp > 1
    std::uint32_t holder = 0; // the TP rank holding its position between layers (SP)
    std::uint64_t rowIndex = 0; // [T,B,d]: sequence-first
};

// One group of a call that carries the token: its row's part (selector) or its gradients.
struct Work {
    std::uint32_t group = 0;
    std::size_t call = 0; // index into tr.calls
    bool row = true;
    Selector selector;
};

// The calls that carry the token, one Work per group, and what the notes need to know.
struct CarryingCalls {
    std::vector<Work> work;
    parallel::PerStrategy<double> wireTotal{};
    bool anyGradient = false, anyEp = false;
    std::map<std::tuple<int, int, double>, std::string> figureIds; // one figure per kind of call
    std::map<std::string, int> idUse;
};

// Stage 1: the token itself (its index, id and bytes of the text).
void traceTokenItself(TokenTrace& tr, const Derivation& d, std::uint64_t tokenIndex)
{
    const FigureSet& in = d.figures;
    FigureSet& f = tr.figures;
    tr.token = tokenIndex;
    tr.span = d.tokens()[tokenIndex];
    const std::string& text = d.stage1->tokenized->text;
    if (tr.span.end <= text.size() && tr.span.begin <= tr.span.end)
        tr.piece = text.substr(tr.span.begin, tr.span.end - tr.span.begin);
    f.add({"trace.token", "Followed token #", double(tokenIndex), "",
           "token #" + I(tokenIndex) + " of the text (0-based): id " + I(tr.span.id) + ", bytes " + I(tr.span.begin)
               + "–" + I(tr.span.end) + " of the text, chosen in stage 1",
           cite(in, {"tokens.count"})});
    f.add({"trace.token_id", "Its token id", double(tr.span.id), "",
           "the tokenizer's id for its " + I(tr.span.end - tr.span.begin) + " byte(s)", {"trace.token"}});
}

// The ids, with "trace.sequence" first.
std::vector<std::string> withSequence(const FigureSet& in, std::initializer_list<const char*> ids)
{
    auto v = cite(in, ids);
    v.insert(v.begin(), "trace.sequence");
    return v;
}

// Stage 2: where it sits in the micro-batch [B,T] (GPT-style packing, docs/model.md §1 and §3.3: token i
// is position i mod T of sequence ⌊i / T⌋), its step and its row's bytes.
void traceBatchPosition(TokenTrace& tr, const Derivation& d, const model::BatchShape& batch, std::uint64_t tokenIndex,
                        TraceContext& ctx)
{
    const FigureSet& in = d.figures;
    FigureSet& f = tr.figures;
    tr.B = batch.microBatch;
    tr.T = batch.sequenceLength;
    tr.d = d.model.hiddenSize;
    const double sAct = model::bytesPerElement(d.model.activations);
    tr.activationType = std::string(model::toString(d.model.activations));
    const std::uint64_t T = ctx.T = std::max<std::uint64_t>(1, tr.T);
    ctx.B = std::max<std::uint64_t>(1, tr.B);
    tr.sequence = tokenIndex / T;
    tr.position = tokenIndex % T;
    tr.rowBytes = double(tr.d) * sAct;
    {
        auto inputs = cite(in, {"batch.T"});
        inputs.insert(inputs.begin(), "trace.token");
        f.add({"trace.sequence", "Its sequence of T tokens", double(tr.sequence), "",
               "⌊i / T⌋ = ⌊" + I(tokenIndex) + " / " + I(T) + "⌋ = " + I(tr.sequence), inputs});
        f.add({"trace.position", "Its position t in the sequence", double(tr.position), "",
               "i mod T = " + I(tokenIndex) + " mod " + I(T) + " = " + I(tr.position), inputs});
    }
    const std::uint64_t perStep = ctx.perStep = std::max<std::uint64_t>(1, batch.globalBatchTokens / T);
    f.add({"trace.step", "Its optimizer step", double(tr.sequence / perStep), "",
           "⌊sequence / (G/T)⌋ = ⌊" + I(tr.sequence) + " / (" + I(batch.globalBatchTokens) + "/" + I(T) + ")⌋ = ⌊"
               + I(tr.sequence) + " / " + I(perStep) + "⌋ = " + I(tr.sequence / perStep),
           withSequence(in, {"batch.G", "batch.T"})});
    f.add({"trace.row_values", "Values in its row x[b,t,:]", double(tr.d), "",
           "d = " + I(tr.d) + " (one value per hidden dimension)", cite(in, {"model.hidden_size"})});
    f.add({"trace.row_bytes", "Bytes of its row x[b,t,:]", tr.rowBytes, "B",
           "d·s_act = " + I(tr.d) + "·" + N(sAct) + " = " + Bytes(tr.rowBytes) + " (" + tr.activationType + ")",
           cite(in, {"model.hidden_size", "model.bytes.activations"})});
}

// Stage 3: the plan's placement — its replica, micro-batch, row and GPUs (by stage, in TP order).
void tracePlacement(TokenTrace& tr, const Derivation& d, const model::BatchShape& batch, std::uint64_t tokenIndex,
                    TraceContext& ctx)
{
    const FigureSet& in = ctx.in;
    FigureSet& f = tr.figures;
    const parallel::PlanDerivation* plan = ctx.plan;
    const std::uint64_t B = ctx.B, T = ctx.T;
    tr.placed = true;
    tr.placement = parallel::placeToken(*plan, d.model, batch, tokenIndex);
    const parallel::TokenPlacement& pl = tr.placement;
    tr.row = pl.row;
    const std::uint64_t dp = ctx.dp = std::max<std::uint64_t>(1, plan->plan.dp);
    const std::uint64_t tpDeg = ctx.tpDeg = std::max<std::uint64_t>(1, plan->plan.tp);
    const std::uint64_t ppDeg = ctx.ppDeg = std::max<std::uint64_t>(1, plan->plan.pp);
    const std::uint64_t nAcc = ctx.nAcc =
        std::max<std::uint64_t>(1, batch.globalBatchTokens / std::max<std::uint64_t>(1, B * T * dp));
    const std::uint64_t perReplica = nAcc * B;
    const std::uint64_t q = tr.sequence % ctx.perStep;
    const std::string sq = "q = sequence mod (G/T) = " + I(tr.sequence) + " mod " + I(ctx.perStep) + " = " + I(q);
    f.add({"trace.replica", "Its DP replica", double(pl.dpReplica), "",
           sq + "; ⌊q / (N_acc·B)⌋ = ⌊" + I(q) + " / (" + I(nAcc) + "·" + I(B) + ")⌋ = " + I(pl.dpReplica)
               + " (each of the dp = " + I(dp) + " replicas takes N_acc·B consecutive sequences)",
           withSequence(in, {"batch.G", "batch.T", "dp.n_acc", "batch.B", "plan.dp"})});
    f.add({"trace.micro_batch", "Its micro-batch in the replica", double(pl.microBatch), "",
           sq + "; ⌊(q mod (N_acc·B)) / B⌋ = ⌊" + I(q % perReplica) + " / " + I(B) + "⌋ = " + I(pl.microBatch)
               + " of N_acc = " + I(nAcc),
           withSequence(in, {"batch.G", "batch.T", "dp.n_acc", "batch.B"})});
    f.add({"trace.row", "Its row b in the micro-batch [B,T]", double(pl.row), "",
           sq + "; q mod B = " + I(q) + " mod " + I(B) + " = " + I(pl.row),
           withSequence(in, {"batch.G", "batch.T", "batch.B"})});
    auto gpuInputs = cite(in, {"plan.pp", "plan.tp"});
    gpuInputs.insert(gpuInputs.begin(), "trace.replica");
    f.add({"trace.gpus", "GPUs holding its activations", double(pl.gpus.size()), "",
           "its replica's pp·tp GPUs = " + I(ppDeg) + "·" + I(tpDeg) + " = " + I(pl.gpus.size()), gpuInputs});
    tr.stageGpus.assign(ppDeg, {});
    std::vector<std::pair<std::uint32_t, std::uint32_t>> byTp; // (tp, gpu) per stage
    for (std::uint64_t s = 0; s < ppDeg; ++s) {
        byTp.clear();
        for (std::uint32_t g : pl.gpus)
            if (g < plan->mesh.size() && plan->mesh[g].pp == s)
                byTp.emplace_back(plan->mesh[g].tp, g);
        std::sort(byTp.begin(), byTp.end());
        for (const auto& [t, g] : byTp)
            tr.stageGpus[s].push_back(g);
    }
    ctx.sp = plan->plan.sequenceParallel && tpDeg > 1;
    for (const auto& s : pl.slices)
        if (s.holdsPositionBetweenLayers) {
            ctx.holder = s.tpRank;
            break;
        }
    ctx.rowIndex = tr.position * B + pl.row;
}

// The part of the token's row that group rank `rank` (TP rank tpRank) of call c moves: the selector and
// the bytes per group (perGroupShare). False when this group carries none of it (SP: not the holder).
bool selectRow(const TraceContext& ctx, const TokenTrace& tr, const parallel::CollectiveCall& c, std::uint32_t tpRank,
               int rank, Work& w, double& perGroupShare, bool& anyEp)
{
    const double BT = double(ctx.B) * double(ctx.T);
    switch (c.strategy) {
    case Strategy::TP: {
        // The whole [T,B,d] hidden state: its row is one of B·T rows.
        perGroupShare = c.payloadBytes / BT;
        w.selector.lo = double(ctx.rowIndex) * perGroupShare;
        w.selector.hi = w.selector.lo + perGroupShare;
        break;
    }
    case Strategy::PP: {
        // Without SP each TP rank sends its 1/t of every row (Megatron's scatter/gather); with SP
        // only the TP rank holding the token's position sends its row, whole.
        if (ctx.sp && tpRank != ctx.holder)
            return false;
        perGroupShare = c.payloadBytes / BT * (ctx.sp ? double(ctx.tpDeg) : 1.0);
        const std::uint64_t perRank = (ctx.T + ctx.tpDeg - 1) / ctx.tpDeg;
        const std::uint64_t local =
            ctx.sp ? (tr.position - ctx.holder * perRank) * ctx.B + tr.placement.row : ctx.rowIndex;
        w.selector.lo = double(local) * perGroupShare;
        w.selector.hi = w.selector.lo + perGroupShare;
        break;
    }
    case Strategy::EP: {
        if (ctx.sp && tpRank != ctx.holder)
            return false;
        perGroupShare = c.payloadBytes / BT * (ctx.sp ? double(ctx.tpDeg) : 1.0);
        // Dispatch (and the backward of combine) sends its rows to the experts; combine (and the
        // backward of dispatch) brings them back.
        const bool outbound = c.what.find("to their experts") != std::string::npos
                              || c.what.find("to the experts") != std::string::npos;
        w.selector.kind = outbound ? Selector::Kind::Outbound : Selector::Kind::Inbound;
        w.selector.rank = std::uint32_t(rank);
        w.selector.fraction = c.payloadBytes > 0 ? perGroupShare / c.payloadBytes : 0;
        anyEp = true;
        break;
    }
    case Strategy::DP: break;
    }
    return true;
}

// What a row-carrying call moves of the token, in words.
std::string rowNote(const parallel::CollectiveCall& c, bool sp)
{
    switch (c.strategy) {
    case Strategy::TP: return "its row of the hidden state [T,B,d], on its replica's TP group of this stage";
    case Strategy::PP:
        return sp ? "its row, sent whole by the TP rank that holds its position"
                  : "its row, 1/t of it from each TP rank of its replica";
    case Strategy::EP:
        return "k copies of its row to its top-k experts (which GPUs is the router's choice at run time; "
               "the wire bytes are the uniform-routing expectation)";
    case Strategy::DP: break;
    }
    return {};
}

// The row-bytes figure of a kind of call (strategy, collective, payload), added on its first call; sets
// the call's row and wire figure ids.
void addRowFigure(TokenTrace& tr, const TraceContext& ctx, CarryingCalls& cc, const parallel::CollectiveCall& c,
                  TokenTraceCall& tc, double perGroupShare)
{
    const std::uint64_t B = ctx.B, T = ctx.T;
    const auto key = std::make_tuple(int(c.strategy), int(c.kind), c.payloadBytes);
    auto it = cc.figureIds.find(key);
    if (it == cc.figureIds.end()) {
        std::string base = "trace." + idPart(c.strategy) + "." + idPart(c.kind);
        const int n = ++cc.idUse[base];
        if (n > 1)
            base += "_" + std::to_string(n);
        it = cc.figureIds.emplace(key, base).first;
        const char* payloadFigure = c.strategy == Strategy::TP   ? "tp.allreduce_bytes"
                                    : c.strategy == Strategy::PP ? "pp.boundary_bytes_fwd"
                                                                 : "ep.alltoall_bytes";
        auto inputs = cite(ctx.in, {payloadFigure, "batch.B", "batch.T"});
        std::string formula;
        const std::string M = Bytes(c.payloadBytes);
        const std::string share = Bytes(perGroupShare);
        const bool sp = ctx.sp;
        switch (c.strategy) {
        case Strategy::TP:
            formula = "M / (B·T) = " + M + " / (" + I(B) + "·" + I(T) + ") = " + Bytes(tc.rowBytes)
                      + ": its row of the hidden state";
            break;
        case Strategy::PP:
            formula = sp ? "t·M / (B·T) = " + I(ctx.tpDeg) + "·" + M + " / (" + I(B) + "·" + I(T) + ") = "
                               + Bytes(tc.rowBytes) + ": its whole row, from the TP rank holding its position"
                         : I(tc.groups.size()) + " pairs × M / (B·T) = " + I(tc.groups.size()) + " × " + M + " / ("
                               + I(B) + "·" + I(T) + ") = " + I(tc.groups.size()) + " × " + share + " = "
                               + Bytes(tc.rowBytes) + ": its row, 1/t from each TP rank";
            inputs.push_back("plan.tp");
            break;
        default:
            formula = I(tc.groups.size()) + " group(s) × " + (sp ? "t·" : "") + "M / (B·T) = "
                      + I(tc.groups.size()) + " × " + (sp ? I(ctx.tpDeg) + "·" : "") + M + " / (" + I(B) + "·"
                      + I(T) + ") = " + Bytes(tc.rowBytes) + ": k·CF copies of its row (top-k, capacity factor)";
            break;
        }
        tr.figures.add({it->second + ".row_bytes",
                        "Its bytes in one " + std::string(parallel::toString(c.strategy)) + " "
                            + std::string(parallel::toString(c.kind)) + " (" + c.what + ")",
                        tc.rowBytes, "B", formula, inputs});
    }
    tc.rowFigure = it->second + ".row_bytes";
    tc.wireFigure = it->second + ".wire_bytes";
}

// Stage 4: the calls of the step that carry the token — its row (TP, PP, EP) or the gradients it feeds
// (DP) — with one Work per group of its replica in them.
CarryingCalls listCarryingCalls(TokenTrace& tr, const TraceContext& ctx)
{
    const parallel::PlanDerivation* plan = ctx.plan;
    CarryingCalls cc;
    std::vector<char> inReplica(plan->mesh.size(), 0);
    for (std::uint32_t g : tr.placement.gpus)
        if (g < inReplica.size())
            inReplica[g] = 1;
    const std::vector<parallel::Group>& groups = plan->comm.groups;
    for (std::uint32_t ci = 0; ci < plan->comm.calls.size(); ++ci) {
        const parallel::CollectiveCall& c = plan->comm.calls[ci];
        if (c.groupCount == 0 || c.repeat == 0)
            continue;
        const bool gradient = c.strategy == Strategy::DP || (c.strategy == Strategy::PP && c.kind != CollectiveKind::SendRecv);
        if (gradient && c.kind != CollectiveKind::AllReduce && c.kind != CollectiveKind::ReduceScatter)
            continue; // parameter AllGathers move weights, nothing of any token
        TokenTraceCall tc;
        tc.call = ci;
        tc.carries = gradient ? TokenTraceCall::Carries::Gradients : TokenTraceCall::Carries::Row;
        // Per group: does it carry the token, and which part.
        double perGroupShare = 0;
        for (std::uint32_t g = c.firstGroup; g < c.firstGroup + c.groupCount && g < groups.size(); ++g) {
            const std::vector<std::uint32_t>& members = groups[g].members;
            int rank = -1;
            for (std::size_t r = 0; r < members.size(); ++r)
                if (members[r] < inReplica.size() && inReplica[members[r]]) {
                    rank = int(r);
                    break;
                }
            if (rank < 0)
                continue;
            Work w;
            w.group = g;
            w.call = tr.calls.size();
            w.row = !gradient;
            if (!gradient) {
                const std::uint32_t gpu = members[std::size_t(rank)];
                const std::uint32_t tpRank = gpu < plan->mesh.size() ? plan->mesh[gpu].tp : 0;
                if (!selectRow(ctx, tr, c, tpRank, rank, w, perGroupShare, cc.anyEp))
                    continue;
                tc.rowBytes += perGroupShare;
            }
            tc.groups.push_back(g);
            cc.work.push_back(w);
        }
        if (tc.groups.empty())
            continue;
        if (gradient) {
            cc.anyGradient = true;
            tc.note = "every token of the step feeds these summed gradients: no byte is this token's own";
        } else {
            tc.note = rowNote(c, ctx.sp);
            addRowFigure(tr, ctx, cc, c, tc, perGroupShare);
        }
        tr.calls.push_back(std::move(tc));
    }
    return cc;
}

// Its bytes on the wire per call, and (with a topology) the links its transfers cross: each distinct
// schedule and selector is generated once.
Status routeCarryingCalls(TokenTrace& tr, const TraceContext& ctx, const std::vector<Work>& work,
                          const network::Topology* topology, const Progress& progress, network::Router* sharedRouter)
{
    const collective::CollectiveDerivation* bound = ctx.bound;
    const std::vector<parallel::Group>& groups = ctx.plan->comm.groups;
    std::map<std::pair<SpecKey, Selector>, std::vector<RankPair>> rowPairs;
    std::map<SpecKey, std::vector<RankPair>> gradientPairs;
    std::optional<network::Router> ownRouter;
    network::Router* router = nullptr;
    if (topology) {
        for (std::uint32_t g : tr.placement.gpus)
            if (g >= topology->gpuCount() || topology->gpuNode(g) == network::kNoNode)
                return errorAt("topology", "the fabric has no GPU " + I(g) + " for the token's replica");
        if (sharedRouter) {
            router = sharedRouter;
        } else {
            ownRouter.emplace(*topology);
            router = &*ownRouter;
        }
    }
    std::map<std::uint32_t, TokenTraceLink> links;
    std::size_t done = 0;
    for (const Work& w : work) {
        if (progress.stopRequested())
            return errorAt("", "stopped");
        progress(double(done++) / double(std::max<std::size_t>(1, work.size())));
        TokenTraceCall& tc = tr.calls[w.call];
        const collective::BoundCall* b = bound && tc.call < bound->calls.size() ? &bound->calls[tc.call] : nullptr;
        if (!b || !b->counted)
            continue; // stage 4 could not schedule it: stage 4 says why
        const std::vector<RankPair>* pairs = nullptr;
        if (w.row) {
            auto key = std::make_pair(specKey(b->spec), w.selector);
            auto it = rowPairs.find(key);
            if (it == rowPairs.end())
                it = rowPairs.emplace(key, pairsOf(b->spec, &w.selector)).first;
            pairs = &it->second;
            for (const RankPair& p : *pairs)
                tc.wireBytes += p.bytes;
        } else {
            if (!topology)
                continue;
            auto key = specKey(b->spec);
            auto it = gradientPairs.find(key);
            if (it == gradientPairs.end())
                it = gradientPairs.emplace(key, pairsOf(b->spec, nullptr)).first;
            pairs = &it->second;
        }
        if (!router)
            continue;
        const std::vector<std::uint32_t>& members = groups[w.group].members;
        for (const RankPair& p : *pairs) {
            if (p.src >= members.size() || p.dst >= members.size())
                continue;
            auto path = router->route(members[p.src], members[p.dst], w.group);
            if (!path.ok())
                return path.error();
            for (network::LinkId l : *path.value()) {
                TokenTraceLink& link = links[l];
                link.link = l;
                if (w.row)
                    link.rowBytes += p.bytes;
                else
                    link.gradients = true;
            }
        }
    }
    tr.routed = topology != nullptr;
    for (auto& [id, link] : links)
        tr.links.push_back(link);
    return Ok{};
}

// The wire figures, one per kind of call (summed over the calls of that kind), and their total.
void addWireFigures(TokenTrace& tr, const TraceContext& ctx, CarryingCalls& cc)
{
    FigureSet& f = tr.figures;
    const parallel::PlanDerivation* plan = ctx.plan;
    std::map<std::string, std::pair<double, const TokenTraceCall*>> wireByFigure;
    for (const TokenTraceCall& tc : tr.calls) {
        if (tc.carries != TokenTraceCall::Carries::Row)
            continue;
        auto& [sum, first] = wireByFigure[tc.wireFigure];
        if (!first)
            first = &tc;
        cc.wireTotal[std::size_t(plan->comm.calls[tc.call].strategy)] += tc.wireBytes;
        sum += tc.wireBytes;
    }
    std::vector<std::string> wireIds;
    for (const TokenTraceCall& tc : tr.calls) {
        if (tc.carries != TokenTraceCall::Carries::Row || f.find(tc.wireFigure))
            continue;
        const parallel::CollectiveCall& c = plan->comm.calls[tc.call];
        const collective::BoundCall* b = ctx.bound && tc.call < ctx.bound->calls.size() ? &ctx.bound->calls[tc.call] : nullptr;
        std::uint64_t count = 0;
        for (const TokenTraceCall& o : tr.calls)
            if (o.wireFigure == tc.wireFigure)
                ++count;
        const std::string algo = b ? std::string(collective::toString(b->spec.algorithm)) : std::string("—");
        std::string formula = c.strategy == Strategy::EP
                                  ? "Σ over the All-to-All's transfers of its blocks: transfer bytes × its share of "
                                    "the rank's buffer (uniform routing)"
                                  : "Σ over the schedule's transfers of the bytes of its row they carry";
        formula += " (" + algo + ", " + I(b ? b->spec.ranks : 0) + " ranks) = " + Bytes(tc.wireBytes) + " per call";
        if (count > 1)
            formula += "; " + I(count) + " such calls in the step = " + Bytes(wireByFigure[tc.wireFigure].first);
        formula += "; once per step: only micro-batch " + I(tr.placement.microBatch) + " of the N_acc = " + I(ctx.nAcc)
                   + " holds it";
        f.add({tc.wireFigure,
               "Its bytes on the wire: " + std::string(parallel::toString(c.strategy)) + " "
                   + std::string(parallel::toString(c.kind)) + (count > 1 ? " (" + I(count) + " calls)" : ""),
               wireByFigure[tc.wireFigure].first, "B", formula, {tc.rowFigure}});
        wireIds.push_back(tc.wireFigure);
    }
    if (wireIds.empty())
        return;
    double total = 0;
    std::string parts;
    for (int s = 0; s < parallel::kStrategyCount; ++s)
        if (cc.wireTotal[s] > 0) {
            total += cc.wireTotal[s];
            parts += (parts.empty() ? "" : " + ") + std::string(parallel::toString(Strategy(s))) + " "
                     + Bytes(cc.wireTotal[s]);
        }
    f.add({"trace.wire_bytes", "Its bytes on the wire per step", total, "B", parts + " = " + Bytes(total), wireIds});
}

// The links its row crosses, its bytes summed over them, and the links only its gradients cross.
void addLinkFigures(TokenTrace& tr, const network::Topology& topology)
{
    FigureSet& f = tr.figures;
    const std::vector<std::uint32_t> row = tr.rowLinks();
    double hops = 0;
    for (const TokenTraceLink& l : tr.links)
        hops += l.rowBytes;
    std::vector<std::string> inputs = f.find("trace.wire_bytes") ? std::vector<std::string>{"trace.wire_bytes"}
                                                                  : std::vector<std::string>{};
    f.add({"trace.links", "Links its row crosses", double(row.size()), "",
           "link directions on the routes of the transfers that carry its row = " + I(row.size()) + " of "
               + I(topology.links().size()),
           inputs});
    f.add({"trace.link_bytes", "Its bytes summed over those links", hops, "B",
           "Σ over links of its bytes crossing each (a transfer counts once per link of its route) = " + Bytes(hops),
           {"trace.links"}});
    if (!tr.gradientOnlyLinks().empty())
        f.add({"trace.gradient_links", "Further links of its gradient reductions", double(tr.gradientOnlyLinks().size()),
               "", "links that only the gradient reductions it feeds cross (no byte of them is its own) = "
                       + I(tr.gradientOnlyLinks().size()),
               {}});
}

} // namespace

// The token's way through the five stages: the token, its place in the batch, its GPUs, the calls that
// carry its row (or its gradients), their routes on the fabric, then the figures and notes.
Result<TokenTrace> traceToken(const Derivation& d, const Scenario& scenario, std::uint64_t tokenIndex,
                              const network::Topology* topology, const Progress& progress, network::Router* sharedRouter)
{
    const std::vector<text::TokenSpan>& tokens = d.tokens();
    if (tokenIndex >= tokens.size())
        return errorAt("trace.token", "token #" + I(tokenIndex) + " is past the end of the text: it has "
                                          + I(tokens.size()) + " tokens (#0 … #"
                                          + (tokens.empty() ? std::string("—") : I(tokens.size() - 1)) + ")");
    TokenTrace tr;
    TraceContext ctx{d.figures};
    traceTokenItself(tr, d, tokenIndex);
    traceBatchPosition(tr, d, scenario.batch, tokenIndex, ctx);
    ctx.plan = d.stage3.get();
    ctx.bound = d.stage4.get();
    if (!ctx.plan) {
        // Without a plan, the row b is that of a single GPU's micro-batches (dp = 1).
        tr.row = tr.sequence % ctx.B;
        tr.figures.add({"trace.row", "Its row b in the micro-batch [B,T]", double(tr.row), "",
                        "sequence mod B = " + I(tr.sequence) + " mod " + I(ctx.B) + " = " + I(tr.row)
                            + " (no parallel plan: one GPU's micro-batches)",
                        withSequence(d.figures, {"batch.B"})});
        tr.notes.push_back("The stage 3 plan cannot run, so the token has no GPUs, collectives or links yet.");
        return tr;
    }
    tracePlacement(tr, d, scenario.batch, tokenIndex, ctx);
    CarryingCalls cc = listCarryingCalls(tr, ctx);
    if (Status s = routeCarryingCalls(tr, ctx, cc.work, topology, progress, sharedRouter); !s.ok())
        return s.error();
    addWireFigures(tr, ctx, cc);
    if (tr.routed)
        addLinkFigures(tr, *topology);
    if (cc.anyGradient)
        tr.notes.push_back("The DP gradient reduction (and the tied embedding's) carries the sum of every token's "
                           "gradients: the token is in every byte of it and owns none, so no per-token share is given.");
    if (cc.anyEp)
        tr.notes.push_back("Which experts (and so which GPUs of its EP group) receive its row is decided by the router "
                           "at run time: its All-to-All bytes on the wire are the uniform-routing expectation.");
    if (ctx.nAcc > 1)
        tr.notes.push_back("Each call repeats for the N_acc = " + I(ctx.nAcc) + " micro-batches of a step; only micro-batch "
                           + I(tr.placement.microBatch) + " holds the token, so its bytes count once per step.");
    progress(1.0);
    return tr;
}

} // namespace tw::scenario
