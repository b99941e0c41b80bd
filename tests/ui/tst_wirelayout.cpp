// Stage 5's geometry without a widget (views/wirelayout.h): for one DGX-like node, a two-node
// leaf–spine and 64 compact servers, the hand-checked properties of the drawing — every GPU inside its
// server's box, no two node boxes overlapping, every link line starting and ending on the outlines of
// its two ends, switch rows above the servers, a single row of servers filling the area's shape, and
// compact servers (beyond WireLayout::kMaxDetailedServers) hiding their insides and merging lines.

#include "views/wirelayout.h"

#include "fabric/topology.h"

#include <QTest>

#include <cmath>

using tw::network::LinkId;
using tw::network::NodeId;
using tw::network::NodeKind;
using tw::network::Topology;
using tw::network::TopologyKind;
using tw::network::TopologySpec;
using tw::ui::WireLayout;

namespace {

Topology fabric(TopologyKind kind, std::uint64_t nodes, std::uint64_t gpusPerNode)
{
    TopologySpec spec;
    spec.kind = kind;
    auto t = tw::network::build(spec, {nodes, gpusPerNode});
    if (!t.ok())
        qFatal("build: %s", t.error().toString().c_str());
    return std::move(t).value();
}

// p on the outline of r (within eps): inside the slightly grown box, not inside the slightly shrunk one.
bool onOutline(QPointF p, const QRectF& r, double eps = 0.01)
{
    return r.adjusted(-eps, -eps, eps, eps).contains(p) && !r.adjusted(eps, eps, -eps, -eps).contains(p);
}

// The box a link end is drawn on: its node's, or its compact server's.
QRectF endBox(const Topology& t, const WireLayout& g, NodeId n)
{
    const auto s = t.node(n).server;
    if (s >= 0 && g.servers[std::size_t(s)].compact)
        return g.servers[std::size_t(s)].rect;
    return g.nodes[n].rect;
}

} // namespace

class TestWireLayout : public QObject {
    Q_OBJECT
private slots:
    void properties_data();
    void properties();
    void oneNodeColumns();
    void singleRowFillsTheArea();
    void compactServers();
};

void TestWireLayout::properties_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("gpus");
    QTest::newRow("one nvswitch node") << int(TopologyKind::NvSwitchNode) << 1 << 8;
    QTest::newRow("pcie server") << int(TopologyKind::PcieServer) << 1 << 8;
    QTest::newRow("leaf-spine 2x8") << int(TopologyKind::LeafSpine) << 2 << 8;
    QTest::newRow("leaf-spine 4x8") << int(TopologyKind::LeafSpine) << 4 << 8;
    QTest::newRow("leaf-spine 12x8 (grid)") << int(TopologyKind::LeafSpine) << 12 << 8;
}

void TestWireLayout::properties()
{
    QFETCH(int, kind);
    QFETCH(int, nodes);
    QFETCH(int, gpus);
    const Topology t = fabric(TopologyKind(kind), std::uint64_t(nodes), std::uint64_t(gpus));
    const WireLayout g = WireLayout::compute(t, QSizeF(1264, 670), -1, true);
    QCOMPARE(g.nodes.size(), t.nodes().size());
    QCOMPARE(g.servers.size(), std::size_t(nodes));
    QVERIFY(!g.compact());

    // Every node placed; every GPU inside its server's box; every node inside the world.
    double serversTop = 1e18, switchesBottom = -1e18;
    for (const auto& s : g.servers)
        serversTop = std::min(serversTop, s.rect.top());
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        const QRectF r = g.nodes[n].rect;
        QVERIFY2(r.isValid() && g.nodeDrawn(t, n), t.node(n).name.c_str());
        QVERIFY(g.world.contains(r));
        if (t.node(n).kind == NodeKind::Gpu)
            QVERIFY2(g.servers[std::size_t(t.node(n).server)].rect.contains(r), t.node(n).name.c_str());
        if (t.node(n).server < 0)
            switchesBottom = std::max(switchesBottom, r.bottom());
    }
    // Leaf and spine rows above every server.
    QVERIFY(switchesBottom < serversTop);

    // No two node boxes overlap (touching edges allowed), and no two server boxes.
    for (NodeId a = 0; a < t.nodes().size(); ++a)
        for (NodeId b = a + 1; b < t.nodes().size(); ++b) {
            const QRectF i = g.nodes[a].rect.intersected(g.nodes[b].rect);
            QVERIFY2(i.width() * i.height() < 1e-9, (t.node(a).name + " overlaps " + t.node(b).name).c_str());
        }
    for (std::size_t a = 0; a < g.servers.size(); ++a)
        for (std::size_t b = a + 1; b < g.servers.size(); ++b)
            QVERIFY(!g.servers[a].rect.intersects(g.servers[b].rect));

    // Every link drawn as its own line, from the outline of its source to the outline of its target.
    QCOMPARE(g.segmentOf.size(), t.links().size());
    for (LinkId l = 0; l < t.links().size(); ++l) {
        QVERIFY(g.segmentOf[l] >= 0);
        const WireLayout::Segment& seg = g.segments[std::size_t(g.segmentOf[l])];
        QCOMPARE(seg.rep, l);
        QCOMPARE(seg.members.size(), std::size_t(1));
        QVERIFY2(onOutline(seg.a, g.nodes[t.link(l).from].rect), t.link(l).id.c_str());
        QVERIFY2(onOutline(seg.b, g.nodes[t.link(l).to].rect), t.link(l).id.c_str());
        QCOMPARE(seg.bandwidth, t.link(l).bandwidth);
    }
}

// One node of 8 GPUs on an NVSwitch: the box is 2·22 + 8·100 = 844 wide (a 22 pad each side, one
// 100-wide column per GPU), GPU k centred at 22 + 100·(k + ½) from its left edge, 80 × 54 each; the
// NVSwitch is a bar under them from GPU 0's left edge to GPU 7's right edge (7·100 + 80 = 780 wide).
void TestWireLayout::oneNodeColumns()
{
    const Topology t = fabric(TopologyKind::NvSwitchNode, 1, 8);
    const WireLayout g = WireLayout::compute(t, QSizeF(1264, 670), -1, true);
    QCOMPARE(g.servers.size(), std::size_t(1));
    const QRectF box = g.servers[0].rect;
    QCOMPARE(box.width(), 844.0);
    NodeId nvswitch = tw::network::kNoNode;
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        const auto& node = t.node(n);
        if (node.kind == NodeKind::NvSwitch)
            nvswitch = n;
        if (node.kind != NodeKind::Gpu)
            continue;
        const QRectF r = g.nodes[n].rect;
        QCOMPARE(r.size(), QSizeF(80, 54));
        QCOMPARE(r.center().x() - box.left(), 22 + 100 * (double(node.gpu) + 0.5));
    }
    QVERIFY(nvswitch != tw::network::kNoNode);
    QVERIFY(g.nodes[nvswitch].bar);
    QCOMPARE(g.nodes[nvswitch].rect.width(), 780.0);
    QCOMPARE(g.nodes[nvswitch].rect.center().x() - box.left(), 422.0); // the box's middle
}

// A single row of servers, fitted: the vertical gaps scale so that the drawing takes the area's shape
// (the height is linear in the gap scale, so the secant step hits it unless the scale is clamped to
// [0.45, 2.6]); not fitted, the gaps stay as they are.
void TestWireLayout::singleRowFillsTheArea()
{
    const Topology t = fabric(TopologyKind::LeafSpine, 2, 8);
    const QSizeF area(1264, 900);
    const WireLayout g = WireLayout::compute(t, area, -1, true);
    QCOMPARE(g.serverRows, 1);
    QCOMPARE(g.serverColumns, 2);
    QVERIFY(g.gapScale > 0.45 && g.gapScale < 2.6);
    QVERIFY(std::abs(g.world.height() / g.world.width() - area.height() / area.width()) < 0.01);
    const WireLayout loose = WireLayout::compute(t, area, -1, false);
    QCOMPARE(loose.gapScale, 1.0);
    // Taller area, taller drawing.
    const WireLayout tall = WireLayout::compute(t, QSizeF(1264, 1200), -1, true);
    QVERIFY(tall.world.height() > g.world.height());
}

// 64 servers: compact boxes (180 × 104), their insides not placed and their links inside not drawn;
// the links leaving a server start on its box; opening server 3 draws it in full.
void TestWireLayout::compactServers()
{
    const Topology t = fabric(TopologyKind::LeafSpine, 64, 8);
    const WireLayout g = WireLayout::compute(t, QSizeF(1264, 670), -1, true);
    QVERIFY(g.compact());
    QCOMPARE(g.openServer, -1);
    for (const auto& s : g.servers) {
        QVERIFY(s.compact);
        QCOMPARE(s.rect.size(), QSizeF(180, 104));
    }
    std::size_t drawn = 0;
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const auto& link = t.link(l);
        const auto sa = t.node(link.from).server, sb = t.node(link.to).server;
        if (sa >= 0 && sa == sb) {
            QCOMPARE(g.segmentOf[l], -1); // inside one compact server
            continue;
        }
        QVERIFY(g.segmentOf[l] >= 0);
        const WireLayout::Segment& seg = g.segments[std::size_t(g.segmentOf[l])];
        if (seg.rep != l)
            continue;
        ++drawn;
        QVERIFY(onOutline(seg.a, endBox(t, g, link.from)));
        QVERIFY(onOutline(seg.b, endBox(t, g, link.to)));
    }
    QCOMPARE(drawn, g.segments.size());
    for (std::size_t a = 0; a < g.servers.size(); ++a)
        for (std::size_t b = a + 1; b < g.servers.size(); ++b)
            QVERIFY(!g.servers[a].rect.intersects(g.servers[b].rect));

    const WireLayout open = WireLayout::compute(t, QSizeF(1264, 670), 3, true);
    QCOMPARE(open.openServer, 3);
    QVERIFY(!open.servers[3].compact);
    QVERIFY(open.servers[4].compact);
    for (NodeId n = 0; n < t.nodes().size(); ++n)
        if (t.node(n).server == 3)
            QVERIFY(open.nodeDrawn(t, n));
    // Out of range or not compact: no server open.
    QCOMPARE(WireLayout::compute(t, QSizeF(1264, 670), 64, true).openServer, -1);
    QCOMPARE(WireLayout::compute(fabric(TopologyKind::LeafSpine, 2, 8), QSizeF(1264, 670), 1, true).openServer, -1);
}

QTEST_MAIN(TestWireLayout)
#include "tst_wirelayout.moc"
