#include "symmetry.h"

#include "base/units.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

namespace tw::network::sim {

using parallel::CollectiveCall;

std::uint32_t Symmetry::shiftGpu(const parallel::PlanDerivation& plan, std::uint32_t g, const Shift& shift,
                                 std::uint64_t times) const
{
    if (g == kSwitch) // NVLS's switch endpoint: every shift maps a node's switch to itself (one node)
        return g;
    parallel::MeshCoord c = plan.mesh[g];
    if (shift.dim == 0)
        c.dp = static_cast<std::uint32_t>((c.dp + times * shift.step) % dims[0]);
    else
        c.tp = static_cast<std::uint32_t>((c.tp + times * shift.step) % dims[2]);
    return gpuAt[(std::size_t(c.pp) * dims[0] + c.dp) * dims[2] + c.tp];
}

namespace {

// Whether every step of `s` is the same multiset of (source, destination, bytes) after the ranks are
// permuted by ρ: each permuted transfer is matched to a distinct transfer of its step with the same
// three values, found among the transfers of the permuted source (Sched::rankList), so a step costs its
// transfers, not a sort. Equal sizes make the injective matching a bijection.
bool invariantUnder(const Sched& s, const std::vector<std::uint32_t>& rho)
{
    const std::uint32_t N = s.ranks;
    std::vector<char> used(s.transfers.size(), 0);
    for (std::uint32_t k = 0; k < s.steps; ++k)
        for (std::uint32_t t = s.stepBegin[k]; t < s.stepBegin[k + 1]; ++t) {
            const collective::Transfer& tr = s.transfers[t];
            const std::uint32_t src = rho[tr.src], dst = rho[tr.dst];
            if (src >= N)
                return false;
            const std::size_t cell = std::size_t(k) * N + src;
            bool found = false;
            for (std::uint32_t i = s.rankBegin[cell]; i < s.rankBegin[cell + 1] && !found; ++i) {
                const std::uint32_t u = s.rankList[i];
                const collective::Transfer& x = s.transfers[u];
                if (!used[u] && x.src == src && x.dst == dst && x.bytes == tr.bytes) {
                    used[u] = 1;
                    found = true;
                }
            }
            if (!found)
                return false;
        }
    return true;
}

// A path's latency and its number of constraining (not exempt) links: what a path and its image share.
std::pair<double, std::size_t> constrainedLength(const Topology& topo, const std::vector<char>& exempt,
                                                 const std::vector<LinkId>& path)
{
    std::pair<double, std::size_t> out{0, 0};
    for (LinkId l : path) {
        out.first += topo.link(l).latency;
        out.second += exempt[l] ? 0 : 1;
    }
    return out;
}

} // namespace

void Symmetry::mapExempt(const std::vector<LinkId>& p, const std::vector<LinkId>& q, const std::vector<double>& capacity,
                         std::vector<LinkId>& image, std::vector<LinkId>& inverse) const
{
    bool aligned = p.size() == q.size();
    for (std::size_t k = 0; aligned && k < p.size(); ++k)
        aligned = exempt[p[k]] == exempt[q[k]] && capacity[p[k]] == capacity[q[k]];
    for (std::size_t k = 0; k < p.size(); ++k) {
        if (!exempt[p[k]])
            continue;
        LinkId& to = image[p[k]];
        to = !aligned || (to != kNone && to != q[k]) ? kBadLink : q[k];
    }
    for (std::size_t k = 0; k < q.size(); ++k) {
        if (!exempt[q[k]])
            continue;
        LinkId& from = inverse[q[k]];
        from = !aligned || (from != kNone && from != p[k]) ? kBadLink : p[k];
    }
}

// Group gr's image among call i's groups under one shift: the first group of the call with the image's
// members (kNone: none), as every call using gr must agree on. Per group the groups with its image's
// members are looked up once for the shift.
class Symmetry::GroupImages {
public:
    GroupImages(const Symmetry& sym, const parallel::PlanDerivation& plan, const Shift& shift, const GroupsBySet& bySet)
        : m_sym(sym), m_plan(plan), m_shift(shift), m_bySet(bySet), m_sameSet(plan.comm.groups.size(), nullptr),
          m_looked(plan.comm.groups.size(), 0)
    {
    }
    std::uint32_t targetIn(std::uint32_t gr, std::uint32_t i)
    {
        if (!m_looked[gr]) {
            m_looked[gr] = 1;
            const auto& members = m_plan.comm.groups[gr].members;
            m_image.resize(members.size());
            for (std::size_t r = 0; r < members.size(); ++r)
                m_image[r] = m_sym.shiftGpu(m_plan, members[r], m_shift, 1);
            std::sort(m_image.begin(), m_image.end());
            if (auto hit = m_bySet.find(m_image); hit != m_bySet.end())
                m_sameSet[gr] = &hit->second;
        }
        const CollectiveCall& c = m_plan.comm.calls[i];
        if (m_sameSet[gr])
            for (std::uint32_t h : *m_sameSet[gr])
                if (h >= c.firstGroup && h < c.firstGroup + c.groupCount)
                    return h;
        return kNone;
    }
    // Says that call i has no image of one of its groups.
    bool noImage(std::uint32_t i, std::string& why) const
    {
        why = "the image of a group of \"" + m_plan.comm.calls[i].what + "\" is not a group of that call";
        return false;
    }

private:
    const Symmetry& m_sym;
    const parallel::PlanDerivation& m_plan;
    const Shift& m_shift;
    const GroupsBySet& m_bySet;
    std::vector<const std::vector<std::uint32_t>*> m_sameSet;
    std::vector<char> m_looked;
    std::vector<std::uint32_t> m_image;
};

// Whether `shift` maps the step onto itself (simulate.h "Symmetry"): routed paths onto image paths link by
// link (apart from exempt links), groups onto groups of the same call, schedules invariant under the rank
// permutation. Fills shift.group and shift.link. The paths come first: a shift the fabric refuses (a
// data-parallel shift by part of a leaf group) fails on the first pair that crosses the boundary, before
// any schedule is compared; both parts must pass, so the order changes only which reason is given.
bool Symmetry::verifyShift(const SymmetryInputs& in, Shift& shift, const std::vector<std::array<std::uint32_t, 3>>& triples,
                           const std::vector<std::vector<const Sched*>>& callScheds, const GroupsBySet& bySet,
                           const std::vector<std::uint32_t>& firstCall, std::string& why) const
{
    shift.group.assign(in.plan.comm.groups.size(), kNone);
    GroupImages images(*this, in.plan, shift, bySet);
    return mapShiftLinks(in, shift, triples, firstCall, images, why) && checkShiftGroups(in, shift, callScheds, images, why);
}

// Paths: the image transfer's path, link by link on the constraining links (fills shift.link). A group's
// image is the one its first call gives it (the calls are checked against it by checkShiftGroups).
bool Symmetry::mapShiftLinks(const SymmetryInputs& in, Shift& shift, const std::vector<std::array<std::uint32_t, 3>>& triples,
                             const std::vector<std::uint32_t>& firstCall, GroupImages& images, std::string& why) const
{
    const auto& plan = in.plan;
    const auto& topo = in.topology;
    auto& router = in.router;
    const auto& capacity = in.capacity;
    shift.link.assign(topo.links().size(), kNone);
    std::vector<LinkId> inverse(topo.links().size(), kNone), a, b;
    for (const auto& [gr, srcGpu, dstGpu] : triples) {
        if (shift.group[gr] == kNone && (shift.group[gr] = images.targetIn(gr, firstCall[gr])) == kNone)
            return images.noImage(firstCall[gr], why);
        auto p = router.route(srcGpu, dstGpu, gr);
        auto q = router.route(shiftGpu(plan, srcGpu, shift, 1), shiftGpu(plan, dstGpu, shift, 1), shift.group[gr]);
        if (!p.ok() || !q.ok()) {
            why = "a path cannot be routed";
            return false;
        }
        if (constrainedLength(topo, exempt, *p.value()) != constrainedLength(topo, exempt, *q.value())) {
            why = "GPU " + formatInteger(srcGpu) + " → " + formatInteger(dstGpu) + " and its image take different paths";
            return false;
        }
        a.clear();
        b.clear();
        for (LinkId l : *p.value())
            if (!exempt[l])
                a.push_back(l);
        for (LinkId l : *q.value())
            if (!exempt[l])
                b.push_back(l);
        for (std::size_t k = 0; k < a.size(); ++k) {
            if (capacity[a[k]] != capacity[b[k]] || (shift.link[a[k]] != kNone && shift.link[a[k]] != b[k])
                || (inverse[b[k]] != kNone && inverse[b[k]] != a[k])) {
                why = "link " + topo.link(a[k]).id + " has no consistent image (the fabric or ECMP treats the GPUs differently)";
                return false;
            }
            shift.link[a[k]] = b[k];
            inverse[b[k]] = a[k];
        }
        mapExempt(*p.value(), *q.value(), capacity, shift.link, inverse);
    }
    // An exempt link keeps its image only when nothing else maps there.
    for (LinkId l = 0; l < shift.link.size(); ++l)
        if (exempt[l] && shift.link[l] < kBadLink && inverse[shift.link[l]] != l)
            shift.link[l] = kBadLink;
    return true;
}

// Groups and schedules: each simulated call's groups map onto groups of that call, the same for every
// call (fills shift.group), and its schedules are invariant under each group's rank permutation ρ.
bool Symmetry::checkShiftGroups(const SymmetryInputs& in, Shift& shift,
                                const std::vector<std::vector<const Sched*>>& callScheds, GroupImages& images,
                                std::string& why) const
{
    const auto& plan = in.plan;
    const auto& groups = plan.comm.groups;
    // Per group the rank permutation ρ onto its image, interned: a call's groups are tested against its
    // schedules once per distinct ρ, however many calls share the group.
    std::vector<char> identity(groups.size(), 0);
    std::vector<std::uint32_t> rhoOf(groups.size(), kNone);
    std::map<std::vector<std::uint32_t>, std::uint32_t> rhoIds;
    std::vector<const std::vector<std::uint32_t>*> rhoById;
    std::vector<std::uint32_t> pos(plan.mesh.size(), kNone), rho;
    std::set<std::pair<const Sched*, std::uint32_t>> invariant;
    // Calls over the same groups with the same schedules pass or fail together: each such set once.
    std::set<std::tuple<std::uint32_t, std::uint32_t, char, std::vector<const Sched*>>> checked;
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (!in.simulated[i])
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        if (!checked.emplace(c.firstGroup, c.groupCount, in.simulated[i], callScheds[i]).second)
            continue;
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            const std::uint32_t target = images.targetIn(gr, i);
            if (target == kNone)
                return images.noImage(i, why);
            if (shift.group[gr] != kNone && shift.group[gr] != target) {
                why = "a group maps to different groups in different calls";
                return false;
            }
            shift.group[gr] = target;
            if (rhoOf[gr] == kNone) {
                const auto& members = groups[gr].members;
                const auto& tm = groups[target].members;
                for (std::uint32_t r = 0; r < tm.size(); ++r)
                    pos[tm[r]] = r;
                rho.resize(members.size() + 1); // the last: an NVLS schedule's switch rank, fixed
                bool same = true;
                for (std::size_t r = 0; r < members.size(); ++r) {
                    rho[r] = pos[shiftGpu(plan, members[r], shift, 1)];
                    same = same && rho[r] == r;
                }
                rho[members.size()] = static_cast<std::uint32_t>(members.size());
                for (std::uint32_t g : tm)
                    pos[g] = kNone;
                auto [it, fresh] = rhoIds.try_emplace(rho, static_cast<std::uint32_t>(rhoById.size()));
                if (fresh)
                    rhoById.push_back(&it->first);
                rhoOf[gr] = it->second;
                identity[gr] = same;
            }
            if (in.simulated[i] == 2 && !identity[gr]) {
                why = "a pipeline pair's sender maps to a receiver";
                return false;
            }
            if (identity[gr])
                continue;
            for (const Sched* s : callScheds[i])
                if (invariant.insert({s, rhoOf[gr]}).second && !invariantUnder(*s, *rhoById[rhoOf[gr]])) {
                    why = "the schedule of \"" + c.what + "\" is not invariant under the ranks' permutation";
                    return false;
                }
        }
    }
    return true;
}

// Finds the symmetry group (simulate.h "Symmetry") and, when it is not trivial, the orbits of GPUs,
// groups, ranks and links the quotient simulation uses. Leaves `reduced` false (full simulation) and
// says why in `reduction` whenever a condition fails.
Symmetry Symmetry::analyze(const SymmetryInputs& in)
{
    Symmetry s = none(in.plan.mesh.size(), "");
    s.analyzeWith(in);
    return s;
}

Symmetry Symmetry::none(std::size_t gpus, std::string why)
{
    Symmetry s;
    s.gpuRep.resize(gpus);
    std::iota(s.gpuRep.begin(), s.gpuRep.end(), 0u);
    s.reduction = std::move(why);
    return s;
}

namespace {

// Each path through a link, as the analysis routed them: paths[through[begin[l] .. begin[l + 1]]].
struct LinkPaths {
    std::vector<const std::vector<LinkId>*> paths;
    std::vector<std::uint32_t> begin, through;
};

// Every routed (group, source GPU, destination GPU) path, indexed by link. False when one cannot be routed.
bool routeTriples(EndpointRouter& router, std::size_t links, const std::vector<std::array<std::uint32_t, 3>>& triples,
                  LinkPaths& out)
{
    out.paths.reserve(triples.size());
    out.begin.assign(links + 1, 0);
    for (const auto& [gr, srcGpu, dstGpu] : triples) {
        auto p = router.route(srcGpu, dstGpu, gr);
        if (!p.ok())
            return false;
        out.paths.push_back(p.value());
        for (LinkId l : *p.value())
            ++out.begin[l + 1];
    }
    for (std::size_t l = 0; l < links; ++l)
        out.begin[l + 1] += out.begin[l];
    out.through.resize(out.begin[links]);
    std::vector<std::uint32_t> fill(out.begin.begin(), out.begin.end() - 1);
    for (std::uint32_t p = 0; p < out.paths.size(); ++p)
        for (LinkId l : *out.paths[p])
            out.through[fill[l]++] = p;
    return true;
}

// The greedy cover's scratch, kept across links: per candidate link m (a link of smaller capacity, not
// exempt) how many uncovered paths through the link decided it meets, and the paths it lies on.
struct CoverScratch {
    std::vector<char> covered;
    std::vector<std::uint32_t> meets, slot, onBegin, onFill, on;
    std::vector<LinkId> met;
};

// Whether link l is exempt: a set B of kept links of strictly smaller capacity meets every path crossing
// it and Σ capacity(B) ≤ its own (B chosen greedily, the link meeting most uncovered paths first).
bool coveredBySmaller(LinkId l, const LinkPaths& lp, const std::vector<double>& capacity, const std::vector<char>& exempt,
                      CoverScratch& cs)
{
    const std::uint32_t n = lp.begin[l + 1] - lp.begin[l];
    auto candidate = [&](LinkId m) { return capacity[m] < capacity[l] && !exempt[m]; };
    auto pathOf = [&](std::uint32_t k) -> const std::vector<LinkId>& { return *lp.paths[lp.through[lp.begin[l] + k]]; };
    auto& meets = cs.meets;
    auto& slot = cs.slot;
    for (LinkId m : cs.met)
        slot[m] = kNone;
    cs.met.clear();
    for (std::uint32_t k = 0; k < n; ++k)
        for (LinkId m : pathOf(k))
            if (candidate(m)) {
                if (slot[m] == kNone) {
                    slot[m] = static_cast<std::uint32_t>(cs.met.size());
                    cs.met.push_back(m);
                    meets[m] = 0;
                }
                ++meets[m];
            }
    cs.onBegin.assign(cs.met.size() + 1, 0);
    for (std::size_t i = 0; i < cs.met.size(); ++i)
        cs.onBegin[i + 1] = cs.onBegin[i] + meets[cs.met[i]];
    cs.on.resize(cs.onBegin.back());
    cs.onFill.assign(cs.onBegin.begin(), cs.onBegin.end() - 1);
    for (std::uint32_t k = 0; k < n; ++k)
        for (LinkId m : pathOf(k))
            if (candidate(m))
                cs.on[cs.onFill[slot[m]]++] = k;
    cs.covered.assign(n, 0);
    std::uint32_t left = n;
    double sum = 0;
    while (left > 0 && sum <= capacity[l]) {
        // The link meeting most uncovered paths (then the smaller capacity, then the lower id).
        LinkId best = kNone;
        for (LinkId m : cs.met) {
            const std::uint32_t c = meets[m];
            if (c > 0 && (best == kNone || c > meets[best] || (c == meets[best] && (capacity[m] < capacity[best]
                                                                                || (capacity[m] == capacity[best] && m < best)))))
                best = m;
        }
        if (best == kNone)
            break;
        sum += capacity[best];
        for (std::uint32_t i = cs.onBegin[slot[best]]; i < cs.onBegin[slot[best] + 1]; ++i) {
            const std::uint32_t k = cs.on[i];
            if (cs.covered[k])
                continue;
            cs.covered[k] = 1;
            --left;
            for (LinkId m : pathOf(k))
                if (candidate(m))
                    --meets[m];
        }
    }
    return left == 0 && sum <= capacity[l];
}

} // namespace

// What the analysis gathers from the simulated calls before it tries shifts.
struct Symmetry::CallPairs {
    std::vector<std::vector<const Sched*>> callScheds; // per call: its schedules (simulated calls only)
    std::vector<std::array<std::uint32_t, 3>> triples; // every (group, source GPU, destination GPU) routed
    GroupsBySet bySet;
    std::vector<std::uint32_t> firstCall; // per group: the first simulated call using it
};

// dims from the plan and gpuAt from the mesh; false (saying why) when the mesh is not a dp × pp × tp box.
bool Symmetry::indexMesh(const SymmetryInputs& in, std::string& why)
{
    const auto& plan = in.plan;
    const std::size_t N = plan.mesh.size();
    dims[0] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.dp));
    dims[1] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.pp));
    dims[2] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.tp));
    if (std::uint64_t{dims[0]} * dims[1] * dims[2] != N || N > in.topology.gpuCount()) {
        why = "the mesh is not dp × pp × tp GPUs of the topology";
        return false;
    }
    if (dims[0] == 1 && dims[2] == 1) {
        why = "no data- or tensor-parallel dimension to shift";
        return false;
    }
    gpuAt.assign(N, kNone);
    for (std::uint32_t g = 0; g < N; ++g) {
        const parallel::MeshCoord& c = plan.mesh[g];
        if (c.dp >= dims[0] || c.pp >= dims[1] || c.tp >= dims[2]) {
            why = "a mesh coordinate is out of range";
            return false;
        }
        const std::size_t idx = (std::size_t(c.pp) * dims[0] + c.dp) * dims[2] + c.tp;
        if (gpuAt[idx] != kNone) {
            why = "two GPUs share mesh coordinates";
            return false;
        }
        gpuAt[idx] = g;
    }
    return true;
}

// The calls' schedules, the partition condition and every (group, source GPU, destination GPU) routed,
// pairs of different servers first; false (saying why) when a call's groups do not partition the mesh.
bool Symmetry::collectPairs(const SymmetryInputs& in, CallPairs& out, std::string& why)
{
    const auto& plan = in.plan;
    const auto& topo = in.topology;
    const auto& groups = plan.comm.groups;
    const std::size_t N = plan.mesh.size();
    out.callScheds.resize(plan.comm.calls.size());
    std::vector<std::uint32_t> stamp(N, kNone);
    std::set<std::pair<std::uint32_t, const Sched*>> uses;
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (!in.simulated[i])
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        if (std::uint64_t{c.firstGroup} + c.groupCount > groups.size()) {
            why = "a call's groups are outside the plan";
            return false;
        }
        out.callScheds[i] = in.schedulesOf(i);
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            if (groups[gr].members.size() != in.collectives.calls[i].spec.ranks) {
                why = "a group's size differs from its schedule's ranks";
                return false;
            }
            for (std::uint32_t m : groups[gr].members) {
                if (m >= N) {
                    why = "a group member is outside the mesh";
                    return false;
                }
                if (stamp[m] == i) {
                    why = "a GPU is in two groups of one call";
                    return false;
                }
                stamp[m] = i;
            }
            for (const Sched* s : out.callScheds[i])
                uses.insert({gr, s});
        }
    }
    // Each schedule's distinct (source, destination) rank pairs once (a ring of N ranks has N pairs but
    // N·(N − 1) transfers per call: listing every transfer of every group took 3.6 GB at 98,304 GPUs).
    std::unordered_map<const Sched*, std::vector<std::pair<std::uint32_t, std::uint32_t>>> pairsOf;
    for (const auto& [gr, s] : uses) {
        auto [it, fresh] = pairsOf.try_emplace(s);
        if (!fresh)
            continue;
        for (const collective::Transfer& t : s->transfers)
            it->second.emplace_back(t.src, t.dst);
        std::sort(it->second.begin(), it->second.end());
        it->second.erase(std::unique(it->second.begin(), it->second.end()), it->second.end());
    }
    auto& triples = out.triples;
    for (const auto& [gr, s] : uses) {
        const auto& members = groups[gr].members;
        for (const auto& [src, dst] : pairsOf.at(s))
            triples.push_back({gr, endpointOf(members, src), endpointOf(members, dst)});
    }
    std::sort(triples.begin(), triples.end());
    triples.erase(std::unique(triples.begin(), triples.end()), triples.end());
    // Pairs of different servers first: where a shift the fabric refuses shows itself (verifyShift stops
    // at the first pair that differs; the order decides nothing else).
    auto serverOf = [&](std::uint32_t g) { // an NVLS switch endpoint: none
        return g < topo.gpuCount() && topo.gpuNode(g) != kNoNode ? topo.node(topo.gpuNode(g)).server : -1;
    };
    std::stable_partition(triples.begin(), triples.end(), [&](const std::array<std::uint32_t, 3>& t) {
        return serverOf(t[1]) != serverOf(t[2]);
    });
    return true;
}

// The simulated calls' groups by their sorted members (a shift maps a group onto one of these), each
// group once however many calls use it.
void Symmetry::indexGroups(const SymmetryInputs& in, CallPairs& out)
{
    const auto& plan = in.plan;
    const auto& groups = plan.comm.groups;
    out.firstCall.assign(groups.size(), kNone);
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (!in.simulated[i])
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            if (out.firstCall[gr] != kNone)
                continue;
            out.firstCall[gr] = i;
            std::vector<std::uint32_t> m = groups[gr].members;
            std::sort(m.begin(), m.end());
            out.bySet[std::move(m)].push_back(gr);
        }
    }
}

// Exempt links: decided by increasing capacity (coveredBySmaller). Equal capacities never justify each
// other, so the decisions do not depend on link numbering (an automorphism maps exempt links to exempt
// links) and a path's smallest links always stay. False when a path cannot be routed.
bool Symmetry::decideExempt(const SymmetryInputs& in, const CallPairs& pairs)
{
    const auto& capacity = in.capacity;
    const std::size_t L = in.topology.links().size();
    LinkPaths lp;
    if (!routeTriples(in.router, L, pairs.triples, lp))
        return false;
    std::vector<LinkId> byCapacity;
    for (LinkId l = 0; l < L; ++l)
        if (lp.begin[l + 1] > lp.begin[l])
            byCapacity.push_back(l);
    std::sort(byCapacity.begin(), byCapacity.end(),
              [&](LinkId x, LinkId y) { return capacity[x] != capacity[y] ? capacity[x] < capacity[y] : x < y; });
    exempt.assign(L, 0);
    // Both final for the candidates when l's turn comes, links being decided by increasing capacity.
    CoverScratch cs;
    cs.meets.assign(L, 0);
    cs.slot.assign(L, kNone);
    for (LinkId l : byCapacity) {
        exempt[l] = coveredBySmaller(l, lp, capacity, exempt, cs);
        anyExempt = anyExempt || exempt[l];
    }
    return true;
}

// Generators: per dimension the smallest step that passes verifyShift. Returns the refusals met.
std::string Symmetry::findGenerators(const SymmetryInputs& in, const CallPairs& pairs)
{
    std::string refusals;
    for (int dim : {0, 1}) {
        const std::uint32_t size = dims[dim == 0 ? 0 : 2];
        for (std::uint32_t step = 1; step < size; ++step) {
            if (size % step)
                continue;
            Shift sh;
            sh.dim = dim;
            sh.step = step;
            sh.order = size / step;
            std::string why;
            if (verifyShift(in, sh, pairs.triples, pairs.callScheds, pairs.bySet, pairs.firstCall, why)) {
                shifts.push_back(std::move(sh));
                break;
            }
            refusals += std::string(refusals.empty() ? "" : "; ") + (dim == 0 ? "dp" : "tp") + " shift "
                        + formatInteger(step) + ": " + why;
        }
    }
    return refusals;
}

// GPU orbits: the representative has coordinate mod step in each shifted dimension.
void Symmetry::gpuOrbits(const parallel::PlanDerivation& plan)
{
    auto exponent = [&](std::uint32_t g, const Shift& sh) {
        return (sh.dim == 0 ? plan.mesh[g].dp : plan.mesh[g].tp) / sh.step;
    };
    for (std::uint32_t g = 0; g < plan.mesh.size(); ++g) {
        std::uint32_t r = g;
        for (const Shift& sh : shifts)
            r = shiftGpu(plan, r, sh, sh.order - exponent(g, sh));
        gpuRep[g] = r;
    }
}

// Group orbits (breadth first from the first group of each), each group's element from its canonical
// group, and its ranks in the canonical group's numbering; false (saying why) when inconsistent.
bool Symmetry::groupOrbits(const parallel::PlanDerivation& plan, std::string& why)
{
    const auto& groups = plan.comm.groups;
    groupCanon.assign(groups.size(), kNone);
    rankCanon.assign(groups.size(), {});
    rankRepOf.assign(groups.size(), {});
    rankOrbits.assign(groups.size(), 0);
    stabilizer.assign(groups.size(), 0);
    std::vector<std::vector<std::uint32_t>> element(groups.size());
    for (std::uint32_t c = 0; c < groups.size(); ++c) {
        if (shifts[0].group[c] == kNone || groupCanon[c] != kNone)
            continue;
        groupCanon[c] = c;
        element[c].assign(shifts.size(), 0);
        std::deque<std::uint32_t> queue{c};
        while (!queue.empty()) {
            const std::uint32_t gr = queue.front();
            queue.pop_front();
            for (std::size_t i = 0; i < shifts.size(); ++i) {
                const std::uint32_t h = shifts[i].group[gr];
                if (h == kNone) {
                    why = "a group's image is not mapped";
                    return false;
                }
                if (groupCanon[h] != kNone)
                    continue;
                groupCanon[h] = c;
                element[h] = element[gr];
                element[h][i] = (element[h][i] + 1) % shifts[i].order;
                queue.push_back(h);
            }
        }
        if (!rankOrbitsOf(groups[c].members, c, why))
            return false;
    }
    return canonicalRanks(plan, element, why);
}

// Ranks of canonical group c: orbits are the GPU orbits met (a GPU is in one group per call); false
// (saying why) when they differ in size.
bool Symmetry::rankOrbitsOf(const std::vector<std::uint32_t>& cm, std::uint32_t c, std::string& why)
{
    std::unordered_map<std::uint32_t, std::uint32_t> first;
    std::vector<std::uint32_t> size(cm.size(), 0);
    rankRepOf[c].resize(cm.size());
    for (std::uint32_t r = 0; r < cm.size(); ++r) {
        auto [it, fresh] = first.try_emplace(gpuRep[cm[r]], r);
        rankRepOf[c][r] = it->second;
        rankOrbits[c] += fresh ? 1 : 0;
        ++size[it->second];
    }
    stabilizer[c] = size[0];
    for (std::uint32_t r = 0; r < cm.size(); ++r)
        if (rankRepOf[c][r] == r && size[r] != stabilizer[c]) {
            why = "a group's ranks fall in orbits of different sizes";
            return false;
        }
    rankRepOf[c].push_back(static_cast<std::uint32_t>(cm.size())); // an NVLS switch rank: its own orbit
    return true;
}

// Each group's ranks in its canonical group's numbering (rankCanon), through its element's inverse.
bool Symmetry::canonicalRanks(const parallel::PlanDerivation& plan,
                              const std::vector<std::vector<std::uint32_t>>& element, std::string& why)
{
    const auto& groups = plan.comm.groups;
    std::vector<std::uint32_t> pos(plan.mesh.size(), kNone);
    for (std::uint32_t gr = 0; gr < groups.size(); ++gr) {
        if (groupCanon[gr] == kNone)
            continue;
        const auto& cm = groups[groupCanon[gr]].members;
        for (std::uint32_t r = 0; r < cm.size(); ++r)
            pos[cm[r]] = r;
        const auto& members = groups[gr].members;
        rankCanon[gr].resize(members.size());
        for (std::uint32_t r = 0; r < members.size(); ++r) {
            std::uint32_t g = members[r];
            for (std::size_t i = 0; i < shifts.size(); ++i)
                g = shiftGpu(plan, g, shifts[i], shifts[i].order - element[gr][i]);
            if (pos[g] == kNone) {
                why = "a group's image is inconsistent";
                return false;
            }
            rankCanon[gr][r] = pos[g];
        }
        for (std::uint32_t g : cm)
            pos[g] = kNone;
    }
    return true;
}

// Link orbits under the shifts' link maps (union–find); an orbit of exempt links stays only when every
// shift maps each of its links (else its links are routed image by image: pathEntries) and its size
// divides |Γ|. False (saying why) when an orbit's size does not divide it.
bool Symmetry::linkOrbits(std::size_t L, std::string& why)
{
    std::vector<LinkId> parent(L);
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](LinkId x) {
        while (parent[x] != x)
            x = parent[x] = parent[parent[x]];
        return x;
    };
    for (const Shift& sh : shifts)
        for (LinkId l = 0; l < L; ++l)
            if (sh.link[l] < kBadLink) {
                const LinkId a = find(l), b = find(sh.link[l]);
                if (a != b)
                    parent[std::max(a, b)] = std::min(a, b);
            }
    linkRep.assign(L, kNone);
    linkOrbitSize.assign(L, 0);
    linkOrbitMembers.assign(L, {});
    for (LinkId l = 0; l < L; ++l)
        if (shifts[0].link[l] != kNone) {
            linkRep[l] = find(l);
            linkOrbitMembers[linkRep[l]].push_back(l);
        }
    for (LinkId r = 0; r < L; ++r) {
        auto& members = linkOrbitMembers[r];
        if (members.empty() || !exempt[r])
            continue;
        bool whole = order % members.size() == 0;
        for (LinkId l : members)
            for (const Shift& sh : shifts)
                whole = whole && sh.link[l] < kBadLink;
        if (whole)
            continue;
        for (LinkId l : members)
            linkRep[l] = kNone;
        members.clear();
    }
    for (LinkId l = 0; l < L; ++l)
        if (linkRep[l] != kNone) {
            linkOrbitSize[l] = static_cast<std::uint32_t>(linkOrbitMembers[linkRep[l]].size());
            if (order % linkOrbitSize[l]) {
                why = "a link orbit's size does not divide the group's order";
                return false;
            }
        }
    for (LinkId l = 0; l < L; ++l)
        unmappedExempt = unmappedExempt || (exempt[l] && linkRep[l] == kNone && shifts[0].link[l] != kNone);
    return true;
}

// The reduction's description: the shifts, GPUs per orbit, exempt links, the refused shifts.
std::string Symmetry::describeReduction(std::size_t gpus, const std::string& refusals) const
{
    std::string what;
    for (const Shift& sh : shifts)
        what += std::string(what.empty() ? "" : " × ") + (sh.dim == 0 ? "dp" : "tp") + " shift "
                + formatInteger(sh.step) + " (" + formatInteger(sh.order) + ")";
    std::uint64_t inOrbits = 0, perImage = 0; // exempt links on the paths
    for (LinkId l = 0; l < exempt.size(); ++l)
        if (exempt[l] && shifts[0].link[l] != kNone)
            ++(linkRep[l] != kNone ? inOrbits : perImage);
    return what + ": " + formatInteger(static_cast<std::int64_t>(order)) + " GPUs per orbit, "
           + formatInteger(static_cast<std::int64_t>(gpus / order)) + " simulated"
           + (inOrbits + perImage == 0 ? ""
                                       : "; exempt links: " + formatInteger(static_cast<std::int64_t>(inOrbits))
                                             + " in orbits, " + formatInteger(static_cast<std::int64_t>(perImage))
                                             + " counted per image")
           + (refusals.empty() ? "" : " (refused: " + refusals + ")");
}

// The analysis in steps: the mesh, the routed pairs and groups, the exempt links, the generators, then
// the orbits of GPUs, groups and links. Stops (reduced stays false) saying why at the first failure.
void Symmetry::analyzeWith(const SymmetryInputs& in)
{
    auto refuse = [&](const std::string& why) { reduction = "full simulation: " + why; };
    std::string why;
    CallPairs pairs;
    if (!indexMesh(in, why) || !collectPairs(in, pairs, why))
        return refuse(why);
    indexGroups(in, pairs);
    if (!decideExempt(in, pairs))
        return refuse("a path cannot be routed");
    const std::string refusals = findGenerators(in, pairs);
    if (shifts.empty())
        return refuse(refusals);
    order = 1;
    for (const Shift& sh : shifts)
        order *= sh.order;
    gpuOrbits(in.plan);
    if (!groupOrbits(in.plan, why) || !linkOrbits(in.topology.links().size(), why))
        return refuse(why);
    reduced = true;
    reduction = describeReduction(in.plan.mesh.size(), refusals);
}

// The allocation's view of a path (PathEntry).
std::vector<PathEntry> Symmetry::pathEntries(const parallel::PlanDerivation& plan, EndpointRouter& router,
                                             const std::vector<LinkId>& path, std::uint32_t srcGpu,
                                             std::uint32_t dstGpu, std::uint32_t group,
                                             std::optional<Error>& failure) const
{
    std::vector<PathEntry> e;
    if (!reduced) {
        for (LinkId l : path)
            e.push_back({l, 1, true});
    } else {
        for (LinkId l : path) {
            if (exempt[l] && linkRep[l] == kNone)
                continue;
            const LinkId r = linkRep[l];
            const std::uint32_t w = order / linkOrbitSize[l];
            auto hit = std::find_if(e.begin(), e.end(), [r](const PathEntry& x) { return x.link == r; });
            if (hit != e.end())
                hit->weight += w;
            else
                e.push_back({r, w, !exempt[l]});
        }
        if (unmappedExempt) {
            // Exempt links are real links: count the flows of the orbit crossing each (every image routed).
            std::map<LinkId, std::uint32_t> count;
            std::vector<std::uint32_t> outer{group};
            for (std::uint32_t a = 1; a < shifts[0].order; ++a)
                outer.push_back(shifts[0].group[outer.back()]);
            for (std::uint32_t a = 0; a < shifts[0].order; ++a) {
                std::uint32_t gr = outer[a];
                const std::uint32_t inner = shifts.size() > 1 ? shifts[1].order : 1;
                for (std::uint32_t b = 0; b < inner; ++b) {
                    std::uint32_t s = shiftGpu(plan, srcGpu, shifts[0], a), d = shiftGpu(plan, dstGpu, shifts[0], a);
                    if (shifts.size() > 1) {
                        s = shiftGpu(plan, s, shifts[1], b);
                        d = shiftGpu(plan, d, shifts[1], b);
                        if (b > 0)
                            gr = shifts[1].group[gr];
                    }
                    auto p = router.route(s, d, gr);
                    if (!p.ok()) {
                        if (!failure)
                            failure = p.error();
                        break;
                    }
                    for (LinkId l : *p.value())
                        if (exempt[l] && linkRep[l] == kNone)
                            ++count[l];
                }
            }
            for (const auto& [l, n] : count)
                e.push_back({l, n, false});
        }
    }
    return e;
}

// Each transfer's orbit representative under the canonical group's stabilizer (the
// shifts that map the group onto itself, as rank permutations). False when the schedule is not invariant.
bool Symmetry::transferOrbits(const parallel::PlanDerivation& plan, std::uint32_t group, const Sched& sched,
                              std::vector<std::uint32_t>& rep) const
{
    const auto& members = plan.comm.groups[group].members;
    std::unordered_map<std::uint32_t, std::uint32_t> pos;
    for (std::uint32_t r = 0; r < members.size(); ++r)
        pos[members[r]] = r;
    // The stabilizer: for each rank in rank 0's orbit, the element taking member 0 to it.
    std::vector<std::vector<std::uint32_t>> perms;
    for (std::uint32_t r = 1; r < members.size(); ++r) {
        if (rankRepOf[group][r] != 0)
            continue;
        std::vector<std::uint32_t> rho(members.size() + 1); // the last: an NVLS schedule's switch rank, fixed
        rho[members.size()] = static_cast<std::uint32_t>(members.size());
        for (std::uint32_t q = 0; q < members.size(); ++q) {
            std::uint32_t g = members[q];
            for (const Shift& sh : shifts) {
                auto e = [&](std::uint32_t x) { return (sh.dim == 0 ? plan.mesh[x].dp : plan.mesh[x].tp) / sh.step; };
                g = shiftGpu(plan, g, sh, (e(members[r]) + sh.order - e(members[0])) % sh.order);
            }
            auto hit = pos.find(g);
            if (hit == pos.end())
                return false;
            rho[q] = hit->second;
        }
        perms.push_back(std::move(rho));
    }
    rep.assign(sched.transfers.size(), kNone);
    std::unordered_multimap<std::uint64_t, std::uint32_t> at;
    for (std::uint32_t k = 0; k < sched.steps; ++k) {
        at.clear();
        for (std::uint32_t t = sched.stepBegin[k]; t < sched.stepBegin[k + 1]; ++t)
            at.emplace((std::uint64_t{sched.transfers[t].src} << 32) | sched.transfers[t].dst, t);
        for (std::uint32_t t = sched.stepBegin[k]; t < sched.stepBegin[k + 1]; ++t) {
            if (rep[t] != kNone)
                continue;
            rep[t] = t;
            const collective::Transfer& tr = sched.transfers[t];
            for (const auto& rho : perms) {
                const std::uint64_t key = (std::uint64_t{rho[tr.src]} << 32) | rho[tr.dst];
                bool found = false;
                for (auto [i, e] = at.equal_range(key); i != e; ++i)
                    if (rep[i->second] == kNone && sched.transfers[i->second].bytes == tr.bytes) {
                        rep[i->second] = t;
                        found = true;
                        break;
                    }
                if (!found)
                    return false;
            }
        }
    }
    return true;
}

} // namespace tw::network::sim
