// tokenwire-cli from the outside: runs the built binary (QProcess) and parses what it prints.
// Expected GPT-2 ids come from tests/data/gpt2_cases.json (npm tiktoken), never from our encoder.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using json = nlohmann::json;

namespace {


QByteArray readFile(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

bool writeFile(const QString& path, const QByteArray& data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

// Finds, anywhere in the reference data, the case whose text is `text` or whose file names `fileName`.
const json* findCase(const json& node, const std::string& text, const std::string& fileName)
{
    if (node.is_object()) {
        if (node.contains("ids") && node["ids"].is_array()) {
            if (node.contains("text") && node["text"].is_string() && node["text"].get<std::string>() == text)
                return &node;
            std::string underscored = fileName;
            std::replace(underscored.begin(), underscored.end(), '-', '_');
            for (const char* key : {"file", "path", "name", "source", "id"})
                if (node.contains(key) && node[key].is_string()
                    && (node[key].get<std::string>().find(fileName) != std::string::npos
                        || node[key].get<std::string>().find(underscored) != std::string::npos))
                    return &node;
        }
        for (const auto& [key, child] : node.items())
            if (const json* found = findCase(child, text, fileName))
                return found;
    } else if (node.is_array()) {
        for (const auto& child : node)
            if (const json* found = findCase(child, text, fileName))
                return found;
    }
    return nullptr;
}

const json* figure(const json& doc, const std::string& id)
{
    for (const auto& f : doc["figures"])
        if (f.value("id", std::string()) == id)
            return &f;
    return nullptr;
}

// Lines as wc -l counts them, plus one for a last line without '\n' (the convention of TextCounts).
qint64 countLines(const QByteArray& t)
{
    return t.count('\n') + (!t.isEmpty() && !t.endsWith('\n') ? 1 : 0);
}

// Words as wc -w counts them in an ASCII-spaced text.
qint64 countWords(const QByteArray& t)
{
    qint64 words = 0;
    bool inWord = false;
    for (char c : t) {
        const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
        if (!space && !inWord)
            ++words;
        inWord = !space;
    }
    return words;
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    QString m_it;    // the Italian excerpt shipped in resources/
    QString m_en;    // the English excerpt
    json m_cases;    // tests/data/gpt2_cases.json
    QString m_tokenizer300; // a tokenizer trained on the Italian excerpt with V = 300

    QString tmp(const QString& name) const { return m_tmp.filePath(name); }
    // Replaces @IT@ and @TMP@ in test-table arguments with real paths.
    QStringList expand(const QStringList& args) const
    {
        QStringList out;
        for (QString a : args)
            out << a.replace(QStringLiteral("@IT@"), m_it).replace(QStringLiteral("@TMP@"), m_tmp.path());
        return out;
    }
    void checkJsonInvariants(const json& doc, const QByteArray& text);

private slots:
    void initTestCase();
    void help_data();
    void help();
    void noArguments();
    void tokenizeJsonMatchesTiktoken_data();
    void tokenizeJsonMatchesTiktoken();
    void countMatchesTiktoken_data();
    void countMatchesTiktoken();
    void standardInput();
    void tableOutput();
    void tableUnits();
    void trainingShapeOptions();
    void trainBpeRoundTrip();
    void trainBpeDeterministicAndStdout();
    void trainBpeMoreMergesFewerTokens();
    void invalidUtf8IsWarnedAndTokenized();
    void nulBytesAreWarned();
    void emptyInput();
    void errors_data();
    void errors();
};

void TestCli::initTestCase()
{
    QVERIFY2(QFileInfo::exists(QStringLiteral(TOKENWIRE_CLI)), TOKENWIRE_CLI);
    QVERIFY(m_tmp.isValid());
    m_it = QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/text/inferno-canto1-it.txt");
    m_en = QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/text/inferno-canto1-en.txt");
    QVERIFY(QFileInfo::exists(m_it));
    QVERIFY(QFileInfo::exists(m_en));

    const QString casesPath = QStringLiteral(TOKENWIRE_TEST_DATA "/gpt2_cases.json");
    const QByteArray cases = readFile(casesPath);
    QVERIFY2(!cases.isEmpty(), qPrintable(QStringLiteral("missing reference ids: ") + casesPath));
    m_cases = parseJson(cases);
    QVERIFY2(!m_cases.is_discarded(), "gpt2_cases.json is not valid JSON");

    // A trained tokenizer for the round-trip and corrupt-file cases.
    m_tokenizer300 = tmp(QStringLiteral("tok300.json"));
    const CliRun r = runCli({QStringLiteral("train-bpe"), QStringLiteral("--vocab-size"), QStringLiteral("300"),
                             QStringLiteral("--out"), m_tokenizer300, m_it});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QByteArray tok = readFile(m_tokenizer300);
    QVERIFY(!tok.isEmpty());

    // Corrupt tokenizers: truncated JSON, a merge naming unknown tokens, a model that is not BPE.
    QVERIFY(writeFile(tmp(QStringLiteral("truncated.json")), tok.left(tok.size() / 2)));
    json bad = parseJson(tok);
    QVERIFY(!bad.is_discarded());
    QVERIFY(bad.contains("model") && bad["model"].contains("merges") && !bad["model"]["merges"].empty());
    if (bad["model"]["merges"][0].is_string())
        bad["model"]["merges"].push_back("nosuchtoken alsonotatoken");
    else
        bad["model"]["merges"].push_back(json::array({"nosuchtoken", "alsonotatoken"}));
    const std::string badText = bad.dump();
    QVERIFY(writeFile(tmp(QStringLiteral("unknownmerge.json")), QByteArray::fromStdString(badText)));
    QVERIFY(writeFile(tmp(QStringLiteral("wordpiece.json")), QByteArrayLiteral(R"({"model":{"type":"WordPiece","vocab":{}}})")));
    QVERIFY(writeFile(tmp(QStringLiteral("empty.txt")), QByteArray()));
    QVERIFY(QDir(m_tmp.path()).mkpath(QStringLiteral("adir")));
}

void TestCli::help_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    QTest::newRow("--help") << QStringList{QStringLiteral("--help")} << QStringLiteral("train-bpe");
    QTest::newRow("-h") << QStringList{QStringLiteral("-h")} << QStringLiteral("tokenize");
    QTest::newRow("help") << QStringList{QStringLiteral("help")} << QStringLiteral("Commands:");
    QTest::newRow("tokenize --help") << QStringList{QStringLiteral("tokenize"), QStringLiteral("--help")}
                                     << QStringLiteral("--tokenizer gpt2|FILE");
    QTest::newRow("train-bpe --help") << QStringList{QStringLiteral("train-bpe"), QStringLiteral("--help")}
                                      << QStringLiteral("--vocab-size V");
    QTest::newRow("--version") << QStringList{QStringLiteral("--version")}
                               << QStringLiteral("tokenwire-cli " TOKENWIRE_VERSION);
}

void TestCli::help()
{
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    const CliRun r = runCli(args);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.out).contains(expected), qPrintable(r.describe()));
    QVERIFY(r.err.isEmpty());
}

void TestCli::noArguments()
{
    const CliRun r = runCli({});
    QVERIFY(r.finished);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.startsWith("tokenwire-cli: missing command"), qPrintable(r.describe()));
    QVERIFY(r.out.isEmpty());
}

// Invariants every --json output must satisfy, checked against the text itself.
void TestCli::checkJsonInvariants(const json& doc, const QByteArray& text)
{
    QVERIFY(doc.is_object());
    for (const char* key : {"n_tokens", "n_bytes", "ids", "tokenizer", "figures", "length_histogram"})
        QVERIFY2(doc.contains(key), key);
    const auto& ids = doc["ids"];
    QVERIFY(ids.is_array());
    QCOMPARE(doc["n_tokens"].get<std::uint64_t>(), ids.size());
    QCOMPARE(doc["n_bytes"].get<qint64>(), qint64(text.size()));
    const auto vocab = doc["tokenizer"]["vocab_size"].get<std::uint64_t>();
    QSet<std::uint64_t> unique;
    for (const auto& id : ids) {
        QVERIFY(id.is_number_unsigned());
        QVERIFY(id.get<std::uint64_t>() < vocab);
        unique.insert(id.get<std::uint64_t>());
    }
    // The token spans cover the text: lengths sum to the bytes, counts to the tokens.
    std::uint64_t tokens = 0;
    std::uint64_t bytes = 0;
    const auto& hist = doc["length_histogram"];
    for (std::size_t k = 0; k < hist.size(); ++k) {
        tokens += hist[k].get<std::uint64_t>();
        bytes += k * hist[k].get<std::uint64_t>();
    }
    QCOMPARE(tokens, ids.size());
    QCOMPARE(bytes, static_cast<std::uint64_t>(text.size()));

    QSet<QString> figureIds;
    for (const auto& f : doc["figures"]) {
        QVERIFY(f["id"].is_string() && f["label"].is_string() && f["unit"].is_string() && f["formula"].is_string());
        QVERIFY(f["value"].is_number() || f["value"].is_null());
        QVERIFY(f["inputs"].is_array());
        const QString id = QString::fromStdString(f["id"].get<std::string>());
        QVERIFY2(!figureIds.contains(id), qPrintable(id));
        figureIds.insert(id);
    }
    const json* fBytes = figure(doc, "text.bytes");
    const json* fTokens = figure(doc, "tokens.count");
    const json* fUnique = figure(doc, "tokens.unique");
    const json* fLines = figure(doc, "text.lines");
    const json* fWords = figure(doc, "text.words");
    QVERIFY(fBytes && fTokens && fUnique && fLines && fWords);
    QCOMPARE((*fBytes)["value"].get<double>(), static_cast<double>(text.size()));
    QCOMPARE((*fTokens)["value"].get<double>(), static_cast<double>(ids.size()));
    QCOMPARE((*fUnique)["value"].get<double>(), static_cast<double>(unique.size()));
    QCOMPARE((*fLines)["value"].get<double>(), static_cast<double>(countLines(text)));
    QCOMPARE((*fWords)["value"].get<double>(), static_cast<double>(countWords(text)));
}

void TestCli::tokenizeJsonMatchesTiktoken_data()
{
    QTest::addColumn<QString>("path");
    QTest::newRow("inferno-canto1-it") << QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/text/inferno-canto1-it.txt");
    QTest::newRow("inferno-canto1-en") << QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/text/inferno-canto1-en.txt");
}

void TestCli::tokenizeJsonMatchesTiktoken()
{
    QFETCH(QString, path);
    const QByteArray text = readFile(path);
    const json* ref = findCase(m_cases, text.toStdString(), QFileInfo(path).completeBaseName().toStdString());
    QVERIFY2(ref, qPrintable(QStringLiteral("no reference case for %1 in gpt2_cases.json").arg(path)));
    const auto expected = (*ref)["ids"].get<std::vector<std::uint64_t>>();

    const CliRun r = runCli({QStringLiteral("tokenize"), QStringLiteral("--json"), path});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(r.err.isEmpty(), qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY2(!doc.is_discarded(), "stdout is not one JSON document");
    checkJsonInvariants(doc, text);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(doc["n_tokens"].get<std::size_t>(), expected.size());
    const auto ids = doc["ids"].get<std::vector<std::uint64_t>>();
    for (std::size_t i = 0; i < ids.size(); ++i)
        QVERIFY2(ids[i] == expected[i], qPrintable(QStringLiteral("first difference at token %1: %2, tiktoken %3")
                                                       .arg(i).arg(ids[i]).arg(expected[i])));
    QCOMPARE(doc["tokenizer"]["vocab_size"].get<int>(), 50257); // GPT-2: 50,000 merges + 256 bytes + <|endoftext|>
    QVERIFY(doc["warnings"].empty());
}

void TestCli::countMatchesTiktoken_data()
{
    tokenizeJsonMatchesTiktoken_data();
}

void TestCli::countMatchesTiktoken()
{
    QFETCH(QString, path);
    const QByteArray text = readFile(path);
    const json* ref = findCase(m_cases, text.toStdString(), QFileInfo(path).completeBaseName().toStdString());
    QVERIFY(ref);
    const CliRun r = runCli({QStringLiteral("tokenize"), QStringLiteral("--count"), path});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QCOMPARE(r.out, QByteArray::number(qulonglong((*ref)["ids"].size())) + '\n');
}

void TestCli::standardInput()
{
    const QByteArray text = readFile(m_it);
    const json* ref = findCase(m_cases, text.toStdString(), "inferno-canto1-it");
    QVERIFY(ref);
    const auto expected = (*ref)["ids"].get<std::vector<std::uint64_t>>();

    const CliRun count = runCli({QStringLiteral("tokenize"), QStringLiteral("--count"), QStringLiteral("-")}, &text);
    QVERIFY2(count.finished && count.exitCode == 0, qPrintable(count.describe()));
    QCOMPARE(count.out, QByteArray::number(qulonglong(expected.size())) + '\n');

    const CliRun r = runCli({QStringLiteral("tokenize"), QStringLiteral("--json"), QStringLiteral("-")}, &text);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    QCOMPARE(doc["ids"].get<std::vector<std::uint64_t>>(), expected);
    QCOMPARE(doc["input"].get<std::string>(), std::string("<stdin>"));
}

void TestCli::tableOutput()
{
    const QByteArray text = readFile(m_it);
    const json* ref = findCase(m_cases, text.toStdString(), "inferno-canto1-it");
    QVERIFY(ref);
    const CliRun r = runCli({QStringLiteral("tokenize"), m_it});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains(QStringLiteral("Tokens: %1\n").arg((*ref)["ids"].size())), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("50,257 tokens")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("699 B")), qPrintable(out)); // the excerpt's size, below 1 kB
    QVERIFY2(out.contains(QStringLiteral("Token length (bytes)")), qPrintable(out));
}

void TestCli::tableUnits()
{
    const QString path = tmp(QStringLiteral("units.txt"));
    QVERIFY(writeFile(path, QByteArray(3000, 'a'))); // 3,000 B = 3 kB = 2.93 KiB
    const CliRun si = runCli({QStringLiteral("tokenize"), QStringLiteral("--units"), QStringLiteral("si"), path});
    const CliRun iec = runCli({QStringLiteral("tokenize"), QStringLiteral("--units=iec"), path});
    QVERIFY2(si.finished && si.exitCode == 0, qPrintable(si.describe()));
    QVERIFY2(iec.finished && iec.exitCode == 0, qPrintable(iec.describe()));
    QVERIFY2(si.out.contains("3 kB"), si.out.constData());
    QVERIFY2(iec.out.contains("2.93 KiB"), iec.out.constData());
}

void TestCli::trainingShapeOptions()
{
    auto sequences = [&](const QStringList& extra) -> double {
        const CliRun r = runCli(QStringList{QStringLiteral("tokenize"), QStringLiteral("--json")} + extra + QStringList{m_it});
        if (!r.finished || r.exitCode != 0)
            return -1;
        const json doc = parseJson(r.out);
        const json* f = doc.is_discarded() ? nullptr : figure(doc, "dataset.sequences");
        return f ? (*f)["value"].get<double>() : -1;
    };
    const double t1024 = sequences({});
    const double t64 = sequences({QStringLiteral("--seq-len"), QStringLiteral("64"), QStringLiteral("--micro-batch=4"),
                                  QStringLiteral("--global-batch"), QStringLiteral("4096")});
    QVERIFY(t1024 > 0);
    QVERIFY(t64 > 0);
    // Sequences are packed tokens / T, shown as a fraction: T 1,024 → 64 gives 16 times as many.
    QVERIFY2(qAbs(t64 / t1024 - 16.0) < 1e-9, qPrintable(QStringLiteral("%1 vs %2").arg(t64).arg(t1024)));
}

void TestCli::trainBpeRoundTrip()
{
    const json tok = parseJson(readFile(m_tokenizer300));
    QVERIFY(!tok.is_discarded());
    QCOMPARE(tok["model"]["merges"].size(), std::size_t(300 - 257));

    const QByteArray text = readFile(m_it);
    const CliRun r = runCli({QStringLiteral("tokenize"), QStringLiteral("--json"), QStringLiteral("--tokenizer"),
                             m_tokenizer300, m_it});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    checkJsonInvariants(doc, text);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(doc["tokenizer"]["vocab_size"].get<int>(), 300);
    QVERIFY(doc["n_tokens"].get<qint64>() < text.size());
    // Every merge that was learned on this text is used at least once when encoding the same text.
    // Earlier merges may live on only inside longer tokens, but the last one (id 298) must appear.
    bool usesLastMerge = false;
    for (const auto& id : doc["ids"])
        usesLastMerge = usesLastMerge || id.get<int>() == 298;
    QVERIFY2(usesLastMerge, "the last merge learned on the text is not used to encode it");
}

void TestCli::trainBpeDeterministicAndStdout()
{
    const QByteArray text = readFile(m_it);
    const CliRun fromFile = runCli({QStringLiteral("train-bpe"), QStringLiteral("--vocab-size"), QStringLiteral("300"), m_it});
    QVERIFY2(fromFile.finished && fromFile.exitCode == 0, qPrintable(fromFile.describe()));
    const CliRun fromStdin = runCli({QStringLiteral("train-bpe"), QStringLiteral("--vocab-size=300"), QStringLiteral("-")}, &text);
    QVERIFY2(fromStdin.finished && fromStdin.exitCode == 0, qPrintable(fromStdin.describe()));
    const QByteArray saved = readFile(m_tokenizer300);
    QVERIFY(!parseJson(saved).is_discarded());
    QVERIFY2(parseJson(fromFile.out) == parseJson(saved), "train-bpe to stdout differs from train-bpe --out");
    QVERIFY2(parseJson(fromStdin.out) == parseJson(saved), "train-bpe on stdin differs from train-bpe on the file");
    QVERIFY2(fromFile.err.contains("trained 300 tokens (43 merges)"), fromFile.err.constData());
}

void TestCli::trainBpeMoreMergesFewerTokens()
{
    const QString tok400 = tmp(QStringLiteral("tok400.json"));
    const CliRun t = runCli({QStringLiteral("train-bpe"), QStringLiteral("--vocab-size"), QStringLiteral("400"),
                             QStringLiteral("--out"), tok400, m_it});
    QVERIFY2(t.finished && t.exitCode == 0, qPrintable(t.describe()));
    auto count = [&](const QString& tokenizer) -> long long {
        const CliRun r = runCli({QStringLiteral("tokenize"), QStringLiteral("--count"), QStringLiteral("--tokenizer"),
                                 tokenizer, m_it});
        return r.finished && r.exitCode == 0 ? r.out.trimmed().toLongLong() : -1;
    };
    const long long n300 = count(m_tokenizer300);
    const long long n400 = count(tok400);
    QVERIFY(n300 > 0);
    QVERIFY(n400 > 0);
    // On the training text each merge joins at least one pair: 100 more merges, at least 100 fewer tokens.
    QVERIFY2(n400 <= n300 - 100, qPrintable(QStringLiteral("%1 vs %2").arg(n400).arg(n300)));
}

void TestCli::invalidUtf8IsWarnedAndTokenized()
{
    const QString path = tmp(QStringLiteral("bad-utf8.txt"));
    const QByteArray text("ab\n c\xff d\n");
    QVERIFY(writeFile(path, text));
    const CliRun r = runCli({QStringLiteral("tokenize"), QStringLiteral("--json"), path});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.contains(QStringLiteral("tokenwire-cli: warning: ") + path + QStringLiteral(":2:3:")), qPrintable(err));
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    checkJsonInvariants(doc, text);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(doc["warnings"].size(), std::size_t(1));
    // The lone byte 0xFF is GPT-2's byte token "ÿ", id 187 in encoder.json.
    bool has187 = false;
    for (const auto& id : doc["ids"])
        has187 = has187 || id.get<int>() == 187;
    QVERIFY(has187);
}

void TestCli::nulBytesAreWarned()
{
    const QString path = tmp(QStringLiteral("nul.txt"));
    const QByteArray text("a\0b\0c", 5);
    QVERIFY(writeFile(path, text));
    const CliRun r = runCli({QStringLiteral("tokenize"), QStringLiteral("--json"), path});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(r.err.contains("2 NUL bytes"), r.err.constData());
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    QCOMPARE(doc["n_bytes"].get<int>(), 5);
    checkJsonInvariants(doc, text);
}

void TestCli::emptyInput()
{
    const QString path = tmp(QStringLiteral("empty.txt"));
    const CliRun r = runCli({QStringLiteral("tokenize"), QStringLiteral("--json"), path});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(r.err.contains("input is empty"), r.err.constData());
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    QCOMPARE(doc["n_tokens"].get<int>(), 0);
    QVERIFY(doc["ids"].empty());

    const CliRun count = runCli({QStringLiteral("tokenize"), QStringLiteral("--count"), path});
    QVERIFY2(count.finished && count.exitCode == 0, qPrintable(count.describe()));
    QCOMPARE(count.out, QByteArray("0\n"));
}

void TestCli::errors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QStringList>("fragments"); // all must appear in stderr

    auto row = [](const char* name, std::initializer_list<const char*> args, int code,
                  std::initializer_list<const char*> fragments) {
        QStringList a;
        for (const char* s : args)
            a << QString::fromUtf8(s);
        QStringList f;
        for (const char* s : fragments)
            f << QString::fromUtf8(s);
        QTest::newRow(name) << a << code << f;
    };
    // Usage errors: exit 2.
    row("unknown command", {"frobnicate"}, 2, {"tokenwire-cli: unknown command 'frobnicate'"});
    row("unknown option", {"tokenize", "--bogus", "@IT@"}, 2, {"unknown option '--bogus'"});
    row("option of the other command", {"tokenize", "--vocab-size", "300", "@IT@"}, 2, {"unknown option '--vocab-size'"});
    row("--version after a command", {"tokenize", "--version", "@IT@"}, 2, {"unknown option '--version'"});
    row("missing value at the end", {"tokenize", "@IT@", "--tokenizer"}, 2, {"--tokenizer: missing value"});
    row("missing value, option follows", {"train-bpe", "--vocab-size", "--out", "x.json", "@IT@"}, 2,
        {"--vocab-size: missing value"});
    row("flag with a value", {"tokenize", "--json=yes", "@IT@"}, 2, {"--json: takes no value"});
    row("missing input", {"tokenize"}, 2, {"missing input FILE"});
    row("missing input train", {"train-bpe", "--vocab-size", "300"}, 2, {"missing input FILE"});
    row("two inputs", {"tokenize", "@IT@", "@IT@"}, 2, {"unexpected argument"});
    row("json and count", {"tokenize", "--json", "--count", "@IT@"}, 2, {"--json and --count cannot be used together"});
    row("bad units", {"tokenize", "--units", "metric", "@IT@"}, 2, {"--units: 'metric' is not a unit system"});
    row("seq-len zero", {"tokenize", "--seq-len", "0", "@IT@"}, 2, {"--seq-len: '0' is out of range"});
    row("seq-len not a number", {"tokenize", "--seq-len", "1k", "@IT@"}, 2, {"--seq-len: '1k' is not a number"});
    row("global-batch empty", {"tokenize", "--global-batch=", "@IT@"}, 2, {"--global-batch: empty value"});
    row("vocab size missing", {"train-bpe", "@IT@"}, 2, {"--vocab-size: missing"});
    row("vocab size not a number", {"train-bpe", "--vocab-size", "abc", "@IT@"}, 2, {"--vocab-size: 'abc' is not a number"});
    row("vocab size with suffix", {"train-bpe", "--vocab-size", "300x", "@IT@"}, 2, {"'300x' is not a number"});
    row("vocab size too small", {"train-bpe", "--vocab-size", "256", "@IT@"}, 2,
        {"--vocab-size: '256' is out of range (257…65,536)"});
    row("vocab size too large", {"train-bpe", "--vocab-size", "65537", "@IT@"}, 2, {"'65537' is out of range"});
    row("vocab size negative", {"train-bpe", "--vocab-size", "-5", "@IT@"}, 2, {"'-5' is out of range"});
    row("vocab size overflows", {"train-bpe", "--vocab-size", "99999999999999999999999", "@IT@"}, 2, {"is out of range"});

    // Input errors: exit 1, naming the file.
    row("missing file", {"tokenize", "@TMP@/nope.txt"}, 1, {"tokenwire-cli: @TMP@/nope.txt: cannot read the text: no such file"});
    row("directory", {"tokenize", "@TMP@/adir"}, 1, {"@TMP@/adir: cannot read the text: is a directory"});
    row("path through a file", {"tokenize", "@IT@/x.txt"}, 1, {"@IT@/x.txt: cannot read the text: a part of the path is a file"});
    row("train-bpe missing file", {"train-bpe", "--vocab-size", "300", "@TMP@/nope.txt"}, 1, {"@TMP@/nope.txt: cannot read the text"});
    row("train-bpe empty input", {"train-bpe", "--vocab-size", "300", "@TMP@/empty.txt"}, 1, {"@TMP@/empty.txt: input is empty"});
    row("tokenizer missing", {"tokenize", "--tokenizer", "@TMP@/none.json", "@IT@"}, 1,
        {"@TMP@/none.json: cannot read the tokenizer file: no such file"});
    row("tokenizer is a directory", {"tokenize", "--tokenizer", "@TMP@/adir", "@IT@"}, 1, {"@TMP@/adir: cannot read the tokenizer file"});
    row("tokenizer truncated", {"tokenize", "--tokenizer", "@TMP@/truncated.json", "@IT@"}, 1, {"tokenwire-cli: @TMP@/truncated.json"});
    row("tokenizer merge of unknown tokens", {"tokenize", "--tokenizer", "@TMP@/unknownmerge.json", "@IT@"}, 1,
        {"tokenwire-cli: @TMP@/unknownmerge.json", "nosuchtoken"});
    row("tokenizer not BPE", {"tokenize", "--tokenizer", "@TMP@/wordpiece.json", "@IT@"}, 1, {"tokenwire-cli: @TMP@/wordpiece.json"});
    row("tokenizer is the text", {"tokenize", "--tokenizer", "@IT@", "@IT@"}, 1, {"tokenwire-cli: @IT@"});
    row("--out in a missing folder", {"train-bpe", "--vocab-size", "300", "--out", "@TMP@/no/such/dir/t.json", "@IT@"}, 1,
        {"@TMP@/no/such/dir/t.json: --out: cannot write the tokenizer"});
    row("--out is a directory", {"train-bpe", "--vocab-size", "300", "--out", "@TMP@/adir", "@IT@"}, 1,
        {"--out: cannot write the tokenizer: is a directory"});
    row("--out onto a full disk", {"train-bpe", "--vocab-size", "300", "--out", "/dev/full", "@IT@"}, 1,
        {"/dev/full: --out: cannot write the tokenizer: No space left on device"});
    row("--out through a regular file", {"train-bpe", "--vocab-size", "300", "--out", "@IT@/t.json", "@IT@"}, 1,
        {"@IT@/t.json: --out: cannot write the tokenizer (creating a temporary file beside it): Not a directory"});
}

void TestCli::errors()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QStringList, fragments);
    const QString mismatch = cliErrorMismatch(runCli(expand(args)), exitCode, expand(fragments));
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
