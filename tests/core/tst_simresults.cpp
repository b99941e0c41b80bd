// Queries on a simulated step (network/simresults.h) on a hand-made three-node chain a ↔ b ↔ c at
// 100 B/s per direction and hand-made rate samples: the rate in force at a time (the last sample at or
// before it), its split by strategy (from the sample, else from the link loads' payload shares, else
// unknown), sums over a merged line, and the middle of the first stretch with the most busy links.

#include "network/simresults.h"

#include <QTest>

using tw::network::busiestTime;
using tw::network::LinkLoads;
using tw::network::LinkRateLookup;
using tw::network::LinkRates;
using tw::network::Node;
using tw::network::NodeKind;
using tw::network::Protocol;
using tw::network::RateSample;
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

RateSample sample(double time, double rate, double dp = 0, double pp = 0, double tp = 0, double ep = 0)
{
    RateSample s;
    s.time = time;
    s.rate = rate;
    s.strategyRate[0] = dp;
    s.strategyRate[1] = pp;
    s.strategyRate[2] = tp;
    s.strategyRate[3] = ep;
    return s;
}

// Link 0 busy on [1, 3) at 60 B/s (DP 40 + TP 20); link 1 busy on [0, 2) at 50 B/s with no split;
// link 2 busy on [2.5, 4) at 50 B/s of which 30 DP. Step 5 s.
StepSimulation simulation()
{
    StepSimulation s;
    s.stepSeconds = 5;
    s.linkTimelines.push_back({0, {sample(1, 60, 40, 0, 20), sample(3, 0)}});
    s.linkTimelines.push_back({1, {sample(0, 50), sample(2, 0)}});
    s.linkTimelines.push_back({2, {sample(2.5, 50, 30), sample(4, 0)}});
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
};

void TestSimResults::rateInForce()
{
    const Topology t = chain();
    const StepSimulation s = simulation();
    const LinkRateLookup rates(&t, &s, nullptr);
    // Before the first sample: idle, the bandwidth known.
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
    // A partial split: 50 − 30 DP = 20 B/s unknown.
    QCOMPARE(rates.at(2, 3).byStrategy[0], 30.0);
    QCOMPARE(rates.at(2, 3).unknown, 20.0);
    // A link without a timeline, and one that does not exist.
    QCOMPARE(rates.at(3, 3), idle);
    QCOMPARE(rates.at(17, 3), LinkRates{});
    // Without a simulation only the bandwidth is known.
    QCOMPARE(LinkRateLookup(&t, nullptr, nullptr).at(0, 2), idle);
}

// Link 1's sample has no split: with link loads of DP 300 B and PP 100 B over the step, its 50 B/s
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

// Busy links over time: [0,1) 1, [1,2) 2, [2,2.5) 1, [2.5,3) 2, [3,4) 1: the first stretch with 2 is
// [1, 2), its middle 1.5. A link busy until the end of the step: its stretch ends at stepSeconds.
void TestSimResults::busiest()
{
    QCOMPARE(busiestTime(simulation()), 1.5);
    StepSimulation tail;
    tail.stepSeconds = 5;
    tail.linkTimelines.push_back({0, {sample(4, 10)}});
    QCOMPARE(busiestTime(tail), 4.5);
    StepSimulation idle;
    idle.stepSeconds = 5;
    QCOMPARE(busiestTime(idle), 0.0);
}

QTEST_MAIN(TestSimResults)
#include "tst_simresults.moc"
