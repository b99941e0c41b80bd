#pragma once
// Stage 5, internal to the simulator (simulate.h "Flows"): max-min fair rates of the flows in flight, by
// progressive filling (Bertsekas & Gallager, Data Networks, §6.5.2), recomputed whenever a flow starts
// sending or ends. A flow may carry a cap of its own (Flow::cap): it then freezes at its cap when the
// filling reaches it, as a flow alone on a private link of that capacity would. Two solvers behind one
// interface:
//   - the reference (simulate_p.h): every active flow's rate recomputed at every change, every flow
//     advanced at every event;
//   - the component solver (simulateStep): rates recomputed only for the connected component (flows
//     sharing links, transitively) of the links whose flow set changed — max-min fair rates of other
//     components cannot change; finish times in a heap with lazy invalidation; remaining bytes and link
//     payloads advanced lazily. Under symmetry its paths are PathEntry lists (links weighted by the
//     flows of an orbit crossing them, symmetry.h).
// The per-link rates and their bins (StepSimulation::linkBins, linkbins.h) are LinkRates, shared with the
// engine's closed-form collectives (closedform.h), which write their bins retroactively.

#include "simsched.h"
#include "simulate.h"
#include "fabric/topology.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace tw::network::sim {

// One link of a flow as the rate allocation sees it: without symmetry the path's links, weight 1; with
// it, the representative of each link's orbit weighted by how many flows of the flow's orbit cross that
// link, and the links no allocation can saturate (constrains = false: only their rate is summed).
struct PathEntry {
    LinkId link = 0;
    std::uint32_t weight = 1;
    bool constrains = true;
};

struct Flow {
    std::uint32_t instance = 0, transfer = 0;        // the engine's: which transfer of which instance
    const std::vector<LinkId>* path = nullptr;
    const std::vector<PathEntry>* entries = nullptr; // component solver
    double remaining = 0, rate = 0, finishAt = kInf;
    double cap = kInf;       // the most this flow may send, B/s (an NCCL call's own bandwidth, simsched.h)
    std::uint8_t strategy = 0;
    std::uint32_t activePos = kNone;
    double upd = 0;          // component solver: `remaining` is as of this time (advanced lazily)
    std::uint32_t gen = 0;   // component solver: bumped at every rate change (stale heap entries)
};

// The flows of the engine: `active` are sending; `done` have finished (the engine drains them);
// `changed` says the active set changed since the last recomputation.
struct FlowSet {
    std::vector<Flow> flows;
    std::vector<std::uint32_t> active, done;
    bool changed = false;
};

// Per-link payload rates as last allocated (all strategies, and by strategy) and their bins.
class LinkRates {
public:
    LinkRates(std::size_t links, const SimulationOptions& options);
    std::vector<double> rate;
    std::vector<parallel::PerStrategy<double>> strategyRate;
    // Link l's current rate holds from `time` on (its previous one filled the bins up to `time`).
    void record(LinkId l, double time);
    // A lone flow's `rate` on link l over [start, end) (closed forms; the link's rate is not changed).
    void add(LinkId l, double start, double end, double rate, std::size_t strategy);
    // Every link's bins up to `end` (options.recordLinks; else empty).
    [[nodiscard]] LinkBins finish(double end);

private:
    bool m_record;
    LinkBinner m_bins;
};

// The solvers' interface. The engine owns `now`: advance(now, t) moves the flows from now to t.
class FlowRates {
public:
    virtual ~FlowRates() = default;
    virtual void activate(std::uint32_t flow, double now) = 0;  // the flow starts sending
    virtual void recompute(double now) = 0;                     // new rates after changes
    [[nodiscard]] virtual double nextFinish() = 0;               // the earliest predicted end (∞: none)
    virtual void advance(double now, double t) = 0;              // flows ending by t go to FlowSet::done
    virtual void settle(double now) = 0;                         // link payload still owed at the end
};

// The solver over `flows` on links of capacity `capacity` (payload B/s): the reference or the component
// one; payloads accumulate in `payload` (per link), recomputations count in `rateUpdates`.
[[nodiscard]] std::unique_ptr<FlowRates> makeFlowRates(bool reference, FlowSet& flows, const std::vector<double>& capacity,
                                                       LinkRates& links, std::vector<double>& payload,
                                                       std::uint64_t& rateUpdates);

} // namespace tw::network::sim
