#include "figuretablemodel.h"

#include "scenario/figuresection.h"

#include "scenario/derive.h"
#include "settings/theme.h"
#include "views/qtstrings.h"

#include <QCoreApplication>
#include <QUrl>

namespace tw::ui {


FigureTableModel::FigureTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void FigureTableModel::setFigures(FigureSet figures)
{
    // Same ids in the same order (the usual case while typing): update values in place.
    bool sameRows = figures.size() == m_figures.size();
    for (std::size_t i = 0; sameRows && i < figures.size(); ++i)
        sameRows = figures.all()[i].id == m_figures.all()[i].id;
    if (sameRows) {
        m_figures = std::move(figures);
        if (!m_figures.all().empty())
            emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    m_figures = std::move(figures);
    endResetModel();
}

void FigureTableModel::setDisplayUnits(DisplayUnits units)
{
    m_units = units;
    if (rowCount() > 0)
        emit dataChanged(index(0, ValueColumn), index(rowCount() - 1, ValueColumn));
}

QString FigureTableModel::formatted(const Figure& figure) const
{
    return qs(formatValue(figure.value, figure.unit, m_units));
}

QString FigureTableModel::explain(const QModelIndex& index) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const Figure& f = m_figures.all()[static_cast<std::size_t>(index.row())];
    QString out = tr("%1 = %2\n%3").arg(qs(f.label), formatted(f), qs(f.formula));
    if (!f.inputs.empty()) {
        out += tr("\nfrom:");
        for (const auto& id : f.inputs) {
            const Figure* in = m_figures.find(id);
            out += in ? tr("\n  • %1 = %2").arg(qs(in->label), formatted(*in)) : tr("\n  • %1").arg(qs(id));
        }
    }
    return out;
}

int FigureTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_figures.size());
}

int FigureTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FigureTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Figure& f = m_figures.all()[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case LabelColumn: return qs(f.label);
        case ValueColumn: return formatted(f);
        case IdColumn: return qs(f.id);
        }
        break;
    case Qt::ToolTipRole:
        return figureExplanation(m_figures, f.id, m_units);
    case Qt::TextAlignmentRole:
        if (index.column() == ValueColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case FigureIdRole:
        return qs(f.id);
    case RawValueRole:
        return f.value;
    }
    return {};
}

QVariant FigureTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case LabelColumn: return tr("Figure");
    case ValueColumn: return tr("Value");
    case IdColumn: return tr("Id");
    }
    return {};
}

QString figureExplanation(const FigureSet& figures, const std::string& id, const DisplayUnits& units)
{
    const Figure* f = figures.find(id);
    if (!f)
        return {};
    auto value = [&](const Figure& x) { return qs(formatValue(x.value, x.unit, units)); };
    QString out = QCoreApplication::translate("tw::ui::FigureTableModel", "%1 = %2\n%3").arg(qs(f->label), value(*f), qs(f->formula));
    if (!f->inputs.empty()) {
        out += QCoreApplication::translate("tw::ui::FigureTableModel", "\nfrom:");
        for (const auto& in : f->inputs) {
            const Figure* x = figures.find(in);
            out += x ? QStringLiteral("\n  • %1 = %2").arg(qs(x->label), value(*x)) : QStringLiteral("\n  • %1").arg(qs(in));
        }
    }
    if (const std::string_view section = scenario::modelSectionOf(id); !section.empty())
        out += QCoreApplication::translate("tw::ui::FigureTableModel", "\nExplained in docs/model.md %1")
                   .arg(QString::fromUtf8(section.data(), qsizetype(section.size())));
    out += QCoreApplication::translate("tw::ui::FigureTableModel", "\n(click for the whole chain and a link to that section)");
    return out;
}

QString derivationChainHtml(const FigureSet& figures, const QString& id, const DisplayUnits& units)
{
    QString html;
    const QString muted = theme::mutedTextColor().name();
    if (const QUrl link = modelSectionLink(id.toStdString()); !link.isEmpty() && figures.find(id.toStdString()))
        html += QStringLiteral("<p><a href=\"%1\">%2</a></p>")
                    .arg(link.toString(QUrl::FullyEncoded).toHtmlEscaped(),
                         QCoreApplication::translate("tw::ui::FigureTableModel", "How it is computed: docs/model.md %1")
                             .arg(link.fragment()));
    for (const scenario::ChainStep& step : scenario::derivationTree(figures, id.toStdString())) {
        const Figure& fig = *step.figure;
        const QString value = qs(formatValue(fig.value, fig.unit, units));
        html += QStringLiteral("<div style='margin-left:%1px; margin-bottom:4px'>").arg(step.depth * 18);
        html += QStringLiteral("<b>%1</b> = %2 <span style='color:%4'>(%3)</span>")
                    .arg(qs(fig.label).toHtmlEscaped(), value.toHtmlEscaped(), qs(fig.id).toHtmlEscaped(), muted);
        if (step.repeated)
            html += QStringLiteral(" <span style='color:%2'>%1</span>")
                        .arg(QCoreApplication::translate("tw::ui::FigureTableModel", "— see above"), muted);
        else
            html += QStringLiteral("<br>%1").arg(qs(fig.formula).toHtmlEscaped()); // the window's own text colour
        html += QStringLiteral("</div>");
    }
    return html;
}

QUrl modelSectionLink(const std::string& figureId)
{
    const std::string_view section = scenario::modelSectionOf(figureId);
    if (section.empty())
        return {};
    QUrl url;
    url.setScheme(QLatin1String(kModelHelpScheme));
    url.setPath(QStringLiteral("model.md"));
    url.setFragment(QString::fromUtf8(section.data(), qsizetype(section.size())));
    return url;
}

} // namespace tw::ui
