// The narration of each stage (issue 8, presentation mode): sentences written around the live numbers,
// each number a figure the viewer can trace. Reference values are derived by hand in the comments
// (npm tiktoken's token count of the Canto I excerpt, GPT-2 small's published shape, the ring
// AllReduce's closed form), never pasted from a run.

#include "../support/testsupport.h"
#include "base/papervalues.h"
#include "network/simulate.h"
#include "scenario/derive.h"
#include "scenario/narration.h"
#include "scenario/presets.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace tw;
using namespace tw::scenario;

class TestNarration : public QObject {
    Q_OBJECT
private slots:
    void referencePreset();
    void ncclCallInStageFour();
    void memoryUnderThePlan();
    void everyNumberIsAFigure();
    void oneWayStrategiesAreNotMentioned_data();
    void oneWayStrategiesAreNotMentioned();
    void singleTokenSingleGpu();
    void stageFiveWithTheSimulation();
    void binaryUnits();
    void planThatCannotRun();
    void countNounAgrees_data();
    void countNounAgrees();
    void percentages_data();
    void percentages();
};

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

using tw::test::presetOrDie;

std::shared_ptr<const Derivation> deriveOrDie(const Scenario& s)
{
    auto d = derive(s);
    if (!d)
        qFatal("derive %s: %s", s.name.c_str(), d.error().toString().c_str());
    return d.value();
}

// The text of the stage numbered `number` (1 Text … 5 Wire).
QString stageText(const Narration& n, int number)
{
    const StageNarration* s = n.stage(tw::stageNumbered(number).value());
    return s ? str(s->text()) : QString();
}

// Every cited id is in the narration's figure set; the derivation's own figures are copied unchanged;
// the narration's own figures name inputs that are in the set too.
void checkFigures(const Narration& n, const Derivation& d)
{
    for (const StageNarration& stage : n.stages) {
        for (const NarrationSentence& sentence : stage.sentences) {
            for (const std::string& id : sentence.figures()) {
                const Figure* f = n.figures.find(id);
                QVERIFY2(f, ("stage " + std::to_string(tw::numberOf(stage.stage)) + " cites unknown figure " + id).c_str());
                if (id.rfind("narration.", 0) == 0) {
                    QVERIFY2(!f->formula.empty(), id.c_str());
                    for (const std::string& in : f->inputs)
                        QVERIFY2(n.figures.find(in), (id + " names an input the set lacks: " + in).c_str());
                } else if (const Figure* original = d.figures.find(id)) {
                    QVERIFY(*original == *f);
                }
            }
        }
    }
}

} // namespace

void TestNarration::ncclCallInStageFour()
{
    // gpt2-xl: 8 A100 on an NVSwitch, ZeRO-1, collectives auto. The call moving the most bytes is the
    // gradient ReduceScatter of P·2 B = 1,557,611,200·2 = 3,115,222,400 B over 8 GPUs. NCCL runs it as
    // ring/simple (12 channels × 20 GB/s = 240 GB/s of bus bandwidth on A100's 12 NVLinks); stage 4 plays
    // the textbook ring it stands for. NCCL's time (tuning.cc @ 5067397c): latency 8.4 µs + 7 steps ×
    // 3.4 µs (NVLink ring Simple) = 32.2 µs; algorithm bandwidth 240 · 8/7 = 274.29 GB/s; 3,115,222,400 B /
    // 274.29 GB/s = 11.3576 ms; in all 11.3898 ms → "11.4 ms". No α–β sentence for it.
    const Scenario s = presetOrDie("gpt2-xl");
    const auto d = deriveOrDie(s);
    const Narration n = narrate(s, *d);
    const QString four = stageText(n, 4);
    for (const char* part : {"gradient ReduceScatter", "3.115 GB", "8 GPUs", "which NCCL runs as ring/simple",
                             "textbook", "7 steps", "NCCL's own model predicts", "11.4 ms"})
        QVERIFY2(four.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + four));
    QVERIFY2(!four.contains(QString::fromUtf8("α =")), qPrintable(four));
    const Figure* t = n.figures.find("narration.call.seconds");
    QVERIFY(t);
    QVERIFY2(std::abs(t->value - 11.3898e-3) < 0.0005e-3, qPrintable(QString::number(t->value, 'g', 8)));
    checkFigures(n, *d);
}

void TestNarration::referencePreset()
{
    const Scenario s = presetOrDie("paper-reference");
    const auto d = deriveOrDie(s);
    const Narration n = narrate(s, *d);
    QCOMPARE(int(n.stages.size()), 5);
    for (int i = 1; i <= 5; ++i) {
        const tw::Stage stage = tw::stageNumbered(i).value();
        QVERIFY(n.stage(stage));
        QCOMPARE(tw::numberOf(n.stage(stage)->stage), i);
        QVERIFY2(n.stage(stage)->sentences.size() >= 2 && n.stage(stage)->sentences.size() <= 4, qPrintable(stageText(n, i)));
    }

    // Stage 1. The excerpt: 699 bytes, 127 words, 23 lines (tst_utf8's excerpts); 298 GPT-2 tokens
    // (tests/data/gpt2_cases.json, npm tiktoken); 298 / 127 = 2.3465 → "2.35 tokens per word";
    // 298 / 1,024 = 0.291 → "0.29" of a sequence of T = 1,024; B = 32.
    const QString one = stageText(n, 1);
    for (const char* part : {"699 bytes", "127 words", "23 lines", "298 tokens", "2.35 tokens per word", "V = 50,257",
                             "T = 1,024 tokens", "fills 0.29 of one", "B = 32 sequences"})
        QVERIFY2(one.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + one));

    // Stage 2. d = 768 at 2 bytes per bf16 number: 2 · 768 = 1,536 bytes per token per layer.
    // B·T = 32 · 1,024 = 32,768 tokens; the hidden state 32,768 · 1,536 = 50,331,648 B = 50.33 MB.
    // GPT-2 small, tied head: V·d = 50,257·768 = 38,597,376; positions 1,024·768 = 786,432;
    // attention 12·(4·768² + 4·768) = 28,348,416; MLP 12·(2·768·3,072 + 3,072 + 768) = 56,669,184;
    // norms 12·4·768 + 2·768 = 38,400; P = 124,439,808 (the published "124M").
    // Weights 2 B + gradients 2 B + Adam m, v 2·4 B + fp32 master 4 B = 16 B per parameter:
    // 124,439,808 · 16 = 1,991,036,928 B = 1.991 GB.
    const QString two = stageText(n, 2);
    for (const char* part : {"d = 768", "2 bytes per number (bf16)", "1,536 bytes of activations", "B·T = 32,768 tokens",
                             "50.33 MB", "L = 12 blocks", "124,439,808 parameters", "1.991 GB"})
        QVERIFY2(two.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + two));
    // Where stage 2 meets stage 3 (issue #34): the A100's 80 GiB = 85,899,345,920 B = 85.9 GB, named as the
    // datasheet's binary "80 GB"; stage 3's plan puts 19.29 GB on its largest GPU (tst_memory's hand count,
    // memoryUnderThePlan below) because its fused attention (the default on an A100) stores no scores.
    for (const char* part : {"of its 85.9 GB (the datasheet's “80 GB” counts GiB of 2³⁰ bytes)",
                             "stage 3 counts 19.29 GB on its largest GPU, as its plan runs fused (flash) attention"})
        QVERIFY2(two.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + two));
    const Figure* perToken = n.figures.find("narration.activation_bytes_per_token");
    QVERIFY(perToken);
    QCOMPARE(perToken->value, 1536.0);
    QCOMPARE(perToken->unit, std::string("B"));

    // Stage 3. 8 GPUs in one node, 8-way DP; the gradient AllReduce M = P·2 B = 248,879,616 B = 248.9 MB,
    // of which a ring sends 2·(8−1)/8·M = 435,539,328 B = 435.5 MB per GPU, once per step.
    const QString three = stageText(n, 3);
    for (const char* part : {"8 GPUs", "1 node", "8-way data parallelism", "8 replicas", "435.5 MB", "1 call", "248.9 MB"})
        QVERIFY2(three.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + three));
    // The paper's rounding beside the exact value (docs/model.md §6: "128M × 2 B ≈ 256 MB"), in the
    // sentence and in the figure's formula; a payload one byte off is not the paper's example.
    const QString paper = QString::fromUtf8("248.9 MB (the paper, Example 5.1: 128M × 2 B ≈ 256 MB)");
    QVERIFY2(three.contains(paper), qPrintable(three));
    const Figure* payload = n.figures.find("dp.payload_bytes");
    QVERIFY(payload);
    QVERIFY2(str(payload->formula).contains(QString::fromUtf8("the paper rounds it (Example 5.1: 128M × 2 B ≈ 256 MB)")),
             qPrintable(str(payload->formula)));
    QVERIFY(tw::paperRounding("dp.payload_bytes", 248879617.0).empty());
    QVERIFY(tw::paperRounding("tp.payload_bytes", 248879616.0).empty());

    // Stage 4. The same AllReduce played as a ring: 2(N−1) = 14 steps, 435.5 MB from the busiest rank,
    // the closed form's 2(N−1)/N·M exactly. α–β: 14 · (10 µs + (M/8 = 31,109,952 B) / 1.25 GB/s)
    // = 14 · 24.898 ms = 348.6 ms → "349 ms" (3 significant digits).
    const QString four = stageText(n, 4);
    for (const char* part : {"gradient AllReduce", "248.9 MB", "8 GPUs", "ring algorithm", "14 steps", "435.5 MB",
                             "exactly what the schedule counts", "α = 10 µs", "β = 10 Gb/s", "349 ms"})
        QVERIFY2(four.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + four));

    // Stage 5 without a simulation: the fabric, no times.
    const QString five = stageText(n, 5);
    QVERIFY2(five.contains(QLatin1String("NVSwitch node of 8 GPUs")), qPrintable(five));
    QVERIFY2(five.contains(QLatin1String("once the simulation has run")), qPrintable(five));
    QVERIFY2(!five.contains(QLatin1String(" ms")) && !five.contains(QLatin1String("%")), qPrintable(five));
    checkFigures(n, *d);
}

void TestNarration::memoryUnderThePlan()
{
    // paper-reference: GPT-2 small, DDP over 8 GPUs, fused attention. tst_memory derives one GPU's
    // peak by hand: weights 2P = 248,879,616 + gradients 248,879,616 + optimizer 12P = 1,493,277,696
    // + activations 16,981,032,960 + buffers 315,988,480 = 19,288,058,368 B = 19.29 GB, plus the
    // 1 GiB reserve 1,073,741,824 B = 1.074 GB, within the A100's 80 GiB = 85.9 GB.
    Scenario s = presetOrDie("paper-reference");
    s.model.attention = tw::model::Attention::Fused;
    {
        const auto d = deriveOrDie(s);
        const Narration n = narrate(s, *d);
        const QString three = stageText(n, 3);
        // A plan that fits is no news: with four sentences already (plan, replicas, activations,
        // traffic) the memory is left out, and nothing says "do not fit".
        QCOMPARE(n.stage(tw::Stage::Gpus)->sentences.size(), std::size_t(4));
        QVERIFY2(!three.contains(QLatin1String("do not fit")), qPrintable(three));
        checkFigures(n, *d);
    }
    {
        // One GPU, no parallelism: room for the memory sentence. Weights, gradients, optimizer as above;
        // dp = 1 → N_acc = 524,288 / 32,768 = 16, one micro-batch in flight: activations 16,981,032,960;
        // buffers: none (no data-parallel group: no DDP bucket copy, no communicator) → total
        // 1,991,036,928 + 16,981,032,960 = 18,972,069,888 B = 18.97 GB.
        Scenario one = s;
        one.hardware.nodes = 1;
        one.hardware.gpusPerNode = 1;
        one.parallel = {};
        one.parallel.dp = 1;
        const auto d = deriveOrDie(one);
        const Narration n = narrate(one, *d);
        const QString three = stageText(n, 3);
        for (const char* part : {"Every GPU fits", "stage 0", "18.97 GB", "1.074 GB", "85.9 GB"})
            QVERIFY2(three.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + three));
        checkFigures(n, *d);
    }
    // On a 16 GiB GPU = 17,179,869,184 B = 17.18 GB every GPU overflows: 19,288,058,368 + the 1,073,741,824
    // reserve + the allocator's headroom 0.1 · 17,179,869,184 = 1,717,986,918.4 − 17,179,869,184 =
    // 4,899,917,926.4 B = 4.9 GB. Stage 2's one-GPU figure (more than the GPU) now says
    // what the plan's largest GPU holds, and that it still does not fit.
    s.hardware.gpu = "custom";
    s.hardware.custom = {"small-gpu", "Small GPU", 16.0 * 1024 * 1024 * 1024, 19.5e12, 312e12, 312e12, 0.0};
    const auto d = deriveOrDie(s);
    const Narration n = narrate(s, *d);
    const QString three = stageText(n, 3);
    for (const char* part : {"8 GPUs do not fit in their 17.18 GB", "stage 0 (GPUs 0–7) needs 4.9 GB more"})
        QVERIFY2(three.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + three));
    QVERIFY(n.stage(tw::Stage::Gpus)->sentences.size() <= 4);
    const Figure* over = n.figures.find("narration.memory_stage0_over_bytes");
    QVERIFY(over);
    QCOMPARE(over->value, 19288058368.0 + 1073741824.0 + 0.1 * 17179869184.0 - 17179869184.0);
    const QString two = stageText(n, 2);
    QVERIFY2(two.contains(QLatin1String("its largest GPU holds 19.29 GB, which still does not fit")), qPrintable(two));
    // The derivation's note names the plan's largest GPU, not the whole model on one GPU.
    bool noted = false;
    for (const tw::Error& e : d->problems)
        noted |= e.where.jsonPath == "hardware.gpu" && e.message.find("8 of the 8 GPUs do not fit") != std::string::npos
                 && e.message.find("4.9 GB more") != std::string::npos;
    QVERIFY(noted);
    checkFigures(n, *d);
}

void TestNarration::everyNumberIsAFigure()
{
    for (const std::string& name : presetNames()) {
        const Scenario s = presetOrDie(name.c_str());
        const auto d = deriveOrDie(s);
        const Narration n = narrate(s, *d);
        checkFigures(n, *d);
        if (QTest::currentTestFailed())
            QFAIL(name.c_str());
        // One to four sentences per stage, and every number span is a written number.
        for (const StageNarration& stage : n.stages) {
            QVERIFY2(stage.sentences.size() >= 1 && stage.sentences.size() <= 4, (name + " stage " + std::to_string(tw::numberOf(stage.stage))).c_str());
            for (const NarrationSentence& sentence : stage.sentences)
                for (const NarrationSpan& span : sentence.spans)
                    if (!span.figure.empty())
                        QVERIFY2(span.text.find_first_of("0123456789") != std::string::npos,
                                 (name + ": a number span without digits: " + span.text).c_str());
        }
    }
}

void TestNarration::oneWayStrategiesAreNotMentioned_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QStringList>("present");
    QTest::addColumn<QStringList>("absent");
    // paper-pp: 8 pipeline stages, dp = tp = 1; the boundary passes B·T·d·s = 32·1,024·768·2 = 50,331,648 B.
    QTest::newRow("paper-pp") << QStringLiteral("paper-pp")
                              << QStringList{QStringLiteral("8-way pipeline parallelism"), QStringLiteral("8 pipeline stages"),
                                             QStringLiteral("50.33 MB of a micro-batch's activations")}
                              << QStringList{QStringLiteral("data parallelism"), QStringLiteral("tensor"),
                                             QStringLiteral("expert"), QStringLiteral("replica")};
    // paper-tp: t = 4 × 2 replicas; d / t = 768 / 4 = 192 columns per GPU.
    QTest::newRow("paper-tp") << QStringLiteral("paper-tp")
                              << QStringList{QStringLiteral("2-way data × 4-way tensor parallelism"), QStringLiteral("2 replicas"),
                                             QStringLiteral("192 of the d = 768 columns")}
                              << QStringList{QStringLiteral("pipeline"), QStringLiteral("expert")};
    // paper-moe: 8 experts over ep = 8 inside 8-way DP; no pipeline, no TP.
    QTest::newRow("paper-moe") << QStringLiteral("paper-moe")
                               << QStringList{QStringLiteral("8-way data parallelism"), QStringLiteral("8-way expert parallelism"),
                                              QStringLiteral("All-to-All")}
                               << QStringList{QStringLiteral("pipeline"), QStringLiteral("tensor")};
    // paper-reference: 8-way DP only.
    QTest::newRow("paper-reference") << QStringLiteral("paper-reference") << QStringList{QStringLiteral("8-way data parallelism")}
                                     << QStringList{QStringLiteral("pipeline"), QStringLiteral("tensor"), QStringLiteral("expert"),
                                                    QStringLiteral("1-way")};
}

void TestNarration::oneWayStrategiesAreNotMentioned()
{
    QFETCH(QString, preset);
    QFETCH(QStringList, present);
    QFETCH(QStringList, absent);
    const Scenario s = presetOrDie(preset.toUtf8().constData());
    const auto d = deriveOrDie(s);
    const Narration n = narrate(s, *d);
    // Stages 3 and 4 talk about the plan; stage 4 names one call of it.
    const QString plan = stageText(n, 3);
    for (const QString& part : present)
        QVERIFY2(plan.contains(part), qPrintable(part + QStringLiteral(" not in: ") + plan));
    for (const QString& part : absent)
        QVERIFY2(!plan.contains(part, Qt::CaseInsensitive), qPrintable(part + QStringLiteral(" in: ") + plan));
}

void TestNarration::singleTokenSingleGpu()
{
    Scenario s = presetOrDie("paper-reference");
    // "Hello" is one GPT-2 token (id 15496; npm tiktoken: encode("Hello") = [15496]): 5 bytes, 1 word, 1 line.
    s.text.kind = TextSource::Kind::Inline;
    s.text.text = "Hello";
    s.hardware.nodes = 1;
    s.hardware.gpusPerNode = 1;
    s.parallel.dp = 1;
    const auto d = deriveOrDie(s);
    QVERIFY(d->stage3);
    const Narration n = narrate(s, *d);
    const QString one = stageText(n, 1);
    for (const char* part : {"5 bytes", "1 word on 1 line", "1 token,", "1 token per word"})
        QVERIFY2(one.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in: ") + one));
    QVERIFY2(!one.contains(QLatin1String("1 tokens")) && !one.contains(QLatin1String("1 words"))
                 && !one.contains(QLatin1String("1 lines")),
             qPrintable(one));
    // One GPU: no strategy, no collective.
    const QString three = stageText(n, 3);
    QVERIFY2(three.contains(QLatin1String("1 GPU without parallelism")), qPrintable(three));
    QVERIFY2(!three.contains(QLatin1String("-way")) && !three.contains(QLatin1String("1 GPUs")), qPrintable(three));
    const QString four = stageText(n, 4);
    QVERIFY2(four.contains(QLatin1String("No collective")), qPrintable(four));
    checkFigures(n, *d);
}

void TestNarration::stageFiveWithTheSimulation()
{
    const Scenario s = presetOrDie("paper-reference");
    const auto d = deriveOrDie(s);
    auto network = deriveNetwork(s, *d);
    QVERIFY(network);
    auto sim = network::simulateStep(*network.value()->topology, *d->stage3, *d->stage4, simulationOptions(*d, false));
    QVERIFY(sim);
    const Narration n = narrate(s, *d, network.value().get(), &sim.value());
    const StageNarration* five = n.stage(tw::Stage::Wire);
    QVERIFY(five);
    const QString text = str(five->text());
    // The A100's NVLink is NVLink 3 (scenario.h: a100-80gb → NVLink 3); every GPU of a ring sends
    // and receives on its own NVSwitch port, so the busiest link is one of them.
    QVERIFY2(text.contains(QLatin1String("NVSwitch node of 8 GPUs")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("(NVLink 3)")) && text.contains(QLatin1String("nvswitch")), qPrintable(text));
    // The sentences cite the simulation's own figures, written as the figures say.
    std::vector<std::string> cited;
    for (const NarrationSentence& sentence : five->sentences)
        for (const std::string& id : sentence.figures())
            cited.push_back(id);
    for (const char* id : {"sim.step_time_s", "sim.compute_s", "sim.exposed_comm_s", "sim.comm_share", "net.busiest_link_bytes", "sim.mfu"})
        QVERIFY2(std::find(cited.begin(), cited.end(), id) != cited.end(), id);
    QVERIFY2(text.contains(str(formatSeconds(sim.value().stepSeconds, 3))), qPrintable(text));
    QVERIFY2(text.contains(str(formatPercent(sim.value().commShare))), qPrintable(text));
    // DDP on one node without a pipeline: the bubble is not worth a word.
    QVERIFY2(!text.contains(QLatin1String("bubble")), qPrintable(text));
    QCOMPARE(n.figures.find("sim.step_time_s")->value, sim.value().stepSeconds);
    checkFigures(n, *d);
}

void TestNarration::binaryUnits()
{
    const Scenario s = presetOrDie("paper-reference");
    const auto d = deriveOrDie(s);
    DisplayUnits binary;
    binary.bytes = ByteUnits::Binary;
    const Narration n = narrate(s, *d, nullptr, nullptr, binary);
    // The hidden state 32·1,024·768·2 = 50,331,648 B = 48 MiB exactly; 1,536 bytes stay in bytes.
    const QString two = stageText(n, 2);
    QVERIFY2(two.contains(QLatin1String("48 MiB")), qPrintable(two));
    QVERIFY2(two.contains(QLatin1String("1,536 bytes")), qPrintable(two));
    QVERIFY2(!two.contains(QLatin1String(" MB")), qPrintable(two));
}

void TestNarration::planThatCannotRun()
{
    Scenario s = presetOrDie("paper-reference");
    // The paper's 8-way TP of 12 heads: 12 is not a multiple of 8.
    s.parallel.dp = 1;
    s.parallel.tp = 8;
    const auto d = deriveOrDie(s);
    QVERIFY(!d->stage3);
    const Narration n = narrate(s, *d);
    QVERIFY2(stageText(n, 3).contains(QLatin1String("cannot run")), qPrintable(stageText(n, 3)));
    QVERIFY2(!stageText(n, 4).isEmpty() && !stageText(n, 4).contains(QLatin1String("steps")), qPrintable(stageText(n, 4)));
    QVERIFY2(!stageText(n, 5).isEmpty(), "stage 5 says something");
    // Stages 1 and 2 do not depend on the plan.
    QVERIFY(stageText(n, 1).contains(QLatin1String("298 tokens")));
    checkFigures(n, *d);
}

void TestNarration::countNounAgrees_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("expected");
    QTest::newRow("one") << 1.0 << QStringLiteral("1 token");
    QTest::newRow("zero") << 0.0 << QStringLiteral("0 tokens");
    QTest::newRow("two") << 2.0 << QStringLiteral("2 tokens");
    QTest::newRow("fraction") << 0.29 << QStringLiteral("0.29 tokens");
    QTest::newRow("thousands") << 1024.0 << QStringLiteral("1,024 tokens");
    // 1.004 is written "1.00": a fraction keeps its decimals and its plural.
    QTest::newRow("almost one") << 1.004 << QStringLiteral("1.00 tokens");
}

void TestNarration::countNounAgrees()
{
    QFETCH(double, value);
    QFETCH(QString, expected);
    QCOMPARE(str(countNoun(value, "token", "tokens")), expected);
}

void TestNarration::percentages_data()
{
    QTest::addColumn<double>("fraction");
    QTest::addColumn<QString>("expected");
    QTest::newRow("zero") << 0.0 << QStringLiteral("0 %");
    QTest::newRow("MFU") << 0.45238 << QStringLiteral("45.2 %");
    QTest::newRow("small") << 0.00023609 << QStringLiteral("0.024 %");
    QTest::newRow("whole") << 1.0 << QStringLiteral("100 %");
    QTest::newRow("one percent") << 0.0123 << QStringLiteral("1.23 %");
}

void TestNarration::percentages()
{
    QFETCH(double, fraction);
    QFETCH(QString, expected);
    QCOMPARE(str(formatPercent(fraction)), expected);
}

QTEST_APPLESS_MAIN(TestNarration)
#include "tst_narration.moc"
