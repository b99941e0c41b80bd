// Stage 5 (the network): topology builders (node and link counts, rates), routing (PCIe P2P vs host
// staging, NVSwitch, ECMP by the documented FNV-1a hash), protocol overhead against docs/model.md
// "Stage 5", per-link bytes of ring AllReduces derived by hand, validation messages and JSON.

#include "../support/testsupport.h"
#include "collective/binding.h"
#include "network/linkload.h"
#include "network/overhead.h"
#include "network/routing.h"
#include "fabric/topology.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <QTest>

#include <set>

#include <limits>
#include <map>

using namespace tw::network;
using tw::parallel::Cluster;

Q_DECLARE_METATYPE(TopologySpec)
Q_DECLARE_METATYPE(Protocol)

namespace {

QString S(const char* s) { return QString::fromUtf8(s); }

Topology make(const TopologySpec& spec, const Cluster& cluster) { return tw::test::topologyOrDie(spec, cluster); }

TopologySpec pcieServer(std::uint64_t perSwitch, bool p2p)
{
    TopologySpec s;
    s.kind = TopologyKind::PcieServer;
    s.gpusPerPcieSwitch = perSwitch;
    s.gpuDirectP2P = p2p;
    return s;
}

TopologySpec leafSpine(NicPlacement nics, std::uint64_t nicsPerLeaf, double oversubscription, IntraNode intra)
{
    TopologySpec s;
    s.kind = TopologyKind::LeafSpine;
    s.nicPlacement = nics;
    s.nicsPerLeaf = nicsPerLeaf;
    s.oversubscription = oversubscription;
    s.intraNode = intra;
    return s;
}

QString pathIds(const Topology& t, const std::vector<LinkId>& path)
{
    QStringList ids;
    for (LinkId l : path)
        ids << QString::fromStdString(t.link(l).id);
    return ids.join(QLatin1Char(','));
}

QString routeIds(const Topology& t, std::uint32_t src, std::uint32_t dst, std::uint64_t flow = 0)
{
    auto p = route(t, src, dst, flow);
    if (!p.ok())
        return QString::fromStdString("error: " + p.error().toString());
    return pathIds(t, p.value());
}

std::size_t countLinks(const Topology& t, Protocol p)
{
    std::size_t n = 0;
    for (const Link& l : t.links())
        n += l.protocol == p;
    return n;
}

// One group (GPUs 0 … n−1 in order) and one AllReduce of M bytes bound with the ring.
struct OneCall {
    tw::parallel::CommPlan plan;
    tw::collective::CollectiveDerivation bound;
};

OneCall ringAllReduce(const Cluster& cluster, std::uint32_t n, double m, std::uint64_t repeat = 1)
{
    OneCall c;
    tw::parallel::Group g;
    g.strategy = tw::parallel::Strategy::DP;
    g.kind = "dp";
    for (std::uint32_t i = 0; i < n; ++i)
        g.members.push_back(i);
    c.plan.groups.push_back(g);
    tw::parallel::CollectiveCall call;
    call.kind = tw::parallel::CollectiveKind::AllReduce;
    call.strategy = tw::parallel::Strategy::DP;
    call.firstGroup = 0;
    call.groupCount = 1;
    call.payloadBytes = m;
    call.repeat = repeat;
    c.plan.calls.push_back(call);
    c.bound = tw::collective::bindPlan(c.plan, cluster, tw::collective::AlgorithmChoice{});
    return c;
}

double dpBytes(const Topology& t, const LinkLoads& loads, const char* id)
{
    const auto l = t.findLink(id);
    if (!l)
        qFatal("no link %s", id);
    return loads[*l].payloadBytes[0];
}

} // namespace

class TestNetwork : public QObject {
    Q_OBJECT

private slots:
    void namesRoundTrip();
    void builders_data();
    void builders();
    void leafSpineOversubscription_data();
    void leafSpineOversubscription();
    void linkIdsAndRates();
    void routes_data();
    void routes();
    void routesAreShortestLegs_data();
    void routesAreShortestLegs();
    void ecmpIsReproducibleAndSpreads();
    void ecmpHashIsFnv1a();
    void disconnected();
    void overhead_data();
    void overhead();
    void overheadShares_data();
    void overheadShares();
    void ringOnPcieServer_data();
    void ringOnPcieServer();
    void dpAcrossTwoNodes_data();
    void dpAcrossTwoNodes();
    void paperReferenceStep();
    void strategiesAndSkippedCalls();
    void validation_data();
    void validation();
    void jsonRoundTrip_data();
    void jsonRoundTrip();
    void jsonErrors_data();
    void jsonErrors();
    void autoNicRateFollowsProtocol();
    void autoNvLinkFollowsGpu_data();
    void autoNvLinkFollowsGpu();
};

void TestNetwork::builders_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("nodes");
    QTest::addColumn<quint64>("gpusPerNode");
    QTest::addColumn<int>("graphNodes");
    QTest::addColumn<int>("links");
    QTest::addColumn<int>("gpus");
    QTest::addColumn<int>("pcieSwitches");
    QTest::addColumn<int>("nics");
    QTest::addColumn<int>("leaves");
    QTest::addColumn<int>("spines");

    // PCIe server, 4 GPUs behind 2 switches: rc, host, pcie0, pcie1, 4 GPUs = 8 nodes;
    // pairs rc–host, 2 × rc–pcie, 4 × gpu–pcie = 7 pairs = 14 links.
    QTest::newRow("pcie-server 4 GPUs / 2 switches") << pcieServer(2, true) << quint64(1) << quint64(4) << 8 << 14 << 4
                                                     << 2 << 0 << 0 << 0;
    // GPUs on the root complex's own lanes: rc, host, 4 GPUs; pairs rc–host + 4 gpu–rc = 5.
    QTest::newRow("pcie-server GPUs on the root complex") << pcieServer(0, true) << quint64(1) << quint64(4) << 6 << 10
                                                          << 4 << 0 << 0 << 0 << 0;
    // DGX-like: rc, host, 4 PCIe switches, NVSwitch, 8 GPUs = 15; pairs rc–host 1, rc–pcie 4,
    // gpu–nvswitch 8, gpu–pcie 8 = 21 pairs = 42 links.
    QTest::newRow("nvswitch-node 8 GPUs") << TopologySpec{} << quint64(1) << quint64(8) << 15 << 42 << 8 << 4 << 0 << 0
                                          << 0;
    // 2 PCIe servers × 4 GPUs, one NIC each, one leaf (no spines): per server 8 nodes + NIC = 9, ×2 + leaf = 19;
    // pairs per server 7 + rc–nic 1 + nic–leaf 1 = 9, ×2 = 18 pairs = 36 links.
    QTest::newRow("leaf-spine 2 × 4, NIC per node, one leaf")
        << leafSpine(NicPlacement::PerNode, 32, 1, IntraNode::Pcie) << quint64(2) << quint64(4) << 19 << 36 << 8 << 4
        << 2 << 1 << 0;
    // 4 DGX-like servers, rail-optimized (8 NICs each), 2 servers per leaf group: 2 groups × 8 rails = 16 leaves,
    // 4 spines. Nodes: 4 × (15 + 8 NICs) + 16 + 4 = 112. Pairs: 4 × (21 + 8 pcie–nic + 8 nic–leaf) + 16 × 4 = 212.
    QTest::newRow("leaf-spine 4 × 8, rail-optimized")
        << leafSpine(NicPlacement::PerGpu, 2, 1, IntraNode::NvSwitch) << quint64(4) << quint64(8) << 112 << 424 << 32
        << 16 << 32 << 16 << 4;
    // The paper's testbed: switch + 7 × (rc, host, gpu, nic) = 29; pairs 7 × (rc–host, gpu–rc, rc–nic, nic–switch) = 28.
    TopologySpec testbed;
    testbed.kind = TopologyKind::PaperTestbed;
    QTest::newRow("paper-testbed 7 nodes") << testbed << quint64(7) << quint64(1) << 29 << 56 << 7 << 0 << 7 << 1 << 0;
}

void TestNetwork::builders()
{
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, nodes);
    QFETCH(quint64, gpusPerNode);
    const Topology t = make(spec, Cluster{nodes, gpusPerNode});
    QTEST(int(t.nodes().size()), "graphNodes");
    QTEST(int(t.links().size()), "links");
    QTEST(int(t.countNodes(NodeKind::Gpu)), "gpus");
    QTEST(int(t.countNodes(NodeKind::PcieSwitch)), "pcieSwitches");
    QTEST(int(t.countNodes(NodeKind::Nic)), "nics");
    QTEST(int(t.countNodes(NodeKind::LeafSwitch)), "leaves");
    QTEST(int(t.countNodes(NodeKind::SpineSwitch)), "spines");
    QCOMPARE(t.gpuCount(), nodes * gpusPerNode);
    // GPU g is local GPU g % gpusPerNode of server g / gpusPerNode; links come in pairs.
    for (std::uint64_t g = 0; g < t.gpuCount(); ++g) {
        const Node& n = t.node(t.gpuNode(g));
        QCOMPARE(n.gpu, std::int64_t(g));
        QCOMPARE(n.server, std::int64_t(g / gpusPerNode));
        QCOMPARE(n.name, "n" + std::to_string(g / gpusPerNode) + ".gpu" + std::to_string(g % gpusPerNode));
    }
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const Link& a = t.link(l);
        const Link& b = t.link(a.reverse);
        QCOMPARE(b.reverse, l);
        QCOMPARE(b.from, a.to);
        QCOMPARE(b.bandwidth, a.bandwidth);
        QVERIFY(a.bandwidth > 0 && a.latency > 0);
    }
}

void TestNetwork::leafSpineOversubscription_data()
{
    QTest::addColumn<double>("ratio");
    QTest::addColumn<double>("uplink");
    // 4 nodes × 8 GPUs, rail-optimized, 2 NICs per leaf at 400 Gb/s = 50 GB/s, 4 spines:
    // downlink capacity per leaf 2 × 50 = 100 GB/s; uplinks 100 / (ratio × 4) each.
    QTest::newRow("1:1") << 1.0 << 25e9;
    QTest::newRow("2:1") << 2.0 << 12.5e9;
    QTest::newRow("4:1") << 4.0 << 6.25e9;
}

void TestNetwork::leafSpineOversubscription()
{
    QFETCH(double, ratio);
    QFETCH(double, uplink);
    const Topology t = make(leafSpine(NicPlacement::PerGpu, 2, ratio, IntraNode::NvSwitch), Cluster{4, 8});
    const NodeId leaf = *t.findNode("leaf0");
    double down = 0, up = 0;
    for (LinkId l : t.outLinks(leaf)) {
        const Link& link = t.link(l);
        if (t.node(link.to).kind == NodeKind::SpineSwitch) {
            QCOMPARE(link.bandwidth, uplink);
            up += link.bandwidth;
        } else {
            QVERIFY(t.node(link.to).kind == NodeKind::Nic);
            QCOMPARE(link.bandwidth, 50e9);
            down += link.bandwidth;
        }
    }
    QCOMPARE(down, 100e9);
    QCOMPARE(up, down / ratio); // 2:1 — the uplinks carry half the downlink capacity
}

void TestNetwork::linkIdsAndRates()
{
    TopologySpec dgx; // nvswitch-node, NVLink 4, PCIe Gen4
    const Topology t = make(dgx, Cluster{1, 8});
    QCOMPARE(countLinks(t, Protocol::NvLink4), std::size_t(16)); // 8 GPU ↔ NVSwitch pairs
    const auto l = t.findLink("n0.gpu3-nvswitch");
    QVERIFY(l);
    QCOMPARE(t.link(*l).bandwidth, 450e9);
    QCOMPARE(t.link(*l).latency, 0.5e-6);
    QCOMPARE(t.link(t.link(*l).reverse).id, std::string("n0.nvswitch-gpu3"));
    QCOMPARE(t.link(*t.findLink("n0.gpu3-pcie1")).bandwidth, 32e9);
    dgx.nvlink = Protocol::NvLink3;
    dgx.pcie = Protocol::PcieGen5;
    const Topology a100 = make(dgx, Cluster{1, 8});
    QCOMPARE(a100.link(*a100.findLink("n0.gpu0-nvswitch")).bandwidth, 300e9);
    QCOMPARE(a100.link(*a100.findLink("n0.gpu0-pcie0")).bandwidth, 64e9);
    dgx.pcie = Protocol::PcieGen3;
    QVERIFY(make(dgx, Cluster{1, 8}).link(0).protocol == Protocol::MemoryBus);
    QCOMPARE(nominalBandwidth(Protocol::PcieGen3), 16e9);
    QCOMPARE(nominalBandwidth(Protocol::InfinibandHdr), 25e9);  // 200 Gb/s
    QCOMPARE(nominalBandwidth(Protocol::InfinibandNdr), 50e9);  // 400 Gb/s
    QCOMPARE(nominalBandwidth(Protocol::Ethernet25G), 3.125e9); // 25 Gb/s

    TopologySpec testbed;
    testbed.kind = TopologyKind::PaperTestbed;
    const Topology tb = make(testbed, Cluster{7, 1});
    QCOMPARE(countLinks(tb, Protocol::Ethernet10G), std::size_t(14));
    const auto e = tb.findLink("n6.nic0-switch");
    QVERIFY(e);
    QCOMPARE(tb.link(*e).bandwidth, 1.25e9); // 10 Gb/s
    QVERIFY(tb.findLink("leaf2-spine0") == std::nullopt);

    const Topology ls = make(leafSpine(NicPlacement::PerGpu, 2, 1, IntraNode::NvSwitch), Cluster{4, 8});
    QVERIFY(ls.findLink("leaf2-spine0"));
    QVERIFY(ls.findLink("spine0-leaf2"));
    QVERIFY(ls.findLink("n3.nic7-leaf15")); // server 3 is in group 1: rail 7 → leaf 8 + 7
    QVERIFY(ls.findLink("n1.pcie3-nic7"));  // NIC k sits on GPU k's PCIe switch
}

void TestNetwork::routes_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("nodes");
    QTest::addColumn<quint64>("gpusPerNode");
    QTest::addColumn<uint>("src");
    QTest::addColumn<uint>("dst");
    QTest::addColumn<QString>("path");

    QTest::newRow("P2P, same switch") << pcieServer(2, true) << quint64(1) << quint64(4) << 0u << 1u
                                      << S("n0.gpu0-pcie0,n0.pcie0-gpu1");
    QTest::newRow("P2P, across switches via the root complex")
        << pcieServer(2, true) << quint64(1) << quint64(4) << 1u << 2u << S("n0.gpu1-pcie0,n0.pcie0-rc,n0.rc-pcie1,n0.pcie1-gpu2");
    // Without P2P the data is written to host memory and read back: two PCIe crossings via the root complex.
    QTest::newRow("no P2P, same switch: through host memory")
        << pcieServer(2, false) << quint64(1) << quint64(4) << 0u << 1u
        << S("n0.gpu0-pcie0,n0.pcie0-rc,n0.rc-host,n0.host-rc,n0.rc-pcie0,n0.pcie0-gpu1");
    QTest::newRow("no P2P, across switches") << pcieServer(2, false) << quint64(1) << quint64(4) << 3u << 0u
                                             << S("n0.gpu3-pcie1,n0.pcie1-rc,n0.rc-host,n0.host-rc,n0.rc-pcie0,n0.pcie0-gpu0");
    QTest::newRow("same GPU: no links") << pcieServer(2, true) << quint64(1) << quint64(4) << 2u << 2u << S("");
    QTest::newRow("NVSwitch") << TopologySpec{} << quint64(1) << quint64(8) << 0u << 5u << S("n0.gpu0-nvswitch,n0.nvswitch-gpu5");
    TopologySpec noP2p;
    noP2p.gpuDirectP2P = false;
    QTest::newRow("NVSwitch without PCIe P2P still uses NVLink")
        << noP2p << quint64(1) << quint64(8) << 7u << 2u << S("n0.gpu7-nvswitch,n0.nvswitch-gpu2");
    // One leaf, one NIC per server on the root complex.
    QTest::newRow("across servers, NIC per node")
        << leafSpine(NicPlacement::PerNode, 32, 1, IntraNode::Pcie) << quint64(2) << quint64(4) << 3u << 4u
        << S("n0.gpu3-pcie1,n0.pcie1-rc,n0.rc-nic0,n0.nic0-leaf0,leaf0-n1.nic0,n1.nic0-rc,n1.rc-pcie0,n1.pcie0-gpu0");
    // Rail-optimized: GPU 2 of server 0 → GPU 2 of server 1 stays on rail 2's leaf.
    QTest::newRow("same rail") << leafSpine(NicPlacement::PerGpu, 32, 1, IntraNode::NvSwitch) << quint64(2) << quint64(8)
                               << 2u << 10u << S("n0.gpu2-pcie1,n0.pcie1-nic2,n0.nic2-leaf2,leaf2-n1.nic2,n1.nic2-pcie1,n1.pcie1-gpu2");
    // NIC affinity: GPU 2 shares PCIe switch 1 with NIC 3, and NIC 3's rail-3 leaf reaches GPU 11 (local 3 of
    // server 1) without a spine — but GPU 2 sends through its own NIC 2 (as NCCL binds a GPU to its nearest
    // NIC), so the path crosses from rail 2 to rail 3 over the (only) spine and enters through GPU 11's NIC 3.
    TopologySpec oneSpine = leafSpine(NicPlacement::PerGpu, 32, 1, IntraNode::NvSwitch);
    oneSpine.spines = 1;
    QTest::newRow("own NIC, cross rail over the spine")
        << oneSpine << quint64(2) << quint64(8) << 2u << 11u
        << S("n0.gpu2-pcie1,n0.pcie1-nic2,n0.nic2-leaf2,leaf2-spine0,spine0-leaf3,leaf3-n1.nic3,n1.nic3-pcie1,n1.pcie1-gpu3");
    // Testbed: TCP sockets stage through host memory on both ends.
    TopologySpec testbed;
    testbed.kind = TopologyKind::PaperTestbed;
    QTest::newRow("testbed") << testbed << quint64(7) << quint64(1) << 0u << 6u
                             << S("n0.gpu0-rc,n0.rc-host,n0.host-rc,n0.rc-nic0,n0.nic0-switch,switch-n6.nic0,n6.nic0-rc,"
                                "n6.rc-host,n6.host-rc,n6.rc-gpu0");
}

void TestNetwork::routes()
{
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, nodes);
    QFETCH(quint64, gpusPerNode);
    QFETCH(uint, src);
    QFETCH(uint, dst);
    const Topology t = make(spec, Cluster{nodes, gpusPerNode});
    QTEST(routeIds(t, src, dst), "path");
}

void TestNetwork::routesAreShortestLegs_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("nodes");
    QTest::addColumn<quint64>("gpusPerNode");
    QTest::newRow("rail-optimized, NVSwitch, 2 NICs per leaf")
        << leafSpine(NicPlacement::PerGpu, 2, 1, IntraNode::NvSwitch) << quint64(4) << quint64(8);
    QTest::newRow("rail-optimized, PCIe, 8 NICs per leaf, oversubscribed 2:1")
        << leafSpine(NicPlacement::PerGpu, 8, 2, IntraNode::Pcie) << quint64(4) << quint64(4);
    QTest::newRow("one NIC per node") << leafSpine(NicPlacement::PerNode, 2, 1, IntraNode::Pcie) << quint64(4) << quint64(4);
    QTest::newRow("PCIe server, staging through host memory") << pcieServer(2, false) << quint64(1) << quint64(8);
}

void TestNetwork::routesAreShortestLegs()
{
    // Every route of every GPU pair is a chain from the source GPU to the destination through transit
    // nodes only (no GPU, no host memory in between), and its cost in whole ns is the shortest possible
    // for each of its legs (routing.h): between servers with one NIC per GPU, GPU → own NIC inside the
    // server, own NIC → destination's NIC over network links, then into the GPU; otherwise the whole
    // path (or, when staging, each leg through host memory). The shortest costs come from a plain
    // Bellman–Ford written here, independent of the router's lazily settled Dijkstra and of its
    // shortcut through a target's only neighbour.
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, nodes);
    QFETCH(quint64, gpusPerNode);
    const Topology t = make(spec, Cluster{nodes, gpusPerNode});
    auto ns = [&](LinkId l) { return std::max<std::uint64_t>(1, std::uint64_t(std::llround(t.link(l).latency * 1e9))); };
    auto transit = [&](NodeId n) { return t.node(n).kind != NodeKind::Gpu && t.node(n).kind != NodeKind::HostMemory; };
    // 0: any link, 1: network links only, 2: links inside `server` only.
    auto shortest = [&](NodeId from, NodeId to, int scope, std::int64_t server) {
        constexpr std::uint64_t inf = std::numeric_limits<std::uint64_t>::max();
        std::vector<std::uint64_t> dist(t.nodes().size(), inf);
        dist[from] = 0;
        for (std::size_t round = 0; round < t.nodes().size(); ++round)
            for (LinkId l = 0; l < t.links().size(); ++l) {
                const Link& k = t.link(l);
                if (dist[k.from] == inf || (k.from != from && !transit(k.from)))
                    continue;
                if ((scope == 1 && !isNetwork(k.protocol))
                    || (scope == 2 && (t.node(k.from).server != server || t.node(k.to).server != server)))
                    continue;
                dist[k.to] = std::min(dist[k.to], dist[k.from] + ns(l));
            }
        return dist[to];
    };
    Router router(t);
    for (std::uint32_t a = 0; a < t.gpuCount(); ++a)
        for (std::uint32_t b = 0; b < t.gpuCount(); ++b) {
            if (a == b)
                continue;
            const auto p = router.route(a, b, a * 7 + b);
            QVERIFY(p.ok());
            const std::vector<LinkId>& path = *p.value();
            QVERIFY(!path.empty());
            const QString where = QStringLiteral("GPU %1 -> %2: %3").arg(a).arg(b).arg(pathIds(t, path));
            QVERIFY2(t.link(path.front()).from == t.gpuNode(a), qPrintable(where));
            QVERIFY2(t.link(path.back()).to == t.gpuNode(b), qPrintable(where));
            std::uint64_t cost = 0;
            std::vector<NodeId> stops; // where the legs meet: NICs or host memories on the path
            for (std::size_t k = 0; k < path.size(); ++k) {
                cost += ns(path[k]);
                if (k > 0) {
                    const NodeId v = t.link(path[k]).from;
                    QVERIFY2(t.link(path[k - 1]).to == v, qPrintable(where));
                    QVERIFY2(transit(v) || t.node(v).kind == NodeKind::HostMemory, qPrintable(where));
                    if (t.node(v).kind == NodeKind::HostMemory)
                        stops.push_back(v);
                }
            }
            const NodeId s = t.gpuNode(a), d = t.gpuNode(b);
            const std::int64_t ss = t.node(s).server, ds = t.node(d).server;
            const NodeId na = t.gpuNic(a), nb = t.gpuNic(b);
            std::uint64_t best = 0;
            if (!stops.empty()) { // staged: each leg through host memory shortest
                NodeId from = s;
                stops.push_back(d);
                for (NodeId to : stops) {
                    best += shortest(from, to, 0, 0);
                    from = to;
                }
            } else if (ss != ds && na != kNoNode && nb != kNoNode) {
                best = shortest(s, na, 2, ss) + shortest(na, nb, 1, 0) + shortest(nb, d, 2, ds);
            } else {
                best = shortest(s, d, 0, 0);
            }
            QVERIFY2(cost == best, qPrintable(where + QStringLiteral(": %1 ns, shortest %2 ns").arg(cost).arg(best)));
        }
}

void TestNetwork::ecmpIsReproducibleAndSpreads()
{
    // 4 servers, one NIC each, 2 NICs per leaf → 2 leaves, 4 spines: GPU 0 (leaf 0) → GPU 8 (server 2, leaf 1)
    // has 4 equal paths, one per spine; the choice at leaf0 is ((mix(h) >> 32) + c·0) mod 4 (routing.h "ECMP on a
    // switched fabric"), h = FNV-1a over (place 0 of server 0 in its leaf's 2 servers, place 0 of server 2
    // in its leaf's, rail offset 0, tier 0, relation 2 — other group, no pods —, then the flow id).
    const TopologySpec spec = leafSpine(NicPlacement::PerNode, 2, 1, IntraNode::Pcie);
    const Topology a = make(spec, Cluster{4, 4});
    const Topology b = make(spec, Cluster{4, 4});
    Router ra(a), rb(b);
    std::map<std::string, int> perSpine;
    for (std::uint64_t flow = 0; flow < 64; ++flow) {
        const auto pa = ra.route(0, 8, flow);
        const auto pb = rb.route(0, 8, flow);
        QVERIFY(pa.ok() && pb.ok());
        QCOMPARE(pathIds(a, *pa.value()), pathIds(b, *pb.value())); // same choices on every run
        QCOMPARE(pathIds(a, *pa.value()), routeIds(a, 0, 8, flow));  // cached = uncached
        QCOMPARE(pa.value()->size(), std::size_t(10));
        std::string spine;
        for (LinkId l : *pa.value())
            if (a.node(a.link(l).to).kind == NodeKind::SpineSwitch)
                spine = a.node(a.link(l).to).name;
        ++perSpine[spine];
        const std::string expected = "spine" + std::to_string((ecmpMix(placeEcmpHash(0, 0, 0, 0, 2, flow)) >> 32) % 4);
        QCOMPARE(spine, expected);
    }
    QCOMPARE(perSpine.size(), std::size_t(4)); // every spine carries some of the 64 flows
    for (const auto& [spine, n] : perSpine)
        QVERIFY2(n >= 8, spine.c_str());          // and none fewer than half its share of 16
    QCOMPARE(ra.cachedPaths(), std::size_t(64));
}

void TestNetwork::ecmpHashIsFnv1a()
{
    // FNV-1a 64 over 20 zero bytes, and over (1, 2, 3, 4) little-endian (computed independently in Python).
    QCOMPARE(ecmpHash(0, 0, 0, 0), std::uint64_t(0xee85fafd354b0935ull));
    QCOMPARE(ecmpHash(1, 2, 3, 4), std::uint64_t(0x352736e97f9895f1ull));
}

void TestNetwork::disconnected()
{
    Topology t;
    const NodeId g0 = t.addNode({NodeKind::Gpu, "n0.gpu0", 0, 0});
    const NodeId g1 = t.addNode({NodeKind::Gpu, "n1.gpu0", 1, 1});
    const NodeId sw = t.addNode({NodeKind::LeafSwitch, "leaf0", -1, -1});
    t.addLinkPair(g0, sw, 1e9, 1e-6, Protocol::Ethernet10G);
    (void)g1;
    auto r = route(t, 0, 1);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().message,
             std::string("no path from GPU 0 (n0.gpu0) to GPU 1 (n1.gpu0): the topology does not connect them"));
    QCOMPARE(r.error().where.jsonPath, std::string("topology"));
    QVERIFY(!route(t, 0, 7).ok()); // not a GPU of the topology
    // Ids a hand-made topology skips are not GPUs either.
    Topology gap;
    gap.addNode({NodeKind::Gpu, "n0.gpu0", 0, 0});
    gap.addNode({NodeKind::Gpu, "n0.gpu2", 2, 0});
    auto g = route(gap, 0, 1);
    QVERIFY(!g.ok());
    QCOMPARE(g.error().message, std::string("GPU 1 is not in the topology (it has 3 GPU ids)"));
    // A GPU is never a transit node: gpu0 – gpu1 – gpu2 in a chain has no path from 0 to 2.
    Topology chain;
    NodeId prev = chain.addNode({NodeKind::Gpu, "n0.gpu0", 0, 0});
    for (int g = 1; g < 3; ++g) {
        const NodeId n = chain.addNode({NodeKind::Gpu, "n0.gpu" + std::to_string(g), g, 0});
        chain.addLinkPair(prev, n, 1e9, 1e-6, Protocol::PcieGen4);
        prev = n;
    }
    QVERIFY(route(chain, 0, 1).ok());
    QVERIFY(!route(chain, 0, 2).ok());
}

void TestNetwork::overhead_data()
{
    QTest::addColumn<Protocol>("protocol");
    QTest::addColumn<double>("payload");
    QTest::addColumn<double>("wire");
    // PCIe, MPS 256: 1,000 B = ceil(1000/256) = 4 TLPs × 24 B.
    QTest::newRow("PCIe 1000 B") << Protocol::PcieGen4 << 1000.0 << 1096.0;
    QTest::newRow("PCIe 256 B") << Protocol::PcieGen5 << 256.0 << 280.0;
    QTest::newRow("PCIe 0 B") << Protocol::PcieGen3 << 0.0 << 0.0;
    // NVLink: 16-B header flit per 256 B.
    QTest::newRow("NVLink 257 B") << Protocol::NvLink4 << 257.0 << 257.0 + 32;
    // InfiniBand: 26 B per 4,096 B packet.
    QTest::newRow("IB 8192 B") << Protocol::InfinibandHdr << 8192.0 << 8192.0 + 52;
    QTest::newRow("IB 1 B") << Protocol::InfinibandNdr << 1.0 << 27.0;
    // RoCEv2: 82 B per 4,096 B packet.
    QTest::newRow("RoCEv2 4096 B") << Protocol::RoCEv2 << 4096.0 << 4178.0;
    QTest::newRow("RoCEv2 4097 B") << Protocol::RoCEv2 << 4097.0 << 4097.0 + 164;
    // TCP/IPv4 over Ethernet: 90 B per 1,448 B segment.
    QTest::newRow("TCP 1448 B") << Protocol::Ethernet10G << 1448.0 << 1538.0;
    QTest::newRow("TCP 1449 B") << Protocol::Ethernet100G << 1449.0 << 1449.0 + 180;
    QTest::newRow("TCP 1 MB") << Protocol::Ethernet400G << 1e6 << 1e6 + 691 * 90.0; // ceil(1e6/1448) = 691
    // Loopback: 52 B per 65,484 B segment (MTU 65,536 − 20 − 32).
    QTest::newRow("loopback 65484 B") << Protocol::TcpLoopback << 65484.0 << 65536.0;
    QTest::newRow("loopback 65485 B") << Protocol::TcpLoopback << 65485.0 << 65485.0 + 104;
    QTest::newRow("memory bus") << Protocol::MemoryBus << 12345.0 << 12345.0;
}

void TestNetwork::overhead()
{
    QFETCH(Protocol, protocol);
    QFETCH(double, payload);
    QTEST(wireBytes(protocol, payload), "wire");
}

void TestNetwork::overheadShares_data()
{
    QTest::addColumn<Protocol>("protocol");
    QTest::addColumn<double>("mps");
    QTest::addColumn<double>("share");   // exact: overhead / (payload + overhead)
    QTest::addColumn<double>("reference"); // docs/model.md's rounded figure
    QTest::addColumn<double>("tolerance");
    QTest::newRow("PCIe MPS 256: 8.6 %") << Protocol::PcieGen4 << 256.0 << 24.0 / 280 << 0.086 << 0.0005;
    QTest::newRow("PCIe MPS 512: 4.5 %") << Protocol::PcieGen4 << 512.0 << 24.0 / 536 << 0.045 << 0.0005;
    QTest::newRow("RoCEv2: ≈2 %") << Protocol::RoCEv2 << 256.0 << 82.0 / 4178 << 0.02 << 0.0005;
    QTest::newRow("InfiniBand: ≈0.6 %") << Protocol::InfinibandNdr << 256.0 << 26.0 / 4122 << 0.006 << 0.0005;
    QTest::newRow("TCP/Ethernet: 90 per 1448") << Protocol::Ethernet10G << 256.0 << 90.0 / 1538 << 90.0 / 1538 << 1e-12;
    QTest::newRow("loopback") << Protocol::TcpLoopback << 256.0 << 52.0 / 65536 << 0.0008 << 0.0001;
}

void TestNetwork::overheadShares()
{
    QFETCH(Protocol, protocol);
    QFETCH(double, mps);
    QFETCH(double, share);
    QFETCH(double, reference);
    QFETCH(double, tolerance);
    QCOMPARE(overheadShare(protocol, mps), share);
    QVERIFY(qAbs(overheadShare(protocol, mps) - reference) < tolerance);
    QVERIFY(qAbs(efficiency(protocol, mps) + share - 1) < 1e-15);
    const PacketFormat f = packetFormat(Protocol::Ethernet10G);
    QCOMPARE(f.overhead / f.payload, 90.0 / 1448);
}

void TestNetwork::ringOnPcieServer_data()
{
    QTest::addColumn<bool>("p2p");
    QTest::addColumn<QStringList>("ids");
    QTest::addColumn<QList<double>>("edges"); // ring edges (of 1.5·M each) crossing each link
    // Ring AllReduce over GPUs 0–3, M = 4,000,000 B: rank r sends to r+1 mod 4 in each of the 2(N−1) = 6
    // steps a chunk of M/4 = 1,000,000 B, so every ring edge carries 6 × M/4 = 1.5·M = 6,000,000 B.
    // GPUs 0, 1 on pcie0 and 2, 3 on pcie1. With P2P: 0→1 gpu0–pcie0–gpu1; 1→2 gpu1–pcie0–rc–pcie1–gpu2;
    // 2→3 gpu2–pcie1–gpu3; 3→0 gpu3–pcie1–rc–pcie0–gpu0. Each GPU link carries one edge per direction,
    // each switch uplink one edge per direction (1→2 up on pcie0, down on pcie1; 3→0 the other way), host none.
    QTest::newRow("P2P") << true
                         << S("n0.gpu0-pcie0,n0.pcie0-gpu0,n0.gpu1-pcie0,n0.pcie0-gpu1,n0.pcie0-rc,n0.rc-pcie0,n0.pcie1-rc,n0.rc-pcie1,n0.rc-host,n0.host-rc").split(QLatin1Char(','))
                         << QList<double>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    // Without P2P every edge goes GPU → switch → rc → host → rc → switch → GPU: the host link carries all 4
    // edges each way; pcie0 → rc carries the edges leaving GPUs 0 and 1 (0→1, 1→2); rc → pcie0 those entering
    // GPUs 0 and 1 (3→0, 0→1).
    QTest::newRow("no P2P") << false
                            << S("n0.gpu0-pcie0,n0.pcie0-gpu0,n0.pcie0-rc,n0.rc-pcie0,n0.pcie1-rc,n0.rc-pcie1,n0.rc-host,n0.host-rc").split(QLatin1Char(','))
                            << QList<double>{1, 1, 2, 2, 2, 2, 4, 4};
}

void TestNetwork::ringOnPcieServer()
{
    QFETCH(bool, p2p);
    QFETCH(QStringList, ids);
    QFETCH(QList<double>, edges);
    const Cluster cluster{1, 4};
    const Topology t = make(pcieServer(2, p2p), cluster);
    const double m = 4e6;
    const OneCall c = ringAllReduce(cluster, 4, m);
    auto loads = mapLinkLoads(t, c.plan, c.bound);
    QVERIFY(loads.ok());
    const LinkLoads& L = loads.value();
    for (int i = 0; i < ids.size(); ++i) {
        const auto l = t.findLink(ids[i].toStdString());
        QVERIFY2(l, qPrintable(ids[i]));
        QCOMPARE(L[*l].payloadBytes[0], edges[i] * 1.5 * m);
        QCOMPARE(L[*l].payload(), edges[i] * 1.5 * m);
        QCOMPARE(L[*l].transfers, edges[i] * 6);
        // PCIe: each 1,000,000-B transfer is ceil(1e6/256) = 3,907 TLPs × 24 B = 93,768 B of overhead.
        const double wirePerTransfer = t.link(*l).protocol == Protocol::MemoryBus ? 1e6 : 1e6 + 3907 * 24.0;
        QCOMPARE(L[*l].wireBytes, edges[i] * 6 * wirePerTransfer);
    }
    // Stage 4's bytes, each transfer once: 2(N−1)·M = 6·M.
    QCOMPARE(L.injectedBytes[0], 6 * m);
    QCOMPARE(L.injectedBytes[1] + L.injectedBytes[2] + L.injectedBytes[3], 0.0);
    QCOMPARE(L.injectedBytes[0], c.bound.wireBytesPerStep[0]);
    QCOMPARE(L.distinctSchedules, std::uint64_t(1));
    QCOMPARE(L.routedPairs, std::uint64_t(4));
    // The repeat multiplies every link's bytes.
    const OneCall twice = ringAllReduce(cluster, 4, m, 2);
    auto loads2 = mapLinkLoads(t, twice.plan, twice.bound);
    QVERIFY(loads2.ok());
    for (LinkId l = 0; l < t.links().size(); ++l)
        QCOMPARE(loads2.value()[l].payloadBytes[0], 2 * L[l].payloadBytes[0]);
    QCOMPARE(loads2.value().wireBytes, 2 * L.wireBytes);
}

void TestNetwork::dpAcrossTwoNodes_data()
{
    QTest::addColumn<int>("intra");
    QTest::newRow("PCIe servers") << int(IntraNode::Pcie);
    QTest::newRow("NVSwitch servers") << int(IntraNode::NvSwitch);
}

void TestNetwork::dpAcrossTwoNodes()
{
    QFETCH(int, intra);
    // 2 servers × 4 GPUs, one NIC per server (IB NDR), one leaf; ring AllReduce over GPUs 0 … 7 in order,
    // M = 8,000,000 B, N = 8: every ring edge carries 2(N−1) = 14 chunks of M/8 = 1,000,000 B = 2(N−1)/N·M
    // = 14,000,000 B. Exactly one edge leaves each server (3→4 and 7→0), so each NIC carries
    // 2(N−1)/N·M per direction: n0.nic0 → leaf0 and leaf0 → n1.nic0 the edge 3→4, n1.nic0 → leaf0 and
    // leaf0 → n0.nic0 the edge 7→0.
    const Cluster cluster{2, 4};
    const Topology t = make(leafSpine(NicPlacement::PerNode, 32, 1, IntraNode(intra)), cluster);
    const double m = 8e6, n = 8;
    const OneCall c = ringAllReduce(cluster, 8, m);
    auto loads = mapLinkLoads(t, c.plan, c.bound);
    QVERIFY(loads.ok());
    const LinkLoads& L = loads.value();
    const double perEdge = 2 * (n - 1) / n * m;
    QCOMPARE(perEdge, 14e6);
    for (const char* id : {"n0.nic0-leaf0", "leaf0-n1.nic0", "n1.nic0-leaf0", "leaf0-n0.nic0"}) {
        QCOMPARE(dpBytes(t, L, id), perEdge);
        // IB: each 1,000,000-B transfer is ceil(1e6/4096) = 245 packets × 26 B = 6,370 B of overhead.
        QCOMPARE(L[*t.findLink(id)].wireBytes, 14 * (1e6 + 245 * 26.0));
    }
    // Host-side NIC attachment on the root complex: the same edge.
    QCOMPARE(dpBytes(t, L, "n0.rc-nic0"), perEdge);
    QCOMPARE(dpBytes(t, L, "n1.nic0-rc"), perEdge);
    // Inside server 0 the edges 0→1, 1→2, 2→3 stay on PCIe (or NVLink): none of them reach the NIC.
    QCOMPARE(L.injectedBytes[0], 8 * perEdge); // 2(N−1)·M in all
}

void TestNetwork::paperReferenceStep()
{
    // The paper's Example 5.1 (8 GPUs, DDP): stage 4's ring AllReduce on a DGX-like node. Every edge of the
    // ring goes GPU → NVSwitch → GPU, so each GPU's NVLink uplink carries 2(N−1)/N·M = 14/8 · 248,879,616 B.
    auto d = tw::scenario::derive(tw::scenario::preset("paper-dp").value());
    QVERIFY(d.ok() && d.value()->stage3 && d.value()->stage4);
    const auto& der = *d.value();
    const Topology t = make(TopologySpec{}, der.cluster);
    auto loads = mapLinkLoads(t, der.stage3->comm, *der.stage4);
    QVERIFY(loads.ok());
    const LinkLoads& L = loads.value();
    const double m = 248879616.0;
    QCOMPARE(L.injectedBytes[0], der.stage4->wireBytesPerStep[0]);
    QCOMPARE(L.injectedBytes[0], 14 * m);
    for (int g = 0; g < 8; ++g) {
        const std::string up = "n0.gpu" + std::to_string(g) + "-nvswitch";
        QCOMPARE(dpBytes(t, L, up.c_str()), 14.0 / 8 * m);
    }
    QCOMPARE(dpBytes(t, L, "n0.pcie0-rc"), 0.0);
    QVERIFY(L.skipped.empty());
}

void TestNetwork::strategiesAndSkippedCalls()
{
    // The same ring AllReduce issued twice on the same group, once as DP (repeat 1) and once as TP (repeat 3):
    // one schedule, one set of paths; each link's bytes split 1 : 3 between DP and TP.
    const Cluster cluster{1, 4};
    const Topology t = make(pcieServer(2, true), cluster);
    OneCall c = ringAllReduce(cluster, 4, 4e6);
    tw::parallel::CollectiveCall tp = c.plan.calls.front();
    tp.strategy = tw::parallel::Strategy::TP;
    tp.repeat = 3;
    c.plan.calls.push_back(tp);
    c.bound = tw::collective::bindPlan(c.plan, cluster, tw::collective::AlgorithmChoice{});
    auto loads = mapLinkLoads(t, c.plan, c.bound);
    QVERIFY(loads.ok());
    const LinkLoad& l = loads.value()[*t.findLink("n0.gpu0-pcie0")];
    QCOMPARE(l.payloadBytes[0], 6e6);      // one ring edge (0→1) of 1.5·M
    QCOMPARE(l.payloadBytes[2], 18e6);     // × 3
    QCOMPARE(l.transfers, 24.0);           // 6 transfers × (1 + 3)
    QCOMPARE(loads.value().distinctSchedules, std::uint64_t(1));
    QCOMPARE(loads.value().routedPairs, std::uint64_t(4)); // merged: the 4 ring pairs routed once
    // A call stage 4 could not schedule is listed, not mapped.
    c.bound.calls[1].counted = false;
    auto partial = mapLinkLoads(t, c.plan, c.bound);
    QVERIFY(partial.ok());
    QCOMPARE(partial.value().skipped.size(), std::size_t(1));
    QCOMPARE(partial.value()[*t.findLink("n0.gpu0-pcie0")].payloadBytes[2], 0.0);
    // A group GPU the fabric does not have is an error.
    c.plan.groups[0].members[3] = 9;
    auto bad = mapLinkLoads(t, c.plan, c.bound);
    QVERIFY(!bad.ok());
    QCOMPARE(bad.error().message, std::string("GPU 9 is not in the topology (it has 4 GPU ids)"));
}

void TestNetwork::validation_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("nodes");
    QTest::addColumn<quint64>("gpusPerNode");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");

    QTest::newRow("ok") << TopologySpec{} << quint64(1) << quint64(8) << QString() << QString();
    QTest::newRow("single server, two nodes")
        << TopologySpec{} << quint64(2) << quint64(8) << S("topology.kind")
        << S("nvswitch-node is one server, but the cluster has 2 nodes (use leaf-spine for several servers)");
    TopologySpec testbed;
    testbed.kind = TopologyKind::PaperTestbed;
    QTest::newRow("testbed with 2 GPUs per node") << testbed << quint64(7) << quint64(2) << S("topology.kind")
                                                  << S("paper-testbed has one GPU per node, but the cluster has 2 GPUs per node");
    QTest::newRow("no GPUs") << TopologySpec{} << quint64(0) << quint64(8) << S("topology")
                             << S("the cluster has no GPUs (0 nodes × 8 GPUs per node)");
    TopologySpec big = leafSpine(NicPlacement::PerGpu, 32, 1, IntraNode::NvSwitch);
    QTest::newRow("more than the fabric holds") << big << quint64(32768) << quint64(8) << S("topology")
                                                << S("a cluster of 32,768 nodes × 8 GPUs is more than the fabric model holds (131,072 GPUs)");
    TopologySpec zero = big;
    zero.nicBandwidth = 0;
    QTest::newRow("zero bandwidth") << zero << quint64(2) << quint64(8) << S("topology.nic_bandwidth")
                                    << S("must be a finite number of bytes per second > 0 (or \"auto\"), got 0");
    // A 10 Gb/s Ethernet NIC cannot run at 400 Gb/s (the former default rate of every NIC).
    TopologySpec tooFast = big;
    tooFast.nicProtocol = Protocol::Ethernet10G;
    tooFast.nicBandwidth = 400e9 / 8;
    QTest::newRow("NIC faster than its protocol") << tooFast << quint64(2) << quint64(8) << S("topology.nic_bandwidth")
                                                  << S("400 Gb/s per direction is faster than ethernet-10g runs (10 Gb/s); "
                                                       "give at most that, or \"auto\" for its nominal rate");
    TopologySpec slower = tooFast;
    slower.nicBandwidth = 1e9 / 8; // a NIC slower than its link is allowed
    QTest::newRow("NIC slower than its protocol") << slower << quint64(2) << quint64(8) << QString() << QString();
    TopologySpec roce = big;
    roce.nicProtocol = Protocol::RoCEv2;
    roce.nicBandwidth = 400e9 / 8; // RoCEv2 runs on 400 Gb/s Ethernet too
    QTest::newRow("RoCEv2 at 400 Gb/s") << roce << quint64(2) << quint64(8) << QString() << QString();
    TopologySpec under = big;
    under.oversubscription = 0.5;
    QTest::newRow("oversubscription < 1") << under << quint64(2) << quint64(8) << S("topology.oversubscription")
                                          << S("must be a finite ratio ≥ 1 (1 = non-blocking, 2 = uplinks of half the "
                                             "downlink capacity), got 0.500");
    TopologySpec wrongNic = big;
    wrongNic.nicProtocol = Protocol::PcieGen4;
    QTest::newRow("NIC protocol") << wrongNic << quint64(2) << quint64(8) << S("topology.nic_protocol")
                                  << S("\"pcie-gen4\" is not a network protocol (expected ib-hdr, ib-ndr, rocev2, "
                                     "ethernet-10g, ethernet-25g, ethernet-100g, ethernet-400g)");
    TopologySpec wrongPcie;
    wrongPcie.pcie = Protocol::NvLink4;
    QTest::newRow("PCIe generation") << wrongPcie << quint64(1) << quint64(8) << S("topology.pcie")
                                     << S("\"nvlink4\" is not a PCIe generation (expected pcie-gen3, pcie-gen4, pcie-gen5)");
    TopologySpec wrongNv;
    wrongNv.nvlink = Protocol::PcieGen5;
    QTest::newRow("NVLink generation") << wrongNv << quint64(1) << quint64(8) << S("topology.nvlink")
                                       << S("\"pcie-gen5\" is not an NVLink generation (expected nvlink3, nvlink4 or auto)");
    TopologySpec noSpines = big;
    noSpines.spines = 0;
    QTest::newRow("no spines") << noSpines << quint64(2) << quint64(8) << S("topology.spines")
                               << S("a leaf–spine fabric needs at least one spine");
    TopologySpec noPorts = big;
    noPorts.nicsPerLeaf = 0;
    QTest::newRow("no NIC ports") << noPorts << quint64(2) << quint64(8) << S("topology.nics_per_leaf")
                                  << S("a leaf needs at least one NIC port");
}

void TestNetwork::validation()
{
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, nodes);
    QFETCH(quint64, gpusPerNode);
    QFETCH(QString, path);
    QFETCH(QString, message);
    const Cluster cluster{nodes, gpusPerNode};
    const std::vector<tw::Error> errors = validate(spec, cluster);
    if (path.isEmpty() && message.isEmpty()) {
        QVERIFY(errors.empty());
        QVERIFY(build(spec, cluster).ok());
        return;
    }
    QVERIFY(!errors.empty());
    QCOMPARE(QString::fromStdString(errors.front().where.jsonPath), path);
    QCOMPARE(QString::fromStdString(errors.front().message), message);
    const auto built = build(spec, cluster);
    QVERIFY(!built.ok());
    QCOMPARE(built.error(), errors.front());
}

void TestNetwork::jsonRoundTrip_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::newRow("default") << TopologySpec{};
    TopologySpec ls = leafSpine(NicPlacement::PerNode, 16, 2.5, IntraNode::Pcie);
    ls.nicProtocol = Protocol::RoCEv2;
    ls.nicBandwidth = 100e9 / 8;
    ls.spines = 7;
    ls.gpuDirectP2P = false;
    ls.pcie = Protocol::PcieGen5;
    ls.nvlink = Protocol::NvLink3;
    ls.gpusPerPcieSwitch = 0;
    QTest::newRow("leaf-spine, every field changed") << ls;
    TopologySpec tb;
    tb.kind = TopologyKind::PaperTestbed;
    QTest::newRow("testbed") << tb;
    TopologySpec explicitNv;
    explicitNv.nvlink = Protocol::NvLink4;
    explicitNv.nicBandwidth = 200e9 / 8;
    QTest::newRow("explicit NVLink and NIC rate") << explicitNv;
}

void TestNetwork::jsonRoundTrip()
{
    QFETCH(TopologySpec, spec);
    const std::string json = topologyToJson(spec);
    auto back = topologyFromJson(json);
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
    QVERIFY(back.value() == spec);
    QCOMPARE(topologyToJson(back.value()), json);
    // Missing keys keep their defaults.
    auto partial = topologyFromJson(R"({"kind": "pcie-server"})");
    QVERIFY(partial.ok());
    TopologySpec expected;
    expected.kind = TopologyKind::PcieServer;
    QVERIFY(partial.value() == expected);
}

void TestNetwork::jsonErrors_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("unknown kind") << S(R"({"kind": "mesh"})")
                                  << S("topology.kind: unknown kind \"mesh\" (expected pcie-server, nvswitch-node, "
                                     "leaf-spine, paper-testbed, three-tier)");
    QTest::newRow("unknown protocol") << S(R"({"nic_protocol": "ib-xdr"})")
                                      << S("topology.nic_protocol: unknown protocol \"ib-xdr\" (expected pcie-gen3, "
                                         "pcie-gen4, pcie-gen5, nvlink3, nvlink4, ib-hdr, ib-ndr, rocev2, ethernet-10g, "
                                         "ethernet-25g, ethernet-100g, ethernet-400g, tcp-loopback, memory-bus)");
    QTest::newRow("unknown key") << S(R"({"kind": "leaf-spine", "radix": 64})")
                                 << S("topology.radix: unknown key (expected kind, gpus_per_pcie_switch, gpudirect_p2p, "
                                    "pcie, nvlink, intra_node, nic_placement, nic_protocol, nic_bandwidth, "
                                    "oversubscription, nics_per_leaf, spines, gpus_per_pod, leaves_per_pod, "
                                    "spines_per_pod, core_switches, core_oversubscription, rail_optimized, "
                                    "leaf_spine_bandwidth, spine_core_bandwidth)");
    QTest::newRow("negative count") << S(R"({"spines": -1})") << S("topology.spines: expected a whole number ≥ 0, got -1");
    QTest::newRow("fractional count") << S(R"({"nics_per_leaf": 2.5})")
                                      << S("topology.nics_per_leaf: expected a whole number ≥ 0, got 2.5");
    QTest::newRow("bool") << S(R"({"gpudirect_p2p": 1})") << S("topology.gpudirect_p2p: expected true or false, got number");
    QTest::newRow("number") << S(R"({"oversubscription": "2:1"})")
                            << S("topology.oversubscription: expected a number, got string");
    QTest::newRow("placement") << S(R"({"nic_placement": "per-rack"})")
                               << S("topology.nic_placement: unknown NIC placement \"per-rack\" (expected per-gpu, per-node)");
    QTest::newRow("not an object") << S("[1, 2]") << S("topology: expected an object, got array");
    QTest::newRow("NIC rate word") << S(R"({"nic_bandwidth": "fast"})")
                                   << S("topology.nic_bandwidth: expected a rate with its unit (400Gbps, 50GB/s), a number of "
                                        "bytes per second or \"auto\": 'fast' is not a bandwidth; expected a number and a "
                                        "unit such as 10Gbps, 100Gb/s or 25GB/s");
    QTest::newRow("NIC rate type") << S(R"({"nic_bandwidth": [1]})")
                                   << S("topology.nic_bandwidth: expected a number of bytes per second, a rate with its unit "
                                        "or \"auto\", got array");
    QTest::newRow("NVLink name") << S(R"({"nvlink": "nvlink5"})")
                                 << S("topology.nvlink: unknown protocol \"nvlink5\" (expected auto, pcie-gen3, pcie-gen4, "
                                    "pcie-gen5, nvlink3, nvlink4, ib-hdr, ib-ndr, rocev2, ethernet-10g, ethernet-25g, "
                                    "ethernet-100g, ethernet-400g, tcp-loopback, memory-bus)");
    QTest::newRow("not JSON") << S("{\"kind\": ") << S("topology: not valid JSON");
}

void TestNetwork::jsonErrors()
{
    QFETCH(QString, json);
    auto r = topologyFromJson(json.toStdString());
    QVERIFY(!r.ok());
    QTEST(QString::fromStdString(r.error().toString()), "error");
}

void TestNetwork::autoNicRateFollowsProtocol()
{
    // "auto" (the default, and the JSON key left out) is the protocol's nominal rate: docs/model.md
    // "Stage 5", 10 Gb/s Ethernet = 1.25e9 B/s, InfiniBand HDR 200 Gb/s = 25e9 B/s.
    auto spec = topologyFromJson(R"({"kind": "leaf-spine", "nic_protocol": "ethernet-10g"})");
    QVERIFY(spec.ok());
    QVERIFY(!spec->nicBandwidth);
    QVERIFY(!spec->nvlink);
    const Topology t = make(spec.value(), Cluster{2, 8});
    QCOMPARE(t.link(*t.findLink("n0.nic0-leaf0")).bandwidth, 1.25e9);
    auto hdr = topologyFromJson(R"({"kind": "leaf-spine", "nic_protocol": "ib-hdr", "nic_bandwidth": "auto", "nvlink": "auto"})");
    QVERIFY(hdr.ok());
    QCOMPARE(make(hdr.value(), Cluster{2, 8}).link(*make(hdr.value(), Cluster{2, 8}).findLink("n1.nic3-leaf3")).bandwidth, 25e9);
    // Written back as "auto".
    const std::string json = topologyToJson(hdr.value());
    QVERIFY(json.find(R"("nic_bandwidth":"auto")") != std::string::npos);
    QVERIFY(json.find(R"("nvlink":"auto")") != std::string::npos);
    // An explicit rate is kept.
    auto slow = topologyFromJson(R"({"kind": "leaf-spine", "nic_protocol": "ib-hdr", "nic_bandwidth": 1.25e10})");
    QVERIFY(slow.ok());
    QCOMPARE(make(slow.value(), Cluster{2, 8}).link(*make(slow.value(), Cluster{2, 8}).findLink("n0.nic0-leaf0")).bandwidth, 12.5e9);
}

void TestNetwork::autoNvLinkFollowsGpu_data()
{
    QTest::addColumn<QString>("gpu");
    QTest::addColumn<QString>("nvlink"); // empty: auto
    QTest::addColumn<double>("rate");
    // docs/model.md §5: NVLink 3 (A100) 300 GB/s, NVLink 4 (H100) 450 GB/s per direction per GPU.
    QTest::newRow("A100 auto") << "a100-80gb" << "" << 300e9;
    QTest::newRow("A100 40 GB auto") << "a100-40gb" << "" << 300e9;
    QTest::newRow("H100 auto") << "h100-sxm" << "" << 450e9;
    QTest::newRow("H200 auto") << "h200" << "" << 450e9;
    QTest::newRow("A100, NVLink 4 given") << "a100-80gb" << "nvlink4" << 450e9;
    QTest::newRow("H100, NVLink 3 given") << "h100-sxm" << "nvlink3" << 300e9;
}

void TestNetwork::autoNvLinkFollowsGpu()
{
    QFETCH(QString, gpu);
    QFETCH(QString, nvlink);
    QFETCH(double, rate);
    tw::scenario::Scenario s = tw::scenario::preset("paper-dp").value(); // one NVSwitch node of 8 GPUs
    s.hardware.gpu = gpu.toStdString();
    if (!nvlink.isEmpty())
        s.topology.nvlink = protocolFromString(nvlink.toStdString());
    const TopologySpec resolved = tw::scenario::resolvedTopology(s);
    QVERIFY(resolved.nvlink);
    QCOMPARE(nominalBandwidth(*resolved.nvlink), rate);
    auto d = tw::scenario::derive(s);
    QVERIFY(d.ok());
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().toString().c_str());
    const Topology& t = *net.value()->topology;
    QCOMPARE(t.link(*t.findLink("n0.gpu0-nvswitch")).bandwidth, rate);
}

void TestNetwork::namesRoundTrip()
{
    // Every value of the fabric's enums (counted from their declarations in topology.h: 14 protocols,
    // 8 node kinds, 5 topology kinds) has its own name, read back to the same value.
    std::set<std::string_view> protocolNames;
    for (int i = 0; i < 14; ++i) {
        const auto p = static_cast<Protocol>(i);
        QVERIFY(toString(p) != "?");
        QVERIFY(protocolNames.insert(toString(p)).second);
        QCOMPARE(protocolFromString(toString(p)), std::optional<Protocol>(p));
        QVERIFY(!displayName(p).empty());
    }
    std::set<std::string_view> nodeNames;
    for (int i = 0; i < 8; ++i)
        QVERIFY(nodeNames.insert(toString(static_cast<NodeKind>(i))).second && !nodeNames.contains("?"));
    for (int i = 0; i < 5; ++i) {
        const auto k = static_cast<TopologyKind>(i);
        QCOMPARE(topologyKindFromString(toString(k)), std::optional<TopologyKind>(k));
    }
    // The names the shipped presets write (resources/presets/*.json) and the tables show.
    QCOMPARE(toString(Protocol::InfinibandNdr), std::string_view("ib-ndr"));
    QCOMPARE(toString(Protocol::Ethernet400G), std::string_view("ethernet-400g"));
    QCOMPARE(displayName(Protocol::NvLink4), std::string_view("NVLink 4"));
    QCOMPARE(displayName(Protocol::PcieGen4), std::string_view("PCIe Gen4 x16"));
    QCOMPARE(toString(NodeKind::LeafSwitch), std::string_view("leaf"));
    QCOMPARE(toString(TopologyKind::LeafSpine), std::string_view("leaf-spine"));
    QCOMPARE(intraNodeFromString("nvswitch"), std::optional<IntraNode>(IntraNode::NvSwitch));
    QCOMPARE(toString(NicPlacement::PerGpu), std::string_view("per-gpu"));
    QCOMPARE(nicPlacementFromString("per-node"), std::optional<NicPlacement>(NicPlacement::PerNode));
    QVERIFY(!protocolFromString("PCIe Gen4 x16")); // the display name is not a JSON name
    QVERIFY(!topologyKindFromString("Leaf-Spine"));
}

QTEST_APPLESS_MAIN(TestNetwork)
#include "tst_network.moc"
