// MFU and HFU as defined (issue #41, docs/compute.md "MFU and HFU"): MFU = the model's FLOPs, nothing
// recomputed, over GPUs · the GEMM precision's peak · the step; HFU the same with the recomputed FLOPs.
// The reference values are worked by hand from the model's published shape, not read back from the
// program: Llama-2-7B has P = 6,738,415,616 parameters (L = 32, d = 4,096, d_ff = 11,008, V = 32,000,
// untied head: 32·(4·4096² + 3·4096·11008 + 2·4096) + 2·32000·4096 + 4096), so one token costs
// 6·P + 12·T·d·L = 40,430,493,696 + 6,442,450,944 = 46,872,944,640 model FLOPs at T = 4,096.

#include "../support/testsupport.h"

#include "model/kernels.h"
#include "scenario/derive.h"

#include <QTest>

#include <cmath>
#include <string>

using namespace tw;

namespace {

constexpr double kModelFlopsPerToken = 46872944640.0; // by hand, above
constexpr double kTokensPerStep = 524288.0;           // 4 nodes · 8 GPUs · B 1 · T 4096 · 4 micro-batches
constexpr double kGpus = 32;
constexpr double kH100Bf16 = 989.5e12;                // H100 SXM datasheet: 1,979 TFLOP/s bf16 with sparsity, halved
constexpr double kH100Fp8 = 1979e12;                  // and 3,958 fp8 with sparsity, halved

// llama2-7b on 4 nodes as pure data parallelism with FSDP, 4 micro-batches per GPU.
scenario::Scenario sevenB(model::Recompute recompute, model::Precision gemm = model::Precision::Bf16)
{
    scenario::Scenario s = test::presetOrDie("llama2-7b");
    s.hardware.nodes = 4;
    s.parallel.dp = 32;
    s.batch.globalBatchTokens = static_cast<std::uint64_t>(kTokensPerStep);
    s.model.recompute = recompute;
    s.model.activations = gemm;
    return s;
}

struct Measured {
    double planMfu = 0, planHfu = 0, planStep = 0; // the compute timeline (tokenwire-cli kernels, derive)
    double simMfu = 0, simHfu = 0, simStep = 0;    // the simulated step (simulate, stage 5)
    double peak = 0;                               // compute.gpu_peak_flops
};

Measured measure(const scenario::Scenario& s)
{
    auto d = scenario::derive(s);
    if (!d || !d.value()->stage3)
        qFatal("derive: %s", d ? "the plan cannot run" : d.error().toString().c_str());
    const FigureSet& f = d.value()->figures;
    Measured m;
    m.planMfu = f.valueOf("plan.mfu");
    m.planHfu = f.valueOf("plan.hfu");
    m.planStep = f.valueOf("pp.makespan") + f.valueOf("plan.optimizer_step_seconds");
    m.peak = f.valueOf("compute.gpu_peak_flops");
    auto step = scenario::simulateDerived(s, *d.value(), false);
    if (!step)
        qFatal("simulate: %s", step.error().toString().c_str());
    m.simMfu = step.value().simulation->mfu;
    m.simHfu = step.value().simulation->hfu;
    m.simStep = step.value().simulation->stepSeconds;
    if (!step.value().simulation->figures.find("sim.mfu") || !step.value().simulation->figures.find("sim.hfu"))
        qFatal("the simulation has no sim.mfu or sim.hfu figure");
    return m;
}

bool near(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::fabs(b); }

} // namespace

class TestMfu : public QObject {
    Q_OBJECT
private slots:
    void mfuTimesStepIsTheModelsWork_data();
    void mfuTimesStepIsTheModelsWork();
    void fp8IsMeasuredAgainstTheFp8Peak();
    void aGpuWithoutTheGemmPrecisionFallsBackAndSaysSo();
};

void TestMfu::mfuTimesStepIsTheModelsWork_data()
{
    QTest::addColumn<int>("recompute");
    QTest::newRow("none") << int(model::Recompute::None);
    QTest::newRow("selective") << int(model::Recompute::Selective);
    QTest::newRow("full") << int(model::Recompute::Full);
}

// MFU · step = model FLOPs / (GPUs · peak) whatever is recomputed, on the compute timeline and on the
// simulated step alike; HFU counts more exactly when something is recomputed.
void TestMfu::mfuTimesStepIsTheModelsWork()
{
    QFETCH(int, recompute);
    const auto mode = static_cast<model::Recompute>(recompute);
    const Measured m = measure(sevenB(mode));
    const double work = kModelFlopsPerToken * kTokensPerStep / (kGpus * kH100Bf16); // s at 100 % of peak
    QCOMPARE(m.peak, kH100Bf16);
    QVERIFY2(near(m.planMfu * m.planStep, work, 1e-9), qPrintable(QString::number(m.planMfu * m.planStep / work, 'g', 12)));
    QVERIFY2(near(m.simMfu * m.simStep, work, 1e-9), qPrintable(QString::number(m.simMfu * m.simStep / work, 'g', 12)));
    QVERIFY(m.simMfu > 0.05 && m.simMfu < 1);
    if (mode == model::Recompute::None) {
        QVERIFY(near(m.simHfu, m.simMfu, 1e-12));
        QVERIFY(near(m.planHfu, m.planMfu, 1e-12));
    } else {
        // Selective recomputes the attention scores' forward: + 4·T·d·L per token; full the whole
        // blocks' forward as well: + 2·P_blocks, the blocks' parameters (attention 32·4·4096², MLP
        // 32·3·4096·11008, the blocks' two norms 32·2·4096: 6,476,267,520; the embedding, the head and the
        // final norm are not checkpointed).
        const double extra = mode == model::Recompute::Selective ? 4.0 * 4096 * 4096 * 32
                                                                  : 4.0 * 4096 * 4096 * 32 + 2.0 * 6476267520.0;
        const double ratio = (kModelFlopsPerToken + extra) / kModelFlopsPerToken;
        QVERIFY2(near(m.simHfu / m.simMfu, ratio, 1e-9), qPrintable(QString::number(m.simHfu / m.simMfu, 'g', 12)));
        QVERIFY2(near(m.planHfu / m.planMfu, ratio, 1e-9), qPrintable(QString::number(m.planHfu / m.planMfu, 'g', 12)));
    }
}

// FP8 GEMMs: the step is shorter and MFU is measured against the FP8 peak, so MFU · step halves with
// the doubled denominator: model FLOPs / (32 · 1,979 TFLOP/s), by hand.
void TestMfu::fp8IsMeasuredAgainstTheFp8Peak()
{
    const Measured bf16 = measure(sevenB(model::Recompute::Selective));
    const Measured fp8 = measure(sevenB(model::Recompute::Selective, model::Precision::Fp8));
    QCOMPARE(fp8.peak, kH100Fp8);
    const double work = kModelFlopsPerToken * kTokensPerStep / (kGpus * kH100Fp8);
    QVERIFY2(near(fp8.simMfu * fp8.simStep, work, 1e-9), qPrintable(QString::number(fp8.simMfu * fp8.simStep / work, 'g', 12)));
    QVERIFY2(near(fp8.planMfu * fp8.planStep, work, 1e-9), qPrintable(QString::number(fp8.planMfu * fp8.planStep / work, 'g', 12)));
    QVERIFY2(fp8.simStep < bf16.simStep, "fp8 GEMMs run faster");
    // Never above 100 %: against the bf16 peak an fp8 run could show more than the GPU can do.
    QVERIFY(fp8.simMfu < 1 && fp8.planMfu < 1);
}

// A V100 has no bf16 tensor cores: the kernel model runs bf16 GEMMs at its fp16 peak (125 TFLOP/s,
// datasheet), MFU is measured against the same and the figure says so.
void TestMfu::aGpuWithoutTheGemmPrecisionFallsBackAndSaysSo()
{
    auto v100 = model::findGpu("v100-32gb");
    QVERIFY(v100);
    model::ModelConfig m;
    m.activations = model::Precision::Bf16;
    QCOMPARE(model::gemmPeak(*v100, m), 125e12);
    const std::string text = model::gemmPeakText(*v100, m);
    QVERIFY2(test::contains(text, "bf16") && test::contains(text, "fp16 peak"), text.c_str());
}

QTEST_GUILESS_MAIN(TestMfu)
#include "tst_mfu.moc"
