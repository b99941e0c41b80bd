// tokenwire-cli validate from the outside (issue #10): the committed dataset passes (exit 0), a dataset
// with a row 5 % off its prediction fails (exit 1) and names it, the JSON shape, exclusions, bad input.

#include <QTest>

#include "clirunner.h"

#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>

using json = nlohmann::json;

namespace {

// A dataset of the given rows, written to dir/name; returns its path.
QString writeDataset(const QTemporaryDir& dir, const char* name, const std::string& rows)
{
    const QString path = dir.filePath(QString::fromUtf8(name));
    std::ofstream f(path.toStdString());
    f << R"({"schema":"tokenwire-measurements/1","rows":[)" << rows << "]}";
    return path;
}

// Ring AllReduce N = 4 of 1 MiB predicts 2·3/4·M per rank × 4 = 6M = 6,291,456 B.
std::string ringRow(double payload)
{
    return R"({"library":"openmpi","op":"allreduce","algorithm_id":4,"algorithm":"ring","ranks":4,"bytes":1048576,"payload_bytes":)"
        + std::to_string(payload) + "}";
}

} // namespace

class TestCliValidate : public QObject {
    Q_OBJECT

private slots:
    void committedDatasetPasses();
    void jsonShape();
    void missFails();
    void exclusionListed();
    void badInput();
    void help();
};

void TestCliValidate::committedDatasetPasses()
{
    const CliRun r = runCli(args({"validate"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(r.out.contains("0 missed"), qPrintable(r.describe()));
    QVERIFY(r.out.contains("allreduce"));
    QVERIFY(r.err.isEmpty());
}

void TestCliValidate::jsonShape()
{
    QTemporaryDir dir;
    // 6,300,000 B measured against 6,291,456 predicted: +0.136 %.
    const QString path = writeDataset(dir, "one.json", ringRow(6300000));
    const CliRun r = runCli({QStringLiteral("validate"), QStringLiteral("--data"), path, QStringLiteral("--json")});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY2(!doc.is_discarded(), qPrintable(r.describe()));
    QCOMPARE(doc["tolerance"].get<double>(), 0.02);
    QCOMPARE(doc["rows"].size(), std::size_t(1));
    const json& row = doc["rows"][0];
    QCOMPARE(row["predicted_payload_bytes"].get<double>(), 6291456.0);
    QCOMPARE(row["tokenwire"].get<std::string>(), std::string("flat-ring")); // Open MPI's ring is tokenwire's flat-ring
    QCOMPARE(row["algorithm"].get<std::string>(), std::string("ring"));
    QVERIFY(std::fabs(row["error"].get<double>() - (6300000.0 / 6291456.0 - 1)) < 1e-12);
    QCOMPARE(row["pass"].get<bool>(), true);
    QCOMPARE(doc["misses"].get<int>(), 0);
}

void TestCliValidate::missFails()
{
    QTemporaryDir dir;
    // 6,606,029 B is 5 % above the 6,291,456 B prediction: a miss, exit 1, named on standard error.
    const QString path = writeDataset(dir, "miss.json", ringRow(6291456) + "," + ringRow(6606029));
    const CliRun r = runCli({QStringLiteral("validate"), QStringLiteral("--data"), path});
    QVERIFY2(r.finished && r.exitCode == 1, qPrintable(r.describe()));
    QVERIFY2(r.out.contains("MISS"), qPrintable(r.describe()));
    QVERIFY2(r.out.contains("1 missed"), qPrintable(r.describe()));
    QVERIFY2(r.err.contains("miss: allreduce ring N=4"), qPrintable(r.describe()));
    QVERIFY(r.err.contains("+5.00 %"));
}

void TestCliValidate::exclusionListed()
{
    QTemporaryDir dir;
    // allreduce 2 (nonoverlapping) is excluded whatever it measured: exit 0, the reason printed.
    const QString path = writeDataset(dir, "excluded.json",
                                      R"({"library":"openmpi","op":"allreduce","algorithm_id":2,"ranks":4,"bytes":1048576,"payload_bytes":1})");
    const CliRun r = runCli({QStringLiteral("validate"), QStringLiteral("--data"), path});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(r.out.contains("excluded: allreduce 2 nonoverlapping: "), qPrintable(r.describe()));
    QVERIFY(r.out.contains("1 excluded"));
}

void TestCliValidate::badInput()
{
    QTemporaryDir dir;
    const CliRun missing = runCli({QStringLiteral("validate"), QStringLiteral("--data"), dir.filePath(QStringLiteral("none.json"))});
    QVERIFY2(missing.finished && missing.exitCode == 1, qPrintable(missing.describe()));
    QVERIFY(missing.err.contains("no such file"));

    const QString bad = writeDataset(dir, "bad.json", R"({"op":"allsum","algorithm_id":1,"ranks":2,"bytes":8,"payload_bytes":8})");
    const CliRun r = runCli({QStringLiteral("validate"), QStringLiteral("--data"), bad});
    QVERIFY2(r.finished && r.exitCode == 1, qPrintable(r.describe()));
    QVERIFY2(r.err.contains("rows[0].op"), qPrintable(r.describe()));

    const CliRun usage = runCli(args({"validate", "--frobnicate"}));
    QCOMPARE(usage.exitCode, 2);
    QVERIFY(usage.err.contains("unknown option '--frobnicate' for validate"));
}

void TestCliValidate::help()
{
    const CliRun r = runCli(args({"validate", "--help"}));
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.startsWith("Usage: tokenwire-cli validate"));
    const CliRun top = runCli(args({"--help"}));
    QVERIFY(top.out.contains("validate     predicted vs measured"));
}

QTEST_GUILESS_MAIN(TestCliValidate)
#include "tst_cli_validate.moc"
