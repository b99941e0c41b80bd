// Stage 5, the symmetry reduction on switched fabrics (network/routing.h "ECMP on a switched fabric",
// network/simulate.h "Symmetry", docs/model.md §5): the ECMP choice's symmetry checked route by route —
// for a permutation σ of the GPUs that the fabric allows (groups rotated within blocks as a data-parallel
// shift with pipeline blocks does, pods swapped, every server's GPUs rotated as a tensor-parallel shift
// does), the routes of (σa, σb) are the images of the routes of (a, b) under one bijection of the nodes,
// which fixes the GPUs' own parts as σ says and, for the rail rotation, moves spine s to s + c (mod k),
// c = k / gcd(k, R); and the reduced simulation equals the full one (step time, exposed time per
// strategy, every link's bytes and its bins over the step, to 1e-9 relative) on every fabric kind, with
// the reduction named, and no exempt link left to be counted image by image.

#include "../support/testsupport.h"
#include "network/routing.h"
#include "network/simulate.h"
#include "fabric/topology.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <QTest>

#include <cmath>
#include <functional>
#include <map>
#include <numeric>

using namespace tw::network;
using tw::parallel::Cluster;

using GpuMap = std::function<std::uint32_t(std::uint32_t)>;
Q_DECLARE_METATYPE(TopologySpec)
Q_DECLARE_METATYPE(GpuMap)

namespace {


TopologySpec leafSpine(NicPlacement nics, IntraNode intra, std::uint64_t nicsPerLeaf, std::uint64_t spines,
                       double oversubscription = 1)
{
    TopologySpec s;
    s.kind = TopologyKind::LeafSpine;
    s.intraNode = intra;
    s.nicPlacement = nics;
    s.nicProtocol = Protocol::InfinibandNdr;
    s.gpusPerPcieSwitch = 1; // each GPU alone on its PCIe switch: a rotation of the GPUs is an automorphism
    s.nicsPerLeaf = nicsPerLeaf;
    s.spines = spines;
    s.oversubscription = oversubscription;
    return s;
}

TopologySpec threeTier(std::uint64_t gpusPerPod, std::uint64_t leaves, std::uint64_t spines, std::uint64_t cores,
                       bool rails = true)
{
    TopologySpec s;
    s.kind = TopologyKind::ThreeTier;
    s.intraNode = IntraNode::NvSwitch;
    s.nicPlacement = NicPlacement::PerGpu;
    s.nicProtocol = Protocol::InfinibandNdr;
    s.gpusPerPcieSwitch = 1;
    s.gpusPerPod = gpusPerPod;
    s.leavesPerPod = leaves;
    s.spinesPerPod = spines;
    s.coreSwitches = cores;
    s.railOptimized = rails;
    return s;
}

// σ on GPU ids g = server·R + l: servers in groups of `per` consecutive servers; groups in blocks of `block`
// groups rotated by one group within each block (a data-parallel shift by one group whose replicas fill
// `block` groups per pipeline stage).
GpuMap groupRotation(std::uint32_t R, std::uint32_t per, std::uint32_t block)
{
    return [=](std::uint32_t g) {
        const std::uint32_t server = g / R, group = server / per;
        const std::uint32_t image = (group / block) * block + (group % block + 1) % block;
        return (image * per + server % per) * R + g % R;
    };
}

// σ: every server's GPUs rotated by one (a tensor-parallel shift by one with tp = R).
GpuMap railRotation(std::uint32_t R)
{
    return [=](std::uint32_t g) { return g / R * R + (g % R + 1) % R; };
}

} // namespace

class TestSymmetryFabrics : public QObject {
    Q_OBJECT
private slots:
    void ecmpMapsRoutesOntoRoutes_data();
    void ecmpMapsRoutesOntoRoutes();
    void mixIsSplitMix64();
    void reducedEqualsFull_data();
    void reducedEqualsFull();
};

void TestSymmetryFabrics::ecmpMapsRoutesOntoRoutes_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("servers");
    QTest::addColumn<quint64>("gpusPerNode");
    QTest::addColumn<GpuMap>("sigma");
    QTest::addColumn<int>("spineShift"); // the expected image of spine s under a leaf–spine's σ: s + this (mod k)
    // Leaf–spine, rail-optimized: 8 servers × 8 GPUs, 2 servers per group (8 rail leaves each), 4 groups,
    // 4 spines. Groups rotated within blocks of 2 (wrap-around inside a block); every server's GPUs
    // rotated: c = 4 / gcd(4, 8) = 1.
    const TopologySpec rails = leafSpine(NicPlacement::PerGpu, IntraNode::NvSwitch, 2, 4);
    QTest::newRow("leaf-spine rails, groups rotated in blocks of 2") << rails << quint64(8) << quint64(8)
                                                                     << groupRotation(8, 2, 2) << 0;
    QTest::newRow("leaf-spine rails, all 4 groups rotated") << rails << quint64(8) << quint64(8)
                                                            << groupRotation(8, 2, 4) << 0;
    QTest::newRow("leaf-spine rails, GPUs of every server rotated") << rails << quint64(8) << quint64(8)
                                                                    << railRotation(8) << 1;
    // 16 spines: c = 16 / gcd(16, 8) = 2.
    QTest::newRow("leaf-spine rails, 16 spines, GPUs rotated")
        << leafSpine(NicPlacement::PerGpu, IntraNode::NvSwitch, 2, 16) << quint64(8) << quint64(8) << railRotation(8) << 2;
    // One NIC per server (PCIe servers of 4 GPUs), 2 servers per leaf → 4 leaves, 4 spines, oversubscribed:
    // c = 4 / gcd(4, 4) = 1.
    const TopologySpec tor = leafSpine(NicPlacement::PerNode, IntraNode::Pcie, 2, 4, 2);
    QTest::newRow("leaf-spine NIC per server, groups rotated in blocks of 2") << tor << quint64(8) << quint64(4)
                                                                              << groupRotation(4, 2, 2) << 0;
    QTest::newRow("leaf-spine NIC per server, GPUs rotated") << tor << quint64(8) << quint64(4) << railRotation(4) << 1;
    // Three-tier, rail-optimized: pods of 4 servers (32 GPUs), 16 leaves per pod = 2 groups of 2 servers,
    // 2 spines per pod, 4 cores (2 planes of 2); 8 servers = 2 pods. Groups rotated inside each pod, the
    // pods swapped (groups rotated in blocks of 4 by 2 groups = one pod), every server's GPUs rotated.
    const TopologySpec tt = threeTier(32, 16, 2, 4);
    QTest::newRow("three-tier rails, groups rotated inside pods") << tt << quint64(8) << quint64(8)
                                                                  << groupRotation(8, 2, 2) << -1;
    QTest::newRow("three-tier rails, pods swapped")
        << tt << quint64(8) << quint64(8) << GpuMap([](std::uint32_t g) { return (g + 32) % 64; }) << -1;
    QTest::newRow("three-tier rails, GPUs rotated") << tt << quint64(8) << quint64(8) << railRotation(8) << -1;
    QTest::newRow("three-tier top-of-rack, GPUs rotated") << threeTier(32, 2, 2, 4, false) << quint64(8) << quint64(8)
                                                          << railRotation(8) << -1;
}

void TestSymmetryFabrics::ecmpMapsRoutesOntoRoutes()
{
    // For every ordered pair (a, b), route(σa, σb) has the same length as route(a, b) and the k-th node
    // of one is the image of the k-th node of the other under one map of the nodes, the same for every
    // pair and injective; the map sends GPU g to σ(g) and its NIC to σ(g)'s NIC. Then σ's node map takes
    // links onto links, which is what the simulator's check (symmetry.cpp verifyShift) needs.
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, servers);
    QFETCH(quint64, gpusPerNode);
    QFETCH(GpuMap, sigma);
    QFETCH(int, spineShift);
    const Topology t = tw::test::topologyOrDie(spec, Cluster{servers, gpusPerNode});
    const auto n = static_cast<std::uint32_t>(t.gpuCount());
    Router router(t);
    std::map<NodeId, NodeId> image, preimage;
    auto bind = [&](NodeId a, NodeId b) {
        auto [i, fresh] = image.try_emplace(a, b);
        auto [j, fresh2] = preimage.try_emplace(b, a);
        return i->second == b && j->second == a;
    };
    for (std::uint32_t g = 0; g < n; ++g)
        QVERIFY(bind(t.gpuNode(g), t.gpuNode(sigma(g))));
    std::size_t crossing = 0;
    for (std::uint32_t a = 0; a < n; ++a)
        for (std::uint32_t b = 0; b < n; ++b) {
            if (a == b)
                continue;
            const auto p = router.route(a, b, 0);
            const auto q = router.route(sigma(a), sigma(b), 0);
            QVERIFY(p.ok() && q.ok());
            const std::vector<LinkId> pa = *p.value(), qa = *q.value();
            QCOMPARE(pa.size(), qa.size());
            for (std::size_t k = 0; k < pa.size(); ++k) {
                const Link& x = t.link(pa[k]);
                const Link& y = t.link(qa[k]);
                QVERIFY2(bind(x.from, y.from) && bind(x.to, y.to),
                         qPrintable(QStringLiteral("%1 -> %2: link %3 and %4 break the node map").arg(a).arg(b)
                                        .arg(QString::fromStdString(x.id), QString::fromStdString(y.id))));
                crossing += t.node(x.to).kind == NodeKind::SpineSwitch ? 1 : 0;
            }
        }
    QVERIFY(crossing > 0); // the rows do cross the upper tiers
    for (std::uint32_t g = 0; g < n; ++g)
        if (t.gpuNic(g) != kNoNode)
            QCOMPARE(image.at(t.gpuNic(g)), t.gpuNic(sigma(g)));
    if (spineShift >= 0) {
        const std::uint64_t k = spec.spines;
        for (std::uint64_t s = 0; s < k; ++s) {
            const auto from = t.findNode("spine" + std::to_string(s));
            QVERIFY(from);
            if (auto hit = image.find(*from); hit != image.end())
                QCOMPARE(t.node(hit->second).name, "spine" + std::to_string((s + std::uint64_t(spineShift)) % k));
        }
    }
}

void TestSymmetryFabrics::mixIsSplitMix64()
{
    // SplitMix64's finalizer (Steele, Lea, Flood, OOPSLA 2014; the constants of java.util.SplittableRandom's
    // mix64): 0 stays 0 (every step maps 0 to 0); 1 → z ^= z >> 30, z *= 0xbf58476d1ce4e5b9, z ^= z >> 27,
    // z *= 0x94d049bb133111eb, z ^= z >> 31, computed independently in Python (64-bit wrap-around):
    // 0x5692161d100b05e5.
    QCOMPARE(ecmpMix(0), std::uint64_t(0));
    QCOMPARE(ecmpMix(1), std::uint64_t(0x5692161d100b05e5ull));
}

void TestSymmetryFabrics::reducedEqualsFull_data()
{
    QTest::addColumn<TopologySpec>("spec");
    QTest::addColumn<quint64>("nodes");
    QTest::addColumn<quint64>("gpusPerNode");
    QTest::addColumn<quint64>("dp");
    QTest::addColumn<quint64>("pp");
    QTest::addColumn<quint64>("tp");
    QTest::addColumn<QString>("reduction"); // expected at the start of StepSimulation::reduction
    QTest::addColumn<int>("factor");        // |Γ|
    TopologySpec node;
    node.kind = TopologyKind::NvSwitchNode;
    // One DGX: dp 8 on the NVSwitch; every dp shift by one is a symmetry (|Γ| = 8).
    QTest::newRow("nvswitch-node, dp 8") << node << quint64(1) << quint64(8) << quint64(8) << quint64(1) << quint64(1)
                                         << QString::fromUtf8("dp shift 1 (8)") << 8;
    // Leaf–spine, rails: 32 servers × 8 (256 GPUs), tp 8 × pp 2 × dp 16, 4 servers per group: a pipeline
    // stage's 16 replicas fill 4 groups; the dp shift by one group (4 replicas) has order 4, the tp shift 8:
    // |Γ| = 32. The ReduceScatter's buckets are padded to a multiple of 16 (simsetup.cpp), so its ring is
    // invariant; ECMP hashes places, so the group rotation (wrapping inside each stage's 4 groups) maps
    // every route onto a route.
    QTest::newRow("leaf-spine rails, 256 GPUs") << leafSpine(NicPlacement::PerGpu, IntraNode::NvSwitch, 4, 4)
                                                << quint64(32) << quint64(8) << quint64(16) << quint64(2) << quint64(8)
                                                << QString::fromUtf8("dp shift 4 (4) × tp shift 1 (8)") << 32;
    // The same oversubscribed 2:1 (the spine uplinks can saturate, so they are checked link by link).
    QTest::newRow("leaf-spine rails 2:1, 256 GPUs") << leafSpine(NicPlacement::PerGpu, IntraNode::NvSwitch, 4, 4, 2)
                                                    << quint64(32) << quint64(8) << quint64(16) << quint64(2) << quint64(8)
                                                    << QString::fromUtf8("dp shift 4 (4) × tp shift 1 (8)") << 32;
    // Three-tier, rails, 512 GPUs: pods of 128 GPUs (16 servers, 2 groups of 8), pp 4: a stage's 16
    // replicas fill one pod; the dp shift by one group (8 replicas) swaps the pod's two groups (order 2).
    QTest::newRow("three-tier rails, 512 GPUs") << threeTier(128, 16, 4, 8) << quint64(64) << quint64(8) << quint64(16)
                                                << quint64(4) << quint64(8) << QString::fromUtf8("dp shift 8 (2) × tp shift 1 (8)") << 16;
    // Three-tier, rails, 256 GPUs: pods of 64 (8 servers, one group), pp 2: a stage's 16 replicas fill two
    // pods; the dp shift by one pod (8 replicas) has order 2.
    QTest::newRow("three-tier rails, 256 GPUs, stage over 2 pods")
        << threeTier(64, 8, 2, 4) << quint64(32) << quint64(8) << quint64(16) << quint64(2) << quint64(8)
        << QString::fromUtf8("dp shift 8 (2) × tp shift 1 (8)") << 16;
}

void TestSymmetryFabrics::reducedEqualsFull()
{
    // GPT-3 175B's layout (interleaved, ZeRO-1, sequence parallel) cut to 16 layers, the fabric of the row;
    // the reduced step (symmetry on) equals the full one (symmetry off) to 1e-9 relative.
    QFETCH(TopologySpec, spec);
    QFETCH(quint64, nodes);
    QFETCH(quint64, gpusPerNode);
    QFETCH(quint64, dp);
    QFETCH(quint64, pp);
    QFETCH(quint64, tp);
    QFETCH(QString, reduction);
    QFETCH(int, factor);
    auto s = tw::scenario::preset("gpt3-175b").value();
    s.hardware.nodes = nodes;
    s.hardware.gpusPerNode = gpusPerNode;
    s.parallel.dp = dp;
    s.parallel.pp = pp;
    s.parallel.tp = tp;
    if (pp < 2) {
        s.parallel.schedule = tw::parallel::PipelineSchedule::OneFOneB;
        s.parallel.virtualStages = 1;
    }
    s.parallel.layerPartition.clear();
    s.batch.globalBatchTokens = 2048 * 4 * dp; // 4 micro-batches per replica
    s.model.layers = 16;
    s.topology = spec;
    auto d = tw::scenario::derive(s);
    QVERIFY(d.ok());
    QVERIFY2(d.value()->stage3 && d.value()->stage4,
             d.value()->planErrors.empty() ? "?" : d.value()->planErrors.front().toString().c_str());
    auto net = tw::scenario::deriveNetwork(s, *d.value());
    QVERIFY(net.ok());
    const Topology& t = *net.value()->topology;
    SimulationOptions o = tw::scenario::simulationOptions(*d.value(), true); // with link bins, as stage 5 runs it
    auto reduced = simulateStep(t, *d.value()->stage3, *d.value()->stage4, o);
    o.exploitSymmetry = false;
    auto full = simulateStep(t, *d.value()->stage3, *d.value()->stage4, o);
    QVERIFY(reduced.ok() && full.ok());
    const StepSimulation& r = reduced.value();
    const StepSimulation& f = full.value();
    qInfo("reduction: %s", r.reduction.c_str());
    QVERIFY2(r.reduction.rfind(reduction.toStdString(), 0) == 0, r.reduction.c_str());
    QCOMPARE(int(r.symmetryFactor), factor);
    QCOMPARE(f.symmetryFactor, 1u);
    auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(b), 1e-12); };
    QVERIFY2(close(r.stepSeconds, f.stepSeconds), qPrintable(QStringLiteral("%1 vs %2").arg(r.stepSeconds).arg(f.stepSeconds)));
    for (int k = 0; k < 4; ++k)
        QVERIFY2(close(r.exposedByStrategy[k], f.exposedByStrategy[k]),
                 qPrintable(QStringLiteral("strategy %1: %2 vs %3").arg(k).arg(r.exposedByStrategy[k]).arg(f.exposedByStrategy[k])));
    QCOMPARE(r.linkPayloadBytes.size(), f.linkPayloadBytes.size());
    double total = 0;
    for (std::size_t l = 0; l < f.linkPayloadBytes.size(); ++l) {
        QVERIFY2(close(r.linkPayloadBytes[l], f.linkPayloadBytes[l]), t.link(LinkId(l)).id.c_str());
        total += f.linkPayloadBytes[l];
    }
    QVERIFY(total > 0);
    // The link bins: every link's sum is its payload, and when both runs chose the same grid, bin by bin.
    auto near = [](double a, double b, double scale) { return std::fabs(a - b) <= 1e-9 * std::max(scale, 1.0); };
    const bool sameGrid = r.linkBins.binSeconds == f.linkBins.binSeconds;
    for (LinkId l = 0; l < f.linkPayloadBytes.size(); ++l) {
        const double payload = f.linkPayloadBytes[l];
        QVERIFY2(near(r.linkBins.bytes(l), payload, payload), t.link(l).id.c_str());
        QVERIFY2(near(f.linkBins.bytes(l), payload, payload), t.link(l).id.c_str());
        const LinkSeries* x = r.linkBins.of(l);
        const LinkSeries* y = f.linkBins.of(l);
        const std::size_t n = sameGrid ? std::max(x ? x->bins.size() : 0, y ? y->bins.size() : 0) : 0;
        for (std::size_t k = 0; k < n; ++k) {
            const double u = x && k < x->bins.size() ? x->bins[k].bytes : 0;
            const double v = y && k < y->bins.size() ? y->bins[k].bytes : 0;
            QVERIFY2(near(u, v, payload), qPrintable(QStringLiteral("%1 bin %2: %3 vs %4")
                                                         .arg(QString::fromStdString(t.link(l).id)).arg(k).arg(u).arg(v)));
        }
    }
    // The exempt links inside the servers (a GPU's PCIe link to its NIC carries exactly what the NIC
    // sends) map like the others: none is routed image by image (the flows would carry |Γ| copies).
    QVERIFY2(r.reduction.find("counted per image") == std::string::npos
                 || r.reduction.find(", 0 counted per image") != std::string::npos,
             r.reduction.c_str());
}

QTEST_APPLESS_MAIN(TestSymmetryFabrics)
#include "tst_symmetry_fabrics.moc"
