#pragma once
// Stage 3's memory per GPU under the plan: one stacked bar per pipeline stage (every GPU of a stage
// holds the same bytes) — weights, gradients, optimizer state, activations, buffers and the framework
// reserve — against a dashed line at one GPU's capacity; a bar over the line is labelled with its
// overflow. The numbers are core's PlanMemory (parallel/memory.h); the chart only draws them.

#include "base/units.h"

#include <QObject>
#include <QString>

#include <vector>

class QCPTextElement;
class QCustomPlot;
class QWidget;

namespace tw::parallel {
struct PlanMemory;
}

namespace tw::ui {

class MemoryChart : public QObject {
    Q_OBJECT
public:
    explicit MemoryChart(QWidget* parent);
    ~MemoryChart() override;

    void setMemory(const parallel::PlanMemory& memory, const DisplayUnits& units = {});
    void clear();
    [[nodiscard]] QCustomPlot* plot() const { return m_plot; }
    [[nodiscard]] QWidget* widget() const;
    [[nodiscard]] QString title() const;
    // Bars drawn (pipeline stages) and, per stage, its stacked values in bytes in legend order.
    [[nodiscard]] int barCount() const { return int(m_values.size()); }
    [[nodiscard]] const std::vector<std::vector<double>>& values() const { return m_values; }
    [[nodiscard]] QStringList legendNames() const;
    [[nodiscard]] double capacityLine() const { return m_capacity; } // bytes; 0 when none
    [[nodiscard]] QStringList overflowLabels() const { return m_overflowLabels; }

private:
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    std::vector<std::vector<double>> m_values;
    double m_capacity = 0;
    QStringList m_overflowLabels;
};

} // namespace tw::ui
