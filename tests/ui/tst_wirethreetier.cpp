// A three-tier fabric in stage 5's form and the scenario toolbar (it used to show as "NVSwitch node":
// neither combo had the kind). Real widgets offscreen in the main window: the 98,304-GPU preset shows
// "three-tier" selected in both with its pods' fields; choosing it from the toolbar is one undoable
// step; a pod field edited in the form is one undoable topology edit. Expected figures by hand from
// resources/presets/llama3-405b-98k.json and fabric/topology.h's three-tier rules.

#include "combochoice.h"
#include "document/document.h"
#include "document/documentactions.h"
#include "mainwindow.h"
#include "panes/wirepane.h"
#include "shell/scenariotoolbar.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <QUndoStack>

using tw::network::TopologyKind;
using tw::test::chooseWithMouse;
using tw::ui::Document;
using tw::ui::DocumentActions;
using tw::ui::MainWindow;

namespace {

template <class T>
T* child(QWidget* parent, const char* name)
{
    return parent->findChild<T*>(QString::fromLatin1(name));
}

} // namespace

class TestWireThreeTier : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void init();
    void cleanup();
    void presetShowsThreeTierSelected();
    void choosingThreeTierIsOneUndoableStep();
    void podFieldsEditTheScenario();

private:
    void loadPreset(const char* name);
    MainWindow* m_window = nullptr;
    Document* m_doc = nullptr;
};

void TestWireThreeTier::init()
{
    m_window = new MainWindow;
    m_window->resize(1280, 720);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
    m_window->activateWindow();
    m_window->actions()->askUnsaved = [] { return DocumentActions::UnsavedChoice::Discard; };
    m_doc = m_window->document();
    QVERIFY(m_doc->waitForDerivation(60000));
}

void TestWireThreeTier::cleanup()
{
    m_doc->undoStack()->setClean();
    delete m_window;
    m_window = nullptr;
}

void TestWireThreeTier::loadPreset(const char* name)
{
    QVERIFY(m_doc->loadPreset(QString::fromLatin1(name)));
    QVERIFY(m_doc->waitForDerivation(120000));
}

void TestWireThreeTier::presetShowsThreeTierSelected()
{
    loadPreset("llama3-405b-98k");
    QVERIFY(m_doc->scenario().topology.kind == TopologyKind::ThreeTier);
    QCOMPARE(m_window->scenarioToolbar()->fabricBox()->currentText(), QStringLiteral("Three-tier (pods)"));
    tw::ui::WirePane* pane = m_window->wirePane();
    QCOMPARE(pane->fabricBox()->currentText(), QStringLiteral("Three-tier (pods and a core)"));
    // The preset: 12,288 servers × 8 GPUs, 6,144 GPUs per pod, 192 leaves and 16 spines per pod, 128 cores,
    // 7 : 1 at the spines. So 98,304 / 6,144 = 16 pods of 6,144 / 8 = 768 servers; 16 planes (one per pod
    // spine) of 128 / 16 = 8 cores.
    QVERIFY(!child<QGroupBox>(pane, "podsBox")->isHidden());
    QCOMPARE(child<QSpinBox>(pane, "gpusPerPod")->value(), 6144);
    QCOMPARE(child<QSpinBox>(pane, "leavesPerPod")->value(), 192);
    QCOMPARE(child<QSpinBox>(pane, "spinesPerPod")->value(), 16);
    QCOMPARE(child<QSpinBox>(pane, "coreSwitches")->value(), 128);
    QCOMPARE(child<QDoubleSpinBox>(pane, "coreOversubscription")->value(), 7.0);
    QCOMPARE(child<QLabel>(pane, "podsShape")->text(), QStringLiteral("16 pods of 768 servers; 16 planes of 8 cores"));
    // The leaf–spine-only fields are hidden; the network box (NICs, leaf oversubscription) is shown.
    QVERIFY(child<QSpinBox>(pane, "nicsPerLeaf")->isHidden());
    QVERIFY(child<QSpinBox>(pane, "spines")->isHidden());
    QVERIFY(!pane->oversubscriptionBox()->isHidden());
    QVERIFY(!pane->nicProtocolBox()->isHidden());
    if (qEnvironmentVariableIsSet("TOKENWIRE_SHOTS")) {
        QDir().mkpath(qEnvironmentVariable("TOKENWIRE_SHOTS"));
        m_window->grab().save(qEnvironmentVariable("TOKENWIRE_SHOTS") + QStringLiteral("/threetier-window.png"));
        QWidget* form = child<QGroupBox>(pane, "podsBox")->parentWidget();
        form->grab().save(qEnvironmentVariable("TOKENWIRE_SHOTS") + QStringLiteral("/threetier-form.png"));
    }
}

void TestWireThreeTier::choosingThreeTierIsOneUndoableStep()
{
    // dgx-h100-4node: 4 servers × 8 GPUs on a leaf–spine; the pods box is hidden for it.
    loadPreset("dgx-h100-4node");
    tw::ui::WirePane* pane = m_window->wirePane();
    QVERIFY(child<QGroupBox>(pane, "podsBox")->isHidden());
    const tw::scenario::Scenario before = m_doc->scenario();
    const int steps = m_doc->undoStack()->count();
    QVERIFY(chooseWithMouse(m_window->scenarioToolbar()->fabricBox(), QStringLiteral("Three-tier (pods)")));
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->undoStack()->count(), steps + 1);
    QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Choose fabric: Three-tier (pods)"));
    QVERIFY(m_doc->scenario().topology.kind == TopologyKind::ThreeTier);
    QCOMPARE(m_doc->scenario().hardware, before.hardware); // a switched fabric keeps the servers
    QVERIFY(pane->fabricBox()->currentText().startsWith(QStringLiteral("Three-tier")));
    QVERIFY(!child<QGroupBox>(pane, "podsBox")->isHidden());
    m_doc->undo();
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->scenario().topology, before.topology);
    QCOMPARE(m_window->scenarioToolbar()->fabricBox()->currentText(), QStringLiteral("Leaf–spine"));
    QVERIFY(child<QGroupBox>(pane, "podsBox")->isHidden());
}

void TestWireThreeTier::podFieldsEditTheScenario()
{
    loadPreset("dgx-h100-4node");
    tw::ui::WirePane* pane = m_window->wirePane();
    // Three-tier from the pane's own combo, then 16 GPUs per pod typed in.
    QVERIFY(chooseWithMouse(pane->fabricBox(), QStringLiteral("Three-tier (pods and a core)")));
    QVERIFY(m_doc->waitForDerivation(60000));
    QVERIFY(m_doc->scenario().topology.kind == TopologyKind::ThreeTier);
    const std::uint64_t podBefore = m_doc->scenario().topology.gpusPerPod;
    const int steps = m_doc->undoStack()->count();
    QSpinBox* pod = child<QSpinBox>(pane, "gpusPerPod");
    pod->setFocus();
    pod->selectAll();
    QTest::keyClicks(pod, QStringLiteral("16"));
    QTest::keyClick(pod, Qt::Key_Return);
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->undoStack()->count(), steps + 1);
    QCOMPARE(m_doc->scenario().topology.gpusPerPod, std::uint64_t{16});
    // 32 GPUs / 16 = 2 pods of 16 / 8 = 2 servers; 8 spines per pod (default), 16 cores: 8 planes of 2.
    QCOMPARE(child<QLabel>(pane, "podsShape")->text(), QStringLiteral("2 pods of 2 servers; 8 planes of 2 cores"));
    // The spine tier's oversubscription.
    QDoubleSpinBox* core = child<QDoubleSpinBox>(pane, "coreOversubscription");
    core->setValue(2.0);
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->scenario().topology.coreOversubscription, 2.0);
    QCOMPARE(m_doc->undoStack()->count(), steps + 2);
    m_doc->undo();
    m_doc->undo();
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->scenario().topology.gpusPerPod, podBefore);
    QCOMPARE(pod->value(), int(podBefore));
}

QTEST_MAIN(TestWireThreeTier)
#include "tst_wirethreetier.moc"
