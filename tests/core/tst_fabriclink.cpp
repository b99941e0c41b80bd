// Issue #17, stage 4: the α–β link taken from the fabric of a call's group (collective/fabriclink.h).
// Every expected value is derived by hand in the comments from NCCL 2.30.7's figures (src/graph/topo.h
// per-NVLink rates, src/graph/tuning.cc hwLatencies @ NVIDIA/nccl 5067397c) and the channel counts of
// docs/nccl.md "The graphs".

#include "collective/binding.h"
#include "collective/fabriclink.h"
#include "scenario/presets.h"
#include "scenario/scenario.h"

#include <QTest>

#include <cmath>

using tw::collective::FabricLink;

namespace {

// NCCL's view of a group of `nodes` × `perNode` GPUs of the preset's cluster (as stage 4 binds a call).
FabricLink linkOf(const std::string& presetName, int nodes, int perNode)
{
    auto p = tw::scenario::preset(presetName);
    if (!p)
        qFatal("preset %s: %s", presetName.c_str(), p.error().toString().c_str());
    const tw::scenario::Scenario& s = p.value();
    const tw::collective::NcclFabric fabric{s.hardware.gpu, tw::scenario::resolvedTopology(s)};
    auto g = tw::collective::groupSystem(fabric, s.hardware.cluster(), nodes, perNode);
    if (!g)
        qFatal("group: %s", g.error().toString().c_str());
    return tw::collective::linkFromFabric(g.value());
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

} // namespace

class TestFabricLink : public QObject {
    Q_OBJECT
private slots:
    void fromTheGroupsFabric_data();
    void fromTheGroupsFabric();
    void whySaysWhere();
    void papersExample();
};

void TestFabricLink::fromTheGroupsFabric_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("perNode");
    QTest::addColumn<double>("alpha");     // s
    QTest::addColumn<double>("bandwidth"); // B/s
    // One DGX A100: NVLink 12 links × 20 GB/s (topo.h SM80_NVLINK_BW) = 240 GB/s per GPU; α = the ring's
    // NVLink hop with the Simple protocol, hwLatencies[NVLINK][RING][SIMPLE] = 3.4 µs.
    QTest::newRow("dgx-a100, 8 GPUs") << "dgx-a100" << 1 << 8 << 3.4e-6 << 240e9;
    // A TP group of 4 inside the node: the same per-GPU link.
    QTest::newRow("dgx-a100, 4 GPUs") << "dgx-a100" << 1 << 4 << 3.4e-6 << 240e9;
    // One DGX H100: 18 × 20.6 GB/s (SM90_NVLINK_BW) = 370.8 GB/s.
    QTest::newRow("dgx-h100, 8 GPUs") << "dgx-h100" << 1 << 8 << 3.4e-6 << 370.8e9;
    // Two DGX A100 nodes of the 4-node cluster, 8 GPUs each: the ring runs 8 channels, one per HDR rail, at
    // min(PCIe Gen4 x16 24 GB/s, HDR 200 Gb/s = 25 GB/s) = 24 GB/s each → 8 × 24 = 192 GB/s < NVLink's 240;
    // α = the network hop, hwLatencies[NET][RING][SIMPLE] = 14 µs.
    QTest::newRow("2 × dgx-a100") << "dgx-a100-4node" << 2 << 8 << 14e-6 << 192e9;
    QTest::newRow("4 × dgx-a100") << "dgx-a100-4node" << 4 << 8 << 14e-6 << 192e9;
    // Four DGX H100 nodes: 8 channels × 48 GB/s (min(PCIe Gen5 48, NDR 50)) = 384 GB/s, above the GPU's
    // NVLink 370.8 GB/s, which caps it.
    QTest::newRow("4 × dgx-h100") << "dgx-h100-4node" << 4 << 8 << 14e-6 << 370.8e9;
    // The paper's testbed: 7 servers with one GPU and one 10 GbE NIC (1.25 GB/s): one channel at the
    // first speed ≤ 1.25 of NCCL's array, 1.2 GB/s.
    QTest::newRow("paper-testbed") << "paper-testbed" << 7 << 1 << 14e-6 << 1.2e9;
}

void TestFabricLink::fromTheGroupsFabric()
{
    QFETCH(QString, preset);
    QFETCH(int, nodes);
    QFETCH(int, perNode);
    QFETCH(double, alpha);
    QFETCH(double, bandwidth);
    const FabricLink l = linkOf(preset.toStdString(), nodes, perNode);
    QVERIFY2(near(l.link.alphaSeconds, alpha), qPrintable(QString::number(l.link.alphaSeconds)));
    QVERIFY2(near(l.link.bandwidth, bandwidth), qPrintable(QString::number(l.link.bandwidth)));
}

void TestFabricLink::whySaysWhere()
{
    const FabricLink one = linkOf("dgx-a100", 1, 8);
    QVERIFY2(one.why.find("NVLink 12 × 20 GB/s = 240 GB/s") != std::string::npos, one.why.c_str());
    QVERIFY2(one.why.find("8.4 µs once per call") != std::string::npos, one.why.c_str()); // baseLatencies[RING][SIMPLE]
    const FabricLink two = linkOf("dgx-a100-4node", 2, 8);
    QVERIFY2(two.why.find("8 ring channels × 24 GB/s") != std::string::npos, two.why.c_str());
    QVERIFY2(two.why.find("8 NICs per node × 25 GB/s") != std::string::npos, two.why.c_str());
    const FabricLink capped = linkOf("dgx-h100-4node", 4, 8);
    QVERIFY2(capped.why.find("capped by NVLink 18 × 20.6 GB/s") != std::string::npos, capped.why.c_str());
}

void TestFabricLink::papersExample()
{
    // The paper's testbed link, the program's old default: 10 µs and 10 Gb/s = 1.25e9 B/s.
    QCOMPARE(tw::collective::papersExampleLink().alphaSeconds, 10e-6);
    QCOMPARE(tw::collective::papersExampleLink().bandwidth, 1.25e9);
}

QTEST_APPLESS_MAIN(TestFabricLink)
#include "tst_fabriclink.moc"
