// The bad-input catalog (issue 9): every malformed input of tests/data/badinput/manifest.json goes
// through its loader and must give exactly the expected Error (message and location), never a crash.

#include "text/bpe.h"
#include "text/bpetrainer.h"
#include "text/utf8.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTest>

#include <sys/mman.h>

#include <optional>
#include <string>

using namespace tw;

namespace {

const QString kDir = QStringLiteral(TOKENWIRE_TEST_DATA "/badinput/");

std::string readFile(const QString& name)
{
    QFile f(kDir + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    return f.readAll().toStdString();
}

QString str(const std::string& s) { return QString::fromStdString(s); }
std::string std8(const QJsonValue& v) { return v.toString().toStdString(); }

// An input of the manifest: a file name, or {text|file, replace: [from, to], deep} built in memory.
std::string buildInput(const QJsonValue& spec)
{
    if (spec.isString())
        return readFile(spec.toString());
    const QJsonObject o = spec.toObject();
    std::string s = o.contains(QStringLiteral("file")) ? readFile(o[QStringLiteral("file")].toString())
                                                      : std8(o[QStringLiteral("text")]);
    if (o.contains(QStringLiteral("replace"))) {
        const QJsonArray r = o[QStringLiteral("replace")].toArray();
        const std::string from = std8(r[0]);
        const auto at = s.find(from);
        if (at == std::string::npos)
            qFatal("replace: '%s' not found", from.c_str());
        s.replace(at, from.size(), std8(r[1]));
    }
    if (o.contains(QStringLiteral("deep"))) {
        const QJsonObject d = o[QStringLiteral("deep")].toObject();
        const int depth = d[QStringLiteral("depth")].toInt();
        const std::string open = std8(d[QStringLiteral("open")]);
        const std::string close = std8(d[QStringLiteral("close")]);
        std::string deep;
        deep.reserve(std::size_t(depth) * (open.size() + close.size()) + 8);
        for (int k = 0; k < depth; ++k)
            deep += open;
        deep += std8(d[QStringLiteral("middle")]);
        for (int k = 0; k < depth; ++k)
            deep += close;
        const auto at = s.find("@DEEP@");
        if (at == std::string::npos)
            qFatal("deep: no @DEEP@ in the input");
        s.replace(at, 6, deep);
    }
    return s;
}

// The name a loader is given for an input: the file name, or "generated.json" for a built one.
std::string sourceName(const QJsonValue& spec)
{
    return spec.isString() ? spec.toString().toStdString() : std::string("generated.json");
}

// Runs the case's operation; nullopt when it succeeded.
std::optional<Error> run(const QJsonObject& c)
{
    const QString op = c[QStringLiteral("operation")].toString();
    if (op == QLatin1String("gpt2")) {
        const QJsonValue enc = c.value(QStringLiteral("encoder"));
        const QJsonValue voc = c.value(QStringLiteral("vocab"));
        auto r = text::BpeModel::fromGpt2Files(buildInput(enc.isUndefined() ? QJsonValue(QStringLiteral("gpt2-good.encoder.json")) : enc),
                                               buildInput(voc.isUndefined() ? QJsonValue(QStringLiteral("gpt2-good.vocab.bpe")) : voc),
                                               "gpt2");
        return r ? std::nullopt : std::optional<Error>(r.error());
    }
    if (op == QLatin1String("tokenizer.json")) {
        const QJsonValue in = c[QStringLiteral("input")];
        auto r = text::BpeModel::fromHuggingFaceJson(buildInput(in), sourceName(in));
        return r ? std::nullopt : std::optional<Error>(r.error());
    }
    if (op == QLatin1String("utf8")) {
        const QJsonValue in = c[QStringLiteral("input")];
        const std::string bytes = buildInput(in);
        auto error = text::firstInvalidUtf8(bytes, sourceName(in));
        // countText must agree: invalid bytes exactly when there is an error.
        if ((text::countText(bytes).invalidBytes > 0) != error.has_value())
            return makeError("countText and firstInvalidUtf8 disagree");
        return error;
    }
    if (op == QLatin1String("train")) {
        const auto v = static_cast<std::size_t>(c[QStringLiteral("vocabSize")].toDouble());
        auto r = text::trainBpe(buildInput(c[QStringLiteral("input")]), v);
        return r ? std::nullopt : std::optional<Error>(r.error());
    }
    if (op == QLatin1String("encode-size")) {
        // Anonymous pages that are never touched: a text of that size without the memory.
        const auto size = static_cast<std::size_t>(c[QStringLiteral("bytes")].toDouble());
        void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            qFatal("mmap of %zu bytes failed", size);
        auto model = text::BpeModel::fromMerges({}, true, "bytes");
        if (!model)
            qFatal("fromMerges failed: %s", model.error().toString().c_str());
        text::Encoder encoder(model.value());
        auto r = encoder.encodeWithSpans(std::string_view(static_cast<const char*>(p), size));
        munmap(p, size);
        return r ? std::nullopt : std::optional<Error>(r.error());
    }
    qFatal("unknown operation %s", qPrintable(op));
}

} // namespace

class TestBadInput : public QObject {
    Q_OBJECT
private slots:
    void catalog_data();
    void catalog();
    void catalogCoversEachOperation();
};

void TestBadInput::catalog_data()
{
    QTest::addColumn<QJsonObject>("spec");
    QFile f(kDir + QStringLiteral("manifest.json"));
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
    QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString()));
    const QJsonArray cases = doc.object()[QStringLiteral("cases")].toArray();
    QVERIFY(!cases.isEmpty());
    for (const QJsonValue& c : cases)
        QTest::newRow(qPrintable(c[QStringLiteral("name")].toString())) << c.toObject();
}

void TestBadInput::catalog()
{
    QFETCH(QJsonObject, spec);
    const QJsonObject expect = spec[QStringLiteral("expect")].toObject();
    const std::optional<Error> error = run(spec);
    if (expect[QStringLiteral("ok")].toBool()) {
        QVERIFY2(!error, error ? error->toString().c_str() : "");
        return;
    }
    QVERIFY2(error, "accepted an input that must be refused");
    const QJsonObject where = expect[QStringLiteral("where")].toObject();
    if (expect.contains(QStringLiteral("message"))) {
        // Exact message and the whole location (unlisted fields must be empty / 0).
        QCOMPARE(str(error->message), expect[QStringLiteral("message")].toString());
        QCOMPARE(str(error->where.file), where[QStringLiteral("file")].toString());
        QCOMPARE(error->where.line, where[QStringLiteral("line")].toInt());
        QCOMPARE(error->where.column, where[QStringLiteral("column")].toInt());
        QCOMPARE(str(error->where.jsonPath), where[QStringLiteral("jsonPath")].toString());
        QCOMPARE(str(error->where.field), where[QStringLiteral("field")].toString());
        return;
    }
    // Fragments of the message, and the location fields listed.
    const QJsonArray fragments = expect[QStringLiteral("messageContains")].toArray();
    QVERIFY(!fragments.isEmpty());
    for (const QJsonValue& frag : fragments)
        QVERIFY2(error->message.find(std8(frag)) != std::string::npos,
                 qPrintable(QStringLiteral("\"%1\" not in \"%2\"").arg(frag.toString(), str(error->message))));
    if (where.contains(QStringLiteral("file")))
        QCOMPARE(str(error->where.file), where[QStringLiteral("file")].toString());
    if (where.contains(QStringLiteral("line")))
        QCOMPARE(error->where.line, where[QStringLiteral("line")].toInt());
    if (where.contains(QStringLiteral("column")))
        QCOMPARE(error->where.column, where[QStringLiteral("column")].toInt());
    if (where.contains(QStringLiteral("jsonPath")))
        QCOMPARE(str(error->where.jsonPath), where[QStringLiteral("jsonPath")].toString());
    if (where.contains(QStringLiteral("field")))
        QCOMPARE(str(error->where.field), where[QStringLiteral("field")].toString());
}

// Each loader of stage 1 has cases, and each file in the folder is used by some case.
void TestBadInput::catalogCoversEachOperation()
{
    QFile f(kDir + QStringLiteral("manifest.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonArray cases = QJsonDocument::fromJson(f.readAll()).object()[QStringLiteral("cases")].toArray();
    QSet<QString> ops;
    QString all;
    for (const QJsonValue& c : cases) {
        ops.insert(c[QStringLiteral("operation")].toString());
        all += QString::fromUtf8(QJsonDocument(c.toObject()).toJson(QJsonDocument::Compact));
    }
    for (const char* op : {"gpt2", "tokenizer.json", "utf8", "train", "encode-size"})
        QVERIFY2(ops.contains(QLatin1String(op)), op);
    const QStringList files = QDir(kDir).entryList(QDir::Files);
    for (const QString& name : files) {
        if (name == QLatin1String("manifest.json") || name == QLatin1String("make.py")
            || name.startsWith(QLatin1String("gpt2-good.")) || name == QLatin1String("hf-good.json"))
            continue;
        QVERIFY2(all.contains(QLatin1Char('"') + name + QLatin1Char('"')), qPrintable(name + QStringLiteral(" is in no case")));
    }
}

QTEST_GUILESS_MAIN(TestBadInput)
#include "tst_badinput.moc"
