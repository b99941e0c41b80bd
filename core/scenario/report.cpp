#include "report.h"

#include "derive.h"
#include "scenario.h"

#include <cstdint>
#include <set>
#include <string_view>

namespace tw::scenario {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD

// The text with every invalid UTF-8 sequence and every control character but tab and newline
// replaced by U+FFFD, so the page is valid UTF-8 and well-formed XML whatever a name held.
std::string cleanUtf8(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            if (b < 0x20 && b != '\t' && b != '\n')
                out += kReplacement;
            else
                out += char(b);
            ++i;
            continue;
        }
        int len = 0;
        std::uint32_t cp = 0;
        if (b >= 0xC2 && b <= 0xDF) {
            len = 2;
            cp = b & 0x1F;
        } else if (b >= 0xE0 && b <= 0xEF) {
            len = 3;
            cp = b & 0x0F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            len = 4;
            cp = b & 0x07;
        }
        bool ok = len > 0 && i + std::size_t(len) <= s.size();
        for (int k = 1; ok && k < len; ++k) {
            const auto c = static_cast<unsigned char>(s[i + std::size_t(k)]);
            ok = (c & 0xC0) == 0x80;
            cp = (cp << 6) | (c & 0x3F);
        }
        // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
        if (ok && ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
            ok = false;
        if (!ok) {
            out += kReplacement;
            ++i;
            continue;
        }
        out.append(s.substr(i, std::size_t(len)));
        i += std::size_t(len);
    }
    return out;
}

// Text for an HTML element or a quoted attribute.
std::string html(std::string_view s)
{
    std::string out;
    for (char c : cleanUtf8(s)) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

// Text for a Markdown table cell or caption: ASCII punctuation Markdown could read as markup is
// backslash-escaped (CommonMark §2.4), line breaks become spaces.
std::string md(std::string_view s)
{
    static constexpr std::string_view special = "\\`*_[]<>|~&#!";
    std::string out;
    for (char c : cleanUtf8(s)) {
        if (c == '\n' || c == '\t')
            out += ' ';
        else {
            if (special.find(c) != std::string_view::npos)
                out += '\\';
            out += c;
        }
    }
    return out;
}

// A picture's address as a URL: data: URIs as they are; in paths the characters that end or break a
// Markdown destination or an attribute (space, parentheses, angle brackets, quotes, '%') percent-encoded.
std::string url(std::string_view source)
{
    if (source.substr(0, 5) == "data:")
        return std::string(source);
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (char c : cleanUtf8(source)) {
        const auto u = static_cast<unsigned char>(c);
        if (c == ' ' || c == '(' || c == ')' || c == '<' || c == '>' || c == '"' || c == '\'' || c == '%' || c == '\\'
            || c == '#' || c == '?') {
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out;
}

std::string integer(std::uint64_t v)
{
    return formatInteger(static_cast<std::int64_t>(v));
}

// "Stage 1 · Text: dataset tokenization".
std::string stageHeading(Stage stage)
{
    const StageName n = stageName(stage);
    return "Stage " + std::to_string(numberOf(stage)) + " · " + n.name + ": " + n.topic;
}

std::string title(const Scenario& s)
{
    return "TokenWire report: " + (s.name.empty() ? std::string("untitled scenario") : s.name);
}

// The facts under the title, as (name, value) pairs in reading order.
std::vector<std::pair<std::string, std::string>> facts(const Scenario& s, const Derivation& d, const ReportOptions& o)
{
    std::vector<std::pair<std::string, std::string>> rows;
    rows.emplace_back("Scenario", s.name.empty() ? std::string("untitled") : s.name);
    std::string model = d.model.name;
    if (const Figure* p = d.figures.find("model.parameters"))
        model += ", P = " + formatValue(p->value, p->unit, o.units);
    rows.emplace_back("Model", model);
    const std::string gpu = d.gpu.name.empty() ? d.gpu.id : d.gpu.name;
    rows.emplace_back("GPUs", s.hardware.nodes == 1
                                  ? integer(s.hardware.gpusPerNode) + " × " + gpu
                                  : integer(s.hardware.nodes) + " nodes × " + integer(s.hardware.gpusPerNode) + " × " + gpu);
    if (d.stage1 && d.stage1->tokenized)
        rows.emplace_back("Text", d.stage1->tokenized->textName + ", tokenizer " + d.tokenizer().name() + " (V = "
                                      + integer(d.tokenizer().vocabSize()) + ")");
    rows.emplace_back("Byte units", o.units.bytes == ByteUnits::Binary ? "binary (1 MiB = 2^20 B)" : "decimal (1 MB = 10^6 B)");
    if (!o.date.empty())
        rows.emplace_back("Date", o.date);
    return rows;
}

const char* kNoStageFigures[kStageCount] = {
    "No dataset figures.",
    "No model figures.",
    "No plan figures: the parallel plan cannot run (see the notes).",
    "No collective figures: the parallel plan cannot run (see the notes).",
    "Stage 5's figures (link loads, the step's time breakdown) come from the flow-level simulation of the Wire "
    "pane, not from this derivation.",
};

constexpr std::string_view kStyle = R"(
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
       color: #1f2328; background: #fff; max-width: 82em; margin: 2em auto; padding: 0 1.5em; }
h1 { font-size: 1.8em; margin: 0 0 .3em; }
h2 { font-size: 1.35em; margin: 2em 0 .6em; padding-bottom: .2em; border-bottom: 2px solid #d0d7de; }
a { color: #0550ae; }
table { border-collapse: collapse; }
th, td { border: 1px solid #d0d7de; padding: .3em .55em; vertical-align: top; text-align: left; }
thead th, table.facts th { background: #f6f8fa; }
table.figures { width: 100%; }
td.value { white-space: nowrap; text-align: right; font-variant-numeric: tabular-nums; }
td.formula { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: .86em; }
code { font-size: .85em; color: #57606a; }
tr:target { background: #fff8c5; }
ul.inputs, ul.notes { margin: 0; padding-left: 1.1em; }
figure { margin: 1em 0 1.5em; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { color: #57606a; font-size: .9em; }
p.description, p.empty, footer { color: #57606a; }
p.note { color: #57606a; font-style: italic; border-left: 3px solid #d0d7de; padding-left: .6em; }
footer { margin-top: 3em; font-size: .85em; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 9.5pt; }
  nav { display: none; }
  a { color: inherit; text-decoration: none; }
  tr, figure { break-inside: avoid; }
  h2 { break-after: avoid; }
  thead { display: table-header-group; }
  tr:target { background: none; }
}
)";

} // namespace

StageName stageName(Stage stage)
{
    static constexpr StageName names[kStageCount] = {
        {"Text", "dataset tokenization"},
        {"Tensors", "tensor construction"},
        {"GPUs", "parallelization"},
        {"Collectives", "collective communication"},
        {"Wire", "network infrastructure"},
    };
    return names[indexOf(stage)];
}

std::array<std::vector<const Figure*>, kStageCount> figuresByStage(const Derivation& d)
{
    std::set<std::string> text, plan, collective;
    if (d.stage1)
        for (const Figure& f : d.stage1->stats.figures.all())
            text.insert(f.id);
    if (d.stage3)
        for (const Figure& f : d.stage3->figures.all())
            plan.insert(f.id);
    if (d.memory)
        for (const Figure& f : d.memory->figures.all())
            plan.insert(f.id);
    if (d.stage4)
        for (const Figure& f : d.stage4->figures.all())
            collective.insert(f.id);
    std::array<std::vector<const Figure*>, kStageCount> out;
    for (const Figure& f : d.figures.all()) {
        Stage stage = Stage::Tensors;
        if (collective.contains(f.id))
            stage = Stage::Collectives;
        else if (plan.contains(f.id) || f.id.starts_with("hardware."))
            stage = Stage::Gpus;
        else if (text.contains(f.id))
            stage = Stage::Text;
        out[std::size_t(indexOf(stage))].push_back(&f);
    }
    return out;
}

std::string figureAnchor(const std::string& id)
{
    std::string out = "fig-";
    for (char c : id) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
                          || c == '-';
        out += keep ? c : '-';
    }
    return out;
}

namespace {

// The figures of each stage's section: the derivation's, and stage 5's from the options.
std::array<std::vector<const Figure*>, kStageCount> sectionFigures(const Derivation& d, const ReportOptions& o)
{
    auto stages = figuresByStage(d);
    for (const Figure& f : o.stepFigures)
        stages[kStageCount - 1].push_back(&f);
    return stages;
}

// An input's row: in the derivation, else among stage 5's figures.
const Figure* inputFigure(const Derivation& d, const ReportOptions& o, const std::string& id)
{
    if (const Figure* f = d.figures.find(id))
        return f;
    for (const Figure& f : o.stepFigures)
        if (f.id == id)
            return &f;
    return nullptr;
}

std::size_t figureCount(const Derivation& d, const ReportOptions& o) { return d.figures.size() + o.stepFigures.size(); }

} // namespace

std::string reportMarkdown(const Scenario& s, const Derivation& d, const ReportOptions& o)
{
    std::string out = "# " + md(title(s)) + "\n\n";
    if (!s.description.empty())
        out += md(s.description) + "\n\n";
    for (const auto& [name, value] : facts(s, d, o))
        out += "- **" + name + ":** " + md(value) + "\n";
    out += "\nEvery figure below carries its formula and the figures it came from; follow an input's link to its "
           "own row to walk the chain back to the text.\n";
    const auto stages = sectionFigures(d, o);
    for (int k = 0; k < kStageCount; ++k) {
        out += "\n## " + md(stageHeading(kStages[std::size_t(k)])) + "\n\n";
        for (const ReportImage& img : o.images[std::size_t(k)])
            out += "![" + md(img.title) + "](" + url(img.source) + ")\n\n";
        for (const std::string& note : o.notes[std::size_t(k)])
            out += "*" + md(note) + "*\n\n";
        const auto& figures = stages[std::size_t(k)];
        if (figures.empty()) {
            out += "*" + md(kNoStageFigures[k]) + "*\n";
            continue;
        }
        out += "| Figure | Value | Formula | Inputs |\n|---|--:|---|---|\n";
        for (const Figure* f : figures) {
            out += "| <a id=\"" + figureAnchor(f->id) + "\"></a>" + md(f->label) + "<br>`" + cleanUtf8(f->id) + "` | "
                   + md(formatValue(f->value, f->unit, o.units)) + " | " + md(f->formula) + " | ";
            if (f->inputs.empty())
                out += "—";
            for (std::size_t i = 0; i < f->inputs.size(); ++i) {
                if (i > 0)
                    out += "<br>";
                const std::string& id = f->inputs[i];
                if (const Figure* in = inputFigure(d, o, id))
                    out += "[" + md(in->label) + "](#" + figureAnchor(id) + ") = " + md(formatValue(in->value, in->unit, o.units));
                else
                    out += "`" + cleanUtf8(id) + "` (not defined)";
            }
            out += " |\n";
        }
    }
    if (!d.problems.empty()) {
        out += "\n## Notes\n\n";
        for (const Error& e : d.problems)
            out += "- " + md(e.toString()) + "\n";
    }
    out += "\n---\n\n*" + md(o.generator) + (o.date.empty() ? std::string() : ", " + md(o.date)) + ": "
           + integer(figureCount(d, o)) + " figures.*\n";
    return out;
}

std::string reportHtml(const Scenario& s, const Derivation& d, const ReportOptions& o)
{
    const auto stages = sectionFigures(d, o);
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n"
                      "<meta name=\"generator\" content=\""
                      + html(o.generator) + "\" />\n<title>" + html(title(s)) + "</title>\n<style>" + std::string(kStyle)
                      + "</style>\n</head>\n<body>\n<header>\n<h1>" + html(title(s)) + "</h1>\n";
    if (!s.description.empty())
        out += "<p class=\"description\">" + html(s.description) + "</p>\n";
    out += "<table class=\"facts\">\n";
    for (const auto& [name, value] : facts(s, d, o))
        out += "<tr><th>" + html(name) + "</th><td>" + html(value) + "</td></tr>\n";
    out += "</table>\n<p>Every figure below carries its formula and the figures it came from; follow an input's link "
           "to its own row to walk the chain back to the text.</p>\n</header>\n<nav>\n<ol>\n";
    for (int k = 0; k < kStageCount; ++k)
        out += "<li><a href=\"#stage-" + std::to_string(k + 1) + "\">" + html(stageHeading(kStages[std::size_t(k)])) + "</a> ("
               + integer(stages[std::size_t(k)].size()) + " figures)</li>\n";
    if (!d.problems.empty())
        out += "<li><a href=\"#notes\">Notes</a></li>\n";
    out += "</ol>\n</nav>\n";
    for (int k = 0; k < kStageCount; ++k) {
        out += "<section id=\"stage-" + std::to_string(k + 1) + "\">\n<h2>" + html(stageHeading(kStages[std::size_t(k)])) + "</h2>\n";
        for (const ReportImage& img : o.images[std::size_t(k)])
            out += "<figure><img src=\"" + html(url(img.source)) + "\" alt=\"" + html(img.title) + "\" /><figcaption>"
                   + html(img.title) + "</figcaption></figure>\n";
        for (const std::string& note : o.notes[std::size_t(k)])
            out += "<p class=\"note\">" + html(note) + "</p>\n";
        const auto& figures = stages[std::size_t(k)];
        if (figures.empty()) {
            out += "<p class=\"empty\">" + html(kNoStageFigures[k]) + "</p>\n</section>\n";
            continue;
        }
        out += "<table class=\"figures\">\n<thead><tr><th>Figure</th><th>Value</th><th>Formula</th><th>Inputs</th></tr>"
               "</thead>\n<tbody>\n";
        for (const Figure* f : figures) {
            out += "<tr id=\"" + figureAnchor(f->id) + "\"><td>" + html(f->label) + "<br /><code>" + html(f->id)
                   + "</code></td><td class=\"value\">" + html(formatValue(f->value, f->unit, o.units))
                   + "</td><td class=\"formula\">" + html(f->formula) + "</td><td>";
            if (f->inputs.empty()) {
                out += "—";
            } else {
                out += "<ul class=\"inputs\">";
                for (const std::string& id : f->inputs) {
                    if (const Figure* in = inputFigure(d, o, id))
                        out += "<li><a href=\"#" + figureAnchor(id) + "\">" + html(in->label) + "</a> = "
                               + html(formatValue(in->value, in->unit, o.units)) + "</li>";
                    else
                        out += "<li><code>" + html(id) + "</code> (not defined)</li>";
                }
                out += "</ul>";
            }
            out += "</td></tr>\n";
        }
        out += "</tbody>\n</table>\n</section>\n";
    }
    if (!d.problems.empty()) {
        out += "<section id=\"notes\">\n<h2>Notes</h2>\n<ul class=\"notes\">\n";
        for (const Error& e : d.problems)
            out += "<li>" + html(e.toString()) + "</li>\n";
        out += "</ul>\n</section>\n";
    }
    out += "<footer>" + html(o.generator) + (o.date.empty() ? std::string() : ", " + html(o.date)) + ": "
           + integer(figureCount(d, o)) + " figures.</footer>\n</body>\n</html>\n";
    return out;
}

} // namespace tw::scenario
