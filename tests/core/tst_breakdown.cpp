// The per-collective breakdown of a simulated step (issue #41, network/breakdown.h): per strategy and
// collective kind the calls, bytes on the wire, time alone and exposed time, summing to the strategy
// totals stage 4 and the simulation report (the time in flight bounding the exposed time), in the JSON of `simulate --json` and as "sim.exposed_*"
// figures whose strategy figure cites them. The hand counts are from the presets' plans: paper-pp has
// 8 stages over 8 GPUs and global batch 524,288 tokens = 16 micro-batches of 32 × 1,024 per step
// (B = 32, T = 1,024), so each of the 7 boundaries passes one activation forward and one gradient
// back per micro-batch: 7 · 2 · 16 = 224 Send/Recv calls per step.

#include "../support/testsupport.h"

#include "network/breakdown.h"
#include "scenario/derive.h"
#include "scenario/resultjson.h"

#include <nlohmann/json.hpp>

#include <QTest>

#include <cmath>
#include <string>

using namespace tw;

namespace {

struct Simulated {
    scenario::Scenario scenario;
    std::shared_ptr<const scenario::Derivation> derivation;
    scenario::SimulatedStep step;
};

Simulated simulate(const scenario::Scenario& s)
{
    auto d = scenario::derive(s);
    if (!d || !d.value()->stage3 || !d.value()->stage4)
        qFatal("derive: %s", d ? "the plan cannot run" : d.error().toString().c_str());
    auto step = scenario::simulateDerived(s, *d.value(), false);
    if (!step)
        qFatal("simulate: %s", step.error().toString().c_str());
    return {s, d.value(), step.value()};
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-15; }

} // namespace

class TestBreakdown : public QObject {
    Q_OBJECT
private slots:
    void rowsSumToTheStrategyTotals_data()
    {
        QTest::addColumn<QString>("preset");
        for (const char* p : {"paper-dp", "paper-pp", "paper-tp", "paper-moe", "dgx-a100-4node", "paper-testbed"})
            QTest::newRow(p) << QString::fromLatin1(p);
    }

    void rowsSumToTheStrategyTotals()
    {
        QFETCH(QString, preset);
        const Simulated r = simulate(test::presetOrDie(preset.toStdString()));
        const network::StepSimulation& sim = *r.step.simulation;
        const collective::CollectiveDerivation& c = *r.derivation->stage4;
        QVERIFY(!sim.byCollective.empty());
        parallel::PerStrategy<double> exposed{}, bytes{}, alone{}, calls{};
        for (const network::CollectiveBreakdownRow& b : sim.byCollective) {
            exposed[b.strategy] += b.exposedSeconds;
            bytes[b.strategy] += b.wireBytesPerStep;
            alone[b.strategy] += b.secondsAlone;
            calls[b.strategy] += b.callsPerStep;
            QVERIFY(b.callsPerStep > 0);
            // Exposed is the part of the time in flight that compute waited on.
            QVERIFY2(b.inFlightSeconds >= b.exposedSeconds * (1 - 1e-12), preset.toLatin1().constData());
        }
        for (int s = 0; s < parallel::kStrategyCount; ++s) {
            const std::string what = preset.toStdString() + " " + std::string(parallel::toString(parallel::Strategy(s)));
            QVERIFY2(near(exposed[s], sim.exposedByStrategy[s]), (what + " exposed").c_str());
            QVERIFY2(near(bytes[s], c.wireBytesPerStep[s]), (what + " bytes").c_str());
            QVERIFY2(near(alone[s], c.secondsPerStep[s]), (what + " time alone").c_str());
            // The strategy's figure cites one figure per row of it, each holding the row's exposed time.
            static const char* const names[] = {"dp", "pp", "tp", "ep"};
            const Figure* f = sim.figures.find(std::string("sim.exposed_") + names[s] + "_s");
            QVERIFY(f);
            double cited = 0;
            for (const std::string& id : f->inputs) {
                QVERIFY2(sim.figures.find(id), id.c_str());
                cited += sim.figures.valueOf(id);
            }
            QVERIFY2(near(cited, f->value), (what + " cited figures").c_str());
        }
        double total = 0;
        for (double e : exposed)
            total += e;
        QVERIFY(near(total, sim.exposedCommSeconds));
        // simulate --json carries the same rows.
        const auto json = scenario::simulationJson(r.scenario, *r.step.network, sim);
        QCOMPARE(json["collectives"].size(), sim.byCollective.size());
        QCOMPARE(json["collectives"][0]["exposed_s"].get<double>(), sim.byCollective[0].exposedSeconds);
    }

    // Hand counts (top of the file): the pipeline's Send/Recv, the data-parallel AllReduce.
    void callsAsCountedByHand()
    {
        const Simulated pp = simulate(test::presetOrDie("paper-pp"));
        bool found = false;
        for (const network::CollectiveBreakdownRow& b : pp.step.simulation->byCollective)
            if (b.strategy == parallel::Strategy::PP && b.kind == parallel::CollectiveKind::SendRecv) {
                QCOMPARE(b.callsPerStep, 224.0);
                QVERIFY(b.exposedSeconds > 0); // a receive waits on its sender
                found = true;
            }
        QVERIFY(found);
        // paper-dp: one gradient AllReduce of the 8 replicas per step, the only DP collective.
        const Simulated dp = simulate(test::presetOrDie("paper-dp"));
        QCOMPARE(dp.step.simulation->byCollective.size(), std::size_t(1));
        const network::CollectiveBreakdownRow& b = dp.step.simulation->byCollective.front();
        QCOMPARE(int(b.strategy), int(parallel::Strategy::DP));
        QCOMPARE(int(b.kind), int(parallel::CollectiveKind::AllReduce));
        QCOMPARE(b.callsPerStep, 1.0);
        // Its buckets overlap the backward pass (ddp_overlap): in flight longer than the step waits on it.
        QVERIFY(b.inFlightSeconds > 2 * b.exposedSeconds);
    }
};

QTEST_GUILESS_MAIN(TestBreakdown)
#include "tst_breakdown.moc"
