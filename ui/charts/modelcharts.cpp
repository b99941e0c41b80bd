#include "modelcharts.h"
#include "charts/chartframe.h"

#include "base/units.h"
#include "scenario/derive.h"
#include "views/figuretablemodel.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {
QCustomPlot* makePlot(const QString& title, QWidget* parent)
{
    auto* plot = new QCustomPlot(parent);
    keepPlotRoom(plot);
    QFont base = parent->font();
    QFont heading = base;
    heading.setPointSizeF(base.pointSizeF() * 1.1);
    heading.setBold(true);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, heading));
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setTickLabelFont(base);
        axis->setLabelFont(base);
    }
    plot->setMinimumHeight(200);
    // One series of bars, each named on its axis: no legend to read (tests/ui/tst_layout.cpp).
    plot->setProperty("singleSeries", true);
    plot->setInteraction(QCP::iSelectPlottables, true);
    return plot;
}

// Bars that report the figure id of the clicked key.
void connectClicks(QCustomPlot* plot, const QStringList* ids, ModelCharts* charts)
{
    QObject::connect(plot, &QCustomPlot::plottableClick, charts,
                     [ids, charts](QCPAbstractPlottable* plottable, int index, QMouseEvent*) {
                         auto* bars = qobject_cast<QCPBars*>(plottable);
                         if (!bars || index < 0 || index >= bars->data()->size())
                             return;
                         const int key = int(std::lround((bars->data()->constBegin() + index)->key));
                         if (key >= 0 && key < ids->size())
                             emit charts->figureClicked(ids->at(key));
                     });
}
} // namespace

ModelCharts::ModelCharts(QWidget* parent)
    : QObject(parent)
{
    m_params = makePlot(tr("Parameters by component"), parent);
    m_params->setObjectName(QStringLiteral("parametersChart"));
    m_memory = makePlot(tr("Memory per GPU by kind (no sharding)"), parent);
    m_memory->setObjectName(QStringLiteral("memoryChart"));
    connectClicks(m_params, &m_paramIds, this);
    connectClicks(m_memory, &m_memoryIds, this);
    // Hovering a bar shows its figure's formula and inputs.
    for (QCustomPlot* plot : {m_params, m_memory})
        connect(plot, &QCustomPlot::mouseMove, this, [this, plot](QMouseEvent* event) {
            const QString tip = toolTipAt(plot, event->position());
            if (tip.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(event->globalPosition().toPoint(), tip, plot);
        });
}

QWidget* ModelCharts::parametersWidget() const
{
    return m_params;
}

QWidget* ModelCharts::memoryWidget() const
{
    return m_memory;
}

QString ModelCharts::toolTipAt(QCustomPlot* plot, QPointF pos) const
{
    const bool params = plot == m_params;
    if (!params && plot != m_memory)
        return {};
    const QStringList& ids = params ? m_paramIds : m_memoryIds;
    // Parameters: keys run up the y axis; memory: along the x axis.
    const double key = params ? plot->yAxis->pixelToCoord(pos.y()) : plot->xAxis->pixelToCoord(pos.x());
    const int k = int(std::lround(key));
    if (k < 0 || k >= ids.size() || std::fabs(key - k) > 0.4 || !plot->axisRect()->rect().contains(pos.toPoint()))
        return {};
    return figureExplanation(m_figures, ids.at(k).toStdString(), m_units);
}

// Parameters: the non-zero components, biggest at the top, in millions or billions.
void ModelCharts::plotParameters(const FigureSet& f)
{
    struct Part {
        QString id;
        QString label;
        double value;
    };
    std::vector<Part> parts;
    for (const char* id : {"model.params.embedding", "model.params.positions", "model.params.attention", "model.params.mlp",
                           "model.params.experts", "model.params.router", "model.params.norms", "model.params.head"}) {
        const Figure* fig = f.find(id);
        if (fig && fig->value > 0) {
            QString label = qs(fig->label);
            label.remove(QStringLiteral("Parameters: "));
            parts.push_back({QString::fromLatin1(id), label, fig->value});
        }
    }
    std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.value < b.value; });
    const double total = f.valueOf("model.parameters");
    const bool billions = total >= 1e9;
    const double scale = billions ? 1e9 : 1e6;
    auto* pbars = new QCPBars(m_params->yAxis, m_params->xAxis);
    pbars->setWidth(0.65);
    pbars->setPen(QPen(QColor(0x2b, 0x6c, 0xb0)));
    pbars->setBrush(QColor(0x7f, 0xb2, 0xe5));
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double maxValue = 0;
    for (int i = 0; i < int(parts.size()); ++i) {
        pbars->addData(i, parts[std::size_t(i)].value / scale);
        ticker->addTick(i, parts[std::size_t(i)].label);
        m_paramIds << parts[std::size_t(i)].id;
        maxValue = std::max(maxValue, parts[std::size_t(i)].value / scale);
    }
    for (int i = 0; i < int(parts.size()); ++i) {
        // Long bars carry their value inside, short ones just after their end.
        const double v = parts[std::size_t(i)].value / scale;
        const bool inside = v > 0.55 * maxValue;
        auto* text = new QCPItemText(m_params);
        text->position->setCoords(v, i);
        text->setPositionAlignment((inside ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
        text->setPadding(QMargins(8, 0, 6, 0));
        text->setColor(inside ? QColor(0x0f, 0x17, 0x2a) : QColor(0x11, 0x18, 0x27));
        text->setText(qs(formatCount(parts[std::size_t(i)].value)));
    }
    m_params->yAxis->setTicker(ticker);
    m_params->yAxis->setLabel(tr("component"));
    m_params->yAxis->setRange(-0.6, double(parts.size()) - 0.4);
    m_params->xAxis->setRange(0, maxValue * 1.45);
    m_params->xAxis->setLabel(billions ? tr("billions of parameters (P = %1)").arg(qs(formatCount(total)))
                                       : tr("millions of parameters (P = %1)").arg(qs(formatCount(total))));
    m_params->replot();

}

// Memory per GPU, in GB (10^9 B) or GiB (2^30 B) as the viewer chose, with the GPU's capacity.
void ModelCharts::plotMemory(const scenario::Derivation& derivation)
{
    const scenario::Derivation* d = &derivation;
    const FigureSet& f = d->figures;
    const bool binary = m_units.bytes == ByteUnits::Binary;
    const double unit = binary ? 1073741824.0 : 1e9;
    const struct {
        const char* id;
        const char* label;
        QColor color;
    } kinds[] = {
        {"memory.weights_bytes", QT_TR_NOOP("weights"), QColor(0x3b, 0x82, 0xf6)},
        {"memory.gradients_bytes", QT_TR_NOOP("gradients"), QColor(0xf5, 0x9e, 0x0b)},
        {"memory.optimizer_bytes", QT_TR_NOOP("optimizer"), QColor(0x8b, 0x5c, 0xf6)},
        {"memory.activations_bytes", QT_TR_NOOP("activations"), QColor(0x10, 0xb9, 0x81)},
        {"memory.total_bytes", QT_TR_NOOP("total"), QColor(0x47, 0x55, 0x69)},
    };
    auto mticker = QSharedPointer<QCPAxisTickerText>::create();
    double top = 0;
    for (int i = 0; i < int(std::size(kinds)); ++i) {
        const Figure* fig = f.find(kinds[i].id);
        if (!fig)
            continue;
        auto* bars = new QCPBars(m_memory->xAxis, m_memory->yAxis);
        bars->setWidth(0.65);
        bars->setPen(QPen(kinds[i].color.darker(130)));
        bars->setBrush(kinds[i].color);
        bars->addData(m_memoryIds.size(), fig->value / unit);
        mticker->addTick(m_memoryIds.size(), tr(kinds[i].label));
        auto* text = new QCPItemText(m_memory);
        text->position->setCoords(m_memoryIds.size(), fig->value / unit);
        text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        text->setText(qs(formatBytes(fig->value, m_units)));
        m_memoryIds << QString::fromLatin1(kinds[i].id);
        top = std::max(top, fig->value / unit);
    }
    m_capacityGb = f.valueOf("memory.gpu_capacity_bytes") / unit;
    if (std::isfinite(m_capacityGb) && m_capacityGb > 0) {
        auto* line = new QCPItemStraightLine(m_memory);
        line->point1->setCoords(-1, m_capacityGb);
        line->point2->setCoords(10, m_capacityGb);
        line->setPen(QPen(QColor(0xdc, 0x26, 0x26), 2.0, Qt::DashLine));
        // The line's caption sits in the top-left corner, clear of the bars and their labels.
        auto* label = new QCPItemText(m_memory);
        label->position->setType(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(0.02, 0.02);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->setBrush(QColor(255, 255, 255, 230));
        label->setPadding(QMargins(3, 1, 3, 1));
        label->setColor(QColor(0xb9, 0x1c, 0x1c));
        label->setText(tr("- - - capacity of one %1: %2").arg(qs(d->gpu.name.empty() ? d->gpu.id : d->gpu.name),
                                        qs(formatBytes(d->gpu.memoryBytes, m_units))
                                            + (binary ? QString()
                                                      : QStringLiteral(" = ")
                                                            + qs(formatBytes(d->gpu.memoryBytes,
                                                                             DisplayUnits{ByteUnits::Binary, 4})))));
        top = std::max(top, m_capacityGb);
    } else {
        m_capacityGb = 0;
    }
    m_memory->xAxis->setTicker(mticker);
    m_memory->xAxis->setLabel(tr("kind of memory"));
    m_memory->xAxis->setRange(-0.6, double(m_memoryIds.size()) - 0.4);
    m_memory->yAxis->setRange(0, top * 1.18);
    m_memory->yAxis->setLabel(binary ? tr("GiB per GPU (2³⁰ B)") : tr("GB per GPU (10⁹ B)"));
    m_memory->replot();
}

// The two charts of stage 2 for a derivation (empty without one).
void ModelCharts::setDerivation(const scenario::Derivation* d)
{
    m_figures = d ? d->figures : FigureSet{};
    for (QCustomPlot* plot : {m_params, m_memory}) {
        plot->clearPlottables();
        plot->clearItems();
    }
    m_paramIds.clear();
    m_memoryIds.clear();
    m_capacityGb = 0;
    if (!d) {
        m_params->replot();
        m_memory->replot();
        return;
    }
    const FigureSet& f = d->figures;

    plotParameters(f);
    plotMemory(*d);
}

} // namespace tw::ui
