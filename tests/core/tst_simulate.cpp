// Stage 5: the flow-level simulation of one training step (network/simulate.h) — max-min fairness
// derived by hand, a pure-compute step against the pipeline timeline, a pure-communication step
// against stage 4's α–β count, DDP buckets overlapping the backward pass, the paper's testbed trend
// (A.3), determinism, and bad input (a disconnected fabric, a stop request); the symmetry reduction
// against the full simulation, and the per-strategy link rates; the optimizer step after the gradient
// reduction, parallel.ddp_overlap false (one reduction after the backward) and the compute intervals'
// block identity, with step times derived by hand.

#include "collective/binding.h"
#include "network/linkload.h"
#include "network/overhead.h"
#include "network/routing.h"
#include "network/simulate.h"
#include "network/simulate_p.h"
#include "fabric/topology.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <QTest>

#include <limits>

#include <cmath>
#include <stop_token>

using namespace tw::network;
using tw::parallel::Cluster;
using tw::parallel::Strategy;

namespace {

Topology make(const TopologySpec& spec, const Cluster& cluster)
{
    auto t = build(spec, cluster);
    if (!t.ok())
        qFatal("build: %s", t.error().toString().c_str());
    return std::move(t).value();
}

std::shared_ptr<const tw::scenario::Derivation> derived(const tw::scenario::Scenario& s)
{
    auto d = tw::scenario::derive(s);
    if (!d.ok())
        qFatal("derive: %s", d.error().toString().c_str());
    if (!d.value()->stage3 || !d.value()->stage4)
        qFatal("no plan: %s", d.value()->planErrors.empty() ? "?" : d.value()->planErrors.front().toString().c_str());
    return d.value();
}

StepSimulation simulate(const Topology& t, const tw::scenario::Derivation& d, SimulationOptions o = {})
{
    auto r = simulateStep(t, *d.stage3, *d.stage4, o);
    if (!r.ok())
        qFatal("simulate: %s", r.error().toString().c_str());
    return std::move(r).value();
}

// A step with no compute and one collective: one group of GPUs 0 … n−1, an AllReduce of M bytes at the
// end of the backward pass in one bucket (a one-stage pipeline of one micro-batch whose blocks take 0 s).
struct OneCollective {
    tw::parallel::PlanDerivation plan;
    tw::collective::CollectiveDerivation coll;
};

OneCollective oneCollective(tw::parallel::CollectiveKind kind, std::uint32_t n, double M, const Cluster& cluster,
                            const tw::collective::NcclFabric& fabric = {},
                            const tw::collective::AlgorithmChoice& choice = {})
{
    OneCollective c;
    auto& p = c.plan;
    p.plan.dp = n;
    p.plan.pp = 1;
    p.plan.layerPartition = {1};
    p.plan.bucketBytes = M; // one bucket
    p.layerForwardSeconds = {0.0};
    p.mesh.resize(n);
    tw::parallel::Group g;
    g.strategy = Strategy::DP;
    g.kind = "dp";
    for (std::uint32_t i = 0; i < n; ++i) {
        g.members.push_back(i);
        p.mesh[i].dp = i;
    }
    p.comm.groups.push_back(g);
    tw::parallel::CollectiveCall call;
    call.kind = kind;
    call.strategy = Strategy::DP;
    call.phase = tw::model::Phase::Backward;
    call.firstGroup = 0;
    call.groupCount = 1;
    call.payloadBytes = M;
    call.what = "gradient AllReduce";
    p.comm.calls.push_back(call);
    p.timeline = tw::parallel::pipelineTimeline(tw::parallel::PipelineSchedule::OneFOneB, 1, 1, 1, {0.0}, {0.0});
    c.coll = tw::collective::bindPlan(p.comm, cluster, choice, {}, fabric);
    return c;
}

OneCollective oneAllReduce(std::uint32_t n, double M, const Cluster& cluster,
                           const tw::collective::NcclFabric& fabric = {})
{
    return oneCollective(tw::parallel::CollectiveKind::AllReduce, n, M, cluster, fabric);
}

// oneAllReduce with compute: one stage of one layer whose forward takes F and backward B per micro-batch
// (nAcc micro-batches, 1F1B), the gradient AllReduce of M bytes in buckets of `bucket` bytes, and, when
// optimizerSeconds > 0, the kernel model's optimizer step of that time (plan.kernels.timed).
OneCollective computeAndAllReduce(std::uint32_t n, double M, double bucket, const Cluster& cluster, double F, double B,
                                  std::uint64_t nAcc, double optimizerSeconds)
{
    OneCollective c = oneAllReduce(n, M, cluster);
    auto& p = c.plan;
    p.plan.bucketBytes = bucket;
    p.layerForwardSeconds = {F};
    p.comm.calls[0].repeat = 1;
    p.timeline = tw::parallel::pipelineTimeline(tw::parallel::PipelineSchedule::OneFOneB, 1, 1, nAcc, {F}, {B});
    p.kernels.timed = optimizerSeconds > 0;
    p.kernels.optimizer.seconds = optimizerSeconds;
    return c;
}

// The α–β time of one AllReduce of `bytes` with `spec`'s algorithm over the NVSwitch path 0 → 1.
double alphaBeta(const Topology& t, tw::collective::ScheduleSpec spec, double bytes)
{
    auto path = route(t, 0, 1, 0).value();
    double alpha = 0, beta = 1e300;
    for (LinkId l : path) {
        alpha += t.link(l).latency;
        beta = std::min(beta, t.link(l).bandwidth * efficiency(t.link(l).protocol));
    }
    spec.bytes = bytes;
    return tw::collective::count(spec, tw::collective::LinkModel{alpha, beta}).timeSeconds;
}

// DGX A100 nodes on a rail-optimized leaf–spine: NVSwitch (NVLink 3) inside, a 200 Gb/s HDR NIC per GPU.
TopologySpec dgxA100Fabric()
{
    TopologySpec spec;
    spec.kind = TopologyKind::LeafSpine;
    spec.intraNode = IntraNode::NvSwitch;
    spec.nicPlacement = NicPlacement::PerGpu;
    spec.nicProtocol = Protocol::InfinibandHdr;
    spec.nvlink = Protocol::NvLink3;
    spec.nicBandwidth = nominalBandwidth(Protocol::InfinibandHdr);
    return spec;
}

// DGX H100 nodes on a rail-optimized leaf–spine (the dgx-h100-4node preset's fabric): NVSwitch (NVLink 4)
// inside, a 400 Gb/s NDR NIC per GPU on PCIe Gen5.
TopologySpec dgxH100Fabric()
{
    TopologySpec spec = dgxA100Fabric();
    spec.pcie = Protocol::PcieGen5;
    spec.nvlink = Protocol::NvLink4;
    spec.nicProtocol = Protocol::InfinibandNdr;
    spec.nicBandwidth = nominalBandwidth(Protocol::InfinibandNdr);
    return spec;
}

// Calls f(link, out) for every NIC ↔ leaf link (out: NIC → leaf).
template <class F>
void forNicLinks(const Topology& t, F f)
{
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const Link& k = t.link(l);
        const bool out = t.node(k.from).kind == NodeKind::Nic && t.node(k.to).kind == NodeKind::LeafSwitch;
        const bool in = t.node(k.to).kind == NodeKind::Nic && t.node(k.from).kind == NodeKind::LeafSwitch;
        if (out || in)
            f(l, out);
    }
}

// GPT-2 small DDP on the paper's testbed: n single-GPU nodes, fp32 gradients, B = 8, one micro-batch per
// GPU (weak scaling, as a DDP testbed runs).
tw::scenario::Scenario testbed(std::uint64_t n)
{
    auto s = tw::scenario::preset("paper-dp").value();
    s.hardware.nodes = n;
    s.hardware.gpusPerNode = 1;
    s.parallel.dp = n;
    s.model.gradients = tw::model::Precision::Fp32;
    s.batch.microBatch = 8;
    s.batch.globalBatchTokens = 8 * 1024 * n;
    s.topology.kind = TopologyKind::PaperTestbed;
    s.topology.nicProtocol = Protocol::Ethernet10G;
    s.topology.nicBandwidth = 10e9 / 8;
    return s;
}

} // namespace

class TestSimulate : public QObject {
    Q_OBJECT
private slots:
    void maxMinFairness();
    void pureComputeSingleGpu();
    void pureComputePipeline();
    void pureCommunicationRing_data();
    void pureCommunicationRing();
    void ddpBucketsOverlapBackward();
    void testbedShareRisesWithN();
    void deterministic();
    void timelinesAreConsistent();
    void disconnected();
    void cancelled();
    void matchesReference_data();
    void matchesReference();
    void symmetryMatchesFull_data();
    void symmetryMatchesFull();
    void symmetryRefused_data();
    void symmetryRefused();
    void strategyRates();
    void ncclChannelsOnEveryRail_data();
    void ncclChannelsOnEveryRail();
    void nvlsThroughTheSwitch_data();
    void nvlsThroughTheSwitch();
    void ncclCallAloneTakesNcclsTime_data();
    void ncclCallAloneTakesNcclsTime();
    void ncclTreesAcrossNodes();
    void nvlsTreeAcrossNodes_data();
    void nvlsTreeAcrossNodes();
    void staticLoadsAreSimulated_data();
    void staticLoadsAreSimulated();
    void optimizerStepAfterReduction_data();
    void optimizerStepAfterReduction();
    void ddpOverlapOff();
    void tpOverlapHidesInputGradientCollectives();
    void kernelModelPresetAddsTheOptimizerStep();
    void computeIntervalsCarryTheirBlock();
};

void TestSimulate::maxMinFairness()
{
    // Links: 0 = 10 GB/s shared, 1 = 2 GB/s elsewhere.
    const std::vector<double> cap = {10e9, 2e9};
    // Two flows on link 0: neither has another constraint, so each gets 10/2 = 5 GB/s.
    auto two = maxMinFairRates(cap, {{0}, {0}});
    QCOMPARE(two.size(), std::size_t(2));
    QCOMPARE(two[0], 5e9);
    QCOMPARE(two[1], 5e9);
    // A third flow crosses link 0 and link 1. Progressive filling: link 1's share is 2/1 = 2 GB/s, link
    // 0's 10/3 ≈ 3.33: link 1 is the bottleneck, the third flow is fixed at 2. Link 0 has 10 − 2 = 8 left
    // for the other two: 4 + 4 (and 4 + 4 + 2 = 10 fills it: no flow can grow without another shrinking).
    auto three = maxMinFairRates(cap, {{0}, {0}, {0, 1}});
    QCOMPARE(three[0], 4e9);
    QCOMPARE(three[1], 4e9);
    QCOMPARE(three[2], 2e9);
    // Disjoint flows each get their link.
    auto apart = maxMinFairRates(cap, {{0}, {1}});
    QCOMPARE(apart[0], 10e9);
    QCOMPARE(apart[1], 2e9);
    // A flow with a cap of its own (NCCL's bandwidth): of the two on link 0, the one capped at 3 GB/s
    // freezes there (3 < the fair 5) and the other takes the 7 left; a cap above the fair share changes
    // nothing (5 and 5); with the third flow as above, a cap of 1 GB/s on it frees link 0 for 4.5 + 4.5.
    auto capped = maxMinFairRates(cap, {{0}, {0}}, {3e9, std::numeric_limits<double>::infinity()});
    QCOMPARE(capped[0], 3e9);
    QCOMPARE(capped[1], 7e9);
    auto loose = maxMinFairRates(cap, {{0}, {0}}, {6e9, 6e9});
    QCOMPARE(loose[0], 5e9);
    QCOMPARE(loose[1], 5e9);
    auto third = maxMinFairRates(cap, {{0}, {0}, {0, 1}}, {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), 1e9});
    QCOMPARE(third[0], 4.5e9);
    QCOMPARE(third[1], 4.5e9);
    QCOMPARE(third[2], 1e9);
}

void TestSimulate::pureComputeSingleGpu()
{
    // One GPU, no group of more than one: no communication at all. The step is the pipeline's makespan,
    // here N_acc·(forward + backward) of the one stage.
    auto s = tw::scenario::preset("paper-dp").value();
    s.hardware.nodes = 1;
    s.hardware.gpusPerNode = 1;
    s.parallel.dp = 1;
    s.batch.globalBatchTokens = 32 * 1024 * 4; // 4 micro-batches
    s.topology.kind = TopologyKind::PcieServer;
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    const StepSimulation r = simulate(t, *d);
    const auto& tl = d->stage3->timeline;
    QVERIFY(tl.makespan > 0);
    QVERIFY(std::abs(r.stepSeconds - tl.makespan) <= 1e-9 * tl.makespan);
    QVERIFY(std::abs(r.stepSeconds - 4 * (tl.stageForwardSeconds[0] + tl.stageBackwardSeconds[0])) <= 1e-9 * tl.makespan);
    QVERIFY(std::abs(r.computeSeconds - r.stepSeconds) <= 1e-9 * tl.makespan);
    QCOMPARE(r.exposedCommSeconds, 0.0);
    QCOMPARE(r.flows, std::uint64_t(0));
}

void TestSimulate::pureComputePipeline()
{
    // Example 5.2's 8 stages (80 ms per layer, partition [1,1,2,2,2,2,1,1], 1F1B, 2 micro-batches) with
    // communication switched off: the re-simulation must reproduce the stage 3 timeline exactly, and the
    // idle time per GPU is the bubble: makespan − busy.
    auto s = tw::scenario::preset("paper-pp").value();
    s.topology.kind = TopologyKind::NvSwitchNode;
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    SimulationOptions o;
    o.communication = false;
    const StepSimulation r = simulate(t, *d, o);
    const auto& tl = d->stage3->timeline;
    QVERIFY(std::abs(r.stepSeconds - tl.makespan) <= 1e-9 * tl.makespan);
    for (std::size_t g = 0; g < r.gpus.size(); ++g) {
        const double busy = tl.stageBusySeconds[d->stage3->mesh[g].pp];
        QVERIFY(std::abs(r.gpus[g].compute - busy) <= 1e-9 * tl.makespan);
        QVERIFY(std::abs(r.gpus[g].idle - (tl.makespan - busy)) <= 1e-9 * tl.makespan);
    }
    // With communication on, the PP Send/Recv only delay blocks: the step cannot be shorter.
    const StepSimulation c = simulate(t, *d);
    QVERIFY(c.stepSeconds > tl.makespan);
    QVERIFY(c.exposedByStrategy[1] > 0);
    QCOMPARE(c.exposedByStrategy[2], 0.0);
}

void TestSimulate::pureCommunicationRing_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("overhead");
    QTest::newRow("nvswitch 8") << int(TopologyKind::NvSwitchNode) << 8 << true;
    QTest::newRow("nvswitch 4, no overhead") << int(TopologyKind::NvSwitchNode) << 4 << false;
    QTest::newRow("testbed 5") << int(TopologyKind::PaperTestbed) << 5 << true;
}

void TestSimulate::pureCommunicationRing()
{
    // One ring AllReduce of M = n·2^20 B (equal chunks M/n) and nothing else. Every ring step, each rank
    // sends one chunk to its successor; on a uniform fabric each flow's path has the same latency α (Σ of
    // its links' latencies) and its links carry no other flow of the step (NVSwitch: GPU→switch and
    // switch→GPU are per GPU; testbed: per node NIC and PCIe legs), so each flow runs at the link's payload
    // rate β = bandwidth·efficiency and the step takes α + (M/n)/β for every rank alike; per-rank step
    // dependencies then chain 2(n−1) such steps: T = 2(n−1)·(α + M/(n·β)), which is exactly stage 4's
    // count() with LinkModel{α, β}.
    QFETCH(int, kind);
    QFETCH(int, n);
    QFETCH(bool, overhead);
    TopologySpec spec;
    spec.kind = TopologyKind(kind);
    const Cluster cluster = spec.kind == TopologyKind::PaperTestbed ? Cluster{std::uint64_t(n), 1} : Cluster{1, std::uint64_t(n)};
    if (spec.kind == TopologyKind::PaperTestbed) {
        spec.nicProtocol = Protocol::Ethernet10G;
        spec.nicBandwidth = 10e9 / 8;
    }
    const Topology t = make(spec, cluster);
    const double M = n * double(1 << 20);
    const OneCollective c = oneAllReduce(std::uint32_t(n), M, cluster);
    SimulationOptions o;
    o.protocolOverhead = overhead;
    o.ncclBandwidth = false; // the links' α–β; NCCL's own bandwidth: ncclCallAloneTakesNcclsTime
    auto r = simulateStep(t, c.plan, c.coll, o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());

    // α and β of the path 0 → 1 (all ring paths are alike on these fabrics).
    auto path = route(t, 0, 1, 0).value();
    double alpha = 0, beta = 1e300;
    for (LinkId l : path) {
        alpha += t.link(l).latency;
        beta = std::min(beta, t.link(l).bandwidth * (overhead ? efficiency(t.link(l).protocol) : 1.0));
    }
    tw::collective::LinkModel link{alpha, beta};
    const double expected = tw::collective::count(c.coll.calls[0].spec, link).timeSeconds;
    QVERIFY(expected > 0);
    QVERIFY2(std::abs(r.value().stepSeconds - expected) <= 1e-9 * expected,
             qPrintable(QStringLiteral("simulated %1, α–β %2").arg(r.value().stepSeconds, 0, 'g', 17).arg(expected, 0, 'g', 17)));
    // Nothing else happens: the whole step is exposed DP communication.
    QVERIFY(std::abs(r.value().exposedByStrategy[0] - expected) <= 1e-9 * expected);
    QVERIFY(std::abs(r.value().commShare - 1.0) <= 1e-9);
    QCOMPARE(r.value().flows, std::uint64_t(2 * (n - 1) * n));
}

void TestSimulate::ddpBucketsOverlapBackward()
{
    // paper-dp on one NVSwitch node: 8 DDP replicas, 2 micro-batches, gradients of 248,879,616 B in
    // 25 MiB buckets during the last micro-batch's backward. Exposed DP time must be below the time all
    // buckets take back to back (they overlap the backward) and at least the last bucket's AllReduce
    // alone (it starts only when the backward has ended).
    auto s = tw::scenario::preset("paper-dp").value();
    s.topology.kind = TopologyKind::NvSwitchNode;
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    const StepSimulation r = simulate(t, *d);

    auto path = route(t, 0, 1, 0).value();
    double alpha = 0, beta = 1e300;
    for (LinkId l : path) {
        alpha += t.link(l).latency;
        beta = std::min(beta, t.link(l).bandwidth * efficiency(t.link(l).protocol));
    }
    const tw::collective::LinkModel link{alpha, beta};
    const auto& call = d->stage4->calls[0];
    QVERIFY(d->stage3->comm.calls[0].strategy == Strategy::DP);
    const double M = call.spec.bytes, bucket = d->stage3->plan.bucketBytes.value(); // DDP: PyTorch's 25 MiB
    const auto buckets = std::uint64_t(std::ceil(M / bucket));
    QCOMPARE(buckets, std::uint64_t(10)); // 248,879,616 / 26,214,400 = 9.49…
    double total = 0, last = 0;
    for (std::uint64_t b = 0; b < buckets; ++b) {
        auto spec = call.spec;
        spec.bytes = std::min(bucket, M - double(b) * bucket);
        last = tw::collective::count(spec, link).timeSeconds;
        total += last;
    }
    QVERIFY(r.exposedByStrategy[0] < total);
    QVERIFY(r.exposedByStrategy[0] >= last * (1 - 1e-9));
    QCOMPARE(r.collectiveInstances, buckets);
    // The compute is the timeline's: no pipeline, so the step is compute + exposed DP.
    QVERIFY(std::abs(r.stepSeconds - (d->stage3->timeline.makespan + r.exposedByStrategy[0])) <= 1e-9 * r.stepSeconds);
    QVERIFY(r.mfu == 0); // no FLOP inputs given
    SimulationOptions o;
    o.modelFlopsPerStep = d->figures.valueOf("compute.flops_per_step");
    o.peakFlopsPerGpu = d->figures.valueOf("compute.gpu_peak_flops");
    const StepSimulation m = simulate(t, *d, o);
    QVERIFY(m.mfu > 0 && m.mfu < 1);
    QVERIFY(std::abs(m.mfu - o.modelFlopsPerStep / (8 * o.peakFlopsPerGpu * m.stepSeconds)) <= 1e-12);
    QVERIFY(m.figures.find("sim.mfu"));
}

void TestSimulate::testbedShareRisesWithN()
{
    // The paper's A.3 testbed shape: single-GPU nodes on one 10 Gb/s Ethernet switch, DDP of GPT-2 small
    // with fp32 gradients (≈498 MB). Compute per GPU is fixed (weak scaling), the ring AllReduce time
    // 2(N−1)/N·M/β + 2(N−1)·α grows with N, so the AllReduce share must rise from N = 2 to 7.
    double previous = 0;
    for (std::uint64_t n = 2; n <= 7; ++n) {
        auto s = testbed(n);
        auto d = derived(s);
        const Topology t = make(s.topology, d->cluster);
        const StepSimulation r = simulate(t, *d);
        QVERIFY2(r.commShare > previous, qPrintable(QStringLiteral("N = %1: share %2 after %3").arg(n).arg(r.commShare).arg(previous)));
        QVERIFY(r.commShare < 1);
        QVERIFY(std::abs(r.commShare - r.exposedByStrategy[0] / r.stepSeconds) <= 1e-12);
        previous = r.commShare;
    }
}

void TestSimulate::deterministic()
{
    auto s = testbed(4);
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    const StepSimulation a = simulate(t, *d), b = simulate(t, *d);
    QCOMPARE(a.stepSeconds, b.stepSeconds);
    QCOMPARE(a.flows, b.flows);
    QCOMPARE(a.linkPayloadBytes, b.linkPayloadBytes);
    QVERIFY(!a.linkBins.series.empty());
    QVERIFY(a.linkBins == b.linkBins);
}

void TestSimulate::timelinesAreConsistent()
{
    // A 3D-ish case on two NVSwitch nodes: tp 2 × pp 2 × dp 4 (16 GPUs), GPT-2 small. Per GPU the recorded
    // intervals tile [0, step] and their sums are the summary's; the payload a link carried equals the
    // integral of its rate samples.
    auto s = tw::scenario::preset("paper-reference").value();
    s.hardware.nodes = 2;
    s.parallel.dp = 4;
    s.parallel.pp = 2;
    s.parallel.tp = 2;
    s.batch.globalBatchTokens = 32 * 1024 * 4 * 4;
    s.topology.kind = TopologyKind::LeafSpine;
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    const StepSimulation r = simulate(t, *d);
    QCOMPARE(r.gpuTimelines.size(), std::size_t(16));
    QVERIFY(r.exposedByStrategy[2] > 0); // TP AllReduces block compute
    QVERIFY(r.exposedByStrategy[1] > 0);
    for (const GpuTimeline& tl : r.gpuTimelines) {
        double t0 = 0, compute = 0, comm = 0;
        for (const GpuInterval& iv : tl.intervals) {
            QVERIFY(std::abs(iv.start - t0) <= 1e-12 * r.stepSeconds);
            QVERIFY(iv.end >= iv.start);
            t0 = iv.end;
            if (iv.activity == Activity::Compute)
                compute += iv.end - iv.start;
            else if (iv.activity == Activity::Communication)
                comm += iv.end - iv.start;
        }
        QVERIFY(std::abs(t0 - r.stepSeconds) <= 1e-12 * r.stepSeconds);
        const GpuSummary& g = r.gpus[tl.gpu];
        QVERIFY(std::abs(compute - g.compute) <= 1e-9 * r.stepSeconds);
        QVERIFY(std::abs(comm - g.exposedTotal()) <= 1e-9 * r.stepSeconds);
    }
    // Each bin holds bytes (rate × time integrated exactly), so a link's bins sum to its payload; every
    // link with payload has a series, the bins cover the step, and the bin count stays bounded.
    const LinkBins& bins = r.linkBins;
    QCOMPARE(bins.seriesOf.size(), t.links().size());
    QVERIFY(bins.binSeconds > 0);
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const double payload = r.linkPayloadBytes[l];
        QCOMPARE(bins.of(l) != nullptr, payload > 0);
        QVERIFY2(std::abs(bins.bytes(l) - payload) <= 1e-9 * std::max(1.0, payload),
                 qPrintable(QStringLiteral("link %1: %2 vs %3").arg(l).arg(bins.bytes(l), 0, 'g', 17).arg(payload, 0, 'g', 17)));
    }
    for (const LinkSeries& ls : bins.series) {
        QVERIFY(ls.bins.size() <= SimulationOptions{}.maxLinkBins);
        QVERIFY(double(ls.bins.size()) * bins.binSeconds <= 2 * r.stepSeconds); // no bin past the step's
    }
    // The width adapts: the step fills more than half of the bins a link may hold (else it would be halved).
    QVERIFY(r.stepSeconds > 0.5 * SimulationOptions{}.maxLinkBins * bins.binSeconds);
}

void TestSimulate::disconnected()
{
    // Two GPUs with no link between them: the first transfer cannot be routed.
    Topology t;
    t.addNode({NodeKind::Gpu, "g0", 0, 0});
    t.addNode({NodeKind::Gpu, "g1", 1, 1});
    const OneCollective c = oneAllReduce(2, 1024, Cluster{2, 1});
    auto r = simulateStep(t, c.plan, c.coll);
    QVERIFY(!r.ok());
    const std::string m = r.error().toString();
    QVERIFY2(m.find("GPU 0") != std::string::npos && m.find("GPU 1") != std::string::npos, m.c_str());
}

void TestSimulate::cancelled()
{
    auto s = testbed(3);
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    std::stop_source stop;
    stop.request_stop();
    tw::Progress progress;
    progress.stop = stop.get_token();
    auto r = simulateStep(t, *d->stage3, *d->stage4, {}, progress);
    QVERIFY(!r.ok());
    QVERIFY(r.error().message.find("cancelled") != std::string::npos);
}

void TestSimulate::matchesReference_data()
{
    QTest::addColumn<int>("which");
    QTest::newRow("testbed dp 4") << 0;
    QTest::newRow("paper-reference dp 8") << 1;
    QTest::newRow("tp 2 x pp 2 x dp 4 leaf-spine") << 2;
    QTest::newRow("tp 2 x pp 2 x dp 4 leaf-spine, no overhead") << 3;
    QTest::newRow("tp 4 x pp 2 x dp 4 leaf-spine, 4 nodes") << 4;
}

void TestSimulate::matchesReference()
{
    // The optimized simulation (rates recomputed per connected component of flows, finish-time heap,
    // lazy advancing, cached routes) against the original full recomputation: same step, per-GPU
    // summaries, flows, instances and link payloads up to floating-point reassociation.
    QFETCH(int, which);
    tw::scenario::Scenario s;
    SimulationOptions o;
    if (which == 0) {
        s = testbed(4);
    } else {
        s = tw::scenario::preset("paper-reference").value();
        if (which >= 2) {
            s.hardware.nodes = which == 4 ? 4 : 2;
            s.parallel.dp = 4;
            s.parallel.pp = 2;
            s.parallel.tp = which == 4 ? 4 : 2;
            s.batch.globalBatchTokens = 32 * 1024 * 4 * 4;
            s.topology.kind = TopologyKind::LeafSpine;
        }
        o.protocolOverhead = which != 3;
    }
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    o.exploitSymmetry = false; // the engines compared flow for flow; symmetryMatchesFull tests the reductions
    o.collapsePrivateCollectives = false;
    const StepSimulation a = simulate(t, *d, o);
    auto rr = simulateStepReference(t, *d->stage3, *d->stage4, o);
    QVERIFY(rr.ok());
    const StepSimulation& b = rr.value();
    auto near = [](double x, double y) { return std::abs(x - y) <= 1e-9 * std::max({std::abs(x), std::abs(y), 1e-300}); };
    QVERIFY2(near(a.stepSeconds, b.stepSeconds), qPrintable(QStringLiteral("%1 vs %2").arg(a.stepSeconds, 0, 'g', 17).arg(b.stepSeconds, 0, 'g', 17)));
    QVERIFY(a.stepSeconds > 0);
    QCOMPARE(a.flows, b.flows);
    QCOMPARE(a.collectiveInstances, b.collectiveInstances);
    QCOMPARE(a.rateUpdates, b.rateUpdates);
    QCOMPARE(a.gpus.size(), b.gpus.size());
    const double tol = 1e-9 * b.stepSeconds;
    for (std::size_t g = 0; g < a.gpus.size(); ++g) {
        QVERIFY(std::abs(a.gpus[g].compute - b.gpus[g].compute) <= tol);
        QVERIFY(std::abs(a.gpus[g].idle - b.gpus[g].idle) <= tol);
        QVERIFY(std::abs(a.gpus[g].finish - b.gpus[g].finish) <= tol);
        for (int k = 0; k < 4; ++k)
            QVERIFY(std::abs(a.gpus[g].exposed[k] - b.gpus[g].exposed[k]) <= tol);
    }
    QVERIFY(std::abs(a.commShare - b.commShare) <= 1e-9);
    QCOMPARE(a.linkPayloadBytes.size(), b.linkPayloadBytes.size());
    for (std::size_t l = 0; l < a.linkPayloadBytes.size(); ++l)
        QVERIFY2(std::abs(a.linkPayloadBytes[l] - b.linkPayloadBytes[l]) <= 1e-9 * std::max(1.0, b.linkPayloadBytes[l]),
                 qPrintable(QStringLiteral("link %1: %2 vs %3").arg(l).arg(a.linkPayloadBytes[l]).arg(b.linkPayloadBytes[l])));
    QCOMPARE(a.gpuTimelines.size(), b.gpuTimelines.size());
    QCOMPARE(a.linkBins.series.size(), b.linkBins.series.size());
    for (LinkId l = 0; l < a.linkPayloadBytes.size(); ++l)
        QVERIFY(std::abs(a.linkBins.bytes(l) - b.linkBins.bytes(l)) <= 1e-9 * std::max(1.0, b.linkPayloadBytes[l]));
}

namespace {

// The scenarios of the symmetry tests (≤ 64 GPUs).
tw::scenario::Scenario symmetryScenario(int which)
{
    tw::scenario::Scenario s;
    auto threeD = [&](std::uint64_t nodes, std::uint64_t dp, std::uint64_t pp, std::uint64_t tp) {
        s = tw::scenario::preset("paper-reference").value();
        s.hardware.nodes = nodes;
        s.parallel.dp = dp;
        s.parallel.pp = pp;
        s.parallel.tp = tp;
        s.batch.globalBatchTokens = 32 * 1024 * dp * 4; // 4 micro-batches
        s.topology.kind = TopologyKind::LeafSpine;
    };
    switch (which) {
    case 0: // DDP across two nodes of a leaf–spine fabric
        s = tw::scenario::preset("paper-dp").value();
        s.hardware.nodes = 2;
        s.parallel.dp = 16;
        s.batch.globalBatchTokens = s.batch.microBatch * s.batch.sequenceLength * 16 * 2;
        s.topology.kind = TopologyKind::LeafSpine;
        break;
    case 1: threeD(2, 4, 2, 2); break;
    case 2: // the benchmark's shape at 64 GPUs: TP 8 inside each node (a model with 32 heads, 4 layers)
        s = tw::scenario::preset("llama2-7b").value();
        s.model.layers = 4;
        s.hardware.nodes = 8;
        s.hardware.gpusPerNode = 8;
        s.parallel.dp = 4;
        s.parallel.pp = 2;
        s.parallel.tp = 8;
        s.parallel.layerPartition.clear();
        s.batch.globalBatchTokens = s.batch.microBatch * s.batch.sequenceLength * 4 * 4;
        s.topology.kind = TopologyKind::LeafSpine;
        break;
    case 3: threeD(8, 8, 2, 4); break;
    case 4: // ZeRO-3 across two nodes
        s = tw::scenario::preset("paper-dp").value();
        s.hardware.nodes = 2;
        s.parallel.dp = 16;
        s.parallel.sharding = tw::parallel::Sharding::Zero3;
        s.batch.globalBatchTokens = s.batch.microBatch * s.batch.sequenceLength * 16 * 2;
        s.topology.kind = TopologyKind::LeafSpine;
        break;
    case 5: // MoE: 8 experts (ep 8) over 16 replicas on two nodes
        s = tw::scenario::preset("paper-moe").value();
        s.hardware.nodes = 2;
        s.parallel.dp = 16;
        s.batch.globalBatchTokens = s.batch.microBatch * s.batch.sequenceLength * 16;
        s.topology.kind = TopologyKind::LeafSpine;
        break;
    case 6: s = testbed(4); break;     // the paper's testbed: single-GPU nodes, TCP, staging through host memory
    case 7: // one NIC per node: the weights of the quotient (several flows of an orbit on one NIC link)
        threeD(4, 8, 2, 2);
        s.topology.nicPlacement = NicPlacement::PerNode;
        break;
    case 8: // 2 NICs per leaf, 2 spines, 4:1 oversubscribed: ECMP decides (reduced or not, it must agree)
        threeD(8, 8, 2, 4);
        s.topology.nicsPerLeaf = 2;
        s.topology.spines = 2;
        s.topology.oversubscription = 4;
        break;
    case 10: // ZeRO-3 on one NVSwitch node: the blocking parameter AllGathers cross only NVLink
        s = tw::scenario::preset("paper-dp").value();
        s.parallel.sharding = tw::parallel::Sharding::Zero3;
        s.topology.kind = TopologyKind::NvSwitchNode;
        break;
    case 11: // TP 8 in each of two nodes, DDP across them
        s = symmetryScenario(2);
        s.hardware.nodes = 2;
        s.parallel.dp = 2;
        s.parallel.pp = 1;
        s.batch.globalBatchTokens = s.batch.microBatch * s.batch.sequenceLength * 2 * 2;
        break;
    case 12: // Megatron sequence parallelism: TP ReduceScatter + AllGather
        s = symmetryScenario(2);
        s.parallel.sequenceParallel = true;
        break;
    case 13: // interleaved 1F1B, 2 stages × 2 chunks
        threeD(2, 4, 2, 2);
        s.parallel.schedule = tw::parallel::PipelineSchedule::Interleaved;
        s.parallel.virtualStages = 2;
        break;
    default: s = tw::scenario::preset("paper-reference").value(); s.topology.kind = TopologyKind::NvSwitchNode; break;
    }
    return s;
}

bool near(double x, double y, double scale) { return std::abs(x - y) <= 1e-9 * scale; }

} // namespace

void TestSimulate::symmetryMatchesFull_data()
{
    QTest::addColumn<int>("which");
    QTest::addColumn<int>("expectReduced"); // 1 must reduce, −1 either (ECMP decides)
    QTest::addColumn<bool>("symmetry");     // false: symmetry off, private collectives in closed form only
    QTest::addColumn<bool>("expectClosedForm");
    QTest::addColumn<bool>("recordLinks");  // false: no link bins (the one-rank closed form shortcut runs)
    QTest::newRow("ddp 16, 2 nodes, leaf-spine") << 0 << 1 << true << false << true;
    QTest::newRow("tp 2 x pp 2 x dp 4, leaf-spine") << 1 << 1 << true << false << true;
    QTest::newRow("tp 8 x pp 2 x dp 4, 64 GPUs") << 2 << 1 << true << false << true;
    QTest::newRow("tp 4 x pp 2 x dp 8, 64 GPUs") << 3 << -1 << true << false << true;
    QTest::newRow("zero-3, dp 16, 2 nodes") << 4 << 1 << true << false << true;
    QTest::newRow("moe ep 8 x dp 16, 2 nodes") << 5 << -1 << true << false << true;
    QTest::newRow("paper testbed 4") << 6 << 1 << true << false << true;
    QTest::newRow("per-node NICs, tp 2 x pp 2 x dp 8") << 7 << -1 << true << false << true;
    QTest::newRow("oversubscribed spines, 64 GPUs") << 8 << -1 << true << false << true;
    QTest::newRow("paper-reference, nvswitch node") << 9 << 1 << true << false << true;
    // TP 8 on a node's NVLink, DP and PP on the NICs: only TP crosses NVLink, its collectives are private
    // (closed form). On these H100 nodes NCCL's auto runs TP's AllReduces as NVLS (flows into and out of
    // the NVSwitch, nvlsflows.h): the switch's rank is fixed by every shift, its links are the GPUs' own.
    QTest::newRow("closed form: tp 8 x pp 2 x dp 4, 64 GPUs") << 2 << 0 << false << true << true;
    QTest::newRow("closed form: tp 8 x dp 2, 2 nodes") << 11 << 0 << false << true << true;
    // DP shares NVLink with TP (the stream is not blocking): no link is private, the engine runs as is.
    // Both: the quotient's TP collectives in closed form (link timelines off, as the CLI runs).
    QTest::newRow("symmetry and closed form: tp 8 x pp 2 x dp 4, 64 GPUs") << 2 << 1 << true << true << false;
    QTest::newRow("symmetry and closed form: tp 8 x dp 2, 2 nodes") << 11 << 1 << true << true << false;
    QTest::newRow("sequence parallel, tp 8 x pp 2 x dp 4") << 12 << 1 << true << true << false;
    // The same with link bins: the closed forms' bins folded onto the link orbits as their payload.
    QTest::newRow("symmetry, closed form and link bins: tp 8 x pp 2 x dp 4, 64 GPUs") << 2 << 1 << true << true << true;
    QTest::newRow("symmetry, closed form and link bins: tp 8 x dp 2, 2 nodes") << 11 << 1 << true << true << true;
    QTest::newRow("symmetry, closed form and link bins: sequence parallel") << 12 << 1 << true << true << true;
    QTest::newRow("sequence parallel, closed form only") << 12 << 0 << false << true << true;
    QTest::newRow("interleaved, tp 2 x pp 2 (v 2) x dp 4") << 13 << 1 << true << false << true;
    QTest::newRow("no closed form: tp 2 x pp 2 x dp 4") << 1 << 0 << false << false << true;
    QTest::newRow("no closed form: tp 4 x pp 2 x dp 8, 64 GPUs") << 3 << 0 << false << false << true;
    QTest::newRow("no closed form: zero-3 on one nvswitch node") << 10 << 0 << false << false << true;

}

void TestSimulate::symmetryMatchesFull()
{
    // Every GPU of an orbit does what its representative does (simulate.h "Symmetry"), so the reduced
    // simulation must reproduce the full one: step, per-GPU compute, exposed time per strategy, idle and
    // finish, every link's payload, the full step's flow and instance counts, every recorded timeline.
    // Tolerance 1e-9 of the step (of the largest payload for bytes): the two runs add the same rates in
    // different orders (a quotient link sums a weighted flow once, the full one each flow).
    QFETCH(int, which);
    QFETCH(int, expectReduced);
    QFETCH(bool, symmetry);
    QFETCH(bool, expectClosedForm);
    QFETCH(bool, recordLinks);
    const auto s = symmetryScenario(which);
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    SimulationOptions full, fast;
    full.exploitSymmetry = false;
    full.collapsePrivateCollectives = false;
    fast.exploitSymmetry = symmetry;
    fast.recordLinks = recordLinks;
    const StepSimulation a = simulate(t, *d, fast);
    const StepSimulation b = simulate(t, *d, full);
    const std::size_t G = d->stage3->mesh.size();
    qInfo("%s; %llu of %llu flows simulated", a.reduction.c_str(), static_cast<unsigned long long>(a.simulatedFlows),
          static_cast<unsigned long long>(a.flows));
    QCOMPARE(b.symmetryFactor, 1u);
    QCOMPARE(b.simulatedGpus, std::uint64_t(G));
    if (expectReduced == 1) {
        QVERIFY2(a.symmetryFactor > 1, a.reduction.c_str());
        QVERIFY(a.simulatedFlows < b.simulatedFlows);
    }
    if (expectReduced == 0)
        QCOMPARE(a.symmetryFactor, 1u);
    if (expectClosedForm) {
        QVERIFY(a.closedFormInstances > 0);
        QVERIFY(a.simulatedFlows < b.simulatedFlows);
    } else if (!symmetry) {
        QCOMPARE(a.closedFormInstances, std::uint64_t(0));
    }
    QCOMPARE(b.closedFormInstances, std::uint64_t(0));
    QCOMPARE(a.simulatedGpus * a.symmetryFactor, std::uint64_t(G));
    QCOMPARE(a.flows, b.flows);
    QCOMPARE(b.flows, b.simulatedFlows);
    QCOMPARE(a.collectiveInstances, b.collectiveInstances);
    const double T = b.stepSeconds;
    QVERIFY(T > 0);
    QVERIFY2(near(a.stepSeconds, T, T), qPrintable(QStringLiteral("%1 vs %2").arg(a.stepSeconds, 0, 'g', 17).arg(T, 0, 'g', 17)));
    QVERIFY(near(a.computeSeconds, b.computeSeconds, T));
    QVERIFY(near(a.idleSeconds, b.idleSeconds, T));
    for (int k = 0; k < 4; ++k)
        QVERIFY(near(a.exposedByStrategy[k], b.exposedByStrategy[k], T));
    QCOMPARE(a.gpus.size(), G);
    for (std::size_t g = 0; g < G; ++g) {
        QVERIFY2(near(a.gpus[g].finish, b.gpus[g].finish, T), qPrintable(QStringLiteral("GPU %1").arg(g)));
        QVERIFY(near(a.gpus[g].compute, b.gpus[g].compute, T));
        QVERIFY(near(a.gpus[g].idle, b.gpus[g].idle, T));
        for (int k = 0; k < 4; ++k)
            QVERIFY(near(a.gpus[g].exposed[k], b.gpus[g].exposed[k], T));
    }
    QCOMPARE(a.linkPayloadBytes.size(), b.linkPayloadBytes.size());
    const double most = *std::max_element(b.linkPayloadBytes.begin(), b.linkPayloadBytes.end());
    QVERIFY(most > 0);
    for (std::size_t l = 0; l < a.linkPayloadBytes.size(); ++l)
        QVERIFY2(near(a.linkPayloadBytes[l], b.linkPayloadBytes[l], most),
                 qPrintable(QStringLiteral("link %1 (%2): %3 vs %4").arg(l).arg(QString::fromStdString(t.link(LinkId(l)).id))
                                .arg(a.linkPayloadBytes[l], 0, 'g', 17).arg(b.linkPayloadBytes[l], 0, 'g', 17)));
    // Timelines: the same GPUs, the same intervals' sums; the same links carry traffic.
    QCOMPARE(a.gpuTimelines.size(), b.gpuTimelines.size());
    for (std::size_t i = 0; i < a.gpuTimelines.size(); ++i) {
        QCOMPARE(a.gpuTimelines[i].gpu, b.gpuTimelines[i].gpu);
        double ca = 0, cb = 0;
        for (const GpuInterval& iv : a.gpuTimelines[i].intervals)
            ca += iv.activity == Activity::Communication ? iv.end - iv.start : 0;
        for (const GpuInterval& iv : b.gpuTimelines[i].intervals)
            cb += iv.activity == Activity::Communication ? iv.end - iv.start : 0;
        QVERIFY(near(ca, cb, T));
    }
    // Bins: every link's (its orbit representative's under symmetry) sum to the full run's payload, and
    // on the same grid bin by bin.
    QCOMPARE(a.linkBins.series.empty(), !recordLinks);
    if (recordLinks) {
        for (LinkId l = 0; l < a.linkPayloadBytes.size(); ++l) {
            QVERIFY2(near(a.linkBins.bytes(l), b.linkPayloadBytes[l], most),
                     qPrintable(QStringLiteral("link %1: %2 vs %3").arg(l).arg(a.linkBins.bytes(l), 0, 'g', 17)
                                    .arg(b.linkPayloadBytes[l], 0, 'g', 17)));
            QVERIFY(near(b.linkBins.bytes(l), b.linkPayloadBytes[l], most));
        }
        if (a.linkBins.binSeconds == b.linkBins.binSeconds)
            for (LinkId l = 0; l < a.linkPayloadBytes.size(); ++l) {
                const LinkSeries* x = a.linkBins.of(l);
                const LinkSeries* y = b.linkBins.of(l);
                const std::size_t n = std::max(x ? x->bins.size() : 0, y ? y->bins.size() : 0);
                for (std::size_t k = 0; k < n; ++k) {
                    const double u = x && k < x->bins.size() ? x->bins[k].bytes : 0;
                    const double v = y && k < y->bins.size() ? y->bins[k].bytes : 0;
                    QVERIFY2(near(u, v, most), qPrintable(QStringLiteral("link %1 bin %2: %3 vs %4").arg(l).arg(k).arg(u).arg(v)));
                }
            }
    }
}

void TestSimulate::symmetryRefused_data()
{
    QTest::addColumn<int>("which");
    QTest::newRow("swapped GPUs across nodes") << 0;
    QTest::newRow("exploitSymmetry off") << 1;
}

void TestSimulate::symmetryRefused()
{
    // tp 2 × pp 2 × dp 4 on two nodes, GPU 1 (tp 1 of replica 0, node 0) swapped with GPU 8 (tp 0 of
    // replica 0 of stage 1, node 1): the TP pair {0, 8} now crosses the network while the others stay on
    // NVLink, so no shift maps the step onto itself: the full simulation must run (every GPU simulated).
    QFETCH(int, which);
    auto s = symmetryScenario(1);
    SimulationOptions o;
    if (which == 0) {
        s.parallel.assignment = tw::parallel::defaultAssignment(s.parallel);
        std::swap(s.parallel.assignment[1], s.parallel.assignment[8]);
    } else {
        o.exploitSymmetry = false;
    }
    auto d = derived(s);
    const Topology t = make(s.topology, d->cluster);
    const StepSimulation r = simulate(t, *d, o);
    qInfo("%s", r.reduction.c_str());
    QCOMPARE(r.symmetryFactor, 1u);
    QCOMPARE(r.simulatedGpus, std::uint64_t(16));
    QCOMPARE(r.simulatedFlows, r.flows);
    QVERIFY(r.reduction.find("full simulation") != std::string::npos);
}

void TestSimulate::strategyRates()
{
    // Two nodes of 2 GPUs, one NIC per node: a DP AllReduce between GPUs 0 and 2 and a PP AllReduce (the
    // tied-embedding kind) between GPUs 1 and 3, both at the end of a backward pass of 0 s, M = 1 MiB each.
    // Their ring steps start together and the flows 0 → 2 and 1 → 3 have mirror paths sharing every link
    // from the node's PCIe side on (root complex, NIC, leaf), each with its own GPU link. Max-min: both get
    // r = min over the path of capacity / (flows on it) = min(own links' capacity, shared links' capacity / 2),
    // so while both run, the NIC → leaf link carries strategyRate[DP] = strategyRate[PP] = r, rate 2r.
    TopologySpec spec;
    spec.kind = TopologyKind::LeafSpine;
    spec.nicPlacement = NicPlacement::PerNode;
    const Cluster cluster{2, 2};
    const Topology t = make(spec, cluster);
    const double M = double(1 << 20);
    OneCollective c = oneAllReduce(2, M, cluster);
    auto& p = c.plan;
    p.plan.dp = 2;
    p.plan.tp = 2;
    p.mesh.assign(4, {});
    for (std::uint32_t g = 0; g < 4; ++g)
        p.mesh[g] = {g / 2, 0, g % 2};
    p.comm.groups[0].members = {0, 2};
    tw::parallel::Group pp = p.comm.groups[0];
    pp.strategy = Strategy::PP;
    pp.kind = "pp-embedding";
    pp.members = {1, 3};
    p.comm.groups.push_back(pp);
    tw::parallel::CollectiveCall call = p.comm.calls[0];
    call.strategy = Strategy::PP;
    call.firstGroup = 1;
    call.what = "tied embedding gradient AllReduce";
    p.comm.calls.push_back(call);
    c.coll = tw::collective::bindPlan(p.comm, cluster, {});
    QCOMPARE(c.coll.calls.size(), std::size_t(2));

    const auto a = route(t, 0, 2, 0).value(), b = route(t, 1, 3, 1).value();
    double r = 1e300;
    LinkId nicUp = 0;
    bool found = false;
    for (LinkId l : a) {
        const bool shared = std::find(b.begin(), b.end(), l) != b.end();
        r = std::min(r, t.link(l).bandwidth * efficiency(t.link(l).protocol) / (shared ? 2 : 1));
        if (t.node(t.link(l).from).kind == NodeKind::Nic) {
            QVERIFY(shared);
            nicUp = l;
            found = true;
        }
    }
    QVERIFY(found);
    for (bool symmetry : {false, true}) {
        SimulationOptions o;
        o.exploitSymmetry = symmetry;
        auto run = simulateStep(t, c.plan, c.coll, o);
        QVERIFY2(run.ok(), run.ok() ? "" : run.error().toString().c_str());
        const StepSimulation& sim = run.value();
        // Bins: by strategy (kept in float) sums to the bytes; on the NIC → leaf link DP and PP move the
        // same bytes in every bin, never more than 2r · w, and a bin wholly inside the overlap holds 2r · w.
        const LinkBins& bins = sim.linkBins;
        QVERIFY(bins.binSeconds > 0);
        bool both = false;
        double fullest = 0;
        const LinkSeries* nic = bins.of(nicUp); // under symmetry its orbit representative's
        QVERIFY(nic);
        for (const LinkSeries& ls : bins.series)
            for (const LinkBin& x : ls.bins) {
                const double sum = double(x.byStrategy[0]) + x.byStrategy[1] + x.byStrategy[2] + x.byStrategy[3];
                QVERIFY(std::abs(sum - x.bytes) <= 1e-6 * std::max(1.0, x.bytes));
                if (&ls == nic && x.byStrategy[0] > 0 && x.byStrategy[1] > 0) {
                    QVERIFY2(std::abs(x.byStrategy[0] - x.byStrategy[1]) <= 1e-6 * x.bytes,
                             qPrintable(QStringLiteral("%1 vs %2").arg(x.byStrategy[0]).arg(x.byStrategy[1])));
                    QVERIFY(x.bytes <= 2 * r * bins.binSeconds * (1 + 1e-9));
                    fullest = std::max(fullest, x.bytes);
                    both = true;
                }
            }
        QVERIFY2(both && std::abs(fullest - 2 * r * bins.binSeconds) <= 1e-9 * fullest,
                 qPrintable(QStringLiteral("%1 vs %2").arg(fullest).arg(2 * r * bins.binSeconds)));
        QVERIFY(both);
    }
}


void TestSimulate::ncclChannelsOnEveryRail_data()
{
    QTest::addColumn<std::uint32_t>("nodes");
    QTest::addColumn<double>("perNicBytes");
    // DGX A100 nodes (8 A100, NVSwitch, a 200 Gb/s HDR NIC per GPU on its PCIe Gen4 switch), an AllReduce
    // of M = 128 MiB = 134,217,728 B over every GPU under NCCL's auto (ring, Simple). NCCL's search gives
    // one ring channel per NIC: 8 NICs × min(HDR 25, PCIe Gen4 24) GB/s = 8 channels of 24 GB/s, channel c
    // entering and leaving each node by NIC c. Each channel carries M/8 and, as a ring over N = 8·nodes
    // ranks, puts 2(N−1)/N of it through every node boundary in each direction:
    //   2 nodes, N = 16: 2·15/16 · 134,217,728/8 = 31,457,280 B per NIC per direction
    //   4 nodes, N = 32: 2·31/32 · 134,217,728/8 = 32,505,856 B per NIC per direction
    QTest::newRow("2 nodes") << 2u << 31457280.0;
    QTest::newRow("4 nodes") << 4u << 32505856.0;
}

void TestSimulate::ncclChannelsOnEveryRail()
{
    QFETCH(std::uint32_t, nodes);
    QFETCH(double, perNicBytes);
    const TopologySpec spec = dgxA100Fabric();
    const Cluster cluster{nodes, 8};
    const Topology t = make(spec, cluster);
    const double M = 134217728.0;
    const OneCollective c = oneAllReduce(8 * nodes, M, cluster, {"a100-80gb", spec});
    const tw::collective::BoundCall& b = c.coll.calls.front();
    QVERIFY2(b.nccl && b.counted, b.how.c_str());
    QVERIFY(b.prediction.algorithm == tw::nccl::Algorithm::Ring);
    // The layout: 8 channels, channel c on rail c (in and out by the same NIC).
    QCOMPARE(b.channels.size(), std::size_t{8});
    for (std::size_t ch = 0; ch < b.channels.size(); ++ch) {
        QCOMPARE(b.channels[ch].nicIn, int(ch));
        QCOMPARE(b.channels[ch].nicOut, int(ch));
    }
    for (bool symmetry : {true, false}) {
        SimulationOptions o;
        o.exploitSymmetry = symmetry;
        auto r = simulateStep(t, c.plan, c.coll, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        // Every NIC of every node carries perNicBytes out (NIC → leaf) and in (leaf → NIC).
        std::uint32_t nicLinks = 0;
        for (LinkId l = 0; l < t.links().size(); ++l) {
            const Link& k = t.link(l);
            const bool out = t.node(k.from).kind == NodeKind::Nic && t.node(k.to).kind == NodeKind::LeafSwitch;
            const bool in = t.node(k.to).kind == NodeKind::Nic && t.node(k.from).kind == NodeKind::LeafSwitch;
            if (!out && !in)
                continue;
            ++nicLinks;
            QVERIFY2(std::abs(r.value().linkPayloadBytes[l] - perNicBytes) < 1e-6 * perNicBytes,
                     qPrintable(QString::fromStdString(k.id) + QStringLiteral(": ") + QString::number(r.value().linkPayloadBytes[l], 'f', 1)));
        }
        QCOMPARE(nicLinks, 2 * 8 * nodes);
    }
    // The static link loads (linkload.h) put the same bytes on the same NICs.
    auto loads = mapLinkLoads(t, c.plan.comm, c.coll);
    QVERIFY(loads.ok());
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const Link& k = t.link(l);
        if ((t.node(k.from).kind == NodeKind::Nic && t.node(k.to).kind == NodeKind::LeafSwitch)
            || (t.node(k.to).kind == NodeKind::Nic && t.node(k.from).kind == NodeKind::LeafSwitch))
            QVERIFY2(std::abs(loads.value().links[l].payloadBytes[0] - perNicBytes) < 1e-6 * perNicBytes, k.id.c_str());
    }
}

void TestSimulate::nvlsThroughTheSwitch_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<double>("up");   // B on each GPU → NVSwitch link
    QTest::addColumn<double>("down"); // B on each NVSwitch → GPU link
    // One DGX H100 node (8 H100 SXM on the NVSwitch, NVLink 4), NCCL's NVLS, M = 1 GiB = 1,073,741,824 B.
    // NVLink SHARP: each GPU pushes into the switch, which reduces (multimem) and multicasts the result
    // (ncclgraph.h nvlsBytesPerGpuLink, n = 8):
    //   AllReduce      up M = 1,073,741,824, down M = 1,073,741,824
    //   ReduceScatter  up M = 1,073,741,824, down M/8 = 134,217,728 (its reduced shard)
    //   AllGather      up M/8 = 134,217,728 (its shard), down M = 1,073,741,824
    // (a ring AllReduce would put 2·7/8·M = 1,879,048,192 B on each direction of every GPU's link).
    QTest::newRow("allreduce") << int(tw::parallel::CollectiveKind::AllReduce) << 1073741824.0 << 1073741824.0;
    QTest::newRow("reducescatter") << int(tw::parallel::CollectiveKind::ReduceScatter) << 1073741824.0 << 134217728.0;
    QTest::newRow("allgather") << int(tw::parallel::CollectiveKind::AllGather) << 134217728.0 << 1073741824.0;
}

void TestSimulate::nvlsThroughTheSwitch()
{
    QFETCH(int, kind);
    QFETCH(double, up);
    QFETCH(double, down);
    TopologySpec spec;
    spec.kind = TopologyKind::NvSwitchNode;
    spec.nvlink = Protocol::NvLink4;
    const Cluster cluster{1, 8};
    const Topology t = make(spec, cluster);
    const double M = 1073741824.0;
    tw::collective::AlgorithmChoice choice;
    const auto nvls = tw::collective::AlgorithmPick::ofNccl(tw::nccl::Algorithm::Nvls);
    choice.allReduce = nvls;
    choice.reduceScatter = nvls;
    choice.allGather = nvls;
    const OneCollective c = oneCollective(tw::parallel::CollectiveKind(kind), 8, M, cluster, {"h100-sxm", spec}, choice);
    const tw::collective::BoundCall& b = c.coll.calls.front();
    QVERIFY2(b.nccl && b.counted, b.how.c_str());
    QVERIFY(b.prediction.algorithm == tw::nccl::Algorithm::Nvls);
    for (int mode = 0; mode < 3; ++mode) { // symmetry on, off, the reference engine
        SimulationOptions o;
        o.exploitSymmetry = mode == 0;
        o.ncclBandwidth = false; // the links' rates (NCCL's own bandwidth: ncclCallAloneTakesNcclsTime)
        auto r = mode == 2 ? simulateStepReference(t, c.plan, c.coll, o) : simulateStep(t, c.plan, c.coll, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const StepSimulation& sim = r.value();
        if (mode == 0)
            QVERIFY2(sim.symmetryFactor == 8, sim.reduction.c_str()); // the switch is fixed by the dp shift
        std::uint32_t gpuLinks = 0;
        for (LinkId l = 0; l < t.links().size(); ++l) {
            const Link& k = t.link(l);
            const bool toSwitch = t.node(k.from).kind == NodeKind::Gpu && t.node(k.to).kind == NodeKind::NvSwitch;
            const bool fromSwitch = t.node(k.to).kind == NodeKind::Gpu && t.node(k.from).kind == NodeKind::NvSwitch;
            const double want = toSwitch ? up : fromSwitch ? down : 0.0; // nothing crosses PCIe
            gpuLinks += toSwitch || fromSwitch ? 1 : 0;
            QVERIFY2(std::abs(sim.linkPayloadBytes[l] - want) <= 1e-6 * M,
                     qPrintable(QString::fromStdString(k.id) + QStringLiteral(": ") + QString::number(sim.linkPayloadBytes[l], 'f', 1)));
        }
        QCOMPARE(gpuLinks, 16u);
        // The pipeline (nvlsflows.h): C = 8 chunks in C + 1 = 9 steps, every GPU in step with the others.
        // Step 0 pushes chunk 0 (up/8), steps 1 … 7 push chunk k and pull chunk k − 1 side by side on the
        // two directions of the GPU's link (max(up, down)/8), step 8 pulls chunk 7 (down/8); each transfer
        // alone on its link direction takes latency + bytes / payload capacity, so with no compute
        //   step = 9 · latency + (up + down + 7 · max(up, down)) / 8 / capacity.
        const Link& gpuLink = t.link(*t.findLink("n0.gpu0-nvswitch"));
        const double capacity = gpuLink.bandwidth * efficiency(gpuLink.protocol);
        const double expected = 9 * gpuLink.latency + (up + down + 7 * std::max(up, down)) / 8 / capacity;
        QVERIFY2(std::abs(sim.stepSeconds - expected) <= 1e-9 * expected,
                 qPrintable(QStringLiteral("%1 vs %2").arg(sim.stepSeconds, 0, 'g', 12).arg(expected, 0, 'g', 12)));
    }
}

void TestSimulate::ncclCallAloneTakesNcclsTime_data()
{
    QTest::addColumn<QString>("gpu");
    QTest::addColumn<int>("nvlink");
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("algorithm"); // -1: auto
    QTest::addColumn<double>("bytes");
    const int ring = int(tw::nccl::Algorithm::Ring), nvls = int(tw::nccl::Algorithm::Nvls);
    QTest::newRow("A100 ring AllReduce 256 MiB") << QStringLiteral("a100-80gb") << int(Protocol::NvLink3)
                                                 << int(tw::parallel::CollectiveKind::AllReduce) << ring << 268435456.0;
    QTest::newRow("A100 auto AllReduce 64 MiB") << QStringLiteral("a100-80gb") << int(Protocol::NvLink3)
                                                << int(tw::parallel::CollectiveKind::AllReduce) << -1 << 67108864.0;
    QTest::newRow("H100 ring AllGather 256 MiB") << QStringLiteral("h100-sxm") << int(Protocol::NvLink4)
                                                 << int(tw::parallel::CollectiveKind::AllGather) << ring << 268435456.0;
    QTest::newRow("H100 NVLS AllReduce 1 GiB") << QStringLiteral("h100-sxm") << int(Protocol::NvLink4)
                                               << int(tw::parallel::CollectiveKind::AllReduce) << nvls << 1073741824.0;
    QTest::newRow("H100 NVLS ReduceScatter 1 GiB") << QStringLiteral("h100-sxm") << int(Protocol::NvLink4)
                                                   << int(tw::parallel::CollectiveKind::ReduceScatter) << nvls << 1073741824.0;
}

void TestSimulate::ncclCallAloneTakesNcclsTime()
{
    // One NCCL call over the 8 GPUs of one NVSwitch node and nothing else (simulate.h "NCCL's bandwidth").
    // Every transfer of its schedule (s steps, S bytes) is capped at b·s·algbw/S and waits max(path
    // latency, latency term / s), every step is on every rank's critical path (a ring's 2(n−1) or n−1
    // steps; NVLS's 9 pipelined steps, up and down on the two directions of a GPU's own link), so the step
    // takes s·(latency term / s) + Σ_steps b/cap = NCCL's latency term + S/algbw = the prediction's time —
    // when the caps bind, which the test checks: without them the call runs faster (at the NVLink payload
    // rate, above NCCL's 20 or 20.6 GB/s per NVLink). With symmetry, without it, and in the reference engine.
    QFETCH(QString, gpu);
    QFETCH(int, nvlink);
    QFETCH(int, kind);
    QFETCH(int, algorithm);
    QFETCH(double, bytes);
    TopologySpec spec;
    spec.kind = TopologyKind::NvSwitchNode;
    spec.nvlink = Protocol(nvlink);
    const Cluster cluster{1, 8};
    const Topology t = make(spec, cluster);
    tw::collective::AlgorithmChoice choice;
    if (algorithm >= 0) {
        const auto pick = tw::collective::AlgorithmPick::ofNccl(tw::nccl::Algorithm(algorithm));
        choice.allReduce = pick;
        choice.reduceScatter = pick;
        choice.allGather = pick;
    }
    const OneCollective c = oneCollective(tw::parallel::CollectiveKind(kind), 8, bytes, cluster, {gpu.toStdString(), spec}, choice);
    const tw::collective::BoundCall& b = c.coll.calls.front();
    QVERIFY2(b.nccl && b.counted, b.how.c_str());
    const double predicted = b.prediction.time;
    QVERIFY(predicted > 0 && b.prediction.latencyTerm > 0);
    for (int mode = 0; mode < 3; ++mode) { // symmetry on, off, the reference engine
        SimulationOptions o;
        o.exploitSymmetry = mode == 0;
        auto r = mode == 2 ? simulateStepReference(t, c.plan, c.coll, o) : simulateStep(t, c.plan, c.coll, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QVERIFY2(std::abs(r.value().stepSeconds - predicted) <= 1e-9 * predicted,
                 qPrintable(QStringLiteral("%1: simulated %2 s, NCCL's prediction %3 s (%4)")
                                .arg(mode)
                                .arg(r.value().stepSeconds, 0, 'g', 12)
                                .arg(predicted, 0, 'g', 12)
                                .arg(QString::fromStdString(b.how))));
        o.ncclBandwidth = false;
        auto links = mode == 2 ? simulateStepReference(t, c.plan, c.coll, o) : simulateStep(t, c.plan, c.coll, o);
        QVERIFY(links.ok());
        QVERIFY2(links.value().stepSeconds < 0.95 * predicted, qPrintable(QString::number(links.value().stepSeconds)));
    }
}

void TestSimulate::ncclTreesAcrossNodes()
{
    // Four DGX A100 nodes (8 A100 on NVSwitch, an HDR NIC per GPU on its PCIe switch, rail-optimized), an
    // AllReduce of S = 128 MiB = 134,217,728 B over all 32 GPUs with NCCL's tree. NCCL's double binary
    // tree of 4 nodes (ncclGetDtree, src/graph/trees.cc; ncclGetBtree for nranks = 4):
    //   tree 0: btree — node 0 is the root with child 2 (bit 4 >> 1); node 2 (bit 2) has parent
    //           (2^2)|4 = 6 ≥ 4 → 0 and children 2 − 1 = 1, 2 + 1 = 3; nodes 1, 3 (bit 1) have parent
    //           (r^1)|2 = 2. Edges 0–2, 2–1, 2–3.
    //   tree 1: mirrored (4 is even): node r takes btree(3 − r) renamed 3 − x: edges 3–1, 1–2, 1–0.
    // Tree channel c (8 of them, one per NIC as the ring's) runs tree 0 and tree 1, each with
    // S / (2·8) = 8,388,608 B, reduced up and broadcast down: each inter-node edge of a tree carries that
    // once in each direction, between the heads' NICs on rail c. Node k's NIC on rail c therefore carries
    // deg(k) · 8,388,608 B each way, deg(k) its edges in both trees: node 0: 1 + 1 = 2, node 1: 1 + 3 = 4,
    // node 2: 3 + 1 = 4, node 3: 1 + 1 = 2 → 16,777,216 B on nodes 0 and 3, 33,554,432 B on nodes 1 and 2.
    const TopologySpec spec = dgxA100Fabric();
    const Cluster cluster{4, 8};
    const Topology t = make(spec, cluster);
    const double S = 134217728.0;
    tw::collective::AlgorithmChoice choice;
    choice.allReduce = tw::collective::AlgorithmPick::ofNccl(tw::nccl::Algorithm::Tree);
    const OneCollective c = oneCollective(tw::parallel::CollectiveKind::AllReduce, 32, S, cluster, {"a100-80gb", spec}, choice);
    const tw::collective::BoundCall& b = c.coll.calls.front();
    QVERIFY2(b.nccl && b.counted, b.how.c_str());
    QVERIFY(b.prediction.algorithm == tw::nccl::Algorithm::Tree);
    QCOMPARE(b.treeChannels.size(), std::size_t{8});
    for (std::size_t ch = 0; ch < b.treeChannels.size(); ++ch) { // channel c's head on rail c
        QCOMPARE(b.treeChannels[ch].nicIn, int(ch));
        QCOMPARE(b.treeChannels[ch].nicOut, int(ch));
    }
    const double perDegree = 8388608.0;
    const double degree[4] = {2, 4, 4, 2};
    for (int mode = 0; mode < 2; ++mode) { // the engine (its shortcuts on) and the reference engine
        SimulationOptions o;
        auto r = mode == 1 ? simulateStepReference(t, c.plan, c.coll, o) : simulateStep(t, c.plan, c.coll, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        std::uint32_t nicLinks = 0, wrong = 0;
        forNicLinks(t, [&](LinkId l, bool out) {
            const Link& k = t.link(l);
            ++nicLinks;
            const double want = degree[t.node(out ? k.from : k.to).server] * perDegree;
            if (std::abs(r.value().linkPayloadBytes[l] - want) >= 1e-6 * want) {
                ++wrong;
                qWarning("%s: %.1f B, expected %.1f", k.id.c_str(), r.value().linkPayloadBytes[l], want);
            }
        });
        QCOMPARE(nicLinks, 2u * 8u * 4u);
        QCOMPARE(wrong, 0u);
    }
}

void TestSimulate::nvlsTreeAcrossNodes_data()
{
    QTest::addColumn<std::uint32_t>("nodes");
    QTest::addColumn<QList<double>>("nicBytes"); // per node: B on each NIC ↔ leaf link, each direction
    // DGX H100 nodes (8 H100 on NVSwitch, an NDR NIC per GPU), an AllReduce of S = 128 MiB = 134,217,728 B
    // over every GPU with NCCL's NVLS-tree (src/graph/connect.cc connectNvls). NCCL's NVLS graph has one
    // channel per NIC, head GPU i on rail i (8 heads), so head i owns X = S/8 = 16,777,216 B, half of it on
    // tree 0 and half on tree 1 of the double binary tree of the nodes (compute channel c uses tree c mod 2).
    // Each tree edge carries X/2 = 8,388,608 B each way (reduce up, broadcast down) between the two heads i,
    // on rail i, so node k's NIC i carries deg(k)·X/2 each way, deg(k) its edges in both trees:
    //   2 nodes: tree 0 = 1 → 0, tree 1 = 0 → 1 (mirrored): deg 2 on both → 16,777,216 B
    //   4 nodes: tree 0 = 0–2, 2–1, 2–3, tree 1 = 3–1, 1–2, 1–0 (see ncclTreesAcrossNodes): deg 2, 4, 4, 2
    //            → 16,777,216 B on nodes 0 and 3, 33,554,432 B on nodes 1 and 2.
    QTest::newRow("2 nodes") << 2u << QList<double>{16777216.0, 16777216.0};
    QTest::newRow("4 nodes") << 4u << QList<double>{16777216.0, 33554432.0, 33554432.0, 16777216.0};
}

void TestSimulate::nvlsTreeAcrossNodes()
{
    QFETCH(std::uint32_t, nodes);
    QFETCH(QList<double>, nicBytes);
    const TopologySpec spec = dgxH100Fabric();
    const Cluster cluster{nodes, 8};
    const Topology t = make(spec, cluster);
    const double S = 134217728.0;
    tw::collective::AlgorithmChoice choice;
    choice.allReduce = tw::collective::AlgorithmPick::ofNccl(tw::nccl::Algorithm::NvlsTree);
    const OneCollective c = oneCollective(tw::parallel::CollectiveKind::AllReduce, 8 * nodes, S, cluster,
                                          {"h100-sxm", spec}, choice);
    const tw::collective::BoundCall& b = c.coll.calls.front();
    QVERIFY2(b.nccl && b.counted, b.how.c_str());
    QVERIFY(b.prediction.algorithm == tw::nccl::Algorithm::NvlsTree);
    QCOMPARE(b.nvlsChannels.size(), std::size_t{8});
    for (std::size_t ch = 0; ch < b.nvlsChannels.size(); ++ch) { // head GPU c on rail c
        QCOMPARE(b.nvlsChannels[ch].gpus, std::vector<int>{int(ch)});
        QCOMPARE(b.nvlsChannels[ch].nicIn, int(ch));
    }
    // Every GPU's link into the switch carries its S (reduced there) and, as a head, its slice's result
    // stored for the multicast: S + X = 134,217,728 + 16,777,216 = 150,994,944 B; out of the switch the
    // node's reduced slice X (to the head) and the multicast result S: the same.
    const double gpuLink = 150994944.0;
    double firstStep = 0;
    for (int mode = 0; mode < 3; ++mode) { // symmetry on, off, the reference engine
        SimulationOptions o;
        o.exploitSymmetry = mode == 0;
        auto r = mode == 2 ? simulateStepReference(t, c.plan, c.coll, o) : simulateStep(t, c.plan, c.coll, o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        const StepSimulation& sim = r.value();
        std::uint32_t nicLinks = 0, switchLinks = 0, wrong = 0;
        auto check = [&](LinkId l, double want) {
            if (std::abs(sim.linkPayloadBytes[l] - want) >= 1e-6 * want) {
                ++wrong;
                qWarning("mode %d, %s: %.1f B, expected %.1f", mode, t.link(l).id.c_str(), sim.linkPayloadBytes[l], want);
            }
        };
        forNicLinks(t, [&](LinkId l, bool out) {
            const Link& k = t.link(l);
            ++nicLinks;
            check(l, nicBytes[int(t.node(out ? k.from : k.to).server)]);
        });
        for (LinkId l = 0; l < t.links().size(); ++l) {
            const Link& k = t.link(l);
            if ((t.node(k.from).kind == NodeKind::Gpu && t.node(k.to).kind == NodeKind::NvSwitch)
                || (t.node(k.to).kind == NodeKind::Gpu && t.node(k.from).kind == NodeKind::NvSwitch)) {
                ++switchLinks;
                check(l, gpuLink);
            }
        }
        QCOMPARE(nicLinks, 2u * 8u * nodes);
        QCOMPARE(switchLinks, 2u * 8u * nodes);
        QCOMPARE(wrong, 0u);
        // The shortcuts are exact or refused: the same step time in every mode.
        if (mode == 0)
            firstStep = sim.stepSeconds;
        QVERIFY2(sim.stepSeconds > 0 && std::abs(sim.stepSeconds - firstStep) <= 1e-9 * firstStep,
                 qPrintable(QStringLiteral("mode %1: %2 s vs %3 s").arg(mode).arg(sim.stepSeconds, 0, 'g', 12).arg(firstStep, 0, 'g', 12)));
    }
}

void TestSimulate::staticLoadsAreSimulated_data()
{
    QTest::addColumn<int>("algorithm");
    QTest::addColumn<std::uint32_t>("nodes");
    QTest::addColumn<bool>("h100");
    // One AllReduce of 128 MiB over every GPU, run as NCCL runs it: NVLS on one DGX H100, NVLS-tree on 2 DGX
    // H100, trees on 4 DGX A100. The static loads (linkload.h) must put on every link the bytes the
    // simulation moves over it (the simulation's per-link payload over the step).
    QTest::newRow("nvls") << int(tw::nccl::Algorithm::Nvls) << 1u << true;
    QTest::newRow("nvls-tree") << int(tw::nccl::Algorithm::NvlsTree) << 2u << true;
    QTest::newRow("tree") << int(tw::nccl::Algorithm::Tree) << 4u << false;
}

void TestSimulate::staticLoadsAreSimulated()
{
    QFETCH(int, algorithm);
    QFETCH(std::uint32_t, nodes);
    QFETCH(bool, h100);
    TopologySpec spec = h100 ? dgxH100Fabric() : dgxA100Fabric();
    if (nodes == 1)
        spec.kind = TopologyKind::NvSwitchNode;
    const Cluster cluster{nodes, 8};
    const Topology t = make(spec, cluster);
    const double S = 134217728.0;
    tw::collective::AlgorithmChoice choice;
    choice.allReduce = tw::collective::AlgorithmPick::ofNccl(tw::nccl::Algorithm(algorithm));
    const OneCollective c = oneCollective(tw::parallel::CollectiveKind::AllReduce, 8 * nodes, S, cluster,
                                          {h100 ? "h100-sxm" : "a100-80gb", spec}, choice);
    const tw::collective::BoundCall& b = c.coll.calls.front();
    QVERIFY2(b.nccl && b.counted, b.how.c_str());
    QVERIFY(b.prediction.algorithm == tw::nccl::Algorithm(algorithm));
    auto r = simulateStepReference(t, c.plan, c.coll, {});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
    auto loads = mapLinkLoads(t, c.plan.comm, c.coll);
    QVERIFY2(loads.ok(), loads.ok() ? "" : loads.error().toString().c_str());
    std::uint32_t busy = 0, wrong = 0;
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const double sim = r.value().linkPayloadBytes[l], stat = loads.value().links[l].payload();
        busy += sim > 0 ? 1 : 0;
        if (std::abs(sim - stat) > 1e-6 * S) {
            ++wrong;
            qWarning("%s: simulated %.1f B, static %.1f B", t.link(l).id.c_str(), sim, stat);
        }
    }
    QVERIFY(busy >= 16); // at least every GPU's link to and from the switch (or its NIC)
    QCOMPARE(wrong, 0u);
}

void TestSimulate::optimizerStepAfterReduction_data()
{
    QTest::addColumn<double>("optimizer");
    QTest::newRow("kernel model, 7 ms optimizer") << 7e-3;
    QTest::newRow("fixed rate: no optimizer time") << 0.0;
}

void TestSimulate::optimizerStepAfterReduction()
{
    // 4 GPUs on one NVSwitch node, one micro-batch: forward F = 10 ms, backward B = 20 ms, then the whole
    // gradient (M = 4 MiB, one bucket) AllReduced: it can start only when the backward has produced every
    // byte, at F + B, and takes the ring's α–β time C = 2(n−1)(α + M/(n·β)) (pureCommunicationRing: nothing
    // else shares its links). Then the optimizer step O on every GPU (docs/model.md §7). By hand:
    // step = F + B + C + O; compute per GPU = F + B + O; exposed DP = C; the last compute interval is the
    // optimizer's, [F + B + C, step]. With plan.kernels.timed false (fixed rate) O counts 0.
    QFETCH(double, optimizer);
    TopologySpec spec;
    spec.kind = TopologyKind::NvSwitchNode;
    const Cluster cluster{1, 4};
    const Topology t = make(spec, cluster);
    const double M = 4.0 * (1 << 20), F = 10e-3, B = 20e-3;
    const OneCollective c = computeAndAllReduce(4, M, M, cluster, F, B, 1, optimizer);
    SimulationOptions o;
    o.ncclBandwidth = false; // C is the links' α–β (pureCommunicationRing)
    auto r = simulateStep(t, c.plan, c.coll, o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
    const StepSimulation& s = r.value();
    const double C = alphaBeta(t, c.coll.calls[0].spec, M);
    QVERIFY(C > 0);
    const double step = F + B + C + optimizer;
    QVERIFY2(std::abs(s.stepSeconds - step) <= 1e-9 * step,
             qPrintable(QStringLiteral("simulated %1, by hand %2").arg(s.stepSeconds, 0, 'g', 17).arg(step, 0, 'g', 17)));
    QVERIFY(std::abs(s.computeSeconds - (F + B + optimizer)) <= 1e-9 * step);
    QVERIFY(std::abs(s.exposedByStrategy[0] - C) <= 1e-9 * step);
    QVERIFY(std::abs(s.idleSeconds) <= 1e-9 * step);
    QCOMPARE(s.gpuTimelines.size(), std::size_t(4));
    for (const GpuTimeline& tl : s.gpuTimelines) {
        const GpuInterval* last = nullptr;
        int optimizerBlocks = 0;
        for (const GpuInterval& iv : tl.intervals)
            if (iv.activity == Activity::Compute) {
                last = &iv;
                optimizerBlocks += iv.pass == ComputePass::Optimizer ? 1 : 0;
            }
        QVERIFY(last);
        if (optimizer > 0) {
            QCOMPARE(optimizerBlocks, 1);
            QVERIFY(last->pass == ComputePass::Optimizer);
            QVERIFY(std::abs(last->start - (F + B + C)) <= 1e-9 * step);
            QVERIFY(std::abs(last->end - step) <= 1e-9 * step);
        } else {
            QCOMPARE(optimizerBlocks, 0);
            QVERIFY(last->pass == ComputePass::Backward);
        }
    }
}

void TestSimulate::ddpOverlapOff()
{
    // The same 4 GPUs, 2 micro-batches (F = 10 ms, B = 20 ms each), M = 8 MiB in 1 MiB buckets.
    // ddp_overlap true (PyTorch DDP): the 8 buckets start during the last backward, so the exposed DP time
    // is below the 8 bucket AllReduces back to back (each C(1 MiB)) and at least the last bucket's C(1 MiB).
    // ddp_overlap false (Megatron-LM 2021): one AllReduce of all 8 MiB after the last backward, one
    // instance; by hand step = 2(F + B) + C(8 MiB) + O with O = 5 ms, exposed DP = C(8 MiB) exactly.
    TopologySpec spec;
    spec.kind = TopologyKind::NvSwitchNode;
    const Cluster cluster{1, 4};
    const Topology t = make(spec, cluster);
    const double MiB = 1 << 20, M = 8 * MiB, F = 10e-3, B = 20e-3, O = 5e-3;
    OneCollective c = computeAndAllReduce(4, M, MiB, cluster, F, B, 2, O);
    const auto& callSpec = c.coll.calls[0].spec;
    const double cBucket = alphaBeta(t, callSpec, MiB), cAll = alphaBeta(t, callSpec, M);
    SimulationOptions o;
    o.ncclBandwidth = false; // C is the links' α–β (pureCommunicationRing)
    auto on = simulateStep(t, c.plan, c.coll, o);
    QVERIFY(on.ok());
    QCOMPARE(on.value().collectiveInstances, std::uint64_t(8));
    QVERIFY(on.value().exposedByStrategy[0] < 8 * cBucket);
    QVERIFY(on.value().exposedByStrategy[0] >= cBucket * (1 - 1e-9));

    c.plan.plan.ddpOverlap = false;
    auto off = simulateStep(t, c.plan, c.coll, o);
    QVERIFY(off.ok());
    const double step = 2 * (F + B) + cAll + O;
    QCOMPARE(off.value().collectiveInstances, std::uint64_t(1));
    QVERIFY2(std::abs(off.value().stepSeconds - step) <= 1e-9 * step,
             qPrintable(QStringLiteral("simulated %1, by hand %2").arg(off.value().stepSeconds, 0, 'g', 17).arg(step, 0, 'g', 17)));
    QVERIFY(std::abs(off.value().exposedByStrategy[0] - cAll) <= 1e-9 * step);
    QVERIFY(off.value().stepSeconds > on.value().stepSeconds);
}

void TestSimulate::tpOverlapHidesInputGradientCollectives()
{
    // Korthikanti et al. 2022's 22B layer (h = 6,144, a = 64, T = 2,048, micro-batch 4) with t = 8 on one
    // DGX A100 node, 2 layers, one micro-batch, no recomputation. Per layer the forward has 2 TP
    // AllReduces of 4·2,048·6,144·2 B = 100,663,296 B and the backward 2 (QKV's and MLP up's input
    // gradients), all the same size. tp_overlap false: all block compute. tp_overlap true: the 2
    // backward ones run beside their ∂weight GEMMs (w ≈ 1.1 and 1.5 ms by the kernel model, above the
    // AllReduce's ~0.8 ms), so no GPU waits on them: their share of the exposed TP time goes, and the
    // compute grows by min(w, t)·c/(SMs − c) = t·c/(108 − c) per overlapped call (t, c: NCCL's predicted
    // time and channels of the call; docs/compute.md, "Check per layer").
    auto s = tw::scenario::preset("dgx-a100").value();
    s.model.layers = 2;
    s.model.hiddenSize = 6144;
    s.model.heads = s.model.kvHeads = 64;
    s.model.ffnSize = 4 * 6144;
    s.model.maxPositions = 2048;
    s.model.attention = tw::model::Attention::Unfused;
    s.batch.sequenceLength = 2048;
    s.batch.microBatch = 4;
    s.batch.globalBatchTokens = 4 * 2048;
    s.parallel.dp = 1;
    s.parallel.tp = 8;
    s.parallel.sharding = tw::parallel::Sharding::Ddp;
    const auto off = derived(s);
    s.parallel.tpOverlap = true;
    const auto on = derived(s);
    const Topology t = make(s.topology, off->cluster);
    const StepSimulation a = simulate(t, *off), b = simulate(t, *on);
    int overlapped = 0, tpCalls = 0;
    double stretch = 0;
    for (const auto& bc : on->stage4->calls) {
        const auto& c = on->stage3->comm.calls[bc.call];
        if (c.strategy != tw::parallel::Strategy::TP)
            continue;
        QCOMPARE(c.payloadBytes, 100663296.0);
        ++tpCalls;
        if (!c.overlapsWeightGradient)
            continue;
        ++overlapped;
        QVERIFY(bc.nccl);
        const double ch = bc.prediction.channels;
        stretch += bc.prediction.time * ch / (108 - ch);
    }
    // 10 TP AllReduces of the same size: the embedding's, 2 per layer forward, the head's input gradient
    // (blocking: not a layer's linear) and 2 per layer backward.
    QCOMPARE(overlapped, 4); // 2 layers × (QKV, MLP up)
    QCOMPARE(tpCalls, 10);
    QVERIFY(a.exposedByStrategy[2] > 0);
    const double expected = a.exposedByStrategy[2] * (tpCalls - overlapped) / tpCalls;
    QVERIFY2(std::abs(b.exposedByStrategy[2] - expected) <= 0.01 * expected,
             qPrintable(QStringLiteral("exposed TP on %1, off %2").arg(b.exposedByStrategy[2]).arg(a.exposedByStrategy[2])));
    QVERIFY(std::abs(b.computeSeconds - (a.computeSeconds + stretch)) <= 1e-9 * a.computeSeconds);
    QVERIFY(b.stepSeconds < a.stepSeconds);
}

void TestSimulate::computeIntervalsCarryTheirBlock()
{
    // 1F1B on one stage with 3 micro-batches runs F0 B0 F1 B1 F2 B2 (no warm-up beyond one forward); the
    // GPU's compute intervals must be exactly these six blocks in this order, each with its micro-batch
    // and pass (the buckets cut B2's compute into pieces that merge back into one interval), then the
    // optimizer step; no communication interval sits inside a block.
    TopologySpec spec;
    spec.kind = TopologyKind::NvSwitchNode;
    const Cluster cluster{1, 4};
    const Topology t = make(spec, cluster);
    const double MiB = 1 << 20;
    const OneCollective c = computeAndAllReduce(4, 8 * MiB, MiB, cluster, 10e-3, 20e-3, 3, 5e-3);
    auto r = simulateStep(t, c.plan, c.coll);
    QVERIFY(r.ok());
    struct Expect {
        ComputePass pass;
        std::uint32_t mb;
    };
    const std::vector<Expect> want{{ComputePass::Forward, 0}, {ComputePass::Backward, 0}, {ComputePass::Forward, 1},
                                   {ComputePass::Backward, 1}, {ComputePass::Forward, 2}, {ComputePass::Backward, 2},
                                   {ComputePass::Optimizer, 0}};
    for (const GpuTimeline& tl : r.value().gpuTimelines) {
        std::vector<const GpuInterval*> compute;
        for (const GpuInterval& iv : tl.intervals)
            if (iv.activity == Activity::Compute)
                compute.push_back(&iv);
        QCOMPARE(compute.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            QVERIFY(compute[i]->pass == want[i].pass);
            QCOMPARE(compute[i]->microBatch, want[i].mb);
            QCOMPARE(compute[i]->chunk, std::uint32_t(0));
        }
        // Forward 10 ms, backward 20 ms, optimizer 5 ms, each in one piece.
        QVERIFY(std::abs(compute[0]->end - compute[0]->start - 10e-3) <= 1e-12);
        QVERIFY(std::abs(compute[5]->end - compute[5]->start - 20e-3) <= 1e-12);
        QVERIFY(std::abs(compute[6]->end - compute[6]->start - 5e-3) <= 1e-12);
    }
}

void TestSimulate::kernelModelPresetAddsTheOptimizerStep()
{
    // dgx-a100 uses the kernel model (plan.kernels.timed): with communication switched off the simulated
    // step is the stage 3 makespan plus the optimizer step, plan.optimizer_step_seconds, on every GPU
    // (docs/model.md §5.4); the same preset with a fixed compute_efficiency has no optimizer time: step =
    // makespan, as the paper's fixed-rate examples (pureComputeSingleGpu on paper-dp).
    auto s = tw::scenario::preset("dgx-a100").value();
    auto d = derived(s);
    QVERIFY(d->stage3->kernels.timed);
    const double O = d->stage3->kernels.optimizer.seconds, makespan = d->stage3->timeline.makespan;
    QVERIFY(O > 0);
    QVERIFY(std::abs(d->stage3->figures.valueOf("plan.optimizer_step_seconds") - O) <= 1e-15);
    const Topology t = make(s.topology, d->cluster);
    SimulationOptions o;
    o.communication = false;
    const StepSimulation r = simulate(t, *d, o);
    QVERIFY2(std::abs(r.stepSeconds - (makespan + O)) <= 1e-9 * r.stepSeconds,
             qPrintable(QStringLiteral("simulated %1, makespan %2 + optimizer %3").arg(r.stepSeconds).arg(makespan).arg(O)));

    s.parallel.computeEfficiency = 0.45;
    auto fixed = derived(s);
    QVERIFY(!fixed->stage3->kernels.timed);
    const StepSimulation f = simulate(make(s.topology, fixed->cluster), *fixed, o);
    QVERIFY(std::abs(f.stepSeconds - fixed->stage3->timeline.makespan) <= 1e-9 * f.stepSeconds);
}

QTEST_APPLESS_MAIN(TestSimulate)
#include "tst_simulate.moc"
