#pragma once
// Pieces every stage pane is built from: the caption sentence at the top, the form in a vertical
// scroll area on the left, a read-only table.

class QAbstractItemModel;
class QLabel;
class QScrollArea;
class QTableView;
class QWidget;

namespace tw::ui::panekit {

// A word-wrapped, selectable caption 15 % larger than the pane's font.
QLabel* caption(QWidget* pane, const char* objectName);
// The form scrolls vertically, never horizontally, at least `minWidth` wide.
QScrollArea* formScroll(QWidget* form, QWidget* pane, int minWidth = 330);
// Rows selected whole, columns fit their contents, the last one stretches.
QTableView* table(QWidget* parent, QAbstractItemModel* model, const char* objectName);
// A FigureTableModel's table: one figure per row, the label stretched, the value fitted, the id hidden.
QTableView* figureTable(QWidget* parent, QAbstractItemModel* figures, const char* objectName);

} // namespace tw::ui::panekit
