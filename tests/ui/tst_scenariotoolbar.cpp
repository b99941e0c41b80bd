// The scenario toolbar common to all panes (issue 8): choosing a preset, a model, the GPUs or the fabric
// with the mouse and the keyboard changes the document and every pane; an undo anywhere brings the
// toolbar back without pushing anything. Expected values come from the presets' published shapes
// (resources/presets/*.json) and the fabric rule written in the test, not from a run.

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
#include "views/modelform.h"

#include "scenario/presets.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTextBrowser>
#include <QTest>
#include <QUndoStack>

using tw::ui::Document;
using tw::ui::DocumentActions;
using tw::ui::Field;
using tw::ui::MainWindow;
using tw::ui::ScenarioToolbar;
using Kind = tw::network::TopologyKind;

class TestScenarioToolbar : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void presetReachesEveryPane();
    void modelChoiceIsOneUndoableStep();
    void gpusTypedInTheSpinBoxes();
    void fabricReshapesTheCluster();
    void fabricThatCannotHoldTheClusterIsRefused();
    void undoInAPaneUpdatesTheToolbar();
    void pureEdits();
    void fp8RecipeFromTheForm();

private:
    MainWindow* m_window = nullptr;
    ScenarioToolbar* m_bar = nullptr;
    Document* m_doc = nullptr;
};

using tw::test::chooseWithMouse;

namespace {

void typeInto(QSpinBox* spin, const QString& text)
{
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

QString formValue(tw::ui::TensorPane* pane, Field field)
{
    QWidget* editor = pane->form()->editor(field);
    if (auto* spin = qobject_cast<QSpinBox*>(editor))
        return QString::number(spin->value());
    if (auto* combo = qobject_cast<QComboBox*>(editor))
        return combo->currentText();
    return {};
}

} // namespace

void TestScenarioToolbar::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestScenarioToolbar::init()
{
    m_window = new MainWindow;
    m_window->resize(1280, 720);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
    m_window->activateWindow();
    // Loading a preset over edits must not stop on a modal question in a test.
    m_window->actions()->askUnsaved = [] { return DocumentActions::UnsavedChoice::Discard; };
    m_bar = m_window->scenarioToolbar();
    m_doc = m_window->document();
    QVERIFY(m_doc->waitForDerivation(60000));
}

void TestScenarioToolbar::cleanup()
{
    m_doc->undoStack()->setClean(); // no question on close
    delete m_window;
    m_window = nullptr;
}

void TestScenarioToolbar::presetReachesEveryPane()
{
    // The start is paper-reference: the toolbar says so.
    QCOMPARE(m_bar->presetBox()->currentText(), QStringLiteral("paper-reference"));
    QCOMPARE(m_bar->modelBox()->currentText(), QStringLiteral("GPT-2 small"));
    QVERIFY(chooseWithMouse(m_bar->presetBox(), QStringLiteral("paper-testbed")));
    QVERIFY(m_doc->waitForDerivation(60000));
    // Appendix A.3's testbed (resources/presets/paper-testbed.json): 7 single-GPU nodes on 10 GbE,
    // GPT-2 small, B = 8 sequences of T = 1,024, fp16 activations, 7-way DP.
    QCOMPARE(QString::fromStdString(m_doc->scenario().name), QStringLiteral("paper-testbed"));
    QCOMPARE(m_doc->undoStack()->count(), 1);
    QCOMPARE(m_bar->presetBox()->currentText(), QStringLiteral("paper-testbed"));
    QCOMPARE(m_bar->nodesBox()->value(), 7);
    QCOMPARE(m_bar->gpusPerNodeBox()->value(), 1);
    QCOMPARE(m_bar->gpuTotalLabel()->text(), QStringLiteral("= 7 GPUs"));
    QVERIFY(m_bar->fabricBox()->currentText().contains(QStringLiteral("testbed")));
    QCOMPARE(m_bar->modelBox()->currentText(), QStringLiteral("GPT-2 small"));
    // Every pane shows it.
    QCOMPARE(m_window->textPane()->microBatchSpin()->value(), 8);
    QVERIFY(formValue(m_window->tensorPane(), Field::ActivationsPrecision).startsWith(QStringLiteral("fp16")));
    QCOMPARE(m_window->parallelPane()->nodesBox()->value(), 7);
    QCOMPARE(m_window->parallelPane()->gpusPerNodeBox()->value(), 1);
    QCOMPARE(m_window->collectivePane()->spec().ranks, std::uint64_t{7}); // the DP AllReduce over 7 GPUs
    QVERIFY(m_window->wirePane()->fabricBox()->currentText().contains(QStringLiteral("testbed"), Qt::CaseInsensitive));
}

void TestScenarioToolbar::modelChoiceIsOneUndoableStep()
{
    const int before = m_doc->undoStack()->count();
    QVERIFY(chooseWithMouse(m_bar->modelBox(), QStringLiteral("Llama-2-7B")));
    QVERIFY(m_doc->waitForDerivation(60000));
    // Llama 2 7B (Touvron et al. 2023, Table 2 / the HF config): L = 32, d = 4,096, 32 heads,
    // d_ff = 11,008, its own vocabulary of 32,000.
    const auto& m = m_doc->scenario().model;
    QCOMPARE(QString::fromStdString(m.name), QStringLiteral("Llama-2-7B"));
    QCOMPARE(m.layers, std::uint64_t{32});
    QCOMPARE(m.hiddenSize, std::uint64_t{4096});
    QCOMPARE(m.ffnSize, std::uint64_t{11008});
    QVERIFY(!m_doc->scenario().modelVocabFromTokenizer);
    QCOMPARE(m_doc->derivation()->model.vocabSize, std::uint64_t{32000});
    // The precisions stay the scenario's (paper-reference: bf16 weights and activations).
    QVERIFY(m.weights == tw::model::Precision::Bf16);
    QCOMPARE(m_doc->undoStack()->count(), before + 1);
    QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Choose model Llama-2-7B"));
    // Stage 2's form and the toolbar show it; the preset combo says the scenario was edited.
    QCOMPARE(formValue(m_window->tensorPane(), Field::HiddenSize), QStringLiteral("4096"));
    QCOMPARE(formValue(m_window->tensorPane(), Field::Layers), QStringLiteral("32"));
    QCOMPARE(m_bar->modelBox()->currentText(), QStringLiteral("Llama-2-7B"));
    QCOMPARE(m_bar->presetBox()->currentText(), QStringLiteral("paper-reference (edited)"));
    // One undo (the Edit menu's shortcut) brings all of it back, in the toolbar too.
    QTest::keyClick(m_window, Qt::Key_Z, Qt::ControlModifier);
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(QString::fromStdString(m_doc->scenario().model.name), QStringLiteral("GPT-2 small"));
    QCOMPARE(m_doc->scenario().model.hiddenSize, std::uint64_t{768});
    QVERIFY(m_doc->scenario().modelVocabFromTokenizer);
    QCOMPARE(m_bar->modelBox()->currentText(), QStringLiteral("GPT-2 small"));
    QCOMPARE(m_bar->presetBox()->currentText(), QStringLiteral("paper-reference"));
    QCOMPARE(formValue(m_window->tensorPane(), Field::HiddenSize), QStringLiteral("768"));
    QCOMPARE(m_doc->undoStack()->count(), before + 1); // nothing pushed back by the toolbar
    QCOMPARE(m_doc->undoStack()->index(), before);
}

void TestScenarioToolbar::gpusTypedInTheSpinBoxes()
{
    // 2 nodes × 8 GPUs: pp = tp = 1, so DP takes all 16 GPUs; a one-server fabric becomes a leaf–spine.
    typeInto(m_bar->nodesBox(), QStringLiteral("2"));
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->scenario().hardware.nodes, std::uint64_t{2});
    QCOMPARE(m_doc->scenario().hardware.gpusPerNode, std::uint64_t{8});
    QCOMPARE(m_doc->scenario().parallel.dp, std::uint64_t{16});
    QCOMPARE(m_bar->gpuTotalLabel()->text(), QStringLiteral("= 16 GPUs"));
    QCOMPARE(m_window->parallelPane()->nodesBox()->value(), 2);
    QCOMPARE(m_window->wirePane()->nodesBox()->value(), 2);
    QCOMPARE(m_window->collectivePane()->spec().ranks, std::uint64_t{16});
    QVERIFY(m_doc->scenario().topology.kind == Kind::LeafSpine);
    QVERIFY(m_bar->fabricBox()->currentText().contains(QStringLiteral("Leaf")));
    // GPUs per node: 2 × 4 = 8 GPUs, DP 8.
    typeInto(m_bar->gpusPerNodeBox(), QStringLiteral("4"));
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->scenario().hardware.gpusPerNode, std::uint64_t{4});
    QCOMPARE(m_doc->scenario().parallel.dp, std::uint64_t{8});
    QCOMPARE(m_window->parallelPane()->gpusPerNodeBox()->value(), 4);
    QCOMPARE(m_bar->gpuTotalLabel()->text(), QStringLiteral("= 8 GPUs"));
    QCOMPARE(m_doc->undoStack()->count(), 2);
}

void TestScenarioToolbar::fabricReshapesTheCluster()
{
    // One NVSwitch node of 8 GPUs → a leaf–spine: the single server becomes two halves of 4.
    QVERIFY(chooseWithMouse(m_bar->fabricBox(), QStringLiteral("Leaf–spine")));
    QVERIFY(m_doc->waitForDerivation(60000));
    QVERIFY(m_doc->scenario().topology.kind == Kind::LeafSpine);
    QCOMPARE(m_doc->scenario().hardware.nodes, std::uint64_t{2});
    QCOMPARE(m_doc->scenario().hardware.gpusPerNode, std::uint64_t{4});
    QCOMPARE(m_bar->nodesBox()->value(), 2);
    QCOMPARE(m_bar->gpusPerNodeBox()->value(), 4);
    QVERIFY(m_window->wirePane()->fabricBox()->currentText().contains(QStringLiteral("Leaf")));
    QCOMPARE(m_window->parallelPane()->nodesBox()->value(), 2);
    QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Choose fabric: Leaf–spine"));
    // The testbed: one GPU per server on 10 Gb/s Ethernet without GPUDirect.
    QVERIFY(chooseWithMouse(m_bar->fabricBox(), QStringLiteral("Paper testbed (10 GbE)")));
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->scenario().hardware.nodes, std::uint64_t{8});
    QCOMPARE(m_doc->scenario().hardware.gpusPerNode, std::uint64_t{1});
    QVERIFY(m_doc->scenario().topology.nicProtocol == tw::network::Protocol::Ethernet10G);
    QVERIFY(!m_doc->scenario().topology.gpuDirectP2P);
    // Undo twice: back to the one NVSwitch node of 8, in the toolbar and the wire pane.
    m_doc->undo();
    m_doc->undo();
    QVERIFY(m_doc->waitForDerivation(60000));
    QVERIFY(m_doc->scenario().topology.kind == Kind::NvSwitchNode);
    QCOMPARE(m_bar->fabricBox()->currentText(), QStringLiteral("NVSwitch node"));
    QCOMPARE(m_bar->nodesBox()->value(), 1);
    QCOMPARE(m_bar->gpusPerNodeBox()->value(), 8);
    QVERIFY(m_window->wirePane()->fabricBox()->currentText().contains(QStringLiteral("NVSwitch")));
}

void TestScenarioToolbar::fabricThatCannotHoldTheClusterIsRefused()
{
    typeInto(m_bar->nodesBox(), QStringLiteral("4")); // 4 × 8 = 32 GPUs on a leaf–spine
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_doc->scenario().hardware.gpuCount(), std::uint64_t{32});
    const tw::scenario::Scenario before = m_doc->scenario();
    const int commands = m_doc->undoStack()->count();
    // One PCIe server holds at most 16 GPUs: refused with the reason, nothing pushed, the combo back.
    QVERIFY(chooseWithMouse(m_bar->fabricBox(), QStringLiteral("PCIe server")));
    QVERIFY(m_doc->scenario() == before);
    QCOMPARE(m_doc->undoStack()->count(), commands);
    QVERIFY2(m_bar->problem().contains(QStringLiteral("at most 16 GPUs")) && m_bar->problem().contains(QStringLiteral("32")),
             qPrintable(m_bar->problem()));
    QVERIFY(m_bar->problem().startsWith(QStringLiteral("topology.kind")));
    QVERIFY(m_bar->fabricBox()->currentText().contains(QStringLiteral("Leaf")));
    // The next good choice clears the message.
    typeInto(m_bar->nodesBox(), QStringLiteral("1"));
    QVERIFY(m_doc->waitForDerivation(60000));
    QVERIFY(m_bar->problem().isEmpty());
}

void TestScenarioToolbar::undoInAPaneUpdatesTheToolbar()
{
    // An edit in stage 3's form (nodes), undone from the Edit menu's action: the toolbar follows both.
    QSpinBox* nodes = m_window->parallelPane()->nodesBox();
    typeInto(nodes, QStringLiteral("3"));
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_bar->nodesBox()->value(), 3);
    QCOMPARE(m_bar->gpuTotalLabel()->text(), QStringLiteral("= 24 GPUs"));
    const int commands = m_doc->undoStack()->count();
    m_window->actions()->undoAction()->trigger();
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_bar->nodesBox()->value(), 1);
    QCOMPARE(m_bar->gpuTotalLabel()->text(), QStringLiteral("= 8 GPUs"));
    QCOMPARE(m_doc->undoStack()->count(), commands); // the toolbar's sync pushed nothing
    // A preset loaded from the File menu shows in the toolbar too.
    m_window->actions()->loadPreset(QStringLiteral("paper-pp"));
    QVERIFY(m_doc->waitForDerivation(60000));
    QCOMPARE(m_bar->presetBox()->currentText(), QStringLiteral("paper-pp"));
}

void TestScenarioToolbar::pureEdits()
{
    const auto reference = tw::scenario::preset("paper-moe");
    QVERIFY(reference);
    // A dense model drops the expert degree (ep = 8 in paper-moe); the depth changed, so does the partition.
    auto dense = tw::scenario::withCatalogueModel(reference.value(), "gpt2-medium");
    QVERIFY(dense);
    QCOMPARE(dense.value().parallel.ep, std::uint64_t{1});
    QCOMPARE(dense.value().model.layers, std::uint64_t{24}); // GPT-2 medium: L = 24, d = 1,024
    QCOMPARE(dense.value().model.hiddenSize, std::uint64_t{1024});
    QCOMPARE(QString::fromStdString(tw::scenario::catalogueModelOf(dense.value().model)), QStringLiteral("gpt2-medium"));
    QVERIFY(!tw::scenario::withCatalogueModel(reference.value(), "gpt5"));
    // An explicit partition of paper-pp's 12 layers over 8 stages, and 12 per-layer times: both are for
    // 12 layers, so a 48-layer model drops them (its default partition and compute model apply).
    auto pp = tw::scenario::preset("paper-pp");
    QVERIFY(pp);
    pp.value().parallel.layerPartition = {1, 1, 2, 2, 2, 2, 1, 1};
    pp.value().parallel.layerForwardSeconds.assign(12, 0.08);
    auto xl = tw::scenario::withCatalogueModel(pp.value(), "gpt2-xl");
    QVERIFY(xl);
    QVERIFY(xl.value().parallel.layerPartition.empty());
    QVERIFY(xl.value().parallel.layerForwardSeconds.empty());
    // The same depth keeps them (GPT-2 small has 12 layers too).
    auto small = tw::scenario::withCatalogueModel(pp.value(), "gpt2-small");
    QVERIFY(small);
    QCOMPARE(small.value().parallel.layerPartition.size(), std::size_t{8});
    // The fabric rule: 16 GPUs fit one server, 17 do not.
    tw::scenario::Scenario s = reference.value();
    s.hardware.nodes = 2;
    s.hardware.gpusPerNode = 8;
    QVERIFY(tw::scenario::withFabric(s, Kind::PcieServer));
    QCOMPARE(tw::scenario::withFabric(s, Kind::PcieServer).value().hardware.gpusPerNode, std::uint64_t{16});
    s.hardware.gpusPerNode = 9;
    s.hardware.nodes = 2;
    QVERIFY(!tw::scenario::withFabric(s, Kind::NvSwitchNode));
}

// Stage 2's form: an FP8 recipe chosen with the mouse on llama2-7b (H100) makes the MFU's peak the H100's
// dense FP8 1,979 TFLOP/s (datasheet) and adds the casts to the kernels; on an A100 (no FP8 tensor cores)
// the derivation says so at the field. Undo takes it back.
void TestScenarioToolbar::fp8RecipeFromTheForm()
{
    QVERIFY(chooseWithMouse(m_bar->presetBox(), QStringLiteral("llama2-7b")));
    QVERIFY(m_doc->waitForDerivation(60000));
    m_window->setStage(1);
    auto* combo = qobject_cast<QComboBox*>(m_window->tensorPane()->form()->editor(Field::Fp8Recipe));
    QVERIFY(combo);
    QCOMPARE(combo->currentText(), QStringLiteral("none"));
    QCOMPARE(m_doc->derivation()->figures.valueOf("compute.gpu_peak_flops"), 989.5e12);
    QVERIFY(chooseWithMouse(combo, QStringLiteral("delayed scaling")));
    QVERIFY(m_doc->waitForDerivation(60000));
    QVERIFY(m_doc->scenario().model.fp8Recipe == tw::model::Fp8Recipe::Delayed);
    QCOMPARE(m_doc->derivation()->figures.valueOf("compute.gpu_peak_flops"), 1979e12);
    QVERIFY(m_doc->problems().empty());
    // Stage 2's narration says what runs in FP8.
    QTRY_VERIFY(m_window->narrationBar()->browser()->toPlainText().contains(
        QStringLiteral("linear layers multiply in FP8 after casting their inputs (delayed scaling")));
    m_doc->undoStack()->undo();
    QVERIFY(m_doc->waitForDerivation(60000));
    QVERIFY(m_doc->scenario().model.fp8Recipe == tw::model::Fp8Recipe::None);
    QCOMPARE(combo->currentText(), QStringLiteral("none"));
    // An A100: the recipe derives, and says its GEMMs gain nothing there.
    QVERIFY(chooseWithMouse(m_bar->presetBox(), QStringLiteral("paper-reference")));
    QVERIFY(m_doc->waitForDerivation(60000));
    QVERIFY(chooseWithMouse(combo, QStringLiteral("current scaling")));
    QVERIFY(m_doc->waitForDerivation(60000));
    bool warned = false;
    for (const tw::Error& e : m_doc->derivation()->problems)
        warned = warned || (e.where.jsonPath == "model.fp8_recipe" && e.message.find("no FP8") != std::string::npos);
    QVERIFY(warned);
}

QTEST_MAIN(TestScenarioToolbar)
#include "tst_scenariotoolbar.moc"
