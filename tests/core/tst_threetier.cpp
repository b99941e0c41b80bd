// Stage 5, the three-tier fabric (fabric/topology.h "three-tier", docs/model.md §5.3): node and link
// counts of small fabrics counted by hand, link rates from the oversubscription of each tier, routes
// shortest against a Bellman–Ford written here, the pod ECMP hash's symmetry under shifts by whole pods
// (checked route by route), validation and JSON errors naming their field, the JSON of the other kinds
// unchanged (old files load and write as before), and a step simulated on a small three-tier scenario.

#include "../support/testsupport.h"
#include "network/routing.h"
#include "network/simulate.h"
#include "fabric/topology.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <map>
#include <set>

using namespace tw::network;
using tw::parallel::Cluster;

Q_DECLARE_METATYPE(TopologySpec)

namespace {

QString S(const char* s) { return QString::fromUtf8(s); }

// A three-tier fabric of NVSwitch servers with a NIC per GPU (IB NDR, 50e9 B/s), rail-optimized leaves.
TopologySpec threeTier(std::uint64_t gpusPerPod, std::uint64_t leaves, std::uint64_t spines, std::uint64_t cores,
                       double oversubscription = 1, double coreOversubscription = 1)
{
    TopologySpec s;
    s.kind = TopologyKind::ThreeTier;
    s.intraNode = IntraNode::NvSwitch;
    s.nicPlacement = NicPlacement::PerGpu;
    s.nicProtocol = Protocol::InfinibandNdr;
    s.gpusPerPod = gpusPerPod;
    s.leavesPerPod = leaves;
    s.spinesPerPod = spines;
    s.coreSwitches = cores;
    s.oversubscription = oversubscription;
    s.coreOversubscription = coreOversubscription;
    return s;
}

TopologySpec topOfRack(TopologySpec s)
{
    s.railOptimized = false;
    return s;
}

Topology make(const TopologySpec& spec, const Cluster& cluster) { return tw::test::topologyOrDie(spec, cluster); }

bool isCore(const Topology& t, NodeId n)
{
    return t.node(n).kind == NodeKind::SpineSwitch && t.podPlace(n).pod == Topology::kNoPod;
}

QString pathText(const Topology& t, const std::vector<LinkId>& path)
{
    QStringList ids;
    for (LinkId l : path)
        ids << QString::fromStdString(t.link(l).id);
    return ids.join(QLatin1Char(','));
}

} // namespace

class TestThreeTier : public QObject {
    Q_OBJECT
private slots:
    void counts_data();
    void counts();
    void planesAndRails();
    void rates_data();
    void rates();
    void routesAreShortest_data();
    void routesAreShortest();
    void ecmpIsSymmetricUnderPodShifts_data();
    void ecmpIsSymmetricUnderPodShifts();
    void podHashIsFnv1aAndPicks();
    void validation_data();
    void validation();
    void jsonErrors_data();
    void jsonErrors();
    void scenarioNamesTheField();
    void jsonOfOtherKindsUnchanged();
    void stepOnThreeTier();
    void reducedEqualsFullAcrossPods();
};

void TestThreeTier::counts_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("servers");
    QTest::addColumn<quint64>("gpusPerNode");
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("links");   // directed
    QTest::addColumn<int>("leaves");
    QTest::addColumn<int>("spines");  // in pods
    QTest::addColumn<int>("cores");
    QTest::addColumn<int>("nics");
    QTest::addColumn<int>("pods");
    // An 8-GPU NVSwitch server with 2 GPUs per PCIe switch and a NIC per GPU: root complex, host memory,
    // 4 PCIe switches, the NVSwitch, 8 GPUs, 8 NICs = 23 nodes; pairs rc–host 1, rc–PCIe 4, GPU–NVSwitch 8,
    // GPU–PCIe 8, PCIe–NIC 8 = 29.
    // 2 pods × 2 servers, 8 rail leaves (2 ports each), 2 spines, 4 cores (planes of 2): per pod
    // 2·23 + 8 + 2 = 56 nodes and 2·29 + 16 NIC–leaf + 8·2 leaf–spine = 90 pairs; cores: 4 nodes, each
    // spine to its plane's 2 cores = 4 spines × 2 = 8 pairs. 2·56 + 4 = 116 nodes, 2·90 + 8 = 188 pairs.
    QTest::newRow("2 pods x 2 servers x 8 GPUs, rail-optimized")
        << threeTier(16, 8, 2, 4) << quint64(4) << quint64(8) << 116 << 376 << 16 << 4 << 4 << 32 << 2;
    // Top-of-rack: 2 leaves per pod, one server (8 NICs) on each; 2 spines, 2 cores (planes of 1):
    // per pod 46 + 2 + 2 = 50 nodes, 58 + 16 + 2·2 = 78 pairs; cores 2 nodes, 4 spines × 1 = 4 pairs.
    QTest::newRow("top-of-rack, one server per leaf")
        << topOfRack(threeTier(16, 2, 2, 2)) << quint64(4) << quint64(8) << 102 << 320 << 4 << 4 << 2 << 32 << 2;
    // One pod: no core layer. 56 nodes, 90 pairs.
    QTest::newRow("one pod, no cores") << threeTier(16, 8, 2, 4) << quint64(2) << quint64(8) << 56 << 180 << 8 << 2 << 0
                                       << 16 << 1;
    // PCIe servers of 4 GPUs (2 per switch), one NIC per server on the root complex: rc, host, 2 PCIe
    // switches, 4 GPUs, 1 NIC = 9 nodes; pairs rc–host, 2 rc–PCIe, 4 GPU–PCIe, rc–NIC = 8. Pods of 2
    // servers, 1 leaf, 2 spines: 18 + 1 + 2 = 21 nodes, 16 + 2 NIC–leaf + 2 leaf–spine = 20 pairs; 2 cores
    // (planes of 1): 4 pairs. 42 + 2 = 44 nodes, 40 + 4 = 44 pairs.
    TopologySpec pcie = threeTier(8, 1, 2, 2);
    pcie.intraNode = IntraNode::Pcie;
    pcie.nicPlacement = NicPlacement::PerNode;
    QTest::newRow("PCIe servers, one NIC each") << pcie << quint64(4) << quint64(4) << 44 << 88 << 2 << 4 << 2 << 4 << 2;
    // 3 servers in pods of 2: pod 1 holds one server, its one server group's 8 rail leaves and both
    // spines: 23 + 8 + 2 = 33 nodes, 29 + 8 + 16 = 53 pairs. 56 + 33 + 4 = 93 nodes, 90 + 53 + 8 = 151 pairs.
    QTest::newRow("partial last pod") << threeTier(16, 8, 2, 4) << quint64(3) << quint64(8) << 93 << 302 << 16 << 4 << 4
                                      << 24 << 2;
}

void TestThreeTier::counts()
{
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, servers);
    QFETCH(quint64, gpusPerNode);
    const Topology t = make(spec, Cluster{servers, gpusPerNode});
    int cores = 0;
    for (NodeId n = 0; n < t.nodes().size(); ++n)
        cores += isCore(t, n);
    QTEST(int(t.nodes().size()), "nodes");
    QTEST(int(t.links().size()), "links");
    QTEST(int(t.countNodes(NodeKind::LeafSwitch)), "leaves");
    QTEST(int(t.countNodes(NodeKind::SpineSwitch)) - cores, "spines");
    QTEST(cores, "cores");
    QTEST(int(t.countNodes(NodeKind::Nic)), "nics");
    QTEST(int(t.podCount()), "pods");
    QCOMPARE(t.gpuCount(), servers * gpusPerNode);
}

void TestThreeTier::planesAndRails()
{
    // 2 pods × 2 servers × 8 GPUs, 8 rail leaves, 2 spines, 4 cores: NIC k of server 2 (pod 1) on p1.leafk;
    // spine j of each pod on cores 2j and 2j + 1 only (plane j); every leaf on both spines of its pod.
    const Topology t = make(threeTier(16, 8, 2, 4), Cluster{4, 8});
    for (const char* id : {"n0.nic0-p0.leaf0", "n1.nic7-p0.leaf7", "n2.nic5-p1.leaf5", "n3.nic3-p1.leaf3",
                           "p0.leaf0-p0.spine1", "p1.leaf7-p1.spine0", "p0.spine0-core0", "p0.spine0-core1",
                           "p1.spine1-core2", "p1.spine1-core3", "core3-p0.spine1"})
        QVERIFY2(t.findLink(id).has_value(), id);
    for (const char* id : {"n2.nic5-p0.leaf5", "n0.nic0-p0.leaf1", "p1.spine1-core0", "p0.spine0-core2",
                           "p0.leaf0-p1.spine0"})
        QVERIFY2(!t.findLink(id).has_value(), id);
    // GPU k's own NIC is NIC k of its server.
    QCOMPARE(t.node(t.gpuNic(21)).name, std::string("n2.nic5"));
    // Places: the i-th node of pod 1 plays the part of the i-th of pod 0.
    const NodeId a = *t.findNode("p0.spine1"), b = *t.findNode("p1.spine1");
    QCOMPARE(t.podPlace(a).index, t.podPlace(b).index);
    QCOMPARE(t.podPlace(a).pod, 0u);
    QCOMPARE(t.podPlace(b).pod, 1u);
    QVERIFY(t.podPlace(*t.findNode("core2")) == (Topology::PodPlace{Topology::kNoPod, 2}));
    // A top-of-rack pod of 4 servers on 2 leaves: servers 0–1 on leaf 0, 2–3 on leaf 1, all their NICs.
    const Topology tor = make(topOfRack(threeTier(32, 2, 2, 2)), Cluster{8, 8});
    for (const char* id : {"n1.nic7-p0.leaf0", "n2.nic0-p0.leaf1", "n5.nic4-p1.leaf0", "n7.nic7-p1.leaf1"})
        QVERIFY2(tor.findLink(id).has_value(), id);
}

void TestThreeTier::rates_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("servers");
    QTest::addColumn<double>("nic");
    QTest::addColumn<double>("leafSpine");
    QTest::addColumn<double>("spineCore");
    // IB NDR: 400 Gb/s = 50e9 B/s per NIC. Rail leaves of 2 servers: 2 ports = 100e9 B/s down, over 2
    // spines at 1:1 → 50e9 per leaf–spine pair. A spine: 8 leaves × 50e9 = 400e9 down, over the 2 cores
    // of its plane at 1:1 → 200e9 per spine–core pair.
    QTest::newRow("non-blocking") << threeTier(16, 8, 2, 4) << quint64(4) << 50e9 << 50e9 << 200e9;
    // 2:1 at the leaves → 100e9 / (2 · 2) = 25e9; 7:1 above the pods (Llama 3's aggregation layer) →
    // 8 · 25e9 / (7 · 2) = 200e9 / 14.
    QTest::newRow("2:1 then 7:1") << threeTier(16, 8, 2, 4, 2, 7) << quint64(4) << 50e9 << 25e9 << 200e9 / 14;
    // Llama 3's rack: 2 servers (16 NICs, RoCE at 400 Gb/s) on one top-of-rack leaf. Pods of 4 servers:
    // 2 leaves; 16 × 50e9 = 800e9 down over 4 spines → 200e9; a spine: 2 × 200e9 = 400e9 over the 2
    // cores of its plane (8 cores / 4 spines) at 7:1 → 400e9 / 14.
    TopologySpec tor = topOfRack(threeTier(32, 2, 4, 8, 1, 7));
    tor.nicProtocol = Protocol::RoCEv2;
    tor.nicBandwidth = 50e9;
    QTest::newRow("top-of-rack, RoCE, 7:1") << tor << quint64(8) << 50e9 << 200e9 << 400e9 / 14;
    // Explicit tier rates replace the figures from oversubscription.
    TopologySpec fixed = threeTier(16, 8, 2, 4);
    fixed.leafSpineBandwidth = 12.5e9;
    fixed.spineCoreBandwidth = 3e9;
    QTest::newRow("explicit rates") << fixed << quint64(4) << 50e9 << 12.5e9 << 3e9;
    // An explicit leaf–spine rate feeds the core tier's auto rate: 8 × 10e9 / (1 · 2) = 40e9.
    TopologySpec leafOnly = threeTier(16, 8, 2, 4);
    leafOnly.leafSpineBandwidth = 10e9;
    QTest::newRow("explicit leaf rate, auto core rate") << leafOnly << quint64(4) << 50e9 << 10e9 << 40e9;
    // A slower NIC: HDR 200 Gb/s = 25e9; 2 ports / 2 spines → 25e9; 8 × 25e9 / 2 → 100e9.
    TopologySpec hdr = threeTier(16, 8, 2, 4);
    hdr.nicProtocol = Protocol::InfinibandHdr;
    QTest::newRow("HDR NICs") << hdr << quint64(4) << 25e9 << 25e9 << 100e9;
}

void TestThreeTier::rates()
{
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, servers);
    QFETCH(double, nic);
    QFETCH(double, leafSpine);
    QFETCH(double, spineCore);
    const Topology t = make(spec, Cluster{servers, 8});
    std::map<std::string, int> seen;
    for (const Link& l : t.links()) {
        const NodeKind a = t.node(l.from).kind, b = t.node(l.to).kind;
        std::string tier;
        double want = 0;
        if (a == NodeKind::Nic || b == NodeKind::Nic) {
            if (a != NodeKind::LeafSwitch && b != NodeKind::LeafSwitch)
                continue; // inside the server
            tier = "nic";
            want = nic;
        } else if (isCore(t, l.from) || isCore(t, l.to)) {
            tier = "spine-core";
            want = spineCore;
        } else if (a == NodeKind::LeafSwitch || b == NodeKind::LeafSwitch) {
            tier = "leaf-spine";
            want = leafSpine;
        } else {
            continue;
        }
        ++seen[tier];
        QVERIFY2(std::fabs(l.bandwidth - want) <= 1e-9 * want,
                 qPrintable(QStringLiteral("%1: %2, expected %3").arg(QString::fromStdString(l.id)).arg(l.bandwidth).arg(want)));
        QVERIFY(l.protocol == spec.nicProtocol);
    }
    QCOMPARE(seen.size(), std::size_t(3)); // every tier present
    const ThreeTierShape shape = threeTierShape(spec, Cluster{servers, 8});
    QVERIFY(std::fabs(shape.leafSpine - leafSpine) <= 1e-9 * leafSpine);
    QVERIFY(std::fabs(shape.spineCore - spineCore) <= 1e-9 * spineCore);
}

void TestThreeTier::routesAreShortest_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("servers");
    QTest::addColumn<quint64>("gpusPerNode");
    QTest::newRow("rail-optimized, 2 pods") << threeTier(16, 8, 2, 4) << quint64(4) << quint64(8);
    QTest::newRow("rail-optimized, 3 pods, 2 rail sets per pod, 2:1")
        << threeTier(16, 8, 2, 4, 2, 1) << quint64(6) << quint64(4);
    QTest::newRow("top-of-rack, partial pod") << topOfRack(threeTier(16, 2, 2, 4)) << quint64(5) << quint64(4);
    TopologySpec pcie = threeTier(8, 1, 2, 2);
    pcie.intraNode = IntraNode::Pcie;
    pcie.nicPlacement = NicPlacement::PerNode;
    QTest::newRow("PCIe servers, one NIC each") << pcie << quint64(6) << quint64(4);
    TopologySpec staged = threeTier(8, 4, 2, 2);
    staged.intraNode = IntraNode::Pcie;
    staged.gpuDirectP2P = false;
    QTest::newRow("PCIe servers, no GPUDirect") << staged << quint64(4) << quint64(4);
}

void TestThreeTier::routesAreShortest()
{
    // Every route is a chain of links from the source GPU to the destination through switches, NICs or
    // host memory (a staging point), crossing at most one core switch, and no longer (in whole ns of
    // latency) than the shortest way for each of its legs (routing.h): between servers with a NIC per GPU
    // GPU → own NIC inside the server, NIC → NIC over network links, NIC → GPU; staged, through the host
    // memories; else the whole path. The shortest figures come from a Bellman–Ford over the built graph.
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, servers);
    QFETCH(quint64, gpusPerNode);
    const Topology t = make(spec, Cluster{servers, gpusPerNode});
    const std::size_t n = t.nodes().size();
    auto latencyNs = [&](const Link& l) { return std::max<std::uint64_t>(1, std::uint64_t(std::llround(l.latency * 1e9))); };
    auto passable = [&](NodeId v) { return t.node(v).kind != NodeKind::Gpu && t.node(v).kind != NodeKind::HostMemory; };
    // Shortest distance from `from` to `to` using only links `allowed` accepts, entering no GPU or host
    // memory on the way.
    auto bellmanFord = [&](NodeId from, NodeId to, auto allowed) {
        constexpr std::uint64_t kFar = std::numeric_limits<std::uint64_t>::max() / 2;
        std::vector<std::uint64_t> d(n, kFar);
        d[from] = 0;
        bool changed = true;
        for (std::size_t round = 0; changed && round < n; ++round) {
            changed = false;
            for (const Link& l : t.links())
                if (allowed(l) && (l.from == from || passable(l.from)) && d[l.from] + latencyNs(l) < d[l.to]) {
                    d[l.to] = d[l.from] + latencyNs(l);
                    changed = true;
                }
        }
        return d[to];
    };
    auto anyLink = [](const Link&) { return true; };
    auto networkLink = [](const Link& l) { return isNetwork(l.protocol); };
    auto inServer = [&](std::int64_t server) {
        return [&t, server](const Link& l) { return t.node(l.from).server == server && t.node(l.to).server == server; };
    };
    Router router(t);
    int crossPod = 0;
    for (std::uint32_t a = 0; a < t.gpuCount(); ++a)
        for (std::uint32_t b = 0; b < t.gpuCount(); ++b) {
            if (a == b)
                continue;
            const auto r = router.route(a, b, a + 31 * b);
            QVERIFY(r.ok());
            const std::vector<LinkId>& path = *r.value();
            const QString where = QStringLiteral("%1 -> %2: %3").arg(a).arg(b).arg(pathText(t, path));
            const NodeId s = t.gpuNode(a), d = t.gpuNode(b);
            QVERIFY2(!path.empty() && t.link(path.front()).from == s && t.link(path.back()).to == d, qPrintable(where));
            std::uint64_t length = 0;
            int cores = 0;
            std::vector<NodeId> hosts;
            for (std::size_t k = 0; k < path.size(); ++k) {
                const Link& l = t.link(path[k]);
                length += latencyNs(l);
                cores += isCore(t, l.to);
                if (k + 1 < path.size()) {
                    QVERIFY2(t.link(path[k + 1]).from == l.to, qPrintable(where));
                    QVERIFY2(passable(l.to) || t.node(l.to).kind == NodeKind::HostMemory, qPrintable(where));
                    if (t.node(l.to).kind == NodeKind::HostMemory)
                        hosts.push_back(l.to);
                }
            }
            const std::uint32_t podA = t.podPlace(s).pod, podB = t.podPlace(d).pod;
            QVERIFY2(cores == (podA != podB ? 1 : 0), qPrintable(where));
            crossPod += podA != podB;
            std::uint64_t best = 0;
            const std::int64_t sa = t.node(s).server, sb = t.node(d).server;
            if (!hosts.empty()) {
                NodeId from = s;
                hosts.push_back(d);
                for (NodeId to : hosts) {
                    best += bellmanFord(from, to, anyLink);
                    from = to;
                }
            } else if (sa != sb && t.gpuNic(a) != kNoNode && t.gpuNic(b) != kNoNode) {
                best = bellmanFord(s, t.gpuNic(a), inServer(sa)) + bellmanFord(t.gpuNic(a), t.gpuNic(b), networkLink)
                       + bellmanFord(t.gpuNic(b), d, inServer(sb));
            } else {
                best = bellmanFord(s, d, anyLink);
            }
            QVERIFY2(length == best, qPrintable(where + QStringLiteral(": %1 ns, shortest %2 ns").arg(length).arg(best)));
        }
    QVERIFY(crossPod > 0);
}

void TestThreeTier::ecmpIsSymmetricUnderPodShifts_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("servers");
    QTest::addColumn<quint64>("gpusPerNode");
    // 4 pods × 2 servers × 8 GPUs: 8 rail leaves, 4 spines, 8 cores (planes of 2).
    QTest::newRow("rail-optimized, 4 pods") << threeTier(16, 8, 4, 8) << quint64(8) << quint64(8);
    // 3 pods × 4 servers × 4 GPUs on top-of-rack leaves of 2 servers, 2 spines, 6 cores (planes of 3).
    QTest::newRow("top-of-rack, 3 pods") << topOfRack(threeTier(16, 2, 2, 6)) << quint64(12) << quint64(4);
}

void TestThreeTier::ecmpIsSymmetricUnderPodShifts()
{
    // σ_Δ moves GPU g to g + Δ·(GPUs per pod) mod N — a data-parallel shift whose replicas fill whole
    // pods — and every node of pod p to the node of the same place in pod p + Δ (cores stay). For every
    // pair and every Δ, the route of (σa, σb) is σ of the route of (a, b), link by link, whatever the flow
    // ids (a shift maps a group onto another group). And ECMP still spreads: the routes leaving one leaf
    // for other pods use every spine of the pod and every core.
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, servers);
    QFETCH(quint64, gpusPerNode);
    const Topology t = make(spec, Cluster{servers, gpusPerNode});
    const std::uint32_t pods = t.podCount();
    const std::uint32_t n = std::uint32_t(t.gpuCount()), perPod = std::uint32_t(spec.gpusPerPod);
    QCOMPARE(pods * perPod, n);
    std::map<std::pair<std::uint32_t, std::uint32_t>, NodeId> byPlace;
    for (NodeId v = 0; v < t.nodes().size(); ++v)
        byPlace[{t.podPlace(v).pod, t.podPlace(v).index}] = v;
    QCOMPARE(byPlace.size(), t.nodes().size()); // places name the nodes
    Router router(t);
    std::set<std::string> spinesUsed, coresUsed;
    const NodeId leaf0 = *t.findNode("p0.leaf0");
    for (std::uint32_t delta = 1; delta < pods; ++delta) {
        auto image = [&](NodeId v) {
            const Topology::PodPlace p = t.podPlace(v);
            return p.pod == Topology::kNoPod ? v : byPlace.at({(p.pod + delta) % pods, p.index});
        };
        for (std::uint32_t a = 0; a < n; ++a)
            for (std::uint32_t b = 0; b < n; ++b) {
                if (a == b)
                    continue;
                const auto r = router.route(a, b, 0);
                const auto rs = router.route((a + delta * perPod) % n, (b + delta * perPod) % n, 1000 + delta);
                QVERIFY(r.ok() && rs.ok());
                std::vector<LinkId> mapped;
                for (LinkId l : *r.value())
                    mapped.push_back(*t.findLink(image(t.link(l).from), image(t.link(l).to)));
                QVERIFY2(mapped == *rs.value(), qPrintable(QStringLiteral("Δ %1, %2 -> %3: %4 vs %5")
                                                               .arg(delta).arg(a).arg(b).arg(pathText(t, mapped))
                                                               .arg(pathText(t, *rs.value()))));
                if (delta == 1 && t.podPlace(t.gpuNode(b)).pod != 0)
                    for (std::size_t k = 0; k + 1 < r.value()->size(); ++k)
                        if (t.link((*r.value())[k]).to == leaf0) {
                            const Link& up = t.link((*r.value())[k + 1]);
                            spinesUsed.insert(t.node(up.to).name);
                            for (LinkId l : *r.value())
                                if (isCore(t, t.link(l).to))
                                    coresUsed.insert(t.node(t.link(l).to).name);
                        }
            }
    }
    QCOMPARE(spinesUsed.size(), std::size_t(spec.spinesPerPod));
    QCOMPARE(coresUsed.size(), std::size_t(spec.coreSwitches));
}

void TestThreeTier::podHashIsFnv1aAndPicks()
{
    // 20 zero bytes hash alike whatever the fields mean: the global hash's figure (tst_network). Over
    // (1, 2, 3, 4, 5) as u32 little-endian: 0x1916ceffaf539564 (FNV-1a 64 computed independently in Python).
    QCOMPARE(placeEcmpHash(0, 0, 0, 0, 0), std::uint64_t(0xee85fafd354b0935ull));
    QCOMPARE(placeEcmpHash(1, 2, 3, 4, 5), std::uint64_t(0x1916ceffaf539564ull));
    // The pick at the source's leaf (routing.h "ECMP on a switched fabric"): GPU 3 (pod 0, server 0,
    // local 3) → GPU 16 + 5 (pod 1, server 2, local 5) in the 2-pod rail fabric (2 servers per pod, one
    // group of 8 rail leaves per pod) leaves by NIC 3 to p0.leaf3, which picks among the pod's 2 spines
    // ((mix(h) >> 32) + c·3) mod 2 (mix: SplitMix64's finalizer) with h over (place 0, place 0, rail offset 5 − 3 = 2, tier 0 (leaf),
    // relation 0: other group, other pod) and c = 2 / gcd(2, 8) = 1.
    const Topology t = make(threeTier(16, 8, 2, 4), Cluster{4, 8});
    const auto r = route(t, 3, 21, 99);
    QVERIFY(r.ok());
    const NodeId leaf = *t.findNode("p0.leaf3");
    const std::uint64_t h = placeEcmpHash(0, 0, 2, 0, 0);
    std::string spine;
    for (LinkId l : r.value())
        if (t.link(l).from == leaf)
            spine = t.node(t.link(l).to).name;
    QCOMPARE(spine, "p0.spine" + std::to_string(((ecmpMix(h) >> 32) + 3) % 2));
    // The flow id does not enter.
    QVERIFY(route(t, 3, 21, 0).value() == r.value());
}

void TestThreeTier::validation_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("servers");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    QTest::newRow("ok") << threeTier(16, 8, 2, 4) << quint64(4) << QString() << QString();
    QTest::newRow("pod of a partial server") << threeTier(12, 8, 2, 4) << quint64(4) << S("topology.gpus_per_pod")
                                             << S("a pod holds whole servers: 12 GPUs is not a multiple of the 8 GPUs per node");
    QTest::newRow("empty pod") << threeTier(0, 8, 2, 4) << quint64(4) << S("topology.gpus_per_pod")
                               << S("a pod holds whole servers: 0 GPUs is not a multiple of the 8 GPUs per node");
    QTest::newRow("no leaves") << threeTier(16, 0, 2, 4) << quint64(4) << S("topology.leaves_per_pod")
                               << S("a pod needs at least one leaf");
    QTest::newRow("rails not whole") << threeTier(16, 12, 2, 4) << quint64(4) << S("topology.leaves_per_pod")
                                     << S("rail-optimized leaves come in sets of one per rail (8 NICs per server): 12 is "
                                          "not a multiple of 8 (or set rail_optimized to false)");
    QTest::newRow("uneven rail sets") << threeTier(24, 16, 2, 4) << quint64(6) << S("topology.leaves_per_pod")
                                      << S("the pod's 3 servers do not split evenly over 2 sets of rail leaves");
    QTest::newRow("uneven top-of-rack") << topOfRack(threeTier(24, 2, 2, 4)) << quint64(6) << S("topology.leaves_per_pod")
                                        << S("the pod's 3 servers do not split evenly over 2 leaves");
    QTest::newRow("no spines") << threeTier(16, 8, 0, 4) << quint64(4) << S("topology.spines_per_pod")
                               << S("a pod needs at least one spine");
    QTest::newRow("no cores") << threeTier(16, 8, 2, 0) << quint64(4) << S("topology.core_switches")
                              << S("a three-tier fabric needs at least one core switch");
    QTest::newRow("cores not in planes") << threeTier(16, 8, 2, 3) << quint64(4) << S("topology.core_switches")
                                         << S("the cores form one plane per pod spine: 3 is not a multiple of "
                                              "spines_per_pod (2)");
    QTest::newRow("core oversubscription") << threeTier(16, 8, 2, 4, 1, 0.5) << quint64(4)
                                           << S("topology.core_oversubscription")
                                           << S("must be a finite ratio ≥ 1 (1 = non-blocking, 2 = uplinks of half the "
                                                "downlink capacity), got 0.500");
    QTest::newRow("leaf oversubscription") << threeTier(16, 8, 2, 4, 0.9) << quint64(4) << S("topology.oversubscription")
                                           << S("must be a finite ratio ≥ 1 (1 = non-blocking, 2 = uplinks of half the "
                                                "downlink capacity), got 0.900");
    TopologySpec both = threeTier(16, 8, 2, 4, 1, 3);
    both.spineCoreBandwidth = 1e10;
    QTest::newRow("rate and ratio") << both << quint64(4) << S("topology.spine_core_bandwidth")
                                    << S("give either this rate or core_oversubscription (3), not both: a rate sets the "
                                         "tier's oversubscription");
    TopologySpec zero = threeTier(16, 8, 2, 4);
    zero.leafSpineBandwidth = 0;
    QTest::newRow("zero rate") << zero << quint64(4) << S("topology.leaf_spine_bandwidth")
                               << S("must be a finite number of bytes per second > 0 (or \"auto\"), got 0");
    TopologySpec wrongNic = threeTier(16, 8, 2, 4);
    wrongNic.nicProtocol = Protocol::NvLink4;
    QTest::newRow("NIC protocol") << wrongNic << quint64(4) << S("topology.nic_protocol")
                                  << S("\"nvlink4\" is not a network protocol (expected ib-hdr, ib-ndr, rocev2, "
                                       "ethernet-10g, ethernet-25g, ethernet-100g, ethernet-400g)");
    // 2,048 single-GPU pods, each of 1 leaf and 4,096 spines on 4,096 cores (planes of 1):
    // 2,048 × 4,096 × (1 + 1) = 16,777,216 links between switches.
    TopologySpec huge = threeTier(1, 1, 4096, 4096);
    huge.nicPlacement = NicPlacement::PerNode;
    QTest::newRow("too many switch links") << huge << quint64(2048) << S("topology")
                                           << S("the switch tiers need 16,777,216 links (pods × spines per pod × "
                                                "(leaves per pod + cores per plane)), more than the fabric model "
                                                "holds (4,194,304)");
}

void TestThreeTier::validation()
{
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, servers);
    QFETCH(QString, path);
    QFETCH(QString, message);
    const Cluster cluster{servers, spec.gpusPerPod == 1 ? 1u : 8u};
    const std::vector<tw::Error> errors = validate(spec, cluster);
    if (path.isEmpty()) {
        QVERIFY(errors.empty());
        QVERIFY(build(spec, cluster).ok());
        return;
    }
    QVERIFY(!errors.empty());
    QCOMPARE(QString::fromStdString(errors.front().where.jsonPath), path);
    QCOMPARE(QString::fromStdString(errors.front().message), message);
    QCOMPARE(build(spec, cluster).error(), errors.front());
}

void TestThreeTier::jsonErrors_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("fractional pod") << S(R"({"kind": "three-tier", "gpus_per_pod": 2.5})")
                                    << S("topology.gpus_per_pod: expected a whole number ≥ 0, got 2.5");
    QTest::newRow("negative cores") << S(R"({"kind": "three-tier", "core_switches": -4})")
                                    << S("topology.core_switches: expected a whole number ≥ 0, got -4");
    QTest::newRow("ratio as text") << S(R"({"kind": "three-tier", "core_oversubscription": "1:7"})")
                                   << S("topology.core_oversubscription: expected a number, got string");
    QTest::newRow("rail flag") << S(R"({"kind": "three-tier", "rail_optimized": "yes"})")
                               << S("topology.rail_optimized: expected true or false, got string");
    QTest::newRow("rate word") << S(R"({"kind": "three-tier", "spine_core_bandwidth": "fast"})")
                               << S("topology.spine_core_bandwidth: expected a rate with its unit (400Gbps, 50GB/s), a "
                                    "number of bytes per second or \"auto\": 'fast' is not a bandwidth; expected a number "
                                    "and a unit such as 10Gbps, 100Gb/s or 25GB/s");
    QTest::newRow("kind") << S(R"({"kind": "three-tiers"})")
                          << S("topology.kind: unknown kind \"three-tiers\" (expected pcie-server, nvswitch-node, "
                               "leaf-spine, paper-testbed, three-tier)");
}

void TestThreeTier::jsonErrors()
{
    QFETCH(QString, json);
    auto r = topologyFromJson(json.toStdString());
    QVERIFY(!r.ok());
    QTEST(QString::fromStdString(r.error().toString()), "error");
}

void TestThreeTier::scenarioNamesTheField()
{
    // Through the scenario file: a type error stops the load at its path; a value the fabric cannot be
    // built with loads (an editor may hold it) and stage 5 refuses it naming the field.
    auto base = tw::scenario::preset("dgx-h100-4node").value();
    base.topology = threeTier(16, 8, 2, 4);
    std::string json = tw::scenario::scenarioToJson(base);
    const auto good = tw::scenario::loadScenario(json, "t.json");
    QVERIFY(good.errors.empty());
    QVERIFY(good.scenario->topology == base.topology);

    const std::string key = "\"core_switches\": 4";
    const std::size_t at = json.find(key);
    QVERIFY(at != std::string::npos);
    std::string typed = json;
    typed.replace(at, key.size(), "\"core_switches\": \"four\"");
    const auto bad = tw::scenario::loadScenario(typed, "t.json");
    QCOMPARE(bad.errors.size(), std::size_t(1));
    QCOMPARE(bad.errors[0].where.jsonPath, std::string("topology.core_switches"));

    std::string unbuildable = json;
    unbuildable.replace(at, key.size(), "\"core_switches\": 3");
    const auto loaded = tw::scenario::loadScenario(unbuildable, "t.json");
    QVERIFY(loaded.errors.empty());
    auto d = tw::scenario::derive(*loaded.scenario);
    QVERIFY(d.ok());
    auto net = tw::scenario::deriveNetwork(*loaded.scenario, *d.value());
    QVERIFY(!net.ok());
    QCOMPARE(net.error().where.jsonPath, std::string("topology.core_switches"));
}

void TestThreeTier::jsonOfOtherKindsUnchanged()
{
    // The new fields are written for three-tier only (or when changed), so no schema bump: a leaf–spine
    // writes exactly its twelve keys, every preset (schema versions 2 to 5 on disk) loads and writes none
    // of the new keys, and a three-tier spec with every field changed round-trips.
    TopologySpec ls;
    ls.kind = TopologyKind::LeafSpine;
    const std::string lsJson = topologyToJson(ls);
    QCOMPARE(lsJson, std::string(R"({"kind":"leaf-spine","gpus_per_pcie_switch":2,"gpudirect_p2p":true,"pcie":"auto",)"
                                 R"("nvlink":"auto","intra_node":"nvswitch","nic_placement":"per-gpu","nic_protocol":"ib-ndr",)"
                                 R"("nic_bandwidth":"auto","oversubscription":1.0,"nics_per_leaf":32,"spines":4})"));
    for (const std::string& name : tw::scenario::presetNames()) {
        const auto s = tw::scenario::preset(name);
        QVERIFY2(s.ok(), name.c_str());
        const std::string out = tw::scenario::scenarioToJson(s.value());
        // (A three-tier preset, llama3-405b-98k, writes them; the other presets none.)
        if (s.value().topology.kind != TopologyKind::ThreeTier)
            QVERIFY2(out.find("pod") == std::string::npos && out.find("core_") == std::string::npos, name.c_str());
        else
            QVERIFY2(out.find(R"("gpus_per_pod")") != std::string::npos, name.c_str());
        QVERIFY2(tw::scenario::loadScenario(out, name).scenario == s.value(), name.c_str());
    }
    TopologySpec all = threeTier(64, 16, 4, 12, 1.5, 3);
    all.railOptimized = false;
    all.leavesPerPod = 4;
    all.leafSpineBandwidth.reset();
    all.spineCoreBandwidth = 2.5e10;
    all.coreOversubscription = 1;
    const auto back = topologyFromJson(topologyToJson(all));
    QVERIFY(back.ok());
    QVERIFY(back.value() == all);
    QVERIFY(topologyToJson(all).find(R"("spine_core_bandwidth":25000000000.0)") != std::string::npos);
    QVERIFY(topologyToJson(all).find(R"("leaf_spine_bandwidth":"auto")") != std::string::npos);
    // A field changed on another kind is kept too.
    TopologySpec kept = ls;
    kept.coreSwitches = 6;
    QVERIFY(topologyFromJson(topologyToJson(kept)).value() == kept);
}

void TestThreeTier::stepOnThreeTier()
{
    // dgx-h100-4node (GPT-2 XL cut to 4 layers to keep the test short, ZeRO-1 over 32 H100s, a NIC per
    // GPU) on 2 pods of 2 servers: 8 rail
    // leaves, 2 spines and 4 cores, non-blocking. The step simulates through the core API; every switch
    // forwards what it receives (bytes in = bytes out); the data-parallel collectives span both pods, so
    // the cores carry traffic; what enters the network (NIC → leaf) does not depend on the switch tiers
    // (NIC affinity: each inter-server transfer enters by its source GPU's NIC or its channel's), so it
    // equals the same scenario's on the preset's rail-optimized leaf–spine; and a symmetry-reduced run
    // equals the full one.
    auto s = tw::scenario::preset("dgx-h100-4node").value();
    s.model.layers = 4;
    const auto onFabric = [](const tw::scenario::Scenario& sc, bool symmetry) {
        auto d = tw::scenario::derive(sc);
        if (!d.ok() || !d.value()->stage3 || !d.value()->stage4)
            qFatal("derive");
        auto net = tw::scenario::deriveNetwork(sc, *d.value());
        if (!net.ok())
            qFatal("network: %s", net.error().toString().c_str());
        SimulationOptions o = tw::scenario::simulationOptions(*d.value(), false);
        o.exploitSymmetry = symmetry;
        auto sim = simulateStep(*net.value()->topology, *d.value()->stage3, *d.value()->stage4, o);
        if (!sim.ok())
            qFatal("simulate: %s", sim.error().toString().c_str());
        return std::make_pair(net.value()->topology, std::move(sim).value());
    };
    const auto [leafSpine, lsSim] = onFabric(s, true);
    TopologySpec three = threeTier(16, 8, 2, 4);
    three.pcie = s.topology.pcie;
    three.nvlink = s.topology.nvlink;
    s.topology = three;
    const auto [t, sim] = onFabric(s, true);
    QVERIFY(t->spec.kind == TopologyKind::ThreeTier);
    QVERIFY(sim.stepSeconds > 0 && std::isfinite(sim.stepSeconds));
    QVERIFY(sim.stepSeconds >= sim.computeSeconds);
    QVERIFY(sim.computeSeconds > 0);
    double intoNetwork = 0, lsIntoNetwork = 0, core = 0;
    std::vector<double> in(t->nodes().size(), 0), out(t->nodes().size(), 0);
    for (LinkId l = 0; l < t->links().size(); ++l) {
        const Link& k = t->link(l);
        const double b = sim.linkPayloadBytes[l];
        in[k.to] += b;
        out[k.from] += b;
        if (t->node(k.from).kind == NodeKind::Nic && isNetwork(k.protocol))
            intoNetwork += b;
        if (isCore(*t, k.to))
            core += b;
    }
    for (LinkId l = 0; l < leafSpine->links().size(); ++l) {
        const Link& k = leafSpine->link(l);
        if (leafSpine->node(k.from).kind == NodeKind::Nic && isNetwork(k.protocol))
            lsIntoNetwork += lsSim.linkPayloadBytes[l];
    }
    for (NodeId v = 0; v < t->nodes().size(); ++v)
        if (t->node(v).kind == NodeKind::LeafSwitch || t->node(v).kind == NodeKind::SpineSwitch)
            QVERIFY2(std::fabs(in[v] - out[v]) <= 1e-9 * std::max(1.0, in[v]), t->node(v).name.c_str());
    QVERIFY(intoNetwork > 0);
    QVERIFY(core > 0);
    QVERIFY2(std::fabs(intoNetwork - lsIntoNetwork) <= 1e-9 * lsIntoNetwork,
             qPrintable(QStringLiteral("%1 vs %2").arg(intoNetwork).arg(lsIntoNetwork)));
    qInfo("three-tier step %.6g s (leaf–spine %.6g s), reduction: %s", sim.stepSeconds, lsSim.stepSeconds,
          sim.reduction.c_str());
    if (sim.symmetryFactor == 1)
        return; // nothing reduced (sim.reduction says why)
    const auto full = onFabric(s, false).second;
    QVERIFY2(std::fabs(full.stepSeconds - sim.stepSeconds) <= 1e-9 * full.stepSeconds,
             qPrintable(QStringLiteral("reduced %1 s (%2), full %3 s").arg(sim.stepSeconds).arg(QString::fromStdString(sim.reduction)).arg(full.stepSeconds)));
}

void TestThreeTier::reducedEqualsFullAcrossPods()
{
    // GPT-3 175B's layout (tp 8 × pp 8, interleaved, ZeRO-1) cut to 16 layers, 2 replicas on 2 pods of 64
    // GPUs: a data-parallel shift moves one replica onto the other pod, which the pod ECMP hash maps route
    // onto route, so the simulator may reduce by it. Whatever it reduces, the reduced step equals the
    // full one: step time, exposed time per strategy and every link's bytes, to 1e-9 relative.
    auto s = tw::scenario::preset("gpt3-175b").value();
    s.hardware.nodes = 16;
    s.parallel.dp = 2;
    s.batch.globalBatchTokens = 2048 * 8 * 2; // 8 micro-batches per replica
    s.model.layers = 16;
    s.topology = threeTier(64, 8, 4, 8);
    auto d = tw::scenario::derive(s);
    QVERIFY(d.ok() && d.value()->stage3 && d.value()->stage4);
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY(net.ok());
    const Topology& t = *net.value()->topology;
    QCOMPARE(t.podCount(), 2u);
    SimulationOptions o = tw::scenario::simulationOptions(*d.value(), false);
    auto reduced = simulateStep(t, *d.value()->stage3, *d.value()->stage4, o);
    o.exploitSymmetry = false;
    auto full = simulateStep(t, *d.value()->stage3, *d.value()->stage4, o);
    QVERIFY(reduced.ok() && full.ok());
    const StepSimulation& r = reduced.value();
    const StepSimulation& f = full.value();
    qInfo("reduction: %s", r.reduction.c_str());
    QVERIFY2(r.reduction.find("dp shift") != std::string::npos, r.reduction.c_str());
    QVERIFY(r.symmetryFactor > 8); // more than the tensor-parallel shift alone
    auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(b), 1e-12); };
    QVERIFY2(close(r.stepSeconds, f.stepSeconds), qPrintable(QStringLiteral("%1 vs %2").arg(r.stepSeconds).arg(f.stepSeconds)));
    for (int k = 0; k < 4; ++k)
        QVERIFY2(close(r.exposedByStrategy[k], f.exposedByStrategy[k]), qPrintable(QString::number(k)));
    QCOMPARE(r.linkPayloadBytes.size(), f.linkPayloadBytes.size());
    for (std::size_t l = 0; l < f.linkPayloadBytes.size(); ++l)
        QVERIFY2(close(r.linkPayloadBytes[l], f.linkPayloadBytes[l]), t.link(LinkId(l)).id.c_str());
}

QTEST_APPLESS_MAIN(TestThreeTier)
#include "tst_threetier.moc"
