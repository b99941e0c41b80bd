// Issue #10: what Open MPI 4.1's coll/tuned algorithms send (collective/openmpi.h), bytes derived by hand
// for small N, the exclusions, the dataset parser, and the committed dataset
// (data/measurements/openmpi-loopback.json, compiled in): every row within 2 % of its measured payload or
// an exclusion listed here with its reason.

#include "collective/openmpi.h"

#include <QTest>

#include <cmath>
#include <set>
#include <string>
#include <utility>

using namespace tw::collective;
namespace om = tw::collective::openmpi;

Q_DECLARE_METATYPE(tw::collective::Op)

namespace {

constexpr double MiB = 1024.0 * 1024.0;

// Exclusions of the committed dataset: (collective, Open MPI algorithm id) → why tokenwire does not
// predict it. The dataset test fails on an excluded row that is not listed here, so a new exclusion
// needs a reason in this table.
const std::map<std::pair<Op, int>, const char*> kExplainedExclusions{
    // none yet: the dataset measures only the algorithms openmpi.cpp models; the compositions
    // (allreduce 2, allgather 1, reducescatter 1) are left out of it and excluded by predict() below.
};

} // namespace

class TestOpenMpi : public QObject {
    Q_OBJECT

private slots:
    void names();
    void handDerived_data();
    void handDerived();
    void exclusions();
    void parseErrors_data();
    void parseErrors();
    void compareTolerance();
    void committedDataset();
};

void TestOpenMpi::names()
{
    QCOMPARE(om::algorithmName(Op::AllReduce, 6).value_or(""), std::string_view("rabenseifner"));
    QCOMPARE(om::algorithmName(Op::Reduce, 6).value_or(""), std::string_view("in-order_binary"));
    QCOMPARE(om::algorithmName(Op::AllToAll, 3).value_or(""), std::string_view("modified_bruck"));
    QVERIFY(!om::algorithmName(Op::AllReduce, 7));
    QVERIFY(!om::algorithmName(Op::AllReduce, 0)); // 0 is "ignore": not an algorithm
    QVERIFY(!om::algorithmName(Op::SendRecv, 1));
}

void TestOpenMpi::handDerived_data()
{
    QTest::addColumn<Op>("op");
    QTest::addColumn<int>("id");
    QTest::addColumn<int>("ranks");
    QTest::addColumn<double>("bytes");
    QTest::addColumn<double>("total");
    QTest::addColumn<double>("maxRank");

    const double M = MiB;
    // Ring AllReduce N = 4: reduce-scatter 3 steps of M/4, all-gather 3 of M/4: each rank 2·3/4·M = 1.5 M.
    QTest::newRow("allreduce ring N=4") << Op::AllReduce << 4 << 4 << M << 6 * M << 1.5 * M;
    // Segmented ring with the forced default segment size 0 runs plain ring: the same bytes.
    QTest::newRow("allreduce segmented_ring N=4") << Op::AllReduce << 5 << 4 << M << 6 * M << 1.5 * M;
    // Basic linear N = 3: ranks 1, 2 send M to 0 (2M), rank 0 sends M to 1 and 2 (2M); rank 0 sends 2M.
    QTest::newRow("allreduce basic_linear N=3") << Op::AllReduce << 1 << 3 << M << 4 * M << 2 * M;
    // Recursive doubling N = 4: 2 rounds, every rank sends M each round: 4·2·M = 8M, 2M per rank.
    QTest::newRow("allreduce recursive_doubling N=4") << Op::AllReduce << 3 << 4 << M << 8 * M << 2 * M;
    // Recursive doubling N = 3: fold in (rank 0 → 1, M), 1 round between new ranks {1, 2} (2M), fold out
    // (rank 1 → 0, M): 4M; rank 1 sends M + M = 2M.
    QTest::newRow("allreduce recursive_doubling N=3") << Op::AllReduce << 3 << 3 << M << 4 * M << 2 * M;
    // Rabenseifner N = 4 (power of two): 2(N−1)/N·M = 1.5M per rank, 6M in total.
    QTest::newRow("allreduce rabenseifner N=4") << Op::AllReduce << 6 << 4 << M << 6 * M << 1.5 * M;
    // Rabenseifner N = 3: Open MPI's fold: ranks 0 and 1 swap halves (M/2 each), rank 1 sends its reduced
    // half to 0 (M/2): 1.5M; core p' = 2 (ranks 0, 2): halving M/2 each + doubling M/2 each = 2M; fold out:
    // rank 0 sends M to rank 1. Total 4.5M. Rank 0 sends M/2 + M/2 + M/2 + M = 2.5M
    // (tokenwire's own fold would be 4M: the whole buffer once in, once out).
    QTest::newRow("allreduce rabenseifner N=3") << Op::AllReduce << 6 << 3 << M << 4.5 * M << 2.5 * M;
    // AllGather recursive doubling N = 3 falls back to Bruck: (N−1)·M = 2M of the 3-block output M.
    QTest::newRow("allgather recursive_doubling N=3") << Op::AllGather << 3 << 3 << 3.0 * 4096 << 2 * 3.0 * 4096 << 2.0 * 4096;
    // AllGather ring N = 8: each rank forwards 7 blocks of M/8.
    QTest::newRow("allgather ring N=8") << Op::AllGather << 4 << 8 << M << 7 * M << 7 * M / 8;
    // ReduceScatter ring N = 4 of an M input: 3 blocks of M/4 per rank.
    QTest::newRow("reducescatter ring N=4") << Op::ReduceScatter << 3 << 4 << M << 3 * M << 0.75 * M;
    // Broadcast chain N = 8: every non-root receives M once: 7M (whatever the chain count).
    QTest::newRow("broadcast chain N=8") << Op::Broadcast << 2 << 8 << M << 7 * M << M;
    // Broadcast basic linear N = 4: the root sends M three times.
    QTest::newRow("broadcast basic_linear N=4") << Op::Broadcast << 1 << 4 << M << 3 * M << 3 * M;
    // Reduce in-order binary N = 4, root 0: a tree rooted at rank 3 (3M), then rank 3 sends M to 0: 4M.
    // Rank 3 sends only that M; the tree's senders send M each: the most one rank sends is M.
    QTest::newRow("reduce in-order_binary N=4") << Op::Reduce << 6 << 4 << M << 4 * M << M;
    // Reduce binomial N = 8: 7 senders of M.
    QTest::newRow("reduce binomial N=8") << Op::Reduce << 5 << 8 << M << 7 * M << M;
    // All-to-All pairwise N = 4: 3 blocks of M/4 per rank: 0.75M, 3M in total.
    QTest::newRow("alltoall pairwise N=4") << Op::AllToAll << 2 << 4 << M << 3 * M << 0.75 * M;
    // All-to-All modified Bruck N = 4: step 0 forwards slots {1, 3}, step 1 slots {2, 3}: 4 blocks of
    // M/4 = M per rank, 4M in total (more than pairwise's 3M: slot 3 travels twice).
    QTest::newRow("alltoall modified_bruck N=4") << Op::AllToAll << 3 << 4 << M << 4 * M << M;
}

void TestOpenMpi::handDerived()
{
    QFETCH(Op, op);
    QFETCH(int, id);
    QFETCH(int, ranks);
    QFETCH(double, bytes);
    QFETCH(double, total);
    QFETCH(double, maxRank);
    const om::Prediction p = om::predict({op, id, static_cast<std::uint64_t>(ranks), bytes});
    QVERIFY2(p.modelled, p.how.c_str());
    QCOMPARE(p.payloadBytes, total);
    QCOMPARE(p.maxRankSentBytes, maxRank);
    QVERIFY(!p.how.empty());
}

void TestOpenMpi::exclusions()
{
    // The compositions whose inner algorithms Open MPI's fixed decision rules pick are not one schedule.
    const om::Prediction nonoverlapping = om::predict({Op::AllReduce, 2, 4, MiB});
    QVERIFY(!nonoverlapping.modelled);
    QCOMPARE(nonoverlapping.algorithmName, std::string("nonoverlapping"));
    QVERIFY(nonoverlapping.how.find("decision rules") != std::string::npos);
    QVERIFY(!om::predict({Op::AllGather, 1, 4, MiB}).modelled);
    QVERIFY(!om::predict({Op::ReduceScatter, 1, 4, MiB}).modelled);
    // The two_proc algorithms are for 2 ranks only (Open MPI 4.1.4 fails the call on N = 3, seen measuring).
    QVERIFY(om::predict({Op::AllToAll, 5, 2, MiB}).modelled);
    QVERIFY(!om::predict({Op::AllToAll, 5, 4, MiB}).modelled);
    QVERIFY(om::predict({Op::AllGather, 6, 2, MiB}).modelled);
    QVERIFY(!om::predict({Op::AllGather, 6, 3, MiB}).modelled);
    // An id Open MPI does not have.
    const om::Prediction unknown = om::predict({Op::Broadcast, 12, 4, MiB});
    QVERIFY(!unknown.modelled);
    QVERIFY(unknown.algorithmName.empty());
}

void TestOpenMpi::parseErrors_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("path");
    const QString row = QStringLiteral(R"({"library":"openmpi","op":"allreduce","algorithm_id":4,"ranks":2,"bytes":1024,"payload_bytes":2048})");
    auto doc = [](const QString& rows) { return QStringLiteral(R"({"schema":"tokenwire-measurements/1","rows":[%1]})").arg(rows); };
    QTest::newRow("not json") << QStringLiteral("{") << QString();
    QTest::newRow("no rows") << QStringLiteral(R"({"schema":"tokenwire-measurements/1"})") << QStringLiteral("rows");
    QTest::newRow("other schema") << QStringLiteral(R"({"schema":"x","rows":[]})") << QStringLiteral("schema");
    QTest::newRow("bad op") << doc(QString(row).replace(QStringLiteral("allreduce"), QStringLiteral("allsum")))
                            << QStringLiteral("rows[0].op");
    QTest::newRow("fractional ranks") << doc(QString(row).replace(QStringLiteral("\"ranks\":2"), QStringLiteral("\"ranks\":2.5")))
                                      << QStringLiteral("rows[0].ranks");
    QTest::newRow("no payload") << doc(row + QStringLiteral(",") + QString(row).replace(QStringLiteral(",\"payload_bytes\":2048"), QString()))
                                << QStringLiteral("rows[1].payload_bytes");
}

void TestOpenMpi::parseErrors()
{
    QFETCH(QString, json);
    QFETCH(QString, path);
    const auto parsed = om::parseDataset(json.toStdString());
    QVERIFY(!parsed.ok());
    QCOMPARE(QString::fromStdString(parsed.error().where.jsonPath), path);
}

void TestOpenMpi::compareTolerance()
{
    // Ring AllReduce N = 2 of 1,000 B predicts 2 × 1,000 = 2,000 B: 2,039 B is +1.95 % (passes),
    // 2,041 B is +2.05 % (a miss); allreduce 2 is excluded whatever it measured.
    auto row = [](int id, double payload) {
        om::MeasuredRow r;
        r.library = "openmpi";
        r.measuredCase = {Op::AllReduce, id, 2, 1000};
        r.payloadBytes = payload;
        return r;
    };
    const auto c = om::compare({row(4, 2039), row(4, 2041), row(2, 99999)});
    QCOMPARE(c.size(), std::size_t(3));
    QCOMPARE(c[0].prediction.payloadBytes, 2000.0);
    QVERIFY(c[0].pass);
    QVERIFY(std::fabs(c[0].error - 0.0195) < 1e-12);
    QVERIFY(!c[1].pass);
    QVERIFY(!c[1].excluded);
    QVERIFY(c[2].excluded);
    QVERIFY(c[2].pass);
}

void TestOpenMpi::committedDataset()
{
    const auto parsed = om::parseDataset(om::embeddedDataset());
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().toString().c_str());
    const auto& rows = parsed.value();
    // The issue's grid: N ∈ {2, 3, 4, 8} and S ∈ {1, 16, 64} MiB, every operation measured.
    std::set<std::uint64_t> ranks;
    std::set<Op> ops;
    std::set<double> sizes;
    for (const auto& r : rows) {
        ranks.insert(r.measuredCase.ranks);
        ops.insert(r.measuredCase.op);
        if (r.measuredCase.op == Op::AllReduce)
            sizes.insert(r.measuredCase.bytes);
    }
    QCOMPARE(ranks, (std::set<std::uint64_t>{2, 3, 4, 8}));
    QCOMPARE(sizes, (std::set<double>{MiB, 16 * MiB, 64 * MiB}));
    QCOMPARE(ops.size(), std::size_t(6));
    QVERIFY(rows.size() >= 200);

    int checked = 0;
    for (const auto& c : om::compare(rows)) {
        const auto& m = c.row.measuredCase;
        const std::string what = std::string(toString(m.op)) + " " + std::to_string(m.algorithmId) + " "
            + c.prediction.algorithmName + " N=" + std::to_string(m.ranks) + " bytes=" + std::to_string(std::int64_t(m.bytes));
        if (c.excluded) {
            QVERIFY2(kExplainedExclusions.count({m.op, m.algorithmId}) == 1,
                     ("excluded but not explained in this test: " + what + " (" + c.prediction.how + ")").c_str());
            continue;
        }
        QVERIFY2(std::fabs(c.error) <= om::kTolerance,
                 (what + ": measured " + std::to_string(c.row.payloadBytes) + " B, predicted "
                  + std::to_string(c.prediction.payloadBytes) + " B").c_str());
        ++checked;
    }
    QVERIFY(checked > 0);
}

QTEST_APPLESS_MAIN(TestOpenMpi)
#include "tst_openmpi.moc"
