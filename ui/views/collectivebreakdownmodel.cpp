#include "collectivebreakdownmodel.h"

#include "qtstrings.h"

#include "network/breakdown.h"

#include <QFont>

namespace tw::ui {

CollectiveBreakdownModel::CollectiveBreakdownModel(QObject* parent) : QAbstractTableModel(parent) {}

void CollectiveBreakdownModel::setStep(std::vector<network::CollectiveBreakdownRow> rows, FigureSet figures)
{
    beginResetModel();
    m_rows = std::move(rows);
    m_figures = std::move(figures);
    m_exposedTotal = 0;
    m_dominant = -1;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        m_exposedTotal += m_rows[i].exposedSeconds;
        if (m_rows[i].exposedSeconds > 0
            && (m_dominant < 0 || m_rows[i].exposedSeconds > m_rows[std::size_t(m_dominant)].exposedSeconds))
            m_dominant = int(i);
    }
    endResetModel();
}

void CollectiveBreakdownModel::setDisplayUnits(DisplayUnits units)
{
    m_units = units;
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int CollectiveBreakdownModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CollectiveBreakdownModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CollectiveBreakdownModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const network::CollectiveBreakdownRow& r = m_rows[std::size_t(index.row())];
    const double share = m_exposedTotal > 0 ? r.exposedSeconds / m_exposedTotal : 0;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case StrategyColumn: return qs(std::string(parallel::toString(r.strategy)));
        case KindColumn: return qs(std::string(parallel::toString(r.kind)));
        case CallsColumn: return qs(formatCount(r.callsPerStep, 0));
        case BytesColumn: return qs(formatBytes(r.wireBytesPerStep, m_units));
        case InFlightColumn: return qs(formatSeconds(r.inFlightSeconds));
        case ExposedColumn: return qs(formatSeconds(r.exposedSeconds));
        case ShareColumn: return m_exposedTotal > 0 ? qs(formatCount(100 * share, 1)) + QStringLiteral(" %") : QStringLiteral("—");
        default: return {};
        }
    case RawValueRole:
        switch (index.column()) {
        case CallsColumn: return r.callsPerStep;
        case BytesColumn: return r.wireBytesPerStep;
        case InFlightColumn: return r.inFlightSeconds;
        case ExposedColumn: return r.exposedSeconds;
        case ShareColumn: return share;
        default: return {};
        }
    case Qt::TextAlignmentRole:
        return index.column() >= CallsColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::FontRole:
        if (index.row() == m_dominant) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case FigureIdRole:
        return qs(network::exposedFigureId(r));
    case Qt::ToolTipRole:
        if (const Figure* f = m_figures.find(network::exposedFigureId(r)))
            return qs(f->label + ": " + f->formula);
        return {};
    default:
        return {};
    }
}

QVariant CollectiveBreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case StrategyColumn: return tr("Strategy");
        case KindColumn: return tr("Collective");
        case CallsColumn: return tr("Calls / step");
        case BytesColumn: return tr("On the wire / step");
        case InFlightColumn: return tr("In flight");
        case ExposedColumn: return tr("Exposed");
        case ShareColumn: return tr("Share of exposed");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case CallsColumn: return tr("Calls per optimizer step, every group's call counted");
        case BytesColumn: return tr("Bytes on the wire per step over all groups (stage 4's schedules)");
        case InFlightColumn:
            return tr("Time these calls were in flight in the simulated step, overlapped with compute or not, mean "
                      "over GPUs (s)");
        case ExposedColumn:
            return tr("Time a GPU's compute waited on these calls in the simulated step, mean over GPUs (s)");
        case ShareColumn: return tr("This row's share of the step's exposed communication");
        default: return {};
        }
    }
    return {};
}

} // namespace tw::ui
