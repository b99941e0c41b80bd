// The BPE trainer: hand-worked merge sequences, V−257 merges, determinism, agreement with a naive
// reference trainer (recount every pair after every merge), replay equals final encoding, errors,
// progress and cancel. Texts: the Canto I excerpts in resources/text and a synthetic corpus made
// here; the poem itself is tests/bench/check_corpus.

#include "text/bpetrainer.h"
#include "text/pretokenizer.h"
#include "text/utf8.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stop_token>
#include <string>
#include <vector>

using namespace tw::text;

namespace {

// The Canto I excerpts that ship with the program (resources/text); empty when unreadable.
std::string readExcerpt(const char* name)
{
    QFile file(QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/text/") + QLatin1String(name));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll().toStdString();
}

// A deterministic synthetic corpus of about 300 KB of Italian-looking verse, made here so the trainer
// tests have the poem's scale (thousands of distinct pairs) without reading the poem (the poem's own
// figures are tests/bench/check_corpus). Only raw std::mt19937 outputs are used — the engine's
// sequence is fixed by the standard, the distributions are not — so every platform builds the same
// bytes. Words come from a lexicon of 4,000 pseudo-words of 1–4 syllables drawn with Zipf weights
// 1/rank (as natural text), one word in eight is new; elisions with ’ (3 bytes), accented vowels
// (2 bytes), punctuation, capitals, tercets separated by blank lines.
const std::string& syntheticCorpus()
{
    static const std::string corpus = [] {
        static const char* const syllables[] = {
            "a", "e", "i", "o", "u", "la", "le", "li", "lo", "lu", "ma", "me", "mi", "mo", "mu", "na", "ne",
            "ni", "no", "nu", "ra", "re", "ri", "ro", "ru", "ta", "te", "ti", "to", "tu", "sa", "se", "si",
            "so", "su", "ca", "che", "chi", "co", "cu", "da", "de", "di", "do", "du", "pa", "pe", "pi", "po",
            "pu", "va", "ve", "vi", "vo", "vu", "ga", "ghe", "ghi", "go", "gu", "ba", "be", "bi", "bo", "fa",
            "fe", "fi", "fo", "za", "ze", "zi", "zo", "cia", "cie", "cio", "gia", "gio", "gli", "gna", "gno",
            "sca", "sco", "sta", "ste", "sti", "sto", "tra", "tre", "tri", "pra", "pre", "pri", "pro", "per",
            "con", "mon", "ten", "ver", "sel", "cor", "men", "par", "ol", "in", "an", "el", "al", "ar",
            "er", "or", "nel", "del", "ser", "mor", "tà", "tù", "rò", "più", "là", "ché", "cò", "gè"};
        constexpr std::uint32_t nSyllables = sizeof(syllables) / sizeof(*syllables);
        std::mt19937 rng(20240917u);
        auto below = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
        auto makeWord = [&] {
            std::string w;
            for (std::uint32_t k = 0, n = 1 + below(4); k < n; ++k)
                w += syllables[below(nSyllables)];
            return w;
        };
        constexpr std::uint32_t lexiconSize = 4000;
        std::vector<std::string> lexicon;
        std::vector<std::uint64_t> cumulative; // Zipf: weight of rank r is ⌊10⁶ / (r + 1)⌋
        std::uint64_t total = 0;
        for (std::uint32_t r = 0; r < lexiconSize; ++r) {
            lexicon.push_back(makeWord());
            total += 1000000 / (r + 1);
            cumulative.push_back(total);
        }
        auto pick = [&]() -> std::string {
            if (below(8) == 0)
                return makeWord();
            const std::uint64_t x = ((static_cast<std::uint64_t>(rng()) << 32) | rng()) % total;
            return lexicon[std::upper_bound(cumulative.begin(), cumulative.end(), x) - cumulative.begin()];
        };
        static const char* const ends[] = {",", ",", ";", ".", ":", "!", "?", ""};
        static const char* const elided[] = {"l", "d", "ch", "m", "s", "v", "un", "n"};
        std::string out;
        out.reserve(310000);
        for (std::uint32_t line = 0; out.size() < 300000; ++line) {
            for (std::uint32_t k = 0, n = 5 + below(5); k < n; ++k) {
                if (k > 0)
                    out += ' ';
                if (below(10) == 0)
                    out += std::string(elided[below(8)]) + "\xE2\x80\x99"; // l’, d’, ch’ …
                std::string word = pick();
                if (k == 0 && line % 3 == 0)
                    word[0] = static_cast<char>(word[0] - 'a' + 'A'); // every syllable starts in a–z
                out += word;
            }
            out += ends[below(8)];
            out += line % 3 == 2 ? "\n\n" : "\n";
        }
        return out;
    }();
    return corpus;
}

using Triple = std::vector<std::uint64_t>; // left, right, id, frequency

std::vector<Triple> asList(const std::vector<Merge>& merges)
{
    std::vector<Triple> out;
    for (const Merge& m : merges)
        out.push_back({m.left, m.right, m.id, m.frequency});
    return out;
}

// The reference the fast trainer must agree with: the textbook loop (Sennrich et al. 2016,
// Algorithm 1; minbpe's train()) that recounts every pair after every merge. Same pre-tokenizer,
// same tie-break (highest count, then smallest (left, right)), same left-to-right merging.
// Returns the merges and, for each piece of the text in order, its final token ids.
struct Reference {
    std::vector<Merge> merges;
    std::vector<TokenId> finalIds;          // the text's segmentation after all merges
    std::vector<std::vector<TokenId>> after; // after[k]: segmentation after the first k merges
};

Reference naiveTrain(const std::string& text, std::size_t vocab, const std::vector<std::size_t>& snapshots)
{
    std::vector<std::string> pieces;
    {
        PreTokenizer::Cursor cursor(PreTokenizer::gpt2(), text);
        Piece p;
        while (cursor.next(p))
            pieces.push_back(text.substr(p.begin, p.end - p.begin));
    }
    std::map<std::string, std::vector<TokenId>> words;
    for (const auto& p : pieces) {
        std::vector<TokenId> ids;
        for (unsigned char c : p)
            ids.push_back(c);
        words.emplace(p, ids);
    }
    std::map<std::string, std::uint64_t> freq;
    for (const auto& p : pieces)
        ++freq[p];

    auto segmentation = [&] {
        std::vector<TokenId> out;
        for (const auto& p : pieces)
            out.insert(out.end(), words[p].begin(), words[p].end());
        return out;
    };

    Reference ref;
    for (std::size_t k = 0; k + 257 < vocab; ++k) {
        if (std::find(snapshots.begin(), snapshots.end(), k) != snapshots.end())
            ref.after.push_back(segmentation());
        std::map<std::pair<TokenId, TokenId>, std::uint64_t> counts;
        for (const auto& [piece, ids] : words)
            for (std::size_t i = 0; i + 1 < ids.size(); ++i)
                counts[{ids[i], ids[i + 1]}] += freq[piece];
        if (counts.empty())
            break;
        // std::map iterates pairs in increasing (left, right): keep the first with the top count.
        auto best = counts.begin();
        for (auto it = counts.begin(); it != counts.end(); ++it)
            if (it->second > best->second)
                best = it;
        const auto z = static_cast<TokenId>(256 + k);
        ref.merges.push_back({best->first.first, best->first.second, z, best->second});
        for (auto& [piece, ids] : words) {
            std::vector<TokenId> merged;
            for (std::size_t i = 0; i < ids.size();) {
                if (i + 1 < ids.size() && ids[i] == best->first.first && ids[i + 1] == best->first.second) {
                    merged.push_back(z);
                    i += 2;
                } else {
                    merged.push_back(ids[i++]);
                }
            }
            ids = std::move(merged);
        }
    }
    ref.finalIds = segmentation();
    return ref;
}

} // namespace

class TestBpeTrainer : public QObject {
    Q_OBJECT
private slots:
    void handWorked_data();
    void handWorked();
    void vocabularyLayout();
    void syntheticCorpus();
    void fullVocabulary();
    void deterministic();
    void matchesNaiveReference_data();
    void matchesNaiveReference();
    void replayEqualsFinalEncoding_data();
    void replayEqualsFinalEncoding();
    void vocabOutOfRange_data();
    void vocabOutOfRange();
    void smallestVocab();
    void progressAndCancel();
};

void TestBpeTrainer::handWorked_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("vocab");
    QTest::addColumn<std::vector<Triple>>("expected"); // {left, right, id, frequency}
    QTest::addColumn<bool>("exhausted");

    // "aaabdaaabac" is one piece (letters only). a=97 b=98 c=99 d=100.
    //   a a a b d a a a b a c: (a,a)=4 (a,b)=2, others 1   → 256 = (97,97) f4, greedy left to right
    //   aa a b d aa a b a c:   (256,97)=2 (97,98)=2 tie    → smaller pair (97,98) → 257 f2
    //   aa ab d aa ab a c:     (256,257)=2                 → 258 f2 ("aaab")
    //   258 d 258 a c: all 1: (258,100) (100,258) (258,97) (97,99) → smallest (97,99) → 259 f1
    //   258 d 258 259: (258,100) (100,258) (258,259) → (100,258) → 260 f1
    //   258 260 259: (258,260) (260,259) → (258,260) → 261 f1;  261 259 → 262 f1; one token: exhausted.
    const std::vector<Triple> aaab = {{97, 97, 256, 4},   {97, 98, 257, 2},   {256, 257, 258, 2}, {97, 99, 259, 1},
                                      {100, 258, 260, 1}, {258, 260, 261, 1}, {261, 259, 262, 1}};
    QTest::newRow("aaabdaaabac, all merges") << QByteArray("aaabdaaabac") << 264 << aaab << false;
    QTest::newRow("aaabdaaabac, exhausted") << QByteArray("aaabdaaabac") << 300 << aaab << true;
    QTest::newRow("aaabdaaabac, first three")
        << QByteArray("aaabdaaabac") << 260 << std::vector<Triple>(aaab.begin(), aaab.begin() + 3) << false;

    // "ab ab ab abc" → pieces "ab", " ab", " ab", " abc" (space = 32): words ab×1, " ab"×2, " abc"×1.
    //   (97,98) = 1+2+1 = 4 → 256;  (32,256) = 2+1 = 3 → 257;  (257,99) = 1 → 258; then exhausted.
    QTest::newRow("word counts") << QByteArray("ab ab ab abc") << 400
                                 << std::vector<Triple>{{97, 98, 256, 4}, {32, 256, 257, 3}, {257, 99, 258, 1}} << true;

    // "aaaaa": (a,a)=4 → 256; greedy gives aa aa a: (256,256)=1 (256,97)=1 → smaller (256,97) → 257;
    // then aa·aaa → (256,257) → 258. Checks that overlapping occurrences are counted and merged right.
    QTest::newRow("overlapping run") << QByteArray("aaaaa") << 400
                                     << std::vector<Triple>{{97, 97, 256, 4}, {256, 97, 257, 1}, {256, 257, 258, 1}} << true;

    // "abab cd": pieces "abab", " cd". (a,b)=2, (b,a) (32,99) (99,100) = 1 → 256: "abab" → 256 256;
    // now (256,256) (32,99) (99,100) all 1 → smallest (32,99) → 257; " cd" is 257 100: pairs
    // (256,256) (257,100) → (256,256) → 258; (257,100) → 259; exhausted.
    QTest::newRow("adjacent occurrences") << QByteArray("abab cd") << 400
                                          << std::vector<Triple>{{97, 98, 256, 2}, {32, 99, 257, 1}, {256, 256, 258, 1},
                                                                 {257, 100, 259, 1}}
                                          << true;
}

void TestBpeTrainer::handWorked()
{
    QFETCH(QByteArray, text);
    QFETCH(int, vocab);
    QFETCH(std::vector<Triple>, expected);
    QFETCH(bool, exhausted);
    auto trained = trainBpe(text.toStdString(), static_cast<std::size_t>(vocab));
    QVERIFY2(trained.ok(), trained.ok() ? "" : trained.error().message.c_str());
    QCOMPARE(asList(trained->merges), expected);
    QCOMPARE(trained->exhausted, exhausted);
    QCOMPARE(trained->requestedVocab, static_cast<std::size_t>(vocab));
    // 256 bytes + merges + <|endoftext|>.
    QCOMPARE(trained->model.vocabSize(), 256 + expected.size() + 1);
    QCOMPARE(trained->model.endOfText(), std::optional<TokenId>(static_cast<TokenId>(256 + expected.size())));
}

void TestBpeTrainer::vocabularyLayout()
{
    // Ids 0–255 are the bytes, merge k is id 256+k with the bytes of its two parts, <|endoftext|> last.
    auto trained = trainBpe("aaabdaaabac", 264);
    QVERIFY(trained.ok());
    const BpeModel& m = trained->model;
    QCOMPARE(m.bytesOf(97), std::string_view("a"));
    QCOMPARE(m.bytesOf(255), std::string_view("\xFF"));
    QCOMPARE(m.bytesOf(256), std::string_view("aa"));
    QCOMPARE(m.bytesOf(258), std::string_view("aaab"));
    QCOMPARE(m.bytesOf(261), std::string_view("aaabdaaab"));
    QCOMPARE(m.bytesOf(262), std::string_view("aaabdaaabac"));
    QCOMPARE(m.bytesOf(263), std::string_view("<|endoftext|>"));
}

void TestBpeTrainer::syntheticCorpus()
{
    // The generated corpus is what the tests below assume: about 300 KB of valid UTF-8 verse with
    // multi-byte characters, the same on every call. The exact figures are the generator's
    // fingerprint (std::mt19937's sequence is fixed by the standard, so they hold on every platform);
    // they change only when the generator is edited, and then the tests below must still hold.
    const std::string& text = ::syntheticCorpus();
    QCOMPARE(&::syntheticCorpus(), &text);
    QVERIFY(!firstInvalidUtf8(text, "synthetic").has_value());
    const TextCounts c = countText(text);
    QCOMPARE(c.bytes, 300001ull);
    QCOMPARE(c.codePoints, 282210ull); // fewer than bytes: accented vowels and ’
    QCOMPARE(c.words, 39164ull);
    QCOMPARE(c.lines, 7429ull);
    QCOMPARE(c.invalidBytes, 0ull);
    QCOMPARE(c.nulBytes, 0ull);
    QVERIFY(text[0] >= 'A' && text[0] <= 'Z'); // a tercet opens with a capital
    QVERIFY(text.ends_with('\n'));
}

void TestBpeTrainer::fullVocabulary()
{
    // The synthetic corpus (like the poem, see tests/bench/check_corpus) has far more than 2,000 − 257
    // distinct pairs over training: exactly V − 257 merges.
    const std::string& corpus = ::syntheticCorpus();
    for (std::size_t V : {std::size_t{257 + 1}, std::size_t{1000}, std::size_t{2000}}) {
        auto trained = trainBpe(corpus, V);
        QVERIFY(trained.ok());
        QCOMPARE(trained->merges.size(), V - 257);
        QVERIFY(!trained->exhausted);
        QCOMPARE(trained->model.vocabSize(), V);
        QCOMPARE(trained->model.endOfText(), std::optional<TokenId>(static_cast<TokenId>(V - 1)));
        for (std::size_t k = 0; k < trained->merges.size(); ++k) {
            const Merge& mg = trained->merges[k];
            QCOMPARE(mg.id, static_cast<TokenId>(256 + k));
            QVERIFY(mg.left < mg.id && mg.right < mg.id);
            QVERIFY(mg.frequency >= 1);
            // The merged token's bytes are its parts' bytes.
            QCOMPARE(std::string(trained->model.bytesOf(mg.id)),
                     std::string(trained->model.bytesOf(mg.left)) + std::string(trained->model.bytesOf(mg.right)));
            // Counts never rise from one merge to the next (a merge only lowers old pairs, and a new
            // pair can't beat the pair it was made from).
            if (k > 0)
                QVERIFY(mg.frequency <= trained->merges[k - 1].frequency);
        }
    }
}

void TestBpeTrainer::deterministic()
{
    const std::string& corpus = ::syntheticCorpus();
    auto first = trainBpe(corpus, 2000);
    auto second = trainBpe(corpus, 2000);
    QVERIFY(first.ok() && second.ok());
    QCOMPARE(first->merges.size(), std::size_t{2000 - 257});
    QCOMPARE(asList(first->merges), asList(second->merges));
    QCOMPARE(first->model.toHuggingFaceJson(), second->model.toHuggingFaceJson());
}

void TestBpeTrainer::matchesNaiveReference_data()
{
    QTest::addColumn<QString>("source"); // an excerpt file in resources/text, or "synthetic"
    QTest::addColumn<int>("bytes");      // a prefix of this many bytes cut on a line end; 0: all
    QTest::addColumn<int>("vocab");
    QTest::addColumn<bool>("exhausted");
    QTest::newRow("canto I (it), V=400") << "inferno-canto1-it.txt" << 0 << 400 << false;
    QTest::newRow("canto I (en), V=400") << "inferno-canto1-en.txt" << 0 << 400 << false;
    QTest::newRow("synthetic 2 kB, V=400") << "synthetic" << 2000 << 400 << false;
    QTest::newRow("synthetic 4 kB, V=700") << "synthetic" << 4000 << 700 << false;
    QTest::newRow("canto I (it), exhausted") << "inferno-canto1-it.txt" << 0 << 4000 << true;
    QTest::newRow("synthetic 1 kB, exhausted") << "synthetic" << 1000 << 4000 << true;
}

void TestBpeTrainer::matchesNaiveReference()
{
    QFETCH(QString, source);
    QFETCH(int, bytes);
    QFETCH(int, vocab);
    QFETCH(bool, exhausted);
    std::string text = source == QLatin1String("synthetic") ? ::syntheticCorpus() : readExcerpt(qPrintable(source));
    if (text.empty())
        QFAIL(qPrintable(QStringLiteral("cannot read resources/text/%1 under " TOKENWIRE_SOURCE_DIR).arg(source)));
    if (bytes > 0) {
        // Cut on a line end so no UTF-8 sequence is split.
        text = text.substr(0, static_cast<std::size_t>(bytes));
        text = text.substr(0, text.rfind('\n') + 1);
    }
    const Reference ref = naiveTrain(text, static_cast<std::size_t>(vocab), {});
    auto trained = trainBpe(text, static_cast<std::size_t>(vocab));
    QVERIFY(trained.ok());
    QCOMPARE(asList(trained->merges), asList(ref.merges));
    QCOMPARE(trained->exhausted, ref.merges.size() < static_cast<std::size_t>(vocab) - 257);
    QCOMPARE(trained->exhausted, exhausted);
}

void TestBpeTrainer::replayEqualsFinalEncoding_data()
{
    QTest::addColumn<QString>("source"); // as in matchesNaiveReference
    QTest::addColumn<int>("bytes");
    QTest::addColumn<int>("vocab"); // below the text's exhaustion point: exactly V − 257 merges
    QTest::addColumn<std::vector<std::size_t>>("snapshots");
    QTest::newRow("synthetic 6 kB, V=800") << "synthetic" << 6000 << 800
                                           << std::vector<std::size_t>{0, 1, 10, 100, 300};
    QTest::newRow("canto I (it), V=480") << "inferno-canto1-it.txt" << 0 << 480
                                              << std::vector<std::size_t>{0, 1, 10, 100, 200};
}

void TestBpeTrainer::replayEqualsFinalEncoding()
{
    // What is compared: the naive reference's segmentation of the training text after k merges
    // (the trainer's own state, since the merges agree — see matchesNaiveReference) against the
    // Encoder on the trained model with setMergeLimit(k), for k from 0 to all merges. The last one
    // is "replay equals final encoding"; the others are the UI's merge-replay slider.
    QFETCH(QString, source);
    QFETCH(int, bytes);
    QFETCH(int, vocab);
    QFETCH(std::vector<std::size_t>, snapshots);
    std::string text = source == QLatin1String("synthetic") ? ::syntheticCorpus() : readExcerpt(qPrintable(source));
    if (text.empty())
        QFAIL(qPrintable(QStringLiteral("cannot read resources/text/%1 under " TOKENWIRE_SOURCE_DIR).arg(source)));
    if (bytes > 0) {
        text = text.substr(0, static_cast<std::size_t>(bytes));
        text = text.substr(0, text.rfind('\n') + 1);
    }
    const auto V = static_cast<std::size_t>(vocab);
    const Reference ref = naiveTrain(text, V, snapshots);
    QCOMPARE(ref.merges.size(), V - 257);
    QCOMPARE(ref.after.size(), snapshots.size());
    auto trained = trainBpe(text, V);
    QVERIFY(trained.ok());

    Encoder encoder(trained->model);
    QCOMPARE(encoder.encode(text), ref.finalIds);
    for (std::size_t i = 0; i < snapshots.size(); ++i) {
        Encoder limited(trained->model);
        limited.setMergeLimit(snapshots[i]);
        QCOMPARE(limited.encode(text), ref.after[i]);
    }
    // And the final encoding decodes back to the text.
    const auto ids = encoder.encode(text);
    QCOMPARE(decode(trained->model, ids), text);
}

void TestBpeTrainer::vocabOutOfRange_data()
{
    QTest::addColumn<qulonglong>("vocab");
    QTest::newRow("0") << 0ull;
    QTest::newRow("256: no room for <|endoftext|>") << 256ull;
    QTest::newRow("65537: ids no longer fit uint16") << 65537ull;
    QTest::newRow("huge") << 10000000000ull;
}

void TestBpeTrainer::vocabOutOfRange()
{
    QFETCH(qulonglong, vocab);
    auto trained = trainBpe("some text", static_cast<std::size_t>(vocab));
    QVERIFY(!trained.ok());
    QCOMPARE(trained.error().where.field, std::string("vocab size"));
    const std::string& message = trained.error().message;
    QVERIFY2(message.find("vocab size") != std::string::npos, message.c_str());
    QVERIFY2(message.find("257") != std::string::npos, message.c_str());
    QVERIFY2(message.find("65536") != std::string::npos, message.c_str());
    QVERIFY2(message.find(std::to_string(vocab)) != std::string::npos, message.c_str());
}

void TestBpeTrainer::smallestVocab()
{
    // V = 257: no merge, bytes + <|endoftext|>; an empty text trains to the same and is exhausted
    // only when merges were wanted.
    auto none = trainBpe("abc", 257);
    QVERIFY(none.ok());
    QVERIFY(none->merges.empty());
    QVERIFY(!none->exhausted);
    QCOMPARE(none->model.vocabSize(), std::size_t{257});
    auto empty = trainBpe("", 300);
    QVERIFY(empty.ok());
    QVERIFY(empty->merges.empty());
    QVERIFY(empty->exhausted);
    QCOMPARE(empty->model.vocabSize(), std::size_t{257});
}

void TestBpeTrainer::progressAndCancel()
{
    const std::string& corpus = ::syntheticCorpus();

    // Progress rises to 1.
    std::vector<double> seen;
    tw::Progress progress;
    progress.report = [&](double f) { seen.push_back(f); };
    auto trained = trainBpe(corpus, 1500, progress);
    QVERIFY(trained.ok());
    QVERIFY(seen.size() > 10);
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    QCOMPARE(seen.back(), 1.0);

    // Stop asked before the start.
    std::stop_source before;
    before.request_stop();
    auto stopped = trainBpe(corpus, 1500, tw::Progress{{}, before.get_token()});
    QVERIFY(!stopped.ok());
    QCOMPARE(stopped.error().message, std::string("cancelled"));

    // Stop asked halfway through the merges.
    std::stop_source halfway;
    bool askedDuringMerges = false;
    tw::Progress midway{[&](double f) {
                            if (f > 0.6 && !askedDuringMerges) {
                                askedDuringMerges = true;
                                halfway.request_stop();
                            }
                        },
                        halfway.get_token()};
    auto cancelled = trainBpe(corpus, 4000, midway);
    QVERIFY(askedDuringMerges);
    QVERIFY(!cancelled.ok());
    QCOMPARE(cancelled.error().message, std::string("cancelled"));
}

QTEST_GUILESS_MAIN(TestBpeTrainer)
#include "tst_bpetrainer.moc"
