#include "chartframe.h"

#include <qcustomplot.h>

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
} // namespace

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
