// tokenwire-cli fit from the outside (issue #18): GPT-2 small on 8 A100 80 GB GPUs (paper-dp): the JSON
// shape, the best plans ranked by simulated step time, the memory of a plan derived by hand, the table,
// usage errors.

#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <string>

using json = nlohmann::json;

class TestCliFit : public QObject {
    Q_OBJECT

private slots:
    void json();
    void table();
    void fewerSimulated();
    void usageErrors_data();
    void usageErrors();
};

void TestCliFit::json()
{
    const CliRun r = runCli(args({"fit", "--preset", "paper-dp", "--top", "3", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const ::json doc = parseJson(r.out);
    QVERIFY2(!doc.is_discarded(), qPrintable(r.describe()));
    QCOMPARE(doc["gpus"].get<int>(), 8);
    QCOMPARE(doc["capacity_bytes"].get<double>(), 85899345920.0); // 80 GiB
    QVERIFY(doc["candidates"].get<std::size_t>() >= doc["valid"].get<std::size_t>());
    QVERIFY(doc["valid"].get<std::size_t>() >= doc["fitting"].get<std::size_t>());
    QCOMPARE(doc["truncated"].get<bool>(), false);
    const ::json& plans = doc["plans"];
    QCOMPARE(plans.size(), std::size_t(3));
    double previous = 0;
    bool sawDdp = false;
    for (const ::json& p : plans) {
        for (const char* key : {"dp", "pp", "tp", "ep", "sharding", "sequence_parallel", "schedule", "virtual_stages",
                                "micro_batch", "accumulation", "recompute", "simulated", "step_time_s",
                                "coarse_step_time_s", "mfu", "exposed_comm_s", "peak_bytes"})
            QVERIFY2(p.contains(key), key);
        QVERIFY(p["simulated"].get<bool>());
        QCOMPARE(p["dp"].get<int>() * p["pp"].get<int>() * p["tp"].get<int>(), 8);
        // The global batch is kept: B · N_acc · dp = G/T = 524,288 / 1,024 = 512 sequences.
        QCOMPARE(p["micro_batch"].get<int>() * p["accumulation"].get<int>() * p["dp"].get<int>(), 512);
        QVERIFY(p["peak_bytes"].get<double>() <= 85899345920.0);
        QVERIFY(p["step_time_s"].get<double>() >= previous);
        previous = p["step_time_s"].get<double>();
        if (p["dp"] == 8 && p["sharding"] == "ddp" && p["micro_batch"] == 64 && p["recompute"] == "none") {
            // 8 replicas, no pipeline: no bubble, DDP the least traffic, the largest micro-batch that
            // fits (64 = 512/8, N_acc = 1). Its GPU: 16·P = 1,991,036,928 (weights, gradients, master,
            // Adam) + activations at B = 64, twice tst_memory's B = 32 figure 16,981,032,960 =
            // 33,962,065,920 + DDP bucket copy 2P + one communicator 315,988,480 + the reserve
            // 1,073,741,824 = 37,342,833,152 B, + the allocator's headroom, 10 % of the A100's 80 GiB
            // (8,589,934,592 B) = 45,932,767,744 B.
            sawDdp = true;
            QCOMPARE(p["peak_bytes"].get<double>(), 45932767744.0);
            QCOMPARE(p["accumulation"].get<int>(), 1);
        }
    }
    QVERIFY2(sawDdp, qPrintable(r.describe()));
}

void TestCliFit::table()
{
    const CliRun r = runCli(args({"fit", "--preset", "paper-dp", "--top", "2"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    for (const char* part : {"Scenario:   paper-dp", "layouts", "fit in 85.9 GB per GPU", "dp x pp x tp", "8 x 1 x 1",
                             "ddp", "MFU", "exposed comm", "peak memory", "45.93 GB"})
        QVERIFY2(out.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + QStringLiteral(" not in:\n") + out));
}

void TestCliFit::fewerSimulated()
{
    // --simulate 1: the best layout simulated, the next two listed with their coarse estimate.
    const CliRun r = runCli(args({"fit", "--preset", "paper-dp", "--top", "3", "--simulate", "1", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const ::json doc = parseJson(r.out);
    QCOMPARE(doc["plans"].size(), std::size_t(3));
    QVERIFY(doc["plans"][0]["simulated"].get<bool>());
    for (int i : {1, 2}) {
        QVERIFY(!doc["plans"][i]["simulated"].get<bool>());
        QVERIFY(doc["plans"][i]["mfu"].is_null());
        QCOMPARE(doc["plans"][i]["step_time_s"].get<double>(), doc["plans"][i]["coarse_step_time_s"].get<double>());
    }
}

void TestCliFit::usageErrors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("no scenario") << args({"fit"}) << "missing scenario";
    QTest::newRow("top 0") << args({"fit", "--preset", "paper-dp", "--top", "0"}) << "--top";
    QTest::newRow("simulate x") << args({"fit", "--preset", "paper-dp", "--simulate", "x"}) << "--simulate";
    QTest::newRow("unknown option") << args({"fit", "--preset", "paper-dp", "--dp", "2"}) << "unknown option '--dp'";
}

void TestCliFit::usageErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const CliRun r = runCli(arguments);
    QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.err).contains(message), qPrintable(r.describe()));
}

QTEST_GUILESS_MAIN(TestCliFit)
#include "tst_cli_fit.moc"
