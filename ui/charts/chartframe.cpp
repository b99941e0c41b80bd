#include "chartframe.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

namespace tw::ui {

QCPTextElement* frameChart(QCustomPlot* plot, const QFont& base, const QString& title)
{
    QFont heading = base;
    heading.setPointSizeF(base.pointSizeF() * 1.1);
    heading.setBold(true);
    plot->plotLayout()->insertRow(0);
    auto* element = new QCPTextElement(plot, title, heading);
    plot->plotLayout()->addElement(0, 0, element);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setTickLabelFont(base);
        axis->setLabelFont(base);
    }
    legendBelow(plot, base);
    return element;
}

void legendBelow(QCustomPlot* plot, const QFont& font)
{
    plot->legend->setVisible(true);
    plot->legend->setFont(font);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot->axisRect()->insetLayout()->take(plot->legend);
    auto* legendRow = new QCPLayoutGrid;
    plot->plotLayout()->addElement(2, 0, legendRow);
    legendRow->addElement(0, 0, new QCPLayoutElement(plot));
    legendRow->addElement(0, 1, plot->legend);
    legendRow->addElement(0, 2, new QCPLayoutElement(plot));
    legendRow->setMargins(QMargins(0, 0, 0, 4));
    plot->plotLayout()->setRowStretchFactor(2, 0.001);
}

QStringList legendNames(const QCustomPlot* plot)
{
    QStringList names;
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            names << item->plottable()->name();
    return names;
}

namespace {
const char* const kResultGeneration = "tokenwireResultGeneration";
const char* const kMinimumPlotHeight = "tokenwireMinimumPlotHeight";

// The total height of the rows of `plot`'s axis rects, and how many rows they are.
std::pair<int, int> plotRows(const QCustomPlot* plot)
{
    QList<int> tops;
    int height = 0;
    for (const QCPAxisRect* rect : plot->axisRects()) {
        if (!rect->visible() || tops.contains(rect->top()))
            continue;
        tops << rect->top();
        height += rect->height();
    }
    return {height, int(tops.size())};
}

// Lays a chart out again when it is shown: one drawn while hidden (another tab) was laid out at a
// size it no longer has, and showing it at an unchanged size replots nothing.
class RoomKeeper : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Show)
            static_cast<QCustomPlot*>(watched)->replot(QCustomPlot::rpQueuedReplot);
        return false;
    }
};
} // namespace

void setMinimumPlotHeight(QCustomPlot* plot, int pixels)
{
    plot->setProperty(kMinimumPlotHeight, pixels);
}

void keepPlotRoom(QCustomPlot* plot)
{
    const int floor = plot->minimumHeight(); // a minimum the chart set itself stays the least
    // The viewport and rows when the minimum was last raised: when the plot grew since and its rows
    // did not (an element capping their height), it is not raised again, or it would grow forever.
    struct Raised {
        int viewport = -1;
        int rows = 0;
    };
    auto raised = std::make_shared<Raised>();
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot, floor, raised] {
        if (!plot->isVisible() || plot->height() <= 1)
            return;
        const auto [rowsHeight, rows] = plotRows(plot);
        if (rows == 0 || rowsHeight <= 0)
            return;
        const int perRow = std::max(kMinPlotHeight, plot->property(kMinimumPlotHeight).toInt());
        // The viewport is the size this layout was computed for (the widget may have been resized since).
        const int viewport = plot->viewport().height();
        const int need = std::max(floor, std::max(0, viewport - rowsHeight) + perRow * rows);
        // A pixel less is kept (no shrinking back and forth); a pixel more is not (the area would be 119 px).
        if (need <= plot->minimumHeight() && plot->minimumHeight() - need <= 1)
            return;
        if (need > plot->minimumHeight()) {
            if (raised->viewport >= 0 && viewport > raised->viewport && rowsHeight <= raised->rows)
                return;
            *raised = {viewport, rowsHeight};
        }
        // After this replot: a minimum set during it resizes the plot at once, and the replot that
        // resize asks for is dropped while one runs, leaving the axes laid out for the old height.
        QMetaObject::invokeMethod(plot, [plot, need] {
            plot->setMinimumHeight(need);
            plot->replot(QCustomPlot::rpQueuedReplot);
        }, Qt::QueuedConnection);
    });
    plot->installEventFilter(new RoomKeeper(plot));
}

void setResultGeneration(QCustomPlot* plot, quint64 generation)
{
    plot->setProperty(kResultGeneration, QVariant::fromValue(generation));
}

std::optional<quint64> resultGeneration(const QCustomPlot* plot)
{
    const QVariant v = plot->property(kResultGeneration);
    if (!v.isValid())
        return std::nullopt;
    return v.value<quint64>();
}

} // namespace tw::ui
