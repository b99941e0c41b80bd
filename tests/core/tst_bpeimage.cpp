// The prebuilt tables (issue 42). GPT-2's image, built at build time by tools/bpeimage from
// encoder.json and vocab.bpe, holds exactly the tables parsed from those files (every token, rank,
// merge, pair and index slot); gpt2() views it in place; a damaged image is refused and the text
// parsed instead, with a note; any model goes through toImage → fromImage with the same tables and
// the same encoding. The refusals with their exact messages are rows of tst_badinput (tables_data).

#include "text/bpe.h"
#include "text/bpe_p.h"
#include "text/bpeimage.h"
#include "text/gpt2.h"
#include "text/samples.h"

#include "../support/bpesupport.h"

#include <QtTest>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

using namespace tw::text;

namespace {

// Bytes copied to memory aligned like the embedded image (a model viewing them must not outlive this).
class ImageCopy {
public:
    explicit ImageCopy(std::span<const unsigned char> bytes) : m_words((bytes.size() + 7) / 8), m_size(bytes.size())
    {
        std::memcpy(m_words.data(), bytes.data(), bytes.size());
    }
    std::span<unsigned char> bytes() { return {reinterpret_cast<unsigned char*>(m_words.data()), m_size}; }

private:
    std::vector<std::uint64_t> m_words;
    std::size_t m_size;
};

std::span<const unsigned char> asBytes(const std::string& s)
{
    return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

template <class T>
bool sameBytes(std::span<const T> a, std::span<const T> b)
{
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

// True when p points into bytes: the model reads that table in place.
template <class T>
bool inside(const T* p, std::span<const unsigned char> bytes)
{
    const auto* q = reinterpret_cast<const unsigned char*>(p);
    return q >= bytes.data() && q < bytes.data() + bytes.size();
}

// Every table of a equals b's: the bytes of each token, every rank and merge, the byte tokens, the
// pair map (slots, and the lookup of every merge), the token index, its filter and the byte pairs.
void compareTables(const BpeModel& a, const BpeModel& b)
{
    const BpeModel::Data& x = a.data();
    const BpeModel::Data& y = b.data();
    QCOMPARE(x.vocabSize(), y.vocabSize());
    QCOMPARE(x.endOfText, y.endOfText);
    QCOMPARE(x.tiktoken, y.tiktoken);
    for (TokenId id = 0; id < x.vocabSize(); ++id) {
        if (x.token(id) != y.token(id))
            QFAIL(qPrintable(QStringLiteral("token %1 differs").arg(id)));
        if (x.rank[id] != y.rank[id])
            QFAIL(qPrintable(QStringLiteral("the rank of token %1 differs: %2, %3").arg(id).arg(x.rank[id]).arg(y.rank[id])));
    }
    QCOMPARE(x.merges.size(), y.merges.size());
    for (std::size_t k = 0; k < x.merges.size(); ++k) {
        if (!(x.merges[k] == y.merges[k]))
            QFAIL(qPrintable(QStringLiteral("merge %1 differs").arg(k)));
        const PairMap::Found fx = x.pairs.find(x.merges[k].left, x.merges[k].right);
        const PairMap::Found fy = y.pairs.find(y.merges[k].left, y.merges[k].right);
        if (fx.rank != fy.rank || fx.id != fy.id)
            QFAIL(qPrintable(QStringLiteral("the pair of merge %1 differs").arg(k)));
    }
    QVERIFY(x.byteToken == y.byteToken);
    QCOMPARE(x.pairs.compact(), y.pairs.compact());
    QVERIFY(sameBytes(x.pairs.compactSlots(), y.pairs.compactSlots()));
    QVERIFY(sameBytes(x.pairs.wideSlots(), y.pairs.wideSlots()));
    QVERIFY(sameBytes(x.tokenStart.span(), y.tokenStart.span()));
    QVERIFY(sameBytes(x.tokenSlots.span(), y.tokenSlots.span()));
    QCOMPARE(x.tokenMask, y.tokenMask);
    QVERIFY(sameBytes(x.tokenFilter.span(), y.tokenFilter.span()));
    QVERIFY(sameBytes(x.bytePairs.span(), y.bytePairs.span()));
}

// The ids and spans of text under both models are the same.
void compareEncoding(const BpeModel& a, const BpeModel& b, const std::string& text)
{
    Encoder ea(a), eb(b);
    auto sa = ea.encodeWithSpans(text);
    auto sb = eb.encodeWithSpans(text);
    QVERIFY(sa.ok() && sb.ok());
    QVERIFY(sa.value() == sb.value());
    QVERIFY(ea.encode(text) == eb.encode(text));
}

std::string readData(const char* name)
{
    std::ifstream in(std::string(TOKENWIRE_TEST_DATA) + "/" + name, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// Texts that reach every path of the encoder: words, numbers, spaces, long pieces, invalid UTF-8.
std::vector<std::string> sampleTexts(unsigned seed)
{
    std::vector<std::string> texts = {
        "Nel mezzo del cammin di nostra vita\nmi ritrovai per una selva oscura,\nché la diritta via era smarrita.",
        "Hello world, it's 2024: 3.14159 and    spaces\t\ttabs\r\n\n", std::string(300, 'a') + std::string(100, ' ') + "z",
        "bad \xff\xfe utf-8 \xc0\xaf and \xf0\x9f\x98\x80 emoji <|endoftext|> ok"};
    std::mt19937 rng(seed);
    const char* atoms[] = {"a", "e", " ", "\n", "'s", "è", "’", "👍", "\u00A0", "中", "1", "the", "ll"};
    for (int t = 0; t < 300; ++t) {
        std::string s;
        const int n = int(rng() % 40);
        for (int k = 0; k < n; ++k)
            s += (rng() % 4 == 0) ? std::string(1, char(rng() & 0xFF)) : std::string(atoms[rng() % 13]);
        texts.push_back(s);
    }
    return texts;
}

constexpr std::string_view kShaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr std::string_view kShaB = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

} // namespace

class TestBpeImage : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // Not a skip: a build without GPT-2 has no GPT-2 tables to check.
        QVERIFY2(gpt2Embedded(), "GPT-2 is not embedded in this build: configure with "
                                 "-DTOKENWIRE_GPT2_DIR=<folder of encoder.json and vocab.bpe> (scripts/fetch-gpt2.sh)");
    }

    // gpt2() reads the embedded tables in place: no note, and its tables' memory is the image's.
    void gpt2ViewsTheEmbeddedTables()
    {
        auto model = gpt2();
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        QVERIFY2(gpt2Note().empty(), gpt2Note().c_str());
        const BpeModel::Data& d = model->data();
        const std::span<const unsigned char> image = gpt2Image();
        QVERIFY(image.size() > sizeof(BpeImageHeader));
        QCOMPARE(reinterpret_cast<std::uintptr_t>(image.data()) % 64, std::uintptr_t{0});
        QVERIFY(inside(d.tokenBytes.data(), image));
        QVERIFY(inside(d.tokenStart.data(), image));
        QVERIFY(inside(d.rank.data(), image));
        QVERIFY(inside(d.pairs.compactSlots().data(), image)); // GPT-2's ids and ranks fit compact slots
        QVERIFY(inside(d.tokenSlots.data(), image));
        QVERIFY(inside(d.tokenFilter.data(), image));
        QVERIFY(inside(d.bytePairs.data(), image));
        // The header records the sha256 cmake/EmbedGpt2.cmake checked encoder.json and vocab.bpe against.
        BpeImageHeader h;
        std::memcpy(&h, image.data(), sizeof h);
        QCOMPARE(h.version, kBpeImageVersion);
        QCOMPARE(h.sourceCount, 2u);
        QCOMPARE(h.vocabSize, 50257u);
        QCOMPARE(h.mergeCount, 50000u);
    }

    // The embedded tables equal those parsed from the embedded text files, every one of them.
    void gpt2TablesEqualTheParsedFiles()
    {
        auto fromText = gpt2FromText();
        QVERIFY2(fromText.ok(), fromText.ok() ? "" : fromText.error().toString().c_str());
        auto fromImage = BpeModel::fromImage(gpt2Image(), gpt2SourceSha256(), "GPT-2");
        QVERIFY2(fromImage.ok(), fromImage.ok() ? "" : fromImage.error().toString().c_str());
        QVERIFY(inside(fromText->data().tokenBytes.data(), gpt2Image()) == false);
        compareTables(fromImage.value(), fromText.value());
        // And the image the parsed model writes now is the embedded one, byte for byte.
        auto again = fromText->toImage(gpt2SourceSha256());
        QVERIFY(again.ok());
        QVERIFY(sameBytes(asBytes(again.value()), gpt2Image()));
    }

    // Anchors written by hand from GPT-2's files, independent of both loaders: vocab.bpe's first merge
    // is "Ġ t" (the space, id 220, and "t", id 't' − '!' = 83), making "Ġt", id 256, rank 0; its last,
    // merge 49,999, makes id 50,255; <|endoftext|> (50,256) and the single bytes have no rank.
    void gpt2RanksAndMergesByHand()
    {
        auto model = gpt2();
        QVERIFY(model.ok());
        const BpeModel::Data& d = model->data();
        QVERIFY((model->merges()[0] == Merge{220, 83, 256, 0}));
        QCOMPARE(model->merges()[49999].id, TokenId(50255));
        QCOMPARE(d.rank[256], 0u);
        QCOMPARE(d.rank[50255], 49999u);
        QCOMPARE(d.rank[50256], kNoRank);
        QCOMPARE(d.rank[220], kNoRank);
        const PairMap::Found f = d.pairs.find(220, 83);
        QCOMPARE(f.rank, 0u);
        QCOMPARE(f.id, TokenId(256));
        QCOMPARE(d.pairs.find(83, 220).rank, kNoRank); // "tĠ" is not a token
        QCOMPARE(d.findToken(std::string_view(" t")), std::optional<TokenId>(256));
    }

    // A damaged image is refused, never used: gpt2's loader parses the text instead and says why.
    void damagedGpt2TablesFallBackToTheText_data()
    {
        QTest::addColumn<int>("damage");
        QTest::addColumn<QString>("why");
        QTest::newRow("future version") << 0 << QStringLiteral("header.version");
        QTest::newRow("a byte of the tables flipped") << 1 << QStringLiteral("the tables are damaged");
        QTest::newRow("one byte short") << 2 << QStringLiteral("header.imageBytes");
        QTest::newRow("built from another vocab.bpe") << 3 << QStringLiteral("the image was built from another file");
    }
    void damagedGpt2TablesFallBackToTheText()
    {
        QFETCH(int, damage);
        QFETCH(QString, why);
        ImageCopy copy(gpt2Image());
        std::span<unsigned char> bytes = copy.bytes();
        BpeImageHeader h;
        std::memcpy(&h, bytes.data(), sizeof h);
        if (damage == 0) {
            h.version += 1;
            std::memcpy(bytes.data(), &h, sizeof h);
            sealBpeImage(bytes);
        } else if (damage == 1) {
            bytes[bytes.size() / 2] ^= 0x10;
        } else if (damage == 2) {
            bytes = bytes.first(bytes.size() - 1);
        } else {
            h.sourceSha256[1][31] ^= 1;
            std::memcpy(bytes.data(), &h, sizeof h);
            sealBpeImage(bytes);
        }
        const Gpt2Load load = loadGpt2(bytes);
        QVERIFY(load.note.find("GPT-2's prebuilt tables were refused") != std::string::npos);
        QVERIFY2(load.note.find(why.toStdString()) != std::string::npos, load.note.c_str());
        QVERIFY(load.note.find("encoder.json and vocab.bpe were parsed instead") != std::string::npos);
        QVERIFY2(load.model.ok(), load.model.ok() ? "" : load.model.error().toString().c_str());
        QVERIFY(!inside(load.model->data().tokenBytes.data(), bytes)); // parsed: nothing read from the image
        QCOMPARE(load.model->vocabSize(), std::size_t(50257));
        Encoder encoder(load.model.value());
        QVERIFY((encoder.encode("Hello world") == std::vector<TokenId>{15496, 995})); // tiktoken's README
    }

    // The encoder gives the same ids and spans from the embedded tables as from the parsed files.
    void gpt2EncodesLikeTheParsedFiles()
    {
        auto fromText = gpt2FromText();
        auto fromImage = gpt2();
        QVERIFY(fromText.ok() && fromImage.ok());
        std::vector<std::string> texts = sampleTexts(42);
        for (const Sample& sample : samples()) // the Canto I excerpts
            texts.emplace_back(sample.text);
        for (const std::string& text : texts)
            compareEncoding(fromImage.value(), fromText.value(), text);
    }

    // Any model through toImage → fromImage: the same tables and encoding, read in place.
    void roundTrip_data()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("trained-like, <|endoftext|>") << 0;
        QTest::newRow("trained-like, no <|endoftext|>") << 1;
        QTest::newRow("wide pair slots") << 2;
        QTest::newRow("tokenizer.json") << 3;
        QTest::newRow("GPT-2 files, tiktoken semantics") << 4;
    }
    void roundTrip()
    {
        QFETCH(int, kind);
        std::optional<BpeModel> built;
        if (kind == 0) {
            built = tw::test::randomMergeModel(300, 1, true);
        } else if (kind == 1) {
            built = tw::test::randomMergeModel(40, 2, false);
        } else if (kind == 2) {
            built = tw::test::randomMergeModel(65300, 3, true); // 65,557 ids do not fit 16 bits: 16-byte pair slots
        } else if (kind == 3) {
            auto hf = BpeModel::fromHuggingFaceJson(tw::test::randomMergeModel(120, 4, false).toHuggingFaceJson(), "tokenizer.json");
            QVERIFY(hf.ok());
            built = hf.value();
        } else {
            auto files = BpeModel::fromGpt2Files(readData("badinput/gpt2-good.encoder.json"),
                                                 readData("badinput/gpt2-good.vocab.bpe"), "tiny");
            QVERIFY(files.ok());
            built = files.value();
        }
        const BpeModel& model = *built;
        const std::string_view sources[] = {kShaA, kShaB};
        auto image = model.toImage(sources);
        QVERIFY2(image.ok(), image.ok() ? "" : image.error().toString().c_str());
        auto twice = model.toImage(sources);
        QVERIFY(twice.ok() && twice.value() == image.value()); // deterministic: padding and all
        ImageCopy copy(asBytes(image.value()));
        auto back = BpeModel::fromImage(copy.bytes(), sources, "round trip");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QCOMPARE(back->name(), std::string("round trip"));
        QVERIFY(inside(back->data().tokenBytes.data(), copy.bytes()));
        QVERIFY(inside(back->data().tokenSlots.data(), copy.bytes()));
        QCOMPARE(back->data().pairs.compact(), model.vocabSize() < 0xFFFF);
        compareTables(back.value(), model);
        for (const std::string& text : sampleTexts(7))
            compareEncoding(back.value(), model, text);
        if (model.vocabSize() < 1000) // ordered_json's vocabulary is quadratic: not for 65,557 ids
            QVERIFY(back->toHuggingFaceJson() == model.toHuggingFaceJson());
    }

    // What toImage refuses to write: more sources than the header holds, a sha256 that is not one.
    void toImageRefusesBadSources()
    {
        const BpeModel model = tw::test::randomMergeModel(10, 5, true);
        const std::string_view five[] = {kShaA, kShaA, kShaA, kShaA, kShaA};
        auto tooMany = model.toImage(five);
        QVERIFY(!tooMany.ok());
        QCOMPARE(tooMany.error().message, std::string("an image records at most 4 source files, got 5"));
        const std::string_view upper[] = {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"};
        auto notHex = model.toImage(upper);
        QVERIFY(!notHex.ok());
        QCOMPARE(notHex.error().message, "source 1: \"" + std::string(upper[0]) + "\" is not a sha256 in 64 lowercase hex digits");
    }
};

QTEST_GUILESS_MAIN(TestBpeImage)
#include "tst_bpeimage.moc"
