// BpeModel and Encoder: the byte↔unicode table, merge semantics on tiny hand-built models (expected
// ids derived by hand in comments), round trips, spans, merge limits, tokenizer.json save/load,
// malformed files and cancellation.

#include "text/bpe.h"

#include "../support/bpesupport.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <random>
#include <set>
#include <stop_token>

using namespace tw::text;

Q_DECLARE_METATYPE(std::string)

namespace {

// encoder.json + vocab.bpe in GPT-2's format: the 256 byte tokens in encoder.py's order
// (printable bytes first), then `extra` tokens written in the byte↔unicode alphabet.
std::string gpt2Encoder(const std::vector<std::string>& extra)
{
    nlohmann::ordered_json j;
    int id = 0;
    std::vector<int> order;
    for (int b = 0; b < 256; ++b)
        if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE))
            order.push_back(b);
    for (int b = 0; b < 256; ++b)
        if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE)))
            order.push_back(b);
    for (int b : order)
        j[byteToUnicode(std::uint8_t(b))] = id++;
    for (const auto& t : extra)
        j[t] = id++;
    return j.dump();
}

// GPT-2's id of a single printable ASCII byte: its position among the printable bytes.
TokenId gpt2ByteId(char c) { return TokenId(c - '!'); }

using tw::test::randomMergeModel;

std::string randomBytes(std::mt19937& rng, std::size_t n)
{
    std::string s;
    for (std::size_t k = 0; k < n; ++k) {
        const auto r = rng() % 8;
        s += r < 5 ? char(' ' + rng() % 95) : r < 6 ? "é€👍"[rng() % 9] : char(rng() & 0xFF);
    }
    return s;
}

} // namespace

class TestBpeModel : public QObject {
    Q_OBJECT

private slots:
    // encoder.py bytes_to_unicode: the 68 non-printable bytes map to U+0100… in byte order:
    // 0x00–0x20 → U+0100–U+0120, 0x7F–0xA0 → U+0121–U+0142, 0xAD → U+0143.
    void byteTable()
    {
        QCOMPARE(byteToUnicode(' '), std::string("\u0120")); // Ġ
        QCOMPARE(byteToUnicode('\n'), std::string("\u010A")); // Ċ
        QCOMPARE(byteToUnicode(0), std::string("\u0100"));
        QCOMPARE(byteToUnicode(0x7F), std::string("\u0121"));
        QCOMPARE(byteToUnicode(0xAD), std::string("\u0143")); // Ń
        QCOMPARE(byteToUnicode('A'), std::string("A"));
        QCOMPARE(byteToUnicode(0xE9), std::string("\u00E9"));
        for (int b = 0; b < 256; ++b) {
            const auto back = unicodeToBytes(byteToUnicode(std::uint8_t(b)));
            QVERIFY(back && *back == std::string(1, char(b)));
        }
        QVERIFY(!unicodeToBytes("\u20AC")); // € is not in the alphabet
        QCOMPARE(unicodeToBytes("\u0120the").value(), std::string(" the"));
    }

    // Merge-rank semantics (fromMerges, tokenizer.json): merges (b,c)→256 then (a,b)→257.
    // "abc": pairs ab (rank 1) and bc (rank 0) → bc first → [a, 256]; (a,256) is no merge.
    // "abd": only ab (rank 1) → [257, d].
    void mergeRankSemantics()
    {
        auto model = BpeModel::fromMerges({{'b', 'c', 256, 5}, {'a', 'b', 257, 3}}, true, "tiny");
        QVERIFY(model.ok());
        QCOMPARE(model->vocabSize(), std::size_t(259));
        QCOMPARE(model->endOfText(), std::optional<TokenId>(258));
        QCOMPARE(model->bytesOf(257), std::string_view("ab"));
        Encoder enc(model.value());
        QVERIFY((enc.encode("abc") == std::vector<TokenId>{'a', 256}));
        QVERIFY((enc.encode("abd") == std::vector<TokenId>{257, 'd'}));
        // <|endoftext|> is plain text: pieces "<|", "endoftext", "|>" of byte tokens.
        const auto eot = enc.encode("<|endoftext|>");
        QCOMPARE(eot.size(), std::size_t(13));
        QVERIFY(std::find(eot.begin(), eot.end(), 258) == eot.end());
    }

    // tiktoken semantics (fromGpt2Files): tokens ab, bc, abc with merges "a b", "b c", "a bc".
    // "zabc": parts z a b c; lowest id pair ab → z ab c; "ab"+"c" is the token abc (a split the
    // merge list does not name, but tiktoken merges any concatenation that is a token) → [z, abc].
    // "abc" alone is a token, returned whole.
    void tiktokenSemantics()
    {
        const std::string enc = gpt2Encoder({"ab", "bc", "abc"}); // ids 256, 257, 258
        auto model = BpeModel::fromGpt2Files(enc, "#version: 0.2\na b\nb c\na bc\n", "fixture");
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        Encoder e(model.value());
        QVERIFY((e.encode("zabc") == std::vector<TokenId>{gpt2ByteId('z'), 258}));
        QVERIFY((e.encode("abc") == std::vector<TokenId>{258}));
        QVERIFY((e.encode("bcb") == std::vector<TokenId>{257, gpt2ByteId('b')}));
        // Merge limit k: only tokens up to id 256 + k − 1. k = 1: "ab" only.
        e.setMergeLimit(1);
        QVERIFY((e.encode("zabc") == std::vector<TokenId>{gpt2ByteId('z'), 256, gpt2ByteId('c')}));
        QVERIFY((e.encode("abc") == std::vector<TokenId>{256, gpt2ByteId('c')}));
        e.setMergeLimit(0);
        QVERIFY((e.encode("abc") == std::vector<TokenId>{gpt2ByteId('a'), gpt2ByteId('b'), gpt2ByteId('c')}));
        e.setMergeLimit(SIZE_MAX);
        QVERIFY((e.encode("abc") == std::vector<TokenId>{258}));
        QCOMPARE(model->displayForm(gpt2ByteId('a')), std::string("a"));
    }

    void roundTripRandomBytes()
    {
        const BpeModel model = randomMergeModel(2000, 7);
        Encoder enc(model);
        std::mt19937 rng(12345);
        for (int t = 0; t < 5000; ++t) {
            const std::string text = randomBytes(rng, rng() % 40);
            const auto ids = enc.encode(text);
            QCOMPARE(decode(model, ids), text);
        }
        // A long piece (the heap path) of random letters.
        std::string word;
        for (int k = 0; k < 20000; ++k)
            word += char('a' + rng() % 6);
        QCOMPARE(decode(model, enc.encode(word)), word);
    }

    // Long pieces go through the heap path: its result is derived by hand here.
    void longPieceHeapPath()
    {
        // Merges (a,a)→256, (256,256)→257: "aaaa…a" of 2^k letters becomes 2^(k-2) tokens 257.
        auto model = BpeModel::fromMerges({{'a', 'a', 256, 0}, {256, 256, 257, 0}}, false, "aa");
        Encoder enc(model.value());
        QVERIFY((enc.encode("aaaa") == std::vector<TokenId>{257}));
        QVERIFY((enc.encode("aaaaa") == std::vector<TokenId>{257, 'a'}));
        const auto ids = enc.encode(std::string(10000, 'a'));
        QCOMPARE(ids.size(), std::size_t(2500));
        QVERIFY(std::all_of(ids.begin(), ids.end(), [](TokenId id) { return id == 257; }));
        const auto odd = enc.encode(std::string(10002, 'a')); // 2500 × 257, then "aa" → 256
        QCOMPARE(odd.size(), std::size_t(2501));
        QCOMPARE(odd.back(), TokenId(256));
    }

    void spansCoverInput()
    {
        const BpeModel model = randomMergeModel(500, 3);
        Encoder enc(model);
        std::mt19937 rng(99);
        for (int t = 0; t < 500; ++t) {
            const std::string text = randomBytes(rng, rng() % 200);
            auto spans = enc.encodeWithSpans(text);
            QVERIFY(spans.ok());
            std::uint32_t at = 0;
            for (const auto& s : spans.value()) {
                QCOMPARE(s.begin, at);
                QCOMPARE(std::string_view(text).substr(s.begin, s.end - s.begin), model.bytesOf(s.id));
                at = s.end;
            }
            QCOMPARE(std::size_t(at), text.size());
        }
    }

    void mergeLimitZeroGivesBytes()
    {
        const BpeModel model = randomMergeModel(500, 5);
        Encoder enc(model);
        enc.setMergeLimit(0);
        const std::string text = "Nel mezzo del cammin di nostra vita \xFF\x00 è";
        const auto ids = enc.encode(text);
        QCOMPARE(ids.size(), text.size());
        for (std::size_t k = 0; k < text.size(); ++k)
            QCOMPARE(ids[k], TokenId(static_cast<unsigned char>(text[k])));
    }

    void huggingFaceRoundTrip()
    {
        const BpeModel model = randomMergeModel(1500, 11);
        const std::string json = model.toHuggingFaceJson();
        auto back = BpeModel::fromHuggingFaceJson(json, "saved.json");
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
        QCOMPARE(back->vocabSize(), model.vocabSize());
        QCOMPARE(back->endOfText(), model.endOfText());
        QVERIFY(back->merges() == model.merges());
        for (TokenId id = 0; id < model.vocabSize(); ++id)
            QCOMPARE(back->bytesOf(id), model.bytesOf(id));
        Encoder a(model), b(back.value());
        std::mt19937 rng(2);
        for (int t = 0; t < 1000; ++t) {
            const std::string text = randomBytes(rng, rng() % 60);
            QVERIFY(a.encode(text) == b.encode(text));
        }
        // The saved file is a Hugging Face tokenizer.json with the added token.
        const auto j = nlohmann::json::parse(json);
        QCOMPARE(j["model"]["type"].get<std::string>(), std::string("BPE"));
        QCOMPARE(j["pre_tokenizer"]["type"].get<std::string>(), std::string("ByteLevel"));
        QCOMPARE(j["added_tokens"][0]["content"].get<std::string>(), std::string("<|endoftext|>"));
        QCOMPARE(j["added_tokens"][0]["id"].get<TokenId>(), *model.endOfText());
    }

    // Merges written as "a b" strings (older files) and [a, b] pairs load alike.
    void huggingFaceMergeForms()
    {
        auto base = nlohmann::json::parse(BpeModel::fromMerges({{'a', 'b', 256, 0}, {' ', 256, 257, 0}}, true, "m")
                                              .value()
                                              .toHuggingFaceJson());
        base["model"]["merges"] = nlohmann::json::array({"a b", "\u0120 ab"});
        auto model = BpeModel::fromHuggingFaceJson(base.dump(), "strings.json");
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        Encoder enc(model.value());
        QVERIFY((enc.encode("ab ab") == std::vector<TokenId>{256, 257}));
    }

    void malformedFiles_data()
    {
        QTest::addColumn<int>("kind"); // 0 tokenizer.json, 1 encoder.json, 2 vocab.bpe
        QTest::addColumn<std::string>("content");
        QTest::addColumn<std::string>("messagePart");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<std::string>("jsonPath");
        using namespace std::string_literals;
        // Truncated after `0` on line 4 (20 characters): parsing stops at the end, column 21.
        QTest::newRow("truncated json") << 0 << "{\n  \"model\": {\n    \"type\": \"BPE\",\n    \"vocab\": {\"a\": 0"s
                                        << "ends too early"s << 4 << 21 << ""s;
        // A stray `]` at line 2, column 13 (two spaces, then `{"vocab": ` is 10 characters).
        QTest::newRow("syntax error") << 0 << "{\"model\":\n  {\"vocab\": ]}}"s << "invalid JSON"s << 2 << 13 << ""s;
        QTest::newRow("empty file") << 0 << ""s << "empty"s << 1 << 1 << ""s;
        QTest::newRow("not an object") << 0 << "[1, 2]"s << "must be an object"s << 0 << 0 << "$"s;
        QTest::newRow("vocab wrong type")
            << 0 << R"({"model": {"type": "BPE", "vocab": [], "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}})"s
            << "vocab"s << 0 << 0 << "model.vocab"s;
        QTest::newRow("id wrong type")
            << 0 << R"({"model": {"type": "BPE", "vocab": {"a": "0"}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}})"s
            << "integer"s << 0 << 0 << R"(model.vocab["a"])"s;
        QTest::newRow("not byte level")
            << 0 << R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "Whitespace"}})"s
            << "ByteLevel"s << 0 << 0 << "pre_tokenizer"s;
        QTest::newRow("wordpiece") << 0 << R"({"model": {"type": "WordPiece"}})"s << "BPE"s << 0 << 0 << "model.type"s;
        QTest::newRow("encoder truncated") << 1 << "{\"a\": 0,\n\"b\": 1"s << "ends too early"s << 2 << 7 << ""s;
        QTest::newRow("encoder wrong type") << 1 << R"({"a": 0, "b": "x"})"s << "integer"s << 0 << 0 << R"($["b"])"s;
        QTest::newRow("encoder not object") << 1 << "42"s << "must be an object"s << 0 << 0 << "$"s;
        // vocab.bpe naming a token encoder.json lacks ("zq"), on line 3, right-hand side at column 3.
        QTest::newRow("merge unknown token") << 2 << "#version: 0.2\na b\nb zq\n"s << "\"zq\""s << 3 << 3 << ""s;
        QTest::newRow("merge not a pair") << 2 << "#version: 0.2\na b c\n"s << "two tokens"s << 2 << 1 << ""s;
        QTest::newRow("merge result unknown") << 2 << "#version: 0.2\nb a\n"s << "not a token"s << 2 << 1 << ""s;
    }

    void malformedFiles()
    {
        QFETCH(int, kind);
        QFETCH(std::string, content);
        QFETCH(std::string, messagePart);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(std::string, jsonPath);
        const tw::Result<BpeModel> r = kind == 0 ? BpeModel::fromHuggingFaceJson(content, "tok.json")
            : kind == 1                          ? BpeModel::fromGpt2Files(content, "#version: 0.2\n", "g")
                                                 : BpeModel::fromGpt2Files(gpt2Encoder({"ab"}), content, "g");
        QVERIFY(!r.ok());
        const tw::Error& e = r.error();
        const std::string all = e.toString();
        QVERIFY2(e.message.find(messagePart) != std::string::npos, all.c_str());
        QCOMPARE(e.where.line, line);
        QCOMPARE(e.where.column, column);
        QCOMPARE(e.where.jsonPath, jsonPath);
        QVERIFY2(!e.where.file.empty(), all.c_str());
        if (kind == 2)
            QVERIFY2(e.where.file.find("vocab.bpe") != std::string::npos, all.c_str());
    }

    void mergeNamingUnknownTokenInHuggingFace()
    {
        auto j = nlohmann::json::parse(BpeModel::fromMerges({{'a', 'b', 256, 0}}, true, "m").value().toHuggingFaceJson());
        j["model"]["merges"].push_back(nlohmann::json::array({"ab", "zzz"}));
        auto r = BpeModel::fromHuggingFaceJson(j.dump(), "bad.json");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().where.jsonPath, std::string("model.merges[1]"));
        QVERIFY(r.error().message.find("\"zzz\"") != std::string::npos);
        QCOMPARE(r.error().where.file, std::string("bad.json"));
    }

    void fromMergesRejectsBadIds()
    {
        QVERIFY(!BpeModel::fromMerges({{'a', 'b', 300, 0}}, true, "m").ok());
        QVERIFY(!BpeModel::fromMerges({{'a', 999, 256, 0}}, true, "m").ok());
    }

    void cancel()
    {
        const BpeModel model = randomMergeModel(200, 1);
        Encoder enc(model);
        std::stop_source stop;
        stop.request_stop();
        auto r = enc.encodeWithSpans("some text", tw::Progress{{}, stop.get_token()});
        QVERIFY(!r.ok());
        QCOMPARE(r.error().message, std::string("cancelled"));

        // Stopping from the progress callback, in the middle of a 3 MB text.
        std::stop_source mid;
        std::vector<double> seen;
        tw::Progress progress{[&](double f) {
                                  seen.push_back(f);
                                  if (f > 0)
                                      mid.request_stop();
                              },
                              mid.get_token()};
        std::string text;
        for (int k = 0; k < (1 << 18); ++k)
            text += "lorem ipsum ";
        auto r2 = enc.encodeWithSpans(text, progress);
        QVERIFY(!r2.ok());
        QCOMPARE(r2.error().message, std::string("cancelled"));
        QVERIFY(seen.size() >= 2);
        QVERIFY(seen.back() < 1.0);
    }

    void progressReaches1()
    {
        Encoder enc(randomMergeModel(200, 1));
        std::string text;
        for (int k = 0; k < (1 << 18); ++k)
            text += "lorem ipsum ";
        std::vector<double> seen;
        auto r = enc.encodeWithSpans(text, tw::Progress{[&](double f) { seen.push_back(f); }, {}});
        QVERIFY(r.ok());
        QVERIFY(seen.size() >= 3);
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        QCOMPARE(seen.back(), 1.0);
    }

    void refusesHugeText()
    {
        Encoder enc(randomMergeModel(10, 1));
        static const char byte = 'x';
        // Only the size is looked at before refusing: the view is never read.
        const std::string_view huge(&byte, kMaxTextBytes + 1);
        auto r = enc.encodeWithSpans(huge);
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.find("at most") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestBpeModel)
#include "tst_bpemodel.moc"
