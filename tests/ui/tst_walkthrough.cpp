// The walk through the five stages (issue 8): the window offscreen with a preset, each stage
// visited with the navigator (mouse clicks), the model changed in stage 2's form, stage 5's step time
// and figures change by what a hand derivation says, undo brings them back exactly, the scenario is
// saved, reloaded into a new window, and both scenarios and stage 5's numbers compare equal.

#include "combochoice.h"
#include "document/document.h"
#include "document/documentactions.h"
#include "mainwindow.h"
#include "panes/collectivepane.h"
#include "panes/parallelpane.h"
#include "panes/tensorpane.h"
#include "panes/textpane.h"
#include "panes/wirepane.h"
#include "shell/narrationbar.h"
#include "shell/scenariotoolbar.h"
#include "stagenavigator.h"
#include "views/modelform.h"

#include "network/simulate.h"
#include "scenario/derive.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

#include <memory>

using tw::ui::DocumentActions;
using tw::ui::Field;
using tw::ui::MainWindow;

class TestWalkthrough : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void fiveStagesModelChangeUndoSaveReload();
};

using tw::test::chooseWithMouse;

namespace {

// What stage 5 showed: the simulated step and the fabric's figures.
struct Stage5 {
    double stepSeconds = 0;
    double computeSeconds = 0;
    double exposedSeconds = 0;
    double busiestLinkBytes = 0;
    double links = 0;
};

void clickStage(MainWindow& w, int stage)
{
    auto* button = w.navigator()->findChild<QToolButton*>(QStringLiteral("stage%1").arg(stage + 1));
    QVERIFY(button);
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(w.stage(), stage);
    QVERIFY(button->isChecked());
    QCOMPARE(w.narrationBar()->stage(), stage);
}

// Visits stage 5 with the navigator and waits for its simulation of the current scenario.
Stage5 stage5Of(MainWindow& w)
{
    clickStage(w, 4);
    Stage5 out;
    if (QTest::currentTestFailed())
        return out;
    tw::ui::WirePane* wire = w.wirePane();
    if (!w.document()->waitForDerivation(60000) || !wire->waitForSimulation(180000) || !wire->isCurrent()
        || !wire->result().simulation || !wire->result().network) {
        QTest::qFail("stage 5 did not simulate the scenario", __FILE__, __LINE__);
        return out;
    }
    const auto& sim = *wire->result().simulation;
    const auto& net = *wire->result().network;
    out.stepSeconds = sim.stepSeconds;
    out.computeSeconds = sim.computeSeconds;
    out.exposedSeconds = sim.exposedCommSeconds;
    out.busiestLinkBytes = net.figures.valueOf("net.busiest_link_bytes");
    out.links = net.figures.valueOf("net.links");
    // The figures are the simulation's own numbers.
    if (sim.figures.valueOf("sim.step_time_s") != sim.stepSeconds)
        QTest::qFail("sim.step_time_s is not the step time", __FILE__, __LINE__);
    return out;
}

} // namespace

void TestWalkthrough::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestWalkthrough::fiveStagesModelChangeUndoSaveReload()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto w = std::make_unique<MainWindow>();
    w->resize(1280, 720);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    w->activateWindow();
    w->actions()->askUnsaved = [] { return DocumentActions::UnsavedChoice::Discard; };
    tw::ui::Document* doc = w->document();

    // The preset: Example 5.1, the paper's GPT-2 small as 8 data-parallel replicas on one node.
    QVERIFY(chooseWithMouse(w->scenarioToolbar()->presetBox(), QStringLiteral("paper-dp")));
    QVERIFY(doc->waitForDerivation(60000));
    QCOMPARE(QString::fromStdString(doc->scenario().name), QStringLiteral("paper-dp"));

    // Each stage with the navigator: its pane shows, the navigator and the narration follow.
    for (int stage = 0; stage < 4; ++stage) {
        clickStage(*w, stage);
        QVERIFY(w->panes()[stage]->isVisible());
        QVERIFY(!w->narrationBar()->text().isEmpty());
    }
    QVERIFY(w->narrationBar()->text().contains(QStringLiteral("ring algorithm"))); // stage 4
    const Stage5 before = stage5Of(*w);
    QVERIFY(!QTest::currentTestFailed());
    QVERIFY(w->wirePane()->isVisible());
    QVERIFY(before.stepSeconds > 0 && before.busiestLinkBytes > 0);
    QTRY_VERIFY(w->narrationBar()->usesSimulation());

    // Stage 2's form: L = 12 → 24, typed.
    clickStage(*w, 1);
    auto* layers = qobject_cast<QSpinBox*>(w->tensorPane()->form()->editor(Field::Layers));
    QVERIFY(layers);
    layers->setFocus();
    layers->selectAll();
    QTest::keyClicks(layers, QStringLiteral("24"));
    QTest::keyClick(layers, Qt::Key_Return);
    QVERIFY(doc->waitForDerivation(60000));
    QCOMPARE(doc->scenario().model.layers, std::uint64_t{24});

    // Stage 5 again. By hand (GPT-2 small, B·T = 32,768 tokens per micro-batch):
    //   a layer's forward FLOPs 2·P_layer·B·T + 4·B·T²·d, with P_layer = 4d² + 4d + 2·d·d_ff + d_ff + d
    //   + 4d (norms) = 7,087,872: 2·7,087,872·32,768 + 4·32·1,024²·768 = 4.6451e11 + 1.0308e11 = 5.6759e11;
    //   the head's 2·V·d·B·T = 2·50,257·768·32,768 = 2.5296e12 (tied, the same at any depth).
    //   12 layers: 6.8111e12 + 2.5296e12 = 9.3407e12; 24 layers: 1.36222e13 + 2.5296e12 = 1.61518e13
    //   → the compute-bound step grows by 1.61518 / 0.93407 = 1.729 (backward = 2 × forward everywhere).
    //   The DP AllReduce carries P·2 B: P = 124,439,808 + 12·7,087,872 = 209,494,272, so every link's
    //   bytes grow by 209,494,272 / 124,439,808 = 1.6835 (the ring's 2(N−1)/N and the packet overhead
    //   are per byte).
    const Stage5 deeper = stage5Of(*w);
    QVERIFY(!QTest::currentTestFailed());
    const double stepRatio = deeper.stepSeconds / before.stepSeconds;
    QVERIFY2(stepRatio > 1.70 && stepRatio < 1.76, qPrintable(QString::number(stepRatio)));
    const double bytesRatio = deeper.busiestLinkBytes / before.busiestLinkBytes;
    QVERIFY2(qAbs(bytesRatio - 209494272.0 / 124439808.0) < 0.005, qPrintable(QString::number(bytesRatio, 'g', 8)));
    QCOMPARE(deeper.links, before.links); // the same fabric
    QTRY_VERIFY(w->narrationBar()->usesSimulation());

    // Undo (Ctrl+Z): 12 layers, and stage 5's numbers are exactly the first ones again.
    QTest::keyClick(w.get(), Qt::Key_Z, Qt::ControlModifier);
    QVERIFY(doc->waitForDerivation(60000));
    QCOMPARE(doc->scenario().model.layers, std::uint64_t{12});
    const Stage5 undone = stage5Of(*w);
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(undone.stepSeconds, before.stepSeconds);
    QCOMPARE(undone.computeSeconds, before.computeSeconds);
    QCOMPARE(undone.exposedSeconds, before.exposedSeconds);
    QCOMPARE(undone.busiestLinkBytes, before.busiestLinkBytes);

    // Redo the deeper model (the Edit menu's Redo shortcut), save it (File → Save As), reload it into a
    // new window.
    QTest::keySequence(w.get(), w->actions()->redoAction()->shortcut());
    QVERIFY(doc->waitForDerivation(60000));
    QCOMPARE(doc->scenario().model.layers, std::uint64_t{24});
    const QString path = dir.filePath(QStringLiteral("walk.tokenwire.json"));
    w->actions()->askSavePath = [path] { return path; };
    QString shownError;
    w->actions()->showError = [&shownError](const QString&, const QString& message) { shownError = message; };
    w->actions()->saveAsAction()->trigger();
    QVERIFY2(shownError.isEmpty(), qPrintable(shownError));
    QVERIFY(!doc->isModified());
    const Stage5 saved = stage5Of(*w);
    QVERIFY(!QTest::currentTestFailed());

    auto reloaded = std::make_unique<MainWindow>();
    reloaded->resize(1280, 720);
    reloaded->show();
    QVERIFY(QTest::qWaitForWindowExposed(reloaded.get()));
    reloaded->actions()->askOpenPath = [path] { return path; };
    reloaded->actions()->showError = [&shownError](const QString&, const QString& message) { shownError = message; };
    reloaded->actions()->openAction()->trigger();
    QVERIFY2(shownError.isEmpty(), qPrintable(shownError));
    QVERIFY(reloaded->document()->waitForDerivation(60000));
    QVERIFY(reloaded->document()->scenario() == doc->scenario());
    QCOMPARE(reloaded->document()->scenario().model.layers, std::uint64_t{24});
    QCOMPARE(reloaded->scenarioToolbar()->presetBox()->currentText(), QStringLiteral("paper-dp (edited)"));
    const Stage5 again = stage5Of(*reloaded);
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(again.stepSeconds, saved.stepSeconds);
    QCOMPARE(again.computeSeconds, saved.computeSeconds);
    QCOMPARE(again.exposedSeconds, saved.exposedSeconds);
    QCOMPARE(again.busiestLinkBytes, saved.busiestLinkBytes);
    QCOMPARE(again.stepSeconds, deeper.stepSeconds);
    QTRY_VERIFY(reloaded->narrationBar()->usesSimulation() && w->narrationBar()->usesSimulation());
    QCOMPARE(reloaded->narrationBar()->text(), w->narrationBar()->text()); // the same story, word for word
}

QTEST_MAIN(TestWalkthrough)
#include "tst_walkthrough.moc"
