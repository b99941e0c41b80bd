// core::derive on scenarios: the paper's reference numbers (published parameter count, the 5.2
// activation size, tiktoken's token count of the Italian excerpt), a closed provenance graph with a
// formula on every figure for every preset, memoization per stage, determinism, and the errors.

#include "../support/testsupport.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "text/gpt2.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stop_token>
#include <string>

using namespace tw;
using namespace tw::scenario;

Q_DECLARE_METATYPE(std::string)

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

using tw::test::presetOrDie;

std::shared_ptr<const Derivation> deriveOrFail(Deriver& deriver, const Scenario& s)
{
    auto d = deriver.derive(s);
    if (!d) {
        qWarning("%s", d.error().toString().c_str());
        return nullptr;
    }
    return d.value();
}

// The tiktoken ids of a case of tests/data/gpt2_cases.json (npm tiktoken, not our encoder).
QJsonObject referenceCase(const QString& name)
{
    QFile f(QStringLiteral(TOKENWIRE_TEST_DATA "/gpt2_cases.json"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QJsonArray cases = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("cases")).toArray();
    for (const auto& c : cases)
        if (c.toObject().value(QStringLiteral("name")).toString() == name)
            return c.toObject();
    return {};
}

// True when the inputs of the figures form no cycle.
bool acyclic(const FigureSet& figures)
{
    std::map<std::string, int> state; // 1 visiting, 2 done
    std::function<bool(const std::string&)> visit = [&](const std::string& id) {
        int& s = state[id];
        if (s == 1)
            return false;
        if (s == 2)
            return true;
        s = 1;
        if (const Figure* f = figures.find(id))
            for (const auto& in : f->inputs)
                if (!visit(in))
                    return false;
        state[id] = 2;
        return true;
    };
    for (const Figure& f : figures.all())
        if (!visit(f.id))
            return false;
    return true;
}

} // namespace

class TestDerive : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void paperReference_data();
    void paperReference();
    void excerptTokensMatchTiktoken();
    void inlineTextMatchesTiktoken();
    void graphClosedForEveryPreset_data();
    void graphClosedForEveryPreset();
    void vocabularyFromTheTokenizer();
    void modelKeepsItsOwnVocabulary();
    void trainedTokenizer();
    void memoization();
    void fileSourceFollowsTheFile();
    void determinism();
    void derivationTree();
    void closeIds();
    void errors();
    void cancelAndProgress();
};

void TestDerive::initTestCase()
{
    QVERIFY2(text::gpt2Embedded(), "this build must embed GPT-2 (TOKENWIRE_GPT2_DIR)");
}

void TestDerive::paperReference_data()
{
    QTest::addColumn<std::string>("id");
    QTest::addColumn<double>("value");
    // GPT-2 small with a tied head: the published count (docs/model.md, HF config): 124,439,808.
    QTest::newRow("model.parameters") << std::string("model.parameters") << 124439808.0;
    // §5.2: the activation between two blocks, B·T·d·s = 32·1024·768·2 = 50,331,648 B.
    QTest::newRow("tensor.hidden_bytes") << std::string("tensor.hidden_bytes") << 50331648.0;
    // 16-bit weights and gradients: P·2 = 248,879,616 B each (§5.1's M_DP).
    QTest::newRow("memory.weights_bytes") << std::string("memory.weights_bytes") << 248879616.0;
    QTest::newRow("memory.gradients_bytes") << std::string("memory.gradients_bytes") << 248879616.0;
    // Mixed-precision Adam: fp32 master + m + v = 12·P = 1,493,277,696 B.
    QTest::newRow("memory.optimizer_bytes") << std::string("memory.optimizer_bytes") << 1493277696.0;
    // Korthikanti et al. Table 2, no recomputation, per layer: T·B·d·(34 + 5·a·T/d)
    //   = 1024·32·768·(34 + 5·12·1024/768) = 25,165,824·114 = 2,868,903,936 B.
    QTest::newRow("memory.activations.layer_bytes") << std::string("memory.activations.layer_bytes") << 2868903936.0;
    // Stage 1 joins the graph: the scenario's T, B, G and the GPT-2 vocabulary.
    QTest::newRow("dataset.T") << std::string("dataset.T") << 1024.0;
    QTest::newRow("dataset.B") << std::string("dataset.B") << 32.0;
    QTest::newRow("dataset.G") << std::string("dataset.G") << 524288.0;
    QTest::newRow("tokenizer.vocab_size") << std::string("tokenizer.vocab_size") << 50257.0;
    QTest::newRow("model.vocab_size") << std::string("model.vocab_size") << 50257.0;
    QTest::newRow("hardware.gpu_count") << std::string("hardware.gpu_count") << 8.0;
    // The excerpt is 699 bytes (the file in resources/text).
    QTest::newRow("text.bytes") << std::string("text.bytes") << 699.0;
}

void TestDerive::paperReference()
{
    QFETCH(std::string, id);
    QFETCH(double, value);
    Deriver deriver;
    const auto d = deriveOrFail(deriver, presetOrDie("paper-reference"));
    QVERIFY(d);
    const Figure* f = d->figures.find(id);
    QVERIFY2(f, id.c_str());
    QCOMPARE(f->value, value);
    QCOMPARE(d->stage2->parameters, 124439808.0);
}

void TestDerive::excerptTokensMatchTiktoken()
{
    const QJsonObject ref = referenceCase(QStringLiteral("inferno_canto1_it"));
    QVERIFY(!ref.isEmpty());
    const QJsonArray ids = ref.value(QStringLiteral("ids")).toArray();
    QCOMPARE(ids.size(), 298);
    Deriver deriver;
    const auto d = deriveOrFail(deriver, presetOrDie("paper-reference"));
    QVERIFY(d);
    QCOMPARE(d->figures.valueOf("tokens.count"), 298.0);
    QCOMPARE(d->tokens().size(), std::size_t(ids.size()));
    for (qsizetype i = 0; i < ids.size(); ++i)
        QCOMPARE(qint64(d->tokens()[std::size_t(i)].id), ids[i].toInteger());
    // 298 tokens fill 298/1024 of one sequence.
    QCOMPARE(d->figures.valueOf("dataset.sequences"), 298.0 / 1024.0);
}

void TestDerive::inlineTextMatchesTiktoken()
{
    const QJsonObject ref = referenceCase(QStringLiteral("italian_apostrophes"));
    QVERIFY(!ref.isEmpty());
    Scenario s = presetOrDie("paper-reference");
    s.text.kind = TextSource::Kind::Inline;
    s.text.text = ref.value(QStringLiteral("text")).toString().toStdString();
    Deriver deriver;
    const auto d = deriveOrFail(deriver, s);
    QVERIFY(d);
    const QJsonArray ids = ref.value(QStringLiteral("ids")).toArray();
    QCOMPARE(d->tokens().size(), std::size_t(ids.size()));
    for (qsizetype i = 0; i < ids.size(); ++i)
        QCOMPARE(qint64(d->tokens()[std::size_t(i)].id), ids[i].toInteger());
}

void TestDerive::graphClosedForEveryPreset_data()
{
    QTest::addColumn<std::string>("name");
    for (const std::string& n : presetNames())
        QTest::newRow(n.c_str()) << n;
}

void TestDerive::graphClosedForEveryPreset()
{
    QFETCH(std::string, name);
    Deriver deriver;
    const auto d = deriveOrFail(deriver, presetOrDie(name));
    QVERIFY(d);
    std::string missing;
    for (const auto& id : d->figures.missingInputs())
        missing += id + " ";
    QVERIFY2(missing.empty(), missing.c_str());
    QVERIFY(acyclic(d->figures));
    std::set<std::string> ids;
    for (const Figure& f : d->figures.all()) {
        QVERIFY2(ids.insert(f.id).second, f.id.c_str());
        QVERIFY2(!f.formula.empty(), f.id.c_str());
        QVERIFY2(!f.label.empty(), f.id.c_str());
    }
    for (const char* id : {"model.parameters", "memory.weights_bytes", "memory.gradients_bytes", "memory.optimizer_bytes",
                           "memory.activations_bytes", "compute.flops_per_step", "tokens.count", "dataset.sequences"})
        QVERIFY2(d->figures.find(id), id);
    // Stage 2's own figures are all in the merged graph, unchanged.
    for (const Figure& f : d->stage2->figures.all())
        QVERIFY2(d->figures.find(f.id) && *d->figures.find(f.id) == f, f.id.c_str());
    for (const Error& e : d->problems)
        QVERIFY2(e.message.find("defect") == std::string::npos, e.toString().c_str());
}

void TestDerive::vocabularyFromTheTokenizer()
{
    // With the model's V from the tokenizer, model.vocab_size cites tokenizer.vocab_size, so the
    // parameter count traces back to the tokenizer of stage 1.
    Deriver deriver;
    const auto d = deriveOrFail(deriver, presetOrDie("paper-reference"));
    QVERIFY(d);
    bool reachesTokenizer = false;
    for (const Figure* f : d->figures.chain("model.parameters"))
        reachesTokenizer = reachesTokenizer || f->id == "tokenizer.vocab_size";
    QVERIFY(reachesTokenizer);
}

void TestDerive::modelKeepsItsOwnVocabulary()
{
    Deriver deriver;
    const auto d = deriveOrFail(deriver, presetOrDie("llama2-7b"));
    QVERIFY(d);
    QCOMPARE(d->figures.valueOf("model.vocab_size"), 32000.0);
    QCOMPARE(d->figures.valueOf("tokenizer.vocab_size"), 50257.0); // the text is tokenized with GPT-2
    QVERIFY(!d->figures.find("model.vocab_size")->inputs.size()
            || std::find(d->figures.find("model.vocab_size")->inputs.begin(), d->figures.find("model.vocab_size")->inputs.end(),
                         "tokenizer.vocab_size") == d->figures.find("model.vocab_size")->inputs.end());
    // Llama-2-7B's published count (docs/model.md): 6,738,415,616.
    QCOMPARE(d->figures.valueOf("model.parameters"), 6738415616.0);
    bool noted = false;
    for (const Error& e : d->problems)
        noted = noted || (e.where.jsonPath == "model.vocab_size" && e.message.find("32,000") != std::string::npos);
    QVERIFY(noted);
}

void TestDerive::trainedTokenizer()
{
    // A BPE of V = 300 trained on the excerpt: the model's V follows (256 bytes + 43 merges + <|endoftext|>).
    Scenario s = presetOrDie("paper-reference");
    s.tokenizer.kind = TokenizerChoice::Kind::Trained;
    s.tokenizer.trainedVocab = 300;
    Deriver deriver;
    const auto d = deriveOrFail(deriver, s);
    QVERIFY(d);
    QCOMPARE(d->figures.valueOf("tokenizer.vocab_size"), 300.0);
    QCOMPARE(d->figures.valueOf("model.vocab_size"), 300.0);
    // GPT-2 closed form with V = 300 (docs/model.md): 12·L·d² + 13·L·d + (V+T)·d + 2·d
    //   = 84,934,656 + 119,808 + 1,324·768 + 1,536 = 86,072,832.
    QCOMPARE(d->figures.valueOf("model.parameters"), 86072832.0);
    // A smaller vocabulary cuts the excerpt into more tokens than GPT-2's 298.
    QVERIFY(d->figures.valueOf("tokens.count") > 298.0);
}

void TestDerive::memoization()
{
    Deriver deriver;
    Scenario s = presetOrDie("paper-reference");
    const auto first = deriveOrFail(deriver, s);
    QVERIFY(first);
    QCOMPARE(deriver.counters(), (Deriver::Counters{1, 1, 1, 1}));

    // The same scenario again: the very same derivation.
    const auto again = deriveOrFail(deriver, s);
    QCOMPARE(again.get(), first.get());
    QCOMPARE(deriver.counters(), (Deriver::Counters{1, 1, 1, 1}));

    // A model edit: stage 2 runs again, stage 1 is shared (not re-tokenized).
    s.model.layers = 24;
    const auto deeper = deriveOrFail(deriver, s);
    QVERIFY(deeper);
    QCOMPARE(deriver.counters(), (Deriver::Counters{1, 1, 2, 2}));
    QCOMPARE(deeper->stage1.get(), first->stage1.get());
    QVERIFY(deeper->figures.valueOf("model.parameters") != first->figures.valueOf("model.parameters"));

    // A GPU edit: stage 2 only.
    s.hardware.gpu = "h100-sxm";
    QVERIFY(deriveOrFail(deriver, s));
    QCOMPARE(deriver.counters(), (Deriver::Counters{1, 1, 3, 3}));

    // A batch edit: the dataset figures again, the tokens shared.
    s.batch.microBatch = 16;
    const auto smaller = deriveOrFail(deriver, s);
    QVERIFY(smaller);
    QCOMPARE(deriver.counters(), (Deriver::Counters{1, 2, 4, 4}));
    QCOMPARE(smaller->stage1->tokenized.get(), first->stage1->tokenized.get());
    QCOMPARE(smaller->figures.valueOf("dataset.B"), 16.0);

    // Another text: tokenized once more.
    s.text.sample = "inferno-canto1-en";
    const auto english = deriveOrFail(deriver, s);
    QVERIFY(english);
    QCOMPARE(deriver.counters(), (Deriver::Counters{2, 3, 5, 5}));
    QCOMPARE(english->figures.valueOf("tokens.count"), double(referenceCase(QStringLiteral("inferno_canto1_en"))
                                                                  .value(QStringLiteral("ids")).toArray().size()));

    // Back to the first scenario: its tokens and dataset figures are still remembered (stage 2 keeps
    // the 4 most recent results, so this one was dropped and runs again).
    const auto back = deriveOrFail(deriver, presetOrDie("paper-reference"));
    QVERIFY(back);
    QCOMPARE(back->stage1.get(), first->stage1.get());
    QCOMPARE(deriver.counters(), (Deriver::Counters{2, 3, 6, 6}));
    QVERIFY(back->figures.all() == first->figures.all());

    // A stage 3 edit: the plan only; stages 1 and 2 are the same objects.
    Scenario tp = presetOrDie("paper-reference");
    const auto base = deriveOrFail(deriver, tp);
    const Deriver::Counters before = deriver.counters();
    tp.parallel.dp = 2;
    tp.parallel.tp = 4;
    const auto split = deriveOrFail(deriver, tp);
    QVERIFY(split && split->stage3);
    QCOMPARE(deriver.counters(), (Deriver::Counters{before.tokenizations, before.datasets, before.models, before.plans + 1}));
    QCOMPARE(split->stage2.get(), base->stage2.get());
    QCOMPARE(split->figures.valueOf("plan.tp"), 4.0);

    // An impossible plan keeps stages 1 and 2 and says why (8-way TP of 12 heads).
    tp.parallel.dp = 1;
    tp.parallel.tp = 8;
    const auto impossible = deriveOrFail(deriver, tp);
    QVERIFY(impossible);
    QVERIFY(!impossible->stage3);
    QVERIFY(!impossible->planErrors.empty());
    QCOMPARE(impossible->planErrors.front().where.jsonPath, std::string("parallel.tp"));
    QCOMPARE(impossible->figures.valueOf("model.parameters"), 124439808.0);
}

void TestDerive::fileSourceFollowsTheFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("text.txt"));
    auto write = [&](const QByteArray& bytes) {
        QFile f(path);
        return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
    };
    // "Hello world" is two GPT-2 tokens ("Hello", " world"); "Hello world again" three.
    QVERIFY(write("Hello world"));
    Scenario s = presetOrDie("paper-reference");
    s.text.kind = TextSource::Kind::File;
    s.text.path = path.toStdString();
    Deriver deriver;
    auto d = deriveOrFail(deriver, s);
    QVERIFY(d);
    QCOMPARE(d->figures.valueOf("tokens.count"), 2.0);
    QVERIFY(deriveOrFail(deriver, s));
    QCOMPARE(deriver.counters().tokenizations, std::size_t(1));
    QVERIFY(write("Hello world again"));
    d = deriveOrFail(deriver, s);
    QVERIFY(d);
    QCOMPARE(deriver.counters().tokenizations, std::size_t(2));
    QCOMPARE(d->figures.valueOf("tokens.count"), 3.0);
}

void TestDerive::determinism()
{
    for (const std::string& name : presetNames()) {
        const auto a = derive(presetOrDie(name));
        const auto b = derive(presetOrDie(name));
        QVERIFY(a.ok() && b.ok());
        QVERIFY2(a.value()->figures.all() == b.value()->figures.all(), name.c_str());
        QVERIFY2(a.value()->stage2->tensors == b.value()->stage2->tensors, name.c_str());
        QVERIFY(a.value()->tokens() == b.value()->tokens());
        QCOMPARE(a.value()->problems, b.value()->problems);
    }
}

void TestDerive::derivationTree()
{
    Deriver deriver;
    const auto d = deriveOrFail(deriver, presetOrDie("paper-reference"));
    QVERIFY(d);
    const auto tree = scenario::derivationTree(d->figures, "model.parameters");
    QVERIFY(!tree.empty());
    QCOMPARE(tree.front().figure->id, std::string("model.parameters"));
    QCOMPARE(tree.front().depth, 0);
    // Every non-repeated step lists its inputs right below it, one level deeper; leaves are inputs.
    std::set<std::string> seen;
    int leaves = 0;
    for (std::size_t i = 0; i < tree.size(); ++i) {
        const ChainStep& step = tree[i];
        if (step.repeated) {
            QVERIFY(seen.count(step.figure->id));
            continue;
        }
        QVERIFY(seen.insert(step.figure->id).second);
        if (step.figure->inputs.empty())
            ++leaves;
        else
            QCOMPARE(tree[i + 1].depth, step.depth + 1);
    }
    QVERIFY(leaves > 0);
    QVERIFY(seen.count("model.hidden_size"));
    QVERIFY(seen.count("tokenizer.vocab_size"));
    QVERIFY(scenario::derivationTree(d->figures, "no.such.id").empty());
}

void TestDerive::closeIds()
{
    Deriver deriver;
    const auto d = deriveOrFail(deriver, presetOrDie("paper-reference"));
    QVERIFY(d);
    const auto close = scenario::closeIds(d->figures, "model.parameter");
    QVERIFY(!close.empty());
    QCOMPARE(close.front(), std::string("model.parameters"));
    QVERIFY(scenario::closeIds(d->figures, "zzzzzzzzzzzzzzzzzzzzzz").empty());
}

void TestDerive::errors()
{
    Deriver deriver;
    // An invalid scenario: every problem, one per line.
    Scenario s = presetOrDie("paper-reference");
    s.model.hiddenSize = 770;
    s.hardware.nodes = 0;
    auto r = deriver.derive(s);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().where.jsonPath, std::string("model.hidden_size"));
    QVERIFY(str(r.error().toString()).contains(QStringLiteral("hardware.nodes: must be between 1 and")));

    // A text file that is not there: the file and the field that names it.
    s = presetOrDie("paper-reference");
    s.text.kind = TextSource::Kind::File;
    s.text.path = "/no/such/dir/inferno.txt";
    r = deriver.derive(s);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().where.file, s.text.path);
    QCOMPARE(r.error().where.jsonPath, std::string("text.path"));
    QCOMPARE(r.error().message, std::string("cannot read the text: no such file"));

    // A tokenizer file that is not a tokenizer.
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("tok.json"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"model": {"type": "WordPiece", "vocab": {}}})");
    f.close();
    s = presetOrDie("paper-reference");
    s.tokenizer.kind = TokenizerChoice::Kind::File;
    s.tokenizer.path = bad.toStdString();
    r = deriver.derive(s);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().where.jsonPath, std::string("tokenizer.path"));
    QVERIFY2(r.error().message.starts_with("not a usable tokenizer.json"), r.error().message.c_str());
    QCOMPARE(deriver.counters().models, std::size_t(0)); // nothing half-derived was kept
}

void TestDerive::cancelAndProgress()
{
    std::stop_source stop;
    stop.request_stop();
    Progress cancelled;
    cancelled.stop = stop.get_token();
    Scenario s = presetOrDie("paper-reference");
    s.tokenizer.kind = TokenizerChoice::Kind::Trained;
    s.tokenizer.trainedVocab = 1000;
    Deriver deriver;
    auto r = deriver.derive(s, cancelled);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("cancelled") != std::string::npos, r.error().toString().c_str());
    QCOMPARE(deriver.counters().tokenizations, std::size_t(0));

    double last = -1;
    bool monotonic = true;
    Progress watched;
    watched.report = [&](double f) {
        monotonic = monotonic && f >= last && f <= 1.0;
        last = f;
    };
    r = deriver.derive(s, watched);
    QVERIFY(r.ok());
    QVERIFY(monotonic);
    QCOMPARE(last, 1.0);
}

QTEST_GUILESS_MAIN(TestDerive)
#include "tst_derive.moc"
