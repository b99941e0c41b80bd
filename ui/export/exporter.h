#pragma once
// Taking things out of the program: a chart as PNG (2× for a projector), PDF or SVG; a table as CSV;
// the whole derivation as a Markdown or HTML report with the charts embedded, or as the JSON
// `tokenwire-cli derive --json` prints. Every file is written atomically: a failure names the path
// and the reason and leaves no partial file. ExportMenus gives every chart and every table view of
// the application a context menu with these exports, without the panes knowing about it.

#include <QList>
#include <QMenu>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>

class QAbstractItemModel;
class QAbstractItemView;
class QCustomPlot;
class QWidget;

namespace tw::ui {

class Document;

// The chart to path, the format by its suffix: .png (the widget's size, rendered at 2×), .pdf (the
// widget's size, vector), .svg (vector, through QSvgGenerator). A plot never laid out is drawn at 960×600.
bool exportPlot(QCustomPlot* plot, const QString& path, QString* error);
// The chart as PNG bytes at width×height pixels × scale (the report's pictures).
[[nodiscard]] QByteArray plotPng(QCustomPlot* plot, int width, int height, double scale = 1.0);
// The chart's title (its title element's text, else its object name).
[[nodiscard]] QString plotTitle(QCustomPlot* plot);
// True when the chart draws something: a plottable with data, or an item.
[[nodiscard]] bool plotHasContent(QCustomPlot* plot);

// The model's DisplayRole text as RFC 4180 CSV (UTF-8, CRLF): a header row from headerData, then
// one line per row (a tree's children follow their parent); fields holding a comma, a quote or a
// line break are quoted, quotes doubled.
[[nodiscard]] QByteArray tableCsv(QAbstractItemModel* model);
bool exportTableCsv(QAbstractItemModel* model, const QString& path, QString* error);

// Every chart under each stage's root widget (index 0 = stage 1), in widget order. exportReport leaves
// out those without content when it writes, after waiting for stage 5's step (whose charts fill then).
[[nodiscard]] QList<QList<QCustomPlot*>> stageCharts(const QList<QWidget*>& stageRoots);
// The document's derivation to path, the format by suffix: .md (the charts as PNG files in a
// "<name>_files" folder beside it), .html (one self-contained page, charts as data: URIs) or .json
// (derivationJson, as the CLI prints it). Dated today, in the viewer's byte units. Fails, naming why,
// when nothing is derived or the scenario has problems (the derivation would not be of it).
bool exportReport(Document* document, const QList<QList<QCustomPlot*>>& chartsPerStage, const QString& path,
                  QString* error);

// The application-wide context menus: right-click any QCustomPlot for "Export chart as PNG/PDF/SVG…",
// any QTableView or QTreeView for "Export table as CSV…". Only widgets with the default context-menu
// policy get one, so a widget's own menu is never replaced. The file dialog and the error box are
// hooks so tests drive them without modal windows.
class ExportMenus : public QObject {
    Q_OBJECT
public:
    // The one instance, created and installed on the application at the first call.
    static ExportMenus* install();

    // Hooks. askSavePath(parent, caption, suggested path, filter) returns "" when cancelled; the
    // defaults are QFileDialog::getSaveFileName and QMessageBox::warning.
    std::function<QString(QWidget* parent, const QString& caption, const QString& suggested, const QString& filter)> askSavePath;
    std::function<void(QWidget* parent, const QString& title, const QString& message)> showError;

    // The menu the last right-click opened (null once it closed).
    [[nodiscard]] QMenu* shownMenu() const { return m_menu; }
    // The chart or table view the menu of a context-menu event on `widget` would export (null: none).
    [[nodiscard]] static QWidget* exportTarget(QWidget* widget);

    // Asks for a file and writes the chart / the table / the report there; errors through showError.
    void exportChart(QCustomPlot* plot, const QString& suffix);
    void exportTable(QAbstractItemView* view);
    // File → Export report…: .md, .html (the default when no suffix is typed) or .json.
    void exportReportInteractively(Document* document, const QList<QWidget*>& stageRoots, QWidget* parent);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    explicit ExportMenus(QObject* parent);
    QString suggested(const QString& name, const QString& suffix) const;
    QString ask(QWidget* parent, const QString& caption, const QString& suggestedPath, const QString& filter,
                const QString& defaultSuffix);

    QPointer<QMenu> m_menu;
    QString m_lastDir;
};

} // namespace tw::ui
