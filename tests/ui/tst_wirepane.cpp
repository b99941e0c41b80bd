// The stage 5 pane driven like a user: real widgets offscreen, QTest mouse and key events. The
// testbed preset simulated off the GUI thread; scrubbing the time line moves the drawing, whose link
// loads are checked against the simulation's own link bins (looked up here, independently of the
// view's code); GPT-3 175B's long step scrubbed to 90 % still draws and charts its traffic (the bins
// cover the whole step); a GPU dragged across nodes in stage 3 makes tensor-parallel bytes leave the node
// here; choosing a fabric reshapes the cluster as one undoable step; bad sweep input says what is
// wrong; cancelling keeps the last step drawn.

#include "charts/wirecharts.h"
#include "document/document.h"
#include "document/results.h"
#include "document/scenariofield.h"
#include "panes/parallelpane.h"
#include "panes/wirepane.h"
#include "views/busyveil.h"
#include "views/collectivebreakdownmodel.h"
#include "views/figuretablemodel.h"
#include "views/meshview.h"
#include "views/wireview.h"
#include "workers/backgroundjob.h"

#include "scenario/derive.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QUndoStack>
#include <qcustomplot.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <vector>

using tw::network::LinkId;
using tw::network::NodeKind;
using tw::ui::Document;
using tw::ui::WirePane;

namespace {

// The payload rate on a link direction at time t from the simulation's bins (the bytes of the bin
// holding t / the bin's width; the link's orbit representative's series under symmetry).
double rateAt(const tw::network::StepSimulation& sim, LinkId link, double t)
{
    const tw::network::LinkBins& b = sim.linkBins;
    const tw::network::LinkSeries* series = b.of(link);
    if (!series || !(b.binSeconds > 0))
        return 0;
    const auto k = static_cast<std::size_t>(std::floor(t / b.binSeconds));
    return k < series->bins.size() ? series->bins[k].bytes / b.binSeconds : 0.0;
}

// Where the slider's handle is, and the x of a value along its groove.
QRect handleRect(QSlider* slider)
{
    QStyleOptionSlider option;
    option.initFrom(slider);
    option.orientation = slider->orientation();
    option.minimum = slider->minimum();
    option.maximum = slider->maximum();
    option.sliderPosition = slider->sliderPosition();
    option.sliderValue = slider->value();
    return slider->style()->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderHandle, slider);
}

// Drags the slider's handle to `fraction` of its groove with the mouse.
void scrubTo(QSlider* slider, double fraction)
{
    const QRect handle = handleRect(slider);
    const QPoint from = handle.center();
    const int span = slider->width() - handle.width();
    const QPoint to(handle.width() / 2 + int(fraction * span), from.y());
    QTest::mousePress(slider, Qt::LeftButton, {}, from);
    for (int i = 1; i <= 5; ++i)
        QTest::mouseMove(slider, from + (to - from) * i / 5);
    QTest::mouseRelease(slider, Qt::LeftButton, {}, to);
}

void drag(QWidget* viewport, QPoint from, QPoint to)
{
    QTest::mousePress(viewport, Qt::LeftButton, {}, from);
    for (int i = 1; i <= 6; ++i)
        QTest::mouseMove(viewport, from + (to - from) * i / 6);
    QTest::mouseRelease(viewport, Qt::LeftButton, {}, to);
}

double figure(const WirePane& pane, const char* id)
{
    return pane.figureModel()->figures().valueOf(id);
}

} // namespace

class TestWirePane : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void testbedScrubDrawsTheSimulatedLoads();
    void longStepAnimatedToItsEnd();
    void gpuMovedAcrossNodesSendsTensorTrafficOverTheNetwork();
    void choosingAFabricReshapesTheClusterAndUndoes();
    void playingAdvancesTime();
    void nicRateAndNvlinkEdits();
    void badSweepInputSaysWhatIsWrong();
    void sweepOfTheTestbedShowsThePaperPoints();
    void defaultSweepSizesFollowThePlan();
    void cancelKeepsTheLastStep();
    void overheadNoteShowsTheModelAndTheLoopbackMeasurement();
    void tokenTraceRunsOffTheGuiThread();
    void releaseLaterFreesOffTheGuiThreadAtIdlePriority();
    void byCollectiveTableFollowsThePreset();

private:
    void loadPreset(const char* name);
    Document* m_doc = nullptr;
    WirePane* m_pane = nullptr;
};

void TestWirePane::init()
{
    m_doc = new Document;
    m_pane = new WirePane(m_doc);
    m_pane->resize(1400, 900);
    m_pane->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_pane));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation());
}

void TestWirePane::cleanup()
{
    delete m_pane;
    delete m_doc;
    m_pane = nullptr;
    m_doc = nullptr;
}

void TestWirePane::loadPreset(const char* name)
{
    QVERIFY(m_doc->loadPreset(QString::fromLatin1(name)));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation());
    QVERIFY2(m_pane->isCurrent(), qPrintable(m_pane->statusLabel()->text()));
}

void TestWirePane::testbedScrubDrawsTheSimulatedLoads()
{
    loadPreset("paper-testbed");
    const auto& sim = *m_pane->result().simulation;
    const tw::network::Topology& topology = *m_pane->result().network->topology;
    QCOMPARE(m_pane->view()->topology(), &topology);
    QVERIFY(sim.stepSeconds > 0);
    // The testbed's NIC uplinks (NIC → switch, 10 Gb/s Ethernet) carry the DDP AllReduce.
    std::vector<LinkId> uplinks;
    for (LinkId l = 0; l < topology.links().size(); ++l)
        if (topology.node(topology.link(l).from).kind == NodeKind::Nic && sim.linkPayloadBytes[l] > 0)
            uplinks.push_back(l);
    QVERIFY(!uplinks.empty());

    // Scrub with the mouse to several places: the pane's time follows the handle, and every uplink is
    // drawn with the utilization the simulation has at that time.
    int busyPlaces = 0;
    for (double fraction : {0.1, 0.5, 0.8, 0.97}) {
        scrubTo(m_pane->timeSlider(), fraction);
        QCoreApplication::processEvents();
        const double t = m_pane->time();
        QVERIFY2(std::abs(t / sim.stepSeconds - fraction) < 0.05,
                 qPrintable(QStringLiteral("time %1 of %2 at %3").arg(t).arg(sim.stepSeconds).arg(fraction)));
        QCOMPARE(m_pane->view()->time(), t);
        QVERIFY(m_pane->timeLabel()->text().startsWith(QStringLiteral("t = ")));
        bool busy = false;
        for (LinkId l : uplinks) {
            const double expected = rateAt(sim, l, t) / topology.link(l).bandwidth;
            QVERIFY2(std::abs(m_pane->view()->drawnUtilization(l) - expected) < 1e-9,
                     qPrintable(QStringLiteral("link %1 at t=%2: drawn %3, simulated %4")
                                    .arg(QString::fromStdString(topology.link(l).id))
                                    .arg(t)
                                    .arg(m_pane->view()->drawnUtilization(l))
                                    .arg(expected)));
            busy = busy || expected > 0;
        }
        busyPlaces += busy;
    }
    // DDP's gradient buckets overlap the backward pass, so the network is busy somewhere in the step.
    QVERIFY(busyPlaces > 0);
    // Hovering a busy uplink charts it.
    const auto mid = m_pane->view()->linkMidpoint(uplinks[0]);
    QVERIFY(mid.has_value());
    QTest::mouseMove(m_pane->view(), mid->toPoint());
    QCoreApplication::processEvents();
    QVERIFY(m_pane->chartedLink().has_value());
    QVERIFY(m_pane->charts()->throughputTitle().contains(QStringLiteral("payload rate")));
    // The breakdown has one bar per GPU (7 single-GPU servers).
    QCOMPARE(m_pane->charts()->breakdownBars(), 7);
}

// "By collective": the step's rows, the largest wait bold, replaced (not kept) when another preset runs.
void TestWirePane::byCollectiveTableFollowsThePreset()
{
    auto* tabs = m_pane->findChild<QTabWidget*>(QStringLiteral("wireTabs"));
    QVERIFY(tabs);
    int tab = -1;
    for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i) == QStringLiteral("By collective"))
            tab = i;
    QVERIFY(tab >= 0);
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, {}, tabs->tabBar()->tabRect(tab).center());
    QCOMPARE(tabs->currentIndex(), tab);
    auto* table = m_pane->findChild<QTableView*>(QStringLiteral("byCollectiveTable"));
    QVERIFY(table && table->isVisible());
    auto* model = m_pane->breakdownModel();

    loadPreset("paper-tp"); // DP AllReduce of the 2 replicas, TP AllReduce inside each (exposed: blocking)
    QCOMPARE(model->rowCount(), int(m_pane->result().simulation->byCollective.size()));
    int tpRow = -1;
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->index(r, tw::ui::CollectiveBreakdownModel::StrategyColumn).data().toString() == QStringLiteral("TP"))
            tpRow = r;
    QVERIFY(tpRow >= 0);
    QCOMPARE(model->index(tpRow, tw::ui::CollectiveBreakdownModel::KindColumn).data().toString(), QStringLiteral("AllReduce"));
    QVERIFY(model->index(tpRow, 0).data(Qt::FontRole).value<QFont>().bold()); // the step waits on it most
    QVERIFY(model->index(tpRow, tw::ui::CollectiveBreakdownModel::ExposedColumn).data(Qt::ToolTipRole).toString().contains(
        QStringLiteral("mean over")));

    loadPreset("paper-moe"); // now an EP All-to-All, and no TP row left over
    bool allToAll = false;
    for (int r = 0; r < model->rowCount(); ++r) {
        QVERIFY(model->index(r, tw::ui::CollectiveBreakdownModel::StrategyColumn).data().toString() != QStringLiteral("TP"));
        allToAll = allToAll || model->index(r, tw::ui::CollectiveBreakdownModel::KindColumn).data().toString() == QStringLiteral("All-to-All");
    }
    QVERIFY(allToAll);
}

void TestWirePane::longStepAnimatedToItsEnd()
{
    // The GPT-3 175B preset (768 GPUs): a step of seconds, thousands of links (the case whose animation used to
    // stop at 0.3 s). The link bins cover the whole step, so scrubbed to 90 % of it the view draws the
    // links that carry traffic then (the simulation's bins, looked up here) with their rate, no
    // "recorded up to" notice, and the throughput chart of a busy link shows its rate at that time.
    // About 40 s of CPU in a Debug build: generous timeouts for a shared machine.
    QVERIFY(m_doc->loadPreset(QStringLiteral("gpt3-175b")));
    QVERIFY(m_doc->waitForDerivation(300000));
    QVERIFY(m_pane->waitForSimulation(500000));
    QVERIFY2(m_pane->isCurrent(), qPrintable(m_pane->statusLabel()->text()));
    const auto& sim = *m_pane->result().simulation;
    const tw::network::Topology& topology = *m_pane->result().network->topology;
    QVERIFY(sim.stepSeconds > 1);
    QVERIFY(!m_pane->statusLabel()->text().contains(QStringLiteral("recorded up to")));
    scrubTo(m_pane->timeSlider(), 0.9);
    QCoreApplication::processEvents();
    const double t = m_pane->time();
    QVERIFY2(std::abs(t / sim.stepSeconds - 0.9) < 0.05, qPrintable(QStringLiteral("time %1 of %2").arg(t).arg(sim.stepSeconds)));
    std::vector<LinkId> busy;
    for (LinkId l = 0; l < topology.links().size(); ++l)
        if (rateAt(sim, l, t) > 0)
            busy.push_back(l);
    QVERIFY2(!busy.empty(), "no link carries traffic at 90 % of the step");
    for (LinkId l : busy) {
        const double expected = rateAt(sim, l, t) / topology.link(l).bandwidth;
        QVERIFY2(std::abs(m_pane->view()->drawnUtilization(l) - expected) < 1e-9,
                 qPrintable(QStringLiteral("link %1: drawn %2, simulated %3")
                                .arg(QString::fromStdString(topology.link(l).id))
                                .arg(m_pane->view()->drawnUtilization(l))
                                .arg(expected)));
    }
    (void)m_pane->view()->grab();
    QVERIFY(m_pane->view()->packetsDrawn() > 0);
    // Hover busy links until one is charted (a drawn midpoint may belong to a merged line).
    std::optional<LinkId> charted;
    for (LinkId l : busy) {
        const auto mid = m_pane->view()->linkMidpoint(l);
        if (!mid)
            continue;
        QTest::mouseMove(m_pane->view(), mid->toPoint());
        QCoreApplication::processEvents();
        if (m_pane->chartedLink() == l) {
            charted = l;
            break;
        }
    }
    if (!charted)
        QSKIP("no busy link could be hovered alone at this zoom");
    // The chart's stacked top at t: the last point at or before t of the topmost graph, in GB/s.
    QCustomPlot* plot = m_pane->charts()->throughputPlot();
    QVERIFY(plot->graphCount() > 0);
    const double scale = plot->property("timeScale").toDouble();
    const QCPGraph* top = plot->graph(plot->graphCount() - 1);
    double shown = -1;
    for (auto it = top->data()->constBegin(); it != top->data()->constEnd() && it->key <= t * scale; ++it)
        shown = it->value;
    QVERIFY2(shown > 0, qPrintable(QStringLiteral("charted %1 GB/s at t = %2").arg(shown).arg(t)));
    // With TOKENWIRE_SHOTS_DIR set, the pane at 90 % of the step is saved there for a look.
    const QString dir = qEnvironmentVariable("TOKENWIRE_SHOTS_DIR");
    if (!dir.isEmpty() && QDir().mkpath(dir))
        m_pane->grab().save(dir + QStringLiteral("/wirepane-gpt3-175b-90pct.png"));
}

void TestWirePane::gpuMovedAcrossNodesSendsTensorTrafficOverTheNetwork()
{
    // paper-tp: tp 4 × dp 2 on 2 nodes of 4 GPUs (a leaf–spine of two NVSwitch servers): each TP group
    // stays in its node, so no TP byte crosses a NIC.
    loadPreset("paper-tp");
    QVERIFY(m_doc->setCluster(2, 4));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation());
    QVERIFY2(m_pane->isCurrent(), qPrintable(m_pane->statusLabel()->text()));
    QVERIFY(m_doc->scenario().topology.kind == tw::network::TopologyKind::LeafSpine);
    QCOMPARE(figure(*m_pane, "net.internode_bytes.tp"), 0.0);
    const double dpBefore = figure(*m_pane, "net.internode_bytes.dp");

    // Stage 3, as a user: drag GPU 3 (node 0) onto GPU 4 (node 1) in the mesh.
    tw::ui::ParallelPane stage3(m_doc);
    stage3.resize(1400, 850);
    stage3.show();
    QVERIFY(QTest::qWaitForWindowExposed(&stage3));
    tw::ui::MeshView* mesh = stage3.meshView();
    drag(mesh->viewport(), mesh->gpuCenter(3).toPoint(), mesh->gpuCenter(4).toPoint());
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation());
    QVERIFY(m_pane->isCurrent());
    // Both TP groups now span the nodes: TP bytes enter the network. The DP groups change too: GPU 3
    // now holds (dp 1, tp 0), so the DP pair of tp 0 is {0, 3} in node 0 and the pair of tp 3 is {4, 7}
    // in node 1; of the four DP pairs only tp 1 and tp 2 still cross, so DP's inter-node bytes halve.
    QVERIFY(figure(*m_pane, "net.internode_bytes.tp") > 0);
    QCOMPARE(figure(*m_pane, "net.internode_bytes.dp"), dpBefore / 2);
    // And the drawing says so: some NIC uplink now carries TP traffic in its tooltip.
    const tw::network::Topology& topology = *m_pane->result().network->topology;
    bool tpOnNic = false;
    for (LinkId l = 0; l < topology.links().size(); ++l)
        if (topology.node(topology.link(l).from).kind == NodeKind::Nic
            && m_pane->view()->linkToolTip(l).contains(QStringLiteral("TP ")))
            tpOnNic = true;
    QVERIFY(tpOnNic);
}

void TestWirePane::choosingAFabricReshapesTheClusterAndUndoes()
{
    // The default scenario (paper-reference) is one NVSwitch server of 8 GPUs.
    const tw::scenario::Scenario before = m_doc->scenario();
    QVERIFY(before.topology.kind == tw::network::TopologyKind::NvSwitchNode);
    const int steps = m_doc->undoStack()->count();
    // Pick "Paper testbed" with the keyboard: 8 GPUs become 8 single-GPU servers on 10 GbE.
    QComboBox* kind = m_pane->fabricBox();
    kind->setFocus();
    QTest::keyClick(kind, Qt::Key_End);
    QVERIFY(m_doc->waitForDerivation());
    QCOMPARE(m_doc->undoStack()->count(), steps + 1);
    QVERIFY(m_doc->scenario().topology.kind == tw::network::TopologyKind::PaperTestbed);
    QCOMPARE(m_doc->scenario().hardware.nodes, std::uint64_t{8});
    QCOMPARE(m_doc->scenario().hardware.gpusPerNode, std::uint64_t{1});
    QVERIFY(m_pane->waitForSimulation());
    QVERIFY2(m_pane->isCurrent(), qPrintable(m_pane->statusLabel()->text()));
    QCOMPARE(m_pane->result().network->topology->countNodes(NodeKind::Nic), std::size_t{8});
    // One undo brings the fabric and the cluster back together.
    m_doc->undo();
    QVERIFY(m_doc->waitForDerivation());
    QCOMPARE(m_doc->scenario().topology, before.topology);
    QCOMPARE(m_doc->scenario().hardware, before.hardware);
    QCOMPARE(kind->currentIndex(), 1);
    // A one-server fabric for more GPUs than a server holds is refused beside the field, nothing pushed.
    QVERIFY(m_doc->setCluster(4, 8));
    QVERIFY(m_doc->waitForDerivation());
    const int count = m_doc->undoStack()->count();
    QTest::keyClick(kind, Qt::Key_Home);
    QCOMPARE(m_doc->undoStack()->count(), count);
    QVERIFY(m_doc->scenario().topology.kind == tw::network::TopologyKind::LeafSpine);
    QVERIFY(!m_pane->findChild<QLabel*>(QStringLiteral("fabricProblem"))->isHidden());
    QVERIFY(m_pane->findChild<QLabel*>(QStringLiteral("fabricProblem"))->text().contains(QStringLiteral("32")));
}

void TestWirePane::playingAdvancesTime()
{
    QVERIFY(m_pane->result().simulation);
    m_pane->setTime(0);
    QTest::mouseClick(m_pane->playButton(), Qt::LeftButton);
    QVERIFY(m_pane->isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(m_pane->time() > 0, 3000);
    QTest::mouseClick(m_pane->playButton(), Qt::LeftButton);
    QVERIFY(!m_pane->isPlaying());
    const double stopped = m_pane->time();
    QTest::qWait(100);
    QCOMPARE(m_pane->time(), stopped);
}

void TestWirePane::nicRateAndNvlinkEdits()
{
    // Two A100 servers on a leaf–spine: NVLink "auto" is NVLink 3 (the A100's), the NIC rate "auto" is
    // InfiniBand NDR's 400 Gb/s = 50 GB/s per direction.
    QVERIFY(m_doc->setCluster(2, 8));
    QVERIFY(m_doc->waitForDerivation());
    QCoreApplication::processEvents();
    QVERIFY(m_pane->nvlinkBox()->currentText().contains(QStringLiteral("NVLink 3")));
    QLineEdit* rate = m_pane->nicRateEdit();
    QVERIFY2(rate->text().startsWith(QStringLiteral("auto")), qPrintable(rate->text()));
    QVERIFY(rate->text().contains(QStringLiteral("50 GB/s")));
    const int steps = m_doc->undoStack()->count();
    // 100 Gb/s typed: 12.5e9 B/s, one undoable step.
    rate->setFocus();
    rate->selectAll();
    QTest::keyClicks(rate, QStringLiteral("100Gb/s"));
    QTest::keyClick(rate, Qt::Key_Return);
    QCOMPARE(m_doc->undoStack()->count(), steps + 1);
    QVERIFY(m_doc->scenario().topology.nicBandwidth.has_value());
    QCOMPARE(*m_doc->scenario().topology.nicBandwidth, 12.5e9);
    // Nonsense: said beside the field, the text stays, nothing pushed.
    rate->selectAll();
    QTest::keyClicks(rate, QStringLiteral("fast"));
    QTest::keyClick(rate, Qt::Key_Return);
    QCOMPARE(m_doc->undoStack()->count(), steps + 1);
    QCOMPARE(rate->text(), QStringLiteral("fast"));
    QVERIFY(!m_pane->findChild<QLabel*>(QStringLiteral("nicRateProblem"))->isHidden());
    QCOMPARE(*m_doc->scenario().topology.nicBandwidth, 12.5e9);
    // "auto" again follows the protocol.
    rate->selectAll();
    QTest::keyClicks(rate, QStringLiteral("auto"));
    QTest::keyClick(rate, Qt::Key_Return);
    QVERIFY(!m_doc->scenario().topology.nicBandwidth.has_value());
    QVERIFY(m_pane->findChild<QLabel*>(QStringLiteral("nicRateProblem"))->isHidden());
    // NVLink 4 chosen explicitly with the keyboard.
    QComboBox* nvlink = m_pane->nvlinkBox();
    nvlink->setFocus();
    QTest::keyClick(nvlink, Qt::Key_End);
    QVERIFY(m_doc->scenario().topology.nvlink == tw::network::Protocol::NvLink4);
    QVERIFY(m_doc->waitForDerivation());
}

void TestWirePane::badSweepInputSaysWhatIsWrong()
{
    m_pane->tabs()->setCurrentIndex(2);
    QLineEdit* gpus = m_pane->sweepGpusEdit();
    gpus->setFocus();
    gpus->selectAll();
    QTest::keyClicks(gpus, QStringLiteral("1,x"));
    QTest::keyClick(gpus, Qt::Key_Return);
    const QString status = m_pane->findChild<QLabel*>(QStringLiteral("sweepStatus"))->text();
    QVERIFY2(status.contains(QStringLiteral("x")), qPrintable(status));
    QVERIFY(!m_doc->results()->sweepJob()->isBusy());
    QCOMPARE(gpus->text(), QStringLiteral("1,x")); // what the user typed stays
}

// Issue 22: the scaling tab's default sizes are ones the plan can run. gpt3-175b has pp·tp = 8·8 = 64 on
// 96 × 8 = 768 GPUs: 64, 128, 256, 512, then its own 768 (the old defaults 8, 16, 32 were all refused).
// A list the user typed stays when the scenario changes.
void TestWirePane::defaultSweepSizesFollowThePlan()
{
    m_pane->hide(); // the sizes follow the scenario; no need to simulate 768 GPUs for them
    auto load = [this](const char* name) {
        QVERIFY(m_doc->loadPreset(QString::fromLatin1(name)));
        QVERIFY(m_doc->waitForDerivation());
    };
    load("gpt3-175b");
    QCOMPARE(m_pane->sweepGpusEdit()->text(), QStringLiteral("64,128,256,512,768"));
    load("paper-tp"); // tp = 4 on one server of 8
    QCOMPARE(m_pane->sweepGpusEdit()->text(), QStringLiteral("4,8"));
    // A list the user typed stays.
    QLineEdit* gpus = m_pane->sweepGpusEdit();
    gpus->setFocus();
    gpus->selectAll();
    QTest::keyClicks(gpus, QStringLiteral("8"));
    QVERIFY(gpus->isModified());
    load("gpt3-175b");
    QCOMPARE(gpus->text(), QStringLiteral("8"));
}

void TestWirePane::sweepOfTheTestbedShowsThePaperPoints()
{
    loadPreset("paper-testbed");
    m_pane->tabs()->setCurrentIndex(2);
    QVERIFY(m_pane->sweepGpusEdit()->text().startsWith(QStringLiteral("1-")));
    QTest::mouseClick(m_pane->sweepButton(), Qt::LeftButton);
    QVERIFY(m_pane->waitForSimulation(120000));
    // 1–7 GPUs predicted; the paper's measurements beside them: the 15 % share of the smallest run (2
    // nodes, the calibration point) and, at 7 nodes, the 24.5 % share and 67 % efficiency.
    QCOMPARE(m_pane->charts()->scalingPoints(), 7);
    QCOMPARE(m_pane->charts()->measuredPoints(), 3);
    QVERIFY(m_pane->sweepGapText()->toPlainText().contains(QStringLiteral("67")));
}

void TestWirePane::cancelKeepsTheLastStep()
{
    const auto drawn = m_pane->result().simulation;
    QVERIFY(drawn);
    // The previous step is playing when the preset changes.
    QTest::mouseClick(m_pane->playButton(), Qt::LeftButton);
    QVERIFY(m_pane->isPlaying());
    // GPT-3 175B on 768 GPUs takes a while to simulate: Cancel stops it, the previous step stays drawn
    // and the pane says it is not the current scenario's.
    QVERIFY(m_doc->loadPreset(QStringLiteral("gpt3-175b")));
    QVERIFY(m_doc->waitForDerivation(300000));
    QTRY_VERIFY_WITH_TIMEOUT(m_pane->cancelButton()->isVisible(), 5000);
    // The charts under the drawing are the previous step's as well: veiled, naming the new scenario.
    QVERIFY(m_pane->chartVeil()->isVisible());
    QVERIFY2(m_pane->chartVeil()->text().contains(QStringLiteral("gpt3-175b")), qPrintable(m_pane->chartVeil()->text()));
    // Under the veil the old step does not play on, and neither a click nor space starts it again.
    QVERIFY(!m_pane->isPlaying());
    QVERIFY(!m_pane->playButton()->isEnabled());
    QTest::keyClick(m_pane, Qt::Key_Space);
    QVERIFY(!m_pane->isPlaying());
    QTest::mouseClick(m_pane->cancelButton(), Qt::LeftButton);
    QVERIFY(m_pane->waitForSimulation());
    QVERIFY(!m_pane->chartVeil()->isVisible());
    QVERIFY(m_pane->playButton()->isEnabled());
    QCOMPARE(m_pane->result().simulation, drawn);
    QVERIFY(!m_pane->isCurrent());
    QVERIFY2(m_pane->statusLabel()->text().contains(QStringLiteral("cancelled")),
             qPrintable(m_pane->statusLabel()->text()));
    QVERIFY(!m_pane->cancelButton()->isVisible());
}

// The previous step is dropped with releaseLater: freed on the release pool's one thread at idle
// priority (gigabytes freed at normal priority slowed the GUI thread's replot after a new step).
void TestWirePane::releaseLaterFreesOffTheGuiThreadAtIdlePriority()
{
    struct Probe {
        std::atomic<QThread*>* thread;
        std::atomic<int>* priority;
        Probe(std::atomic<QThread*>* t, std::atomic<int>* p)
            : thread(t), priority(p)
        {
        }
        ~Probe()
        {
            *thread = QThread::currentThread();
            *priority = int(QThread::currentThread()->priority());
        }
    };
    std::atomic<QThread*> thread{nullptr};
    std::atomic<int> priority{-1};
    tw::ui::releaseLater(std::make_shared<Probe>(&thread, &priority), std::vector<double>(1000, 1.0));
    QVERIFY(tw::ui::releasePool()->waitForDone(10000));
    QVERIFY(thread.load() != nullptr);
    QVERIFY(thread.load() != QThread::currentThread());
    QCOMPARE(priority.load(), int(QThread::IdlePriority));
    QCOMPARE(tw::ui::releasePool()->maxThreadCount(), 1);
}

QTEST_MAIN(TestWirePane)
// Issue #10: beside the NICs' protocol, its modelled packet overhead and the header bytes per packet
// measured on loopback. Expected from the committed JSON read here (not through core): per row
// (lo_bytes − payload_bytes − retransmitted_bytes) / lo_packets, median over the rows with packets; the model's Ethernet
// format (docs/model.md) is 90 B per 1,448-B segment, its TCP-over-loopback format 52 B (IPv4 20 + TCP 20 +
// timestamps 12).
void TestWirePane::overheadNoteShowsTheModelAndTheLoopbackMeasurement()
{
    QFile file(QStringLiteral(TOKENWIRE_SOURCE_DIR "/data/measurements/openmpi-loopback.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    std::vector<double> perPacket;
    for (const QJsonValue v : QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("rows")).toArray()) {
        const QJsonObject row = v.toObject();
        const double packets = row.value(QStringLiteral("lo_packets")).toDouble();
        const double lo = row.value(QStringLiteral("lo_bytes")).toDouble();
        const double payload = row.value(QStringLiteral("payload_bytes")).toDouble();
        const double again = row.value(QStringLiteral("retransmitted_bytes")).toDouble();
        if (packets > 0)
            perPacket.push_back((lo - payload - again) / packets);
    }
    QVERIFY(perPacket.size() > 100);
    std::sort(perPacket.begin(), perPacket.end());
    const std::size_t n = perPacket.size();
    const double median = n % 2 ? perPacket[n / 2] : (perPacket[n / 2 - 1] + perPacket[n / 2]) / 2;
    QCOMPARE(QString::number(median, 'f', 1), QStringLiteral("52.0")); // the 52 B issue #10 names
    const auto exact = std::count_if(perPacket.begin(), perPacket.end(), [&](double h) { return std::abs(h - median) <= 0.5; });

    loadPreset("paper-testbed"); // 10 Gb/s Ethernet NICs
    const QString note = m_pane->overheadNote()->text();
    QVERIFY2(note.contains(QStringLiteral("90 B per 1,448-B")), qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral("%1 calls").arg(n)), qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral("52.0 B of headers per packet (median; %1 calls").arg(exact)), qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral("the model's 52 B for TCP over loopback")), qPrintable(note));
    // The testbed's 7 servers as a leaf–spine (fabric combo, index 2), then InfiniBand NDR NICs: the
    // model's line follows the protocol (26 B per 4,096-B packet), the measurement stays.
    m_pane->fabricBox()->setCurrentIndex(2);
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_doc->scenario().topology.kind == tw::network::TopologyKind::LeafSpine);
    QComboBox* protocol = m_pane->nicProtocolBox();
    protocol->setCurrentIndex(protocol->findData(int(tw::network::Protocol::InfinibandNdr)));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY2(m_pane->overheadNote()->text().contains(QStringLiteral("26 B per 4,096-B")),
             qPrintable(m_pane->overheadNote()->text()));
    QVERIFY(m_pane->overheadNote()->text().contains(QStringLiteral("52.0 B of headers per packet")));
}

#include "tst_wirepane.moc"

// Issue #21: following a token into stage 5 routes its traffic off the GUI thread. On mixtral-8x7b (256
// GPUs: tp 2 × dp 128 with 8-way expert parallelism, on 32 servers) the first trace routes the token's TP
// pair and its EP All-to-All across servers through a fresh router: long enough (hundreds of ms in a debug
// build) that a 5 ms timer fires repeatedly before the trace's finished(), and the event loop never stands
// still for half of it, as it would if the trace ran on the GUI thread. A second token supersedes the
// first (one finished(), the second token's trace); Cancel stops a trace and leaves no links drawn.
void TestWirePane::tokenTraceRunsOffTheGuiThread()
{
    QVERIFY(m_doc->loadPreset(QStringLiteral("mixtral-8x7b")));
    // One micro-batch per replica (dp 128 × T 4,096 = 524,288 tokens, the preset has 8): the step to
    // simulate before the trace starts is 8× lighter (its EP All-to-Alls are millions of flows), while the
    // token's routes, what the trace is about, are the same groups on the same fabric.
    QVERIFY(m_doc->setField(tw::ui::Field::GlobalBatchTokens, tw::ui::FieldValue(std::uint64_t(524288))));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation(180000));
    QVERIFY2(m_pane->isCurrent(), qPrintable(m_pane->statusLabel()->text()));
    tw::ui::BackgroundJob* job = m_doc->results()->traceJob();
    QSignalSpy finished(job, &tw::ui::BackgroundJob::finished);
    QSignalSpy cancelled(job, &tw::ui::BackgroundJob::cancelled);
    int ticks = 0, ticksAtFinish = -1;
    QTimer timer;
    timer.setInterval(5);
    QElapsedTimer sinceTick;
    qint64 longestGap = 0;
    connect(&timer, &QTimer::timeout, this, [&] {
        ++ticks;
        if (sinceTick.isValid())
            longestGap = std::max(longestGap, sinceTick.restart());
        else
            sinceTick.start();
    });
    connect(job, &tw::ui::BackgroundJob::finished, this, [&] { ticksAtFinish = ticks; });
    timer.start();
    QElapsedTimer clock;
    clock.start();
    m_doc->setFollowedToken(100);
    // Not traced on the spot: the job runs, the caption says so and offers Cancel.
    QVERIFY(job->isBusy());
    QVERIFY(!m_pane->tokenTrace());
    QVERIFY(m_pane->traceCancelButton()->isVisible());
    QVERIFY2(m_pane->tokenCaption()->text().contains(QStringLiteral("Routing")), qPrintable(m_pane->tokenCaption()->text()));
    QVERIFY(finished.wait(120000));
    const qint64 took = clock.elapsed();
    // The trace ran off the GUI thread (busy above, its result only now). How the event loop fared is only
    // telling when the trace was long enough to be felt; on a fast machine it can finish within a few ticks.
    if (took >= 50) {
        QVERIFY2(ticksAtFinish >= 2, qPrintable(QStringLiteral("%1 timer ticks during a %2 ms trace").arg(ticksAtFinish).arg(took)));
        // Never blocked for most of it (a trace on the GUI thread would be one gap as long as the trace).
        QVERIFY2(longestGap < took / 2, qPrintable(QStringLiteral("the event loop stood still %1 ms of a %2 ms trace")
                                                       .arg(longestGap).arg(took)));
    } else {
        qInfo("the trace took %lld ms: too short to judge the event loop's gaps (it ran as a job, checked above)", took);
    }
    qInfo("first trace: %lld ms, %d timer ticks meanwhile, the longest gap between two %lld ms", took, ticksAtFinish,
          longestGap);
    QVERIFY(m_pane->tokenTrace());
    QCOMPARE(m_pane->tokenTrace()->token, std::uint64_t(100));
    QVERIFY(!m_pane->view()->tracedLinks().empty());
    QVERIFY(m_pane->traceCancelButton()->isHidden());

    // Latest wins: two tokens in a row, one result, the second's.
    finished.clear();
    m_doc->setFollowedToken(200);
    m_doc->setFollowedToken(210);
    QVERIFY(!m_pane->tokenTrace());
    QVERIFY(job->waitUntilIdle(120000));
    QCOMPARE(finished.size(), 1);
    QVERIFY(m_pane->tokenTrace());
    QCOMPARE(m_pane->tokenTrace()->token, std::uint64_t(210));

    // Cancel: no trace, no links, the caption says why; nothing arrives later.
    finished.clear();
    m_doc->setFollowedToken(250); // the text has 298 tokens
    QVERIFY(m_pane->traceCancelButton()->isVisible());
    QTest::mouseClick(m_pane->traceCancelButton(), Qt::LeftButton);
    QCOMPARE(cancelled.size(), 1);
    QVERIFY(job->waitUntilIdle(120000));
    QCOMPARE(finished.size(), 0);
    QVERIFY(!m_pane->tokenTrace());
    QVERIFY(m_pane->view()->tracedLinks().empty());
    QVERIFY(m_pane->traceCancelButton()->isHidden());
    QVERIFY2(m_pane->tokenCaption()->text().contains(QStringLiteral("cancelled")), qPrintable(m_pane->tokenCaption()->text()));
}
