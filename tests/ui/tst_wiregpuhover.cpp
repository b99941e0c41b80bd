// Hovering a GPU in stage 5's wire view (issue #19): at the animation's time the tooltip says what the GPU
// does — inside a compute interval, the block's kernels (pass, micro-batch, layers, a kernel with its
// achieved rate and bound); after its step, that it is done. Driven like a user: the dgx-a100 preset
// simulated by the pane, the time set inside GPU 0's intervals (read from the simulation's own timeline),
// a QEvent::ToolTip sent at GPU 0's box. The text is written to /work/notes/shots/hover when
// TOKENWIRE_SHOTS is set.

#include "document/document.h"
#include "panes/wirepane.h"
#include "views/wiregpuhover.h"
#include "views/wireview.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QTest>
#include <QToolTip>

using tw::network::Activity;
using tw::network::ComputePass;
using tw::network::GpuInterval;
using tw::ui::Document;
using tw::ui::WirePane;

class TestWireGpuHover : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void computeIntervalShowsItsKernels();
    void backwardAndAfterTheStep();
    void gpuAtFindsTheDrawnGpus();
    void pipelineStagesAndTheBubble();

private:
    // The tooltip shown after a ToolTip event at GPU `gpu`'s box.
    QString hoverGpu(int gpu);
    const GpuInterval* firstCompute(ComputePass pass, std::uint32_t gpu = 0) const;
    Document* m_doc = nullptr;
    WirePane* m_pane = nullptr;
};

void TestWireGpuHover::init()
{
    m_doc = new Document;
    m_pane = new WirePane(m_doc);
    m_pane->resize(1400, 900);
    m_pane->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_pane));
    QVERIFY(m_doc->loadPreset(QStringLiteral("dgx-a100")));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation());
    QVERIFY2(m_pane->isCurrent(), qPrintable(m_pane->statusLabel()->text()));
}

void TestWireGpuHover::cleanup()
{
    QToolTip::hideText();
    delete m_pane;
    delete m_doc;
    m_pane = nullptr;
    m_doc = nullptr;
}

QString TestWireGpuHover::hoverGpu(int gpu)
{
    tw::ui::WireView* view = m_pane->view();
    const auto node = view->topology()->gpuNode(std::uint64_t(gpu));
    const auto centre = view->nodeCenter(node);
    if (!centre)
        return QStringLiteral("(GPU not drawn)");
    const QPoint pos = centre->toPoint();
    if (view->gpuAt(pos) != gpu)
        return QStringLiteral("(gpuAt missed)");
    QHelpEvent help(QEvent::ToolTip, pos, view->mapToGlobal(pos));
    QCoreApplication::sendEvent(view, &help);
    return QToolTip::text();
}

const GpuInterval* TestWireGpuHover::firstCompute(ComputePass pass, std::uint32_t gpu) const
{
    for (const auto& t : m_pane->result().simulation->gpuTimelines)
        if (t.gpu == gpu)
            for (const GpuInterval& i : t.intervals)
                if (i.activity == Activity::Compute && i.pass == pass)
                    return &i;
    return nullptr;
}

void TestWireGpuHover::computeIntervalShowsItsKernels()
{
    // dgx-a100 (resources/presets/dgx-a100.json): GPT-2 XL, 48 layers, 8-way DP on one server, p = 1, and
    // the kernel model's times. GPU 0's first forward block is micro-batch 0's forward of all 48 layers;
    // its longest kernels are the MLP GEMMs (2·4,096·6,400·1,600 FLOP each per layer, the largest GEMMs
    // of a GPT-2 XL layer), compute-bound, so they are listed with TFLOP/s.
    const GpuInterval* forward = firstCompute(ComputePass::Forward);
    QVERIFY(forward);
    QCOMPARE(forward->microBatch, 0u);
    m_pane->setTime((forward->start + forward->end) / 2);
    const QString tip = hoverGpu(0);
    QVERIFY2(tip.contains(QStringLiteral("GPU 0")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("pipeline stage 0")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Forward of micro-batch 0: 48 layers")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("MLP up (h→4h)")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("TFLOP/s, compute-bound")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Kernels of the block")), qPrintable(tip));
    if (qEnvironmentVariableIsSet("TOKENWIRE_SHOTS")) {
        QDir().mkpath(qEnvironmentVariable("TOKENWIRE_SHOTS"));
        QFile f(qEnvironmentVariable("TOKENWIRE_SHOTS") + QStringLiteral("/gpu0-forward.html"));
        if (f.open(QIODevice::WriteOnly))
            f.write(tip.toUtf8());
        // The pane with the tooltip's own window painted where it is shown (a grab leaves top-levels out).
        QPixmap shot = m_pane->grab();
        for (QWidget* w : QApplication::topLevelWidgets())
            if (w->inherits("QTipLabel") && w->isVisible()) {
                QPainter p(&shot);
                p.drawPixmap(m_pane->mapFromGlobal(w->pos()), w->grab());
            }
        shot.save(qEnvironmentVariable("TOKENWIRE_SHOTS") + QStringLiteral("/gpu0-forward-pane.png"));
    }
}

void TestWireGpuHover::backwardAndAfterTheStep()
{
    const GpuInterval* backward = firstCompute(ComputePass::Backward);
    QVERIFY(backward);
    m_pane->setTime((backward->start + backward->end) / 2);
    const QString tip = hoverGpu(0);
    QVERIFY2(tip.contains(QStringLiteral("Backward of micro-batch %1").arg(backward->microBatch)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("∂weight")), qPrintable(tip)); // the backward's weight-gradient GEMMs
    QVERIFY2(!tip.contains(QStringLiteral("Forward of")), qPrintable(tip));
    // At the end of the step no interval holds the time: GPU 0 is done (or waits for its last call).
    m_pane->setTime(m_pane->result().simulation->stepSeconds);
    const QString end = hoverGpu(0);
    QVERIFY2(end.contains(QStringLiteral("step ended")) || end.contains(QStringLiteral("Waiting on")), qPrintable(end));
    QVERIFY2(!end.contains(QStringLiteral("Kernels of the block")), qPrintable(end));
}

void TestWireGpuHover::gpuAtFindsTheDrawnGpus()
{
    tw::ui::WireView* view = m_pane->view();
    for (int g = 0; g < 8; ++g) {
        const auto centre = view->nodeCenter(view->topology()->gpuNode(std::uint64_t(g)));
        QVERIFY(centre);
        QCOMPARE(view->gpuAt(centre->toPoint()), std::optional<int>(g));
    }
    QCOMPARE(view->gpuAt(QPoint(-50, -50)), std::optional<int>());
}

void TestWireGpuHover::pipelineStagesAndTheBubble()
{
    // paper-pp (resources/presets/paper-pp.json): GPT-2 small's 12 layers on 8 pipeline stages, one GPU each
    // (dp = tp = 1, so GPU g is stage g), with a given layer time (0.08 s), so no kernel model. The layers
    // split as [1,1,2,2,2,2,1,1] (docs/model.md §6, Example 5.2): stage 3 has 2 layers, stage 7 one.
    QVERIFY(m_doc->loadPreset(QStringLiteral("paper-pp")));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation());
    QVERIFY2(m_pane->isCurrent(), qPrintable(m_pane->statusLabel()->text()));
    const GpuInterval* third = firstCompute(ComputePass::Forward, 3);
    QVERIFY(third);
    m_pane->setTime((third->start + third->end) / 2);
    QString tip = hoverGpu(3);
    QVERIFY2(tip.contains(QStringLiteral("pipeline stage 3")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Forward of micro-batch 0: 2 layers")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("no kernel breakdown")), qPrintable(tip)); // given layer times
    // At t = 0 the last stage waits for micro-batch 0 to cross the seven stages before it: it waits on its
    // pipeline receive, and its first block is micro-batch 0's forward, later.
    m_pane->setTime(0);
    tip = hoverGpu(7);
    const GpuInterval* last = firstCompute(ComputePass::Forward, 7);
    QVERIFY(last && last->start > 0);
    QVERIFY2(tip.contains(QStringLiteral("pipeline stage 7")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Waiting on PP")) || tip.contains(QStringLiteral("Idle (pipeline bubble)")),
             qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("forward of micro-batch 0")), qPrintable(tip));
    QVERIFY2(!tip.contains(QStringLiteral("Computing")), qPrintable(tip));
    m_pane->setTime((last->start + last->end) / 2);
    tip = hoverGpu(7);
    QVERIFY2(tip.contains(QStringLiteral("Forward of micro-batch 0: 1 layer")), qPrintable(tip));
    QVERIFY2(!tip.contains(QStringLiteral("1 layers")), qPrintable(tip));
}

QTEST_MAIN(TestWireGpuHover)
#include "tst_wiregpuhover.moc"
