// tokenwire-cli memory from the outside (issue #18): GPT-2 small on 8 A100 80 GB GPUs (the paper-dp
// preset) under DDP, ZeRO-1/2/3 and TP 2 × PP 2 × DP 2, every byte derived by hand in the comments;
// the JSON shape (one entry per GPU id); the table; an impossible plan; usage errors.

#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <string>

using json = nlohmann::json;

class TestCliMemory : public QObject {
    Q_OBJECT

private slots:
    void gpt2SmallShardings_data();
    void gpt2SmallShardings();
    void tensorPipelineData();
    void table();
    void settingsFromTheScenario();
    void impossiblePlan();
    void usageErrors_data();
    void usageErrors();
};

void TestCliMemory::gpt2SmallShardings_data()
{
    QTest::addColumn<QString>("zero");
    QTest::addColumn<double>("weights");
    QTest::addColumn<double>("gradients");
    QTest::addColumn<double>("optimizer");
    // P = 124,439,808 (GPT-2 small, tied); dp = 8; ⌈P/8⌉ = 15,554,976. bf16 weights and gradients,
    // fp32 master + Adam: DDP 2P = 248,879,616 and 12P = 1,493,277,696 (ZeRO §3.1).
    QTest::newRow("ddp") << "0" << 248879616.0 << 248879616.0 << 1493277696.0;
    QTest::newRow("zero1") << "1" << 248879616.0 << 248879616.0 << 186659712.0; // 12·15,554,976
    QTest::newRow("zero2") << "2" << 248879616.0 << 31109952.0 << 186659712.0;   // 2·15,554,976
    QTest::newRow("zero3") << "3" << 31109952.0 << 31109952.0 << 186659712.0;
}

void TestCliMemory::gpt2SmallShardings()
{
    QFETCH(QString, zero);
    QFETCH(double, weights);
    QFETCH(double, gradients);
    QFETCH(double, optimizer);
    const CliRun r = runCli(QStringList{QStringLiteral("memory"), QStringLiteral("--preset"), QStringLiteral("paper-dp"),
                                        QStringLiteral("--zero"), zero, QStringLiteral("--json")});
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY2(!doc.is_discarded(), qPrintable(r.describe()));
    QCOMPARE(doc["gpus"].size(), std::size_t(8));
    for (std::size_t g = 0; g < 8; ++g) {
        const json& e = doc["gpus"][g];
        QCOMPARE(e["gpu"].get<std::size_t>(), g);
        QCOMPARE(e["stage"].get<int>(), 0);
        QCOMPARE(e["weights"].get<double>(), weights);
        QCOMPARE(e["gradients"].get<double>(), gradients);
        QCOMPARE(e["optimizer"].get<double>(), optimizer);
        // 1 GiB framework reserve by default, apart from the total.
        QCOMPARE(e["reserve"].get<double>(), 1073741824.0);
        QCOMPARE(e["total"].get<double>(), e["weights"].get<double>() + e["gradients"].get<double>()
                                               + e["optimizer"].get<double>() + e["activations"].get<double>()
                                               + e["buffers"].get<double>());
    }
    // Activations (fused attention on the A100, one micro-batch in flight): 12 layers · 34·sbh
    // (sbh = 1,024·32·768 = 25,165,824) = 10,267,656,192 + token ids and embedding dropout mask
    // 262,144 + 25,165,824 + final-norm and head inputs 100,663,296 + fp32 logits 4·32,768·50,257 =
    // 6,587,285,504 → 16,981,032,960 whatever the sharding.
    QCOMPARE(doc["gpus"][0]["activations"].get<double>(), 16981032960.0);
    QCOMPARE(doc["roles"].size(), std::size_t(1));
    QCOMPARE(doc["roles"][0]["gpus"].get<int>(), 8);
    QCOMPARE(doc["peak_bytes"].get<double>(), doc["gpus"][0]["total"].get<double>());
    // A100 80 GB: 80 GiB = 85,899,345,920 B.
    QCOMPARE(doc["capacity_bytes"].get<double>(), 85899345920.0);
    QCOMPARE(doc["fits"].get<bool>(), true);
}

void TestCliMemory::tensorPipelineData()
{
    // --pp 2 then --tp 2: DP takes the rest, dp = 2. GPUs 0–3 stage 0, 4–7 stage 1 (Megatron's order).
    const CliRun r = runCli(args({"memory", "--preset", "paper-dp", "--pp", "2", "--tp", "2", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QCOMPARE(doc["gpus"].size(), std::size_t(8));
    QCOMPARE(doc["gpus"][3]["stage"].get<int>(), 0);
    QCOMPARE(doc["gpus"][4]["stage"].get<int>(), 1);
    // Stage 0: 6 blocks of (7,084,800 − 1,536)/2 + 1,536 + 3,072 = 3,546,240 parameters + embedding
    // 38,597,376/2 + positions 786,432 → 41,362,560; weights 2 B each = 82,725,120; optimizer 12 B = 496,350,720.
    QCOMPARE(doc["gpus"][0]["weights"].get<double>(), 82725120.0);
    QCOMPARE(doc["gpus"][0]["optimizer"].get<double>(), 496350720.0);
    // Stage 1: 21,277,440 + final norm 1,536 + tied copy 19,298,688 = 40,577,664 → 81,155,328 B of weights.
    QCOMPARE(doc["gpus"][7]["weights"].get<double>(), 81155328.0);
    // Stage 0 activations: 1F1B holds 2 micro-batches: 6·2·22·sbh = 6,643,777,536 + 2·25,427,968 =
    // 6,694,633,472. Stage 1: 6·22·sbh = 3,321,888,768 + 100,663,296 + logits/2 3,293,642,752 = 6,716,194,816.
    QCOMPARE(doc["gpus"][0]["activations"].get<double>(), 6694633472.0);
    QCOMPARE(doc["gpus"][7]["activations"].get<double>(), 6716194816.0);
    // Stage 1 total: 2·81,155,328 + 486,931,968 + 6,716,194,816 + buffers (DDP bucket copy 81,155,328 +
    // 4 communicators · 67,108,864) 349,590,784 = 7,715,028,224: the peak.
    QCOMPARE(doc["gpus"][7]["total"].get<double>(), 7715028224.0);
    QCOMPARE(doc["peak_bytes"].get<double>(), 7715028224.0);
    QCOMPARE(doc["roles"].size(), std::size_t(2));
    QCOMPARE(doc["roles"][1]["micro_batches_in_flight"][0].get<int>(), 1);
}

void TestCliMemory::table()
{
    const CliRun r = runCli(args({"memory", "--preset", "paper-dp"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains(QStringLiteral("Stage 0 (8 GPUs: 0-7; 12 layers, embedding, output layer")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("248,879,616 B")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("1,493,277,696 B")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("Fits:       yes")), qPrintable(out));
}

void TestCliMemory::settingsFromTheScenario()
{
    // A scenario on standard input: no reserve, 1 MiB of NCCL buffers, unfused attention, dp = 8 DDP.
    const QByteArray scenario = R"({"schema_version": 4, "model": {"attention": "unfused"},
                                    "parallel": {"memory_reserve_bytes": 0, "comm_buffer_bytes": 1048576}})";
    const CliRun r = runCli(args({"memory", "--scenario", "-", "--json"}), &scenario);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QCOMPARE(doc["gpus"][5]["reserve"].get<double>(), 0.0);
    // Buffers: DDP's bucket copy 2P = 248,879,616 + one DP communicator of 1,048,576 = 249,928,192.
    QCOMPARE(doc["gpus"][5]["buffers"].get<double>(), 249928192.0);
    // Unfused: + 12 layers · 5·a·s²·b = 12·5·12·1,024²·32 = 24,159,191,040 over the fused 16,981,032,960.
    QCOMPARE(doc["gpus"][5]["activations"].get<double>(), 41140224000.0);
    // A negative reserve is refused with its path (exit 1).
    const QByteArray bad = R"({"schema_version": 4, "parallel": {"memory_reserve_bytes": -5}})";
    const CliRun b = runCli(args({"memory", "--scenario", "-"}), &bad);
    QCOMPARE(b.exitCode, 1);
    QVERIFY2(QString::fromUtf8(b.err).contains(QStringLiteral("parallel.memory_reserve_bytes")), qPrintable(b.describe()));
}

void TestCliMemory::impossiblePlan()
{
    // 8-way TP of 12 heads: exit 1, the reasons in "errors".
    const CliRun r = runCli(args({"memory", "--preset", "paper-tp", "--tp", "8", "--dp", "1", "--json"}));
    QVERIFY2(r.finished && r.exitCode == 1, qPrintable(r.describe()));
    const json doc = parseJson(r.out);
    QVERIFY2(!doc.is_discarded(), qPrintable(r.describe()));
    QCOMPARE(doc["valid"].get<bool>(), false);
    QVERIFY(doc["errors"].dump().find("parallel.tp") != std::string::npos);
    // Standard error says as much, counting the document's reasons (as `plan --json` does).
    const std::size_t reasons = doc["errors"].size();
    QCOMPARE(QString::fromUtf8(r.err), QStringLiteral("tokenwire-cli: the plan cannot run (%1 %2 in \"errors\")\n")
                                           .arg(reasons)
                                           .arg(reasons == 1 ? QStringLiteral("reason") : QStringLiteral("reasons")));
    const CliRun t = runCli(args({"memory", "--preset", "paper-tp", "--tp", "8", "--dp", "1"}));
    QCOMPARE(t.exitCode, 1);
    QVERIFY2(QString::fromUtf8(t.err).contains(QStringLiteral("parallel.tp")), qPrintable(t.describe()));
}

void TestCliMemory::usageErrors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("fragments");
    QTest::newRow("no scenario") << args({"memory"}) << args({"missing scenario"});
    QTest::newRow("unknown option") << args({"memory", "--preset", "paper-dp", "--steps"})
                                    << args({"unknown option '--steps' for memory"});
    QTest::newRow("zero 4") << args({"memory", "--preset", "paper-dp", "--zero", "4"}) << args({"--zero"});
}

void TestCliMemory::usageErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, fragments);
    const CliRun r = runCli(arguments);
    const QString why = cliErrorMismatch(r, 2, fragments);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

QTEST_GUILESS_MAIN(TestCliMemory)
#include "tst_cli_memory.moc"
