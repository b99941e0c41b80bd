// tokenwire-cli busbw (issue #17) from the outside: nccl-tests' sizes (K/M/G = powers of 1024, --factor),
// the table's columns by hand for one row, the JSON shape with bandwidths in B/s and busbw null for one GPU,
// --channels, and refusals (a pair NCCL lacks exits 1 naming it; usage errors exit 2 naming the option).

#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

using json = nlohmann::json;

class TestCliBusbw : public QObject {
    Q_OBJECT

private slots:
    void jsonRowsAndSizes();
    void tableRowByHand();
    void sizeSuffixes();
    void channelsOverride();
    void oneGpuHasNoBusbw();
    void pairNcclLacks();
    void usageErrors_data();
    void usageErrors();
};

void TestCliBusbw::jsonRowsAndSizes()
{
    const CliRun r = runCli(args({"busbw", "--preset", "dgx-a100-4node", "--op", "allreduce", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(!doc.is_discarded());
    QCOMPARE(doc["gpus"].get<int>(), 32);
    QCOMPARE(doc["op"].get<std::string>(), std::string("allreduce"));
    const json& rows = doc["rows"];
    // 8 B … 8 GiB by factor 2: 2^3 … 2^33 = 31 sizes.
    QCOMPARE(int(rows.size()), 31);
    QCOMPARE(rows.front()["bytes"].get<double>(), 8.0);
    QCOMPARE(rows.back()["bytes"].get<double>(), 8589934592.0);
    for (const json& row : rows) {
        for (const char* key : {"bytes", "time_s", "algbw", "busbw", "algorithm", "protocol"})
            QVERIFY2(row.contains(key), key);
        // algbw = bytes / time; busbw = algbw · 2(n−1)/n = algbw · 62/32.
        const double algbw = row["bytes"].get<double>() / row["time_s"].get<double>();
        QVERIFY(std::abs(row["algbw"].get<double>() - algbw) <= 1e-9 * algbw);
        QVERIFY(std::abs(row["busbw"].get<double>() - algbw * 62 / 32) <= 1e-9 * algbw);
    }
    // Large sizes run on the 8 rail-aligned ring channels (tst_nccl derives the switch points).
    QCOMPARE(rows.back()["algorithm"].get<std::string>(), std::string("ring"));
    QCOMPARE(rows.back()["protocol"].get<std::string>(), std::string("simple"));
    QCOMPARE(rows.back()["channels"].get<int>(), 8);
    // The ring graph: channel k on rail k in and out (tst_nccl derives the layout).
    const json& layout = doc["graphs"]["ring"]["layout"];
    QCOMPARE(int(layout.size()), 8);
    for (int k = 0; k < 8; ++k) {
        QCOMPARE(layout[k]["nic_in"].get<int>(), k);
        QCOMPARE(layout[k]["nic_out"].get<int>(), k);
        QCOMPARE(layout[k]["gpus"][0].get<int>(), k);
    }
    QCOMPARE(doc["graphs"]["ring"]["bw_inter_gbps"].get<double>(), 24.0);
}

void TestCliBusbw::tableRowByHand()
{
    // One DGX A100, AllReduce of 1 GiB bf16: count 2^30/2 = 536,870,912; ring Simple 12 channels × 20 GB/s:
    // busBw 240, algBw 240·8/14 = 137.143 GB/s, lat 8.4 + 14·3.4 = 56 µs; t = 56 + 2^30/137142.86 =
    // 7885.37 µs; algbw 2^30/t = 136.17 GB/s; busbw ·1.75 = 238.30 GB/s.
    const CliRun r = runCli(args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--min-bytes", "1G", "--max-bytes", "1G"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QStringList lines = QString::fromUtf8(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QStringList data;
    for (const QString& l : lines)
        if (!l.startsWith(QLatin1Char('#')))
            data << l;
    QCOMPARE(data.size(), 1);
    const QStringList cols = data.front().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    QCOMPARE(cols, (QStringList{QStringLiteral("1073741824"), QStringLiteral("536870912"), QStringLiteral("bfloat16"),
                                QStringLiteral("7885.37"), QStringLiteral("136.17"), QStringLiteral("238.30"),
                                QStringLiteral("ring"), QStringLiteral("simple"), QStringLiteral("12")}));
    QVERIFY(QString::fromUtf8(r.out).contains(QStringLiteral("size         count      type     time   algbw   busbw")));
}

void TestCliBusbw::sizeSuffixes()
{
    // 64K = 65,536; ×4 → 262,144 → 1M = 1,048,576. float: count = bytes/4.
    const CliRun r = runCli(args({"busbw", "--preset", "dgx-h100", "--op", "broadcast", "--min-bytes", "64K",
                                  "--max-bytes", "1M", "--factor", "4", "--dtype", "float", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QCOMPARE(int(doc["rows"].size()), 3);
    QCOMPARE(doc["rows"][0]["bytes"].get<double>(), 65536.0);
    QCOMPARE(doc["rows"][1]["bytes"].get<double>(), 262144.0);
    QCOMPARE(doc["rows"][2]["bytes"].get<double>(), 1048576.0);
    QCOMPARE(doc["rows"][2]["count"].get<double>(), 262144.0);
    QCOMPARE(doc["dtype"].get<std::string>(), std::string("float"));
    // Broadcast: busbw = algbw (factor 1), ring only.
    for (const json& row : doc["rows"]) {
        QCOMPARE(row["busbw"].get<double>(), row["algbw"].get<double>());
        QCOMPARE(row["algorithm"].get<std::string>(), std::string("ring"));
    }
    // AllGather of 8 B bf16 on 8 GPUs: 4 elements round down to a multiple of 8 → 0; 64 B stays 64.
    const CliRun ag = runCli(args({"busbw", "--preset", "dgx-h100", "--op", "allgather", "--max-bytes", "64", "--json"}));
    const json agDoc = parseJson(ag.out);
    QCOMPARE(agDoc["rows"][0]["bytes"].get<double>(), 0.0);
    QCOMPARE(agDoc["rows"][3]["bytes"].get<double>(), 64.0);
}

void TestCliBusbw::channelsOverride()
{
    // --channels 16 on 4 × DGX A100: two channels per rail at 12 GB/s (floor(25/12) = 2).
    const CliRun r = runCli(args({"busbw", "--preset", "dgx-a100-4node", "--op", "allreduce", "--algo", "ring",
                                  "--min-bytes", "1G", "--max-bytes", "1G", "--channels", "16", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QCOMPARE(doc["channels"]["ring"].get<int>(), 16);
    QCOMPARE(doc["rows"][0]["channels"].get<int>(), 16);
}

void TestCliBusbw::oneGpuHasNoBusbw()
{
    const QByteArray scenario = R"({"schema_version": 2, "name": "one", "hardware": {"gpu": "a100-80gb", "nodes": 1,
                                   "gpus_per_node": 1}, "parallel": {"dp": 1}})";
    const CliRun r = runCli(args({"busbw", "--scenario", "-", "--op", "allreduce", "--max-bytes", "1K", "--json"}), &scenario);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(doc["rows"][0]["busbw"].is_null());
}

void TestCliBusbw::pairNcclLacks()
{
    CliRun r = runCli(args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--algo", "pat"}));
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("--algo: NCCL has no pat algorithm for allreduce; it has tree, ring, collnet-direct, "
                            "collnet-chain, nvls or nvls-tree"),
             r.err.constData());
    r = runCli(args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--algo", "nvls"}));
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("nvls for allreduce needs a Hopper-or-later SXM GPU"), r.err.constData());
    r = runCli(args({"busbw", "--preset", "dgx-a100", "--op", "alltoall", "--algo", "ring"}));
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("point-to-point"), r.err.constData());
}

void TestCliBusbw::usageErrors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("no op") << args({"busbw", "--preset", "dgx-a100"}) << "--op: missing; busbw needs the operation";
    QTest::newRow("no scenario") << args({"busbw", "--op", "allreduce"}) << "missing scenario";
    QTest::newRow("unknown algo") << args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--algo", "flat-ring"})
                                  << "--algo: 'flat-ring' is not an NCCL algorithm";
    QTest::newRow("unknown protocol") << args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--protocol", "LL"})
                                      << "--protocol: 'LL' is not an NCCL protocol";
    QTest::newRow("not a multiple") << args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--min-bytes", "6",
                                             "--dtype", "float"})
                                    << "--min-bytes: 6 is not a multiple of the float size (4 B)";
    QTest::newRow("min above max") << args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--min-bytes", "2G",
                                            "--max-bytes", "1G"})
                                   << "--min-bytes: is larger than --max-bytes";
    QTest::newRow("bad dtype") << args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--dtype", "fp7"})
                               << "--dtype: 'fp7' is not a data type";
    QTest::newRow("factor 1") << args({"busbw", "--preset", "dgx-a100", "--op", "allreduce", "--factor", "1"})
                              << "--factor: '1' is out of range";
}

void TestCliBusbw::usageErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const CliRun r = runCli(arguments);
    QVERIFY(r.finished);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
}

QTEST_GUILESS_MAIN(TestCliBusbw)
#include "tst_cli_busbw.moc"
