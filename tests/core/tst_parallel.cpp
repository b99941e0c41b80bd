// Stage 3 (parallel plan): the paper's worked examples 5.1–5.3 and the MoE example (docs/model.md),
// ZeRO / FSDP / sequence-parallel / recomputation variants with per-GPU bytes derived by hand in the
// comments, validation messages, groups of a bad placement, parameter bookkeeping and the figures'
// provenance graph.

#include "../support/testsupport.h"
#include "parallel/plan.h"

#include "model/gpucatalog.h"
#include "model/model.h"
#include "model/tensors.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

using namespace tw::parallel;
using tw::model::BatchShape;
using tw::model::GpuSpec;
using tw::model::ModelConfig;

Q_DECLARE_METATYPE(Sharding)
Q_DECLARE_METATYPE(tw::model::Recompute)
Q_DECLARE_METATYPE(std::string)

using tw::test::contains;
using tw::test::joined;
using tw::test::planOf;

namespace {

ModelConfig known(const char* id)
{
    auto m = tw::model::knownModel(id);
    if (!m)
        qFatal("unknown model %s", id);
    return *m;
}

GpuSpec a100()
{
    auto g = tw::model::findGpu("a100-80gb");
    if (!g)
        qFatal("no a100-80gb in the catalog");
    return *g;
}

// The paper's batch: T = 1,024, B = 32, G = 524,288 tokens per optimizer step.
const BatchShape kPaperBatch{1024, 32, 524288};
// Hidden state of one micro-batch: B·T·d·s = 32·1,024·768·2 = 50,331,648 B (Examples 5.2, 5.3).
constexpr double kHidden = 50331648.0;
// GPT-2 small, tied: P = 124,439,808; P·s_g = 248,879,616 B (Example 5.1).
constexpr double kP = 124439808.0;
constexpr double kM = 248879616.0;

const StrategySignature& row(const PlanDerivation& d, Strategy s)
{
    return d.comm.signature.at(static_cast<std::size_t>(s));
}

double fig(const PlanDerivation& d, const char* id)
{
    const tw::Figure* f = d.figures.find(id);
    if (!f)
        qFatal("missing figure %s", id);
    return f->value;
}

std::vector<const CollectiveCall*> callsOf(const PlanDerivation& d, Strategy s)
{
    std::vector<const CollectiveCall*> out;
    for (const CollectiveCall& c : d.comm.calls)
        if (c.strategy == s)
            out.push_back(&c);
    return out;
}

// Structural invariants every derivation must satisfy.
void checkConsistent(const PlanDerivation& d)
{
    const auto& comm = d.comm;
    QCOMPARE(comm.signature.size(), std::size_t(4));
    for (const CollectiveCall& c : comm.calls) {
        QVERIFY(c.groupCount > 0);
        QVERIFY(std::size_t(c.firstGroup) + c.groupCount <= comm.groups.size());
        QVERIFY(c.repeat >= 1);
        QVERIFY(c.payloadBytes > 0);
        QVERIFY(!c.what.empty());
        QVERIFY(!c.formula.empty());
        for (std::uint32_t g = c.firstGroup; g < c.firstGroup + c.groupCount; ++g) {
            QVERIFY(comm.groups[g].strategy == c.strategy);
            QVERIFY(comm.groups[g].members.size() >= 2);
            if (c.kind == CollectiveKind::SendRecv)
                QCOMPARE(comm.groups[g].members.size(), std::size_t(2));
        }
    }
    // Calls in step order: forward, backward, optimizer.
    for (std::size_t i = 1; i < comm.calls.size(); ++i)
        QVERIFY(static_cast<int>(comm.calls[i - 1].phase) <= static_cast<int>(comm.calls[i].phase));
    double total = 0, perGpu = 0;
    for (const StrategySignature& s : comm.signature)
        total += s.totalBytesPerStep;
    for (double b : comm.bytesSentPerGpu)
        perGpu += b;
    QCOMPARE(perGpu, total);
    QCOMPARE(comm.bytesSentPerGpu.size(), d.mesh.size());
}

} // namespace

class TestParallel : public QObject {
    Q_OBJECT

private slots:
    void names();
    void bucketFollowsTheFramework();
    void meshAndDefaultAssignment();
    void example51DataParallel();
    void example52Pipeline();
    void example53Tensor();
    void moeExpertParallel();
    void dataShardingVariants_data();
    void dataShardingVariants();
    void fp8AllGatherOfTheLayers();
    void tensorVariants_data();
    void tensorVariants();
    void hybridShardGroups();
    void interleavedBoundaries();
    void pipelineWithTensorParallel();
    void computeModel();
    void validationMessages();
    void validationMore_data();
    void validationMore();
    void badPlacement();
    void parameterBreakdownSums_data();
    void parameterBreakdownSums();
    void figureGraphClosed();
    void largeMesh();
    void invalidPlansDoNotCrash();
};

void TestParallel::names()
{
    for (Sharding s : {Sharding::Ddp, Sharding::Zero1, Sharding::Zero2, Sharding::Zero3, Sharding::FsdpFull,
                       Sharding::FsdpHybrid})
        QCOMPARE(shardingFromString(toString(s)), std::optional<Sharding>(s));
    QCOMPARE(toString(Sharding::FsdpHybrid), std::string_view("fsdp-hybrid"));
    for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved})
        QCOMPARE(scheduleFromString(toString(s)), std::optional<PipelineSchedule>(s));
    QCOMPARE(toString(PipelineSchedule::OneFOneB), std::string_view("1f1b"));
    QVERIFY(!shardingFromString("zero4"));
    QVERIFY(!scheduleFromString("1F1B"));
    QCOMPARE(toString(Strategy::EP), std::string_view("EP"));
    QCOMPARE(toString(CollectiveKind::AllToAll), std::string_view("All-to-All"));
    QCOMPARE(toString(CollectiveKind::SendRecv), std::string_view("Send/Recv"));

    // Ring / pairwise bytes per member (docs/model.md §4), M = 800, N = 8.
    CollectiveCall c;
    c.payloadBytes = 800;
    c.kind = CollectiveKind::AllReduce;
    QCOMPARE(c.bytesSentPerMember(8), 1400.0); // 2·7/8·800
    c.kind = CollectiveKind::ReduceScatter;
    QCOMPARE(c.bytesSentPerMember(8), 700.0);  // 7/8·800
    c.kind = CollectiveKind::AllGather;
    QCOMPARE(c.bytesSentPerMember(8), 700.0);
    c.kind = CollectiveKind::AllToAll;
    QCOMPARE(c.bytesSentPerMember(8), 700.0);
    c.kind = CollectiveKind::SendRecv;
    QCOMPARE(c.bytesSentPerMember(2), 800.0);
    c.kind = CollectiveKind::Broadcast;
    QCOMPARE(c.bytesSentPerMember(4), 800.0);
    QCOMPARE(c.bytesSentPerMember(1), 0.0); // a group of one sends nothing
}

void TestParallel::meshAndDefaultAssignment()
{
    // Megatron order g = tp + t·(dp + d·pp): dp 2, pp 2, tp 2 → GPU 5 = tp 1, dp 0, pp 1.
    const ParallelPlan p = planOf(2, 2, 2);
    const auto mesh = defaultAssignment(p);
    QCOMPARE(mesh.size(), std::size_t(8));
    QCOMPARE(mesh[5], (MeshCoord{0, 1, 1}));
    QCOMPARE(mesh[2], (MeshCoord{1, 0, 0}));
    QCOMPARE(mesh[7], (MeshCoord{1, 1, 1}));
    QCOMPARE(effectiveAssignment(p), mesh);
    ParallelPlan q = p;
    q.assignment = mesh;
    std::swap(q.assignment[0], q.assignment[7]);
    QCOMPARE(effectiveAssignment(q), q.assignment);

    // Valid TP degrees: common divisors of a and n_kv (docs/model.md: GPT-2 small 1, 2, 3, 4, 6, 12).
    QCOMPARE(validTensorDegrees(known("gpt2-small")), (std::vector<std::uint64_t>{1, 2, 3, 4, 6, 12}));
    // Llama-3-8B: a = 32, n_kv = 8 → 1, 2, 4, 8.
    QCOMPARE(validTensorDegrees(known("llama3-8b")), (std::vector<std::uint64_t>{1, 2, 4, 8}));
}

void TestParallel::example51DataParallel()
{
    // Example 5.1: dp = 8 on 8 GPUs, G = 524,288, B = 32, T = 1,024.
    const ModelConfig m = known("gpt2-small");
    const ParallelPlan plan = planOf(8, 1, 1);
    const Cluster cluster{1, 8};
    QVERIFY2(validate(plan, cluster, m, kPaperBatch).empty(), joined(validate(plan, cluster, m, kPaperBatch)).c_str());
    const PlanDerivation d = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(d);

    // N_acc = G/(B·T·dp) = 524,288/(32·1,024·8) = 2.
    QCOMPARE(fig(d, "dp.n_acc"), 2.0);
    // M_DP = P·s_g = 124,439,808·2 = 248,879,616 B, once per optimizer step.
    QCOMPARE(fig(d, "dp.params_per_rank"), kP);
    QCOMPARE(fig(d, "dp.grad_allreduce_bytes"), kM);
    QVERIFY(contains(d.figures.find("dp.grad_allreduce_bytes")->formula, "P·s_g = 124,439,808·2 = 248,879,616 B"));
    // ⌈248,879,616 / 26,214,400⌉ = ⌈9.49⌉ = 10 buckets of 25 MiB.
    QCOMPARE(fig(d, "dp.buckets"), 10.0);

    const auto dpCalls = callsOf(d, Strategy::DP);
    QCOMPARE(dpCalls.size(), std::size_t(1));
    QVERIFY(dpCalls[0]->kind == CollectiveKind::AllReduce);
    QCOMPARE(dpCalls[0]->payloadBytes, kM);
    QCOMPARE(dpCalls[0]->repeat, std::uint64_t(1));
    QCOMPARE(dpCalls[0]->groupCount, std::uint32_t(1));
    QCOMPARE(dpCalls[0]->phase, tw::model::Phase::Backward);
    QCOMPARE(d.comm.groups[dpCalls[0]->firstGroup].members.size(), std::size_t(8));

    // Ring: 2·(8−1)/8·248,879,616 = 435,539,328 B per GPU; all 8 GPUs: 3,484,314,624 B.
    const StrategySignature& dp = row(d, Strategy::DP);
    QVERIFY(dp.present);
    QCOMPARE(dp.bytesPerGpuPerStep, 2.0 * 7 / 8 * kM);
    QCOMPARE(dp.bytesPerGpuPerStep, 435539328.0);
    QCOMPARE(dp.totalBytesPerStep, 3484314624.0);
    QCOMPARE(dp.callsPerStep, 1.0);
    QCOMPARE(dp.peers, std::uint64_t(7));
    QCOMPARE(dp.payloadBytes, kM);
    QCOMPARE(dp.groups, std::uint64_t(1));
    QCOMPARE(dp.groupsCrossingNodes, std::uint64_t(0));
    QCOMPARE(dp.frequency, std::string("once per optimizer step (gradient AllReduce)"));
    QCOMPARE(fig(d, "dp.bytes_per_gpu_per_step"), 435539328.0);
    // The signature's numbers are figures too.
    QCOMPARE(fig(d, "dp.calls_per_gpu_per_step"), 1.0);
    QCOMPARE(fig(d, "dp.peers"), 7.0);
    QCOMPARE(fig(d, "dp.payload_bytes"), kM);
    QCOMPARE(fig(d, "dp.total_bytes_per_step"), 3484314624.0);
    QVERIFY(!d.figures.find("pp.calls_per_gpu_per_step")); // PP not used
    for (Strategy s : {Strategy::PP, Strategy::TP, Strategy::EP}) {
        QVERIFY(!row(d, s).present);
        QCOMPARE(row(d, s).totalBytesPerStep, 0.0);
        QVERIFY(callsOf(d, s).empty());
    }
    for (double b : d.comm.bytesSentPerGpu)
        QCOMPARE(b, 435539328.0);
    // The plan as derived: default partition and assignment filled in.
    QCOMPARE(d.plan.layerPartition, std::vector<std::uint64_t>{12});
    QCOMPARE(d.plan.assignment.size(), std::size_t(8));
    QCOMPARE(d.mesh, defaultAssignment(plan));
}

void TestParallel::example52Pipeline()
{
    // Example 5.2: pp = 8 on 8 GPUs (dp = 1, so N_acc = 524,288/(32·1,024) = 16), 80 ms per layer forward.
    const ModelConfig m = known("gpt2-small");
    ParallelPlan plan = planOf(1, 8, 1);
    plan.layerForwardSeconds = {0.08};
    const Cluster cluster{1, 8};
    QVERIFY2(validate(plan, cluster, m, kPaperBatch).empty(), joined(validate(plan, cluster, m, kPaperBatch)).c_str());
    const PlanDerivation d = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(d);

    QCOMPARE(fig(d, "dp.n_acc"), 16.0);
    QCOMPARE(d.plan.layerPartition, (std::vector<std::uint64_t>{1, 1, 2, 2, 2, 2, 1, 1}));
    // Boundary activation B·T·d·s = 50,331,648 B forward, 100,663,296 B forward + backward.
    QCOMPARE(fig(d, "pp.boundary_bytes_fwd"), kHidden);
    QCOMPARE(fig(d, "pp.boundary_bytes_fwd_bwd"), 100663296.0);
    QCOMPARE(fig(d, "pp.boundaries"), 7.0);
    // Stage times: 1 layer → 80 + 2·80 = 240 ms; 2 layers → 480 ms; balance = mean/max =
    // ((4·240 + 4·480)/8)/480 = 360/480 = 0.75.
    for (int s : {0, 1, 6, 7})
        QCOMPARE(fig(d, ("pp.stage_time.s" + std::to_string(s)).c_str()), 0.24);
    for (int s : {2, 3, 4, 5})
        QCOMPARE(fig(d, ("pp.stage_time.s" + std::to_string(s)).c_str()), 0.48);
    QCOMPARE(fig(d, "pp.bottleneck_stage_time"), 0.48);
    QCOMPARE(fig(d, "pp.balance"), 0.75);
    // (p−1)/m = 7/16.
    QCOMPARE(fig(d, "pp.bubble_fraction_formula"), 7.0 / 16);
    const double bubble = fig(d, "pp.bubble_fraction");
    QVERIFY(bubble > 0 && bubble < 1);
    QCOMPARE(d.layerForwardSeconds, std::vector<double>(12, 0.08));
    QCOMPARE(d.timeline.stageForwardSeconds.size(), std::size_t(8));

    // 7 boundaries × 2 directions, each repeat N_acc = 16; plus the tied embedding AllReduce between
    // stage 0 and stage 7: V·d·s_g = 50,257·768·2 = 77,194,752 B.
    const auto pp = callsOf(d, Strategy::PP);
    QCOMPARE(pp.size(), std::size_t(15));
    int sends = 0;
    for (const CollectiveCall* c : pp) {
        if (c->kind == CollectiveKind::SendRecv) {
            ++sends;
            QCOMPARE(c->repeat, std::uint64_t(16));
            QCOMPARE(c->payloadBytes, kHidden);
            QCOMPARE(c->groupCount, std::uint32_t(1));
            const auto& members = d.comm.groups[c->firstGroup].members;
            // Forward: stage s → s+1 (GPU s → s+1 here); backward reversed.
            if (c->phase == tw::model::Phase::Forward)
                QCOMPARE(members[1], members[0] + 1);
            else
                QCOMPARE(members[0], members[1] + 1);
        } else {
            QVERIFY(c->kind == CollectiveKind::AllReduce);
            QCOMPARE(c->payloadBytes, 77194752.0);
            QCOMPARE(d.comm.groups[c->firstGroup].members, (std::vector<std::uint32_t>{0, 7}));
            QCOMPARE(d.comm.groups[c->firstGroup].kind, std::string("pp-embedding"));
        }
    }
    QCOMPARE(sends, 14);
    QCOMPARE(fig(d, "pp.sendrecv_per_step"), 224.0); // 2·7·16
    QCOMPARE(fig(d, "pp.embedding_allreduce_bytes"), 77194752.0);
    // Per GPU: a middle stage sends 16 activations forward and 16 gradients backward:
    // 32·50,331,648 = 1,610,612,736 B and takes part in 64 Send/Recvs; GPU 0 sends 16·50,331,648 +
    // 2·(1/2)·77,194,752 = 882,501,120 B.
    const StrategySignature& s = row(d, Strategy::PP);
    QVERIFY(s.present);
    QCOMPARE(s.bytesPerGpuPerStep, 1610612736.0);
    QCOMPARE(s.callsPerStep, 64.0);
    QCOMPARE(s.peers, std::uint64_t(1));
    QCOMPARE(d.comm.bytesSentPerGpu[0], 882501120.0);
    QCOMPARE(d.comm.bytesSentPerGpu[7], 882501120.0);
    QCOMPARE(d.comm.bytesSentPerGpu[3], 1610612736.0);
    // Total: 14 directions·16·M + 2 ranks·77,194,752 = 11,274,289,152 + 154,389,504.
    QCOMPARE(s.totalBytesPerStep, 14 * 16 * kHidden + 2 * 77194752.0);
    // The signature's payload is the call moving the most bytes: the boundary Send/Recv (16 × 50,331,648 B
    // per pair and direction), not the tied embedding's once-per-step AllReduce of 77,194,752 B.
    QCOMPARE(s.payloadBytes, kHidden);
    QCOMPARE(fig(d, "pp.payload_bytes"), kHidden);
    QCOMPARE(fig(d, "pp.calls_per_gpu_per_step"), 64.0);
    QCOMPARE(s.groups, std::uint64_t(15)); // 7 forward + 7 backward pairs + 1 embedding pair
    QVERIFY(!row(d, Strategy::DP).present);
    QVERIFY(callsOf(d, Strategy::DP).empty());
    // Stage 0 holds layer 0, the embedding and the positions: 7,087,872 + 38,597,376 + 786,432 = 46,471,680.
    QCOMPARE(fig(d, "dp.params_per_rank"), 46471680.0);
}

void TestParallel::example53Tensor()
{
    // Example 5.3 at a valid t: tp = 4, dp = 2 on 8 GPUs, 3 ms per layer forward; N_acc = 524,288/(32·1,024·2) = 8.
    const ModelConfig m = known("gpt2-small");
    ParallelPlan plan = planOf(2, 1, 4);
    plan.layerForwardSeconds = {0.003};
    const Cluster cluster{1, 8};
    QVERIFY2(validate(plan, cluster, m, kPaperBatch).empty(), joined(validate(plan, cluster, m, kPaperBatch)).c_str());
    const PlanDerivation d = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(d);

    QCOMPARE(fig(d, "dp.n_acc"), 8.0);
    QCOMPARE(fig(d, "tp.allreduce_bytes"), kHidden);
    QCOMPARE(fig(d, "tp.allreduces_per_layer_fwd"), 2.0);
    QCOMPARE(fig(d, "tp.allreduces_per_layer_bwd"), 2.0);
    QCOMPARE(fig(d, "tp.allreduce_interval"), 0.0015);

    // TP calls: 12 layers·(2 forward + 2 backward) + the embedding's forward AllReduce + the head's
    // backward AllReduce = 50, each repeat 8 over the 2 TP groups {0,1,2,3}, {4,5,6,7}.
    const auto tp = callsOf(d, Strategy::TP);
    QCOMPARE(tp.size(), std::size_t(50));
    int forward = 0, layer3 = 0;
    for (const CollectiveCall* c : tp) {
        QVERIFY(c->kind == CollectiveKind::AllReduce);
        QCOMPARE(c->payloadBytes, kHidden);
        QCOMPARE(c->repeat, std::uint64_t(8));
        QCOMPARE(c->groupCount, std::uint32_t(2));
        forward += c->phase == tw::model::Phase::Forward;
        layer3 += c->layer == 3;
    }
    QCOMPARE(forward, 25);
    QCOMPARE(layer3, 4);
    QCOMPARE(d.comm.groups[tp[0]->firstGroup].members, (std::vector<std::uint32_t>{0, 1, 2, 3}));
    QCOMPARE(d.comm.groups[tp[0]->firstGroup + 1].members, (std::vector<std::uint32_t>{4, 5, 6, 7}));
    // Per GPU: 50·8 AllReduces of 2·3/4·50,331,648 = 75,497,472 B → 30,198,988,800 B, 400 calls.
    const StrategySignature& s = row(d, Strategy::TP);
    QCOMPARE(s.bytesPerGpuPerStep, 30198988800.0);
    QCOMPARE(s.callsPerStep, 400.0);
    QCOMPARE(s.peers, std::uint64_t(3));
    QCOMPARE(s.groups, std::uint64_t(2));
    QCOMPARE(s.frequency, std::string("4× per layer per micro-batch (2 forward, 2 backward)"));

    // DP over 2 ranks of one TP rank's parameters: per layer (2,362,368 + 4,722,432 − 1,536)/4 + 1,536 +
    // 3,072 = 1,775,424; 12 layers 21,305,088 + embedding 38,597,376/4 = 9,649,344 + positions 786,432 +
    // final norm 1,536 = 31,742,400 parameters → 63,484,800 B; ring over 2: 2·(1/2)·M = 63,484,800 B.
    QCOMPARE(fig(d, "dp.params_per_rank"), 31742400.0);
    QCOMPARE(fig(d, "dp.grad_allreduce_bytes"), 63484800.0);
    QCOMPARE(row(d, Strategy::DP).bytesPerGpuPerStep, 63484800.0);
    QCOMPARE(row(d, Strategy::DP).groups, std::uint64_t(4));
    QCOMPARE(d.comm.groups[callsOf(d, Strategy::DP)[0]->firstGroup].members, (std::vector<std::uint32_t>{0, 4}));
}

void TestParallel::moeExpertParallel()
{
    // GPT-2 small with 8 experts per layer, top-1, CF 1; dp 8 = ep 8 on 8 GPUs (N_acc = 2).
    ModelConfig m = known("gpt2-small");
    m.moe.experts = 8;
    m.moe.topK = 1;
    m.moe.capacityFactor = 1.0;
    m.moe.layerInterval = 1;
    QVERIFY(tw::model::validate(m).empty());
    const ParallelPlan plan = planOf(8, 1, 1, 8);
    const Cluster cluster{1, 8};
    QVERIFY2(validate(plan, cluster, m, kPaperBatch).empty(), joined(validate(plan, cluster, m, kPaperBatch)).c_str());
    const PlanDerivation d = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(d);

    // M = k·CF·B·T·d·s = 1·1·50,331,648 B; per GPU per MoE layer per micro-batch 4·(7/8)·M = 176,160,768 B.
    QCOMPARE(fig(d, "ep.alltoall_bytes"), kHidden);
    QCOMPARE(fig(d, "ep.alltoall_bytes_per_layer"), 176160768.0);
    QCOMPARE(fig(d, "ep.experts_per_rank"), 1.0);
    const auto ep = callsOf(d, Strategy::EP);
    QCOMPARE(ep.size(), std::size_t(48)); // 12 MoE layers × 4
    for (const CollectiveCall* c : ep) {
        QVERIFY(c->kind == CollectiveKind::AllToAll);
        QCOMPARE(c->repeat, std::uint64_t(2));
        QCOMPARE(d.comm.groups[c->firstGroup].members.size(), std::size_t(8));
    }
    // Per step: 12 layers·2 micro-batches·176,160,768 = 4,227,858,432 B per GPU.
    QCOMPARE(row(d, Strategy::EP).bytesPerGpuPerStep, 4227858432.0);
    QCOMPARE(row(d, Strategy::EP).callsPerStep, 96.0);
    QVERIFY(row(d, Strategy::EP).present);

    // DP reduces only the non-expert parameters over all 8 ranks: per layer attention 2,362,368 + norms
    // 3,072 + router 768·8 = 6,144 → 2,371,584; ·12 = 28,459,008 + embedding 38,597,376 + positions
    // 786,432 + final norm 1,536 = 67,844,352 → 135,688,704 B. Each expert lives on one rank (dp/ep = 1):
    // no expert gradient reduction.
    QCOMPARE(fig(d, "dp.grad_allreduce_bytes"), 135688704.0);
    QCOMPARE(fig(d, "dp.expert_grad_bytes"), 12 * 4722432.0 * 2);
    const auto dpCalls = callsOf(d, Strategy::DP);
    QCOMPARE(dpCalls.size(), std::size_t(1));
    QCOMPARE(row(d, Strategy::DP).bytesPerGpuPerStep, 2.0 * 7 / 8 * 135688704.0);

    // ep = 4 on dp = 8: experts' gradients AllReduced over dp/ep = 2 ranks {r, r+4}: 2 experts per rank
    // per layer, 12·2·4,722,432 = 113,338,368 parameters → 226,676,736 B, 2·(1/2)·M per GPU.
    const ParallelPlan plan4 = planOf(8, 1, 1, 4);
    QVERIFY(validate(plan4, cluster, m, kPaperBatch).empty());
    const PlanDerivation d4 = derivePlan(plan4, cluster, m, kPaperBatch, a100());
    checkConsistent(d4);
    QCOMPARE(fig(d4, "dp.expert_grad_bytes"), 226676736.0);
    bool sawExpert = false;
    for (const CollectiveCall* c : callsOf(d4, Strategy::DP))
        if (d4.comm.groups[c->firstGroup].kind == "dp-expert") {
            sawExpert = true;
            QCOMPARE(c->payloadBytes, 226676736.0);
            QCOMPARE(c->groupCount, std::uint32_t(4));
            QCOMPARE(d4.comm.groups[c->firstGroup].members, (std::vector<std::uint32_t>{0, 4}));
        }
    QVERIFY(sawExpert);
    // Busiest GPU: 2·7/8·135,688,704 + 2·1/2·226,676,736 = 237,455,232 + 226,676,736 = 464,131,968 B.
    QCOMPARE(row(d4, Strategy::DP).bytesPerGpuPerStep, 464131968.0);
    // EP groups: blocks of 4 consecutive DP ranks; per layer 4·(3/4)·M.
    QCOMPARE(fig(d4, "ep.alltoall_bytes_per_layer"), 4 * 0.75 * kHidden);
    QCOMPARE(d4.comm.groups[callsOf(d4, Strategy::EP)[0]->firstGroup + 1].members,
             (std::vector<std::uint32_t>{4, 5, 6, 7}));
}

void TestParallel::dataShardingVariants_data()
{
    QTest::addColumn<Sharding>("sharding");
    QTest::addColumn<double>("bytesPerGpu");
    QTest::addColumn<double>("callsPerStep");
    QTest::addColumn<double>("ratioToDdp");
    // dp = 8 on 8 GPUs, N_acc = 2, M = P·s = 248,879,616 B (s_w = s_g = 2).
    // DDP: 2·7/8·M = 435,539,328 B, one call.
    QTest::newRow("ddp") << Sharding::Ddp << 435539328.0 << 1.0 << 0.0;
    // ZeRO-1: ReduceScatter 7/8·M + AllGather 7/8·M = 435,539,328 B (same volume as DDP).
    QTest::newRow("zero1") << Sharding::Zero1 << 435539328.0 << 2.0 << 1.0;
    // ZeRO-2: ReduceScatter every micro-step 2·7/8·M + AllGather 7/8·M = 653,308,992 B.
    QTest::newRow("zero2") << Sharding::Zero2 << 653308992.0 << 3.0 << 1.5;
    // ZeRO-3: per micro-step AllGather + AllGather + ReduceScatter = 3·7/8·M, ×2 = 1,306,617,984 B = 3× DDP;
    // 14 units (embedding, 12 layers, final norm) × 3 × 2 = 84 calls.
    QTest::newRow("zero3") << Sharding::Zero3 << 1306617984.0 << 84.0 << 3.0;
    QTest::newRow("fsdp-full") << Sharding::FsdpFull << 1306617984.0 << 84.0 << 3.0;
}

void TestParallel::dataShardingVariants()
{
    QFETCH(Sharding, sharding);
    QFETCH(double, bytesPerGpu);
    QFETCH(double, callsPerStep);
    QFETCH(double, ratioToDdp);
    const ModelConfig m = known("gpt2-small");
    ParallelPlan plan = planOf(8, 1, 1);
    plan.sharding = sharding;
    const PlanDerivation d = derivePlan(plan, Cluster{1, 8}, m, kPaperBatch, a100());
    checkConsistent(d);
    const StrategySignature& s = row(d, Strategy::DP);
    QCOMPARE(s.bytesPerGpuPerStep, bytesPerGpu);
    QCOMPARE(s.callsPerStep, callsPerStep);
    QCOMPARE(fig(d, "dp.bytes_per_gpu_per_step"), bytesPerGpu);
    if (sharding != Sharding::Ddp) {
        QCOMPARE(fig(d, "zero.ratio_to_ddp"), ratioToDdp);
        QCOMPARE(fig(d, "zero.shard_params"), kP / 8);
        QCOMPARE(fig(d, "zero.ddp_bytes_per_gpu_per_step"), 435539328.0);
    } else {
        QVERIFY(!d.figures.find("zero.ratio_to_ddp"));
    }
    if (sharding == Sharding::Zero3 || sharding == Sharding::FsdpFull) {
        // 1.5× DDP per micro-step: 3·7/8·M = 653,308,992 B.
        QCOMPARE(fig(d, "zero.bytes_per_gpu_per_microstep"), 653308992.0);
        // Units: the embedding (38,597,376 + 786,432 = 39,383,808 params) gathered first in forward.
        const CollectiveCall& first = d.comm.calls.front();
        QVERIFY(first.kind == CollectiveKind::AllGather);
        QCOMPARE(first.phase, tw::model::Phase::Forward);
        QCOMPARE(first.payloadBytes, 39383808.0 * 2);
        QCOMPARE(first.repeat, std::uint64_t(2));
        // A layer unit: 7,087,872 params · 2 B.
        int layer5 = 0;
        for (const CollectiveCall& c : d.comm.calls)
            if (c.layer == 5) {
                ++layer5;
                QCOMPARE(c.payloadBytes, 7087872.0 * 2);
            }
        QCOMPARE(layer5, 3);
    }
    if (sharding == Sharding::Zero1 || sharding == Sharding::Zero2) {
        QVERIFY(d.comm.calls.back().kind == CollectiveKind::AllGather);
        QCOMPARE(d.comm.calls.back().phase, tw::model::Phase::Optimizer);
        QCOMPARE(d.comm.calls.front().repeat, std::uint64_t(sharding == Sharding::Zero2 ? 2 : 1));
    }
}

// FSDP's FP8 all-gather (torchtitan) on the ZeRO-3 case above: a layer unit's two AllGathers carry
// 7,087,872 params · 1 B; its gradient ReduceScatter stays 2 B per parameter, and the embedding (not an
// FP8 layer) is gathered at 39,383,808 · 2 B. Without an FP8 recipe it does nothing.
void TestParallel::fp8AllGatherOfTheLayers()
{
    ModelConfig m = known("gpt2-small");
    m.fp8Recipe = tw::model::Fp8Recipe::Delayed;
    ParallelPlan plan = planOf(8, 1, 1);
    plan.sharding = Sharding::Zero3;
    plan.fp8AllGather = true;
    QVERIFY(validate(plan, Cluster{1, 8}, m, kPaperBatch).empty());
    const PlanDerivation d = derivePlan(plan, Cluster{1, 8}, m, kPaperBatch, a100());
    checkConsistent(d);
    QCOMPARE(d.comm.calls.front().payloadBytes, 39383808.0 * 2);
    int gathers = 0, scatters = 0;
    for (const CollectiveCall& c : d.comm.calls) {
        if (c.layer != 5)
            continue;
        if (c.kind == CollectiveKind::AllGather) {
            ++gathers;
            QCOMPARE(c.payloadBytes, 7087872.0);
        } else {
            ++scatters;
            QCOMPARE(c.payloadBytes, 7087872.0 * 2);
        }
    }
    QCOMPARE(gathers, 2);
    QCOMPARE(scatters, 1);
    // Per micro-step: 7/8·(2·W_gather + M), W_gather = 12 layers · 7,087,872 · 1 B + (39,383,808 embedding +
    // 1,536 final norm) · 2 B = 85,054,464 + 78,770,688 = 163,825,152 B, M = 248,879,616 B:
    // 7/8·(327,650,304 + 248,879,616) = 504,463,680 B.
    QCOMPARE(fig(d, "zero.bytes_per_gpu_per_microstep"), 504463680.0);
    // Without an FP8 recipe it has no effect (the weights are not FP8): the layer gathers at 2 B again.
    m.fp8Recipe = tw::model::Fp8Recipe::None;
    QVERIFY(validate(plan, Cluster{1, 8}, m, kPaperBatch).empty());
    const PlanDerivation plain = derivePlan(plan, Cluster{1, 8}, m, kPaperBatch, a100());
    for (const CollectiveCall& c : plain.comm.calls)
        if (c.layer == 5)
            QCOMPARE(c.payloadBytes, 7087872.0 * 2);
}

void TestParallel::tensorVariants_data()
{
    QTest::addColumn<bool>("sequenceParallel");
    QTest::addColumn<tw::model::Recompute>("recompute");
    QTest::addColumn<int>("tpCalls");
    QTest::addColumn<double>("bytesPerGpu");
    QTest::addColumn<double>("perLayerBwd");
    // tp = 4, dp = 2, N_acc = 8, M = 50,331,648 B; AllReduce sends 2·3/4·M = 75,497,472 B,
    // ReduceScatter / AllGather 3/4·M = 37,748,736 B.
    // Plain: 12·4 + 2 (embedding, head) = 50 AllReduces ·8 → 30,198,988,800 B.
    QTest::newRow("plain") << false << tw::model::Recompute::None << 50 << 30198988800.0 << 2.0;
    // Selective recomputation adds nothing.
    QTest::newRow("selective") << false << tw::model::Recompute::Selective << 50 << 30198988800.0 << 2.0;
    // Full recomputation: 6 per layer: 12·6 + 2 = 74 AllReduces ·8·75,497,472 = 44,694,503,424 B.
    QTest::newRow("full") << false << tw::model::Recompute::Full << 74 << 44694503424.0 << 4.0;
    // SP: 8 per layer (RS + AG for each) + embedding RS/AG + head AG/RS = 100 calls ·8·37,748,736 =
    // 30,198,988,800 B (same bytes as the AllReduces, arXiv 2205.05198).
    QTest::newRow("sp") << true << tw::model::Recompute::None << 100 << 30198988800.0 << 2.0;
    // SP + full: 12·12 + 4 = 148 calls ·8·37,748,736 = 44,694,503,424 B.
    QTest::newRow("sp+full") << true << tw::model::Recompute::Full << 148 << 44694503424.0 << 4.0;
}

void TestParallel::tensorVariants()
{
    QFETCH(bool, sequenceParallel);
    QFETCH(tw::model::Recompute, recompute);
    QFETCH(int, tpCalls);
    QFETCH(double, bytesPerGpu);
    QFETCH(double, perLayerBwd);
    ModelConfig m = known("gpt2-small");
    m.recompute = recompute;
    ParallelPlan plan = planOf(2, 1, 4);
    plan.sequenceParallel = sequenceParallel;
    const PlanDerivation d = derivePlan(plan, Cluster{1, 8}, m, kPaperBatch, a100());
    checkConsistent(d);
    const auto tp = callsOf(d, Strategy::TP);
    QCOMPARE(int(tp.size()), tpCalls);
    for (const CollectiveCall* c : tp) {
        QCOMPARE(c->payloadBytes, kHidden);
        if (sequenceParallel)
            QVERIFY(c->kind == CollectiveKind::ReduceScatter || c->kind == CollectiveKind::AllGather);
        else
            QVERIFY(c->kind == CollectiveKind::AllReduce);
    }
    QCOMPARE(row(d, Strategy::TP).bytesPerGpuPerStep, bytesPerGpu);
    QCOMPARE(fig(d, "tp.bytes_per_gpu_per_step"), bytesPerGpu);
    QCOMPARE(fig(d, "tp.allreduces_per_layer_bwd"), perLayerBwd);
    QCOMPARE(fig(d, "tp.allreduce_bytes"), kHidden);
}

void TestParallel::hybridShardGroups()
{
    // fsdp-hybrid, dp = 8 on 2 nodes × 4 GPUs: h = GPUs per node / t = 4 (largest divisor of 8 ≤ 4).
    // Shard groups {0–3}, {4–7}: ZeRO-3 over 4 ranks, 2 micro-steps: 6·(3/4)·M = 1,119,958,272 B;
    // replica AllReduce of the shard M/4 = 62,219,904 B over 2 ranks: 2·(1/2)·M/4 = 62,219,904 B.
    // Busiest GPU: 1,182,178,176 B.
    const ModelConfig m = known("gpt2-small");
    ParallelPlan plan = planOf(8, 1, 1);
    plan.sharding = Sharding::FsdpHybrid;
    const Cluster cluster{2, 4};
    QVERIFY(validate(plan, cluster, m, kPaperBatch).empty());
    const PlanDerivation d = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(d);
    QCOMPARE(fig(d, "plan.shard_group_size"), 4.0);
    QCOMPARE(row(d, Strategy::DP).bytesPerGpuPerStep, 1182178176.0);
    QCOMPARE(fig(d, "zero.replica_allreduce_bytes"), kM / 4);
    int shard = 0, replica = 0, replicaCross = 0, shardCross = 0;
    for (const Group& g : d.comm.groups) {
        if (g.kind == "dp-shard") {
            ++shard;
            shardCross += g.crossesNodes;
            QCOMPARE(g.members.size(), std::size_t(4));
        } else if (g.kind == "dp-replica") {
            ++replica;
            replicaCross += g.crossesNodes;
            QCOMPARE(g.members.size(), std::size_t(2));
        }
    }
    QCOMPARE(shard, 2);
    QCOMPARE(shardCross, 0);
    QCOMPARE(replica, 4);
    QCOMPARE(replicaCross, 4);
    QCOMPARE(row(d, Strategy::DP).groupsCrossingNodes, std::uint64_t(4));
    QCOMPARE(row(d, Strategy::DP).peers, std::uint64_t(3));

    // An explicit h = 2: ZeRO-3 over 2 ranks 6·(1/2)·M = 3·M, replica AllReduce of M/2 over 4 ranks
    // 2·(3/4)·M/2 = 0.75·M: 3.75·M = 933,298,560 B.
    plan.shardGroupSize = 2;
    const PlanDerivation d2 = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(d2);
    QCOMPARE(row(d2, Strategy::DP).bytesPerGpuPerStep, 3.75 * kM);
    // h = 8 = dp: full sharding, no replica groups.
    plan.shardGroupSize = 8;
    const PlanDerivation d8 = derivePlan(plan, cluster, m, kPaperBatch, a100());
    QCOMPARE(row(d8, Strategy::DP).bytesPerGpuPerStep, 1306617984.0);
}

void TestParallel::interleavedBoundaries()
{
    // pp = 2, v = 2, dp = 4 on 8 GPUs: N_acc = 524,288/(32·1,024·4) = 4 (a multiple of pp); 4 chunks of
    // 3 layers; boundaries chunk 0 (stage 0) → 1 (stage 1) → 2 (stage 0) → 3 (stage 1): 3 boundaries,
    // the middle one runs from the last stage back to the first.
    const ModelConfig m = known("gpt2-small");
    ParallelPlan plan = planOf(4, 2, 1);
    plan.schedule = PipelineSchedule::Interleaved;
    plan.virtualStages = 2;
    plan.layerForwardSeconds = {0.01};
    const Cluster cluster{1, 8};
    QVERIFY2(validate(plan, cluster, m, kPaperBatch).empty(), joined(validate(plan, cluster, m, kPaperBatch)).c_str());
    const PlanDerivation d = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(d);
    QCOMPARE(d.plan.layerPartition, (std::vector<std::uint64_t>{3, 3, 3, 3}));
    QCOMPARE(fig(d, "pp.boundaries"), 3.0);
    // (p−1)/(v·m) = 1/(2·4) = 0.125.
    QCOMPARE(fig(d, "pp.bubble_fraction_formula"), 0.125);
    std::vector<const CollectiveCall*> fwd;
    for (const CollectiveCall* c : callsOf(d, Strategy::PP))
        if (c->kind == CollectiveKind::SendRecv && c->phase == tw::model::Phase::Forward)
            fwd.push_back(c);
    QCOMPARE(fwd.size(), std::size_t(3));
    // Default layout g = dp + 4·pp: the middle boundary of replica 0 sends from GPU 4 (stage 1) to GPU 0.
    QCOMPARE(d.comm.groups[fwd[1]->firstGroup].members, (std::vector<std::uint32_t>{4, 0}));
    QCOMPARE(d.comm.groups[fwd[0]->firstGroup].members, (std::vector<std::uint32_t>{0, 4}));
    QCOMPARE(fwd[0]->groupCount, std::uint32_t(4));
    // Stage times: 6 layers each, 3·6·10 ms = 180 ms, balanced.
    QCOMPARE(fig(d, "pp.stage_time.s0"), 0.18);
    QCOMPARE(fig(d, "pp.balance"), 1.0);
    // Each GPU sends 3 of the 6 directed boundary transfers, 4 micro-batches each: stage 0 sends forward
    // on boundaries 0 and 2 and the gradient of boundary 1 (chunk 2 → 1); stage 1 forward on boundary 1
    // and the gradients of boundaries 0 and 2 → 3·4·M, plus the tied embedding AllReduce 2·(1/2)·77,194,752 B.
    QCOMPARE(row(d, Strategy::PP).bytesPerGpuPerStep, 3 * 4 * kHidden + 2 * 0.5 * 77194752.0);
}

void TestParallel::pipelineWithTensorParallel()
{
    // pp = 2, tp = 4, dp = 1 on 8 GPUs: Megatron's scatter/gather sends B·T·d·s/t = 12,582,912 B per
    // boundary per TP rank; N_acc = 16. The tied embedding copy on stage 1 is V·d/t = 9,649,344 params.
    const ModelConfig m = known("gpt2-small");
    ParallelPlan plan = planOf(1, 2, 4);
    const Cluster cluster{1, 8};
    QVERIFY(validate(plan, cluster, m, kPaperBatch).empty());
    const PlanDerivation d = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(d);
    QCOMPARE(fig(d, "pp.boundary_bytes_fwd"), kHidden / 4);
    // SP also gives 1/t, not 1/t².
    plan.sequenceParallel = true;
    const PlanDerivation sp = derivePlan(plan, cluster, m, kPaperBatch, a100());
    QCOMPARE(fig(sp, "pp.boundary_bytes_fwd"), kHidden / 4);
    // 4 PP pairs per direction (one per TP rank): GPU t of stage 0 with GPU 4 + t.
    const auto pp = callsOf(d, Strategy::PP);
    QCOMPARE(pp.front()->groupCount, std::uint32_t(4));
    QCOMPARE(d.comm.groups[pp.front()->firstGroup + 2].members, (std::vector<std::uint32_t>{2, 6}));
    QCOMPARE(fig(d, "pp.embedding_allreduce_bytes"), 38597376.0 / 4 * 2);
    // Stage 1 (6 layers): 6·1,775,424 + final norm 1,536 + embedding copy 9,649,344 = 20,303,424;
    // stage 0: 6·1,775,424 + 9,649,344 + 786,432 = 21,088,320 (the busiest).
    QCOMPARE(fig(d, "dp.params_per_rank"), 21088320.0);
}

void TestParallel::computeModel()
{
    // No override: per layer forward (2·P_layer·B·T + 4·B·T²·d)/t / (peak·efficiency) =
    // (2·7,087,872·32·1,024 + 4·32·1,024²·768) / (312·10^12·0.45) = 567,589,994,496 / 1.404·10^14
    // = 4.0427 ms on an A100 (bf16).
    // (The fixed-rate model is parallel.compute_efficiency set to a number; "auto", 0, is the kernel
    // model, tested in tst_kernels.)
    const ModelConfig m = known("gpt2-small");
    ParallelPlan plan = planOf(8, 1, 1);
    plan.computeEfficiency = 0.45;
    const PlanDerivation d = derivePlan(plan, Cluster{1, 8}, m, kPaperBatch, a100());
    QCOMPARE(d.layerForwardSeconds.size(), std::size_t(12));
    QVERIFY(std::fabs(d.layerForwardSeconds[0] - 567589994496.0 / 140.4e12) < 1e-12);
    QVERIFY(std::fabs(fig(d, "plan.layer_forward_seconds") - 0.0040426637784615384) < 1e-12);
    // The head adds 2·B·T·d·V/t = 2·32·1,024·768·50,257 FLOP forward to the last chunk.
    const double head = 2.0 * 32 * 1024 * 768 * 50257 / 140.4e12;
    QVERIFY(std::fabs(fig(d, "pp.stage_time.s0") - (3 * 12 * d.layerForwardSeconds[0] + 3 * head)) < 1e-9);
    // tp = 4 divides the time by 4; full recomputation makes backward 3× forward.
    ModelConfig full = m;
    full.recompute = tw::model::Recompute::Full;
    ParallelPlan plan4 = planOf(2, 1, 4);
    plan4.computeEfficiency = 0.45;
    const PlanDerivation t4 = derivePlan(plan4, Cluster{1, 8}, full, kPaperBatch, a100());
    QVERIFY(std::fabs(t4.layerForwardSeconds[0] - d.layerForwardSeconds[0] / 4) < 1e-12);
    QVERIFY(std::fabs(fig(t4, "pp.stage_time.s0") - (4 * 12 * t4.layerForwardSeconds[0] + 3 * head / 4)) < 1e-9);
    // Per-layer override with L values.
    plan.layerForwardSeconds = std::vector<double>(12, 0.001);
    plan.layerForwardSeconds[4] = 0.002;
    const PlanDerivation o = derivePlan(plan, Cluster{1, 8}, m, kPaperBatch, a100());
    QCOMPARE(o.layerForwardSeconds[4], 0.002);
    QCOMPARE(fig(o, "plan.layer_forward_seconds"), 0.002);
    QCOMPARE(fig(o, "tp.allreduce_interval"), 0.001);
}

void TestParallel::validationMessages()
{
    const ModelConfig m = known("gpt2-small");
    const Cluster cluster{1, 8};
    // docs/model.md: GPT-2 small has 12 heads; an 8-way TP is impossible.
    {
        const auto errors = validate(planOf(1, 1, 8), cluster, m, kPaperBatch);
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors[0].where.jsonPath, std::string("parallel.tp"));
        QCOMPARE(errors[0].toString(), std::string("parallel.tp: 8 does not divide the 12 attention heads of GPT-2 small; "
                                                   "valid tensor-parallel degrees: 1, 2, 3, 4, 6, 12"));
    }
    // dp·pp·tp must equal the GPUs.
    {
        const auto errors = validate(planOf(4, 1, 1), cluster, m, kPaperBatch);
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors[0].where.jsonPath, std::string("parallel.dp"));
        QCOMPARE(errors[0].message, std::string("dp·pp·tp = 4·1·1 = 4 GPUs, but the cluster has 8 (1 node × 8 GPUs): "
                                                "the degrees must multiply to the number of GPUs"));
    }
    // G = 524,288 over B·T·dp = 32·1,024·3 = 98,304: 5.33 micro-batches.
    {
        const auto errors = validate(planOf(3, 1, 1), Cluster{1, 3}, m, kPaperBatch);
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors[0].where.jsonPath, std::string("parallel.dp"));
        QCOMPARE(errors[0].message,
                 std::string("the global batch G = 524,288 tokens is not a multiple of B·T·dp = 32·1,024·3 = 98,304 "
                             "tokens: N_acc = 524,288/98,304 = 5.33 micro-batches per replica must be a whole number ≥ 1"));
    }
    // Duplicate place: dp 4 × tp 2, GPU 5 moved onto GPU 3's place (dp 1, pp 0, tp 1).
    {
        ParallelPlan plan = planOf(4, 1, 2);
        plan.assignment = defaultAssignment(plan);
        QCOMPARE(plan.assignment[3], (MeshCoord{1, 0, 1}));
        plan.assignment[5] = plan.assignment[3];
        const auto errors = validate(plan, cluster, m, kPaperBatch);
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors[0].toString(),
                 std::string("parallel.assignment[5]: GPU 5 has the same place (dp 1, pp 0, tp 1) as GPU 3"));
    }
    // Several problems at once are all reported.
    {
        ParallelPlan plan = planOf(2, 1, 8);
        plan.computeEfficiency = 1.5; // 0 is "auto" (the kernel model); above 1 is refused
        const auto errors = validate(plan, cluster, m, kPaperBatch);
        std::set<std::string> paths;
        for (const auto& e : errors)
            paths.insert(e.where.jsonPath);
        QVERIFY2(paths.count("parallel.tp") && paths.count("parallel.dp") && paths.count("parallel.compute_efficiency"),
                 joined(errors).c_str());
    }
}

void TestParallel::validationMore_data()
{
    QTest::addColumn<std::string>("modelId");
    QTest::addColumn<int>("dp");
    QTest::addColumn<int>("pp");
    QTest::addColumn<int>("tp");
    QTest::addColumn<int>("ep");
    QTest::addColumn<std::string>("tweak");
    QTest::addColumn<std::string>("path");
    QTest::addColumn<std::string>("fragment");
    QTest::newRow("ep-dense") << std::string("gpt2-small") << 8 << 1 << 1 << 2 << std::string("") << std::string("parallel.ep")
                              << std::string("needs a Mixture-of-Experts model");
    QTest::newRow("ep-divides-E") << std::string("mixtral-8x7b") << 8 << 1 << 1 << 8 << std::string("") << std::string("") << std::string("");
    QTest::newRow("ep-not-dp") << std::string("mixtral-8x7b") << 2 << 1 << 4 << 4 << std::string("") << std::string("parallel.ep") << std::string("does not divide dp = 2");
    QTest::newRow("pp-too-deep") << std::string("gpt2-small") << 1 << 16 << 1 << 1 << std::string("cluster16") << std::string("parallel.pp")
                                 << std::string("16 stages for 12 layers");
    QTest::newRow("gqa-kv") << std::string("llama3-8b") << 1 << 1 << 16 << 1 << std::string("cluster16") << std::string("parallel.tp")
                            << std::string("does not divide the 8 key/value heads");
    QTest::newRow("partition-sum") << std::string("gpt2-small") << 1 << 8 << 1 << 1 << std::string("partition-sum") << std::string("parallel.layer_partition")
                                   << std::string("the entries sum to 11 layers, the model has 12");
    QTest::newRow("partition-zero") << std::string("gpt2-small") << 1 << 8 << 1 << 1 << std::string("partition-zero")
                                    << std::string("parallel.layer_partition[0]") << std::string("0 layers");
    QTest::newRow("partition-size") << std::string("gpt2-small") << 1 << 8 << 1 << 1 << std::string("partition-size") << std::string("parallel.layer_partition")
                                    << std::string("7 entries, need pp·v = 8");
    QTest::newRow("v-without-interleave") << std::string("gpt2-small") << 1 << 8 << 1 << 1 << std::string("v2") << std::string("parallel.virtual_stages")
                                          << std::string("need parallel.schedule = \"interleaved\"");
    // G = 6·32·1,024·2 = 393,216 on dp = 2: N_acc = 6, not a multiple of pp = 4.
    QTest::newRow("interleave-m") << std::string("gpt2-small") << 2 << 4 << 1 << 1 << std::string("interleaved-m6") << std::string("parallel.schedule")
                                  << std::string("(N_acc = 6) to be a multiple of pp = 4");
    QTest::newRow("interleave-chunks") << std::string("gpt2-small") << 1 << 8 << 1 << 1 << std::string("interleaved") << std::string("parallel.virtual_stages")
                                       << std::string("pp·v = 8·2 = 16 model chunks for 12 layers");
    QTest::newRow("layer-seconds") << std::string("gpt2-small") << 8 << 1 << 1 << 1 << std::string("seconds") << std::string("parallel.layer_forward_time_s[1]")
                                   << std::string("must be a positive number of seconds");
    QTest::newRow("layer-seconds-count") << std::string("gpt2-small") << 8 << 1 << 1 << 1 << std::string("seconds3")
                                         << std::string("parallel.layer_forward_time_s") << std::string("3 values");
    QTest::newRow("bucket") << std::string("gpt2-small") << 8 << 1 << 1 << 1 << std::string("bucket") << std::string("parallel.bucket_bytes") << std::string("positive");
    QTest::newRow("shard-group") << std::string("gpt2-small") << 8 << 1 << 1 << 1 << std::string("hybrid3") << std::string("parallel.shard_group_size")
                                 << std::string("3 does not divide dp = 8; valid shard group sizes: 1, 2, 4, 8");
    QTest::newRow("degree-zero") << std::string("gpt2-small") << 0 << 1 << 1 << 1 << std::string("") << std::string("parallel.dp") << std::string("between 1 and 1,048,576");
    QTest::newRow("assignment-range") << std::string("gpt2-small") << 8 << 1 << 1 << 1 << std::string("assign-range") << std::string("parallel.assignment[2]")
                                      << std::string("dp 9 is out of range 0–7");
    QTest::newRow("assignment-size") << std::string("gpt2-small") << 8 << 1 << 1 << 1 << std::string("assign-size") << std::string("parallel.assignment")
                                     << std::string("7 entries for dp·pp·tp = 8 GPUs");
}

void TestParallel::validationMore()
{
    QFETCH(std::string, modelId);
    QFETCH(int, dp);
    QFETCH(int, pp);
    QFETCH(int, tp);
    QFETCH(int, ep);
    QFETCH(std::string, tweak);
    QFETCH(std::string, path);
    QFETCH(std::string, fragment);
    const ModelConfig m = known(modelId.c_str());
    ParallelPlan plan = planOf(std::uint64_t(dp), std::uint64_t(pp), std::uint64_t(tp), std::uint64_t(ep));
    Cluster cluster{1, 8};
    BatchShape batch = kPaperBatch;
    if (tweak == "cluster16")
        cluster = Cluster{2, 8};
    else if (tweak == "partition-sum")
        plan.layerPartition = {1, 1, 2, 2, 2, 1, 1, 1};
    else if (tweak == "partition-zero")
        plan.layerPartition = {0, 2, 2, 2, 2, 2, 1, 1};
    else if (tweak == "partition-size")
        plan.layerPartition = {2, 2, 2, 2, 2, 1, 1};
    else if (tweak == "v2")
        plan.virtualStages = 2;
    else if (tweak == "interleaved" || tweak == "interleaved-m6") {
        plan.schedule = PipelineSchedule::Interleaved;
        plan.virtualStages = 2;
        if (tweak == "interleaved-m6")
            batch.globalBatchTokens = 6 * 32 * 1024 * 2;
    } else if (tweak == "seconds") {
        plan.layerForwardSeconds = std::vector<double>(12, 0.1);
        plan.layerForwardSeconds[1] = -1;
    } else if (tweak == "seconds3")
        plan.layerForwardSeconds = {0.1, 0.1, 0.1};
    else if (tweak == "bucket")
        plan.bucketBytes = 0.0;
    else if (tweak == "hybrid3") {
        plan.sharding = Sharding::FsdpHybrid;
        plan.shardGroupSize = 3;
    } else if (tweak == "assign-range") {
        plan.assignment = defaultAssignment(plan);
        plan.assignment[2].dp = 9;
    } else if (tweak == "assign-size") {
        plan.assignment = defaultAssignment(plan);
        plan.assignment.pop_back();
    }
    const auto errors = validate(plan, cluster, m, batch);
    if (path.empty()) {
        QVERIFY2(errors.empty(), joined(errors).c_str());
        return;
    }
    bool found = false;
    for (const auto& e : errors)
        if (e.where.jsonPath == path && contains(e.message, fragment))
            found = true;
    QVERIFY2(found, joined(errors).c_str());
}

void TestParallel::badPlacement()
{
    // 2 nodes × 4 GPUs, tp 4 × dp 2: the default layout keeps each TP group inside a node
    // ({0,1,2,3}, {4,5,6,7}) and every DP pair {t, 4+t} crosses.
    const ModelConfig m = known("gpt2-small");
    ParallelPlan plan = planOf(2, 1, 4);
    const Cluster cluster{2, 4};
    const PlanDerivation good = derivePlan(plan, cluster, m, kPaperBatch, a100());
    QCOMPARE(row(good, Strategy::TP).groupsCrossingNodes, std::uint64_t(0));
    QCOMPARE(row(good, Strategy::DP).groupsCrossingNodes, std::uint64_t(4));
    // Swap GPUs 3 and 4: TP groups {0,1,2,4} and {3,5,6,7} both span the two nodes; the DP pairs of tp 0
    // ({0,3}) and tp 3 ({4,7}) now stay inside a node.
    plan.assignment = defaultAssignment(plan);
    std::swap(plan.assignment[3], plan.assignment[4]);
    QVERIFY(validate(plan, cluster, m, kPaperBatch).empty());
    const PlanDerivation bad = derivePlan(plan, cluster, m, kPaperBatch, a100());
    checkConsistent(bad);
    QCOMPARE(row(bad, Strategy::TP).groupsCrossingNodes, std::uint64_t(2));
    QCOMPARE(row(bad, Strategy::DP).groupsCrossingNodes, std::uint64_t(2));
    const auto tp = callsOf(bad, Strategy::TP);
    QCOMPARE(bad.comm.groups[tp[0]->firstGroup].members, (std::vector<std::uint32_t>{0, 1, 2, 4}));
    QCOMPARE(bad.comm.groups[tp[0]->firstGroup + 1].members, (std::vector<std::uint32_t>{3, 5, 6, 7}));
    QVERIFY(bad.comm.groups[tp[0]->firstGroup].crossesNodes);
    QCOMPARE(bad.mesh, plan.assignment);
    // Bytes do not depend on the placement.
    QCOMPARE(row(bad, Strategy::TP).bytesPerGpuPerStep, row(good, Strategy::TP).bytesPerGpuPerStep);
}

void TestParallel::parameterBreakdownSums_data()
{
    QTest::addColumn<std::string>("id");
    QTest::addColumn<double>("expected");
    // docs/model.md §2: GPT-2 small 124,439,808; Llama-2-7B 6,738,415,616; Mixtral 46,702,792,704.
    QTest::newRow("gpt2-small") << std::string("gpt2-small") << 124439808.0;
    QTest::newRow("llama2-7b") << std::string("llama2-7b") << 6738415616.0;
    QTest::newRow("mixtral-8x7b") << std::string("mixtral-8x7b") << 46702792704.0;
}

void TestParallel::parameterBreakdownSums()
{
    QFETCH(std::string, id);
    QFETCH(double, expected);
    const ModelConfig m = known(id.c_str());
    const auto pb = tw::model::parameterBreakdown(m);
    std::uint64_t sum = pb.embedding + pb.positions + pb.finalNorm + pb.head;
    for (std::uint64_t l = 0; l < m.layers; ++l)
        sum += pb.layer(m, l);
    QCOMPARE(sum, tw::model::parameterCount(m));
    QCOMPARE(double(sum), expected);
    // Pure DP reduces exactly P·s_g (tp = pp = ep = 1).
    const std::uint64_t dp = 8;
    BatchShape batch{1024, 1, 1024 * 8};
    const PlanDerivation d = derivePlan(planOf(dp, 1, 1), Cluster{1, 8}, m, batch, a100());
    QCOMPARE(fig(d, "dp.grad_allreduce_bytes"), expected * 2);
}

void TestParallel::figureGraphClosed()
{
    const ModelConfig m = known("gpt2-small");
    const auto model = tw::model::deriveModel(m, kPaperBatch, a100());
    ModelConfig moe = m;
    moe.moe.experts = 8;
    const auto moeModel = tw::model::deriveModel(moe, kPaperBatch, a100());
    struct Case {
        ParallelPlan plan;
        const ModelConfig* model;
        const tw::FigureSet* inputs;
    };
    ParallelPlan hybrid = planOf(8, 1, 1);
    hybrid.sharding = Sharding::FsdpHybrid;
    ParallelPlan inter = planOf(4, 2, 1);
    inter.schedule = PipelineSchedule::Interleaved;
    inter.virtualStages = 2;
    ParallelPlan spPlan = planOf(1, 2, 4);
    spPlan.sequenceParallel = true;
    spPlan.sharding = Sharding::Zero2;
    const std::vector<Case> cases = {{planOf(8, 1, 1), &m, &model.figures},
                                     {planOf(1, 8, 1), &m, &model.figures},
                                     {planOf(2, 1, 4), &m, &model.figures},
                                     {hybrid, &m, &model.figures},
                                     {inter, &m, &model.figures},
                                     {spPlan, &m, &model.figures},
                                     {planOf(8, 1, 1, 8), &moe, &moeModel.figures}};
    for (const Case& c : cases) {
        QVERIFY(validate(c.plan, Cluster{1, 8}, *c.model, kPaperBatch).empty());
        const PlanDerivation d = derivePlan(c.plan, Cluster{1, 8}, *c.model, kPaperBatch, a100(), *c.inputs);
        tw::FigureSet all = *c.inputs;
        for (const tw::Figure& f : d.figures.all()) {
            QVERIFY2(!f.formula.empty(), f.id.c_str());
            QVERIFY2(!f.label.empty(), f.id.c_str());
            QVERIFY2(std::isfinite(f.value), f.id.c_str());
            QVERIFY2(!c.inputs->find(f.id), f.id.c_str()); // no id clashes with stage 2
            all.add(f);
        }
        const auto missing = all.missingInputs();
        QVERIFY2(missing.empty(), missing.empty() ? "" : missing.front().c_str());
        // Without inputs the plan's own figures are closed too (no citation of absent ids).
        const PlanDerivation alone = derivePlan(c.plan, Cluster{1, 8}, *c.model, kPaperBatch, a100());
        QVERIFY(alone.figures.missingInputs().empty());
        for (const char* id : {"plan.gpus", "plan.dp", "plan.pp", "plan.tp", "plan.ep", "dp.n_acc",
                               "dp.grad_allreduce_bytes", "dp.bytes_per_gpu_per_step", "dp.buckets",
                               "pp.boundary_bytes_fwd", "pp.boundary_bytes_fwd_bwd", "pp.stage_time.s0",
                               "pp.bottleneck_stage_time", "pp.balance", "pp.bubble_fraction",
                               "pp.bubble_fraction_formula", "tp.allreduce_bytes", "tp.allreduces_per_layer_fwd",
                               "tp.allreduces_per_layer_bwd", "tp.allreduce_interval"})
            QVERIFY2(d.figures.find(id), id);
    }
    // The pure-DP payload traces back to the model's parameter count.
    const PlanDerivation d = derivePlan(planOf(8, 1, 1), Cluster{1, 8}, m, kPaperBatch, a100(), model.figures);
    QCOMPARE(d.figures.find("dp.grad_allreduce_bytes")->inputs,
             (std::vector<std::string>{"model.parameters", "model.bytes.gradients"}));
    QCOMPARE(d.figures.find("dp.n_acc")->inputs, (std::vector<std::string>{"batch.G", "batch.B", "batch.T", "plan.dp"}));
    QVERIFY(moeModel.figures.find("model.moe.top_k"));
    const PlanDerivation e = derivePlan(planOf(8, 1, 1, 8), Cluster{1, 8}, moe, kPaperBatch, a100(), moeModel.figures);
    QVERIFY(d.figures.find("ep.alltoall_bytes") == nullptr);
    QVERIFY(e.figures.find("ep.alltoall_bytes_per_layer"));
    const auto& epIn = e.figures.find("ep.alltoall_bytes")->inputs;
    QVERIFY(std::find(epIn.begin(), epIn.end(), "model.moe.top_k") != epIn.end());
}

void TestParallel::largeMesh()
{
    // GPT-3 175B on 65,536 GPUs: tp 8 × pp 8 × dp 1,024, B = 1, T = 2,048, G = 2,048·1,024·8 → N_acc = 8.
    const ModelConfig m = known("gpt3-175b");
    const BatchShape batch{2048, 1, 2048ULL * 1024 * 8};
    ParallelPlan plan = planOf(1024, 8, 8);
    const Cluster cluster{8192, 8};
    QVERIFY2(validate(plan, cluster, m, batch).empty(), joined(validate(plan, cluster, m, batch)).c_str());
    const PlanDerivation d = derivePlan(plan, cluster, m, batch, a100()); // speed: tests/bench/bench_plan
    QCOMPARE(d.mesh.size(), std::size_t(65536));
    QCOMPARE(fig(d, "dp.n_acc"), 8.0);
    // Groups: TP 8·1,024 = 8,192; DP 8·8 = 64; PP 7 boundaries·1,024·8·2 directions = 114,688 + 8,192 tied-embedding pairs.
    QCOMPARE(row(d, Strategy::TP).groups, std::uint64_t(8192));
    QCOMPARE(row(d, Strategy::DP).groups, std::uint64_t(64));
    QCOMPARE(row(d, Strategy::PP).groups, std::uint64_t(114688 + 8192));
    QCOMPARE(row(d, Strategy::TP).groupsCrossingNodes, std::uint64_t(0));
    QCOMPARE(row(d, Strategy::DP).groupsCrossingNodes, std::uint64_t(64));
    QCOMPARE(row(d, Strategy::DP).peers, std::uint64_t(1023));
    // Per GPU TP: 12 layers per stage·4 AllReduces·8 micro-batches of 2·7/8·B·T·d·2 = 2·7/8·50,331,648 B
    // (d = 12,288, T = 2,048, B = 1: 50,331,648 B), the busiest (first / last) stage adding one more per micro-batch.
    const double M = 2048.0 * 12288 * 2;
    QCOMPARE(fig(d, "tp.allreduce_bytes"), M);
    QCOMPARE(row(d, Strategy::TP).bytesPerGpuPerStep, (12 * 4 + 1) * 8 * 2 * 7.0 / 8 * M);
    checkConsistent(d);
}

void TestParallel::invalidPlansDoNotCrash()
{
    // derivePlan expects a validated plan, but an unvalidated one must still not crash.
    const ModelConfig m = known("gpt2-small");
    ModelConfig moe = m;
    moe.moe.experts = 8;
    std::vector<std::pair<ParallelPlan, const ModelConfig*>> plans;
    plans.push_back({planOf(1, 1, 8), &m});         // 8 does not divide 12 heads
    plans.push_back({planOf(1, 16, 1), &m});        // more stages than layers
    plans.push_back({planOf(3, 1, 1), &m});         // G not divisible
    plans.push_back({planOf(8, 1, 1, 3), &moe});    // ep does not divide dp
    plans.push_back({planOf(8, 1, 1, 16), &moe});   // ep > dp
    plans.push_back({planOf(0, 0, 0, 0), &m});      // degrees 0
    plans.push_back({planOf(1u << 30, 1, 1), &m});  // far too many GPUs
    ParallelPlan dup = planOf(4, 1, 2);
    dup.assignment = defaultAssignment(dup);
    dup.assignment[5] = dup.assignment[3];
    dup.assignment[6].dp = 99;
    plans.push_back({dup, &m});
    ParallelPlan part = planOf(1, 8, 1);
    part.layerPartition = {5, 5, 5, 5, 5, 5, 5, 5};
    part.layerForwardSeconds = {-1, 2};
    part.sharding = Sharding::FsdpHybrid;
    part.shardGroupSize = 3;
    plans.push_back({part, &m});
    ParallelPlan inter = planOf(8, 1, 1);
    inter.schedule = PipelineSchedule::Interleaved;
    inter.virtualStages = 40;
    plans.push_back({inter, &m});
    for (const auto& [plan, model] : plans) {
        QVERIFY(!validate(plan, Cluster{1, 8}, *model, kPaperBatch).empty());
        const PlanDerivation d = derivePlan(plan, Cluster{1, 8}, *model, kPaperBatch, a100());
        for (const CollectiveCall& c : d.comm.calls)
            QVERIFY(std::size_t(c.firstGroup) + c.groupCount <= d.comm.groups.size());
        for (const Group& g : d.comm.groups)
            for (std::uint32_t x : g.members)
                QVERIFY(x < d.mesh.size());
    }
}

// The gradient bucket (parallel.bucket_bytes): given, it is used as it is; "auto" (absent) takes the
// framework that shards that way. DDP: PyTorch's bucket_cap_mb = 25 → 26,214,400 B. ZeRO / FSDP:
// Megatron-core's max(40·10⁶, 10⁶·dp) parameters of gradients: fp16 gradients (2 B) at dp 8 → 40·10⁶·2 =
// 80,000,000 B; at dp 128 → 128·10⁶·2 = 256,000,000 B; fp32 gradients at dp 64 → 64·10⁶·4 = 256,000,000 B.
void TestParallel::bucketFollowsTheFramework()
{
    ModelConfig m = known("gpt2-small");
    m.gradients = tw::model::Precision::Fp16;
    ParallelPlan p;
    p.sharding = Sharding::Ddp;
    p.dp = 128;
    QCOMPARE(bucketBytesFor(p, m), 26214400.0);
    p.sharding = Sharding::Zero1;
    p.dp = 8;
    QCOMPARE(bucketBytesFor(p, m), 80e6);
    p.dp = 128;
    QCOMPARE(bucketBytesFor(p, m), 256e6);
    p.sharding = Sharding::FsdpFull;
    m.gradients = tw::model::Precision::Fp32;
    p.dp = 64;
    QCOMPARE(bucketBytesFor(p, m), 256e6);
    p.bucketBytes = 1234567.0;
    QCOMPARE(bucketBytesFor(p, m), 1234567.0);
}

QTEST_GUILESS_MAIN(TestParallel)
#include "tst_parallel.moc"
