#include "wirecharts.h"

#include "chartframe.h"
#include "views/palette.h"

#include "base/units.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {

const QColor kCompute(0x94, 0xa3, 0xb8); // slate: compute is the background, communication the colour
const QColor kIdle(0xf1, 0xf3, 0xf5);

// A time axis in the step's own unit: µs, ms or s, chosen so the step reads as 1…1000.
struct TimeUnit {
    double scale = 1;
    QString name = QStringLiteral("s");
};

TimeUnit timeUnitFor(double seconds)
{
    if (seconds > 0 && seconds < 1e-3)
        return {1e6, QStringLiteral("µs")};
    if (seconds > 0 && seconds < 1)
        return {1e3, QStringLiteral("ms")};
    return {};
}

QCustomPlot* makePlot(QWidget* parent, const char* name, const QString& title, QCPTextElement** titleOut)
{
    auto* plot = new QCustomPlot(parent);
    plot->setObjectName(QString::fromLatin1(name));
    keepPlotRoom(plot);
    const QFont base = parent ? parent->font() : QFont();
    QFont heading = base;
    heading.setPointSizeF(base.pointSizeF() * 1.1);
    heading.setBold(true);
    plot->plotLayout()->insertRow(0);
    *titleOut = new QCPTextElement(plot, title, heading);
    plot->plotLayout()->addElement(0, 0, *titleOut);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis, plot->yAxis2}) {
        axis->setTickLabelFont(base);
        axis->setLabelFont(base);
        axis->grid()->setPen(QPen(QColor(0xd1, 0xd5, 0xdb), 1, Qt::DotLine));
    }
    // The legend in its own row under the chart, so it never covers data.
    legendBelow(plot, base);
    plot->legend->setWrap(7);
    plot->setMinimumHeight(120); // the tabs under the wire are short at 1280×720: shrink, never be cut
    return plot;
}

void resetPlot(QCustomPlot* plot)
{
    plot->clearGraphs();
    plot->clearPlottables();
    plot->clearItems();
}

} // namespace

WireCharts::WireCharts(QWidget* parent)
    : QObject(parent)
{
    m_throughput = makePlot(parent, "wireThroughputChart", tr("Link throughput"), &m_throughputTitle);
    m_throughput->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_throughput->axisRect()->setRangeDrag(Qt::Horizontal);
    m_throughput->axisRect()->setRangeZoom(Qt::Horizontal);
    // The animation's time line on a buffered layer of its own: moving it redraws that layer only, not
    // the stacked rates under it (a full replot of a busy link's 4,096 bins took 100 ms per frame).
    m_throughput->addLayer(QStringLiteral("now"), m_throughput->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    m_nowLayer = m_throughput->layer(QStringLiteral("now"));
    m_nowLayer->setMode(QCPLayer::lmBuffered);
    connect(m_throughput, &QCustomPlot::afterReplot, this, [this] { m_throughputQueued = false; });
    // Step lines and fills are axis-aligned: drawn without antialiasing they look the same and cost a
    // fraction (the stacked fills of a busy link were most of a replot).
    m_throughput->setNotAntialiasedElements(QCP::aePlottables | QCP::aeFills);
    m_throughput->setPlottingHint(QCP::phFastPolylines, true);
    m_breakdown = makePlot(parent, "wireBreakdownChart", tr("Where the step goes"), &m_breakdownTitle);
    m_scaling = makePlot(parent, "wireScalingChart", tr("Scaling"), &m_scalingTitle);
    m_scaling->legend->setWrap(3); // the chart shares its width with the gaps' text
    clear();
}

WireCharts::~WireCharts() = default;

QString WireCharts::throughputTitle() const
{
    return m_throughputTitle->text();
}

QString WireCharts::breakdownTitle() const
{
    return m_breakdownTitle->text();
}

QString WireCharts::scalingTitle() const
{
    return m_scalingTitle->text();
}

std::vector<double> WireCharts::barValues(int bar) const
{
    return bar >= 0 && bar < int(m_barValues.size()) ? m_barValues[std::size_t(bar)] : std::vector<double>{};
}

void WireCharts::clear()
{
    for (QCustomPlot* p : {m_throughput, m_breakdown})
        resetPlot(p);
    m_now = nullptr;
    m_bars = 0;
    m_barValues.clear();
    m_throughputTitle->setText(tr("Link throughput: hover or click a link of the fabric"));
    m_breakdownTitle->setText(tr("Where the step goes: no simulation yet"));
    for (QCustomPlot* p : {m_throughput, m_breakdown})
        p->replot();
    clearSweep(tr("Scaling: run a sweep"));
}

void WireCharts::clearSweep(const QString& title)
{
    resetPlot(m_scaling);
    m_points = m_measured = 0;
    m_scalingTitle->setText(title);
    // Empty, the scaling chart still says what its axes will hold.
    m_scaling->xAxis->setLabel(tr("GPUs"));
    m_scaling->yAxis->setLabel(tr("efficiency (%)"));
    m_scaling->replot();
}

void WireCharts::setThroughput(const network::Topology* topology, const network::StepSimulation* simulation,
                               std::optional<network::LinkId> link)
{
    resetPlot(m_throughput);
    m_now = nullptr;
    if (!topology || !simulation || !link || *link >= topology->links().size()) {
        m_throughputTitle->setText(tr("Link throughput: hover or click a link of the fabric"));
        m_throughput->replot();
        return;
    }
    const network::Link& l = topology->link(*link);
    const TimeUnit unit = timeUnitFor(simulation->stepSeconds);
    const network::LinkSeries* series = simulation->linkBins.of(*link); // its orbit's under symmetry
    const double width = simulation->linkBins.binSeconds;
    const double step = simulation->stepSeconds;
    m_throughputTitle->setText(
        tr("%1 (%2, %3/s per direction): payload rate over the step")
            .arg(qs(l.id), qs(std::string(network::displayName(l.protocol))), qs(formatBytes(l.bandwidth, m_units))));
    // Rates in GB/s (or GiB/s), stacked: each strategy's graph is filled down to the one below it.
    const bool binary = m_units.bytes == ByteUnits::Binary;
    const double toGB = binary ? 1.0 / 1073741824.0 : 1e-9;
    QCPGraph* below = nullptr;
    std::vector<double> cumulative;
    // One step per bin: the bin's bytes / its width (the mean rate in it), up to the end of the step.
    std::size_t n = 0;
    if (series && width > 0)
        n = std::min(series->bins.size(), static_cast<std::size_t>(std::ceil(step / width)));
    // At most about two bins per pixel column: neighbours merged in powers of two (their mean rate, so the
    // area under the curve stays the bytes moved), as the binner itself coarsens.
    const std::size_t columns = std::size_t(std::max(256, 2 * m_throughput->axisRect()->width()));
    std::size_t merge = 1;
    while ((n + merge - 1) / merge > columns)
        merge *= 2;
    const double shownWidth = width * double(merge);
    const std::size_t shown = (n + merge - 1) / merge;
    if (n > 0) {
        bool anyStrategy = false;
        for (std::size_t k = 0; k < n; ++k)
            for (float b : series->bins[k].byStrategy)
                anyStrategy = anyStrategy || b > 0;
        cumulative.assign(shown, 0.0);
        for (int st = 0; st < parallel::kStrategyCount; ++st) {
            QVector<double> x, y;
            bool used = false;
            for (std::size_t k = 0; k < shown; ++k) {
                double bytes = 0;
                for (std::size_t i = k * merge; i < std::min(n, (k + 1) * merge); ++i) {
                    const network::LinkBin& b = series->bins[i];
                    // Without a split by strategy the whole rate is drawn as one series.
                    bytes += anyStrategy ? double(b.byStrategy[std::size_t(st)]) : (st == 0 ? b.bytes : 0.0);
                }
                const double r = bytes / shownWidth;
                used = used || r > 0;
                cumulative[k] += r;
                x << double(k) * shownWidth * unit.scale;
                y << cumulative[k] * toGB;
            }
            if (!used)
                continue;
            x << std::min(double(shown) * shownWidth, step) * unit.scale;
            y << 0.0;
            QCPGraph* g = m_throughput->addGraph();
            g->setLineStyle(QCPGraph::lsStepLeft);
            QColor c = anyStrategy ? palette::strategy(st) : palette::kMuted;
            g->setPen(QPen(c.darker(115), 1.2));
            c.setAlpha(170);
            g->setBrush(c);
            if (below)
                g->setChannelFillGraph(below);
            g->setName(anyStrategy ? qs(parallel::toString(parallel::Strategy(st))) : tr("all strategies"));
            g->setData(x, y, true);
            below = g;
        }
    }
    // Capacity: the protocol's payload limit is below this line (packet headers).
    auto* capacity = new QCPItemStraightLine(m_throughput);
    capacity->point1->setCoords(0, l.bandwidth * toGB);
    capacity->point2->setCoords(1, l.bandwidth * toGB);
    capacity->setPen(QPen(palette::kInk, 1, Qt::DashLine));
    auto* capLabel = new QCPItemText(m_throughput);
    capLabel->position->setType(QCPItemPosition::ptPlotCoords);
    capLabel->position->setCoords(0, l.bandwidth * toGB);
    capLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    capLabel->setText(tr(" capacity %1/s").arg(qs(formatBytes(l.bandwidth, m_units))));
    capLabel->setColor(palette::kMuted);
    m_now = new QCPItemStraightLine(m_throughput);
    m_now->setLayer(m_nowLayer);
    m_now->setPen(QPen(QColor(0xb9, 0x1c, 0x1c), 1.5));
    m_now->point1->setCoords(0, 0);
    m_now->point2->setCoords(0, 1);
    m_throughput->xAxis->setLabel(tr("time in the step (%1)").arg(unit.name));
    m_throughput->yAxis->setLabel(binary ? tr("payload rate (GiB/s)") : tr("payload rate (GB/s)"));
    m_throughput->xAxis->setRange(0, std::max(step, 1e-12) * unit.scale);
    m_throughput->yAxis->setRange(0, l.bandwidth * toGB * 1.15);
    if (!series)
        m_throughputTitle->setText(m_throughputTitle->text() + tr(" — idle during the step"));
    m_throughput->setProperty("timeScale", unit.scale);
    // Drawn by the event loop's next turn: a new step's delivery (the fabric's layout first) stays short.
    m_throughput->replot(QCustomPlot::rpQueuedReplot);
    m_throughputQueued = true;
}

void WireCharts::setTime(double seconds)
{
    if (!m_now)
        return;
    const double scale = m_throughput->property("timeScale").toDouble();
    m_now->point1->setCoords(seconds * scale, 0);
    m_now->point2->setCoords(seconds * scale, 1);
    // This layer's buffer only, then a repaint of the widget; not while a full replot is queued (it draws
    // the line where it now is; a layer's replot would then replot the whole chart at once).
    if (!m_throughputQueued)
        m_nowLayer->replot();
}

void WireCharts::setBreakdown(const network::StepSimulation& sim, const std::vector<std::uint32_t>& stageOfGpu)
{
    resetPlot(m_breakdown);
    m_barValues.clear();
    const std::size_t gpus = sim.gpus.size();
    const bool perGpu = gpus <= std::size_t(kMaxBars) || stageOfGpu.size() != gpus;
    std::size_t bars = perGpu ? std::min<std::size_t>(gpus, kMaxBars) : 0;
    if (!perGpu)
        for (std::uint32_t s : stageOfGpu)
            bars = std::max<std::size_t>(bars, s + 1);
    // values[bar] = compute, DP, PP, TP, EP, idle
    m_barValues.assign(bars, std::vector<double>(6, 0.0));
    std::vector<double> members(bars, 0.0);
    for (std::size_t g = 0; g < gpus; ++g) {
        const std::size_t b = perGpu ? g : stageOfGpu[g];
        if (b >= bars)
            continue;
        const network::GpuSummary& s = sim.gpus[g];
        auto& v = m_barValues[b];
        v[0] += s.compute;
        for (int k = 0; k < parallel::kStrategyCount; ++k)
            v[std::size_t(1 + k)] += s.exposed[k];
        v[5] += std::max(0.0, sim.stepSeconds - s.compute - s.exposedTotal());
        members[b] += 1;
    }
    for (std::size_t b = 0; b < bars; ++b)
        for (double& x : m_barValues[b])
            x /= std::max(1.0, members[b]);
    m_bars = int(bars);
    const TimeUnit unit = timeUnitFor(sim.stepSeconds);
    QCPBars* below = nullptr;
    static const char* const names[6] = {"compute", "exposed DP", "exposed PP", "exposed TP", "exposed EP",
                                         "idle (bubble, tail)"};
    for (int k = 0; k < 6; ++k) {
        QVector<double> keys, values;
        double total = 0;
        for (std::size_t b = 0; b < bars; ++b) {
            keys << double(b);
            values << m_barValues[b][std::size_t(k)] * unit.scale;
            total += m_barValues[b][std::size_t(k)];
        }
        if (total <= 0 && k != 0)
            continue;
        auto* bar = new QCPBars(m_breakdown->xAxis, m_breakdown->yAxis);
        bar->setName(tr(names[k]));
        const QColor c = k == 0 ? kCompute : k == 5 ? kIdle : palette::strategy(k - 1);
        bar->setBrush(c);
        bar->setPen(QPen(k == 5 ? QColor(0xcb, 0xd5, 0xe1) : c.darker(120), 0.8));
        bar->setWidthType(QCPBars::wtPlotCoords);
        bar->setWidth(0.75);
        if (below)
            bar->moveAbove(below);
        bar->setData(keys, values, true);
        below = bar;
    }
    m_breakdown->xAxis->setLabel(perGpu ? tr("GPU") : tr("pipeline stage (mean of its GPUs)"));
    m_breakdown->yAxis->setLabel(tr("time (%1)").arg(unit.name));
    m_breakdown->xAxis->setRange(-0.6, double(bars) - 0.4);
    m_breakdown->yAxis->setRange(0, sim.stepSeconds * unit.scale * 1.05);
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(bars > 32 ? 8 : bars > 16 ? 4 : bars > 8 ? 2 : 1);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssNone);
    m_breakdown->xAxis->setTicker(ticker);
    m_breakdown->xAxis->grid()->setVisible(false);
    auto share = [&](double x) { return qs(formatCount(100.0 * x / std::max(sim.stepSeconds, 1e-300), 1)); };
    m_breakdownTitle->setText(tr("Step %1: compute %2 %, exposed communication %3 %, idle %4 % (means over GPUs)")
                                  .arg(qs(formatSeconds(sim.stepSeconds)), share(sim.computeSeconds),
                                       share(sim.exposedCommSeconds), share(sim.idleSeconds)));
    m_breakdown->replot(QCustomPlot::rpQueuedReplot);
}

void WireCharts::setSweep(const scenario::Sweep& sweep)
{
    resetPlot(m_scaling);
    QVector<double> x, eff, share, step;
    double maxStep = 0, maxGpus = 1;
    for (const scenario::SweepPoint& p : sweep.points) {
        maxGpus = std::max(maxGpus, double(p.gpus));
        if (!p.ok)
            continue;
        x << double(p.gpus);
        eff << 100.0 * p.efficiency;
        share << 100.0 * p.commShare;
        step << p.stepSeconds;
        maxStep = std::max(maxStep, p.stepSeconds);
    }
    m_points = int(x.size());
    const TimeUnit unit = timeUnitFor(maxStep);
    for (double& s : step)
        s *= unit.scale;
    auto line = [&](const QVector<double>& y, const QColor& c, const QString& name, QCPAxis* valueAxis,
                    Qt::PenStyle style) {
        QCPGraph* g = m_scaling->addGraph(m_scaling->xAxis, valueAxis);
        g->setPen(QPen(c, 2.2, style));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 7));
        g->setName(name);
        g->setData(x, y, true);
        return g;
    };
    line(eff, palette::categorical(0), tr("efficiency"), m_scaling->yAxis, Qt::SolidLine);
    line(share, palette::categorical(5), tr("comm. share"), m_scaling->yAxis, Qt::SolidLine);
    line(step, palette::kMuted, tr("step time (right)"), m_scaling->yAxis2, Qt::DashLine);
    // The paper's measurements: hollow squares, labelled.
    m_measured = 0;
    QVector<double> mx, my, sx, sy;
    for (const scenario::MeasuredPoint& m : sweep.measured) {
        if (m.efficiency >= 0) {
            mx << double(m.gpus);
            my << 100.0 * m.efficiency;
        }
        if (m.commShare >= 0) {
            sx << double(m.gpus);
            sy << 100.0 * m.commShare;
        }
    }
    auto measured = [&](const QVector<double>& px, const QVector<double>& py, const QColor& c, const QString& name) {
        if (px.isEmpty())
            return;
        QCPGraph* g = m_scaling->addGraph();
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(c, 2.5), Qt::white, 13));
        g->setName(name);
        g->setData(px, py, true);
        for (int i = 0; i < px.size(); ++i) {
            auto* label = new QCPItemText(m_scaling);
            label->position->setCoords(px[i], py[i]);
            // Left of the marker, unless that would leave the chart (the first third of the axis).
            const bool right = px[i] < maxGpus / 3;
            label->setPositionAlignment((right ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
            label->setPadding(right ? QMargins(12, 0, 0, 0) : QMargins(0, 0, 12, 0));
            label->setText(tr("measured %1 %").arg(qs(formatCount(py[i], 1))));
            label->setColor(c.darker(130));
            QFont f = m_scaling->font();
            f.setBold(true);
            label->setFont(f);
        }
        m_measured += int(px.size());
    };
    measured(mx, my, palette::categorical(0), tr("paper: efficiency"));
    measured(sx, sy, palette::categorical(5), tr("paper: share"));
    m_scaling->xAxis->setLabel(tr("GPUs"));
    m_scaling->yAxis->setLabel(tr("efficiency (%)"));
    m_scaling->yAxis2->setVisible(true);
    m_scaling->yAxis2->setLabel(tr("step time (%1)").arg(unit.name));
    m_scaling->xAxis->setRange(0, maxGpus * 1.08);
    m_scaling->yAxis->setRange(0, 105);
    m_scaling->yAxis2->setRange(0, std::max(1e-12, maxStep * unit.scale * 1.1));
    if (x.isEmpty())
        m_scalingTitle->setText(sweep.points.empty() ? tr("Scaling: run a sweep")
                                                     : tr("Scaling: no size of the sweep could run"));
    else
        m_scalingTitle->setText(tr("Scaling from %1 to %2 GPUs (speedup against %3 GPU%4)")
                                    .arg(x.front())
                                    .arg(x.back())
                                    .arg(sweep.baseGpus)
                                    .arg(sweep.baseGpus == 1 ? QString() : QStringLiteral("s")));
    m_scaling->replot();
}

} // namespace tw::ui
