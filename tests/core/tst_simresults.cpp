// Queries on a simulated step (network/simresults.h) on a hand-made three-node chain a ↔ b ↔ c at
// 100 B/s per direction and hand-made link bins of 0.5 s: the rate at a time (the bytes of the bin
// holding it / 0.5 s), its split by strategy (from the bin, else from the link loads' payload shares,
// else unknown), sums over a merged line, links sharing a series (symmetry), many links gathered by
// series, and the middle of the first bin with the most busy links.

#include "network/simresults.h"

#include <QTest>

#include <array>

using tw::network::busiestTime;
using tw::network::LinkLoads;
using tw::network::LinkRateLookup;
using tw::network::LinkRates;
using tw::network::Node;
using tw::network::NodeKind;
using tw::network::Protocol;
using tw::network::LinkBin;
using tw::network::LinkBins;
using tw::network::LinkId;
using tw::network::kNoSeries;
using tw::network::StepSimulation;
using tw::network::Topology;

namespace {

// Links 0 = a→b, 1 = b→a, 2 = b→c, 3 = c→b.
Topology chain()
{
    Topology t;
    const auto a = t.addNode(Node{NodeKind::Gpu, "a", 0, 0});
    const auto b = t.addNode(Node{NodeKind::Gpu, "b", 1, 0});
    const auto c = t.addNode(Node{NodeKind::Gpu, "c", 2, 0});
    t.addLinkPair(a, b, 100, 0, Protocol::PcieGen4);
    t.addLinkPair(b, c, 100, 0, Protocol::PcieGen4);
    return t;
}

// Link `link` busy on [from, to) (multiples of 0.5 s) at `rate` B/s split `by` (B/s): each 0.5 s bin
// holds rate · 0.5 bytes.
void busy(LinkBins& b, LinkId link, double from, double to, double rate, std::array<float, 4> by = {})
{
    if (b.seriesOf[link] == kNoSeries) {
        b.seriesOf[link] = std::uint32_t(b.series.size());
        b.series.push_back({link, {}});
    }
    auto& bins = b.series[b.seriesOf[link]].bins;
    const auto last = std::size_t(to / 0.5);
    if (bins.size() < last)
        bins.resize(last);
    for (auto k = std::size_t(from / 0.5); k < last; ++k) {
        bins[k].bytes += rate * 0.5;
        for (std::size_t j = 0; j < 4; ++j)
            bins[k].byStrategy[j] += by[j] * 0.5f;
    }
}

// Link 0 busy on [1, 3) at 60 B/s (DP 40 + TP 20); link 1 busy on [0, 2) at 50 B/s with no split;
// link 2 busy on [2.5, 4) at 50 B/s (DP 30 + PP 20). Step 5 s, bins of 0.5 s.
StepSimulation simulation()
{
    StepSimulation s;
    s.stepSeconds = 5;
    s.linkBins.binSeconds = 0.5;
    s.linkBins.seriesOf.assign(4, kNoSeries);
    busy(s.linkBins, 0, 1, 3, 60, {40, 0, 20, 0});
    busy(s.linkBins, 1, 0, 2, 50);
    busy(s.linkBins, 2, 2.5, 4, 50, {30, 20, 0, 0});
    return s;
}

} // namespace

class TestSimResults : public QObject {
    Q_OBJECT
private slots:
    void rateInForce();
    void splitWithoutSample();
    void mergedLine();
    void busiest();
    void meanOverBin();
    void sharedSeries();
    void gathered();
};

void TestSimResults::rateInForce()
{
    const Topology t = chain();
    const StepSimulation s = simulation();
    const LinkRateLookup rates(&t, &s, nullptr);
    // Before the first busy bin: idle, the bandwidth known.
    LinkRates idle;
    idle.bandwidth = 100;
    QCOMPARE(rates.at(0, 0.5), idle);
    // From t = 1 (included) to 3 (excluded): 60 B/s, DP 40, TP 20, nothing unknown.
    for (const double time : {1.0, 2.0, 2.999}) {
        const LinkRates r = rates.at(0, time);
        QCOMPARE(r.total, 60.0);
        QCOMPARE(r.byStrategy[0], 40.0);
        QCOMPARE(r.byStrategy[2], 20.0);
        QCOMPARE(r.unknown, 0.0);
        QCOMPARE(r.bandwidth, 100.0);
    }
    QCOMPARE(rates.at(0, 3), idle);
    QCOMPARE(rates.at(0, -1), idle);
    // Link 2: 50 B/s = DP 30 + PP 20.
    QCOMPARE(rates.at(2, 3).byStrategy[0], 30.0);
    QCOMPARE(rates.at(2, 3).byStrategy[1], 20.0);
    QCOMPARE(rates.at(2, 3).unknown, 0.0);
    // Past the last bin (t = 4.5; link 2's bins end at 4 s): idle.
    QCOMPARE(rates.at(2, 4.5).total, 0.0);
    // A link without a timeline, and one that does not exist.
    QCOMPARE(rates.at(3, 3), idle);
    QCOMPARE(rates.at(17, 3), LinkRates{});
    // Without a simulation only the bandwidth is known.
    QCOMPARE(LinkRateLookup(&t, nullptr, nullptr).at(0, 2), idle);
}

// Link 1's bins have no split: with link loads of DP 300 B and PP 100 B over the step, its 50 B/s
// split 3 : 1 = 37.5 DP + 12.5 PP; without loads all 50 B/s are unknown.
void TestSimResults::splitWithoutSample()
{
    const Topology t = chain();
    const StepSimulation s = simulation();
    LinkLoads loads;
    loads.links.resize(t.links().size());
    loads.links[1].payloadBytes[0] = 300;
    loads.links[1].payloadBytes[1] = 100;
    const LinkRates r = LinkRateLookup(&t, &s, &loads).at(1, 1);
    QCOMPARE(r.total, 50.0);
    QCOMPARE(r.byStrategy[0], 37.5);
    QCOMPARE(r.byStrategy[1], 12.5);
    QCOMPARE(r.unknown, 0.0);
    const LinkRates none = LinkRateLookup(&t, &s, nullptr).at(1, 1);
    QCOMPARE(none.unknown, 50.0);
    QCOMPARE(none.byStrategy[0], 0.0);
}

// At t = 1.5 links 0 and 1 together: 60 + 50 = 110 B/s of 200 B/s, DP 40 (link 1 unsplit: unknown 50).
void TestSimResults::mergedLine()
{
    const Topology t = chain();
    const StepSimulation s = simulation();
    const LinkRates r = LinkRateLookup(&t, &s, nullptr).sum({0, 1}, 1.5);
    QCOMPARE(r.total, 110.0);
    QCOMPARE(r.bandwidth, 200.0);
    QCOMPARE(r.byStrategy[0], 40.0);
    QCOMPARE(r.unknown, 50.0);
}

// Busy links per 0.5 s bin: [0,1) 1, [1,2) 2, [2,2.5) 1, [2.5,3) 2, [3,4) 1: the first bin with 2 is
// [1, 1.5), its middle 1.25. A bin past the end of the step is clipped: a link busy only in [4.5, 5)
// of a 4.8 s step gives the middle of [4.5, 4.8), 4.65.
void TestSimResults::busiest()
{
    QCOMPARE(busiestTime(simulation()), 1.25);
    StepSimulation tail;
    tail.stepSeconds = 4.8;
    tail.linkBins.binSeconds = 0.5;
    tail.linkBins.seriesOf.assign(4, kNoSeries);
    busy(tail.linkBins, 0, 4.5, 5, 10);
    QCOMPARE(busiestTime(tail), 4.65);
    StepSimulation idle;
    idle.stepSeconds = 5;
    QCOMPARE(busiestTime(idle), 0.0);
}

// A bin holds bytes, not a rate: 10 B moved somewhere in [4.5, 5) read as 10 / 0.5 = 20 B/s anywhere in it.
void TestSimResults::meanOverBin()
{
    const Topology t = chain();
    StepSimulation s = simulation();
    s.linkBins.seriesOf[3] = std::uint32_t(s.linkBins.series.size());
    s.linkBins.series.push_back({3, std::vector<LinkBin>(10)});
    s.linkBins.series.back().bins[9].bytes = 10;
    const LinkRateLookup rates(&t, &s, nullptr);
    QCOMPARE(rates.at(3, 4.5).total, 20.0);
    QCOMPARE(rates.at(3, 4.99).total, 20.0);
    QCOMPARE(rates.at(3, 4.49).total, 0.0);
    QCOMPARE(rates.at(3, 4.5).unknown, 20.0);
    QCOMPARE(s.linkBins.bytes(3), 10.0);
    QCOMPARE(s.linkBins.bytes(0), 60.0 * 2);
}

// Under symmetry a link reads its orbit representative's series: link 3 pointing at link 2's reads
// link 2's rates, and the busiest bin counts both: [2.5, 3) now has links 0, 2, 3 busy (3), the first
// bin with the most; its middle 2.75.
void TestSimResults::sharedSeries()
{
    const Topology t = chain();
    StepSimulation s = simulation();
    s.linkBins.seriesOf[3] = s.linkBins.seriesOf[2];
    const LinkRateLookup rates(&t, &s, nullptr);
    QCOMPARE(rates.at(3, 3), rates.at(2, 3));
    QCOMPARE(rates.at(3, 3).total, 50.0);
    QCOMPARE(busiestTime(s), 2.75);
}

// Links gathered by series: with link 3 reading link 2's series, {0, 2, 3} read two series (link 2's
// twice); at 2.75 s link 0 carries 60 B/s and links 2 and 3 50 B/s each: 160 B/s of 300 B/s capacity.
// At 4.5 s none is busy (0); an unknown link id is skipped; without a simulation the total is 0.
void TestSimResults::gathered()
{
    const Topology t = chain();
    StepSimulation s = simulation();
    s.linkBins.seriesOf[3] = s.linkBins.seriesOf[2];
    const LinkRateLookup rates(&t, &s, nullptr);
    const LinkRateLookup::Gathered g = rates.gather({0, 2, 3, 99});
    QCOMPARE(g.bandwidth, 300.0);
    QCOMPARE(g.series.size(), std::size_t(2));
    QCOMPARE(rates.total(g, 2.75), 160.0);
    QCOMPARE(rates.total(g, 2.75), rates.sum({0, 2, 3}, 2.75).total);
    QCOMPARE(rates.total(g, 4.5), 0.0);
    QCOMPARE(LinkRateLookup(&t, nullptr, nullptr).total(g, 3.0), 0.0);
    // A scratch reused across gathers is left zero: the same links gather the same twice.
    std::vector<std::uint32_t> scratch;
    const LinkRateLookup::Gathered once = rates.gather({0, 2, 3}, scratch);
    const LinkRateLookup::Gathered twice = rates.gather({0, 2, 3}, scratch);
    QCOMPARE(once.series, twice.series);
    QCOMPARE(rates.total(twice, 2.75), 160.0);
    for (const std::uint32_t c : scratch)
        QCOMPARE(c, 0u);
    QCOMPARE(LinkRateLookup(&t, nullptr, nullptr).gather({0, 1}).bandwidth, 200.0);
}

QTEST_MAIN(TestSimResults)
#include "tst_simresults.moc"
