#include "linkload.h"

#include "nvlsflows.h"
#include "simsched.h"

#include "overhead.h"

#include "base/units.h"
#include "collective/schedule.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace tw::network {

namespace {

// One distinct schedule reduced to its (source rank, destination rank) pairs.
struct PairList {
    struct Pair {
        std::uint32_t src = 0, dst = 0;
        double payload = 0, transfers = 0;
    };
    std::vector<Pair> pairs;
    std::vector<double> wire; // pairs × protocols present in the topology
    bool streamed = false;    // too many pairs: regenerate per group
};

// layout: the NCCL layout (ring channels, NVLS, NVLS-tree, trees: simsched.h ncclLayout) that replaces the
// call's schedule, −1 none.
using SpecKey = std::tuple<int, int, std::uint64_t, double, std::uint32_t, std::uint64_t, std::uint64_t, std::int64_t>;

SpecKey specKey(const collective::ScheduleSpec& s, std::int64_t layout)
{
    return {int(s.op), int(s.algorithm), s.ranks, s.bytes, s.root, s.ranksPerNode, s.pipelineChunks, layout};
}

// The schedule's steps: its own generator, the call's NCCL channel rings, or the steps of its NVLS,
// NVLS-tree or tree layout (the simulator's, simsched.h), whose switch is rank spec.ranks.
class Steps {
public:
    Steps(const collective::ScheduleSpec& spec, const sim::NcclLayout* layout)
    {
        using Kind = sim::NcclLayout::Kind;
        if (!layout)
            m_own.emplace(spec);
        else if (layout->kind == Kind::Rings)
            m_rings.emplace(spec, layout->rings);
        else
            m_steps = layout->kind == Kind::Nvls       ? nvlsSteps(spec)
                      : layout->kind == Kind::NvlsTree ? nvlsTreeSteps(spec, layout->nvlsTree)
                                                       : treeSteps(spec, layout->trees);
    }
    bool next(std::vector<collective::Transfer>& step)
    {
        if (m_own)
            return m_own->next(step);
        if (m_rings)
            return m_rings->next(step);
        if (m_next >= m_steps.size())
            return false;
        step = m_steps[m_next++];
        return true;
    }

private:
    std::optional<collective::Schedule> m_own;
    std::optional<ChannelSchedule> m_rings;
    std::vector<std::vector<collective::Transfer>> m_steps;
    std::size_t m_next = 0;
};

// The protocols present in a topology, compactly numbered, so a pair's wire bytes are computed once per
// protocol: each link's number.
struct Protocols {
    std::vector<Protocol> protos;
    std::vector<std::uint8_t> linkProto;
};

Protocols protocolsOf(const Topology& topology)
{
    Protocols out;
    std::array<int, kProtocolCount> protoIndex;
    protoIndex.fill(-1);
    out.linkProto.resize(topology.links().size());
    for (LinkId l = 0; l < topology.links().size(); ++l) {
        const auto p = static_cast<std::size_t>(topology.link(l).protocol);
        if (protoIndex[p] < 0) {
            protoIndex[p] = static_cast<int>(out.protos.size());
            out.protos.push_back(topology.link(l).protocol);
        }
        out.linkProto[l] = static_cast<std::uint8_t>(protoIndex[p]);
    }
    return out;
}

// Calls with the same groups and schedule merged; their repeats add up per strategy.
struct Entry {
    std::uint32_t firstGroup = 0, groupCount = 0;
    collective::ScheduleSpec spec;
    parallel::PerStrategy<double> weight{};
    std::int64_t layout = -1; // index into `layouts`
};

// The plan's calls merged into entries, each with NCCL's layout (simsched.h) when it has one: the
// layouts' NIC hints reach the router before any routing. Calls stage 4 could not schedule are skipped.
Status mergeCalls(const Topology& topology, const parallel::CommPlan& plan,
                  const collective::CollectiveDerivation& collectives, Router& router,
                  std::vector<sim::NcclLayout>& layouts, std::vector<Entry>& entries, LinkLoads& out)
{
    std::map<std::tuple<std::uint32_t, std::uint32_t, SpecKey>, std::size_t> merged;
    for (std::size_t i = 0; i < plan.calls.size(); ++i) {
        const parallel::CollectiveCall& c = plan.calls[i];
        if (c.groupCount == 0 || c.repeat == 0)
            continue;
        const std::string where = "calls[" + std::to_string(i) + "]";
        if (i >= collectives.calls.size())
            return errorAt(where, "stage 4 has no schedule for call " + std::to_string(i) + " (" + c.what + ")");
        const collective::BoundCall& b = collectives.calls[i];
        if (!b.counted) {
            out.skipped.push_back(errorAt("collectives." + std::string(collective::toString(b.spec.op)),
                                     std::string(collective::displayName(b.spec.op)) + " of "
                                         + formatInteger(static_cast<std::int64_t>(b.spec.ranks)) + " GPUs (" + c.what
                                         + ") is not on the fabric: stage 4 could not schedule it"));
            continue;
        }
        if (std::uint64_t{c.firstGroup} + c.groupCount > plan.groups.size())
            return errorAt(where, "groups [" + std::to_string(c.firstGroup) + ", "
                                 + std::to_string(std::uint64_t{c.firstGroup} + c.groupCount)
                                 + ") are outside the plan's " + std::to_string(plan.groups.size()) + " groups");
        for (std::uint32_t g = c.firstGroup; g < c.firstGroup + c.groupCount; ++g)
            if (plan.groups[g].members.size() != b.spec.ranks)
                return errorAt(where, "group " + std::to_string(g) + " has " + std::to_string(plan.groups[g].members.size())
                                     + " GPUs, the schedule " + std::to_string(b.spec.ranks) + " ranks");
        std::int64_t layout = -1;
        if (auto r = sim::ncclLayout(topology, plan, static_cast<std::uint32_t>(i), b, router)) {
            const auto at = std::find(layouts.begin(), layouts.end(), *r);
            layout = at - layouts.begin();
            if (at == layouts.end())
                layouts.push_back(std::move(*r));
        }
        const auto key = std::make_tuple(c.firstGroup, c.groupCount, specKey(b.spec, layout));
        auto [it, fresh] = merged.emplace(key, entries.size());
        if (fresh)
            entries.push_back({c.firstGroup, c.groupCount, b.spec, {0, 0, 0, 0}, layout});
        entries[it->second].weight[static_cast<std::size_t>(c.strategy)] += static_cast<double>(c.repeat);
    }
    return Ok{};
}

// A distinct schedule's (source, destination) pairs with their payload, transfers and wire bytes per
// protocol; streamed (left empty) past kMaxCachedPairs pairs.
void listPairs(const Entry& entry, const sim::NcclLayout* ring, const std::vector<Protocol>& protos, PairList& pl)
{
    const std::size_t K = protos.size();
    std::vector<collective::Transfer> step;
    Steps schedule(entry.spec, ring);
    std::unordered_map<std::uint64_t, std::uint32_t> index;
    while (schedule.next(step)) {
        for (const collective::Transfer& t : step) {
            const std::uint64_t k = std::uint64_t{t.src} * (entry.spec.ranks + 1) + t.dst; // + the switch
            auto [pit, added] = index.try_emplace(k, static_cast<std::uint32_t>(pl.pairs.size()));
            if (added) {
                if (pl.pairs.size() >= kMaxCachedPairs) {
                    pl.streamed = true;
                    break;
                }
                pl.pairs.push_back({t.src, t.dst, 0, 0});
                pl.wire.resize(pl.wire.size() + K, 0.0);
            }
            PairList::Pair& p = pl.pairs[pit->second];
            p.payload += t.bytes;
            p.transfers += 1;
            for (std::size_t q = 0; q < K; ++q)
                pl.wire[pit->second * K + q] += wireBytes(protos[q], t.bytes);
        }
        if (pl.streamed)
            break;
    }
    if (pl.streamed) {
        pl.pairs = {};
        pl.wire = {};
    }
}

// Every group of an entry: each pair (or, streamed, each transfer) routed, its bytes added to the links
// of its path and to the injected bytes.
Status routeEntry(const parallel::CommPlan& plan, EndpointRouter& paths, const Protocols& pr, const Entry& entry,
                  const sim::NcclLayout* ring, const PairList& pl, const Progress& progress, LinkLoads& out)
{
    static_assert(static_cast<int>(collective::Op::SendRecv) + 1 == kLinkOps);
    const std::size_t K = pr.protos.size();
    const double wsum = entry.weight[0] + entry.weight[1] + entry.weight[2] + entry.weight[3];
    const parallel::PerStrategy<double>& w = entry.weight;
    const auto o = static_cast<std::size_t>(entry.spec.op);
    auto addPath = [&](const std::vector<LinkId>& path, double payload, const double* wire, double transfers) {
        for (LinkId l : path) {
            LinkLoad& load = out.links[l];
            for (int s = 0; s < parallel::kStrategyCount; ++s)
                if (w[s] != 0) {
                    load.payloadBytes[s] += payload * w[s];
                    load.opBytes[s][o] += payload * w[s];
                }
            load.wireBytes += wire[pr.linkProto[l]] * wsum;
            load.transfers += transfers * wsum;
        }
    };
    std::vector<collective::Transfer> step;
    std::vector<double> wireOne(K);
    for (std::uint32_t g = entry.firstGroup; g < entry.firstGroup + entry.groupCount; ++g) {
        const std::vector<std::uint32_t>& members = plan.groups[g].members;
        auto one = [&](std::uint32_t src, std::uint32_t dst, double payload, const double* wire,
                       double transfers) -> Status {
            auto path = paths.route(endpointOf(members, src), endpointOf(members, dst), g);
            if (!path.ok())
                return path.error();
            ++out.routedPairs;
            addPath(*path.value(), payload, wire, transfers);
            for (int s = 0; s < parallel::kStrategyCount; ++s)
                out.injectedBytes[s] += payload * w[s];
            return Ok{};
        };
        if (!pl.streamed) {
            for (std::size_t i = 0; i < pl.pairs.size(); ++i) {
                const PairList::Pair& p = pl.pairs[i];
                if (Status st = one(p.src, p.dst, p.payload, &pl.wire[i * K], p.transfers); !st.ok())
                    return st;
            }
            continue;
        }
        Steps schedule(entry.spec, ring);
        while (schedule.next(step)) {
            if (progress.stopRequested())
                return errorAt("", "stopped");
            for (const collective::Transfer& t : step) {
                for (std::size_t q = 0; q < K; ++q)
                    wireOne[q] = wireBytes(pr.protos[q], t.bytes);
                if (Status st = one(t.src, t.dst, t.bytes, wireOne.data(), 1); !st.ok())
                    return st;
            }
        }
    }
    return Ok{};
}

} // namespace

// Stage 5's link loads: the calls merged by groups and schedule, each distinct schedule reduced to its
// rank pairs once, every group's pairs routed onto the fabric, then the totals.
Result<LinkLoads> mapLinkLoads(const Topology& topology, const parallel::CommPlan& plan,
                               const collective::CollectiveDerivation& collectives, const Progress& progress)
{
    LinkLoads out;
    out.links.resize(topology.links().size());
    const Protocols pr = protocolsOf(topology);
    // NCCL's layouts (simsched.h), their NIC hints given to the router before any routing.
    Router router(topology);
    EndpointRouter paths(topology, router); // GPU paths and NVLS's GPU ↔ NVSwitch links (nvlsflows.h)
    std::vector<sim::NcclLayout> layouts;
    std::vector<Entry> entries;
    if (Status st = mergeCalls(topology, plan, collectives, router, layouts, entries, out); !st.ok())
        return st.error();
    std::map<SpecKey, PairList> schedules;
    for (std::size_t e = 0; e < entries.size(); ++e) {
        if (progress.stopRequested())
            return errorAt("", "stopped");
        progress(static_cast<double>(e) / static_cast<double>(entries.size()));
        const Entry& entry = entries[e];
        const sim::NcclLayout* ring = entry.layout >= 0 ? &layouts[static_cast<std::size_t>(entry.layout)] : nullptr;
        auto [sit, fresh] = schedules.try_emplace(specKey(entry.spec, entry.layout));
        PairList& pl = sit->second;
        if (fresh) {
            ++out.distinctSchedules;
            listPairs(entry, ring, pr.protos, pl);
        }
        if (Status st = routeEntry(plan, paths, pr, entry, ring, pl, progress, out); !st.ok())
            return st.error();
    }
    progress(1.0);

    for (const LinkLoad& l : out.links) {
        for (int s = 0; s < parallel::kStrategyCount; ++s)
            out.payloadBytes[s] += l.payloadBytes[s];
        out.wireBytes += l.wireBytes;
    }
    return out;
}

} // namespace tw::network
