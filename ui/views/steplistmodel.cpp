#include "steplistmodel.h"

#include "views/scheduleview.h"

namespace tw::ui {

StepListModel::StepListModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void StepListModel::setTransfers(std::vector<collective::Transfer> transfers, QStringList chunkLabels)
{
    beginResetModel();
    m_rows = std::move(transfers);
    m_chunkLabels = std::move(chunkLabels);
    endResetModel();
}

void StepListModel::follow(ScheduleView* view)
{
    if (m_connection)
        disconnect(m_connection);
    m_view = view;
    if (!view) {
        setTransfers({});
        return;
    }
    m_connection = connect(view, &ScheduleView::transfersChanged, this, &StepListModel::pull);
    pull();
}

void StepListModel::pull()
{
    if (!m_view)
        return;
    const auto& shown = m_view->transfersShown();
    QStringList labels;
    labels.reserve(qsizetype(shown.size()));
    for (const collective::Transfer& t : shown)
        labels << m_view->chunkLabel(t.chunk);
    setTransfers(shown, labels);
}

void StepListModel::setDisplayUnits(DisplayUnits units)
{
    if (units == m_units)
        return;
    m_units = units;
    if (!m_rows.empty())
        emit dataChanged(index(0, BytesColumn), index(rowCount() - 1, BytesColumn), {Qt::DisplayRole});
}

int StepListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int StepListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant StepListModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const collective::Transfer& t = m_rows[std::size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case FromColumn: return tr("rank %1").arg(t.src);
        case ToColumn: return tr("rank %1").arg(t.dst);
        case ChunkColumn:
            return index.row() < m_chunkLabels.size() ? m_chunkLabels[index.row()] : QStringLiteral("c%1").arg(t.chunk);
        case BytesColumn: return QString::fromStdString(formatBytes(t.bytes, m_units));
        case KindColumn: return t.reduce ? tr("reduce (adds)") : tr("copy (overwrites)");
        }
        break;
    case RawValueRole:
        switch (index.column()) {
        case FromColumn: return t.src;
        case ToColumn: return t.dst;
        case ChunkColumn: return t.chunk;
        case BytesColumn: return t.bytes;
        case KindColumn: return t.reduce;
        }
        break;
    case Qt::TextAlignmentRole:
        return index.column() == BytesColumn ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
                                             : QVariant(int(Qt::AlignLeft | Qt::AlignVCenter));
    case Qt::ToolTipRole:
        return t.reduce ? tr("Rank %1 adds the chunk it receives from rank %2 into its own copy.").arg(t.dst).arg(t.src)
                        : tr("Rank %1 overwrites its copy of the chunk with rank %2's.").arg(t.dst).arg(t.src);
    default: break;
    }
    return {};
}

QVariant StepListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case FromColumn: return tr("From");
    case ToColumn: return tr("To");
    case ChunkColumn: return tr("Chunk");
    case BytesColumn: return tr("Bytes");
    case KindColumn: return tr("Kind");
    }
    return {};
}

} // namespace tw::ui
