#pragma once
// Stage 5's charts (QCustomPlot):
//  - throughput: one link direction's payload rate over the step, stacked by strategy (DP, PP, TP,
//    EP, from the simulation's link bins: each bin's mean rate over its width), its capacity dashed and
//    the animation's current time as a vertical line;
//  - breakdown: where each GPU's step goes — compute, exposed DP/PP/TP/EP communication, idle
//    (pipeline bubble and tail) — one stacked bar per GPU up to kMaxBars GPUs, else one per pipeline
//    stage (the mean of its GPUs), the step's mean as the title;
//  - scaling: the sweep's efficiency and communication share (%) against GPUs, the step time on the
//    right axis, and the paper's measured points (testbed preset) as large hollow markers labelled
//    with their values.

#include "network/simulate.h"
#include "fabric/topology.h"
#include "scenario/sweep.h"

#include "base/units.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <vector>

class QCPItemStraightLine;
class QCPLayer;
class QCPTextElement;
class QCustomPlot;
class QWidget;

namespace tw::ui {

class WireCharts : public QObject {
    Q_OBJECT
public:
    static constexpr int kMaxBars = 64;

    explicit WireCharts(QWidget* parent);
    ~WireCharts() override;

    // The link whose throughput to draw (nullopt: none; the chart says so).
    void setThroughput(const network::Topology* topology, const network::StepSimulation* simulation,
                       std::optional<network::LinkId> link);
    void setTime(double seconds); // moves the current-time line
    // Byte rates of the throughput chart (GB/s or GiB/s) in the viewer's units; applies at the next
    // setThroughput.
    void setDisplayUnits(DisplayUnits units) { m_units = units; }
    // Per GPU (or per stage when more than kMaxBars GPUs; stageOfGpu[g] = pipeline stage of GPU g).
    void setBreakdown(const network::StepSimulation& simulation, const std::vector<std::uint32_t>& stageOfGpu);
    void setSweep(const scenario::Sweep& sweep);
    // Whether the scaling chart shows a sweep; clearSweep() empties it, its title saying why.
    [[nodiscard]] bool hasSweep() const { return m_points > 0 || m_measured > 0; }
    void clearSweep(const QString& title);
    void clear();

    [[nodiscard]] QCustomPlot* throughputPlot() const { return m_throughput; }
    [[nodiscard]] QCustomPlot* breakdownPlot() const { return m_breakdown; }
    [[nodiscard]] QCustomPlot* scalingPlot() const { return m_scaling; }
    [[nodiscard]] QString throughputTitle() const;
    [[nodiscard]] QString breakdownTitle() const;
    [[nodiscard]] QString scalingTitle() const;
    // Bars of the breakdown (GPUs or stages) and the points of the scaling chart, for tests.
    [[nodiscard]] int breakdownBars() const { return m_bars; }
    [[nodiscard]] int scalingPoints() const { return m_points; }
    [[nodiscard]] int measuredPoints() const { return m_measured; }
    // The stacked bar values of bar i: compute, exposed DP, PP, TP, EP, idle (s).
    [[nodiscard]] std::vector<double> barValues(int bar) const;

private:
    QCustomPlot* m_throughput = nullptr;
    QCustomPlot* m_breakdown = nullptr;
    QCustomPlot* m_scaling = nullptr;
    QCPTextElement* m_throughputTitle = nullptr;
    QCPTextElement* m_breakdownTitle = nullptr;
    QCPTextElement* m_scalingTitle = nullptr;
    QCPItemStraightLine* m_now = nullptr;
    QCPLayer* m_nowLayer = nullptr; // the time line's own buffered layer
    bool m_throughputQueued = false; // a full replot of the throughput chart is queued (it draws the time line too)
    std::vector<std::vector<double>> m_barValues;
    int m_bars = 0, m_points = 0, m_measured = 0;
    DisplayUnits m_units;
};

} // namespace tw::ui
