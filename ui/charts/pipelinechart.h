#pragma once
// Stage 3's pipeline schedule as a Gantt chart: one row per stage (stage 0 at the top), time of one
// optimizer step across; forward blocks blue, backward orange (darker for later model chunks when
// interleaved), labelled with their micro-batch when wide enough; idle time (the bubble) stays
// empty on a grey lane. The title gives core's makespan and bubble fraction. Above kMaxBlocks
// blocks each stage is drawn as aggregated bars (the dominant phase per time slice). The optimizer
// step (core's kernel model, plan.optimizer_step_seconds) follows the makespan on every stage: the
// step the MFU figures divide by (docs/compute.md).

#include <QObject>
#include <QPoint>
#include <QString>

#include <utility>
#include <vector>

class QCPTextElement;
class QCustomPlot;
class QWidget;

namespace tw::parallel {
struct PipelineTimeline;
struct PipelineBlock;
}

namespace tw::ui {

class PipelineBlockLayer;

class PipelineChart : public QObject {
    Q_OBJECT
public:
    static constexpr int kMaxBlocks = 3000;  // drawn one rectangle each up to here
    static constexpr int kMaxLabels = 1500;  // micro-batch labels only up to here

    explicit PipelineChart(QWidget* parent);
    ~PipelineChart() override;

    // `optimizerSeconds` > 0 draws the optimizer step after the makespan on every stage.
    void setTimeline(const parallel::PipelineTimeline& timeline, double optimizerSeconds = 0);
    void clear();
    [[nodiscard]] QCustomPlot* plot() const { return m_plot; }
    [[nodiscard]] QWidget* widget() const;
    // Rectangles drawn for blocks (one per block, or per aggregated bar).
    [[nodiscard]] int drawnBlocks() const { return m_drawn; }
    [[nodiscard]] bool aggregated() const { return m_aggregated; }
    [[nodiscard]] int stageCount() const { return m_stages; }
    [[nodiscard]] QString title() const;
    // Micro-batch labels currently shown (after the last replot).
    [[nodiscard]] int visibleLabels() const;
    // The optimizer-step blocks drawn (one per stage) and their [start, end] in seconds; 0 blocks without one.
    [[nodiscard]] int optimizerBlocks() const { return m_optimizerBlocks; }
    [[nodiscard]] std::pair<double, double> optimizerSpan() const { return m_optimizerSpan; }

signals:
    // A block was clicked (not in aggregated mode).
    void blockClicked(int stage, int microBatch, int chunk, bool backward);

private:
    // setTimeline's steps (pipelinechart.cpp).
    void addLegend(bool interleaved, bool optimizer);
    void addEachBlock(const parallel::PipelineTimeline& t);
    void addAggregatedBlocks(const parallel::PipelineTimeline& t, int stages, double makespan);
    void setStageTicks(int every);
    void updateLabels();

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    // The blocks (or aggregated bars) and their labels, drawn by one layerable on a layer of their own.
    PipelineBlockLayer* m_layer = nullptr;
    std::vector<parallel::PipelineBlock> m_blocks; // for clicks
    QPoint m_pressAt;
    int m_drawn = 0;
    int m_optimizerBlocks = 0;
    std::pair<double, double> m_optimizerSpan{0, 0};
    int m_stages = 0;
    int m_tickEvery = 0; // a stage label every k-th row (updateLabels: as the rows' height allows)
    bool m_aggregated = false;
    double m_scale = 1e3; // seconds → axis unit
};

} // namespace tw::ui
