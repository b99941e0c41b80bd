// Stage 3, pipeline and token placement: the default layer partition, the GPipe / 1F1B /
// interleaved timelines against makespans and bubbles derived by hand in the comments (Narayanan
// et al. 2021, arXiv 2104.04473 §2.2), Example 5.2's stage times, the per-stage orders written out,
// dependencies checked on random cases, and where the paper's token 70,000 lands.

#include "model/gpucatalog.h"
#include "parallel/plan.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace tw::parallel;
using tw::model::BatchShape;
using tw::model::ModelConfig;

Q_DECLARE_METATYPE(std::vector<std::uint64_t>)
Q_DECLARE_METATYPE(tw::parallel::PipelineSchedule)

namespace {

using U64s = std::vector<std::uint64_t>;

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}); }

// Per-chunk times: every one of the p·v chunks takes f forward and b backward.
PipelineTimeline uniform(PipelineSchedule s, std::uint64_t p, std::uint64_t v, std::uint64_t m, double f, double b)
{
    return pipelineTimeline(s, p, v, m, std::vector<double>(p * v, f), std::vector<double>(p * v, b));
}

// A stage's blocks as "F0 F1 B0 …" (with ".c<chunk>" when chunks > 1), in the timeline's order.
QString stageOrder(const PipelineTimeline& t, std::uint32_t stage, bool withChunk = false)
{
    std::string s;
    for (const PipelineBlock& b : t.blocks)
        if (b.stage == stage) {
            if (!s.empty())
                s += ' ';
            s += (b.backward ? "B" : "F") + std::to_string(b.microBatch);
            if (withChunk)
                s += ".c" + std::to_string(b.chunk);
        }
    return QString::fromStdString(s);
}

// Every property a timeline must have, whatever the schedule: each (micro-batch, chunk, direction)
// exactly once, dependencies respected, a stage never overlapping itself, blocks sorted by stage
// then start, each block starting as soon as its stage and its dependency allow, sums consistent.
// Returns the first violation, or an empty string.
std::string checkTimeline(const PipelineTimeline& t, std::uint64_t p, std::uint64_t v, std::uint64_t m,
                          const std::vector<double>& f, const std::vector<double>& b)
{
    const std::uint64_t chunks = p * v;
    if (t.blocks.size() != 2 * m * chunks)
        return "block count " + std::to_string(t.blocks.size());
    std::map<std::tuple<std::uint32_t, std::uint64_t, bool>, const PipelineBlock*> byKey; // (mb, k, backward)
    for (const PipelineBlock& blk : t.blocks) {
        const std::uint64_t k = std::uint64_t(blk.chunk) * p + blk.stage;
        if (blk.stage >= p || blk.chunk >= v || blk.microBatch >= m)
            return "block out of range";
        if (!byKey.emplace(std::make_tuple(blk.microBatch, k, blk.backward), &blk).second)
            return "duplicate block";
        if (!near(blk.end - blk.start, blk.backward ? b[k] : f[k]))
            return "wrong duration";
    }
    double busyTotal = 0, makespan = 0;
    for (std::size_t i = 0; i < t.blocks.size(); ++i) {
        const PipelineBlock& blk = t.blocks[i];
        const std::uint64_t k = std::uint64_t(blk.chunk) * p + blk.stage;
        busyTotal += blk.end - blk.start;
        makespan = std::max(makespan, blk.end);
        // Dependencies: F(mb,k) after F(mb,k−1); B(mb,k) after B(mb,k+1); B(mb,last) after F(mb,last).
        double depEnd = 0;
        if (!blk.backward && k > 0)
            depEnd = byKey.at({blk.microBatch, k - 1, false})->end;
        else if (blk.backward)
            depEnd = byKey.at({blk.microBatch, k + 1 == chunks ? k : k + 1, k + 1 != chunks})->end;
        if (blk.start < depEnd - 1e-12)
            return "dependency violated at stage " + std::to_string(blk.stage);
        double stageFree = 0;
        if (i > 0 && t.blocks[i - 1].stage == blk.stage) {
            if (blk.start < t.blocks[i - 1].end - 1e-12)
                return "stage overlaps itself";
            stageFree = t.blocks[i - 1].end;
        } else if (i > 0 && t.blocks[i - 1].stage > blk.stage) {
            return "blocks not sorted by stage";
        }
        if (!near(blk.start, std::max(stageFree, depEnd)))
            return "block starts later than it could";
    }
    if (!near(t.makespan, makespan))
        return "makespan";
    double busy = 0;
    for (double s : t.stageBusySeconds)
        busy += s;
    if (!near(busy, busyTotal))
        return "stageBusySeconds";
    if (makespan > 0 && !near(t.bubbleFraction, 1 - busyTotal / (double(p) * makespan)))
        return "bubbleFraction";
    return {};
}

// The paper's batch: T = 1,024, B = 32, G = 524,288 (docs/model.md §6, Example 5.1).
const BatchShape kPaperBatch{1024, 32, 524288};

// A derivation built by hand (no derivePlan): the plan's degrees and Megatron's rank order
// g = tp + t·(dp + d·pp) (plan.h defaultAssignment).
PlanDerivation handPlan(std::uint64_t dp, std::uint64_t pp, std::uint64_t tp, bool sequenceParallel = false)
{
    PlanDerivation d;
    d.plan.dp = dp;
    d.plan.pp = pp;
    d.plan.tp = tp;
    d.plan.sequenceParallel = sequenceParallel;
    for (std::uint32_t s = 0; s < pp; ++s)
        for (std::uint32_t r = 0; r < dp; ++r)
            for (std::uint32_t t = 0; t < tp; ++t)
                d.mesh.push_back({r, s, t});
    return d;
}

} // namespace

// Fails the test with checkTimeline's message.
#define CHECK_TIMELINE(...)                                                                        \
    do {                                                                                           \
        const std::string problem_ = checkTimeline(__VA_ARGS__);                                    \
        QVERIFY2(problem_.empty(), problem_.c_str());                                              \
    } while (false)

class TestPipeline : public QObject {
    Q_OBJECT
private slots:
    void defaultPartition_data();
    void defaultPartition();
    void defaultPartitionBalanced();
    void equalTimes_data();
    void equalTimes();
    void interleavedBubble_data();
    void interleavedBubble();
    void interleavedWithOneChunkIs1F1B();
    void example52StageTimes();
    void oneFOneBOrderByHand();
    void interleavedOrderByHand();
    void dependenciesOnRandomCases();
    void degenerateInputs();
    void largeRunsComplete();
    void placeTokenPaper_data();
    void placeTokenPaper();
    void placeTokenGpus();
    void placeTokenTensorSlices();
    void placeTokenSequenceParallel();
    void placeTokenMalformed();
    void withDerivePlan();
};

void TestPipeline::defaultPartition_data()
{
    QTest::addColumn<std::uint64_t>("layers");
    QTest::addColumn<std::uint64_t>("stages");
    QTest::addColumn<U64s>("expected");
    // Extras form a centred block starting at (n − extras)/2 (floor: an odd leftover goes after it).
    QTest::newRow("Example 5.2: 12 on 8") << std::uint64_t(12) << std::uint64_t(8) << U64s{1, 1, 2, 2, 2, 2, 1, 1};
    QTest::newRow("10 on 4") << std::uint64_t(10) << std::uint64_t(4) << U64s{2, 3, 3, 2};
    QTest::newRow("13 on 4 (one extra: start (4−1)/2 = 1)") << std::uint64_t(13) << std::uint64_t(4) << U64s{3, 4, 3, 3};
    QTest::newRow("15 on 4 (three extras: start 0)") << std::uint64_t(15) << std::uint64_t(4) << U64s{4, 4, 4, 3};
    QTest::newRow("7 on 3") << std::uint64_t(7) << std::uint64_t(3) << U64s{2, 3, 2};
    QTest::newRow("12 on 5 (two extras: start 1)") << std::uint64_t(12) << std::uint64_t(5) << U64s{2, 3, 3, 2, 2};
    QTest::newRow("even: 12 on 4") << std::uint64_t(12) << std::uint64_t(4) << U64s{3, 3, 3, 3};
    QTest::newRow("one stage") << std::uint64_t(12) << std::uint64_t(1) << U64s{12};
    QTest::newRow("one layer per stage") << std::uint64_t(12) << std::uint64_t(12) << U64s(12, 1);
    QTest::newRow("no stages") << std::uint64_t(12) << std::uint64_t(0) << U64s{};
    QTest::newRow("more stages than layers") << std::uint64_t(3) << std::uint64_t(4) << U64s{};
    QTest::newRow("no layers") << std::uint64_t(0) << std::uint64_t(0) << U64s{};
}

void TestPipeline::defaultPartition()
{
    QFETCH(std::uint64_t, layers);
    QFETCH(std::uint64_t, stages);
    QFETCH(U64s, expected);
    QCOMPARE(tw::parallel::defaultPartition(layers, stages), expected);
}

void TestPipeline::defaultPartitionBalanced()
{
    // Every L, n ≤ 64: sums to L, stages differ by at most one layer (optimal balance), the heavy
    // stages are contiguous and never further from the centre than the light ones.
    for (std::uint64_t L = 1; L <= 64; ++L)
        for (std::uint64_t n = 1; n <= L; ++n) {
            const U64s part = tw::parallel::defaultPartition(L, n);
            QCOMPARE(part.size(), std::size_t(n));
            std::uint64_t sum = 0;
            for (auto x : part)
                sum += x;
            QCOMPARE(sum, L);
            const auto [lo, hi] = std::minmax_element(part.begin(), part.end());
            QVERIFY(*hi - *lo <= 1);
            const std::uint64_t extras = L % n;
            if (extras == 0)
                continue;
            const auto first = std::uint64_t(std::find(part.begin(), part.end(), *hi) - part.begin());
            QCOMPARE(first, (n - extras) / 2);
            QVERIFY(first <= n - (first + extras)); // no more light stages before the block than after it
        }
}

void TestPipeline::equalTimes_data()
{
    QTest::addColumn<PipelineSchedule>("schedule");
    QTest::addColumn<std::uint64_t>("p");
    QTest::addColumn<std::uint64_t>("m");
    QTest::addColumn<double>("tf");
    QTest::addColumn<double>("tb");
    for (auto s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB}) {
        const QByteArray name = s == PipelineSchedule::GPipe ? "gpipe" : "1f1b";
        auto row = [&](const char* what) -> QTestData& { return QTest::newRow((name + what).constData()); };
        row(" p4 m8") << s << std::uint64_t(4) << std::uint64_t(8) << 1.0 << 2.0;
        row(" p8 m2 (m < p)") << s << std::uint64_t(8) << std::uint64_t(2) << 0.08 << 0.16;
        row(" p8 m32") << s << std::uint64_t(8) << std::uint64_t(32) << 0.5 << 1.0;
        row(" p1 m5") << s << std::uint64_t(1) << std::uint64_t(5) << 1.0 << 1.0;
        row(" p5 m1") << s << std::uint64_t(5) << std::uint64_t(1) << 1.0 << 3.0;
        row(" p6 m6 tb=tf") << s << std::uint64_t(6) << std::uint64_t(6) << 1.0 << 1.0;
    }
}

void TestPipeline::equalTimes()
{
    QFETCH(PipelineSchedule, schedule);
    QFETCH(std::uint64_t, p);
    QFETCH(std::uint64_t, m);
    QFETCH(double, tf);
    QFETCH(double, tb);
    const PipelineTimeline t = uniform(schedule, p, 1, m, tf, tb);
    CHECK_TIMELINE(t, p, 1, m, std::vector<double>(p, tf), std::vector<double>(p, tb));
    // Equal stages: the last micro-batch's forward reaches the last stage after (m + p − 1)·t_f
    // less its own backward wait; by symmetry the flush takes (p − 1)·(t_f + t_b) beyond the
    // m·(t_f + t_b) of work each stage does: makespan = (m + p − 1)·(t_f + t_b) for GPipe and 1F1B.
    const double makespan = double(m + p - 1) * (tf + tb);
    QVERIFY2(near(t.makespan, makespan), qPrintable(QString::number(t.makespan)));
    // Bubble as a fraction of the makespan: (p − 1)/(m + p − 1) …
    QVERIFY(near(t.bubbleFraction, double(p - 1) / double(m + p - 1)));
    // … and as idle time over ideal time, docs/model.md's (p − 1)/m (arXiv 2104.04473 §2.2.1).
    const double ideal = double(m) * (tf + tb);
    QVERIFY(near((t.makespan - ideal) / ideal, double(p - 1) / double(m)));
    for (std::uint64_t s = 0; s < p; ++s) {
        QVERIFY(near(t.stageForwardSeconds[s], tf));
        QVERIFY(near(t.stageBackwardSeconds[s], tb));
        QVERIFY(near(t.stageBusySeconds[s], ideal));
    }
}

void TestPipeline::interleavedBubble_data()
{
    QTest::addColumn<std::uint64_t>("p");
    QTest::addColumn<std::uint64_t>("v");
    QTest::addColumn<std::uint64_t>("m");
    QTest::addColumn<double>("tf");
    QTest::addColumn<double>("tb");
    QTest::newRow("p4 v2 m8") << std::uint64_t(4) << std::uint64_t(2) << std::uint64_t(8) << 1.0 << 2.0;
    QTest::newRow("p4 v3 m8") << std::uint64_t(4) << std::uint64_t(3) << std::uint64_t(8) << 1.0 << 2.0;
    QTest::newRow("p2 v2 m4") << std::uint64_t(2) << std::uint64_t(2) << std::uint64_t(4) << 1.0 << 1.0;
    QTest::newRow("p8 v2 m16") << std::uint64_t(8) << std::uint64_t(2) << std::uint64_t(16) << 0.24 << 0.48;
    QTest::newRow("p4 v4 m32") << std::uint64_t(4) << std::uint64_t(4) << std::uint64_t(32) << 2.0 << 4.0;
    QTest::newRow("m = p (Megatron: all warm-up)") << std::uint64_t(4) << std::uint64_t(2) << std::uint64_t(4) << 1.0 << 2.0;
}

void TestPipeline::interleavedBubble()
{
    QFETCH(std::uint64_t, p);
    QFETCH(std::uint64_t, v);
    QFETCH(std::uint64_t, m);
    QFETCH(double, tf);
    QFETCH(double, tb);
    // Each stage holds v chunks of t_f/v forward, t_b/v backward (arXiv 2104.04473 §2.2.2):
    // bubble time shrinks from (p − 1)·(t_f + t_b) to (p − 1)·(t_f + t_b)/v.
    const PipelineTimeline t = uniform(PipelineSchedule::Interleaved, p, v, m, tf / double(v), tb / double(v));
    CHECK_TIMELINE(t, p, v, m, std::vector<double>(p * v, tf / double(v)), std::vector<double>(p * v, tb / double(v)));
    const double ideal = double(m) * (tf + tb);
    const double bubble = double(p - 1) * (tf + tb) / double(v);
    QVERIFY2(near(t.makespan, ideal + bubble), qPrintable(QString::number(t.makespan) + QLatin1String(" vs ")
                                                          + QString::number(ideal + bubble)));
    QVERIFY(near((t.makespan - ideal) / ideal, double(p - 1) / double(v * m))); // docs/model.md: (p−1)/(v·m)
    QVERIFY(near(t.stageForwardSeconds[0], tf));
    QVERIFY(near(t.stageBackwardSeconds[p - 1], tb));
    // The same work without interleaving has the larger bubble (p − 1)·(t_f + t_b).
    const PipelineTimeline plain = uniform(PipelineSchedule::OneFOneB, p, 1, m, tf, tb);
    QVERIFY(near(plain.makespan - ideal, double(p - 1) * (tf + tb)));
    QVERIFY(t.bubbleFraction < plain.bubbleFraction);
}

void TestPipeline::interleavedWithOneChunkIs1F1B()
{
    // With v = 1 Megatron runs the non-interleaved 1F1B schedule.
    const std::vector<double> f{0.1, 0.3, 0.2, 0.2}, b{0.2, 0.5, 0.4, 0.3};
    const PipelineTimeline a = pipelineTimeline(PipelineSchedule::Interleaved, 4, 1, 8, f, b);
    const PipelineTimeline c = pipelineTimeline(PipelineSchedule::OneFOneB, 4, 1, 8, f, b);
    QCOMPARE(a.blocks.size(), c.blocks.size());
    for (std::size_t i = 0; i < a.blocks.size(); ++i) {
        QCOMPARE(a.blocks[i].stage, c.blocks[i].stage);
        QCOMPARE(a.blocks[i].microBatch, c.blocks[i].microBatch);
        QCOMPARE(a.blocks[i].backward, c.blocks[i].backward);
        QCOMPARE(a.blocks[i].start, c.blocks[i].start);
    }
    QCOMPARE(a.makespan, c.makespan);
}

void TestPipeline::example52StageTimes()
{
    // Example 5.2: 8 stages, partition [1,1,2,2,2,2,1,1], 0.08 s forward and 0.16 s backward per
    // layer per micro-batch: a 1-layer stage busy 0.24 s per micro-batch, a 2-layer stage 0.48 s.
    const U64s part = tw::parallel::defaultPartition(12, 8);
    std::vector<double> f, b;
    for (auto layers : part) {
        f.push_back(0.08 * double(layers));
        b.push_back(0.16 * double(layers));
    }
    const PipelineTimeline g = pipelineTimeline(PipelineSchedule::GPipe, 8, 1, 2, f, b);
    QVERIFY(near(g.stageForwardSeconds[0] + g.stageBackwardSeconds[0], 0.24));
    QVERIFY(near(g.stageForwardSeconds[2] + g.stageBackwardSeconds[2], 0.48));
    QVERIFY(near(g.stageBusySeconds[2], 2 * 0.48)); // N_acc = 2 micro-batches (Example 5.1)
    QVERIFY(near(g.stageBusySeconds[7], 2 * 0.24));
    CHECK_TIMELINE(g, 8, 1, 2, f, b);
    // GPipe, m = 2: F0 leaves stage 7 at Σ forward = 0.96 s; F1 trails it by the 0.16 s bottleneck
    // and ends at 1.12 s; B0 then runs back through Σ backward = 1.92 s, B1 trails by 0.32 s:
    // 1.12 + 1.92 + 0.32 = 3.36 s = Σ(F+B) + (m − 1)·bottleneck = 2.88 + 0.48.
    QVERIFY2(near(g.makespan, 3.36), qPrintable(QString::number(g.makespan)));
    // 1F1B, m = 2: stage 7 runs F0 [0.88,0.96] B0 [0.96,1.12], then F1 (ready at 1.04) [1.12,1.20]
    // and B1 [1.20,1.36]; B0 reaches stage 0 at 1.12 + 1.76 = 2.88 and B1 follows the 2-layer
    // stages' 0.32 s spacing: stage 2 ends B1 at 2.88, stage 1 at 3.04, stage 0 at 3.20 s.
    const PipelineTimeline o = pipelineTimeline(PipelineSchedule::OneFOneB, 8, 1, 2, f, b);
    CHECK_TIMELINE(o, 8, 1, 2, f, b);
    QVERIFY2(near(o.makespan, 3.20), qPrintable(QString::number(o.makespan)));
    // Bubble: 1 − busy/(p·makespan) = 1 − 2·2.88/(8·3.20) = 0.775.
    QVERIFY(near(o.bubbleFraction, 0.775));
}

void TestPipeline::oneFOneBOrderByHand()
{
    // p = 4, m = 8, stage 0: min(p − s − 1, m) = 3 warm-up forwards, then F3 B0, F4 B1 … F7 B4,
    // then the cooldown B5 B6 B7 (Narayanan et al. 2021 §2.2, Figure 4 top).
    const PipelineTimeline t = uniform(PipelineSchedule::OneFOneB, 4, 1, 8, 1.0, 2.0);
    QCOMPARE(stageOrder(t, 0), QStringLiteral("F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7"));
    // Stage 1 warms up with 2, the last stage with none.
    QCOMPARE(stageOrder(t, 1), QStringLiteral("F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7"));
    QCOMPARE(stageOrder(t, 3), QStringLiteral("F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"));
    // GPipe: all forwards, then all backwards.
    const PipelineTimeline g = uniform(PipelineSchedule::GPipe, 4, 1, 3, 1.0, 2.0);
    QCOMPARE(stageOrder(g, 2), QStringLiteral("F0 F1 F2 B0 B1 B2"));
    // Stage 0's first backward waits for B0 to come back: F0 leaves stage 3 at 4·t_f = 4, B0 crosses
    // stages 3, 2, 1 (3·t_b = 6) and runs on stage 0 in [10, 12].
    for (const PipelineBlock& b : t.blocks)
        if (b.stage == 0 && b.backward && b.microBatch == 0) {
            QCOMPARE(b.start, 10.0);
            QCOMPARE(b.end, 12.0);
        }
}

void TestPipeline::interleavedOrderByHand()
{
    // p = 2, v = 2, m = 4: forward micro-op k is chunk (k/2)%2 of micro-batch (k/4)·2 + k%2:
    // F0.c0 F1.c0 F0.c1 F1.c1 F2.c0 F3.c0 F2.c1 F3.c1; backward uses chunk 1 − (k/2)%2.
    // Stage 0 warms up with (2−0−1)·2 + (2−1)·2 = 4 micro-ops, stage 1 with 2.
    const PipelineTimeline t = uniform(PipelineSchedule::Interleaved, 2, 2, 4, 1.0, 2.0);
    QCOMPARE(stageOrder(t, 0, true), QStringLiteral("F0.c0 F1.c0 F0.c1 F1.c1 "
                                                 "F2.c0 B0.c1 F3.c0 B1.c1 F2.c1 B0.c0 F3.c1 B1.c0 "
                                                 "B2.c1 B3.c1 B2.c0 B3.c0"));
    QCOMPARE(stageOrder(t, 1, true), QStringLiteral("F0.c0 F1.c0 "
                                                 "F0.c1 B0.c1 F1.c1 B1.c1 F2.c0 B0.c0 F3.c0 B1.c0 F2.c1 B2.c1 F3.c1 B3.c1 "
                                                 "B2.c0 B3.c0"));
    // m == p: Megatron runs every forward, then every backward.
    const PipelineTimeline w = uniform(PipelineSchedule::Interleaved, 2, 2, 2, 1.0, 2.0);
    QCOMPARE(stageOrder(w, 1, true), QStringLiteral("F0.c0 F1.c0 F0.c1 F1.c1 B0.c1 B1.c1 B0.c0 B1.c0"));
}

void TestPipeline::dependenciesOnRandomCases()
{
    std::mt19937 rng(20240611);
    std::uniform_int_distribution<int> pick(0, 9);
    int checked = 0;
    for (int round = 0; round < 600; ++round) {
        const std::uint64_t p = 1 + std::uint64_t(pick(rng)) % 6;
        const std::uint64_t v = 1 + std::uint64_t(pick(rng)) % 3;
        const std::uint64_t m = 1 + std::uint64_t(pick(rng));
        const auto schedule = PipelineSchedule(round % 3);
        std::vector<double> f(p * v), b(p * v);
        for (std::uint64_t k = 0; k < p * v; ++k) {
            f[k] = pick(rng) == 0 ? 0.0 : 0.1 * pick(rng); // some zero-length blocks
            b[k] = 0.1 * pick(rng);
        }
        // Interleaving needs m % p == 0 (validate() says so); other m must still give a valid timeline.
        const PipelineTimeline t = pipelineTimeline(schedule, p, v, m, f, b);
        const std::string problem = checkTimeline(t, p, v, m, f, b);
        QVERIFY2(problem.empty(), qPrintable(QStringLiteral("%1 p=%2 v=%3 m=%4: ")
                                                 .arg(int(schedule)).arg(p).arg(v).arg(m)
                                             + QString::fromStdString(problem)));
        QVERIFY(t.bubbleFraction >= 0 && t.bubbleFraction < 1);
        ++checked;
    }
    QCOMPARE(checked, 600);
}

void TestPipeline::degenerateInputs()
{
    // p = 1, m = 1: one forward, one backward, no bubble.
    PipelineTimeline t = uniform(PipelineSchedule::OneFOneB, 1, 1, 1, 0.5, 1.0);
    QCOMPARE(t.blocks.size(), std::size_t(2));
    QCOMPARE(t.makespan, 1.5);
    QCOMPARE(t.bubbleFraction, 0.0);
    // Zero-length times: a timeline of empty blocks, makespan 0, no division by zero.
    t = uniform(PipelineSchedule::Interleaved, 4, 2, 8, 0.0, 0.0);
    QCOMPARE(t.blocks.size(), std::size_t(2 * 8 * 8));
    QCOMPARE(t.makespan, 0.0);
    QCOMPARE(t.bubbleFraction, 0.0);
    // No stages / no micro-batches: nothing to schedule.
    QVERIFY(uniform(PipelineSchedule::GPipe, 0, 1, 8, 1, 1).blocks.empty());
    t = uniform(PipelineSchedule::GPipe, 4, 1, 0, 1, 1);
    QVERIFY(t.blocks.empty());
    QCOMPARE(t.stageForwardSeconds.size(), std::size_t(4));
    QVERIFY(uniform(PipelineSchedule::GPipe, 4, 0, 8, 1, 1).blocks.empty());
    // Too few times, negative or NaN ones: the missing count as 0, never a crash.
    t = pipelineTimeline(PipelineSchedule::OneFOneB, 4, 1, 4, {1.0, -2.0, std::nan("")}, {});
    CHECK_TIMELINE(t, 4, 1, 4, {1.0, 0, 0, 0}, {0, 0, 0, 0});
    // 1F1B asked for with several chunks per stage, and interleaving with m % p ≠ 0: still complete.
    t = uniform(PipelineSchedule::OneFOneB, 4, 2, 8, 1, 2);
    QCOMPARE(t.blocks.size(), std::size_t(2 * 8 * 8));
    t = uniform(PipelineSchedule::Interleaved, 4, 2, 6, 1, 2);
    CHECK_TIMELINE(t, 4, 2, 6, std::vector<double>(8, 1), std::vector<double>(8, 2));
    // Absurd sizes: per-stage sums only, no blocks (and no allocation of billions).
    t = uniform(PipelineSchedule::GPipe, 64, 1, std::uint64_t(1) << 40, 1, 2);
    QVERIFY(t.blocks.empty());
    QCOMPARE(t.stageForwardSeconds.size(), std::size_t(64));
}

void TestPipeline::largeRunsComplete()
{
    // m = 4,096 micro-batches on 64 stages (2^19 blocks; 2^20 interleaved with v = 2): complete and
    // right at that size (speed is measured by tests/bench, not here).
    for (auto [schedule, v] : {std::pair{PipelineSchedule::GPipe, 1}, std::pair{PipelineSchedule::OneFOneB, 1},
                               std::pair{PipelineSchedule::Interleaved, 2}}) {
        const PipelineTimeline t = uniform(schedule, 64, std::uint64_t(v), 4096, 1.0 / v, 2.0 / v);
        QCOMPARE(t.blocks.size(), std::size_t(2) * 4096 * 64 * std::size_t(v));
        QVERIFY(near(t.makespan, 4096 * 3.0 + 63 * 3.0 / v));
    }
}

void TestPipeline::placeTokenPaper_data()
{
    QTest::addColumn<std::uint64_t>("token");
    QTest::addColumn<std::uint64_t>("sequence");
    QTest::addColumn<std::uint64_t>("position");
    QTest::addColumn<std::uint64_t>("step");
    QTest::addColumn<std::uint32_t>("replica");
    QTest::addColumn<std::uint64_t>("microBatch");
    QTest::addColumn<std::uint64_t>("row");
    // T = 1,024, G = 524,288 → S = 512 sequences per step; dp = 8, B = 32, N_acc = 2 → 64 per replica.
    // 70,000 = 68·1,024 + 368: sequence 68, step 0, q = 68, replica 68/64 = 1,
    // micro-batch (68 % 64)/32 = 0, row 68 % 32 = 4.
    QTest::newRow("paper token 70,000") << std::uint64_t(70000) << std::uint64_t(68) << std::uint64_t(368)
                                         << std::uint64_t(0) << std::uint32_t(1) << std::uint64_t(0) << std::uint64_t(4);
    // 986,088 = 962·1,024 + 1,000: step 962/512 = 1, q = 450, replica 450/64 = 7 (q 448…511),
    // micro-batch (450 % 64)/32 = 0, row 450 % 32 = 2.
    QTest::newRow("step 1, last replica") << std::uint64_t(986088) << std::uint64_t(962) << std::uint64_t(1000)
                                           << std::uint64_t(1) << std::uint32_t(7) << std::uint64_t(0) << std::uint64_t(2);
    // 524,288 + 100·1,024 = 626,688: step 1, q = 100, replica 1, micro-batch 36/32 = 1, row 4.
    QTest::newRow("second micro-batch") << std::uint64_t(626688) << std::uint64_t(612) << std::uint64_t(0)
                                         << std::uint64_t(1) << std::uint32_t(1) << std::uint64_t(1) << std::uint64_t(4);
    QTest::newRow("first token") << std::uint64_t(0) << std::uint64_t(0) << std::uint64_t(0) << std::uint64_t(0)
                                  << std::uint32_t(0) << std::uint64_t(0) << std::uint64_t(0);
    // Last token of step 0: sequence 511 → replica 7, micro-batch 1, row 31, position 1,023.
    QTest::newRow("last token of step 0") << std::uint64_t(524287) << std::uint64_t(511) << std::uint64_t(1023)
                                           << std::uint64_t(0) << std::uint32_t(7) << std::uint64_t(1) << std::uint64_t(31);
}

void TestPipeline::placeTokenPaper()
{
    QFETCH(std::uint64_t, token);
    const TokenPlacement p = placeToken(handPlan(8, 1, 1), ModelConfig{}, kPaperBatch, token);
    QCOMPARE(p.token, token);
    QTEST(p.sequence, "sequence");
    QTEST(p.position, "position");
    QTEST(p.step, "step");
    QTEST(p.dpReplica, "replica");
    QTEST(p.microBatch, "microBatch");
    QTEST(p.row, "row");
    // dp = 8 alone: replica r is GPU r; one TP slice holding the whole hidden vector.
    QCOMPARE(p.gpus, std::vector<std::uint32_t>{p.dpReplica});
    QCOMPARE(p.slices.size(), std::size_t(1));
    QCOMPARE(p.slices[0].colEnd, std::uint64_t(768));
    QCOMPARE(p.slices[0].headEnd, std::uint64_t(12));
    QVERIFY(p.slices[0].holdsPositionBetweenLayers);
}

void TestPipeline::placeTokenGpus()
{
    // dp = 2, pp = 2, tp = 4 (16 GPUs, g = tp + 4·(dp + 2·pp)): N_acc = 524,288/(32·1,024·2) = 8,
    // 256 sequences per replica; token 70,000 (q = 68) is replica 0, micro-batch 68/32 = 2, row 4;
    // its GPUs are replica 0's: stage 0 → 0…3, stage 1 → 8…11.
    TokenPlacement p = placeToken(handPlan(2, 2, 4), ModelConfig{}, kPaperBatch, 70000);
    QCOMPARE(p.dpReplica, std::uint32_t(0));
    QCOMPARE(p.microBatch, std::uint64_t(2));
    QCOMPARE(p.row, std::uint64_t(4));
    QCOMPARE(p.gpus, (std::vector<std::uint32_t>{0, 1, 2, 3, 8, 9, 10, 11}));
    // q = 300 → replica 1: GPUs 4…7 and 12…15.
    p = placeToken(handPlan(2, 2, 4), ModelConfig{}, kPaperBatch, 300 * 1024 + 7);
    QCOMPARE(p.dpReplica, std::uint32_t(1));
    QCOMPARE(p.microBatch, std::uint64_t((300 - 256) / 32));
    QCOMPARE(p.gpus, (std::vector<std::uint32_t>{4, 5, 6, 7, 12, 13, 14, 15}));
    // A permuted mesh (user assignment): the GPUs are looked up, not computed, and sorted.
    PlanDerivation d = handPlan(2, 1, 1);
    d.mesh = {{1, 0, 0}, {0, 0, 0}};
    p = placeToken(d, ModelConfig{}, kPaperBatch, 0);
    QCOMPARE(p.gpus, std::vector<std::uint32_t>{1});
}

void TestPipeline::placeTokenTensorSlices()
{
    // tp = 4 on the 768-wide, 12-head model: Megatron gives each rank 3 heads and 192 columns
    // (arXiv 2104.04473 §2.3); without SP every rank holds the whole hidden vector between layers.
    const TokenPlacement p = placeToken(handPlan(2, 1, 4), ModelConfig{}, kPaperBatch, 70000);
    QCOMPARE(p.slices.size(), std::size_t(4));
    for (std::uint32_t r = 0; r < 4; ++r) {
        const auto& s = p.slices[r];
        QCOMPARE(s.tpRank, r);
        QCOMPARE(s.colBegin, std::uint64_t(192) * r);
        QCOMPARE(s.colEnd - s.colBegin, std::uint64_t(192));
        QCOMPARE(s.headBegin, std::uint64_t(3) * r);
        QCOMPARE(s.headEnd - s.headBegin, std::uint64_t(3));
        QVERIFY(s.holdsPositionBetweenLayers);
    }
}

void TestPipeline::placeTokenSequenceParallel()
{
    // SP (arXiv 2205.05198 §4.2.2): positions in t = 4 blocks of 256; position 368 is rank 1's.
    TokenPlacement p = placeToken(handPlan(2, 1, 4, true), ModelConfig{}, kPaperBatch, 70000);
    QCOMPARE(p.position, std::uint64_t(368));
    for (std::uint32_t r = 0; r < 4; ++r)
        QCOMPARE(p.slices[r].holdsPositionBetweenLayers, r == 1);
    // T = 1,000 on t = 3: blocks of ⌈1000/3⌉ = 334: positions 333 → rank 0, 334 → 1, 999 → 2.
    ModelConfig model;
    model.heads = 12;
    model.hiddenSize = 768;
    const BatchShape odd{1000, 4, 1000 * 4 * 2};
    for (auto [position, rank] : {std::pair{333u, 0u}, std::pair{334u, 1u}, std::pair{999u, 2u}}) {
        p = placeToken(handPlan(2, 1, 3, true), model, odd, 1000 * 5 + position);
        QCOMPARE(p.position, std::uint64_t(position));
        for (std::uint32_t r = 0; r < 3; ++r)
            QCOMPARE(p.slices[r].holdsPositionBetweenLayers, r == rank);
        QCOMPARE(p.slices[1].colBegin, std::uint64_t(256));
        QCOMPARE(p.slices[2].headBegin, std::uint64_t(8));
    }
}

void TestPipeline::placeTokenMalformed()
{
    // Impossible shapes (validate() rejects them) still give an answer, never a division by zero.
    TokenPlacement p = placeToken(handPlan(8, 1, 1), ModelConfig{}, BatchShape{0, 32, 524288}, 12345);
    QCOMPARE(p.token, std::uint64_t(12345));
    p = placeToken(handPlan(8, 1, 1), ModelConfig{}, BatchShape{1024, 0, 524288}, 12345);
    QCOMPARE(p.sequence, std::uint64_t(12));
    p = placeToken(handPlan(8, 1, 1), ModelConfig{}, BatchShape{1024, 32, 100}, 70000);
    QVERIFY(p.dpReplica < 8);
    PlanDerivation empty;
    empty.plan.dp = 0;
    empty.plan.tp = 0;
    p = placeToken(empty, ModelConfig{}, kPaperBatch, 70000);
    QVERIFY(p.gpus.empty());
    QCOMPARE(p.slices.size(), std::size_t(1));
}

void TestPipeline::withDerivePlan()
{
    // The same answers through derivePlan (plan.cpp): Example 5.2 on 8 GPUs (pp = 8, 0.08 s per
    // layer forward, backward 2×) gives 0.24 / 0.48 s stages and N_acc = 524,288/(32·1,024) = 16
    // micro-batches; and the derived mesh places token 70,000 like the hand-built one.
    const auto gpu = tw::model::findGpu("a100-80gb");
    QVERIFY(gpu.has_value());
    ParallelPlan plan;
    plan.dp = 1;
    plan.pp = 8;
    plan.layerForwardSeconds = {0.08};
    PlanDerivation d = derivePlan(plan, Cluster{1, 8}, ModelConfig{}, kPaperBatch, *gpu);
    QCOMPARE(d.plan.layerPartition, (U64s{1, 1, 2, 2, 2, 2, 1, 1}));
    QCOMPARE(d.timeline.stageBusySeconds.size(), std::size_t(8));
    QVERIFY(near(d.timeline.stageForwardSeconds[0] + d.timeline.stageBackwardSeconds[0], 0.24));
    QVERIFY(near(d.timeline.stageForwardSeconds[2] + d.timeline.stageBackwardSeconds[2], 0.48));
    QCOMPARE(d.timeline.blocks.size(), std::size_t(2 * 16 * 8));

    plan = ParallelPlan{};
    plan.dp = 2;
    plan.pp = 2;
    plan.tp = 4;
    d = derivePlan(plan, Cluster{2, 8}, ModelConfig{}, kPaperBatch, *gpu);
    const TokenPlacement p = placeToken(d, ModelConfig{}, kPaperBatch, 70000);
    const TokenPlacement q = placeToken(handPlan(2, 2, 4), ModelConfig{}, kPaperBatch, 70000);
    QCOMPARE(p.gpus, q.gpus);
    QCOMPARE(p.dpReplica, q.dpReplica);
    QCOMPARE(p.microBatch, q.microBatch);
}

QTEST_APPLESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
