#pragma once
// Stage 4's step table: the transfers of the step a ScheduleView shows, one row each — sender,
// receiver, chunk, bytes (tw::formatBytes in the viewer's units) and whether the receiver adds the
// data (reduce) or overwrites its copy (copy). Follows a view through its transfersChanged signal.

#include "base/units.h"
#include "collective/schedule.h"

#include <QAbstractTableModel>
#include <QPointer>
#include <QStringList>

#include <vector>

namespace tw::ui {

class ScheduleView;

class StepListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { FromColumn, ToColumn, ChunkColumn, BytesColumn, KindColumn, ColumnCount };
    static constexpr int RawValueRole = Qt::UserRole + 2; // rank, chunk index, bytes, reduce (bool)

    explicit StepListModel(QObject* parent = nullptr);

    // The rows; chunkLabels[i] names transfer i's chunk ("c2", "0→2"), "c<index>" when missing.
    void setTransfers(std::vector<collective::Transfer> transfers, QStringList chunkLabels = {});
    // Shows what `view` shows, now and after every change (nullptr stops following).
    void follow(ScheduleView* view);
    void setDisplayUnits(DisplayUnits units);
    [[nodiscard]] const std::vector<collective::Transfer>& transfers() const { return m_rows; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    void pull();

    std::vector<collective::Transfer> m_rows;
    QStringList m_chunkLabels;
    DisplayUnits m_units;
    QPointer<ScheduleView> m_view;
    QMetaObject::Connection m_connection;
};

} // namespace tw::ui
