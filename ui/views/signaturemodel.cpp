#include "signaturemodel.h"
#include "views/qtstrings.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <cmath>

namespace tw::ui {

namespace {
const QColor kAbsent(0x9c, 0xa3, 0xaf);
const QString kDash = QStringLiteral("—");

bool sameValue(double a, double b)
{
    return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

// The figure namespaces a strategy's numbers live in.
std::vector<std::string> prefixesOf(parallel::Strategy s)
{
    switch (s) {
    case parallel::Strategy::DP: return {"dp.", "zero."};
    case parallel::Strategy::PP: return {"pp."};
    case parallel::Strategy::TP: return {"tp."};
    case parallel::Strategy::EP: return {"ep."};
    }
    return {};
}

QString phaseName(model::Phase p)
{
    switch (p) {
    case model::Phase::Forward: return QObject::tr("forward");
    case model::Phase::Backward: return QObject::tr("backward");
    case model::Phase::Optimizer: return QObject::tr("optimizer");
    }
    return {};
}
} // namespace

QString strategyName(parallel::Strategy s)
{
    return qs(std::string(parallel::toString(s)));
}

QString collectiveName(parallel::CollectiveKind k)
{
    return qs(std::string(parallel::toString(k)));
}

// ---------------------------------------------------------------------------------------------
// SignatureModel

SignatureModel::SignatureModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void SignatureModel::setSignature(std::vector<parallel::StrategySignature> rows, FigureSet figures,
                                  std::vector<parallel::CollectiveCall> calls)
{
    if (rows.size() == m_rows.size() && !rows.empty()) {
        m_rows = std::move(rows);
        m_figures = std::move(figures);
        m_calls = std::move(calls);
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    m_rows = std::move(rows);
    m_figures = std::move(figures);
    m_calls = std::move(calls);
    endResetModel();
}

void SignatureModel::setCommPlan(const parallel::CommPlan& comm, FigureSet figures)
{
    setSignature(comm.signature, std::move(figures), comm.calls);
}

void SignatureModel::setDisplayUnits(DisplayUnits units)
{
    m_units = units;
    if (rowCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int SignatureModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SignatureModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

double SignatureModel::raw(const parallel::StrategySignature& s, int column) const
{
    switch (column) {
    case StrategyColumn: return double(s.strategy);
    case PayloadColumn: return s.payloadBytes;
    case FrequencyColumn:
    case CallsColumn: return s.callsPerStep;
    case PeersColumn: return double(s.peers);
    case BytesColumn: return s.bytesPerGpuPerStep;
    case LinksColumn: return s.groups ? double(s.groupsCrossingNodes) / double(s.groups) : 0.0;
    }
    return 0;
}

QString SignatureModel::display(const parallel::StrategySignature& s, int column) const
{
    if (column == StrategyColumn)
        return strategyName(s.strategy);
    if (!s.present)
        return kDash;
    switch (column) {
    case PayloadColumn: return qs(formatBytes(s.payloadBytes, m_units));
    case FrequencyColumn: return s.frequency.empty() ? kDash : qs(s.frequency);
    case CallsColumn: return qs(formatCount(s.callsPerStep, 2));
    case PeersColumn: return qs(formatInteger(std::int64_t(s.peers)));
    case BytesColumn: return qs(formatBytes(s.bytesPerGpuPerStep, m_units));
    case LinksColumn:
        if (s.groups == 0)
            return kDash;
        if (s.groupsCrossingNodes == 0)
            return tr("intra-node");
        if (s.groupsCrossingNodes == s.groups)
            return s.groups == 1 ? tr("inter-node") : tr("inter-node (all %1 groups)").arg(s.groups);
        return tr("%1 of %2 groups inter-node").arg(s.groupsCrossingNodes).arg(s.groups);
    }
    return {};
}

// The derivation's figure that holds a cell's number: same value, in the strategy's namespace.
const Figure* SignatureModel::figureFor(const parallel::StrategySignature& s, int column) const
{
    if (!s.present || column == StrategyColumn || column == FrequencyColumn || column == LinksColumn)
        return nullptr;
    const double v = raw(s, column);
    const bool bytes = column == PayloadColumn || column == BytesColumn;
    if (v == 0 && !bytes)
        return nullptr;
    const Figure* fallback = nullptr;
    for (const std::string& prefix : prefixesOf(s.strategy))
        for (const Figure& f : m_figures.all()) {
            if (f.id.rfind(prefix, 0) != 0 || !sameValue(f.value, v))
                continue;
            if (bytes == (f.unit == "B"))
                return &f;
            if (!fallback)
                fallback = &f;
        }
    return fallback;
}

QString SignatureModel::tooltip(const parallel::StrategySignature& s, int column) const
{
    const QString name = strategyName(s.strategy);
    if (!s.present)
        return tr("This plan does not use %1 (its degree is 1): no %1 traffic.").arg(name);
    QString what;
    switch (column) {
    case StrategyColumn:
        switch (s.strategy) {
        case parallel::Strategy::DP: what = tr("Data parallelism: replicas of the model exchange gradients (and, sharded, parameters)."); break;
        case parallel::Strategy::PP: what = tr("Pipeline parallelism: stages pass activations forward and gradients backward."); break;
        case parallel::Strategy::TP: what = tr("Tensor parallelism: the GPUs of a layer join their partial results inside every layer."); break;
        case parallel::Strategy::EP: what = tr("Expert parallelism: tokens travel to the GPUs holding their experts and back (All-to-All)."); break;
        }
        return what;
    case PayloadColumn: what = tr("The payload M of the %1 call that moves the most bytes per step.").arg(name); break;
    case FrequencyColumn: what = tr("How often the %1 calls happen in one optimizer step.").arg(name); break;
    case CallsColumn: what = tr("%1 calls one GPU takes part in per optimizer step (StrategySignature::callsPerStep).").arg(name); break;
    case PeersColumn: what = tr("Other members of a GPU's largest %1 group.").arg(name); break;
    case BytesColumn:
        what = tr("Bytes the busiest GPU sends per step for %1 with ring / pairwise algorithms (StrategySignature::bytesPerGpuPerStep).")
                   .arg(name);
        break;
    case LinksColumn:
        what = tr("%1 of the %2 %3 groups have members on more than one node.").arg(s.groupsCrossingNodes).arg(s.groups).arg(name);
        break;
    }
    if (const Figure* f = figureFor(s, column)) {
        what += tr("\nFigure %1 — %2 = %3").arg(qs(f->id), qs(f->label), qs(formatValue(f->value, f->unit, m_units)));
        if (!f->formula.empty())
            what += QLatin1Char('\n') + qs(f->formula);
    }
    if (column == PayloadColumn) {
        // The call that has this payload, with the formula core wrote for it.
        for (const parallel::CollectiveCall& c : m_calls)
            if (c.strategy == s.strategy && sameValue(c.payloadBytes, s.payloadBytes)) {
                what += tr("\nLargest call: %1 (%2)").arg(qs(c.what), collectiveName(c.kind));
                if (!c.formula.empty())
                    what += QLatin1Char('\n') + qs(c.formula);
                break;
            }
    }
    return what;
}

QVariant SignatureModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const parallel::StrategySignature& s = m_rows[std::size_t(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole: return display(s, column);
    case Qt::ToolTipRole: return tooltip(s, column);
    case Qt::ForegroundRole:
        if (!s.present)
            return QBrush(kAbsent);
        break;
    case Qt::TextAlignmentRole:
        if (column == PayloadColumn || column == CallsColumn || column == PeersColumn || column == BytesColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case Qt::FontRole:
        if (column == StrategyColumn) {
            QFont f;
            f.setBold(true);
            return f;
        }
        break;
    case FigureIdRole: {
        const Figure* f = figureFor(s, column);
        return f ? qs(f->id) : QString();
    }
    case RawValueRole:
        if (column == FrequencyColumn && !s.present)
            return 0.0;
        return s.present || column == StrategyColumn ? raw(s, column) : 0.0;
    case PresentRole: return s.present;
    }
    return {};
}

QVariant SignatureModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case StrategyColumn: return tr("Strategy");
        case PayloadColumn: return tr("Payload per call");
        case FrequencyColumn: return tr("Frequency");
        case CallsColumn: return tr("Calls/step per GPU");
        case PeersColumn: return tr("Peers");
        case BytesColumn: return tr("Bytes per GPU per step");
        case LinksColumn: return tr("Links");
        }
    }
    if (role == Qt::ToolTipRole && section == BytesColumn)
        return tr("Bytes one GPU sends with the bandwidth-optimal algorithm (ring / pairwise); stage 4 compares algorithms.");
    return {};
}

// ---------------------------------------------------------------------------------------------
// CallListModel

CallListModel::CallListModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void CallListModel::setCommPlan(parallel::CommPlan comm)
{
    shareCommPlan(std::make_shared<const parallel::CommPlan>(std::move(comm)));
}

void CallListModel::shareCommPlan(std::shared_ptr<const parallel::CommPlan> comm)
{
    if (!comm)
        comm = std::make_shared<const parallel::CommPlan>();
    if (comm->calls.size() == m_comm->calls.size() && !comm->calls.empty()) {
        m_comm = std::move(comm);
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    m_comm = std::move(comm);
    endResetModel();
}

void CallListModel::setDisplayUnits(DisplayUnits units)
{
    m_units = units;
    if (rowCount() > 0)
        emit dataChanged(index(0, PayloadColumn), index(rowCount() - 1, PayloadColumn));
}

int CallListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_comm->calls.size());
}

int CallListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

std::size_t CallListModel::groupSize(const parallel::CollectiveCall& call) const
{
    return call.firstGroup < m_comm->groups.size() ? m_comm->groups[call.firstGroup].members.size() : 0;
}

QVariant CallListModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const parallel::CollectiveCall& c = m_comm->calls[std::size_t(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case KindColumn: return collectiveName(c.kind);
        case StrategyColumn: return strategyName(c.strategy);
        case PhaseColumn: return phaseName(c.phase);
        case LayerColumn: return c.layer < 0 ? kDash : QString::number(c.layer);
        case GroupsColumn: return tr("%1 × %2").arg(c.groupCount).arg(groupSize(c));
        case PayloadColumn: return qs(formatBytes(c.payloadBytes, m_units));
        case RepeatColumn: return QStringLiteral("× %1").arg(qs(formatInteger(std::int64_t(c.repeat))));
        case WhatColumn: return qs(c.what);
        }
        break;
    case Qt::ToolTipRole: {
        QString tip = qs(c.what);
        if (!c.formula.empty())
            tip += tr("\nPayload M = %1").arg(qs(c.formula));
        if (c.firstGroup < m_comm->groups.size()) {
            const parallel::Group& g = m_comm->groups[c.firstGroup];
            QStringList members;
            for (std::size_t i = 0; i < g.members.size() && i < 16; ++i)
                members << QString::number(g.members[i]);
            if (g.members.size() > 16)
                members << QStringLiteral("…");
            tip += tr("\n%1 groups of %2 GPUs, first: GPUs %3%4")
                       .arg(c.groupCount)
                       .arg(g.members.size())
                       .arg(members.join(QStringLiteral(", ")),
                            g.crossesNodes ? tr(" (crosses nodes)") : QString());
        }
        if (c.microBatch >= 0)
            tip += tr("\nmicro-batch %1").arg(c.microBatch);
        tip += tr("\n%1 time(s) per optimizer step per group").arg(c.repeat);
        return tip;
    }
    case Qt::TextAlignmentRole:
        if (column == PayloadColumn || column == RepeatColumn || column == LayerColumn || column == GroupsColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case RawValueRole:
        switch (column) {
        case KindColumn: return double(c.kind);
        case StrategyColumn: return double(c.strategy);
        case PhaseColumn: return double(c.phase);
        case LayerColumn: return double(c.layer);
        case GroupsColumn: return double(c.groupCount) * double(groupSize(c));
        case PayloadColumn: return c.payloadBytes;
        case RepeatColumn: return double(c.repeat);
        case WhatColumn: return qs(c.what);
        }
        break;
    case CallIndexRole: return index.row();
    }
    return {};
}

QVariant CallListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case KindColumn: return tr("Collective");
    case StrategyColumn: return tr("Strategy");
    case PhaseColumn: return tr("Phase");
    case LayerColumn: return tr("Layer");
    case GroupsColumn: return tr("Groups × size");
    case PayloadColumn: return tr("Payload M");
    case RepeatColumn: return tr("Repeat / step");
    case WhatColumn: return tr("What");
    }
    return {};
}

} // namespace tw::ui
