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
    // A preset of many nodes without "topology" (schema 2) is a leaf–spine fabric.
    QVERIFY(preset("llama2-7b").topology.kind == TopologyKind::LeafSpine);
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

QTEST_APPLESS_MAIN(TestNetworkStage)
#include "tst_network_stage.moc"
