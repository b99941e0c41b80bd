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

#include <algorithm>
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
        auto run = scenario::estimateRun(s, *d.value(), *step.value().simulation);
        QVERIFY2(run.ok(), run.ok() ? "" : run.error().toString().c_str());
        const scenario::RunEstimate& r = run.value();
        QCOMPARE(r.steps, 19074.0);
        QVERIFY(near(r.seconds, 19074 * S));
        QVERIFY(near(r.days, 19074 * S / 86400));
        const double gpuHours = 8 * 19074 * S / 3600;
        QVERIFY(near(r.gpuHours, gpuHours));
        QVERIFY(near(r.tokensPerSecondPerGpu, 524288 / (S * 8)));
        QCOMPARE(r.gpuPowerWatts, 400.0);
        // Energy and cost count the GPU-hours with failures (GPU-hours / goodput; the goodput is worked in
        // failuresOfPaperDpByHand).
        const double held = gpuHours / r.resilience.goodput;
        QVERIFY(r.resilience.goodput > 0.9 && r.resilience.goodput < 1);
        QVERIFY(near(r.gpuHoursWithFailures, held));
        QVERIFY(near(r.energyKwh, held * 450 * 1.2 / 1000));
        QVERIFY(r.cost && near(*r.cost, held * 2.5));
        // Each number is a figure whose chain reaches the step and the batch.
        const Figure* steps = r.figures.find("run.steps");
        QVERIFY(steps && steps->formula.find("19,074") != std::string::npos);
        QVERIFY(r.figures.find("run.seconds")->inputs == std::vector<std::string>({"run.steps", "sim.step_time_s"}));
        // --tokens overrides the file; a given power replaces the TDP.
        s.run.gpuPowerWatts = 300;
        auto other = scenario::estimateRun(s, *d.value(), *step.value().simulation, 2e10);
        QVERIFY(other.ok());
        QCOMPARE(other.value().steps, std::ceil(2e10 / 524288));
        QVERIFY(near(other.value().energyKwh, other.value().gpuHoursWithFailures * 350 * 1.2 / 1000));
    }

    // Young's interval and Daly's goodput by hand: M = 10,000 s, δ = 50 s, R = 0: τ = √(2·50·10,000) =
    // 1,000 s; goodput = 1,000 / (10,000 · (e^{1,050/10,000} − 1)) = 1,000 / (10,000 · 0.1107106) = 0.903256
    // (first order: 1 − 50/1,000 − 1,000/20,000 = 0.90). A recovery of 500 s multiplies the wall time by
    // e^{500/10,000} = 1.051271: goodput 0.903256 / 1.051271 = 0.859204.
    void youngDalyByHand()
    {
        QCOMPARE(scenario::youngInterval(50, 10000), 1000.0);
        QVERIFY(std::fabs(scenario::goodputOf(1000, 50, 0, 10000) - 0.903256) < 1e-6);
        QVERIFY(std::fabs(scenario::goodputOf(1000, 50, 500, 10000) - 0.859204) < 1e-6);
        // Young's interval is the best one: a shorter or a longer one loses goodput.
        QVERIFY(scenario::goodputOf(500, 50, 0, 10000) < scenario::goodputOf(1000, 50, 0, 10000));
        QVERIFY(scenario::goodputOf(2000, 50, 0, 10000) < scenario::goodputOf(1000, 50, 0, 10000));
        // Llama 3's 16,384 GPUs in 2,048 servers at the default rates: 419 unexpected interruptions in 54 days
        // (arXiv 2407.21783 Table 5), which the rates were divided from (to 3 digits).
        const double perHour = scenario::interruptionsPerHour(scenario::FailureRates{}, 16384, 2048);
        QVERIFY2(std::fabs(perHour * 54 * 24 - 419) < 0.5, std::to_string(perHour * 54 * 24).c_str());
    }

    // paper-dp's failures by hand, with rates chosen round: 8 GPUs · (25 + 25 + 25 + 25) + 1 server · 200 =
    // 1,000 per 10^6 h, one interruption every 1,000 h = 3,600,000 s. The checkpoint is GPT-2's weights
    // and Adam state, 124,439,808 · (2 + 4 + 4 + 4) = 1,742,157,312 B, written at 0.1 GB/s · 8 GPUs in
    // 1,742,157,312 / 8·10^8 = 2.17769664 s; Young's interval √(2 · 2.17769664 · 3,600,000) = 3,959.7 s,
    // rounded to whole steps; recovery 300 s + 2.1777 s.
    void failuresOfPaperDpByHand()
    {
        scenario::Scenario s = test::presetOrDie("paper-dp");
        s.run.tokens = 1e10;
        s.run.failures = {25, 25, 25, 25, 200};
        s.run.checkpoint.storageGBpsPerGpu = 0.1;
        s.run.checkpoint.restartSeconds = 300;
        auto d = scenario::derive(s);
        QVERIFY(d.ok());
        auto step = scenario::simulateDerived(s, *d.value(), false);
        QVERIFY(step.ok());
        const double S = step.value().simulation->stepSeconds;
        auto run = scenario::estimateRun(s, *d.value(), *step.value().simulation);
        QVERIFY2(run.ok(), run.ok() ? "" : run.error().toString().c_str());
        const scenario::Resilience& x = run.value().resilience;
        QVERIFY(near(x.mtbfSeconds, 3.6e6));
        QCOMPARE(x.checkpointBytes, 1742157312.0);
        QVERIFY(near(x.writeSeconds, 2.17769664));
        QVERIFY(std::fabs(x.youngSeconds - 3959.7) < 0.1);
        const double tau = std::max(1.0, std::round(std::sqrt(2 * 2.17769664 * 3.6e6) / S)) * S;
        QVERIFY2(near(x.intervalSeconds, tau), (std::to_string(x.intervalSeconds) + " vs " + std::to_string(tau)).c_str());
        const double R = 302.17769664, M = 3.6e6;
        const double goodput = tau / (M * std::exp(R / M) * (std::exp((tau + 2.17769664) / M) - 1));
        QVERIFY(std::fabs(x.goodput - goodput) < 1e-9);
        const scenario::RunEstimate& r = run.value();
        QVERIFY(near(r.daysWithFailures, r.days / goodput));
        QVERIFY(near(r.interruptions, r.days / goodput * 24 / 1000));
        // Each is a figure: the interval's chain reaches the model's memory and the step.
        const auto chain = r.figures.chain("run.goodput");
        QVERIFY(std::any_of(chain.begin(), chain.end(), [](const Figure* f) { return f->id == "run.checkpoint_bytes"; }));
        // A fixed interval replaces Young's.
        s.run.checkpoint.intervalSeconds = 100 * S;
        auto fixed = scenario::estimateRun(s, *d.value(), *step.value().simulation);
        QVERIFY(fixed.ok());
        QVERIFY(near(fixed.value().resilience.intervalSeconds, 100 * S));
        QVERIFY(fixed.value().resilience.goodput < x.goodput);
        // Goodput falls as the cluster grows (1,000 to 100,000 GPUs), each point at its own interval.
        const auto curve = scenario::goodputAgainstClusterSize(scenario::RunSettings{}, 8, 1e12, 5);
        QCOMPARE(curve.size(), std::size_t(17));
        QCOMPARE(curve.front().gpus, 1000.0);
        QCOMPARE(curve.back().gpus, 100000.0);
        for (std::size_t i = 1; i < curve.size(); ++i)
            QVERIFY(curve[i].at.goodput < curve[i - 1].at.goodput);
    }

    void badRunsSayWhy()
    {
        scenario::Scenario s = test::presetOrDie("paper-dp");
        auto d = scenario::derive(s);
        QVERIFY(d.ok());
        auto step = scenario::simulateDerived(s, *d.value(), false);
        QVERIFY(step.ok());
        const auto& sim = *step.value().simulation;
        auto none = scenario::estimateRun(s, *d.value(), sim);
        QVERIFY(!none.ok());
        QCOMPARE(none.error().where.jsonPath, std::string("run.tokens"));
        QVERIFY(!scenario::estimateRun(s, *d.value(), sim, 1000.0).ok()); // fewer than one step
        s.hardware.gpu = "custom";
        auto custom = scenario::estimateRun(s, *d.value(), sim, 1e10);
        QVERIFY(!custom.ok());
        QCOMPARE(custom.error().where.jsonPath, std::string("run.gpu_power_w"));
    }

    // A batch ramp by hand on paper-dp (G = 524,288, 8 GPUs, step S simulated): a first phase of G_1 =
    // 262,144 tokens on 4 GPUs until 10^9 tokens, given here as its step (2 s, MFU 25 %) so the counting
    // is checked apart from the simulation. D = 10^10: ⌈10^9 / 262,144⌉ = ⌈3,814.70⌉ = 3,815 steps, then
    // ⌈9·10^9 / 524,288⌉ = ⌈17,166.14⌉ = 17,167 steps of S: 20,982 steps, 3,815·2 + 17,167·S seconds,
    // (4·3,815·2 + 8·17,167·S) / 3,600 GPU-hours, MFU (3,815·2·0.25 + 17,167·S·m) / seconds.
    void rampByHand()
    {
        scenario::Scenario s = test::presetOrDie("paper-dp");
        s.run.tokens = 1e10;
        s.run.batchRamp = {{1e9, 262144, 0, 4}};
        auto d = scenario::derive(s);
        QVERIFY(d.ok());
        auto step = scenario::simulateDerived(s, *d.value(), false);
        QVERIFY(step.ok());
        const double S = step.value().simulation->stepSeconds, m = step.value().simulation->mfu;
        const std::vector<scenario::PhaseStep> given{{s.run.batchRamp[0], 1024, 4, 2.0, 0.25}};
        auto run = scenario::estimateRun(s, *d.value(), *step.value().simulation, std::nullopt,
                                         scenario::UnsetTokens::Refuse, given);
        QVERIFY2(run.ok(), run.ok() ? "" : run.error().toString().c_str());
        const scenario::RunEstimate& r = run.value();
        QCOMPARE(r.phases.size(), std::size_t(2));
        QCOMPARE(r.phases[0].steps, 3815.0);
        QCOMPARE(r.phases[1].steps, 17167.0);
        QCOMPARE(r.steps, 20982.0);
        const double seconds = 3815 * 2.0 + 17167 * S;
        QVERIFY(near(r.seconds, seconds));
        const double gpuHours = (4 * 3815 * 2.0 + 8 * 17167 * S) / 3600;
        QVERIFY(near(r.gpuHours, gpuHours));
        QVERIFY(near(r.tokensPerSecondPerGpu, 1e10 / (gpuHours * 3600)));
        QVERIFY(near(r.mfu, (3815 * 2.0 * 0.25 + 17167 * S * m) / seconds));
        // Each phase fails at its own cluster's rate and checkpoints at its own interval (Daly's goodput,
        // worked by hand in youngDalyByHand): 4 GPUs of one server for the first, the whole cluster after.
        const double ckpt = r.resilience.checkpointBytes;
        QVERIFY(near(r.phases[0].goodput, scenario::resilienceOf(s.run, 4, 8, ckpt, 2.0).goodput));
        QVERIFY(near(r.phases[1].goodput, r.resilience.goodput));
        QVERIFY(r.phases[0].goodput != r.phases[1].goodput);
        QVERIFY(near(r.gpuHoursWithFailures,
                     (4 * 3815 * 2.0 / r.phases[0].goodput + 8 * 17167 * S / r.phases[1].goodput) / 3600));
        // The figures: the phase's own, and the sums naming them.
        QVERIFY(r.figures.find("run.phase1.steps") && r.figures.find("run.phase1.step_time_s"));
        const auto& inputs = r.figures.find("run.steps")->inputs;
        QVERIFY(std::find(inputs.begin(), inputs.end(), "run.phase1.steps") != inputs.end());
        QVERIFY(r.figures.find("run.steps")->formula.find("⌈1,000,000,000 / 262,144⌉ + ⌈9,000,000,000 / 524,288⌉")
                != std::string::npos);
        // D inside the first phase: the scenario's batch takes no step.
        auto shortRun = scenario::estimateRun(s, *d.value(), *step.value().simulation, 5e8, scenario::UnsetTokens::Refuse,
                                              given);
        QVERIFY(shortRun.ok());
        QCOMPARE(shortRun.value().steps, std::ceil(5e8 / 262144));
        QCOMPARE(shortRun.value().phases[1].steps, 0.0);
        // Steps of another ramp (or none) are refused, at the ramp.
        auto missing = scenario::estimateRun(s, *d.value(), *step.value().simulation);
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().where.jsonPath, std::string("run.batch_ramp"));
    }

    // The phases simulated: half the sequences per replica make a shorter step on the same GPUs; a phase
    // whose GPUs are not whole servers, or whose batch the replicas cannot share, says so at its index.
    void rampSimulated()
    {
        scenario::Scenario s = test::presetOrDie("paper-dp");
        s.run.batchRamp = {{1e9, 262144, 0, 0}};
        auto d = scenario::derive(s);
        QVERIFY(d.ok());
        auto step = scenario::simulateDerived(s, *d.value(), false);
        QVERIFY(step.ok());
        auto phases = scenario::simulateRamp(s);
        QVERIFY2(phases.ok(), phases.ok() ? "" : phases.error().toString().c_str());
        QCOMPARE(phases.value().size(), std::size_t(1));
        QCOMPARE(phases.value()[0].gpus, 8.0);
        QCOMPARE(phases.value()[0].sequenceLength, std::uint64_t(1024));
        QVERIFY(phases.value()[0].stepSeconds > 0);
        QVERIFY(phases.value()[0].stepSeconds < step.value().simulation->stepSeconds);
        s.run.batchRamp = {{1e9, 262144, 0, 4}};
        auto halfServer = scenario::simulateRamp(s);
        QVERIFY(!halfServer.ok());
        QCOMPARE(halfServer.error().where.jsonPath, std::string("run.batch_ramp[0].dp"));
        s.run.batchRamp = {{1e9, 262144, 0, 0}, {2e9, 100000, 0, 0}};
        auto uneven = scenario::simulateRamp(s);
        QVERIFY(!uneven.ok());
        QCOMPARE(uneven.error().where.jsonPath, std::string("run.batch_ramp[1]"));
    }

    void fileBlockReadsWritesAndRefuses()
    {
        const auto loaded = scenario::loadScenario(
            R"({"schema_version": 5, "run": {"tokens": "15.6T", "gpu_power_w": 650, "pue": 1.3, "price_per_gpu_hour": 2,
                "failures": {"gpu_memory": 5}, "checkpoint": {"restart_s": 120, "interval_s": 1800},
                "batch_ramp": [{"until": "252M", "global_batch_tokens": 4194304, "sequence_length": 4096, "dp": 64},
                               {"until": 2.87e12, "global_batch_tokens": 8388608}]}})",
            "run.json");
        QVERIFY2(loaded.errors.empty(), loaded.errors.empty() ? "" : loaded.errors[0].toString().c_str());
        const scenario::RunSettings& r = loaded.scenario->run;
        QCOMPARE(r.tokens, 15.6e12);
        QCOMPARE(*r.gpuPowerWatts, 650.0);
        QCOMPARE(r.pue, 1.3);
        QCOMPARE(r.failures.gpuMemory, 5.0);
        QCOMPARE(r.failures.gpu, scenario::FailureRates{}.gpu);
        QCOMPARE(r.checkpoint.restartSeconds, 120.0);
        QCOMPARE(*r.checkpoint.intervalSeconds, 1800.0);
        QCOMPARE(r.batchRamp.size(), std::size_t(2));
        QCOMPARE(r.batchRamp[0], (scenario::BatchPhase{252e6, 4194304, 4096, 64}));
        QCOMPARE(r.batchRamp[1], (scenario::BatchPhase{2.87e12, 8388608, 0, 0}));
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
              std::pair{R"({"schema_version": 5, "run": {"tokenz": 5}})", "run.tokenz"},
              std::pair{R"({"schema_version": 5, "run": {"failures": {"gpu": 0}}})", "run.failures.gpu"},
              std::pair{R"({"schema_version": 5, "run": {"failures": {"host": -1}}})", "run.failures.host"},
              std::pair{R"({"schema_version": 5, "run": {"checkpoint": {"storage_gb_per_s_per_gpu": 0}}})",
                        "run.checkpoint.storage_gb_per_s_per_gpu"},
              std::pair{R"({"schema_version": 5, "run": {"checkpoint": {"interval_s": "often"}}})",
                        "run.checkpoint.interval_s"},
              std::pair{R"({"schema_version": 5, "run": {"batch_ramp": {"until": 5}}})", "run.batch_ramp"},
              std::pair{R"({"schema_version": 5, "run": {"batch_ramp": [5]}})", "run.batch_ramp[0]"},
              std::pair{R"({"schema_version": 5, "run": {"batch_ramp": [{"until": "1B"}]}})",
                        "run.batch_ramp[0].global_batch_tokens"},
              std::pair{R"({"schema_version": 5, "run": {"batch_ramp": [{"until": "1B", "global_batch_tokens": 8, "dpp": 2}]}})",
                        "run.batch_ramp[0].dpp"},
              std::pair{R"({"schema_version": 5, "run": {"batch_ramp": [{"until": "2B", "global_batch_tokens": 8},
                                                                         {"until": "1B", "global_batch_tokens": 16}]}})",
                        "run.batch_ramp[1].until"},
              std::pair{R"({"schema_version": 5, "run": {"batch_ramp": [{"until": "1B", "global_batch_tokens": 0}]}})",
                        "run.batch_ramp[0].global_batch_tokens"}}) {
            const auto bad = scenario::loadScenario(doc, "bad.json");
            QVERIFY2(!bad.errors.empty(), doc);
            QCOMPARE(bad.errors[0].where.jsonPath, std::string(path));
        }
    }
};

QTEST_GUILESS_MAIN(TestRun)
#include "tst_run.moc"
