// GPT-2 exactness: our ids equal tiktoken's on strings chosen to break tokenizers. The expected ids
// come from the npm package tiktoken (tests/reference/make-gpt2-cases.mjs → tests/data/gpt2_cases.json).

#include "text/bpe.h"
#include "text/gpt2.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <fstream>
#include <random>
#include <sstream>

using namespace tw::text;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(std::vector<tw::text::TokenId>)

class TestGpt2Exact : public QObject {
    Q_OBJECT

private:
    std::optional<BpeModel> m_model;

    // Reads gpt2_cases.json; fails the test when it is missing or malformed.
    static nlohmann::json loadCases()
    {
        std::ifstream in(TOKENWIRE_TEST_DATA "/gpt2_cases.json", std::ios::binary);
        if (!in)
            return {};
        std::stringstream s;
        s << in.rdbuf();
        return nlohmann::json::parse(s.str(), nullptr, false);
    }

private slots:
    void initTestCase()
    {
        // Not a skip: a build without GPT-2 cannot claim GPT-2 exactness.
        QVERIFY2(gpt2Embedded(), "GPT-2 is not embedded in this build: configure with "
                                 "-DTOKENWIRE_GPT2_DIR=<folder of encoder.json and vocab.bpe> (scripts/fetch-gpt2.sh)");
        auto model = gpt2();
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        m_model = model.value();
        QCOMPARE(m_model->vocabSize(), std::size_t(50257));
        QCOMPARE(m_model->endOfText(), std::optional<TokenId>(50256));
        QCOMPARE(m_model->merges().size(), std::size_t(50000));
    }

    void casesFileIsComplete()
    {
        const auto cases = loadCases();
        QVERIFY2(cases.is_object() && cases.contains("cases"), "tests/data/gpt2_cases.json missing or not JSON");
        QVERIFY(cases["cases"].size() >= 32); // ≥ 30 tricky strings + the two Inferno excerpts
    }

    void encode_data()
    {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::vector<TokenId>>("expected");
        const auto cases = loadCases();
        if (!cases.is_object() || !cases.contains("cases"))
            return; // casesFileIsComplete() fails loudly
        for (const auto& c : cases["cases"]) {
            const auto text = c["text"].get<std::string>();
            // The stored byte length guards against a text altered on its way through JSON.
            QCOMPARE(text.size(), c["n_bytes"].get<std::size_t>());
            QTest::newRow(c["name"].get<std::string>().c_str()) << text << c["ids"].get<std::vector<TokenId>>();
        }
    }

    void encode()
    {
        QFETCH(std::string, text);
        QFETCH(std::vector<TokenId>, expected);
        Encoder encoder(*m_model);
        const auto ids = encoder.encode(text);
        if (ids != expected) {
            std::size_t k = 0;
            while (k < ids.size() && k < expected.size() && ids[k] == expected[k])
                ++k;
            qWarning("first difference at token %zu of %zu (ours %d, tiktoken %d)", k, expected.size(),
                     k < ids.size() ? int(ids[k]) : -1, k < expected.size() ? int(expected[k]) : -1);
        }
        QCOMPARE(ids.size(), expected.size());
        QVERIFY(ids == expected);
        // A second pass hits the piece cache: same ids.
        QVERIFY(encoder.encode(text) == expected);
        QCOMPARE(encoder.count(text), expected.size()); // tokenize --count
        QCOMPARE(Encoder(*m_model).count(text), expected.size()); // with a cold cache too
        QCOMPARE(decode(*m_model, ids), text);
        // Spans: contiguous, and each covers exactly the bytes of its token.
        auto spans = encoder.encodeWithSpans(text);
        QVERIFY(spans.ok());
        QCOMPARE(spans.value().size(), expected.size());
        std::uint32_t at = 0;
        for (std::size_t k = 0; k < spans.value().size(); ++k) {
            const auto& s = spans.value()[k];
            QCOMPARE(s.id, expected[k]);
            QCOMPARE(s.begin, at);
            QCOMPARE(std::string_view(text).substr(s.begin, s.end - s.begin), m_model->bytesOf(s.id));
            at = s.end;
        }
        QCOMPARE(std::size_t(at), text.size());
    }

    // Known ids written by hand from GPT-2's encoder.json, independent of the cases file.
    void knownTokens()
    {
        QCOMPARE(m_model->displayForm(220), std::string("\xc4\xa0")); // "Ġ", the space
        QCOMPARE(m_model->bytesOf(220), std::string_view(" "));
        QCOMPARE(m_model->bytesOf(198), std::string_view("\n"));       // "Ċ"
        QCOMPARE(m_model->bytesOf(0), std::string_view("!"));          // the first printable byte
        QCOMPARE(m_model->bytesOf(50256), std::string_view("<|endoftext|>"));
        QCOMPARE(m_model->bytesOf(464), std::string_view("The"));
        Encoder encoder(*m_model);
        // "Hello world" is [15496, 995] in every GPT-2 tokenizer (tiktoken README).
        QVERIFY((encoder.encode("Hello world") == std::vector<TokenId>{15496, 995}));
    }

    // decode(encode(x)) == x for random byte strings, invalid UTF-8 and NUL bytes included.
    void roundTripRandomBytes()
    {
        Encoder encoder(*m_model);
        std::mt19937 rng(31337);
        const char* atoms[] = {"a", "e", " ", "\n", "'s", "è", "’", "👍", "\u00A0", "\u180E", "中", "1"};
        for (int t = 0; t < 5000; ++t) {
            std::string text;
            const int n = int(rng() % 24);
            for (int k = 0; k < n; ++k)
                text += (rng() % 3 == 0) ? std::string(1, char(rng() & 0xFF)) : std::string(atoms[rng() % 12]);
            QCOMPARE(decode(*m_model, encoder.encode(text)), text);
        }
    }

    void howToGetNamesTheScript()
    {
        const auto text = gpt2HowToGet();
        QVERIFY(text.find("./scripts/fetch-gpt2.sh") != std::string::npos);
        QVERIFY(text.find("rebuild") != std::string::npos);
        QVERIFY(text.find("trained") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestGpt2Exact)
#include "tst_gpt2exact.moc"
