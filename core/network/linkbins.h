#pragma once
// Stage 5: the payload each link carried over the step as a binned time series (StepSimulation::linkBins),
// what the animation, the link-throughput chart and the scrubber read (docs/model.md §5.4, "Link rates over the step").
//
// Every link shares one grid: bin k covers [k·w, (k+1)·w) of the step and holds the bytes the link moved
// in it (all strategies in double, by strategy in float), so a rate is bytes / w and the sum of a link's
// bins is exactly its payload (the bytes are integrated, not sampled). The width adapts to the step: it
// starts at kFirstBinSeconds and doubles (pairs of bins merged, which keeps every integral exact)
// whenever the step outgrows the bins a link may hold. That number halves, down to kMinBinsPerLink,
// whenever the links carrying traffic times it would exceed the memory budget, so the bins of a whole
// step stay below SimulationOptions::maxLinkBinBytes at any scale (the classic "adaptive histogram": a
// fixed count of bins whose width is a power of two, doubled by merging neighbours).
// Under symmetry the engine bins each link orbit's representative once; every member of the orbit
// points at its representative's series (LinkBins::seriesOf).

#include "fabric/topology.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tw::network {

inline constexpr double kFirstBinSeconds = 1.0 / (1u << 30);  // ≈ 0.93 ns, a power of two: exact bin edges
inline constexpr std::uint32_t kMinBinsPerLink = 16;
inline constexpr std::uint32_t kNoSeries = 0xffffffffu;

struct LinkBin {
    double bytes = 0;                         // payload moved in the bin, all strategies
    parallel::PerStrategy<float> byStrategy{};        // the same by the flows' strategy (DP, PP, TP, EP)
    bool operator==(const LinkBin&) const = default;
};

struct LinkSeries {
    LinkId link = 0;                          // the link (its orbit's representative under symmetry)
    std::vector<LinkBin> bins;                // bin k covers [k·w, (k+1)·w); missing trailing bins are empty
    bool operator==(const LinkSeries&) const = default;
};

struct LinkBins {
    double binSeconds = 0;                    // w, the width of every bin (0: nothing recorded)
    std::vector<LinkSeries> series;           // the links that carried traffic (representatives under symmetry)
    std::vector<std::uint32_t> seriesOf;      // per LinkId: index in series, kNoSeries when idle or not recorded
    bool operator==(const LinkBins&) const = default;

    [[nodiscard]] const LinkSeries* of(LinkId link) const;
    [[nodiscard]] std::uint64_t binCount() const;    // Σ over series
    [[nodiscard]] std::uint64_t memoryBytes() const; // the bins' and the index's storage (capacity)
    [[nodiscard]] double bytes(LinkId link) const;   // Σ of the link's bins
};

// Builds LinkBins from rate changes: change() says a link's rate from `time` on (the previous rate
// fills [the previous change, time)), add() adds a constant rate over an interval directly (the closed
// forms, simulate.h "Private collectives"). Bounded: at most `maxBytes` of bins (not below
// kMinBinsPerLink per link) and `maxBinsPerLink` per link.
class LinkBinner {
public:
    LinkBinner(std::size_t links, std::uint64_t maxBytes, std::uint32_t maxBinsPerLink);
    void change(LinkId link, double time, double rate, const parallel::PerStrategy<double>& byStrategy);
    void add(LinkId link, double start, double end, double rate, std::size_t strategy);
    // Closes every link's last rate at `end` and hands the bins over (the binner is empty afterwards).
    [[nodiscard]] LinkBins finish(double end);
    [[nodiscard]] std::uint32_t binsPerLink() const { return m_cap; }
    [[nodiscard]] double binSeconds() const { return m_width; }

private:
    // Per link: its rate since its last change, and the bytes of the bin that change fell in not yet
    // written (a link's rate changes thousands of times per bin at cluster scale: a change inside the
    // open bin only adds to `acc`; the bins are written when a change leaves it).
    struct Open {
        double since = 0, rate = 0;
        parallel::PerStrategy<double> by{};
        std::uint32_t bin = 0;                 // the open bin (valid while `pending`)
        bool pending = false;
        double acc = 0;
        parallel::PerStrategy<double> accBy{};
    };
    void integrate(LinkId link, Open& o, double end); // o's rate over [o.since, end) into acc and the bins
    // `rate` (by strategy: `by`) over dt seconds of `bin`, into o's open sums (o.bin becomes `bin`).
    void accumulate(Open& o, std::uint32_t bin, double rate, const parallel::PerStrategy<double>& by, double dt);
    void flush(LinkId link, Open& o);                 // acc into its bin
    void spread(LinkId link, double start, double end, double rate, const parallel::PerStrategy<double>& byStrategy);
    LinkSeries& seriesFor(LinkId link);
    void coarsen();                            // width × 2, pairs of bins merged
    void fitBudget();                          // halves m_cap while the budget is exceeded
    void fitGrid(double end);                  // coarsens until [0, end) lies in the grid

    std::uint64_t m_maxBytes;
    std::uint32_t m_cap;                       // bins a link may hold now
    std::uint32_t m_used = 0;                  // the highest bin touched (or open) + 1
    double m_width = kFirstBinSeconds;
    std::vector<Open> m_open;                  // per link
    LinkBins m_out;
};

} // namespace tw::network
