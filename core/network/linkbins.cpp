#include "network/linkbins.h"

#include <algorithm>
#include <cmath>

namespace tw::network {

const LinkSeries* LinkBins::of(LinkId link) const
{
    if (link >= seriesOf.size() || seriesOf[link] == kNoSeries || seriesOf[link] >= series.size())
        return nullptr;
    return &series[seriesOf[link]];
}

std::uint64_t LinkBins::binCount() const
{
    std::uint64_t n = 0;
    for (const LinkSeries& s : series)
        n += s.bins.size();
    return n;
}

std::uint64_t LinkBins::memoryBytes() const
{
    std::uint64_t n = seriesOf.capacity() * sizeof(std::uint32_t) + series.capacity() * sizeof(LinkSeries);
    for (const LinkSeries& s : series)
        n += s.bins.capacity() * sizeof(LinkBin);
    return n;
}

double LinkBins::bytes(LinkId link) const
{
    double sum = 0;
    if (const LinkSeries* s = of(link))
        for (const LinkBin& b : s->bins)
            sum += b.bytes;
    return sum;
}

LinkBinner::LinkBinner(std::size_t links, std::uint64_t maxBytes, std::uint32_t maxBinsPerLink)
    : m_maxBytes(maxBytes), m_cap(std::max(kMinBinsPerLink, maxBinsPerLink)), m_open(links)
{
    m_out.seriesOf.assign(links, kNoSeries);
}

void LinkBinner::change(LinkId link, double time, double rate, const parallel::PerStrategy<double>& byStrategy)
{
    if (link >= m_open.size())
        return;
    Open& o = m_open[link];
    if (o.rate > 0 && time > o.since)
        integrate(link, o, time);
    o.since = std::max(o.since, time);
    o.rate = rate;
    o.by = byStrategy;
}

void LinkBinner::fitGrid(double end)
{
    // The interval must end inside the grid: [0, m_cap · w) (an end on the last edge is inside).
    while (end > double(m_cap) * m_width)
        coarsen();
}

void LinkBinner::integrate(LinkId link, Open& o, double end)
{
    // The series first and then the grid: both may coarsen (a new series can shrink every link's share
    // of the budget), and nothing below does, so the bin numbers computed here hold.
    seriesFor(link);
    fitGrid(end);
    const double start = o.since;
    const auto first = static_cast<std::uint32_t>(std::floor(start / m_width));
    const auto last = static_cast<std::uint32_t>(
        std::min<double>(m_cap - 1, std::ceil(end / m_width) - 1)); // the bin holding end's left side
    if (o.pending && o.bin != first)
        flush(link, o);
    if (first < last) {
        // [start, the end of its bin) closes that bin, whole bins get rate · w, the rest opens `last`.
        const double edge = double(first + 1) * m_width;
        accumulate(o, first, o.rate, o.by, edge - start);
        flush(link, o);
        const double tail = double(last) * m_width;
        if (tail > edge)
            spread(link, edge, tail, o.rate, o.by);
        accumulate(o, last, o.rate, o.by, end - tail);
    } else { // inside one bin: only the sums move
        accumulate(o, first, o.rate, o.by, end - start);
    }
}

void LinkBinner::accumulate(Open& o, std::uint32_t bin, double rate, const parallel::PerStrategy<double>& by, double dt)
{
    o.acc += rate * dt;
    for (std::size_t j = 0; j < parallel::kStrategyCount; ++j)
        o.accBy[j] += by[j] * dt;
    o.pending = true;
    o.bin = bin;
    m_used = std::max(m_used, bin + 1);
}

void LinkBinner::flush(LinkId link, Open& o)
{
    if (!o.pending)
        return;
    LinkSeries& s = m_out.series[m_out.seriesOf[link]]; // (integrate made it)
    if (s.bins.size() <= o.bin) {
        if (s.bins.capacity() <= o.bin) // grow geometrically but never past the cap (the budget counts m_cap)
            s.bins.reserve(std::min<std::size_t>(m_cap, std::max<std::size_t>(o.bin + 1, 2 * s.bins.capacity())));
        s.bins.resize(o.bin + 1);
    }
    LinkBin& b = s.bins[o.bin];
    b.bytes += o.acc;
    for (std::size_t j = 0; j < parallel::kStrategyCount; ++j)
        if (o.accBy[j] > 0)
            b.byStrategy[j] += static_cast<float>(o.accBy[j]);
    o.pending = false;
    o.acc = 0;
    o.accBy = {0, 0, 0, 0};
}

void LinkBinner::add(LinkId link, double start, double end, double rate, std::size_t strategy)
{
    if (link >= m_open.size() || !(rate > 0) || !(end > start) || strategy > 3)
        return;
    parallel::PerStrategy<double> by{0, 0, 0, 0};
    by[strategy] = rate;
    Open& o = m_open[link];
    if (o.pending && start >= double(o.bin) * m_width && end <= double(o.bin + 1) * m_width) {
        accumulate(o, o.bin, rate, by, end - start); // inside the open bin (the common case)
        return;
    }
    seriesFor(link); // (as integrate: what may coarsen first)
    fitGrid(end);
    const auto first = static_cast<std::uint32_t>(std::floor(start / m_width));
    const auto last = static_cast<std::uint32_t>(std::min<double>(m_cap - 1, std::ceil(end / m_width) - 1));
    if (first < last) {
        spread(link, start, end, rate, by);
        return;
    }
    // Inside one bin (a closed form's transfer is short): into the link's open sums, as a change would.
    if (o.pending && o.bin != first)
        flush(link, o);
    accumulate(o, first, rate, by, end - start);
}

LinkSeries& LinkBinner::seriesFor(LinkId link)
{
    std::uint32_t& i = m_out.seriesOf[link];
    if (i == kNoSeries) {
        i = static_cast<std::uint32_t>(m_out.series.size());
        m_out.series.push_back({link, {}});
        fitBudget();
    }
    return m_out.series[i];
}

void LinkBinner::fitBudget()
{
    // Every series may grow to m_cap bins: keep (series · m_cap · bin) within the budget.
    const std::uint64_t perLink = std::uint64_t(m_cap) * sizeof(LinkBin);
    if (m_cap <= kMinBinsPerLink || m_out.series.size() * perLink <= m_maxBytes)
        return;
    while (m_cap > kMinBinsPerLink && m_out.series.size() * std::uint64_t(m_cap) * sizeof(LinkBin) > m_maxBytes)
        m_cap /= 2;
    m_cap = std::max(m_cap, kMinBinsPerLink);
    while (m_used > m_cap)
        coarsen();
    for (LinkSeries& s : m_out.series)
        if (s.bins.capacity() > m_cap)
            s.bins.shrink_to_fit();
}

void LinkBinner::coarsen()
{
    for (LinkSeries& s : m_out.series) {
        const std::size_t n = (s.bins.size() + 1) / 2;
        for (std::size_t k = 0; k < n; ++k) {
            LinkBin merged = s.bins[2 * k];
            if (2 * k + 1 < s.bins.size()) {
                const LinkBin& b = s.bins[2 * k + 1];
                merged.bytes += b.bytes;
                for (std::size_t j = 0; j < parallel::kStrategyCount; ++j)
                    merged.byStrategy[j] += b.byStrategy[j];
            }
            s.bins[k] = merged;
        }
        s.bins.resize(n);
    }
    for (Open& o : m_open)
        o.bin /= 2; // an open bin's sums go to the merged bin
    m_used = (m_used + 1) / 2;
    m_width *= 2;
}

void LinkBinner::spread(LinkId link, double start, double end, double rate, const parallel::PerStrategy<double>& by)
{
    LinkSeries& s = seriesFor(link);
    fitGrid(end);
    const auto first = static_cast<std::size_t>(std::floor(start / m_width));
    const std::size_t last = std::min<std::size_t>(m_cap - 1, static_cast<std::size_t>(std::ceil(end / m_width)) - 1);
    if (s.bins.size() <= last) {
        if (s.bins.capacity() <= last) // grow geometrically but never past the cap (the budget counts m_cap)
            s.bins.reserve(std::min<std::size_t>(m_cap, std::max<std::size_t>(last + 1, 2 * s.bins.capacity())));
        s.bins.resize(last + 1);
    }
    m_used = std::max<std::uint32_t>(m_used, static_cast<std::uint32_t>(last + 1));
    for (std::size_t k = first; k <= last; ++k) {
        const double a = std::max(start, double(k) * m_width), b = std::min(end, double(k + 1) * m_width);
        if (!(b > a))
            continue;
        const double dt = b - a;
        LinkBin& bin = s.bins[k];
        bin.bytes += rate * dt;
        for (std::size_t j = 0; j < parallel::kStrategyCount; ++j)
            if (by[j] > 0)
                bin.byStrategy[j] += static_cast<float>(by[j] * dt);
    }
}

LinkBins LinkBinner::finish(double end)
{
    for (LinkId l = 0; l < m_open.size(); ++l) {
        Open& o = m_open[l];
        if (o.rate > 0 && end > o.since)
            integrate(l, o, end);
        flush(l, o);
        const double since = std::max(o.since, end);
        o = Open{};
        o.since = since;
    }
    m_out.binSeconds = m_out.series.empty() ? 0.0 : m_width;
    LinkBins out = std::move(m_out);
    m_out = {};
    m_out.seriesOf.assign(m_open.size(), kNoSeries);
    return out;
}

} // namespace tw::network
