// Sizes, times and bandwidths as the user writes them (core/base/unitparse.h): every accepted form
// with its value in base units, every refused one with its exact message.

#include "base/unitparse.h"
#include "base/units.h"

#include <QTest>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace {

QString s(const char* utf8)
{
    return QString::fromUtf8(utf8);
}

const QString kByteUnits = QStringLiteral("B, kB (or KB), MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB");
const QString kTimeUnits = QStringLiteral("s, ms, us (or µs), ns");
const QString kRateUnits = QStringLiteral(
    "bytes: B/s, kB/s (or KB/s), MB/s, GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, PiB/s (or GBps …); "
    "bits: bps, kbps (or Kbps), Mbps, Gbps, Tbps, Pbps (or Gb/s, Gbit/s …)");

} // namespace

class TestUnitParse : public QObject {
    Q_OBJECT

private slots:
    void bytesAccepted_data();
    void bytesAccepted();
    void bytesRefused_data();
    void bytesRefused();
    void bytesIntegersRoundTrip();
    void bytesFormattedParseBack();
    void secondsAccepted_data();
    void secondsAccepted();
    void secondsRefused_data();
    void secondsRefused();
    void bandwidthAccepted_data();
    void bandwidthAccepted();
    void bandwidthRefused_data();
    void bandwidthRefused();
};

void TestUnitParse::bytesAccepted_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("bytes");
    QTest::newRow("256MB") << "256MB" << 256e6;
    QTest::newRow("48MiB") << "48MiB" << 48.0 * 1048576;
    QTest::newRow("1.5GB") << "1.5GB" << 1.5e9;
    QTest::newRow("1 GiB") << "1 GiB" << 1073741824.0;
    QTest::newRow("spaces around") << "  2 MB\t" << 2e6;
    QTest::newRow("4096") << "4096" << 4096.0;
    QTest::newRow("4096B") << "4096B" << 4096.0;
    QTest::newRow("2KB") << "2KB" << 2000.0;
    QTest::newRow("2kB") << "2kB" << 2000.0;
    QTest::newRow("2KiB") << "2KiB" << 2048.0;
    QTest::newRow("0.3kB whole") << "0.3kB" << 300.0;
    QTest::newRow("0.5KiB") << "0.5KiB" << 512.0;
    QTest::newRow("0.25 KiB") << "0.25 KiB" << 256.0;
    QTest::newRow(".5MB") << ".5MB" << 5e5;
    QTest::newRow("5.") << "5." << 5.0;
    QTest::newRow("1e3") << "1e3" << 1000.0;
    QTest::newRow("2.5E-3MB") << "2.5E-3MB" << 2500.0;
    QTest::newRow("1e+2kB") << "1e+2kB" << 1e5;
    QTest::newRow("1.000000000000000000000B") << "1.000000000000000000000B" << 1.0;
    QTest::newRow("007") << "007" << 7.0;
    QTest::newRow("3TB") << "3TB" << 3e12;
    QTest::newRow("3TiB") << "3TiB" << 3.0 * 1099511627776.0;
    QTest::newRow("8PB") << "8PB" << 8e15;
    QTest::newRow("7PiB") << "7PiB" << 7.0 * 1125899906842624.0;
    QTest::newRow("0") << "0" << 0.0;
    QTest::newRow("0GB") << "0GB" << 0.0;
    QTest::newRow("-0") << "-0" << 0.0;
    QTest::newRow("0e999999999999") << "0e999999999999" << 0.0;
    QTest::newRow("2^53-1") << "9007199254740991" << 9007199254740991.0;
    QTest::newRow("2^53-1 B") << "9007199254740991 B" << 9007199254740991.0;
    QTest::newRow("9.007199254740991PB") << "9.007199254740991PB" << 9007199254740991.0;
    // 2^-50 PiB is one byte; its decimal expansion has 35 significant digits (> 19): refused below.
    QTest::newRow("1/1024 KiB") << "0.0009765625KiB" << 1.0;
}

void TestUnitParse::bytesAccepted()
{
    QFETCH(QString, text);
    QFETCH(double, bytes);
    const auto r = tw::parseBytes(text.toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r.value(), bytes);
}

void TestUnitParse::bytesRefused_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << "" << "empty value; expected a size such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("blank") << "   " << "empty value; expected a size such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("negative") << "-5MB" << "'-5MB' is negative; a size must be ≥ 0";
    QTest::newRow("nan") << "nan" << "'nan' is not a finite number; expected a size such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("inf") << "inf" << "'inf' is not a finite number; expected a size such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("-Infinity") << "-Infinity"
                               << "'-Infinity' is not a finite number; expected a size such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("words") << "lots" << "'lots' is not a size; expected a number and a unit such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("unit only") << "MB" << "'MB' is not a size; expected a number and a unit such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("plus") << "+5" << "'+5' is not a size; expected a number and a unit such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("dot") << "." << "'.' is not a size; expected a number and a unit such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("two points") << "1.2.3" << "'1.2.3' has unexpected text '.3' after the number 1.2";
    QTest::newRow("thousands") << "1,000" << "'1,000' has unexpected text ',000' after the number 1";
    QTest::newRow("trailing garbage") << "256MB!" << "'256MB!' has unexpected text 'MB!' after the number 256";
    QTest::newRow("two numbers") << "256 MB 3" << "'256 MB 3' has unexpected text 'MB 3' after the number 256";
    QTest::newRow("unknown unit") << "256XB" << s("'256XB' has an unknown unit 'XB'; the units are ") + kByteUnits;
    QTest::newRow("exabytes") << "1EB" << s("'1EB' has an unknown unit 'EB'; the units are ") + kByteUnits;
    QTest::newRow("lowercase mb") << "256mb"
                                  << s("'256mb' has an unknown unit 'mb' (b is bits, a size is in bytes: B; did you mean MB?); "
                                     "the units are ") + kByteUnits;
    QTest::newRow("bits") << "8Gb" << s("'8Gb' has an unknown unit 'Gb' (b is bits, a size is in bytes: B; did you mean GB?); "
                                      "the units are ") + kByteUnits;
    QTest::newRow("mib lowercase") << "48mib" << s("'48mib' has an unknown unit 'mib' (b is bits, a size is in bytes: B; did you mean MiB?); the units are ") + kByteUnits;
    QTest::newRow("typo") << "48MiBB" << s("'48MiBB' has an unknown unit 'MiBB' (did you mean MiB?); the units are ") + kByteUnits;
    QTest::newRow("exponent without digits") << "1e" << s("'1e' has an unknown unit 'e'; the units are ") + kByteUnits;
    QTest::newRow("fraction of a byte") << "1.5B" << "'1.5B' is not a whole number of bytes (1.5 B)";
    QTest::newRow("0.0001kB") << "0.0001kB" << "'0.0001kB' is not a whole number of bytes (0.1 B)";
    QTest::newRow("0.3KiB") << "0.3KiB" << "'0.3KiB' is not a whole number of bytes (307.2 B)";
    QTest::newRow("1e-30") << "1e-30" << "'1e-30' is not a whole number of bytes (1e-30 B)";
    QTest::newRow("1e-400") << "1e-400" << "'1e-400' is not a whole number of bytes";
    QTest::newRow("20 digits fraction") << "1.0000000000000000001"
                                        << "'1.0000000000000000001' is not a whole number of bytes (1 B)";
    QTest::newRow("2^53") << "9007199254740992"
                          << "'9007199254740992' is too large: the most is 9,007,199,254,740,991 B (2^53 − 1, about 9 PB)";
    QTest::newRow("8PiB") << "8PiB" << "'8PiB' is too large: the most is 9,007,199,254,740,991 B (2^53 − 1, about 9 PB)";
    QTest::newRow("10PB") << "10PB" << "'10PB' is too large: the most is 9,007,199,254,740,991 B (2^53 − 1, about 9 PB)";
    QTest::newRow("1e30GB") << "1e30GB" << "'1e30GB' is too large: the most is 9,007,199,254,740,991 B (2^53 − 1, about 9 PB)";
    QTest::newRow("1e400") << "1e400" << "'1e400' is too large: the most is 9,007,199,254,740,991 B (2^53 − 1, about 9 PB)";
    QTest::newRow("huge exponent") << "1e99999999999999999999MB"
                                   << "'1e99999999999999999999MB' is too large: the most is 9,007,199,254,740,991 B (2^53 − 1, about 9 PB)";
    QTest::newRow("2^-50 PiB") << "0.00000000000000088817841970012523233890533447265625PiB"
                               << "'0.00000000000000088817841970012523233890533447265625PiB' has more than 19 significant digits";
}

void TestUnitParse::bytesRefused()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    const auto r = tw::parseBytes(text.toStdString());
    QVERIFY2(!r.ok(), r.ok() ? std::to_string(r.value()).c_str() : "");
    QCOMPARE(QString::fromStdString(r.error().message), message);
    QVERIFY(r.error().where == tw::Location{});
}

void TestUnitParse::bytesIntegersRoundTrip()
{
    // Every whole count below 2^53 written in digits reads back as itself, with or without "B".
    std::mt19937_64 rng(42);
    for (int i = 0; i < 20000; ++i) {
        const int bits = 1 + i % 53;
        const std::uint64_t v = rng() >> (64 - bits);
        const std::string digits = std::to_string(v);
        for (const std::string& text : {digits, digits + "B", digits + " B"}) {
            const auto r = tw::parseBytes(text);
            QVERIFY2(r.ok() && r.value() == static_cast<double>(v), text.c_str());
        }
    }
}

void TestUnitParse::bytesFormattedParseBack()
{
    // formatBytes (decimal units, 4 significant digits) writes text parseBytes reads back within
    // the rounding of those 4 digits.
    std::mt19937_64 rng(7);
    for (int i = 0; i < 5000; ++i) {
        const std::uint64_t v = rng() >> (64 - (1 + i % 53));
        const std::string text = tw::formatBytes(static_cast<double>(v));
        const auto r = tw::parseBytes(text);
        QVERIFY2(r.ok(), (text + ": " + (r.ok() ? std::string() : r.error().message)).c_str());
        QVERIFY2(std::abs(r.value() - static_cast<double>(v)) <= 5e-4 * static_cast<double>(v), text.c_str());
    }
}

void TestUnitParse::secondsAccepted_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("seconds");
    QTest::newRow("10us") << "10us" << 1e-5;
    QTest::newRow("10µs") << "10µs" << 1e-5;
    QTest::newRow("10μs greek") << "10μs" << 1e-5;
    QTest::newRow("10 us") << "10 us" << 1e-5;
    QTest::newRow("5ns") << "5ns" << 5e-9;
    QTest::newRow("1.5ms") << "1.5ms" << 1.5e-3;
    QTest::newRow("2s") << "2s" << 2.0;
    QTest::newRow("0") << "0" << 0.0;
    QTest::newRow("0.25") << "0.25" << 0.25;
    QTest::newRow("3e-6") << "3e-6" << 3e-6;
    QTest::newRow("1e-400s underflows") << "1e-400s" << 0.0;
}

void TestUnitParse::secondsAccepted()
{
    QFETCH(QString, text);
    QFETCH(double, seconds);
    const auto r = tw::parseSeconds(text.toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r.value(), seconds); // exact: the decimal text is rounded once, like the literal
}

void TestUnitParse::secondsRefused_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << "" << "empty value; expected a time such as 10us, 1.5ms or 2s";
    QTest::newRow("negative") << "-1ms" << "'-1ms' is negative; a time must be ≥ 0";
    QTest::newRow("inf") << "inf" << "'inf' is not a finite number; expected a time such as 10us, 1.5ms or 2s";
    QTest::newRow("NaN") << "NaN" << "'NaN' is not a finite number; expected a time such as 10us, 1.5ms or 2s";
    QTest::newRow("words") << "soon" << "'soon' is not a time; expected a number and a unit such as 10us, 1.5ms or 2s";
    QTest::newRow("minutes") << "2min" << s("'2min' has an unknown unit 'min'; the units are ") + kTimeUnits;
    QTest::newRow("MS") << "10MS" << s("'10MS' has an unknown unit 'MS' (did you mean ms?); the units are ") + kTimeUnits;
    QTest::newRow("usec") << "10usec" << s("'10usec' has an unknown unit 'usec'; the units are ") + kTimeUnits;
    QTest::newRow("trailing") << "10us;" << "'10us;' has unexpected text 'us;' after the number 10";
    QTest::newRow("too large") << "1e400s" << "'1e400s' is too large: not a finite number of seconds";
}

void TestUnitParse::secondsRefused()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    const auto r = tw::parseSeconds(text.toStdString());
    QVERIFY(!r.ok());
    QCOMPARE(QString::fromStdString(r.error().message), message);
}

void TestUnitParse::bandwidthAccepted_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("bytesPerSecond");
    QTest::newRow("10Gbps") << "10Gbps" << 1.25e9;
    QTest::newRow("100 Gb/s") << "100 Gb/s" << 12.5e9;
    QTest::newRow("400Gbit/s") << "400Gbit/s" << 50e9;
    QTest::newRow("25GB/s") << "25GB/s" << 25e9;
    QTest::newRow("25GBps") << "25GBps" << 25e9;
    QTest::newRow("1.25e9 plain") << "1.25e9" << 1.25e9;
    QTest::newRow("8bps") << "8bps" << 1.0;
    QTest::newRow("1B/s") << "1B/s" << 1.0;
    QTest::newRow("100kbps") << "100kbps" << 12500.0;
    QTest::newRow("100Kbps") << "100Kbps" << 12500.0;
    QTest::newRow("2GiB/s") << "2GiB/s" << 2147483648.0;
    QTest::newRow("450 GB/s") << "450 GB/s" << 450e9;
    QTest::newRow("200Mb/s") << "200Mb/s" << 25e6;
    QTest::newRow("1Tbps") << "1Tbps" << 125e9;
}

void TestUnitParse::bandwidthAccepted()
{
    QFETCH(QString, text);
    QFETCH(double, bytesPerSecond);
    const auto r = tw::parseBandwidth(text.toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r.value(), bytesPerSecond);
}

void TestUnitParse::bandwidthRefused_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << "" << "empty value; expected a bandwidth such as 10Gbps, 100Gb/s or 25GB/s";
    QTest::newRow("zero") << "0Gbps" << "'0Gbps' is zero; a bandwidth must be > 0";
    QTest::newRow("plain zero") << "0" << "'0' is zero; a bandwidth must be > 0";
    QTest::newRow("underflow") << "1e-400" << "'1e-400' is too small: it rounds to zero; a bandwidth must be > 0";
    QTest::newRow("negative") << "-10Gbps" << "'-10Gbps' is negative; a bandwidth must be > 0";
    QTest::newRow("inf") << "infGbps"
                         << "'infGbps' is not a finite number; expected a bandwidth such as 10Gbps, 100Gb/s or 25GB/s";
    QTest::newRow("too large") << "1e400GB/s" << "'1e400GB/s' is too large: not a finite number of bytes per second";
    QTest::newRow("no per second") << "10GB" << s("'10GB' has an unknown unit 'GB'; the units are ") + kRateUnits;
    QTest::newRow("gbps") << "10gbps" << s("'10gbps' has an unknown unit 'gbps' (did you mean GBps or Gbps?); the units are ") + kRateUnits;
    QTest::newRow("Gbit") << "10Gbit" << s("'10Gbit' has an unknown unit 'Gbit'; the units are ") + kRateUnits;
    QTest::newRow("trailing") << "10Gbps x" << "'10Gbps x' has unexpected text 'Gbps x' after the number 10";
}

void TestUnitParse::bandwidthRefused()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    const auto r = tw::parseBandwidth(text.toStdString());
    QVERIFY(!r.ok());
    QCOMPARE(QString::fromStdString(r.error().message), message);
}

QTEST_APPLESS_MAIN(TestUnitParse)
#include "tst_unitparse.moc"
