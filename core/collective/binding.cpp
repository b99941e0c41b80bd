#include "binding.h"

#include "base/units.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>

namespace tw::collective {

namespace {

std::string I(std::uint64_t v) { return formatInteger(static_cast<std::int64_t>(v)); }
std::string Bytes(double v) { return formatCount(v, 0) + " B"; }

// GPUs of the group per node, when every node of the group holds the same number and they are
// listed node by node (what hierarchical needs); 0 otherwise.
std::uint64_t evenRanksPerNode(const std::vector<std::uint32_t>& members, const parallel::Cluster& cluster)
{
    if (members.empty() || cluster.gpusPerNode == 0)
        return 0;
    std::uint64_t per = 0, run = 0, node = cluster.nodeOf(members.front());
    std::vector<std::uint64_t> seen{node};
    for (std::uint32_t g : members) {
        const std::uint64_t n = cluster.nodeOf(g);
        if (n == node) {
            ++run;
            continue;
        }
        for (std::uint64_t s : seen)
            if (s == n)
                return 0; // a node met twice: not listed node by node
        if (per != 0 && run != per)
            return 0;
        per = run;
        run = 1;
        node = n;
        seen.push_back(n);
    }
    if (per != 0 && run != per)
        return 0;
    return per == 0 ? run : per;
}

} // namespace

std::string toString(const AlgorithmPick& pick)
{
    switch (pick.kind) {
    case AlgorithmPick::Kind::Auto: return "auto";
    case AlgorithmPick::Kind::Nccl: return std::string(nccl::toString(pick.nccl));
    case AlgorithmPick::Kind::Textbook: return std::string(toString(pick.textbook));
    }
    return "auto";
}

std::optional<AlgorithmPick> pickFromString(std::string_view s)
{
    if (s == "auto")
        return AlgorithmPick::automatic();
    if (const auto n = nccl::algorithmFromString(s))
        return AlgorithmPick::ofNccl(*n);
    if (s == "ring")
        return std::nullopt; // unreachable: NCCL's name
    if (const auto a = algorithmFromString(s))
        return AlgorithmPick(*a);
    return std::nullopt;
}

std::vector<std::string> pickNamesFor(Op op)
{
    std::vector<std::string> names{"auto"};
    for (nccl::Algorithm a : nccl::algorithmsFor(op))
        names.emplace_back(nccl::toString(a));
    for (Algorithm a : algorithmsFor(op))
        names.emplace_back(toString(a));
    return names;
}

Algorithm textbookStandIn(Op op, std::optional<nccl::Algorithm> a)
{
    switch (op) {
    case Op::AllToAll: return Algorithm::Pairwise;
    case Op::SendRecv: return Algorithm::Direct;
    case Op::Broadcast:
    case Op::Reduce: return Algorithm::Chain; // NCCL's ring Broadcast / Reduce is a pipelined chain from the root
    case Op::AllReduce:
        if (a && *a == nccl::Algorithm::Tree)
            return Algorithm::DoubleBinaryTree;
        return Algorithm::Ring;
    case Op::ReduceScatter:
    case Op::AllGather: return Algorithm::Ring;
    }
    return Algorithm::Ring;
}

AlgorithmPick AlgorithmChoice::pick(Op op) const
{
    switch (op) {
    case Op::AllReduce: return allReduce;
    case Op::ReduceScatter: return reduceScatter;
    case Op::AllGather: return allGather;
    case Op::AllToAll: return allToAll;
    case Op::Broadcast: return broadcast;
    case Op::Reduce:
    case Op::SendRecv: return AlgorithmPick::automatic();
    }
    return AlgorithmPick::automatic();
}

Algorithm AlgorithmChoice::forOp(Op op) const
{
    const AlgorithmPick p = pick(op);
    if (p.kind == AlgorithmPick::Kind::Textbook)
        return p.textbook;
    return textbookStandIn(op, p.kind == AlgorithmPick::Kind::Nccl ? std::optional(p.nccl) : std::nullopt);
}

void AlgorithmChoice::set(Op op, AlgorithmPick p)
{
    switch (op) {
    case Op::AllReduce: allReduce = p; break;
    case Op::ReduceScatter: reduceScatter = p; break;
    case Op::AllGather: allGather = p; break;
    case Op::AllToAll: allToAll = p; break;
    case Op::Broadcast: broadcast = p; break;
    case Op::Reduce:
    case Op::SendRecv: break;
    }
}

AlgorithmChoice textbookChoice()
{
    AlgorithmChoice c;
    c.allReduce = Algorithm::Ring;
    c.reduceScatter = Algorithm::Ring;
    c.allGather = Algorithm::Ring;
    c.allToAll = Algorithm::Pairwise;
    c.broadcast = Algorithm::Binomial;
    return c;
}

std::vector<Error> validate(const AlgorithmChoice& choice)
{
    std::vector<Error> errors;
    for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather, Op::AllToAll, Op::Broadcast}) {
        const AlgorithmPick p = choice.pick(op);
        bool ok = p.kind == AlgorithmPick::Kind::Auto;
        if (p.kind == AlgorithmPick::Kind::Nccl)
            for (nccl::Algorithm v : nccl::algorithmsFor(op))
                ok = ok || v == p.nccl;
        if (p.kind == AlgorithmPick::Kind::Textbook)
            for (Algorithm v : algorithmsFor(op))
                ok = ok || v == p.textbook;
        if (!ok) {
            std::string names;
            for (const std::string& n : pickNamesFor(op))
                names += (names.empty() ? "" : ", ") + n;
            const std::string nccls = op == Op::AllToAll ? " (NCCL runs it point-to-point: use auto)" : "";
            errors.push_back(errorAt("collectives." + std::string(toString(op)),
                                     std::string(displayName(op)) + " has no algorithm \"" + toString(p) + "\"" + nccls
                                         + " (expected " + names + ")"));
        }
    }
    if (!(choice.link.alphaSeconds >= 0) || !std::isfinite(choice.link.alphaSeconds))
        errors.push_back(errorAt("collectives.alpha_s", "must be a finite number of seconds ≥ 0"));
    if (!(choice.link.bandwidth > 0) || !std::isfinite(choice.link.bandwidth))
        errors.push_back(errorAt("collectives.bandwidth", "must be a finite number of bytes per second > 0"));
    return errors;
}

Result<nccl::System> groupSystem(const NcclFabric& fabric, const parallel::Cluster& cluster, int nodes, int perNode)
{
    network::TopologySpec spec = fabric.topology;
    // A default (unset) fabric with several servers is a leaf–spine of NVSwitch nodes, as a scenario
    // without "topology" reads (scenariojson.cpp).
    if (cluster.nodes > 1 && spec == network::TopologySpec{})
        spec.kind = network::TopologyKind::LeafSpine;
    auto whole = nccl::systemFor(fabric.gpuId, spec, cluster);
    if (!whole)
        return whole.error();
    nccl::System s = whole.value();
    s.nodes = std::max(1, nodes);
    s.gpusPerNode = std::max(1, perNode);
    if (s.gpusPerNode == 1)
        s.typeIntra = nccl::PathType::Loc;
    if (s.nodes > 1) {
        s.nicsPerNode = s.nicPerGpu ? s.gpusPerNode : 1;
        if (whole->nodes == 1) // cannot happen (a group spans at most the cluster's nodes); keep NCCL's rates
            s.nicsPerNode = 0;
    } else {
        s.nicsPerNode = 0; // ncclTopoTrimSystem drops the NICs of a one-node communicator
        s.typeInter = nccl::PathType::Pix;
    }
    s.fabric = nccl::describeFabric(s); // the line systemFor writes, for the group
    return s;
}

// parallel::CollectiveKind is Op without Reduce, value for value (core/parallel/plan.h).
template <parallel::CollectiveKind K, Op O>
constexpr bool kSameValue = static_cast<int>(K) == static_cast<int>(O);
static_assert(kSameValue<parallel::CollectiveKind::AllReduce, Op::AllReduce>
              && kSameValue<parallel::CollectiveKind::ReduceScatter, Op::ReduceScatter>
              && kSameValue<parallel::CollectiveKind::AllGather, Op::AllGather>
              && kSameValue<parallel::CollectiveKind::Broadcast, Op::Broadcast>
              && kSameValue<parallel::CollectiveKind::AllToAll, Op::AllToAll>
              && kSameValue<parallel::CollectiveKind::SendRecv, Op::SendRecv>);

Op opFor(parallel::CollectiveKind kind)
{
    return static_cast<Op>(static_cast<int>(kind));
}

std::pair<int, int> groupShape(const std::vector<std::uint32_t>& members, const parallel::Cluster& cluster)
{
    std::map<std::uint64_t, int> perNode;
    for (std::uint32_t g : members)
        ++perNode[cluster.gpusPerNode == 0 ? 0 : cluster.nodeOf(g)];
    int most = 0;
    for (const auto& [node, count] : perNode)
        most = std::max(most, count);
    return {static_cast<int>(perNode.size()), most};
}

namespace {

// Bytes the algorithm NCCL runs puts on the wire for M bytes over n ranks: Σ over ranks and the busiest
// rank's, and its steps (0 where NCCL pipelines without a step structure of ours). docs/nccl.md "In the step".
struct NcclCounts {
    double total = 0, maxRank = 0;
    std::uint64_t steps = 0;
};
NcclCounts ncclCounts(const nccl::Prediction& p, double M, std::uint64_t ranks, int nodes, int perNode)
{
    NcclCounts c;
    const double n = static_cast<double>(ranks);
    if (ranks <= 1)
        return c;
    if (p.pointToPoint) {
        if (p.op == Op::SendRecv) {
            c.total = c.maxRank = M; // rank 0 sends the message to rank 1
            c.steps = 1;
        } else { // All-to-All: every rank sends M/n to each of the n − 1 others
            c.total = (n - 1) * M;
            c.maxRank = (n - 1) / n * M;
            c.steps = ranks - 1;
        }
        return c;
    }
    switch (p.algorithm) {
    case nccl::Algorithm::Nvls: {
        // Each GPU pushes its part into the NVSwitch (nvlsBytesPerGpuLink's "up"); the switch reduces and multicasts.
        const nccl::LinkBytes l = nccl::nvlsBytesPerGpuLink(p.op, M, static_cast<int>(ranks));
        c.total = n * l.up;
        c.maxRank = l.up;
        return c;
    }
    case nccl::Algorithm::NvlsTree: {
        // NVLS inside each node, then a tree AllReduce of the node's M across the nodes: the non-root nodes
        // send M up and the parents M down (Σ 2(nodes − 1)·M), spread over the node's GPUs (its NICs).
        const nccl::LinkBytes l = nccl::nvlsBytesPerGpuLink(p.op, M, perNode);
        const double inter = 2.0 * (nodes - 1) * M;
        c.total = n * l.up + inter;
        c.maxRank = l.up + 2.0 * M / perNode;
        return c;
    }
    case nccl::Algorithm::Tree:
    case nccl::Algorithm::CollNetChain:
        // Reduce up the tree, broadcast down (two trees, each on half the buffer): every rank but a root
        // sends its share up, every parent sends it down, Σ 2(n − 1)·M; a GPU of a node's chain passes the
        // whole buffer up and down (2M).
        c.total = 2 * (n - 1) * M;
        c.maxRank = ranks == 2 ? M : 2 * M;
        return c;
    case nccl::Algorithm::Pat:
        c.total = (n - 1) * M;
        c.maxRank = (n - 1) / n * M;
        c.steps = static_cast<std::uint64_t>(std::ceil(std::log2(n)));
        return c;
    case nccl::Algorithm::Ring:
    case nccl::Algorithm::CollNetDirect:
        break;
    }
    // Ring (CollNet Direct counted as its ring fallback): AllReduce 2(n−1)/n·M per rank, ReduceScatter and
    // AllGather (n−1)/n·M, Broadcast / Reduce a chain from the root (each rank but the last sends M).
    switch (p.op) {
    case Op::AllReduce:
        c.total = 2 * (n - 1) * M;
        c.maxRank = 2 * (n - 1) / n * M;
        c.steps = 2 * (ranks - 1);
        break;
    case Op::ReduceScatter:
    case Op::AllGather:
    case Op::AllToAll:
        c.total = (n - 1) * M;
        c.maxRank = (n - 1) / n * M;
        c.steps = ranks - 1;
        break;
    case Op::Broadcast:
    case Op::Reduce:
    case Op::SendRecv:
        c.total = (n - 1) * M;
        c.maxRank = M;
        c.steps = ranks - 1;
        break;
    }
    return c;
}

struct GroupModel {
    Result<nccl::System> system = Error{};
    nccl::Graphs graphs;
    nccl::Tuning tuning;
};

// Call i's schedule spec, algorithm pick and group shape (a hierarchical pick falls back to the ring
// on a group uneven over nodes). False when the call has no group.
bool specOf(const parallel::CommPlan& plan, std::uint32_t i, const parallel::Cluster& cluster,
            const AlgorithmChoice& choice, BoundCall& b)
{
    const parallel::CollectiveCall& c = plan.calls[i];
    b.call = i;
    if (c.groupCount == 0 || c.firstGroup >= plan.groups.size())
        return false;
    const std::vector<std::uint32_t>& members = plan.groups[c.firstGroup].members;
    ScheduleSpec& s = b.spec;
    s.op = opFor(c.kind);
    b.pick = choice.pick(s.op);
    b.nccl = b.pick.usesNccl();
    s.algorithm = choice.forOp(s.op);
    s.ranks = members.size();
    s.bytes = std::round(c.payloadBytes); // schedules move whole bytes
    s.root = 0;
    if (b.nccl)
        std::tie(b.groupNodes, b.groupPerNode) = groupShape(members, cluster);
    if (s.algorithm == Algorithm::Hierarchical) {
        const std::uint64_t per = evenRanksPerNode(members, cluster);
        if (per == 0 || s.ranks % per != 0) {
            s.algorithm = Algorithm::Ring; // uneven over nodes: hierarchical is not defined for it
            b.fellBack = true;
        } else {
            s.ranksPerNode = per;
        }
    }
    return true;
}

// How a call NCCL's model predicted is described: the pick, NCCL's algorithm and protocol, its channels,
// the fabric, and how stage 5 simulates it (simulate.h "NCCL channels", "NVLS").
std::string ncclHow(const BoundCall& b, const nccl::Prediction& pr, const std::string& fabricName)
{
    const ScheduleSpec& s = b.spec;
    std::string label = toString(b.pick);
    label += pr.pointToPoint ? " → point-to-point"
                             : std::string(b.pick.kind == AlgorithmPick::Kind::Auto ? " → " : " / ")
                                   + std::string(nccl::toString(pr.algorithm)) + "/" + std::string(nccl::toString(pr.protocol));
    std::string how = label + ", " + I(static_cast<std::uint64_t>(std::max(0, pr.channels))) + " channel"
                      + (pr.channels == 1 ? "" : "s") + " (" + fabricName + ")";
    const bool nvlsFlows = pr.algorithm == nccl::Algorithm::Nvls && b.groupNodes == 1
                           && (s.op == Op::AllReduce || s.op == Op::ReduceScatter || s.op == Op::AllGather);
    if (!pr.pointToPoint && nvlsFlows)
        how += "; stage 5 simulates it as flows into and out of the NVSwitch";
    else if (!pr.pointToPoint && pr.algorithm == nccl::Algorithm::NvlsTree && b.groupNodes > 1 && s.op == Op::AllReduce)
        how += "; stage 5 simulates it as NVLS in each node and NCCL's trees between the nodes' heads";
    else if (!pr.pointToPoint && pr.algorithm != nccl::Algorithm::Ring && pr.algorithm != nccl::Algorithm::Pat)
        how += pr.algorithm == nccl::Algorithm::Tree
                   ? (b.groupNodes > 1 ? "; stage 5 simulates it as NCCL's trees (double binary tree across nodes, chains inside them)"
                                       : "; stage 5 simulates it as the textbook double binary tree")
                   : b.groupNodes > 1 ? "; stage 5 simulates it as NCCL's ring channels"
                                      : "; stage 5 simulates it as the flat ring";
    return how;
}

// NCCL's model of a group shape, searched and tuned on first use.
GroupModel& groupModelFor(std::map<std::pair<int, int>, GroupModel>& models, const NcclFabric& fabric,
                          const parallel::Cluster& cluster, int nodes, int perNode)
{
    const std::pair<int, int> shape{nodes, perNode};
    auto m = models.find(shape);
    if (m == models.end()) {
        GroupModel g;
        g.system = groupSystem(fabric, cluster, nodes, perNode);
        if (g.system) {
            g.graphs = nccl::searchGraphs(g.system.value());
            g.tuning = nccl::tuneModel(g.system.value(), g.graphs);
        }
        m = models.emplace(shape, std::move(g)).first;
    }
    return m->second;
}

// A call counted with NCCL's model of its group shape: its steps, bytes, time, channels and the
// stand-in schedule; left uncounted (with why) when the model cannot predict it.
void countWithNccl(BoundCall& counted, const std::string& what, const GroupModel& model, std::vector<Error>& uncounted)
{
    const ScheduleSpec& s = counted.spec;
    Result<nccl::Prediction> p = Error{};
    if (model.system) {
        nccl::Request req;
        req.op = s.op;
        req.bytes = s.bytes;
        if (counted.pick.kind == AlgorithmPick::Kind::Nccl)
            req.algorithm = counted.pick.nccl;
        p = nccl::predict(model.tuning, model.system.value(), model.graphs, req);
    }
    const Error* why = !model.system ? &model.system.error() : !p ? &p.error() : nullptr;
    if (why) {
        counted.counted = false;
        uncounted.push_back(errorAt("collectives." + std::string(toString(s.op)),
                                    std::string(displayName(s.op)) + " of " + I(s.ranks) + " GPUs (" + what
                                        + ") with NCCL's " + toString(counted.pick) + ": " + why->message
                                        + "; its bytes and time are left out of stage 4"));
        return;
    }
    const nccl::Prediction& pr = p.value();
    counted.prediction = pr;
    const NcclCounts n = ncclCounts(pr, s.bytes, s.ranks, counted.groupNodes, counted.groupPerNode);
    counted.steps = n.steps;
    counted.wireBytes = n.total;
    counted.maxRankSentBytes = n.maxRank;
    counted.timeSeconds = pr.time;
    if (counted.groupNodes > 1)
        counted.channels = model.graphs.ring.channels;
    if (counted.groupNodes > 1 && !pr.pointToPoint && pr.algorithm == nccl::Algorithm::Tree)
        counted.treeChannels = model.graphs.tree.channels;
    if (counted.groupNodes > 1 && !pr.pointToPoint && pr.algorithm == nccl::Algorithm::NvlsTree)
        counted.nvlsChannels = model.graphs.nvls.channels;
    counted.how = ncclHow(counted, pr, model.system->fabric);
    // The schedule stage 4 plays and stage 5 simulates: the stand-in of the algorithm NCCL chose.
    counted.spec.algorithm = textbookStandIn(s.op, pr.pointToPoint ? std::nullopt : std::optional(pr.algorithm));
}

// A call's counts from the distinct schedule it shares with identical calls.
void copyCounts(BoundCall& b, const BoundCall& from)
{
    b.counted = from.counted;
    b.steps = from.steps;
    b.wireBytes = from.wireBytes;
    b.maxRankSentBytes = from.maxRankSentBytes;
    b.timeSeconds = from.timeSeconds;
    b.prediction = from.prediction;
    b.how = from.how;
    b.spec.algorithm = from.spec.algorithm;
    b.channels = from.channels;
    b.treeChannels = from.treeChannels;
    b.nvlsChannels = from.nvlsChannels;
}

// Time per step: the busiest GPU's Σ over the calls it takes part in. Calls of different groups — the
// DP reductions of different pipeline stages, the TP calls of other stages — run side by side on other
// GPUs and do not add up (a plain Σ over calls would count every stage's DP AllReduce).
// The busiest GPU's time is split by collective kind as well (secondsPerStepByKind).
void busiestSeconds(const parallel::CommPlan& plan,
                    const std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, parallel::PerKind>& rangeSeconds,
                    CollectiveDerivation& out)
{
    std::vector<parallel::PerStrategy<parallel::PerKind>> perGpu;
    for (const auto& [range, seconds] : rangeSeconds) {
        const auto& [st, first, count] = range;
        for (std::uint32_t gi = first; gi < first + count && gi < plan.groups.size(); ++gi)
            for (std::uint32_t gpu : plan.groups[gi].members) {
                if (gpu >= perGpu.size())
                    perGpu.resize(gpu + 1, parallel::PerStrategy<parallel::PerKind>{});
                for (std::size_t k = 0; k < seconds.size(); ++k)
                    perGpu[gpu][st][k] += seconds[k];
            }
    }
    for (const auto& g : perGpu)
        for (std::size_t st = 0; st < parallel::kStrategyCount; ++st) {
            double total = 0;
            for (double v : g[st])
                total += v;
            if (total > out.secondsPerStep[st]) {
                out.secondsPerStep[st] = total;
                out.secondsPerStepByKind[st] = g[st];
            }
        }
}

// Stage 4's figures: the α–β inputs, each strategy's wire bytes and time per step, their sums and the
// distinct schedules.
void addCollectiveFigures(CollectiveDerivation& out, const parallel::CommPlan& plan, const AlgorithmChoice& choice,
                          const FigureSet& inputs)
{
    FigureSet& f = out.figures;
    auto cite = [&](std::vector<std::string> ids) {
        std::vector<std::string> kept;
        for (auto& id : ids)
            if (inputs.find(id))
                kept.push_back(std::move(id));
        return kept;
    };
    const double alphaUs = choice.link.alphaSeconds * 1e6;
    f.add({"collective.alpha", "Latency per message α", choice.link.alphaSeconds, "s",
           "input: α = " + formatCount(alphaUs, 3) + " µs", {}});
    f.add({"collective.bandwidth", "Link bandwidth β", choice.link.bandwidth, "B/s",
           "input: β = " + formatCount(choice.link.bandwidth * 8 / 1e9, 3) + " Gb/s = " + formatCount(choice.link.bandwidth, 0)
               + " B/s",
           {}});
    static const char* const names[] = {"dp", "pp", "tp", "ep"};
    double wire = 0, time = 0;
    std::vector<std::string> wireIds, timeIds;
    for (std::size_t st = 0; st < parallel::kStrategyCount; ++st) {
        if (st >= plan.signature.size() || !plan.signature[st].present)
            continue;
        const std::string p = std::string("collective.") + names[st];
        std::string algos;
        bool textbook = false, ncclCalls = false;
        for (const BoundCall& b : out.calls) {
            if (static_cast<std::size_t>(plan.calls[b.call].strategy) != st)
                continue;
            (b.nccl ? ncclCalls : textbook) = true;
            const std::string a = std::string(displayName(b.spec.op)) + " "
                                  + (b.nccl ? b.how.substr(0, b.how.find(',')) : std::string(toString(b.spec.algorithm)));
            if (algos.find(a) == std::string::npos)
                algos += (algos.empty() ? "" : ", ") + a;
        }
        f.add({p + ".wire_bytes_per_step", std::string(parallel::toString(parallel::Strategy(st))) + " bytes on the wire per step (schedules)",
               out.wireBytesPerStep[st], "B",
               "Σ over the " + std::string(parallel::toString(parallel::Strategy(st))) + " calls of (schedule's transfers × groups × repeat) with " + algos
                   + " = " + Bytes(out.wireBytesPerStep[st]),
               cite({std::string(names[st]) + ".total_bytes_per_step"})});
        const std::string how = textbook && ncclCalls ? "NCCL's model for NCCL's algorithms, α–β for textbook ones"
                                : ncclCalls          ? "NCCL's model"
                                                     : "α–β";
        const std::string each = textbook && ncclCalls
                                     ? "(NCCL's predicted time, or Σ over the schedule's steps of (α + largest message / β))"
                                 : ncclCalls ? "NCCL's predicted time on the group's fabric"
                                             : "Σ over the schedule's steps of (α + largest message / β)";
        f.add({p + ".seconds_per_step", std::string(parallel::toString(parallel::Strategy(st))) + " communication time per step, busiest GPU (" + how + ")",
               out.secondsPerStep[st], "s",
               "max over GPUs of Σ over the " + std::string(parallel::toString(parallel::Strategy(st))) + " calls it takes part in of repeat × " + each
                   + " (groups and pipeline stages side by side) = "
                   + formatSeconds(out.secondsPerStep[st]),
               textbook ? std::vector<std::string>{"collective.alpha", "collective.bandwidth"} : std::vector<std::string>{}});
        wire += out.wireBytesPerStep[st];
        time += out.secondsPerStep[st];
        wireIds.push_back(p + ".wire_bytes_per_step");
        timeIds.push_back(p + ".seconds_per_step");
    }
    f.add({"collective.wire_bytes_per_step", "Bytes on the wire per optimizer step (all strategies)", wire, "B",
           "Σ of the strategies' schedule bytes = " + Bytes(wire), wireIds});
    f.add({"collective.seconds_per_step", "Communication time per step if nothing overlaps", time, "s",
           "Σ of the strategies' busiest-GPU times (NCCL's model, α–β for textbook schedules) = " + formatSeconds(time), timeIds});
    f.add({"collective.distinct_schedules", "Distinct schedules generated", static_cast<double>(out.distinctSchedules), "",
           I(out.calls.size()) + " calls share " + I(out.distinctSchedules) + " distinct schedules (same collective, "
                                                                                 "algorithm, group size and payload)",
           {}});
}

} // namespace

// Stage 4 for a plan: each call's schedule (identical calls share one), counted with NCCL's model or
// α–β, bytes and time per strategy and step, and the figures.
CollectiveDerivation bindPlan(const parallel::CommPlan& plan, const parallel::Cluster& cluster,
                              const AlgorithmChoice& choice, const FigureSet& inputs, const NcclFabric& fabric)
{
    CollectiveDerivation out;
    // Identical calls (same collective, pick, group size, payload, node layout) share one schedule.
    using Key = std::tuple<int, std::string, std::uint64_t, double, std::uint64_t, int, int>;
    std::map<Key, BoundCall> memo;
    std::map<std::pair<int, int>, GroupModel> models; // NCCL's view of a group shape
    out.calls.reserve(plan.calls.size());
    std::map<std::tuple<std::size_t, std::uint32_t, std::uint32_t>, parallel::PerKind> rangeSeconds; // (strategy, groups): s
    for (std::uint32_t i = 0; i < plan.calls.size(); ++i) {
        const parallel::CollectiveCall& c = plan.calls[i];
        BoundCall b;
        if (!specOf(plan, i, cluster, choice, b)) {
            out.calls.push_back(b);
            continue;
        }
        const ScheduleSpec& s = b.spec;
        const Key key{int(s.op), toString(b.pick), s.ranks, s.bytes, s.ranksPerNode, b.groupNodes, b.groupPerNode};
        auto hit = memo.find(key);
        if (hit == memo.end()) {
            BoundCall counted = b;
            const std::vector<Error> errors = validate(s);
            if (!errors.empty()) {
                counted.counted = false;
                out.uncounted.push_back(errorAt("collectives." + std::string(toString(s.op)),
                                           std::string(displayName(s.op)) + " of " + I(s.ranks) + " GPUs ("
                                               + plan.calls[i].what + ") is not scheduled: " + errors.front().message
                                               + "; its bytes and time are left out of stage 4"));
            } else if (b.nccl) {
                countWithNccl(counted, plan.calls[i].what,
                              groupModelFor(models, fabric, cluster, b.groupNodes, b.groupPerNode), out.uncounted);
            } else {
                const Counts n = count(s, choice.link);
                counted.steps = n.steps;
                counted.wireBytes = n.totalBytes;
                counted.maxRankSentBytes = n.maxRankSentBytes;
                counted.timeSeconds = n.timeSeconds;
            }
            hit = memo.emplace(key, counted).first;
            ++out.distinctSchedules;
        }
        copyCounts(b, hit->second);
        const std::size_t st = static_cast<std::size_t>(c.strategy);
        // All groups of a call run side by side: bytes add up over groups, time does not.
        b.stepWireBytes = b.wireBytes * c.groupCount * static_cast<double>(c.repeat);
        out.wireBytesPerStep[st] += b.stepWireBytes;
        rangeSeconds[{st, c.firstGroup, c.groupCount}][std::size_t(c.kind)] += b.timeSeconds * static_cast<double>(c.repeat);
        out.calls.push_back(b);
    }
    busiestSeconds(plan, rangeSeconds, out);
    addCollectiveFigures(out, plan, choice, inputs);
    return out;
}

} // namespace tw::collective
