#include "network/simresults.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tw::network {

LinkRates& LinkRates::operator+=(const LinkRates& o)
{
    total += o.total;
    unknown += o.unknown;
    bandwidth += o.bandwidth;
    for (std::size_t k = 0; k < byStrategy.size(); ++k)
        byStrategy[k] += o.byStrategy[k];
    return *this;
}

LinkRateLookup::LinkRateLookup(const Topology* topology, const StepSimulation* simulation, const LinkLoads* loads)
    : m_topology(topology), m_simulation(simulation), m_loads(loads)
{
}

LinkRates LinkRateLookup::at(LinkId link, double time) const
{
    LinkRates r;
    if (!m_topology || link >= m_topology->links().size())
        return r;
    r.bandwidth = m_topology->link(link).bandwidth;
    if (!m_simulation)
        return r;
    const LinkBins& bins = m_simulation->linkBins;
    const LinkSeries* series = bins.of(link);
    if (!series || !(bins.binSeconds > 0) || !(time >= 0))
        return r;
    const double k = std::floor(time / bins.binSeconds);
    if (k >= double(series->bins.size()))
        return r;
    const LinkBin& bin = series->bins[std::size_t(k)];
    if (!(bin.bytes > 0))
        return r;
    // The bin's mean rate; its split by strategy scaled to the total (the split is kept in float).
    r.total = bin.bytes / bins.binSeconds;
    double known = 0;
    for (float b : bin.byStrategy)
        known += std::max(0.0f, b);
    if (known > 0) {
        for (std::size_t s = 0; s < parallel::kStrategyCount; ++s)
            r.byStrategy[s] = r.total * std::max(0.0f, bin.byStrategy[s]) / known;
        return r;
    }
    // No split in the bin: the link's share of payload by strategy over the whole step.
    if (m_loads && link < m_loads->links.size() && m_loads->links[link].payload() > 0) {
        const LinkLoad& load = m_loads->links[link];
        for (std::size_t s = 0; s < parallel::kStrategyCount; ++s)
            r.byStrategy[s] = r.total * load.payloadBytes[s] / load.payload();
        return r;
    }
    r.unknown = r.total;
    return r;
}

LinkRates LinkRateLookup::sum(const std::vector<LinkId>& links, double time) const
{
    if (links.size() == 1)
        return at(links.front(), time);
    LinkRates total;
    for (const LinkId l : links)
        total += at(l, time);
    return total;
}

LinkRateLookup::Gathered LinkRateLookup::gather(const std::vector<LinkId>& links) const
{
    std::vector<std::uint32_t> scratch;
    return gather(links, scratch);
}

LinkRateLookup::Gathered LinkRateLookup::gather(const std::vector<LinkId>& links, std::vector<std::uint32_t>& scratch) const
{
    Gathered out;
    if (!m_topology)
        return out;
    const std::size_t seriesCount = m_simulation ? m_simulation->linkBins.series.size() : 0;
    if (scratch.size() < seriesCount)
        scratch.resize(seriesCount, 0);
    std::vector<std::uint32_t> order; // the series in the order they first appear
    for (const LinkId l : links) {
        if (l >= m_topology->links().size())
            continue;
        out.bandwidth += m_topology->link(l).bandwidth;
        if (!m_simulation || !m_simulation->linkBins.of(l))
            continue;
        const std::uint32_t s = m_simulation->linkBins.seriesOf[l];
        if (scratch[s]++ == 0)
            order.push_back(s);
    }
    out.series.reserve(order.size());
    for (const std::uint32_t s : order) {
        out.series.emplace_back(s, scratch[s]);
        scratch[s] = 0;
    }
    return out;
}

double LinkRateLookup::total(const Gathered& links, double time) const
{
    if (!m_simulation)
        return 0;
    const LinkBins& bins = m_simulation->linkBins;
    if (!(bins.binSeconds > 0) || !(time >= 0))
        return 0;
    const double k = std::floor(time / bins.binSeconds);
    double total = 0;
    for (const auto& [series, count] : links.series) {
        const std::vector<LinkBin>& s = bins.series[series].bins;
        if (k < double(s.size()) && s[std::size_t(k)].bytes > 0)
            total += double(count) * s[std::size_t(k)].bytes / bins.binSeconds;
    }
    return total;
}

std::optional<LinkId> mostUtilizedLink(const Topology& topology, const StepSimulation& simulation)
{
    std::optional<LinkId> most;
    double best = 0;
    for (LinkId l = 0; l < simulation.linkPayloadBytes.size() && l < topology.links().size(); ++l) {
        const double use = simulation.linkPayloadBytes[l] / std::max(topology.link(l).bandwidth, 1.0);
        if (simulation.linkPayloadBytes[l] > 0 && use > best) {
            best = use;
            most = l;
        }
    }
    return most;
}

double busiestTime(const StepSimulation& simulation)
{
    // Links busy per bin (a series counts once per link reading it: an orbit's members under symmetry);
    // the middle of the first bin with the most.
    const LinkBins& bins = simulation.linkBins;
    if (!(bins.binSeconds > 0))
        return 0;
    std::vector<std::uint64_t> readers(bins.series.size(), 0);
    for (std::uint32_t i : bins.seriesOf)
        if (i < readers.size())
            ++readers[i];
    std::vector<std::uint64_t> busy;
    for (std::size_t i = 0; i < bins.series.size(); ++i) {
        const auto& b = bins.series[i].bins;
        if (busy.size() < b.size())
            busy.resize(b.size(), 0);
        for (std::size_t k = 0; k < b.size(); ++k)
            if (b[k].bytes > 0)
                busy[k] += readers[i];
    }
    std::uint64_t most = 0;
    double at = 0;
    for (std::size_t k = 0; k < busy.size(); ++k)
        if (busy[k] > most) {
            most = busy[k];
            const double start = double(k) * bins.binSeconds;
            at = std::min(start + 0.5 * bins.binSeconds, 0.5 * (start + std::max(start, simulation.stepSeconds)));
        }
    return at;
}

} // namespace tw::network
