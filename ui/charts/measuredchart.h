#pragma once
// Stage 4 beside the wire (issue #10): the bytes Open MPI 4.1 really put on TCP for the chosen
// collective and algorithm (the committed dataset, data/measurements/openmpi-loopback.json, compiled
// into core), drawn over the prediction for the same cases (collective::openmpi::predict) against the
// number of ranks, one curve per measured message size S, with the measured/predicted ratio.

#include "base/units.h"
#include "collective/openmpi.h"
#include "collective/schedule.h"

#include <QWidget>

#include <vector>

class QCustomPlot;
class QLabel;

namespace tw::ui {

class MeasuredChart : public QWidget {
    Q_OBJECT
public:
    explicit MeasuredChart(QWidget* parent = nullptr);

    // Shows the measurements of Open MPI's algorithms that tokenwire maps onto `algorithm` of `op`.
    void setCall(collective::Op op, collective::Algorithm algorithm);
    void setDisplayUnits(DisplayUnits units);

    // The dataset rows drawn (measured and predicted), for tests.
    [[nodiscard]] const std::vector<collective::openmpi::Comparison>& shown() const { return m_shown; }
    [[nodiscard]] QCustomPlot* plot() const { return m_plot; }
    [[nodiscard]] QString summary() const;

private:
    void redraw();

    QCustomPlot* m_plot = nullptr;
    QLabel* m_summary = nullptr;
    collective::Op m_op = collective::Op::AllReduce;
    collective::Algorithm m_algorithm{};
    DisplayUnits m_units;
    std::vector<collective::openmpi::Comparison> m_all; // every row of the dataset, compared once
    QString m_datasetError;
    std::vector<collective::openmpi::Comparison> m_shown;
};

} // namespace tw::ui
