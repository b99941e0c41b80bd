#include "network/simresults.h"

#include <algorithm>
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
    if (!m_topology)
        return;
    m_timeline.assign(m_topology->links().size(), -1);
    if (m_simulation)
        for (std::size_t i = 0; i < m_simulation->linkTimelines.size(); ++i)
            if (m_simulation->linkTimelines[i].link < m_timeline.size())
                m_timeline[m_simulation->linkTimelines[i].link] = int(i);
}

LinkRates LinkRateLookup::at(LinkId link, double time) const
{
    LinkRates r;
    if (!m_topology || link >= m_topology->links().size())
        return r;
    r.bandwidth = m_topology->link(link).bandwidth;
    if (!m_simulation || link >= m_timeline.size() || m_timeline[link] < 0)
        return r;
    const auto& samples = m_simulation->linkTimelines[std::size_t(m_timeline[link])].samples;
    const auto it = std::upper_bound(samples.begin(), samples.end(), time,
                                     [](double t, const RateSample& s) { return t < s.time; });
    if (it == samples.begin())
        return r;
    const RateSample& s = *(it - 1);
    if (!(s.rate > 0))
        return r;
    r.total = s.rate;
    const double known = s.strategyRate[0] + s.strategyRate[1] + s.strategyRate[2] + s.strategyRate[3];
    if (known > 0) {
        for (std::size_t k = 0; k < 4; ++k)
            r.byStrategy[k] = std::max(0.0, s.strategyRate[k]);
        r.unknown = std::max(0.0, s.rate - known) > 1e-6 * s.rate ? s.rate - known : 0;
        return r;
    }
    // No split in the sample: the link's share of payload by strategy over the whole step.
    if (m_loads && link < m_loads->links.size() && m_loads->links[link].payload() > 0) {
        const LinkLoad& load = m_loads->links[link];
        for (std::size_t k = 0; k < 4; ++k)
            r.byStrategy[k] = s.rate * load.payloadBytes[k] / load.payload();
        return r;
    }
    r.unknown = s.rate;
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

double busiestTime(const StepSimulation& simulation)
{
    // Sweep line over the links' busy intervals: +1 when a link's rate turns positive, −1 when it ends.
    std::vector<std::pair<double, int>> events;
    for (const LinkTimeline& t : simulation.linkTimelines) {
        bool busy = false;
        for (const RateSample& s : t.samples) {
            if ((s.rate > 0) != busy) {
                busy = s.rate > 0;
                events.emplace_back(s.time, busy ? 1 : -1);
            }
        }
    }
    std::sort(events.begin(), events.end()); // ends (−1) before starts (+1) at the same time
    int now = 0, most = 0;
    double at = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        now += events[i].second;
        const double next = i + 1 < events.size() ? events[i + 1].first : simulation.stepSeconds;
        if (now > most && next > events[i].first) {
            most = now;
            at = 0.5 * (events[i].first + next); // the middle of the busiest stretch
        }
    }
    return at;
}

} // namespace tw::network
