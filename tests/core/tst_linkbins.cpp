// Stage 5's link bins (network/linkbins.h): the payload each link moved per time bin. A hand-derived
// case (two flows sharing one link, bytes per bin by hand), merging bins keeps every integral, a closed
// form's span added directly, the bound on bins per link and on the bins' memory; then real steps on
// several presets and fabric kinds, with and without symmetry: every link's bins sum to the bytes the
// simulation says it carried (to 1e-9 relative), the bins cover the whole step and stay within budget.

#include "network/linkbins.h"
#include "network/simulate.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <QTest>

#include <cmath>

using namespace tw::network;

class TestLinkBins : public QObject {
    Q_OBJECT
private slots:
    void twoFlowsOnOneLink();
    void mergingKeepsTheIntegral();
    void closedFormSpan();
    void binsPerLinkBounded();
    void memoryBudget();
    void stepsIntegrateToThePayload_data();
    void stepsIntegrateToThePayload();
};

// One link of 100 B/s; flow A (DP, 200 B) starts at 0.25 s, flow B (PP, 50 B) at 1 s. Max-min fair:
// A alone at 100 B/s on [0.25, 1) sends 75 B; both at 50 B/s from 1 s: B's 50 B end at 2 s, A has sent
// 50 more (75 B left); A alone at 100 B/s ends at 2.75 s. The engine's rate changes on the link are
//   0.25: 100 (DP 100) · 1: 100 (DP 50, PP 50) · 2: 100 (DP 100) · 2.75: 0.
// With 16 bins per link the width must be a power of two with 16 · w ≥ 2.75 s: w = 0.25 s (0.125 gives
// 2 s). Bins: [0, 0.25) 0; three bins of [0.25, 1) 25 B DP each; four of [1, 2) 25 B = 12.5 DP + 12.5 PP;
// three of [2, 2.75) 25 B DP. Σ = 10 · 25 = 250 B = 200 + 50.
void TestLinkBins::twoFlowsOnOneLink()
{
    LinkBinner b(1, std::uint64_t{1} << 30, 16);
    b.change(0, 0.25, 100, {100, 0, 0, 0});
    b.change(0, 1, 100, {50, 50, 0, 0});
    b.change(0, 2, 100, {100, 0, 0, 0});
    b.change(0, 2.75, 0, {0, 0, 0, 0});
    const LinkBins bins = b.finish(2.75);
    QCOMPARE(bins.binSeconds, 0.25);
    QCOMPARE(bins.series.size(), std::size_t(1));
    QCOMPARE(bins.seriesOf, std::vector<std::uint32_t>{0});
    const std::vector<LinkBin>& x = bins.series[0].bins;
    QCOMPARE(x.size(), std::size_t(11));
    QCOMPARE(x[0].bytes, 0.0);
    for (std::size_t k = 1; k < 11; ++k) {
        QCOMPARE(x[k].bytes, 25.0);
        const bool shared = k >= 4 && k < 8;
        QCOMPARE(x[k].byStrategy[0], shared ? 12.5f : 25.0f);
        QCOMPARE(x[k].byStrategy[1], shared ? 12.5f : 0.0f);
    }
    QCOMPARE(bins.bytes(0), 250.0);
}

// 1,000 intervals of rates r_i on [i·0.0137, (i+1)·0.0137) (a width no power of two divides): the grid
// is coarsened about 20 times on the way to 13.7 s, yet Σ bins = Σ r_i · 0.0137 to 1e-12.
void TestLinkBins::mergingKeepsTheIntegral()
{
    LinkBinner b(3, std::uint64_t{1} << 30, 64);
    double exact = 0;
    const double dt = 0.0137;
    for (int i = 0; i < 1000; ++i) {
        const double r = 1e9 * (1 + (i * 7919) % 13);
        b.change(1, i * dt, r, {0, 0, r, 0});
        exact += r * dt;
    }
    const LinkBins bins = b.finish(1000 * dt);
    QVERIFY(bins.of(0) == nullptr && bins.of(2) == nullptr);
    QVERIFY(bins.of(1) != nullptr);
    QVERIFY(bins.of(1)->bins.size() <= 64);
    QVERIFY(64 * bins.binSeconds >= 1000 * dt);         // covers the step
    QVERIFY(32 * bins.binSeconds < 1000 * dt);          // and no coarser than needed
    QVERIFY(std::abs(bins.bytes(1) - exact) <= 1e-12 * exact);
    double tp = 0;
    for (const LinkBin& x : bins.of(1)->bins)
        tp += x.byStrategy[2];
    QVERIFY(std::abs(tp - exact) <= 1e-6 * exact); // float split
}

// A closed form's lone flow, 40 B/s on [0.5, 1.5) as EP, straight into the bins (w = 0.125 s for 16
// bins and 1.5 s: 8 bins of 5 B from bin 4); the link's rate state stays untouched (idle).
void TestLinkBins::closedFormSpan()
{
    LinkBinner b(2, std::uint64_t{1} << 30, 16);
    b.add(1, 0.5, 1.5, 40, 3);
    b.add(1, 1.5, 1.5, 40, 3); // empty span: nothing
    const LinkBins bins = b.finish(2);
    QCOMPARE(bins.binSeconds, 0.125);
    const std::vector<LinkBin>& x = bins.of(1)->bins;
    QCOMPARE(x.size(), std::size_t(12));
    for (std::size_t k = 0; k < x.size(); ++k) {
        QCOMPARE(x[k].bytes, k >= 4 ? 5.0 : 0.0);
        QCOMPARE(x[k].byStrategy[3], k >= 4 ? 5.0f : 0.0f);
    }
    QCOMPARE(bins.bytes(1), 40.0);
}

// However long the step, a link holds at most maxBinsPerLink bins: one rate on [0, 10^4 s) after a
// start at 10^-6 s, with 128 bins: w = 2^7 s ≥ 10^4 / 128 = 78.1 s (the next power of two).
void TestLinkBins::binsPerLinkBounded()
{
    LinkBinner b(1, std::uint64_t{1} << 30, 128);
    b.change(0, 1e-6, 1, {1, 0, 0, 0});
    const LinkBins bins = b.finish(1e4);
    QCOMPARE(bins.binSeconds, 128.0);
    QVERIFY(bins.series[0].bins.size() <= 128);
    QVERIFY(std::abs(bins.bytes(0) - (1e4 - 1e-6)) <= 1e-12 * 1e4);
}

// The budget halves the bins per link as links start carrying traffic: 1,000 links, 64 bins' worth
// each (1,000 · 64 · 24 B = 1.5 MB) of a budget asked for 4,096 per link: 4096 → 64 bins per link, and
// the bins allocated never exceed the budget. A budget too small for even kMinBinsPerLink keeps that
// floor.
void TestLinkBins::memoryBudget()
{
    const std::uint64_t budget = 1000 * 64 * sizeof(LinkBin);
    LinkBinner b(1000, budget, 4096);
    for (LinkId l = 0; l < 1000; ++l) {
        b.change(l, 0, 1e9, {1e9, 0, 0, 0});
        b.change(l, 1.0 + 0.001 * l, 0, {0, 0, 0, 0}); // each link's first close allocates its series
    }
    QCOMPARE(b.binsPerLink(), 64u);
    const LinkBins bins = b.finish(2);
    std::uint64_t binBytes = 0;
    for (const LinkSeries& s : bins.series) {
        QVERIFY(s.bins.size() <= 64);
        binBytes += s.bins.capacity() * sizeof(LinkBin);
    }
    QVERIFY2(binBytes <= budget, qPrintable(QStringLiteral("%1 > %2").arg(binBytes).arg(budget)));
    for (LinkId l = 0; l < 1000; ++l)
        QVERIFY(std::abs(bins.bytes(l) - 1e9 * (1.0 + 0.001 * l)) <= 1e-12 * 2e9);

    LinkBinner tiny(100, 1, 4096);
    for (LinkId l = 0; l < 100; ++l)
        tiny.change(l, 0, 1, {1, 0, 0, 0});
    const LinkBins t = tiny.finish(1);
    QCOMPARE(tiny.binsPerLink(), kMinBinsPerLink);
    for (const LinkSeries& s : t.series)
        QVERIFY(s.bins.size() <= kMinBinsPerLink);
}

void TestLinkBins::stepsIntegrateToThePayload_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<int>("kind"); // -1: the preset's fabric, else a TopologyKind
    QTest::addColumn<bool>("symmetry");
    for (const bool sym : {false, true}) {
        const char* tag = sym ? ", symmetry" : ", full";
        QTest::addRow("paper-reference (nvswitch node)%s", tag) << "paper-reference" << -1 << sym;
        QTest::addRow("paper-testbed%s", tag) << "paper-testbed" << -1 << sym;
        QTest::addRow("paper-tp on a pcie server%s", tag) << "paper-tp" << int(TopologyKind::PcieServer) << sym;
        QTest::addRow("dgx-h100-4node (rail leaf-spine)%s", tag) << "dgx-h100-4node" << -1 << sym;
        QTest::addRow("dgx-a100-4node, three-tier%s", tag) << "dgx-a100-4node" << int(TopologyKind::ThreeTier) << sym;
        QTest::addRow("mixtral-8x7b%s", tag) << "mixtral-8x7b" << -1 << sym;
    }
    // 768 GPUs and a step of seconds: the bins must reach its end (the old sample budget stopped at 0.3 s).
    QTest::addRow("gpt3-175b, symmetry") << "gpt3-175b" << -1 << true;
}

void TestLinkBins::stepsIntegrateToThePayload()
{
    QFETCH(QString, preset);
    QFETCH(int, kind);
    QFETCH(bool, symmetry);
    auto sc = tw::scenario::preset(preset.toStdString());
    QVERIFY(sc.ok());
    auto s = sc.value();
    if (kind >= 0)
        s.topology.kind = TopologyKind(kind);
    s.tokenizer.kind = tw::scenario::TokenizerChoice::Kind::Trained; // the step does not depend on it
    s.tokenizer.trainedVocab = 512;
    auto d = tw::scenario::derive(s);
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
    QVERIFY(d.value()->stage3 && d.value()->stage4);
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().toString().c_str());
    const Topology& t = *net.value()->topology;
    SimulationOptions o = tw::scenario::simulationOptions(*d.value(), true);
    o.exploitSymmetry = symmetry;
    auto run = simulateStep(t, *d.value()->stage3, *d.value()->stage4, o);
    QVERIFY2(run.ok(), run.ok() ? "" : run.error().toString().c_str());
    const StepSimulation& sim = run.value();
    qInfo("%s: %zu links, step %.4g s, %s; %zu series, bins of %.3g ms, %.2f MiB", qPrintable(preset), t.links().size(),
          sim.stepSeconds, sim.reduction.c_str(), sim.linkBins.series.size(), sim.linkBins.binSeconds * 1e3,
          double(sim.linkBins.memoryBytes()) / 1048576.0);
    if (symmetry && preset == QLatin1String("gpt3-175b"))
        QVERIFY(sim.symmetryFactor > 1);
    const LinkBins& bins = sim.linkBins;
    QCOMPARE(bins.seriesOf.size(), t.links().size());
    double lastBusy = 0;
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const double payload = sim.linkPayloadBytes[l];
        QCOMPARE(bins.of(l) != nullptr, payload > 0);
        QVERIFY2(std::abs(bins.bytes(l) - payload) <= 1e-9 * std::max(1.0, payload),
                 qPrintable(QStringLiteral("link %1 (%2): %3 vs %4").arg(l).arg(QString::fromStdString(t.link(l).id))
                                .arg(bins.bytes(l), 0, 'g', 17).arg(payload, 0, 'g', 17)));
        if (const LinkSeries* x = bins.of(l))
            for (std::size_t k = x->bins.size(); k-- > 0;)
                if (x->bins[k].bytes > 0) {
                    lastBusy = std::max(lastBusy, double(k + 1) * bins.binSeconds);
                    break;
                }
    }
    QVERIFY(bins.memoryBytes() <= o.maxLinkBinBytes + t.links().size() * 64);
    for (const LinkSeries& x : bins.series)
        QVERIFY(x.bins.size() <= o.maxLinkBins);
    // The grid covers the step, and traffic is binned up to its last bin (the step ends with the
    // gradient reduction and the optimizer: the last busy bin is within 10 % of the end).
    QVERIFY(double(o.maxLinkBins) * bins.binSeconds >= sim.stepSeconds);
    QVERIFY2(lastBusy >= 0.9 * sim.stepSeconds,
             qPrintable(QStringLiteral("last busy bin ends at %1 of a %2 s step").arg(lastBusy).arg(sim.stepSeconds)));
}

QTEST_MAIN(TestLinkBins)
#include "tst_linkbins.moc"
