// tokenwire-cli derive / tensors / explain / presets from the outside: runs the built binary
// (QProcess) and parses what it prints. Expected values come from published counts and hand
// derivations (docs/model.md), never from the program's own output.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>

using json = nlohmann::json;

namespace {


bool writeFile(const QString& path, const QByteArray& data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

const json* figure(const json& doc, const std::string& id)
{
    for (const auto& f : doc["figures"])
        if (f.value("id", std::string()) == id)
            return &f;
    return nullptr;
}

} // namespace

class TestCliDerive : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    QString tmp(const QString& name) const { return m_tmp.filePath(name); }
    QStringList expand(const QStringList& a) const
    {
        QStringList out;
        for (QString s : a)
            out << s.replace(QStringLiteral("@TMP@"), m_tmp.path());
        return out;
    }

private slots:
    void initTestCase();
    void deriveJsonPaperReference_data();
    void deriveJsonPaperReference();
    void deriveJsonEveryPreset();
    void deriveTable();
    void presetsListing();
    void explainChainEndsAtInputs();
    void explainTable();
    void explainSimulatedFigure();
    void tensorsJson();
    void tensorsTable();
    void scenarioFileWithRelativeText();
    void scenarioFromStandardInput();
    void help();
    void errors_data();
    void errors();
    void everyProblemOnItsOwnLine();
};

void TestCliDerive::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    QVERIFY(QFile::exists(QStringLiteral(TOKENWIRE_CLI)));
    // A corrupt scenario (d not a multiple of a), a truncated one, a future one, several problems.
    QVERIFY(writeFile(tmp(QStringLiteral("d770.json")),
                      R"({"schema_version": 1, "model": {"hidden_size": 770}})"));
    QVERIFY(writeFile(tmp(QStringLiteral("truncated.json")), "{\n  \"schema_version\": 1,\n  \"model\": {"));
    QVERIFY(writeFile(tmp(QStringLiteral("future.json")), R"({"schema_version": 7})"));
    QVERIFY(writeFile(tmp(QStringLiteral("typo.json")), R"({"schema_version": 1, "model": {"hiden_size": 768}})"));
    QVERIFY(writeFile(tmp(QStringLiteral("many.json")),
                      R"({"schema_version": 1, "model": {"layers": "12", "family": "gpt5"}, "batch": {"micro_batch": -1}})"));
    QVERIFY(writeFile(tmp(QStringLiteral("missingtext.json")),
                      R"({"schema_version": 1, "text": {"source": "file", "path": "nope.txt"}})"));
    QVERIFY(QDir(m_tmp.path()).mkpath(QStringLiteral("adir")));
}

void TestCliDerive::deriveJsonPaperReference_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<double>("value");
    // GPT-2 small, tied head: the published count 124,439,808.
    QTest::newRow("model.parameters") << "model.parameters" << 124439808.0;
    // bf16 weights and gradients: 2·P = 248,879,616 B each.
    QTest::newRow("memory.weights_bytes") << "memory.weights_bytes" << 248879616.0;
    QTest::newRow("memory.gradients_bytes") << "memory.gradients_bytes" << 248879616.0;
    // Adam in mixed precision: fp32 master, m, v = 12·P = 1,493,277,696 B.
    QTest::newRow("memory.optimizer_bytes") << "memory.optimizer_bytes" << 1493277696.0;
    // Korthikanti et al. 2022: per layer T·B·d·(34 + 5aT/d) = 25,165,824·114 = 2,868,903,936 B, ×12
    // = 34,426,847,232; plus §4.3's embedding dropout mask s·b·h·1 B = 25,165,824 and output layer
    // 4·s·b·h + 4·s·b·V (fp32 logits) = 100,663,296 + 6,587,285,504: total 41,139,961,856 B.
    QTest::newRow("memory.activations_bytes") << "memory.activations_bytes" << 41139961856.0;
    // 6·P per token × G + attention 12·B·T²·d·L per micro-batch × G/(B·T) = 16 micro-batches:
    // 746,638,848·524,288 + 16·3,710,851,743,744 = 450,827,416,240,128 FLOP.
    QTest::newRow("compute.flops_per_step") << "compute.flops_per_step" << 450827416240128.0;
    // §5.2: B·T·d·s = 50,331,648 B.
    QTest::newRow("tensor.hidden_bytes") << "tensor.hidden_bytes" << 50331648.0;
    // tiktoken's count of the Italian excerpt (tests/data/gpt2_cases.json): 298.
    QTest::newRow("tokens.count") << "tokens.count" << 298.0;
}

void TestCliDerive::deriveJsonPaperReference()
{
    QFETCH(QString, id);
    QFETCH(double, value);
    const CliRun r = runCli(args({"derive", "--preset", "paper-reference", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(r.err.isEmpty(), qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY2(!doc.is_discarded(), "stdout is not one JSON document");
    QCOMPARE(doc["scenario"].get<std::string>(), std::string("paper-reference"));
    const json* f = figure(doc, id.toStdString());
    QVERIFY2(f, qPrintable(id));
    QCOMPARE((*f)["value"].get<double>(), value);
    for (const char* key : {"id", "label", "value", "unit", "formula", "inputs"})
        QVERIFY2(f->contains(key), key);
    QVERIFY(!(*f)["formula"].get<std::string>().empty());
}

void TestCliDerive::deriveJsonEveryPreset()
{
    const CliRun list = runCli(args({"presets"}));
    QVERIFY(list.finished && list.exitCode == 0);
    const QStringList names = QString::fromUtf8(list.out).split(QStringLiteral("\n\n")).front().split(QLatin1Char('\n'));
    QCOMPARE(names.size(), 17); // ten presets of issue 2, paper-testbed of issue 6, four DGX presets of issue 17,
                                // the two Llama 3 405B presets of issue 21
    for (const QString& name : names) {
        const CliRun r = runCli({QStringLiteral("derive"), QStringLiteral("--preset"), name, QStringLiteral("--json")});
        QVERIFY2(r.finished && r.exitCode == 0, qPrintable(name + r.describe()));
        const json doc = parseJson(r.out);
        QVERIFY(!doc.is_discarded());
        std::set<std::string> ids;
        for (const auto& f : doc["figures"])
            ids.insert(f["id"].get<std::string>());
        for (const auto& f : doc["figures"])
            for (const auto& in : f["inputs"])
                QVERIFY2(ids.count(in.get<std::string>()), qPrintable(name + QStringLiteral(": ") + QString::fromStdString(in.get<std::string>())));
        for (const char* id : {"model.parameters", "memory.weights_bytes", "memory.gradients_bytes",
                               "memory.optimizer_bytes", "memory.activations_bytes", "compute.flops_per_step"})
            QVERIFY2(ids.count(id), id);
        QVERIFY(doc["problems"].is_array());
    }
}

void TestCliDerive::deriveTable()
{
    CliRun r = runCli(args({"derive", "--preset", "paper-reference"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY(out.contains(QStringLiteral("Scenario:   paper-reference")));
    QVERIFY(out.contains(QStringLiteral("model.parameters")));
    QVERIFY(out.contains(QStringLiteral("124,439,808")));
    QVERIFY(out.contains(QStringLiteral("248.9 MB"))); // 248,879,616 B in MB = 10^6 B
    r = runCli(args({"derive", "--preset", "paper-reference", "--units", "iec"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY(QString::fromUtf8(r.out).contains(QStringLiteral("237.4 MiB"))); // 248,879,616 / 2^20
}

void TestCliDerive::presetsListing()
{
    const CliRun r = runCli(args({"presets"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY(r.err.isEmpty());
    const QStringList lines = QString::fromUtf8(r.out).split(QLatin1Char('\n'));
    const QStringList names = {QStringLiteral("paper-reference"), QStringLiteral("paper-dp"),   QStringLiteral("paper-pp"),
                               QStringLiteral("paper-tp"),        QStringLiteral("paper-moe"),  QStringLiteral("gpt2-xl"),
                               QStringLiteral("llama2-7b"),       QStringLiteral("llama3-70b"), QStringLiteral("gpt3-175b"),
                               QStringLiteral("mixtral-8x7b"),    QStringLiteral("paper-testbed"),
                               QStringLiteral("dgx-a100"),        QStringLiteral("dgx-h100"),   QStringLiteral("dgx-a100-4node"),
                               QStringLiteral("dgx-h100-4node"),  QStringLiteral("llama3-405b"), QStringLiteral("llama3-405b-98k")};
    QVERIFY(lines.size() >= 2 * names.size() + 1);
    for (int i = 0; i < names.size(); ++i)
        QCOMPARE(lines[i], names[i]);
    QCOMPARE(lines[names.size()], QString());
    for (int i = 0; i < names.size(); ++i) {
        const QString l = lines[names.size() + 1 + i];
        QVERIFY2(l.startsWith(names[i] + QStringLiteral(" — ")) && l.size() > names[i].size() + 10, qPrintable(l));
    }
    QVERIFY(lines[names.size() + 1 + 7].contains(QStringLiteral("H100"))); // llama3-70b
}

void TestCliDerive::explainChainEndsAtInputs()
{
    const CliRun r = runCli(args({"explain", "model.parameters", "--preset", "paper-reference", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    const json& chain = doc["chain"];
    QVERIFY(chain.is_array() && !chain.empty());
    QCOMPARE(chain[0]["id"].get<std::string>(), std::string("model.parameters"));
    QCOMPARE(chain[0]["depth"].get<int>(), 0);
    QCOMPARE(chain[0]["value"].get<double>(), 124439808.0);
    std::set<std::string> inChain;
    for (const auto& step : chain)
        inChain.insert(step["id"].get<std::string>());
    // Every input of every step is in the chain, and the chain ends at inputs (figures with none):
    // the model's shape and the tokenizer's vocabulary of stage 1.
    int leaves = 0;
    for (const auto& step : chain) {
        for (const auto& in : step["inputs"])
            QVERIFY(inChain.count(in.get<std::string>()));
        if (step["inputs"].empty()) {
            ++leaves;
            QVERIFY2(step["formula"].get<std::string>().find("input") != std::string::npos
                         || step["id"].get<std::string>() == "tokenizer.vocab_size",
                     step["id"].get<std::string>().c_str());
        }
    }
    QVERIFY(leaves >= 3);
    for (const char* id : {"model.layers", "model.hidden_size", "tokenizer.vocab_size"})
        QVERIFY2(inChain.count(id), id);
    QVERIFY(chain.back()["inputs"].empty() || chain.back()["repeated"].get<bool>());
}

// Stage 5's figures come from the simulated step: explain simulates it and follows sim.mfu's chain down
// to the model's parameters (it answered "unknown figure id"). paper-reference: GPT-2 small, P =
// 124,439,808 (above), fp16 GEMMs on its GPU.
void TestCliDerive::explainSimulatedFigure()
{
    const CliRun r = runCli(args({"explain", "sim.mfu", "--preset", "paper-reference", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    std::set<std::string> inChain;
    for (const auto& step : doc["chain"])
        inChain.insert(step["id"].get<std::string>());
    for (const char* id : {"sim.mfu", "sim.step_time_s", "compute.model_flops_per_step", "compute.gpu_peak_flops",
                           "model.parameters"})
        QVERIFY2(inChain.count(id), id);
    const CliRun bad = runCli(args({"explain", "sim.no_such_figure", "--preset", "paper-reference"}));
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("unknown figure id"), qPrintable(bad.describe()));
    // The run's figures too (#40): goodput's chain reaches the step and the model's memory; without
    // run.tokens, D = 20 · P = 20 · 124,439,808 = 2,488,796,160 as the Run tab counts.
    const CliRun run = runCli(args({"explain", "run.goodput", "--preset", "paper-reference", "--json"}));
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(run.describe()));
    const json chain = parseJson(run.out)["chain"];
    std::set<std::string> ids;
    for (const auto& step : chain)
        ids.insert(step["id"].get<std::string>());
    for (const char* id : {"run.goodput", "run.checkpoint_interval_s", "sim.step_time_s", "run.checkpoint_bytes",
                           "memory.weights_bytes"})
        QVERIFY2(ids.count(id), id);
    const CliRun tokens = runCli(args({"explain", "run.tokens", "--preset", "paper-reference", "--json"}));
    QVERIFY2(tokens.finished && tokens.exitCode == 0, qPrintable(tokens.describe()));
    QCOMPARE(parseJson(tokens.out)["chain"][0]["value"].get<double>(), 2488796160.0);
}

void TestCliDerive::explainTable()
{
    const CliRun r = runCli(args({"explain", "model.parameters", "--preset", "paper-reference"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QStringList lines = QString::fromUtf8(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY(lines.front().startsWith(QStringLiteral("model.parameters = 124,439,808")));
    QVERIFY(lines[1].startsWith(QStringLiteral("    "))); // its formula, indented
    // Deeper inputs are indented by two spaces a level: the tokenizer's V is several levels down.
    bool deeper = false;
    for (const QString& l : lines) {
        const qsizetype indent = l.size() - l.trimmed().size();
        deeper = deeper || (l.trimmed().startsWith(QStringLiteral("tokenizer.vocab_size = 50,257")) && indent >= 4 && indent % 2 == 0);
    }
    QVERIFY2(deeper, qPrintable(r.describe()));
}

void TestCliDerive::tensorsJson()
{
    const CliRun r = runCli(args({"tensors", "--preset", "paper-reference", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    const json& tensors = doc["tensors"];
    QVERIFY(tensors.is_array() && !tensors.empty());
    bool hidden = false;
    for (const auto& t : tensors) {
        for (const char* key : {"name", "component", "shape_symbols", "shape", "dtype", "bytes", "layer", "phase", "kind"})
            QVERIFY2(t.contains(key), key);
        if (t["shape_symbols"] == "[B,T,d]" && t["kind"] == "activation") {
            // The hidden state: [B,T,d] = [32,1024,768], 32·1024·768·2 = 50,331,648 B in bf16.
            QCOMPARE(t["shape"].get<std::vector<std::uint64_t>>(), (std::vector<std::uint64_t>{32, 1024, 768}));
            QCOMPARE(t["bytes"].get<double>(), 50331648.0);
            QCOMPARE(t["dtype"].get<std::string>(), std::string("bf16"));
            hidden = true;
        }
    }
    QVERIFY(hidden);
    // The embedding table [V,d] = [50257,768] is among the weights.
    bool table = false;
    for (const auto& t : tensors)
        table = table || (t["kind"] == "weight" && t["shape"] == json::array({50257, 768}));
    QVERIFY(table);
}

void TestCliDerive::tensorsTable()
{
    const CliRun r = runCli(args({"tensors", "--preset", "paper-reference"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY(out.contains(QStringLiteral("[B,T,d]")));
    QVERIFY(out.contains(QStringLiteral("[32,1024,768]")));
    QVERIFY(out.contains(QStringLiteral("50.33 MB")));
}

void TestCliDerive::scenarioFileWithRelativeText()
{
    // A scenario file naming its text relative to itself; the text is the Italian excerpt.
    QVERIFY(QDir(m_tmp.path()).mkpath(QStringLiteral("run/texts")));
    const QString text = tmp(QStringLiteral("run/texts/canto.txt"));
    QFile::remove(text);
    QVERIFY(QFile::copy(QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/text/inferno-canto1-it.txt"), text));
    QVERIFY(writeFile(tmp(QStringLiteral("run/s.tokenwire.json")),
                      R"({"schema_version": 1, "name": "mine", "text": {"source": "file", "path": "texts/canto.txt"},
                          "batch": {"micro_batch": 8}})"));
    const CliRun r = runCli({QStringLiteral("derive"), QStringLiteral("--scenario"), tmp(QStringLiteral("run/s.tokenwire.json")),
                             QStringLiteral("--json")});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QCOMPARE(doc["scenario"].get<std::string>(), std::string("mine"));
    QCOMPARE((*figure(doc, "tokens.count"))["value"].get<double>(), 298.0);
    // B = 8: the hidden state is 8·1024·768·2 = 12,582,912 B.
    QCOMPARE((*figure(doc, "tensor.hidden_bytes"))["value"].get<double>(), 12582912.0);
}

void TestCliDerive::scenarioFromStandardInput()
{
    const QByteArray scenario = R"({"schema_version": 1, "name": "piped", "text": {"source": "inline", "text": "Hello world"}})";
    const CliRun r = runCli(args({"derive", "--scenario", "-", "--json"}), &scenario);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QCOMPARE(doc["scenario"].get<std::string>(), std::string("piped"));
    QCOMPARE((*figure(doc, "tokens.count"))["value"].get<double>(), 2.0); // "Hello", " world"
}

void TestCliDerive::help()
{
    for (const char* command : {"derive", "tensors", "explain", "presets"}) {
        const CliRun r = runCli({QString::fromUtf8(command), QStringLiteral("--help")});
        QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
        QVERIFY(r.out.startsWith("Usage: tokenwire-cli " + QByteArray(command)));
    }
    const CliRun top = runCli(args({"--help"}));
    for (const char* command : {"derive", "tensors", "explain", "presets"})
        QVERIFY(top.out.contains(command));
}

void TestCliDerive::errors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QStringList>("fragments");
    auto row = [](const char* name, std::initializer_list<const char*> a, int code, std::initializer_list<const char*> f) {
        QTest::newRow(name) << args(a) << code << args(f);
    };
    // Usage: exit 2.
    row("unknown preset", {"derive", "--preset", "gpt5"}, 2,
        {"tokenwire-cli: --preset: unknown preset \"gpt5\" (expected one of paper-reference, paper-dp, paper-pp, paper-tp, paper-moe, gpt2-xl"});
    row("no scenario", {"derive"}, 2, {"missing scenario: give --scenario FILE or --preset NAME"});
    row("both scenario and preset", {"derive", "--preset", "gpt2-xl", "--scenario", "x.json"}, 2,
        {"--scenario and --preset cannot be used together"});
    row("tensors without scenario", {"tensors", "--json"}, 2, {"missing scenario"});
    row("explain without id", {"explain", "--preset", "paper-reference"}, 2, {"missing figure ID"});
    row("explain two ids", {"explain", "a", "b", "--preset", "paper-reference"}, 2, {"unexpected argument 'b'"});
    row("explain unknown id", {"explain", "model.paramters", "--preset", "paper-reference"}, 2,
        {"unknown figure id 'model.paramters'; close ids: model.parameters"});
    row("derive positional", {"derive", "paper-reference"}, 2, {"unexpected argument 'paper-reference'"});
    row("presets with an argument", {"presets", "x"}, 2, {"unexpected argument 'x': presets takes no argument"});
    row("derive option of tokenize", {"derive", "--preset", "gpt2-xl", "--count"}, 2, {"unknown option '--count' for derive"});
    row("derive bad units", {"derive", "--preset", "gpt2-xl", "--units", "metric"}, 2, {"--units: 'metric' is not a unit system"});
    row("empty preset", {"derive", "--preset="}, 2, {"--preset: empty value"});
    // Input: exit 1, naming the file (and the JSON path).
    row("missing scenario file", {"derive", "--scenario", "@TMP@/nope.json"}, 1,
        {"tokenwire-cli: @TMP@/nope.json: cannot read the scenario file: no such file"});
    row("scenario is a directory", {"derive", "--scenario", "@TMP@/adir"}, 1, {"@TMP@/adir: cannot read the scenario file: is a directory"});
    row("corrupt scenario", {"derive", "--scenario", "@TMP@/d770.json", "--json"}, 1,
        {"tokenwire-cli: @TMP@/d770.json: model.hidden_size: must be a positive multiple of model.heads (12), got 770"});
    row("truncated scenario", {"tensors", "--scenario", "@TMP@/truncated.json"}, 1,
        {"tokenwire-cli: @TMP@/truncated.json:3:13: invalid JSON", "unexpected end of input"});
    row("future scenario", {"explain", "model.parameters", "--scenario", "@TMP@/future.json"}, 1,
        {"@TMP@/future.json: schema_version: schema_version 7 is newer than this program understands (5)"});
    row("misspelled key", {"derive", "--scenario", "@TMP@/typo.json"}, 1,
        {"@TMP@/typo.json: model.hiden_size: unknown key \"hiden_size\" (did you mean \"hidden_size\"?)"});
    row("text file missing", {"derive", "--scenario", "@TMP@/missingtext.json"}, 1,
        {"@TMP@/nope.txt: text.path: cannot read the text: no such file"});
}

void TestCliDerive::errors()
{
    QFETCH(QStringList, arguments);
    QFETCH(int, exitCode);
    QFETCH(QStringList, fragments);
    const QString mismatch = cliErrorMismatch(runCli(expand(arguments)), exitCode, expand(fragments));
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

void TestCliDerive::everyProblemOnItsOwnLine()
{
    const CliRun r = runCli({QStringLiteral("derive"), QStringLiteral("--scenario"), tmp(QStringLiteral("many.json"))});
    QVERIFY(r.finished);
    QCOMPARE(r.exitCode, 1);
    const QStringList lines = QString::fromUtf8(r.err).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    const QString file = tmp(QStringLiteral("many.json"));
    QVERIFY(lines.contains(QStringLiteral("tokenwire-cli: %1: model.family: unknown family \"gpt5\" (expected gpt2 or llama)").arg(file)));
    QVERIFY(lines.contains(QStringLiteral("tokenwire-cli: %1: model.layers: expected an unsigned integer, got string").arg(file)));
    QVERIFY(lines.contains(QStringLiteral("tokenwire-cli: %1: batch.micro_batch: must not be negative, got -1").arg(file)));
    QVERIFY(r.out.isEmpty());
}

QTEST_GUILESS_MAIN(TestCliDerive)
#include "tst_cli_derive.moc"
