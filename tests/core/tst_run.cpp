// A whole training run (issue #40, docs/model.md §5.6), worked by hand for paper-dp: G = 524,288
// tokens per step, 8 A100 SXM GPUs (datasheet TDP 400 W). D = 10^10 tokens take ⌈10^10 / 524,288⌉ =
// ⌈19,073.49⌉ = 19,074 steps; with the simulated step S, the run takes 19,074·S seconds, 8·19,074·S /
// 3,600 GPU-hours, and at PUE 1.2 and 50 W of host power per GPU GPU-hours · 450 · 1.2 / 1,000 kWh; at
// 2.5 per GPU-hour it costs GPU-hours · 2.5. The scenario file's "run" block reads, writes back and
// refuses what a run cannot have.

#include "../support/testsupport.h"

#include "scenario/derive.h"
#include "scenario/run.h"
#include "scenario/scenariojson.h"

#include <QTest>

#include <cmath>

using namespace tw;

namespace {

bool near(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::fabs(b); }

} // namespace

class TestRun : public QObject {
    Q_OBJECT
private slots:
    void paperDpByHand()
    {
        scenario::Scenario s = test::presetOrDie("paper-dp");
        s.run.tokens = 1e10;
        s.run.pue = 1.2;
        s.run.hostPowerWattsPerGpu = 50;
        s.run.pricePerGpuHour = 2.5;
        auto d = scenario::derive(s);
        QVERIFY(d.ok());
        auto step = scenario::simulateDerived(s, *d.value(), false);
        QVERIFY(step.ok());
        const double S = step.value().simulation->stepSeconds;
        QVERIFY(S > 0);
        auto run = scenario::estimateRun(s, *step.value().simulation);
        QVERIFY2(run.ok(), run.ok() ? "" : run.error().toString().c_str());
        const scenario::RunEstimate& r = run.value();
        QCOMPARE(r.steps, 19074.0);
        QVERIFY(near(r.seconds, 19074 * S));
        QVERIFY(near(r.days, 19074 * S / 86400));
        const double gpuHours = 8 * 19074 * S / 3600;
        QVERIFY(near(r.gpuHours, gpuHours));
        QVERIFY(near(r.tokensPerSecondPerGpu, 524288 / (S * 8)));
        QCOMPARE(r.gpuPowerWatts, 400.0);
        QVERIFY(near(r.energyKwh, gpuHours * 450 * 1.2 / 1000));
        QVERIFY(r.cost && near(*r.cost, gpuHours * 2.5));
        // Each number is a figure whose chain reaches the step and the batch.
        const Figure* steps = r.figures.find("run.steps");
        QVERIFY(steps && steps->formula.find("19,074") != std::string::npos);
        QVERIFY(r.figures.find("run.seconds")->inputs == std::vector<std::string>({"run.steps", "sim.step_time_s"}));
        // --tokens overrides the file; a given power replaces the TDP.
        s.run.gpuPowerWatts = 300;
        auto other = scenario::estimateRun(s, *step.value().simulation, 2e10);
        QVERIFY(other.ok());
        QCOMPARE(other.value().steps, std::ceil(2e10 / 524288));
        QVERIFY(near(other.value().energyKwh, other.value().gpuHours * 350 * 1.2 / 1000));
    }

    void badRunsSayWhy()
    {
        scenario::Scenario s = test::presetOrDie("paper-dp");
        auto d = scenario::derive(s);
        QVERIFY(d.ok());
        auto step = scenario::simulateDerived(s, *d.value(), false);
        QVERIFY(step.ok());
        const auto& sim = *step.value().simulation;
        auto none = scenario::estimateRun(s, sim);
        QVERIFY(!none.ok());
        QCOMPARE(none.error().where.jsonPath, std::string("run.tokens"));
        QVERIFY(!scenario::estimateRun(s, sim, 1000.0).ok()); // fewer than one step
        s.hardware.gpu = "custom";
        auto custom = scenario::estimateRun(s, sim, 1e10);
        QVERIFY(!custom.ok());
        QCOMPARE(custom.error().where.jsonPath, std::string("run.gpu_power_w"));
    }

    void fileBlockReadsWritesAndRefuses()
    {
        const auto loaded = scenario::loadScenario(
            R"({"schema_version": 5, "run": {"tokens": "15.6T", "gpu_power_w": 650, "pue": 1.3, "price_per_gpu_hour": 2}})",
            "run.json");
        QVERIFY2(loaded.errors.empty(), loaded.errors.empty() ? "" : loaded.errors[0].toString().c_str());
        const scenario::RunSettings& r = loaded.scenario->run;
        QCOMPARE(r.tokens, 15.6e12);
        QCOMPARE(*r.gpuPowerWatts, 650.0);
        QCOMPARE(r.pue, 1.3);
        const auto again = scenario::loadScenario(scenario::scenarioToJson(*loaded.scenario), "again.json");
        QVERIFY(again.errors.empty());
        QCOMPARE(again.scenario->run, r);
        // A scenario without a run writes none (files stay as they were).
        QVERIFY(scenario::scenarioToJson(scenario::Scenario{}).find("\"run\"") == std::string::npos);
        for (const auto& [doc, path] :
             {std::pair{R"({"schema_version": 5, "run": {"pue": 0.8}})", "run.pue"},
              std::pair{R"({"schema_version": 5, "run": {"tokens": "12 parsecs"}})", "run.tokens"},
              std::pair{R"({"schema_version": 5, "run": {"tokens": -5}})", "run.tokens"},
              std::pair{R"({"schema_version": 5, "run": {"gpu_power_w": 0}})", "run.gpu_power_w"},
              std::pair{R"({"schema_version": 5, "run": {"price_per_gpu_hour": -1}})", "run.price_per_gpu_hour"},
              std::pair{R"({"schema_version": 5, "run": {"tokenz": 5}})", "run.tokenz"}}) {
            const auto bad = scenario::loadScenario(doc, "bad.json");
            QVERIFY2(!bad.errors.empty(), doc);
            QCOMPARE(bad.errors[0].where.jsonPath, std::string(path));
        }
    }
};

QTEST_GUILESS_MAIN(TestRun)
#include "tst_run.moc"
