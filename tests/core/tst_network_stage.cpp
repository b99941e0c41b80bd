// The scenario's fabric and stage 5's link loads through the scenario: schema 4 "topology", the
// defaults that follow the cluster, and the net.* figures on hand-checkable cases.

#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <QTest>

using tw::network::TopologyKind;

namespace {

tw::scenario::Scenario preset(const char* name)
{
    return tw::scenario::preset(name).value();
}

} // namespace

class TestNetworkStage : public QObject {
    Q_OBJECT

private slots:
    void topologyRoundTripAndDefaults();
    void dataParallelAcrossTwoNodes();
    void oneServerTopologyRefusesTwoNodes();
    void autoNicRateFollowsTheServers();
    void ratesWithTheirUnits();
    void autoPcieFollowsTheGpu();
    void spinesThatCarryNothingSaySo();
};

void TestNetworkStage::topologyRoundTripAndDefaults()
{
    auto s = preset("paper-dp"); // one node: the default NVSwitch server
    QVERIFY(s.topology.kind == TopologyKind::NvSwitchNode);
    s.topology.kind = TopologyKind::PcieServer;
    s.topology.gpuDirectP2P = false;
    const auto back = tw::scenario::loadScenario(tw::scenario::scenarioToJson(s), "x.json");
    QVERIFY(back.errors.empty());
    QVERIFY(*back.scenario == s);
    // A file of many nodes without "topology" (schema 2) runs on a leaf–spine fabric; every preset names
    // its own (issue #41: no preset runs on an unnamed default).
    const auto many = tw::scenario::loadScenario(R"({"schema_version": 2, "hardware": {"nodes": 8, "gpus_per_node": 8}})", "m.json");
    QVERIFY(many.errors.empty());
    QVERIFY(many.scenario->topology.kind == TopologyKind::LeafSpine);
    for (const std::string& name : tw::scenario::presetNames()) {
        const std::string text(tw::scenario::presetJson(name));
        QVERIFY2(text.find("\"topology\"") != std::string::npos, name.c_str());
    }
    // Errors inside "topology" carry their path.
    const auto bad = tw::scenario::loadScenario(R"({"schema_version": 4, "topology": {"kind": "mesh"}})", "b.json");
    QCOMPARE(bad.errors.size(), std::size_t{1});
    QCOMPARE(bad.errors[0].where.jsonPath, std::string("topology.kind"));
    // Growing the cluster turns a one-server fabric into a leaf–spine of such servers.
    auto grow = preset("paper-dp");
    grow.hardware.nodes = 2;
    tw::scenario::fitPlanToCluster(grow);
    QVERIFY(grow.topology.kind == TopologyKind::LeafSpine);
    QVERIFY(grow.topology.intraNode == tw::network::IntraNode::NvSwitch);
}

void TestNetworkStage::dataParallelAcrossTwoNodes()
{
    // Example 5.1's gradient AllReduce (M = 248,879,616 B) as a ring over 8 GPUs on 2 servers of 4, one
    // NIC per server: the ring's edges 3 → 4 and 7 → 0 cross between the servers, one per direction of
    // travel, so exactly one ring edge leaves each NIC. Each ring edge carries 2(N−1)/N·M =
    // 14/8 · 248,879,616 = 435,539,328 B per step, so 2 × 435,539,328 = 871,078,656 B enter the network.
    auto s = preset("paper-dp");
    s.hardware.nodes = 2;
    s.hardware.gpusPerNode = 4;
    tw::scenario::fitPlanToCluster(s);
    s.topology.nicPlacement = tw::network::NicPlacement::PerNode;
    auto d = tw::scenario::derive(s);
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().toString().c_str());
    const tw::FigureSet& f = net.value()->figures;
    QCOMPARE(f.valueOf("net.internode_bytes.dp"), 871078656.0);
    QCOMPARE(f.valueOf("net.internode_bytes"), 871078656.0);
    QVERIFY(f.valueOf("net.overhead_share") > 0); // packet headers on every link
    QVERIFY(f.valueOf("net.busiest_link_bytes") > 0);
    // Each NIC's uplink carries one ring edge, all of it the DP AllReduce (the tooltips' breakdown by
    // operation), and on every link the breakdown by operation adds up to the strategy's bytes.
    const tw::network::Topology& t = *net.value()->topology;
    const auto allReduce = static_cast<std::size_t>(tw::collective::Op::AllReduce);
    int uplinks = 0;
    for (tw::network::LinkId l = 0; l < t.links().size(); ++l) {
        const tw::network::LinkLoad& load = net.value()->loads[l];
        for (int st = 0; st < 4; ++st) {
            double sum = 0;
            for (int op = 0; op < tw::network::kLinkOps; ++op)
                sum += load.opBytes[st][op];
            QCOMPARE(sum, load.payloadBytes[st]);
        }
        if (t.node(t.link(l).from).kind == tw::network::NodeKind::Nic
            && t.node(t.link(l).to).kind == tw::network::NodeKind::LeafSwitch) {
            ++uplinks;
            QCOMPARE(load.opBytes[0][allReduce], 435539328.0);
        }
    }
    QCOMPARE(uplinks, 2);
}

void TestNetworkStage::oneServerTopologyRefusesTwoNodes()
{
    auto s = preset("paper-dp");
    s.hardware.nodes = 2;
    s.hardware.gpusPerNode = 4;
    s.parallel.dp = 8;
    s.topology.kind = TopologyKind::NvSwitchNode; // kept by hand: one server cannot hold two nodes
    auto d = tw::scenario::derive(s);
    QVERIFY(d.ok()); // stages 1–4 do not depend on the fabric
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY(!net.ok());
    QCOMPARE(net.error().where.jsonPath, std::string("topology.kind"));
}

// "auto" NIC rates by the server generation (issue #41), by the vendors' datasheets: DGX A100 ships 8
// ConnectX-6 at 200 Gb/s = 25 GB/s, DGX H100 8 ConnectX-7 at 400 Gb/s = 50 GB/s; RoCEv2 on any other GPU
// 100 Gb/s = 12.5 GB/s; a protocol that names its rate (NDR) runs at it; an explicit rate is kept. The
// reason is a figure of stage 5 and names what was picked.
void TestNetworkStage::autoNicRateFollowsTheServers()
{
    auto s = preset("dgx-h100-4node");
    s.topology.nicProtocol = tw::network::Protocol::RoCEv2;
    s.topology.nicBandwidth.reset();
    auto rate = tw::scenario::nicRate(s);
    QCOMPARE(rate.bytesPerSecond, 50e9);
    QVERIFY2(rate.why.find("400 Gb/s") != std::string::npos && rate.why.find("ConnectX-7") != std::string::npos,
             rate.why.c_str());
    QCOMPARE(*tw::scenario::resolvedTopology(s).nicBandwidth, 50e9);
    s.hardware.gpu = "a100-80gb";
    QCOMPARE(tw::scenario::nicRate(s).bytesPerSecond, 25e9);
    s.hardware.gpu = "l40s";
    rate = tw::scenario::nicRate(s);
    QCOMPARE(rate.bytesPerSecond, 12.5e9);
    QVERIFY2(rate.why.find("no server generation") != std::string::npos, rate.why.c_str());
    s.topology.nicProtocol = tw::network::Protocol::InfinibandNdr;
    QCOMPARE(tw::scenario::nicRate(s).bytesPerSecond, 50e9);
    s.topology.nicBandwidth = 25e9;
    rate = tw::scenario::nicRate(s);
    QCOMPARE(rate.bytesPerSecond, 25e9);
    QVERIFY2(rate.why.rfind("input", 0) == 0, rate.why.c_str());
    // Stage 5 says what it picked.
    s = preset("dgx-h100-4node");
    s.topology.nicProtocol = tw::network::Protocol::RoCEv2;
    s.topology.nicBandwidth.reset();
    auto d = tw::scenario::derive(s);
    QVERIFY(d.ok());
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY(net.ok());
    const tw::Figure* fig = net.value()->figures.find("net.nic_bandwidth");
    QVERIFY(fig);
    QCOMPARE(fig->value, 50e9);
    QVERIFY2(fig->formula.find("ConnectX-7") != std::string::npos, fig->formula.c_str());
}

// "auto" PCIe by the GPU's host interface (its datasheet): V100 SXM2 Gen3, A100 Gen4, H100 SXM Gen5; an
// unknown (custom) GPU Gen4 and says so; an explicit generation is kept. A file without "pcie" on H100s
// gets Gen5 links to its NICs (as a DGX H100), not the Gen4 x16 (32 GB/s) that would cap an NDR port's
// 50 GB/s.
void TestNetworkStage::autoPcieFollowsTheGpu()
{
    using tw::network::Protocol;
    const auto loaded = tw::scenario::loadScenario(
        R"({"schema_version": 5, "hardware": {"gpu": "h100-sxm", "nodes": 2}, "topology": {"kind": "leaf-spine"}})", "p.json");
    QVERIFY2(loaded.errors.empty(), loaded.errors.empty() ? "" : loaded.errors[0].toString().c_str());
    auto s = *loaded.scenario;
    QVERIFY(!s.topology.pcie); // absent = auto
    QCOMPARE(int(*tw::scenario::resolvedTopology(s).pcie), int(Protocol::PcieGen5));
    QVERIFY2(tw::scenario::pcieChoice(s).why.find("H100") != std::string::npos, tw::scenario::pcieChoice(s).why.c_str());
    for (const auto& [gpu, generation] : {std::pair{"v100-32gb", Protocol::PcieGen3}, std::pair{"a100-80gb", Protocol::PcieGen4},
                                          std::pair{"h200", Protocol::PcieGen5}, std::pair{"mi300x", Protocol::PcieGen5}}) {
        s.hardware.gpu = gpu;
        QCOMPARE(int(tw::scenario::pcieChoice(s).generation), int(generation));
    }
    s.hardware.gpu = "custom";
    QCOMPARE(int(tw::scenario::pcieChoice(s).generation), int(Protocol::PcieGen4));
    QVERIFY(tw::scenario::pcieChoice(s).why.find("give topology.pcie") != std::string::npos);
    s.topology.pcie = Protocol::PcieGen3;
    QCOMPARE(int(*tw::scenario::resolvedTopology(s).pcie), int(Protocol::PcieGen3));
    // The fabric built from the auto H100 file: its GPU-NIC PCIe links are Gen5.
    s = *loaded.scenario;
    auto d = tw::scenario::derive(s);
    QVERIFY(d.ok());
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY(net.ok());
    bool sawPcie = false;
    for (const tw::network::Link& l : net.value()->topology->links())
        if (l.protocol == Protocol::PcieGen3 || l.protocol == Protocol::PcieGen4 || l.protocol == Protocol::PcieGen5) {
            QCOMPARE(int(l.protocol), int(Protocol::PcieGen5));
            sawPcie = true;
        }
    QVERIFY(sawPcie);
    // And it writes back as "auto".
    QVERIFY(tw::scenario::scenarioToJson(s).find(R"("pcie": "auto")") != std::string::npos);
}

// A rate in the file may carry its unit: lowercase b bits, uppercase B bytes (400 Gb/s = 50·10⁹ B/s).
void TestNetworkStage::ratesWithTheirUnits()
{
    for (const auto& [text, bytes] : {std::pair{"400Gbps", 50e9}, std::pair{"400Gb/s", 50e9}, std::pair{"12.5GB/s", 12.5e9}}) {
        const std::string doc = std::string(R"({"schema_version": 4, "topology": {"kind": "leaf-spine", "nic_bandwidth": ")")
                                + text + R"("}})";
        const auto loaded = tw::scenario::loadScenario(doc, "u.json");
        QVERIFY2(loaded.errors.empty(), loaded.errors.empty() ? "" : loaded.errors[0].toString().c_str());
        QCOMPARE(*loaded.scenario->topology.nicBandwidth, bytes);
    }
    const auto bad = tw::scenario::loadScenario(R"({"schema_version": 4, "topology": {"nic_bandwidth": "400 furlongs"}})", "b.json");
    QCOMPARE(bad.errors.size(), std::size_t{1});
    QCOMPARE(bad.errors[0].where.jsonPath, std::string("topology.nic_bandwidth"));
    QVERIFY2(bad.errors[0].message.find("400Gbps, 50GB/s") != std::string::npos, bad.errors[0].message.c_str());
}

// dgx-h100-4node rail-optimized with 8 NIC ports per leaf: 4 rail leaves under spines, and NCCL's rings
// run rail by rail (GPU k of every server on the rail-k leaf), so no flow climbs to a spine: a 1:2
// oversubscription changes nothing, and stage 5 says so. With one NIC per server and one per leaf, the
// data-parallel traffic between the servers has to climb to the spines.
void TestNetworkStage::spinesThatCarryNothingSaySo()
{
    auto s = preset("dgx-h100-4node");
    s.topology.nicsPerLeaf = 8;
    s.topology.oversubscription = 2;
    auto d = tw::scenario::derive(s);
    QVERIFY(d.ok());
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY(net.ok());
    const tw::Figure* spine = net.value()->figures.find("net.spine_bytes");
    QVERIFY(spine);
    QCOMPARE(spine->value, 0.0);
    QVERIFY2(spine->formula.find("1:2 oversubscription of the spines changes no traffic") != std::string::npos,
             spine->formula.c_str());
    s.topology.nicPlacement = tw::network::NicPlacement::PerNode;
    s.topology.nicsPerLeaf = 1;
    d = tw::scenario::derive(s);
    QVERIFY(d.ok());
    net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY(net.ok());
    QVERIFY(net.value()->figures.valueOf("net.spine_bytes") > 0);
}

QTEST_APPLESS_MAIN(TestNetworkStage)
#include "tst_network_stage.moc"
