#pragma once
// Stage 1 charts: token-length histogram and rank/frequency on log-log axes, in tabs, with a
// "type some text" state instead of empty axes.

#include <QWidget>

class QCustomPlot;
class QLabel;
class QStackedWidget;
class QTabWidget;

namespace tw::text {
struct DatasetStats;
}

namespace tw::ui {

class TokenCharts : public QWidget {
    Q_OBJECT
public:
    explicit TokenCharts(QWidget* parent = nullptr);

    // Redraws from core's statistics; nullptr or zero tokens shows the empty state.
    void setStats(const text::DatasetStats* stats);
    [[nodiscard]] bool showsCharts() const;
    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
    [[nodiscard]] QCustomPlot* histogramPlot() const { return m_histogram; }
    [[nodiscard]] QCustomPlot* rankPlot() const { return m_rank; }

private:
    QStackedWidget* m_stack = nullptr;
    QLabel* m_empty = nullptr;
    QTabWidget* m_tabs = nullptr;
    QCustomPlot* m_histogram = nullptr;
    QCustomPlot* m_rank = nullptr;
};

} // namespace tw::ui
