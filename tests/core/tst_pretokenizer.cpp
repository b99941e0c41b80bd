// GPT-2's pre-tokenizer: pieces of hand-written texts (expected pieces derived by hand from the
// pattern's alternatives, in order: 's|'t|'re|'ve|'m|'ll|'d| ?L+| ?N+| ?[^sLN]+|s+(?!S)|s+) and
// coverage without gaps on any bytes.

#include "text/pretokenizer.h"
#include "text/pretokenizer_p.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <random>
#include <string>
#include <vector>

using namespace tw::text;
using Pieces = std::vector<std::string>;

Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(Pieces)

namespace {

// The pieces of text as strings, checking on the way that they tile the text.
Pieces split(std::string_view text, bool* tiles = nullptr)
{
    Pieces out;
    PreTokenizer::Cursor cursor(PreTokenizer::gpt2(), text);
    Piece piece;
    std::size_t at = 0;
    bool ok = true;
    while (cursor.next(piece)) {
        ok = ok && piece.begin == at && piece.end > piece.begin && piece.end <= text.size();
        out.emplace_back(text.substr(piece.begin, piece.end - piece.begin));
        at = piece.end;
    }
    if (tiles)
        *tiles = ok && at == text.size();
    return out;
}

// The pieces of text through the scanner in one mode (fast path with PCRE2 fallback, or PCRE2 only).
Pieces splitWith(std::string_view text, detail::PieceScanner::Mode mode)
{
    Pieces out;
    detail::PieceScanner scanner(PreTokenizer::gpt2(), text, mode);
    Piece piece;
    while (scanner.next(piece))
        out.emplace_back(text.substr(piece.begin, piece.end - piece.begin));
    return out;
}

std::string show(const Pieces& pieces)
{
    std::string s;
    for (const auto& p : pieces) {
        s += '[';
        for (unsigned char c : p) {
            if (c >= 0x20 && c < 0x7F) {
                s += char(c);
            } else {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02X", c);
                s += buf;
            }
        }
        s += ']';
    }
    return s;
}

} // namespace

class TestPreTokenizer : public QObject {
    Q_OBJECT

private slots:
    void pieces_data()
    {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<Pieces>("expected");
        using namespace std::string_literals;
        QTest::newRow("words") << "Hello world"s << Pieces{"Hello", " world"};
        QTest::newRow("contraction") << "I'm here"s << Pieces{"I", "'m", " here"};
        QTest::newRow("contraction ll") << "they'll"s << Pieces{"they", "'ll"};
        // 'M is not a contraction (the pattern is case-sensitive): ' is a punctuation run.
        QTest::newRow("contraction upper") << "I'M"s << Pieces{"I", "'", "M"};
        // A punctuation run swallows the apostrophe, so "s" is left alone.
        QTest::newRow("punct then s") << "!'s"s << Pieces{"!'", "s"};
        QTest::newRow("two spaces") << "a  b"s << Pieces{"a", " ", " b"};
        // \s+(?!\S) backs off one newline, then the last newline is a \s+ of its own.
        QTest::newRow("blank line") << "a\n\nb"s << Pieces{"a", "\n", "\n", "b"};
        QTest::newRow("trailing spaces") << "end   "s << Pieces{"end", "   "};
        QTest::newRow("space tab space") << "x \t y"s << Pieces{"x", " \t", " y"};
        QTest::newRow("digits letters") << "123abc"s << Pieces{"123", "abc"};
        QTest::newRow("space digits") << " 123"s << Pieces{" 123"};
        QTest::newRow("punct run") << "hi!!! ok"s << Pieces{"hi", "!!!", " ok"};
        QTest::newRow("accents") << "perché è"s << Pieces{"perché", " è"};
        QTest::newRow("typographic apostrophe") << "ch’i’"s << Pieces{"ch", "’", "i", "’"};
        // U+00A0 is White_Space: a lone one before a letter is \s+.
        QTest::newRow("nbsp") << "a\u00A0b"s << Pieces{"a", "\u00A0", "b"};
        // U+180E is not White_Space for tiktoken: it joins the punctuation run.
        QTest::newRow("u180e") << "x\u180E!"s << Pieces{"x", "\u180E!"};
        // U+FEFF is a format character (Cf): punctuation class.
        QTest::newRow("bom") << "\uFEFFab"s << Pieces{"\uFEFF", "ab"};
        // U+1C89 CYRILLIC CAPITAL LETTER TJE (Unicode 16.0) is a letter for tiktoken.
        QTest::newRow("unicode16 letter") << "a\u1C89b"s << Pieces{"a\u1C89b"};
        // U+11F50 KAWI DIGIT ZERO (Unicode 15.0) is a digit.
        QTest::newRow("unicode15 digit") << "1\U00011F50 x"s << Pieces{"1\U00011F50", " x"};
        // U+10940 SIDETIC LETTER (Unicode 17.0) is unknown to tiktoken: punctuation class.
        QTest::newRow("unicode17 letter") << "a\U00010940b"s << Pieces{"a", "\U00010940", "b"};
        QTest::newRow("emoji") << "ok 👍🏽!"s << Pieces{"ok", " 👍🏽!"};
        QTest::newRow("invalid run") << "ab\xFF\xFE" "cd"s << Pieces{"ab", "\xFF\xFE", "cd"};
        QTest::newRow("lone continuation") << "a\x80"s << Pieces{"a", "\x80"};
        QTest::newRow("truncated sequence") << "caf\xC3"s << Pieces{"caf", "\xC3"};
        // A space before an invalid byte: nothing non-space follows, so \s+(?!\S) takes it.
        QTest::newRow("space invalid") << " \xFF"s << Pieces{" ", "\xFF"};
        QTest::newRow("nul") << "a\0b"s << Pieces{"a", "\0"s, "b"};
        QTest::newRow("nul run") << "\0\0 x"s << Pieces{"\0\0"s, " x"};
        QTest::newRow("empty") << ""s << Pieces{};
    }

    void pieces()
    {
        QFETCH(std::string, text);
        QFETCH(Pieces, expected);
        bool tiles = false;
        const Pieces got = split(text, &tiles);
        QVERIFY(tiles);
        QVERIFY2(got == expected, ("got " + show(got) + ", expected " + show(expected)).c_str());
    }

    // Random bytes (valid and invalid UTF-8, NULs): pieces tile the text and are never empty.
    void coversRandomBytes()
    {
        std::mt19937 rng(20240601);
        const std::vector<std::string> atoms = {"a", "Z", "7", " ", "  ", "\n", "\t", "\r\n", "'", "'s", "!", "\0",
                                                "é", "\u00A0", "\u3000", "\u180E", "\uFEFF", "中", "👍", "\u0301",
                                                "\xFF", "\x80", "\xE2\x82", "\xF0\x9F", "\xC3"};
        for (int t = 0; t < 20000; ++t) {
            std::string text;
            const int n = int(rng() % 16);
            for (int k = 0; k < n; ++k) {
                if (rng() % 4 == 0)
                    text += char(rng() & 0xFF);
                else
                    text += atoms[rng() % atoms.size()];
            }
            bool tiles = false;
            split(text, &tiles);
            QVERIFY2(tiles, show({text}).c_str());
        }
    }

    // The fast path is an optimisation of the regex: on random mixes of everything it
    // distinguishes (ASCII classes, contractions, Italian accents, ’, every kind of white space,
    // digits, emoji, CJK, newer Unicode letters, invalid and truncated UTF-8) it cuts the same
    // pieces as PCRE2 alone.
    void fastPathEqualsRegex()
    {
        using Mode = detail::PieceScanner::Mode;
        std::mt19937 rng(777);
        const std::vector<std::string> atoms = {
            "a", "Z", "q", "7", "0", " ", " ", " ", "  ", "\n", "\t", "\r\n", "\v", "\f", "'", "'s", "'t", "'re",
            "'ve", "'m", "'ll", "'d", "'S", "'x", "!", ",", ".", ";", "?", "-", "\"", "«", "»", std::string(1, '\0'),
            "à", "è", "é", "ì", "ò", "ù", "À", "È", "É", "Ì", "Ò", "Ù", "ï", "ç", "ñ", "ß", "’", "‘", "“", "”",
            "—", "–", "…", "€", "°", "½", "²", "٣", "Ⅻ", "\u00A0", "\u0085", "\u1680", "\u180E", "\u2000",
            "\u2009", "\u200A", "\u200B", "\u2028", "\u2029", "\u202F", "\u205F", "\u3000", "\uFEFF",
            "\u0301", "\u1C89", "\uA7CB", "\uFFFD", "\uFFFF", "中", "文", "あ", "한", "ا", "Ω", "ж", "👍",
            "🏽", "😀", "\U00011F50", "\U00010940", "\U00020000", "\xFF", "\x80", "\xBF", "\xC0\xAF",
            "\xC3", "\xE2\x80", "\xE2\x80\x99\x99", "\xED\xA0\x80", "\xE0\x80\x80", "\xF0\x9F",
            "\xF4\x90\x80\x80", "\xF8"};
        int checked = 0;
        for (int t = 0; t < 120000; ++t) {
            std::string text;
            // Mostly short texts; one in ten long enough for the 16-byte letter runs of the fast path.
            const int n = 1 + int(t % 10 == 0 ? rng() % 200 : rng() % 20);
            for (int k = 0; k < n; ++k) {
                const unsigned r = rng() % 16;
                if (r == 0)
                    text += char(rng() & 0xFF);
                else if (r < 4)
                    text.append(1 + rng() % 24, char((rng() % 2 ? 'a' : 'A') + rng() % 26));
                else
                    text += atoms[rng() % atoms.size()];
            }
            const Pieces fast = splitWith(text, Mode::Fast);
            const Pieces regex = splitWith(text, Mode::RegexOnly);
            if (fast != regex)
                QFAIL(("text " + show({text}) + ": fast " + show(fast) + ", regex " + show(regex)).c_str());
            ++checked;
        }
        QVERIFY(checked >= 100000);
        // Every code point of the BMP next to a letter, a space and a digit (all classes met).
        for (char32_t cp = 0x80; cp < 0x10000; ++cp) {
            if (cp >= 0xD800 && cp < 0xE000)
                continue;
            std::string u;
            if (cp < 0x800) {
                u += char(0xC0 | (cp >> 6));
                u += char(0x80 | (cp & 0x3F));
            } else {
                u += char(0xE0 | (cp >> 12));
                u += char(0x80 | ((cp >> 6) & 0x3F));
                u += char(0x80 | (cp & 0x3F));
            }
            std::string text;
            for (const char* sep : {"a", "b ", "  ", "", "1", "!", "\n"})
                text.append(sep).append(u);
            if (splitWith(text, Mode::Fast) != splitWith(text, Mode::RegexOnly))
                QFAIL(("code point " + show({u})).c_str());
        }
    }

    // The same on the texts of the GPT-2 exactness cases (Inferno excerpts included).
    void fastPathEqualsRegexOnExcerpts()
    {
        using Mode = detail::PieceScanner::Mode;
        QFile file(QStringLiteral(TOKENWIRE_TEST_DATA "/gpt2_cases.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonArray cases = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("cases")).toArray();
        QVERIFY(cases.size() >= 32);
        for (const auto& c : cases) {
            const QByteArray utf8 = c.toObject().value(QStringLiteral("text")).toString().toUtf8();
            const std::string text(utf8.constData(), std::size_t(utf8.size()));
            const Pieces fast = splitWith(text, Mode::Fast);
            QVERIFY2(fast == splitWith(text, Mode::RegexOnly),
                     c.toObject().value(QStringLiteral("name")).toString().toUtf8().constData());
            // Through the public Cursor too.
            QVERIFY(split(text) == fast);
        }
    }

    // Long runs (past the ASCII fast path, through PCRE2's JIT) stay single pieces.
    void longRuns()
    {
        std::string nbsp;
        for (int k = 0; k < 100000; ++k)
            nbsp += "\u00A0";
        QCOMPARE(split(nbsp).size(), std::size_t(1));
        const std::string word = std::string(1000000, 'a') + "é";
        QCOMPARE(split(word).size(), std::size_t(1));
        const std::string spaces = std::string(100000, ' ') + "x";
        QVERIFY((split(spaces) == Pieces{std::string(99999, ' '), " x"}));
    }
};

QTEST_GUILESS_MAIN(TestPreTokenizer)
#include "tst_pretokenizer.moc"
