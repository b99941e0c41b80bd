// Dataset figures (stage 1): a short text worked out by hand, the poem's fractions from
// docs/model.md (on a stand-in token list), the Canto I excerpt with GPT-2, the closed provenance
// graph and a formula on every figure. The poem itself is read only by tests/bench/check_corpus.

#include "text/dataset.h"
#include "text/gpt2.h"

#include <QFile>
#include <QTest>

#include <cmath>
#include <string>
#include <vector>

using namespace tw::text;

namespace {

// A model with two merges: 256 = "ab" (97,98), 257 = " ab" (32,256), and <|endoftext|> = 258: V = 259.
BpeModel smallModel()
{
    auto model = BpeModel::fromMerges({{97, 98, 256, 0}, {32, 256, 257, 0}}, true, "small");
    return std::move(model).value();
}

// The hand-made segmentation of "ab ab\nabc d\n" (12 bytes) with smallModel():
//   "ab"=256 [0,2)  " ab"=257 [2,5)  "\n"=10 [5,6)  "ab"=256 [6,8)  "c"=99 [8,9)  " "=32 [9,10)
//   "d"=100 [10,11)  "\n"=10 [11,12)
const std::string kText = "ab ab\nabc d\n";
const std::vector<TokenSpan> kTokens = {{256, 0, 2}, {257, 2, 5}, {10, 5, 6},   {256, 6, 8},
                                        {99, 8, 9},  {32, 9, 10}, {100, 10, 11}, {10, 11, 12}};

// The Italian Canto I excerpt that ships with the program; empty when unreadable.
std::string readExcerptIt()
{
    QFile file(QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/text/inferno-canto1-it.txt"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll().toStdString();
}

} // namespace

class TestDataset : public QObject {
    Q_OBJECT
private slots:
    void handChecked_data();
    void handChecked();
    void formulasShowTheNumbers();
    void histogramAndRanks();
    void graphClosedAndFormulas();
    void poemFractions();
    void excerptWithGpt2();
    void idBytesAboveUint16();
    void degenerateInputs();
};

void TestDataset::handChecked_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<double>("value");

    // "ab ab\nabc d\n": 12 ASCII bytes = 12 code points; words ab, ab, abc, d = 4; two '\n' = 2 lines.
    QTest::newRow("text.bytes") << "text.bytes" << 12.0;
    QTest::newRow("text.code_points") << "text.code_points" << 12.0;
    QTest::newRow("text.words") << "text.words" << 4.0;
    QTest::newRow("text.lines") << "text.lines" << 2.0;
    // 8 spans; distinct ids {256, 257, 10, 99, 32, 100} = 6.
    QTest::newRow("tokens.count") << "tokens.count" << 8.0;
    QTest::newRow("tokens.unique") << "tokens.unique" << 6.0;
    // 8 tokens / 4 words = 2; 12 bytes / 8 tokens = 1.5.
    QTest::newRow("tokens.per_word") << "tokens.per_word" << 2.0;
    QTest::newRow("tokens.bytes_per_token") << "tokens.bytes_per_token" << 1.5;
    // 256 bytes + 2 merges + <|endoftext|> = 259.
    QTest::newRow("tokenizer.vocab_size") << "tokenizer.vocab_size" << 259.0;
    // Shape T=4, B=3, G=8 tokens, 2 documents.
    QTest::newRow("dataset.T") << "dataset.T" << 4.0;
    QTest::newRow("dataset.B") << "dataset.B" << 3.0;
    QTest::newRow("dataset.G") << "dataset.G" << 8.0;
    QTest::newRow("dataset.documents") << "dataset.documents" << 2.0;
    // 8 tokens + (2 − 1) separator = 9; 9 / 4 = 2.25 sequences; 2.25 / 3 = 0.75 micro-batches;
    // 9 / 8 = 1.125 steps; V = 259 ≤ 65,536 → 2 B per id; 9 × 2 = 18 B.
    QTest::newRow("dataset.packed_tokens") << "dataset.packed_tokens" << 9.0;
    QTest::newRow("dataset.sequences") << "dataset.sequences" << 2.25;
    QTest::newRow("dataset.micro_batches") << "dataset.micro_batches" << 0.75;
    QTest::newRow("dataset.steps_per_epoch") << "dataset.steps_per_epoch" << 1.125;
    QTest::newRow("dataset.id_bytes_per_token") << "dataset.id_bytes_per_token" << 2.0;
    QTest::newRow("dataset.ids_bytes") << "dataset.ids_bytes" << 18.0;
}

void TestDataset::handChecked()
{
    QFETCH(QString, id);
    QFETCH(double, value);
    const DatasetStats s = computeDataset(kText, kTokens, smallModel(), TrainingShape{4, 3, 8, 2});
    const tw::Figure* f = s.figures.find(id.toStdString());
    QVERIFY2(f, qPrintable(id));
    QCOMPARE(f->value, value);
    QVERIFY(!f->label.empty());
    QCOMPARE(s.tokens, 8ull);
    QCOMPARE(s.uniqueTokens, 6ull);
    QCOMPARE(s.text.words, 4ull);
}

void TestDataset::formulasShowTheNumbers()
{
    const DatasetStats s = computeDataset(kText, kTokens, smallModel(), TrainingShape{4, 3, 8, 2});
    auto formula = [&](const char* id) { return s.figures.find(id)->formula; };
    auto contains = [](const std::string& haystack, const char* needle) {
        return haystack.find(needle) != std::string::npos;
    };
    QVERIFY2(contains(formula("dataset.packed_tokens"), "8 + 1 = 9"), formula("dataset.packed_tokens").c_str());
    QVERIFY2(contains(formula("dataset.sequences"), "9 / 4 = 2.25"), formula("dataset.sequences").c_str());
    QVERIFY2(contains(formula("dataset.micro_batches"), "2.25 / 3 = 0.75"), formula("dataset.micro_batches").c_str());
    QVERIFY2(contains(formula("dataset.steps_per_epoch"), "9 / 8 = 1.1"), formula("dataset.steps_per_epoch").c_str());
    QVERIFY2(contains(formula("tokens.per_word"), "8 / 4 = 2"), formula("tokens.per_word").c_str());
    QVERIFY2(contains(formula("tokens.bytes_per_token"), "12 / 8 = 1.50"), formula("tokens.bytes_per_token").c_str());
    QVERIFY2(contains(formula("dataset.ids_bytes"), "9 × 2 = 18"), formula("dataset.ids_bytes").c_str());
    QCOMPARE(s.figures.find("dataset.sequences")->inputs,
             (std::vector<std::string>{"dataset.packed_tokens", "dataset.T"}));
}

void TestDataset::histogramAndRanks()
{
    const DatasetStats s = computeDataset(kText, kTokens, smallModel(), TrainingShape{4, 3, 8, 2});
    // Lengths in bytes: 2, 3, 1, 2, 1, 1, 1, 1 → five of 1 byte, two of 2, one of 3.
    QCOMPARE(s.lengthHistogram, (std::vector<std::uint64_t>{0, 5, 2, 1}));
    // Counts: 256 ×2, 10 ×2, 257 99 32 100 ×1. Ties by smaller id: 10 before 256; 32, 99, 100, 257.
    std::vector<std::pair<TokenId, std::uint64_t>> ranks;
    for (const RankedToken& r : s.rankFrequency)
        ranks.emplace_back(r.id, r.count);
    QCOMPARE(ranks, (std::vector<std::pair<TokenId, std::uint64_t>>{{10, 2}, {256, 2}, {32, 1}, {99, 1}, {100, 1}, {257, 1}}));
}

void TestDataset::graphClosedAndFormulas()
{
    const DatasetStats s = computeDataset(kText, kTokens, smallModel(), TrainingShape{4, 3, 8, 2});
    QVERIFY(s.figures.missingInputs().empty());
    const std::vector<std::string> required = {
        "text.bytes", "text.code_points", "text.words", "text.lines", "tokens.count", "tokens.unique",
        "tokens.per_word", "tokens.bytes_per_token", "tokenizer.vocab_size", "dataset.T", "dataset.B", "dataset.G",
        "dataset.documents", "dataset.packed_tokens", "dataset.sequences", "dataset.micro_batches",
        "dataset.steps_per_epoch", "dataset.id_bytes_per_token", "dataset.ids_bytes"};
    for (const auto& id : required)
        QVERIFY2(s.figures.find(id), id.c_str());
    for (const tw::Figure& f : s.figures.all()) {
        QVERIFY2(!f.formula.empty(), f.id.c_str());
        QVERIFY2(!f.label.empty(), f.id.c_str());
        QVERIFY2(std::isfinite(f.value), f.id.c_str());
    }
    // Steps per epoch traces back to the tokens and to G.
    std::vector<std::string> chain;
    for (const tw::Figure* f : s.figures.chain("dataset.steps_per_epoch"))
        chain.push_back(f->id);
    for (const char* id : {"dataset.packed_tokens", "tokens.count", "dataset.documents", "dataset.G"})
        QVERIFY2(std::find(chain.begin(), chain.end(), id) != chain.end(), id);
}

void TestDataset::poemFractions()
{
    // docs/model.md: the whole poem is 235,828 GPT-2 tokens, one document.
    //   235,828 / 1,024 = 230.30 sequences (230 × 1,024 = 235,520; 308 / 1,024 = 0.30)
    //   230.30 / 32 = 7.197 micro-batches; 235,828 / 524,288 = 0.4498 steps ≈ 0.45
    //   ids: 235,828 × 2 B = 471,656 B.
    // The ids do not matter for these figures: 235,828 spans of one id stand in for the encoding.
    const std::vector<TokenSpan> tokens(235828, TokenSpan{198, 0, 1});
    const DatasetStats s = computeDataset("x", tokens, smallModel(), TrainingShape{});
    QCOMPARE(s.figures.valueOf("dataset.packed_tokens"), 235828.0);
    QCOMPARE(s.figures.valueOf("dataset.sequences"), 235828.0 / 1024.0);
    QVERIFY(std::abs(s.figures.valueOf("dataset.sequences") - 230.30) < 0.005);
    QVERIFY(std::abs(s.figures.valueOf("dataset.micro_batches") - 7.197) < 0.0005);
    QVERIFY(std::abs(s.figures.valueOf("dataset.steps_per_epoch") - 0.4498) < 0.00005);
    QCOMPARE(s.figures.valueOf("dataset.ids_bytes"), 471656.0);
    QVERIFY2(s.figures.find("dataset.sequences")->formula.find("235,828 / 1,024 = 230.30") != std::string::npos,
             s.figures.find("dataset.sequences")->formula.c_str());
    QVERIFY2(s.figures.find("dataset.steps_per_epoch")->formula.find("235,828 / 524,288 = 0.45") != std::string::npos,
             s.figures.find("dataset.steps_per_epoch")->formula.c_str());
}

void TestDataset::excerptWithGpt2()
{
    // The whole poem with GPT-2 (235,828 tokens, 230.30 sequences, 0.45 steps) is checked by
    // tests/bench/check_corpus; here the Italian Canto I excerpt that ships in resources/text.
    // Not a skip: like tst_gpt2exact, a build without GPT-2 cannot claim these figures.
    if (!gpt2Embedded())
        QFAIL(("GPT-2 is not embedded in this build: " + gpt2HowToGet()).c_str());
    const std::string text = readExcerptIt();
    if (text.empty())
        QFAIL("cannot read resources/text/inferno-canto1-it.txt under " TOKENWIRE_SOURCE_DIR);
    auto model = gpt2();
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
    Encoder encoder(model.value());
    auto spans = encoder.encodeWithSpans(text);
    QVERIFY(spans.ok());
    // The spans tile the text.
    std::size_t at = 0;
    for (const TokenSpan& t : spans.value()) {
        QCOMPARE(std::size_t{t.begin}, at);
        QVERIFY(t.end > t.begin);
        at = t.end;
    }
    QCOMPARE(at, text.size());
    const DatasetStats s = computeDataset(text, spans.value(), model.value(), TrainingShape{});
    // 699 bytes, 658 code points, 23 lines, 127 words: worked out in tst_utf8's excerpts_data.
    // 298 tokens: tests/data/gpt2_cases.json, case inferno_canto1_it (npm tiktoken, GPT-2).
    //   298 / 1,024 = 0.291 sequences; 0.291 / 32 = 0.00909 micro-batches; 298 / 524,288 steps.
    //   V = 50,257 ≤ 65,536 → 2 B per id: 298 × 2 = 596 B.
    QCOMPARE(s.figures.valueOf("text.bytes"), 699.0);
    QCOMPARE(s.figures.valueOf("text.code_points"), 658.0);
    QCOMPARE(s.figures.valueOf("text.lines"), 23.0);
    QCOMPARE(s.figures.valueOf("text.words"), 127.0);
    QCOMPARE(s.figures.valueOf("tokens.count"), 298.0);
    QCOMPARE(s.figures.valueOf("tokenizer.vocab_size"), 50257.0);
    QCOMPARE(s.figures.valueOf("dataset.id_bytes_per_token"), 2.0);
    QCOMPARE(s.figures.valueOf("dataset.packed_tokens"), 298.0);
    QCOMPARE(s.figures.valueOf("dataset.sequences"), 298.0 / 1024.0);
    QCOMPARE(s.figures.valueOf("dataset.micro_batches"), 298.0 / 1024.0 / 32.0);
    QCOMPARE(s.figures.valueOf("dataset.steps_per_epoch"), 298.0 / 524288.0);
    QCOMPARE(s.figures.valueOf("dataset.ids_bytes"), 596.0);
    // Histogram and rank table account for every token.
    std::uint64_t inHistogram = 0, inRanks = 0;
    for (auto c : s.lengthHistogram)
        inHistogram += c;
    for (const auto& r : s.rankFrequency)
        inRanks += r.count;
    QCOMPARE(inHistogram, 298ull);
    QCOMPARE(inRanks, 298ull);
    QCOMPARE(static_cast<std::uint64_t>(s.rankFrequency.size()), s.uniqueTokens);
}

void TestDataset::idBytesAboveUint16()
{
    // 65,536 merges (every byte pair) + 256 bytes + <|endoftext|> = 65,793 > 65,536 → uint32, 4 B.
    std::vector<Merge> merges;
    for (TokenId a = 0; a < 256; ++a)
        for (TokenId b = 0; b < 256; ++b)
            merges.push_back({a, b, static_cast<TokenId>(256 + merges.size()), 0});
    auto model = BpeModel::fromMerges(std::move(merges), true, "all byte pairs");
    QVERIFY(model.ok());
    QCOMPARE(model->vocabSize(), std::size_t{65793});
    const DatasetStats s = computeDataset(kText, kTokens, model.value(), TrainingShape{4, 3, 8, 2});
    QCOMPARE(s.figures.valueOf("dataset.id_bytes_per_token"), 4.0);
    QCOMPARE(s.figures.valueOf("dataset.ids_bytes"), 36.0); // 9 packed tokens × 4 B
}

void TestDataset::degenerateInputs()
{
    // No text, no tokens, T = B = G = 0: every figure is still present, finite, with a formula that
    // says why it is undefined.
    const DatasetStats s = computeDataset("", {}, smallModel(), TrainingShape{0, 0, 0, 1});
    QVERIFY(s.figures.missingInputs().empty());
    for (const tw::Figure& f : s.figures.all()) {
        QVERIFY2(std::isfinite(f.value), f.id.c_str());
        QVERIFY2(!f.formula.empty(), f.id.c_str());
    }
    QVERIFY(s.figures.find("dataset.sequences")->formula.find("undefined") != std::string::npos);
    QVERIFY(s.figures.find("tokens.per_word")->formula.find("undefined") != std::string::npos);
    QVERIFY(s.lengthHistogram.empty());
    QVERIFY(s.rankFrequency.empty());
}

QTEST_GUILESS_MAIN(TestDataset)
#include "tst_dataset.moc"
