// tokenwire-cli collective from the outside: the counts of docs/model.md §4 through the built
// binary (ring and naive AllReduce, derived by hand in the comments), size/time/rate parsing, N = 1,
// the --steps JSON shape, --list, and every refused input with its exact message and exit status.

#include <QTest>

#include "clirunner.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>
#include <string>

using json = nlohmann::json;

namespace {

QString s(const char* utf8)
{
    return QString::fromUtf8(utf8);
}

bool near(double a, double b)
{
    return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b));
}

// Runs a command that must succeed with JSON on standard output.
json runJson(const QStringList& arguments, QString* why)
{
    const CliRun r = runCli(arguments);
    if (!r.finished || r.exitCode != 0 || !r.err.isEmpty()) {
        *why = r.describe();
        return {};
    }
    json doc = parseJson(r.out);
    if (doc.is_discarded())
        *why = QStringLiteral("not JSON:\n") + QString::fromUtf8(r.out.left(3000));
    return doc;
}

const QString kOps = QStringLiteral("allreduce, reducescatter, allgather, broadcast, reduce, alltoall or sendrecv");
const QString kAllReduceAlgorithms = QStringLiteral(
    "flat-ring, naive, reduce-broadcast, recursive-doubling, rabenseifner, binary-tree, double-binary-tree or hierarchical");
const QString kTooLarge = QStringLiteral("is too large: the most is 9,007,199,254,740,991 B (2^53 − 1, about 9 PB)");

} // namespace

class TestCliCollective : public QObject {
    Q_OBJECT

private slots:
    void ringAllReduceJson();
    void naiveAllReduceTotal();
    void sizesParsed_data();
    void sizesParsed();
    void alphaAndBandwidth_data();
    void alphaAndBandwidth();
    void oneRankHasNoBusbw();
    void stepsJsonShape();
    void table();
    void tableSteps();
    void operationNamesInAnyCase();
    void list();
    void listJson();
    void help();
    void usageErrors_data();
    void usageErrors();
    void refusedSpecs_data();
    void refusedSpecs();
};

void TestCliCollective::ringAllReduceJson()
{
    QString why;
    const json doc = runJson(args({"collective", "--op", "allreduce", "--algo", "ring", "--ranks", "8", "--bytes", "256MB",
                                   "--json"}),
                             &why);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QCOMPARE(doc["op"].get<std::string>(), std::string("allreduce"));
    // "ring" is read as the textbook ring, whose name is flat-ring (NCCL's multi-channel ring took "ring").
    QCOMPARE(doc["algorithm"].get<std::string>(), std::string("flat-ring"));
    QCOMPARE(doc["ranks"].get<int>(), 8);
    QCOMPARE(doc["bytes"].get<double>(), 256e6);
    QVERIFY(doc["bytes"].is_number_integer()); // sizes in JSON are plain bytes
    // Ring (Patarasuk & Yuan): reduce-scatter N−1 = 7 steps + all-gather 7 steps = 14; each step every
    // rank sends one slice of M/N = 32e6 B, so a rank sends 14 · 32e6 = 2·7/8·256e6 = 448e6 B.
    QCOMPARE(doc["steps"].get<int>(), 14);
    QCOMPARE(doc["transfers"].get<int>(), 14 * 8);
    QCOMPARE(doc["per_rank_sent_bytes"].size(), std::size_t(8));
    QCOMPARE(doc["per_rank_received_bytes"].size(), std::size_t(8));
    for (int r = 0; r < 8; ++r) {
        QCOMPARE(doc["per_rank_sent_bytes"][r].get<double>(), 448e6);
        QCOMPARE(doc["per_rank_received_bytes"][r].get<double>(), 448e6);
    }
    QCOMPARE(doc["max_rank_sent_bytes"].get<double>(), 448e6);
    QCOMPARE(doc["total_bytes"].get<double>(), 8 * 448e6); // 3.584e9
    // Hockney α–β at the defaults α = 10 µs, β = 10 Gb/s = 1.25e9 B/s: every step's largest message is
    // 32e6 B → 32e6 / 1.25e9 = 0.0256 s; + α = 0.02561 s; × 14 steps = 0.35854 s.
    QCOMPARE(doc["alpha_s"].get<double>(), 10e-6);
    QCOMPARE(doc["bandwidth_bytes_per_s"].get<double>(), 1.25e9);
    QVERIFY2(near(doc["time_s"].get<double>(), 0.35854), doc["time_s"].dump().c_str());
    // nccl-tests: algbw = M / t = 256e6 / 0.35854 ≈ 714.0 MB/s; busbw = algbw · 2(N−1)/N = · 1.75 ≈ 1.2495 GB/s.
    QCOMPARE(doc["busbw_factor"].get<double>(), 1.75);
    QVERIFY(near(doc["algbw"].get<double>(), 256e6 / 0.35854));
    QVERIFY(near(doc["busbw"].get<double>(), 256e6 / 0.35854 * 1.75));
    QVERIFY(doc["root"].is_null());
    const json& cf = doc["closed_form"];
    QVERIFY2(cf.is_object(), doc.dump().c_str());
    QCOMPARE(cf["per_rank_sent_bytes"].get<double>(), 448e6);
    QCOMPARE(cf["steps"].get<int>(), 14);
    QVERIFY(cf["matches"].get<bool>());
    QVERIFY(cf["differences"].empty());
    QVERIFY(!cf["formula"].get<std::string>().empty());
    QVERIFY(!doc.contains("schedule")); // only with --steps
}

void TestCliCollective::naiveAllReduceTotal()
{
    QString why;
    const json doc = runJson(args({"collective", "--op", "allreduce", "--algo", "naive", "--ranks", "8", "--bytes", "256MB",
                                   "--json"}),
                             &why);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    // Direct exchange: every rank sends M to each of the N−1 others: (N−1)·M = 7 · 256e6 = 1.792e9 per
    // rank, N(N−1)·M = 56 · 256e6 = 1.4336e10 in total, N−1 = 7 steps (one partner per step).
    QCOMPARE(doc["total_bytes"].get<double>(), 8 * 7 * 256e6);
    QCOMPARE(doc["max_rank_sent_bytes"].get<double>(), 7 * 256e6);
    QCOMPARE(doc["steps"].get<int>(), 7);
    // Each step sends whole buffers of M: 7 · (10 µs + 256e6 / 1.25e9 s) = 7 · 0.20481 = 1.43367 s.
    QVERIFY2(near(doc["time_s"].get<double>(), 1.43367), doc["time_s"].dump().c_str());
    QVERIFY(doc["closed_form"]["matches"].get<bool>());
}

void TestCliCollective::sizesParsed_data()
{
    QTest::addColumn<QStringList>("bytesArgs");
    QTest::addColumn<double>("bytes");
    QTest::newRow("48MiB") << args({"--bytes", "48MiB"}) << 48.0 * 1048576; // 50,331,648
    QTest::newRow("256MB") << args({"--bytes", "256MB"}) << 256e6;
    QTest::newRow("plain bytes") << args({"--bytes", "4096"}) << 4096.0;
    QTest::newRow("inline with a space") << args({"--bytes=1 GiB"}) << 1073741824.0;
    QTest::newRow("1.5GB") << args({"--bytes", "1.5GB"}) << 1.5e9;
    QTest::newRow("2KiB") << args({"--bytes", "2KiB"}) << 2048.0;
    QTest::newRow("zero") << args({"--bytes", "0"}) << 0.0;
}

void TestCliCollective::sizesParsed()
{
    QFETCH(QStringList, bytesArgs);
    QFETCH(double, bytes);
    QString why;
    const json doc = runJson(args({"collective", "--op", "allreduce", "--ranks", "4", "--json"}) + bytesArgs, &why);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QCOMPARE(doc["bytes"].get<double>(), bytes);
    // Ring on 4 ranks: 2·3/4·M per rank (M divisible by 4 in every row).
    QCOMPARE(doc["max_rank_sent_bytes"].get<double>(), 1.5 * bytes);
}

void TestCliCollective::alphaAndBandwidth_data()
{
    QTest::addColumn<QStringList>("linkArgs");
    QTest::addColumn<double>("alpha");
    QTest::addColumn<double>("bandwidth");
    QTest::newRow("defaults") << QStringList() << 10e-6 << 1.25e9;
    QTest::newRow("25GB/s, no latency") << args({"--alpha", "0", "--bandwidth", "25GB/s"}) << 0.0 << 25e9;
    QTest::newRow("100 Gb/s, 5us") << args({"--alpha", "5us", "--bandwidth", "100 Gb/s"}) << 5e-6 << 12.5e9;
    QTest::newRow("400Gbit/s, 1.5µs") << args({"--alpha=1.5µs", "--bandwidth=400Gbit/s"}) << 1.5e-6 << 50e9;
    QTest::newRow("plain B/s, 2ms") << args({"--alpha", "2ms", "--bandwidth", "1.25e9"}) << 2e-3 << 1.25e9;
}

void TestCliCollective::alphaAndBandwidth()
{
    QFETCH(QStringList, linkArgs);
    QFETCH(double, alpha);
    QFETCH(double, bandwidth);
    QString why;
    const json doc = runJson(args({"collective", "--op", "allreduce", "--ranks", "8", "--bytes", "256MB", "--json"}) + linkArgs, &why);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QCOMPARE(doc["alpha_s"].get<double>(), alpha);
    QCOMPARE(doc["bandwidth_bytes_per_s"].get<double>(), bandwidth);
    // Ring, 14 steps of one 32e6-B slice: 14 · (α + 32e6 / β).
    QVERIFY2(near(doc["time_s"].get<double>(), 14 * (alpha + 32e6 / bandwidth)), doc["time_s"].dump().c_str());
}

void TestCliCollective::oneRankHasNoBusbw()
{
    QString why;
    const json doc = runJson(args({"collective", "--op", "allreduce", "--ranks", "1", "--bytes", "48MiB", "--json"}), &why);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    // nccl-tests leave busbw undefined for N = 1: nothing crosses a wire.
    QVERIFY(doc.contains("busbw_factor"));
    QVERIFY(doc["busbw_factor"].is_null());
    QVERIFY(doc["busbw"].is_null());
    QVERIFY(doc["algbw"].is_null());
    QCOMPARE(doc["steps"].get<int>(), 0);
    QCOMPARE(doc["total_bytes"].get<double>(), 0.0);
    QVERIFY(doc["per_rank_sent_bytes"] == json::array({0}));

    const CliRun table = runCli(args({"collective", "--op", "allreduce", "--ranks", "1", "--bytes", "48MiB"}));
    QVERIFY2(table.finished && table.exitCode == 0, qPrintable(table.describe()));
    const QString out = QString::fromUtf8(table.out);
    QVERIFY2(out.contains(QStringLiteral("busbw                      n/a (one rank)")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("N = 1 rank, M = 50.33 MB = 50,331,648 B")), qPrintable(out));
}

void TestCliCollective::stepsJsonShape()
{
    QString why;
    const json doc = runJson(args({"collective", "--op", "allreduce", "--ranks", "3", "--bytes", "3", "--steps", "--json"}), &why);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    // Ring on N = 3, M = 3 B: three 1-byte slices, 2(N−1) = 4 steps of 3 transfers.
    QCOMPARE(doc["steps"].get<int>(), 4);
    const json& chunks = doc["chunks"];
    QVERIFY2(chunks.is_array() && chunks.size() == 3, doc.dump().c_str());
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        QCOMPARE(chunks[i]["index"].get<std::size_t>(), i);
        QCOMPARE(chunks[i]["bytes"].get<double>(), 1.0);
        QCOMPARE(chunks[i]["offset"].get<double>(), double(i));
    }
    const json& schedule = doc["schedule"];
    QVERIFY2(schedule.is_array() && schedule.size() == 4, doc.dump().c_str());
    std::vector<double> sent(3, 0), received(3, 0);
    double total = 0;
    for (std::size_t s = 0; s < schedule.size(); ++s) {
        const json& step = schedule[s];
        QCOMPARE(step["step"].get<std::size_t>(), s + 1); // numbered from 1
        QVERIFY(step["phase"].is_string() && !step["phase"].get<std::string>().empty());
        QCOMPARE(step["transfers"].size(), std::size_t(3));
        std::set<int> senders, receivers;
        for (const json& t : step["transfers"]) {
            QCOMPARE(t.size(), std::size_t(5));
            for (const char* key : {"src", "dst", "chunk", "bytes", "reduce"})
                QVERIFY2(t.contains(key), t.dump().c_str());
            const int src = t["src"].get<int>();
            const int dst = t["dst"].get<int>();
            QVERIFY(src >= 0 && src < 3 && dst >= 0 && dst < 3 && src != dst);
            QVERIFY(t["chunk"].get<int>() >= 0 && t["chunk"].get<int>() < 3);
            // Reduce-scatter first (the receiver adds), then all-gather (the receiver copies).
            QCOMPARE(t["reduce"].get<bool>(), s < 2);
            QVERIFY(senders.insert(src).second);   // one send per rank per step
            QVERIFY(receivers.insert(dst).second); // one receive per rank per step
            sent[std::size_t(src)] += t["bytes"].get<double>();
            received[std::size_t(dst)] += t["bytes"].get<double>();
            total += t["bytes"].get<double>();
        }
    }
    // The schedule printed is the one counted.
    for (int r = 0; r < 3; ++r) {
        QCOMPARE(sent[std::size_t(r)], doc["per_rank_sent_bytes"][r].get<double>());
        QCOMPARE(received[std::size_t(r)], doc["per_rank_received_bytes"][r].get<double>());
    }
    QCOMPARE(total, doc["total_bytes"].get<double>());
}

void TestCliCollective::table()
{
    const CliRun r = runCli(args({"collective", "--op", "allreduce", "--algo", "ring", "--ranks", "8", "--bytes", "256MB"}));
    QVERIFY2(r.finished && r.exitCode == 0 && r.err.isEmpty(), qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    for (const char* line : {"Collective:  AllReduce, flat-ring (N = 8 ranks, M = 256 MB = 256,000,000 B)",
                             "Link model:  α = 10 µs per message, β = 10 Gb/s (1.25 GB/s)",
                             "Steps                      14\n", "Transfers                  112\n",
                             "Total bytes on the wire    3.584 GB (3,584,000,000 B)\n",
                             "Most bytes one rank sends  448 MB (448,000,000 B)\n",
                             "Sent per rank              every rank: 448 MB\n",
                             "Received per rank          every rank: 448 MB\n", "Time (α–β)                 359 ms\n",
                             "algbw = M / time           714 MB/s\n",
                             "busbw = algbw × factor     1.25 GB/s (factor 1.75)\n", ": matches\n"})
        QVERIFY2(out.contains(QString::fromUtf8(line)), qPrintable(QString::fromUtf8(line) + QStringLiteral("\n---\n") + out));
    QVERIFY(!out.contains(QStringLiteral("Step 1")));

    // Binary units, and a per-rank list abbreviated for many ranks with uneven shares.
    const CliRun iec = runCli(args({"collective", "--op", "alltoall", "--ranks", "40", "--bytes", "1001", "--units", "iec"}));
    QVERIFY2(iec.finished && iec.exitCode == 0, qPrintable(iec.describe()));
    const QString iecOut = QString::fromUtf8(iec.out);
    QVERIFY2(iecOut.contains(QStringLiteral("(1.164 GiB/s)")), qPrintable(iecOut));
    QVERIFY2(iecOut.contains(QStringLiteral(", …, rank 38: ")) && iecOut.contains(QStringLiteral("(40 ranks; least ")),
             qPrintable(iecOut));
}

void TestCliCollective::tableSteps()
{
    const CliRun r = runCli(args({"collective", "--op", "allreduce", "--ranks", "3", "--bytes", "3", "--steps"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains(QStringLiteral("Chunks (3):\n  #0  offset 0 B, 1 B\n")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("Schedule (4 steps;")), qPrintable(out));
    for (const char* s : {"Step 1 of 4", "Step 2 of 4", "Step 3 of 4", "Step 4 of 4"})
        QVERIFY2(out.contains(QString::fromUtf8(s)), s);
    QCOMPARE(out.count(QStringLiteral(" → ")), 12);
    QCOMPARE(out.count(QStringLiteral("  reduce\n")), 6);
    QCOMPARE(out.count(QStringLiteral("  copy\n")), 6);
}

void TestCliCollective::operationNamesInAnyCase()
{
    for (const char* op : {"AllReduce", "all-reduce", "ALL_REDUCE"}) {
        QString why;
        const json doc = runJson(args({"collective", "--op", op, "--algo", "Recursive_Doubling", "--ranks", "4", "--bytes",
                                       "4", "--json"}),
                                 &why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(doc["op"].get<std::string>(), std::string("allreduce"));
        QCOMPARE(doc["algorithm"].get<std::string>(), std::string("recursive-doubling"));
    }
    QString why;
    const json doc = runJson(args({"collective", "--op", "All-to-All", "--ranks", "4", "--bytes", "4", "--json"}), &why);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QCOMPARE(doc["op"].get<std::string>(), std::string("alltoall"));
    QCOMPARE(doc["algorithm"].get<std::string>(), std::string("pairwise")); // the default
}

void TestCliCollective::list()
{
    const CliRun r = runCli(args({"collective", "--list"}));
    QVERIFY2(r.finished && r.exitCode == 0 && r.err.isEmpty(), qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    for (const char* header : {"allreduce — AllReduce\n", "reducescatter — ReduceScatter\n", "allgather — AllGather\n",
                               "broadcast — Broadcast\n", "reduce — Reduce\n", "alltoall — All-to-All\n",
                               "sendrecv — Send/Recv\n"})
        QVERIFY2(out.contains(QString::fromUtf8(header)), header);
    // The default first, marked, under its operation.
    for (const char* pair : {"AllReduce\n  flat-ring (default) ", "ReduceScatter\n  flat-ring (default) ", "AllGather\n  flat-ring (default) ",
                             "Broadcast\n  binomial (default) ", "Reduce\n  binomial (default) ",
                             "All-to-All\n  pairwise (default) ", "Send/Recv\n  direct (default) "})
        QVERIFY2(out.contains(QString::fromUtf8(pair)), pair);
    for (const char* algorithm : {"naive", "reduce-broadcast", "recursive-doubling", "rabenseifner", "binary-tree",
                                  "double-binary-tree", "hierarchical", "recursive-halving", "bruck", "flat", "chain"})
        QVERIFY2(out.contains(QStringLiteral("\n  ") + QString::fromUtf8(algorithm) + QLatin1Char(' ')), algorithm);
    QCOMPARE(out.count(QStringLiteral("(default)")), 7);
    QVERIFY2(out.contains(QStringLiteral("Patarasuk")), qPrintable(out)); // collective::describe's sentence

    const CliRun one = runCli(args({"collective", "--list", "--op", "broadcast"}));
    QVERIFY2(one.finished && one.exitCode == 0, qPrintable(one.describe()));
    const QString oneOut = QString::fromUtf8(one.out);
    QVERIFY2(oneOut.startsWith(QStringLiteral("broadcast — Broadcast\n  binomial (default) ")), qPrintable(oneOut));
    QCOMPARE(oneOut.count(QLatin1Char('\n')), 4);
}

void TestCliCollective::listJson()
{
    QString why;
    const json doc = runJson(args({"collective", "--list", "--json"}), &why);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    const json& ops = doc["operations"];
    QCOMPARE(ops.size(), std::size_t(7));
    QCOMPARE(ops[0]["op"].get<std::string>(), std::string("allreduce"));
    QCOMPARE(ops[0]["name"].get<std::string>(), std::string("AllReduce"));
    QCOMPARE(ops[0]["algorithms"].size(), std::size_t(8));
    for (const json& op : ops) {
        QVERIFY(!op["algorithms"].empty());
        for (std::size_t i = 0; i < op["algorithms"].size(); ++i) {
            const json& a = op["algorithms"][i];
            QCOMPARE(a["default"].get<bool>(), i == 0);
            QVERIFY(!a["description"].get<std::string>().empty());
        }
    }
}

void TestCliCollective::help()
{
    const CliRun r = runCli(args({"collective", "--help"}));
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.startsWith(QStringLiteral("Usage: tokenwire-cli collective --op OP")), qPrintable(out));
    QVERIFY(out.contains(QStringLiteral("(default 10us)")));
    QVERIFY(out.contains(QStringLiteral("(default 10Gbps = 1.25 GB/s)")));
    const CliRun top = runCli(args({"--help"}));
    QVERIFY(QString::fromUtf8(top.out).contains(QStringLiteral("\n  collective   ")));
}

void TestCliCollective::usageErrors_data()
{
    // Exit 2, "tokenwire-cli: OPTION: message" on standard error, nothing on standard output.
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    const QStringList base = args({"collective", "--op", "allreduce"});
    QTest::newRow("ranks 0") << base + args({"--ranks", "0", "--bytes", "1"}) << "--ranks: '0' is out of range (1…1,048,576)";
    QTest::newRow("ranks text") << base + args({"--ranks", "eight", "--bytes", "1"})
                                << "--ranks: 'eight' is not a number; expected a whole number";
    QTest::newRow("ranks too many") << base + args({"--ranks", "2000000", "--bytes", "1"})
                                    << "--ranks: '2000000' is out of range (1…1,048,576)";
    QTest::newRow("bytes overflow") << base + args({"--ranks", "8", "--bytes", "1e30GB"}) << s("--bytes: '1e30GB' ") + kTooLarge;
    QTest::newRow("bytes 2^53") << base + args({"--ranks", "8", "--bytes", "9007199254740992"})
                                << s("--bytes: '9007199254740992' ") + kTooLarge;
    QTest::newRow("bytes fraction") << base + args({"--ranks", "8", "--bytes", "1.5B"})
                                    << "--bytes: '1.5B' is not a whole number of bytes (1.5 B)";
    QTest::newRow("bytes negative") << base + args({"--ranks", "8", "--bytes", "-1MB"}) << "--bytes: '-1MB' is negative; a size must be ≥ 0";
    QTest::newRow("bytes bits") << base + args({"--ranks", "8", "--bytes", "8Gb"})
                                << "--bytes: '8Gb' has an unknown unit 'Gb' (b is bits, a size is in bytes: B; did you mean GB?); "
                                   "the units are B, kB (or KB), MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB";
    QTest::newRow("bytes empty") << base + args({"--ranks", "8", "--bytes="})
                                 << "--bytes: empty value; expected a size such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("unknown op") << args({"collective", "--op", "allreduse", "--ranks", "8", "--bytes", "1"})
                                << s("--op: 'allreduse' is not an operation (did you mean allreduce?); expected ") + kOps;
    QTest::newRow("unknown op far") << args({"collective", "--op", "gossip", "--ranks", "8", "--bytes", "1"})
                                    << s("--op: 'gossip' is not an operation; expected ") + kOps;
    QTest::newRow("unknown algorithm") << base + args({"--algo", "rign", "--ranks", "8", "--bytes", "1"})
                                       << s("--algo: 'rign' is not an algorithm; allreduce has ") + kAllReduceAlgorithms;
    QTest::newRow("algorithm part") << base + args({"--algo", "tree", "--ranks", "8", "--bytes", "1"})
                                    << s("--algo: 'tree' is not an algorithm (did you mean binary-tree or double-binary-tree?); "
                                       "allreduce has ") + kAllReduceAlgorithms;
    QTest::newRow("algorithm of another op misspelled") << args({"collective", "--op", "broadcast", "--algo", "bruk", "--ranks", "8", "--bytes", "1"})
                                                        << "--algo: 'bruk' is not an algorithm (did you mean bruck?); broadcast has binomial, flat or chain";
    QTest::newRow("algorithm the op lacks") << args({"collective", "--op", "broadcast", "--algo", "ring", "--ranks", "8", "--bytes", "1"})
                                            << "--algo: broadcast has no flat-ring algorithm; it has binomial, flat or chain "
                                               "(see tokenwire-cli collective --list)";
    QTest::newRow("algo before op") << args({"collective", "--algo", "rabenseifner", "--op", "alltoall", "--ranks", "8", "--bytes", "1"})
                                    << "--algo: alltoall has no rabenseifner algorithm; it has pairwise or bruck "
                                       "(see tokenwire-cli collective --list)";
    QTest::newRow("alpha negative") << base + args({"--ranks", "8", "--bytes", "1", "--alpha", "-1us"})
                                    << "--alpha: '-1us' is negative; a time must be ≥ 0";
    QTest::newRow("alpha unit") << base + args({"--ranks", "8", "--bytes", "1", "--alpha", "10usec"})
                                << "--alpha: '10usec' has an unknown unit 'usec'; the units are s, ms, us (or µs), ns";
    QTest::newRow("bandwidth zero") << base + args({"--ranks", "8", "--bytes", "1", "--bandwidth", "0Gbps"})
                                    << "--bandwidth: '0Gbps' is zero; a bandwidth must be > 0";
    QTest::newRow("bandwidth without /s") << base + args({"--ranks", "8", "--bytes", "1", "--bandwidth", "10GB"})
                                          << "--bandwidth: '10GB' has an unknown unit 'GB'; the units are bytes: B/s";
    QTest::newRow("missing op") << args({"collective", "--ranks", "8", "--bytes", "1"})
                                << s("--op: missing; collective needs the operation: ") + kOps + s(" (or --list)");
    QTest::newRow("missing ranks") << base + args({"--bytes", "1"})
                                   << "--ranks: missing; collective needs the number of ranks N (1…1,048,576)";
    QTest::newRow("missing bytes") << base + args({"--ranks", "8"})
                                   << "--bytes: missing; collective needs the buffer size M, such as 256MB, 48MiB or 4096 (bytes)";
    QTest::newRow("missing value") << base + args({"--ranks", "8", "--bytes"}) << "--bytes: missing value";
    QTest::newRow("ranks twice") << base + args({"--ranks", "8", "--ranks", "4", "--bytes", "1"}) << "--ranks: given twice";
    QTest::newRow("list with a spec") << args({"collective", "--list", "--ranks", "8"})
                                      << "--ranks: --list prints the operations and their algorithms; it takes only --op and --json";
    QTest::newRow("json with a value") << base + args({"--ranks", "8", "--bytes", "1", "--json=yes"}) << "--json: takes no value";
    QTest::newRow("root text") << base + args({"--ranks", "8", "--bytes", "1", "--root", "-1"})
                               << "--root: '-1' is out of range (0…1,048,575)";
    QTest::newRow("chunks 0") << base + args({"--ranks", "8", "--bytes", "1", "--chunks", "0"})
                              << "--chunks: '0' is out of range (1…1,048,576)";
    QTest::newRow("unknown option") << base + args({"--ranks", "8", "--bytes", "1", "--preset", "x"})
                                    << "unknown option '--preset' for collective (see --help)";
    QTest::newRow("positional") << base + args({"--ranks", "8", "--bytes", "1", "extra"})
                                << "unexpected argument 'extra': collective takes options only (see --help)";
}

void TestCliCollective::usageErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const CliRun r = runCli(arguments);
    const QString why = cliErrorMismatch(r, 2, {QStringLiteral("tokenwire-cli: ") + message});
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QVERIFY2(r.err.endsWith("\nTry 'tokenwire-cli --help'.\n"), r.err.constData());
}

void TestCliCollective::refusedSpecs_data()
{
    // collective::validate refuses: exit 1, each reason on its own "tokenwire-cli: --option: …" line,
    // then a summary line.
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("fragments");
    QTest::newRow("sendrecv on 3 ranks") << args({"collective", "--op", "sendrecv", "--ranks", "3", "--bytes", "1"})
                                         << args({"tokenwire-cli: --ranks: ",
                                                  "tokenwire-cli: Send/Recv with direct cannot be scheduled (1 reason)\n"});
    QTest::newRow("root out of range") << args({"collective", "--op", "broadcast", "--root", "9", "--ranks", "8", "--bytes", "1"})
                                       << args({"tokenwire-cli: --root: ",
                                                "tokenwire-cli: Broadcast with binomial cannot be scheduled (1 reason)\n"});
    QTest::newRow("ranks per node") << args({"collective", "--op", "allreduce", "--algo", "hierarchical", "--ranks-per-node", "3",
                                             "--ranks", "8", "--bytes", "1"})
                                    << args({"tokenwire-cli: --ranks-per-node: ",
                                             "tokenwire-cli: AllReduce with hierarchical cannot be scheduled (1 reason)\n"});
    // Every transfer is generated: beyond 16,384 ranks that would take hours, so core refuses.
    QTest::newRow("too many ranks") << args({"collective", "--op", "allreduce", "--ranks", "20000", "--bytes", "1MB"})
                                    << args({"tokenwire-cli: --ranks: 20,000 is more than this program schedules (16,384)"});
}

void TestCliCollective::refusedSpecs()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, fragments);
    const CliRun r = runCli(arguments);
    const QString why = cliErrorMismatch(r, 1, fragments);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

QTEST_GUILESS_MAIN(TestCliCollective)
#include "tst_cli_collective.moc"
