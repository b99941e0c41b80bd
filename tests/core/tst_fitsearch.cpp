// The plans that fit (scenario/fitsearch.h): on a small case the search keeps exactly the plans a
// brute-force loop over the same documented space keeps (parallel::validate, then every GPU fits),
// in the coarse order the formula gives; the simulated plans come back ranked by step time; partial
// results arrive before the end; a stop request cancels.

#include "../support/testsupport.h"

#include "parallel/memory.h"
#include "parallel/plan.h"
#include "scenario/derive.h"
#include "scenario/fitsearch.h"

#include <QTest>

#include <cmath>
#include <set>
#include <stop_token>
#include <tuple>

using namespace tw;
using tw::parallel::PipelineSchedule;
using tw::parallel::Sharding;
using tw::scenario::FitPlan;
using tw::scenario::FitSearch;
using tw::scenario::Scenario;

namespace {

// paper-reference (GPT-2 small, T = 1,024, G = 524,288 = 512 sequences) on one node of 4 GPUs with
// 16 GiB each: small enough to enumerate by hand, tight enough that memory rules plans out.
Scenario smallCase()
{
    Scenario s = tw::test::presetOrDie("paper-reference");
    s.hardware.nodes = 1;
    s.hardware.gpusPerNode = 4;
    s.hardware.gpu = "custom";
    s.hardware.custom = {"gpu16", "16 GiB GPU", 16.0 * 1024 * 1024 * 1024, 19.5e12, 312e12, 312e12, 0.0};
    s.parallel.dp = 4;
    s.parallel.layerForwardSeconds.clear();
    return s;
}

using Key = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, int, bool, int, std::uint64_t,
                       std::uint64_t, int>;
Key keyOf(const parallel::ParallelPlan& p, std::uint64_t b, model::Recompute r)
{
    return {p.dp, p.pp, p.tp, p.ep, int(p.sharding), p.sequenceParallel, int(p.schedule), p.virtualStages, b, int(r)};
}

} // namespace

class TestFitSearch : public QObject {
    Q_OBJECT
private slots:
    void findsWhatBruteForceFinds();
    void coarseEstimate_data();
    void coarseEstimate();
    void coarseCommunication_data();
    void coarseCommunication();
    void partialResultsAndCancel();
    void nothingFits();
    void kernelModelGivesTheCoarseEfficiency();
};

void TestFitSearch::findsWhatBruteForceFinds()
{
    const Scenario s = smallCase();
    scenario::FitOptions o;
    o.top = 4;
    o.simulate = 4;
    auto found = scenario::searchFittingPlans(s, o);
    QVERIFY(found);
    const FitSearch& r = found.value();

    // Brute force over the documented space: tp | 4 (inside the node), pp | 4/tp with pp ≤ L = 12,
    // dp the rest; ep 1 (no experts); DDP (and ZeRO-1/2/3 when dp > 1); SP with tp > 1; none,
    // selective, full recomputation; B | 512/dp up to 64; 1F1B (and GPipe, interleaved v = 2…4 with
    // 12 % (pp·v) = 0 when pp > 1).
    std::set<Key> expected;
    std::size_t candidates = 0, valid = 0;
    for (std::uint64_t tp : {1, 2, 4})
        for (std::uint64_t pp : {1, 2, 4}) {
            if ((4 / tp) % pp != 0)
                continue;
            const std::uint64_t dp = 4 / (tp * pp);
            std::vector<std::pair<PipelineSchedule, std::uint64_t>> schedules{{PipelineSchedule::OneFOneB, 1}};
            if (pp > 1) {
                schedules.emplace_back(PipelineSchedule::GPipe, 1);
                for (std::uint64_t v = 2; v <= 4; ++v)
                    if (12 % (pp * v) == 0)
                        schedules.emplace_back(PipelineSchedule::Interleaved, v);
            }
            std::vector<Sharding> shardings{Sharding::Ddp};
            if (dp > 1)
                shardings.insert(shardings.end(), {Sharding::Zero1, Sharding::Zero2, Sharding::Zero3});
            for (const auto& [schedule, v] : schedules)
                for (Sharding sharding : shardings)
                    for (bool sp : {false, true}) {
                        if (sp && tp == 1)
                            continue;
                        for (model::Recompute rc : {model::Recompute::None, model::Recompute::Selective, model::Recompute::Full})
                            for (std::uint64_t b = 1; b <= 64; ++b) {
                                if ((512 / dp) % b != 0)
                                    continue;
                                ++candidates;
                                Scenario c = s;
                                c.parallel.dp = dp;
                                c.parallel.pp = pp;
                                c.parallel.tp = tp;
                                c.parallel.sharding = sharding;
                                c.parallel.sequenceParallel = sp;
                                c.parallel.schedule = schedule;
                                c.parallel.virtualStages = v;
                                c.batch.microBatch = b;
                                c.model.recompute = rc;
                                auto d = scenario::derive(c);
                                QVERIFY(d);
                                if (!d.value()->stage3)
                                    continue;
                                ++valid;
                                if (d.value()->memory->fits)
                                    expected.insert(keyOf(c.parallel, b, rc));
                            }
                    }
        }
    QCOMPARE(r.candidates, candidates);
    QCOMPARE(r.valid, valid);
    QVERIFY(!r.truncated);
    QVERIFY(!expected.empty());
    QVERIFY(expected.size() < valid); // 16 GiB rules some out (DDP at B = 64: 16·P + activations of 64 sequences)
    std::set<Key> got;
    for (const FitPlan& f : r.fitting)
        got.insert(keyOf(f.plan, f.microBatch, f.recompute));
    QCOMPARE(got.size(), r.fitting.size()); // each once
    QVERIFY(got == expected);

    // Coarse order: FLOPs per step / (4 GPUs · 312 TFLOP/s · efficiency) · (1 + (p − 1)/(v·m)) by hand from
    // the bubble formula (Narayanan et al. §2.2), m = 512/(dp·B); non-decreasing along the list.
    Scenario none = s;
    none.model.recompute = model::Recompute::None;
    const double flopsNone = scenario::derive(none).value()->figures.valueOf("compute.flops_per_step");
    double previous = 0;
    for (const FitPlan& f : r.fitting) {
        const parallel::ParallelPlan& p = f.plan;
        const double m = 512.0 / double(p.dp * f.microBatch);
        const double v = p.schedule == PipelineSchedule::Interleaved ? double(p.virtualStages) : 1.0;
        QCOMPARE(f.accumulation, std::uint64_t(m));
        const double bubble = 1 + (double(p.pp) - 1) / (v * m);
        // (Recomputation adds FLOPs: selective the attention scores' forward, full the blocks' forward.)
        if (f.recompute == model::Recompute::None)
            QVERIFY(std::abs(f.coarseSeconds - f.coarseCommSeconds
                             - flopsNone / (4 * 312e12 * s.parallel.computeEfficiency) * bubble)
                    <= 1e-12 * f.coarseSeconds);
        QVERIFY(f.coarseCommSeconds >= 0);
        QCOMPARE(f.coarseCommSeconds == 0, p.dp == 1 && p.pp == 1 && p.tp == 1);
        QVERIFY(f.coarseSeconds >= previous);
        previous = f.coarseSeconds;
        QVERIFY(f.peakBytes <= f.capacityBytes);
    }

    // Exact: 4 distinct layouts simulated, ranked by simulated step time, each with its MFU.
    QCOMPARE(r.plans.size(), std::size_t(4));
    for (std::size_t i = 0; i < r.plans.size(); ++i) {
        QVERIFY(r.plans[i].simulated);
        QVERIFY(r.plans[i].mfu > 0 && r.plans[i].mfu <= 1);
        QVERIFY(r.plans[i].exposedCommSeconds >= 0);
        if (i > 0)
            QVERIFY(r.plans[i - 1].stepSeconds <= r.plans[i].stepSeconds);
        for (std::size_t j = 0; j < i; ++j)
            QVERIFY(!(r.plans[i].plan.dp == r.plans[j].plan.dp && r.plans[i].plan.pp == r.plans[j].plan.pp
                      && r.plans[i].plan.tp == r.plans[j].plan.tp && r.plans[i].plan.schedule == r.plans[j].plan.schedule
                      && r.plans[i].plan.virtualStages == r.plans[j].plan.virtualStages));
    }
    // Applying a plan gives a scenario whose every GPU fits and whose step is the one simulated.
    const Scenario applied = scenario::applyFitPlan(s, r.plans.front());
    auto d = scenario::derive(applied);
    QVERIFY(d && d.value()->memory && d.value()->memory->fits);
    QCOMPARE(applied.batch.globalBatchTokens, s.batch.globalBatchTokens);
}

void TestFitSearch::coarseEstimate_data()
{
    QTest::addColumn<int>("schedule");
    QTest::addColumn<int>("pp");
    QTest::addColumn<int>("v");
    QTest::addColumn<int>("m");
    QTest::addColumn<double>("expected");
    // 1e15 FLOP on 8 GPUs at 100 TFLOP/s · 0.5 = 2.5 s of compute, then the bubble:
    QTest::newRow("no pipeline") << int(PipelineSchedule::OneFOneB) << 1 << 1 << 8 << 2.5;
    // 1F1B, p = 4, m = 8: 1 + 3/8 → 3.4375 s.
    QTest::newRow("1f1b") << int(PipelineSchedule::OneFOneB) << 4 << 1 << 8 << 3.4375;
    QTest::newRow("gpipe") << int(PipelineSchedule::GPipe) << 4 << 1 << 8 << 3.4375;
    // Interleaved v = 2: 1 + 3/16 → 2.96875 s.
    QTest::newRow("interleaved") << int(PipelineSchedule::Interleaved) << 4 << 2 << 8 << 2.96875;
}

void TestFitSearch::coarseEstimate()
{
    QFETCH(int, schedule);
    QFETCH(int, pp);
    QFETCH(int, v);
    QFETCH(int, m);
    QFETCH(double, expected);
    QCOMPARE(scenario::coarseStepSeconds(1e15, 8, 100e12, 0.5, PipelineSchedule(schedule), std::uint64_t(pp),
                                         std::uint64_t(v), std::uint64_t(m)),
             expected);
}

void TestFitSearch::coarseCommunication_data()
{
    QTest::addColumn<int>("dp");
    QTest::addColumn<int>("pp");
    QTest::addColumn<int>("tp");
    QTest::addColumn<bool>("full");
    QTest::addColumn<bool>("zero3");
    QTest::addColumn<double>("expected");
    // M = 1e8 B of activations, 1e9 B of gradients per GPU, 12 layers, m = 4, v = 1; NVLink 1e11 B/s,
    // pipeline 1e10 B/s, DP 1e9 B/s.
    // TP 4 alone: 12 layers · 4 micro-batches · 4 AllReduces · 2·3/4 · 1e8 B / 1e11 B/s = 0.288 s.
    QTest::newRow("tp4") << 1 << 1 << 4 << false << false << 0.288;
    // Full recomputation: 6 AllReduces → 0.432 s.
    QTest::newRow("tp4 full") << 1 << 1 << 4 << true << false << 0.432;
    // PP 2: 6 layers per stage for TP (0.144 s) + 4 micro-batches · 2 · 1e8 / 1e10 = 0.08 s → 0.224 s.
    QTest::newRow("tp4 pp2") << 1 << 2 << 4 << false << false << 0.224;
    // DP 8: 2·7/8 · 1e9 / 1e9 = 1.75 s; ZeRO-3 3·7/8 → 2.625 s.
    QTest::newRow("dp8") << 8 << 1 << 1 << false << false << 1.75;
    QTest::newRow("dp8 zero3") << 8 << 1 << 1 << false << true << 2.625;
}

void TestFitSearch::coarseCommunication()
{
    QFETCH(int, dp);
    QFETCH(int, pp);
    QFETCH(int, tp);
    QFETCH(bool, full);
    QFETCH(bool, zero3);
    QFETCH(double, expected);
    scenario::CoarseComm c;
    c.dp = std::uint64_t(dp);
    c.pp = std::uint64_t(pp);
    c.tp = std::uint64_t(tp);
    c.microBatches = 4;
    c.layers = 12;
    c.activationBytes = 1e8;
    c.gradientBytes = 1e9;
    c.fullRecompute = full;
    c.zero3 = zero3;
    c.intraBandwidth = 1e11;
    c.ppBandwidth = 1e10;
    c.dpBandwidth = 1e9;
    QVERIFY(std::abs(scenario::coarseCommSeconds(c) - expected) <= 1e-12 * expected);
}

void TestFitSearch::partialResultsAndCancel()
{
    const Scenario s = smallCase();
    scenario::FitOptions o;
    o.top = 3;
    o.simulate = 2;
    std::vector<std::size_t> simulatedSeen;
    auto found = scenario::searchFittingPlans(s, o, {}, [&](const FitSearch& r) {
        std::size_t n = 0;
        for (const FitPlan& f : r.plans)
            n += f.simulated ? 1 : 0;
        simulatedSeen.push_back(n);
    });
    QVERIFY(found);
    // Once after the coarse ranking (nothing simulated yet, three coarse plans), then after each simulation.
    QCOMPARE(simulatedSeen, (std::vector<std::size_t>{0, 1, 2}));
    QCOMPARE(found.value().plans.size(), std::size_t(3));
    QVERIFY(found.value().plans[0].simulated && found.value().plans[1].simulated && !found.value().plans[2].simulated);

    // Cancel from the partial callback: the search stops before simulating.
    std::stop_source stop;
    Progress progress;
    progress.stop = stop.get_token();
    int calls = 0;
    auto cancelled = scenario::searchFittingPlans(s, o, progress, [&](const FitSearch&) {
        ++calls;
        stop.request_stop();
    });
    QVERIFY(!cancelled);
    QCOMPARE(cancelled.error().message, std::string("cancelled"));
    QCOMPARE(calls, 1);
}

void TestFitSearch::nothingFits()
{
    // GPT-2 small on one 1 GiB GPU: the reserve alone (1 GiB) leaves nothing.
    Scenario s = smallCase();
    s.hardware.gpusPerNode = 1;
    s.parallel.dp = 1;
    s.hardware.custom.memoryBytes = 1024.0 * 1024 * 1024;
    auto found = scenario::searchFittingPlans(s);
    QVERIFY(found);
    QVERIFY(found.value().valid > 0);
    QVERIFY(found.value().fitting.empty());
    QVERIFY(found.value().plans.empty());
}

void TestFitSearch::kernelModelGivesTheCoarseEfficiency()
{
    // With the kernel model (compute_efficiency auto = 0) the coarse estimate's efficiency is what the
    // kernels give the scenario's own plan: FLOPs per GPU / (peak · busiest stage per step). So the
    // candidate that IS the scenario's plan (dp 4, pp 1: no bubble) has a coarse compute time equal to its
    // own stage's compute per step, and no candidate has a zero estimate (a 0 rate would make them all 0).
    Scenario s = smallCase();
    s.parallel.computeEfficiency = 0;
    s.batch.microBatch = 16; // B = 32 needs ≈ 20 GB here: not a fitting plan; 16 fits (N_acc = 512/(16·4) = 8)
    auto derived = scenario::derive(s);
    QVERIFY(derived && derived.value()->stage3);
    const double busy = derived.value()->stage3->timeline.stageBusySeconds.at(0);
    QVERIFY(busy > 0);
    scenario::FitOptions o;
    o.simulate = 0;
    auto found = scenario::searchFittingPlans(s, o);
    QVERIFY(found);
    QVERIFY(!found.value().fitting.empty());
    bool seen = false;
    for (const FitPlan& f : found.value().fitting) {
        QVERIFY(f.coarseSeconds > 0);
        if (keyOf(f.plan, f.microBatch, f.recompute) == keyOf(s.parallel, s.batch.microBatch, s.model.recompute)) {
            seen = true;
            const double compute = f.coarseSeconds - f.coarseCommSeconds;
            QVERIFY2(std::abs(compute - busy) <= 1e-9 * busy,
                     qPrintable(QString::number(compute, 'g', 12) + QStringLiteral(" vs ") + QString::number(busy, 'g', 12)));
        }
    }
    QVERIFY(seen);
}

QTEST_GUILESS_MAIN(TestFitSearch)
#include "tst_fitsearch.moc"
