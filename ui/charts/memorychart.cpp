#include "memorychart.h"

#include "charts/chartframe.h"
#include "views/palette.h"

#include "parallel/memory.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <algorithm>

namespace tw::ui {

namespace {
const QColor kWarn(0xC0, 0x10, 0x10);
const QColor kReserve(0xcb, 0xd5, 0xe1);
// The allocator's headroom: paler than the reserve, hatched so that it reads as space kept free.
const QColor kHeadroom(0xe8, 0xed, 0xf3);
constexpr int kBands = 7;

// The display unit of the axis: GB/GiB for big values, MB/MiB below 1 GB.
struct ByteAxis {
    double scale;
    QString name;
};
ByteAxis byteAxisFor(double largest, const DisplayUnits& units)
{
    const bool binary = units.bytes == ByteUnits::Binary;
    const double giga = binary ? 1024.0 * 1024 * 1024 : 1e9, mega = binary ? 1024.0 * 1024 : 1e6;
    if (largest >= giga)
        return {1.0 / giga, binary ? QStringLiteral("GiB") : QStringLiteral("GB")};
    return {1.0 / mega, binary ? QStringLiteral("MiB") : QStringLiteral("MB")};
}
} // namespace

MemoryChart::MemoryChart(QWidget* parent)
    : QObject(parent)
{
    m_plot = new QCustomPlot(parent);
    m_plot->setObjectName(QStringLiteral("memoryChart"));
    keepPlotRoom(m_plot);
    QFont base = parent ? parent->font() : QFont();
    m_title = frameChart(m_plot, base, tr("Memory per GPU"));
    m_plot->xAxis->grid()->setVisible(false);
    m_plot->xAxis->setSubTicks(false);
    m_plot->yAxis->grid()->setPen(QPen(QColor(0xd1, 0xd5, 0xdb), 1, Qt::DotLine));
    m_plot->legend->setWrap(4);
    m_plot->setMinimumHeight(220);
    clear();
}

MemoryChart::~MemoryChart() = default;

QWidget* MemoryChart::widget() const
{
    return m_plot;
}

QString MemoryChart::title() const
{
    return m_title->text();
}

QStringList MemoryChart::legendNames() const
{
    return tw::ui::legendNames(m_plot);
}

void MemoryChart::clear()
{
    m_plot->clearItems();
    m_plot->clearPlottables();
    m_values.clear();
    m_capacity = 0;
    m_overflowLabels.clear();
    m_title->setText(tr("Memory per GPU"));
    m_plot->replot();
}

void MemoryChart::setMemory(const parallel::PlanMemory& memory, const DisplayUnits& units)
{
    m_plot->clearItems();
    m_plot->clearPlottables();
    m_overflowLabels.clear();
    const std::size_t stages = memory.roles.size();
    m_values.assign(stages, {});
    double largest = memory.capacityBytes;
    for (std::size_t s = 0; s < stages; ++s) {
        const parallel::RoleMemory& r = memory.roles[s];
        m_values[s] = {r.weights,  r.gradients,         r.optimizer, r.activations,
                       r.buffers, memory.reserveBytes, memory.allocatorHeadroomBytes};
        largest = std::max(largest, r.total + memory.keptFreeBytes());
    }
    m_capacity = memory.capacityBytes;
    if (stages == 0) {
        m_title->setText(tr("Memory per GPU: no plan"));
        m_plot->replot();
        return;
    }
    const ByteAxis axis = byteAxisFor(largest, units);
    static const char* const names[kBands] = {QT_TR_NOOP("weights"),          QT_TR_NOOP("gradients"),
                                              QT_TR_NOOP("optimizer state"),  QT_TR_NOOP("activations"),
                                              QT_TR_NOOP("buffers"),          QT_TR_NOOP("framework reserve"),
                                              QT_TR_NOOP("allocator headroom")};
    const QColor colors[kBands] = {palette::categorical(0), palette::categorical(4), palette::categorical(2),
                                   palette::categorical(1), palette::categorical(3), kReserve, kHeadroom};
    QCPBars* below = nullptr;
    for (int k = 0; k < kBands; ++k) {
        QVector<double> keys, values;
        for (std::size_t s = 0; s < stages; ++s) {
            keys << double(s);
            values << m_values[s][std::size_t(k)] * axis.scale;
        }
        auto* bar = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bar->setName(tr(names[k]));
        bar->setBrush(k == kBands - 1 ? QBrush(kReserve, Qt::BDiagPattern) : QBrush(colors[k]));
        bar->setPen(QPen(colors[k].darker(130), 0.8));
        bar->setWidthType(QCPBars::wtPlotCoords);
        bar->setWidth(0.7);
        bar->setStackingGap(0);
        if (below)
            bar->moveAbove(below);
        bar->setData(keys, values, true);
        below = bar;
    }
    // The capacity: a dashed red line across, named in the legend.
    const double cap = memory.capacityBytes * axis.scale;
    auto* capacity = new QCPGraph(m_plot->xAxis, m_plot->yAxis);
    capacity->setName(tr("capacity %1").arg(qs(formatBytes(memory.capacityBytes, units))));
    capacity->setPen(QPen(kWarn, 2, Qt::DashLine));
    // A few stages are drawn at the width many would have, not as one slab across the chart.
    const double left = stages < 4 ? -0.5 - (4.0 - double(stages)) / 2 : -0.6;
    const double right = stages < 4 ? double(stages) - 0.5 + (4.0 - double(stages)) / 2 : double(stages) - 0.4;
    capacity->setData(QVector<double>{left, right}, QVector<double>{cap, cap});
    // Over the line: the overflow above the bar.
    QFont labelFont = m_plot->xAxis->tickLabelFont();
    labelFont.setBold(true);
    std::size_t over = 0;
    for (std::size_t s = 0; s < stages; ++s) {
        const double need = memory.roles[s].total + memory.keptFreeBytes();
        if (need <= memory.capacityBytes)
            continue;
        ++over;
        if (stages > 24)
            continue; // too narrow for a label: the title counts them
        const QString label = tr("+%1").arg(qs(formatBytes(need - memory.capacityBytes, units)));
        auto* text = new QCPItemText(m_plot);
        text->position->setCoords(double(s), need * axis.scale);
        text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        text->setFont(labelFont);
        text->setColor(kWarn);
        text->setText(label);
        text->setSelectable(false);
        m_overflowLabels << label;
    }
    m_plot->xAxis->setLabel(tr("pipeline stage (every GPU of a stage holds the same)"));
    m_plot->yAxis->setLabel(tr("memory per GPU (%1)").arg(axis.name));
    m_plot->xAxis->setRange(left, right);
    m_plot->yAxis->setRange(0, largest * axis.scale * 1.15);
    // Ticks on the stages only (none in the margins of a short pipeline).
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const std::size_t step = stages > 32 ? 8 : stages > 16 ? 4 : stages > 8 ? 2 : 1;
    for (std::size_t s = 0; s < stages; s += step)
        ticker->addTick(double(s), QString::number(s));
    m_plot->xAxis->setTicker(ticker);
    const QString peak = qs(formatBytes(memory.peakBytes + memory.keptFreeBytes(), units));
    m_title->setText(over == 0 ? tr("Memory per GPU: every GPU fits (largest %1 of %2, stage %3)")
                                     .arg(peak, qs(formatBytes(memory.capacityBytes, units)))
                                     .arg(memory.peakStage)
                               : tr("Memory per GPU: %1 of %2 stages do not fit (largest %3 of %4, stage %5)")
                                     .arg(over)
                                     .arg(stages)
                                     .arg(peak, qs(formatBytes(memory.capacityBytes, units)))
                                     .arg(memory.peakStage));
    m_plot->replot();
}

} // namespace tw::ui
