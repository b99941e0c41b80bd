// Scenario A beside scenario B (issue 8, "Compare"): the key figures of a derivation and its simulated
// step, their differences, directions and one-sided figures, and the chart series. Reference values
// are derived by hand in the comments (published GPT-2 parameter counts, Megatron's TP call count,
// the paper's §5 MoE All-to-All bytes), never pasted from a run.

#include "../support/testsupport.h"
#include "network/simulate.h"
#include "scenario/compare.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <QTest>

#include <cmath>
#include <stop_token>

using namespace tw;
using namespace tw::scenario;

class TestCompare : public QObject {
    Q_OBJECT
private slots:
    void specsAreCuratedPerStage();
    void selfComparisonIsAllZero();
    void modelChangeGpt2SmallToMedium();
    void halvingTheMicroBatchHalvesActivations();
    void doublingTp();
    void figurePresentOnlyInB();
    void planThatCannotRunHasNoStage5();
    void cancellation();
    void formatting();
    void toleranceAbsorbsRounding();
};

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

using tw::test::presetOrDie;

// Derives and simulates a scenario: its key figures with stage 5.
KeyFigures measure(const Scenario& s)
{
    auto d = derive(s);
    if (!d)
        qFatal("derive %s: %s", s.name.c_str(), d.error().toString().c_str());
    auto k = measureKeyFigures(s, *d.value());
    if (!k)
        qFatal("measure %s: %s", s.name.c_str(), k.error().toString().c_str());
    return std::move(k).value();
}

const SeriesBar* barOf(const Series& s, const std::string& id)
{
    for (const SeriesBar& b : s.bars)
        if (b.id == id)
            return &b;
    return nullptr;
}

const FigureDelta& rowOrFail(const Comparison& c, const char* id)
{
    const FigureDelta* r = c.find(id);
    if (!r)
        qFatal("no row %s", id);
    return *r;
}

} // namespace

void TestCompare::specsAreCuratedPerStage()
{
    // Every stage has key figures, each id once, and every one of paper-reference's (which has no
    // experts) resolves to a figure of its derivation or its simulation.
    int perStage[tw::kStageCount] = {0, 0, 0, 0, 0};
    QStringList seen;
    for (const KeyFigureSpec& s : keyFigureSpecs()) {
        QVERIFY2(tw::stageAtIndex(tw::indexOf(s.stage)) == s.stage, s.id.c_str());
        ++perStage[tw::indexOf(s.stage)];
        QVERIFY2(!seen.contains(str(s.id)), s.id.c_str());
        seen << str(s.id);
        QVERIFY2(!s.why.empty(), s.id.c_str());
        QCOMPARE(keyFigureSpec(s.id), &s);
    }
    for (int st = 0; st < tw::kStageCount; ++st)
        QVERIFY2(perStage[st] >= 3, qPrintable(QStringLiteral("stage %1").arg(st + 1)));
    QVERIFY(keyFigureSpec("no.such.figure") == nullptr);

    const KeyFigures k = measure(presetOrDie("paper-reference"));
    QVERIFY(k.simulated);
    QVERIFY(k.stage5Note.empty());
    QCOMPARE(k.scenarioName, std::string("paper-reference"));
    for (const KeyFigureSpec& s : keyFigureSpecs()) {
        const bool expertOnly = s.id.rfind("ep.", 0) == 0 || s.id.rfind("collective.ep.", 0) == 0;
        const bool planOnly = s.id.rfind("collective.pp.", 0) == 0 || s.id.rfind("collective.tp.", 0) == 0;
        if (expertOnly || planOnly)
            continue; // this plan has no EP, PP or TP calls
        QVERIFY2(k.figures.find(s.id), s.id.c_str());
        QVERIFY2(!k.figures.find(s.id)->formula.empty(), s.id.c_str());
    }
    // Directions as documented: lower step time and memory are better, higher MFU and throughput.
    QVERIFY(keyFigureSpec("sim.step_time_s")->better == Better::Lower);
    QVERIFY(keyFigureSpec("memory.total_bytes")->better == Better::Lower);
    QVERIFY(keyFigureSpec("sim.mfu")->better == Better::Higher);
    QVERIFY(keyFigureSpec("step.tokens_per_second")->better == Better::Higher);
    QVERIFY(keyFigureSpec("model.parameters")->better == Better::Neither);
}

void TestCompare::selfComparisonIsAllZero()
{
    // Two independent derivations and simulations of the same scenario: every Δ is 0, every verdict
    // neutral, every figure on both sides, every bar the same on both sides.
    const Scenario s = presetOrDie("paper-reference");
    const Comparison c = compare(measure(s), measure(s));
    QVERIFY(c.rows.size() >= 20);
    for (const tw::Stage st : tw::kStages)
        QVERIFY2(!c.stage(st).empty(), qPrintable(QStringLiteral("stage %1").arg(tw::numberOf(st))));
    for (const FigureDelta& r : c.rows) {
        QVERIFY2(r.presence == Presence::Both, r.id.c_str());
        QVERIFY2(r.a && r.b, r.id.c_str());
        QCOMPARE(*r.a, *r.b);
        QCOMPARE(r.absolute, 0.0);
        QVERIFY2(r.relative && *r.relative == 0.0, r.id.c_str());
        QVERIFY2(!r.differs, r.id.c_str());
        QVERIFY2(r.verdict == Verdict::Neutral, r.id.c_str());
        QCOMPARE(str(formatAbsoluteDelta(r)), QStringLiteral("0"));
        QCOMPARE(str(formatRelativeDelta(r)), QStringLiteral("0 %"));
    }
    for (const Series* s : {&c.bytesByStrategy, &c.stepSplit, &c.memoryByKind}) {
        QVERIFY2(!s->bars.empty(), s->title.c_str());
        for (const SeriesBar& b : s->bars) {
            QVERIFY(b.a && b.b);
            QCOMPARE(*b.a, *b.b);
        }
    }
    // paper-reference is 8-way DP: the bytes chart holds DP only (PP and TP are 0 B on both sides, EP
    // absent), and DP's bar is the ring AllReduce of the bf16 gradients: 2·(8−1)/8 · 2·124,439,808 B
    // = 1.75 · 248,879,616 B = 435,539,328 B.
    QCOMPARE(c.bytesByStrategy.bars.size(), std::size_t(1));
    QCOMPARE(c.bytesByStrategy.bars[0].id, std::string("dp.bytes_per_gpu_per_step"));
    QCOMPARE(*c.bytesByStrategy.bars[0].a, 435539328.0);
    // Memory of the plan's largest GPU by kind: weights, gradients, optimizer, activations, buffers.
    QCOMPARE(c.memoryByKind.bars.size(), std::size_t(5));
    QCOMPARE(c.memoryByKind.bars[0].label, std::string("weights"));
    QCOMPARE(c.memoryByKind.bars[3].label, std::string("activations"));
    QCOMPARE(c.memoryByKind.bars[4].label, std::string("buffers"));
}

void TestCompare::modelChangeGpt2SmallToMedium()
{
    // B: GPT-2 medium (d = 1,024, L = 24, a = 16, d_ff = 4,096; Radford et al. 2019, Table 2).
    // Parameters, as published by OpenAI / Hugging Face: small 124,439,808, medium 354,823,168.
    // Δ = 354,823,168 − 124,439,808 = 230,383,360; Δ/A = 230,383,360 / 124,439,808 = 1.851364 (+185.1 %).
    // The model's size is a choice: neutral, though different.
    Scenario a = presetOrDie("paper-reference");
    Scenario b = a;
    b.name = "gpt2-medium";
    b.model.name = "GPT-2 medium";
    b.model.hiddenSize = 1024;
    b.model.layers = 24;
    b.model.heads = 16;
    b.model.kvHeads = 16;
    b.model.ffnSize = 4096;
    const Comparison c = compare(measure(a), measure(b));

    const FigureDelta& p = rowOrFail(c, "model.parameters");
    QCOMPARE(*p.a, 124439808.0);
    QCOMPARE(*p.b, 354823168.0);
    QCOMPARE(p.absolute, 230383360.0);
    QVERIFY(p.relative);
    QVERIFY(std::abs(*p.relative - 230383360.0 / 124439808.0) < 1e-12);
    QVERIFY(std::abs(*p.relative - 1.851364) < 1e-6);
    QVERIFY(p.differs);
    QVERIFY(p.verdict == Verdict::Neutral);
    QCOMPARE(str(formatRelativeDelta(p)), QStringLiteral("+185.1 %"));

    // Weights in bf16: 2 B per parameter: 248,879,616 B → 709,646,336 B, the same +185.1 % (DDP on one
    // stage without TP: the largest GPU holds every parameter).
    const SeriesBar* w = barOf(c.memoryByKind, "memory.plan.peak_weights_bytes");
    QVERIFY(w && w->a && w->b);
    QCOMPARE(*w->a, 2.0 * 124439808);
    QCOMPARE(*w->b, 2.0 * 354823168);

    // Memory per GPU grows in every term (16·P of model states, activations per layer ∝ d·L with the
    // bracket 34 + 5·a·T/d = 114 on both sides): more memory is worse. FLOPs per step grow with 6·P:
    // worse too. The step on the same 8 GPUs computes ≈2.85× the FLOPs: slower, worse.
    QVERIFY(rowOrFail(c, "memory.total_bytes").verdict == Verdict::Worse);
    QVERIFY(rowOrFail(c, "memory.total_bytes").absolute > 0);
    QVERIFY(rowOrFail(c, "memory.headroom_bytes").verdict == Verdict::Worse); // less room left: higher is better
    QVERIFY(rowOrFail(c, "compute.flops_per_step").verdict == Verdict::Worse);
    QVERIFY(rowOrFail(c, "sim.step_time_s").verdict == Verdict::Worse);
    QVERIFY(rowOrFail(c, "step.tokens_per_second").verdict == Verdict::Worse);
    // The text and its tokens did not change: stage 1 is all the same.
    for (const FigureDelta* r : c.stage(tw::Stage::Text)) {
        QVERIFY2(!r->differs, r->id.c_str());
        QVERIFY2(r->verdict == Verdict::Neutral, r->id.c_str());
    }
}

void TestCompare::halvingTheMicroBatchHalvesActivations()
{
    // B = 16 instead of 32 with G kept. Every term of the activation memory is proportional to B
    // (Korthikanti et al. 2022: L·(s/2)·T·B·d·(34 + 5aT/d) + B·T·d + (s/2)·4·B·T·d + 4·B·T·V_p), so it
    // halves: Δ/A = −50 % exactly, better (less memory). FLOPs per step = FLOPs per token · G, and the
    // per-token FLOPs (6·P + 12·T·d·L) do not involve B: Δ = 0, neutral.
    Scenario a = presetOrDie("paper-reference");
    Scenario b = a;
    b.batch.microBatch = 16;
    const Comparison c = compare(measure(a), measure(b));
    const FigureDelta& act = rowOrFail(c, "memory.activations_bytes");
    QCOMPARE(*act.b * 2, *act.a);
    QVERIFY(act.relative);
    QCOMPARE(*act.relative, -0.5);
    QVERIFY(act.verdict == Verdict::Better);
    QCOMPARE(str(formatRelativeDelta(act)), QStringLiteral("\u2212") + QStringLiteral("50 %"));
    const FigureDelta& flops = rowOrFail(c, "compute.flops_per_step");
    QVERIFY(!flops.differs);
    QVERIFY(flops.verdict == Verdict::Neutral);
}

void TestCompare::doublingTp()
{
    // tp 1 → 2 on the same 8 GPUs, so dp 8 → 4 and N_acc = G/(B·T·dp) = 524,288/(32,768·4) = 4.
    // Megatron TP (arXiv 2104.04473 §3) per micro-batch: the vocab-parallel embedding's AllReduce, two
    // per layer forward (after attention, after the MLP), two per layer backward, the head's
    // input-gradient AllReduce: 1 + 2·12 + 2·12 + 1 = 50 AllReduces of M = B·T·d·s_a = 32·1,024·768·2
    // = 50,331,648 B. A ring of t = 2 sends 2·(t−1)/t·M = M per GPU per call, so each GPU sends
    // 50 · 4 · 50,331,648 = 10,066,329,600 B per step. A sends no TP bytes (0 B, present): Δ/A is
    // undefined, and more bytes is worse.
    Scenario a = presetOrDie("paper-reference");
    Scenario b = a;
    b.parallel.tp = 2;
    b.parallel.dp = 4;
    const Comparison c = compare(measure(a), measure(b));
    const FigureDelta& tp = rowOrFail(c, "tp.bytes_per_gpu_per_step");
    QVERIFY(tp.presence == Presence::Both);
    QCOMPARE(*tp.a, 0.0);
    QCOMPARE(*tp.b, 10066329600.0);
    QVERIFY(!tp.relative);
    QCOMPARE(str(formatRelativeDelta(tp)), QStringLiteral("\u2014"));
    QVERIFY(tp.verdict == Verdict::Worse);
    const FigureDelta& degree = rowOrFail(c, "plan.gpus");
    QVERIFY(!degree.differs); // still 8 GPUs

    // The TP AllReduces block compute. Each GPU pushes its 10,066,329,600 B through its one NVLink 3
    // port to the NVSwitch (300 GB/s per direction), so TP alone exposes at least 10,066,329,600 /
    // 300e9 = 33.55 ms; the FLOPs per GPU are the same (half a layer, twice the micro-batches), so the
    // step is slower: worse.
    const SeriesBar* exposedTp = barOf(c.stepSplit, "sim.exposed_tp_s");
    QVERIFY(exposedTp && exposedTp->b);
    QCOMPARE(*exposedTp->a, 0.0);
    QVERIFY2(*exposedTp->b >= 10066329600.0 / 300e9, qPrintable(QString::number(*exposedTp->b)));
    QVERIFY(rowOrFail(c, "sim.step_time_s").verdict == Verdict::Worse);
    QVERIFY(rowOrFail(c, "sim.exposed_comm_s").verdict == Verdict::Worse);
    // The bytes chart now holds DP and TP; TP's A bar is a real 0 B, not a missing one.
    const SeriesBar* tpBar = barOf(c.bytesByStrategy, "tp.bytes_per_gpu_per_step");
    QVERIFY(tpBar && tpBar->a && tpBar->b);
    QCOMPARE(*tpBar->b, 10066329600.0);
}

void TestCompare::figurePresentOnlyInB()
{
    // B: every MLP becomes 8 experts (top-1, capacity factor 1), ep = 8 (the paper's §5 MoE example).
    // Per GPU per MoE layer per micro-batch: 4 All-to-All (dispatch and combine, forward and backward)
    // × (8−1)/8 × 50,331,648 B = 176,160,768 B (the paper's ≈175 MB); 12 layers × N_acc = 2 micro-batches:
    // 24 × 176,160,768 B = 4,227,858,432 B per step. A has no experts: the figure exists only in B,
    // shown as such, never as a zero.
    Scenario a = presetOrDie("paper-reference");
    Scenario b = a;
    b.model.moe.experts = 8;
    b.model.moe.topK = 1;
    b.model.moe.capacityFactor = 1.0;
    b.model.moe.layerInterval = 1;
    b.parallel.ep = 8;
    const Comparison c = compare(measure(a), measure(b));
    const FigureDelta& ep = rowOrFail(c, "ep.bytes_per_gpu_per_step");
    QVERIFY(ep.presence == Presence::OnlyB);
    QVERIFY(!ep.a);
    QVERIFY(ep.b);
    QCOMPARE(*ep.b, 4227858432.0);
    QVERIFY(!ep.relative);
    QVERIFY(ep.differs);
    QVERIFY(ep.verdict == Verdict::Neutral);
    QCOMPARE(str(formatAbsoluteDelta(ep)), QStringLiteral("only in B"));
    QVERIFY(ep.formulaA.empty());
    QVERIFY(!ep.formulaB.empty());
    const SeriesBar* bar = barOf(c.bytesByStrategy, "ep.bytes_per_gpu_per_step");
    QVERIFY(bar);
    QVERIFY(!bar->a);
    QCOMPARE(*bar->b, 4227858432.0);

    // And the other way round: only in A.
    const Comparison back = compare(measure(b), measure(a));
    QVERIFY(rowOrFail(back, "ep.bytes_per_gpu_per_step").presence == Presence::OnlyA);
    QCOMPARE(str(formatAbsoluteDelta(rowOrFail(back, "ep.bytes_per_gpu_per_step"))), QStringLiteral("only in A"));
}

void TestCompare::planThatCannotRunHasNoStage5()
{
    // The paper's t = 8 with 12 heads is impossible (8 does not divide 12): stages 1–2 are compared,
    // stages 3–5 exist only in A, and B says why it has no stage 5.
    Scenario a = presetOrDie("paper-reference");
    Scenario b = a;
    b.parallel.tp = 8;
    b.parallel.dp = 1;
    auto d = derive(b);
    QVERIFY(d);
    QVERIFY(!d.value()->stage3);
    auto kb = measureKeyFigures(b, *d.value());
    QVERIFY(kb);
    QVERIFY(!kb.value().simulated);
    QVERIFY2(str(kb.value().stage5Note).contains(QStringLiteral("plan cannot run")), kb.value().stage5Note.c_str());
    const Comparison c = compare(measure(a), kb.value());
    QVERIFY(rowOrFail(c, "model.parameters").presence == Presence::Both);
    QVERIFY(rowOrFail(c, "sim.step_time_s").presence == Presence::OnlyA);
    QVERIFY(rowOrFail(c, "dp.bytes_per_gpu_per_step").presence == Presence::OnlyA);
    const SeriesBar* compute = barOf(c.stepSplit, "sim.compute_s");
    QVERIFY(compute && compute->a && !compute->b);
}

void TestCompare::cancellation()
{
    const Scenario s = presetOrDie("paper-reference");
    auto d = derive(s);
    QVERIFY(d);
    std::stop_source stop;
    stop.request_stop();
    Progress p;
    p.stop = stop.get_token();
    auto k = measureKeyFigures(s, *d.value(), p);
    QVERIFY(!k);
    QVERIFY(str(k.error().message).contains(QStringLiteral("cancelled")));
}

void TestCompare::formatting()
{
    FigureDelta r;
    r.unit = "B";
    r.presence = Presence::Both;
    r.a = 1e9;
    r.b = 1.5e9;
    r.absolute = 0.5e9;
    r.relative = 0.5;
    r.differs = true;
    QCOMPARE(str(formatAbsoluteDelta(r)), QStringLiteral("+500 MB"));
    QCOMPARE(str(formatRelativeDelta(r)), QStringLiteral("+50 %"));
    QCOMPARE(str(formatAbsoluteDelta(r, DisplayUnits{ByteUnits::Binary, 4})), QStringLiteral("+476.8 MiB"));
    r.absolute = -0.5e9;
    r.relative = -0.5;
    QCOMPARE(str(formatAbsoluteDelta(r)), QStringLiteral("\u2212") + QStringLiteral("500 MB"));
    // A fraction as a percentage, its difference in points: 15 % → 24.5 % is +9.5 points.
    FigureDelta share;
    share.style = ValueStyle::Percent;
    share.a = 0.15;
    share.b = 0.245;
    share.absolute = 0.245 - 0.15;
    share.relative = (0.245 - 0.15) / 0.15;
    share.differs = true;
    QCOMPARE(str(formatKeyValue(share, 0.245)), QStringLiteral("24.5 %"));
    QCOMPARE(str(formatAbsoluteDelta(share)), QStringLiteral("+9.5 points"));
    QCOMPARE(str(formatRelativeDelta(share)), QStringLiteral("+63.3 %"));
    QCOMPARE(str(formatKeyValue(share, 0.00024)), QStringLiteral("0.024 %")); // the paper-reference DDP share

    // Counts: exact below 10⁹ when whole, else four significant digits with an SI prefix.
    FigureDelta params;
    params.unit = "params";
    QCOMPARE(str(formatKeyValue(params, 124439808)), QStringLiteral("124,439,808 params"));
    FigureDelta flops;
    flops.unit = "FLOP";
    // paper-reference: 859,885,056 FLOP per token · 524,288 tokens = 450,827,416,240,128 FLOP.
    QCOMPARE(str(formatKeyValue(flops, 450827416240128.0)), QStringLiteral("450.8 TFLOP"));
    FigureDelta rate;
    rate.unit = "tokens/s";
    // 524,288 tokens / 0.3993 s = 1,313,017.8 tokens/s.
    QCOMPARE(str(formatKeyValue(rate, 524288 / 0.3993)), QStringLiteral("1.313 M tokens/s"));
    QCOMPARE(str(formatKeyValue(rate, 1234.6)), QStringLiteral("1,235 tokens/s")); // no decimals above 100
    rate.presence = Presence::Both;
    rate.a = 524288 / 0.3993;
    rate.b = 524288 / 0.4353;
    rate.absolute = *rate.b - *rate.a;
    rate.differs = true;
    // 524,288/0.4353 − 524,288/0.3993 = 1,204,429.13 − 1,313,017.78 = −108,588.65 tokens/s.
    QCOMPARE(str(formatAbsoluteDelta(rate)), QStringLiteral("\u2212") + QStringLiteral("108.6 k tokens/s"));
    // A relative change beyond 1,000 % loses its decimals: 94.26 µs → 36.17 ms is +38,273 %
    // ((36.17 − 0.09426) / 0.09426 = 382.73).
    FigureDelta exposed;
    exposed.unit = "s";
    exposed.presence = Presence::Both;
    exposed.a = 94.26e-6;
    exposed.b = 36.17e-3;
    exposed.absolute = *exposed.b - *exposed.a;
    exposed.relative = exposed.absolute / *exposed.a;
    exposed.differs = true;
    QCOMPARE(str(formatRelativeDelta(exposed)), QStringLiteral("+38,273 %"));
}

void TestCompare::toleranceAbsorbsRounding()
{
    // A one-stage pipeline's bubble computed as 1e-17 on one side and 0 on the other is the same value;
    // a real bubble of one part per million is a difference (worse: lower is better). Step times
    // differing in the 15th digit are the same; by a microsecond they differ.
    auto side = [](double bubble, double step, double compute) {
        KeyFigures k;
        k.figures.add({"pp.bubble_fraction", "Bubble fraction (simulated)", bubble, "", "by hand", {}});
        k.figures.add({"sim.step_time_s", "Simulated step time", step, "s", "by hand", {}});
        k.figures.add({"sim.compute_s", "Compute time per GPU (mean)", compute, "s", "by hand", {}});
        k.figures.add({"sim.bubble_s", "Idle per GPU (mean; pipeline bubble)", step - compute, "s", "by hand", {}});
        return k;
    };
    const Comparison same = compare(side(0.0, 0.4, 0.4), side(1e-17, 0.4 * (1 + 1e-15), 0.4));
    QVERIFY(!rowOrFail(same, "pp.bubble_fraction").differs);
    QVERIFY(rowOrFail(same, "pp.bubble_fraction").verdict == Verdict::Neutral);
    QVERIFY(!rowOrFail(same, "sim.step_time_s").differs);
    // The idle bar of 4e-16 s beside a 0.4 s compute bar is rounding: only compute is drawn.
    QCOMPARE(same.stepSplit.bars.size(), std::size_t(1));
    QCOMPARE(same.stepSplit.bars[0].id, std::string("sim.compute_s"));

    const Comparison differ = compare(side(0.0, 0.4, 0.4), side(1e-6, 0.400001, 0.4));
    QVERIFY(rowOrFail(differ, "pp.bubble_fraction").differs);
    QVERIFY(rowOrFail(differ, "pp.bubble_fraction").verdict == Verdict::Worse);
    QVERIFY(rowOrFail(differ, "sim.step_time_s").verdict == Verdict::Worse);
    QCOMPARE(differ.stepSplit.bars.size(), std::size_t(2)); // compute and a 1 µs bubble on B
}

QTEST_APPLESS_MAIN(TestCompare)
#include "tst_compare.moc"
