// The nearest valid value of a plan input (issue 22): the value closest to the one typed that makes the
// plan run, applied as the stage 3 form applies it (DP takes the rest when pp or tp changes). Expected
// values by hand from parallel::validate's rules (docs/model.md §3.1) and the presets' JSON.

#include "../support/testsupport.h"
#include "scenario/nearestvalid.h"
#include "parallel/plan.h"

#include <QTest>

using namespace tw;
using namespace tw::scenario;
using tw::test::presetOrDie;

class TestNearestValid : public QObject {
    Q_OBJECT
private slots:
    void nearest_data();
    void nearest();
    void noValueWhenAnotherInputIsWrong();
    void unknownPathHasNone();
};

void TestNearestValid::nearest_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("path");
    QTest::addColumn<qulonglong>("typed");
    QTest::addColumn<qulonglong>("expected");
    // paper-reference: 1 node × 8 GPUs, GPT-2 small (a = 12, d_ff = 3072), G = 524,288 = 2^19 tokens,
    // B·T = 32·1024 = 2^15, so dp must divide 16 and dp·pp·tp = 8.
    // tp = 5: 8 % 5 ≠ 0 keeps dp = 8 (invalid); tp = 4: dp = 2, 12 % 4 = 0, N_acc = 2^19/2^16 = 8 → 4.
    QTest::newRow("reference tp 5") << "paper-reference" << "parallel.tp" << 5ull << 4ull;
    // tp = 7: 6 (dp stays 8, 48 ≠ 8) and 8 (dp = 1, but 12 % 8 ≠ 0) fail, 5 and 9 fail; at distance 3
    // both 4 and 10 are candidates: 4 is valid and the smaller side is tried first.
    QTest::newRow("reference tp 7") << "paper-reference" << "parallel.tp" << 7ull << 4ull;
    // dp = 6: only dp = 8/(pp·tp) = 8 fills the GPUs (4 is as near but 4 ≠ 8).
    QTest::newRow("reference dp 6") << "paper-reference" << "parallel.dp" << 6ull << 8ull;
    // Already valid: the value itself.
    QTest::newRow("reference tp 1") << "paper-reference" << "parallel.tp" << 1ull << 1ull;
    // gpt3-175b: 96 × 8 = 768 GPUs, pp = 8, tp = 8, a = 96, L = 96, G = 3,145,728, B·T = 2048,
    // interleaved v = 2. dp = 10: 768/64 = 12.
    QTest::newRow("gpt3 dp 10") << "gpt3-175b" << "parallel.dp" << 10ull << 12ull;
    // tp = 5: tp = 4 → dp = 768/32 = 24, N_acc = 3,145,728/(2048·24) = 64 (a multiple of pp = 8, as
    // interleaving needs), 96 % 4 = 0, 49,152 % 4 = 0.
    QTest::newRow("gpt3 tp 5") << "gpt3-175b" << "parallel.tp" << 5ull << 4ull;
    // pp = 7: pp = 6 → dp = 768/48 = 16, N_acc = 3,145,728/(2048·16) = 96 (a multiple of 6),
    // 96 layers on 6·2 = 12 virtual stages.
    QTest::newRow("gpt3 pp 7") << "gpt3-175b" << "parallel.pp" << 7ull << 6ull;
    // v = 13: pp·v = 104 model chunks for 96 layers (every chunk needs a layer); v = 12: 96 chunks.
    QTest::newRow("gpt3 v 13") << "gpt3-175b" << "parallel.virtual_stages" << 13ull << 12ull;
    // paper-moe: E = 8 experts, dp = 8; ep = 3 divides neither; 2 divides both (the smaller of 2 and 4).
    QTest::newRow("moe ep 3") << "paper-moe" << "parallel.ep" << 3ull << 2ull;
}

void TestNearestValid::nearest()
{
    QFETCH(QString, preset);
    QFETCH(QString, path);
    QFETCH(qulonglong, typed);
    QFETCH(qulonglong, expected);
    const Scenario base = presetOrDie(preset.toStdString());
    const std::string p = path.toStdString();
    const Scenario edited = withPlanInput(base, p, typed);
    const bool typedValid = parallel::validate(edited.parallel, {edited.hardware.nodes, edited.hardware.gpusPerNode},
                                               edited.model, edited.batch)
                                .empty();
    QCOMPARE(typedValid, typed == expected);
    const auto nearest = nearestValidValue(edited, p);
    QVERIFY(nearest);
    QCOMPARE(qulonglong(*nearest), expected);
    // Applied, the plan validates.
    const Scenario fixed = withPlanInput(edited, p, *nearest);
    QVERIFY(parallel::validate(fixed.parallel, {fixed.hardware.nodes, fixed.hardware.gpusPerNode}, fixed.model, fixed.batch)
                .empty());
}

// paper-reference on one node of 7 GPUs: dp would have to be 7, and 2^19 tokens are not a whole number
// of 7·2^15-token micro-steps, so no dp alone makes the plan run.
void TestNearestValid::noValueWhenAnotherInputIsWrong()
{
    Scenario s = presetOrDie("paper-reference");
    s.hardware.gpusPerNode = 7;
    QVERIFY(!parallel::validate(s.parallel, {s.hardware.nodes, s.hardware.gpusPerNode}, s.model, s.batch).empty());
    QVERIFY(!nearestValidValue(s, "parallel.dp"));
}

void TestNearestValid::unknownPathHasNone()
{
    const Scenario s = presetOrDie("paper-reference");
    QVERIFY(!nearestValidValue(s, "model.heads"));
    QVERIFY(withPlanInput(s, "model.heads", 5) == s);
}

QTEST_GUILESS_MAIN(TestNearestValid)
#include "tst_nearestvalid.moc"
