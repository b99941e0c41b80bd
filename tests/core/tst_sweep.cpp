// Stage 5's scaling sweep (issue 6): the --gpus list parser and its limits, points that cannot run,
// weak and strong scaling of the batch, cancellation, and the paper-testbed preset against appendix
// A.3 (calibrated on the 2-node share, the trend predicted from there).

#include "../support/testsupport.h"
#include "scenario/presets.h"
#include "scenario/sweep.h"

#include <QTest>

#include <cmath>
#include <stop_token>

using namespace tw;
using namespace tw::scenario;

Q_DECLARE_METATYPE(std::vector<std::uint64_t>)

class TestSweep : public QObject {
    Q_OBJECT
private slots:
    void parseGood_data();
    void parseGood();
    void parseBad_data();
    void parseBad();
    void limits();
    void pointThatCannotRun();
    void weakScalingKeepsTheMicroBatch();
    void strongScalingKeepsTheGlobalBatch();
    void cancellation();
    void progressIsReported();
    void measuredOnlyForTheTestbed();
    void testbedPresetIsCalibratedOnTwoNodes();
    void testbedTrend();
    void calibrationFindsThePresetsComputeTime();
    void defaultSizesFollowThePlan_data();
    void defaultSizesFollowThePlan();
    void gpuListText_data();
    void gpuListText();
};

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

using tw::test::presetOrDie;

const SweepPoint* pointOf(const Sweep& sweep, std::uint64_t gpus)
{
    for (const SweepPoint& p : sweep.points)
        if (p.gpus == gpus)
            return &p;
    return nullptr;
}

// The A.3 testbed by hand (docs/model.md §5.5 and "Stage 5"): DDP's ring AllReduce of M = P·4 B
// (GPT-2 small, fp32 gradients) = 124,439,808 · 4 = 497,759,232 B sends 2(N−1)/N·M through each
// node's 10 Gb/s NIC, whose payload rate under TCP/IPv4 with timestamps is
// 1.25e9 B/s · 1448/(1448+90) = 1.176853e9 B/s. So A(N) = 2(N−1)/N · 0.422958 s (A(2) = 0.422958 s).
// Without overlap, step(N) = C + A(N); a 15 % share at 2 nodes gives C = A(2)·0.85/0.15 = 2.396762 s.
constexpr double kAllReduceTwoNodes = 497759232.0 / (1.25e9 * 1448.0 / 1538.0);
constexpr double kComputeByHand = kAllReduceTwoNodes * 0.85 / 0.15;

} // namespace

void TestSweep::parseGood_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<std::vector<std::uint64_t>>("expected");
    QTest::newRow("list") << "1,2,4,8" << std::vector<std::uint64_t>{1, 2, 4, 8};
    QTest::newRow("range") << "1-7" << std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7};
    QTest::newRow("mixed") << "1,2,4-8" << std::vector<std::uint64_t>{1, 2, 4, 5, 6, 7, 8};
    QTest::newRow("unsorted, spaces") << " 16, 1 ,4 " << std::vector<std::uint64_t>{1, 4, 16};
    QTest::newRow("one") << "4096" << std::vector<std::uint64_t>{4096};
    QTest::newRow("64 sizes") << "1-64" << [] {
        std::vector<std::uint64_t> v;
        for (std::uint64_t n = 1; n <= 64; ++n)
            v.push_back(n);
        return v;
    }();
}

void TestSweep::parseGood()
{
    QFETCH(QString, text);
    QFETCH(std::vector<std::uint64_t>, expected);
    const auto r = parseGpuList(text.toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(r.value() == expected);
}

void TestSweep::parseBad_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("not a number") << "1,x" << R"("1,x": item 2 is not a positive integer)";
    QTest::newRow("zero") << "0,1" << R"("0,1": item 1 is not a positive integer)";
    QTest::newRow("empty item") << "1,,2" << R"("1,,2": item 2 is not a positive integer)";
    QTest::newRow("negative") << "-3" << R"("-3": item 1 is not a range of positive integers (such as 1-7))";
    QTest::newRow("fraction") << "1.5" << R"("1.5": item 1 is not a positive integer)";
    QTest::newRow("empty") << "" << "empty list; expected GPU counts such as 1,2,4,8 or 1-7";
    QTest::newRow("range down") << "8-2" << R"("8-2": item 1 is a range that goes down (8-2))";
    QTest::newRow("repeat") << "1,2,2" << R"("1,2,2": item 3 repeats 2 GPUs)";
    QTest::newRow("repeat through a range") << "4,1-7" << R"("4,1-7": item 2 repeats 4 GPUs)";
    QTest::newRow("too many GPUs") << "8,5000" << R"("8,5000": item 2 asks for 5,000 GPUs; a sweep point has at most 4,096)";
    QTest::newRow("range too far") << "1-5000" << R"("1-5000": item 1 reaches 5,000 GPUs; a sweep point has at most 4,096)";
    QTest::newRow("range too long") << "1-65" << R"("1-65": item 1 spans 65 sizes; a sweep has at most 64 points (one simulation each))";
    QTest::newRow("too many items") << "1-64,100" << R"("1-64,100": more than 64 sizes; a sweep has at most that many points (one simulation each))";
    QTest::newRow("2^64") << "18446744073709551616" << R"("18446744073709551616": item 1 asks for more than 4,096 GPUs; a sweep point has at most 4,096)";
}

void TestSweep::parseBad()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    const auto r = parseGpuList(text.toStdString());
    QVERIFY(!r.ok());
    QCOMPARE(str(r.error().message), message);
}

void TestSweep::limits()
{
    const Scenario s = presetOrDie("paper-dp");
    SweepOptions o;
    auto empty = runSweep(s, o);
    QVERIFY(!empty.ok());
    QVERIFY(empty.error().message.find("no sizes") != std::string::npos);
    for (std::uint64_t n = 1; n <= kMaxSweepPoints + 1; ++n)
        o.gpus.push_back(n);
    auto many = runSweep(s, o);
    QVERIFY(!many.ok());
    QCOMPARE(str(many.error().message), QStringLiteral("65 sizes; a sweep has at most 64 points (one simulation each)"));
    o.gpus = {8, kMaxSweepGpus + 8};
    auto huge = runSweep(s, o);
    QVERIFY(!huge.ok());
    QCOMPARE(str(huge.error().message), QStringLiteral("4,104 GPUs: a sweep point has 1 to 4,096 GPUs"));
    o.gpus = {8, 8};
    QVERIFY(!runSweep(s, o).ok());
}

void TestSweep::pointThatCannotRun()
{
    // paper-dp: one node of 8 GPUs. 12 GPUs are neither one node nor whole nodes of 8; 4 GPUs are one
    // node of 4 and run.
    SweepOptions o;
    o.gpus = {4, 12};
    const auto r = runSweep(presetOrDie("paper-dp"), o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->points.size(), std::size_t(2));
    QVERIFY(r->points[0].ok);
    QCOMPARE(r->points[0].nodes, std::uint64_t(1));
    QCOMPARE(r->points[0].dp, std::uint64_t(4));
    QVERIFY(!r->points[1].ok);
    QCOMPARE(str(r->points[1].error.message),
             QStringLiteral("12 GPUs is not a multiple of the scenario's 8 GPUs per node (hardware.gpus_per_node)"));
    QCOMPARE(r->baseGpus, std::uint64_t(4));

    // pp·tp must divide the size: paper-tp keeps its tp.
    Scenario tp = presetOrDie("paper-tp");
    const std::uint64_t t = tp.parallel.tp;
    QVERIFY(t > 1);
    o.gpus = {t + 1};
    const auto odd = runSweep(tp, o);
    QVERIFY(odd.ok());
    QVERIFY(!odd->points[0].ok);
    QVERIFY2(odd->points[0].error.message.find("pp·tp") != std::string::npos, odd->points[0].error.message.c_str());
    QCOMPARE(odd->baseGpus, std::uint64_t(0)); // nothing ran: no speedups, no figures of points
}

void TestSweep::weakScalingKeepsTheMicroBatch()
{
    // paper-dp: B = 32, T = 1,024, dp = 8, G = 524,288 → N_acc = 524,288/(32·1,024·8) = 2 (Example 5.1).
    // At 16 GPUs (2 nodes of 8) each replica keeps B and N_acc: G = 2·32·1,024·16 = 1,048,576.
    const Scenario s = presetOrDie("paper-dp");
    auto at16 = scenarioAtSize(s, 16);
    QVERIFY(at16.ok());
    QCOMPARE(at16->hardware.nodes, std::uint64_t(2));
    QCOMPARE(at16->hardware.gpusPerNode, std::uint64_t(8));
    QCOMPARE(at16->parallel.dp, std::uint64_t(16));
    QCOMPARE(at16->batch.microBatch, std::uint64_t(32));
    QCOMPARE(at16->batch.globalBatchTokens, std::uint64_t(1048576));
    QVERIFY(at16->topology.kind == network::TopologyKind::LeafSpine); // several servers need a network
    // At 2 GPUs: one node of 2, G = 2·32·1,024·2 = 131,072.
    auto at2 = scenarioAtSize(s, 2);
    QVERIFY(at2.ok());
    QCOMPARE(at2->hardware.nodes, std::uint64_t(1));
    QCOMPARE(at2->hardware.gpusPerNode, std::uint64_t(2));
    QCOMPARE(at2->batch.globalBatchTokens, std::uint64_t(131072));

    // The sweep's tokens/s is that global batch over the step.
    SweepOptions o;
    o.gpus = {2, 16};
    const auto r = runSweep(s, o);
    QVERIFY(r.ok());
    for (const SweepPoint& p : r->points) {
        QVERIFY2(p.ok, p.error.message.c_str());
        const double tokens = 2.0 * 32 * 1024 * double(p.gpus);
        QVERIFY(std::abs(p.tokensPerSecond * p.stepSeconds - tokens) <= 1e-9 * tokens);
    }
}

void TestSweep::strongScalingKeepsTheGlobalBatch()
{
    // G = 524,288 kept: 16 GPUs → N_acc = 524,288/(32·1,024·16) = 1; 32 GPUs → 0.5, not whole.
    const Scenario s = presetOrDie("paper-dp");
    auto at16 = scenarioAtSize(s, 16, true);
    QVERIFY(at16.ok());
    QCOMPARE(at16->batch.globalBatchTokens, std::uint64_t(524288));
    SweepOptions o;
    o.gpus = {16, 32};
    o.strong = true;
    const auto r = runSweep(s, o);
    QVERIFY(r.ok());
    QVERIFY(r->points[0].ok);
    QVERIFY(!r->points[1].ok);
    QVERIFY2(r->points[1].error.message.find("not a multiple of B·T·dp") != std::string::npos,
             r->points[1].error.message.c_str());
}

void TestSweep::cancellation()
{
    SweepOptions o;
    o.gpus = {1, 2, 4, 8};
    // Stopped before the start.
    std::stop_source before;
    before.request_stop();
    Progress stopped;
    stopped.stop = before.get_token();
    auto r = runSweep(presetOrDie("paper-dp"), o, stopped);
    QVERIFY(!r.ok());
    QCOMPARE(str(r.error().message), QStringLiteral("cancelled"));

    // Stopped from the progress callback while the first point runs.
    std::stop_source during;
    Progress p;
    p.stop = during.get_token();
    p.report = [&](double f) {
        if (f > 0)
            during.request_stop();
    };
    r = runSweep(presetOrDie("paper-dp"), o, p);
    QVERIFY(!r.ok());
    QCOMPARE(str(r.error().message), QStringLiteral("cancelled"));

    // The calibration honours it too.
    auto c = calibrateComputeForShare(presetOrDie("paper-testbed"), 2, 0.15, stopped);
    QVERIFY(!c.ok());
    QCOMPARE(str(c.error().message), QStringLiteral("cancelled"));
}

void TestSweep::progressIsReported()
{
    SweepOptions o;
    o.gpus = {1, 2};
    std::vector<double> seen;
    Progress p;
    p.report = [&](double f) { seen.push_back(f); };
    QVERIFY(runSweep(presetOrDie("paper-testbed"), o, p).ok());
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back(), 1.0);
    for (double f : seen)
        QVERIFY(f >= 0 && f <= 1);
    QVERIFY(std::find_if(seen.begin(), seen.end(), [](double f) { return f > 0.1 && f < 0.9; }) != seen.end());
}

void TestSweep::measuredOnlyForTheTestbed()
{
    QVERIFY(publishedMeasurements(presetOrDie("paper-dp")).empty());
    const auto m = publishedMeasurements(presetOrDie("paper-testbed"));
    QCOMPARE(m.size(), std::size_t(2));
    // docs/model.md §5.5.
    QCOMPARE(m[0].gpus, std::uint64_t(2));
    QCOMPARE(m[0].commShare, 0.15);
    QCOMPARE(m[1].gpus, std::uint64_t(7));
    QCOMPARE(m[1].commShare, 0.245);
    QCOMPARE(m[1].efficiency, 0.67);
    QCOMPARE(m[1].speedup, 4.69);
    // Another plan on the same fabric is not the paper's experiment.
    Scenario zero = presetOrDie("paper-testbed");
    zero.parallel.sharding = parallel::Sharding::Zero3;
    QVERIFY(publishedMeasurements(zero).empty());
}

void TestSweep::testbedPresetIsCalibratedOnTwoNodes()
{
    // The paper: a 15 % AllReduce share on its smallest run with an AllReduce (2 nodes).
    SweepOptions o;
    o.gpus = {2};
    const auto r = runSweep(presetOrDie("paper-testbed"), o);
    QVERIFY(r.ok());
    const SweepPoint& p = r->points[0];
    QVERIFY2(p.ok, p.error.message.c_str());
    QCOMPARE(p.nodes, std::uint64_t(2));
    QVERIFY2(std::abs(p.commShare - 0.15) <= 0.0005, qPrintable(QString::number(p.commShare, 'g', 8)));
    // The compute matches the hand derivation above within 0.2 % (the model adds latency and the
    // staging through host memory, which the hand figure leaves out).
    QVERIFY2(std::abs(p.computeSeconds - kComputeByHand) <= 0.002 * kComputeByHand,
             qPrintable(QString::number(p.computeSeconds, 'g', 8)));
}

void TestSweep::testbedTrend()
{
    SweepOptions o;
    o.gpus = {1, 2, 3, 4, 5, 6, 7};
    const auto r = runSweep(presetOrDie("paper-testbed"), o);
    QVERIFY(r.ok());
    QCOMPARE(r->baseGpus, std::uint64_t(1));
    for (const SweepPoint& p : r->points) {
        QVERIFY2(p.ok, p.error.message.c_str());
        QCOMPARE(p.nodes, p.gpus); // one GPU per node
    }
    QCOMPARE(r->points[0].commShare, 0.0); // one GPU: no AllReduce
    // From 2 to 7 GPUs the share rises and the efficiency falls, step by step.
    for (std::uint64_t n = 3; n <= 7; ++n) {
        QVERIFY2(pointOf(r.value(), n)->commShare > pointOf(r.value(), n - 1)->commShare, qPrintable(QString::number(n)));
        QVERIFY2(pointOf(r.value(), n)->efficiency < pointOf(r.value(), n - 1)->efficiency, qPrintable(QString::number(n)));
    }
    // At 7: between the calibrated 15 % and the measured 24.5 %, and above the measured 67 % efficiency —
    // the model explains part of the measured slowdown, not all of it.
    const SweepPoint& seven = *pointOf(r.value(), 7);
    QVERIFY(seven.commShare > 0.15 && seven.commShare < 0.245);
    QVERIFY(seven.efficiency > 0.67);
    // By hand (see kComputeByHand): A(7) = 12/7·A(2), share = A(7)/(C + A(7)) = 0.2323, efficiency
    // against one GPU = C/(C + A(7)) = 0.7677; within half a point.
    const double a7 = 12.0 / 7.0 * kAllReduceTwoNodes;
    QVERIFY2(std::abs(seven.commShare - a7 / (kComputeByHand + a7)) <= 0.005, qPrintable(QString::number(seven.commShare)));
    QVERIFY2(std::abs(seven.efficiency - kComputeByHand / (kComputeByHand + a7)) <= 0.005,
             qPrintable(QString::number(seven.efficiency)));

    // The measured points beside it, and the gap in words.
    QCOMPARE(r->measured.size(), std::size_t(2));
    std::string gaps;
    for (const std::string& g : r->gaps)
        gaps += g + "\n";
    for (const char* fragment : {"24.5 %", "67 %", "explains", "not see", "75.5 %", "12.7 %"})
        QVERIFY2(gaps.find(fragment) != std::string::npos, qPrintable(QStringLiteral("%1 not in:\n%2").arg(QString::fromUtf8(fragment), str(gaps))));

    // The figures: a closed graph with the A.3 quantities.
    QVERIFY(r->figures.missingInputs().empty());
    QCOMPARE(r->figures.valueOf("sweep.efficiency"), seven.efficiency);
    QCOMPARE(r->figures.valueOf("sweep.speedup"), seven.speedup);
    QCOMPARE(r->figures.valueOf("sweep.comm_share_largest"), seven.commShare);
    QCOMPARE(r->figures.valueOf("sweep.comm_share_smallest"), pointOf(r.value(), 2)->commShare);
    QVERIFY(!r->figures.find("sweep.speedup")->formula.empty());
}

void TestSweep::calibrationFindsThePresetsComputeTime()
{
    // The preset's per-layer time came from this function; it must find it again (and reach 15 %).
    const Scenario s = presetOrDie("paper-testbed");
    QCOMPARE(s.parallel.layerForwardSeconds.size(), std::size_t(1));
    const auto c = calibrateComputeForShare(s, 2, 0.15);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QVERIFY(std::abs(c->share - 0.15) < 1e-5);
    QVERIFY2(std::abs(c->layerForwardSeconds - s.parallel.layerForwardSeconds[0]) <= 1e-5 * c->layerForwardSeconds,
             qPrintable(QString::number(c->layerForwardSeconds, 'g', 10)));
    // One GPU has no AllReduce: no compute time gives a share.
    const auto none = calibrateComputeForShare(s, 1, 0.15);
    QVERIFY(!none.ok());
    QVERIFY2(none.error().message.find("no compute time") != std::string::npos, none.error().message.c_str());
    QVERIFY(!calibrateComputeForShare(s, 2, 1.5).ok());
}

QTEST_GUILESS_MAIN(TestSweep)
// The stage 5 pane's default sizes (issue 22): multiples of pp·tp·ep, from the smallest that runs,
// doubling, ending at the scenario's own cluster. By hand from the presets' JSON:
void TestSweep::defaultSizesFollowThePlan_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("sizes");
    // pp·tp = 8·8 = 64 on 96 nodes × 8 = 768 GPUs: 64…512 doubling, then 768 (not a power-of-two multiple).
    // Before, the pane offered 8, 16, 32 — all refused (not multiples of pp·tp).
    QTest::newRow("gpt3-175b") << "gpt3-175b" << "64,128,256,512,768";
    // pp·tp = 4·8 = 32 on 128 × 8 = 1024 GPUs.
    QTest::newRow("llama3-70b") << "llama3-70b" << "32,64,128,256,512,1024";
    // tp·ep = 2·8 = 16 on 32 × 8 = 256 GPUs; dp = size/2 keeps ep = 8 at every size.
    QTest::newRow("mixtral-8x7b") << "mixtral-8x7b" << "16,32,64,128,256";
    // tp = 4 on one server of 8.
    QTest::newRow("paper-tp") << "paper-tp" << "4,8";
    // pure DP on one server of 8.
    QTest::newRow("paper-reference") << "paper-reference" << "1,2,4,8";
    // the testbed: every node count from 1 to its 7 nodes (appendix A.3).
    QTest::newRow("paper-testbed") << "paper-testbed" << "1-7";
}

void TestSweep::defaultSizesFollowThePlan()
{
    QFETCH(QString, preset);
    QFETCH(QString, sizes);
    const Scenario s = presetOrDie(preset.toStdString());
    const std::vector<std::uint64_t> gpus = defaultSweepSizes(s);
    QCOMPARE(str(tw::scenario::gpuListText(gpus)), sizes);
    const std::uint64_t unit = s.parallel.pp * s.parallel.tp * s.parallel.ep;
    for (std::uint64_t n : gpus) {
        QCOMPARE(n % unit, std::uint64_t(0));
        const auto sized = scenarioAtSize(s, n);
        QVERIFY2(sized, qPrintable(QString::number(n)));
        QCOMPARE(sized.value().parallel.ep, s.parallel.ep);
        QVERIFY2(validate(sized.value()).empty(), qPrintable(QString::number(n)));
    }
}

void TestSweep::gpuListText_data()
{
    QTest::addColumn<std::vector<std::uint64_t>>("gpus");
    QTest::addColumn<QString>("text");
    QTest::newRow("run") << std::vector<std::uint64_t>{1, 2, 3, 4} << "1-4";
    QTest::newRow("pair stays a list") << std::vector<std::uint64_t>{4, 5} << "4,5";
    QTest::newRow("doubling") << std::vector<std::uint64_t>{1, 2, 4, 8} << "1,2,4,8";
    QTest::newRow("run then single") << std::vector<std::uint64_t>{1, 2, 3, 8} << "1-3,8";
    QTest::newRow("empty") << std::vector<std::uint64_t>{} << "";
}

void TestSweep::gpuListText()
{
    QFETCH(std::vector<std::uint64_t>, gpus);
    QFETCH(QString, text);
    QCOMPARE(str(tw::scenario::gpuListText(gpus)), text);
    if (!gpus.empty()) { // what the pane writes, the parser reads back
        const auto back = parseGpuList(text.toStdString());
        QVERIFY(back);
        QVERIFY(back.value() == gpus);
    }
}

#include "tst_sweep.moc"
