// The comparison table: one row per figure of the stage, A and B side by side, the difference
// coloured by its verdict.
#include "comparepanel.h"

#include "settings/appsettings.h"
#include "views/palette.h"
#include "views/qtstrings.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

namespace tw::ui {

using scenario::FigureDelta;
using scenario::Presence;
using scenario::Verdict;

namespace {

const char* const kStageNames[5] = {QT_TRANSLATE_NOOP("ComparePanel", "Text"), QT_TRANSLATE_NOOP("ComparePanel", "Tensors"),
                                    QT_TRANSLATE_NOOP("ComparePanel", "GPUs"),
                                    QT_TRANSLATE_NOOP("ComparePanel", "Collectives"),
                                    QT_TRANSLATE_NOOP("ComparePanel", "Wire")};

QString stageName(Stage stage)
{
    return QCoreApplication::translate("ComparePanel", kStageNames[indexOf(stage)]);
}

// The verdict colours (palette.h, read when drawn so a palette scheme change follows): better in the
// bluish green, worse in the vermillion of Okabe & Ito.
QColor betterColour()
{
    return palette::categorical(2);
}
QColor worseColour()
{
    return palette::categorical(5);
}
bool darkTheme()
{
    return AppSettings::instance()->theme() == AppSettings::Theme::Dark;
}
// Text in a verdict colour, dark enough on a light table (light enough on a dark one) to read.
QColor verdictText(Verdict v)
{
    const QColor c = v == Verdict::Better ? betterColour() : worseColour();
    return darkTheme() ? c.lighter(135) : c.darker(150);
}
QColor verdictFill(Verdict v)
{
    QColor c = v == Verdict::Better ? betterColour() : worseColour();
    c.setAlpha(darkTheme() ? 70 : 45);
    return c;
}

} // namespace

// ---------------------------------------------------------------------------------------------------
// CompareTableModel

CompareTableModel::CompareTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void CompareTableModel::setComparison(const scenario::Comparison* comparison, std::optional<Stage> stage, bool pendingA, bool pendingB,
                                      const QString& noteA, const QString& noteB)
{
    beginResetModel();
    m_rows.clear();
    if (comparison)
        for (const FigureDelta& r : comparison->rows)
            if (!stage || r.stage == *stage)
                m_rows.push_back(r);
    m_stage = stage;
    m_pendingA = pendingA;
    m_pendingB = pendingB;
    m_noteA = noteA;
    m_noteB = noteB;
    endResetModel();
}

void CompareTableModel::setDisplayUnits(DisplayUnits units)
{
    m_units = units;
    if (rowCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

const FigureDelta* CompareTableModel::rowAt(int row) const
{
    return row >= 0 && row < rowCount() ? &m_rows[std::size_t(row)] : nullptr;
}

int CompareTableModel::rowOf(const QString& id) const
{
    for (int i = 0; i < rowCount(); ++i)
        if (qs(m_rows[std::size_t(i)].id) == id)
            return i;
    return -1;
}

int CompareTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CompareTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

// A missing stage 5 figure on a side whose step is still being simulated is pending, not absent.
bool CompareTableModel::pendingSide(const FigureDelta& row, bool sideA) const
{
    if (row.stage != Stage::Wire)
        return false;
    return sideA ? (m_pendingA && !row.a) : (m_pendingB && !row.b);
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const FigureDelta& r = m_rows[std::size_t(index.row())];
    const int col = index.column();
    const bool pending = pendingSide(r, true) || pendingSide(r, false);
    const bool highlighted = !pending && r.presence == Presence::Both && r.differs && r.verdict != Verdict::Neutral;

    if (role == FigureIdRole)
        return qs(r.id);
    if (role == VerdictRole)
        return int(r.verdict);
    if (role == PresenceRole)
        return int(r.presence);

    auto valueText = [&](const std::optional<double>& v, bool sideA) -> QString {
        if (v)
            return qs(scenario::formatKeyValue(r, *v, m_units));
        return pendingSide(r, sideA) ? tr("simulating…") : QStringLiteral("—");
    };

    if (role == Qt::DisplayRole) {
        switch (col) {
        case FigureColumn: return qs(r.shortLabel);
        case AColumn: return valueText(r.a, true);
        case BColumn: return valueText(r.b, false);
        case DeltaColumn: {
            if (pending)
                return QString();
            const QString delta = qs(scenario::formatAbsoluteDelta(r, m_units));
            if (r.presence != Presence::Both || !r.differs)
                return r.presence == Presence::Both ? QStringLiteral("= 0") : delta;
            return (r.absolute > 0 ? QStringLiteral("▲ ") : QStringLiteral("▼ ")) + delta;
        }
        case RelativeColumn: return pending ? QString() : qs(scenario::formatRelativeDelta(r));
        case VerdictColumn:
            if (pending)
                return tr("waiting");
            if (r.presence == Presence::OnlyA)
                return tr("only A has it");
            if (r.presence == Presence::OnlyB)
                return tr("only B has it");
            if (!r.differs)
                return tr("same");
            if (r.verdict == Verdict::Better)
                return tr("✓ better");
            if (r.verdict == Verdict::Worse)
                return tr("✗ worse");
            return tr("changed");
        default: return {};
        }
    }
    if (role == Qt::TextAlignmentRole) {
        if (col == FigureColumn || col == VerdictColumn)
            return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::ForegroundRole) {
        if (highlighted && (col == DeltaColumn || col == RelativeColumn || col == VerdictColumn))
            return verdictText(r.verdict);
        if ((col == AColumn && !r.a) || (col == BColumn && !r.b) || (!r.differs && col >= DeltaColumn))
            return QColor(darkTheme() ? QColor(0x9c, 0xa3, 0xaf) : palette::kMuted);
        return {};
    }
    if (role == Qt::BackgroundRole) {
        if (highlighted && (col == DeltaColumn || col == RelativeColumn || col == VerdictColumn))
            return verdictFill(r.verdict);
        return {};
    }
    if (role == Qt::FontRole) {
        if ((highlighted && col >= DeltaColumn) || (col == BColumn && r.differs && r.b)) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    }
    if (role == Qt::ToolTipRole) {
        auto side = [&](const QString& name, const std::optional<double>& v, const std::string& formula, bool sideA,
                        const QString& note) {
            if (v)
                return tr("%1: %2 = %3\n%4").arg(name, qs(r.label), qs(scenario::formatKeyValue(r, *v, m_units)), qs(formula));
            if (pendingSide(r, sideA))
                return tr("%1: the step is being simulated").arg(name);
            return note.isEmpty() ? tr("%1 has no %2 (%3)").arg(name, qs(r.label), qs(r.id))
                                  : tr("%1 has no %2: %3").arg(name, qs(r.label), note);
        };
        switch (col) {
        case FigureColumn:
            return tr("%1 (%2), stage %3 · %4\n%5: %6")
                .arg(qs(r.label), qs(r.id))
                .arg(numberOf(r.stage))
                .arg(stageName(r.stage), QString::fromLatin1(scenario::toString(r.better)), qs(r.why));
        case AColumn: return side(QStringLiteral("A"), r.a, r.formulaA, true, m_noteA);
        case BColumn: return side(QStringLiteral("B"), r.b, r.formulaB, false, m_noteB);
        default:
            if (r.presence != Presence::Both)
                return tr("%1 exists only in %2: it is not zero on the other side, it is not part of that scenario.")
                    .arg(qs(r.label), r.presence == Presence::OnlyA ? QStringLiteral("A") : QStringLiteral("B"));
            return tr("Δ = B − A = %1 − %2 = %3; Δ % = (B − A) / |A| = %4\n%5: %6 → %7")
                .arg(qs(scenario::formatKeyValue(r, *r.b, m_units)), qs(scenario::formatKeyValue(r, *r.a, m_units)),
                     qs(scenario::formatAbsoluteDelta(r, m_units)), qs(scenario::formatRelativeDelta(r)),
                     QString::fromLatin1(scenario::toString(r.better)), qs(r.why),
                     QString::fromLatin1(scenario::toString(r.verdict)));
        }
    }
    return {};
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical) {
        if (section < 0 || section >= rowCount())
            return {};
        const Stage s = m_rows[std::size_t(section)].stage;
        return QStringLiteral("%1 %2").arg(numberOf(s)).arg(stageName(s));
    }
    switch (section) {
    case FigureColumn:
        return !m_stage ? tr("Key figure (all stages)") : tr("Stage %1 · %2").arg(numberOf(*m_stage)).arg(stageName(*m_stage));
    case AColumn: return tr("A");
    case BColumn: return tr("B");
    case DeltaColumn: return tr("Δ = B − A");
    case RelativeColumn: return tr("Δ %");
    case VerdictColumn: return tr("B is");
    default: return {};
    }
}

} // namespace tw::ui
