// Issue #17: NCCL's model (collective/nccl.h, ncclgraph.h) — names, NCCL's view of the hardware, the
// channels of the topology search on one DGX node and on 2 / 4 rail-optimized nodes (which NIC each ring
// uses, every rail equally loaded), NVLS bytes per GPU link, auto's algorithm/protocol switches at the sizes
// NCCL's constants predict, refusals of pairs NCCL lacks (speed: tests/bench/bench_busbw). Every expected value is derived by
// hand in the comments from NCCL 2.30.7's constants (src/graph/tuning.cc, search.cc, topo.h @ 5067397c).

#include "collective/nccl.h"
#include "collective/ncclgraph.h"
#include "scenario/presets.h"
#include "scenario/scenario.h"

#include <QTest>

#include <cmath>
#include <set>
#include <string>

using namespace tw::nccl;
using tw::collective::Op;

Q_DECLARE_METATYPE(tw::collective::Op)


namespace {

struct Model {
    System system;
    Graphs graphs;
    Tuning tuning;
};

Model modelOf(const std::string& presetName, std::uint64_t nodes = 0)
{
    auto p = tw::scenario::preset(presetName);
    if (!p)
        qFatal("preset %s: %s", presetName.c_str(), p.error().toString().c_str());
    tw::scenario::Scenario s = p.value();
    if (nodes)
        s.hardware.nodes = nodes;
    auto sys = systemFor(s.hardware.gpu, tw::scenario::resolvedTopology(s), s.hardware.cluster());
    if (!sys)
        qFatal("system: %s", sys.error().toString().c_str());
    Model m;
    m.system = sys.value();
    m.graphs = searchGraphs(m.system);
    m.tuning = tuneModel(m.system, m.graphs);
    return m;
}

Prediction predictOrDie(const Model& m, Op op, double bytes)
{
    Request q;
    q.op = op;
    q.bytes = bytes;
    auto r = predict(m.tuning, m.system, m.graphs, q);
    if (!r)
        qFatal("predict: %s", r.error().toString().c_str());
    return r.value();
}

} // namespace

class TestNccl : public QObject {
    Q_OBJECT

private slots:
    void names();
    void hardwareView();
    void systemOfPresets_data();
    void systemOfPresets();
    void ringGraphOneNode_data();
    void ringGraphOneNode();
    void nvlsGraph();
    void ringChannelsOnRails_data();
    void ringChannelsOnRails();
    void railsEquallyLoaded();
    void nvlsBytesPerLink();
    void doubleBinaryTree();
    void autoOneNodeA100_data();
    void autoOneNodeA100();
    void autoFourNodesA100_data();
    void autoFourNodesA100();
    void broadcastLatency();
    void busbwOfOneRow();
    void nvlsBusbwAboveLink();
    void unsupportedPairs_data();
    void unsupportedPairs();
    void singleNicPaths();
};

void TestNccl::names()
{
    for (int a = 0; a < kAlgorithmCount; ++a) {
        const auto alg = static_cast<Algorithm>(a);
        QVERIFY(algorithmFromString(toString(alg)) == std::optional<Algorithm>(alg));
    }
    for (int p = 0; p < kProtocolCount; ++p) {
        const auto proto = static_cast<Protocol>(p);
        QVERIFY(protocolFromString(toString(proto)) == std::optional<Protocol>(proto));
    }
    QCOMPARE(toString(Algorithm::NvlsTree), std::string_view("nvls-tree"));
    QCOMPARE(toString(Algorithm::CollNetDirect), std::string_view("collnet-direct"));
    QCOMPARE(toString(Protocol::LL128), std::string_view("ll128"));
    QVERIFY(!algorithmFromString("flat-ring"));
    QVERIFY(!protocolFromString("LL"));
    // tuning.cc: sm ≥ 100 Blackwell, ≥ 90 Hopper, ≥ 80 Ampere, else Volta.
    QVERIFY(compCapOf(70) == CompCap::Volta);
    QVERIFY(compCapOf(86) == CompCap::Ampere);
    QVERIFY(compCapOf(90) == CompCap::Hopper);
    QVERIFY(compCapOf(100) == CompCap::Blackwell);
}

void TestNccl::hardwareView()
{
    // topo.cc: PCIe width·speed/80, speed 60/120/240 for Gen3/4/5 → x16: 12, 24, 48 GB/s.
    QCOMPARE(pcieBwGBs(3), 12.0);
    QCOMPARE(pcieBwGBs(4), 24.0);
    QCOMPARE(pcieBwGBs(5), 48.0);
    // NIC: Mb/s / 8000; HDR 200 Gb/s = 25e9 B/s → 200,000 Mb/s → 25 GB/s; 10 GbE → 1.25.
    QCOMPARE(nicBwGBs(25e9), 25.0);
    QCOMPARE(nicBwGBs(1.25e9), 1.25);
    // A100: 12 links × 20 = 240; H100: 18 × 20.6 = 370.8 GB/s (topo.h SM80/SM90_NVLINK_BW).
    const GpuView a100 = gpuView("a100-80gb");
    QCOMPARE(a100.nvlinks * a100.nvlinkBw, 240.0);
    QVERIFY(!a100.nvls);
    const GpuView h100 = gpuView("h100-sxm");
    QVERIFY(std::abs(h100.nvlinks * h100.nvlinkBw - 370.8) < 1e-9);
    QVERIFY(h100.nvls);
    QCOMPARE(gpuView("h100-pcie").nvlinks, 0);
    // Unknown or custom: the conservative default, no NVLS, no NVLink of its own.
    QVERIFY(gpuView("custom").id.empty());
    QVERIFY(!gpuView("custom").nvls);
    QCOMPARE(gpuView("custom").nvlinks, 0);
}

void TestNccl::systemOfPresets_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<double>("intraBw");
    QTest::addColumn<bool>("nvls");
    QTest::addColumn<int>("nics");
    QTest::addColumn<double>("nicBw");
    QTest::addColumn<double>("pciBw");
    QTest::newRow("dgx-a100") << "dgx-a100" << 240.0 << false << 0 << 0.0 << 24.0;
    QTest::newRow("dgx-h100") << "dgx-h100" << 370.8 << true << 0 << 0.0 << 48.0;
    QTest::newRow("dgx-a100-4node") << "dgx-a100-4node" << 240.0 << false << 8 << 25.0 << 24.0;
    QTest::newRow("dgx-h100-4node") << "dgx-h100-4node" << 370.8 << true << 8 << 50.0 << 48.0;
    // Testbed: one GPU per server on PCIe Gen4, one 10 GbE NIC = 1.25 GB/s.
    QTest::newRow("paper-testbed") << "paper-testbed" << 24.0 << false << 1 << 1.25 << 24.0;
}

void TestNccl::systemOfPresets()
{
    QFETCH(QString, preset);
    QFETCH(double, intraBw);
    QFETCH(bool, nvls);
    QFETCH(int, nics);
    QFETCH(double, nicBw);
    QFETCH(double, pciBw);
    const Model m = modelOf(preset.toStdString());
    QVERIFY(std::abs(m.system.intraBw - intraBw) < 1e-9);
    QCOMPARE(m.system.nvls, nvls);
    QCOMPARE(m.system.nicsPerNode, nics);
    QCOMPARE(m.system.nicBw, nicBw);
    QCOMPARE(m.system.pciBw, pciBw);
}

void TestNccl::ringGraphOneNode_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<int>("channels");
    QTest::addColumn<double>("bw");
    // A100, speedArrayIntra {40, 30, 20, …}: at 40 GB/s floor(240/40) = 6 channels, 6·40 = 240 ≥ totalBw
    // 240 → done. Dup (bwIntra 40 ≥ 25, sm80 not > 80) → 12 channels at 40/2 = 20. Pass 2: 30 fits only 8
    // < 12, so 12 × 20 stays.
    QTest::newRow("dgx-a100") << "dgx-a100" << 12 << 20.0;
    // H100, sm90SpeedArrayIntra {60, 50, 40, 30, 24, 20 …}: 60 → floor(370.8/60) = 6 → 360 < 370.8;
    // 50 → 7 → 350; 40 → 9 → 360 (not better); 30 → 12 → 360; 24 → 15 → 360; 20/60 < .49 stops. Best
    // 6 × 60; dup (sm90, 60 ≥ 50) → 12 × 30; pass 2: 40 fits 9 < 12 → 12 × 30.
    QTest::newRow("dgx-h100") << "dgx-h100" << 12 << 30.0;
}

void TestNccl::ringGraphOneNode()
{
    QFETCH(QString, preset);
    QFETCH(int, channels);
    QFETCH(double, bw);
    const Model m = modelOf(preset.toStdString());
    QCOMPARE(m.graphs.ring.nChannels, channels);
    QCOMPARE(m.graphs.ring.bwIntra, bw);
    QCOMPARE(int(m.graphs.ring.channels.size()), channels);
    for (const Channel& c : m.graphs.ring.channels) {
        QCOMPARE(int(c.gpus.size()), 8);
        QCOMPARE(int(std::set<int>(c.gpus.begin(), c.gpus.end()).size()), 8); // every GPU once
        QCOMPARE(c.nicIn, -1);
    }
    // Simple ring busbw = nChannels · bw (tuning.cc): 240 on A100 (NCCL's "12 links × 20 GB/s").
    const Prediction p = predictOrDie(m, Op::AllReduce, 8.0 * (1 << 30));
    QVERIFY(p.algorithm == (m.system.nvls ? Algorithm::Nvls : Algorithm::Ring));
}

void TestNccl::nvlsGraph()
{
    // H100 one node: 8 channels (one head per GPU, min = max). Per GPU link each channel puts bwIntra, the
    // head's twice: 9·s ≤ 370.8 → 50 (450) no, 40 (360) yes. The start skips 60 since 60·8 = 480 >
    // 370.8·8/7 = 423.8. Pass 2 raises bwInter while < 2·bwIntra = 80: 50, then 60 (array top) → 8 × 40/60.
    const Model h = modelOf("dgx-h100");
    QVERIFY(h.graphs.nvls.found);
    QCOMPARE(h.graphs.nvls.nChannels, 8);
    QCOMPARE(h.graphs.nvls.bwIntra, 40.0);
    QCOMPARE(h.graphs.nvls.bwInter, 60.0);
    // A100: no NVLS (Ampere).
    QVERIFY(!modelOf("dgx-a100").graphs.nvls.found);
    // 4 × DGX H100: heads one per NIC (8); 9·s ≤ 370.8 at s = 40 of sm90SpeedArrayInter; pass 2 raises
    // bwInter to 42, 45, 48 (the GPU ↔ NIC path min(PCIe 48, NDR 50) = 48) → 8 × 40/48.
    const Model h4 = modelOf("dgx-h100-4node");
    QCOMPARE(h4.graphs.nvls.nChannels, 8);
    QCOMPARE(h4.graphs.nvls.bwIntra, 40.0);
    QCOMPARE(h4.graphs.nvls.bwInter, 48.0);
    for (int k = 0; k < 8; ++k) {
        QCOMPARE(h4.graphs.nvls.channels[k].gpus.front(), k); // head = GPU next to NIC k
        QCOMPARE(h4.graphs.nvls.channels[k].nicIn, k);
    }
}

void TestNccl::ringChannelsOnRails_data()
{
    QTest::addColumn<int>("nodes");
    QTest::newRow("2 nodes") << 2;
    QTest::newRow("4 nodes") << 4;
}

void TestNccl::ringChannelsOnRails()
{
    QFETCH(int, nodes);
    // DGX A100 nodes, 8 HDR NICs (25 GB/s), PCIe Gen4 (24 GB/s): maxBw = min(24, 25) = 24 → first speed
    // of speedArrayInter ≤ 24 is 24; one channel per NIC (floor(25/24) = 1, the PCIe link 24/24) → 8
    // channels × 24 = 192 < totalBw 240; lower speeds do not beat 192 (20 → 8 × 20; 12 → 16 × 12 = 192, not
    // more); 10/24 < .49 stops. No dup (24 < 25). So 8 channels, one per rail.
    const Model m = modelOf("dgx-a100-4node", static_cast<std::uint64_t>(nodes));
    QCOMPARE(m.graphs.ring.nChannels, 8);
    QCOMPARE(m.graphs.ring.bwInter, 24.0);
    // Channel k enters every node on NIC k at GPU k (the GPU next to it) and leaves from the other GPU of
    // its PCIe switch (k ^ 1) through the same NIC k: node i → node i+1 on rail k, never across a spine.
    // Channel 0: 0 2 3 4 5 6 7 1; channel 1: 1 2 3 4 5 6 7 0; channel 3: 3 4 5 6 7 0 1 2.
    for (int k = 0; k < 8; ++k) {
        const Channel& c = m.graphs.ring.channels[k];
        QCOMPARE(c.nicIn, k);
        QCOMPARE(c.nicOut, k);
        QCOMPARE(c.gpus.front(), k);
        QCOMPARE(c.gpus.back(), k ^ 1);
        QCOMPARE(int(std::set<int>(c.gpus.begin(), c.gpus.end()).size()), 8);
    }
    QVERIFY(m.graphs.ring.channels[0].gpus == (std::vector<int>{0, 2, 3, 4, 5, 6, 7, 1}));
    QVERIFY(m.graphs.ring.channels[1].gpus == (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 0}));
    QVERIFY(m.graphs.ring.channels[3].gpus == (std::vector<int>{3, 4, 5, 6, 7, 0, 1, 2}));
}

void TestNccl::railsEquallyLoaded()
{
    const Model m = modelOf("dgx-a100-4node");
    // Every rail carries exactly one channel in and one out.
    std::vector<int> in(8), out(8);
    for (const Channel& c : m.graphs.ring.channels) {
        ++in[c.nicIn];
        ++out[c.nicOut];
    }
    QVERIFY(in == std::vector<int>(8, 1));
    QVERIFY(out == std::vector<int>(8, 1));
    // A ring AllReduce of S over n ranks sends 2(n−1)/n·S per rank boundary; each channel carries S/nCh:
    // S = 1 GiB, n = 32, nCh = 8: 2·31/32·2^30/8 = 62/32 · 134,217,728 = 260,046,848 B per NIC per direction.
    QCOMPARE(ringBytesPerNicPerChannel(1073741824.0, 32, 8), 260046848.0);
    // Forcing 16 channels: speed 12 (floor(25/12) = 2 per NIC), two channels per rail, still equal.
    const Graphs g16 = searchGraphs(m.system, 16);
    QCOMPARE(g16.ring.nChannels, 16);
    QCOMPARE(g16.ring.bwInter, 12.0);
    std::vector<int> in16(8);
    for (const Channel& c : g16.ring.channels)
        ++in16[c.nicIn];
    QVERIFY(in16 == std::vector<int>(8, 2));
}

void TestNccl::nvlsBytesPerLink()
{
    // AllReduce of S = 1 GiB on 8 GPUs: each GPU pushes S into the switch once and receives the reduced S
    // once; a ring puts 2·7/8·S = 1.75 GiB each way on the same link.
    const double S = 1073741824.0;
    QVERIFY(nvlsBytesPerGpuLink(Op::AllReduce, S, 8) == (LinkBytes{S, S}));
    QVERIFY(nvlsBytesPerGpuLink(Op::ReduceScatter, S, 8) == (LinkBytes{S, S / 8}));
    QVERIFY(nvlsBytesPerGpuLink(Op::AllGather, S, 8) == (LinkBytes{S / 8, S}));
}

void TestNccl::doubleBinaryTree()
{
    // ncclGetDtree(4): tree 0 is the btree 0 → 2 → {1, 3}; tree 1 mirrors it (n even): 3 → 1 → {2, 0}.
    const TreeLinks r0 = tw::nccl::doubleBinaryTree(4, 0), r2 = tw::nccl::doubleBinaryTree(4, 2);
    const TreeLinks r1 = tw::nccl::doubleBinaryTree(4, 1), r3 = tw::nccl::doubleBinaryTree(4, 3);
    QCOMPARE(r0.up0, -1);
    QCOMPARE(r0.down0[1], 2);
    QCOMPARE(r2.up0, 0);
    QCOMPARE(r2.down0[0], 1);
    QCOMPARE(r2.down0[1], 3);
    QCOMPARE(r1.up0, 2);
    QCOMPARE(r3.up0, 2);
    QCOMPARE(r3.up1, -1);
    QCOMPARE(r3.down1[1], 1);
    QCOMPARE(r1.up1, 3);
    QCOMPARE(r1.down1[0], 2);
    QCOMPARE(r1.down1[1], 0);
    QCOMPARE(r0.up1, 1);
}

void TestNccl::autoOneNodeA100_data()
{
    QTest::addColumn<double>("bytes");
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<QString>("protocol");
    // One DGX A100, ring 12 × 20, n = 8, nsteps 14, NVLink latencies:
    //   ring LL     busBw min(87.7, 240·.5) = 87.7, algBw 87.7·8/14 = 50.114 GB/s, lat 6.6 + 14·0.6 = 15.0 µs
    //   ring LL128  busBw min(240·.92, 12·20) = 220.8, algBw 126.171,              lat 14 + 14·1.9  = 40.6 µs
    //   ring Simple busBw 240, algBw 137.143,                                      lat 8.4 + 14·3.4 = 56.0 µs
    // LL = LL128 at 25.6 µs / (1/50114 − 1/126171 µs/B) = 2.128 MB; LL128 = Simple at 15.4 µs /
    // (1/126171 − 1/137143) = 24.29 MB. Trees lose everywhere (tree LL lat 6.8 + 2·7·0.6 = 15.2 > 15.0 and
    // a lower bandwidth).
    QTest::newRow("8 B") << 8.0 << "ring" << "ll";
    QTest::newRow("2.0 MB") << 2.0e6 << "ring" << "ll";
    QTest::newRow("2.3 MB") << 2.3e6 << "ring" << "ll128";
    QTest::newRow("23 MB") << 23.0e6 << "ring" << "ll128";
    QTest::newRow("26 MB") << 26.0e6 << "ring" << "simple";
    QTest::newRow("8 GiB") << 8589934592.0 << "ring" << "simple";
}

void TestNccl::autoOneNodeA100()
{
    QFETCH(double, bytes);
    QFETCH(QString, algorithm);
    QFETCH(QString, protocol);
    static const Model m = modelOf("dgx-a100");
    const Prediction p = predictOrDie(m, Op::AllReduce, bytes);
    QCOMPARE(QString::fromUtf8(toString(p.algorithm).data()), algorithm);
    QCOMPARE(QString::fromUtf8(toString(p.protocol).data()), protocol);
}

void TestNccl::autoFourNodesA100_data()
{
    QTest::addColumn<double>("bytes");
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<QString>("protocol");
    QTest::addColumn<double>("timeUs");
    // 4 × DGX A100: ring 8 × 24 (inter 24), tree 8 channels, n = 32, 4 nodes (column N4), ppn 8, Intel CPU
    // row for llMaxBw (20.4), netOverhead 1 µs (×3 for Simple).
    //   ring Simple busBw 8·24 = 192, algBw 192·32/62 = 99.097; lat 8.4 + 56·max(3.4, 3) + 6·14 = 282.8 µs,
    //               ×1.4 (plateau, S/(16·32) ≥ 64) = 395.92 µs
    //   ring LL128  busBw min(192·.92, 8·20) = 160, algBw 82.581; lat 14 + 56·1.9 + 6·4 = 144.4 µs
    //   tree LL     busBw min(min(176.64, 8·17.8)/3.8, 20.4) = 20.4, algBw ·.5 = 10.2; lat 6.8 + 2·(7·0.6 + 2·5) = 35.2
    //   tree LL128  busBw min(142.4·120/128, 8·20) = 133.5, algBw 66.75; lat 14 + 2·(7·1.25 + 2·8.5) = 65.5 µs
    // times (µs): 8 B tree LL 35.2 (+0.0008); 128 KiB: logSize 11, LL ×.5 → 35.2 + 131072/5100 = 60.90
    // (tree LL128 ×.6: 65.5 + 3.27 = 68.77); 256 KiB: tree LL ×.4 → 99.45, tree LL128 ×.6 → 65.5 + 6.545
    // = 72.05; 16 MiB: tree LL128 ×.9 → 65.5 + 16777216/60075 = 344.77 vs ring LL128 144.4 + 203.16 =
    // 347.56; 32 MiB: ring LL128 144.4 + 406.32 = 550.72 vs tree LL128 65.5 + 558.54 = 624.04 (ring
    // overtakes the tree at 17.4 MB); 128 MiB: ring Simple 395.92 + 1354.41 = 1750.33 vs ring LL128 144.4 +
    // 1625.3 = 1769.7 (Simple from 124.6 MB).
    QTest::newRow("8 B") << 8.0 << "tree" << "ll" << 35.2;
    QTest::newRow("128 KiB") << 131072.0 << "tree" << "ll" << 60.90;
    QTest::newRow("256 KiB") << 262144.0 << "tree" << "ll128" << 72.05;
    QTest::newRow("16 MiB") << 16777216.0 << "tree" << "ll128" << 344.77;
    QTest::newRow("32 MiB") << 33554432.0 << "ring" << "ll128" << 550.72;
    QTest::newRow("128 MiB") << 134217728.0 << "ring" << "simple" << 1750.33;
}

void TestNccl::autoFourNodesA100()
{
    QFETCH(double, bytes);
    QFETCH(QString, algorithm);
    QFETCH(QString, protocol);
    QFETCH(double, timeUs);
    static const Model m = modelOf("dgx-a100-4node");
    const Prediction p = predictOrDie(m, Op::AllReduce, bytes);
    QCOMPARE(QString::fromUtf8(toString(p.algorithm).data()), algorithm);
    QCOMPARE(QString::fromUtf8(toString(p.protocol).data()), protocol);
    QVERIFY2(std::abs(p.time * 1e6 - timeUs) < 0.01, qPrintable(QString::number(p.time * 1e6, 'f', 4)));
}

void TestNccl::broadcastLatency()
{
    // One DGX A100: the channels replay one order (sameChannels), so a ring Broadcast pays one hop:
    // LL lat 6.6 + 0.6 = 7.2 µs, algBw min(87.7, 240·.5)·8/8 = 87.7 GB/s → 8 B: 7.2 + 8/87700 = 7.2001 µs.
    const Model one = modelOf("dgx-a100");
    QVERIFY(one.graphs.ring.sameChannels);
    const Prediction b = predictOrDie(one, Op::Broadcast, 8);
    QVERIFY(b.protocol == Protocol::LL);
    QVERIFY(std::abs(b.time * 1e6 - 7.2001) < 1e-4);
    // 4 × DGX A100: the channels start at different GPUs (sameChannels = 0): nsteps = n = 32 steps of the
    // NET ring LL latency 2.7 → 6.6 + 32·2.7 = 93.0 µs; Simple would pay 8.4 + 32·14 (NET tree) = 456.4.
    const Model four = modelOf("dgx-a100-4node");
    QVERIFY(!four.graphs.ring.sameChannels);
    const Prediction b4 = predictOrDie(four, Op::Broadcast, 8);
    QVERIFY(b4.protocol == Protocol::LL);
    QVERIFY(std::abs(b4.latencyTerm * 1e6 - 93.0) < 1e-9);
}

void TestNccl::busbwOfOneRow()
{
    // One DGX A100, AllReduce 1 GiB, ring Simple: t = 56.0 + 1073741824/137142.86 = 56.0 + 7829.37 =
    // 7885.37 µs; algbw = 2^30 / 7885.37 µs = 136.17 GB/s; busbw ·2·7/8 = 238.30 GB/s.
    const Model m = modelOf("dgx-a100");
    const Prediction p = predictOrDie(m, Op::AllReduce, 1073741824.0);
    QVERIFY(std::abs(p.time - 7885.37e-6) < 0.01e-6);
    QVERIFY(std::abs(p.algbw - 136.168e9) < 0.01e9);
    QVERIFY(p.busbw && std::abs(*p.busbw - 238.29e9) < 0.02e9);
    QVERIFY(std::abs(p.latencyTerm - 56.0e-6) < 1e-12);
    QCOMPARE(p.channels, 12);
    // nccl-tests' factors; none for one rank.
    QCOMPARE(*busBwFactor(Op::AllReduce, 8), 1.75);
    QCOMPARE(*busBwFactor(Op::AllGather, 8), 0.875);
    QCOMPARE(*busBwFactor(Op::AllToAll, 8), 0.875);
    QCOMPARE(*busBwFactor(Op::Broadcast, 8), 1.0);
    QVERIFY(!busBwFactor(Op::AllReduce, 1));
}

void TestNccl::nvlsBusbwAboveLink()
{
    // DGX H100, AllReduce 8 GiB: NVLS busBw = 8 · min(40·.85·7/8·2 = 59.5, bwInter 60) = 476 GB/s, algBw
    // 476·8/14 = 272; lat = NVLink NVLS Simple 25 µs; t = 25 + 8589934592/272000 = 31605.64 µs; busbw
    // = 2^33/t · 1.75 = 475.62 GB/s — above NVLink 4's 450 GB/s per direction (the switch reduces).
    const Model m = modelOf("dgx-h100");
    const Prediction p = predictOrDie(m, Op::AllReduce, 8589934592.0);
    QVERIFY(p.algorithm == (Algorithm::Nvls));
    QVERIFY(p.protocol == (Protocol::Simple));
    QVERIFY(std::abs(p.time * 1e6 - 31605.64) < 0.01);
    QVERIFY(std::abs(*p.busbw / 1e9 - 475.62) < 0.01);
}

void TestNccl::unsupportedPairs_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<Op>("op");
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<QString>("mustSay");
    QTest::newRow("allreduce pat") << "dgx-a100" << Op::AllReduce << "pat" << "NCCL has no pat algorithm for allreduce; it has tree, ring";
    QTest::newRow("broadcast tree") << "dgx-a100" << Op::Broadcast << "tree" << "NCCL has no tree algorithm for broadcast; it has ring";
    QTest::newRow("alltoall ring") << "dgx-a100" << Op::AllToAll << "ring" << "point-to-point";
    QTest::newRow("nvls on A100") << "dgx-a100" << Op::AllReduce << "nvls" << "Hopper";
    QTest::newRow("nvls-tree on one node") << "dgx-h100" << Op::AllReduce << "nvls-tree" << "single node";
    QTest::newRow("collnet") << "dgx-h100-4node" << Op::AllReduce << "collnet-direct" << "SHARP";
    QTest::newRow("pat with 8 GPUs per node") << "dgx-a100-4node" << Op::AllGather << "pat" << "one GPU per node";
}

void TestNccl::unsupportedPairs()
{
    QFETCH(QString, preset);
    QFETCH(Op, op);
    QFETCH(QString, algorithm);
    QFETCH(QString, mustSay);
    const Model m = modelOf(preset.toStdString());
    Request q;
    q.op = op;
    q.bytes = 1 << 20;
    q.algorithm = algorithmFromString(algorithm.toStdString());
    auto r = predict(m.tuning, m.system, m.graphs, q);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find(mustSay.toStdString()) != std::string::npos, r.error().message.c_str());
    QCOMPARE(r.error().where.jsonPath, std::string("algorithm"));
}

void TestNccl::singleNicPaths()
{
    // The testbed: 7 single-GPU servers, one 10 GbE NIC each (1.25 GB/s): the first inter speed ≤ 1.25
    // is 1.2 → one channel (floor(1.25/1.2) = 1) → ring 1 × 1.2; 0.24/1.2 < .49 stops.
    const Model t = modelOf("paper-testbed");
    QCOMPARE(t.graphs.ring.nChannels, 1);
    QCOMPARE(t.graphs.ring.bwInter, 1.2);
    // AllGather with one GPU per node: PAT is on (ppn = 1). PAT: busBw 1.2·.75 = 0.9 (no conversion for
    // AG), lat 8 + log2i(7)·(14/3.5) + 7·2.8 = 35.6 µs; ring LL: busBw min(20.4, 0.6) = 0.6, algBw
    // 0.6·7/6 = 0.7, lat 6.6 + 6·5.0 (ppn 1: NET Tree LL) = 36.6 µs. At 7 KiB PAT 35.6 + 7168/900 = 43.6 <
    // ring LL 36.6 + 7168/700 = 46.8; at 7 GiB the ring Simple (algBw 1.2·7/6 = 1.4) beats PAT (0.9).
    const Prediction small = predictOrDie(t, Op::AllGather, 7 * 1024.0);
    QVERIFY(small.algorithm == (Algorithm::Pat));
    const Prediction big = predictOrDie(t, Op::AllGather, 7 * 1073741824.0);
    QVERIFY(big.algorithm == (Algorithm::Ring));
    // Large AllReduce busbw tends to the ring's 1.2 GB/s.
    const Prediction ar = predictOrDie(t, Op::AllReduce, 8589934592.0);
    QVERIFY(*ar.busbw > 1.19e9 && *ar.busbw < 1.2e9);
}

QTEST_APPLESS_MAIN(TestNccl)
#include "tst_nccl.moc"
