// Stage 4's views driven offscreen with core's real schedules: the schedule player (ring AllReduce
// step by step against a hand-derived table, stepping back, playing and pausing, binomial
// broadcast, pairwise All-to-All, tree and node layouts, 64 and more ranks), the step table and the
// algorithm table under QAbstractItemModelTester, and the algorithm comparison charts (one line per
// algorithm, the chosen one highlighted, values equal to collective::count()).
// With TOKENWIRE_SHOTS_DIR set, the views are also saved as PNGs there for a look.

#include "../support/testsupport.h"
#include "charts/collectivecharts.h"
#include "views/scheduleitems_p.h"
#include "views/scheduleview.h"
#include "views/steplistmodel.h"

#include "base/units.h"
#include "collective/schedule.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <array>
#include <bit>
#include <cmath>
#include <memory>

using tw::collective::Algorithm;
using tw::collective::Op;
using tw::collective::ScheduleSpec;
using tw::ui::CollectiveCharts;
using tw::ui::ScheduleView;
using Origins = ScheduleView::Origins;

namespace {

QString shotsDir()
{
    const QString dir = qEnvironmentVariable("TOKENWIRE_SHOTS_DIR");
    if (!dir.isEmpty())
        QDir().mkpath(dir);
    return dir;
}

using tw::test::specOf;

// "023" → {0, 2, 3}.
Origins originsOf(const QString& digits)
{
    Origins o = 0;
    for (QChar c : digits)
        o |= Origins(1) << c.digitValue();
    return o;
}

QString digitsOf(Origins o)
{
    QString s;
    for (; o; o &= o - 1)
        s += QString::number(std::countr_zero(o));
    return s.isEmpty() ? QStringLiteral("-") : s;
}

// One rank's chunks as "c0 c1 c2 c3" digit sets, for failure messages and comparisons.
QString rowOf(const ScheduleView& v, int rank, int chunks)
{
    QStringList parts;
    for (int c = 0; c < chunks; ++c)
        parts << digitsOf(v.cellOrigins(rank, std::uint32_t(c)));
    return parts.join(QLatin1Char(' '));
}

std::uint32_t blockChunk(const ScheduleSpec& spec, std::uint32_t origin, std::uint32_t destination)
{
    tw::collective::Schedule s(spec);
    for (std::uint32_t c = 0; c < s.chunkCount(); ++c)
        if (s.chunk(c).origin == origin && s.chunk(c).destination == destination)
            return c;
    return ~0u;
}

} // namespace

class TestScheduleView : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void rankColoursStayApart();
    void ringAllReduceStepByStep();
    void stepBackRestoresThePreviousState();
    void setStepJumpsBothWays();
    void playThenPauseAdvancesSteps();
    void binomialBroadcastFromRoot2();
    void pairwiseAllToAllEndsTransposed();
    void everyAlgorithmCompletes_data();
    void everyAlgorithmCompletes();
    void treeAndNodeLayouts();
    void labelsNeverCoverEachOtherOrTheRanks_data();
    void labelsNeverCoverEachOtherOrTheRanks();
    void sixtyFourRanksStillWork();
    void beyondSixtyFourRanksIsAggregated();
    void invalidSpecShowsTheError();
    void stepListModel();
    void algorithmTableModel();
    void chartsOneSeriesPerAlgorithm();
    void screenshots();

private:
    void showSpec(const ScheduleSpec& spec);
    std::unique_ptr<ScheduleView> m_view;
};

void TestScheduleView::init()
{
    m_view = std::make_unique<ScheduleView>();
    m_view->resize(1280, 720);
}

void TestScheduleView::cleanup()
{
    m_view.reset();
}

void TestScheduleView::showSpec(const ScheduleSpec& spec)
{
    m_view->setSpec(spec);
    if (!m_view->isVisible()) {
        m_view->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
    }
}

void TestScheduleView::ringAllReduceStepByStep()
{
    // Ring AllReduce, N = 4, 4 chunks (M = 4 MiB, 1 MiB each). Core's ring (algorithms.cpp, RingGen):
    // reduce-scatter step s = 0,1,2: rank r sends chunk (r − s − 1) mod 4 to r + 1, which adds it;
    // all-gather step s = 0,1,2: rank r sends chunk (r − s) mod 4 to r + 1, which overwrites it. So
    // after the reduce-scatter rank r holds the full sum of chunk r (this generator's convention —
    // not (r+1) mod 4: its first send is chunk r−1, not chunk r). Derived by hand, "023" = the sum
    // of ranks 0, 2 and 3's data, columns c0 c1 c2 c3:
    //   step 0          step 1            step 2                 step 3
    //   r0 0 0 0 0      0 0 03 0          0 023 03 0             0123 023 03 0
    //   r1 1 1 1 1      1 1 1 01          1 1 013 01             1 0123 013 01
    //   r2 2 2 2 2      12 2 2 2          12 2 2 012             12 2 0123 012
    //   r3 3 3 3 3      3 23 3 3          123 23 3 3             123 23 3 0123
    //   step 4 (copies)           step 5                      step 6
    //   r0 0123 023 03 0123       0123 023 0123 0123          every chunk 0123
    //   r1 0123 0123 013 01       0123 0123 013 0123
    //   r2 12 0123 0123 012       0123 0123 0123 012
    //   r3 123 23 0123 0123       123 0123 0123 0123
    const QList<QStringList> table = {
        {QStringLiteral("0 0 0 0"), QStringLiteral("1 1 1 1"), QStringLiteral("2 2 2 2"), QStringLiteral("3 3 3 3")},
        {QStringLiteral("0 0 03 0"), QStringLiteral("1 1 1 01"), QStringLiteral("12 2 2 2"), QStringLiteral("3 23 3 3")},
        {QStringLiteral("0 023 03 0"), QStringLiteral("1 1 013 01"), QStringLiteral("12 2 2 012"), QStringLiteral("123 23 3 3")},
        {QStringLiteral("0123 023 03 0"), QStringLiteral("1 0123 013 01"), QStringLiteral("12 2 0123 012"),
         QStringLiteral("123 23 3 0123")},
        {QStringLiteral("0123 023 03 0123"), QStringLiteral("0123 0123 013 01"), QStringLiteral("12 0123 0123 012"),
         QStringLiteral("123 23 0123 0123")},
        {QStringLiteral("0123 023 0123 0123"), QStringLiteral("0123 0123 013 0123"), QStringLiteral("0123 0123 0123 012"),
         QStringLiteral("123 0123 0123 0123")},
        {QStringLiteral("0123 0123 0123 0123"), QStringLiteral("0123 0123 0123 0123"), QStringLiteral("0123 0123 0123 0123"),
         QStringLiteral("0123 0123 0123 0123")},
    };
    showSpec(specOf(Op::AllReduce, Algorithm::Ring, 4, 4.0 * 1024 * 1024));
    QCOMPARE(m_view->layoutKind(), ScheduleView::LayoutKind::Ring);
    QCOMPARE(m_view->stepCount(), 6);
    QCOMPARE(m_view->pieceCount(), 4);
    QCOMPARE(m_view->cellsPerRank(), 4);
    QVERIFY(!m_view->aggregated());
    QSignalSpy steps(m_view.get(), &ScheduleView::stepChanged);
    for (int k = 0; k <= 6; ++k) {
        if (k > 0)
            m_view->stepForward();
        QCOMPARE(m_view->currentStep(), k);
        for (int r = 0; r < 4; ++r) {
            const QString got = rowOf(*m_view, r, 4);
            const QStringList want = table[k][r].split(QLatin1Char(' '));
            for (int c = 0; c < 4; ++c)
                QVERIFY2(m_view->cellOrigins(r, std::uint32_t(c)) == originsOf(want[c]),
                         qPrintable(QStringLiteral("step %1, rank %2: got %3, want %4").arg(k).arg(r).arg(got, table[k][r])));
        }
        // The arrows: the step just applied, rank r → r + 1, reduce in the first three steps.
        const auto& shown = m_view->transfersShown();
        if (k == 0) {
            QVERIFY(shown.empty());
            QCOMPARE(m_view->shownStep(), -1);
            continue;
        }
        QCOMPARE(int(shown.size()), 4);
        QCOMPARE(m_view->shownStep(), k - 1);
        for (const auto& t : shown) {
            QCOMPARE(t.dst, (t.src + 1) % 4);
            QCOMPARE(t.reduce, k <= 3);
            QCOMPARE(t.bytes, 1024.0 * 1024.0);
            // Reduce-scatter step s: chunk (r − s − 1) mod 4; all-gather step s: chunk (r − s) mod 4.
            const std::uint32_t s = std::uint32_t(k <= 3 ? k - 1 : k - 4);
            QCOMPARE(t.chunk, (t.src + 8 - s - (k <= 3 ? 1 : 0)) % 4);
        }
        QCOMPARE(m_view->arrowLabelsShown(), 4);
        QVERIFY2(m_view->phase() == (k <= 3 ? QStringLiteral("reduce-scatter") : QStringLiteral("all-gather")), qPrintable(m_view->phase()));
    }
    QCOMPARE(steps.count(), 6);
    // Full sums are drawn framed; the first step's partial sums are stripes of two.
    QVERIFY(m_view->cellLook(0, 0).complete);
    m_view->setStep(1);
    const auto look = m_view->cellLook(1, 3);
    QCOMPARE(look.state, ScheduleView::CellState::Held);
    QCOMPARE(look.origins, originsOf(QStringLiteral("01")));
    QVERIFY(!look.complete);
    QVERIFY(m_view->caption().contains(QStringLiteral("Step 1 of 6")));
    // Nothing moves past the end.
    m_view->setStep(6);
    m_view->stepForward();
    QCOMPARE(m_view->currentStep(), 6);
}

void TestScheduleView::stepBackRestoresThePreviousState()
{
    showSpec(specOf(Op::AllReduce, Algorithm::Ring, 4, 4096));
    auto snapshot = [&] {
        QStringList rows;
        for (int r = 0; r < 4; ++r)
            rows << rowOf(*m_view, r, 4);
        return rows;
    };
    std::vector<QStringList> seen{snapshot()};
    std::vector<std::vector<tw::collective::Transfer>> arrows{m_view->transfersShown()};
    for (int k = 1; k <= 6; ++k) {
        m_view->stepForward();
        seen.push_back(snapshot());
        arrows.push_back(m_view->transfersShown());
    }
    for (int k = 5; k >= 0; --k) {
        m_view->stepBack();
        QCOMPARE(m_view->currentStep(), k);
        QCOMPARE(snapshot(), seen[std::size_t(k)]);
        QVERIFY(m_view->transfersShown() == arrows[std::size_t(k)]);
    }
    m_view->stepBack(); // at 0 already
    QCOMPARE(m_view->currentStep(), 0);
    QCOMPARE(snapshot(), seen[0]);
}

void TestScheduleView::setStepJumpsBothWays()
{
    showSpec(specOf(Op::AllReduce, Algorithm::Rabenseifner, 8, 8 * 1000));
    const int steps = m_view->stepCount();
    QCOMPARE(steps, 6); // 2·log2 8
    m_view->setStep(steps);
    for (int r = 0; r < 8; ++r)
        for (int p = 0; p < m_view->pieceCount(); ++p)
            QCOMPARE(m_view->pieceOrigins(r, p), Origins(0xff));
    // Rabenseifner's chunk 0 is the whole buffer: complete everywhere at the end.
    QCOMPARE(m_view->cellOrigins(3, 0), Origins(0xff));
    m_view->setStep(3); // after the halving: each rank holds the full sum of one eighth
    int full = 0;
    for (int r = 0; r < 8; ++r)
        for (int p = 0; p < m_view->pieceCount(); ++p)
            full += m_view->pieceOrigins(r, p) == Origins(0xff);
    QCOMPARE(full, 8);
    m_view->setStep(-5);
    QCOMPARE(m_view->currentStep(), 0);
    m_view->setStep(1000);
    QCOMPARE(m_view->currentStep(), steps);
}

void TestScheduleView::playThenPauseAdvancesSteps()
{
    showSpec(specOf(Op::AllReduce, Algorithm::Ring, 8, 8 * 1024));
    QSignalSpy playing(m_view.get(), &ScheduleView::playingChanged);
    m_view->setSpeed(25); // steps per second
    m_view->play();
    QVERIFY(m_view->isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(m_view->currentStep() >= 2, 10000);
    m_view->pause();
    QVERIFY(!m_view->isPlaying());
    QCOMPARE(playing.count(), 2);
    const int at = m_view->currentStep();
    QVERIFY(at >= 2);
    QTest::qWait(150);
    QCOMPARE(m_view->currentStep(), at); // paused: nothing moves
    // A packet stopped in flight shows the next step's transfers; stepForward lands it.
    if (m_view->packetProgress() >= 0) {
        QCOMPARE(m_view->shownStep(), at);
        m_view->stepForward();
        QCOMPARE(m_view->currentStep(), at + 1);
        QCOMPARE(m_view->packetProgress(), -1.0);
    }
    // Frames by hand: half a step in flight, then the step lands.
    m_view->setStep(0);
    m_view->setSpeed(2);
    m_view->advanceAnimation(0.25);
    QCOMPARE(m_view->currentStep(), 0);
    QCOMPARE(m_view->shownStep(), 0);
    QVERIFY(qAbs(m_view->packetProgress() - 0.5) < 1e-9);
    QCOMPARE(int(m_view->transfersShown().size()), 8);
    m_view->advanceAnimation(0.3);
    QCOMPARE(m_view->currentStep(), 1);
    // Playing to the end stops by itself.
    m_view->setSpeed(240);
    m_view->play();
    QTRY_VERIFY_WITH_TIMEOUT(!m_view->isPlaying(), 10000);
    QCOMPARE(m_view->currentStep(), m_view->stepCount());
    for (int r = 0; r < 8; ++r)
        QCOMPARE(m_view->cellOrigins(r, 5), Origins(0xff));
}

void TestScheduleView::binomialBroadcastFromRoot2()
{
    showSpec(specOf(Op::Broadcast, Algorithm::Binomial, 5, 1000, 2));
    QCOMPARE(m_view->layoutKind(), ScheduleView::LayoutKind::Tree);
    QCOMPARE(m_view->stepCount(), 3); // ceil(log2 5)
    QCOMPARE(m_view->cellOrigins(2, 0), Origins(1) << 2);
    for (int r : {0, 1, 3, 4}) {
        QCOMPARE(m_view->cellOrigins(r, 0), Origins(0));
        QCOMPARE(m_view->cellLook(r, 0).state, ScheduleView::CellState::Empty);
    }
    // Root at the top of the drawn tree.
    const auto& parents = m_view->treeParents();
    QCOMPARE(int(parents.size()), 5);
    QCOMPARE(parents[2], -1);
    for (int r : {0, 1, 3, 4}) {
        QVERIFY(parents[std::size_t(r)] >= 0);
        QVERIFY(m_view->rankCenter(2).y() < m_view->rankCenter(r).y());
    }
    m_view->setStep(3);
    for (int r = 0; r < 5; ++r) {
        QCOMPARE(m_view->cellOrigins(r, 0), Origins(1) << 2);
        QCOMPARE(m_view->cellLook(r, 0).state, ScheduleView::CellState::Held);
        QVERIFY(!m_view->cellLook(r, 0).complete); // a copy is never a "sum"
    }
    for (const auto& t : m_view->transfersShown())
        QVERIFY(!t.reduce);
}

void TestScheduleView::pairwiseAllToAllEndsTransposed()
{
    const ScheduleSpec spec = specOf(Op::AllToAll, Algorithm::Pairwise, 3, 3 * 300);
    showSpec(spec);
    QCOMPARE(m_view->stepCount(), 2);
    QCOMPARE(m_view->cellsPerRank(), 3);
    // Start: rank r holds its own blocks (r → d) and shows them waiting for their destinations.
    for (std::uint32_t r = 0; r < 3; ++r)
        for (std::uint32_t d = 0; d < 3; ++d) {
            QCOMPARE(m_view->cellOrigins(int(r), blockChunk(spec, r, d)), Origins(1) << r);
            if (d != r)
                QCOMPARE(m_view->cellOrigins(int(d), blockChunk(spec, r, d)), Origins(0));
            const auto look = m_view->cellLook(int(r), int(d));
            QCOMPARE(look.origins, Origins(1) << r);
            QCOMPARE(look.state, d == r ? ScheduleView::CellState::Held : ScheduleView::CellState::Pending);
        }
    m_view->setStep(2);
    // End: transposed — rank d holds the block every origin o sent it, in position o.
    for (std::uint32_t o = 0; o < 3; ++o)
        for (std::uint32_t d = 0; d < 3; ++d) {
            QCOMPARE(m_view->cellOrigins(int(d), blockChunk(spec, o, d)), Origins(1) << o);
            const auto look = m_view->cellLook(int(d), int(o));
            QCOMPARE(look.state, ScheduleView::CellState::Held);
            QCOMPARE(look.origins, Origins(1) << o);
        }
    // Each rank's own blocks for the others are delivered (drawn hollow).
    QCOMPARE(m_view->cellLook(0, 1).state, ScheduleView::CellState::Held);
    QCOMPARE(m_view->chunkLabel(blockChunk(spec, 1, 2)), QStringLiteral("1→2"));
}

void TestScheduleView::everyAlgorithmCompletes_data()
{
    QTest::addColumn<int>("op");
    QTest::addColumn<int>("algorithm");
    QTest::addColumn<int>("ranks");
    for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather, Op::Broadcast, Op::Reduce, Op::AllToAll})
        for (Algorithm a : tw::collective::algorithmsFor(op))
            for (int n : {1, 5, 8}) {
                ScheduleSpec spec = specOf(op, a, std::uint64_t(n), 3 * 1024 * 1024, std::uint32_t(n > 1 ? 1 : 0));
                if (spec.algorithm == Algorithm::Hierarchical && n == 8)
                    spec.ranksPerNode = 4;
                if (!tw::collective::validate(spec).empty())
                    continue; // only the calls core schedules (checked in the test below)
                QTest::addRow("%s/%s/%d", std::string(tw::collective::toString(op)).c_str(),
                              std::string(tw::collective::toString(a)).c_str(), n)
                    << int(op) << int(a) << n;
            }
}

// The replayed state ends where each operation must end, for every algorithm core has — what the
// cells show is the schedule's doing, nothing else.
void TestScheduleView::everyAlgorithmCompletes()
{
    QFETCH(int, op);
    QFETCH(int, algorithm);
    QFETCH(int, ranks);
    ScheduleSpec spec = specOf(Op(op), Algorithm(algorithm), std::uint64_t(ranks), 3 * 1024 * 1024, std::uint32_t(ranks > 1 ? 1 : 0));
    if (spec.algorithm == Algorithm::Hierarchical && ranks == 8)
        spec.ranksPerNode = 4;
    QVERIFY(tw::collective::validate(spec).empty());
    m_view->setSpec(spec);
    QVERIFY(m_view->hasSchedule());
    m_view->setStep(m_view->stepCount());
    const Origins all = (Origins(1) << ranks) - 1;
    const int pieces = m_view->pieceCount();
    QVERIFY(pieces > 0);
    for (int r = 0; r < ranks; ++r)
        for (int p = 0; p < pieces; ++p) {
            const Origins got = m_view->pieceOrigins(r, p);
            const QString where = QStringLiteral("rank %1, piece %2: %3").arg(r).arg(p).arg(digitsOf(got));
            switch (spec.op) {
            case Op::AllReduce: QVERIFY2(got == all, qPrintable(where)); break;
            case Op::ReduceScatter:
                // Rank r's slice r (of N equal pieces) is the full sum.
                if (p * ranks / pieces == r)
                    QVERIFY2(got == all, qPrintable(where));
                break;
            case Op::AllGather: QVERIFY2(got == Origins(1) << (p * ranks / pieces), qPrintable(where)); break;
            case Op::Broadcast: QVERIFY2(got == Origins(1) << spec.root, qPrintable(where)); break;
            case Op::Reduce:
                if (r == int(spec.root))
                    QVERIFY2(got == all, qPrintable(where));
                break;
            case Op::AllToAll: {
                tw::collective::Schedule s(spec);
                if (s.chunk(std::uint32_t(p)).destination == std::uint32_t(r))
                    QVERIFY2(got == Origins(1) << s.chunk(std::uint32_t(p)).origin, qPrintable(where));
                break;
            }
            case Op::SendRecv: break;
            }
        }
}

void TestScheduleView::labelsNeverCoverEachOtherOrTheRanks_data()
{
    QTest::addColumn<int>("op");
    QTest::addColumn<int>("algorithm");
    QTest::addColumn<int>("ranks");
    QTest::addColumn<QSize>("size");
    // Stage 4's drawing at 1280×720 is about 925×300 px (the form on its left, the tables below); the
    // whole screen of a projector too.
    for (QSize size : {QSize(925, 300), QSize(1280, 720)})
        for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather, Op::Broadcast, Op::AllToAll})
            for (Algorithm a : tw::collective::algorithmsFor(op))
                for (int n = 2; n <= 16; n += (n < 8 ? 1 : 4)) {
                    ScheduleSpec spec = specOf(op, a, std::uint64_t(n), 248879616, 0);
                    if (spec.algorithm == Algorithm::Hierarchical)
                        spec.ranksPerNode = n % 4 == 0 ? 4 : 1;
                    if (!tw::collective::validate(spec).empty())
                        continue;
                    QTest::addRow("%s/%s/%d/%dx%d", std::string(tw::collective::toString(op)).c_str(),
                                  std::string(tw::collective::toString(a)).c_str(), n, size.width(), size.height())
                        << int(op) << int(a) << n << size;
                }
}

// Issue 34: the ring's "+ c5 · 31.11 MB" labels collided with each other and covered the rank buffers at
// 1280×720. At every step of every schedule, no label (an arrow's, a rank's name) covers another label
// or a rank card; the labels shorten or give way instead (the sizes stay in the caption and the table).
void TestScheduleView::labelsNeverCoverEachOtherOrTheRanks()
{
    QFETCH(int, op);
    QFETCH(int, algorithm);
    QFETCH(int, ranks);
    QFETCH(QSize, size);
    ScheduleSpec spec = specOf(Op(op), Algorithm(algorithm), std::uint64_t(ranks), 248879616, 0);
    if (spec.algorithm == Algorithm::Hierarchical)
        spec.ranksPerNode = ranks % 4 == 0 ? 4 : 1;
    m_view->resize(size);
    showSpec(spec);
    QCOMPARE(m_view->viewport()->size().width() > size.width() - 30, true);
    int labelled = 0;
    for (int step = 0; step <= m_view->stepCount(); ++step) {
        m_view->setStep(step);
        const std::vector<QRectF> labels = m_view->labelRects();
        const std::vector<QRectF> cards = m_view->rankRects();
        labelled += m_view->arrowLabelsShown();
        for (std::size_t i = 0; i < labels.size(); ++i) {
            const QRectF a = labels[i].adjusted(1, 1, -1, -1);
            for (std::size_t j = i + 1; j < labels.size(); ++j)
                QVERIFY2(!a.intersects(labels[j].adjusted(1, 1, -1, -1)),
                         qPrintable(QStringLiteral("step %1: labels %2 and %3 overlap").arg(step).arg(i).arg(j)));
            for (std::size_t r = 0; r < cards.size(); ++r)
                QVERIFY2(!a.intersects(cards[r]),
                         qPrintable(QStringLiteral("step %1: label %2 covers rank %3").arg(step).arg(i).arg(r)));
        }
    }
    // On the projector's whole screen a small call keeps some labels (the check above is not won by
    // showing none).
    if (size.width() >= 1280 && ranks <= 4)
        QVERIFY2(labelled > 0, "no arrow label at any step");
}

void TestScheduleView::treeAndNodeLayouts()
{
    showSpec(specOf(Op::AllReduce, Algorithm::BinaryTree, 8, 8 * 65536.0));
    QCOMPARE(m_view->layoutKind(), ScheduleView::LayoutKind::Tree);
    const auto parents = m_view->treeParents();
    QCOMPARE(std::count(parents.begin(), parents.end(), -1), std::ptrdiff_t(1));
    const int root = int(std::find(parents.begin(), parents.end(), -1) - parents.begin());
    for (int r = 0; r < 8; ++r)
        if (r != root) {
            QVERIFY(m_view->rankCenter(parents[std::size_t(r)]).y() < m_view->rankCenter(r).y());
        }
    // Reduce arrows point up the tree (child → parent) in the first step.
    m_view->stepForward();
    for (const auto& t : m_view->transfersShown())
        if (t.reduce)
            QCOMPARE(parents[t.src], int(t.dst));

    showSpec(specOf(Op::AllReduce, Algorithm::DoubleBinaryTree, 8, 1e6));
    QCOMPARE(m_view->layoutKind(), ScheduleView::LayoutKind::Tree);
    showSpec(specOf(Op::Broadcast, Algorithm::Chain, 8, 1e6, 3));
    QCOMPARE(m_view->layoutKind(), ScheduleView::LayoutKind::Tree);
    QCOMPARE(m_view->treeParents()[3], -1);
    showSpec(specOf(Op::AllReduce, Algorithm::Hierarchical, 16, 16e6, 0, 4));
    QCOMPARE(m_view->layoutKind(), ScheduleView::LayoutKind::Grid);
    // Ranks of one node sit side by side: rank 0 and 1 closer than rank 0 and 4.
    const auto d = [&](int a, int b) { return QLineF(m_view->rankCenter(a), m_view->rankCenter(b)).length(); };
    QVERIFY(d(0, 1) < d(0, 4));
    showSpec(specOf(Op::AllGather, Algorithm::Bruck, 5, 5e3));
    QCOMPARE(m_view->layoutKind(), ScheduleView::LayoutKind::Ring);
}

void TestScheduleView::sixtyFourRanksStillWork()
{
    showSpec(specOf(Op::AllReduce, Algorithm::Ring, 64, 64.0 * 1024 * 1024));
    QVERIFY(!m_view->aggregated());
    QCOMPARE(m_view->cellsPerRank(), 64);
    QCOMPARE(m_view->stepCount(), 126);
    m_view->stepForward();
    QCOMPARE(int(m_view->transfersShown().size()), 64);
    QCOMPARE(m_view->arrowLabelsShown(), 0); // 64 labels would cover the ring: the step table lists them
    m_view->setStep(63);                      // end of the reduce-scatter: rank r has the sum of chunk r
    for (int r = 0; r < 64; ++r)
        QCOMPARE(m_view->cellOrigins(r, std::uint32_t(r)), ~Origins(0));
    m_view->stepBack();
    QCOMPARE(m_view->currentStep(), 62);
    QVERIFY(m_view->cellOrigins(5, 5) != ~Origins(0));
    // Rank 0 on top, rank 16 on the right (clockwise).
    QVERIFY(m_view->rankCenter(0).y() < m_view->rankCenter(32).y());
    QVERIFY(m_view->rankCenter(16).x() > m_view->rankCenter(48).x());

    // Frames at 60 Hz with 64 packets in flight, each painted: measured, not asserted.
    m_view->resetFrameStats();
    m_view->setSpeed(4);
    QElapsedTimer wall;
    wall.start();
    for (int i = 0; i < 120; ++i) {
        m_view->advanceAnimation(1.0 / 60);
        m_view->viewport()->repaint();
    }
    const auto stats = m_view->frameStats();
    qInfo("64-rank ring, 120 frames: tick mean %.3f ms (max %.3f), paint mean %.2f ms (max %.2f), wall %.1f ms/frame",
          stats.meanTickMs, stats.maxTickMs, stats.meanPaintMs, stats.maxPaintMs, double(wall.elapsed()) / 120);
    QVERIFY(m_view->currentStep() >= 62 + 7 && m_view->currentStep() <= 62 + 8);
}

void TestScheduleView::beyondSixtyFourRanksIsAggregated()
{
    showSpec(specOf(Op::AllReduce, Algorithm::Ring, 65, 65e6));
    QVERIFY(m_view->aggregated());
    QCOMPARE(m_view->cellsPerRank(), 0);
    m_view->stepForward();
    QCOMPARE(m_view->cellOrigins(0, 0), Origins(0));
    QCOMPARE(int(m_view->transfersShown().size()), 65);
    showSpec(specOf(Op::AllReduce, Algorithm::Ring, 1024, 1e9));
    m_view->setStep(700);
    QCOMPARE(int(m_view->transfersShown().size()), 1024);
    m_view->stepBack();
    QCOMPARE(m_view->currentStep(), 699);
    QVERIFY(m_view->legendEntries().join(QLatin1Char(' ')).contains(QStringLiteral("aggregated")));
    showSpec(specOf(Op::AllReduce, Algorithm::BinaryTree, 200, 1e6));
    QCOMPARE(m_view->layoutKind(), ScheduleView::LayoutKind::Tree);
    m_view->setStep(m_view->stepCount());
    QCOMPARE(m_view->currentStep(), m_view->stepCount());
}

void TestScheduleView::invalidSpecShowsTheError()
{
    showSpec(specOf(Op::AllReduce, Algorithm::Hierarchical, 6, 1e6, 0, 4)); // 6 ranks are not whole nodes of 4
    QVERIFY(!m_view->hasSchedule());
    QVERIFY(!m_view->errorText().isEmpty());
    QVERIFY(m_view->caption().contains(m_view->errorText()));
    QCOMPARE(m_view->stepCount(), 0);
    m_view->stepForward();
    m_view->play();
    QVERIFY(!m_view->isPlaying());
    QCOMPARE(m_view->rankCenter(0), QPointF(-1, -1));
}

void TestScheduleView::stepListModel()
{
    tw::ui::StepListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), int(tw::ui::StepListModel::ColumnCount));
    showSpec(specOf(Op::AllReduce, Algorithm::Ring, 4, 4e6));
    model.follow(m_view.get());
    QCOMPARE(model.rowCount(), 0);
    m_view->stepForward();
    QCOMPARE(model.rowCount(), 4);
    const auto& shown = m_view->transfersShown();
    for (int row = 0; row < 4; ++row) {
        const auto& t = shown[std::size_t(row)];
        QCOMPARE(model.index(row, tw::ui::StepListModel::FromColumn).data().toString(), QStringLiteral("rank %1").arg(t.src));
        QCOMPARE(model.index(row, tw::ui::StepListModel::ToColumn).data().toString(), QStringLiteral("rank %1").arg(t.dst));
        QCOMPARE(model.index(row, tw::ui::StepListModel::ChunkColumn).data().toString(), QStringLiteral("c%1").arg(t.chunk));
        QCOMPARE(model.index(row, tw::ui::StepListModel::BytesColumn).data().toString(),
                 QString::fromStdString(tw::formatBytes(t.bytes)));
        QCOMPARE(model.index(row, tw::ui::StepListModel::BytesColumn).data(tw::ui::StepListModel::RawValueRole).toDouble(), 1e6);
        QVERIFY(model.index(row, tw::ui::StepListModel::KindColumn).data().toString().startsWith(QStringLiteral("reduce")));
    }
    m_view->setStep(5);
    QVERIFY(model.index(0, tw::ui::StepListModel::KindColumn).data().toString().startsWith(QStringLiteral("copy")));
    model.setDisplayUnits({tw::ByteUnits::Binary, 4});
    QCOMPARE(model.index(0, tw::ui::StepListModel::BytesColumn).data().toString(),
             QString::fromStdString(tw::formatBytes(1e6, {tw::ByteUnits::Binary, 4})));
    // All-to-All blocks are named origin → destination.
    showSpec(specOf(Op::AllToAll, Algorithm::Bruck, 5, 5e3));
    m_view->stepForward();
    QVERIFY(model.rowCount() > 0);
    QVERIFY(model.index(0, tw::ui::StepListModel::ChunkColumn).data().toString().contains(QStringLiteral("→")));
    m_view->setStep(0);
    QCOMPARE(model.rowCount(), 0);
    model.follow(nullptr);
    QCOMPARE(model.rowCount(), 0);
}

void TestScheduleView::algorithmTableModel()
{
    tw::ui::AlgorithmTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const ScheduleSpec spec = specOf(Op::AllReduce, Algorithm::Ring, 8, 64.0 * 1024 * 1024);
    const tw::collective::LinkModel link{5e-6, 25e9};
    model.setSpec(spec, link);
    const auto& algorithms = tw::collective::algorithmsFor(Op::AllReduce);
    QCOMPARE(model.rowCount(), int(algorithms.size()));
    for (int row = 0; row < model.rowCount(); ++row) {
        const Algorithm a = model.algorithmAt(row);
        QVERIFY(a == algorithms[std::size_t(row)]);
        ScheduleSpec s = spec;
        s.algorithm = a;
        if (a == Algorithm::Hierarchical)
            s.ranksPerNode = CollectiveCharts::kDefaultRanksPerNode;
        const auto c = tw::collective::count(s, link);
        using M = tw::ui::AlgorithmTableModel;
        QCOMPARE(model.index(row, M::StepsColumn).data(M::RawValueRole).toULongLong(), qulonglong(c.steps));
        QCOMPARE(model.index(row, M::TotalBytesColumn).data(M::RawValueRole).toDouble(), c.totalBytes);
        QCOMPARE(model.index(row, M::BusiestRankColumn).data(M::RawValueRole).toDouble(), c.maxRankSentBytes);
        QCOMPARE(model.index(row, M::TimeColumn).data(M::RawValueRole).toDouble(), c.timeSeconds);
        QCOMPARE(model.index(row, M::BusBwColumn).data(M::RawValueRole).toDouble(), *c.busbw);
        QCOMPARE(model.index(row, M::TotalBytesColumn).data().toString(), QString::fromStdString(tw::formatBytes(c.totalBytes)));
        QCOMPARE(model.index(row, 0).data(M::SelectedRole).toBool(), a == Algorithm::Ring);
        QCOMPARE(model.index(row, 0).data(Qt::FontRole).isValid(), a == Algorithm::Ring);
    }
    // Ring: 2(N−1)/N·M per rank, 2(N−1) steps (docs/model.md).
    const int ring = model.rowOf(Algorithm::Ring);
    QCOMPARE(model.countsAt(ring)->steps, std::uint64_t(14));
    QCOMPARE(model.countsAt(ring)->maxRankSentBytes, 2.0 * 7 / 8 * spec.bytes);
    // An algorithm that cannot run the call shows a dash and says why.
    model.setSpec(specOf(Op::AllReduce, Algorithm::Hierarchical, 6, 1e6, 0, 4), link);
    const int hier = model.rowOf(Algorithm::Hierarchical);
    QVERIFY(!model.countsAt(hier).has_value());
    QCOMPARE(model.index(hier, 1).data().toString(), QStringLiteral("—"));
    QVERIFY(!model.index(hier, 1).data(Qt::ToolTipRole).toString().isEmpty());
    model.setSpec(specOf(Op::AllToAll, Algorithm::Bruck, 16, 1e6), link);
    QCOMPARE(model.rowCount(), 2);
    QVERIFY(model.index(model.rowOf(Algorithm::Bruck), 0).data(tw::ui::AlgorithmTableModel::SelectedRole).toBool());
}

void TestScheduleView::chartsOneSeriesPerAlgorithm()
{
    QWidget host;
    host.resize(1280, 1000);
    auto* layout = new QVBoxLayout(&host);
    CollectiveCharts charts(&host);
    for (QCustomPlot* p : charts.plots())
        layout->addWidget(p);
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
    const tw::collective::LinkModel link{10e-6, 12.5e9};
    const ScheduleSpec spec = specOf(Op::AllReduce, Algorithm::Ring, 16, 16.0 * 1024 * 1024);
    charts.setSpec(spec, link);
    qInfo("CollectiveCharts::setSpec (AllReduce, 8 algorithms): %.1f ms of count() calls", charts.computeMilliseconds());
    const auto& algorithms = tw::collective::algorithmsFor(Op::AllReduce);
    for (int m = 0; m < CollectiveCharts::MetricCount; ++m) {
        QCustomPlot* plot = charts.plot(CollectiveCharts::Metric(m));
        QCOMPARE(plot->plottableCount(), 2 * int(algorithms.size()));
        QCOMPARE(plot->legend->itemCount(), int(algorithms.size()));
        for (int s = 0; s < CollectiveCharts::SweepCount; ++s) {
            const auto& series = charts.series(CollectiveCharts::Metric(m), CollectiveCharts::Sweep(s));
            QCOMPARE(series.size(), algorithms.size());
            int highlighted = 0;
            for (std::size_t i = 0; i < series.size(); ++i) {
                QVERIFY(series[i].algorithm == algorithms[i]);
                highlighted += series[i].highlighted;
                QCOMPARE(series[i].highlighted, algorithms[i] == Algorithm::Ring);
                QVERIFY2(!series[i].x.empty(), qPrintable(series[i].name));
                QCPGraph* g = charts.graph(CollectiveCharts::Metric(m), CollectiveCharts::Sweep(s), algorithms[i]);
                QVERIFY(g);
                QCOMPARE(g->data()->size(), int(series[i].x.size()));
                if (algorithms[i] != Algorithm::Ring)
                    QVERIFY(g->pen().widthF() < charts.graph(CollectiveCharts::Metric(m), CollectiveCharts::Sweep(s), Algorithm::Ring)->pen().widthF());
            }
            QCOMPARE(highlighted, 1);
            QCOMPARE(plot->axisRects()[s]->axis(QCPAxis::atBottom)->scaleType(), QCPAxis::stLogarithmic);
            QCOMPARE(plot->axisRects()[s]->axis(QCPAxis::atLeft)->scaleType(), QCPAxis::stLogarithmic);
        }
    }
    // Sample points equal count() of the same call.
    auto valueAt = [&](CollectiveCharts::Metric m, CollectiveCharts::Sweep s, Algorithm a, double x) {
        for (const auto& se : charts.series(m, s))
            if (se.algorithm == a)
                for (std::size_t k = 0; k < se.x.size(); ++k)
                    if (se.x[k] == x)
                        return se.y[k];
        return -1.0;
    };
    ScheduleSpec at8 = spec;
    at8.ranks = 8;
    at8.algorithm = Algorithm::Rabenseifner;
    const auto c8 = tw::collective::count(at8, link);
    QCOMPARE(valueAt(CollectiveCharts::TotalBytes, CollectiveCharts::VersusRanks, Algorithm::Rabenseifner, 8), c8.totalBytes);
    QCOMPARE(valueAt(CollectiveCharts::BusiestRankBytes, CollectiveCharts::VersusRanks, Algorithm::Rabenseifner, 8), c8.maxRankSentBytes);
    QCOMPARE(valueAt(CollectiveCharts::Time, CollectiveCharts::VersusRanks, Algorithm::Rabenseifner, 8), c8.timeSeconds);
    ScheduleSpec m1 = spec;
    m1.bytes = 1024.0 * 1024;
    m1.algorithm = Algorithm::DoubleBinaryTree;
    QCOMPARE(valueAt(CollectiveCharts::Time, CollectiveCharts::VersusBytes, Algorithm::DoubleBinaryTree, m1.bytes),
             tw::collective::count(m1, link).timeSeconds);
    // The pipelined trees stop at kTreeMaxRanks and say so; the ring goes to 1,024.
    for (const auto& se : charts.series(CollectiveCharts::TotalBytes, CollectiveCharts::VersusRanks)) {
        if (se.algorithm == Algorithm::BinaryTree || se.algorithm == Algorithm::DoubleBinaryTree) {
            QCOMPARE(se.x.back(), double(CollectiveCharts::kTreeMaxRanks));
            QVERIFY(se.name.contains(QStringLiteral("N ≤ 256")));
        }
        if (se.algorithm == Algorithm::Ring)
            QCOMPARE(se.x.back(), 1024.0);
        if (se.algorithm == Algorithm::Hierarchical)
            for (double n : se.x)
                QCOMPARE(std::fmod(n, double(CollectiveCharts::kDefaultRanksPerNode)), 0.0);
    }
    // Another operation: its own algorithms, the chosen one highlighted.
    charts.setSpec(specOf(Op::AllToAll, Algorithm::Bruck, 8, 1e6), link);
    const auto& a2a = charts.series(CollectiveCharts::TotalBytes, CollectiveCharts::VersusBytes);
    QCOMPARE(a2a.size(), std::size_t(2));
    QVERIFY(a2a[1].highlighted && a2a[1].algorithm == Algorithm::Bruck);
    charts.setSpec(spec, link);
    if (const QString dir = shotsDir(); !dir.isEmpty()) {
        QVERIFY(host.grab().save(dir + QStringLiteral("/charts-allreduce.png")));
        charts.setSpec(specOf(Op::AllGather, Algorithm::Bruck, 64, 64e6), link);
        QVERIFY(host.grab().save(dir + QStringLiteral("/charts-allgather.png")));
        host.resize(1280, 720);
        charts.setSpec(spec, link);
        QVERIFY(host.grab().save(dir + QStringLiteral("/charts-allreduce-720.png")));
    }
}

// Renders the views a teacher sees (always: each picture must be drawn); with TOKENWIRE_SHOTS_DIR set
// they are also saved there to be looked at.
void TestScheduleView::screenshots()
{
    const QString dir = shotsDir();
    auto shoot = [&dir](QWidget* w, const QString& name) {
        const QPixmap picture = w->grab();
        if (picture.isNull() || picture.width() < 100)
            return false;
        return dir.isEmpty() || picture.save(dir + QLatin1Char('/') + name);
    };
    struct Shot {
        const char* name;
        ScheduleSpec spec;
    };
    std::vector<Shot> shots;
    for (std::uint64_t n : {4, 8, 16, 64}) {
        shots.push_back({"ring", specOf(Op::AllReduce, Algorithm::Ring, n, double(n) * 1024 * 1024)});
        shots.push_back({"binary-tree", specOf(Op::AllReduce, Algorithm::BinaryTree, n, 4.0 * 64 * 1024)});
        shots.push_back({"hierarchical", specOf(Op::AllReduce, Algorithm::Hierarchical, n, double(n) * 1024 * 1024, 0, 4)});
    }
    shots.push_back({"binomial-bcast", specOf(Op::Broadcast, Algorithm::Binomial, 5, 1e6, 2)});
    shots.push_back({"pairwise-a2a", specOf(Op::AllToAll, Algorithm::Pairwise, 4, 4e6)});
    shots.push_back({"bruck-a2a", specOf(Op::AllToAll, Algorithm::Bruck, 8, 8e6)});
    shots.push_back({"rabenseifner", specOf(Op::AllReduce, Algorithm::Rabenseifner, 8, 8e6)});
    shots.push_back({"chain-bcast", specOf(Op::Broadcast, Algorithm::Chain, 8, 4.0 * 64 * 1024)});
    shots.push_back({"ring-256", specOf(Op::AllReduce, Algorithm::Ring, 256, 256e6)});
    for (const Shot& s : shots) {
        showSpec(s.spec);
        const int mid = m_view->stepCount() / 2;
        m_view->setStep(mid);
        m_view->setSpeed(1);
        m_view->advanceAnimation(0.45); // packets half-way along the next step's arrows
        QVERIFY(shoot(m_view.get(), QStringLiteral("schedule-%1-%2.png").arg(QLatin1String(s.name)).arg(s.spec.ranks)));
    }
    // The ring at rest after its reduce-scatter (full sums framed), and at the start.
    showSpec(specOf(Op::AllReduce, Algorithm::Ring, 4, 4.0 * 1024 * 1024));
    m_view->setStep(3);
    QVERIFY(shoot(m_view.get(), QStringLiteral("schedule-ring-4-after-rs.png")));
    m_view->setStep(0);
    QVERIFY(shoot(m_view.get(), QStringLiteral("schedule-ring-4-start.png")));
}

namespace {
// CIELAB (D65) of an sRGB colour, by the CIE formulas (sRGB linearisation, the sRGB → XYZ matrix).
std::array<double, 3> lab(const QColor& c)
{
    auto lin = [](double u) { return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4); };
    const double r = lin(c.redF()), g = lin(c.greenF()), b = lin(c.blueF());
    const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.9505, y = 0.2126 * r + 0.7152 * g + 0.0722 * b,
                 z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.089;
    auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
    return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}
} // namespace

// Issue #34: ranks 4 and 7 were near-identical blues (ΔE*76 = 10.5). Any two of ranks 0–11 now differ by
// at least ΔE*76 = 15 (8 ranks: 23; 12: 17.5, computed beside the change).
void TestScheduleView::rankColoursStayApart()
{
    for (int i = 0; i < 12; ++i)
        for (int j = i + 1; j < 12; ++j) {
            const auto a = lab(tw::ui::rankColor(i)), b = lab(tw::ui::rankColor(j));
            const double de = std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
            QVERIFY2(de >= 15, qPrintable(QStringLiteral("ranks %1 and %2: ΔE %3").arg(i).arg(j).arg(de)));
        }
}

QTEST_MAIN(TestScheduleView)
#include "tst_scheduleview.moc"
