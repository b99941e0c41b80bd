// tokenwire-cli sweep from the outside: the JSON keys the issue names, the CSV shape, the table with
// the paper's measured points and the gaps, and the refusals (malformed --gpus, a size that cannot run).

#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

using json = nlohmann::json;

class TestCliSweep : public QObject {
    Q_OBJECT

private slots:
    void jsonKeys();
    void csvShape();
    void table();
    void badGpus_data();
    void badGpus();
    void sizeThatCannotRun();
};

void TestCliSweep::jsonKeys()
{
    const CliRun r = runCli(args({"sweep", "--preset", "paper-testbed", "--gpus", "1,2,7", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(doc.is_object());
    for (const char* key : {"scenario", "base_gpus", "points", "measured", "gaps", "figures"})
        QVERIFY2(doc.contains(key), key);
    QCOMPARE(doc["scenario"].get<std::string>(), std::string("paper-testbed"));
    QCOMPARE(doc["base_gpus"].get<int>(), 1);
    QCOMPARE(doc["points"].size(), std::size_t(3));
    for (const auto& p : doc["points"]) {
        for (const char* key : {"gpus", "nodes", "dp", "pp", "tp", "ep", "step_time_s", "compute_s", "exposed_comm_s",
                                "comm_share", "tokens_per_s", "speedup", "efficiency", "mfu", "ok", "error"})
            QVERIFY2(p.contains(key), key);
        QVERIFY(p["ok"].get<bool>());
        QVERIFY(p["error"].is_null());
        // share = exposed / step; efficiency = speedup / GPUs (sweep.h).
        QVERIFY(std::abs(p["comm_share"].get<double>() - p["exposed_comm_s"].get<double>() / p["step_time_s"].get<double>()) < 1e-12);
        QVERIFY(std::abs(p["efficiency"].get<double>() - p["speedup"].get<double>() / p["gpus"].get<double>()) < 1e-12);
    }
    QCOMPARE(doc["points"][0]["speedup"].get<double>(), 1.0);
    // The A.3 row: 15 % at 2 (no efficiency measured there: null), 24.5 % and 67 % at 7.
    QCOMPARE(doc["measured"].size(), std::size_t(2));
    QVERIFY(doc["measured"][0]["efficiency"].is_null());
    QCOMPARE(doc["measured"][1]["gpus"].get<int>(), 7);
    QCOMPARE(doc["measured"][1]["comm_share"].get<double>(), 0.245);
    QCOMPARE(doc["measured"][1]["efficiency"].get<double>(), 0.67);
    QVERIFY(!doc["gaps"].empty());
    bool speedup = false;
    for (const auto& f : doc["figures"])
        speedup = speedup || f["id"] == "sweep.speedup";
    QVERIFY(speedup);
}

void TestCliSweep::csvShape()
{
    const CliRun r = runCli(args({"sweep", "--preset", "paper-testbed", "--gpus", "1-3", "--csv"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QStringList lines = QString::fromUtf8(r.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 4);
    QCOMPARE(lines[0], QStringLiteral("gpus,nodes,dp,pp,tp,ep,step_time_s,compute_s,exposed_comm_s,comm_share,tokens_per_s,"
                                      "speedup,efficiency,mfu,ok,error"));
    for (int i = 1; i < 4; ++i) {
        const QStringList cells = lines[i].split(QLatin1Char(','));
        QCOMPARE(cells.size(), 16);
        QCOMPARE(cells[0], QString::number(i));
        QCOMPARE(cells[14], QStringLiteral("true"));
        QCOMPARE(cells[15], QString());
    }
}

void TestCliSweep::table()
{
    const CliRun r = runCli(args({"sweep", "--preset", "paper-testbed", "--gpus", "1,2,7"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    for (const char* s : {"GPUs", "Step time", "Comm share", "Tokens/s", "Speedup", "Efficiency", "Measured (arXiv 2609.19924",
                          "Model against measurement", "24.5 %", "67 %"})
        QVERIFY2(out.contains(QString::fromUtf8(s)), s);
    QVERIFY(r.err.isEmpty());
}

void TestCliSweep::badGpus_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("not a number") << args({"sweep", "--preset", "paper-dp", "--gpus", "1,x"})
                                  << QStringLiteral("tokenwire-cli: --gpus: \"1,x\": item 2 is not a positive integer");
    QTest::newRow("too many points") << args({"sweep", "--preset", "paper-dp", "--gpus", "1-65"})
                                     << QStringLiteral("tokenwire-cli: --gpus: \"1-65\": item 1 spans 65 sizes; a sweep has at most 64 points");
    QTest::newRow("too many GPUs") << args({"sweep", "--preset", "paper-dp", "--gpus", "8,8192"})
                                   << QStringLiteral("tokenwire-cli: --gpus: \"8,8192\": item 2 asks for 8,192 GPUs; a sweep point has at most 4,096");
    QTest::newRow("missing --gpus") << args({"sweep", "--preset", "paper-dp"})
                                    << QStringLiteral("tokenwire-cli: --gpus: missing; sweep needs the cluster sizes");
    QTest::newRow("no scenario") << args({"sweep", "--gpus", "1,2"}) << QStringLiteral("missing scenario");
    QTest::newRow("json and csv") << args({"sweep", "--preset", "paper-dp", "--gpus", "1", "--json", "--csv"})
                                  << QStringLiteral("--json and --csv cannot be used together");
}

void TestCliSweep::badGpus()
{
    // Malformed option values are wrong usage (exit 2), as for every other command.
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const CliRun r = runCli(arguments);
    QVERIFY2(r.finished && r.exitCode == 2, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.err).contains(message), qPrintable(r.describe()));
    QVERIFY(r.out.isEmpty());
}

void TestCliSweep::sizeThatCannotRun()
{
    // paper-dp has 8 GPUs per node: 12 is not whole nodes. The other sizes are printed; exit 1.
    const CliRun r = runCli(args({"sweep", "--preset", "paper-dp", "--gpus", "8,12", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 1, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.err).contains(
                 QStringLiteral("tokenwire-cli: 12 GPUs cannot run: 12 GPUs is not a multiple of the scenario's 8 GPUs per node")),
             qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY(doc.is_object());
    QVERIFY(doc["points"][0]["ok"].get<bool>());
    QVERIFY(!doc["points"][1]["ok"].get<bool>());
    QVERIFY(doc["points"][1]["error"].get<std::string>().find("not a multiple") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestCliSweep)
#include "tst_cli_sweep.moc"
