// Stage 3 → stage 4: each call of the communication plan counted with its algorithm's schedule.
// Expected values are the closed forms of docs/model.md §4 on the paper's Example 5.1,
// derived by hand in the comments.

#include "collective/binding.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <QTest>

#include <algorithm>
#include <vector>

using tw::collective::Algorithm;
using tw::collective::AlgorithmChoice;
using tw::collective::Op;

namespace {

constexpr double kM = 248879616.0; // Example 5.1: P·s = 124,439,808 · 2 B

std::shared_ptr<const tw::scenario::Derivation> deriveOrFail(const tw::scenario::Scenario& s)
{
    auto d = tw::scenario::derive(s);
    if (!d.ok()) {
        qWarning("%s", d.error().toString().c_str());
        return nullptr;
    }
    return d.value();
}

tw::scenario::Scenario preset(const char* name)
{
    return tw::scenario::preset(name).value();
}

} // namespace

class TestBinding : public QObject {
    Q_OBJECT

private slots:
    void ringGradientAllReduce();
    void naiveSendsMore();
    void pipelinedDpIsPerStage();
    void everyCallIsBound();
    void choiceValidation();
    void jsonRoundTripAndMigration();
    void hierarchicalFollowsTheNodes();
    void namesAndMigration();
    void paperPresetsPinTextbook();
    void ncclAutoOneNode();
    void ncclGroupShapes();
    void ncclPairTheFabricLacks();
    void planCallsMapOntoOperations();
};

void TestBinding::ringGradientAllReduce()
{
    const auto d = deriveOrFail(preset("paper-dp"));
    QVERIFY(d && d->stage4);
    // Ring AllReduce over 8 GPUs: 2(N−1) = 14 steps, 2(N−1)·M = 14 · 248,879,616 = 3,484,314,624 B on the wire,
    // the same as stage 3's ring formula (8 GPUs × 2·7/8·M).
    QCOMPARE(d->figures.valueOf("collective.dp.wire_bytes_per_step"), 14 * kM);
    QCOMPARE(d->figures.valueOf("collective.dp.wire_bytes_per_step"), d->figures.valueOf("dp.total_bytes_per_step"));
    // α–β: 14 × (10 µs + (M/8) / 1.25 GB/s) = 14 × (0.00001 + 31,109,952 / 1,250,000,000)
    //      = 14 × 0.0248979616 = 0.3485714624 s.
    QVERIFY(qAbs(d->figures.valueOf("collective.dp.seconds_per_step") - 0.3485714624) < 1e-12);
    const tw::collective::BoundCall& b = d->stage4->calls.front();
    QCOMPARE(b.steps, std::uint64_t{14});
    QCOMPARE(b.spec.ranks, std::uint64_t{8});
    QCOMPARE(b.spec.bytes, kM);
    QCOMPARE(b.maxRankSentBytes, 2.0 * 7 / 8 * kM);
    // The graph stays closed.
    QVERIFY(d->figures.missingInputs().empty());
}

void TestBinding::naiveSendsMore()
{
    auto s = preset("paper-dp");
    s.collectives.allReduce = Algorithm::Naive;
    const auto d = deriveOrFail(s);
    QVERIFY(d && d->stage4);
    // Direct exchange: N(N−1)·M = 56 · 248,879,616 = 13,937,258,496 B; N−1 = 7 steps of the whole buffer:
    // 7 × (10 µs + M / 1.25 GB/s) = 7 × 0.1991136928 = 1.3937958496 s.
    QCOMPARE(d->figures.valueOf("collective.dp.wire_bytes_per_step"), 56 * kM);
    QVERIFY(qAbs(d->figures.valueOf("collective.dp.seconds_per_step") - 1.3937958496) < 1e-12);
    // Reduce + broadcast: 2(N−1)·M like the ring, but 2(N−1) = 14 steps of the whole buffer.
    s.collectives.allReduce = Algorithm::ReduceBroadcast;
    const auto rb = deriveOrFail(s);
    QCOMPARE(rb->figures.valueOf("collective.dp.wire_bytes_per_step"), 14 * kM);
    QVERIFY(qAbs(rb->figures.valueOf("collective.dp.seconds_per_step") - 14 * (1e-5 + kM / 1.25e9)) < 1e-12);
}

void TestBinding::pipelinedDpIsPerStage()
{
    // paper-dp's 8 GPUs as dp = 4 × pp = 2: each stage AllReduces its own gradients over its 4 DP ranks,
    // the two stages side by side on different GPUs. A GPU takes part in one of them, so the DP time per
    // step is the larger stage's, not their sum. Ring over N = 4 with α = 10 µs, β = 1.25 GB/s:
    // 2(N−1) = 6 steps of (α + (M/4)/β) for the stage's M (stage 3's payload).
    auto s = preset("paper-dp");
    s.parallel.dp = 4;
    s.parallel.pp = 2;
    const auto d = deriveOrFail(s);
    QVERIFY(d && d->stage3 && d->stage4);
    std::vector<double> stageSeconds;
    for (const auto& c : d->stage3->comm.calls)
        if (c.strategy == tw::parallel::Strategy::DP) {
            QVERIFY(c.kind == tw::parallel::CollectiveKind::AllReduce);
            QCOMPARE(d->stage3->comm.groups[c.firstGroup].members.size(), std::size_t{4});
            stageSeconds.push_back(6 * (1e-5 + c.payloadBytes / 4 / 1.25e9));
        }
    QCOMPARE(stageSeconds.size(), std::size_t{2});
    const double busiest = std::max(stageSeconds[0], stageSeconds[1]);
    QVERIFY(qAbs(d->figures.valueOf("collective.dp.seconds_per_step") - busiest) < 1e-12);
    QVERIFY(d->figures.valueOf("collective.dp.seconds_per_step") < 0.75 * (stageSeconds[0] + stageSeconds[1]));
}

void TestBinding::everyCallIsBound()
{
    // paper-tp: TP AllReduces of B·T·d·s = 50,331,648 B over 4 GPUs, DP gradient AllReduce over 2.
    const auto d = deriveOrFail(preset("paper-tp"));
    QVERIFY(d && d->stage3 && d->stage4);
    QCOMPARE(d->stage4->calls.size(), d->stage3->comm.calls.size());
    for (const auto& b : d->stage4->calls) {
        const auto& c = d->stage3->comm.calls[b.call];
        QCOMPARE(b.spec.ranks, std::uint64_t(d->stage3->comm.groups[c.firstGroup].members.size()));
        QVERIFY(b.steps > 0);
    }
    // Every TP AllReduce is the same schedule: ring over 4, 2·3 = 6 steps, 2·3·50,331,648 B on the wire.
    // Identical calls share one generated schedule.
    QVERIFY(d->stage4->distinctSchedules < d->stage4->calls.size());
    // TP wire bytes per step: the stage 3 ring formula summed over GPUs (same bytes, counted from schedules).
    QCOMPARE(d->figures.valueOf("collective.tp.wire_bytes_per_step"), d->figures.valueOf("tp.total_bytes_per_step"));
}

void TestBinding::choiceValidation()
{
    AlgorithmChoice c;
    QVERIFY(tw::collective::validate(c).empty());
    c.allReduce = Algorithm::Bruck; // an AllGather / All-to-All algorithm
    c.link.bandwidth = 0;
    const auto errors = tw::collective::validate(c);
    QCOMPARE(errors.size(), std::size_t{2});
    QCOMPARE(errors[0].where.jsonPath, std::string("collectives.allreduce"));
    QVERIFY(errors[0].message.find("AllReduce has no algorithm \"bruck\" (expected auto, tree, ring, collnet-direct, "
                                   "collnet-chain, nvls, nvls-tree, flat-ring") != std::string::npos);
    QCOMPARE(errors[1].where.jsonPath, std::string("collectives.bandwidth"));
    // The scenario refuses it with the same path.
    auto s = preset("paper-dp");
    s.collectives.allReduce = Algorithm::Bruck;
    QVERIFY(!tw::scenario::derive(s).ok());
}

void TestBinding::jsonRoundTripAndMigration()
{
    auto s = preset("paper-moe");
    s.collectives.allReduce = Algorithm::Rabenseifner;
    s.collectives.allToAll = Algorithm::Bruck;
    s.collectives.link = {2.5e-6, 50e9};
    const std::string json = tw::scenario::scenarioToJson(s);
    QVERIFY(json.find("\"schema_version\": 5") != std::string::npos);
    const auto back = tw::scenario::loadScenario(json, "x.json");
    QVERIFY(back.errors.empty());
    QVERIFY(*back.scenario == s);
    // A schema 2 file (no "collectives") loads with the defaults.
    const auto old = tw::scenario::loadScenario(R"({"schema_version": 2, "parallel": {"dp": 8}})", "old.json");
    QVERIFY(old.errors.empty());
    QVERIFY(old.scenario->collectives == AlgorithmChoice{});
    // A known name the collective does not have is refused by validate; an unknown name by the loader.
    const auto unknown = tw::scenario::loadScenario(R"({"schema_version": 3, "collectives": {"allreduce": "spiral"}})", "u.json");
    QCOMPARE(unknown.errors.size(), std::size_t{1});
    QCOMPARE(unknown.errors[0].where.jsonPath, std::string("collectives.allreduce"));
    QVERIFY(unknown.errors[0].message.find("unknown algorithm \"spiral\"") != std::string::npos);
}

void TestBinding::hierarchicalFollowsTheNodes()
{
    // 2 nodes × 4 GPUs, 8-way DP: hierarchical AllReduce with 4 ranks per node.
    auto s = preset("paper-dp");
    s.hardware.nodes = 2;
    s.hardware.gpusPerNode = 4;
    s.collectives.allReduce = Algorithm::Hierarchical;
    const auto d = deriveOrFail(s);
    QVERIFY(d && d->stage4);
    const auto& b = d->stage4->calls.front();
    QVERIFY(!b.fellBack);
    QVERIFY(b.spec.algorithm == Algorithm::Hierarchical);
    QCOMPARE(b.spec.ranksPerNode, std::uint64_t{4});
    // Intra-node ring reduce-scatter (3 steps), inter-node ring AllReduce of each slice (2·1 = 2 steps),
    // intra-node all-gather (3 steps): 2(G−1) + 2(K−1) = 6 + 2 = 8 steps.
    QCOMPARE(b.steps, std::uint64_t{8});
    // dp 4 × tp 2 on the same 2 × 4: the DP group of tp rank 0 is GPUs {0, 2 | 4, 6}, two per node. Swapping
    // GPU 2 (dp 1, tp 0) with GPU 5 (dp 2, tp 1) makes it {0 | 5, 4, 6} (ordered by dp): one GPU on node 0,
    // three on node 1 — not hierarchical; the call falls back to ring and the derivation says so.
    s.parallel.dp = 4;
    s.parallel.tp = 2;
    s.parallel.assignment.clear();
    QVERIFY(tw::scenario::swapGpus(s, 2, 5));
    const auto moved = deriveOrFail(s);
    QVERIFY(moved && moved->stage4);
    int dpCalls = 0;
    for (const auto& c : moved->stage4->calls) {
        if (moved->stage3->comm.calls[c.call].strategy != tw::parallel::Strategy::DP)
            continue; // TP pairs stay inside a node and keep the hierarchical schedule
        ++dpCalls;
        QVERIFY(c.fellBack);
        QVERIFY(c.spec.algorithm == Algorithm::Ring);
    }
    QVERIFY(dpCalls > 0);
    bool noted = false;
    for (const auto& e : moved->problems)
        noted = noted || e.where.jsonPath == "collectives.allreduce";
    QVERIFY(noted);
}

QTEST_APPLESS_MAIN(TestBinding)
void TestBinding::planCallsMapOntoOperations()
{
    // A plan's collective kinds are stage 4's operations (Reduce is never a plan's call), one for one,
    // and both tables name each the same way.
    using tw::parallel::CollectiveKind;
    const std::vector<std::pair<CollectiveKind, Op>> expected{
        {CollectiveKind::AllReduce, Op::AllReduce}, {CollectiveKind::ReduceScatter, Op::ReduceScatter},
        {CollectiveKind::AllGather, Op::AllGather}, {CollectiveKind::Broadcast, Op::Broadcast},
        {CollectiveKind::AllToAll, Op::AllToAll},   {CollectiveKind::SendRecv, Op::SendRecv}};
    for (const auto& [kind, op] : expected) {
        QVERIFY(tw::collective::opFor(kind) == op);
        QCOMPARE(tw::parallel::toString(kind), tw::collective::displayName(op));
    }
    QCOMPARE(tw::parallel::toString(CollectiveKind::AllToAll), std::string_view("All-to-All"));
    QCOMPARE(tw::parallel::toString(CollectiveKind::SendRecv), std::string_view("Send/Recv"));
}

#include "tst_binding.moc"

void TestBinding::namesAndMigration()
{
    using tw::collective::AlgorithmPick;
    // Schema 4: "ring" was the textbook single ring; it migrates to flat-ring. Unnamed collectives are auto.
    const auto v4 = tw::scenario::loadScenario(
        R"({"schema_version": 4, "collectives": {"allreduce": "ring", "allgather": "ring", "alltoall": "bruck"}})", "v4.json");
    QVERIFY(v4.errors.empty());
    QVERIFY(v4.scenario->collectives.allReduce == AlgorithmPick(Algorithm::Ring));
    QVERIFY(v4.scenario->collectives.allGather == AlgorithmPick(Algorithm::Ring));
    QVERIFY(v4.scenario->collectives.allToAll == AlgorithmPick(Algorithm::Bruck));
    QVERIFY(v4.scenario->collectives.reduceScatter == AlgorithmPick::automatic());
    QVERIFY(v4.scenario->collectives.broadcast == AlgorithmPick::automatic());
    // Schema 5: "ring" is NCCL's multi-channel ring, "flat-ring" the textbook one, "auto" NCCL's pick.
    const auto v5 = tw::scenario::loadScenario(
        R"({"schema_version": 5, "collectives": {"allreduce": "ring", "allgather": "flat-ring", "reducescatter": "pat", "broadcast": "auto"}})",
        "v5.json");
    QVERIFY(v5.errors.empty());
    QVERIFY(v5.scenario->collectives.allReduce == AlgorithmPick::ofNccl(tw::nccl::Algorithm::Ring));
    QVERIFY(v5.scenario->collectives.allGather == AlgorithmPick(Algorithm::Ring));
    QVERIFY(v5.scenario->collectives.reduceScatter == AlgorithmPick::ofNccl(tw::nccl::Algorithm::Pat));
    QVERIFY(v5.scenario->collectives.broadcast == AlgorithmPick::automatic());
    // Written back with the same names.
    const std::string json = tw::scenario::scenarioToJson(*v5.scenario);
    QVERIFY(json.find("\"allreduce\": \"ring\"") != std::string::npos);
    QVERIFY(json.find("\"allgather\": \"flat-ring\"") != std::string::npos);
    QVERIFY(json.find("\"alltoall\": \"auto\"") != std::string::npos);
    const auto back = tw::scenario::loadScenario(json, "back.json");
    QVERIFY(back.errors.empty());
    QVERIFY(back.scenario->collectives == v5.scenario->collectives);
    // A pair NCCL lacks: PAT is not an AllReduce algorithm; All-to-All has no NCCL algorithm (point-to-point).
    const auto pat = tw::scenario::loadScenario(R"({"schema_version": 5, "collectives": {"allreduce": "pat"}})", "p.json");
    QCOMPARE(pat.errors.size(), std::size_t{1});
    QCOMPARE(pat.errors[0].where.jsonPath, std::string("collectives.allreduce"));
    QVERIFY(pat.errors[0].message.find("AllReduce has no algorithm \"pat\"") != std::string::npos);
    const auto a2a = tw::scenario::loadScenario(R"({"schema_version": 5, "collectives": {"alltoall": "ring"}})", "a.json");
    QCOMPARE(a2a.errors.size(), std::size_t{1});
    QCOMPARE(a2a.errors[0].where.jsonPath, std::string("collectives.alltoall"));
    QVERIFY(a2a.errors[0].message.find("point-to-point") != std::string::npos);
}

void TestBinding::paperPresetsPinTextbook()
{
    for (const char* name : {"paper-reference", "paper-dp", "paper-pp", "paper-tp", "paper-moe", "paper-testbed"})
        QVERIFY2(preset(name).collectives.allReduce == tw::collective::AlgorithmPick(Algorithm::Ring)
                     && preset(name).collectives.allToAll == tw::collective::AlgorithmPick(Algorithm::Pairwise)
                     && preset(name).collectives.broadcast == tw::collective::AlgorithmPick(Algorithm::Binomial),
                 name);
    // The model presets take NCCL's auto.
    QVERIFY(preset("gpt2-xl").collectives == AlgorithmChoice{});
}

void TestBinding::ncclAutoOneNode()
{
    // paper-dp with NCCL's auto: the gradient AllReduce of M = 248,879,616 B over the 8 A100s of one node.
    // NCCL's model (docs/nccl.md): ring Simple, 12 channels × 20 GB/s = 240 GB/s bus bandwidth, algBw 240·8/14
    // = 137.143 GB/s, latency 8.4 + 14 × 3.4 = 56.0 µs (Simple beats LL128 above 24.29 MB):
    // t = 56.0 µs + M·14 / (8 · 240e9) = 56.0 µs + 1,814.7472 µs = 1,870.7472 µs.
    auto s = preset("paper-dp");
    s.collectives = AlgorithmChoice{};
    const auto d = deriveOrFail(s);
    QVERIFY(d && d->stage4);
    const tw::collective::BoundCall& b = d->stage4->calls.front();
    QVERIFY(b.nccl);
    QVERIFY(b.counted);
    QCOMPARE(b.groupNodes, 1);
    QCOMPARE(b.groupPerNode, 8);
    QVERIFY(b.prediction.algorithm == tw::nccl::Algorithm::Ring);
    QVERIFY(b.prediction.protocol == tw::nccl::Protocol::Simple);
    QCOMPARE(b.prediction.channels, 12);
    QVERIFY2(qAbs(b.timeSeconds - 1870.7472e-6) < 1e-10, qPrintable(QString::number(b.timeSeconds * 1e6, 'f', 4)));
    // NCCL's ring puts the ring's bytes on the wire: 2(N−1)/N·M per rank, 2(N−1)·M = 14 M in all.
    QCOMPARE(b.wireBytes, 14 * kM);
    QCOMPARE(b.maxRankSentBytes, 2.0 * 7 / 8 * kM);
    QCOMPARE(b.steps, std::uint64_t{14});
    // Stage 5 and the animation play the textbook stand-in: flat-ring.
    QVERIFY(b.spec.algorithm == Algorithm::Ring);
    QVERIFY2(b.how.starts_with("auto → ring/simple, 12 channels (1 node × 8 GPUs"), b.how.c_str());
    QVERIFY(qAbs(d->figures.valueOf("collective.dp.seconds_per_step") - 1870.7472e-6) < 1e-10);
    QVERIFY(d->figures.missingInputs().empty());
}

void TestBinding::ncclGroupShapes()
{
    // paper-tp (t = 4, dp = 2) on 2 nodes × 4 A100: each TP group is the 4 GPUs of one node, each DP group
    // one GPU on each of the 2 nodes.
    auto s = preset("paper-tp");
    s.hardware.nodes = 2;
    s.hardware.gpusPerNode = 4;
    s.topology.kind = tw::network::TopologyKind::LeafSpine; // default leaf–spine: a NIC per GPU, NDR
    s.collectives = AlgorithmChoice{};
    const auto d = deriveOrFail(s);
    QVERIFY(d && d->stage3 && d->stage4);
    bool sawTp = false, sawDp = false;
    for (const auto& b : d->stage4->calls) {
        const auto& c = d->stage3->comm.calls[b.call];
        QVERIFY2(b.nccl && b.counted, (c.what + " " + std::to_string(b.nccl) + std::to_string(b.counted) + " " + b.how).c_str());
        if (c.strategy == tw::parallel::Strategy::TP) {
            sawTp = true;
            QCOMPARE(b.groupNodes, 1);
            QCOMPARE(b.groupPerNode, 4);
            // 50,331,648 B over 4 GPUs of one node: ring Simple at 12 × 20 = 240 GB/s bus, nsteps 2·3 = 6,
            // algBw 240·4/6 = 160 GB/s, latency 8.4 + 6 × 3.4 = 28.8 µs (LL128: 220.8·4/6 = 147.2 GB/s,
            // 14 + 6 × 1.9 = 25.4 µs; Simple wins above 3.4 µs / (1/147,200 − 1/160,000 µs/B) = 6.26 MB):
            // t = 28.8 + 50,331,648 / 160,000 = 28.8 + 314.5728 = 343.3728 µs.
            QVERIFY(b.prediction.algorithm == tw::nccl::Algorithm::Ring);
            QVERIFY(b.prediction.protocol == tw::nccl::Protocol::Simple);
            QVERIFY2(qAbs(b.timeSeconds - 343.3728e-6) < 1e-10, qPrintable(QString::number(b.timeSeconds * 1e6, 'f', 4)));
            QCOMPARE(b.wireBytes, 6 * 50331648.0); // 2(N−1)·M
        }
        if (c.strategy == tw::parallel::Strategy::DP && c.kind == tw::parallel::CollectiveKind::AllReduce) {
            sawDp = true;
            QCOMPARE(b.groupNodes, 2);
            QCOMPARE(b.groupPerNode, 1);
            QVERIFY2(b.how.find("2 nodes × 1 GPU") != std::string::npos, b.how.c_str());
            QVERIFY2(b.how.find("1 NIC per node") != std::string::npos, b.how.c_str());
            // Ring or tree on 2 ranks: 2(N−1)·M = 2 M on the wire, M per rank.
            QCOMPARE(b.wireBytes, 2 * b.spec.bytes);
            QCOMPARE(b.maxRankSentBytes, b.spec.bytes);
        }
    }
    QVERIFY(sawTp && sawDp);
}

void TestBinding::ncclPairTheFabricLacks()
{
    // NVLS needs a Hopper GPU on an NVSwitch: on paper-dp's A100s the call is not counted, with NCCL's reason.
    auto s = preset("paper-dp");
    s.collectives.allReduce = tw::collective::AlgorithmPick::ofNccl(tw::nccl::Algorithm::Nvls);
    const auto d = deriveOrFail(s);
    QVERIFY(d && d->stage4);
    QVERIFY(!d->stage4->calls.front().counted);
    QCOMPARE(d->stage4->uncounted.size(), std::size_t{1});
    QCOMPARE(d->stage4->uncounted[0].where.jsonPath, std::string("collectives.allreduce"));
    QVERIFY2(d->stage4->uncounted[0].message.find("with NCCL's nvls: nvls for allreduce") != std::string::npos,
             d->stage4->uncounted[0].message.c_str());
    // On H100s NVLS is NCCL's pick for a large AllReduce in one node, and each GPU sends its buffer once
    // into the switch (nvlsBytesPerGpuLink: up M): 8 M on the wire, M per rank.
    s.hardware.gpu = "h100-sxm";
    s.collectives = AlgorithmChoice{};
    const auto h = deriveOrFail(s);
    QVERIFY(h && h->stage4);
    const auto& b = h->stage4->calls.front();
    QVERIFY(b.counted);
    QVERIFY2(b.prediction.algorithm == tw::nccl::Algorithm::Nvls, b.how.c_str());
    QCOMPARE(b.wireBytes, 8 * kM);
    QCOMPARE(b.maxRankSentBytes, kM);
}
