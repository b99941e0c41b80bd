// The bad-input catalog (issue 9): every malformed input of tests/data/badinput/manifest.json goes
// through its loader and must give exactly the expected Error (message and location), never a crash.
// Stage 5's inputs (issue 6: topologies, GPU placements, sweeps) are a table in this file, stage5_data():
// a scenario goes through loadScenario, derive and deriveNetwork (or a --gpus list through
// parseGpuList) and must stop at the expected step with the expected path and message.
// Scenarios of stages 1, 3 and 4 (the text limit, the parallel plan, the collectives) are the table
// scenario_data(): each must stop at the expected step with exactly the expected Error. The text limit
// (text::maxTextBytes, 1 GiB) is tested lowered to 64 bytes through text::ScopedTextLimit, in both
// tables (manifest key "textLimit").
// The prebuilt tables image (issue 42, text/bpeimage.h) is the table tables_data(): an image of the
// tokenizer of gpt2-good.* with one thing damaged (checksums recomputed or not) must be refused by
// BpeModel::fromImage with exactly the expected location and message, never used.

#include "scenario/derive.h"
#include "scenario/scenariojson.h"
#include "scenario/sweep.h"
#include "text/bpe.h"
#include "text/bpe_p.h"
#include "text/bpeimage.h"
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

#include <cstring>
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
    void textLimitOnlyLowersAndRestores();
    void scenario_data();
    void scenario();
    void stage5_data();
    void stage5();
    void tables_data();
    void tables();
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
    // A lowered text limit for the case: the refusal of a text over the limit without a gibibyte of text.
    std::optional<text::ScopedTextLimit> limit;
    if (spec.contains(QStringLiteral("textLimit")))
        limit.emplace(static_cast<std::size_t>(spec[QStringLiteral("textLimit")].toDouble()));
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

// The limit is the program's 1 GiB unless a scope lowers it; scopes nest, restore, and never raise it.
void TestBadInput::textLimitOnlyLowersAndRestores()
{
    QCOMPARE(text::kMaxTextBytes, std::size_t{1073741824});
    QCOMPARE(text::maxTextBytes(), text::kMaxTextBytes);
    {
        const text::ScopedTextLimit outer(64);
        QCOMPARE(text::maxTextBytes(), std::size_t{64});
        {
            const text::ScopedTextLimit inner(10);
            QCOMPARE(text::maxTextBytes(), std::size_t{10});
        }
        QCOMPARE(text::maxTextBytes(), std::size_t{64});
    }
    QCOMPARE(text::maxTextBytes(), text::kMaxTextBytes);
    {
        const text::ScopedTextLimit raise(text::kMaxTextBytes * 2);
        QCOMPARE(text::maxTextBytes(), text::kMaxTextBytes); // a test cannot weaken the program's limit
    }
    QCOMPARE(text::maxTextBytes(), text::kMaxTextBytes);
}

void TestBadInput::scenario_data()
{
    QTest::addColumn<QString>("input");       // a scenario document, loaded as "generated.json"
    QTest::addColumn<qulonglong>("textLimit"); // the text limit lowered to this many bytes; 0: the program's
    QTest::addColumn<QString>("step");        // where it must stop: load, derive, plan; or ok
    QTest::addColumn<QString>("file");        // the Error's location…
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message"); // …and its exact message
    // A refusal at a JSON path of the loaded document (file "generated.json"), or of derive/the plan
    // (no file: the derivation does not know the document's name).
    auto row = [](const char* name, const QString& input, qulonglong limit, const char* step, const char* path,
                  const char* message) {
        const QString file = QLatin1String(step) == QLatin1String("load") ? QStringLiteral("generated.json") : QString();
        QTest::newRow(name) << input << limit << QString::fromUtf8(step) << file << 0 << 0 << QString::fromUtf8(path)
                            << QString::fromUtf8(message);
    };
    // Invalid JSON: a line and column, no path.
    auto syntax = [](const char* name, const char* input, int line, int column, const char* message) {
        QTest::newRow(name) << QString::fromUtf8(input) << qulonglong{0} << QStringLiteral("load")
                            << QStringLiteral("generated.json") << line << column << QString() << QString::fromUtf8(message);
    };
    // A file named by the scenario: refused when derive reads it, the location naming the file.
    auto fileRow = [](const char* name, const QString& input, qulonglong limit, const QString& file, const char* path,
                      const char* message) {
        QTest::newRow(name) << input << limit << QStringLiteral("derive") << file << 0 << 0 << QString::fromUtf8(path)
                            << QString::fromUtf8(message);
    };
    auto ok = [](const char* name, const QString& input, qulonglong limit) {
        QTest::newRow(name) << input << limit << QStringLiteral("ok") << QString() << 0 << 0 << QString() << QString();
    };
    // A schema-4 document with these members (the defaults for the rest: the paper's reference).
    auto docOf = [](const QString& members) { return QStringLiteral("{\"schema_version\": 4, %1}").arg(members); };
    auto doc = [&](const char* members) { return docOf(QString::fromUtf8(members)); };
    // Two GPUs for pipeline rows, four for assignment rows; the model (GPT-2 small) has 12 layers.
    auto twoGpus = [&](const char* parallel) {
        return docOf(QStringLiteral(R"("hardware": {"nodes": 1, "gpus_per_node": 2}, "parallel": {"dp": 1, "pp": 2, %1})")
                         .arg(QString::fromUtf8(parallel)));
    };
    auto fourGpus = [&](const char* assignment) {
        return docOf(QStringLiteral(R"("hardware": {"nodes": 1, "gpus_per_node": 4}, "parallel": {"dp": 4, "assignment": %1})")
                         .arg(QString::fromUtf8(assignment)));
    };

    // Stage 1: the text limit, lowered to 64 bytes. 65 and 64 bytes of inline text, a 70-byte text
    // file (text-good.txt) and the 3,889-byte hf-good.json as the tokenizer.
    const QString inline65 = doc(R"("text": {"source": "inline", "text": "Nel mezzo del cammin di nostra vita mi ritrovai per una selva osc"})");
    const QString inline64 = doc(R"("text": {"source": "inline", "text": "Nel mezzo del cammin di nostra vita mi ritrovai per una selva os"})");
    row("inline text over the limit", inline65, 64, "load", "text.text",
        "the text is 65 B, longer than the 64 B the program tokenizes in one piece");
    ok("inline text at the limit", inline64, 64);
    ok("inline text under the program's limit", inline65, 0);
    const QString textFile = kDir + QStringLiteral("text-good.txt");
    fileRow("text file over the limit", docOf(QStringLiteral(R"("text": {"source": "file", "path": "%1"})").arg(textFile)), 64,
            textFile, "text.path", "the text is 70 B, larger than the 64 B the program reads in one piece");
    const QString tokenizerFile = kDir + QStringLiteral("hf-good.json");
    fileRow("tokenizer file over the limit",
            docOf(QStringLiteral(R"("tokenizer": {"kind": "file", "path": "%1"})").arg(tokenizerFile)), 64,
            tokenizerFile, "tokenizer.path", "the tokenizer file is 3,889 B, larger than the 64 B the program reads in one piece");

    // Stage 3: the parallel plan. Read by the loader…
    row("negative degree", doc(R"("parallel": {"dp": -2})"), 0, "load", "parallel.dp", "must not be negative, got -2");
    row("degree beyond 64 bits", doc(R"("parallel": {"pp": 1e30})"), 0, "load", "parallel.pp",
        "too large: got 1e30, the most is 18,446,744,073,709,551,615");
    row("degree of 20 digits", doc(R"("parallel": {"dp": 99999999999999999999})"), 0, "load", "parallel.dp",
        "too large: got 99999999999999999999, the most is 18,446,744,073,709,551,615");
    row("degree as a string", doc(R"("parallel": {"dp": "8"})"), 0, "load", "parallel.dp",
        "expected an unsigned integer, got string");
    row("fractional degree", doc(R"("parallel": {"tp": 2.5})"), 0, "load", "parallel.tp", "expected an unsigned integer, got 2.5");
    row("unknown sharding", doc(R"("parallel": {"sharding": "zero4"})"), 0, "load", "parallel.sharding",
        "unknown sharding \"zero4\" (expected ddp, zero1, zero2, zero3, fsdp-full or fsdp-hybrid)");
    row("unknown schedule", doc(R"("parallel": {"schedule": "zero-bubble"})"), 0, "load", "parallel.schedule",
        "unknown pipeline schedule \"zero-bubble\" (expected gpipe, 1f1b or interleaved)");
    row("future field type", doc(R"("parallel": {"sharding": {"kind": "zero3", "offload": true}})"), 0, "load",
        "parallel.sharding", "expected a string, got object");
    row("future degree", doc(R"("parallel": {"cp": 2})"), 0, "load", "parallel.cp", "unknown key \"cp\" (did you mean \"dp\"?)");
    row("negative layers in a stage", twoGpus(R"("layer_partition": [13, -1])"), 0, "load", "parallel.layer_partition[1]",
        "must not be negative, got -1");
    row("assignment entry of two coordinates", fourGpus("[[0,0,0],[1,0],[2,0,0],[3,0,0]]"), 0, "load",
        "parallel.assignment[1]", "expected [dp, pp, tp] (three whole numbers), got an array of 2");
    // …and by the plan's validation (Derivation::planErrors).
    row("zero degree", doc(R"("parallel": {"dp": 0})"), 0, "plan", "parallel.dp", "must be between 1 and 1,048,576, got 0");
    row("negative memory reserve", doc(R"("parallel": {"memory_reserve_bytes": -1})"), 0, "plan",
        "parallel.memory_reserve_bytes", "must be a number of bytes from 0 to 10^15, got -1");
    row("allocator headroom of 60 %", doc(R"("parallel": {"memory_headroom": 0.6})"), 0, "plan",
        "parallel.memory_headroom", "must be a share of the GPU's memory from 0 to 0.5 (0.1 = 10 %), got 0.60");
    row("allocator headroom as a percentage", doc(R"("parallel": {"memory_headroom": "10%"})"), 0, "load",
        "parallel.memory_headroom", "expected a number, got string");
    row("NCCL buffers of 10^16 bytes", doc(R"("parallel": {"comm_buffer_bytes": 1e16})"), 0, "plan",
        "parallel.comm_buffer_bytes", "must be a number of bytes from 0 to 10^15, got 10,000,000,000,000,000");
    // The whole run's inputs (issue #40).
    row("run of 12 parsecs", doc(R"("run": {"tokens": "12 parsecs"})"), 0, "load", "run.tokens",
        "'12 parsecs' has an unknown unit 'parsecs'; the units are k (or K) thousand, M million, B (or G) billion, T "
        "trillion, P 10^15");
    row("PUE below 1", doc(R"("run": {"pue": 0.8})"), 0, "load", "run.pue", "must be between 1 (no overhead) and 3, got 0.8");
    row("GPU power of 0 W", doc(R"("run": {"gpu_power_w": 0})"), 0, "load", "run.gpu_power_w",
        "must be above 0 and at most 5,000 W per GPU, got 0");
    row("negative price", doc(R"("run": {"price_per_gpu_hour": -2})"), 0, "load", "run.price_per_gpu_hour",
        "must be between 0 and 10,000 per GPU-hour, got -2");
    row("GPU power as a word", doc(R"("run": {"gpu_power_w": "lots"})"), 0, "load", "run.gpu_power_w",
        "expected watts per GPU or \"auto\", got string");
    row("compute efficiency as a word", doc(R"("parallel": {"compute_efficiency": "fast"})"), 0, "load",
        "parallel.compute_efficiency", "expected a number in (0, 1] or \"auto\", got string");
    row("unknown attention kernel", doc(R"("model": {"attention": "flash2"})"), 0, "load", "model.attention",
        "unknown attention kernel \"flash2\" (expected auto, fused or unfused)");
    row("huge degree", doc(R"("parallel": {"tp": 18446744073709551615})"), 0, "plan", "parallel.tp",
        "must be between 1 and 1,048,576, got 18,446,744,073,709,551,615");
    row("degrees short of the GPUs", doc(R"("parallel": {"dp": 4})"), 0, "plan", "parallel.dp",
        "dp·pp·tp = 4·1·1 = 4 GPUs, but the cluster has 8 (1 node × 8 GPUs): the degrees must multiply to the number of GPUs");
    row("GPU placed twice", fourGpus("[[0,0,0],[1,0,0],[1,0,0],[3,0,0]]"), 0, "plan", "parallel.assignment[2]",
        "GPU 2 has the same place (dp 1, pp 0, tp 0) as GPU 1");
    row("GPU placed outside the mesh", fourGpus("[[0,0,0],[1,0,0],[2,0,0],[4,0,0]]"), 0, "plan", "parallel.assignment[3]",
        "GPU 3: dp 4 is out of range 0–3");
    row("GPU without a place", fourGpus("[[0,0,0],[1,0,0],[2,0,0]]"), 0, "plan", "parallel.assignment",
        "3 entries for dp·pp·tp = 4 GPUs: give one place [dp, pp, tp] per GPU");
    row("layer partition short of the layers", twoGpus(R"("layer_partition": [5, 5])"), 0, "plan", "parallel.layer_partition",
        "the entries sum to 10 layers, the model has 12");
    row("layer partition with an empty stage", twoGpus(R"("layer_partition": [12, 0])"), 0, "plan", "parallel.layer_partition[1]",
        "0 layers: every stage needs at least one layer");
    row("layer partition of three stages", twoGpus(R"("layer_partition": [4, 4, 4])"), 0, "plan", "parallel.layer_partition",
        "3 entries, need pp·v = 2 (one per stage)");

    // Stage 4: the collectives (all refused by the loader).
    row("unknown algorithm", doc(R"("collectives": {"allreduce": "ringg"})"), 0, "load", "collectives.allreduce",
        "unknown algorithm \"ringg\" (expected auto, tree, ring, collnet-direct, collnet-chain, nvls, nvls-tree, flat-ring, "
        "naive, reduce-broadcast, recursive-doubling, rabenseifner, binary-tree, double-binary-tree, hierarchical)");
    row("algorithm of another collective", doc(R"("collectives": {"allreduce": "pairwise"})"), 0, "load", "collectives.allreduce",
        "AllReduce has no algorithm \"pairwise\" (expected auto, tree, ring, collnet-direct, collnet-chain, nvls, nvls-tree, "
        "flat-ring, naive, reduce-broadcast, recursive-doubling, rabenseifner, binary-tree, double-binary-tree, hierarchical)");
    row("All-to-All by ring", doc(R"("collectives": {"alltoall": "ring"})"), 0, "load", "collectives.alltoall",
        // An older schema's "ring" is the textbook ring (migrated to flat-ring); NCCL runs All-to-All point-to-point.
        "All-to-All has no algorithm \"flat-ring\" (NCCL runs it point-to-point: use auto) (expected auto, pairwise, bruck)");
    row("algorithm as an object", doc(R"("collectives": {"allreduce": {"name": "ring", "channels": 4}})"), 0, "load",
        "collectives.allreduce", "expected a string, got object");
    row("unknown collective", doc(R"("collectives": {"sendrecv": "direct"})"), 0, "load", "collectives.sendrecv",
        "unknown key \"sendrecv\" (expected allreduce, reducescatter, allgather, alltoall, broadcast, alpha_s or bandwidth)");
    syntax("NaN link alpha", R"({"schema_version": 4, "collectives": {"alpha_s": NaN}})", 1, 50,
           "invalid JSON: syntax error while parsing value - invalid literal; last read: '\"alpha_s\": N'");
    syntax("-Infinity link alpha", R"({"schema_version": 4, "collectives": {"alpha_s": -Infinity}})", 1, 51,
           "invalid JSON: syntax error while parsing value - invalid number; expected digit after '-'; last read: '-I'");
    row("negative link alpha", doc(R"("collectives": {"alpha_s": -1e-6})"), 0, "load", "collectives.alpha_s",
        "must be a finite number of seconds ≥ 0");
    row("zero link bandwidth", doc(R"("collectives": {"bandwidth": 0})"), 0, "load", "collectives.bandwidth",
        "must be a finite number of bytes per second > 0");
    row("negative link bandwidth", doc(R"("collectives": {"bandwidth": -25e9})"), 0, "load", "collectives.bandwidth",
        "must be a finite number of bytes per second > 0");
    syntax("link bandwidth beyond a double", R"({"schema_version": 4, "collectives": {"bandwidth": 1e400}})", 1, 56,
           "invalid JSON: number overflow parsing '1e400'");
    row("link bandwidth with its unit", doc(R"("collectives": {"bandwidth": "25 GB/s"})"), 0, "load", "collectives.bandwidth",
        "expected a number, got string");
}

// Loads the scenario, derives it and takes the first refusal: the loader's, derive's or the plan's.
// Each input has exactly one thing wrong, so exactly one Error must come out.
void TestBadInput::scenario()
{
    QFETCH(QString, input);
    QFETCH(qulonglong, textLimit);
    QFETCH(QString, step);
    QFETCH(QString, file);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, path);
    QFETCH(QString, message);
    std::optional<text::ScopedTextLimit> limit;
    if (textLimit > 0)
        limit.emplace(static_cast<std::size_t>(textLimit));
    std::optional<Error> error;
    QString stoppedAt = QStringLiteral("ok");
    scenario::ScenarioLoad load = scenario::loadScenario(input.toStdString(), "generated.json");
    if (!load.errors.empty()) {
        QCOMPARE(load.errors.size(), std::size_t{1});
        error = load.errors.front();
        stoppedAt = QStringLiteral("load");
    } else if (auto d = scenario::derive(*load.scenario); !d) {
        error = d.error();
        stoppedAt = QStringLiteral("derive");
    } else if (!d.value()->planErrors.empty()) {
        QCOMPARE(d.value()->planErrors.size(), std::size_t{1});
        error = d.value()->planErrors.front();
        stoppedAt = QStringLiteral("plan");
    }
    QVERIFY2(stoppedAt == step, qPrintable(QStringLiteral("stopped at %1 (%2), expected %3")
                                               .arg(stoppedAt, error ? str(error->toString()) : QString(), step)));
    if (!error)
        return;
    QCOMPARE(str(error->message), message);
    QCOMPARE(str(error->where.file), file);
    QCOMPARE(error->where.line, line);
    QCOMPARE(error->where.column, column);
    QCOMPARE(str(error->where.jsonPath), path);
    QCOMPARE(str(error->where.field), QString());
}

void TestBadInput::stage5_data()
{
    QTest::addColumn<QString>("input");   // a scenario document, or a --gpus list for step "gpus"
    QTest::addColumn<QString>("step");    // where it must stop: load, network or gpus
    QTest::addColumn<QString>("path");    // the Error's JSON path
    QTest::addColumn<QString>("message"); // a fragment of its message
    auto row = [](const char* name, const char* input, const char* step, const char* path, const char* message) {
        QTest::newRow(name) << QString::fromUtf8(input) << QString::fromUtf8(step) << QString::fromUtf8(path)
                            << QString::fromUtf8(message);
    };
    // The fabric's own fields.
    row("unknown topology kind", R"({"schema_version": 4, "topology": {"kind": "torus"}})", "load", "topology.kind",
        "unknown kind \"torus\" (expected pcie-server, nvswitch-node, leaf-spine, paper-testbed, three-tier)");
    row("future topology field", R"({"schema_version": 4, "topology": {"kind": "leaf-spine", "rails": 8}})", "load",
        "topology.rails", "unknown key (expected kind,");
    row("future field type", R"({"schema_version": 4, "topology": {"nic_bandwidth": {"gbps": 400}}})", "load",
        "topology.nic_bandwidth", "expected a number of bytes per second, a rate with its unit or \"auto\", got object");
    row("NVLink generation of the future", R"({"schema_version": 4, "topology": {"nvlink": "nvlink5"}})", "load",
        "topology.nvlink", "unknown protocol \"nvlink5\" (expected auto,");
    row("zero NIC bandwidth", R"({"schema_version": 4, "hardware": {"nodes": 2, "gpus_per_node": 8}, "parallel": {"dp": 16},
        "topology": {"kind": "leaf-spine", "nic_bandwidth": 0}})", "network", "topology.nic_bandwidth",
        "must be a finite number of bytes per second > 0");
    row("10 Gb/s NIC at 400 Gb/s", R"({"schema_version": 4, "hardware": {"nodes": 2, "gpus_per_node": 8}, "parallel": {"dp": 16},
        "topology": {"kind": "leaf-spine", "nic_protocol": "ethernet-10g", "nic_bandwidth": 5e10}})", "network",
        "topology.nic_bandwidth", "400 Gb/s per direction is faster than ethernet-10g runs (10 Gb/s)");
    row("oversubscription below 1", R"({"schema_version": 4, "hardware": {"nodes": 2, "gpus_per_node": 8}, "parallel": {"dp": 16},
        "topology": {"kind": "leaf-spine", "oversubscription": 0.5}})", "network", "topology.oversubscription", "must be a finite ratio ≥ 1");
    row("three-tier cores outside planes", R"({"schema_version": 5, "hardware": {"nodes": 2, "gpus_per_node": 8}, "parallel": {"dp": 16},
        "topology": {"kind": "three-tier", "gpus_per_pod": 8, "spines_per_pod": 4, "core_switches": 6}})", "network",
        "topology.core_switches", "the cores form one plane per pod spine: 6 is not a multiple of spines_per_pod (4)");
    row("three-tier pod of part of a server", R"({"schema_version": 5, "hardware": {"nodes": 2, "gpus_per_node": 8}, "parallel": {"dp": 16},
        "topology": {"kind": "three-tier", "gpus_per_pod": 20}})", "network", "topology.gpus_per_pod",
        "a pod holds whole servers: 20 GPUs is not a multiple of the 8 GPUs per node");
    // GPU placements that do not fit the nodes.
    row("testbed with two GPUs per node", R"({"schema_version": 4, "hardware": {"nodes": 4, "gpus_per_node": 2}, "parallel": {"dp": 8},
        "topology": {"kind": "paper-testbed"}})", "network", "topology.kind",
        "paper-testbed has one GPU per node, but the cluster has 2 GPUs per node");
    row("one server for two nodes", R"({"schema_version": 4, "hardware": {"nodes": 2, "gpus_per_node": 4}, "parallel": {"dp": 8},
        "topology": {"kind": "nvswitch-node"}})", "network", "topology.kind", "nvswitch-node is one server, but the cluster has 2 nodes");
    // Sweeps.
    row("sweep of thousands of points", "1-5000", "gpus", "", "item 1 reaches 5,000 GPUs; a sweep point has at most 4,096");
    row("sweep of too many sizes", "1-100", "gpus", "", "item 1 spans 100 sizes; a sweep has at most 64 points");
    row("sweep item not a number", "1,2,four", "gpus", "", "\"1,2,four\": item 3 is not a positive integer");
}

void TestBadInput::stage5()
{
    QFETCH(QString, input);
    QFETCH(QString, step);
    QFETCH(QString, path);
    QFETCH(QString, message);
    std::optional<Error> error;
    QString stoppedAt;
    if (step == QLatin1String("gpus")) {
        auto list = scenario::parseGpuList(input.toStdString());
        if (!list)
            error = list.error();
        stoppedAt = QStringLiteral("gpus");
    } else {
        scenario::ScenarioLoad load = scenario::loadScenario(input.toStdString(), "generated.json");
        if (!load.errors.empty()) {
            error = load.errors.front();
            stoppedAt = QStringLiteral("load");
        } else {
            auto d = scenario::derive(*load.scenario);
            QVERIFY2(d.ok(), d.ok() ? "" : d.error().toString().c_str());
            auto net = scenario::deriveNetwork(*load.scenario, *d.value());
            if (!net) {
                error = net.error();
                stoppedAt = QStringLiteral("network");
            }
        }
    }
    QVERIFY2(error, "accepted an input that must be refused");
    QCOMPARE(stoppedAt, step);
    QCOMPARE(str(error->where.jsonPath), path);
    QVERIFY2(error->message.find(message.toStdString()) != std::string::npos,
             qPrintable(QStringLiteral("\"%1\" not in \"%2\"").arg(message, str(error->message))));
}

namespace {

// One thing wrong with a tables image (tables_data): a header field, the image's size or place in
// memory, or an entry of a table.
enum class Damage {
    None, Empty, Misaligned, Magic, ByteOrder, Version, VocabUnsealed, Layout, DropLast, Append, SourceCount,
    VocabUnder256, EndOfTextBeyond, CompactTooLarge, PairSlots, TokenBytesGrown, OtherSource, OneSource, TablesByte,
    TokenStartBeyond, ByteTokenWrong, MergeBeyond, PairIdBeyond, PairMapFull, TokenSlotBeyond, TokenIndexFull,
    BytePairBeyond,
};

constexpr std::string_view kShaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr std::string_view kShaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

std::size_t alignUp64(std::size_t n) { return (n + 63) / 64 * 64; }

} // namespace

Q_DECLARE_METATYPE(Damage)

void TestBadInput::tables_data()
{
    QTest::addColumn<Damage>("damage");
    QTest::addColumn<bool>("reseal");    // checksums recomputed after the damage (sealBpeImage)
    QTest::addColumn<QString>("path");    // the Error's location (file "tiny tables image")…
    QTest::addColumn<QString>("message"); // …and its message: exact, or a fragment when it holds a checksum
    QTest::addColumn<bool>("exact");
    auto row = [](const char* name, Damage d, bool reseal, const char* path, const char* message, bool exact = true) {
        QTest::newRow(name) << d << reseal << QString::fromUtf8(path) << QString::fromUtf8(message) << exact;
    };
    // The image of gpt2-good.* (262 ids, <|endoftext|> 261, 5 merges), recording the sources kShaA
    // and kShaB. Its header is 208 bytes (bpeimage.h: 8 + 4 + 4 + 4 × 8 + 4 + 4 + 4 × 32 + 6 × 4).
    row("sound image", Damage::None, false, "", "");
    row("empty", Damage::Empty, false, "header", "the image is 0 bytes, shorter than its header (208 bytes)");
    row("misaligned in memory", Damage::Misaligned, false, "header", "the image is not aligned to 8 bytes in memory");
    row("not an image", Damage::Magic, false, "header.magic", "not a tables image: it does not start with TWBPEIMG");
    row("other byte order", Damage::ByteOrder, false, "header.byteOrder", "the image was written on a machine of the other byte order");
    row("future version", Damage::Version, true, "header.version", "the image has format version 2; this program reads version 1");
    row("future version, checksums old", Damage::Version, false, "header.version",
        "the image has format version 2; this program reads version 1");
    row("header changed, checksums old", Damage::VocabUnsealed, false, "header.headerChecksum",
        "the header is damaged: its checksum is ", false);
    row("another layout", Damage::Layout, true, "header.layout", "the image was written by a build with another layout of the tables");
    row("cut short", Damage::DropLast, false, "header.imageBytes", " bytes, its header says ", false);
    row("a byte too many", Damage::Append, false, "header.imageBytes", " bytes, its header says ", false);
    row("five sources", Damage::SourceCount, true, "header.sourceCount", "the header names 5 source files; at most 4");
    row("vocabulary under 256", Damage::VocabUnder256, true, "header.vocabSize",
        "a vocabulary of 255 ids; a byte-level BPE has 256 to 2^32 − 2");
    row("<|endoftext|> beyond", Damage::EndOfTextBeyond, true, "header.endOfText", "<|endoftext|> is id 262, beyond the vocabulary");
    row("compact slots for 70,000 ids", Damage::CompactTooLarge, true, "header.flags",
        "compact pair slots hold ids below 65,535, the vocabulary has 70000");
    row("pair slots not a power of two", Damage::PairSlots, true, "header.pairSlots",
        "the pair map and the token index need a power of two of at least 16 slots");
    row("tables larger than the image", Damage::TokenBytesGrown, true, "header.imageBytes", "the tables the header describes take ",
        false);
    // 0xaa with its last bit flipped is 0xab.
    row("built from another file", Damage::OtherSource, true, "header.sourceSha256[0]",
        "the image was built from another file: its sha256 is abaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, "
        "expected aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    row("built from one file", Damage::OneSource, true, "header.sourceCount", "the image was built from 1 file, expected 2");
    row("tables changed, checksums old", Damage::TablesByte, false, "header.tablesChecksum",
        "the tables are damaged: their checksum is ", false);
    // Checksummed images that break the tables' invariants (toImage never writes them).
    row("token past the bytes", Damage::TokenStartBeyond, true, "tables.tokenStart[1]", "token 0 does not end inside the tokens' bytes");
    row("byte token of another byte", Damage::ByteTokenWrong, true, "tables.byteToken[0]", "the token of byte 0 is not that byte");
    row("merge beyond the vocabulary", Damage::MergeBeyond, true, "tables.merges[0]", "id 262 is beyond the vocabulary of 262");
    row("pair beyond the vocabulary", Damage::PairIdBeyond, true, "tables.pairs[0]", "id 262 is beyond the vocabulary of 262");
    row("pair map full", Damage::PairMapFull, true, "tables.pairs[0]", "the pair map has no empty slot");
    row("token slot beyond the vocabulary", Damage::TokenSlotBeyond, true, "tables.tokenSlots[0]",
        "id 262 is beyond the vocabulary of 262");
    row("token index full", Damage::TokenIndexFull, true, "tables.tokenSlots[0]", "the token index has no empty slot");
    row("byte pair beyond the vocabulary", Damage::BytePairBeyond, true, "tables.bytePairs[0]",
        "id 262 is beyond the vocabulary of 262");
}

void TestBadInput::tables()
{
    QFETCH(Damage, damage);
    QFETCH(bool, reseal);
    QFETCH(QString, path);
    QFETCH(QString, message);
    QFETCH(bool, exact);
    auto model = text::BpeModel::fromGpt2Files(readFile(QStringLiteral("gpt2-good.encoder.json")),
                                               readFile(QStringLiteral("gpt2-good.vocab.bpe")), "gpt2");
    QVERIFY(model.ok());
    const std::string_view sources[] = {kShaA, kShaB};
    auto written = model->toImage(sources);
    QVERIFY(written.ok());
    // The image in 8-byte aligned memory, with a spare word for Append and Misaligned.
    std::vector<std::uint64_t> words(written->size() / 8 + 2);
    auto* base = reinterpret_cast<unsigned char*>(words.data());
    std::memcpy(base, written->data(), written->size());
    std::span<unsigned char> image(base, written->size());
    // Where the tables start: the views of a sound load, and (for the two tables the model copies,
    // merges and byteToken) the layout of bpeimage.cpp: rank, merges, byteToken, pairs, each 64-byte aligned.
    auto sound = text::BpeModel::fromImage(image, sources, "tiny");
    QVERIFY2(sound.ok(), sound.ok() ? "" : sound.error().toString().c_str());
    const text::BpeModel::Data& d = sound->data();
    auto offsetOf = [&](const void* table) { return std::size_t(static_cast<const unsigned char*>(table) - base); };
    const std::size_t merges = alignUp64(offsetOf(d.rank.data()) + 262 * 4);
    const std::size_t byteToken = alignUp64(merges + 5 * sizeof(text::Merge));
    QCOMPARE(alignUp64(byteToken + 256 * 4), offsetOf(d.pairs.compactSlots().data()));
    auto put32 = [&](std::size_t offset, std::uint32_t v) { std::memcpy(base + offset, &v, 4); };
    const std::size_t pairs = offsetOf(d.pairs.compactSlots().data());
    const std::size_t tokenSlots = offsetOf(d.tokenSlots.data());
    text::BpeImageHeader h;
    std::memcpy(&h, base, sizeof h);
    switch (damage) {
    case Damage::None: break;
    case Damage::Empty: image = image.first(0); break;
    case Damage::Misaligned:
        std::memmove(base + 1, base, image.size());
        image = std::span<unsigned char>(base + 1, image.size());
        break;
    case Damage::Magic: h.magic[7] = 'X'; break;
    case Damage::ByteOrder: h.byteOrder = 0x04030201; break;
    case Damage::Version: h.version = 2; break;
    case Damage::VocabUnsealed: h.vocabSize = 300; break;
    case Damage::Layout: h.layout ^= 1; break;
    case Damage::DropLast: image = image.first(image.size() - 64); break;
    case Damage::Append: image = std::span<unsigned char>(base, image.size() + 1); break;
    case Damage::SourceCount: h.sourceCount = 5; break;
    case Damage::VocabUnder256: h.vocabSize = 255; break;
    case Damage::EndOfTextBeyond: h.endOfText = 262; break;
    case Damage::CompactTooLarge: h.vocabSize = 70000; break;
    case Damage::PairSlots: h.pairSlots = 1000; break;
    case Damage::TokenBytesGrown: h.tokenBytes += 64; break;
    case Damage::OtherSource: h.sourceSha256[0][0] ^= 1; break;
    case Damage::OneSource: h.sourceCount = 1; break;
    case Damage::TablesByte: base[offsetOf(d.tokenBytes.data())] ^= 0x20; break;
    case Damage::TokenStartBeyond: put32(offsetOf(d.tokenStart.data()) + 4, 0xFFFFFFFF); break;
    case Damage::ByteTokenWrong: put32(byteToken, d.byteToken[1]); break;
    case Damage::MergeBeyond: put32(merges + offsetof(text::Merge, id), 262); break;
    case Damage::PairIdBeyond: // slot 0: the pair (1, 2) making id 262 (compact: key left << 16 | right, value rank << 16 | id)
        put32(pairs, 0x00010002);
        put32(pairs + 4, 262);
        break;
    case Damage::PairMapFull:
        for (std::size_t i = 0; i < d.pairs.compactSlots().size(); ++i) {
            put32(pairs + 8 * i, std::uint32_t(i));
            put32(pairs + 8 * i + 4, 0);
        }
        break;
    case Damage::TokenSlotBeyond: put32(tokenSlots + offsetof(text::TokenSlot, idPlusOne), 263); break;
    case Damage::TokenIndexFull:
        for (std::size_t i = 0; i < d.tokenSlots.size(); ++i)
            put32(tokenSlots + sizeof(text::TokenSlot) * i + offsetof(text::TokenSlot, idPlusOne), 1);
        break;
    case Damage::BytePairBeyond: put32(offsetOf(d.bytePairs.data()) + offsetof(text::PairMap::Found, id), 262); break;
    }
    if (image.size() >= sizeof h) {
        std::memcpy(image.data(), &h, sizeof h);
        if (reseal)
            text::sealBpeImage(image);
    }
    auto loaded = text::BpeModel::fromImage(image, sources, "tiny");
    if (damage == Damage::None) {
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        return;
    }
    QVERIFY2(!loaded.ok(), "accepted a damaged image");
    const Error& error = loaded.error();
    QCOMPARE(str(error.where.file), QStringLiteral("tiny tables image"));
    QCOMPARE(str(error.where.jsonPath), path);
    QCOMPARE(error.where.line, 0);
    QCOMPARE(error.where.column, 0);
    if (exact)
        QCOMPARE(str(error.message), message);
    else
        QVERIFY2(error.message.find(message.toStdString()) != std::string::npos,
                 qPrintable(QStringLiteral("\"%1\" not in \"%2\"").arg(message, str(error.message))));
}

QTEST_GUILESS_MAIN(TestBadInput)
#include "tst_badinput.moc"
