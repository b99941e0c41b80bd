#include "closedform.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tw::network::sim {

using parallel::CollectiveCall;

// Private links (simulate.h "Private collectives"): a link is private when every potential flow crossing
// it belongs to a blocking call and has it as the first link of its path from one GPU (that GPU's sending
// side) or as the last link into one GPU (its receiving side), and no schedule step has that GPU send
// (receive) two transfers through it.
PrivateLinks PrivateLinks::analyze(const Topology& topo, const parallel::PlanDerivation& plan,
                                   const collective::CollectiveDerivation& coll, EndpointRouter& router,
                                   const std::vector<CallPrivacy>& calls,
                                   const std::function<std::vector<const Sched*>(std::uint32_t)>& schedulesOf)
{
    PrivateLinks out;
    auto& linkPrivacy = out.privacy;
    auto& linkOwner = out.owner;
    const std::size_t L = topo.links().size();
    const auto& groups = plan.comm.groups;
    std::set<std::tuple<std::uint32_t, const Sched*, bool>> uses;
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (calls[i] == CallPrivacy::NotRun)
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        if (std::uint64_t{c.firstGroup} + c.groupCount > groups.size())
            return {};
        const bool blocking = calls[i] == CallPrivacy::Blocking;
        const auto scheds = schedulesOf(i);
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            if (groups[gr].members.size() != coll.calls[i].spec.ranks)
                return {};
            for (const Sched* sc : scheds)
                uses.insert({gr, sc, blocking});
        }
    }
    linkPrivacy.assign(L, 0);
    linkOwner.assign(L, 0);
    // Per link, the last (group, schedule, step) in which it was a first (last) link: a second transfer of
    // the same step through it makes it shared. Stamps instead of per-step lists (a step of a ring over
    // hundreds of ranks has hundreds of transfers).
    std::vector<std::uint64_t> seenFirst(L, 0), seenLast(L, 0);
    std::uint64_t stepStamp = 0;
    // A step marks links by its transfers' (source, destination) ranks alone, so a step with the same pairs
    // as an earlier one of its schedule marks nothing new (a ring's every step): each schedule's distinct
    // steps, found once.
    std::map<const Sched*, std::vector<std::uint32_t>> distinctSteps;
    auto stepsOf = [&distinctSteps](const Sched* sc) -> const std::vector<std::uint32_t>& {
        auto [it, fresh] = distinctSteps.try_emplace(sc);
        if (!fresh)
            return it->second;
        std::map<std::vector<std::pair<std::uint32_t, std::uint32_t>>, std::uint32_t> seen;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
        for (std::uint32_t k = 0; k < sc->steps; ++k) {
            pairs.clear();
            for (std::uint32_t t = sc->stepBegin[k]; t < sc->stepBegin[k + 1]; ++t)
                pairs.emplace_back(sc->transfers[t].src, sc->transfers[t].dst);
            if (seen.try_emplace(pairs, k).second)
                it->second.push_back(k);
        }
        return it->second;
    };
    for (const auto& [gr, sc, blocking] : uses) {
        const auto& members = groups[gr].members;
        for (const std::uint32_t k : stepsOf(sc)) {
            ++stepStamp;
            for (std::uint32_t t = sc->stepBegin[k]; t < sc->stepBegin[k + 1]; ++t) {
                const collective::Transfer& tr = sc->transfers[t];
                const std::uint32_t src = endpointOf(members, tr.src), dst = endpointOf(members, tr.dst);
                auto p = router.route(src, dst, gr);
                if (!p.ok())
                    continue; // the simulation reports it
                const std::vector<LinkId>& path = *p.value();
                // A GPU's first link out (its sending side) or last link in (its receiving side); NVLS's
                // one-link paths into and out of the switch belong to their GPU's side.
                const bool toSwitch = dst == kSwitch, fromSwitch = src == kSwitch;
                for (std::size_t i = 0; i < path.size(); ++i) {
                    const LinkId l = path[i];
                    const bool own = toSwitch || fromSwitch || (path.size() > 1 && (i == 0 || i + 1 == path.size()));
                    const std::uint64_t key = toSwitch || (!fromSwitch && i == 0) ? 2 * std::uint64_t{src}
                                                                                  : 2 * std::uint64_t{dst} + 1;
                    if (!blocking || !own)
                        linkPrivacy[l] = 2;
                    else if (linkPrivacy[l] == 0) {
                        linkPrivacy[l] = 1;
                        linkOwner[l] = key;
                    } else if (linkOwner[l] != key)
                        linkPrivacy[l] = 2;
                }
                if (toSwitch || fromSwitch) {
                    auto& seen = toSwitch ? seenFirst : seenLast;
                    if (seen[path.front()] == stepStamp)
                        linkPrivacy[path.front()] = 2;
                    seen[path.front()] = stepStamp;
                } else if (path.size() > 1) {
                    for (auto [l, seen] : {std::pair{path.front(), &seenFirst}, std::pair{path.back(), &seenLast}}) {
                        if ((*seen)[l] == stepStamp)
                            linkPrivacy[l] = 2;
                        (*seen)[l] = stepStamp;
                    }
                }
            }
        }
    }
    return out;
}

// Per-rank step recurrence of a collective whose flows run alone: a transfer of step k starts when both
// ends have finished their steps < k and takes its duration; ready[r] becomes rank r's done time.
void stepRecurrence(const Sched& s, const std::vector<double>& duration, std::vector<double>& ready,
                    std::vector<double>& scratch, std::vector<std::pair<double, double>>* spans)
{
    for (std::uint32_t k = 0; k < s.steps; ++k) {
        scratch = ready;
        for (std::uint32_t t = s.stepBegin[k]; t < s.stepBegin[k + 1]; ++t) {
            const collective::Transfer& tr = s.transfers[t];
            const double start = std::max(ready[tr.src], ready[tr.dst]);
            const double end = start + duration[t];
            scratch[tr.src] = std::max(scratch[tr.src], end);
            scratch[tr.dst] = std::max(scratch[tr.dst], end);
            if (spans)
                (*spans)[t] = {start, end};
        }
        ready.swap(scratch);
    }
}

// Whether instances of this (group, schedule) can be computed in closed form: every link of every
// transfer private, and every rank's end depending on every rank's arrival (so no rank is done before
// the last one arrives, when the closed form is evaluated).
bool ClosedForm::decide(const Sched& sched, const std::vector<std::uint32_t>& members, std::uint32_t group,
                        const Topology& topo, EndpointRouter& router, const PrivateLinks& links,
                        const std::vector<double>& capacity, const Symmetry& symmetry, bool communication)
{
    if (decided >= 0)
        return decided == 1;
    decided = 0;
    ClosedForm& gs = *this;
    const auto& linkPrivacy = links.privacy;
    if (sched.ranks > 64 || sched.transfers.empty())
        return false;
    gs.duration.assign(sched.transfers.size(), 0.0);
    gs.route.assign(sched.transfers.size(), nullptr);
    gs.latency.assign(sched.transfers.size(), 0.0);
    gs.rate.assign(sched.transfers.size(), 0.0);
    std::map<LinkId, double> payload;
    for (std::uint32_t t = 0; t < sched.transfers.size(); ++t) {
        const collective::Transfer& tr = sched.transfers[t];
        auto p = router.route(endpointOf(members, tr.src), endpointOf(members, tr.dst), group);
        if (!p.ok())
            return false;
        double latency = 0, bottleneck = kInf;
        for (LinkId l : *p.value()) {
            if (linkPrivacy[l] != 1 || !(capacity[l] > 0) || (symmetry.reduced && (symmetry.exempt[l] || symmetry.linkRep[l] == kNone)))
                return false;
            latency += topo.link(l).latency;
            bottleneck = std::min(bottleneck, capacity[l]);
        }
        if (sched.capPerByte > 0 && tr.bytes > 0)
            bottleneck = std::min(bottleneck, tr.bytes * sched.capPerByte); // NCCL's own bandwidth (simsched.h)
        gs.route[t] = p.value();
        latency = std::max(latency, sched.stepLatency); // NCCL's latency per step (simsched.h)
        gs.latency[t] = latency;
        gs.rate[t] = bottleneck;
        if (!communication)
            continue;
        const bool sends = tr.bytes > 0 && !p.value()->empty();
        gs.duration[t] = latency + (sends ? tr.bytes / bottleneck : 0.0);
        if (sends)
            for (LinkId l : *p.value())
                payload[l] += tr.bytes;
    }
    std::vector<double> ready, scratch, zero(sched.transfers.size(), 0.0);
    for (std::uint32_t j = 0; j < sched.ranks; ++j) {
        ready.assign(sched.ranks, 0.0);
        ready[j] = 1;
        stepRecurrence(sched, zero, ready, scratch);
        if (*std::min_element(ready.begin(), ready.end()) < 1)
            return false;
    }
    ready.assign(sched.ranks, 0.0);
    stepRecurrence(sched, gs.duration, ready, scratch);
    gs.lockstep = ready;
    gs.payload.assign(payload.begin(), payload.end());
    gs.decided = 1;
    return true;
}

const std::vector<std::pair<LinkId, double>>& ClosedForm::foldedPayload(const Symmetry& symmetry, std::uint32_t group)
{
    if (!folded) {
        std::map<LinkId, double> byRep;
        for (const auto& [l, bytes] : payload)
            byRep[symmetry.linkRep[l]] += bytes * (double(symmetry.order) / symmetry.linkOrbitSize[l]) / symmetry.stabilizer[group];
        payloadRep.assign(byRep.begin(), byRep.end());
        folded = true;
    }
    return payloadRep;
}

} // namespace tw::network::sim
