#pragma once
// Stage 2 charts: parameters by component (horizontal bars) and memory per GPU by kind (bars for
// weights, gradients, optimizer state, activations and their total, the GPU's capacity as a
// horizontal line). Values are core's figures; clicking a bar names its figure.

#include "base/figure.h"
#include "base/units.h"

#include <QObject>
#include <QStringList>

class QCustomPlot;
class QWidget;

namespace tw::scenario {
struct Derivation;
}

namespace tw::ui {

class ModelCharts : public QObject {
    Q_OBJECT
public:
    explicit ModelCharts(QWidget* parent);

    void setDerivation(const scenario::Derivation* derivation);
    // Byte sizes (bar labels, the memory axis: GB or GiB) in the viewer's units; applies at the next
    // setDerivation.
    void setDisplayUnits(DisplayUnits units) { m_units = units; }
    // The tooltip of the bar under a plot position (its figure's formula and inputs); empty when none.
    [[nodiscard]] QString toolTipAt(QCustomPlot* plot, QPointF pos) const;
    [[nodiscard]] QCustomPlot* parametersPlot() const { return m_params; }
    [[nodiscard]] QCustomPlot* memoryPlot() const { return m_memory; }
    // The same plots as widgets, for layouts that do not include qcustomplot.h.
    [[nodiscard]] QWidget* parametersWidget() const;
    [[nodiscard]] QWidget* memoryWidget() const;
    // The figure ids drawn as bars, bottom to top / left to right.
    [[nodiscard]] const QStringList& parameterFigures() const { return m_paramIds; }
    [[nodiscard]] const QStringList& memoryFigures() const { return m_memoryIds; }
    // The capacity line's height in the memory axis's unit (GB, or GiB with binary units).
    [[nodiscard]] double capacityLineGb() const { return m_capacityGb; }

signals:
    void figureClicked(const QString& id);

private:
    void plotParameters(const FigureSet& figures);
    void plotMemory(const scenario::Derivation& derivation);
    QCustomPlot* m_params = nullptr;
    QCustomPlot* m_memory = nullptr;
    QStringList m_paramIds;
    QStringList m_memoryIds;
    double m_capacityGb = 0;
    FigureSet m_figures;
    DisplayUnits m_units;
};

} // namespace tw::ui
