#include "kernelchart.h"

#include "charts/chartframe.h"
#include "views/palette.h"

#include "model/kernels.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <QToolTip>

#include <algorithm>
#include <array>
#include <cmath>

namespace tw::ui {

namespace {
QString timeText(double s)
{
    return qs(formatSeconds(s));
}

const char* passName(model::KernelPass p)
{
    switch (p) {
    case model::KernelPass::Forward: return QT_TRANSLATE_NOOP("tw::ui::KernelChart", "forward");
    case model::KernelPass::Backward: return QT_TRANSLATE_NOOP("tw::ui::KernelChart", "backward");
    case model::KernelPass::Recompute: return QT_TRANSLATE_NOOP("tw::ui::KernelChart", "recompute");
    }
    return "";
}

// "150 TFLOP/s achieved (48 % of the 312 TFLOP/s peak)"; "1.57 TB/s (77 % of 2.04 TB/s)".
QString rate(double value, double peak, double unit, const QString& name)
{
    QString text = KernelChart::tr("%1 %2 achieved").arg(QString::number(value / unit, 'f', value / unit < 10 ? 2 : 1), name);
    if (peak > 0)
        text += KernelChart::tr(" (%1 % of %2 %3)")
                    .arg(QString::number(100.0 * value / peak, 'f', 0), QString::number(peak / unit, 'f', 0), name);
    return text;
}

QString tooltipFor(const model::Kernel& k, double peakFlops, double bandwidth)
{
    const QString kind = k.kind == model::KernelClass::Gemm        ? KernelChart::tr("GEMM")
                         : k.kind == model::KernelClass::Attention ? KernelChart::tr("attention")
                                                                   : KernelChart::tr("memory-bound kernel");
    QString tip = QStringLiteral("<b>%1</b> (%2)<br>%3 %4").arg(qs(k.name).toHtmlEscaped(), KernelChart::tr(passName(k.pass)), kind,
                                                               qs(k.shape).toHtmlEscaped());
    if (k.count > 1)
        tip += KernelChart::tr(", %1 launches").arg(k.count);
    tip += QStringLiteral("<br>") + KernelChart::tr("time %1").arg(timeText(k.seconds));
    const double executed = k.hardwareFlops > 0 ? k.hardwareFlops : k.flops;
    if (k.seconds <= 0)
        return tip;
    if (executed > 0)
        tip += QStringLiteral(" · ") + KernelChart::tr("%1 FLOP").arg(qs(formatCount(executed))) + QStringLiteral(" · ")
               + rate(executed / k.seconds, peakFlops, 1e12, QStringLiteral("TFLOP/s"));
    if (k.bytes > 0)
        tip += QStringLiteral("<br>") + KernelChart::tr("%1 moved · ").arg(qs(formatBytes(k.bytes)))
               + rate(k.bytes / k.seconds, bandwidth, 1e9, QStringLiteral("GB/s"));
    tip += QStringLiteral("<br><i>")
           + (k.computeBound ? KernelChart::tr("compute-bound: the tensor cores' rate sets the time (tiles, waves, "
                                               "the GPU's achievable fraction)")
                             : KernelChart::tr("memory-bound: the bytes moved ÷ the achievable memory bandwidth set the "
                                               "time"))
           + QStringLiteral("</i>");
    return tip;
}
} // namespace

KernelChart::KernelChart(QWidget* parent)
    : QObject(parent)
{
    m_plot = new QCustomPlot(parent);
    m_plot->setObjectName(QStringLiteral("kernelChart"));
    keepPlotRoom(m_plot);
    m_plot->setMouseTracking(true);
    QFont base = parent ? parent->font() : QFont();
    m_title = frameChart(m_plot, base, tr("One layer by kernel"));
    m_plot->xAxis->grid()->setVisible(false);
    m_plot->xAxis->setSubTicks(false);
    m_plot->xAxis->setTickLength(0, 0);
    m_plot->yAxis->grid()->setPen(QPen(QColor(0xd1, 0xd5, 0xdb), 1, Qt::DotLine));
    m_plot->setMinimumHeight(240);
    connect(m_plot, &QCustomPlot::mouseMove, this, &KernelChart::onMouseMove);
    clear();
}

KernelChart::~KernelChart() = default;

QWidget* KernelChart::widget() const
{
    return m_plot;
}

QString KernelChart::title() const
{
    return m_title->text();
}

QStringList KernelChart::legendNames() const
{
    return tw::ui::legendNames(m_plot);
}

void KernelChart::clear()
{
    reset();
    m_title->setText(tr("One layer by kernel: no plan"));
    m_plot->replot();
}

void KernelChart::setKernels(const model::KernelList& layer, double peakFlops, double bandwidth, const QString& what,
                             bool timed)
{
    reset();
    if (layer.kernels.empty()) {
        m_title->setText(tr("One layer by kernel: no kernels"));
        m_plot->replot();
        return;
    }
    static const std::array<const char*, 3> classNames{QT_TR_NOOP("GEMMs"), QT_TR_NOOP("attention"),
                                                      QT_TR_NOOP("memory-bound")};
    const std::array<QColor, 3> colors{palette::categorical(0), palette::categorical(1), palette::categorical(2)};
    std::array<QVector<double>, 3> keys, values;
    double largest = 0;
    for (const model::Kernel& k : layer.kernels)
        largest = std::max(largest, k.seconds);
    m_scale = largest >= 1e-3 ? 1e3 : 1e6;
    const QString unit = largest >= 1e-3 ? tr("ms") : tr("µs");
    // Bars in the list's order (forward, backward, recompute), a one-bar gap between the passes.
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double key = 0;
    for (model::KernelPass pass : {model::KernelPass::Forward, model::KernelPass::Backward, model::KernelPass::Recompute}) {
        const double first = key;
        for (const model::Kernel& k : layer.kernels) {
            if (k.pass != pass)
                continue;
            const auto c = std::size_t(k.kind);
            keys[c] << key;
            values[c] << k.seconds * m_scale;
            m_keys.push_back(key);
            m_seconds.push_back(k.seconds);
            m_tooltips << tooltipFor(k, peakFlops, bandwidth);
            key += 1;
        }
        if (key == first)
            continue;
        const QString group = tr("%1\n%2").arg(tr(passName(pass)), timeText(layer.seconds(pass)));
        m_groups << group;
        ticker->addTick((first + key - 1) / 2, group);
        key += 1;
    }
    for (std::size_t c = 0; c < 3; ++c) {
        if (keys[c].isEmpty())
            continue;
        auto* bar = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bar->setName(tr(classNames[c]));
        bar->setBrush(colors[c]);
        bar->setPen(QPen(colors[c].darker(130), 0.8));
        bar->setWidthType(QCPBars::wtPlotCoords);
        bar->setWidth(0.75);
        bar->setData(keys[c], values[c], true);
    }
    m_plot->xAxis->setTicker(ticker);
    // Room on the right for the last group's label when it is one bar wide (selective recompute, flash).
    m_plot->xAxis->setRange(-1.5, std::max(key + 0.5, 8.0));
    m_plot->xAxis->setLabel(tr("kernels in launch order — hover a bar: shape, rate, bound"));
    m_plot->yAxis->setLabel(tr("time per micro-batch (%1)").arg(unit));
    m_plot->yAxis->setRange(0, largest * m_scale * 1.12);
    const double fwd = layer.seconds(model::KernelPass::Forward);
    const double bwd = layer.backwardSeconds();
    m_title->setText((timed ? tr("%1 on one GPU, by kernel\nforward %2 · backward %3 (with recomputation)")
                            : tr("%1 on one GPU, by kernel\nforward %2 · backward %3\n(not used: the scenario "
                                 "sets a fixed rate)"))
                         .arg(what, timeText(fwd), timeText(bwd)));
    m_plot->replot();
}

void KernelChart::reset()
{
    m_plot->clearItems();
    m_plot->clearPlottables();
    m_keys.clear();
    m_seconds.clear();
    m_tooltips.clear();
    m_groups.clear();
}

int KernelChart::barAt(const QPointF& pixel) const
{
    const QCPAxisRect* rect = m_plot->axisRect();
    if (!rect->rect().contains(pixel.toPoint()))
        return -1;
    const double key = m_plot->xAxis->pixelToCoord(pixel.x());
    for (std::size_t i = 0; i < m_keys.size(); ++i)
        if (std::abs(key - m_keys[i]) <= 0.4)
            return int(i);
    return -1;
}

QPointF KernelChart::barCentre(int bar) const
{
    if (bar < 0 || std::size_t(bar) >= m_keys.size())
        return {};
    const auto i = std::size_t(bar);
    return {m_plot->xAxis->coordToPixel(m_keys[i]), m_plot->yAxis->coordToPixel(m_seconds[i] * m_scale / 2)};
}

void KernelChart::onMouseMove(QMouseEvent* event)
{
    const int bar = barAt(event->position());
    if (bar < 0) {
        QToolTip::hideText();
        m_plot->setToolTip({});
        return;
    }
    m_plot->setToolTip(m_tooltips[bar]);
    QToolTip::showText(event->globalPosition().toPoint(), m_tooltips[bar], m_plot);
}

} // namespace tw::ui
