// Stage 5's fabric drawing driven offscreen: every link of an 8-GPU NVSwitch node and of a 2-node
// leaf–spine drawn where linkAt finds it; the colour and the packets follow hand-made rate changes (binned)
// (utilization = rate / bandwidth of the bin in force, no packets on idle links, more with more
// rate, the link loads' strategy split when a sample has none); hover, zoom, pan and fit; 256 GPUs
// detailed and 512 GPUs compact without overlapping server boxes, a double-click opening a server; a
// real simulated step from the paper's presets.
// With TOKENWIRE_SHOTS_DIR set, the reference fabrics are also saved as PNGs there for a look.

#include "views/palette.h"
#include "views/wirepaint.h"
#include "views/wireview.h"

#include "network/simulate.h"
#include "fabric/topology.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <QApplication>
#include <QDir>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

#include <algorithm>
#include <memory>

using tw::network::LinkId;
using tw::network::NodeKind;
using tw::network::StepSimulation;
using tw::network::Topology;
using tw::network::TopologyKind;
using tw::network::TopologySpec;
using tw::parallel::Strategy;
using tw::ui::WireView;

namespace {

QString shotsDir()
{
    const QString dir = qEnvironmentVariable("TOKENWIRE_SHOTS_DIR");
    if (!dir.isEmpty())
        QDir().mkpath(dir);
    return dir;
}

std::shared_ptr<const Topology> fabric(TopologyKind kind, std::uint64_t nodes, std::uint64_t gpusPerNode)
{
    TopologySpec spec;
    spec.kind = kind;
    auto t = tw::network::build(spec, {nodes, gpusPerNode});
    if (!t.ok())
        qFatal("build: %s", t.error().toString().c_str());
    return std::make_shared<const Topology>(std::move(t).value());
}

// A rate from `time` on (until the link's next one), all strategies and by strategy (DP, PP, TP, EP).
struct RateSample {
    double time = 0;
    double rate = 0;
    double strategyRate[4] = {0, 0, 0, 0};
};

// The step's link bins from hand-made rate changes (core's binner: each bin holds rate × time).
StepSimulation simulationOf(const Topology& t, double step,
                            const std::vector<std::pair<LinkId, std::vector<RateSample>>>& timelines)
{
    StepSimulation s;
    s.stepSeconds = step;
    s.linkPayloadBytes.assign(t.links().size(), 0);
    tw::network::LinkBinner binner(t.links().size(), std::uint64_t{64} << 20, 4096);
    for (const auto& [link, samples] : timelines)
        for (const RateSample& x : samples)
            binner.change(link, x.time, x.rate, {x.strategyRate[0], x.strategyRate[1], x.strategyRate[2], x.strategyRate[3]});
    s.linkBins = binner.finish(step);
    return s;
}

RateSample sample(double time, double dp, double pp = 0, double tp = 0, double ep = 0)
{
    RateSample r;
    r.time = time;
    r.rate = dp + pp + tp + ep;
    r.strategyRate[0] = dp;
    r.strategyRate[1] = pp;
    r.strategyRate[2] = tp;
    r.strategyRate[3] = ep;
    return r;
}

LinkId linkNamed(const Topology& t, const char* id)
{
    const auto l = t.findLink(id);
    if (!l)
        qFatal("no link %s", id);
    return *l;
}

struct Simulated {
    std::shared_ptr<const Topology> topology;
    std::shared_ptr<const tw::network::LinkLoads> loads;
    std::shared_ptr<const StepSimulation> simulation;
};

// A preset on another fabric, derived, mapped and simulated as the pane does.
Simulated simulate(tw::scenario::Scenario sc)
{
    auto d = tw::scenario::derive(sc);
    if (!d.ok())
        qFatal("derive: %s", d.error().toString().c_str());
    if (!d.value()->planErrors.empty())
        qFatal("plan: %s", d.value()->planErrors.front().toString().c_str());
    auto net = tw::scenario::deriveNetwork(sc, *d.value());
    if (!net.ok())
        qFatal("deriveNetwork: %s", net.error().toString().c_str());
    auto sim = tw::network::simulateStep(*net.value()->topology, *d.value()->stage3, *d.value()->stage4);
    if (!sim.ok())
        qFatal("simulateStep: %s", sim.error().toString().c_str());
    Simulated out;
    out.topology = net.value()->topology;
    out.loads = std::shared_ptr<const tw::network::LinkLoads>(net.value(), &net.value()->loads);
    out.simulation = std::make_shared<const StepSimulation>(std::move(sim).value());
    return out;
}

void checkEveryLinkFound(WireView& view)
{
    const Topology& t = *view.topology();
    const QRectF inside = QRectF(view.rect());
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const auto mid = view.linkMidpoint(l);
        QVERIFY2(mid, t.link(l).id.c_str());
        QVERIFY2(inside.contains(*mid), t.link(l).id.c_str());
        const auto found = view.linkAt(mid->toPoint());
        QVERIFY2(found, t.link(l).id.c_str());
        QVERIFY2(*found == l, (t.link(l).id + " found " + t.link(*found).id).c_str());
    }
}

void checkServersApart(const WireView& view, int servers, bool allInside = true)
{
    const QRectF inside = QRectF(view.rect()).adjusted(-1, -1, 1, 1);
    std::vector<QRectF> rects;
    for (int s = 0; s < servers; ++s) {
        const auto r = view.serverRect(s);
        QVERIFY(r);
        QVERIFY2(!allInside || inside.contains(*r), qPrintable(QStringLiteral("server %1 outside").arg(s)));
        for (std::size_t o = 0; o < rects.size(); ++o)
            QVERIFY2(!rects[o].intersects(*r), qPrintable(QStringLiteral("servers %1 and %2 overlap").arg(o).arg(s)));
        rects.push_back(*r);
    }
    QVERIFY(!view.serverRect(servers));
}

} // namespace

class TestWireView : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<WireView> m_view;

    WireView& shown()
    {
        m_view = std::make_unique<WireView>();
        m_view->resize(1280, 720);
        m_view->show();
        if (!QTest::qWaitForWindowExposed(m_view.get()))
            qWarning("window not exposed");
        return *m_view;
    }

    // Moves to the time with the most packets on screen (tried at the middle of busy bins); returns their count.
    static int busiest(WireView& v, const StepSimulation& sim)
    {
        std::vector<double> times;
        const double w = sim.linkBins.binSeconds;
        for (const auto& ls : sim.linkBins.series)
            for (std::size_t k = 0; k < ls.bins.size(); ++k)
                if (ls.bins[k].bytes > 0)
                    times.push_back((double(k) + 0.5) * w);
        std::sort(times.begin(), times.end());
        const std::size_t stride = std::max<std::size_t>(1, times.size() / 80);
        int most = 0;
        double best = 0;
        for (std::size_t i = 0; i < times.size(); i += stride) {
            v.setTime(times[i]);
            (void)v.grab();
            if (v.packetsDrawn() > most) {
                most = v.packetsDrawn();
                best = v.time();
            }
        }
        v.setTime(best);
        return most;
    }

    void shoot(const QString& name)
    {
        const QString dir = shotsDir();
        if (!dir.isEmpty())
            m_view->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
    }

private slots:
    // A link's load is drawn in greys, never in a hue of a strategy: in a DP-only step an orange load read
    // as pipeline packets (Okabe & Ito's orange is PP's colour; Tol's yellow EP's). Every load colour has an
    // HSV saturation below 0.3, every strategy colour of both schemes at least 0.4.
    void loadNeverLooksLikeAStrategy()
    {
        for (const auto scheme : {tw::ui::palette::Scheme::OkabeIto, tw::ui::palette::Scheme::TolBright}) {
            tw::ui::palette::applyScheme(scheme);
            for (int s = 0; s < tw::parallel::kStrategyCount; ++s) {
                const QColor strategy = tw::ui::palette::strategy(s);
                QVERIFY2(strategy.hsvSaturationF() >= 0.4f, qPrintable(strategy.name()));
            }
            for (int i = 0; i <= 20; ++i) {
                const QColor load = tw::ui::loadColor(i / 20.0);
                QVERIFY2(load.hsvSaturationF() < 0.3f, qPrintable(QStringLiteral("%1 at %2").arg(load.name()).arg(i / 20.0)));
            }
        }
        tw::ui::palette::applyScheme(tw::ui::palette::Scheme::OkabeIto);
    }

    void cleanup() { m_view.reset(); }

    void nvswitchNodeEveryLinkFound()
    {
        WireView& v = shown();
        v.setNetwork(fabric(TopologyKind::NvSwitchNode, 1, 8), nullptr, nullptr);
        QVERIFY(!v.compactServers());
        checkEveryLinkFound(v);
        // The GPUs sit in a row below the PCIe switches, the NVSwitch bar below them.
        const Topology& t = *v.topology();
        const auto gpu0 = v.nodeCenter(t.gpuNode(0)), gpu7 = v.nodeCenter(t.gpuNode(7));
        const auto nvs = v.nodeCenter(*t.findNode("n0.nvswitch")), sw = v.nodeCenter(*t.findNode("n0.pcie0"));
        QVERIFY(gpu0 && gpu7 && nvs && sw);
        QCOMPARE(gpu0->y(), gpu7->y());
        QVERIFY(gpu0->x() < gpu7->x());
        QVERIFY(nvs->y() > gpu0->y());
        QVERIFY(sw->y() < gpu0->y());
        shoot(QStringLiteral("nvswitch-node-idle"));
    }

    void leafSpineEveryLinkFound()
    {
        WireView& v = shown();
        v.setNetwork(fabric(TopologyKind::LeafSpine, 2, 8), nullptr, nullptr);
        checkEveryLinkFound(v);
        checkServersApart(v, 2);
        const Topology& t = *v.topology();
        QVERIFY(v.nodeCenter(*t.findNode("spine0"))->y() < v.nodeCenter(*t.findNode("leaf0"))->y());
        QVERIFY(v.nodeCenter(*t.findNode("leaf0"))->y() < v.nodeCenter(*t.findNode("n0.nic0"))->y());
    }

    void otherFabricsEveryLinkFound_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("nodes");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<int>("perSwitch");
        QTest::addColumn<bool>("nvswitch");
        QTest::addColumn<bool>("railNics");
        QTest::newRow("pcie-server") << int(TopologyKind::PcieServer) << 1 << 8 << 2 << false << false;
        QTest::newRow("pcie-server-4-per-switch") << int(TopologyKind::PcieServer) << 1 << 8 << 4 << false << false;
        QTest::newRow("pcie-server-on-root") << int(TopologyKind::PcieServer) << 1 << 4 << 0 << false << false;
        QTest::newRow("leaf-spine-pcie-per-node") << int(TopologyKind::LeafSpine) << 4 << 4 << 2 << false << false;
        QTest::newRow("leaf-spine-pcie-rail") << int(TopologyKind::LeafSpine) << 2 << 4 << 1 << false << true;
        QTest::newRow("paper-testbed") << int(TopologyKind::PaperTestbed) << 7 << 1 << 0 << false << false;
    }

    void otherFabricsEveryLinkFound()
    {
        QFETCH(int, kind);
        QFETCH(int, nodes);
        QFETCH(int, gpus);
        QFETCH(int, perSwitch);
        QFETCH(bool, nvswitch);
        QFETCH(bool, railNics);
        TopologySpec spec;
        spec.kind = TopologyKind(kind);
        spec.gpusPerPcieSwitch = std::uint64_t(perSwitch);
        spec.intraNode = nvswitch ? tw::network::IntraNode::NvSwitch : tw::network::IntraNode::Pcie;
        spec.nicPlacement = railNics ? tw::network::NicPlacement::PerGpu : tw::network::NicPlacement::PerNode;
        auto t = tw::network::build(spec, {std::uint64_t(nodes), std::uint64_t(gpus)});
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().toString().c_str());
        WireView& v = shown();
        v.setNetwork(std::make_shared<const Topology>(std::move(t).value()), nullptr, nullptr);
        checkEveryLinkFound(v);
        checkServersApart(v, nodes);
        shoot(QStringLiteral("fabric-") + QString::fromLatin1(QTest::currentDataTag()));
    }

    void utilizationFollowsTheSampleInForce()
    {
        WireView& v = shown();
        auto t = fabric(TopologyKind::NvSwitchNode, 1, 8);
        const LinkId nv = linkNamed(*t, "n0.gpu3-nvswitch"), back = t->link(nv).reverse;
        const double bw = t->link(nv).bandwidth;
        auto sim = std::make_shared<const StepSimulation>(simulationOf(
            *t, 1.0, {{nv, {sample(0.125, 0.25 * bw), sample(0.5, 0.5 * bw, 0, 0.25 * bw), sample(0.75, 0)}}}));
        v.setNetwork(t, nullptr, sim);
        // The changes fall on bin edges (powers of two), so each bin holds one rate.
        const struct {
            double time, expected;
        } rows[] = {{0.0, 0.0}, {0.125, 0.25}, {0.3, 0.25}, {0.5, 0.75}, {0.749, 0.75}, {0.75, 0.0}, {1.0, 0.0}};
        for (const auto& r : rows) {
            v.setTime(r.time);
            QCOMPARE(v.time(), r.time);
            QVERIFY2(std::abs(v.drawnUtilization(nv) - r.expected) < 1e-12, qPrintable(QString::number(r.time)));
            QCOMPARE(v.drawnUtilization(back), 0.0);
        }
        v.setTime(5); // clamped to the step
        QCOMPARE(v.time(), 1.0);
        v.setTime(0.6);
        QVERIFY(v.drawnColor(nv) != v.drawnColor(back));
        const QString tip = v.linkToolTip(nv);
        QVERIFY(tip.contains(QStringLiteral("n0.gpu3-nvswitch")));
        QVERIFY(tip.contains(QStringLiteral("NVLink")));
        QVERIFY(tip.contains(QStringLiteral("75 %")));
    }

    void packetsFollowTheRate()
    {
        WireView& v = shown();
        auto t = fabric(TopologyKind::NvSwitchNode, 1, 8);
        const LinkId a = linkNamed(*t, "n0.gpu1-nvswitch"), b = linkNamed(*t, "n0.gpu5-nvswitch");
        const double bw = t->link(a).bandwidth;
        // a: DP at 10 % then 60 %; b: TP at 30 % and PP at 30 % from 0.5 s.
        auto sim = std::make_shared<const StepSimulation>(simulationOf(
            *t, 1.0,
            {{a, {sample(0.0, 0.1 * bw), sample(0.5, 0.6 * bw), sample(0.9, 0)}},
             {b, {sample(0.5, 0, 0.3 * bw, 0.3 * bw)}}}));
        v.setNetwork(t, nullptr, sim);
        v.setTime(0.2);
        (void)v.grab();
        const int low = v.packetsDrawn(Strategy::DP);
        QVERIFY(low > 0);
        QCOMPARE(v.packetsDrawn(Strategy::TP), 0);
        QCOMPARE(v.packetsDrawn(Strategy::PP), 0);
        QCOMPARE(v.packetsDrawn(), low);
        v.setTime(0.6);
        (void)v.grab();
        QVERIFY2(v.packetsDrawn(Strategy::DP) >= 3 * low, qPrintable(QStringLiteral("%1 vs %2").arg(v.packetsDrawn(Strategy::DP)).arg(low)));
        QVERIFY(v.packetsDrawn(Strategy::TP) > 0);
        QVERIFY(v.packetsDrawn(Strategy::PP) > 0);
        QCOMPARE(v.packetsDrawn(Strategy::EP), 0);
        // The phase moves with the time: the picture changes between two close times.
        const QImage one = v.grab().toImage();
        v.setTime(0.6037);
        QVERIFY(v.grab().toImage() != one);
        v.setTime(0.95);
        (void)v.grab();
        QCOMPARE(v.packetsDrawn(Strategy::DP), 0);
    }

    void strategyFromTheLinkLoadsWhenTheSampleHasNone()
    {
        WireView& v = shown();
        auto t = fabric(TopologyKind::NvSwitchNode, 1, 8);
        const LinkId a = linkNamed(*t, "n0.gpu2-nvswitch");
        const double bw = t->link(a).bandwidth;
        RateSample unsplit;
        unsplit.rate = 0.8 * bw;
        auto loads = std::make_shared<tw::network::LinkLoads>();
        loads->links.resize(t->links().size());
        loads->links[a].payloadBytes[0] = 3e9; // DP 3/4, TP 1/4
        loads->links[a].payloadBytes[2] = 1e9;
        loads->links[a].wireBytes = 4.2e9;
        auto sim = std::make_shared<const StepSimulation>(simulationOf(*t, 1.0, {{a, {unsplit}}}));
        v.setNetwork(t, loads, sim);
        v.setTime(0.5);
        (void)v.grab();
        QVERIFY(v.packetsDrawn(Strategy::DP) > v.packetsDrawn(Strategy::TP));
        QVERIFY(v.packetsDrawn(Strategy::TP) > 0);
        QCOMPARE(v.packetsDrawn(Strategy::PP), 0);
        QVERIFY(std::abs(v.drawnUtilization(a) - 0.8) < 1e-12);
        v.setLinkCallers([a](LinkId l) {
            return l == a ? QStringList{QStringLiteral("DP AllReduce of the gradients, 4 GB")} : QStringList{};
        });
        const QString tip = v.linkToolTip(a);
        QVERIFY(tip.contains(QStringLiteral("4.2 GB")));
        QVERIFY(tip.contains(QStringLiteral("DP AllReduce of the gradients")));
        QVERIFY(tip.contains(QStringLiteral("DP 3 GB")));
    }

    void hoverEmitsLinkHovered()
    {
        WireView& v = shown();
        auto t = fabric(TopologyKind::LeafSpine, 2, 8);
        v.setNetwork(t, nullptr, nullptr);
        QSignalSpy spy(&v, &WireView::linkHovered);
        const LinkId l = linkNamed(*t, "n1.nic3-leaf3");
        QTest::mouseMove(&v, v.linkMidpoint(l)->toPoint());
        QTRY_VERIFY(!spy.isEmpty());
        QCOMPARE(spy.last().at(0).toInt(), int(l));
        QCOMPARE(v.hoveredLink(), std::optional<LinkId>(l));
        shoot(QStringLiteral("leaf-spine-2-hover"));
        const QPoint empty = v.serverRect(0)->center().toPoint() + QPoint(0, 2);
        QVERIFY(!v.linkAt(empty));
        QTest::mouseMove(&v, empty);
        QTRY_COMPARE(spy.last().at(0).toInt(), -1);
        QVERIFY(!v.hoveredLink());
    }

    void zoomPanAndFit()
    {
        WireView& v = shown();
        auto t = fabric(TopologyKind::LeafSpine, 2, 8);
        v.setNetwork(t, nullptr, nullptr);
        QCOMPARE(v.zoom(), 1.0);
        const QPointF before = *v.nodeCenter(t->gpuNode(0));
        QTest::keyClick(&v, Qt::Key_Plus);
        QVERIFY(v.zoom() > 1.2);
        QTest::keyClick(&v, Qt::Key_Minus);
        QTest::keyClick(&v, Qt::Key_Minus);
        QVERIFY(v.zoom() < 1.0);
        QTest::keyClick(&v, Qt::Key_0);
        QCOMPARE(v.zoom(), 1.0);
        QCOMPARE(*v.nodeCenter(t->gpuNode(0)), before);
        // The wheel zooms about the cursor: the point under it stays put.
        const QPointF at = *v.nodeCenter(t->gpuNode(3));
        QWheelEvent wheel(at, v.mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(&v, &wheel);
        QVERIFY(v.zoom() > 1.3);
        QVERIFY((*v.nodeCenter(t->gpuNode(3)) - at).manhattanLength() < 1.0);
        // Drag pans; setNetwork with the same shape keeps the view; Home fits.
        const QPoint from(640, 300);
        QTest::mousePress(&v, Qt::LeftButton, {}, from);
        QTest::mouseMove(&v, from + QPoint(40, 10));
        QTest::mouseMove(&v, from + QPoint(80, 20));
        QTest::mouseRelease(&v, Qt::LeftButton, {}, from + QPoint(80, 20));
        const QPointF panned = *v.nodeCenter(t->gpuNode(3));
        QVERIFY((panned - at - QPointF(80, 20)).manhattanLength() < 1.0);
        v.setNetwork(fabric(TopologyKind::LeafSpine, 2, 8), nullptr, nullptr);
        QVERIFY((*v.nodeCenter(t->gpuNode(3)) - panned).manhattanLength() < 1.0);
        QTest::keyClick(&v, Qt::Key_Home);
        QCOMPARE(v.zoom(), 1.0);
        QCOMPARE(*v.nodeCenter(t->gpuNode(0)), before);
        v.setZoom(2);
        QVERIFY(std::abs(v.zoom() - 2) < 1e-9);
        // Another shape fits again.
        v.setNetwork(fabric(TopologyKind::LeafSpine, 4, 8), nullptr, nullptr);
        QCOMPARE(v.zoom(), 1.0);
    }

    void detailed256Gpus()
    {
        WireView& v = shown();
        v.setNetwork(fabric(TopologyKind::LeafSpine, 32, 8), nullptr, nullptr);
        QVERIFY(!v.compactServers());
        checkServersApart(v, 32);
        // Every GPU drawn, inside its own server's box.
        const Topology& t = *v.topology();
        for (std::uint64_t g = 0; g < t.gpuCount(); ++g) {
            const auto c = v.nodeCenter(t.gpuNode(g));
            QVERIFY(c);
            QVERIFY(v.serverRect(int(g / 8))->contains(*c));
        }
        shoot(QStringLiteral("leaf-spine-256"));
    }

    void compact512GpusOpenOnDoubleClick()
    {
        WireView& v = shown();
        auto t = fabric(TopologyKind::LeafSpine, 64, 8);
        v.setNetwork(t, nullptr, nullptr);
        QVERIFY(v.compactServers());
        QCOMPARE(v.openedServer(), -1);
        checkServersApart(v, 64);
        // Inside a compact server nothing is drawn; its NIC links merge into one line per leaf.
        QVERIFY(!v.nodeCenter(t->gpuNode(40)));
        QVERIFY(!v.linkMidpoint(linkNamed(*t, "n5.gpu0-nvswitch")));
        const LinkId up = linkNamed(*t, "n5.nic2-leaf2");
        QCOMPARE(v.drawnWith(up).size(), std::size_t(1));
        QVERIFY(v.linkMidpoint(up));
        QCOMPARE(v.linkAt(v.linkMidpoint(up)->toPoint()), std::optional<LinkId>(up));
        QVERIFY(!v.linkToolTip(up).isEmpty());
        shoot(QStringLiteral("leaf-spine-512-compact"));

        QSignalSpy opened(&v, &WireView::serverOpened);
        QTest::mouseDClick(&v, Qt::LeftButton, {}, v.serverRect(5)->center().toPoint());
        QCOMPARE(v.openedServer(), 5);
        QCOMPARE(opened.count(), 1);
        QCOMPARE(opened.last().at(0).toInt(), 5);
        checkServersApart(v, 64, false); // zoomed onto server 5
        QVERIFY(v.zoom() > 1.5);
        QVERIFY(QRectF(v.rect()).contains(*v.serverRect(5)));
        QVERIFY(v.nodeCenter(t->gpuNode(40)));
        QVERIFY(v.serverRect(5)->contains(*v.nodeCenter(t->gpuNode(40))));
        const LinkId nv = linkNamed(*t, "n5.gpu0-nvswitch");
        QCOMPARE(v.linkAt(v.linkMidpoint(nv)->toPoint()), std::optional<LinkId>(nv));
        shoot(QStringLiteral("leaf-spine-512-open"));
        // Double-clicking the open server closes it.
        QTest::mouseDClick(&v, Qt::LeftButton, {}, v.serverRect(5)->center().toPoint());
        QCOMPARE(v.openedServer(), -1);
        QVERIFY(!v.nodeCenter(t->gpuNode(40)));
        QCOMPARE(v.zoom(), 1.0);
    }

    void highlightedGpus()
    {
        WireView& v = shown();
        v.setNetwork(fabric(TopologyKind::NvSwitchNode, 1, 8), nullptr, nullptr);
        const QImage plain = v.grab().toImage();
        v.setHighlightedGpus({2, 5});
        QVERIFY(v.grab().toImage() != plain);
        v.setHighlightedGpus({});
        QCOMPARE(v.grab().toImage(), plain);
    }

    void simulatedReferenceSteps()
    {
        // The paper's reference (8 GPUs, dp 8) on an NVSwitch node, traffic mid-step.
        auto sc = tw::scenario::preset("paper-reference").value();
        sc.topology.kind = TopologyKind::NvSwitchNode;
        Simulated s = simulate(sc);
        WireView& v = shown();
        v.setNetwork(s.topology, s.loads, s.simulation);
        QVERIFY(s.simulation->stepSeconds > 0);
        QVERIFY(busiest(v, *s.simulation) > 0);
        shoot(QStringLiteral("nvswitch-node"));
        const QString dir = shotsDir();
        if (dir.isEmpty())
            return;
        // The looks the teacher sees: a 2-node leaf–spine and the paper's 7-server testbed.
        auto ls = tw::scenario::preset("paper-reference").value();
        ls.hardware.nodes = 2;
        ls.parallel.dp = 16;
        ls.topology.kind = TopologyKind::LeafSpine;
        Simulated l = simulate(ls);
        v.setNetwork(l.topology, l.loads, l.simulation);
        busiest(v, *l.simulation);
        shoot(QStringLiteral("leaf-spine-2"));
        Simulated p = simulate(tw::scenario::preset("paper-testbed").value());
        v.setNetwork(p.topology, p.loads, p.simulation);
        busiest(v, *p.simulation);
        shoot(QStringLiteral("paper-testbed"));
    }
};

QTEST_MAIN(TestWireView)
#include "tst_wireview.moc"
