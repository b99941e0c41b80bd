// Stage 3's views driven offscreen with hand-made core values: the mesh view (drag a GPU card onto
// another → swapRequested, a click is no swap, hovering highlights the groups, a TP group across
// nodes is marked, 8…256 GPUs fit and restyle fast), the signature and call tables under
// QAbstractItemModelTester, the partition editor (only user edits are emitted, a wrong sum is
// flagged) and the pipeline Gantt chart (p·m·2 blocks; aggregated beyond its limit).
// With TOKENWIRE_SHOTS_DIR set, the views are also saved as PNGs there for a look.

#include "../support/testsupport.h"
#include "charts/pipelinechart.h"
#include "views/meshview.h"
#include "views/partitioneditor.h"
#include "views/signaturemodel.h"

#include "parallel/plan.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QTest>
#include <QToolTip>
#include <QHelpEvent>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <memory>

using tw::parallel::Cluster;
using tw::parallel::MeshCoord;
using tw::parallel::ParallelPlan;
using tw::ui::MeshView;

using tw::test::planOf;

namespace {

// Megatron's order, TP fastest then DP then PP (plan.h): g = tp + t·(dp + d·pp).
std::vector<MeshCoord> megatronMesh(const ParallelPlan& p)
{
    std::vector<MeshCoord> mesh(p.dp * p.pp * p.tp);
    for (std::size_t g = 0; g < mesh.size(); ++g)
        mesh[g] = {std::uint32_t((g / p.tp) % p.dp), std::uint32_t(g / (p.tp * p.dp)), std::uint32_t(g % p.tp)};
    return mesh;
}

QString shotsDir()
{
    const QString dir = qEnvironmentVariable("TOKENWIRE_SHOTS_DIR");
    if (!dir.isEmpty())
        QDir().mkpath(dir);
    return dir;
}

// A GPipe-like schedule by hand: forwards in a wave, then backwards in the reverse wave.
tw::parallel::PipelineTimeline gpipe(std::uint32_t p, std::uint32_t m, double f, double b)
{
    tw::parallel::PipelineTimeline t;
    for (std::uint32_t s = 0; s < p; ++s) {
        for (std::uint32_t i = 0; i < m; ++i)
            t.blocks.push_back({s, i, 0, false, (i + s) * f, (i + s + 1) * f});
        const double backStart = (m + p - 1) * f;
        for (std::uint32_t i = 0; i < m; ++i)
            t.blocks.push_back({s, i, 0, true, backStart + (i + (p - 1 - s)) * b, backStart + (i + (p - s)) * b});
    }
    t.makespan = (m + p - 1) * (f + b);
    t.stageBusySeconds.assign(p, m * (f + b));
    t.stageForwardSeconds.assign(p, f);
    t.stageBackwardSeconds.assign(p, b);
    t.bubbleFraction = double(p - 1) / double(m + p - 1);
    return t;
}

void drag(QWidget* viewport, QPoint from, QPoint to)
{
    QTest::mousePress(viewport, Qt::LeftButton, {}, from);
    const int steps = 6;
    for (int i = 1; i <= steps; ++i)
        QTest::mouseMove(viewport, from + (to - from) * i / steps);
    QTest::mouseRelease(viewport, Qt::LeftButton, {}, to);
}

} // namespace

class TestMeshView : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void cardsShowTheirCoordinates();
    void dragOntoAnotherCardRequestsASwap();
    void clickIsNotASwap();
    void dropOutsideIsNotASwap();
    void hoverHighlightsTheGroups();
    void tooltipAsked();
    void tpGroupAcrossNodesIsMarked();
    void coreGroupsDecideWhatCrosses();
    void colorModes();
    void scalesFrom8To256Gpus_data();
    void scalesFrom8To256Gpus();
    void restyleOf256GpusReusesCards();
    void largeMeshIsOneField();
    void signatureModel();
    void callListModel();
    void partitionEditorEmitsOnlyUserEdits();
    void partitionEditorScalesTo64Stages();
    void pipelineChartDrawsEveryBlock();
    void pipelineChartAggregatesHugeTimelines();

private:
    void showMesh(const Cluster& c, const std::vector<MeshCoord>& mesh, const ParallelPlan& p,
                  const std::vector<tw::parallel::Group>* groups = nullptr);
    std::unique_ptr<MeshView> m_view;
};

void TestMeshView::init()
{
    m_view = std::make_unique<MeshView>();
    m_view->resize(900, 620);
}

void TestMeshView::cleanup()
{
    m_view.reset();
}

void TestMeshView::showMesh(const Cluster& c, const std::vector<MeshCoord>& mesh, const ParallelPlan& p,
                            const std::vector<tw::parallel::Group>* groups)
{
    m_view->setMesh(c, mesh, p, groups);
    if (!m_view->isVisible()) {
        m_view->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
    }
}

void TestMeshView::cardsShowTheirCoordinates()
{
    const ParallelPlan p = planOf(2, 1, 4);
    showMesh({2, 4}, megatronMesh(p), p);
    QCOMPARE(m_view->gpuCount(), 8);
    QCOMPARE(m_view->detail(), MeshView::Detail::Full);
    QCOMPARE(m_view->cardLook(5).text, QStringLiteral("GPU 5\ndp 1 · pp 0 · tp 1\nPP stage 0"));
    for (int g = 0; g < 8; ++g) {
        const QPoint c = m_view->gpuCenter(g).toPoint();
        QVERIFY(m_view->viewport()->rect().contains(c));
        QCOMPARE(m_view->gpuAt(c), g);
    }
    QCOMPARE(m_view->gpuAt(QPoint(2, 2)), -1);
    QCOMPARE(m_view->gpuCenter(8), QPointF(-1, -1));
    QVERIFY(m_view->warningText().isEmpty());
    QVERIFY(m_view->crossingGpus().empty());
}

void TestMeshView::dragOntoAnotherCardRequestsASwap()
{
    const ParallelPlan p = planOf(2, 1, 4);
    showMesh({2, 4}, megatronMesh(p), p);
    QSignalSpy swaps(m_view.get(), &MeshView::swapRequested);
    QSignalSpy clicks(m_view.get(), &MeshView::gpuClicked);
    QWidget* vp = m_view->viewport();
    const QPoint from = m_view->gpuCenter(1).toPoint(), to = m_view->gpuCenter(5).toPoint();
    const QRectF home = m_view->cardSceneRect(1);

    // While dragging, the card follows the mouse …
    QTest::mousePress(vp, Qt::LeftButton, {}, from);
    for (int i = 1; i <= 6; ++i)
        QTest::mouseMove(vp, from + (to - from) * i / 6);
    QVERIFY(m_view->cardSceneRect(1).contains(m_view->mapToScene(to)));
    QCOMPARE(swaps.count(), 0);
    // … and on the drop it asks for the swap and snaps back: the view changes nothing itself.
    QTest::mouseRelease(vp, Qt::LeftButton, {}, to);
    QCOMPARE(swaps.count(), 1);
    QCOMPARE(swaps.at(0).at(0).toInt(), 1);
    QCOMPARE(swaps.at(0).at(1).toInt(), 5);
    QCOMPARE(clicks.count(), 0);
    QCOMPARE(m_view->cardSceneRect(1), home);
    QCOMPARE(m_view->cardLook(1).text, QStringLiteral("GPU 1\ndp 0 · pp 0 · tp 1\nPP stage 0"));

    // The pane applies the swap and hands over the new mesh: the cards show it.
    std::vector<MeshCoord> swapped = megatronMesh(p);
    std::swap(swapped[1], swapped[5]);
    m_view->setMesh({2, 4}, swapped, p);
    QCOMPARE(m_view->cardLook(1).text, QStringLiteral("GPU 1\ndp 1 · pp 0 · tp 1\nPP stage 0"));
    QVERIFY(m_view->cardLook(1).crossesNodes);
}

void TestMeshView::clickIsNotASwap()
{
    const ParallelPlan p = planOf(2, 1, 4);
    showMesh({2, 4}, megatronMesh(p), p);
    QSignalSpy swaps(m_view.get(), &MeshView::swapRequested);
    QSignalSpy clicks(m_view.get(), &MeshView::gpuClicked);
    const QPoint at = m_view->gpuCenter(2).toPoint();
    QTest::mouseClick(m_view->viewport(), Qt::LeftButton, {}, at);
    // A jitter smaller than the drag distance is still a click.
    QTest::mousePress(m_view->viewport(), Qt::LeftButton, {}, at);
    QTest::mouseMove(m_view->viewport(), at + QPoint(1, 1));
    QTest::mouseRelease(m_view->viewport(), Qt::LeftButton, {}, at + QPoint(1, 1));
    QCOMPARE(swaps.count(), 0);
    QCOMPARE(clicks.count(), 2);
    QCOMPARE(clicks.at(0).at(0).toInt(), 2);
    // Dropping a card on itself is no swap either.
    drag(m_view->viewport(), at, at + QPoint(12, 6));
    QCOMPARE(swaps.count(), 0);
}

void TestMeshView::dropOutsideIsNotASwap()
{
    const ParallelPlan p = planOf(2, 1, 4);
    showMesh({2, 4}, megatronMesh(p), p);
    QSignalSpy swaps(m_view.get(), &MeshView::swapRequested);
    const QRectF home = m_view->cardSceneRect(6);
    drag(m_view->viewport(), m_view->gpuCenter(6).toPoint(), QPoint(3, 3));
    QCOMPARE(swaps.count(), 0);
    QCOMPARE(m_view->cardSceneRect(6), home);
}

void TestMeshView::hoverHighlightsTheGroups()
{
    const ParallelPlan p = planOf(2, 1, 4);
    showMesh({2, 4}, megatronMesh(p), p);
    QSignalSpy hovered(m_view.get(), &MeshView::gpuHovered);
    QTest::mouseMove(m_view->viewport(), m_view->gpuCenter(1).toPoint());
    QCOMPARE(m_view->hoveredGpu(), 1);
    QCOMPARE(hovered.count(), 1);
    QCOMPARE(hovered.at(0).at(0).toInt(), 1);
    // GPU 1 = (dp 0, tp 1): TP peers 0, 2, 3 (solid), DP peer 5 (dashed); 4, 6, 7 fade.
    for (int g : {0, 1, 2, 3, 5})
        QVERIFY2(m_view->cardLook(g).highlighted, qPrintable(QString::number(g)));
    for (int g : {4, 6, 7})
        QVERIFY2(m_view->cardLook(g).dimmed, qPrintable(QString::number(g)));
    QCOMPARE(m_view->cardLook(0).outline.style(), Qt::SolidLine);
    QCOMPARE(m_view->cardLook(5).outline.style(), Qt::DashLine);
    QVERIFY(m_view->cardLook(1).outline.widthF() > m_view->cardLook(0).outline.widthF());
    // Leaving the cards clears it.
    QTest::mouseMove(m_view->viewport(), QPoint(2, 2));
    QCOMPARE(m_view->hoveredGpu(), -1);
    QCOMPARE(hovered.last().at(0).toInt(), -1);
    QVERIFY(!m_view->cardLook(4).dimmed);
    QVERIFY(!m_view->cardLook(0).highlighted);
}

// A card's tooltip is written when the viewport asks for it (a ToolTip event where the mouse rests).
void TestMeshView::tooltipAsked()
{
    const ParallelPlan p = planOf(2, 1, 4);
    showMesh({2, 4}, megatronMesh(p), p);
    const QPoint at = m_view->gpuCenter(5).toPoint();
    QHelpEvent help(QEvent::ToolTip, at, m_view->viewport()->mapToGlobal(at));
    QApplication::sendEvent(m_view->viewport(), &help);
    // GPU 5 = (dp 1, tp 1) on node 1: TP group 4–7, DP group 1 and 5.
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY2(QToolTip::text().startsWith(QStringLiteral("GPU 5 on node 1\ndp 1 · pp 0 · tp 1")), qPrintable(QToolTip::text()));
    QCOMPARE(QToolTip::text(), m_view->gpuToolTip(5));
    QVERIFY(m_view->gpuToolTip(-1).isEmpty());
    QToolTip::hideText();
}

void TestMeshView::tpGroupAcrossNodesIsMarked()
{
    // 2 nodes × 4 GPUs, tp 4, dp 2; GPUs 3 and 4 swap coordinates: both TP groups span both nodes.
    const ParallelPlan p = planOf(2, 1, 4);
    std::vector<MeshCoord> mesh = megatronMesh(p);
    std::swap(mesh[3], mesh[4]);
    showMesh({2, 4}, mesh, p);
    QCOMPARE(m_view->crossingGpus().size(), std::size_t(8));
    QVERIFY(m_view->warningText().contains(QLatin1String("span nodes")));
    QVERIFY(m_view->warningText().contains(QLatin1String("2 of 2")));
    const MeshView::CardLook look = m_view->cardLook(3);
    QVERIFY(look.crossesNodes);
    QCOMPARE(look.outline.style(), Qt::DashLine);
    QVERIFY(look.outline.color().red() > 150 && look.outline.color().green() < 60);
    QVERIFY(m_view->legendEntries().join(QLatin1Char('|')).contains(QLatin1String("TP group spans nodes")));
    // The "TP group spans nodes" labels are drawn on the links.
    int labels = 0;
    for (QGraphicsItem* item : m_view->scene()->items())
        if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(item); t && t->text() == QLatin1String("TP group spans nodes"))
            ++labels;
    QCOMPARE(labels, 2);
    if (const QString dir = shotsDir(); !dir.isEmpty())
        QVERIFY(m_view->grab().save(dir + QStringLiteral("/mesh-8-crossing.png")));

    // Back to Megatron's order: the warning goes.
    m_view->setMesh({2, 4}, megatronMesh(p), p);
    QVERIFY(m_view->crossingGpus().empty());
    QVERIFY(m_view->warningText().isEmpty());
    QCOMPARE(m_view->cardLook(3).outline.style(), Qt::SolidLine);
}

void TestMeshView::coreGroupsDecideWhatCrosses()
{
    // tp 2, dp 4 on 2×4 with GPUs 3 and 4 swapped: TP groups {0,1} {2,4} {3,5} {6,7}, as core lists them.
    const ParallelPlan p = planOf(4, 1, 2);
    std::vector<MeshCoord> mesh = megatronMesh(p);
    std::swap(mesh[3], mesh[4]);
    using tw::parallel::Group;
    using tw::parallel::Strategy;
    const std::vector<Group> groups = {
        {Strategy::TP, "tp", {0, 1}, false}, {Strategy::TP, "tp", {2, 4}, true},      {Strategy::TP, "tp", {5, 3}, true},
        {Strategy::TP, "tp", {6, 7}, false}, {Strategy::DP, "dp", {0, 2, 5, 6}, true}, {Strategy::DP, "dp", {1, 4, 3, 7}, true},
    };
    showMesh({2, 4}, mesh, p, &groups);
    QCOMPARE(m_view->crossingGpus(), (std::vector<int>{2, 3, 4, 5}));
    QVERIFY(!m_view->cardLook(0).crossesNodes);
    QVERIFY(m_view->cardLook(4).crossesNodes);
    QVERIFY(m_view->warningText().contains(QLatin1String("2 of 4")));
    // Hover follows core's groups: GPU 2's TP peer is 4, its DP peers 0, 5, 6.
    m_view->hoverGpu(2);
    QCOMPARE(m_view->cardLook(4).outline.style(), Qt::SolidLine);
    QVERIFY(m_view->cardLook(4).highlighted);
    for (int g : {0, 5, 6})
        QCOMPARE(m_view->cardLook(g).outline.style(), Qt::DashLine);
    QVERIFY(m_view->cardLook(1).dimmed);
}

void TestMeshView::colorModes()
{
    const ParallelPlan p = planOf(2, 2, 2, 2);
    showMesh({1, 8}, megatronMesh(p), p);
    // GPU g = tp + 2·(dp + 2·pp): 0 (d0 p0), 2 (d1 p0), 4 (d0 p1).
    QCOMPARE(m_view->colorBy(), MeshView::ColorBy::DpReplica);
    QCOMPARE(m_view->cardLook(0).fill, m_view->cardLook(4).fill);
    QVERIFY(m_view->cardLook(0).fill != m_view->cardLook(2).fill);
    QCOMPARE(m_view->legendEntries().first(), QStringLiteral("dp 0"));
    m_view->setColorBy(MeshView::ColorBy::PpStage);
    QCOMPARE(m_view->cardLook(0).fill, m_view->cardLook(2).fill);
    QVERIFY(m_view->cardLook(0).fill != m_view->cardLook(4).fill);
    QCOMPARE(m_view->legendEntries().first(), QStringLiteral("stage 0"));
    m_view->setColorBy(MeshView::ColorBy::TpGroup);
    QCOMPARE(m_view->cardLook(0).fill, m_view->cardLook(1).fill);
    QVERIFY(m_view->cardLook(1).fill != m_view->cardLook(2).fill);
    // EP groups: blocks of ep = 2 consecutive DP ranks (same pp, tp): 0 and 2 share one.
    m_view->setColorBy(MeshView::ColorBy::EpGroup);
    QCOMPARE(m_view->cardLook(0).fill, m_view->cardLook(2).fill);
    QVERIFY(m_view->cardLook(0).fill != m_view->cardLook(1).fill);
    // The TP band does not depend on the colour mode.
    QCOMPARE(m_view->cardLook(0).band, m_view->cardLook(1).band);
    QVERIFY(m_view->cardLook(0).band != m_view->cardLook(2).band);
}

void TestMeshView::scalesFrom8To256Gpus_data()
{
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("gpusPerNode");
    QTest::addColumn<int>("dp");
    QTest::addColumn<int>("pp");
    QTest::addColumn<int>("tp");
    QTest::addColumn<int>("detail");
    QTest::newRow("8") << 1 << 8 << 2 << 2 << 2 << int(MeshView::Detail::Full);
    QTest::newRow("16") << 2 << 8 << 2 << 2 << 4 << int(MeshView::Detail::Full);
    QTest::newRow("64") << 8 << 8 << 4 << 2 << 8 << int(MeshView::Detail::Medium);
    QTest::newRow("256") << 32 << 8 << 8 << 4 << 8 << int(MeshView::Detail::Small);
    QTest::newRow("1024") << 128 << 8 << 32 << 4 << 8 << int(MeshView::Detail::Compact);
}

void TestMeshView::scalesFrom8To256Gpus()
{
    QFETCH(int, nodes);
    QFETCH(int, gpusPerNode);
    QFETCH(int, dp);
    QFETCH(int, pp);
    QFETCH(int, tp);
    QFETCH(int, detail);
    const ParallelPlan p = planOf(std::uint64_t(dp), std::uint64_t(pp), std::uint64_t(tp));
    showMesh({std::uint64_t(nodes), std::uint64_t(gpusPerNode)}, megatronMesh(p), p);
    const int n = nodes * gpusPerNode;
    QCOMPARE(m_view->gpuCount(), n);
    QCOMPARE(int(m_view->detail()), detail);
    // Every card is in view and found where it is drawn.
    for (int g = 0; g < n; ++g) {
        const QPoint c = m_view->gpuCenter(g).toPoint();
        QVERIFY2(m_view->viewport()->rect().contains(c), qPrintable(QString::number(g)));
        QCOMPARE(m_view->gpuAt(c), g);
    }
    // Cards stay big enough to hit with the mouse up to 256 GPUs.
    const QPointF a = m_view->gpuCenter(0), b = m_view->gpuCenter(1);
    if (n <= 256)
        QVERIFY2(QLineF(a, b).length() >= 30, qPrintable(QString::number(QLineF(a, b).length())));
    if (const QString dir = shotsDir(); !dir.isEmpty()) {
        m_view->resize(1200, 800);
        QCoreApplication::processEvents();
        QVERIFY(m_view->grab().save(dir + QStringLiteral("/mesh-%1.png").arg(n)));
        m_view->hoverGpu(n / 2 + 1);
        QVERIFY(m_view->grab().save(dir + QStringLiteral("/mesh-%1-hover.png").arg(n)));
    }
}

// 32,768 GPUs (4,096 nodes of 8, dp 4,096 × tp 8): beyond 16,384 GPUs the cards and node boxes are not
// scene items (one item paints them); the groups and the hover still work on every GPU, and a card cannot
// be dragged (no swap is asked for).
void TestMeshView::largeMeshIsOneField()
{
    const ParallelPlan p = planOf(4096, 1, 8);
    showMesh({4096, 8}, megatronMesh(p), p);
    QCOMPARE(m_view->gpuCount(), 32768);
    QVERIFY2(m_view->scene()->items().size() < 100, qPrintable(QString::number(m_view->scene()->items().size())));
    // GPU 9 = (dp 1, tp 1): its TP peers are GPUs 8–15 (node 1), its DP peers every tp-1 GPU (8·d + 1).
    m_view->hoverGpu(9);
    for (int g : {8, 9, 15, 1, 17, 32761})
        QVERIFY2(m_view->cardLook(g).highlighted, qPrintable(QString::number(g)));
    for (int g : {0, 16, 32767})
        QVERIFY2(m_view->cardLook(g).dimmed, qPrintable(QString::number(g)));
    const QImage shot = m_view->grab().toImage();
    int coloured = 0;
    for (int y = 0; y < shot.height(); y += 4)
        for (int x = 0; x < shot.width(); x += 4)
            coloured += shot.pixelColor(x, y) != QColor(Qt::white);
    QVERIFY2(coloured > 100, "the field painted nothing");
    QSignalSpy swaps(m_view.get(), &MeshView::swapRequested);
    const QPoint from = m_view->gpuCenter(100).toPoint(), to = m_view->gpuCenter(30000).toPoint();
    QTest::mousePress(m_view->viewport(), Qt::LeftButton, {}, from);
    QTest::mouseMove(m_view->viewport(), from + QPoint(20, 0));
    QTest::mouseMove(m_view->viewport(), to);
    QTest::mouseRelease(m_view->viewport(), Qt::LeftButton, {}, to);
    QCOMPARE(swaps.count(), 0);
    m_view->hoverGpu(-1);
    QVERIFY(!m_view->cardLook(0).dimmed);
    if (const QString dir = shotsDir(); !dir.isEmpty()) {
        m_view->resize(1200, 800);
        QCoreApplication::processEvents();
        QVERIFY(m_view->grab().save(dir + QStringLiteral("/mesh-32768.png")));
        m_view->hoverGpu(9);
        QVERIFY(m_view->grab().save(dir + QStringLiteral("/mesh-32768-hover.png")));
    }
}

void TestMeshView::restyleOf256GpusReusesCards()
{
    const ParallelPlan p = planOf(8, 4, 8);
    std::vector<MeshCoord> mesh = megatronMesh(p);
    showMesh({32, 8}, mesh, p);
    (void)m_view->grab();
    // A new mesh of the same shape reuses the cards: only text and colours change (the frame time is
    // measured by tests/bench/bench_meshview, not here).
    const QList<QGraphicsItem*> before = m_view->scene()->items();
    for (int i = 0; i < 10; ++i) {
        std::swap(mesh[std::size_t(i)], mesh[std::size_t(255 - i)]);
        m_view->setMesh({32, 8}, mesh, p);
    }
    QCOMPARE(m_view->gpuCount(), 256);
    const QList<QGraphicsItem*> after = m_view->scene()->items();
    int kept = 0;
    for (QGraphicsItem* item : after)
        kept += before.contains(item) ? 1 : 0;
    QVERIFY2(kept >= 256, qPrintable(QString::number(kept))); // at least every card item survived
    // The reused cards are restyled for the new places.
    QVERIFY(m_view->cardLook(0).fill != QColor());
}

void TestMeshView::signatureModel()
{
    using tw::parallel::Strategy;
    using tw::parallel::StrategySignature;
    tw::ui::SignatureModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    StrategySignature dp{Strategy::DP, true, 248'879'616, 1, 7, 435'539'328, 3'484'314'624, 0, 8, "once per optimizer step"};
    StrategySignature pp;
    pp.strategy = Strategy::PP;
    StrategySignature tpSig{Strategy::TP, true, 25'165'824, 192, 3, 7'247'757'312, 0, 1, 2, "4× per layer per micro-batch"};
    StrategySignature ep;
    ep.strategy = Strategy::EP;
    tw::FigureSet figures;
    figures.add({"dp.grad_allreduce_bytes", "DP gradient AllReduce payload", 248'879'616, "B", "P · s_grad = 124,439,808 · 2", {}});
    figures.add({"tp.activation_allreduce_bytes", "TP AllReduce payload", 25'165'824, "B", "B·T·d·s = 8·2048·768·2", {}});
    tw::parallel::CollectiveCall call;
    call.strategy = Strategy::DP;
    call.payloadBytes = 248'879'616;
    call.what = "gradient AllReduce";
    call.formula = "P·2 B";
    model.setSignature({dp, pp, tpSig, ep}, figures, {call});
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.columnCount(), int(tw::ui::SignatureModel::ColumnCount));
    using M = tw::ui::SignatureModel;
    auto cell = [&](int r, int c, int role = Qt::DisplayRole) { return model.data(model.index(r, c), role); };
    QCOMPARE(cell(0, M::StrategyColumn).toString(), QStringLiteral("DP"));
    QCOMPARE(cell(0, M::PayloadColumn).toString(), QStringLiteral("248.9 MB"));
    QCOMPARE(cell(0, M::FrequencyColumn).toString(), QStringLiteral("once per optimizer step"));
    QCOMPARE(cell(0, M::CallsColumn).toString(), QStringLiteral("1"));
    QCOMPARE(cell(0, M::PeersColumn).toString(), QStringLiteral("7"));
    QCOMPARE(cell(0, M::BytesColumn).toString(), QStringLiteral("435.5 MB"));
    QCOMPARE(cell(0, M::LinksColumn).toString(), QStringLiteral("intra-node"));
    QCOMPARE(cell(2, M::LinksColumn).toString(), QStringLiteral("1 of 2 groups inter-node"));
    QCOMPARE(cell(2, M::CallsColumn).toString(), QStringLiteral("192"));
    // Where the numbers come from.
    QCOMPARE(cell(0, M::PayloadColumn, M::FigureIdRole).toString(), QStringLiteral("dp.grad_allreduce_bytes"));
    QVERIFY(cell(0, M::PayloadColumn, Qt::ToolTipRole).toString().contains(QLatin1String("dp.grad_allreduce_bytes")));
    QVERIFY(cell(0, M::PayloadColumn, Qt::ToolTipRole).toString().contains(QLatin1String("gradient AllReduce")));
    QVERIFY(cell(2, M::PayloadColumn, Qt::ToolTipRole).toString().contains(QLatin1String("tp.activation_allreduce_bytes")));
    QCOMPARE(cell(0, M::BytesColumn, M::RawValueRole).toDouble(), 435'539'328.0);
    // Absent strategies: greyed dashes.
    QCOMPARE(cell(1, M::StrategyColumn).toString(), QStringLiteral("PP"));
    for (int c = M::PayloadColumn; c < M::ColumnCount; ++c)
        QCOMPARE(cell(1, c).toString(), QStringLiteral("—"));
    QCOMPARE(cell(3, M::PayloadColumn, Qt::ForegroundRole).value<QBrush>().color(), QColor(0x9c, 0xa3, 0xaf));
    QVERIFY(!cell(0, M::PayloadColumn, Qt::ForegroundRole).isValid());
    QVERIFY(cell(3, M::PayloadColumn, Qt::ToolTipRole).toString().contains(QLatin1String("does not use EP")));
    // Binary units on request.
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setDisplayUnits({tw::ByteUnits::Binary, 4});
    QCOMPARE(changed.count(), 1);
    QCOMPARE(cell(0, M::PayloadColumn).toString(), QStringLiteral("237.4 MiB"));
    // Same rows again: updated in place; other rows: reset.
    model.setSignature({dp, pp, tpSig, ep});
    QCOMPARE(model.rowCount(), 4);
    model.setSignature({dp});
    QCOMPARE(model.rowCount(), 1);
    model.setSignature({});
    QCOMPARE(model.rowCount(), 0);
}

void TestMeshView::callListModel()
{
    using namespace tw::parallel;
    CommPlan comm;
    comm.groups = {{Strategy::TP, "tp", {0, 1, 2, 3}, false}, {Strategy::TP, "tp", {4, 5, 6, 7}, false},
                   {Strategy::DP, "dp", {0, 4}, true}};
    CollectiveCall attn;
    attn.kind = CollectiveKind::AllReduce;
    attn.strategy = Strategy::TP;
    attn.phase = tw::model::Phase::Forward;
    attn.firstGroup = 0;
    attn.groupCount = 2;
    attn.payloadBytes = 25'165'824;
    attn.repeat = 4;
    attn.layer = 3;
    attn.what = "attention output AllReduce";
    attn.formula = "B·T·d·s = 8·2048·768·2";
    CollectiveCall grads;
    grads.kind = CollectiveKind::ReduceScatter;
    grads.strategy = Strategy::DP;
    grads.phase = tw::model::Phase::Backward;
    grads.firstGroup = 2;
    grads.groupCount = 1;
    grads.payloadBytes = 248'879'616;
    grads.what = "gradient ReduceScatter";
    comm.calls = {attn, grads};
    tw::ui::CallListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setCommPlan(comm);
    using M = tw::ui::CallListModel;
    auto cell = [&](int r, int c, int role = Qt::DisplayRole) { return model.data(model.index(r, c), role); };
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(cell(0, M::KindColumn).toString(), QStringLiteral("AllReduce"));
    QCOMPARE(cell(0, M::StrategyColumn).toString(), QStringLiteral("TP"));
    QCOMPARE(cell(0, M::PhaseColumn).toString(), QStringLiteral("forward"));
    QCOMPARE(cell(0, M::LayerColumn).toString(), QStringLiteral("3"));
    QCOMPARE(cell(0, M::GroupsColumn).toString(), QStringLiteral("2 × 4"));
    QCOMPARE(cell(0, M::PayloadColumn).toString(), QStringLiteral("25.17 MB"));
    QCOMPARE(cell(0, M::RepeatColumn).toString(), QStringLiteral("× 4"));
    QCOMPARE(cell(0, M::WhatColumn).toString(), QStringLiteral("attention output AllReduce"));
    QVERIFY(cell(0, M::PayloadColumn, Qt::ToolTipRole).toString().contains(QStringLiteral("8·2048·768·2")));
    QCOMPARE(cell(1, M::KindColumn).toString(), QStringLiteral("ReduceScatter"));
    QCOMPARE(cell(1, M::LayerColumn).toString(), QStringLiteral("—"));
    QCOMPARE(cell(1, M::PayloadColumn).toString(), QStringLiteral("248.9 MB"));
    QCOMPARE(cell(1, M::PayloadColumn, M::RawValueRole).toDouble(), 248'879'616.0);
    QVERIFY(cell(1, M::WhatColumn, Qt::ToolTipRole).toString().contains(QLatin1String("crosses nodes")));
    model.setDisplayUnits({tw::ByteUnits::Binary, 4});
    QCOMPARE(cell(1, M::PayloadColumn).toString(), QStringLiteral("237.4 MiB"));
    comm.calls.push_back(grads);
    model.setCommPlan(comm);
    QCOMPARE(model.rowCount(), 3);
    model.setCommPlan({});
    QCOMPARE(model.rowCount(), 0);
}

void TestMeshView::partitionEditorEmitsOnlyUserEdits()
{
    tw::ui::PartitionEditor editor;
    editor.resize(520, 300);
    QSignalSpy edits(&editor, &tw::ui::PartitionEditor::partitionEdited);
    editor.setPartition({3, 3, 3, 3}, 12);
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    QCOMPARE(edits.count(), 0);
    QCOMPARE(editor.stageCount(), 4);
    QVERIFY(editor.sumMatches());
    QVERIFY(!editor.sumLabel()->styleSheet().contains(QLatin1String("b91c1c")));
    // Setting the derivation's new partition again is silent too.
    editor.setPartition({2, 4, 4, 2}, 12);
    QCOMPARE(edits.count(), 0);
    QCOMPARE(editor.spinBox(1)->value(), 4);

    // The user types 5 into stage 0: one edit, the sum 15 ≠ 12 in red.
    QSpinBox* spin = editor.spinBox(0);
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, QStringLiteral("5"));
    QCOMPARE(edits.count(), 0); // no keyboard tracking: nothing before Return
    QTest::keyClick(spin, Qt::Key_Return);
    QCOMPARE(edits.count(), 1);
    QCOMPARE(edits.at(0).at(0).value<std::vector<std::uint64_t>>(), (std::vector<std::uint64_t>{5, 4, 4, 2}));
    QVERIFY(!editor.sumMatches());
    QVERIFY(editor.sumLabel()->text().contains(QStringLiteral("≠")));
    QVERIFY(editor.sumLabel()->text().contains(QLatin1String("15")));
    QVERIFY(editor.sumLabel()->styleSheet().contains(QLatin1String("b91c1c")));
    if (const QString dir = shotsDir(); !dir.isEmpty())
        QVERIFY(editor.grab().save(dir + QStringLiteral("/partition-wrong-sum.png")));
    // The arrow key is an edit too.
    QTest::keyClick(spin, Qt::Key_Down);
    QCOMPARE(edits.count(), 2);
    QCOMPARE(edits.at(1).at(0).value<std::vector<std::uint64_t>>(), (std::vector<std::uint64_t>{4, 4, 4, 2}));
    // "Even (default)" asks for core's default partition: an empty list.
    QTest::mouseClick(editor.evenButton(), Qt::LeftButton);
    QCOMPARE(edits.count(), 3);
    QVERIFY(edits.at(2).at(0).value<std::vector<std::uint64_t>>().empty());
    // The derivation answers with the even partition: the sum is right again, silently.
    editor.setPartition({3, 3, 3, 3}, 12);
    QCOMPARE(edits.count(), 3);
    QVERIFY(editor.sumMatches());
    QVERIFY(editor.sumLabel()->text().contains(QStringLiteral("✓")));
}

void TestMeshView::partitionEditorScalesTo64Stages()
{
    tw::ui::PartitionEditor editor;
    editor.resize(620, 360);
    QSignalSpy edits(&editor, &tw::ui::PartitionEditor::partitionEdited);
    std::vector<std::uint64_t> parts(64, 2);
    parts[10] = 3;
    editor.setPartition(parts, 129);
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    QCOMPARE(editor.stageCount(), 64);
    QVERIFY(editor.sumMatches());
    QCOMPARE(edits.count(), 0);
    // Interleaved: 4 stages × 2 chunks, labelled stage.chunk.
    editor.setPartition({2, 2, 2, 2, 1, 1, 1, 1}, 12, 2);
    QCOMPARE(editor.stageCount(), 8);
    QCOMPARE(edits.count(), 0);
    QVERIFY(editor.spinBox(5)->toolTip().contains(QLatin1String("chunk 1 of pipeline stage 1")));
    editor.setPartition(parts, 129);
    QCoreApplication::processEvents();
    QVERIFY(editor.spinBox(63)->isVisible() || editor.spinBox(63)->isVisibleTo(&editor));
    if (const QString dir = shotsDir(); !dir.isEmpty())
        QVERIFY(editor.grab().save(dir + QStringLiteral("/partition-64.png")));
}

void TestMeshView::pipelineChartDrawsEveryBlock()
{
    QWidget host;
    host.resize(900, 380);
    auto* layout = new QVBoxLayout(&host);
    tw::ui::PipelineChart chart(&host);
    layout->addWidget(chart.widget());
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
    const std::uint32_t p = 4, m = 8;
    chart.setTimeline(gpipe(p, m, 0.010, 0.020));
    QCOMPARE(chart.drawnBlocks(), int(p * m * 2));
    QCOMPARE(chart.stageCount(), int(p));
    QVERIFY(!chart.aggregated());
    QVERIFY2(chart.title().contains(QLatin1String("makespan 330 ms")), qPrintable(chart.title()));
    QVERIFY2(chart.title().contains(QLatin1String("bubble 27.3 %")), qPrintable(chart.title()));
    // Stage 0 at the top: its pixel row is above stage 3's.
    QCustomPlot* plot = chart.plot();
    QVERIFY(plot->yAxis->coordToPixel(0) < plot->yAxis->coordToPixel(3));
    plot->replot();
    QVERIFY(chart.visibleLabels() > 0);
    QVERIFY(chart.visibleLabels() <= int(p * m * 2));
    if (const QString dir = shotsDir(); !dir.isEmpty()) {
        QVERIFY(host.grab().save(dir + QStringLiteral("/pipeline-4x8.png")));
        host.resize(900, 520);
        chart.setTimeline(gpipe(16, 32, 0.004, 0.008));
        plot->replot();
        QVERIFY(host.grab().save(dir + QStringLiteral("/pipeline-16x32.png")));
    }
    // Clicking a block names it: stage 0's first forward block starts at 0.
    QSignalSpy clicks(&chart, &tw::ui::PipelineChart::blockClicked);
    chart.setTimeline(gpipe(p, m, 0.010, 0.020));
    plot->replot();
    const QPoint at(int(plot->xAxis->coordToPixel(5)), int(plot->yAxis->coordToPixel(0)));
    QTest::mouseClick(plot, Qt::LeftButton, {}, at);
    QCOMPARE(clicks.count(), 1);
    QCOMPARE(clicks.at(0).at(0).toInt(), 0);
    QCOMPARE(clicks.at(0).at(1).toInt(), 0);
    QCOMPARE(clicks.at(0).at(3).toBool(), false);
    chart.clear();
    QCOMPARE(chart.drawnBlocks(), 0);
}

void TestMeshView::pipelineChartAggregatesHugeTimelines()
{
    QWidget host;
    host.resize(900, 420);
    auto* layout = new QVBoxLayout(&host);
    tw::ui::PipelineChart chart(&host);
    layout->addWidget(chart.widget());
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
    const auto t = gpipe(16, 1024, 0.001, 0.002); // 32,768 blocks
    chart.setTimeline(t);
    chart.plot()->replot();
    QVERIFY(chart.aggregated());
    QVERIFY(chart.drawnBlocks() > 0);
    QVERIFY(chart.drawnBlocks() <= tw::ui::PipelineChart::kMaxBlocks + 2 * 16);
    QVERIFY(chart.title().contains(QLatin1String("aggregated")));
    if (const QString dir = shotsDir(); !dir.isEmpty())
        QVERIFY(host.grab().save(dir + QStringLiteral("/pipeline-aggregated.png")));
}

QTEST_MAIN(TestMeshView)
#include "tst_meshview.moc"
