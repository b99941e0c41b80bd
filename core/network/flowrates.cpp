#include "flowrates.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace tw::network {

namespace sim {

namespace {

// Max-min fair rates by progressive filling (Bertsekas & Gallager §6.5.2): repeatedly the most
// constrained link (least capacity left per unfrozen flow) fixes the rate of every unfrozen flow
// crossing it; a flow whose own cap is the smallest share freezes at its cap. rate[i] for flow ids[i]; cnt
// must be all zero on entry and is left so.
template <class PathOf, class CapOf>
void progressiveFill(const std::vector<std::uint32_t>& ids, PathOf pathOf, CapOf capOf, const std::vector<double>& capacity,
                     std::vector<std::uint32_t>& cnt, std::vector<double>& capLeft, std::vector<LinkId>& touched,
                     std::vector<double>& rate)
{
    touched.clear();
    rate.assign(ids.size(), 0.0);
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        for (LinkId l : pathOf(ids[i]))
            if (cnt[l]++ == 0) {
                touched.push_back(l);
                capLeft[l] = capacity[l];
            }
    std::vector<std::uint32_t> unfrozen(ids.size()), keep, frozen;
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        unfrozen[i] = i;
    while (!unfrozen.empty()) {
        double share = kInf;
        for (LinkId l : touched)
            if (cnt[l] > 0)
                share = std::min(share, std::max(0.0, capLeft[l]) / cnt[l]);
        for (std::uint32_t i : unfrozen)
            share = std::min(share, capOf(ids[i]));
        keep.clear();
        frozen.clear();
        for (std::uint32_t i : unfrozen) {
            bool bottleneck = capOf(ids[i]) <= share * (1 + 1e-12);
            for (LinkId l : pathOf(ids[i]))
                if (!bottleneck && std::max(0.0, capLeft[l]) / cnt[l] <= share * (1 + 1e-12)) {
                    bottleneck = true;
                    break;
                }
            (bottleneck ? frozen : keep).push_back(i);
        }
        for (std::uint32_t i : frozen) {
            rate[i] = share;
            for (LinkId l : pathOf(ids[i])) {
                capLeft[l] -= share;
                --cnt[l];
            }
        }
        unfrozen.swap(keep);
    }
    for (LinkId l : touched)
        cnt[l] = 0;
}

// What both solvers share: the flows, the capacities, the link rates and the scratch of the filling.
class Solver : public FlowRates {
public:
    Solver(FlowSet& flows, const std::vector<double>& capacity, LinkRates& links, std::vector<double>& payload,
           std::uint64_t& rateUpdates)
        : fs(flows), capacity(capacity), links(links), payload(payload), rateUpdates(rateUpdates),
          strategySum(capacity.size(), {0, 0, 0, 0}), cnt(capacity.size(), 0), capLeft(capacity.size(), 0.0)
    {
    }

protected:
    FlowSet& fs;
    const std::vector<double>& capacity;
    LinkRates& links;
    std::vector<double>& payload;
    std::uint64_t& rateUpdates;
    std::vector<parallel::PerStrategy<double>> strategySum;
    std::vector<std::uint32_t> cnt;
    std::vector<double> capLeft, newRate;
    std::vector<std::uint32_t> touched;
};

// The original full recomputation (simulate_p.h).
class ReferenceRates final : public Solver {
public:
    using Solver::Solver;

    void activate(std::uint32_t f, double) override
    {
        Flow& fl = fs.flows[f];
        fl.activePos = static_cast<std::uint32_t>(fs.active.size());
        fs.active.push_back(f);
        fs.changed = true;
    }

    void recompute(double now) override
    {
        ++rateUpdates;
        auto& flows = fs.flows;
        const auto& active = fs.active;
        progressiveFill(active, [&flows](std::uint32_t f) -> const std::vector<LinkId>& { return *flows[f].path; },
                        [&flows](std::uint32_t f) { return flows[f].cap; }, capacity, cnt, capLeft, touched, newRate);
        for (std::size_t i = 0; i < active.size(); ++i)
            flows[active[i]].rate = newRate[i];
        // New per-link sums; samples where they changed.
        for (LinkId l : busyLinks) {
            capLeft[l] = 0; // reuse as the new sum
            strategySum[l] = {0, 0, 0, 0};
        }
        for (LinkId l : touched) {
            capLeft[l] = 0;
            strategySum[l] = {0, 0, 0, 0};
        }
        for (std::uint32_t f : active) {
            Flow& fl = flows[f];
            fl.finishAt = fl.rate > 0 ? now + fl.remaining / fl.rate : kInf;
            for (LinkId l : *fl.path) {
                capLeft[l] += fl.rate;
                strategySum[l][fl.strategy] += fl.rate;
            }
        }
        auto sample = [&](LinkId l) {
            if (capLeft[l] == links.rate[l] && strategySum[l] == links.strategyRate[l])
                return;
            links.rate[l] = capLeft[l];
            links.strategyRate[l] = strategySum[l];
            links.record(l, now);
        };
        for (LinkId l : busyLinks)
            sample(l);
        for (LinkId l : touched)
            sample(l);
        busyLinks.clear();
        for (LinkId l : touched)
            if (links.rate[l] > 0)
                busyLinks.push_back(l);
    }

    double nextFinish() override
    {
        double t = kInf;
        for (std::uint32_t f : fs.active)
            t = std::min(t, fs.flows[f].finishAt);
        return t;
    }

    void advance(double now, double t) override
    {
        auto& flows = fs.flows;
        auto& active = fs.active;
        const double dt = t - now;
        if (dt > 0)
            for (LinkId l : busyLinks)
                payload[l] += links.rate[l] * dt;
        const double eps = 1e-13 * std::max(std::abs(t), 1e-9);
        for (std::size_t i = 0; i < active.size();) {
            Flow& fl = flows[active[i]];
            if (fl.finishAt <= t + eps) {
                fl.remaining = 0;
                fs.done.push_back(active[i]);
                flows[active.back()].activePos = static_cast<std::uint32_t>(i);
                active[i] = active.back();
                active.pop_back();
                fl.activePos = kNone;
                fs.changed = true;
            } else {
                fl.remaining = std::max(0.0, fl.remaining - fl.rate * dt);
                ++i;
            }
        }
    }

    void settle(double) override {} // advance() pays as it goes

private:
    std::vector<std::uint32_t> busyLinks; // links with a non-zero rate
};

// Fast path: recomputation per connected component of the changed links, lazy advancing.
class ComponentRates final : public Solver {
public:
    ComponentRates(FlowSet& flows, const std::vector<double>& capacity, LinkRates& links, std::vector<double>& payload,
                   std::uint64_t& rateUpdates)
        : Solver(flows, capacity, links, payload, rateUpdates), linkFlows(capacity.size()), linkDirty(capacity.size(), 0),
          linkVisited(capacity.size(), 0), linkSince(capacity.size(), 0.0)
    {
    }

    void activate(std::uint32_t f, double now) override;
    void recompute(double now) override;
    double nextFinish() override;
    void advance(double now, double t) override;
    void settle(double now) override;

private:
    struct LinkEntry {
        std::uint32_t flow, index; // index into the flow's path
    };
    // Fast path: a flow's predicted finish (stale when gen or finishAt no longer match the flow).
    struct FinishEntry {
        double time = 0;
        std::uint32_t flow = 0, gen = 0;
        bool operator>(const FinishEntry& o) const { return time != o.time ? time > o.time : flow > o.flow; }
    };
    std::vector<std::vector<LinkEntry>> linkFlows;      // per link: active flows crossing it
    std::vector<std::vector<std::uint32_t>> flowLinkPos; // per flow, per path index: position in linkFlows
    std::vector<char> linkDirty, linkVisited, flowMark;
    std::vector<std::uint32_t> dirtyLinks, compFlows, compLinks, fillUnfrozen, fillKeep, fillFrozen;
    std::vector<std::uint32_t> fresh; // activated since the last recomputation
    std::vector<char> freshMark;      // per flow: in `fresh`
    std::vector<double> linkSince; // payload accumulated up to this time at links.rate
    std::priority_queue<FinishEntry, std::vector<FinishEntry>, std::greater<>> finishQueue;

    void deactivate(std::uint32_t f);
    bool atCaps(double now);
    void fillComponent();
    void sampleLink(LinkId l, double sum, const parallel::PerStrategy<double>& strategy, double now);
};

void ComponentRates::activate(std::uint32_t f, double now)
{
    auto& flows = fs.flows;
    Flow& fl = flows[f];
    fl.activePos = static_cast<std::uint32_t>(fs.active.size());
    fs.active.push_back(f);
    fs.changed = true;
    fl.upd = now;
    if (freshMark.size() < flows.size())
        freshMark.resize(flows.size(), 0);
    freshMark[f] = 1;
    fresh.push_back(f);
    if (flowLinkPos.size() < flows.size())
        flowLinkPos.resize(flows.size());
    if (flowMark.size() < flows.size())
        flowMark.resize(flows.size(), 0);
    const std::vector<PathEntry>& path = *fl.entries;
    auto& pos = flowLinkPos[f];
    pos.resize(path.size());
    for (std::uint32_t i = 0; i < path.size(); ++i) {
        const LinkId l = path[i].link;
        pos[i] = static_cast<std::uint32_t>(linkFlows[l].size());
        linkFlows[l].push_back({f, i});
        if (!linkDirty[l]) {
            linkDirty[l] = 1;
            dirtyLinks.push_back(l);
        }
    }
}

// The flow leaves the active set (its rate no longer counts on its links).
void ComponentRates::deactivate(std::uint32_t f)
{
    auto& flows = fs.flows;
    auto& active = fs.active;
    Flow& fl = flows[f];
    const std::uint32_t i = fl.activePos;
    flows[active.back()].activePos = i;
    active[i] = active.back();
    active.pop_back();
    fl.activePos = kNone;
    fs.changed = true;
    const std::vector<PathEntry>& path = *fl.entries;
    const auto& pos = flowLinkPos[f];
    for (std::uint32_t k = 0; k < path.size(); ++k) {
        const LinkId l = path[k].link;
        auto& list = linkFlows[l];
        const LinkEntry last = list.back();
        list[pos[k]] = last;
        flowLinkPos[last.flow][last.index] = pos[k];
        list.pop_back();
        if (!linkDirty[l]) {
            linkDirty[l] = 1;
            dirtyLinks.push_back(l);
        }
    }
}

// Progressive filling over compFlows (the algorithm of progressiveFill, weighted by PathEntry):
// newRate[i] for compFlows[i]; touched = the component's links.
void ComponentRates::fillComponent()
{
    const auto& flows = fs.flows;
    const auto& ids = compFlows;
    touched.clear();
    newRate.assign(ids.size(), 0.0);
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        for (const PathEntry& e : *flows[ids[i]].entries)
            if (e.constrains) {
                if (cnt[e.link] == 0) {
                    touched.push_back(e.link);
                    capLeft[e.link] = capacity[e.link];
                }
                cnt[e.link] += e.weight;
            }
    fillUnfrozen.resize(ids.size());
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        fillUnfrozen[i] = i;
    while (!fillUnfrozen.empty()) {
        double share = kInf;
        for (LinkId l : touched)
            if (cnt[l] > 0)
                share = std::min(share, std::max(0.0, capLeft[l]) / cnt[l]);
        for (std::uint32_t i : fillUnfrozen)
            share = std::min(share, flows[ids[i]].cap);
        fillKeep.clear();
        fillFrozen.clear();
        for (std::uint32_t i : fillUnfrozen) {
            bool bottleneck = flows[ids[i]].cap <= share * (1 + 1e-12);
            for (const PathEntry& e : *flows[ids[i]].entries)
                if (!bottleneck && e.constrains && std::max(0.0, capLeft[e.link]) / cnt[e.link] <= share * (1 + 1e-12)) {
                    bottleneck = true;
                    break;
                }
            (bottleneck ? fillFrozen : fillKeep).push_back(i);
        }
        for (std::uint32_t i : fillFrozen) {
            newRate[i] = share;
            for (const PathEntry& e : *flows[ids[i]].entries)
                if (e.constrains) {
                    capLeft[e.link] -= share * e.weight;
                    cnt[e.link] -= e.weight;
                }
        }
        fillUnfrozen.swap(fillKeep);
        // Links whose flows are all frozen leave the scan.
        std::size_t w = 0;
        for (LinkId l : touched)
            if (cnt[l] > 0)
                touched[w++] = l;
        touched.resize(w);
    }
    for (LinkId l : touched)
        cnt[l] = 0;
}

void ComponentRates::sampleLink(LinkId l, double sum, const parallel::PerStrategy<double>& strategy, double now)
{
    if (sum == links.rate[l] && strategy == links.strategyRate[l])
        return;
    if (now > linkSince[l] && links.rate[l] > 0)
        payload[l] += links.rate[l] * (now - linkSince[l]);
    linkSince[l] = now;
    links.rate[l] = sum;
    links.strategyRate[l] = strategy;
    links.record(l, now);
}

// The changes leave every flow on the changed links at its own cap (NCCL's bandwidth) with room to spare
// on each of those links: then that is the max-min fair allocation there, and no flow elsewhere changes
// (the links' other flows keep their rates, so nothing they share with the rest moves). The fresh flows
// take their caps and the changed links' sums are redone; no component search, no filling. False (nothing
// changed) when a changed link carries a flow without a cap or below it, or would be full at the caps.
bool ComponentRates::atCaps(double now)
{
    auto& flows = fs.flows;
    for (LinkId l : dirtyLinks) {
        double sum = 0;
        bool constrains = false;
        for (const LinkEntry& e : linkFlows[l]) {
            const Flow& fl = flows[e.flow];
            // A fresh flow is to take its cap; any other must be at its cap already.
            if (!(fl.cap < kInf) || (freshMark[e.flow] ? fl.rate != 0 : fl.rate != fl.cap))
                return false;
            const PathEntry& x = (*fl.entries)[e.index];
            sum += fl.cap * x.weight;
            constrains = constrains || x.constrains;
        }
        if (constrains && sum > capacity[l] * (1 - 1e-9))
            return false;
    }
    for (std::uint32_t f : fresh) {
        Flow& fl = flows[f];
        freshMark[f] = 0;
        if (fl.activePos == kNone)
            continue;
        fl.rate = fl.cap;
        fl.finishAt = now + fl.remaining / fl.rate;
        ++fl.gen;
        finishQueue.push({fl.finishAt, f, fl.gen});
    }
    fresh.clear();
    for (LinkId l : dirtyLinks) {
        linkDirty[l] = 0;
        double sum = 0;
        parallel::PerStrategy<double> strategy{0, 0, 0, 0};
        for (const LinkEntry& e : linkFlows[l]) {
            const Flow& fl = flows[e.flow];
            const double r = fl.rate * (*fl.entries)[e.index].weight;
            sum += r;
            strategy[fl.strategy] += r;
        }
        sampleLink(l, sum, strategy, now);
    }
    dirtyLinks.clear();
    return true;
}

// New max-min fair rates for the flows connected (through shared links, transitively) to the links
// whose flow set changed since the last recomputation.
void ComponentRates::recompute(double now)
{
    auto& flows = fs.flows;
    ++rateUpdates;
    if (atCaps(now))
        return;
    for (std::uint32_t f : fresh)
        freshMark[f] = 0;
    fresh.clear();
    compFlows.clear();
    compLinks.clear();
    for (LinkId l : dirtyLinks) {
        linkDirty[l] = 0;
        if (!linkVisited[l]) {
            linkVisited[l] = 1;
            compLinks.push_back(l);
        }
    }
    dirtyLinks.clear();
    for (std::size_t i = 0; i < compLinks.size(); ++i)
        for (const LinkEntry& e : linkFlows[compLinks[i]]) {
            if (flowMark[e.flow])
                continue;
            flowMark[e.flow] = 1;
            compFlows.push_back(e.flow);
            for (const PathEntry& x : *flows[e.flow].entries)
                if (!linkVisited[x.link]) {
                    linkVisited[x.link] = 1;
                    compLinks.push_back(x.link);
                }
        }
    for (std::uint32_t f : compFlows) {
        Flow& fl = flows[f];
        if (now > fl.upd)
            fl.remaining = std::max(0.0, fl.remaining - fl.rate * (now - fl.upd));
        fl.upd = now;
    }
    fillComponent();
    for (LinkId l : compLinks) {
        capLeft[l] = 0; // reuse as the new sum
        strategySum[l] = {0, 0, 0, 0};
    }
    for (std::size_t i = 0; i < compFlows.size(); ++i) {
        const std::uint32_t f = compFlows[i];
        Flow& fl = flows[f];
        if (fl.rate != newRate[i] || fl.finishAt == kInf) { // an unchanged rate keeps its finish (and heap entry)
            fl.rate = newRate[i];
            fl.finishAt = fl.rate > 0 ? now + fl.remaining / fl.rate : kInf;
            ++fl.gen;
            if (fl.finishAt < kInf)
                finishQueue.push({fl.finishAt, f, fl.gen});
        }
        for (const PathEntry& x : *fl.entries) {
            capLeft[x.link] += fl.rate * x.weight;
            strategySum[x.link][fl.strategy] += fl.rate * x.weight;
        }
        flowMark[f] = 0;
    }
    for (LinkId l : compLinks) {
        sampleLink(l, capLeft[l], strategySum[l], now);
        linkVisited[l] = 0;
    }
}

double ComponentRates::nextFinish()
{
    while (!finishQueue.empty()) {
        const FinishEntry& e = finishQueue.top();
        const Flow& fl = fs.flows[e.flow];
        if (fl.activePos != kNone && fl.gen == e.gen)
            return e.time;
        finishQueue.pop();
    }
    return kInf;
}

void ComponentRates::advance(double, double t)
{
    const double eps = 1e-13 * std::max(std::abs(t), 1e-9);
    while (!finishQueue.empty() && finishQueue.top().time <= t + eps) {
        const FinishEntry e = finishQueue.top();
        finishQueue.pop();
        Flow& fl = fs.flows[e.flow];
        if (fl.activePos == kNone || fl.gen != e.gen)
            continue;
        fl.remaining = 0;
        fl.upd = t;
        deactivate(e.flow);
        fs.done.push_back(e.flow);
    }
}

// Payload still owed at the last rates (zero once every flow ended).
void ComponentRates::settle(double now)
{
    for (LinkId l = 0; l < links.rate.size(); ++l)
        if (links.rate[l] > 0 && now > linkSince[l]) {
            payload[l] += links.rate[l] * (now - linkSince[l]);
            linkSince[l] = now;
        }
}

} // namespace

LinkRates::LinkRates(std::size_t n, const SimulationOptions& options)
    : rate(n, 0.0), strategyRate(n, {0, 0, 0, 0}), m_record(options.recordLinks),
      m_bins(options.recordLinks ? n : 0, options.maxLinkBinBytes, options.maxLinkBins)
{
}

void LinkRates::record(LinkId l, double time)
{
    if (m_record)
        m_bins.change(l, time, rate[l], strategyRate[l]);
}

void LinkRates::add(LinkId l, double start, double end, double r, std::size_t strategy)
{
    if (m_record)
        m_bins.add(l, start, end, r, strategy);
}

LinkBins LinkRates::finish(double end)
{
    return m_bins.finish(end);
}

std::unique_ptr<FlowRates> makeFlowRates(bool reference, FlowSet& flows, const std::vector<double>& capacity,
                                         LinkRates& links, std::vector<double>& payload, std::uint64_t& rateUpdates)
{
    if (reference)
        return std::make_unique<ReferenceRates>(flows, capacity, links, payload, rateUpdates);
    return std::make_unique<ComponentRates>(flows, capacity, links, payload, rateUpdates);
}

} // namespace sim

std::vector<double> maxMinFairRates(const std::vector<double>& linkCapacity, const std::vector<std::vector<LinkId>>& flowPaths,
                                    const std::vector<double>& flowCaps)
{
    std::vector<std::uint32_t> ids(flowPaths.size());
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        ids[i] = i;
    std::vector<std::uint32_t> cnt(linkCapacity.size(), 0);
    std::vector<double> capLeft(linkCapacity.size(), 0.0), rate;
    std::vector<LinkId> touched;
    sim::progressiveFill(ids, [&](std::uint32_t f) -> const std::vector<LinkId>& { return flowPaths[f]; },
                         [&](std::uint32_t f) { return f < flowCaps.size() ? flowCaps[f] : sim::kInf; }, linkCapacity,
                         cnt, capLeft, touched, rate);
    for (std::size_t i = 0; i < rate.size(); ++i)
        if (flowPaths[i].empty())
            rate[i] = sim::kInf;
    return rate;
}

} // namespace tw::network
