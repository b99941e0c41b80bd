#include "binding.h"

#include "base/units.h"

#include <cmath>
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

Algorithm AlgorithmChoice::forOp(Op op) const
{
    switch (op) {
    case Op::AllReduce: return allReduce;
    case Op::ReduceScatter: return reduceScatter;
    case Op::AllGather: return allGather;
    case Op::AllToAll: return allToAll;
    case Op::Broadcast: return broadcast;
    case Op::Reduce: return Algorithm::Binomial;
    case Op::SendRecv: return Algorithm::Direct;
    }
    return Algorithm::Ring;
}

void AlgorithmChoice::set(Op op, Algorithm algorithm)
{
    switch (op) {
    case Op::AllReduce: allReduce = algorithm; break;
    case Op::ReduceScatter: reduceScatter = algorithm; break;
    case Op::AllGather: allGather = algorithm; break;
    case Op::AllToAll: allToAll = algorithm; break;
    case Op::Broadcast: broadcast = algorithm; break;
    case Op::Reduce:
    case Op::SendRecv: break;
    }
}

std::vector<Error> validate(const AlgorithmChoice& choice)
{
    std::vector<Error> errors;
    for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather, Op::AllToAll, Op::Broadcast}) {
        const Algorithm a = choice.forOp(op);
        const auto& valid = algorithmsFor(op);
        bool ok = false;
        std::string names;
        for (Algorithm v : valid) {
            ok = ok || v == a;
            names += (names.empty() ? "" : ", ") + std::string(toString(v));
        }
        if (!ok)
            errors.push_back(errorAt("collectives." + std::string(toString(op)),
                                std::string(displayName(op)) + " has no algorithm \"" + std::string(toString(a))
                                    + "\" (expected " + names + ")"));
    }
    if (!(choice.link.alphaSeconds >= 0) || !std::isfinite(choice.link.alphaSeconds))
        errors.push_back(errorAt("collectives.alpha_s", "must be a finite number of seconds ≥ 0"));
    if (!(choice.link.bandwidth > 0) || !std::isfinite(choice.link.bandwidth))
        errors.push_back(errorAt("collectives.bandwidth", "must be a finite number of bytes per second > 0"));
    return errors;
}

Op opFor(parallel::CollectiveKind kind)
{
    switch (kind) {
    case parallel::CollectiveKind::AllReduce: return Op::AllReduce;
    case parallel::CollectiveKind::ReduceScatter: return Op::ReduceScatter;
    case parallel::CollectiveKind::AllGather: return Op::AllGather;
    case parallel::CollectiveKind::AllToAll: return Op::AllToAll;
    case parallel::CollectiveKind::SendRecv: return Op::SendRecv;
    case parallel::CollectiveKind::Broadcast: return Op::Broadcast;
    }
    return Op::AllReduce;
}

CollectiveDerivation bindPlan(const parallel::CommPlan& plan, const parallel::Cluster& cluster,
                              const AlgorithmChoice& choice, const FigureSet& inputs)
{
    CollectiveDerivation out;
    // Identical calls (same collective, algorithm, group size, payload, node layout) share one schedule.
    using Key = std::tuple<int, int, std::uint64_t, double, std::uint64_t>;
    std::map<Key, BoundCall> memo;
    out.calls.reserve(plan.calls.size());
    for (std::uint32_t i = 0; i < plan.calls.size(); ++i) {
        const parallel::CollectiveCall& c = plan.calls[i];
        BoundCall b;
        b.call = i;
        if (c.groupCount == 0 || c.firstGroup >= plan.groups.size()) {
            out.calls.push_back(b);
            continue;
        }
        const std::vector<std::uint32_t>& members = plan.groups[c.firstGroup].members;
        ScheduleSpec& s = b.spec;
        s.op = opFor(c.kind);
        s.algorithm = choice.forOp(s.op);
        s.ranks = members.size();
        s.bytes = std::round(c.payloadBytes); // schedules move whole bytes
        s.root = 0;
        if (s.algorithm == Algorithm::Hierarchical) {
            const std::uint64_t per = evenRanksPerNode(members, cluster);
            if (per == 0 || s.ranks % per != 0) {
                s.algorithm = Algorithm::Ring; // uneven over nodes: hierarchical is not defined for it
                b.fellBack = true;
            } else {
                s.ranksPerNode = per;
            }
        }
        const Key key{int(s.op), int(s.algorithm), s.ranks, s.bytes, s.ranksPerNode};
        auto hit = memo.find(key);
        if (hit == memo.end()) {
            BoundCall counted = b;
            if (const std::vector<Error> errors = validate(s); !errors.empty()) {
                counted.counted = false;
                out.uncounted.push_back(errorAt("collectives." + std::string(toString(s.op)),
                                           std::string(displayName(s.op)) + " of " + I(s.ranks) + " GPUs ("
                                               + plan.calls[i].what + ") is not scheduled: " + errors.front().message
                                               + "; its bytes and time are left out of stage 4"));
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
        b.counted = hit->second.counted;
        b.steps = hit->second.steps;
        b.wireBytes = hit->second.wireBytes;
        b.maxRankSentBytes = hit->second.maxRankSentBytes;
        b.timeSeconds = hit->second.timeSeconds;
        const std::size_t st = static_cast<std::size_t>(c.strategy);
        // All groups of a call run side by side: bytes add up over groups, time does not.
        b.stepWireBytes = b.wireBytes * c.groupCount * static_cast<double>(c.repeat);
        out.wireBytesPerStep[st] += b.stepWireBytes;
        out.secondsPerStep[st] += b.timeSeconds * static_cast<double>(c.repeat);
        out.calls.push_back(b);
    }

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
    static const char* const labels[] = {"DP", "PP", "TP", "EP"};
    double wire = 0, time = 0;
    std::vector<std::string> wireIds, timeIds;
    for (std::size_t st = 0; st < 4; ++st) {
        if (st >= plan.signature.size() || !plan.signature[st].present)
            continue;
        const std::string p = std::string("collective.") + names[st];
        std::string algos;
        for (const BoundCall& b : out.calls) {
            if (static_cast<std::size_t>(plan.calls[b.call].strategy) != st)
                continue;
            const std::string a = std::string(displayName(b.spec.op)) + " " + std::string(toString(b.spec.algorithm));
            if (algos.find(a) == std::string::npos)
                algos += (algos.empty() ? "" : ", ") + a;
        }
        f.add({p + ".wire_bytes_per_step", std::string(labels[st]) + " bytes on the wire per step (schedules)",
               out.wireBytesPerStep[st], "B",
               "Σ over the " + std::string(labels[st]) + " calls of (schedule's transfers × groups × repeat) with " + algos
                   + " = " + Bytes(out.wireBytesPerStep[st]),
               cite({std::string(names[st]) + ".total_bytes_per_step"})});
        f.add({p + ".seconds_per_step", std::string(labels[st]) + " communication time per step (α–β)",
               out.secondsPerStep[st], "s",
               "Σ over the " + std::string(labels[st]) + " calls of repeat × Σ over the schedule's steps of (α + largest "
                                                          "message / β), groups side by side = "
                   + formatSeconds(out.secondsPerStep[st]),
               {"collective.alpha", "collective.bandwidth"}});
        wire += out.wireBytesPerStep[st];
        time += out.secondsPerStep[st];
        wireIds.push_back(p + ".wire_bytes_per_step");
        timeIds.push_back(p + ".seconds_per_step");
    }
    f.add({"collective.wire_bytes_per_step", "Bytes on the wire per optimizer step (all strategies)", wire, "B",
           "Σ of the strategies' schedule bytes = " + Bytes(wire), wireIds});
    f.add({"collective.seconds_per_step", "Communication time per step if nothing overlaps (α–β)", time, "s",
           "Σ of the strategies' α–β times = " + formatSeconds(time), timeIds});
    f.add({"collective.distinct_schedules", "Distinct schedules generated", static_cast<double>(out.distinctSchedules), "",
           I(out.calls.size()) + " calls share " + I(out.distinctSchedules) + " distinct schedules (same collective, "
                                                                                 "algorithm, group size and payload)",
           {}});
    return out;
}

} // namespace tw::collective
