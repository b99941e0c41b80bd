#pragma once
// Adapts a tw::FigureSet to a table: figure, value (formatted with its unit), id. The formula is
// the tooltip; explain() writes the formula with the values of its inputs.

#include "base/figure.h"
#include "base/units.h"

#include <QAbstractTableModel>
#include <QUrl>

namespace tw::ui {

class FigureTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { LabelColumn, ValueColumn, IdColumn, ColumnCount };
    static constexpr int FigureIdRole = Qt::UserRole + 1;
    static constexpr int RawValueRole = Qt::UserRole + 2;

    explicit FigureTableModel(QObject* parent = nullptr);

    void setFigures(FigureSet figures);
    void setDisplayUnits(DisplayUnits units);
    [[nodiscard]] const FigureSet& figures() const { return m_figures; }
    // "label = value" then the formula, then each input as "label = value".
    [[nodiscard]] QString explain(const QModelIndex& index) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    [[nodiscard]] QString formatted(const Figure& figure) const;

    FigureSet m_figures;
    DisplayUnits m_units;
};

// "label = value", the formula, then each input as "label = value" (a figure's tooltip); empty when the
// set has no such figure.
[[nodiscard]] QString figureExplanation(const FigureSet& figures, const std::string& id, const DisplayUnits& units = {});

// The link to the docs/model.md section that explains a figure (scenario::modelSectionOf):
// "tokenwire-help:model.md#§2.4"; empty when no section covers the id. MainWindow opens such links in
// Help → "How the numbers are computed" at the section.
inline constexpr const char* kModelHelpScheme = "tokenwire-help";
[[nodiscard]] QUrl modelSectionLink(const std::string& figureId);

// A figure's derivation tree back to the inputs as HTML, under a link to its docs/model.md section (one indented block per figure: label =
// value (id), then its formula), for the panes' "where does this number come from" browsers.
[[nodiscard]] QString derivationChainHtml(const FigureSet& figures, const QString& id, const DisplayUnits& units = {});

} // namespace tw::ui
