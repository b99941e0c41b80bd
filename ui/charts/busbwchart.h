#pragma once
// Stage 4, "Bus bandwidth (NCCL)" (issue #17): the plot people draw from nccl-tests — busbw against
// message size, 8 B … 8 GiB on log axes, one curve per NCCL algorithm the operation has and the call's
// group enables (each at its best protocol per size), NCCL's own pick (auto) as a thick line under them,
// and a marker at the played call's size. The numbers are nccl::sweep (what `tokenwire-cli busbw`
// prints) on the group's system (collective::groupSystem); predictions of NCCL's model (docs/nccl.md).

#include "base/units.h"
#include "collective/nccl.h"
#include "collective/ncclgraph.h"

#include <QWidget>

#include <optional>
#include <vector>

class QCPGraph;
class QCustomPlot;
class QLabel;

namespace tw::ui {

class BusBwChart : public QWidget {
    Q_OBJECT
public:
    struct Curve {
        QString name;                           // "ring", "tree", … "p2p", or "NCCL's pick"
        std::optional<nccl::Algorithm> algorithm; // nullopt: p2p or the pick
        std::vector<double> bytes;              // nccl-tests' sizes
        std::vector<double> busbw;              // B/s
        std::vector<nccl::Prediction> rows;
    };

    explicit BusBwChart(QWidget* parent = nullptr);

    // The curves of `op` on `system`, the marker at `callBytes` (NCCL's pick there, or `chosen` when the
    // scenario names one of NCCL's algorithms). Redraws.
    void setCall(const nccl::System& system, collective::Op op, double callBytes,
                 std::optional<nccl::Algorithm> chosen = std::nullopt);
    // No system (the group could not be built, one rank …): an empty chart saying why.
    void clear(const QString& why);
    void setDisplayUnits(DisplayUnits units);

    [[nodiscard]] QCustomPlot* plot() const { return m_plot; }
    [[nodiscard]] const std::vector<Curve>& curves() const { return m_curves; } // the algorithms, then the pick
    [[nodiscard]] QCPGraph* graphOf(const QString& name) const;                 // nullptr when not drawn
    [[nodiscard]] QCPGraph* pickGraph() const { return m_pickGraph; }
    [[nodiscard]] QCPGraph* markerGraph() const { return m_markerGraph; }
    [[nodiscard]] QString summary() const;
    [[nodiscard]] double callBytes() const { return m_callBytes; }
    [[nodiscard]] double lastMilliseconds() const { return m_ms; } // compute + replot of the last setCall

private:
    void redraw();

    QCustomPlot* m_plot = nullptr;
    QLabel* m_summary = nullptr;
    std::vector<Curve> m_curves;
    std::vector<QCPGraph*> m_graphs;
    QCPGraph* m_pickGraph = nullptr;
    QCPGraph* m_markerGraph = nullptr;
    std::optional<nccl::Prediction> m_marker;
    collective::Op m_op = collective::Op::AllReduce;
    double m_callBytes = 0;
    QString m_title;
    QString m_note;
    DisplayUnits m_units;
    double m_ms = 0;
};

} // namespace tw::ui
