#include "pipelinechart.h"

#include "charts/chartframe.h"

#include "base/units.h"
#include "parallel/plan.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {

// The least height of a stage's row in the chart's minimum (setTimeline).
constexpr int kRowPixels = 16;

// A stage label every k-th row by the stage count alone (updateLabels thins further to the rows' height).
int baseTickEvery(int stages)
{
    return stages <= 16 ? 1 : stages <= 32 ? 2 : stages <= 64 ? 4 : 8;
}

// Okabe–Ito: sky blue / blue for forward, orange / vermillion for backward.
const QColor kForward(0x56, 0xB4, 0xE9), kForwardLater(0x00, 0x72, 0xB2);
const QColor kBackward(0xE6, 0x9F, 0x00), kBackwardLater(0xD5, 0x5E, 0x00);
const QColor kLane(0xf1, 0xf3, 0xf5);
const QColor kOptimizer(0x6b, 0x72, 0x80);
const QColor kInk(0x11, 0x18, 0x27);

QColor blockColor(bool backward, bool laterChunk)
{
    return backward ? (laterChunk ? kBackwardLater : kBackward) : (laterChunk ? kForwardLater : kForward);
}

} // namespace

// Every block (or aggregated bar) and its micro-batch label, drawn by one layerable on the "blocks"
// layer above the lanes: a QCPItemRect and a QCPItemText per block took 10 ms to create and 7 ms to
// delete for the 1,024 blocks of a Llama-3 plan, on every new plan.
class PipelineBlockLayer : public QCPLayerable {
public:
    struct Block {
        double start, end; // x axis units
        double stage;
        QColor color;
        bool outlined; // a white pen between neighbours (off for aggregated bars)
    };
    struct Label {
        double start, end;
        double stage;
        QString text;
        bool onDark;
        qreal width; // the text's, + padding
        bool visible = false;
    };
    static constexpr double kHalf = 0.36; // half a block's height in stage rows

    explicit PipelineBlockLayer(QCustomPlot* plot)
        : QCPLayerable(plot, QStringLiteral("blocks"))
    {
    }
    void clear()
    {
        blocks.clear();
        labels.clear();
    }
    std::vector<Block> blocks;
    std::vector<Label> labels;
    QFont font;

protected:
    QRect clipRect() const override { return mParentPlot->axisRect()->rect(); }
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override
    {
        applyAntialiasingHint(painter, mAntialiased, QCP::aeItems);
    }
    void draw(QCPPainter* painter) override
    {
        const QCPAxis* x = mParentPlot->xAxis;
        const QCPAxis* y = mParentPlot->yAxis;
        const QRectF clip = clipRect();
        const QPen white(Qt::white, 1);
        for (const Block& b : blocks) {
            const QRectF r = QRectF(QPointF(x->coordToPixel(b.start), y->coordToPixel(b.stage - kHalf)),
                                    QPointF(x->coordToPixel(b.end), y->coordToPixel(b.stage + kHalf)))
                                 .normalized();
            if (!r.adjusted(-1, -1, 1, 1).intersects(clip))
                continue;
            painter->setPen(b.outlined ? white : QPen(Qt::NoPen));
            painter->setBrush(b.color);
            painter->drawRect(r);
        }
        painter->setFont(font);
        for (const Label& l : labels) {
            if (!l.visible)
                continue;
            const QPointF c(x->coordToPixel((l.start + l.end) / 2), y->coordToPixel(l.stage));
            const QRectF r(c.x() - l.width / 2, c.y() - 50, l.width, 100);
            if (!r.intersects(clip))
                continue;
            painter->setPen(l.onDark ? QColor(Qt::white) : kInk);
            painter->drawText(r, Qt::AlignCenter, l.text);
        }
    }
};

PipelineChart::PipelineChart(QWidget* parent)
    : QObject(parent)
{
    m_plot = new QCustomPlot(parent);
    m_plot->setObjectName(QStringLiteral("pipelineChart"));
    keepPlotRoom(m_plot);
    QFont base = parent ? parent->font() : QFont();
    m_title = frameChart(m_plot, base, tr("Pipeline schedule"));
    m_plot->yAxis->setRangeReversed(true); // stage 0 at the top
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->setTickLength(0, 0);
    m_plot->xAxis->grid()->setPen(QPen(QColor(0xd1, 0xd5, 0xdb), 1, Qt::DotLine));
    m_plot->setMinimumHeight(220);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_plot->addLayer(QStringLiteral("blocks"), m_plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    m_layer = new PipelineBlockLayer(m_plot); // the plot owns it

    connect(m_plot, &QCustomPlot::afterLayout, this, &PipelineChart::updateLabels);
    // A click (press and release at about the same place, not a drag) on a block names it.
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { m_pressAt = e->pos(); });
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if ((e->pos() - m_pressAt).manhattanLength() > 3 || m_aggregated)
            return;
        const double y = m_plot->yAxis->pixelToCoord(e->pos().y());
        const double x = m_plot->xAxis->pixelToCoord(e->pos().x()) / m_scale;
        const long stage = std::lround(y);
        if (std::fabs(y - double(stage)) > 0.4)
            return;
        for (const parallel::PipelineBlock& b : m_blocks)
            if (long(b.stage) == stage && b.start <= x && x <= b.end) {
                emit blockClicked(int(b.stage), int(b.microBatch), int(b.chunk), b.backward);
                return;
            }
    });
    clear();
}

PipelineChart::~PipelineChart() = default;

QWidget* PipelineChart::widget() const
{
    return m_plot;
}

QString PipelineChart::title() const
{
    return m_title->text();
}

void PipelineChart::clear()
{
    m_plot->clearItems();
    m_plot->clearPlottables();
    m_layer->clear();
    m_blocks.clear();
    m_drawn = 0;
    m_optimizerBlocks = 0;
    m_optimizerSpan = {0, 0};
    m_stages = 0;
    m_aggregated = false;
    m_title->setText(tr("Pipeline schedule"));
    m_plot->replot();
}

// The legend: empty bars carrying the colours of the phases, the optimizer and the idle lanes.
void PipelineChart::addLegend(bool interleaved, bool optimizer)
{
    auto legendEntry = [&](const QString& name, const QColor& color) {
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(name);
        bars->setBrush(color);
        bars->setPen(QPen(color.darker(140)));
    };
    legendEntry(interleaved ? tr("forward, chunk 0") : tr("forward"), kForward);
    if (interleaved)
        legendEntry(tr("forward, chunk ≥ 1"), kForwardLater);
    legendEntry(interleaved ? tr("backward, chunk 0") : tr("backward"), kBackward);
    if (interleaved)
        legendEntry(tr("backward, chunk ≥ 1"), kBackwardLater);
    if (optimizer)
        legendEntry(tr("optimizer"), kOptimizer);
    {
        auto* idle = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        idle->setName(tr("idle (bubble)"));
        idle->setBrush(kLane);
        idle->setPen(QPen(QColor(0xc4, 0xc9, 0xd1)));
    }
    m_plot->updateGeometry(); // its legend's entries set its minimum width

}

// Every block as a bar of its stage, labelled with its micro-batch when there are few.
void PipelineChart::addEachBlock(const parallel::PipelineTimeline& t)
{
    const int n = int(t.blocks.size());
    const bool labels = n <= kMaxLabels;
    m_layer->font = m_plot->xAxis->tickLabelFont();
    const QFontMetricsF fm(m_layer->font);
    m_layer->blocks.reserve(t.blocks.size());
    for (const parallel::PipelineBlock& b : t.blocks) {
        m_layer->blocks.push_back({b.start * m_scale, b.end * m_scale, double(b.stage), blockColor(b.backward, b.chunk > 0), true});
        ++m_drawn;
        if (labels) {
            QString text = QString::number(b.microBatch);
            const qreal width = fm.horizontalAdvance(text) + 4;
            m_layer->labels.push_back({b.start * m_scale, b.end * m_scale, double(b.stage), std::move(text), b.chunk > 0, width});
        }
    }
}

// Aggregated: per stage, time slices coloured by the phase that fills most of them.
void PipelineChart::addAggregatedBlocks(const parallel::PipelineTimeline& t, int stages, double makespan)
{
    m_aggregated = true;
    const int bins = std::clamp(kMaxBlocks / stages, 24, 600);
    const double width = makespan / bins;
    std::vector<double> fwd(std::size_t(stages) * std::size_t(bins), 0.0), bwd(fwd.size(), 0.0);
    for (const parallel::PipelineBlock& b : t.blocks) {
        int first = std::clamp(int(b.start / width), 0, bins - 1), last = std::clamp(int(b.end / width), 0, bins - 1);
        for (int k = first; k <= last; ++k) {
            const double overlap = std::min(b.end, (k + 1) * width) - std::max(b.start, k * width);
            if (overlap > 0)
                (b.backward ? bwd : fwd)[std::size_t(b.stage) * std::size_t(bins) + std::size_t(k)] += overlap;
        }
    }
    for (int s = 0; s < stages; ++s) {
        int runKind = -1, runStart = 0;
        auto flush = [&](int end) {
            if (runKind <= 0)
                return;
            m_layer->blocks.push_back({runStart * width * m_scale, end * width * m_scale, double(s), blockColor(runKind == 2, false), false});
            ++m_drawn;
        };
        for (int k = 0; k <= bins; ++k) {
            int kind = -1;
            if (k < bins) {
                const double f = fwd[std::size_t(s) * std::size_t(bins) + std::size_t(k)];
                const double bk = bwd[std::size_t(s) * std::size_t(bins) + std::size_t(k)];
                kind = f + bk < 0.5 * width ? 0 : (bk > f ? 2 : 1);
            }
            if (kind != runKind) {
                flush(k);
                runKind = kind;
                runStart = k;
            }
        }
    }
}

// The timeline drawn: a lane per stage, its blocks (or aggregated slices), the optimizer step, the
// axes and the title with the makespan and the bubble.
void PipelineChart::setTimeline(const parallel::PipelineTimeline& t, double optimizerSeconds)
{
    m_plot->clearItems();
    m_plot->clearPlottables();
    m_layer->clear();
    m_drawn = 0;
    m_optimizerBlocks = 0;
    m_optimizerSpan = {0, 0};
    m_aggregated = false;
    m_blocks = t.blocks;

    int stages = int(t.stageBusySeconds.size());
    bool interleaved = false;
    for (const parallel::PipelineBlock& b : t.blocks) {
        stages = std::max(stages, int(b.stage) + 1);
        interleaved |= b.chunk > 0;
    }
    m_stages = stages;
    if (stages == 0 || t.blocks.empty()) {
        m_title->setText(tr("Pipeline schedule: no blocks"));
        m_plot->replot();
        return;
    }
    double makespan = t.makespan;
    for (const parallel::PipelineBlock& b : t.blocks)
        makespan = std::max(makespan, b.end);
    const double stepEnd = makespan + std::max(0.0, optimizerSeconds);
    const bool micro = stepEnd < 1e-3;
    m_scale = micro ? 1e6 : 1e3;
    const QString unit = micro ? tr("µs") : tr("ms");

    addLegend(interleaved, optimizerSeconds > 0);
    // Grey lanes: the idle time is what stays grey.
    for (int s = 0; s < stages; ++s) {
        auto* lane = new QCPItemRect(m_plot);
        lane->topLeft->setCoords(0, s - 0.42);
        lane->bottomRight->setCoords(makespan * m_scale, s + 0.42);
        lane->setPen(Qt::NoPen);
        lane->setBrush(kLane);
        lane->setSelectable(false);
    }

    const int n = int(t.blocks.size());
    const qreal half = PipelineBlockLayer::kHalf;
    if (n <= kMaxBlocks)
        addEachBlock(t);
    else
        addAggregatedBlocks(t, stages, makespan);

    // The optimizer step: every stage after the makespan (Megatron clips the gradient norm over all
    // stages first, so no stage steps before the last backward is done).
    if (optimizerSeconds > 0) {
        m_optimizerSpan = {makespan, stepEnd};
        for (int s = 0; s < stages; ++s) {
            auto* rect = new QCPItemRect(m_plot);
            rect->topLeft->setCoords(makespan * m_scale, s - half);
            rect->bottomRight->setCoords(stepEnd * m_scale, s + half);
            rect->setPen(QPen(Qt::white, 1));
            rect->setBrush(kOptimizer);
            rect->setSelectable(false);
            ++m_optimizerBlocks;
        }
    }

    // Stage ticks, every k-th when there are many (updateLabels thins them further to the rows' height).
    setStageTicks(baseTickEvery(stages));
    m_plot->yAxis->setLabel(tr("pipeline stage"));
    m_plot->yAxis->setRange(-0.6, stages - 0.4);
    m_plot->xAxis->setRange(0, stepEnd * m_scale * 1.01);
    m_plot->xAxis->setLabel(tr("time in one optimizer step (%1)").arg(unit));
    // A row of at least kRowPixels for up to 16 stages (more share the room: their labels thin out,
    // updateLabels); where the tab has less, the stage scrolls (keepPlotRoom), never past the screen.
    setMinimumPlotHeight(m_plot, std::min(stages, 16) * kRowPixels);

    QString title = tr("Pipeline schedule — makespan %1 · bubble %2 % (idle share of %3 stages × makespan)")
                        .arg(qs(formatSeconds(t.makespan)))
                        .arg(t.bubbleFraction * 100, 0, 'f', 1)
                        .arg(stages);
    // At most two lines: a projector's tab leaves the chart little height.
    QStringList more;
    if (optimizerSeconds > 0)
        more << tr("+ optimizer step %1 on every stage = %2").arg(qs(formatSeconds(optimizerSeconds)), qs(formatSeconds(stepEnd)));
    if (m_aggregated)
        more << tr("%1 blocks drawn as %2 aggregated bars").arg(qs(formatInteger(n)), qs(formatInteger(m_drawn)));
    if (!more.isEmpty())
        title += QStringLiteral("\n") + more.join(QStringLiteral(" · "));
    m_title->setText(title);
    // Drawn by the event loop's next turn: a new plan's delivery to stage 3 stays short.
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void PipelineChart::setStageTicks(int every)
{
    m_tickEvery = every;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int s = 0; s < m_stages; s += every)
        ticker->addTick(s, tr("stage %1").arg(s));
    m_plot->yAxis->setTicker(ticker);
}

void PipelineChart::updateLabels()
{
    const QCPRange range = m_plot->yAxis->range();
    const double rowPixels = std::fabs(m_plot->yAxis->coordToPixel(range.lower + 1) - m_plot->yAxis->coordToPixel(range.lower));
    // The stage labels no closer than their own height: every 2nd, 4th … row when the rows are thin.
    if (m_stages > 0 && rowPixels > 0) {
        const double lineHeight = QFontMetricsF(m_plot->yAxis->tickLabelFont()).height();
        int every = baseTickEvery(m_stages);
        while (every < m_stages && every * rowPixels < lineHeight)
            every *= 2;
        if (every != m_tickEvery) {
            setStageTicks(every);
            m_plot->replot(QCustomPlot::rpQueuedReplot);
        }
    }
    if (m_layer->labels.empty())
        return;
    const bool tallEnough = rowPixels * 0.72 >= QFontMetricsF(m_layer->font).height();
    for (PipelineBlockLayer::Label& l : m_layer->labels) {
        const double w = std::fabs(m_plot->xAxis->coordToPixel(l.end) - m_plot->xAxis->coordToPixel(l.start));
        l.visible = tallEnough && w >= l.width;
    }
}

int PipelineChart::visibleLabels() const
{
    return int(std::count_if(m_layer->labels.begin(), m_layer->labels.end(), [](const PipelineBlockLayer::Label& l) { return l.visible; }));
}

} // namespace tw::ui
