#include "exporter.h"

#include "charts/chartframe.h"
#include "document/document.h"
#include "document/results.h"
#include "workers/backgroundjob.h"
#include "settings/appsettings.h"

#include "base/fileio.h"
#include "network/simulate.h"
#include "scenario/derivationjson.h"
#include "scenario/derive.h"
#include "scenario/report.h"
#include "views/qtstrings.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QBuffer>
#include <QContextMenuEvent>
#include <QCoreApplication>
#include <QDate>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSvgGenerator>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>

#include <qcustomplot.h>

#include <set>

namespace tw::ui {

namespace {

constexpr int kDefaultWidth = 960;
constexpr int kDefaultHeight = 600;
// How long a report waits for the current scenario's derivation, then its simulated step.
constexpr int kReportWaitMs = 120000;

// The system's reason from a saveFileAtomically error ("cannot save: No such file…" → "No such file…").
QString reasonOf(const Error& e)
{
    std::string reason = e.message;
    if (const auto colon = reason.find(": "); reason.rfind("cannot save", 0) == 0 && colon != std::string::npos)
        reason = reason.substr(colon + 2);
    return qs(reason);
}

// Writes bytes to path atomically; false and "Cannot write PATH: reason" on failure.
bool writeFile(const QString& path, const QByteArray& bytes, QString* error)
{
    const Status saved = saveFileAtomically(QFile::encodeName(path).toStdString(), std::string_view(bytes.constData(), std::size_t(bytes.size())));
    if (saved.ok())
        return true;
    if (error)
        *error = QObject::tr("Cannot write %1: %2").arg(path, reasonOf(saved.error()));
    return false;
}

bool fail(QString* error, const QString& message)
{
    if (error)
        *error = message;
    return false;
}

// The size a chart is exported at: its own, or the default when it was never laid out.
QSize exportSize(QCustomPlot* plot)
{
    if (plot->width() < 100 || plot->height() < 80)
        return {kDefaultWidth, kDefaultHeight};
    return plot->size();
}

QByteArray svgOf(QCustomPlot* plot, QSize size)
{
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setResolution(96); // a px of the chart is a CSS px: 640 px wide is 169.33 mm
    // Qt 6.4 writes <title> and <desc> unescaped: keep markup characters out of them.
    QString title = plotTitle(plot);
    title.replace(QLatin1Char('&'), QLatin1Char('+')).replace(QLatin1Char('<'), QChar(0x2039)).replace(QLatin1Char('>'), QChar(0x203A));
    svg.setTitle(title);
    svg.setDescription(QStringLiteral("Exported by TokenWire " TOKENWIRE_VERSION));
    QCPPainter painter;
    if (!painter.begin(&svg))
        return {};
    plot->toPainter(&painter, size.width(), size.height());
    painter.end();
    return buffer.data();
}

// QCustomPlot's own PDF export, through a temporary file so the target is replaced atomically.
QByteArray pdfOf(QCustomPlot* plot, QSize size, QString* why)
{
    QTemporaryDir dir;
    if (!dir.isValid()) {
        *why = QObject::tr("no temporary folder: %1").arg(dir.errorString());
        return {};
    }
    const QString tmp = dir.filePath(QStringLiteral("chart.pdf"));
    if (!plot->savePdf(tmp, size.width(), size.height(), QCP::epAllowCosmetic, QStringLiteral("TokenWire " TOKENWIRE_VERSION),
                       plotTitle(plot))) {
        *why = QObject::tr("QCustomPlot could not write the PDF");
        return {};
    }
    QFile f(tmp);
    if (!f.open(QIODevice::ReadOnly)) {
        *why = f.errorString();
        return {};
    }
    return f.readAll();
}

QString csvField(const QString& text)
{
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))
        && !text.contains(QLatin1Char('\r')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

void csvRows(QAbstractItemModel* model, const QModelIndex& parent, QString& out)
{
    while (model->canFetchMore(parent))
        model->fetchMore(parent);
    const int columns = model->columnCount(parent);
    for (int r = 0; r < model->rowCount(parent); ++r) {
        QStringList fields;
        for (int c = 0; c < columns; ++c)
            fields << csvField(model->index(r, c, parent).data(Qt::DisplayRole).toString());
        out += fields.join(QLatin1Char(',')) + QStringLiteral("\r\n");
        const QModelIndex child = model->index(r, 0, parent);
        if (model->hasChildren(child))
            csvRows(model, child, out);
    }
}

// A file name from a chart's or table's name ("memoryChart", "Memory per GPU" → "Memory per GPU").
QString fileStem(const QString& name)
{
    QString stem = name.section(QLatin1Char('\n'), 0, 0).section(QLatin1Char(':'), 0, 0).trimmed();
    static const QString bad = QStringLiteral("/\\?%*|\"<>");
    for (QChar& c : stem)
        if (bad.contains(c) || c.unicode() < 0x20)
            c = QLatin1Char('_');
    return stem.isEmpty() ? QStringLiteral("export") : stem;
}

bool defaultPolicy(const QWidget* w)
{
    return w->contextMenuPolicy() == Qt::DefaultContextMenu;
}

} // namespace

QString plotTitle(QCustomPlot* plot)
{
    if (plot->plotLayout())
        for (int i = 0; i < plot->plotLayout()->elementCount(); ++i)
            if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i)); title && !title->text().isEmpty())
                return title->text().section(QLatin1Char('\n'), 0, 0);
    return plot->objectName().isEmpty() ? QObject::tr("Chart") : plot->objectName();
}

bool plotHasContent(QCustomPlot* plot)
{
    if (plot->itemCount() > 0)
        return true;
    for (int i = 0; i < plot->plottableCount(); ++i) {
        QCPAbstractPlottable* p = plot->plottable(i);
        if (p && p->visible() && p->interface1D() && p->interface1D()->dataCount() > 0)
            return true;
    }
    return false;
}

QByteArray plotPng(QCustomPlot* plot, int width, int height, double scale)
{
    const QPixmap pixmap = plot->toPixmap(width, height, scale);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (pixmap.isNull() || !pixmap.save(&buffer, "PNG"))
        return {};
    return bytes;
}

bool exportPlot(QCustomPlot* plot, const QString& path, QString* error)
{
    if (!plot)
        return fail(error, QObject::tr("Cannot write %1: there is no chart").arg(path));
    const QString suffix = QFileInfo(path).suffix().toLower();
    const QSize size = exportSize(plot);
    QByteArray bytes;
    QString why;
    if (suffix == QLatin1String("png")) {
        bytes = plotPng(plot, size.width(), size.height(), 2.0);
        why = QObject::tr("the chart could not be drawn");
    } else if (suffix == QLatin1String("pdf")) {
        bytes = pdfOf(plot, size, &why);
    } else if (suffix == QLatin1String("svg")) {
        bytes = svgOf(plot, size);
        why = QObject::tr("the chart could not be drawn as SVG");
    } else {
        return fail(error, QObject::tr("Cannot write %1: “.%2” is not a chart format (use .png, .pdf or .svg)")
                               .arg(path, suffix));
    }
    if (bytes.isEmpty())
        return fail(error, QObject::tr("Cannot write %1: %2").arg(path, why));
    return writeFile(path, bytes, error);
}

QByteArray tableCsv(QAbstractItemModel* model)
{
    if (!model)
        return {};
    QString out;
    QStringList header;
    for (int c = 0; c < model->columnCount(); ++c)
        header << csvField(model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
    out += header.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    csvRows(model, {}, out);
    return out.toUtf8();
}

bool exportTableCsv(QAbstractItemModel* model, const QString& path, QString* error)
{
    if (!model)
        return fail(error, QObject::tr("Cannot write %1: the table has no model").arg(path));
    return writeFile(path, tableCsv(model), error);
}

QList<QList<QCustomPlot*>> stageCharts(const QList<QWidget*>& stageRoots)
{
    QList<QList<QCustomPlot*>> out;
    for (QWidget* root : stageRoots) {
        QList<QCustomPlot*> charts;
        if (root)
            charts = root->findChildren<QCustomPlot*>();
        out << charts;
    }
    return out;
}

namespace {

// Waits (processing events, as for the derivation) for the current scenario's step; false when there is
// none for it (its plan cannot run, the simulation failed, was cancelled or took longer than the wait).
bool waitForStep(Document* document)
{
    Results* results = document->results();
    results->requestStep();
    QDeadlineTimer deadline(kReportWaitMs);
    while (!results->isStepCurrent() && results->stepJob()->isBusy() && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QCoreApplication::processEvents(); // the step's delivery to the panes
    return results->isStepCurrent();
}

// Waits likewise for the batch ramp's phase steps when the scenario has a ramp; null when there is none,
// or they did not arrive.
std::shared_ptr<const RampResult> waitForRamp(Document* document)
{
    Results* results = document->results();
    if (document->scenario().run.batchRamp.empty())
        return nullptr;
    results->requestRamp();
    QDeadlineTimer deadline(kReportWaitMs);
    while (!results->isRampCurrent() && results->rampJob()->isBusy() && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QCoreApplication::processEvents(); // the delivery to the Run tab
    return results->isRampCurrent() ? results->ramp() : nullptr;
}

// Stage 5's figures for the report: the fabric's and the simulation's, then the run's (as the Run tab
// shows it); when there is no run (its batch ramp's phases failed or did not arrive), a note says why.
std::vector<Figure> stepFigures(const StepResult& step, const scenario::RunSettings& runSettings, const RampResult* ramp,
                                std::vector<std::string>& notes)
{
    std::vector<Figure> out;
    for (const FigureSet* set : {&step.network->figures, &step.simulation->figures})
        out.insert(out.end(), set->all().begin(), set->all().end());
    if (const auto run = runOfStep(step, runSettings, ramp))
        out.insert(out.end(), run.value().figures.all().begin(), run.value().figures.all().end());
    else
        notes.push_back(QObject::tr("The run's figures are not in this report: %1.").arg(qs(run.error().toString())).toStdString());
    return out;
}

std::string stepMissingNote(Document* document)
{
    const QString why = document->results()->stepProblem();
    return (why.isEmpty() ? QObject::tr("Stage 5's step is not in this report: its simulation did not finish. Export "
                                        "again once stage 5 shows it.")
                          : QObject::tr("Stage 5's step is not in this report: %1.").arg(why))
        .toStdString();
}

} // namespace

bool exportReport(Document* document, const QList<QList<QCustomPlot*>>& chartsPerStage, const QString& path,
                  QString* error)
{
    const QFileInfo info(path);
    const QString suffix = info.suffix().toLower();
    enum class Format { Markdown, Html, Json };
    Format format;
    if (suffix == QLatin1String("md") || suffix == QLatin1String("markdown"))
        format = Format::Markdown;
    else if (suffix == QLatin1String("html") || suffix == QLatin1String("htm"))
        format = Format::Html;
    else if (suffix == QLatin1String("json"))
        format = Format::Json;
    else
        return fail(error, QObject::tr("Cannot write %1: “.%2” is not a report format (use .md, .html or .json)")
                               .arg(path, suffix));
    if (!document)
        return fail(error, QObject::tr("Cannot write %1: there is no scenario").arg(path));
    if (document->isDeriving() && !document->waitForDerivation(kReportWaitMs))
        return fail(error, QObject::tr("Cannot write %1: the scenario is still being derived").arg(path));
    const Document::DerivationPtr d = document->derivation();
    if (!d)
        return fail(error, QObject::tr("Cannot write %1: the scenario has not been derived").arg(path));
    if (!document->problems().empty() || !document->isDerivationCurrent())
        return fail(error, QObject::tr("Cannot write %1: the figures are not those of the current scenario (%2)")
                               .arg(path, document->problems().empty()
                                              ? QObject::tr("its derivation was stopped")
                                              : qs(document->problems().front().toString())));
    const scenario::Scenario& s = document->scenario();
    if (format == Format::Json)
        return writeFile(path, QByteArray::fromStdString(scenario::derivationJsonText(s, *d) + "\n"), error);

    scenario::ReportOptions options;
    // Stage 5 draws the scenario's simulated step: wait for it as for the derivation, or say why it is not there.
    if (d->stage3 && !waitForStep(document))
        options.notes[4].push_back(stepMissingNote(document));
    else if (const auto step = document->results()->step(); step && document->results()->isStepCurrent())
        options.stepFigures = stepFigures(*step, s.run, waitForRamp(document).get(), options.notes[4]);
    options.date = QDate::currentDate().toString(Qt::ISODate).toStdString();
    options.generator = "TokenWire " TOKENWIRE_VERSION;
    options.units = AppSettings::instance()->displayUnits();
    const QString folderName = info.completeBaseName() + QStringLiteral("_files");
    const QDir folder(info.absoluteDir().filePath(folderName));
    QStringList written; // every picture of this export
    QStringList created; // those that were not there before
    bool createdFolder = false;
    // On failure: the pictures this export added go, the folder too when this export made it.
    auto undoPictures = [&] {
        for (const QString& file : created)
            QFile::remove(file);
        if (createdFolder)
            QDir().rmdir(folder.absolutePath());
    };
    for (int k = 0; k < chartsPerStage.size() && k < kStageCount; ++k) {
        int n = 0;
        for (QCustomPlot* plot : chartsPerStage[k]) {
            if (!plot || !plotHasContent(plot))
                continue;
            // A chart of a result computed for an earlier scenario (a sweep of another preset) is left out.
            if (const auto generation = resultGeneration(plot); generation && *generation != document->generation()) {
                options.notes[std::size_t(k)].push_back(
                    QObject::tr("The chart “%1” is left out: it shows a result computed for an earlier scenario. Run it "
                                "again for this one to include it.")
                        .arg(plotTitle(plot))
                        .toStdString());
                continue;
            }
            ++n;
            const QByteArray png = plotPng(plot, kDefaultWidth, kDefaultHeight);
            if (png.isEmpty()) {
                undoPictures();
                return fail(error, QObject::tr("Cannot write %1: the chart “%2” could not be drawn").arg(path, plotTitle(plot)));
            }
            std::string source;
            if (format == Format::Html) {
                source = "data:image/png;base64," + png.toBase64().toStdString();
            } else {
                if (!folder.exists()) {
                    if (!QDir().mkdir(folder.absolutePath())) {
                        return fail(error, QObject::tr("Cannot write %1: cannot create the folder %2 for its pictures")
                                               .arg(path, folder.absolutePath()));
                    }
                    createdFolder = true;
                }
                const QString file = QStringLiteral("stage%1-%2.png").arg(k + 1).arg(n);
                const QString filePath = folder.filePath(file);
                const bool existed = QFileInfo::exists(filePath);
                if (!writeFile(filePath, png, error)) {
                    undoPictures();
                    return false;
                }
                written << filePath;
                if (!existed)
                    created << filePath;
                source = (folderName + QLatin1Char('/') + file).toStdString();
            }
            options.images[std::size_t(k)].push_back({plotTitle(plot).toStdString(), source});
        }
    }
    const std::string text = format == Format::Html ? scenario::reportHtml(s, *d, options)
                                                    : scenario::reportMarkdown(s, *d, options);
    if (!writeFile(path, QByteArray::fromStdString(text), error)) {
        undoPictures();
        return false;
    }
    // Pictures of an earlier export with more charts would be left unreferenced: remove them.
    if (format == Format::Markdown && folder.exists()) {
        for (const QFileInfo& old : folder.entryInfoList({QStringLiteral("stage*-*.png")}, QDir::Files))
            if (!written.contains(old.absoluteFilePath()))
                QFile::remove(old.absoluteFilePath());
    }
    return true;
}

ExportMenus::ExportMenus(QObject* parent)
    : QObject(parent)
    , m_lastDir(QDir::homePath())
{
    setObjectName(QStringLiteral("exportMenus"));
    askSavePath = [](QWidget* parent, const QString& caption, const QString& suggested, const QString& filter) {
        return QFileDialog::getSaveFileName(parent, caption, suggested, filter);
    };
    showError = [](QWidget* parent, const QString& title, const QString& message) {
        QMessageBox::warning(parent, title, message);
    };
}

ExportMenus* ExportMenus::install()
{
    static QPointer<ExportMenus> instance;
    if (!instance && qApp) {
        instance = new ExportMenus(qApp);
        qApp->installEventFilter(instance);
    }
    return instance;
}

QWidget* ExportMenus::exportTarget(QWidget* widget)
{
    if (!widget)
        return nullptr;
    if (auto* plot = qobject_cast<QCustomPlot*>(widget))
        return defaultPolicy(plot) ? plot : nullptr;
    // A right-click on a table lands on its viewport; the keyboard's menu key on the view itself.
    QWidget* candidate = widget;
    if (auto* view = qobject_cast<QAbstractItemView*>(widget->parentWidget()); view && view->viewport() == widget) {
        if (!defaultPolicy(widget))
            return nullptr;
        candidate = view;
    }
    if (qobject_cast<QTableView*>(candidate) || qobject_cast<QTreeView*>(candidate))
        return defaultPolicy(candidate) && static_cast<QAbstractItemView*>(candidate)->model() ? candidate : nullptr;
    return nullptr;
}

bool ExportMenus::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::ContextMenu || !watched->isWidgetType())
        return false;
    QWidget* target = exportTarget(static_cast<QWidget*>(watched));
    if (!target)
        return false;
    auto* menu = new QMenu(target);
    menu->setObjectName(QStringLiteral("exportMenu"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    if (auto* plot = qobject_cast<QCustomPlot*>(target)) {
        const QPointer<QCustomPlot> p(plot);
        for (const char* suffix : {"png", "pdf", "svg"}) {
            const QString s = QString::fromLatin1(suffix);
            QAction* a = menu->addAction(tr("Export chart as %1…").arg(s.toUpper()));
            a->setObjectName(QStringLiteral("export") + s.toUpper());
            connect(a, &QAction::triggered, this, [this, p, s] {
                if (p)
                    exportChart(p, s);
            });
        }
    } else {
        const QPointer<QAbstractItemView> v(static_cast<QAbstractItemView*>(target));
        QAction* a = menu->addAction(tr("Export table as CSV…"));
        a->setObjectName(QStringLiteral("exportCSV"));
        connect(a, &QAction::triggered, this, [this, v] {
            if (v)
                exportTable(v);
        });
    }
    m_menu = menu;
    menu->popup(static_cast<QContextMenuEvent*>(event)->globalPos());
    event->accept();
    return true;
}

QString ExportMenus::suggested(const QString& name, const QString& suffix) const
{
    return QDir(m_lastDir).filePath(fileStem(name) + QLatin1Char('.') + suffix);
}

QString ExportMenus::ask(QWidget* parent, const QString& caption, const QString& suggestedPath, const QString& filter,
                         const QString& defaultSuffix)
{
    QString path = askSavePath ? askSavePath(parent, caption, suggestedPath, filter) : QString();
    if (path.isEmpty())
        return {};
    if (QFileInfo(path).suffix().isEmpty())
        path += QLatin1Char('.') + defaultSuffix;
    return path;
}

void ExportMenus::exportChart(QCustomPlot* plot, const QString& suffix)
{
    const QString filter = suffix == QLatin1String("png")   ? tr("PNG image (*.png)")
                           : suffix == QLatin1String("pdf") ? tr("PDF document (*.pdf)")
                                                            : tr("SVG drawing (*.svg)");
    const QString path = ask(plot, tr("Export chart as %1").arg(suffix.toUpper()), suggested(plotTitle(plot), suffix), filter, suffix);
    if (path.isEmpty())
        return;
    QString error;
    if (exportPlot(plot, path, &error))
        m_lastDir = QFileInfo(path).absolutePath();
    else if (showError)
        showError(plot, tr("Export chart"), error);
}

void ExportMenus::exportTable(QAbstractItemView* view)
{
    const QString path = ask(view, tr("Export table as CSV"), suggested(view->objectName(), QStringLiteral("csv")),
                             tr("CSV table (*.csv)"), QStringLiteral("csv"));
    if (path.isEmpty())
        return;
    QString error;
    if (exportTableCsv(view->model(), path, &error))
        m_lastDir = QFileInfo(path).absolutePath();
    else if (showError)
        showError(view, tr("Export table"), error);
}

void ExportMenus::exportReportInteractively(Document* document, const QList<QWidget*>& stageRoots, QWidget* parent)
{
    if (!document)
        return;
    const QString name = document->scenario().name.empty() ? QStringLiteral("report") : qs(document->scenario().name);
    const QString path = ask(parent, tr("Export report"), suggested(name, QStringLiteral("html")),
                             tr("HTML report (*.html);;Markdown report (*.md);;Derivation as JSON (*.json)"),
                             QStringLiteral("html"));
    if (path.isEmpty())
        return;
    QString error;
    if (exportReport(document, stageCharts(stageRoots), path, &error))
        m_lastDir = QFileInfo(path).absolutePath();
    else if (showError)
        showError(parent, tr("Export report"), error);
}

} // namespace tw::ui
