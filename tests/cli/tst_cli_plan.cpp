// tokenwire-cli plan from the outside: the paper's stage 3 examples through the built binary, the
// overrides, an impossible plan and usage errors. Expected values are the paper's (docs/model.md,
// "The paper's worked examples"), derived by hand in the comments.

#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

using json = nlohmann::json;

namespace {

const json* figure(const json& doc, const std::string& id)
{
    for (const auto& f : doc["figures"])
        if (f.value("id", std::string()) == id)
            return &f;
    return nullptr;
}

const json* signature(const json& doc, const std::string& strategy)
{
    for (const auto& r : doc["signature"])
        if (r.value("strategy", std::string()) == strategy)
            return &r;
    return nullptr;
}

} // namespace

class TestCliPlan : public QObject {
    Q_OBJECT

private slots:
    void paperExamples_data();
    void paperExamples();
    void paperRoundedValuesSideBySide_data();
    void paperRoundedValuesSideBySide();
    void dataParallelSignature();
    void overridesMakeTensorParallel();
    void impossibleTensorParallelism();
    void impossibleTable();
    void table();
    void usageErrors_data();
    void usageErrors();
    void derivePrintsStageThree();
};

void TestCliPlan::paperExamples_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("id");
    QTest::addColumn<double>("expected");
    // Example 5.1: N_acc = G / (B·T·N_dp) = 524,288 / (32·1,024·8) = 2; M_DP = P·s = 124,439,808·2.
    QTest::newRow("5.1 n_acc") << "paper-dp" << "dp.n_acc" << 2.0;
    QTest::newRow("5.1 payload") << "paper-dp" << "dp.grad_allreduce_bytes" << 248879616.0;
    // Example 5.2: B·T·d·s = 32·1,024·768·2 = 50,331,648 B per boundary per micro-batch, forward.
    QTest::newRow("5.2 boundary") << "paper-pp" << "pp.boundary_bytes_fwd" << 50331648.0;
    // Stage times with 80 ms forward + 160 ms backward per layer: 1 layer 240 ms, 2 layers 480 ms.
    QTest::newRow("5.2 stage 0") << "paper-pp" << "pp.stage_time.s0" << 0.24;
    QTest::newRow("5.2 stage 3") << "paper-pp" << "pp.stage_time.s3" << 0.48;
    QTest::newRow("5.2 balance") << "paper-pp" << "pp.balance" << 0.75; // mean 1.5 layers / max 2
    // Example 5.3: B·T·d·s = 50,331,648 B, 2 AllReduces per layer forward, one every 3 ms / 2.
    QTest::newRow("5.3 payload") << "paper-tp" << "tp.allreduce_bytes" << 50331648.0;
    QTest::newRow("5.3 per layer") << "paper-tp" << "tp.allreduces_per_layer_fwd" << 2.0;
    QTest::newRow("5.3 interval") << "paper-tp" << "tp.allreduce_interval" << 0.0015;
    // MoE: 4 · (n_ep − 1)/n_ep · B·T·d·s = 4 · 7/8 · 50,331,648 = 176,160,768 B per GPU per layer.
    QTest::newRow("MoE") << "paper-moe" << "ep.alltoall_bytes_per_layer" << 176160768.0;
}

void TestCliPlan::paperExamples()
{
    QFETCH(QString, preset);
    QFETCH(QString, id);
    QFETCH(double, expected);
    const CliRun r = runCli({QStringLiteral("plan"), QStringLiteral("--preset"), preset, QStringLiteral("--json")});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY2(!doc.is_discarded(), qPrintable(r.describe()));
    QCOMPARE(doc["valid"].get<bool>(), true);
    const json* f = figure(doc, id.toStdString());
    QVERIFY2(f, qPrintable(id));
    QVERIFY2(qAbs((*f)["value"].get<double>() - expected) <= 1e-9 * qMax(1.0, qAbs(expected)),
             qPrintable(QStringLiteral("%1 = %2").arg(id).arg((*f)["value"].get<double>(), 0, 'g', 17)));
    // The same figures reach `derive --json` (one graph).
    const CliRun d = runCli({QStringLiteral("derive"), QStringLiteral("--preset"), preset, QStringLiteral("--json")});
    QVERIFY2(d.finished && d.exitCode == 0, qPrintable(d.describe()));
    const json all = parseJson(d.out);
    const json* g = figure(all, id.toStdString());
    QVERIFY2(g, qPrintable(id));
    QCOMPARE((*g)["value"].get<double>(), (*f)["value"].get<double>());
}

// Rounds to `digits` significant digits (the paper writes "≈50 MB", "50.3 MB").
static double significant(double v, int digits)
{
    const double scale = std::pow(10.0, digits - 1 - std::floor(std::log10(std::fabs(v))));
    return std::round(v * scale) / scale;
}

void TestCliPlan::paperRoundedValuesSideBySide_data()
{
    // Each row: the exact figure, the paper's rounded one, and how the paper got from one to the other
    // (docs/model.md §6). "digits N": the exact value rounded to N
    // significant digits is the paper's; "operand": the paper multiplied an already rounded operand,
    // named with its exact value.
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("id");
    QTest::addColumn<double>("exact");
    QTest::addColumn<double>("paper");
    QTest::addColumn<QString>("relation");
    QTest::addColumn<double>("operandExact");
    QTest::addColumn<double>("operandPaper");
    // 5.1: "128M params × 2 B ≈ 256 MB": the paper's P = 128M; GPT-2 small has 124,439,808 (tied).
    QTest::newRow("5.1 M_DP") << "paper-dp" << "dp.grad_allreduce_bytes" << 248879616.0 << 256e6 << "operand"
                              << 124439808.0 << 128e6;
    QTest::newRow("5.1 N_acc") << "paper-dp" << "dp.n_acc" << 2.0 << 2.0 << "digits 1" << 0.0 << 0.0;
    // 5.2: "≈50 MB" per boundary, "2 × 50 = 100 MB" forward + backward.
    QTest::newRow("5.2 boundary") << "paper-pp" << "pp.boundary_bytes_fwd" << 50331648.0 << 50e6 << "digits 2" << 0.0 << 0.0;
    QTest::newRow("5.2 fw+bw") << "paper-pp" << "pp.boundary_bytes_fwd_bwd" << 100663296.0 << 100e6 << "digits 2" << 0.0 << 0.0;
    QTest::newRow("5.2 bottleneck") << "paper-pp" << "pp.bottleneck_stage_time" << 0.48 << 0.48 << "digits 2" << 0.0 << 0.0;
    // 5.3: "≈50.3 MB every 1.5 ms".
    QTest::newRow("5.3 payload") << "paper-tp" << "tp.allreduce_bytes" << 50331648.0 << 50.3e6 << "digits 3" << 0.0 << 0.0;
    QTest::newRow("5.3 interval") << "paper-tp" << "tp.allreduce_interval" << 0.0015 << 0.0015 << "digits 2" << 0.0 << 0.0;
    // MoE: "4 × (7/8) × 50 = 175 MB": the paper multiplied the rounded 50 MB (exact 50,331,648 B).
    QTest::newRow("MoE per layer") << "paper-moe" << "ep.alltoall_bytes_per_layer" << 176160768.0 << 175e6 << "operand"
                                   << 50331648.0 << 50e6;
}

void TestCliPlan::paperRoundedValuesSideBySide()
{
    QFETCH(QString, preset);
    QFETCH(QString, id);
    QFETCH(double, exact);
    QFETCH(double, paper);
    QFETCH(QString, relation);
    QFETCH(double, operandExact);
    QFETCH(double, operandPaper);
    const CliRun r = runCli({QStringLiteral("plan"), QStringLiteral("--preset"), preset, QStringLiteral("--json")});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    const json* f = figure(doc, id.toStdString());
    QVERIFY2(f, qPrintable(id));
    const double value = (*f)["value"].get<double>();
    QVERIFY2(qAbs(value - exact) <= 1e-12 * qMax(1.0, exact), qPrintable(QString::number(value, 'g', 17)));
    if (relation.startsWith(QStringLiteral("digits "))) {
        const int digits = relation.mid(7).toInt();
        QCOMPARE(significant(value, digits), paper);
    } else {
        // The exact figure is the paper's formula on the exact operand; the paper's, on its rounded one.
        QVERIFY(relation == QStringLiteral("operand"));
        QVERIFY2(qAbs(value / operandExact * operandPaper - paper) <= 1e-6 * paper,
                 qPrintable(QStringLiteral("%1 / %2 × %3 ≠ %4").arg(value).arg(operandExact).arg(operandPaper).arg(paper)));
    }
}

void TestCliPlan::dataParallelSignature()
{
    const CliRun r = runCli(args({"plan", "--preset", "paper-dp", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    const json* dp = signature(doc, "DP");
    QVERIFY(dp);
    QCOMPARE((*dp)["present"].get<bool>(), true);
    QCOMPARE((*dp)["payload_bytes"].get<double>(), 248879616.0);
    QCOMPARE((*dp)["calls_per_step"].get<double>(), 1.0); // once per optimizer step
    QCOMPARE((*dp)["peers"].get<int>(), 7);
    // Ring AllReduce: each GPU sends 2·(N−1)/N·M = 2·7/8·248,879,616 = 435,539,328 B.
    QCOMPARE((*dp)["bytes_per_gpu_per_step"].get<double>(), 435539328.0);
    QCOMPARE((*dp)["groups_crossing_nodes"].get<int>(), 0); // one node of 8
    for (const char* absent : {"PP", "TP", "EP"}) {
        const json* row = signature(doc, absent);
        QVERIFY(row);
        QCOMPARE((*row)["present"].get<bool>(), false);
    }
    QCOMPARE(doc["mesh"].size(), std::size_t{8});
    // One AllReduce call over one group of all 8 GPUs.
    std::size_t allreduces = 0;
    for (const auto& c : doc["calls"])
        if (c["strategy"] == "DP" && c["kind"] == "AllReduce")
            ++allreduces;
    QCOMPARE(allreduces, std::size_t{1});
}

void TestCliPlan::overridesMakeTensorParallel()
{
    // --tp 4 on the 8 GPUs of paper-dp: DP takes the rest, 8 / 4 = 2; N_acc = 524,288 / (32·1,024·2) = 8.
    const CliRun r = runCli(args({"plan", "--preset", "paper-dp", "--tp", "4", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QCOMPARE(doc["plan"]["dp"].get<int>(), 2);
    QCOMPARE(doc["plan"]["tp"].get<int>(), 4);
    QCOMPARE(figure(doc, "dp.n_acc")->at("value").get<double>(), 8.0);
    QCOMPARE(signature(doc, "TP")->at("present").get<bool>(), true);
    QCOMPARE(signature(doc, "TP")->at("peers").get<int>(), 3);
    // --zero 3: the sharding follows.
    const CliRun z = runCli(args({"plan", "--preset", "paper-dp", "--zero", "3", "--json"}));
    QVERIFY2(z.finished && z.exitCode == 0, qPrintable(z.describe()));
    QCOMPARE(parseJson(z.out)["plan"]["sharding"].get<std::string>(), std::string("zero3"));
}

void TestCliPlan::impossibleTensorParallelism()
{
    // The paper's 8-way TP of a 12-head GPT-2: impossible; the valid degrees are the divisors of 12.
    const CliRun r = runCli(args({"plan", "--preset", "paper-tp", "--tp", "8", "--dp", "1", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 1, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY2(!doc.is_discarded(), qPrintable(r.describe()));
    QCOMPARE(doc["valid"].get<bool>(), false);
    bool named = false;
    for (const auto& e : doc["errors"]) {
        const std::string text = e.get<std::string>();
        if (text.find("parallel.tp") != std::string::npos && text.find("1, 2, 3, 4, 6, 12") != std::string::npos)
            named = true;
    }
    QVERIFY2(named, doc["errors"].dump().c_str());
    QVERIFY(!doc.contains("calls"));
    QVERIFY(QString::fromUtf8(r.err).startsWith(QStringLiteral("tokenwire-cli: the plan cannot run")));
}

void TestCliPlan::impossibleTable()
{
    // dp·pp·tp must be the 8 GPUs: --dp 3 with tp 4 is 12.
    const CliRun r = runCli(args({"plan", "--preset", "paper-tp", "--dp", "3"}));
    QVERIFY2(r.finished && r.exitCode == 1, qPrintable(r.describe()));
    QVERIFY(QString::fromUtf8(r.out).contains(QStringLiteral("cannot run")));
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.startsWith(QStringLiteral("tokenwire-cli: ")), qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("parallel.dp")), qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("12")), qPrintable(err)); // 3 × 1 × 4 = 12 GPUs, not 8
}

void TestCliPlan::table()
{
    const CliRun r = runCli(args({"plan", "--preset", "paper-pp"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY(out.contains(QStringLiteral("Communication signature")));
    QVERIFY(out.contains(QStringLiteral("Send/Recv")));
    QVERIFY(out.contains(QStringLiteral("50.33 MB")) || out.contains(QStringLiteral("50.3 MB")));
    QVERIFY(out.contains(QStringLiteral("pp.boundary_bytes_fwd")));
    QVERIFY(r.err.isEmpty());
    // --units iec: 50,331,648 B = 48 MiB exactly.
    const CliRun iec = runCli(args({"plan", "--preset", "paper-pp", "--units", "iec"}));
    QVERIFY2(iec.finished && iec.exitCode == 0, qPrintable(iec.describe()));
    QVERIFY2(QString::fromUtf8(iec.out).contains(QStringLiteral("48 MiB"))
                 || QString::fromUtf8(iec.out).contains(QStringLiteral("48.0 MiB"))
                 || QString::fromUtf8(iec.out).contains(QStringLiteral("48.00 MiB")),
             iec.out.left(2000).constData());
}

void TestCliPlan::usageErrors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("fragments");
    QTest::newRow("tp 0") << args({"plan", "--preset", "paper-dp", "--tp", "0"}) << args({"--tp"});
    QTest::newRow("tp text") << args({"plan", "--preset", "paper-dp", "--tp", "four"}) << args({"--tp"});
    QTest::newRow("zero 4") << args({"plan", "--preset", "paper-dp", "--zero", "4"}) << args({"--zero"});
    QTest::newRow("unknown sharding") << args({"plan", "--preset", "paper-dp", "--sharding", "zero9"})
                                      << args({"--sharding", "zero9", "fsdp-hybrid"});
    QTest::newRow("zero and sharding") << args({"plan", "--preset", "paper-dp", "--zero", "1", "--sharding", "ddp"})
                                       << args({"--sharding"});
    QTest::newRow("dp twice") << args({"plan", "--preset", "paper-dp", "--dp", "2", "--dp", "4"})
                              << args({"--dp", "given twice"});
    QTest::newRow("no scenario") << args({"plan", "--tp", "2"}) << args({"missing scenario"});
    QTest::newRow("dp on derive") << args({"derive", "--preset", "paper-dp", "--dp", "2"})
                                  << args({"unknown option '--dp' for derive"});
}

void TestCliPlan::usageErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, fragments);
    const CliRun r = runCli(arguments);
    const QString why = cliErrorMismatch(r, 2, fragments);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestCliPlan::derivePrintsStageThree()
{
    // An impossible plan does not stop stages 1–2: derive succeeds and lists the reason as a note.
    const QByteArray scenario = R"({"schema_version": 2, "hardware": {"nodes": 1, "gpus_per_node": 8},
                                    "parallel": {"dp": 1, "tp": 8}})";
    const CliRun r = runCli(args({"derive", "--scenario", "-", "--json"}), &scenario);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QCOMPARE(figure(doc, "model.parameters")->at("value").get<double>(), 124439808.0);
    QVERIFY(!figure(doc, "dp.n_acc"));
    bool noted = false;
    for (const auto& p : doc["problems"])
        noted = noted || p.get<std::string>().find("parallel.tp") != std::string::npos;
    QVERIFY2(noted, doc["problems"].dump().c_str());
}

QTEST_GUILESS_MAIN(TestCliPlan)
#include "tst_cli_plan.moc"
