#pragma once
// Stage 4's comparison of algorithms: three charts — (1) total bytes on the wire, (2) bytes the
// busiest rank sends, (3) Hockney α–β time — each with two log–log panels: against N (M fixed at
// the call's M) and against M (N fixed at the call's N). One line per algorithm of the operation
// (collective::algorithmsFor), the chosen one thicker and labelled, a ring marking the call itself.
// Every value is collective::count() of a real schedule. N samples 2…16, then ×1.5/×2 steps up to
// 1,024; the pipelined trees and Bruck All-to-All (O(N log N) or O(N²) per step) stop at
// kTreeMaxRanks, which their legend entry says. AlgorithmTableModel holds the same numbers for the
// call's (N, M): algorithm, steps, total bytes, busiest rank, time, busbw.

#include "base/units.h"
#include "collective/schedule.h"

#include <QAbstractTableModel>
#include <QObject>
#include <QString>

#include <array>
#include <optional>
#include <vector>

class QCPGraph;
class QCPTextElement;
class QCustomPlot;
class QWidget;

namespace tw::ui {

class CollectiveCharts : public QObject {
    Q_OBJECT
public:
    enum Metric { TotalBytes, BusiestRankBytes, Time, MetricCount };
    enum Sweep { VersusRanks, VersusBytes, SweepCount };
    static constexpr std::uint64_t kMaxRanks = 1024;
    static constexpr std::uint64_t kTreeMaxRanks = 256;
    // Hierarchical's node size in the N sweep when the call does not set one.
    static constexpr std::uint64_t kDefaultRanksPerNode = 8;

    struct Series {
        collective::Algorithm algorithm{};
        QString name;          // as in the legend, with its cap ("binary-tree (N ≤ 256)")
        std::vector<double> x; // N or M
        std::vector<double> y; // bytes or seconds (points ≤ 0 are left out: log axes)
        bool highlighted = false;
    };

    explicit CollectiveCharts(QWidget* parent);
    ~CollectiveCharts() override;

    // Recomputes every series for the call's operation; `spec.algorithm` is highlighted.
    void setSpec(const collective::ScheduleSpec& spec, const collective::LinkModel& link = {});
    [[nodiscard]] const collective::ScheduleSpec& spec() const { return m_spec; }

    [[nodiscard]] QCustomPlot* plot(Metric metric) const { return m_plots[std::size_t(metric)]; }
    [[nodiscard]] std::vector<QCustomPlot*> plots() const { return {m_plots.begin(), m_plots.end()}; }
    [[nodiscard]] const std::vector<Series>& series(Metric metric, Sweep sweep) const
    {
        return m_series[std::size_t(metric)][std::size_t(sweep)];
    }
    // The drawn graph of an algorithm (nullptr when the operation has no such algorithm).
    [[nodiscard]] QCPGraph* graph(Metric metric, Sweep sweep, collective::Algorithm algorithm) const;
    // The N and M samples of the last setSpec.
    [[nodiscard]] const std::vector<std::uint64_t>& rankSamples() const { return m_rankSamples; }
    [[nodiscard]] const std::vector<double>& byteSamples() const { return m_byteSamples; }
    // Wall-clock time of the last setSpec's count() calls.
    [[nodiscard]] double computeMilliseconds() const { return m_computeMs; }
    [[nodiscard]] QString title(Metric metric) const;
    // Byte sizes of the titles, labels and the bytes axes in the viewer's units (the M axis keeps
    // binary steps: its samples are powers of two). Redraws.
    void setDisplayUnits(DisplayUnits units);

private:
    void redraw();

    collective::ScheduleSpec m_spec;
    collective::LinkModel m_link;
    std::array<QCustomPlot*, MetricCount> m_plots{};
    std::array<QCPTextElement*, MetricCount> m_titles{};
    std::array<std::array<std::vector<Series>, SweepCount>, MetricCount> m_series;
    std::array<std::array<std::vector<QCPGraph*>, SweepCount>, MetricCount> m_graphs;
    std::vector<std::uint64_t> m_rankSamples;
    std::vector<double> m_byteSamples;
    double m_computeMs = 0;
    DisplayUnits m_units;
};

// One row per algorithm of the call's operation, counted from its schedule at the call's N and M.
class AlgorithmTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { AlgorithmColumn, StepsColumn, TotalBytesColumn, BusiestRankColumn, TimeColumn, BusBwColumn, ColumnCount };
    static constexpr int RawValueRole = Qt::UserRole + 2;  // the number behind a cell (null when none)
    static constexpr int SelectedRole = Qt::UserRole + 3;  // the call's own algorithm

    explicit AlgorithmTableModel(QObject* parent = nullptr);

    void setSpec(const collective::ScheduleSpec& spec, const collective::LinkModel& link = {});
    void setDisplayUnits(DisplayUnits units);
    [[nodiscard]] collective::Algorithm algorithmAt(int row) const;
    [[nodiscard]] int rowOf(collective::Algorithm algorithm) const; // -1 when absent
    // The counts of a row (nullopt when the call cannot run with that algorithm, e.g. N not whole nodes).
    [[nodiscard]] const std::optional<collective::Counts>& countsAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        collective::Algorithm algorithm{};
        std::optional<collective::Counts> counts;
        QString error;
        QString formula;
    };
    collective::ScheduleSpec m_spec;
    std::vector<Row> m_rows;
    DisplayUnits m_units;
};

} // namespace tw::ui
