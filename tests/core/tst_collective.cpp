// Stage 4 (collective schedules): the data checker over every operation × algorithm for N = 1…17, 32,
// 64, 100 and even, uneven and tiny payloads; broken schedules the checker must catch; bytes and
// steps from count() against docs/model.md §4's closed forms and hand derivations with uneven chunks;
// Hockney α–β times and nccl-tests bus bandwidth; validation messages; the Schedule API.

#include "../support/testsupport.h"
#include "../support/testsupport.h"
#include "collective/algorithms_p.h"
#include "collective/schedule.h"

#include <QTest>

#include <set>
#include <string>
#include <vector>

using namespace tw::collective;
using tw::test::contains;
using tw::test::joined;

Q_DECLARE_METATYPE(Op)
Q_DECLARE_METATYPE(Algorithm)
Q_DECLARE_METATYPE(std::string)
Q_DECLARE_METATYPE(ScheduleSpec)
Q_DECLARE_METATYPE(tw::collective::detail::Defect)

namespace {

using tw::test::specOf;

std::string name(const ScheduleSpec& s)
{
    return std::string(toString(s.op)) + "/" + std::string(toString(s.algorithm)) + " N=" + std::to_string(s.ranks)
        + " M=" + std::to_string(static_cast<long long>(s.bytes)) + " root=" + std::to_string(s.root)
        + " per-node=" + std::to_string(s.ranksPerNode) + " chunks=" + std::to_string(s.pipelineChunks);
}

const std::vector<Op> kOps{Op::AllReduce, Op::ReduceScatter, Op::AllGather, Op::Broadcast,
                           Op::Reduce,    Op::AllToAll,      Op::SendRecv};

} // namespace

class TestCollective : public QObject {
    Q_OBJECT

private slots:
    void differencesFromClosedForm();
    void checkerPasses_data();
    void checkerPasses();
    void checkerCatchesBrokenSchedules_data();
    void checkerCatchesBrokenSchedules();
    void countsMatchClosedForms_data();
    void countsMatchClosedForms();
    void countsByHand_data();
    void countsByHand();
    void alphaBetaTimes_data();
    void alphaBetaTimes();
    void busBandwidth();
    void oneRank();
    void zeroBytes();
    void treesPipeline();
    void validation_data();
    void validation();
    void scheduleApi();
    void names();
};

// Every algorithm of every operation, N = 1…17, 32, 64, 100, M = 1,000,003 (divides by no N > 1 here
// but 1), N·1,024 (even slices), 3 (M < N: most pieces are 0 bytes) and 0; the rooted ones from a
// root inside the ring, hierarchical with whole nodes of every size that divides N (1, 2, 4 … and N),
// the pipelined ones with the default chunk count and with 3 chunks.
void TestCollective::checkerPasses_data()
{
    QTest::addColumn<ScheduleSpec>("spec");
    std::vector<std::uint64_t> ns;
    for (std::uint64_t n = 1; n <= 17; ++n)
        ns.push_back(n);
    ns.insert(ns.end(), {32, 64, 100});
    for (Op op : kOps)
        for (Algorithm a : algorithmsFor(op))
            for (std::uint64_t n : ns) {
                if (op == Op::SendRecv && n != 2)
                    continue;
                for (double m : {1000003.0, double(n) * 1024, 3.0, 0.0}) {
                    std::vector<ScheduleSpec> specs;
                    const auto root = static_cast<std::uint32_t>(n * 7 / 10);
                    specs.push_back(specOf(op, a, n, m, root));
                    if (a == Algorithm::Hierarchical) {
                        specs.clear();
                        for (std::uint64_t g : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(2), std::uint64_t(3),
                                                std::uint64_t(4), std::uint64_t(8), n})
                            if (g <= n && (g == 0 || n % g == 0))
                                specs.push_back(specOf(op, a, n, m, 0, g));
                    }
                    if (a == Algorithm::BinaryTree || a == Algorithm::DoubleBinaryTree || a == Algorithm::Chain)
                        specs.push_back(specOf(op, a, n, m, root, 0, 3));
                    for (const auto& s : specs)
                        QTest::newRow(name(s).c_str()) << s;
                }
            }
}

void TestCollective::checkerPasses()
{
    QFETCH(ScheduleSpec, spec);
    QVERIFY2(validate(spec).empty(), joined(validate(spec)).c_str());
    const auto st = checkSchedule(spec);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().toString().c_str());
}

// Ring AllReduce, N = 4, M = 4,096 (slices of 1,024 B). Reduce-scatter step s: rank r sends slice
// (r − s − 1) mod 4 to r + 1, so at step 2 transfer 1 is rank 1 → 2 with slice (1 − 3) mod 4 = 2.
// Slice 2 travels 3 → 0 → 1 → 2; dropped at its last hop, rank 2 owns slice 2 without the sums of
// ranks 3, 0 and 1, and the all-gather hands that wrong slice to everybody: rank 0 is the first rank
// checked, chunk 2 the first wrong chunk. Turning step 0's first transfer (rank 0 → 1, slice 3) into a
// copy loses rank 1's own contribution to slice 3: rank 0, chunk 3. Bruck AllGather N = 5: turning a
// copy into a reduce adds into a slice the receiver (rank 0 − 1 = 4) does not hold yet. Broadcast
// binomial N = 4 from 0: step 1 has 0 → 2 and 1 → 3; dropping the second leaves rank 3 without the data.
void TestCollective::checkerCatchesBrokenSchedules_data()
{
    using tw::collective::detail::Defect;
    QTest::addColumn<ScheduleSpec>("spec");
    QTest::addColumn<Defect>("defect");
    QTest::addColumn<int>("step");
    QTest::addColumn<int>("index");
    QTest::addColumn<std::string>("message");
    const auto ring = specOf(Op::AllReduce, Algorithm::Ring, 4, 4096);
    QTest::newRow("ring: dropped hop") << ring << Defect::Drop << 2 << 1 << std::string("rank 0, chunk 2: holds");
    QTest::newRow("ring: sent twice") << ring << Defect::Duplicate << 2 << 1 << std::string("step 2: rank 1 sends chunk 2 twice");
    QTest::newRow("ring: copy for reduce") << ring << Defect::FlipReduce << 0 << 0 << std::string("rank 0, chunk 3: holds");
    QTest::newRow("bruck allgather: reduce for copy")
        << specOf(Op::AllGather, Algorithm::Bruck, 5, 10) << Defect::FlipReduce << 0 << 0
        << std::string("step 0: rank 4 adds chunk 0 into a piece it does not hold (chunk 0)");
    QTest::newRow("binomial broadcast: dropped") << specOf(Op::Broadcast, Algorithm::Binomial, 4, 100) << Defect::Drop << 1 << 1
                                                 << std::string("rank 3, chunk 0: missing");
    QTest::newRow("naive: dropped") << specOf(Op::AllReduce, Algorithm::Naive, 3, 8) << Defect::Drop << 0 << 2
                                    << std::string("rank 0, chunk 0: holds");
    QTest::newRow("pairwise: sent twice, two ports") << specOf(Op::AllToAll, Algorithm::Pairwise, 3, 9) << Defect::Duplicate
                                                    << 0 << 0 << std::string("step 0: rank 0 sends chunk 1 twice");
    QTest::newRow("double tree: dropped") << specOf(Op::AllReduce, Algorithm::DoubleBinaryTree, 6, 600, 0, 0, 2)
                                          << Defect::Drop << 0 << 0 << std::string("chunk");
}

void TestCollective::checkerCatchesBrokenSchedules()
{
    using tw::collective::detail::Defect;
    QFETCH(ScheduleSpec, spec);
    QFETCH(Defect, defect);
    QFETCH(int, step);
    QFETCH(int, index);
    QFETCH(std::string, message);
    QVERIFY(checkSchedule(spec).ok());
    auto broken = tw::collective::detail::withDefect(tw::collective::detail::makeGenerator(spec), defect,
                                                     static_cast<std::uint64_t>(step), static_cast<std::size_t>(index));
    const auto st = tw::collective::detail::checkGenerator(spec, *broken);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error().message, message), st.error().message.c_str());
}

// Wherever closedForm() has a formula, count() must give exactly it when M = N·1,024 (every slice and
// block 1,024 B): ring AllReduce 2(N−1)/N·M per rank and 2(N−1) steps, naive N(N−1)·M in total,
// reduce-broadcast 2(N−1)·M, recursive doubling N·log2 N·M (powers of two), Rabenseifner 2(N−1)/N·M and
// 2·log2 N steps, AllGather / ReduceScatter ring (N−1)/N·M, pairwise (N−1)/N·M, flat broadcast and reduce.
void TestCollective::countsMatchClosedForms_data()
{
    QTest::addColumn<ScheduleSpec>("spec");
    std::vector<std::uint64_t> ns;
    for (std::uint64_t n = 1; n <= 17; ++n)
        ns.push_back(n);
    ns.insert(ns.end(), {32, 64, 100, 128});
    int rows = 0;
    for (Op op : kOps)
        for (Algorithm a : algorithmsFor(op))
            for (std::uint64_t n : ns) {
                const auto s = specOf(op, a, n, double(n) * 1024, static_cast<std::uint32_t>(n / 2));
                if (validate(s).empty() && closedForm(s).steps) {
                    QTest::newRow(name(s).c_str()) << s;
                    ++rows;
                }
            }
    QVERIFY(rows > 200);
}

void TestCollective::countsMatchClosedForms()
{
    QFETCH(ScheduleSpec, spec);
    const auto f = closedForm(spec);
    const auto c = count(spec);
    QVERIFY(f.perRankSentBytes && f.totalBytes && !f.formula.empty());
    QCOMPARE(c.steps, *f.steps);
    QCOMPARE(c.maxRankSentBytes, *f.perRankSentBytes);
    QCOMPARE(c.totalBytes, *f.totalBytes);
}

// Uneven chunks, derived by hand (exact integer sums).
void TestCollective::countsByHand_data()
{
    QTest::addColumn<ScheduleSpec>("spec");
    QTest::addColumn<double>("maxRank");
    QTest::addColumn<double>("total");
    QTest::addColumn<qulonglong>("steps");
    using A = Algorithm;
    // Ring AllReduce N = 3, M = 10: slices 4, 3, 3. Rank r sends slices r−1, r−2 in the reduce-scatter
    // and r, r−1 in the all-gather: rank 0 sends 3+3 + 4+3 = 13, rank 1 4+3 + 3+4 = 14, rank 2 13.
    // Total 40 = 2(N−1)·M; the closed form 2(N−1)/N·M = 13.3 is the average.
    QTest::newRow("ring allreduce N=3 M=10") << specOf(Op::AllReduce, A::Ring, 3, 10) << 14.0 << 40.0 << 4ull;
    // N = 4, M = 4,000,000: 6 steps of 1,000,000 B; 6,000,000 per rank = 2·3/4·M.
    QTest::newRow("ring allreduce N=4 M=4e6") << specOf(Op::AllReduce, A::Ring, 4, 4e6) << 6e6 << 24e6 << 6ull;
    // AllGather ring N = 4, M = 10: slices 3, 3, 2, 2; rank r sends every slice but r+1: rank 1 and 2
    // send 10 − 2 = 8; total 30 = (N−1)·M.
    QTest::newRow("allgather ring N=4 M=10") << specOf(Op::AllGather, A::Ring, 4, 10) << 8.0 << 30.0 << 3ull;
    QTest::newRow("reducescatter ring N=4 M=10") << specOf(Op::ReduceScatter, A::Ring, 4, 10) << 8.0 << 30.0 << 3ull;
    // Pairwise N = 4, M = 10: blocks to ranks 0…3 of 3, 3, 2, 2 B; rank 2 sends 3+3+2 = 8.
    QTest::newRow("pairwise N=4 M=10") << specOf(Op::AllToAll, A::Pairwise, 4, 10) << 8.0 << 30.0 << 3ull;
    // Naive N = 5, M = 1,000: each rank 4·1,000; total N(N−1)·M = 20,000.
    QTest::newRow("naive N=5") << specOf(Op::AllReduce, A::Naive, 5, 1000) << 4000.0 << 20000.0 << 4ull;
    // Reduce-broadcast N = 6 from root 2: 2(N−1)·M = 10,000 in 10 steps; the root sends 5·1,000.
    QTest::newRow("reduce-broadcast N=6") << specOf(Op::AllReduce, A::ReduceBroadcast, 6, 1000, 2) << 5000.0 << 10000.0 << 10ull;
    // Recursive doubling N = 8: N·log2 N·M = 8·3·1,000.
    QTest::newRow("recursive doubling N=8") << specOf(Op::AllReduce, A::RecursiveDoubling, 8, 1000) << 3000.0 << 24000.0 << 3ull;
    // N = 6: p' = 4, two extra ranks. Fold in 2·100, 2 rounds of 4·100, fold out 2·100 = 1,200; rank 1
    // (new rank 0) sends in both rounds and in the fold out: 300. 1 + 2 + 1 steps.
    QTest::newRow("recursive doubling N=6") << specOf(Op::AllReduce, A::RecursiveDoubling, 6, 100) << 300.0 << 1200.0 << 4ull;
    // Rabenseifner N = 8, M = 8,000: 2·7/8·M = 14,000 per rank, 2·3 steps.
    QTest::newRow("rabenseifner N=8") << specOf(Op::AllReduce, A::Rabenseifner, 8, 8000) << 14000.0 << 112000.0 << 6ull;
    // Rabenseifner N = 6, M = 4,000 (p' = 4 pieces of 1,000): fold in 2·4,000; halving: 4 ranks send
    // 2,000 then 1,000; doubling 1,000 then 2,000; fold out 2·4,000. Total 8,000 + 4·6,000 + 8,000 =
    // 40,000; rank 1 (new rank 0) sends 6,000 + 4,000 = 10,000. 1 + 4 + 1 steps.
    QTest::newRow("rabenseifner N=6") << specOf(Op::AllReduce, A::Rabenseifner, 6, 4000) << 10000.0 << 40000.0 << 6ull;
    // Rabenseifner N = 8, M = 10 (pieces 2,2,1,1,1,1,1,1): the halving sends Σ_k (p/2^(k+1))·(bytes of
    // the level-(k+1) halves) = M·(p−1) = 70 whatever the pieces, the doubling the same: 140.
    QTest::newRow("rabenseifner N=8 M=10") << specOf(Op::AllReduce, A::Rabenseifner, 8, 10) << 20.0 << 140.0 << 6ull;
    // Recursive halving ReduceScatter N = 5, M = 5,000 (slices of 1,000): fold in, rank 0 sends all 5,000
    // to rank 1; p' = 4: new rank 0 (rank 1) stands for slices 0–1, new ranks 1–3 for slices 2, 3, 4.
    // Step mask 2: new 0 and 1 send the upper half, slices 3–4 (2,000 each), new 2 and 3 the lower half,
    // slices 0–2 (3,000 each): 10,000. Step mask 1: new 0 → 1 slice 2 (1,000), 1 → 0 slices 0–1 (2,000),
    // 2 → 3 slice 4, 3 → 2 slice 3: 5,000. Fold out: rank 1 sends slice 0 (1,000) back to rank 0. Total
    // 5,000 + 10,000 + 5,000 + 1,000 = 21,000; ranks 0 and 1 send 5,000 each. 4 steps.
    QTest::newRow("recursive halving N=5") << specOf(Op::ReduceScatter, A::RecursiveHalving, 5, 5000) << 5000.0 << 21000.0 << 4ull;
    // Bruck AllGather N = 5, M = 10 (slices of 2): each rank sends 1 + 2 + 1 slices = 8 B, 3 steps.
    QTest::newRow("bruck allgather N=5") << specOf(Op::AllGather, A::Bruck, 5, 10) << 8.0 << 40.0 << 3ull;
    // Bruck All-to-All N = 4, M = 400 (blocks of 100): slots with bit 0 set {1, 3}, bit 1 {2, 3}: 4
    // blocks = 400 per rank (pairwise: 300); 2 steps.
    QTest::newRow("bruck alltoall N=4") << specOf(Op::AllToAll, A::Bruck, 4, 400) << 400.0 << 1600.0 << 2ull;
    // Binomial broadcast N = 5: the root sends at distance 1, 2, 4: 300; N−1 receivers: 400.
    QTest::newRow("binomial broadcast N=5") << specOf(Op::Broadcast, A::Binomial, 5, 100, 3) << 300.0 << 400.0 << 3ull;
    QTest::newRow("binomial reduce N=5") << specOf(Op::Reduce, A::Binomial, 5, 100, 3) << 100.0 << 400.0 << 3ull;
    // Chain N = 4, 3 chunks of 100: C + N − 2 = 5 steps; each of the first three ranks sends 300.
    QTest::newRow("chain broadcast N=4") << specOf(Op::Broadcast, A::Chain, 4, 300, 1, 0, 3) << 300.0 << 900.0 << 5ull;
    QTest::newRow("chain reduce N=4") << specOf(Op::Reduce, A::Chain, 4, 300, 1, 0, 3) << 300.0 << 900.0 << 5ull;
    // Hierarchical N = 8, 4 per node (K = 2 nodes), M = 800: intra ring reduce-scatter 3 × 200, the
    // inter-node ring on slices of 200 cut in 2: 1 × 100 + 1 × 100, intra all-gather 3 × 200: 1,400 per
    // rank = 2(G−1)/G·M + 2(K−1)/K·M/G; 3 + 1 + 1 + 3 = 8 steps.
    QTest::newRow("hierarchical N=8 G=4") << specOf(Op::AllReduce, A::Hierarchical, 8, 800, 0, 4) << 1400.0 << 11200.0 << 8ull;
    // One rank per node: the inter-node ring is the whole ring.
    QTest::newRow("hierarchical G=1 is ring") << specOf(Op::AllReduce, A::Hierarchical, 4, 4e6, 0, 1) << 6e6 << 24e6 << 6ull;
    QTest::newRow("send/recv") << specOf(Op::SendRecv, A::Direct, 2, 12345) << 12345.0 << 12345.0 << 1ull;
}

void TestCollective::countsByHand()
{
    QFETCH(ScheduleSpec, spec);
    QFETCH(double, maxRank);
    QFETCH(double, total);
    QFETCH(qulonglong, steps);
    const auto c = count(spec);
    QCOMPARE(c.steps, steps);
    QCOMPARE(c.maxRankSentBytes, maxRank);
    QCOMPARE(c.totalBytes, total);
    double received = 0;
    for (double r : c.receivedPerRank)
        received += r;
    QCOMPARE(received, total);
}

// Hockney: T = Σ steps (α + largest message / β).
void TestCollective::alphaBetaTimes_data()
{
    QTest::addColumn<ScheduleSpec>("spec");
    QTest::addColumn<double>("alpha");
    QTest::addColumn<double>("beta");
    QTest::addColumn<double>("seconds");
    using A = Algorithm;
    // Ring N = 4, M = 4 MB, α = 10 µs, β = 1.25 GB/s: 6 × (10 µs + 1 MB / 1.25 GB/s = 800 µs) = 4.86 ms.
    QTest::newRow("ring N=4 4MB") << specOf(Op::AllReduce, A::Ring, 4, 4e6) << 10e-6 << 1.25e9 << 4.86e-3;
    // Flat reduce-broadcast N = 4: 6 steps of the whole 4 MB: 6 × (10 µs + 3.2 ms) = 19.26 ms.
    QTest::newRow("reduce-broadcast N=4 4MB") << specOf(Op::AllReduce, A::ReduceBroadcast, 4, 4e6) << 10e-6 << 1.25e9 << 19.26e-3;
    // Naive N = 4: 3 steps of 4 MB: 3 × 3.21 ms = 9.63 ms.
    QTest::newRow("naive N=4 4MB") << specOf(Op::AllReduce, A::Naive, 4, 4e6) << 10e-6 << 1.25e9 << 9.63e-3;
    // Recursive doubling N = 8, M = 1 MB: 3 × (10 µs + 800 µs) = 2.43 ms.
    QTest::newRow("recursive doubling N=8 1MB") << specOf(Op::AllReduce, A::RecursiveDoubling, 8, 1e6) << 10e-6 << 1.25e9 << 2.43e-3;
    // Rabenseifner N = 8, M = 8 MB: halves 4, 2, 1 MB then 1, 2, 4 MB: 6α + 14 MB/β = 60 µs + 11.2 ms.
    QTest::newRow("rabenseifner N=8 8MB") << specOf(Op::AllReduce, A::Rabenseifner, 8, 8e6) << 10e-6 << 1.25e9 << 11.26e-3;
    // Bruck All-to-All N = 4, M = 400: two messages of 2 blocks (200 B): 2 × (10 µs + 160 ns).
    QTest::newRow("bruck alltoall N=4") << specOf(Op::AllToAll, A::Bruck, 4, 400) << 10e-6 << 1.25e9 << 20.32e-6;
    // Ring with uneven slices N = 3, M = 10: every step's largest message is the 4-byte slice 0: 4 × (1 s + 4 s).
    QTest::newRow("ring N=3 uneven") << specOf(Op::AllReduce, A::Ring, 3, 10) << 1.0 << 1.0 << 20.0;
    // Send/recv of 1 GB at α = 5 µs, 100 GB/s: 5 µs + 10 ms.
    QTest::newRow("send/recv 1GB") << specOf(Op::SendRecv, A::Direct, 2, 1e9) << 5e-6 << 100e9 << 10.005e-3;
}

void TestCollective::alphaBetaTimes()
{
    QFETCH(ScheduleSpec, spec);
    QFETCH(double, alpha);
    QFETCH(double, beta);
    QFETCH(double, seconds);
    const auto c = count(spec, LinkModel{alpha, beta});
    QVERIFY2(std::abs(c.timeSeconds - seconds) <= 1e-12 * seconds, std::to_string(c.timeSeconds).c_str());
}

// nccl-tests doc/PERFORMANCE.md: busbw = algbw × 2(N−1)/N (AllReduce), (N−1)/N (AllGather,
// ReduceScatter, All-to-All), 1 (Broadcast, Reduce); algbw = M / t.
void TestCollective::busBandwidth()
{
    const LinkModel link{10e-6, 1.25e9};
    const auto ring = count(specOf(Op::AllReduce, Algorithm::Ring, 4, 4e6), link);
    QCOMPARE(*ring.busbwFactor, 1.5);
    QCOMPARE(*ring.algbw, 4e6 / ring.timeSeconds);
    QCOMPARE(*ring.busbw, *ring.algbw * 1.5);
    QCOMPARE(*count(specOf(Op::AllGather, Algorithm::Ring, 4, 4e6), link).busbwFactor, 0.75);
    QCOMPARE(*count(specOf(Op::ReduceScatter, Algorithm::Ring, 8, 4e6), link).busbwFactor, 0.875);
    QCOMPARE(*count(specOf(Op::AllToAll, Algorithm::Pairwise, 5, 4e6), link).busbwFactor, 0.8);
    QCOMPARE(*count(specOf(Op::Broadcast, Algorithm::Binomial, 5, 4e6), link).busbwFactor, 1.0);
    QCOMPARE(*count(specOf(Op::Reduce, Algorithm::Chain, 5, 4e6), link).busbwFactor, 1.0);
    QCOMPARE(*count(specOf(Op::SendRecv, Algorithm::Direct, 2, 4e6), link).busbwFactor, 1.0);
    // Ring AllReduce of a large buffer: busbw tends to β as α vanishes (the nccl-tests point of busbw).
    const auto big = count(specOf(Op::AllReduce, Algorithm::Ring, 8, 8e9), LinkModel{0, 1.25e9});
    QVERIFY(std::abs(*big.busbw - 1.25e9) < 1e-3);
}

void TestCollective::oneRank()
{
    for (Op op : kOps)
        for (Algorithm a : algorithmsFor(op)) {
            if (op == Op::SendRecv)
                continue;
            const auto s = specOf(op, a, 1, 1e6);
            QVERIFY2(validate(s).empty(), name(s).c_str());
            const auto c = count(s);
            QCOMPARE(c.steps, 0ull);
            QCOMPARE(c.transfers, 0ull);
            QCOMPARE(c.timeSeconds, 0.0);
            QVERIFY(!c.algbw && !c.busbw && !c.busbwFactor);
            Schedule sch(s);
            QCOMPARE(sch.stepCount(), 0ull);
            std::vector<Transfer> step;
            QVERIFY(!sch.next(step));
        }
}

// M = 0: the schedule keeps its steps and transfers, each of 0 bytes; time = steps·α; algbw = 0.
void TestCollective::zeroBytes()
{
    const auto c = count(specOf(Op::AllReduce, Algorithm::Ring, 5, 0), LinkModel{1e-6, 1e9});
    QCOMPARE(c.steps, 8ull);
    QCOMPARE(c.transfers, 40ull);
    QCOMPARE(c.totalBytes, 0.0);
    QVERIFY(std::abs(c.timeSeconds - 8e-6) < 1e-18);
    QCOMPARE(*c.algbw, 0.0);
}

// The pipelined trees: a parent takes its two children's chunks in different steps, so the reduce of
// C chunks needs at least 2C steps at a rank with two children; NCCL's double tree halves each
// message and, every rank being a leaf in one tree, beats the single tree on a large buffer.
void TestCollective::treesPipeline()
{
    const double m = 64.0 * 1024 * 1024;
    const LinkModel link{5e-6, 10e9};
    const auto one = count(specOf(Op::AllReduce, Algorithm::BinaryTree, 16, m), link);
    const auto two = count(specOf(Op::AllReduce, Algorithm::DoubleBinaryTree, 16, m), link);
    QCOMPARE(tw::collective::detail::pipelineChunksFor(specOf(Op::AllReduce, Algorithm::BinaryTree, 16, m)), 64ull);
    QCOMPARE(tw::collective::detail::pipelineChunksFor(specOf(Op::AllReduce, Algorithm::BinaryTree, 16, 1000)), 1ull);
    QCOMPARE(tw::collective::detail::pipelineChunksFor(specOf(Op::AllReduce, Algorithm::BinaryTree, 16, 3 * 65536.0 + 1)), 4ull);
    QVERIFY(one.steps >= 2 * 64);
    QVERIFY2(two.timeSeconds < one.timeSeconds, (std::to_string(two.timeSeconds) + " vs " + std::to_string(one.timeSeconds)).c_str());
    // Every rank sends its reduced chunks up once (except the root) and the final ones down to its
    // children: total = 2(N−1)·M for one tree and for two trees alike.
    QCOMPARE(one.totalBytes, 2 * 15 * m);
    QCOMPARE(two.totalBytes, 2 * 15 * m);
    Schedule s(specOf(Op::AllReduce, Algorithm::BinaryTree, 16, m));
    QCOMPARE(s.phaseOf(0), std::string("reduce"));
    QCOMPARE(s.phaseOf(s.stepCount() - 1), std::string("broadcast"));
    bool overlap = false;
    for (std::uint64_t i = 0; i < s.stepCount(); ++i)
        overlap = overlap || s.phaseOf(i) == "reduce + broadcast";
    QVERIFY(overlap);
}

void TestCollective::validation_data()
{
    QTest::addColumn<ScheduleSpec>("spec");
    QTest::addColumn<std::string>("field");
    QTest::addColumn<std::string>("message");
    using A = Algorithm;
    QTest::newRow("no ranks") << specOf(Op::AllReduce, A::Ring, 0, 10) << std::string("ranks") << std::string("at least 1");
    QTest::newRow("too many ranks") << specOf(Op::AllReduce, A::Ring, 16385, 10) << std::string("ranks")
                                    << std::string("16,385 is more than this program schedules (16,384)");
    QTest::newRow("alltoall too many") << specOf(Op::AllToAll, A::Pairwise, 70000, 10) << std::string("ranks")
                                       << std::string("(16,384)");
    QTest::newRow("wrong algorithm") << specOf(Op::AllGather, A::Naive, 4, 10) << std::string("algorithm")
                                     << std::string("naive is not an algorithm for AllGather; available: flat-ring, recursive-doubling, bruck");
    QTest::newRow("rabenseifner for reduce") << specOf(Op::Reduce, A::Rabenseifner, 4, 10) << std::string("algorithm")
                                             << std::string("available: binomial, flat, chain");
    QTest::newRow("negative bytes") << specOf(Op::AllReduce, A::Ring, 4, -1) << std::string("bytes") << std::string("≥ 0");
    QTest::newRow("NaN bytes") << specOf(Op::AllReduce, A::Ring, 4, std::nan("")) << std::string("bytes") << std::string("NaN");
    QTest::newRow("fractional bytes") << specOf(Op::AllReduce, A::Ring, 4, 10.5) << std::string("bytes") << std::string("whole number");
    QTest::newRow("2^53 bytes") << specOf(Op::AllReduce, A::Ring, 4, 9007199254740992.0) << std::string("bytes")
                                << std::string("below 2^53");
    QTest::newRow("infinite bytes") << specOf(Op::AllReduce, A::Ring, 4, INFINITY) << std::string("bytes") << std::string("below 2^53");
    QTest::newRow("root out of range") << specOf(Op::Broadcast, A::Binomial, 4, 10, 4) << std::string("root")
                                       << std::string("rank 4 does not exist: ranks are 0 … 3");
    QTest::newRow("reduce-broadcast root") << specOf(Op::AllReduce, A::ReduceBroadcast, 4, 10, 9) << std::string("root")
                                           << std::string("rank 9");
    QTest::newRow("per node above N") << specOf(Op::AllReduce, A::Hierarchical, 4, 10, 0, 8) << std::string("ranks_per_node")
                                      << std::string("only 4 ranks");
    QTest::newRow("uneven nodes") << specOf(Op::AllReduce, A::Hierarchical, 10, 10, 0, 4) << std::string("ranks_per_node")
                                  << std::string("4 does not divide 10 ranks");
    QTest::newRow("send/recv N=3") << specOf(Op::SendRecv, A::Direct, 3, 10) << std::string("ranks")
                                   << std::string("exactly 2 ranks");
    QTest::newRow("too many chunks") << specOf(Op::Broadcast, A::Chain, 4, 10, 0, 0, 5000) << std::string("pipeline_chunks")
                                     << std::string("at most 4,096");
}

void TestCollective::validation()
{
    QFETCH(ScheduleSpec, spec);
    QFETCH(std::string, field);
    QFETCH(std::string, message);
    const auto errors = validate(spec);
    bool found = false;
    for (const auto& e : errors)
        found = found || (e.where.field == field && contains(e.message, message));
    QVERIFY2(found, joined(errors).c_str());
    QVERIFY(!checkSchedule(spec).ok());
    QVERIFY(Schedule(spec).stepCount() == 0); // an invalid spec gives an empty schedule, never a crash
}

void TestCollective::scheduleApi()
{
    // Ring N = 5, M = 12: slices 3, 3, 2, 2, 2 at offsets 0, 3, 6, 8, 10.
    Schedule s(specOf(Op::AllReduce, Algorithm::Ring, 5, 12));
    QCOMPARE(s.stepCount(), 8ull);
    QCOMPARE(s.chunkCount(), 5u);
    QCOMPARE(s.chunk(2).offset, 6.0);
    QCOMPARE(s.chunk(2).bytes, 2.0);
    QCOMPARE(s.chunk(1).bytes, 3.0);
    QCOMPARE(s.phaseOf(3), std::string("reduce-scatter"));
    QCOMPARE(s.phaseOf(4), std::string("all-gather"));
    QCOMPARE(s.phaseOf(8), std::string());
    std::vector<Transfer> first, step;
    QVERIFY(s.next(first));
    // Step 0: rank r sends slice r − 1 to r + 1, reduce.
    QCOMPARE(first.size(), std::size_t(5));
    QVERIFY(first[0] == (Transfer{0, 1, 4, 2.0, true}));
    QVERIFY(first[4] == (Transfer{4, 0, 3, 2.0, true}));
    std::uint64_t n = 1;
    while (s.next(step))
        ++n;
    QCOMPARE(n, 8ull);
    s.reset();
    QVERIFY(s.next(step));
    QVERIFY(step == first);
    // Moves keep the state.
    Schedule moved = std::move(s);
    QVERIFY(moved.next(step));
    QCOMPARE(step[0].reduce, true);

    // All-to-All chunks name their blocks.
    Schedule a2a(specOf(Op::AllToAll, Algorithm::Pairwise, 3, 9));
    QCOMPARE(a2a.chunkCount(), 9u);
    QCOMPARE(a2a.chunk(5).origin, 1u);
    QCOMPARE(a2a.chunk(5).destination, 2u);
    QCOMPARE(a2a.chunk(5).offset, 6.0);

    // Every schedule of a mid-size spec: transfers per step within the single-port bound.
    for (Op op : kOps)
        for (Algorithm a : algorithmsFor(op)) {
            const auto sp = specOf(op, a, op == Op::SendRecv ? 2 : 12, 1e6, 1, 3);
            Schedule x(sp);
            std::uint64_t steps = 0;
            while (x.next(step)) {
                QVERIFY(!step.empty());
                QVERIFY(!x.phaseOf(steps).empty());
                ++steps;
            }
            QCOMPARE(steps, x.stepCount());
            QCOMPARE(count(sp).steps, steps);
            QVERIFY(!describe(op, a).empty());
        }
}

void TestCollective::names()
{
    for (Op op : kOps) {
        QVERIFY(opFromString(toString(op)) == op);
        for (Algorithm a : algorithmsFor(op))
            QVERIFY(algorithmFromString(toString(a)) == a);
    }
    QCOMPARE(toString(Algorithm::DoubleBinaryTree), std::string_view("double-binary-tree"));
    QCOMPARE(displayName(Op::AllToAll), std::string_view("All-to-All"));
    QVERIFY(algorithmsFor(Op::AllReduce).front() == Algorithm::Ring);
    QVERIFY(algorithmsFor(Op::Broadcast).front() == Algorithm::Binomial);
    QVERIFY(algorithmsFor(Op::AllToAll).front() == Algorithm::Pairwise);
    QVERIFY(!opFromString("all-reduce"));
    QVERIFY(!algorithmFromString("Ring"));
}

void TestCollective::differencesFromClosedForm()
{
    using tw::collective::Algorithm;
    using tw::collective::Op;
    // Ring AllReduce of 8 ranks and 8,192 B: even chunks, the closed form holds exactly.
    auto even = specOf(Op::AllReduce, Algorithm::Ring, 8, 8192);
    QVERIFY(tw::collective::differencesFromClosedForm(tw::collective::closedForm(even), tw::collective::count(even)).empty());
    // N = 3, M = 10 B: chunks of 4, 3, 3 B. The busiest rank sends its two largest chunks in each phase:
    // 4 + 3 + 4 + 3 = 14 B, while 2(N−1)/N·M = 40/3 = 13.33 B; the steps (4) agree.
    auto uneven = specOf(Op::AllReduce, Algorithm::Ring, 3, 10);
    const auto diffs = tw::collective::differencesFromClosedForm(tw::collective::closedForm(uneven), tw::collective::count(uneven));
    QCOMPARE(diffs.size(), std::size_t{1});
    QVERIFY2(diffs[0].find("most bytes one rank sends: counted 14 B") == 0, diffs[0].c_str());
}

QTEST_APPLESS_MAIN(TestCollective)
#include "tst_collective.moc"
