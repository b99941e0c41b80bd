// Export, driven offscreen with real widgets: a chart to PNG (2× its size), PDF and SVG (read back as
// an image, a PDF header, an XML drawing with the plot's paths and texts); a table to CSV (parsed back
// by an independent RFC 4180 reader); the report as JSON, HTML and Markdown from a live Document and
// the stage 2 pane's charts (parsed back: the figures, the embedded PNGs, the picture files); failing
// paths reported with the path and the reason, leaving no file behind; the context menus opened by a
// right-click, their entries, a chosen entry writing through the file hook, and widgets that have
// their own menu left alone.

// Mouse events through the window system, as a real click: the right button's press then makes the
// widget window send the QContextMenuEvent (QTest's default sends the mouse event to the widget alone).
#define QTEST_QPA_MOUSE_HANDLING

#include "../support/testsupport.h"
#include "charts/kernelchart.h"
#include "charts/modelcharts.h"
#include "document/document.h"
#include "charts/chartframe.h"
#include "charts/wirecharts.h"
#include "panes/runpanel.h"
#include "panes/wirepane.h"
#include "document/results.h"
#include "export/exporter.h"
#include "panes/tensorpane.h"
#include "views/figuretablemodel.h"

#include "scenario/derivationjson.h"
#include "scenario/derive.h"

#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QPointer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QXmlStreamReader>

#include <qcustomplot.h>

#include <memory>

using tw::ui::Document;
using tw::ui::ExportMenus;
using tw::ui::TensorPane;

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// RFC 4180, read independently of the writer: fields split on commas outside quotes, "" inside quotes
// is one quote, records end with CRLF (a bare LF is accepted too).
QList<QStringList> parseCsv(const QByteArray& bytes)
{
    const QString text = QString::fromUtf8(bytes);
    QList<QStringList> records;
    QStringList record;
    QString field;
    bool quoted = false;
    bool fieldStarted = false;
    for (int i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (quoted) {
            if (c == QLatin1Char('"')) {
                if (i + 1 < text.size() && text[i + 1] == QLatin1Char('"')) {
                    field += c;
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                field += c;
            }
        } else if (c == QLatin1Char('"') && !fieldStarted) {
            quoted = true;
            fieldStarted = true;
        } else if (c == QLatin1Char(',')) {
            record << field;
            field.clear();
            fieldStarted = false;
        } else if (c == QLatin1Char('\r') || c == QLatin1Char('\n')) {
            if (c == QLatin1Char('\r') && i + 1 < text.size() && text[i + 1] == QLatin1Char('\n'))
                ++i;
            record << field;
            records << record;
            record.clear();
            field.clear();
            fieldStarted = false;
        } else {
            field += c;
            fieldStarted = true;
        }
    }
    if (fieldStarted || !record.isEmpty()) {
        record << field;
        records << record;
    }
    return records;
}

// What an SVG file holds: its root element, the size it declares, its drawing elements and its texts.
struct Svg {
    QString error;
    QString root;
    QString width, height, viewBox;
    int shapes = 0;
    QStringList texts;
};

Svg parseSvg(const QByteArray& bytes)
{
    Svg s;
    QXmlStreamReader xml(bytes);
    QString text;
    int depthInText = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            if (s.root.isEmpty()) {
                s.root = xml.name().toString();
                s.width = xml.attributes().value(QStringLiteral("width")).toString();
                s.height = xml.attributes().value(QStringLiteral("height")).toString();
                s.viewBox = xml.attributes().value(QStringLiteral("viewBox")).toString();
            }
            const QString name = xml.name().toString();
            if (name == QStringLiteral("path") || name == QStringLiteral("polyline") || name == QStringLiteral("polygon")
                || name == QStringLiteral("rect") || name == QStringLiteral("line"))
                ++s.shapes;
            if (name == QStringLiteral("text")) {
                ++depthInText;
                text.clear();
            }
        } else if (xml.isCharacters() && depthInText > 0) {
            text += xml.text();
        } else if (xml.isEndElement() && xml.name() == QStringLiteral("text")) {
            --depthInText;
            s.texts << text.trimmed();
        }
    }
    if (xml.hasError())
        s.error = xml.errorString();
    return s;
}

// A plot with a title, labelled axes, a line and bars: something to see in every format.
std::unique_ptr<QCustomPlot> makePlot()
{
    auto plot = std::make_unique<QCustomPlot>();
    plot->setObjectName(QStringLiteral("testPlot"));
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot.get(), QStringLiteral("Tokens <&> per rank"), QFont(QStringLiteral("DejaVu Sans"), 12, QFont::Bold)));
    plot->xAxis->setLabel(QStringLiteral("rank"));
    plot->yAxis->setLabel(QStringLiteral("tokens"));
    QVector<double> x, y;
    for (int i = 0; i < 50; ++i) {
        x << i;
        y << 100.0 / (i + 1);
    }
    plot->addGraph()->setData(x, y);
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setData({5, 10, 15}, {40, 60, 20});
    plot->rescaleAxes();
    plot->resize(640, 400);
    return plot;
}

QStringList actionTexts(QMenu* menu)
{
    QStringList out;
    for (QAction* a : menu->actions())
        if (!a->isSeparator())
            out << a->text();
    return out;
}

QAction* actionNamed(QMenu* menu, const QString& text)
{
    for (QAction* a : menu->actions())
        if (a->text() == text)
            return a;
    return nullptr;
}

// Chooses the action with the keyboard, as a user does in an open menu: arrows down to it, Return.
void choose(QMenu* menu, QAction* action)
{
    QVERIFY(menu && action);
    while (menu->activeAction() != action) {
        QAction* before = menu->activeAction();
        QTest::keyClick(menu, Qt::Key_Down);
        QVERIFY(menu->activeAction() != before);
    }
    QTest::keyClick(menu, Qt::Key_Return);
}

// The files of a folder, hidden ones (a temporary file left behind) included.
QStringList filesIn(const QString& dir)
{
    return QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
}

} // namespace

class TstExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void chartToPng();
    void chartToPdf();
    void chartToSvg();
    void realPaneChartAtTwiceItsSize();
    void tableToCsv();
    void figureTableToCsv();
    void reportAsJson();
    void reportAsHtml();
    void reportAsMarkdown();
    void reportLeavesOutChartsOfAnEarlierScenario();
    void reportCarriesTheRampsPhases();
    void failingPathsReportedWithoutLeftovers();
    void reportFailureLeavesNoPictures();
    void chartContextMenuExportsThroughTheHook();
    void tableContextMenuExportsThroughTheHook();
    void contextMenuErrorGoesToTheHook();
    void ownMenusAreLeftAlone();
    void reportThroughTheHook();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<Document> m_doc;
    std::unique_ptr<TensorPane> m_pane;
    QStringList m_asked;   // captions the file hook was asked with
    QString m_answer;      // what the file hook answers
    QStringList m_errors;  // messages the error hook got
};

void TstExport::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
    ExportMenus* menus = ExportMenus::install();
    QVERIFY(menus);
    QCOMPARE(ExportMenus::install(), menus); // installed once
    menus->askSavePath = [this](QWidget*, const QString& caption, const QString&, const QString&) {
        m_asked << caption;
        return m_answer;
    };
    menus->showError = [this](QWidget*, const QString&, const QString& message) { m_errors << message; };
}

void TstExport::init()
{
    m_asked.clear();
    m_errors.clear();
    m_answer.clear();
}

void TstExport::cleanup()
{
    m_pane.reset();
    m_doc.reset();
    if (QWidget* popup = QApplication::activePopupWidget())
        popup->close();
}

void TstExport::chartToPng()
{
    auto plot = makePlot();
    plot->show();
    QVERIFY(QTest::qWaitForWindowExposed(plot.get()));
    const QString path = m_dir.filePath(QStringLiteral("chart.png"));
    QString error;
    QVERIFY2(tw::ui::exportPlot(plot.get(), path, &error), qPrintable(error));
    QImage image;
    QVERIFY(image.load(path, "PNG"));
    QCOMPARE(image.size(), QSize(1280, 800)); // 640×400 at 2×
    // Not a blank picture: the line, the bars, the labels give it many colours.
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 4)
        for (int x = 0; x < image.width(); x += 4)
            colours.insert(image.pixel(x, y));
    QVERIFY2(colours.size() > 5, qPrintable(QString::number(colours.size())));
}

void TstExport::chartToPdf()
{
    auto plot = makePlot();
    plot->show();
    QVERIFY(QTest::qWaitForWindowExposed(plot.get()));
    const QString path = m_dir.filePath(QStringLiteral("chart.pdf"));
    QString error;
    QVERIFY2(tw::ui::exportPlot(plot.get(), path, &error), qPrintable(error));
    const QByteArray pdf = readAll(path);
    QVERIFY(pdf.startsWith("%PDF-"));
    QVERIFY(pdf.trimmed().endsWith("%%EOF"));
    QVERIFY(pdf.size() > 1000);
}

void TstExport::chartToSvg()
{
    auto plot = makePlot();
    plot->show();
    QVERIFY(QTest::qWaitForWindowExposed(plot.get()));
    const QString path = m_dir.filePath(QStringLiteral("chart.svg"));
    QString error;
    QVERIFY2(tw::ui::exportPlot(plot.get(), path, &error), qPrintable(error));
    const Svg svg = parseSvg(readAll(path));
    QVERIFY2(svg.error.isEmpty(), qPrintable(svg.error));
    QCOMPARE(svg.root, QStringLiteral("svg"));
    // 640×400 px at 96 dpi: 169.33 × 105.83 mm, the drawing's coordinates in px.
    QCOMPARE(svg.viewBox, QStringLiteral("0 0 640 400"));
    QVERIFY2(svg.width.startsWith(QStringLiteral("169.3")) && svg.width.endsWith(QStringLiteral("mm")), qPrintable(svg.width));
    QVERIFY2(svg.shapes > 10, qPrintable(QString::number(svg.shapes)));
    // The title (escaped in the file, its characters back after parsing), the axis labels, tick labels.
    QVERIFY2(svg.texts.contains(QStringLiteral("Tokens <&> per rank")), qPrintable(svg.texts.join(QLatin1Char('|'))));
    QVERIFY(svg.texts.contains(QStringLiteral("rank")));
    QVERIFY(svg.texts.contains(QStringLiteral("tokens")));
    QVERIFY(svg.texts.contains(QStringLiteral("100")));
}

void TstExport::realPaneChartAtTwiceItsSize()
{
    m_doc = std::make_unique<Document>();
    m_pane = std::make_unique<TensorPane>(m_doc.get());
    m_pane->resize(1400, 850);
    m_pane->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_pane.get()));
    QVERIFY(m_doc->waitForDerivation());
    QCustomPlot* memory = m_pane->charts()->memoryPlot();
    for (int i = 0; i < m_pane->tabs()->count(); ++i)
        if (m_pane->tabs()->widget(i)->isAncestorOf(memory))
            m_pane->tabs()->setCurrentIndex(i);
    QApplication::processEvents();
    QVERIFY(memory->isVisible());
    QVERIFY(tw::ui::plotHasContent(memory));
    const QSize size = memory->width() >= 100 && memory->height() >= 80 ? memory->size() : QSize(960, 600);
    const QString path = m_dir.filePath(QStringLiteral("memory.png"));
    QString error;
    QVERIFY2(tw::ui::exportPlot(memory, path, &error), qPrintable(error));
    QImage image;
    QVERIFY(image.load(path, "PNG"));
    QCOMPARE(image.size(), size * 2);
    QVERIFY(!tw::ui::plotTitle(memory).isEmpty());
}

void TstExport::tableToCsv()
{
    QStandardItemModel model(0, 3);
    model.setHorizontalHeaderLabels({QStringLiteral("Figure"), QStringLiteral("Value, unit"), QStringLiteral("Formula")});
    const QList<QStringList> rows = {
        {QStringLiteral("Tokens"), QStringLiteral("298 tokens"), QStringLiteral("n_tokens = 298")},
        {QStringLiteral("Memory"), QStringLiteral("248.9 MB"), QStringLiteral("P·s_w = 124,439,808·2")},
        {QStringLiteral("Quote \"q\""), QStringLiteral("a, b"), QStringLiteral("two\nlines")},
        {QString(), QStringLiteral("Dante: «Nel mezzo»"), QStringLiteral("\"")},
    };
    for (const QStringList& r : rows) {
        QList<QStandardItem*> items;
        for (const QString& cell : r)
            items << new QStandardItem(cell);
        model.appendRow(items);
    }
    const QString path = m_dir.filePath(QStringLiteral("table.csv"));
    QString error;
    QVERIFY2(tw::ui::exportTableCsv(&model, path, &error), qPrintable(error));
    const QByteArray bytes = readAll(path);
    // RFC 4180 on the wire: CRLF records, quoted fields with doubled quotes.
    QVERIFY(bytes.startsWith("Figure,\"Value, unit\",Formula\r\n"));
    QVERIFY(bytes.contains("\"Quote \"\"q\"\"\",\"a, b\",\"two\nlines\"\r\n"));
    const QList<QStringList> parsed = parseCsv(bytes);
    QCOMPARE(parsed.size(), 1 + rows.size());
    QCOMPARE(parsed[0], (QStringList{QStringLiteral("Figure"), QStringLiteral("Value, unit"), QStringLiteral("Formula")}));
    for (int r = 0; r < rows.size(); ++r)
        QCOMPARE(parsed[r + 1], rows[r]);
}

void TstExport::figureTableToCsv()
{
    m_doc = std::make_unique<Document>();
    QVERIFY(m_doc->waitForDerivation());
    tw::ui::FigureTableModel model;
    model.setFigures(m_doc->derivation()->figures);
    const QString path = m_dir.filePath(QStringLiteral("figures.csv"));
    QString error;
    QVERIFY2(tw::ui::exportTableCsv(&model, path, &error), qPrintable(error));
    const QList<QStringList> parsed = parseCsv(readAll(path));
    QCOMPARE(parsed.size(), model.rowCount() + 1);
    for (int c = 0; c < model.columnCount(); ++c)
        QCOMPARE(parsed[0][c], model.headerData(c, Qt::Horizontal).toString());
    for (int r = 0; r < model.rowCount(); ++r)
        for (int c = 0; c < model.columnCount(); ++c)
            QCOMPARE(parsed[r + 1][c], model.index(r, c).data().toString());
    // 124,439,808 parameters keep their commas inside one quoted field.
    bool found = false;
    for (const QStringList& row : parsed)
        found = found || row.contains(QStringLiteral("124,439,808 params"));
    QVERIFY(found);
}

void TstExport::reportAsJson()
{
    m_doc = std::make_unique<Document>();
    QVERIFY(m_doc->waitForDerivation());
    const QString path = m_dir.filePath(QStringLiteral("derivation.json"));
    QString error;
    QVERIFY2(tw::ui::exportReport(m_doc.get(), {}, path, &error), qPrintable(error));
    const QByteArray bytes = readAll(path);
    // The CLI's document: the same text, one line and a newline.
    QCOMPARE(bytes, QByteArray::fromStdString(tw::scenario::derivationJsonText(m_doc->scenario(), *m_doc->derivation()) + "\n"));
    QJsonParseError parseError;
    const QJsonObject doc = QJsonDocument::fromJson(bytes, &parseError).object();
    QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
    QCOMPARE(doc.value(QStringLiteral("scenario")).toString(), QStringLiteral("paper-reference"));
    const QJsonArray figures = doc.value(QStringLiteral("figures")).toArray();
    QCOMPARE(std::size_t(figures.size()), m_doc->derivation()->figures.size());
    bool found = false;
    for (const auto& f : figures)
        if (f.toObject().value(QStringLiteral("id")).toString() == QStringLiteral("model.parameters")) {
            found = true;
            QCOMPARE(f.toObject().value(QStringLiteral("value")).toDouble(), 124439808.0);
        }
    QVERIFY(found);
}

void TstExport::reportAsHtml()
{
    m_doc = std::make_unique<Document>();
    m_pane = std::make_unique<TensorPane>(m_doc.get());
    m_pane->resize(1400, 850);
    m_pane->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_pane.get()));
    QVERIFY(m_doc->waitForDerivation());
    const auto charts = tw::ui::stageCharts({nullptr, m_pane.get(), nullptr, nullptr, nullptr});
    QCOMPARE(charts.size(), 5);
    QVERIFY(charts[0].isEmpty() && charts[2].isEmpty());
    QVERIFY(charts[1].contains(m_pane->charts()->parametersPlot()));
    QVERIFY(charts[1].contains(m_pane->charts()->memoryPlot()));
    QVERIFY(charts[1].contains(m_pane->kernelChart()->plot())); // the Kernels tab's chart (issue #19)

    const QString path = m_dir.filePath(QStringLiteral("report.html"));
    QString error;
    QVERIFY2(tw::ui::exportReport(m_doc.get(), charts, path, &error), qPrintable(error));
    const QByteArray html = readAll(path);
    QVERIFY(html.startsWith("<!DOCTYPE html>"));
    for (const tw::Figure& f : m_doc->derivation()->figures.all())
        QVERIFY2(html.count(QByteArray::fromStdString("<code>" + f.id + "</code>")) == 1, f.id.c_str());
    // Today's date under the title.
    QVERIFY(html.contains(QDate::currentDate().toString(Qt::ISODate).toUtf8()));
    // Each chart embedded as a PNG data URI that decodes to a 960×600 picture.
    const QRegularExpression img(QStringLiteral("<img src=\"data:image/png;base64,([A-Za-z0-9+/=]+)\" alt=\"([^\"]*)\""));
    int images = 0;
    for (auto it = img.globalMatch(QString::fromUtf8(html)); it.hasNext();) {
        const auto m = it.next();
        QImage picture;
        QVERIFY(picture.loadFromData(QByteArray::fromBase64(m.captured(1).toLatin1()), "PNG"));
        QCOMPARE(picture.size(), QSize(960, 600));
        QVERIFY(!m.captured(2).isEmpty());
        ++images;
    }
    QCOMPARE(images, charts[1].size());
    // Well-formed: an XML reader gets through it.
    QXmlStreamReader xml(html);
    while (!xml.atEnd())
        xml.readNext();
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
}

void TstExport::reportAsMarkdown()
{
    m_doc = std::make_unique<Document>();
    m_pane = std::make_unique<TensorPane>(m_doc.get());
    m_pane->resize(1400, 850);
    m_pane->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_pane.get()));
    QVERIFY(m_doc->waitForDerivation());
    const auto charts = tw::ui::stageCharts({nullptr, m_pane.get(), nullptr, nullptr, nullptr});
    QCOMPARE(charts[1].size(), 3); // parameters, memory, and one layer's kernels

    const QString path = m_dir.filePath(QStringLiteral("story.md"));
    QString error;
    QVERIFY2(tw::ui::exportReport(m_doc.get(), charts, path, &error), qPrintable(error));
    const QString md = QString::fromUtf8(readAll(path));
    for (const tw::Figure& f : m_doc->derivation()->figures.all())
        QVERIFY2(md.count(QStringLiteral("<a id=\"fig-%1\"></a>").arg(QString::fromStdString(f.id))) == 1, f.id.c_str());
    // Each picture named in the Markdown exists beside it and is a PNG.
    const QRegularExpression pic(QStringLiteral("!\\[[^\\]]*\\]\\(([^)]+)\\)"));
    QStringList sources;
    for (auto it = pic.globalMatch(md); it.hasNext();)
        sources << it.next().captured(1);
    QCOMPARE(sources, (QStringList{QStringLiteral("story_files/stage2-1.png"), QStringLiteral("story_files/stage2-2.png"),
                                   QStringLiteral("story_files/stage2-3.png")}));
    for (const QString& s : sources) {
        QImage picture;
        QVERIFY2(picture.load(m_dir.filePath(s), "PNG"), qPrintable(s));
        QCOMPARE(picture.size(), QSize(960, 600));
    }
    // Exported again with one chart: the second picture, no longer referenced, is gone.
    QVERIFY2(tw::ui::exportReport(m_doc.get(), {{}, {charts[1][0]}}, path, &error), qPrintable(error));
    QVERIFY(QFileInfo::exists(m_dir.filePath(QStringLiteral("story_files/stage2-1.png"))));
    QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("story_files/stage2-2.png"))));
    QVERIFY(!QString::fromUtf8(readAll(path)).contains(QStringLiteral("stage2-2.png")));
}

// Issue 40: a scenario with a batch ramp — paper-dp, G_1 = 262,144 tokens until 10^9 of D = 10^10 —
// reports its run with the ramp's phase simulated (the export waits for it as for the step): the phase's
// figures are there, and run.steps = 3,815 + 17,167 = 20,982 (⌈10^9 / 262,144⌉ and ⌈9·10^9 / 524,288⌉).
// A ramp that cannot run (4 GPUs are half a server) leaves the run out with the reason.
void TstExport::reportCarriesTheRampsPhases()
{
    m_doc = std::make_unique<Document>();
    QVERIFY(m_doc->loadPreset(QStringLiteral("paper-dp")));
    QVERIFY(m_doc->waitForDerivation());
    for (const auto& [ramp, name] : {std::pair{tw::scenario::BatchPhase{1e9, 262144, 0, 0}, "ramp.json"},
                                     std::pair{tw::scenario::BatchPhase{1e9, 262144, 0, 4}, "bad-ramp.json"}}) {
        tw::scenario::Scenario s = m_doc->scenario();
        s.run.tokens = 1e10;
        s.run.batchRamp = {ramp};
        const QString file = m_dir.filePath(QString::fromLatin1(name));
        QVERIFY(tw::test::writeScenarioFile(file.toStdString(), s));
        QString error;
        QVERIFY2(m_doc->open(file, &error), qPrintable(error));
        QVERIFY(m_doc->waitForDerivation());
        const QString path = m_dir.filePath(QStringLiteral("ramp-report.md"));
        QVERIFY2(tw::ui::exportReport(m_doc.get(), {}, path, &error), qPrintable(error));
        const QString md = QString::fromUtf8(readAll(path));
        if (ramp.dp == 0) {
            QVERIFY(md.contains(QStringLiteral("<a id=\"fig-run.phase1.steps\"></a>")));
            QVERIFY(md.contains(QStringLiteral("<a id=\"fig-run.phase1.step_time_s\"></a>")));
            QVERIFY(md.contains(QStringLiteral("20,982")));
        } else {
            QVERIFY(!md.contains(QStringLiteral("fig-run.steps")));
            // Markdown escapes the path's _ [ ].
            QVERIFY(md.contains(QStringLiteral(R"(The run's figures are not in this report: run.batch\_ramp\[0\].dp: )")));
        }
    }
}

// Issue 34: a report of paper-pp must not carry the testbed's sweep or a step of another preset. Stage 5
// after the testbed's sweep, then paper-pp: the report waits for paper-pp's step (its breakdown and
// throughput charts are paper-pp's), and a chart still showing an earlier scenario's result is left out
// with a note saying so.
void TstExport::reportLeavesOutChartsOfAnEarlierScenario()
{
    m_doc = std::make_unique<Document>();
    tw::ui::WirePane wire(m_doc.get());
    wire.resize(1280, 720);
    wire.show();
    QVERIFY(QTest::qWaitForWindowExposed(&wire));
    QVERIFY(m_doc->loadPreset(QStringLiteral("paper-testbed")));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(wire.waitForSimulation());
    QVERIFY(wire.runSweep(QStringLiteral("1-3")));
    QVERIFY(wire.waitForSimulation(120000));
    QCOMPARE(wire.charts()->scalingPoints(), 3);
    // A chart drawn for this scenario, tagged as the results' charts are; then another preset.
    QCustomPlot stale;
    stale.resize(400, 300);
    stale.addGraph()->setData({1, 2}, {1, 2});
    stale.plotLayout()->insertRow(0);
    stale.plotLayout()->addElement(0, 0, new QCPTextElement(&stale, QStringLiteral("An old result")));
    tw::ui::setResultGeneration(&stale, m_doc->generation());
    wire.hide(); // stage 5 not on screen: the report itself asks for the step
    QVERIFY(m_doc->loadPreset(QStringLiteral("paper-pp")));
    QVERIFY(m_doc->waitForDerivation());

    QList<QList<QCustomPlot*>> charts = tw::ui::stageCharts({nullptr, nullptr, nullptr, nullptr, &wire});
    charts[4] << &stale;
    const QString path = m_dir.filePath(QStringLiteral("pp.md"));
    QString error;
    QVERIFY2(tw::ui::exportReport(m_doc.get(), charts, path, &error), qPrintable(error));
    QVERIFY(m_doc->results()->isStepCurrent()); // the report waited for paper-pp's step
    QCOMPARE(m_doc->results()->step()->scenario->name, std::string("paper-pp"));
    const QString md = QString::fromUtf8(readAll(path));
    QVERIFY2(!md.contains(QStringLiteral("Scaling")), "the testbed's sweep is not paper-pp's");
    QVERIFY2(md.contains(QStringLiteral("“An old result” is left out")), qPrintable(md.left(2000)));
    // Stage 5's charts are the step of paper-pp: the breakdown chart's title ("Step 9.77 s: …") gives the
    // step time of the current step, not the testbed's.
    const double step = m_doc->results()->step()->simulation->stepSeconds;
    const QString title = QStringLiteral("Step %1:").arg(QString::fromStdString(tw::formatSeconds(step)));
    QVERIFY2(md.contains(title), qPrintable(title + QLatin1Char('\n') + md.left(3000)));
    QVERIFY(wire.charts()->breakdownTitle().startsWith(title));
    // Stage 5's figures are in its section (#40): the step's and the run's, once each, every input a row,
    // and the Run tab's chart of paper-pp's run.
    const QString stage5 = md.mid(md.indexOf(QStringLiteral("## Stage 5")));
    for (const char* id : {"sim.step_time_s", "run.steps", "run.goodput", "run.energy_kwh"})
        QVERIFY2(stage5.count(QStringLiteral("<a id=\"fig-%1\"></a>").arg(QLatin1String(id))) == 1, id);
    QVERIFY2(!md.contains(QStringLiteral("(not defined)")), qPrintable(stage5.left(3000)));
    QVERIFY2(stage5.contains(QStringLiteral("Goodput against the cluster size")),
             qPrintable(wire.runPanel()->statusLabel()->text()));
}

void TstExport::failingPathsReportedWithoutLeftovers()
{
    auto plot = makePlot();
    QString error;
    // A folder that does not exist.
    QVERIFY(!tw::ui::exportPlot(plot.get(), QStringLiteral("/nonexistent/dir/x.png"), &error));
    QVERIFY2(error.contains(QStringLiteral("/nonexistent/dir/x.png")) && error.contains(QStringLiteral("No such file or directory")),
             qPrintable(error));
    QVERIFY(!QFileInfo::exists(QStringLiteral("/nonexistent/dir/x.png")));
    // A full disk: a CSV name that points at /dev/full.
    QTemporaryDir dir;
    const QString full = dir.filePath(QStringLiteral("full.csv"));
    QVERIFY(QFile::link(QStringLiteral("/dev/full"), full));
    QStandardItemModel model(2, 2);
    model.setItem(0, 0, new QStandardItem(QStringLiteral("x")));
    QVERIFY(!tw::ui::exportTableCsv(&model, full, &error));
    QVERIFY2(error.contains(full) && error.contains(QStringLiteral("No space left on device")), qPrintable(error));
    QCOMPARE(QFileInfo(full).symLinkTarget(), QStringLiteral("/dev/full")); // still the link, not replaced
    // A path under a file: nothing is created, no temporary file stays.
    QFile blocker(dir.filePath(QStringLiteral("afile")));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    for (const char* name : {"afile/x.svg", "afile/x.pdf"}) {
        const QString path = dir.filePath(QString::fromLatin1(name));
        QVERIFY(!tw::ui::exportPlot(plot.get(), path, &error));
        QVERIFY2(error.contains(path) && error.contains(QStringLiteral("Not a directory")), qPrintable(error));
    }
    // Unknown formats are named.
    QVERIFY(!tw::ui::exportPlot(plot.get(), dir.filePath(QStringLiteral("x.gif")), &error));
    QVERIFY2(error.contains(QStringLiteral(".gif")), qPrintable(error));
    QVERIFY(!tw::ui::exportPlot(plot.get(), QStringLiteral("/dev/full"), &error));
    QVERIFY2(error.contains(QStringLiteral("/dev/full")), qPrintable(error));
    QCOMPARE(filesIn(dir.path()), (QStringList{QStringLiteral("afile"), QStringLiteral("full.csv")}));
    // An existing file is not touched by a failed export over it.
    const QString kept = dir.filePath(QStringLiteral("kept.png"));
    QFile k(kept);
    QVERIFY(k.open(QIODevice::WriteOnly));
    k.write("old");
    k.close();
    QVERIFY(!tw::ui::exportPlot(nullptr, kept, &error));
    QCOMPARE(readAll(kept), QByteArray("old"));
}

void TstExport::reportFailureLeavesNoPictures()
{
    m_doc = std::make_unique<Document>();
    QVERIFY(m_doc->waitForDerivation());
    auto plot = makePlot();
    QTemporaryDir dir;
    // The report's name is a folder: the pictures go first, then writing the report fails; the pictures
    // and their folder are removed again.
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("taken.md")));
    QString error;
    QVERIFY(!tw::ui::exportReport(m_doc.get(), {{plot.get()}}, dir.filePath(QStringLiteral("taken.md")), &error));
    QVERIFY2(error.contains(dir.filePath(QStringLiteral("taken.md"))) && error.contains(QStringLiteral("directory")), qPrintable(error));
    QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("taken_files"))));
    // A missing folder: named, and nothing created.
    QVERIFY(!tw::ui::exportReport(m_doc.get(), {{plot.get()}}, QStringLiteral("/nonexistent/dir/r.md"), &error));
    QVERIFY2(error.contains(QStringLiteral("/nonexistent/dir/r.md")), qPrintable(error));
    QVERIFY(!QFileInfo::exists(QStringLiteral("/nonexistent")));
    QVERIFY(!tw::ui::exportReport(m_doc.get(), {}, QStringLiteral("/nonexistent/dir/r.html"), &error));
    QVERIFY2(error.contains(QStringLiteral("/nonexistent/dir/r.html")) && error.contains(QStringLiteral("No such file or directory")),
             qPrintable(error));
    QVERIFY(!tw::ui::exportReport(m_doc.get(), {}, dir.filePath(QStringLiteral("r.txt")), &error));
    QVERIFY2(error.contains(QStringLiteral(".txt")), qPrintable(error));
    // A scenario that cannot be derived: the report would not be of it.
    QVERIFY(m_doc->setField(tw::ui::Field::HiddenSize, tw::ui::FieldValue{std::uint64_t(770)}));
    m_doc->waitForDerivation();
    QVERIFY(!m_doc->problems().empty());
    QVERIFY(!tw::ui::exportReport(m_doc.get(), {}, dir.filePath(QStringLiteral("r.json")), &error));
    QVERIFY2(error.contains(QStringLiteral("not those of the current scenario")), qPrintable(error));
    QCOMPARE(filesIn(dir.path()), QStringList());
}

void TstExport::chartContextMenuExportsThroughTheHook()
{
    auto plot = makePlot();
    plot->show();
    QVERIFY(QTest::qWaitForWindowExposed(plot.get()));
    QTest::mouseClick(plot.get(), Qt::RightButton, {}, QPoint(200, 150));
    QPointer<QMenu> menu = ExportMenus::install()->shownMenu();
    QVERIFY(menu);
    QTRY_VERIFY(menu->isVisible());
    QCOMPARE(QApplication::activePopupWidget(), menu);
    QCOMPARE(actionTexts(menu), (QStringList{QStringLiteral("Export chart as PNG…"), QStringLiteral("Export chart as PDF…"),
                                             QStringLiteral("Export chart as SVG…")}));
    m_answer = m_dir.filePath(QStringLiteral("from-menu")); // no suffix: the chosen format's is added
    QAction* svg = actionNamed(menu, QStringLiteral("Export chart as SVG…"));
    QVERIFY(svg);
    choose(menu, svg);
    QCOMPARE(m_asked, QStringList{QStringLiteral("Export chart as SVG")});
    QVERIFY2(m_errors.isEmpty(), qPrintable(m_errors.join(QLatin1Char('\n'))));
    const Svg parsed = parseSvg(readAll(m_dir.filePath(QStringLiteral("from-menu.svg"))));
    QVERIFY2(parsed.error.isEmpty() && parsed.root == QStringLiteral("svg"), qPrintable(parsed.error));
    QVERIFY(parsed.texts.contains(QStringLiteral("Tokens <&> per rank")));

    QTRY_VERIFY(!menu); // closed and deleted

    // Cancelling the dialog writes nothing.
    QTest::mouseClick(plot.get(), Qt::RightButton, {}, QPoint(100, 100));
    menu = ExportMenus::install()->shownMenu();
    QVERIFY(menu);
    QTRY_VERIFY(menu->isVisible());
    m_answer.clear();
    choose(menu, actionNamed(menu, QStringLiteral("Export chart as PNG…")));
    QCOMPARE(m_asked.size(), 2);
    QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("from-menu.png"))));
}

void TstExport::tableContextMenuExportsThroughTheHook()
{
    QStandardItemModel model(0, 2);
    model.setHorizontalHeaderLabels({QStringLiteral("Id"), QStringLiteral("Value")});
    model.appendRow({new QStandardItem(QStringLiteral("dp.buckets")), new QStandardItem(QStringLiteral("10"))});
    model.appendRow({new QStandardItem(QStringLiteral("a,b")), new QStandardItem(QStringLiteral("say \"hi\""))});
    for (bool tree : {false, true}) {
        std::unique_ptr<QAbstractItemView> view;
        if (tree)
            view = std::make_unique<QTreeView>();
        else
            view = std::make_unique<QTableView>();
        view->setModel(&model);
        view->resize(400, 300);
        view->show();
        QVERIFY(QTest::qWaitForWindowExposed(view.get()));
        QTest::mouseClick(view->viewport(), Qt::RightButton, {}, QPoint(50, 10));
        QMenu* menu = ExportMenus::install()->shownMenu();
        QVERIFY(menu);
        QTRY_VERIFY(menu->isVisible());
        QCOMPARE(actionTexts(menu), QStringList{QStringLiteral("Export table as CSV…")});
        const QString path = m_dir.filePath(tree ? QStringLiteral("tree.csv") : QStringLiteral("table.csv"));
        m_answer = path;
        choose(menu, menu->actions().first());
        QVERIFY2(m_errors.isEmpty(), qPrintable(m_errors.join(QLatin1Char('\n'))));
        const QList<QStringList> parsed = parseCsv(readAll(path));
        QCOMPARE(parsed.size(), 3);
        QCOMPARE(parsed[0], (QStringList{QStringLiteral("Id"), QStringLiteral("Value")}));
        QCOMPARE(parsed[2], (QStringList{QStringLiteral("a,b"), QStringLiteral("say \"hi\"")}));
    }
}

void TstExport::contextMenuErrorGoesToTheHook()
{
    auto plot = makePlot();
    plot->show();
    QVERIFY(QTest::qWaitForWindowExposed(plot.get()));
    QTest::mouseClick(plot.get(), Qt::RightButton, {}, QPoint(200, 150));
    QMenu* menu = ExportMenus::install()->shownMenu();
    QVERIFY(menu);
    m_answer = QStringLiteral("/nonexistent/dir/x.png");
    choose(menu, actionNamed(menu, QStringLiteral("Export chart as PNG…")));
    QCOMPARE(m_errors.size(), 1);
    QVERIFY2(m_errors[0].contains(QStringLiteral("/nonexistent/dir/x.png")) && m_errors[0].contains(QStringLiteral("No such file or directory")),
             qPrintable(m_errors[0]));
}

void TstExport::ownMenusAreLeftAlone()
{
    // A chart with its own (custom) menu keeps it: no export menu, its signal fires.
    auto plot = makePlot();
    plot->setContextMenuPolicy(Qt::CustomContextMenu);
    QSignalSpy requested(plot.get(), &QWidget::customContextMenuRequested);
    plot->show();
    QVERIFY(QTest::qWaitForWindowExposed(plot.get()));
    QTest::mouseClick(plot.get(), Qt::RightButton, {}, QPoint(200, 150));
    QCOMPARE(requested.count(), 1);
    QVERIFY(!ExportMenus::install()->shownMenu());
    QVERIFY(!QApplication::activePopupWidget());
    // A table whose menu is its actions keeps that menu.
    QStandardItemModel model(1, 1);
    QTableView view;
    view.setModel(&model);
    view.setContextMenuPolicy(Qt::ActionsContextMenu);
    view.addAction(new QAction(QStringLiteral("Own action"), &view));
    view.resize(300, 200);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(ExportMenus::exportTarget(&view) == nullptr);
    QVERIFY(ExportMenus::exportTarget(view.viewport()) == nullptr);
    // Widgets that are neither charts nor tables get nothing.
    QWidget plain;
    QVERIFY(ExportMenus::exportTarget(&plain) == nullptr);
}

void TstExport::reportThroughTheHook()
{
    m_doc = std::make_unique<Document>();
    QVERIFY(m_doc->waitForDerivation());
    m_answer = m_dir.filePath(QStringLiteral("hooked")); // no suffix: HTML
    QWidget parent;
    ExportMenus::install()->exportReportInteractively(m_doc.get(), {}, &parent);
    QCOMPARE(m_asked, QStringList{QStringLiteral("Export report")});
    QVERIFY2(m_errors.isEmpty(), qPrintable(m_errors.join(QLatin1Char('\n'))));
    QVERIFY(readAll(m_dir.filePath(QStringLiteral("hooked.html"))).startsWith("<!DOCTYPE html>"));
}

QTEST_MAIN(TstExport)
#include "tst_export.moc"
