// Memory per GPU under the parallel plan (issue #18): GPT-2 small on 8 GPUs under DDP, ZeRO-1/2/3,
// FSDP hybrid and TP 2 × PP 2 × DP 2 with every byte derived by hand in the comments; the
// micro-batches in flight of GPipe, 1F1B and the interleaved schedule; Korthikanti et al.'s Table 2
// closed forms reproduced by the decomposition; the ZeRO paper's 7.5B example (§5.1 / Figure 1);
// Megatron's 18 and 6 + 12/N_d bytes per parameter; the sum over roles against stage 2; the
// settings' JSON round trip; the figures in the derivation.

#include "../support/testsupport.h"
#include "parallel/memory.h"

#include "model/gpucatalog.h"
#include "model/model.h"
#include "model/tensors.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <QTest>

#include <string>
#include <vector>

using namespace tw::parallel;
using tw::model::BatchShape;
using tw::model::GpuSpec;
using tw::model::ModelConfig;

Q_DECLARE_METATYPE(Sharding)
Q_DECLARE_METATYPE(PipelineSchedule)
Q_DECLARE_METATYPE(std::vector<std::uint64_t>)

using tw::test::planOf;

namespace {

ModelConfig known(const char* id)
{
    auto m = tw::model::knownModel(id);
    if (!m)
        qFatal("unknown model %s", id);
    return *m;
}

GpuSpec gpu(const char* id)
{
    auto g = tw::model::findGpu(id);
    if (!g)
        qFatal("no %s in the catalog", id);
    return *g;
}

// The paper's batch: T = 1,024, B = 32, G = 524,288 tokens per optimizer step.
const BatchShape kPaperBatch{1024, 32, 524288};

// GPT-2 small, tied, V = 50,257 (no padding), d = 768, L = 12:
//   embedding V·d = 50,257·768 = 38,597,376; positions 1,024·768 = 786,432;
//   one block 12d² + 13d = 7,077,888 + 9,984 = 7,087,872 (attention 4d² + 4d = 2,362,368,
//   MLP 8d² + 5d = 4,722,432, norms 4d = 3,072); final norm 2d = 1,536;
//   P = 12·7,087,872 + 38,597,376 + 786,432 + 1,536 = 124,439,808.
constexpr double kP = 124439808.0;
// One micro-batch's hidden state in elements: s·b·h = 1,024·32·768 = 25,165,824.
constexpr double kSbh = 25165824.0;
// NCCL buffers of one communicator by default: 16 · 4 MiB = 67,108,864 B.
constexpr double kComm = 67108864.0;

PlanMemory memoryOf(const ParallelPlan& plan, const ModelConfig& m = known("gpt2-small"),
                    const BatchShape& b = kPaperBatch, const Cluster& cluster = {1, 8}, const GpuSpec& g = gpu("a100-80gb"))
{
    const auto errors = validate(plan, cluster, m, b);
    if (!errors.empty())
        qFatal("invalid plan: %s", errors.front().toString().c_str());
    return derivePlanMemory(plan, cluster, m, b, g);
}

} // namespace

class TestMemory : public QObject {
    Q_OBJECT
private slots:
    void gpt2SmallOnEightGpus_data();
    void gpt2SmallOnEightGpus();
    void gpt2SmallActivationsDdp();
    void tensorPipelineData();
    void fsdpHybridShardsOverTheNode();
    void expertsShardOverTheirGroup();
    void inFlight_data();
    void inFlight();
    void interleavedMatchesKorthikantiFactor();
    void table2ClosedForms_data();
    void table2ClosedForms();
    void swigluAndGqaDecomposition();
    void zeroPaperExample_data();
    void zeroPaperExample();
    void megatronBytesPerParameter();
    void rolesSumToStageTwo_data();
    void rolesSumToStageTwo();
    void attentionAuto();
    void settingsRoundTrip();
    void derivationHasTheFigures();
    void largePlanMapsEveryGpu();
};

void TestMemory::gpt2SmallOnEightGpus_data()
{
    QTest::addColumn<Sharding>("sharding");
    QTest::addColumn<double>("weights");
    QTest::addColumn<double>("gradients");
    QTest::addColumn<double>("optimizer");
    QTest::addColumn<double>("buffers");
    // dp = 8, bf16 weights and gradients, fp32 Adam: 2 + 2 + 12 bytes per parameter (ZeRO §3.1).
    // ⌈P/8⌉ = 15,554,976 (exact). DDP: 2P = 248,879,616, 12P = 1,493,277,696.
    // Buffers: DDP's bucket copy of every gradient 2P = 248,879,616 + one DP communicator 67,108,864
    // = 315,988,480. ZeRO-1/2: one reduce bucket, by default Megatron-core's max(40·10⁶, 10⁶·dp) = 40·10⁶
    // parameters of bf16 gradients = 80,000,000 (parallel::bucketBytesFor) + 67,108,864 = 147,108,864. ZeRO-3: two
    // gathered units of the largest, the embedding V·d + positions = 39,383,808 parameters, in bf16:
    // 2·39,383,808·2 = 157,535,232 + 67,108,864 = 224,644,096.
    QTest::newRow("ddp") << Sharding::Ddp << 248879616.0 << 248879616.0 << 1493277696.0 << 315988480.0;
    // ZeRO-1: optimizer 12·15,554,976 = 186,659,712.
    QTest::newRow("zero1") << Sharding::Zero1 << 248879616.0 << 248879616.0 << 186659712.0 << 147108864.0;
    // ZeRO-2: gradients 2·15,554,976 = 31,109,952.
    QTest::newRow("zero2") << Sharding::Zero2 << 248879616.0 << 31109952.0 << 186659712.0 << 147108864.0;
    // ZeRO-3: weights 2·15,554,976 = 31,109,952 too.
    QTest::newRow("zero3") << Sharding::Zero3 << 31109952.0 << 31109952.0 << 186659712.0 << 224644096.0;
    QTest::newRow("fsdp-full") << Sharding::FsdpFull << 31109952.0 << 31109952.0 << 186659712.0 << 224644096.0;
}

void TestMemory::gpt2SmallOnEightGpus()
{
    QFETCH(Sharding, sharding);
    QFETCH(double, weights);
    QFETCH(double, gradients);
    QFETCH(double, optimizer);
    QFETCH(double, buffers);
    ParallelPlan plan = planOf(8, 1, 1);
    plan.sharding = sharding;
    const PlanMemory mem = memoryOf(plan);
    QCOMPARE(mem.roles.size(), std::size_t(1));
    const RoleMemory& r = mem.roles[0];
    QCOMPARE(r.gpus, std::uint64_t(8));
    QCOMPARE(r.parameters, kP);
    QCOMPARE(r.weights, weights);
    QCOMPARE(r.gradients, gradients);
    QCOMPARE(r.optimizer, optimizer);
    QCOMPARE(r.buffers, buffers);
    QCOMPARE(r.total, weights + gradients + optimizer + r.activations + buffers);
    QCOMPARE(mem.roleOfGpu, std::vector<std::uint32_t>(8, 0));
    QVERIFY(mem.fits);
}

void TestMemory::gpt2SmallActivationsDdp()
{
    // dp = 8: N_acc = 524,288 / (32·1,024·8) = 2; 1F1B with p = 1 holds min(2, 1) = 1 micro-batch.
    // A100 → fused attention: per layer 34·sbh = 34·25,165,824 = 855,638,016 B (Table 2 without the
    // 5as/h scores), ×12 = 10,267,656,192. Embedding: token ids 8·s·b = 262,144 + dropout mask
    // sbh = 25,165,824 → 25,427,968. Output: final-norm and output-layer inputs 2·2·sbh = 100,663,296
    // + fp32 logits 4·s·b·V = 4·32,768·50,257 = 6,587,285,504 → 6,687,948,800.
    // Total 10,267,656,192 + 25,427,968 + 6,687,948,800 = 16,981,032,960.
    const PlanMemory fused = memoryOf(planOf(8, 1, 1));
    QCOMPARE(fused.roles[0].inFlight, std::vector<std::uint64_t>{1});
    QCOMPARE(fused.roles[0].activations, 16981032960.0);
    // Unfused attention adds 5·a·s²·b = 5·12·1,024²·32 = 2,013,265,920 per layer, ×12 = 24,159,191,040.
    ModelConfig m = known("gpt2-small");
    m.attention = tw::model::Attention::Unfused;
    const PlanMemory unfused = memoryOf(planOf(8, 1, 1), m);
    QCOMPARE(unfused.roles[0].activations, 16981032960.0 + 24159191040.0);
}

void TestMemory::tensorPipelineData()
{
    // TP 2 × PP 2 × DP 2, DDP, 1F1B, fused attention; N_acc = 524,288 / (32·1,024·2) = 8; layers [6, 6].
    // One block on one TP rank: matrices and column-parallel biases ÷ 2, b_o, b_proj (d each) and the
    // norms replicated: (7,084,800 − 1,536)/2 + 1,536 + 3,072 = 3,546,240; six blocks 21,277,440.
    // Stage 0: + embedding 38,597,376/2 + positions 786,432 = 20,085,120 → 41,362,560 parameters.
    // Stage 1: + final norm 1,536 + the tied copy 38,597,376/2 = 19,298,688 → 40,577,664.
    const PlanMemory mem = memoryOf(planOf(2, 2, 2));
    QCOMPARE(mem.roles.size(), std::size_t(2));
    const RoleMemory& first = mem.roles[0];
    const RoleMemory& last = mem.roles[1];
    QCOMPARE(first.parameters, 41362560.0);
    QCOMPARE(last.parameters, 40577664.0);
    // Weights and gradients 2 B, optimizer 12 B per parameter.
    QCOMPARE(first.weights, 82725120.0);
    QCOMPARE(first.gradients, 82725120.0);
    QCOMPARE(first.optimizer, 496350720.0);
    QCOMPARE(last.weights, 81155328.0);
    QCOMPARE(last.gradients, 81155328.0);
    QCOMPARE(last.optimizer, 486931968.0);
    // Activations per layer with t = 2, no SP, fused: sbh(10 + 24/2) = 22·25,165,824 = 553,648,128.
    // 1F1B: stage 0 holds min(8, 2) = 2 micro-batches, stage 1 min(8, 1) = 1.
    QCOMPARE(first.inFlight, std::vector<std::uint64_t>{2});
    QCOMPARE(last.inFlight, std::vector<std::uint64_t>{1});
    // Stage 0: 6·2·553,648,128 = 6,643,777,536 + embedding 2·(262,144 + 25,165,824) = 50,855,936
    // → 6,694,633,472.
    QCOMPARE(first.activations, 6694633472.0);
    // Stage 1: 6·553,648,128 = 3,321,888,768 + 2·2·sbh = 100,663,296 + logits 4·32,768·50,257/2 =
    // 3,293,642,752 → 6,716,194,816.
    QCOMPARE(last.activations, 6716194816.0);
    // Buffers: DDP bucket copy (2 B per parameter) + 4 communicators (TP, PP, DP, tied embedding) ·
    // 67,108,864 = 268,435,456. Stage 0: 82,725,120 + 268,435,456 = 351,160,576; stage 1: 81,155,328 +
    // 268,435,456 = 349,590,784.
    QCOMPARE(first.buffers, 351160576.0);
    QCOMPARE(last.buffers, 349590784.0);
    // Totals: stage 0 165,450,240 + 496,350,720 + 6,694,633,472 + 351,160,576 = 7,707,595,008;
    // stage 1 162,310,656 + 486,931,968 + 6,716,194,816 + 349,590,784 = 7,715,028,224 (the logits make
    // the last stage the peak).
    QCOMPARE(first.total, 7707595008.0);
    QCOMPARE(last.total, 7715028224.0);
    QCOMPARE(mem.peakBytes, 7715028224.0);
    QCOMPARE(mem.peakStage, std::uint64_t(1));
    // Megatron's order g = tp + 2·(dp + 2·pp): GPUs 0–3 are stage 0, 4–7 stage 1; the peak's first GPU is 4.
    QCOMPARE(mem.roleOfGpu, (std::vector<std::uint32_t>{0, 0, 0, 0, 1, 1, 1, 1}));
    QCOMPARE(mem.peakGpu, std::uint64_t(4));
    QCOMPARE(first.gpus, std::uint64_t(4));
    // Memory left: the A100's 80 GiB = 85,899,345,920 B − the 1 GiB reserve − the allocator's headroom,
    // 10 % of the capacity by default (8,589,934,592 B) − total.
    QCOMPARE(mem.allocatorHeadroomBytes, 8589934592.0);
    QCOMPARE(last.headroom, 85899345920.0 - 1073741824.0 - 8589934592.0 - 7715028224.0);
    QVERIFY(mem.fits);
    // GPipe holds all m = 8 micro-batches on both stages. Stage 0: 6·8·553,648,128 = 26,575,110,144 +
    // 8·25,427,968 = 203,423,744 → 26,778,533,888. Stage 1: 26,575,110,144 + 8·3,394,306,048 (the output
    // layer's 100,663,296 + 3,293,642,752) = 27,154,448,384 → 53,729,558,528.
    ParallelPlan gpipe = planOf(2, 2, 2);
    gpipe.schedule = PipelineSchedule::GPipe;
    const PlanMemory g = memoryOf(gpipe);
    QCOMPARE(g.roles[0].inFlight, std::vector<std::uint64_t>{8});
    QCOMPARE(g.roles[0].activations, 26778533888.0);
    QCOMPARE(g.roles[1].activations, 53729558528.0);
    // Sequence parallelism shards the rest by t = 2: 34/2·sbh = 427,819,008 per layer; embedding 8sb +
    // sbh/2 = 262,144 + 12,582,912 = 12,845,056; output 2·2·sbh/2 = 50,331,648 + logits 3,293,642,752 =
    // 3,343,974,400. Stage 0 (2 in flight): 6·2·427,819,008 = 5,133,828,096 + 2·12,845,056 = 5,159,518,208.
    // Stage 1: 6·427,819,008 = 2,566,914,048 + 3,343,974,400 = 5,910,888,448.
    ParallelPlan sp = planOf(2, 2, 2);
    sp.sequenceParallel = true;
    const PlanMemory withSp = memoryOf(sp);
    QCOMPARE(withSp.roles[0].activations, 5159518208.0);
    QCOMPARE(withSp.roles[1].activations, 5910888448.0);
    // ZeRO-1 on the same mesh shards the optimizer over dp = 2: 41,362,560/2 = 20,681,280 · 12 = 248,175,360.
    ParallelPlan z = planOf(2, 2, 2);
    z.sharding = Sharding::Zero1;
    QCOMPARE(memoryOf(z).roles[0].optimizer, 248175360.0);
}

void TestMemory::fsdpHybridShardsOverTheNode()
{
    // 2 nodes × 4 GPUs, dp = 8, fsdp-hybrid with shard group 0 = the 4 DP ranks of a node:
    // ⌈P/4⌉ = 31,109,952; weights and gradients 2·31,109,952 = 62,219,904, optimizer 12·… = 373,319,424.
    ParallelPlan plan = planOf(8, 1, 1);
    plan.sharding = Sharding::FsdpHybrid;
    const PlanMemory mem = memoryOf(plan, known("gpt2-small"), kPaperBatch, {2, 4});
    QCOMPARE(mem.roles[0].weights, 62219904.0);
    QCOMPARE(mem.roles[0].gradients, 62219904.0);
    QCOMPARE(mem.roles[0].optimizer, 373319424.0);
    // An explicit shard group of 2: ⌈P/2⌉ = 62,219,904 → weights 124,439,808.
    plan.shardGroupSize = 2;
    QCOMPARE(memoryOf(plan, known("gpt2-small"), kPaperBatch, {2, 4}).roles[0].weights, 124439808.0);
}

void TestMemory::expertsShardOverTheirGroup()
{
    // GPT-2 small with every MLP replaced by 8 experts (top-1, CF 1), dp = 8, ZeRO-1.
    // One MoE layer on one GPU (t = 1): attention 2,362,368 + norms 3,072 + router d·E = 6,144 =
    // 2,371,584 main parameters; one expert MLP 4,722,432.
    ModelConfig m = known("gpt2-small");
    m.moe = {8, 1, 1.0, 1};
    ParallelPlan plan = planOf(8, 1, 1, 8);
    plan.sharding = Sharding::Zero1;
    // ep = 8: one expert per GPU; 12 layers: main 12·2,371,584 = 28,459,008 + embedding 38,597,376 +
    // positions 786,432 + final norm 1,536 = 67,844,352; experts 12·4,722,432 = 56,669,184.
    const PlanMemory ep8 = memoryOf(plan, m);
    QCOMPARE(ep8.roles[0].expertParameters, 56669184.0);
    QCOMPARE(ep8.roles[0].parameters, 67844352.0 + 56669184.0);
    // Optimizer: the main part over dp = 8: ⌈67,844,352/8⌉ = 8,480,544 · 12 = 101,766,528; the experts
    // over their data-parallel group of dp/ep = 1 rank: 56,669,184 · 12 = 680,030,208. Sum 781,796,736.
    QCOMPARE(ep8.roles[0].optimizer, 781796736.0);
    // ep = 4: two experts per GPU, 12·2·4,722,432 = 113,338,368, sharded over dp/ep = 2 ranks:
    // 56,669,184 · 12 = 680,030,208 + 101,766,528 = 781,796,736 again; weights unsharded:
    // (67,844,352 + 113,338,368)·2 = 362,365,440.
    plan.ep = 4;
    const PlanMemory ep4 = memoryOf(plan, m);
    QCOMPARE(ep4.roles[0].expertParameters, 113338368.0);
    QCOMPARE(ep4.roles[0].optimizer, 781796736.0);
    QCOMPARE(ep4.roles[0].weights, 362365440.0);
    // Buffers with ep = 4: one reduce bucket of 40·10⁶ bf16 gradients, 80,000,000 + communicators DP, EP
    // and expert-DP (dp/ep = 2 ranks): 3·67,108,864 = 201,326,592 → 281,326,592.
    QCOMPARE(ep4.roles[0].buffers, 281326592.0);
}

void TestMemory::inFlight_data()
{
    QTest::addColumn<PipelineSchedule>("schedule");
    QTest::addColumn<qulonglong>("p");
    QTest::addColumn<qulonglong>("v");
    QTest::addColumn<qulonglong>("m");
    QTest::addColumn<qulonglong>("stage");
    QTest::addColumn<std::vector<std::uint64_t>>("expected");
    // GPipe: every forward of the step before the first backward: all m.
    QTest::newRow("gpipe p4 m8 stage0") << PipelineSchedule::GPipe << 4ull << 1ull << 8ull << 0ull << std::vector<std::uint64_t>{8};
    QTest::newRow("gpipe p4 m8 stage3") << PipelineSchedule::GPipe << 4ull << 1ull << 8ull << 3ull << std::vector<std::uint64_t>{8};
    // 1F1B: p − r warm-up forwards at most: 4, 3, 2, 1 for p = 4; with m = 2 the first stages hold 2.
    QTest::newRow("1f1b p4 m8 stage0") << PipelineSchedule::OneFOneB << 4ull << 1ull << 8ull << 0ull << std::vector<std::uint64_t>{4};
    QTest::newRow("1f1b p4 m8 stage1") << PipelineSchedule::OneFOneB << 4ull << 1ull << 8ull << 1ull << std::vector<std::uint64_t>{3};
    QTest::newRow("1f1b p4 m8 stage3") << PipelineSchedule::OneFOneB << 4ull << 1ull << 8ull << 3ull << std::vector<std::uint64_t>{1};
    QTest::newRow("1f1b p4 m2 stage0") << PipelineSchedule::OneFOneB << 4ull << 1ull << 2ull << 0ull << std::vector<std::uint64_t>{2};
    QTest::newRow("1f1b p4 m2 stage3") << PipelineSchedule::OneFOneB << 4ull << 1ull << 2ull << 3ull << std::vector<std::uint64_t>{1};
    // Interleaved p = 4, v = 2, m = 8: rank 0 runs 2·3 + 1·4 = 10 warm-up forwards + 1 = 11 of the
    // 16 chunk-forwards; forward i is chunk (i/4) mod 2: i = 0–3 and 8–10 chunk 0 (7), i = 4–7 chunk 1 (4).
    QTest::newRow("interleaved p4 v2 m8 rank0") << PipelineSchedule::Interleaved << 4ull << 2ull << 8ull << 0ull << std::vector<std::uint64_t>{7, 4};
    // Rank 1: 2·2 + 4 + 1 = 9: i = 0–3, 8 chunk 0 (5); 4–7 chunk 1 (4).
    QTest::newRow("interleaved p4 v2 m8 rank1") << PipelineSchedule::Interleaved << 4ull << 2ull << 8ull << 1ull << std::vector<std::uint64_t>{5, 4};
    // Rank 3: 0 + 4 + 1 = 5: i = 0–3 chunk 0, i = 4 chunk 1.
    QTest::newRow("interleaved p4 v2 m8 rank3") << PipelineSchedule::Interleaved << 4ull << 2ull << 8ull << 3ull << std::vector<std::uint64_t>{4, 1};
    // Capped by m·v: p = 2, v = 2, m = 2: rank 0 would run 2 + 2 + 1 = 5 but there are 4 chunk-forwards.
    QTest::newRow("interleaved p2 v2 m2 rank0") << PipelineSchedule::Interleaved << 2ull << 2ull << 2ull << 0ull << std::vector<std::uint64_t>{2, 2};
}

void TestMemory::inFlight()
{
    QFETCH(PipelineSchedule, schedule);
    QFETCH(qulonglong, p);
    QFETCH(qulonglong, v);
    QFETCH(qulonglong, m);
    QFETCH(qulonglong, stage);
    QFETCH(std::vector<std::uint64_t>, expected);
    QCOMPARE(microBatchesInFlight(schedule, p, v, m, stage), expected);
}

void TestMemory::interleavedMatchesKorthikantiFactor()
{
    // Korthikanti et al. §4 (pipeline parallelism): the interleaved first stage holds L·(1 + (p−1)/(p·v)) layers' worth.
    // p = 4, v = 3, m = 12: 2·3 + 2·4 + 1 = 15 chunk-forwards of L/(p·v) layers = 15·L/12 = L·(1 + 3/12).
    const auto n = microBatchesInFlight(PipelineSchedule::Interleaved, 4, 3, 12, 0);
    std::uint64_t sum = 0;
    for (std::uint64_t k : n)
        sum += k;
    QCOMPARE(sum, std::uint64_t(15));
    // Through a plan: GPT-2 small L = 12 on pp = 4 × v = 3 (one layer per chunk), dp = 2, N_acc = 8
    // (G = 524,288 / (32·1,024·2)); rank 0: 2·3 + 2·4 + 1 = 15 ≤ m·v = 24 chunk-forwards held.
    ParallelPlan plan = planOf(2, 4, 1);
    plan.schedule = PipelineSchedule::Interleaved;
    plan.virtualStages = 3;
    const PlanMemory mem = memoryOf(plan);
    std::uint64_t held = 0;
    for (std::uint64_t k : mem.roles[0].inFlight)
        held += k;
    QCOMPARE(held, std::uint64_t(15));
    // Stage 0 holds chunks 0, 4 and 8 (layers 0, 4, 8); forward i runs chunk (i/4) mod 3: i = 0–3 and
    // 12–14 chunk 0 (7), 4–7 the second (4), 8–11 the third (4). Fused, t = 1: 34·sbh = 855,638,016 per
    // layer and micro-batch, ×15; the embedding (8sb + sbh = 25,427,968) sits in chunk 0: ×7.
    QCOMPARE(mem.roles[0].inFlight, (std::vector<std::uint64_t>{7, 4, 4}));
    QCOMPARE(mem.roles[0].activations, 15 * 855638016.0 + 7 * 25427968.0);
}

void TestMemory::table2ClosedForms_data()
{
    QTest::addColumn<qulonglong>("t");
    QTest::addColumn<bool>("sp");
    QTest::addColumn<int>("recompute");
    QTest::addColumn<double>("expected");
    // GPT-3 175B's layer (Korthikanti et al. Table 3): s = 2,048, b = 1, h = 12,288, a = 96, t = 8,
    // 16-bit, unfused attention. sbh = 25,165,824; 5as/h = 5·96·2,048/12,288 = 80.
    // Table 2: no parallelism sbh(34 + 80) = 2,868,903,936.
    QTest::newRow("none") << 1ull << false << 0 << 25165824.0 * (34 + 80);
    // TP: sbh(10 + 24/8 + 80/8) = 23·sbh = 578,813,952.
    QTest::newRow("tp") << 8ull << false << 0 << 25165824.0 * (10 + 3 + 10);
    // TP + SP: sbh(34/8 + 80/8) = 14.25·sbh = 358,612,992.
    QTest::newRow("tp+sp") << 8ull << true << 0 << 25165824.0 * (4.25 + 10);
    // TP + selective: sbh(10 + 24/8) = 13·sbh = 327,155,712.
    QTest::newRow("tp+selective") << 8ull << false << 1 << 25165824.0 * 13;
    // TP + SP + selective: sbh·34/8 = 106,954,752.
    QTest::newRow("tp+sp+selective") << 8ull << true << 1 << 25165824.0 * 4.25;
    // Full recomputation: the layer input 2sbh = 50,331,648.
    QTest::newRow("full") << 8ull << false << 2 << 25165824.0 * 2;
}

void TestMemory::table2ClosedForms()
{
    QFETCH(qulonglong, t);
    QFETCH(bool, sp);
    QFETCH(int, recompute);
    QFETCH(double, expected);
    const ModelConfig m = known("gpt3-175b");
    QCOMPARE(m.hiddenSize, std::uint64_t(12288));
    QCOMPARE(m.ffnSize, 4 * m.hiddenSize);
    ActivationShape shape;
    shape.t = t;
    shape.sequenceParallel = sp;
    shape.scoresStored = true;
    shape.recompute = static_cast<tw::model::Recompute>(recompute);
    const LayerActivations x = layerActivationBytes(m, {2048, 1, 2048}, shape);
    QCOMPARE(x.total, expected);
    // The scores alone: 5as²b/t = 5·96·2,048²·1/t.
    QCOMPARE(x.scores, 5.0 * 96 * 2048 * 2048 / static_cast<double>(t));
}

void TestMemory::swigluAndGqaDecomposition()
{
    // Llama-3-8B's layer: h = 4,096, 32 heads, 8 KV heads (d_kv = 1,024), d_ff = 14,336, no dropout,
    // RMSNorm; s = 4,096, b = 1, bf16, fused, t = 1. sb = 4,096; sbh = 16,777,216.
    // Attention: QKV input 2sbh + Q 2sbh + K, V 2·2·sb·d_kv (= sbh) + output-projection input 2sbh
    // = 7·sbh = 117,440,512. MLP: input 2sbh = 33,554,432 + gate, up, product 3·2·sb·d_ff =
    // 6·4,096·14,336 = 352,321,536 → 385,875,968. Norms 2·2sbh = 67,108,864.
    // Total 117,440,512 + 385,875,968 + 67,108,864 = 570,425,344.
    const ModelConfig m = known("llama3-8b");
    QCOMPARE(m.kvDim(), std::uint64_t(1024));
    ActivationShape shape;
    shape.scoresStored = false;
    const LayerActivations x = layerActivationBytes(m, {4096, 1, 4096}, shape);
    QCOMPARE(x.attention, 117440512.0);
    QCOMPARE(x.mlp, 385875968.0);
    QCOMPARE(x.norms, 67108864.0);
    QCOMPARE(x.scores, 0.0);
    QCOMPARE(x.total, 570425344.0);
    // Unfused, no dropout: only the softmax output 2·a·s²·b = 2·32·4,096² = 1,073,741,824.
    shape.scoresStored = true;
    QCOMPARE(layerActivationBytes(m, {4096, 1, 4096}, shape).scores, 1073741824.0);
}

void TestMemory::zeroPaperExample_data()
{
    QTest::addColumn<Sharding>("sharding");
    QTest::addColumn<double>("expected");
    // ZeRO (arXiv 1910.02054) §5.1 / Figure 1: Ψ = 7.5B, N_d = 64, K = 12, mixed precision:
    // baseline (2 + 2 + 12)Ψ = 120 GB; P_os 2Ψ + 2Ψ + 12Ψ/64 = 30 + 1.40625 = 31.40625 GB ("31.4 GB");
    // P_os+g 2Ψ + 14Ψ/64 = 15 + 1.640625 = 16.640625 GB ("16.6 GB"); P_os+g+p 16Ψ/64 = 1.875 GB ("1.9 GB").
    QTest::newRow("baseline") << Sharding::Ddp << 120e9;
    QTest::newRow("P_os") << Sharding::Zero1 << 31.40625e9;
    QTest::newRow("P_os+g") << Sharding::Zero2 << 16.640625e9;
    QTest::newRow("P_os+g+p") << Sharding::Zero3 << 1.875e9;
}

void TestMemory::zeroPaperExample()
{
    QFETCH(Sharding, sharding);
    QFETCH(double, expected);
    ModelConfig m;
    m.weights = tw::model::Precision::Fp16;
    m.gradients = tw::model::Precision::Fp16;
    m.optimizerState = tw::model::Precision::Fp32;
    QCOMPARE(modelStateBytes(7.5e9, m, sharding, 64).total(), expected);
}

void TestMemory::megatronBytesPerParameter()
{
    // Megatron-LM theoretical_memory_usage.py: bf16 weights, fp32 main gradients, fp32 master + Adam:
    // 18 bytes per parameter; with the distributed optimizer (= ZeRO-1 with fp32 gradients) 6 + 12/N_d.
    ModelConfig m;
    m.gradients = tw::model::Precision::Fp32;
    const double psi = 1e9;
    QCOMPARE(modelStateBytes(psi, m, Sharding::Ddp, 8).total(), 18 * psi);
    // N_d = 8: 6 + 12/8 = 7.5 bytes per parameter.
    QCOMPARE(modelStateBytes(psi, m, Sharding::Zero1, 8).total(), 7.5 * psi);
    // N_d = 64: 6 + 0.1875 = 6.1875.
    QCOMPARE(modelStateBytes(psi, m, Sharding::Zero1, 64).total(), 6.1875 * psi);
    // fp32 weights: no master copy, Adam m and v 8 bytes: 4 + 4 + 8 = 16.
    m.weights = tw::model::Precision::Fp32;
    QCOMPARE(modelStateBytes(psi, m, Sharding::Ddp, 1).total(), 16 * psi);
    // Non-divisible shards round up (ZeRO/FSDP pad to a multiple of the ranks): ⌈10/4⌉ = 3 → 3·12 = 36.
    ModelConfig d;
    QCOMPARE(modelStateBytes(10, d, Sharding::Zero1, 4).optimizer, 36.0);
}

void TestMemory::rolesSumToStageTwo_data()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("gpt2-small") << QStringLiteral("gpt2-small");
    QTest::newRow("llama2-7b") << QStringLiteral("llama2-7b");
    QTest::newRow("mixtral-8x7b") << QStringLiteral("mixtral-8x7b");
}

void TestMemory::rolesSumToStageTwo()
{
    QFETCH(QString, model);
    const ModelConfig m = known(model.toUtf8().constData());
    const BatchShape b{1024, 1, 1024};
    const GpuSpec g = gpu("h100-sxm");
    const auto stage2 = tw::model::deriveModel(m, b, g);
    // t = pp = ep = dp = 1: the one role holds exactly stage 2's model states.
    const PlanMemory one = derivePlanMemory(planOf(1, 1, 1), {1, 1}, m, b, g);
    QCOMPARE(one.roles[0].parameters, stage2.parameters);
    QCOMPARE(one.roles[0].weights, stage2.figures.valueOf("memory.weights_bytes"));
    QCOMPARE(one.roles[0].gradients, stage2.figures.valueOf("memory.gradients_bytes"));
    QCOMPARE(one.roles[0].optimizer, stage2.figures.valueOf("memory.optimizer_bytes"));
    // Four stages: the parameters add up to P, plus the last stage's copy of a tied embedding.
    const PlanMemory four = derivePlanMemory(planOf(1, 4, 1), {1, 4}, m, b, g);
    double sum = 0;
    for (const RoleMemory& r : four.roles)
        sum += r.parameters;
    const double tiedCopy = m.tiedEmbeddings ? static_cast<double>(m.paddedVocab() * m.hiddenSize) : 0.0;
    QCOMPARE(sum, stage2.parameters + tiedCopy);
    // The per-layer activations equal stage 2's when the scores are stored (stage 2 always keeps them).
    ModelConfig unfused = m;
    unfused.attention = tw::model::Attention::Unfused;
    const LayerActivations x = layerActivationBytes(unfused, b, {1, false, true, tw::model::Recompute::None});
    if (m.family == tw::model::Family::Gpt2)
        QCOMPARE(x.total, stage2.figures.valueOf("memory.activations.layer_bytes"));
}

void TestMemory::attentionAuto()
{
    ModelConfig m;
    QVERIFY(!attentionScoresStored(m, gpu("a100-80gb")));   // Ampere: flash attention
    QVERIFY(!attentionScoresStored(m, gpu("h100-sxm")));
    QVERIFY(!attentionScoresStored(m, gpu("mi300x")));
    QVERIFY(attentionScoresStored(m, gpu("v100-32gb")));    // Volta: no flash attention
    m.attention = tw::model::Attention::Unfused;
    QVERIFY(attentionScoresStored(m, gpu("h100-sxm")));
    m.attention = tw::model::Attention::Fused;
    QVERIFY(!attentionScoresStored(m, gpu("v100-32gb")));
    QVERIFY(tw::model::attentionFromString("unfused") == std::optional(tw::model::Attention::Unfused));
    QVERIFY(!tw::model::attentionFromString("flash"));
}

void TestMemory::settingsRoundTrip()
{
    using namespace tw::scenario;
    Scenario s;
    s.model.attention = tw::model::Attention::Unfused;
    s.parallel.memoryReserveBytes = 2.5e9;
    s.parallel.commBufferBytes = 1048576;
    const std::string json = scenarioToJson(s);
    QVERIFY(json.find("\"attention\": \"unfused\"") != std::string::npos);
    QVERIFY(json.find("\"memory_reserve_bytes\": 2500000000") != std::string::npos);
    const ScenarioLoad back = loadScenario(json, "x.json");
    QVERIFY(back.errors.empty());
    QVERIFY(*back.scenario == s);
    // Defaults are not written, and absent keys load as the defaults.
    const std::string plain = scenarioToJson(Scenario{});
    QVERIFY(plain.find("attention") == std::string::npos);
    QVERIFY(plain.find("memory_reserve_bytes") == std::string::npos);
    const ScenarioLoad def = loadScenario(plain, "y.json");
    QVERIFY(def.errors.empty());
    QVERIFY(def.scenario->model.attention == tw::model::Attention::Auto);
    QCOMPARE(def.scenario->parallel.memoryReserveBytes, 1073741824.0);
    QCOMPARE(def.scenario->parallel.commBufferBytes, 67108864.0);
}

void TestMemory::derivationHasTheFigures()
{
    auto s = tw::scenario::preset("paper-pp");
    QVERIFY(s);
    auto d = tw::scenario::derive(s.value());
    QVERIFY(d);
    const auto& dv = *d.value();
    QVERIFY(dv.memory);
    QCOMPARE(dv.memory->roles.size(), std::size_t(8));
    for (int r = 0; r < 8; ++r) {
        const std::string id = "memory.plan.stage" + std::to_string(r) + ".";
        for (const char* k : {"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "buffers_bytes",
                              "total_bytes", "headroom_bytes", "fits"})
            QVERIFY2(dv.figures.find(id + k), (id + k).c_str());
        QCOMPARE(dv.figures.valueOf(id + "total_bytes"), dv.memory->roles[std::size_t(r)].total);
    }
    QCOMPARE(dv.figures.valueOf("memory.plan.peak_bytes"), dv.memory->peakBytes);
    QCOMPARE(dv.figures.valueOf("memory.plan.fits"), dv.memory->fits ? 1.0 : 0.0);
    QVERIFY(dv.figures.missingInputs().empty());
    // The formula carries the numbers: stage 0's weights name its parameter count.
    const tw::Figure* w = dv.figures.find("memory.plan.stage0.weights_bytes");
    QVERIFY(w->formula.find(tw::formatCount(dv.memory->roles[0].parameters, 0)) != std::string::npos);
}

void TestMemory::largePlanMapsEveryGpu()
{
    // 16,384 GPUs (GPT-3 175B, dp 128 × pp 16 × tp 8): one role per stage, every GPU mapped to its stage.
    const ModelConfig m = known("gpt3-175b");
    const BatchShape b{2048, 1, 2048ull * 1536};
    ParallelPlan plan = planOf(128, 16, 8);
    plan.sharding = Sharding::Zero1;
    const Cluster cluster{2048, 8};
    QVERIFY(validate(plan, cluster, m, b).empty());
    const PlanMemory mem = derivePlanMemory(plan, cluster, m, b, gpu("h100-sxm"), {}, false);
    QCOMPARE(mem.roles.size(), std::size_t(16));
    QCOMPARE(mem.roleOfGpu.size(), std::size_t(16384));
    // Megatron's order: 8 TP × 128 DP = 1,024 consecutive GPUs per stage.
    QCOMPARE(mem.roleOfGpu[1023], std::uint32_t(0));
    QCOMPARE(mem.roleOfGpu[1024], std::uint32_t(1));
    for (const RoleMemory& r : mem.roles)
        QCOMPARE(r.gpus, std::uint64_t(1024));
    QVERIFY(mem.figures.all().empty());
    // With the figures: one set per stage, every id distinct (its speed: tests/bench/bench_memory).
    const PlanMemory withFigures = derivePlanMemory(plan, cluster, m, b, gpu("h100-sxm"));
    QVERIFY(withFigures.figures.find("memory.plan.stage15.total_bytes"));
    QCOMPARE(withFigures.peakBytes, mem.peakBytes);
}

QTEST_APPLESS_MAIN(TestMemory)
#include "tst_memory.moc"
