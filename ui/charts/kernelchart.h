#pragma once
// Stage 2's kernel chart: one Transformer layer's time on one GPU, split by kernel (core's kernel model,
// model/kernels.h, docs/compute.md). One bar per kernel, grouped forward | backward | recompute and
// coloured by class (GEMM, attention, memory-bound); hovering a bar tells its shape, time, achieved
// TFLOP/s or GB/s and why (compute- or memory-bound). The numbers are core's; the chart only draws them.

#include "base/units.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <vector>

class QCPTextElement;
class QCustomPlot;
class QMouseEvent;
class QWidget;

namespace tw::model {
struct KernelList;
}

namespace tw::ui {

class KernelChart : public QObject {
    Q_OBJECT
public:
    explicit KernelChart(QWidget* parent);
    ~KernelChart() override;

    // `layer` = one layer's kernels (forward, backward, recompute), `what` names it ("one dense layer"),
    // `timed` = the plan's times come from these kernels (false: a fixed rate or per-layer time is set).
    // `peakFlops` (the tensor-core peak of the activations' precision) and `bandwidth` (B/s) only word
    // the tooltips ("… of the peak").
    void setKernels(const model::KernelList& layer, double peakFlops, double bandwidth, const QString& what, bool timed);
    void clear();
    [[nodiscard]] QCustomPlot* plot() const { return m_plot; }
    [[nodiscard]] QWidget* widget() const;
    [[nodiscard]] QString title() const;
    [[nodiscard]] QStringList legendNames() const;
    // One entry per bar, in drawing order: the kernel's time (s) and its tooltip.
    [[nodiscard]] int barCount() const { return int(m_seconds.size()); }
    [[nodiscard]] const std::vector<double>& seconds() const { return m_seconds; }
    [[nodiscard]] const QStringList& tooltips() const { return m_tooltips; }
    [[nodiscard]] QStringList groupLabels() const { return m_groups; }
    // The bar under a point of the plot (−1: none) and its pixel centre (for tests driving the mouse).
    [[nodiscard]] int barAt(const QPointF& pixel) const;
    [[nodiscard]] QPointF barCentre(int bar) const;

private:
    void reset();
    void onMouseMove(QMouseEvent* event);

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    std::vector<double> m_keys, m_seconds;
    double m_scale = 1e3; // s → axis unit
    QStringList m_tooltips, m_groups;
};

} // namespace tw::ui
