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

// Whether `shift` maps the step onto itself (simulate.h "Symmetry"): groups onto groups of the same call,
// schedules invariant under the rank permutation, routed paths onto image paths link by link (apart from
// exempt links). Fills shift.group and shift.link.
bool Symmetry::verifyShift(const SymmetryInputs& in, Shift& shift, const std::vector<std::array<std::uint32_t, 3>>& triples,
                           const std::vector<std::vector<const Sched*>>& callScheds, std::string& why) const
{
    const auto& plan = in.plan;
    const auto& topo = in.topology;
    auto& router = in.router;
    const auto& capacity = in.capacity;
    const auto& groups = plan.comm.groups;
    shift.group.assign(groups.size(), kNone);
    std::map<std::vector<std::uint32_t>, std::vector<std::uint32_t>> bySet; // sorted members → groups
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (!in.simulated[i])
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            std::vector<std::uint32_t> m = groups[gr].members;
            std::sort(m.begin(), m.end());
            auto& v = bySet[m];
            if (std::find(v.begin(), v.end(), gr) == v.end())
                v.push_back(gr);
        }
    }
    std::vector<std::uint32_t> pos(plan.mesh.size(), kNone);
    std::set<std::pair<const Sched*, std::vector<std::uint32_t>>> invariant;
    std::vector<std::uint32_t> image, rho;
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (!in.simulated[i])
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            const auto& members = groups[gr].members;
            image.resize(members.size());
            for (std::size_t r = 0; r < members.size(); ++r)
                image[r] = shiftGpu(plan, members[r], shift, 1);
            std::vector<std::uint32_t> sorted = image;
            std::sort(sorted.begin(), sorted.end());
            std::uint32_t target = kNone;
            if (auto hit = bySet.find(sorted); hit != bySet.end())
                for (std::uint32_t h : hit->second)
                    if (h >= c.firstGroup && h < c.firstGroup + c.groupCount) {
                        target = h;
                        break;
                    }
            if (target == kNone) {
                why = "the image of a group of \"" + c.what + "\" is not a group of that call";
                return false;
            }
            if (shift.group[gr] != kNone && shift.group[gr] != target) {
                why = "a group maps to different groups in different calls";
                return false;
            }
            shift.group[gr] = target;
            const auto& tm = groups[target].members;
            for (std::uint32_t r = 0; r < tm.size(); ++r)
                pos[tm[r]] = r;
            rho.resize(members.size() + 1); // the last: an NVLS schedule's switch rank, fixed
            bool identity = true;
            for (std::size_t r = 0; r < members.size(); ++r) {
                rho[r] = pos[image[r]];
                identity = identity && rho[r] == r;
            }
            rho[members.size()] = static_cast<std::uint32_t>(members.size());
            for (std::uint32_t g : tm)
                pos[g] = kNone;
            if (in.simulated[i] == 2 && !identity) {
                why = "a pipeline pair's sender maps to a receiver";
                return false;
            }
            if (identity)
                continue;
            for (const Sched* s : callScheds[i]) {
                if (invariant.count({s, rho}))
                    continue;
                // Step by step, the multiset of (source, destination, bytes) under the rank permutation.
                std::vector<std::tuple<std::uint32_t, std::uint32_t, double>> a, b;
                for (std::uint32_t k = 0; k < s->steps; ++k) {
                    a.clear();
                    b.clear();
                    for (std::uint32_t t = s->stepBegin[k]; t < s->stepBegin[k + 1]; ++t) {
                        const collective::Transfer& tr = s->transfers[t];
                        a.emplace_back(tr.src, tr.dst, tr.bytes);
                        b.emplace_back(rho[tr.src], rho[tr.dst], tr.bytes);
                    }
                    std::sort(a.begin(), a.end());
                    std::sort(b.begin(), b.end());
                    if (a != b) {
                        why = "the schedule of \"" + c.what + "\" is not invariant under the ranks' permutation";
                        return false;
                    }
                }
                invariant.insert({s, rho});
            }
        }
    }
    // Paths: the image transfer's path, link by link on the constraining links.
    shift.link.assign(topo.links().size(), kNone);
    std::vector<LinkId> inverse(topo.links().size(), kNone), a, b;
    for (const auto& [gr, srcGpu, dstGpu] : triples) {
        auto p = router.route(srcGpu, dstGpu, gr);
        auto q = router.route(shiftGpu(plan, srcGpu, shift, 1), shiftGpu(plan, dstGpu, shift, 1), shift.group[gr]);
        if (!p.ok() || !q.ok()) {
            why = "a path cannot be routed";
            return false;
        }
        double la = 0, lb = 0;
        a.clear();
        b.clear();
        for (LinkId l : *p.value()) {
            la += topo.link(l).latency;
            if (!exempt[l])
                a.push_back(l);
        }
        for (LinkId l : *q.value()) {
            lb += topo.link(l).latency;
            if (!exempt[l])
                b.push_back(l);
        }
        if (la != lb || a.size() != b.size()) {
            why = "GPU " + formatInteger(srcGpu) + " → " + formatInteger(dstGpu) + " and its image take different paths";
            return false;
        }
        for (std::size_t k = 0; k < a.size(); ++k) {
            if (capacity[a[k]] != capacity[b[k]] || (shift.link[a[k]] != kNone && shift.link[a[k]] != b[k])
                || (inverse[b[k]] != kNone && inverse[b[k]] != a[k])) {
                why = "link " + topo.link(a[k]).id + " has no consistent image (the fabric or ECMP treats the GPUs differently)";
                return false;
            }
            shift.link[a[k]] = b[k];
            inverse[b[k]] = a[k];
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

void Symmetry::analyzeWith(const SymmetryInputs& in)
{
    const auto& plan = in.plan;
    const auto& topo = in.topology;
    const auto& coll = in.collectives;
    auto& router = in.router;
    const auto& capacity = in.capacity;
    const std::size_t N = plan.mesh.size();
    auto refuse = [&](const std::string& why) { reduction = "full simulation: " + why; };
    dims[0] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.dp));
    dims[1] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.pp));
    dims[2] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.tp));
    if (std::uint64_t{dims[0]} * dims[1] * dims[2] != N || N > topo.gpuCount())
        return refuse("the mesh is not dp × pp × tp GPUs of the topology");
    if (dims[0] == 1 && dims[2] == 1)
        return refuse("no data- or tensor-parallel dimension to shift");
    gpuAt.assign(N, kNone);
    for (std::uint32_t g = 0; g < N; ++g) {
        const parallel::MeshCoord& c = plan.mesh[g];
        if (c.dp >= dims[0] || c.pp >= dims[1] || c.tp >= dims[2])
            return refuse("a mesh coordinate is out of range");
        const std::size_t idx = (std::size_t(c.pp) * dims[0] + c.dp) * dims[2] + c.tp;
        if (gpuAt[idx] != kNone)
            return refuse("two GPUs share mesh coordinates");
        gpuAt[idx] = g;
    }
    // The calls' schedules, the partition condition and every (group, source GPU, destination GPU) routed.
    const auto& groups = plan.comm.groups;
    std::vector<std::vector<const Sched*>> callScheds(plan.comm.calls.size());
    std::vector<std::uint32_t> stamp(N, kNone);
    std::set<std::pair<std::uint32_t, const Sched*>> uses;
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (!in.simulated[i])
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        if (std::uint64_t{c.firstGroup} + c.groupCount > groups.size())
            return refuse("a call's groups are outside the plan");
        callScheds[i] = in.schedulesOf(i);
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            if (groups[gr].members.size() != coll.calls[i].spec.ranks)
                return refuse("a group's size differs from its schedule's ranks");
            for (std::uint32_t m : groups[gr].members) {
                if (m >= N)
                    return refuse("a group member is outside the mesh");
                if (stamp[m] == i)
                    return refuse("a GPU is in two groups of one call");
                stamp[m] = i;
            }
            for (const Sched* s : callScheds[i])
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
    std::vector<std::array<std::uint32_t, 3>> triples;
    for (const auto& [gr, s] : uses) {
        const auto& members = groups[gr].members;
        for (const auto& [src, dst] : pairsOf.at(s))
            triples.push_back({gr, endpointOf(members, src), endpointOf(members, dst)});
    }
    std::sort(triples.begin(), triples.end());
    triples.erase(std::unique(triples.begin(), triples.end()), triples.end());

    // Exempt links: decided by increasing capacity; a link is exempt when a set B of kept links of
    // strictly smaller capacity meets every path crossing it and Σ capacity(B) ≤ its own (B chosen
    // greedily, the link meeting most uncovered paths first). Equal capacities never justify each other,
    // so the decisions do not depend on link numbering (an automorphism maps exempt links to exempt links)
    // and a path's smallest links always stay.
    const std::size_t L = topo.links().size();
    std::vector<const std::vector<LinkId>*> paths;
    paths.reserve(triples.size());
    std::vector<std::uint32_t> begin(L + 1, 0);
    for (const auto& [gr, srcGpu, dstGpu] : triples) {
        auto p = router.route(srcGpu, dstGpu, gr);
        if (!p.ok())
            return refuse("a path cannot be routed");
        paths.push_back(p.value());
        for (LinkId l : *p.value())
            ++begin[l + 1];
    }
    for (std::size_t l = 0; l < L; ++l)
        begin[l + 1] += begin[l];
    std::vector<std::uint32_t> through(begin[L]), fill(begin.begin(), begin.end() - 1);
    for (std::uint32_t p = 0; p < paths.size(); ++p)
        for (LinkId l : *paths[p])
            through[fill[l]++] = p;
    std::vector<LinkId> byCapacity;
    for (LinkId l = 0; l < L; ++l)
        if (begin[l + 1] > begin[l])
            byCapacity.push_back(l);
    std::sort(byCapacity.begin(), byCapacity.end(),
              [&](LinkId x, LinkId y) { return capacity[x] != capacity[y] ? capacity[x] < capacity[y] : x < y; });
    exempt.assign(L, 0);
    std::vector<char> covered;
    std::unordered_map<LinkId, std::uint32_t> meets;
    for (LinkId l : byCapacity) {
        const std::uint32_t n = begin[l + 1] - begin[l];
        covered.assign(n, 0);
        std::uint32_t left = n;
        double sum = 0;
        while (left > 0 && sum <= capacity[l]) {
            meets.clear();
            for (std::uint32_t k = 0; k < n; ++k)
                if (!covered[k])
                    for (LinkId m : *paths[through[begin[l] + k]])
                        if (capacity[m] < capacity[l] && !exempt[m])
                            ++meets[m];
            LinkId best = kNone;
            for (const auto& [m, c] : meets)
                if (best == kNone || c > meets[best] || (c == meets[best] && (capacity[m] < capacity[best]
                                                                              || (capacity[m] == capacity[best] && m < best))))
                    best = m;
            if (best == kNone)
                break;
            sum += capacity[best];
            for (std::uint32_t k = 0; k < n; ++k)
                if (!covered[k]) {
                    const auto& path = *paths[through[begin[l] + k]];
                    if (std::find(path.begin(), path.end(), best) != path.end()) {
                        covered[k] = 1;
                        --left;
                    }
                }
        }
        exempt[l] = left == 0 && sum <= capacity[l];
        anyExempt = anyExempt || exempt[l];
    }

    // Generators: per dimension the smallest step that passes.
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
            if (verifyShift(in, sh, triples, callScheds, why)) {
                shifts.push_back(std::move(sh));
                break;
            }
            refusals += std::string(refusals.empty() ? "" : "; ") + (dim == 0 ? "dp" : "tp") + " shift "
                        + formatInteger(step) + ": " + why;
        }
    }
    if (shifts.empty())
        return refuse(refusals);
    order = 1;
    for (const Shift& sh : shifts)
        order *= sh.order;

    // GPU orbits: the representative has coordinate mod step in each shifted dimension.
    auto exponent = [&](std::uint32_t g, const Shift& sh) {
        return (sh.dim == 0 ? plan.mesh[g].dp : plan.mesh[g].tp) / sh.step;
    };
    for (std::uint32_t g = 0; g < N; ++g) {
        std::uint32_t r = g;
        for (const Shift& sh : shifts)
            r = shiftGpu(plan, r, sh, sh.order - exponent(g, sh));
        gpuRep[g] = r;
    }
    // Group orbits (breadth first from the first group of each), each group's element from its canonical
    // group, and its ranks in the canonical group's numbering.
    groupCanon.assign(groups.size(), kNone);
    rankCanon.assign(groups.size(), {});
    rankRepOf.assign(groups.size(), {});
    rankOrbits.assign(groups.size(), 0);
    stabilizer.assign(groups.size(), 0);
    std::vector<std::vector<std::uint32_t>> element(groups.size());
    std::vector<std::uint32_t> pos(N, kNone);
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
                if (h == kNone)
                    return refuse("a group's image is not mapped");
                if (groupCanon[h] != kNone)
                    continue;
                groupCanon[h] = c;
                element[h] = element[gr];
                element[h][i] = (element[h][i] + 1) % shifts[i].order;
                queue.push_back(h);
            }
        }
        // Ranks of the canonical group: orbits are the GPU orbits met (a GPU is in one group per call).
        const auto& cm = groups[c].members;
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
            if (rankRepOf[c][r] == r && size[r] != stabilizer[c])
                return refuse("a group's ranks fall in orbits of different sizes");
        rankRepOf[c].push_back(static_cast<std::uint32_t>(cm.size())); // an NVLS switch rank: its own orbit
    }
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
            if (pos[g] == kNone)
                return refuse("a group's image is inconsistent");
            rankCanon[gr][r] = pos[g];
        }
        for (std::uint32_t g : cm)
            pos[g] = kNone;
    }
    // Link orbits under the shifts' link maps (union–find).
    std::vector<LinkId> parent(L);
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](LinkId x) {
        while (parent[x] != x)
            x = parent[x] = parent[parent[x]];
        return x;
    };
    for (const Shift& sh : shifts)
        for (LinkId l = 0; l < L; ++l)
            if (sh.link[l] != kNone) {
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
    for (LinkId l = 0; l < L; ++l)
        if (linkRep[l] != kNone) {
            linkOrbitSize[l] = static_cast<std::uint32_t>(linkOrbitMembers[linkRep[l]].size());
            if (order % linkOrbitSize[l])
                return refuse("a link orbit's size does not divide the group's order");
        }
    reduced = true;
    std::string what;
    for (const Shift& sh : shifts)
        what += std::string(what.empty() ? "" : " × ") + (sh.dim == 0 ? "dp" : "tp") + " shift "
                + formatInteger(sh.step) + " (" + formatInteger(sh.order) + ")";
    reduction = what + ": " + formatInteger(static_cast<std::int64_t>(order)) + " GPUs per orbit, "
                    + formatInteger(static_cast<std::int64_t>(N / order)) + " simulated"
                    + (refusals.empty() ? "" : " (refused: " + refusals + ")");
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
            if (exempt[l])
                continue;
            const LinkId r = linkRep[l];
            const std::uint32_t w = order / linkOrbitSize[l];
            auto hit = std::find_if(e.begin(), e.end(), [r](const PathEntry& x) { return x.link == r; });
            if (hit != e.end())
                hit->weight += w;
            else
                e.push_back({r, w, true});
        }
        if (anyExempt) {
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
                        if (exempt[l])
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
