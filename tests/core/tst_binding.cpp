// Stage 3 → stage 4: each call of the communication plan counted with its algorithm's schedule.
// Expected values are the closed forms of REFERENCE.md "Stage 4" on the paper's Example 5.1,
// derived by hand in the comments.

#include "collective/binding.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <QTest>

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
    void everyCallIsBound();
    void choiceValidation();
    void jsonRoundTripAndMigration();
    void hierarchicalFollowsTheNodes();
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
    QVERIFY(errors[0].message.find("AllReduce has no algorithm \"bruck\" (expected ring") != std::string::npos);
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
    QVERIFY(json.find("\"schema_version\": 4") != std::string::npos);
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
#include "tst_binding.moc"
