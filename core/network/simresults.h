#pragma once
// Queries on a simulated step (network/simulate.h) that the views ask: what a link carries at a given
// time, split by strategy, and the time at which the most links are busy at once. Pure reads of the
// StepSimulation and the step's LinkLoads; no simulation is run here.

#include "network/linkload.h"
#include "network/simulate.h"
#include "fabric/topology.h"

#include <array>
#include <cstdint>
#include <utility>
#include <optional>
#include <vector>

namespace tw::network {

// A link's (or a merged line's) rates at one time of the step.
struct LinkRates {
    double total = 0;                        // B/s
    parallel::PerStrategy<double> byStrategy{};      // B/s by strategy (DP, PP, TP, EP)
    double unknown = 0;                      // B/s of no known strategy (neither the bin nor the loads say)
    double bandwidth = 0;                    // B/s of the link (Σ when summed)

    LinkRates& operator+=(const LinkRates& o);
    bool operator==(const LinkRates&) const = default;
};

// The binned rates of a simulated step by link (StepSimulation::linkBins). Holds pointers: the topology,
// simulation and loads must outlive it. Any of simulation and loads may be null (rates are then 0; the
// bandwidth is known).
class LinkRateLookup {
public:
    LinkRateLookup() = default;
    LinkRateLookup(const Topology* topology, const StepSimulation* simulation, const LinkLoads* loads);

    // The rate on `link` at `time`: the mean over the bin holding `time` (bytes / bin width; 0 outside
    // the bins). When the bin has no split by strategy, its rate is split as the link's payload over the
    // whole step is (LinkLoads), else counted as unknown.
    [[nodiscard]] LinkRates at(LinkId link, double time) const;
    // Σ over `links` (a merged line).
    [[nodiscard]] LinkRates sum(const std::vector<LinkId>& links, double time) const;

    // Many links by the bin series they read (an orbit's links share one under symmetry): their total
    // rate at a time costs one read per distinct series, not one per link (a pod's box at 98,304 GPUs
    // sums tens of thousands of links each frame).
    struct Gathered {
        double bandwidth = 0;                                        // Σ of the links' bandwidths
        std::vector<std::pair<std::uint32_t, std::uint32_t>> series; // (series index, links reading it)
    };
    [[nodiscard]] Gathered gather(const std::vector<LinkId>& links) const;
    // The same with a caller's scratch counts (kept zero between calls: gathering many link sets costs
    // their links, not a sort or an allocation each).
    [[nodiscard]] Gathered gather(const std::vector<LinkId>& links, std::vector<std::uint32_t>& scratch) const;
    // sum(links, time).total for the links gathered.
    [[nodiscard]] double total(const Gathered& links, double time) const;

private:
    const Topology* m_topology = nullptr;
    const StepSimulation* m_simulation = nullptr;
    const LinkLoads* m_loads = nullptr;
};

// The link with the largest payload over its capacity in the step (the bottleneck, not the widest pipe:
// "net.busiest_link_bytes" names the link with the most bytes); none when no link carried payload.
[[nodiscard]] std::optional<LinkId> mostUtilizedLink(const Topology& topology, const StepSimulation& simulation);

// The middle of the first bin of the step with the most links busy (carrying bytes in it), clipped to
// the step; 0 when no link carries traffic.
[[nodiscard]] double busiestTime(const StepSimulation& simulation);

} // namespace tw::network
