// The derivation report (Markdown and HTML) and the derivation JSON of the paper-reference preset:
// every figure once as a row in its stage, values in both byte unit systems (expected texts derived by
// hand from the preset's inputs), input links whose anchors exist, escaping of hostile labels,
// pictures embedded, and the JSON document equal to what `tokenwire-cli derive --json` prints.

#include "scenario/derivationjson.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/report.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QProcess>
#include <QTest>
#include <QXmlStreamReader>

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace tw;
using namespace tw::scenario;

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

bool contains(const std::string& haystack, const std::string& needle)
{
    return haystack.find(needle) != std::string::npos;
}

std::size_t count(const std::string& haystack, const std::string& needle)
{
    std::size_t n = 0;
    for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size()))
        ++n;
    return n;
}

std::vector<std::string> lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

// The Markdown table row of a figure (the line that opens with its anchor), or "".
std::string markdownRow(const std::string& md, const std::string& id)
{
    const std::string head = "| <a id=\"" + figureAnchor(id) + "\"></a>";
    for (const std::string& line : lines(md))
        if (line.starts_with(head))
            return line;
    return {};
}

// The HTML table row of a figure, from "<tr id=…>" to "</tr>", or "".
std::string htmlRow(const std::string& html, const std::string& id)
{
    const auto at = html.find("<tr id=\"" + figureAnchor(id) + "\">");
    if (at == std::string::npos)
        return {};
    return html.substr(at, html.find("</tr>", at) - at + 5);
}

// The text between two markers (the first after the first), or "" when either is missing.
std::string between(const std::string& text, const std::string& from, const std::string& to)
{
    const auto a = text.find(from);
    if (a == std::string::npos)
        return {};
    const auto b = text.find(to, a + from.size());
    return text.substr(a, (b == std::string::npos ? text.size() : b) - a);
}

// What an XML parse of the page finds: element ids, link targets, row ids, the text of each <td>.
struct Parsed {
    QString error;
    std::multiset<std::string> ids;
    std::vector<std::string> hrefs;
    std::multiset<std::string> rowIds;
    std::vector<QString> cells;
    std::vector<QString> imgSources;
};

Parsed parseXml(const std::string& page)
{
    Parsed p;
    QXmlStreamReader xml(QByteArray::fromStdString(page));
    QString cell;
    int inCell = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto id = xml.attributes().value(QStringLiteral("id"));
            if (!id.isEmpty())
                p.ids.insert(id.toString().toStdString());
            if (xml.name() == QStringLiteral("tr") && !id.isEmpty())
                p.rowIds.insert(id.toString().toStdString());
            if (xml.name() == QStringLiteral("a") && xml.attributes().hasAttribute(QStringLiteral("href")))
                p.hrefs.push_back(xml.attributes().value(QStringLiteral("href")).toString().toStdString());
            if (xml.name() == QStringLiteral("img"))
                p.imgSources.push_back(xml.attributes().value(QStringLiteral("src")).toString());
            if (xml.name() == QStringLiteral("td")) {
                ++inCell;
                cell.clear();
            }
        } else if (xml.isCharacters() && inCell > 0) {
            cell += xml.text();
        } else if (xml.isEndElement() && xml.name() == QStringLiteral("td")) {
            --inCell;
            p.cells.push_back(cell);
        }
    }
    if (xml.hasError())
        p.error = QStringLiteral("line %1, column %2: %3").arg(xml.lineNumber()).arg(xml.columnNumber()).arg(xml.errorString());
    return p;
}

// The CLI beside this test in the build tree (TOKENWIRE_CLI when the build names it).
QString cliPath()
{
#ifdef TOKENWIRE_CLI
    return QStringLiteral(TOKENWIRE_CLI);
#else
    return QCoreApplication::applicationDirPath() + QStringLiteral("/../../app/tokenwire-cli");
#endif
}

} // namespace

class TstReport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void figuresByStageSplitsEachOnce();
    void everyFigureOnceAsARow_data();
    void everyFigureOnceAsARow();
    void valuesInBothUnitSystems_data();
    void valuesInBothUnitSystems();
    void inputsLinkToRowsThatExist();
    void titleAndFacts();
    void escapesHostileText();
    void imagesEmbeddedInTheirStage();
    void stepFiguresInStageFive();
    void numbersAsJson();
    void derivationJsonEqualsCli();

private:
    Scenario m_scenario;
    std::shared_ptr<const Derivation> m_derivation;
};

void TstReport::initTestCase()
{
    auto s = preset("paper-reference");
    QVERIFY2(s.ok(), s.ok() ? "" : s.error().toString().c_str());
    m_scenario = s.value();
    auto d = derive(m_scenario);
    QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
    m_derivation = d.value();
    QVERIFY(m_derivation->stage3 && m_derivation->stage4);
    QVERIFY(m_derivation->figures.size() > 100);
}

void TstReport::figuresByStageSplitsEachOnce()
{
    const auto stages = figuresByStage(*m_derivation);
    std::map<std::string, int> stageOf;
    std::size_t total = 0;
    for (int k = 0; k < tw::kStageCount; ++k)
        for (const Figure* f : stages[std::size_t(k)]) {
            QVERIFY2(stageOf.emplace(f->id, k).second, f->id.c_str());
            ++total;
        }
    QCOMPARE(total, m_derivation->figures.size());
    // The panes' grouping: stage 1 the dataset's figures, 2 the model's, 3 the plan's and the cluster's,
    // 4 the schedules', 5 none (the simulation's).
    auto prefixStage = [](const std::string& id) {
        for (const char* p : {"text.", "tokenizer.", "tokens.", "dataset."})
            if (id.starts_with(p))
                return 0;
        if (id.starts_with("memory.plan.")) // stage 3's memory of every GPU under the plan
            return 2;
        for (const char* p : {"model.", "batch.", "tensor.", "memory.", "compute."})
            if (id.starts_with(p))
                return 1;
        for (const char* p : {"hardware.", "plan.", "dp.", "pp.", "tp.", "ep.", "zero."})
            if (id.starts_with(p))
                return 2;
        if (id.starts_with("collective."))
            return 3;
        return -1;
    };
    for (const auto& [id, stage] : stageOf)
        QVERIFY2(prefixStage(id) == stage, (id + " in stage " + std::to_string(stage + 1)).c_str());
    QVERIFY(stages[4].empty());
    for (int k = 0; k < 4; ++k)
        QVERIFY(!stages[std::size_t(k)].empty());
    // Derivation order within a stage: tokens.count comes before tokens.per_word.
    const auto& s1 = stages[0];
    auto pos = [&](const std::string& id) {
        for (std::size_t i = 0; i < s1.size(); ++i)
            if (s1[i]->id == id)
                return int(i);
        return -1;
    };
    QVERIFY(pos("tokens.count") >= 0 && pos("tokens.count") < pos("tokens.per_word"));
}

void TstReport::everyFigureOnceAsARow_data()
{
    QTest::addColumn<bool>("binary");
    QTest::newRow("decimal") << false;
    QTest::newRow("binary") << true;
}

void TstReport::everyFigureOnceAsARow()
{
    QFETCH(bool, binary);
    ReportOptions o;
    o.units.bytes = binary ? ByteUnits::Binary : ByteUnits::Decimal;
    const std::string md = reportMarkdown(m_scenario, *m_derivation, o);
    const std::string html = reportHtml(m_scenario, *m_derivation, o);

    // Markdown: one table row per figure, opened by its anchor; no other rows carry anchors.
    std::size_t anchoredRows = 0;
    for (const std::string& line : lines(md))
        if (line.starts_with("| <a id=\"fig-"))
            ++anchoredRows;
    QCOMPARE(anchoredRows, m_derivation->figures.size());
    for (const Figure& f : m_derivation->figures.all()) {
        QVERIFY2(count(md, "<a id=\"" + figureAnchor(f.id) + "\">") == 1, f.id.c_str());
        QVERIFY2(!markdownRow(md, f.id).empty(), f.id.c_str());
        QVERIFY2(count(markdownRow(md, f.id), "`" + f.id + "`") == 1, f.id.c_str());
    }

    // HTML: well-formed (parsed as XML), one <tr id> per figure, each id once in the whole page.
    const Parsed p = parseXml(html);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(p.rowIds.size(), m_derivation->figures.size());
    for (const Figure& f : m_derivation->figures.all()) {
        QVERIFY2(p.rowIds.count(figureAnchor(f.id)) == 1, f.id.c_str());
        QVERIFY2(p.ids.count(figureAnchor(f.id)) == 1, f.id.c_str());
        QVERIFY2(count(htmlRow(html, f.id), "<code>" + f.id + "</code>") == 1, f.id.c_str());
    }
    for (const char* id : {"stage-1", "stage-2", "stage-3", "stage-4", "stage-5"})
        QVERIFY2(p.ids.count(id) == 1, id);

    // Each figure sits in its stage's section: tokens.count in stage 1, dp.buckets in stage 3.
    QVERIFY(contains(between(md, "## Stage 1", "## Stage 2"), "`tokens.count`"));
    QVERIFY(contains(between(md, "## Stage 3", "## Stage 4"), "`dp.buckets`"));
    QVERIFY(contains(between(md, "## Stage 4", "## Stage 5"), "`collective.wire_bytes_per_step`"));
    QVERIFY(contains(between(html, "<section id=\"stage-2\">", "</section>"), "<code>memory.weights_bytes</code>"));
    QVERIFY(!contains(between(html, "<section id=\"stage-1\">", "</section>"), "<code>memory.weights_bytes</code>"));
}

void TstReport::valuesInBothUnitSystems_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<bool>("binary");
    QTest::addColumn<QString>("expected");
    // GPT-2 small (d = 768, L = 12, V = 50,257, T_max = 1,024, tied head) has the published
    // P = 124,439,808 parameters; a count is written whole with separators in either unit system.
    QTest::newRow("P decimal") << QStringLiteral("model.parameters") << false << QStringLiteral("124,439,808 params");
    QTest::newRow("P binary") << QStringLiteral("model.parameters") << true << QStringLiteral("124,439,808 params");
    // Weights in 16 bits: P·2 = 248,879,616 B = 248.879616 MB → 4 significant digits "248.9 MB";
    // / 2^20 = 237.3516 MiB → "237.4 MiB".
    QTest::newRow("weights decimal") << QStringLiteral("memory.weights_bytes") << false << QStringLiteral("248.9 MB");
    QTest::newRow("weights binary") << QStringLiteral("memory.weights_bytes") << true << QStringLiteral("237.4 MiB");
    // The hidden state [B,T,d] in 16 bits: 32·1,024·768·2 = 50,331,648 B = 50.33 MB = exactly 48 MiB.
    QTest::newRow("hidden decimal") << QStringLiteral("tensor.hidden_bytes") << false << QStringLiteral("50.33 MB");
    QTest::newRow("hidden binary") << QStringLiteral("tensor.hidden_bytes") << true << QStringLiteral("48 MiB");
    // An A100 80 GB holds 80 GiB = 85,899,345,920 B = 85.90 GB ("85.9 GB" without the trailing zero).
    QTest::newRow("gpu decimal") << QStringLiteral("memory.gpu_capacity_bytes") << false << QStringLiteral("85.9 GB");
    QTest::newRow("gpu binary") << QStringLiteral("memory.gpu_capacity_bytes") << true << QStringLiteral("80 GiB");
}

void TstReport::valuesInBothUnitSystems()
{
    QFETCH(QString, id);
    QFETCH(bool, binary);
    QFETCH(QString, expected);
    ReportOptions o;
    o.units.bytes = binary ? ByteUnits::Binary : ByteUnits::Decimal;
    const std::string want = expected.toStdString();
    const std::string mdRow = markdownRow(reportMarkdown(m_scenario, *m_derivation, o), id.toStdString());
    QVERIFY2(contains(mdRow, " | " + want + " | "), mdRow.c_str());
    const std::string htmlRowText = htmlRow(reportHtml(m_scenario, *m_derivation, o), id.toStdString());
    QVERIFY2(contains(htmlRowText, "<td class=\"value\">" + want + "</td>"), htmlRowText.c_str());
}

void TstReport::inputsLinkToRowsThatExist()
{
    ReportOptions o;
    const std::string md = reportMarkdown(m_scenario, *m_derivation, o);
    const std::string html = reportHtml(m_scenario, *m_derivation, o);

    // memory.weights_bytes = P·s_w: both inputs linked, with their values.
    const std::string mdRow = markdownRow(md, "memory.weights_bytes");
    QVERIFY2(contains(mdRow, "[Parameters P](#fig-model.parameters) = 124,439,808 params"), mdRow.c_str());
    QVERIFY2(contains(mdRow, "(#fig-model.bytes.weights) = 2 B"), mdRow.c_str());
    const std::string hRow = htmlRow(html, "memory.weights_bytes");
    QVERIFY2(contains(hRow, "<a href=\"#fig-model.parameters\">Parameters P</a> = 124,439,808 params"), hRow.c_str());

    // Every link of the Markdown points at an anchor that exists, and every input of every figure is linked.
    std::set<std::string> anchors;
    for (const Figure& f : m_derivation->figures.all())
        anchors.insert(figureAnchor(f.id));
    std::size_t links = 0;
    for (auto at = md.find("](#"); at != std::string::npos; at = md.find("](#", at + 3)) {
        const std::string target = md.substr(at + 3, md.find(')', at) - at - 3);
        QVERIFY2(anchors.contains(target), target.c_str());
        ++links;
    }
    std::size_t inputs = 0;
    for (const Figure& f : m_derivation->figures.all())
        inputs += f.inputs.size();
    QCOMPARE(links, inputs);

    // The same in the HTML, parsed: every in-page href names an id of the page.
    const Parsed p = parseXml(html);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    std::size_t figureLinks = 0;
    for (const std::string& href : p.hrefs) {
        QVERIFY2(href.starts_with("#"), href.c_str());
        QVERIFY2(p.ids.contains(href.substr(1)), href.c_str());
        figureLinks += href.starts_with("#fig-") ? 1 : 0;
    }
    QCOMPARE(figureLinks, inputs);
}

void TstReport::titleAndFacts()
{
    ReportOptions o;
    o.date = "2025-03-14";
    const std::string md = reportMarkdown(m_scenario, *m_derivation, o);
    const std::string html = reportHtml(m_scenario, *m_derivation, o);
    QVERIFY(md.starts_with("# TokenWire report: paper-reference\n"));
    QVERIFY(contains(md, "- **Model:** GPT-2 small, P = 124,439,808 params\n"));
    QVERIFY(contains(md, "- **GPUs:** 8 × NVIDIA A100 SXM 80 GB\n"));
    QVERIFY(contains(md, "- **Date:** 2025-03-14\n"));
    QVERIFY(contains(md, "tokenizer GPT-2"));
    QVERIFY(contains(html, "<title>TokenWire report: paper-reference</title>"));
    QVERIFY(contains(html, "<meta charset=\"utf-8\" />"));
    QVERIFY(contains(html, "<tr><th>Date</th><td>2025-03-14</td></tr>"));
    QVERIFY(contains(html, "<style>") && contains(html, "@media print"));
    // Self-contained: nothing fetched from elsewhere.
    QVERIFY(!contains(html, "<link") && !contains(html, "<script") && !contains(html, "http://") && !contains(html, "https://"));
    // No clock in core: without a date in the options the report has none.
    o.date.clear();
    QVERIFY(!contains(reportMarkdown(m_scenario, *m_derivation, o), "**Date:**"));
    QVERIFY(!contains(reportHtml(m_scenario, *m_derivation, o), "<th>Date</th>"));
    // Headings of the five stages, in order.
    std::size_t last = 0;
    for (const tw::Stage stage : tw::kStages) {
        const auto at = md.find("## Stage " + std::to_string(tw::numberOf(stage)) + " · " + stageName(stage).name);
        QVERIFY2(at != std::string::npos && at > last, stageName(stage).name);
        last = at;
    }
}

void TstReport::escapesHostileText()
{
    Scenario s = m_scenario;
    s.name = "mine <b>&amp;";
    Derivation d = *m_derivation;
    d.figures.add({"zz.escape", "Cost <&> \"q\" 'a' | x_y *z*", 1.5, "", "a < b && c > d | [e](f)", {"model.parameters"}});
    d.figures.add({"zz.bytes", "Bad \xFF byte\x01", 2, "", "ok", {"zz.nowhere"}});
    ReportOptions o;
    o.images[1].push_back({"A <chart> & \"title\"", "my files/chart (1).png"});

    const std::string html = reportHtml(s, d, o);
    QVERIFY(contains(html, "<title>TokenWire report: mine &lt;b&gt;&amp;amp;</title>"));
    QVERIFY(contains(html, "Cost &lt;&amp;&gt; &quot;q&quot; &#39;a&#39; | x_y *z*"));
    QVERIFY(contains(html, "a &lt; b &amp;&amp; c &gt; d"));
    QVERIFY(!contains(html, "Cost <&>"));
    QVERIFY(contains(html, "Bad \xEF\xBF\xBD byte\xEF\xBF\xBD")); // U+FFFD for the bad byte and the control character
    QVERIFY(contains(html, "<li><code>zz.nowhere</code> (not defined)</li>"));
    QVERIFY(contains(html, "<img src=\"my%20files/chart%20%281%29.png\" alt=\"A &lt;chart&gt; &amp; &quot;title&quot;\" />"));
    const Parsed p = parseXml(html);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    // Read back, the cells hold the original text.
    bool found = false;
    for (const QString& c : p.cells)
        found = found || c == QStringLiteral("Cost <&> \"q\" 'a' | x_y *z*zz.escape");
    QVERIFY(found);

    const std::string md = reportMarkdown(s, d, o);
    QVERIFY(md.starts_with("# TokenWire report: mine \\<b\\>\\&amp;\n"));
    const std::string row = markdownRow(md, "zz.escape");
    QVERIFY2(contains(row, "Cost \\<\\&\\> \"q\" 'a' \\| x\\_y \\*z\\*<br>`zz.escape`"), row.c_str());
    QVERIFY2(contains(row, "a \\< b \\&\\& c \\> d \\| \\[e\\](f)"), row.c_str());
    // The table keeps its four columns: unescaped pipes are only the cell borders.
    std::size_t pipes = 0;
    for (std::size_t i = 0; i < row.size(); ++i)
        pipes += row[i] == '|' && (i == 0 || row[i - 1] != '\\') ? 1 : 0;
    QCOMPARE(pipes, std::size_t(5));
    QVERIFY(contains(md, "![A \\<chart\\> \\& \"title\"](my%20files/chart%20%281%29.png)"));
}

void TstReport::imagesEmbeddedInTheirStage()
{
    ReportOptions o;
    o.images[0].push_back({"Token lengths", "run_files/stage1-1.png"});
    o.images[4].push_back({"Where the step goes", "data:image/png;base64,iVBORw0KGgo="});
    const std::string md = reportMarkdown(m_scenario, *m_derivation, o);
    QVERIFY(contains(between(md, "## Stage 1", "## Stage 2"), "![Token lengths](run_files/stage1-1.png)\n"));
    QVERIFY(contains(between(md, "## Stage 5", "\n---"), "![Where the step goes](data:image/png;base64,iVBORw0KGgo=)\n"));
    QCOMPARE(count(md, "!["), std::size_t(2));

    const std::string html = reportHtml(m_scenario, *m_derivation, o);
    QVERIFY(contains(between(html, "<section id=\"stage-1\">", "</section>"),
                     "<figure><img src=\"run_files/stage1-1.png\" alt=\"Token lengths\" /><figcaption>Token lengths</figcaption></figure>"));
    QVERIFY(contains(between(html, "<section id=\"stage-5\">", "</section>"),
                     "<img src=\"data:image/png;base64,iVBORw0KGgo=\" alt=\"Where the step goes\" />"));
    const Parsed p = parseXml(html);
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
    QCOMPARE(p.imgSources.size(), std::size_t(2));
}

// Stage 5's figures come with the options (the simulated step's and the run's): listed in its section,
// their inputs linked to the derivation's rows or to each other; the footer counts them.
void TstReport::stepFiguresInStageFive()
{
    ReportOptions o;
    o.stepFigures.push_back({"sim.step_time_s", "Step time", 0.25, "s", "simulated", {"model.parameters"}});
    o.stepFigures.push_back({"run.steps", "Optimizer steps", 1000, "", "⌈D / G⌉", {"sim.step_time_s"}});
    const std::string md = reportMarkdown(m_scenario, *m_derivation, o);
    const std::string stage5 = between(md, "## Stage 5", "\n---");
    QVERIFY(contains(stage5, "<a id=\"fig-sim.step_time_s\"></a>"));
    QVERIFY(contains(stage5, "[Step time](#fig-sim.step_time_s)"));
    QVERIFY(contains(stage5, "(#fig-model.parameters)"));
    QVERIFY(!contains(md, "(not defined)"));
    QVERIFY(contains(md, tw::formatUnsigned(m_derivation->figures.size() + 2) + " figures.*"));
    const Parsed p = parseXml(reportHtml(m_scenario, *m_derivation, o));
    QVERIFY2(p.error.isEmpty(), qPrintable(p.error));
}

void TstReport::numbersAsJson()
{
    QCOMPARE(QByteArray::fromStdString(numberJson(699).dump()), QByteArray("699"));
    QCOMPARE(QByteArray::fromStdString(numberJson(2.5).dump()), QByteArray("2.5"));
    QCOMPARE(QByteArray::fromStdString(numberJson(std::nan("")).dump()), QByteArray("null"));
    const Figure f{"a.b", "A b", 3, "B", "1 + 2", {"x", "y"}};
    QCOMPARE(QByteArray::fromStdString(figureJson(f).dump()),
             QByteArray(R"({"id":"a.b","label":"A b","value":3,"unit":"B","formula":"1 + 2","inputs":["x","y"]})"));
}

void TstReport::derivationJsonEqualsCli()
{
    const QString cli = cliPath();
    QVERIFY2(QFileInfo(cli).isExecutable(), qPrintable(QStringLiteral("no tokenwire-cli at %1: build it first").arg(cli)));
    QProcess p;
    p.start(cli, {QStringLiteral("derive"), QStringLiteral("--preset"), QStringLiteral("paper-reference"), QStringLiteral("--json")});
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 0);
    const QByteArray out = p.readAllStandardOutput();
    const auto fromCli = nlohmann::ordered_json::parse(out.toStdString(), nullptr, false);
    QVERIFY2(!fromCli.is_discarded(), out.left(300).constData());
    const auto ours = nlohmann::ordered_json::parse(derivationJsonText(m_scenario, *m_derivation), nullptr, false);
    QVERIFY(!ours.is_discarded());
    QVERIFY(ours == derivationJson(m_scenario, *m_derivation));
    QVERIFY2(ours == fromCli, "the CLI's derive --json and derivationJson differ");
    // And the document holds the figures: every one, in order, with its value.
    QCOMPARE(ours.at("scenario").get<std::string>(), std::string("paper-reference"));
    const auto& figures = ours.at("figures");
    QCOMPARE(figures.size(), m_derivation->figures.size());
    for (std::size_t i = 0; i < figures.size(); ++i)
        QCOMPARE(str(figures[i].at("id").get<std::string>()), str(m_derivation->figures.all()[i].id));
    for (const auto& f : figures)
        if (f.at("id") == "model.parameters")
            QCOMPARE(f.at("value").get<std::int64_t>(), std::int64_t(124439808));
    QVERIFY(ours.at("problems").is_array());
}

QTEST_GUILESS_MAIN(TstReport)
#include "tst_report.moc"
