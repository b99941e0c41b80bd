// The compare panel driven like a user (issue 8, "Compare"): real widgets offscreen, QTest mouse
// clicks. Pin the paper-reference scenario as A, change it through Document edits, and read B beside
// A in the table (values, Δ with its sign and arrow, the verdict and its colour) and in the charts'
// QCPBars; Swap, undo, Clear, a scenario that cannot be pinned, and B simulated only while the panel
// is visible. Reference values are derived by hand in the comments.

#include "compare/comparepanel.h"
#include "document/document.h"
#include "document/results.h"
#include "settings/appsettings.h"
#include "views/palette.h"
#include "workers/backgroundjob.h"

#include "scenario/derive.h"

#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QHeaderView>
#include <QMainWindow>
#include <QScrollBar>
#include <QLabel>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>
#include <QUndoStack>

using tw::scenario::Presence;
using tw::scenario::Verdict;
using tw::ui::ComparePanel;
using tw::ui::CompareTableModel;
using tw::ui::Document;
using tw::ui::Field;

namespace {

// GPT-2 small as published: P = 124,439,808. One Transformer block of d = 768, d_ff = 3,072:
// attention 4·d² + 4·d = 2,362,368, MLP 2·d·d_ff + d_ff + d = 4,722,432, two LayerNorms 4·d = 3,072,
// so 7,087,872 per layer; with L = 24 instead of 12: P = 124,439,808 + 12 · 7,087,872 = 209,494,272.
constexpr double kParamsSmall = 124439808.0;
constexpr double kParamsL24 = 209494272.0;
// DDP's ring AllReduce of bf16 gradients over 8 GPUs sends 2·(8−1)/8 · 2·P per GPU per step.
constexpr double kDpBytesSmall = 1.75 * 2 * kParamsSmall; // 435,539,328 B
constexpr double kDpBytesL24 = 1.75 * 2 * kParamsL24;     // 733,229,952 B
// Activations kept (Korthikanti et al. 2022), B = 32, T = 1,024, d = 768, a = 12, V = 50,257, bf16:
// per layer T·B·d·(34 + 5·a·T/d) = 25,165,824 · 114 = 2,868,903,936 B; embedding mask B·T·d =
// 25,165,824 B; final norm and head 4·B·T·d + fp32 logits 4·B·T·V = 100,663,296 + 6,587,285,504 B.
// Total 12 · 2,868,903,936 + 25,165,824 + 6,687,948,800 = 41,139,961,856 B; every term ∝ B.
constexpr double kActivationsB32 = 41139961856.0;
// The memory chart shows the plan's largest GPU (DDP over 8 A100s, fused attention: no 5·a·T/d
// scores; 1F1B with p = 1 holds one micro-batch): 12 · 34 · 25,165,824 = 10,267,656,192 + token ids
// 8·B·T = 262,144 + the mask 25,165,824 + 6,687,948,800 = 16,981,032,960 B; every term ∝ B.
constexpr double kPlanActivationsB32 = 16981032960.0;

QString text(const CompareTableModel* m, int row, int column, int role = Qt::DisplayRole)
{
    return m->data(m->index(row, column), role).toString();
}

// The value of the bar at `category` of the series named "A" or "B" (objectName), in base units.
std::optional<double> barValue(const ComparePanel& panel, ComparePanel::Chart chart, const QString& side,
                               const QString& category)
{
    const int key = panel.chartCategories(chart).indexOf(category);
    if (key < 0)
        return std::nullopt;
    QCustomPlot* plot = panel.plot(chart);
    for (int i = 0; i < plot->plottableCount(); ++i) {
        auto* bars = qobject_cast<QCPBars*>(plot->plottable(i));
        if (!bars || bars->objectName() != side)
            continue;
        for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
            if (std::lround(it->key) == key)
                return it->value * panel.chartScale(chart);
    }
    return std::nullopt;
}

bool near(double a, double b, double rel = 1e-9)
{
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

} // namespace

class TestComparePanel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void saysHowToUseItWhenNothingIsPinned();
    void pinChangeSwapUndoClear();
    void pinWaitsForTheDerivation();
    void invalidScenarioIsNotPinned();
    void bIsSimulatedOnlyWhileVisible();
    void fitsUnderTheStagesAndAlone();
    void cancelStopsTheSimulation();
};

void TestComparePanel::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestComparePanel::saysHowToUseItWhenNothingIsPinned()
{
    Document doc;
    QVERIFY(doc.waitForDerivation());
    ComparePanel panel(&doc);
    panel.resize(900, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(panel.hintLabel()->isVisible());
    QVERIFY(panel.hintLabel()->text().contains(QStringLiteral("Pin as A")));
    QVERIFY(!panel.table()->isVisible());
    QVERIFY(!panel.swapButton()->isEnabled());
    QVERIFY(!panel.clearButton()->isEnabled());
    QVERIFY(!panel.isPinned());
    QCOMPARE(panel.model()->rowCount(), 0);
    // Nothing pinned: B's step is not simulated (nothing to compare it with).
    QVERIFY(!doc.results()->stepJob()->isBusy());
}

void TestComparePanel::pinChangeSwapUndoClear()
{
    Document doc;
    QVERIFY(doc.waitForDerivation());
    ComparePanel panel(&doc);
    QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.resize(900, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));

    // Pin as A.
    QTest::mouseClick(panel.pinButton(), Qt::LeftButton);
    QVERIFY(panel.waitUntilIdle());
    QVERIFY(panel.isPinned());
    QVERIFY(!panel.hintLabel()->isVisible());
    QVERIFY(panel.table()->isVisible());
    QVERIFY(panel.swapButton()->isEnabled());
    QVERIFY(panel.sidesLabel()->text().contains(QStringLiteral("pinned")));
    QVERIFY(panel.sideA().simulated);
    QVERIFY(panel.sideB().simulated);
    QCOMPARE(panel.sideA().figures.valueOf("model.parameters"), kParamsSmall);

    // Change the model: 24 layers instead of 12.
    QVERIFY(doc.setField(Field::Layers, std::uint64_t(24)));
    QVERIFY(doc.waitForDerivation());
    QVERIFY(panel.waitUntilIdle());
    QVERIFY(!panel.isPendingB());
    QVERIFY(panel.comparison());

    // Stage 2: parameters 124,439,808 → 209,494,272, Δ = +85,054,464 (▲), a choice: "changed".
    panel.setStage(1);
    const CompareTableModel* m = panel.model();
    QVERIFY(m->headerData(CompareTableModel::FigureColumn, Qt::Horizontal).toString().contains(QStringLiteral("Tensors")));
    int row = m->rowOf(QStringLiteral("model.parameters"));
    QVERIFY(row >= 0);
    QCOMPARE(text(m, row, CompareTableModel::AColumn), QStringLiteral("124,439,808 params"));
    QCOMPARE(text(m, row, CompareTableModel::BColumn), QStringLiteral("209,494,272 params"));
    QCOMPARE(text(m, row, CompareTableModel::DeltaColumn), QStringLiteral("▲ +85,054,464 params"));
    // 85,054,464 / 124,439,808 = 0.683499 → +68.3 %.
    QCOMPARE(text(m, row, CompareTableModel::RelativeColumn), QStringLiteral("+68.3 %"));
    QCOMPARE(text(m, row, CompareTableModel::VerdictColumn), QStringLiteral("changed"));
    QVERIFY(m->data(m->index(row, CompareTableModel::DeltaColumn), Qt::BackgroundRole).isNull()); // no verdict colour
    // Every value carries its formula.
    QVERIFY(text(m, row, CompareTableModel::AColumn, Qt::ToolTipRole).contains(QStringLiteral("P = ")));
    QVERIFY(text(m, row, CompareTableModel::BColumn, Qt::ToolTipRole).contains(QStringLiteral("209,494,272")));

    // Memory per GPU grows (model states 16·P and twice the layers' activations): worse, ▲, vermillion.
    row = m->rowOf(QStringLiteral("memory.total_bytes"));
    QVERIFY(row >= 0);
    QVERIFY(text(m, row, CompareTableModel::DeltaColumn).startsWith(QStringLiteral("▲ +")));
    QCOMPARE(text(m, row, CompareTableModel::VerdictColumn), QStringLiteral("✗ worse"));
    QCOMPARE(m->data(m->index(row, 0), CompareTableModel::VerdictRole).toInt(), int(Verdict::Worse));
    const QColor worseFill = m->data(m->index(row, CompareTableModel::DeltaColumn), Qt::BackgroundRole).value<QColor>();
    QVERIFY(worseFill.isValid());
    QCOMPARE(worseFill.rgb(), tw::ui::palette::categorical(5).rgb()); // vermillion
    const QColor worseInk = m->data(m->index(row, CompareTableModel::DeltaColumn), Qt::ForegroundRole).value<QColor>();
    QVERIFY(std::abs(worseInk.hslHue() - tw::ui::palette::categorical(5).hslHue()) <= 3);

    // The charts hold A's and B's values: memory (weights = 2 B · P), bytes (DDP's ring, 1.75 · 2 · P).
    using Chart = ComparePanel::Chart;
    auto wa = barValue(panel, Chart::Memory, QStringLiteral("A"), QStringLiteral("weights"));
    auto wb = barValue(panel, Chart::Memory, QStringLiteral("B"), QStringLiteral("weights"));
    QVERIFY(wa && wb);
    QVERIFY2(near(*wa, 2 * kParamsSmall), qPrintable(QString::number(*wa)));
    QVERIFY2(near(*wb, 2 * kParamsL24), qPrintable(QString::number(*wb)));
    auto da = barValue(panel, Chart::Bytes, QStringLiteral("A"), QStringLiteral("DP"));
    auto db = barValue(panel, Chart::Bytes, QStringLiteral("B"), QStringLiteral("DP"));
    QVERIFY(da && db);
    QVERIFY2(near(*da, kDpBytesSmall), qPrintable(QString::number(*da)));
    QVERIFY2(near(*db, kDpBytesL24), qPrintable(QString::number(*db)));
    QCOMPARE(panel.chartCategories(Chart::Bytes), QStringList{QStringLiteral("DP")}); // no PP, TP or EP bytes
    QVERIFY(panel.plot(Chart::Memory)->yAxis->label().contains(QStringLiteral("GB")));
    // Step: each GPU computes twice the layers, so compute grows; the bars are the simulations' means.
    auto ca = barValue(panel, Chart::Step, QStringLiteral("A"), QStringLiteral("compute"));
    auto cb = barValue(panel, Chart::Step, QStringLiteral("B"), QStringLiteral("compute"));
    QVERIFY(ca && cb);
    QVERIFY(near(*ca, panel.sideA().figures.valueOf("sim.compute_s")));
    QVERIFY(near(*cb, panel.sideB().figures.valueOf("sim.compute_s")));
    QVERIFY(*cb > 1.5 * *ca);

    // Stage 5: the step is slower: ▲ and worse.
    panel.setStage(4);
    row = m->rowOf(QStringLiteral("sim.step_time_s"));
    QVERIFY(row >= 0);
    QVERIFY(text(m, row, CompareTableModel::DeltaColumn).startsWith(QStringLiteral("▲")));
    QCOMPARE(text(m, row, CompareTableModel::VerdictColumn), QStringLiteral("✗ worse"));
    QCOMPARE(m->rowOf(QStringLiteral("model.parameters")), -1); // another stage's figure

    // All stages: one click on the check box shows every key figure.
    QTest::mouseClick(panel.allStagesBox(), Qt::LeftButton);
    QVERIFY(panel.allStages());
    QCOMPARE(m->rowCount(), int(panel.comparison()->rows.size()));
    QVERIFY(m->rowOf(QStringLiteral("model.parameters")) >= 0);
    QVERIFY(m->rowOf(QStringLiteral("sim.step_time_s")) >= 0);
    QTest::mouseClick(panel.allStagesBox(), Qt::LeftButton);
    QVERIFY(!panel.allStages());

    // Undo: B is A's scenario again, every Δ is 0.
    doc.undo();
    QVERIFY(doc.waitForDerivation());
    QVERIFY(panel.waitUntilIdle());
    QVERIFY(panel.comparison());
    for (const tw::scenario::FigureDelta& r : panel.comparison()->rows) {
        QVERIFY2(r.presence == Presence::Both, r.id.c_str());
        QVERIFY2(!r.differs, r.id.c_str());
        QVERIFY2(r.verdict == Verdict::Neutral, r.id.c_str());
    }
    panel.setAllStages(true);
    for (int i = 0; i < m->rowCount(); ++i) {
        QCOMPARE(text(m, i, CompareTableModel::DeltaColumn), QStringLiteral("= 0"));
        QCOMPARE(text(m, i, CompareTableModel::VerdictColumn), QStringLiteral("same"));
    }
    panel.setAllStages(false);

    // Halve the micro-batch (32 → 16, G kept): activations halve, better, ▼, bluish green.
    QVERIFY(doc.setField(Field::MicroBatch, std::uint64_t(16)));
    QVERIFY(doc.waitForDerivation());
    QVERIFY(panel.waitUntilIdle());
    panel.setStage(1);
    row = m->rowOf(QStringLiteral("memory.activations_bytes"));
    QVERIFY(row >= 0);
    const tw::scenario::FigureDelta* act = m->rowAt(row);
    QCOMPARE(*act->a, kActivationsB32);
    QCOMPARE(*act->b, kActivationsB32 / 2);
    QVERIFY(text(m, row, CompareTableModel::DeltaColumn).startsWith(QStringLiteral("▼ −")));
    QCOMPARE(text(m, row, CompareTableModel::RelativeColumn), QStringLiteral("−50 %"));
    QCOMPARE(text(m, row, CompareTableModel::VerdictColumn), QStringLiteral("✓ better"));
    QCOMPARE(m->data(m->index(row, CompareTableModel::RelativeColumn), Qt::BackgroundRole).value<QColor>().rgb(),
             tw::ui::palette::categorical(2).rgb()); // bluish green
    auto aa = barValue(panel, Chart::Memory, QStringLiteral("A"), QStringLiteral("activations"));
    auto ab = barValue(panel, Chart::Memory, QStringLiteral("B"), QStringLiteral("activations"));
    QVERIFY(aa && ab);
    QVERIFY2(near(*aa, kPlanActivationsB32), qPrintable(QString::number(*aa)));
    QVERIFY2(near(*ab, kPlanActivationsB32 / 2), qPrintable(QString::number(*ab)));

    // Swap: A becomes B = 16 (pinned), the document goes back to A's B = 32 as one undoable step.
    const int undoBefore = doc.undoStack()->count();
    QTest::mouseClick(panel.swapButton(), Qt::LeftButton);
    QVERIFY(doc.waitForDerivation());
    QVERIFY(panel.waitUntilIdle());
    QCOMPARE(panel.pinnedScenario().batch.microBatch, std::uint64_t(16));
    QCOMPARE(doc.scenario().batch.microBatch, std::uint64_t(32));
    QCOMPARE(doc.undoStack()->count(), undoBefore + 1);
    QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Swap A and B"));
    row = m->rowOf(QStringLiteral("memory.activations_bytes"));
    QCOMPARE(*m->rowAt(row)->a, kActivationsB32 / 2);
    QCOMPARE(*m->rowAt(row)->b, kActivationsB32);
    QVERIFY(text(m, row, CompareTableModel::DeltaColumn).startsWith(QStringLiteral("▲ +")));
    QCOMPARE(text(m, row, CompareTableModel::VerdictColumn), QStringLiteral("✗ worse"));
    // Undoing the swap brings the document back to A's scenario: all Δ 0 again.
    doc.undo();
    QVERIFY(doc.waitForDerivation());
    QVERIFY(panel.waitUntilIdle());
    for (const tw::scenario::FigureDelta& r : panel.comparison()->rows)
        QVERIFY2(!r.differs, r.id.c_str());

    // Clear: A is forgotten, the panel says how to use it again.
    QTest::mouseClick(panel.clearButton(), Qt::LeftButton);
    QVERIFY(!panel.isPinned());
    QVERIFY(!panel.comparison());
    QCOMPARE(m->rowCount(), 0);
    QVERIFY(panel.hintLabel()->isVisible());
    QVERIFY(!panel.swapButton()->isEnabled());
    QCOMPARE(panel.chartCategories(Chart::Bytes), QStringList());
}

void TestComparePanel::pinWaitsForTheDerivation()
{
    // Clicking "Pin as A" right after an edit pins the edited scenario, not the last derivation.
    Document doc;
    QVERIFY(doc.waitForDerivation());
    ComparePanel panel(&doc);
    panel.resize(900, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(doc.setField(Field::Layers, std::uint64_t(24)));
    QTest::mouseClick(panel.pinButton(), Qt::LeftButton);
    QVERIFY(panel.waitUntilIdle());
    QVERIFY(panel.isPinned());
    QCOMPARE(panel.pinnedScenario().model.layers, std::uint64_t(24));
    QCOMPARE(panel.sideA().figures.valueOf("model.parameters"), kParamsL24);
}

void TestComparePanel::invalidScenarioIsNotPinned()
{
    // d = 770 is not a multiple of a = 12: the scenario cannot be derived; pinning it says so and
    // keeps what was pinned.
    Document doc;
    QVERIFY(doc.waitForDerivation());
    ComparePanel panel(&doc);
    panel.resize(900, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTest::mouseClick(panel.pinButton(), Qt::LeftButton);
    QVERIFY(panel.waitUntilIdle());
    const QDateTime pinned = panel.pinnedAt();
    QVERIFY(doc.setField(Field::HiddenSize, std::uint64_t(770)));
    QVERIFY(doc.waitForDerivation());
    QVERIFY(!doc.problems().empty());
    QTest::mouseClick(panel.pinButton(), Qt::LeftButton);
    QVERIFY(panel.statusLabel()->isVisible());
    QVERIFY2(panel.statusLabel()->text().contains(QStringLiteral("cannot be derived")), qPrintable(panel.statusLabel()->text()));
    QVERIFY(panel.isPinned());
    QCOMPARE(panel.pinnedAt(), pinned);
    QCOMPARE(panel.pinnedScenario().model.hiddenSize, std::uint64_t(768));
    QVERIFY(panel.sidesLabel()->text().contains(QStringLiteral("cannot be derived")));
}

void TestComparePanel::bIsSimulatedOnlyWhileVisible()
{
    Document doc;
    QVERIFY(doc.waitForDerivation());
    ComparePanel panel(&doc);
    panel.resize(900, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTest::mouseClick(panel.pinButton(), Qt::LeftButton);
    QVERIFY(panel.waitUntilIdle());
    panel.hide();
    QVERIFY(doc.setField(Field::MicroBatch, std::uint64_t(16)));
    QVERIFY(doc.waitForDerivation());
    QTest::qWait(300); // longer than the job's debounce
    QVERIFY(!doc.results()->stepJob()->isBusy());
    QVERIFY(panel.isPendingB());
    QVERIFY(!panel.sideB().simulated);
    // Stages 1–4 of B are there already (no simulation needed): activations halved. Stage 5 waits.
    QCOMPARE(panel.sideB().figures.valueOf("memory.activations_bytes"), kActivationsB32 / 2);
    panel.setStage(4);
    const CompareTableModel* m = panel.model();
    const int row = m->rowOf(QStringLiteral("sim.step_time_s"));
    QVERIFY(row >= 0);
    QCOMPARE(text(m, row, CompareTableModel::BColumn), QStringLiteral("simulating…"));
    QCOMPARE(text(m, row, CompareTableModel::DeltaColumn), QString());
    QCOMPARE(text(m, row, CompareTableModel::VerdictColumn), QStringLiteral("waiting"));
    QVERIFY(panel.sidesLabel()->text().contains(QStringLiteral("when this panel is shown")));
    panel.show();
    QVERIFY(panel.waitUntilIdle());
    QVERIFY(!panel.isPendingB());
    QVERIFY(panel.sideB().simulated);
    QVERIFY(panel.comparison()->find("sim.step_time_s")->presence == Presence::Both);
}

void TestComparePanel::fitsUnderTheStagesAndAlone()
{
    // Where it lives: a dock about 300 px high under the stages of a 1280×720 window, and alone at
    // 900×600. In both the table's columns fit without a horizontal scroll bar and the three charts
    // keep a readable size. TOKENWIRE_COMPARE_SHOTS=DIR saves the pictures (to look at them).
    const QString shots = qEnvironmentVariable("TOKENWIRE_COMPARE_SHOTS");
    if (!shots.isEmpty())
        QDir().mkpath(shots);
    Document doc;
    QVERIFY(doc.waitForDerivation());
    QMainWindow window;
    auto* stages = new QLabel(QStringLiteral("the five stages"), &window);
    stages->setAlignment(Qt::AlignCenter);
    window.setCentralWidget(stages);
    auto* dock = new QDockWidget(QStringLiteral("Compare A/B"), &window);
    auto* panel = new ComparePanel(&doc, dock);
    dock->setWidget(panel);
    window.addDockWidget(Qt::BottomDockWidgetArea, dock);
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.resizeDocks({dock}, {300}, Qt::Vertical);
    QTest::qWait(50);
    if (!shots.isEmpty())
        QVERIFY(window.grab().save(shots + QStringLiteral("/compare-hint-1280x720.png")));

    QTest::mouseClick(panel->pinButton(), Qt::LeftButton);
    QVERIFY(panel->waitUntilIdle());
    // B: tensor parallelism of 2 (dp 8 → 4): TP bytes appear, the step changes.
    QVERIFY(doc.setDegree(tw::parallel::Strategy::TP, 2));
    QVERIFY(doc.waitForDerivation());
    QVERIFY(panel->waitUntilIdle());
    for (int stage : {0, 1, 2, 3, 4}) {
        panel->setStage(stage);
        QTest::qWait(50);
        if (!shots.isEmpty())
            QVERIFY(window.grab().save(shots + QStringLiteral("/compare-docked-stage%1.png").arg(stage + 1)));
        QVERIFY2(panel->height() >= 250 && panel->height() <= 340, qPrintable(QString::number(panel->height())));
        QCOMPARE(panel->table()->horizontalScrollBar()->isVisible(), false);
        for (auto chart : {ComparePanel::Chart::Bytes, ComparePanel::Chart::Step, ComparePanel::Chart::Memory}) {
            QVERIFY(panel->plot(chart)->isVisible());
            QVERIFY(panel->plot(chart)->width() >= 200);
            QVERIFY(panel->plot(chart)->height() >= 170);
        }
    }
    QCOMPARE(panel->chartCategories(ComparePanel::Chart::Bytes), (QStringList{QStringLiteral("DP"), QStringLiteral("TP")}));

    // Alone, 900×600: the table above the charts.
    dock->setFloating(true);
    dock->resize(900, 600);
    QTest::qWait(50);
    panel->setAllStages(true);
    QTest::qWait(50);
    if (!shots.isEmpty())
        QVERIFY(dock->grab().save(shots + QStringLiteral("/compare-alone-900x600.png")));
    QCOMPARE(panel->table()->horizontalScrollBar()->isVisible(), false);
    for (auto chart : {ComparePanel::Chart::Bytes, ComparePanel::Chart::Step, ComparePanel::Chart::Memory})
        QVERIFY(panel->plot(chart)->height() >= 170);
}

void TestComparePanel::cancelStopsTheSimulation()
{
    // GPT-3 175B's step takes seconds to simulate: Cancel stops it, A keeps stages 1–4 and says why
    // stage 5 is missing, and the app goes on.
    Document doc;
    QVERIFY(doc.waitForDerivation());
    QVERIFY(doc.loadPreset(QStringLiteral("gpt3-175b")));
    QVERIFY(doc.waitForDerivation(120000));
    ComparePanel panel(&doc);
    panel.resize(900, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTest::mouseClick(panel.pinButton(), Qt::LeftButton);
    QVERIFY(panel.isPendingA());
    QTRY_VERIFY(panel.cancelButton()->isVisible());
    QTest::mouseClick(panel.cancelButton(), Qt::LeftButton);
    QVERIFY(!panel.isPendingA());
    QVERIFY(!panel.isPendingB());
    QVERIFY(!panel.cancelButton()->isVisible());
    QVERIFY(panel.waitUntilIdle());
    QVERIFY(!panel.sideA().simulated);
    QVERIFY(QString::fromStdString(panel.sideA().stage5Note).contains(QStringLiteral("cancelled")));
    QVERIFY(panel.sidesLabel()->text().contains(QStringLiteral("cancelled")));
    QVERIFY(panel.isPinned());
    QVERIFY(panel.comparison()->find("model.parameters") != nullptr);
    QVERIFY(panel.comparison()->find("sim.step_time_s") == nullptr); // on neither side
}

QTEST_MAIN(TestComparePanel)
#include "tst_comparepanel.moc"
