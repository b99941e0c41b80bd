// Stage 5's compute block → its kernels (scenario/computeblock.h): a block's kernels are the chunk's
// layers' kernels summed, with the embedding on the first chunk and the head on the last; achieved rates
// are FLOPs (or bytes) over time. Expected FLOPs by hand from the GEMM shapes.

#include "model/kernels.h"
#include "scenario/computeblock.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <QTest>

#include <string>

using tw::network::ComputePass;
using tw::network::GpuInterval;
using tw::scenario::BlockKernel;
using tw::scenario::ComputeBlockBreakdown;

namespace {

std::shared_ptr<const tw::scenario::Derivation> derived(const tw::scenario::Scenario& s)
{
    auto d = tw::scenario::derive(s);
    if (!d.ok() || !d.value()->stage3)
        qFatal("derive failed");
    return d.value();
}

const BlockKernel* find(const ComputeBlockBreakdown& b, const std::string& name)
{
    for (const BlockKernel& k : b.top)
        if (k.name == name)
            return &k;
    return nullptr;
}

} // namespace

class TestComputeBlock : public QObject {
    Q_OBJECT

private slots:
    void forwardOfAllLayers();
    void pipelineStagesSplitLayersEmbeddingAndHead();
    void fixedRateHasNoBreakdown();
};

void TestComputeBlock::forwardOfAllLayers()
{
    // dgx-a100: GPT-2 XL (48 layers, d = 1,600, d_ff = 6,400), micro-batch 4 × 1,024 tokens, t = 1, p = 1.
    // The MLP's GEMMs are the longest forward kernels: up and down are each 2·4,096·6,400·1,600 =
    // 83,886,080,000 FLOP per layer, 48 layers: 4,026,531,840,000 FLOP; QKV 2·4,096·4,800·1,600 =
    // 62,914,560,000 per layer.
    const auto d = derived(tw::scenario::preset("dgx-a100").value());
    const auto& plan = *d->stage3;
    QVERIFY(plan.kernels.timed);
    GpuInterval block;
    block.pass = ComputePass::Forward;
    block.start = 0;
    block.end = 0.01;
    const ComputeBlockBreakdown b = tw::scenario::computeBlockBreakdown(plan, d->model, 0, block, 40);
    QCOMPARE(b.layers, std::uint64_t{48});
    QCOMPARE(b.others, std::size_t{0});
    const BlockKernel* up = find(b, "MLP up (h→4h)");
    const BlockKernel* qkv = find(b, "QKV projection");
    QVERIFY(up && qkv);
    QCOMPARE(up->flops, 48 * 83886080000.0);
    QCOMPARE(qkv->flops, 48 * 62914560000.0);
    QVERIFY(up->computeBound);
    QVERIFY(qAbs(up->rate() - up->flops / up->seconds) < 1e-6 * up->rate());
    // Sorted, longest first; the total is the chunk's forward: 48 layers + embedding + head.
    for (std::size_t i = 1; i < b.top.size(); ++i)
        QVERIFY(b.top[i - 1].seconds >= b.top[i].seconds);
    const double total = 48 * plan.kernels.dense.forwardSeconds() + plan.kernels.embedding.forwardSeconds()
                         + plan.kernels.head.forwardSeconds();
    QVERIFY(qAbs(b.kernelSeconds - total) <= 1e-12 * total);
    QVERIFY(find(b, "embedding lookup") && find(b, "output projection (logits)"));
    // The hover text: a line per kernel with its rate and bound, then the block's total.
    ComputeBlockBreakdown five = tw::scenario::computeBlockBreakdown(plan, d->model, 0, block, 5);
    QCOMPARE(five.top.size(), std::size_t{5});
    QVERIFY(five.others > 0);
    QVERIFY(qAbs(five.kernelSeconds - b.kernelSeconds) <= 1e-12 * total);
    const std::string text = tw::scenario::toText(five);
    QVERIFY(text.starts_with("Forward of micro-batch 0: 48 layers\n"));
    QVERIFY(text.find("TFLOP/s, compute-bound") != std::string::npos);
    QVERIFY(text.find("more kernels: ") != std::string::npos);
    QVERIFY(text.find("Kernels of the block: ") != std::string::npos);
    QVERIFY(text.find("(this part of it: ") != std::string::npos); // 10 ms of a longer pass
}

void TestComputeBlock::pipelineStagesSplitLayersEmbeddingAndHead()
{
    // p = 2: the 48 layers split over the stages (defaultPartition); the embedding runs on stage 0, the
    // head (logits, loss) on stage 1.
    // Full recomputation: a backward block also re-runs the forward kernels (named "… (recomputed)").
    auto s = tw::scenario::preset("dgx-a100").value();
    s.parallel.dp = 4;
    s.parallel.pp = 2;
    s.model.recompute = tw::model::Recompute::Full;
    const auto d = derived(s);
    GpuInterval block;
    block.pass = ComputePass::Backward;
    block.microBatch = 2;
    const ComputeBlockBreakdown first = tw::scenario::computeBlockBreakdown(*d->stage3, d->model, 0, block, 60);
    const ComputeBlockBreakdown last = tw::scenario::computeBlockBreakdown(*d->stage3, d->model, 1, block, 60);
    QCOMPARE(first.layers + last.layers, std::uint64_t{48});
    QCOMPARE(first.layers, d->stage3->plan.layerPartition[0]);
    QVERIFY(first.title == "Backward of micro-batch 2: " + std::to_string(first.layers) + " layers, recomputation included");
    QVERIFY(find(first, "embedding lookup backward") && !find(first, "cross-entropy loss (fp32) backward"));
    QVERIFY(!find(last, "embedding lookup backward") && find(last, "cross-entropy loss (fp32) backward"));
    const BlockKernel* redo = find(first, "MLP up (h→4h) (recomputed)");
    const BlockKernel* dw = find(first, "MLP up (h→4h) ∂weight");
    QVERIFY(redo && dw);
    const double layers = static_cast<double>(first.layers);
    QCOMPARE(redo->flops, layers * 83886080000.0); // the forward GEMM again
    QCOMPARE(dw->flops, layers * 83886080000.0);   // ∂weight: 1,600 × 6,400 × 4,096, the same FLOPs
}

void TestComputeBlock::fixedRateHasNoBreakdown()
{
    // paper-dp writes compute_efficiency 0.45: its times are FLOPs / rate, not kernels.
    const auto d = derived(tw::scenario::preset("paper-dp").value());
    const ComputeBlockBreakdown b = tw::scenario::computeBlockBreakdown(*d->stage3, d->model, 0, GpuInterval{}, 5);
    QVERIFY(!b.timed);
    QVERIFY(tw::scenario::toText(b).find("no kernel breakdown") != std::string::npos);
}

QTEST_APPLESS_MAIN(TestComputeBlock)
#include "tst_computeblock.moc"
