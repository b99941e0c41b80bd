// Shared basics: unit formatting, error locations, the figure set (provenance graph).
#include "base/error.h"
#include "base/figure.h"
#include "base/units.h"

#include <QTest>

#include <cmath>

using namespace tw;

class TestBase : public QObject {
    Q_OBJECT
private slots:
    void integers_data()
    {
        QTest::addColumn<qint64>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("zero") << qint64(0) << QStringLiteral("0");
        QTest::newRow("three digits") << qint64(999) << QStringLiteral("999");
        QTest::newRow("thousand") << qint64(1000) << QStringLiteral("1,000");
        QTest::newRow("poem tokens") << qint64(235828) << QStringLiteral("235,828");
        QTest::newRow("GPT-2 small") << qint64(124439808) << QStringLiteral("124,439,808");
        QTest::newRow("negative") << qint64(-1234567) << QStringLiteral("-1,234,567");
        QTest::newRow("int64 min") << qint64(INT64_MIN) << QStringLiteral("-9,223,372,036,854,775,808");
    }
    void integers()
    {
        QFETCH(qint64, value);
        QFETCH(QString, expected);
        QCOMPARE(QString::fromStdString(formatInteger(value)), expected);
    }

    void counts_data()
    {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("expected");
        // 235,828 / 1,024 = 230.3007…; 235,828 / 524,288 = 0.4498…
        QTest::newRow("sequences of the poem") << 235828.0 / 1024 << QStringLiteral("230.30");
        QTest::newRow("steps of the poem") << 235828.0 / 524288 << QStringLiteral("0.45");
        QTest::newRow("whole") << 2.0 << QStringLiteral("2");
        QTest::newRow("rounds up to next integer") << 1.999 << QStringLiteral("2.00");
        QTest::newRow("big fraction") << 1234.5 << QStringLiteral("1,234.50");
        QTest::newRow("negative fraction") << -0.25 << QStringLiteral("-0.25");
        QTest::newRow("beyond int64") << 1.5e19 << QStringLiteral("1.5000e+19");
    }
    void counts()
    {
        QFETCH(double, value);
        QFETCH(QString, expected);
        QCOMPARE(QString::fromStdString(formatCount(value)), expected);
    }

    void bytes_data()
    {
        QTest::addColumn<double>("value");
        QTest::addColumn<bool>("binary");
        QTest::addColumn<QString>("expected");
        // The paper's DP payload: 124,439,808 params × 2 B = 248,879,616 B = 248.9 MB = 237.4 MiB
        // (248,879,616 / 1,048,576 = 237.35).
        QTest::newRow("DP payload, MB") << 248879616.0 << false << QStringLiteral("248.9 MB");
        QTest::newRow("DP payload, MiB") << 248879616.0 << true << QStringLiteral("237.4 MiB");
        // B·T·d·s = 32·1024·768·2 = 50,331,648 B = 50.33 MB = exactly 48 MiB.
        QTest::newRow("activation, MB") << 50331648.0 << false << QStringLiteral("50.33 MB");
        QTest::newRow("activation, MiB") << 50331648.0 << true << QStringLiteral("48 MiB");
        QTest::newRow("small") << 999.0 << false << QStringLiteral("999 B");
        QTest::newRow("1 kB") << 1000.0 << false << QStringLiteral("1 kB");
        QTest::newRow("1000 B in KiB") << 1000.0 << true << QStringLiteral("1,000 B");
    }
    void bytes()
    {
        QFETCH(double, value);
        QFETCH(bool, binary);
        QFETCH(QString, expected);
        DisplayUnits units;
        units.bytes = binary ? ByteUnits::Binary : ByteUnits::Decimal;
        QCOMPARE(QString::fromStdString(formatBytes(value, units)), expected);
    }

    void seconds_data()
    {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("half layer TP") << 0.0015 << QStringLiteral("1.5 ms");
        QTest::newRow("stage time") << 0.240 << QStringLiteral("240 ms");
        QTest::newRow("alpha") << 10e-6 << QStringLiteral("10 µs");
        QTest::newRow("seconds") << 18.13 << QStringLiteral("18.1 s");
    }
    void seconds()
    {
        QFETCH(double, value);
        QFETCH(QString, expected);
        QCOMPARE(QString::fromStdString(formatSeconds(value)), expected);
    }

    // Spans people plan with: a minute and a half, Llama 3's one interruption every 11,135 s (3.09 h), its
    // 74.01-day run; below a minute as formatSeconds. A figure in seconds is written the same way.
    void durations()
    {
        QCOMPARE(QString::fromStdString(formatDuration(18.13)), QStringLiteral("18.1 s"));
        QCOMPARE(QString::fromStdString(formatDuration(90)), QStringLiteral("1.5 min"));
        QCOMPARE(QString::fromStdString(formatDuration(11135)), QStringLiteral("3.09 h"));
        QCOMPARE(QString::fromStdString(formatDuration(74.01 * 86400)), QStringLiteral("74 days"));
        QCOMPARE(QString::fromStdString(formatValue(11135, "s")), QStringLiteral("3.093 h")); // 4 digits: DisplayUnits
    }

    void valueDispatchesOnUnit()
    {
        QCOMPARE(QString::fromStdString(formatValue(50331648.0, "B")), QStringLiteral("50.33 MB"));
        QCOMPARE(QString::fromStdString(formatValue(235828.0, "tokens")), QStringLiteral("235,828 tokens"));
        QCOMPARE(QString::fromStdString(formatValue(2.5, "")), QStringLiteral("2.50"));
        // A small fraction keeps two significant digits (issue 34: "0.00 steps per epoch" for 699 bytes
        // of text against G = 524,288 tokens, 298/524,288 = 0.000568…).
        QCOMPARE(QString::fromStdString(formatValue(298.0 / 524288.0, "")), QStringLiteral("0.00057"));
        QCOMPARE(QString::fromStdString(formatValue(0.29, "")), QStringLiteral("0.29"));
        QCOMPARE(QString::fromStdString(formatValue(0.05, "")), QStringLiteral("0.050"));
        QCOMPARE(QString::fromStdString(formatValue(-0.0123, "x")), QStringLiteral("-0.012 x"));
    }

    void errorLocation()
    {
        Error e = makeError("unexpected end of input", Location{"encoder.json", 3, 17, {}, {}});
        QCOMPARE(QString::fromStdString(e.toString()), QStringLiteral("encoder.json:3:17: unexpected end of input"));
        Error j = makeError("must be a positive multiple of model.heads (12), got 770", Location{{}, 0, 0, "model.hidden_size", {}});
        QCOMPARE(QString::fromStdString(j.toString()),
                 QStringLiteral("model.hidden_size: must be a positive multiple of model.heads (12), got 770"));
        Error f = makeError("must be between 257 and 65,536, got 12", Location{{}, 0, 0, {}, "--vocab-size"});
        QCOMPARE(QString::fromStdString(f.toString()), QStringLiteral("--vocab-size: must be between 257 and 65,536, got 12"));
    }

    void resultHoldsValueOrError()
    {
        Result<int> good = 42;
        QVERIFY(good.ok());
        QCOMPARE(good.value(), 42);
        Result<int> bad = makeError("nope");
        QVERIFY(!bad.ok());
        QCOMPARE(QString::fromStdString(bad.error().message), QStringLiteral("nope"));
    }

    void figureGraph()
    {
        FigureSet set;
        set.add({"tokens.count", "Tokens", 14, "tokens", "counted", {}});
        set.add({"dataset.T", "Sequence length T", 1024, "tokens", "input", {}});
        set.add({"dataset.sequences", "Sequences", 14.0 / 1024, "", "n_tokens / T = 14 / 1,024",
                 {"tokens.count", "dataset.T"}});
        QVERIFY(set.missingInputs().empty());
        const auto chain = set.chain("dataset.sequences");
        QCOMPARE(chain.size(), std::size_t(3));
        QCOMPARE(QString::fromStdString(chain[0]->id), QStringLiteral("dataset.sequences"));
        QCOMPARE(QString::fromStdString(chain[1]->id), QStringLiteral("tokens.count"));
        QVERIFY(std::isnan(set.valueOf("no.such")));

        set.add({"dataset.steps", "Steps", 0, "", "f", {"dataset.G"}});
        QCOMPARE(set.missingInputs(), std::vector<std::string>{"dataset.G"});
        // Replacing a figure keeps one entry per id.
        set.add({"tokens.count", "Tokens", 15, "tokens", "counted", {}});
        QCOMPARE(set.size(), std::size_t(4));
        QCOMPARE(set.valueOf("tokens.count"), 15.0);
    }
    void unsignedCountsNeverPrintNegative()
    {
        // A count read from a file can exceed INT64_MAX; it prints as itself, grouped by thousands.
        QCOMPARE(QString::fromStdString(formatUnsigned(18446744073709551615ull)),
                 QStringLiteral("18,446,744,073,709,551,615"));
        QCOMPARE(QString::fromStdString(formatUnsigned(9223372036854775808ull)), QStringLiteral("9,223,372,036,854,775,808"));
        QCOMPARE(QString::fromStdString(formatUnsigned(0)), QStringLiteral("0"));
        QCOMPARE(QString::fromStdString(formatUnsigned(1000)), QStringLiteral("1,000"));
    }
};

QTEST_GUILESS_MAIN(TestBase)
#include "tst_base.moc"
