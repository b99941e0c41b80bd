#pragma once
// Pieces every stage pane is built from: the caption sentence at the top, the form in a vertical
// scroll area on the left, a read-only table.

#include "base/figure.h"
#include "base/units.h"

#include <QColor>
#include <QString>
#include <qnamespace.h>

#include <functional>

class QAbstractItemModel;
class QFormLayout;
class QVBoxLayout;
class QLabel;
class QScrollArea;
class QSplitter;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QWidget;

namespace tw::ui {
class Document;
}

namespace tw::ui::panekit {

// A word-wrapped, selectable caption 15 % larger than the pane's font.
QLabel* caption(QWidget* pane, const char* objectName);
// The form scrolls vertically, never horizontally, at least `minWidth` wide.
QScrollArea* formScroll(QWidget* form, QWidget* pane, int minWidth = 330);
// Rows selected whole, columns fit their contents, the last one stretches.
QTableView* table(QWidget* parent, QAbstractItemModel* model, const char* objectName);
// A FigureTableModel's table: one figure per row, the label stretched, the value fitted, the id hidden.
QTableView* figureTable(QWidget* parent, QAbstractItemModel* figures, const char* objectName);

// A titled group of form rows appended to the form's layout.
QFormLayout* formGroup(QVBoxLayout* formLayout, const QString& title);
// A word-wrapped label for what is wrong with the field above it, in the theme's error colour
// (theme::styleErrorLabel); hidden until it has something to say. Status lines that turn into a
// problem use theme::showProblem.
QLabel* problemLabel(QWidget* parent, const char* objectName);

// A figure table beside (or above, Qt::Vertical) the browser that shows a clicked figure's chain; the
// table and the browser come back through the pointers. Object names "<prefix>Figures", "<prefix>Chain".
QSplitter* figurePage(QWidget* pane, QAbstractItemModel* figures, const char* prefix, const QString& placeholder,
                      Qt::Orientation orientation, QTableView** table, QTextBrowser** chain);

// Selects the row of figure `id` in a FigureTableModel's table and scrolls to it (false: no such row).
bool selectFigureRow(QTableView* table, const QString& id);
// Shows figure `id`'s derivation chain in the browser and remembers the id in its "figureId" property (a
// pane shows it again after a new derivation or units); false, and nothing changes, when the set has no
// such figure.
bool showFigureChain(QTextBrowser* chain, const FigureSet& figures, const QString& id, const DisplayUnits& units);
// Brings `w` into view inside `root`: every tab page and stacked page on its way up is made the current
// one (a narration number clicked while another tab is open).
void reveal(QWidget* w, const QWidget* root);

// The stage layout: the caption on top, then the form on the left and, on the right, the drawing over
// the tabs (sizes in px of the drawing and the tabs); the tabs get their room (giveTabsTheirRoom).
// The tabs under a drawing ask for the current page's minimum height, not their largest page's. When
// their largest page needs more height than the tabs have (a chart at its readable minimum at 1280×720),
// they take it from the drawing above, down to the drawing's minimum — once for every tab, so the tab bar
// does not move as tabs are clicked; the user's sizes come back when the pages fit them again (a larger
// window), unless the user has moved the splitter since.
void giveTabsTheirRoom(QSplitter* split, QWidget* drawing, QTabWidget* tabs);

void stageLayout(QWidget* pane, QWidget* caption, QWidget* form, QWidget* drawing, QWidget* tabs, int drawingHeight,
                 int tabsHeight, QWidget* chip = nullptr);

// The button that folds the pane's form away so the drawing gets the room, and brings it back
// ("◂ Form" / "▸ Form", object name "formToggle"); it follows the form's visibility whoever changes it
// (presentation mode puts forms away too).
QWidget* formToggle(QWidget* pane, QWidget* form);

// How the window names the open scenario: its own name ("gpt3-175b", a preset's), else the file's.
QString scenarioName(const Document* document);

// The story's live thread. "token #12 “·che”" for the document's followed token (its piece as the chips
// show it); empty when none is followed or the derivation has no such token.
QString followedTokenCaption(const Document* document);
// The chip each pane shows while a token is followed: "● Following token #12 “·che”" and a "Stop
// following" button (object names "followChip", "followChipLabel", "stopFollowing"); hidden when none.
QWidget* followChip(QWidget* pane, Document* document);

// A figure's value as a rich-text link "fig:<id>" (for labels wired with wireFigureLinks); the plain
// text when the set has no such figure.
QString figureLink(const FigureSet& figures, const std::string& id, const QString& text);
// The same link in a given colour: theme::paperLinkColor() for captions drawn on the light paper.
QString figureLink(const FigureSet& figures, const std::string& id, const QString& text, const QColor& color);
// Hovering a "fig:" link of the label shows the figure's formula and inputs (from figures()); clicking
// it calls open(id). figures() may return null (nothing derived yet).
void wireFigureLinks(QLabel* label, std::function<const FigureSet*()> figures, std::function<void(const QString&)> open,
                     std::function<DisplayUnits()> units = {});

} // namespace tw::ui::panekit
