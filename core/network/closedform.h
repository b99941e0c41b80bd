#pragma once
// Stage 5, internal to the simulator: private links and private collectives in closed form (simulate.h
// "Private collectives"). A link is private when every flow that can ever cross it belongs to a blocking
// call and enters it as the first link out of one GPU, or the last link into one GPU — the same GPU for
// all — and no schedule step has that GPU send (receive) two transfers through it: it carries at most one
// flow at a time. An instance all of whose transfers cross only private links, and in whose schedule
// every rank's end depends on every rank's arrival, is computed once its last rank arrives: each transfer
// alone at its bottleneck capacity, starting when both ends finished their earlier steps.

#include "nvlsflows.h"
#include "routing.h"
#include "simsched.h"
#include "symmetry.h"
#include "fabric/topology.h"

#include "collective/binding.h"
#include "parallel/plan.h"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace tw::network::sim {

// How a call takes part, for privacy: 0 not run, 1 run without blocking its GPU, 2 blocking (TP/EP,
// ZeRO-3 parameter AllGather, optimizer phase).
enum class CallPrivacy : char { NotRun, NonBlocking, Blocking };

struct PrivateLinks {
    std::vector<char> privacy;         // per link: 0 unused, 1 private to one GPU's side, 2 shared
    std::vector<std::uint64_t> owner;  // 2·GPU (its sending side) or 2·GPU + 1 (its receiving side)
    [[nodiscard]] bool analyzed() const { return !privacy.empty(); }

    // Every potential flow of every run call routed; not analyzed (empty) when a call's groups are
    // inconsistent with its schedule.
    [[nodiscard]] static PrivateLinks analyze(const Topology& topology, const parallel::PlanDerivation& plan,
                                              const collective::CollectiveDerivation& collectives, EndpointRouter& router,
                                              const std::vector<CallPrivacy>& calls,
                                              const std::function<std::vector<const Sched*>(std::uint32_t)>& schedulesOf);
};

// Per-rank step recurrence of a collective whose flows run alone: a transfer of step k starts when both
// ends have finished their steps < k and takes its duration; ready[r] becomes rank r's done time
// (spans, when given: each transfer's start and end).
void stepRecurrence(const Sched& s, const std::vector<double>& duration, std::vector<double>& ready,
                    std::vector<double>& scratch, std::vector<std::pair<double, double>>* spans = nullptr);

// The closed form of one (group, schedule), decided once.
struct ClosedForm {
    int decided = -1;                               // −1 not decided, 0 no, 1 yes
    std::vector<double> duration;                   // per transfer: Σ latency + bytes / bottleneck capacity
    std::vector<double> lockstep;                   // per rank: done − arrival when all arrive together
    std::vector<std::pair<LinkId, double>> payload; // bytes per link of one instance
    // Under symmetry: payload folded onto the links' orbit representatives, each scaled by
    // order / |orbit(l)| / |Stab(group)| (filled at the first use, `folded`).
    std::vector<std::pair<LinkId, double>> payloadRep;
    bool folded = false;
    std::vector<const std::vector<LinkId>*> route;  // per transfer: its path
    std::vector<double> latency, rate;              // per transfer: Σ latency, bottleneck capacity

    // Whether instances of `sched` over `group` can be computed in closed form: every link of every
    // transfer private, and every rank's end depending on every rank's arrival (so no rank is done
    // before the last one arrives, when the closed form is evaluated). Decided at the first call.
    bool decide(const Sched& sched, const std::vector<std::uint32_t>& members, std::uint32_t group,
                const Topology& topology, EndpointRouter& router, const PrivateLinks& links,
                const std::vector<double>& capacity, const Symmetry& symmetry, bool communication);
    // Under symmetry, one instance stands for order / |Stab(group)| instances: each link l of its payload
    // adds bytes · order / |orbit(l)| / |Stab(group)| to l's orbit representative.
    const std::vector<std::pair<LinkId, double>>& foldedPayload(const Symmetry& symmetry, std::uint32_t group);
};

} // namespace tw::network::sim
