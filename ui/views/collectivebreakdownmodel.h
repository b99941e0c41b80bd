#pragma once
// Stage 5's "By collective" table: per strategy and collective kind of the simulated step, the calls
// and bytes per step, the time the calls were in flight and the part the step waited on (exposed),
// means per GPU (StepSimulation::byCollective, network/breakdown.h), with the exposed time's share. The row whose
// exposed time is largest is bold: "which collective dominates?" at a glance. Tooltips give the
// exposed figure's formula ("sim.exposed_tp_allreduce_s").

#include "base/figure.h"
#include "base/units.h"
#include "network/simulate.h"

#include <QAbstractTableModel>

#include <vector>

namespace tw::ui {

class CollectiveBreakdownModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StrategyColumn, KindColumn, CallsColumn, BytesColumn, InFlightColumn, ExposedColumn, ShareColumn, ColumnCount };
    static constexpr int FigureIdRole = Qt::UserRole + 1; // the row's exposed figure
    static constexpr int RawValueRole = Qt::UserRole + 2; // the number behind a cell

    explicit CollectiveBreakdownModel(QObject* parent = nullptr);

    // The step's rows and its figures (for the tooltips); empty rows clear the table.
    void setStep(std::vector<network::CollectiveBreakdownRow> rows, FigureSet figures);
    void setDisplayUnits(DisplayUnits units);
    [[nodiscard]] const std::vector<network::CollectiveBreakdownRow>& rows() const { return m_rows; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<network::CollectiveBreakdownRow> m_rows;
    FigureSet m_figures;
    DisplayUnits m_units;
    double m_exposedTotal = 0;
    int m_dominant = -1; // the row with the largest exposed time (-1: none exposed)
};

} // namespace tw::ui
