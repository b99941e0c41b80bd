// UTF-8 facts: counts (bytes, code points, invalid bytes, NUL, words, lines) and strict validation
// with the line/column of the first bad byte. Expected values are worked out by hand in comments.
// Only text shipped in resources/text or made here is read; the whole poem is tests/bench/check_corpus.

#include "text/utf8.h"

#include <QFile>
#include <QTest>

#include <string>

using namespace tw::text;

namespace {

std::string_view view(const QByteArray& bytes) { return {bytes.constData(), static_cast<std::size_t>(bytes.size())}; }

// The Canto I excerpts that ship with the program (resources/text), read whole.
QByteArray readExcerpt(const char* name)
{
    QFile file(QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/text/") + QLatin1String(name));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

} // namespace

class TestUtf8 : public QObject {
    Q_OBJECT
private slots:
    void counts_data();
    void counts();
    void valid_data();
    void valid();
    void invalid_data();
    void invalid();
    void messageNamesByteAndPlace();
    void excerpts_data();
    void excerpts();
    void repeatedExcerpt();
};

void TestUtf8::counts_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<qulonglong>("bytes");
    QTest::addColumn<qulonglong>("codePoints");
    QTest::addColumn<qulonglong>("invalid");
    QTest::addColumn<qulonglong>("nul");
    QTest::addColumn<qulonglong>("words");
    QTest::addColumn<qulonglong>("lines");

    // Nothing at all: no lines either (wc -l prints 0).
    QTest::newRow("empty") << QByteArray() << 0ull << 0ull << 0ull << 0ull << 0ull << 0ull;
    // "hello world\n": 5 + 1 + 5 + 1 = 12 ASCII bytes, 2 words, 1 line.
    QTest::newRow("ascii") << QByteArray("hello world\n") << 12ull << 12ull << 0ull << 0ull << 2ull << 1ull;
    // "a b\nc": 5 bytes; the last line has no '\n' but still counts: 2 lines; words a, b, c.
    QTest::newRow("no trailing newline") << QByteArray("a b\nc") << 5ull << 5ull << 0ull << 0ull << 3ull << 2ull;
    // "\n\n\n": three empty lines, no words.
    QTest::newRow("only newlines") << QByteArray("\n\n\n") << 3ull << 3ull << 0ull << 0ull << 0ull << 3ull;
    // "perché è così\n": é, è, ì are 2 bytes each (C3 xx). Bytes: perch(5)+é(2) + sp + è(2) + sp +
    // cos(3)+ì(2) + \n = 7+1+2+1+5+1 = 17. Code points: 6 + 1 + 1 + 1 + 4 + 1 = 14. Words 3.
    QTest::newRow("accents") << QByteArray("perch\xC3\xA9 \xC3\xA8 cos\xC3\xAC\n") << 17ull << 14ull << 0ull << 0ull
                             << 3ull << 1ull;
    // "a\r\nb\r\n": CR is white space, each line ends in '\n': 6 bytes, 2 words, 2 lines.
    QTest::newRow("crlf") << QByteArray("a\r\nb\r\n") << 6ull << 6ull << 0ull << 0ull << 2ull << 2ull;
    // "a\0b c": NUL is a code point that is not white space, so "a\0b" is one word; 2 words.
    QTest::newRow("nul") << QByteArray("a\0b c", 5) << 5ull << 5ull << 0ull << 1ull << 2ull << 1ull;
    // "a\xFFb": 0xFF never occurs in UTF-8: one invalid byte, counted as one code point, inside the word.
    QTest::newRow("invalid byte in word") << QByteArray("a\xFF" "b") << 3ull << 3ull << 1ull << 0ull << 1ull << 1ull;
    // E2 82 'A': E2 starts a 3-byte sequence that stops after 82. E2 is invalid (truncated), then 82
    // is a continuation without a lead: 2 invalid bytes, 3 code points, one word.
    QTest::newRow("truncated sequence") << QByteArray("\xE2\x82" "A") << 3ull << 3ull << 2ull << 0ull << 1ull << 1ull;
    // C0 AF: overlong '/'; both bytes invalid (C0 never valid, AF a stray continuation).
    QTest::newRow("overlong") << QByteArray("\xC0\xAF") << 2ull << 2ull << 2ull << 0ull << 1ull << 1ull;
    // ED A0 80 encodes U+D800, a surrogate: 3 invalid bytes.
    QTest::newRow("surrogate") << QByteArray("\xED\xA0\x80") << 3ull << 3ull << 3ull << 0ull << 1ull << 1ull;
    // "a U+00A0 b": the no-break space (C2 A0) has the Unicode White_Space property: 2 words, 4 bytes,
    // 3 code points (documented choice; glibc's iswspace would say 1 word).
    QTest::newRow("no-break space") << QByteArray("a\xC2\xA0" "b") << 4ull << 3ull << 0ull << 0ull << 2ull << 1ull;
    // 日本 U+3000 語: 3 + 3 + 3 + 3 = 12 bytes, 4 code points; the ideographic space splits: 2 words.
    QTest::newRow("ideographic space") << QByteArray("\xE6\x97\xA5\xE6\x9C\xAC\xE3\x80\x80\xE8\xAA\x9E") << 12ull
                                       << 4ull << 0ull << 0ull << 2ull << 1ull;
    // "a\tb U+0085 c": tab and NEL (C2 85) are white space: 3 words, 6 bytes, 5 code points.
    QTest::newRow("tab and NEL") << QByteArray("a\tb\xC2\x85" "c") << 6ull << 5ull << 0ull << 0ull << 3ull << 1ull;
    // 😀 (U+1F600, F0 9F 98 80): 4 bytes, one code point, one word, one line.
    QTest::newRow("emoji") << QByteArray("\xF0\x9F\x98\x80") << 4ull << 1ull << 0ull << 0ull << 1ull << 1ull;
}

void TestUtf8::counts()
{
    QFETCH(QByteArray, text);
    QFETCH(qulonglong, bytes);
    QFETCH(qulonglong, codePoints);
    QFETCH(qulonglong, invalid);
    QFETCH(qulonglong, nul);
    QFETCH(qulonglong, words);
    QFETCH(qulonglong, lines);
    const TextCounts c = countText(view(text));
    QCOMPARE(c.bytes, bytes);
    QCOMPARE(c.codePoints, codePoints);
    QCOMPARE(c.invalidBytes, invalid);
    QCOMPARE(c.nulBytes, nul);
    QCOMPARE(c.words, words);
    QCOMPARE(c.lines, lines);
    // Valid text has no error, invalid text has one.
    QCOMPARE(firstInvalidUtf8(view(text), "t.txt").has_value(), invalid > 0);
}

void TestUtf8::valid_data()
{
    QTest::addColumn<QByteArray>("text");
    // The boundaries of Table 3-7 of the Unicode Standard (well-formed byte sequences).
    QTest::newRow("U+0000") << QByteArray("\0", 1);
    QTest::newRow("U+007F") << QByteArray("\x7F");
    QTest::newRow("U+0080") << QByteArray("\xC2\x80");
    QTest::newRow("U+07FF") << QByteArray("\xDF\xBF");
    QTest::newRow("U+0800") << QByteArray("\xE0\xA0\x80");
    QTest::newRow("U+D7FF") << QByteArray("\xED\x9F\xBF");
    QTest::newRow("U+E000") << QByteArray("\xEE\x80\x80");
    QTest::newRow("U+FFFF") << QByteArray("\xEF\xBF\xBF");
    QTest::newRow("U+10000") << QByteArray("\xF0\x90\x80\x80");
    QTest::newRow("U+10FFFF") << QByteArray("\xF4\x8F\xBF\xBF");
    QTest::newRow("italian") << QByteArray("Nel mezzo del cammin di nostra vita\nmi ritrovai per una selva oscura,\n"
                                           "ch\xE2\x80\x99" "e la diritta via era smarrita.\n");
}

void TestUtf8::valid()
{
    QFETCH(QByteArray, text);
    QVERIFY(!firstInvalidUtf8(view(text), "t.txt").has_value());
    QCOMPARE(countText(view(text)).invalidBytes, 0ull);
}

void TestUtf8::invalid_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("byte");
    QTest::addColumn<QString>("reason");

    // 'a','b' then FF: column 3.
    QTest::newRow("FF") << QByteArray("ab\xFF") << 1 << 3 << "0xFF" << "never used";
    // Lines "x", "y", then "abcdef" + FE: line 3, column 7.
    QTest::newRow("line 3") << QByteArray("x\ny\nabcdef\xFE") << 3 << 7 << "0xFE" << "never used";
    // "èè" is 4 bytes but 2 code points: the bad byte is in column 3, not 5.
    QTest::newRow("columns in code points") << QByteArray("\xC3\xA8\xC3\xA8\xFF") << 1 << 3 << "0xFF" << "never used";
    // A continuation byte with no lead: 'a' then 80 → column 2.
    QTest::newRow("stray continuation") << QByteArray("a\x80") << 1 << 2 << "0x80" << "continuation";
    // C0 AF is '/' (U+002F) in two bytes: overlong.
    QTest::newRow("overlong 2-byte C0") << QByteArray("\xC0\xAF") << 1 << 1 << "0xC0" << "overlong";
    // C1 BF is U+007F in two bytes: overlong.
    QTest::newRow("overlong 2-byte C1") << QByteArray("\xC1\xBF") << 1 << 1 << "0xC1" << "overlong";
    // E0 80 AF is '/' in three bytes (second byte must be A0..BF after E0).
    QTest::newRow("overlong 3-byte") << QByteArray("\xE0\x80\xAF") << 1 << 1 << "0xE0" << "overlong";
    // F0 80 80 AF is '/' in four bytes (second byte must be 90..BF after F0).
    QTest::newRow("overlong 4-byte") << QByteArray("\xF0\x80\x80\xAF") << 1 << 1 << "0xF0" << "overlong";
    // ED A0 80 = U+D800, ED BF BF = U+DFFF: UTF-16 surrogates are not scalar values.
    QTest::newRow("surrogate D800") << QByteArray("ok \xED\xA0\x80") << 1 << 4 << "0xED" << "surrogate";
    QTest::newRow("surrogate DFFF") << QByteArray("\xED\xBF\xBF") << 1 << 1 << "0xED" << "surrogate";
    // F4 90 80 80 = U+110000, one past the last code point; F5 can only start such values.
    QTest::newRow("above U+10FFFF (F4)") << QByteArray("\xF4\x90\x80\x80") << 1 << 1 << "0xF4" << "above U+10FFFF";
    QTest::newRow("above U+10FFFF (F5)") << QByteArray("\xF5\x80\x80\x80") << 1 << 1 << "0xF5" << "above U+10FFFF";
    // E2 82 AC is '€'; cut after two bytes at the end of the text, after "ab": column 3.
    QTest::newRow("truncated at end") << QByteArray("ab\xE2\x82") << 1 << 3 << "0xE2" << "truncated";
    // The same two bytes followed by 'A': still truncated, at column 1.
    QTest::newRow("truncated by ASCII") << QByteArray("\xE2\x82" "A") << 1 << 1 << "0xE2" << "truncated";
    // CRLF lines: "ab\r" and "cd\r" end with '\n'; the bad byte opens line 3.
    QTest::newRow("after CRLF") << QByteArray("ab\r\ncd\r\n\xC3(") << 3 << 1 << "0xC3" << "truncated";
    // CR without LF is not a line break: 'a','b','\r' then FF → line 1, column 4.
    QTest::newRow("after lone CR") << QByteArray("ab\r\xFF") << 1 << 4 << "0xFF" << "never used";
    // NUL is a valid code point: it takes column 1, the bad byte column 2.
    QTest::newRow("after NUL") << QByteArray("\0\xFF", 2) << 1 << 2 << "0xFF" << "never used";
    // Long ASCII runs (read eight bytes at a time) around a newline and an 'è': line 2 holds 16 ASCII
    // code points and 'è' (2 bytes, 1 code point) before the bad byte, which is in column 18.
    QTest::newRow("after ASCII runs") << QByteArray("0123456789abcdefghij\n0123456789abcdef\xC3\xA8\xFF tail") << 2 << 18
                                      << "0xFF" << "never used";
}

void TestUtf8::invalid()
{
    QFETCH(QByteArray, text);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, byte);
    QFETCH(QString, reason);
    const auto error = firstInvalidUtf8(view(text), "poem.txt");
    QVERIFY(error.has_value());
    QCOMPARE(error->where.file, std::string("poem.txt"));
    QCOMPARE(error->where.line, line);
    QCOMPARE(error->where.column, column);
    const QString message = QString::fromStdString(error->message);
    QVERIFY2(message.startsWith(QStringLiteral("invalid UTF-8 byte ") + byte
                                + QStringLiteral(" at line %1, column %2").arg(line).arg(column)),
             qPrintable(message));
    QVERIFY2(message.contains(reason), qPrintable(message));
    QVERIFY(countText(view(text)).invalidBytes > 0);
}

void TestUtf8::messageNamesByteAndPlace()
{
    const auto error = firstInvalidUtf8("x\ny\nabcdef\xFF", "canto.txt");
    QVERIFY(error.has_value());
    QCOMPARE(error->message, std::string("invalid UTF-8 byte 0xFF at line 3, column 7 (byte never used in UTF-8)"));
    QCOMPARE(error->toString(),
             std::string("canto.txt:3:7: invalid UTF-8 byte 0xFF at line 3, column 7 (byte never used in UTF-8)"));
}

void TestUtf8::excerpts_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<qulonglong>("bytes");
    QTest::addColumn<qulonglong>("codePoints");
    QTest::addColumn<qulonglong>("words");
    QTest::addColumn<qulonglong>("lines");

    // The whole poem's figures (556,827 bytes, 532,106 code points, 19,252 lines, 97,676 words) are
    // checked by tests/bench/check_corpus, run by hand on the whole poem (the benchmark documents where it reads it).
    //
    // inferno-canto1-it.txt: six tercets of 3 lines, a blank line after each: 6 × 4 − 1 = 23 lines
    // (the last tercet ends in '\n', no blank line after it).
    //   Code points per line (tercets): 35+33+32, 37+36+32, 35+39+39, 37+36+29, 42+30+36, 36+33+38
    //   = 100 + 105 + 113 + 102 + 108 + 107 = 635, plus 23 '\n' = 658.
    //   Non-ASCII: à ×2, è ×4, é, ò, ù (2 bytes each: 9 extra bytes) and ’ ×16 (E2 80 99, 3 bytes:
    //   32 extra): 658 + 9 + 32 = 699 bytes.
    //   Words per line: 7+6+6, 9+7+6, 8+8+7, 8+8+5, 9+5+7, 8+6+7 = 19+22+23+21+21+21 = 127 (’ is not
    //   white space, so "ch’i’" is one word; `LC_ALL=C.UTF-8 wc -w` agrees).
    QTest::newRow("it") << "inferno-canto1-it.txt" << 699ull << 658ull << 127ull << 23ull;
    // inferno-canto1-en.txt: plain ASCII (bytes = code points); six tercets, each followed by a blank
    // line, the last one too: 6 × 4 = 24 lines.
    //   Characters per line: 35+38+48, 36+48+44, 38+48+47, 41+40+40, 42+44+48, 44+40+43
    //   = 121 + 128 + 133 + 121 + 134 + 127 = 764, plus 24 '\n' = 788.
    //   Words per line: 7+7+7, 10+8+8, 8+10+10, 8+9+8, 8+7+7, 8+6+7 = 21+26+28+25+22+21 = 143.
    QTest::newRow("en") << "inferno-canto1-en.txt" << 788ull << 788ull << 143ull << 24ull;
}

void TestUtf8::excerpts()
{
    QFETCH(QString, name);
    QFETCH(qulonglong, bytes);
    QFETCH(qulonglong, codePoints);
    QFETCH(qulonglong, words);
    QFETCH(qulonglong, lines);
    const QByteArray text = readExcerpt(qPrintable(name));
    if (text.isEmpty())
        QFAIL(qPrintable(QStringLiteral("cannot read resources/text/%1 under " TOKENWIRE_SOURCE_DIR).arg(name)));
    const TextCounts c = countText(view(text));
    QCOMPARE(c.bytes, bytes);
    QCOMPARE(c.codePoints, codePoints);
    QCOMPARE(c.lines, lines);
    QCOMPARE(c.words, words);
    QCOMPARE(c.invalidBytes, 0ull);
    QCOMPARE(c.nulBytes, 0ull);
    QVERIFY(!firstInvalidUtf8(view(text), name.toStdString()).has_value());
}

void TestUtf8::repeatedExcerpt()
{
    // A poem-sized text made here: the Italian excerpt 800 times, 800 × 699 = 559,200 bytes (the poem
    // is 556,827). The excerpt starts with a letter and ends with '\n', so copies neither share a
    // line nor a word: every count is exactly 800 × the excerpt's (see excerpts_data).
    const QByteArray excerpt = readExcerpt("inferno-canto1-it.txt");
    if (excerpt.isEmpty())
        QFAIL("cannot read resources/text/inferno-canto1-it.txt under " TOKENWIRE_SOURCE_DIR);
    QCOMPARE(excerpt.size(), 699);
    const QByteArray text = excerpt.repeated(800);
    const TextCounts c = countText(view(text));
    QCOMPARE(c.bytes, 559200ull);
    QCOMPARE(c.codePoints, 526400ull); // 800 × 658
    QCOMPARE(c.lines, 18400ull);       // 800 × 23
    QCOMPARE(c.words, 101600ull);      // 800 × 127
    QCOMPARE(c.invalidBytes, 0ull);
    QCOMPARE(c.nulBytes, 0ull);
    QVERIFY(!firstInvalidUtf8(view(text), "repeated.txt").has_value());

    // One bad byte deep inside: at the end of line 9 ("Tant’ è amara che poco è più morte;", 35 code
    // points in 40 bytes) of copy 500 (0-based). Lines before it: 500 × 23 = 11,500, so line 11,509;
    // column 35 + 1 = 36 (in code points, not the 41st byte).
    QByteArray broken = text;
    const qsizetype lineStart = 500 * 699 + excerpt.indexOf("Tant");
    QCOMPARE(broken.mid(lineStart + 40, 1), QByteArray("\n"));
    broken.insert(lineStart + 40, '\xFF');
    const auto error = firstInvalidUtf8(view(broken), "repeated.txt");
    QVERIFY(error.has_value());
    QCOMPARE(error->where.line, 11509);
    QCOMPARE(error->where.column, 36);
    QCOMPARE(error->message,
             std::string("invalid UTF-8 byte 0xFF at line 11509, column 36 (byte never used in UTF-8)"));
    const TextCounts b = countText(view(broken));
    QCOMPARE(b.invalidBytes, 1ull);
    QCOMPARE(b.codePoints, 526401ull);
    QCOMPARE(b.words, 101600ull); // the bad byte joins "morte;"
}

QTEST_GUILESS_MAIN(TestUtf8)
#include "tst_utf8.moc"
