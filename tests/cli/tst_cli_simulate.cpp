// tokenwire-cli simulate from the outside: the JSON fields the issue names, their consistency, and
// the refusals (an impossible plan, a fabric that cannot hold the cluster).

#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

using json = nlohmann::json;

class TestCliSimulate : public QObject {
    Q_OBJECT

private slots:
    void jsonFields();
    void twoServersExposeTheGradientAllReduce();
    void table();
    void refusals_data();
    void refusals();
};

namespace {

json simulate(const QStringList& a, const QByteArray* input = nullptr)
{
    const CliRun r = runCli(a, input);
    if (!r.finished || r.exitCode != 0) {
        qWarning("%s", qPrintable(r.describe()));
        return json();
    }
    return parseJson(r.out);
}

} // namespace

void TestCliSimulate::jsonFields()
{
    const json doc = simulate(args({"simulate", "--preset", "paper-dp", "--json"}));
    QVERIFY(doc.is_object());
    for (const char* key : {"step_time_s", "compute_s", "exposed_comm_s", "comm_share", "mfu", "links", "figures"})
        QVERIFY2(doc.contains(key), key);
    const double step = doc["step_time_s"].get<double>();
    QVERIFY(step > 0);
    // Every GPU's step is compute + exposed communication + idle; the means add up the same way.
    QVERIFY(std::abs(doc["compute_s"].get<double>() + doc["exposed_comm_s"].get<double>() + doc["idle_s"].get<double>()
                     - step) <= 1e-9 * step);
    QVERIFY(std::abs(doc["comm_share"].get<double>() - doc["exposed_comm_s"].get<double>() / step) <= 1e-12);
    // 8-way DP on one NVSwitch: every GPU is the image of GPU 0 under a DP shift, so one GPU of the eight
    // is simulated and an eighth of the step's flows.
    QCOMPARE(doc["simulated_gpus"].get<std::uint64_t>(), std::uint64_t{1});
    QCOMPARE(doc["simulated_flows"].get<std::uint64_t>() * 8, doc["flows"].get<std::uint64_t>());
    QVERIFY(doc["symmetry"].get<std::string>().find("dp shift") != std::string::npos);
    // The ring gradient AllReduce crosses every GPU's NVLink both ways: 2(N−1)/N·M = 435,539,328 B each.
    bool found = false;
    for (const auto& l : doc["links"]) {
        for (const char* key : {"id", "from", "to", "type", "bytes", "wire_bytes", "utilization"})
            QVERIFY2(l.contains(key), key);
        if (l["id"] == "n0.gpu0-nvswitch") {
            found = true;
            QCOMPARE(l["bytes"].get<double>(), 435539328.0);
            QVERIFY(l["wire_bytes"].get<double>() > l["bytes"].get<double>());
        }
    }
    QVERIFY(found);
}

void TestCliSimulate::twoServersExposeTheGradientAllReduce()
{
    // The same DDP step on 8 single-GPU servers of the paper's 10 Gb/s testbed: the gradient AllReduce
    // crosses Ethernet, so it is exposed and the step is longer than on one NVSwitch server.
    const QByteArray scenario = R"({"schema_version": 4, "hardware": {"nodes": 8, "gpus_per_node": 1},
                                    "parallel": {"dp": 8}, "topology": {"kind": "paper-testbed"}})";
    const json testbed = simulate(args({"simulate", "--scenario", "-", "--json"}), &scenario);
    QVERIFY(testbed.is_object());
    const QByteArray one = R"({"schema_version": 4, "parallel": {"dp": 8}})";
    const json server = simulate(args({"simulate", "--scenario", "-", "--json"}), &one);
    QVERIFY(server.is_object());
    QVERIFY(testbed["exposed_comm_s"].get<double>() > server["exposed_comm_s"].get<double>());
    QVERIFY(testbed["step_time_s"].get<double>() > server["step_time_s"].get<double>());
    QVERIFY(testbed["comm_share"].get<double>() > 0.01);
}

void TestCliSimulate::table()
{
    const CliRun r = runCli(args({"simulate", "--preset", "paper-tp"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY(out.contains(QStringLiteral("Step time")));
    QVERIFY(out.contains(QStringLiteral("Exposed communication")));
    QVERIFY(out.contains(QStringLiteral("Busiest links")));
    QVERIFY(r.err.isEmpty());
}

void TestCliSimulate::refusals_data()
{
    QTest::addColumn<QByteArray>("scenario");
    QTest::addColumn<QString>("fragment");
    QTest::newRow("8-way TP of 12 heads") << QByteArray(R"({"schema_version": 4, "parallel": {"dp": 1, "tp": 8}})")
                                         << QStringLiteral("tokenwire-cli: parallel.tp: 8 does not divide the 12 attention heads");
    QTest::newRow("one server for two nodes")
        << QByteArray(R"({"schema_version": 4, "hardware": {"nodes": 2, "gpus_per_node": 4}, "parallel": {"dp": 8},
                         "topology": {"kind": "nvswitch-node"}})")
        << QStringLiteral("topology.kind");
}

void TestCliSimulate::refusals()
{
    QFETCH(QByteArray, scenario);
    QFETCH(QString, fragment);
    const CliRun r = runCli(args({"simulate", "--scenario", "-"}), &scenario);
    QVERIFY2(r.finished && r.exitCode == 1, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.err).contains(fragment), qPrintable(r.describe()));
}

QTEST_GUILESS_MAIN(TestCliSimulate)
#include "tst_cli_simulate.moc"
