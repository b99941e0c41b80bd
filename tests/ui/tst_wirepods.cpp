// Stage 5 at cluster scale (issue 21): groups of nodes drawn collapsed (views/wiregroups.h). A three-tier
// fabric of 4 pods draws each pod as one box with its GPU count (nothing inside it drawn, its uplinks
// merged into one line per core), a leaf–spine beyond 128 servers one box per set of rail leaves with
// their servers; double-clicking a box opens it (QTest on a real WireView), double-clicking its frame or
// Esc closes it; a box's fill follows the load of the network links inside it. A pod of more than 128
// servers opens onto boxes of its server groups, one of which opens inside it (Esc closes it first).
//
// The fabrics, by hand (topology.h "three-tier"): 32 servers of 8 GPUs, 64 GPUs (8 servers) per pod →
// 4 pods; 8 rail leaves per pod (one server group of 8 servers), 4 spines per pod, 8 cores in 4 planes of
// 2 (spine j of every pod on the 2 cores of plane j). Pod p: servers 8p … 8p+7, GPUs 64p … 64p+63.
// Leaf–spine: 160 servers of 8 GPUs, a NIC per GPU, 32 NIC ports per leaf → 1,280 / 32 = 40 leaves, in
// sets of 8 rails serving 32 servers: 5 groups, group k = servers 32k … 32k+31 = GPUs 256k … 256k+255,
// each leaf with one uplink to each of the 4 spines (8 leaf → spine links per group and spine).
// Large pods: 2 pods of 160 servers (1,280 GPUs), 40 rail leaves per pod (1,280 NIC ports / 40 = 32
// per leaf: sets of 8 rails serving 32 servers, 5 server groups per pod), 4 spines per pod, 8 cores.
// A pod of more than 128 servers holds its server groups: pod p's group k = servers 160p + 32k … +31.

#include "views/wireview.h"

#include "network/linkload.h"
#include "fabric/topology.h"
#include "views/wirelayout.h"
#include "views/wirepaint.h"

#include <QSignalSpy>
#include <QTest>

using tw::network::LinkId;
using tw::network::NodeId;
using tw::network::NodeKind;
using tw::network::Topology;
using tw::network::TopologyKind;
using tw::network::TopologySpec;
using tw::ui::WireGroups;
using tw::ui::WireLayout;

namespace {

Topology build(const TopologySpec& spec, std::uint64_t nodes)
{
    auto t = tw::network::build(spec, {nodes, 8});
    if (!t.ok())
        qFatal("build: %s", t.error().toString().c_str());
    return std::move(t).value();
}

Topology threeTier(std::uint64_t gpusPerPod, std::uint64_t leavesPerPod, std::uint64_t servers)
{
    TopologySpec spec;
    spec.kind = TopologyKind::ThreeTier;
    spec.gpusPerPod = gpusPerPod;
    spec.leavesPerPod = leavesPerPod;
    spec.spinesPerPod = 4;
    spec.coreSwitches = 8;
    return build(spec, servers);
}

Topology fourPods()
{
    return threeTier(64, 8, 32);
}

Topology twoLargePods()
{
    return threeTier(1280, 40, 320);
}

Topology leafSpine(std::uint64_t servers)
{
    TopologySpec spec;
    spec.kind = TopologyKind::LeafSpine;
    spec.spines = 4;
    return build(spec, servers);
}

bool onOutline(QPointF p, const QRectF& r, double eps = 0.01)
{
    return r.adjusted(-eps, -eps, eps, eps).contains(p) && !r.adjusted(eps, eps, -eps, -eps).contains(p);
}

NodeId gpuNode(const Topology& t, std::uint64_t gpu)
{
    return t.gpuNode(gpu);
}

} // namespace

class TestWirePods : public QObject {
    Q_OBJECT
private slots:
    void threeTierPodsCollapse();
    void largeLeafSpineGroupsServers();
    void doubleClickOpensAndClosesAPod();
    void boxFillFollowsTheLoadInside();
    void largePodOpensOntoServerGroups();
    void serverGroupOpensInsideItsPod();
    void groupsOncePerFabric();
};

void TestWirePods::threeTierPodsCollapse()
{
    const Topology t = fourPods();
    const WireLayout g = WireLayout::compute(t, QSizeF(1264, 670), -1, true);
    QCOMPARE(g.grouping().groups.size(), std::size_t(4)); // 8 cores ≤ 32: no core planes
    for (int p = 0; p < 4; ++p) {
        const WireGroups::Group& grp = g.grouping().groups[std::size_t(p)];
        QVERIFY(grp.kind == WireGroups::Kind::Pod);
        QCOMPARE(grp.gpus, std::uint64_t(64));
        QCOMPARE(grp.gpuLo, std::int64_t(64 * p));
        QCOMPARE(grp.gpuHi, std::int64_t(64 * p + 63));
        QCOMPARE(grp.serverLo, std::int64_t(8 * p));
        QCOMPARE(grp.switches, std::uint64_t(8 + 4)); // its leaves and spines
        QCOMPARE(grp.subtitle, QStringLiteral("64 GPUs"));
        // Inside: 64 NIC–leaf and 8·4 leaf–spine pairs, both directions.
        QCOMPARE(grp.internal.size(), std::size_t(2 * (64 + 32)));
        QVERIFY(!g.groups[std::size_t(p)].rect.isNull());
        for (int q = p + 1; q < 4; ++q)
            QVERIFY(!g.groups[std::size_t(p)].rect.intersects(g.groups[std::size_t(q)].rect));
    }
    // Nothing inside a pod is drawn; the 8 cores are, above the boxes.
    std::size_t cores = 0;
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        if (t.podPlace(n).pod != Topology::kNoPod) {
            QVERIFY(!g.nodeDrawn(t, n));
            QCOMPARE(g.collapsedGroupOf(n), int(t.podPlace(n).pod));
        } else {
            QVERIFY(g.nodeDrawn(t, n));
            QVERIFY(g.nodes[n].rect.bottom() < g.groups[0].rect.top());
            ++cores;
        }
    }
    QCOMPARE(cores, std::size_t(8));
    // Links inside a pod are not drawn; a pod's link to a core is one line ending on the box's outline
    // (spine j of the pod is the only one linked to the cores of plane j: one member).
    std::size_t lines = 0;
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const auto& link = t.link(l);
        const int a = g.collapsedGroupOf(link.from), b = g.collapsedGroupOf(link.to);
        if (a >= 0 && a == b) {
            QCOMPARE(g.segmentOf[l], -1);
            continue;
        }
        QVERIFY(g.segmentOf[l] >= 0);
        const WireLayout::Segment& seg = g.segments[std::size_t(g.segmentOf[l])];
        QCOMPARE(seg.members.size(), std::size_t(1));
        QVERIFY(seg.between);
        if (a >= 0)
            QVERIFY(onOutline(seg.a, g.groups[std::size_t(a)].rect));
        if (b >= 0)
            QVERIFY(onOutline(seg.b, g.groups[std::size_t(b)].rect));
        ++lines;
    }
    QCOMPARE(lines, std::size_t(2 * 4 * 8)); // 4 pods × 4 spines × 2 cores, both directions
    QCOMPARE(g.segments.size(), lines);

    // Pod 2 open: its servers (8 ≤ 32: drawn in full, GPUs and all) inside its frame, the others collapsed.
    const WireLayout open = WireLayout::compute(t, QSizeF(1264, 670), -1, true, 2);
    QCOMPARE(open.openGroup, 2);
    QVERIFY(open.groups[2].open);
    QVERIFY(!open.compact());
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        const auto pod = t.podPlace(n).pod;
        if (pod == 2) {
            QVERIFY(open.nodeDrawn(t, n));
            QVERIFY(open.groups[2].rect.contains(open.nodes[n].rect));
        } else if (pod != Topology::kNoPod) {
            QVERIFY(!open.nodeDrawn(t, n));
        }
    }
    QVERIFY(open.groups[2].rect.top() > open.groups[3].rect.bottom()); // under the boxes
    // A group number out of range opens nothing.
    QCOMPARE(WireLayout::compute(t, QSizeF(1264, 670), -1, true, 4).openGroup, -1);
}

void TestWirePods::largeLeafSpineGroupsServers()
{
    // 128 servers (1,024 GPUs) stay as compact servers, as before.
    QVERIFY(WireLayout::compute(leafSpine(128), QSizeF(1264, 670), -1, true).grouping().empty());

    const Topology t = leafSpine(160);
    const WireLayout g = WireLayout::compute(t, QSizeF(1264, 670), -1, true);
    QCOMPARE(g.grouping().groups.size(), std::size_t(5));
    for (int k = 0; k < 5; ++k) {
        const WireGroups::Group& grp = g.grouping().groups[std::size_t(k)];
        QVERIFY(grp.kind == WireGroups::Kind::Servers);
        QCOMPARE(grp.gpus, std::uint64_t(256));
        QCOMPARE(grp.serverLo, std::int64_t(32 * k));
        QCOMPARE(grp.serverHi, std::int64_t(32 * k + 31));
        QCOMPARE(grp.gpuLo, std::int64_t(256 * k));
        QCOMPARE(grp.switches, std::uint64_t(8));
    }
    // The spines are drawn; each group → spine line merges the group's 8 leaf → spine links.
    std::size_t spines = 0;
    for (NodeId n = 0; n < t.nodes().size(); ++n)
        if (t.node(n).kind == NodeKind::SpineSwitch) {
            ++spines;
            QVERIFY(g.nodeDrawn(t, n));
            for (const LinkId l : t.inLinks(n)) {
                const int seg = g.segmentOf[l];
                QVERIFY(seg >= 0);
                QCOMPARE(g.segments[std::size_t(seg)].members.size(), std::size_t(8));
            }
        }
    QCOMPARE(spines, std::size_t(4));
    QCOMPARE(g.segments.size(), std::size_t(5 * 4 * 2));
    // Opening group 1: its 32 servers (≤ 32) are drawn in full.
    const WireLayout open = WireLayout::compute(t, QSizeF(1264, 670), -1, true, 1);
    QVERIFY(!open.compact());
    QVERIFY(open.nodeDrawn(t, gpuNode(t, 256)));
    QVERIFY(!open.nodeDrawn(t, gpuNode(t, 0)));
}

void TestWirePods::doubleClickOpensAndClosesAPod()
{
    auto t = std::make_shared<const Topology>(fourPods());
    tw::ui::WireView view;
    view.resize(1280, 720);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setNetwork(t, nullptr, nullptr);
    QCOMPARE(view.groupCount(), 4);
    QCOMPARE(view.openedGroup(), -1);
    QVERIFY(!view.nodeCenter(gpuNode(*t, 64)));
    QSignalSpy opened(&view, &tw::ui::WireView::groupOpened);
    const auto box = view.groupRect(1);
    QVERIFY(box);
    QVERIFY(QRectF(view.rect()).contains(box->center()));
    QCOMPARE(view.groupAt(box->center().toPoint()), std::optional<int>(1));
    QTest::mouseDClick(&view, Qt::LeftButton, {}, box->center().toPoint());
    QCOMPARE(view.openedGroup(), 1);
    QCOMPARE(opened.size(), 1);
    QCOMPARE(opened.at(0).at(0).toInt(), 1);
    // Its GPUs are drawn (on screen: the view frames the open pod), pod 0's are not.
    const auto gpu = view.nodeCenter(gpuNode(*t, 64));
    QVERIFY(gpu);
    QVERIFY(QRectF(view.rect()).contains(*gpu));
    QVERIFY(!view.nodeCenter(gpuNode(*t, 0)));
    // Double-clicking the frame (its top margin, above the parts) closes it.
    const auto frame = view.groupRect(1);
    QVERIFY(frame);
    const QPoint margin(int(frame->center().x()), int(frame->top() + 4));
    QCOMPARE(view.groupAt(margin), std::optional<int>(1));
    QVERIFY(!view.serverAt(margin));
    QTest::mouseDClick(&view, Qt::LeftButton, {}, margin);
    QCOMPARE(view.openedGroup(), -1);
    QVERIFY(!view.nodeCenter(gpuNode(*t, 64)));
    // Esc closes too.
    view.openGroup(3);
    QCOMPARE(view.openedGroup(), 3);
    QTest::keyClick(&view, Qt::Key_Escape);
    QCOMPARE(view.openedGroup(), -1);
    QCOMPARE(opened.size(), 4); // 1, -1, 3, -1
}

void TestWirePods::boxFillFollowsTheLoadInside()
{
    auto t = std::make_shared<const Topology>(fourPods());
    tw::ui::WireView view;
    view.resize(1280, 720);
    view.setNetwork(t, nullptr, nullptr);
    // Payload on the links inside pod 1 (1 GB each) and pod 3 (0.5 GB each), none elsewhere: without a
    // simulation a box's load is its payload over the busiest box's, Σ over the same number of links:
    // pod 1 → 1, pod 3 → 0.5, pods 0 and 2 → 0.
    auto loads = std::make_shared<tw::network::LinkLoads>();
    loads->links.resize(t->links().size());
    for (const LinkId l : view.group(1)->internal)
        loads->links[l].payloadBytes[0] = 1e9;
    for (const LinkId l : view.group(3)->internal)
        loads->links[l].payloadBytes[2] = 0.5e9;
    view.setNetwork(t, loads, nullptr);
    QCOMPARE(view.drawnGroupUtilization(1), 1.0);
    QCOMPARE(view.drawnGroupUtilization(3), 0.5);
    QCOMPARE(view.drawnGroupUtilization(0), 0.0);
    QCOMPARE(view.drawnGroupColor(1), tw::ui::loadColor(1.0));
    QCOMPARE(view.drawnGroupColor(3), tw::ui::loadColor(0.5));
    QCOMPARE(view.drawnGroupColor(2), tw::ui::loadColor(0.0));
    QVERIFY(view.groupToolTip(1).contains(QStringLiteral("100.0 %")));
    // The followed token's GPUs inside pod 2 mark its box.
    view.setHighlightedGpus({130});
    QVERIFY(view.layout().groups[2].highlighted);
    QVERIFY(!view.layout().groups[1].highlighted);
}

void TestWirePods::largePodOpensOntoServerGroups()
{
    const Topology t = twoLargePods();
    const WireLayout g = WireLayout::compute(t, QSizeF(1264, 670), -1, true);
    // 2 pods, then pod 0's 5 server groups, then pod 1's (8 cores ≤ 32: no planes).
    QCOMPARE(g.grouping().groups.size(), std::size_t(2 + 2 * 5));
    for (int p = 0; p < 2; ++p) {
        const WireGroups::Group& pod = g.grouping().groups[std::size_t(p)];
        QVERIFY(pod.kind == WireGroups::Kind::Pod);
        QCOMPARE(pod.parent, -1);
        QCOMPARE(pod.gpus, std::uint64_t(1280));
        // Inside: 1,280 NIC–leaf and 40·4 leaf–spine pairs, both directions.
        QCOMPARE(pod.internal.size(), std::size_t(2 * (1280 + 160)));
        for (int k = 0; k < 5; ++k) {
            const int id = 2 + 5 * p + k;
            const WireGroups::Group& sub = g.grouping().groups[std::size_t(id)];
            QVERIFY(sub.kind == WireGroups::Kind::Servers);
            QCOMPARE(sub.parent, p);
            QCOMPARE(sub.serverLo, std::int64_t(160 * p + 32 * k));
            QCOMPARE(sub.serverHi, std::int64_t(160 * p + 32 * k + 31));
            QCOMPARE(sub.gpus, std::uint64_t(256));
            QCOMPARE(sub.switches, std::uint64_t(8));          // its 8 rail leaves
            QCOMPARE(sub.internal.size(), std::size_t(2 * 256)); // its NIC–leaf pairs
            QVERIFY(g.groups[std::size_t(id)].rect.isNull());    // not drawn while the pod is closed
        }
    }
    // Collapsed: every node of a pod is drawn in the pod's box, as before.
    QCOMPARE(g.collapsedGroupOf(gpuNode(t, 1280 + 300)), 1);

    // Pod 1 open: its spines drawn, its leaves and servers in their groups' boxes inside its frame; a
    // spine's line to a group merges the group's 8 leaves' uplinks to it.
    const WireLayout open = WireLayout::compute(t, QSizeF(1264, 670), -1, true, 1);
    QCOMPARE(open.openGroup, 1);
    QVERIFY(open.groups[1].open);
    QCOMPARE(open.collapsedGroupOf(gpuNode(t, 1280 + 300)), 2 + 5 + 1); // server 197: pod 1's group 1
    QCOMPARE(open.collapsedGroupOf(gpuNode(t, 300)), 0);
    std::size_t spines = 0;
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        if (t.podPlace(n).pod != 1 || t.node(n).server >= 0)
            continue;
        if (t.node(n).kind == NodeKind::LeafSwitch) {
            QVERIFY(!open.nodeDrawn(t, n));
            continue;
        }
        ++spines;
        QVERIFY(open.nodeDrawn(t, n));
        QVERIFY(open.groups[1].rect.contains(open.nodes[n].rect));
        std::size_t toGroups = 0;
        for (const LinkId l : t.inLinks(n)) {
            const int seg = open.segmentOf[l];
            QVERIFY(seg >= 0);
            if (open.collapsedGroupOf(t.link(l).from) >= 2) {
                QCOMPARE(open.segments[std::size_t(seg)].members.size(), std::size_t(8));
                ++toGroups;
            }
        }
        QCOMPARE(toGroups, std::size_t(5 * 8)); // every leaf of the pod, one of 5 lines per spine
    }
    QCOMPARE(spines, std::size_t(4));
    for (int k = 0; k < 5; ++k) {
        const QRectF box = open.groups[std::size_t(7 + k)].rect;
        QVERIFY(!box.isNull());
        QVERIFY(!open.groups[std::size_t(7 + k)].open);
        QVERIFY(open.groups[1].rect.contains(box));
        QVERIFY(open.groups[std::size_t(2 + k)].rect.isNull()); // pod 0's stay hidden in its box
    }
}

void TestWirePods::serverGroupOpensInsideItsPod()
{
    auto t = std::make_shared<const Topology>(twoLargePods());
    tw::ui::WireView view;
    view.resize(1280, 720);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setNetwork(t, nullptr, nullptr);
    QSignalSpy opened(&view, &tw::ui::WireView::groupOpened);
    const auto pod = view.groupRect(1);
    QVERIFY(pod);
    QTest::mouseDClick(&view, Qt::LeftButton, {}, pod->center().toPoint());
    QCOMPARE(view.openedGroup(), 1);
    // Pod 1's group 2 (servers 224–255, GPUs 1,792–2,047) is a box inside the open pod's frame: a
    // double-click opens it, the pod stays open around it, its servers are drawn in full.
    const auto box = view.groupRect(9);
    QVERIFY(box);
    QVERIFY(QRectF(view.rect()).contains(box->center()));
    QCOMPARE(view.groupAt(box->center().toPoint()), std::optional<int>(9));
    QVERIFY(!view.nodeCenter(gpuNode(*t, 1792)));
    QTest::mouseDClick(&view, Qt::LeftButton, {}, box->center().toPoint());
    QCOMPARE(view.openedGroup(), 9);
    QVERIFY(view.layout().groups[1].open);
    QVERIFY(view.layout().groups[9].open);
    QVERIFY(view.layout().groups[1].rect.contains(view.layout().groups[9].rect));
    QVERIFY(!view.layout().compact());
    const auto gpu = view.nodeCenter(gpuNode(*t, 1792));
    QVERIFY(gpu);
    QVERIFY(QRectF(view.rect()).contains(*gpu));
    QVERIFY(!view.nodeCenter(gpuNode(*t, 1280))); // group 0 of the pod stays a box
    // Esc closes the server group (the pod stays open), a second Esc the pod.
    QTest::keyClick(&view, Qt::Key_Escape);
    QCOMPARE(view.openedGroup(), 1);
    QTest::keyClick(&view, Qt::Key_Escape);
    QCOMPARE(view.openedGroup(), -1);
    // Double-clicking the pod's frame (its top margin) with a server group open closes both.
    view.openGroup(9);
    const auto frame = view.groupRect(1);
    QVERIFY(frame);
    const QPoint margin(int(frame->center().x()), int(frame->top() + 4));
    QCOMPARE(view.groupAt(margin), std::optional<int>(1));
    QTest::mouseDClick(&view, Qt::LeftButton, {}, margin);
    QCOMPARE(view.openedGroup(), -1);
    QCOMPARE(opened.size(), 6); // 1, 9, 1, -1, 9, -1
}

// The groups are read off a fabric once (every node and link): opening a group or resizing reuses
// them, a caller that has them (stage 5's job, off the GUI thread) hands them over with a layout
// computed ahead, a new fabric gets its own. The boxes' loads survive a new layout: pod 1 carries all the payload (1 → full), before and
// after pod 2 opens.
void TestWirePods::groupsOncePerFabric()
{
    auto t = std::make_shared<const Topology>(fourPods());
    tw::ui::WireView view;
    view.resize(1280, 720);
    view.setNetwork(t, nullptr, nullptr);
    const tw::ui::WireGroups* first = view.layout().groupingShared.get();
    QCOMPARE(view.groupCount(), 4);
    view.openGroup(2);
    view.resize(1000, 700);
    QCOMPARE(view.layout().groupingShared.get(), first);
    auto loads = std::make_shared<tw::network::LinkLoads>();
    loads->links.resize(t->links().size());
    for (const LinkId l : view.group(1)->internal)
        loads->links[l].payloadBytes[0] = 1e9;
    view.setNetwork(t, loads, nullptr); // the same fabric: the same groups
    QCOMPARE(view.layout().groupingShared.get(), first);
    view.openGroup(-1);
    QCOMPARE(view.drawnGroupUtilization(1), 1.0);
    view.openGroup(2);
    QCOMPARE(view.drawnGroupUtilization(1), 1.0);
    QCOMPARE(view.drawnGroupUtilization(3), 0.0);
    const auto given = std::make_shared<const WireGroups>(tw::ui::groupNodes(*t));
    view.setNetwork(t, loads, nullptr, given);
    QCOMPARE(view.layout().groupingShared.get(), given.get());
    auto other = std::make_shared<const Topology>(fourPods()); // the same shape, another fabric
    view.setNetwork(other, nullptr, nullptr);
    QVERIFY(view.layout().groupingShared.get() != given.get());
    QCOMPARE(view.groupCount(), 4);

    // A layout computed ahead (stage 5's job) is taken when it was computed for the view's drawing area,
    // fitted and with nothing open (its arrays become the view's), and ignored otherwise.
    view.openGroup(-1);
    view.fitToView();
    auto third = std::make_shared<const Topology>(fourPods());
    const auto groups = std::make_shared<const WireGroups>(tw::ui::groupNodes(*third));
    auto ahead = std::make_shared<WireLayout>(WireLayout::compute(*third, view.drawingArea(), -1, true, -1, groups));
    const QRectF world = ahead->world;
    const void* arrays = ahead->nodes.data();
    view.setNetwork(third, nullptr, nullptr, groups, ahead);
    QCOMPARE(static_cast<const void*>(view.layout().nodes.data()), arrays);
    QCOMPARE(view.layout().world, world);
    auto fourth = std::make_shared<const Topology>(fourPods());
    const auto groups4 = std::make_shared<const WireGroups>(tw::ui::groupNodes(*fourth));
    auto wrongSize = std::make_shared<WireLayout>(WireLayout::compute(*fourth, QSizeF(300, 200), -1, true, -1, groups4));
    const void* unused = wrongSize->nodes.data();
    view.setNetwork(fourth, nullptr, nullptr, groups4, wrongSize);
    QVERIFY(static_cast<const void*>(view.layout().nodes.data()) != unused);
    QCOMPARE(view.layout().area, view.drawingArea());
}

QTEST_MAIN(TestWirePods)
#include "tst_wirepods.moc"
