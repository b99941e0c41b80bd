// scenario::traceToken: one token followed from the text to the wire. Every expected number below
// is derived by hand from the preset's inputs (B, T, G, dp, d, s_act, the GPU order of Megatron
// g = tp + t·(dp + d·pp)) and written in the comments; the links are listed by hand from the fabric's
// wiring (a PCIe server: two GPUs per PCIe switch, the switches on the root complex).

#include "../support/testsupport.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/tokentrace.h"

#include <QTest>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace tw;
using namespace tw::scenario;

namespace {

using tw::test::presetOrDie;

std::shared_ptr<const Derivation> deriveOrNull(const Scenario& s)
{
    auto d = derive(s);
    if (!d) {
        qWarning("%s", d.error().toString().c_str());
        return nullptr;
    }
    return d.value();
}

// The link directions named "from → to" (node names), as ids of the topology; -1 for a missing one.
std::set<long> linksNamed(const network::Topology& t, const std::vector<std::pair<const char*, const char*>>& names)
{
    std::set<long> out;
    for (const auto& [a, b] : names) {
        const auto from = t.findNode(a), to = t.findNode(b);
        const auto l = from && to ? t.findLink(*from, *to) : std::nullopt;
        out.insert(l ? long(*l) : -1);
    }
    return out;
}

std::set<long> asSet(const std::vector<std::uint32_t>& v)
{
    return std::set<long>(v.begin(), v.end());
}

int countCalls(const TokenTrace& tr, parallel::Strategy s, const Derivation& d, TokenTraceCall::Carries carries)
{
    int n = 0;
    for (const TokenTraceCall& c : tr.calls)
        if (d.stage3->comm.calls[c.call].strategy == s && c.carries == carries)
            ++n;
    return n;
}

} // namespace

class TestTokenTrace : public QObject {
    Q_OBJECT
private slots:
    void paperReference();
    void replicasAndSteps();
    void tensorParallelBytes();
    void tensorParallelLinks();
    void pipelineStages();
    void expertAllToAll();
    void figuresClosed();
    void badIndexAndNoPlan();
};

void TestTokenTrace::paperReference()
{
    // paper-reference: T = 1,024, B = 32, G = 524,288, dp = 8, d = 768, bf16 activations.
    const Scenario s = presetOrDie("paper-reference");
    const auto d = deriveOrNull(s);
    QVERIFY(d && d->stage3);
    QVERIFY(d->tokens().size() > 200); // the Italian excerpt is 298 GPT-2 tokens
    auto r = traceToken(*d, s, 200);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
    const TokenTrace& tr = r.value();
    QCOMPARE(tr.span, d->tokens()[200]);
    QCOMPARE(tr.piece, d->stage1->tokenized->text.substr(tr.span.begin, tr.span.end - tr.span.begin));
    // Token 200: sequence ⌊200/1024⌋ = 0, position t = 200 mod 1024 = 200.
    QCOMPARE(tr.sequence, 0u);
    QCOMPARE(tr.position, 200u);
    // G/T = 512 sequences per step → step ⌊0/512⌋ = 0; N_acc = G/(B·T·dp) = 524,288/(32·1,024·8) = 2,
    // so replica r takes sequences [64r, 64r + 64): sequence 0 → replica 0, micro-batch ⌊0/32⌋ = 0, row 0.
    QVERIFY(tr.placed);
    QCOMPARE(tr.placement.step, 0u);
    QCOMPARE(tr.placement.dpReplica, 0u);
    QCOMPARE(tr.placement.microBatch, 0u);
    QCOMPARE(tr.row, 0u);
    // tp = pp = 1: g = dp, so replica 0 is GPU 0 alone.
    QCOMPARE(tr.placement.gpus, (std::vector<std::uint32_t>{0}));
    QCOMPARE(tr.stageGpus, (std::vector<std::vector<std::uint32_t>>{{0}}));
    // x[b,t,:] = d values of 2 bytes: 768 · 2 = 1,536 B.
    QCOMPARE(tr.d, 768u);
    QCOMPARE(tr.rowBytes, 1536.0);
    QCOMPARE(tr.figures.valueOf("trace.row_bytes"), 1536.0);
    // Pure DP: no call carries its row; the gradient AllReduce is there, without a byte count.
    QCOMPARE(countCalls(tr, parallel::Strategy::DP, *d, TokenTraceCall::Carries::Gradients), 1);
    QCOMPARE(int(tr.calls.size()), 1);
    QCOMPARE(tr.calls.front().rowBytes, 0.0);
    QVERIFY(tr.calls.front().rowFigure.empty());
    QVERIFY(!tr.notes.empty());
    QVERIFY(!tr.routed);
    QVERIFY(tr.links.empty());
}

void TestTokenTrace::replicasAndSteps()
{
    // paper-reference with a small batch so that the 298 tokens span replicas and steps:
    // T = 8, B = 2, dp = 8, G = 256 → N_acc = 256/(2·8·8) = 2, G/T = 32 sequences per step,
    // N_acc·B = 4 sequences per replica.
    Scenario s = presetOrDie("paper-reference");
    s.batch.sequenceLength = 8;
    s.batch.microBatch = 2;
    s.batch.globalBatchTokens = 256;
    const auto d = deriveOrNull(s);
    QVERIFY(d && d->stage3);
    QVERIFY(d->tokens().size() > 290);
    {
        // Token 250: sequence ⌊250/8⌋ = 31, t = 250 − 248 = 2; step ⌊31/32⌋ = 0; q = 31;
        // replica ⌊31/4⌋ = 7; micro-batch ⌊(31 mod 4)/2⌋ = ⌊3/2⌋ = 1; row b = 31 mod 2 = 1; GPU 7.
        auto r = traceToken(*d, s, 250);
        QVERIFY(r.ok());
        const TokenTrace& tr = r.value();
        QCOMPARE(tr.sequence, 31u);
        QCOMPARE(tr.position, 2u);
        QCOMPARE(tr.placement.step, 0u);
        QCOMPARE(tr.placement.dpReplica, 7u);
        QCOMPARE(tr.placement.microBatch, 1u);
        QCOMPARE(tr.row, 1u);
        QCOMPARE(tr.placement.gpus, (std::vector<std::uint32_t>{7}));
        QCOMPARE(tr.figures.valueOf("trace.replica"), 7.0);
        QCOMPARE(tr.figures.valueOf("trace.micro_batch"), 1.0);
        QCOMPARE(tr.figures.valueOf("trace.row"), 1.0);
        QCOMPARE(tr.figures.valueOf("trace.position"), 2.0);
    }
    {
        // Token 290: sequence ⌊290/8⌋ = 36, t = 290 − 288 = 2; step ⌊36/32⌋ = 1; q = 36 mod 32 = 4;
        // replica ⌊4/4⌋ = 1; micro-batch ⌊0/2⌋ = 0; row 0; GPU 1.
        auto r = traceToken(*d, s, 290);
        QVERIFY(r.ok());
        const TokenTrace& tr = r.value();
        QCOMPARE(tr.sequence, 36u);
        QCOMPARE(tr.placement.step, 1u);
        QCOMPARE(tr.figures.valueOf("trace.step"), 1.0);
        QCOMPARE(tr.placement.dpReplica, 1u);
        QCOMPARE(tr.placement.microBatch, 0u);
        QCOMPARE(tr.row, 0u);
        QCOMPARE(tr.placement.gpus, (std::vector<std::uint32_t>{1}));
    }
}

void TestTokenTrace::tensorParallelBytes()
{
    // paper-tp: dp = 2, tp = 4, pp = 1 on 8 GPUs, T = 1,024, B = 32, G = 524,288, d = 768, bf16, L = 12.
    const Scenario s = presetOrDie("paper-tp");
    const auto d = deriveOrNull(s);
    QVERIFY(d && d->stage3);
    auto r = traceToken(*d, s, 200);
    QVERIFY(r.ok());
    const TokenTrace& tr = r.value();
    // Sequence 0, t = 200; N_acc = 524,288/(32·1,024·2) = 8 → replica 0 (sequences 0–255), micro-batch 0, row 0.
    QCOMPARE(tr.placement.dpReplica, 0u);
    QCOMPARE(tr.row, 0u);
    // Replica 0's GPUs: g = tp + 4·(0 + 2·0) = 0, 1, 2, 3 (one stage, by TP rank).
    QCOMPARE(tr.stageGpus, (std::vector<std::vector<std::uint32_t>>{{0, 1, 2, 3}}));
    // Megatron TP calls carrying its row: forward the embedding output AllReduce + 2 per layer (after
    // attention, after the MLP); backward the head input-gradient AllReduce + 2 per layer:
    // 2 + 4·12 = 50 AllReduces on its TP group.
    QCOMPARE(countCalls(tr, parallel::Strategy::TP, *d, TokenTraceCall::Carries::Row), 50);
    // M = B·T·d·s_act = 32·1,024·768·2 = 50,331,648 B; its share M/(B·T) = 50,331,648/32,768 = 1,536 B.
    for (const TokenTraceCall& c : tr.calls) {
        if (c.carries != TokenTraceCall::Carries::Row)
            continue;
        QCOMPARE(d->stage3->comm.calls[c.call].payloadBytes, 50331648.0);
        QCOMPARE(c.rowBytes, 1536.0);
        QCOMPARE(int(c.groups.size()), 1);
        QCOMPARE(d->stage3->comm.groups[c.groups.front()].members, (std::vector<std::uint32_t>{0, 1, 2, 3}));
        // Ring AllReduce of N = 4: chunks of M/4 = 12,582,912 B = 8,192 whole rows, so the row sits in one
        // chunk, which travels 2(N−1) = 6 transfers: 6 · 1,536 = 9,216 B on the wire.
        QCOMPARE(c.wireBytes, 9216.0);
    }
    QCOMPARE(tr.figures.valueOf("trace.tp.allreduce.row_bytes"), 1536.0);
    // 50 calls · 9,216 B = 460,800 B per step (once: only its micro-batch of the 8 holds it).
    QCOMPARE(tr.figures.valueOf("trace.tp.allreduce.wire_bytes"), 460800.0);
    QCOMPARE(tr.figures.valueOf("trace.wire_bytes"), 460800.0);
    // The DP gradient AllReduce (groups {0,4}, {1,5}, {2,6}, {3,7}: every one holds a GPU of replica 0).
    int gradients = 0;
    for (const TokenTraceCall& c : tr.calls)
        if (c.carries == TokenTraceCall::Carries::Gradients) {
            ++gradients;
            QCOMPARE(int(c.groups.size()), 4);
            QCOMPARE(c.wireBytes, 0.0);
        }
    QCOMPARE(gradients, 1);
}

void TestTokenTrace::tensorParallelLinks()
{
    // paper-tp with a small batch on a PCIe server (2 GPUs per PCIe switch: pcie0 {0,1}, pcie1 {2,3},
    // pcie2 {4,5}, pcie3 {6,7}, every switch on the root complex "rc"; GPUDirect P2P).
    // T = 8, B = 2, dp = 2, G = 64 → N_acc = 64/(2·8·2) = 2, 8 sequences per step, 4 per replica.
    // Token 250: sequence 31, t = 2; step ⌊31/8⌋ = 3; q = 7 → replica 1, micro-batch ⌊3/2⌋ = 1, row 1.
    Scenario s = presetOrDie("paper-tp");
    s.batch.sequenceLength = 8;
    s.batch.microBatch = 2;
    s.batch.globalBatchTokens = 64;
    s.topology.kind = network::TopologyKind::PcieServer;
    s.topology.gpusPerPcieSwitch = 2;
    s.topology.gpuDirectP2P = true;
    const auto d = deriveOrNull(s);
    QVERIFY(d && d->stage3);
    auto net = deriveNetwork(s, *d);
    QVERIFY2(net.ok(), net.ok() ? "" : net.error().toString().c_str());
    const network::Topology& topo = *net.value()->topology;
    auto r = traceToken(*d, s, 250, &topo);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
    const TokenTrace& tr = r.value();
    QCOMPARE(tr.placement.step, 3u);
    QCOMPARE(tr.placement.dpReplica, 1u);
    QCOMPARE(tr.placement.microBatch, 1u);
    QCOMPARE(tr.row, 1u);
    // Replica 1: g = tp + 4·1 = 4, 5, 6, 7.
    QCOMPARE(tr.stageGpus, (std::vector<std::vector<std::uint32_t>>{{4, 5, 6, 7}}));
    // M = 2·8·768·2 = 24,576 B; share 24,576/16 = 1,536 B; the ring's chunk is 6,144 B = 4 rows and the
    // row (t·B + b = 2·2 + 1 = 5: bytes 7,680–9,216) lies in chunk 1 whole → 6 · 1,536 = 9,216 B per call.
    for (const TokenTraceCall& c : tr.calls)
        if (c.carries == TokenTraceCall::Carries::Row) {
            QCOMPARE(c.rowBytes, 1536.0);
            QCOMPARE(c.wireBytes, 9216.0);
        }
    QVERIFY(tr.routed);
    // The ring 4 → 5 → 6 → 7 → 4: the row's chunk crosses every edge of it (N−1 edges in the
    // reduce-scatter, the other N−1 from where that ended in the all-gather), each routed through the
    // switches: 4→5 and 6→7 stay on their switch, 5→6 and 7→4 cross the root complex.
    const std::set<long> ring = linksNamed(topo, {{"n0.gpu4", "n0.pcie2"}, {"n0.pcie2", "n0.gpu5"},
                                                  {"n0.gpu5", "n0.pcie2"}, {"n0.pcie2", "n0.rc"}, {"n0.rc", "n0.pcie3"},
                                                  {"n0.pcie3", "n0.gpu6"}, {"n0.gpu6", "n0.pcie3"}, {"n0.pcie3", "n0.gpu7"},
                                                  {"n0.gpu7", "n0.pcie3"}, {"n0.pcie3", "n0.rc"}, {"n0.rc", "n0.pcie2"},
                                                  {"n0.pcie2", "n0.gpu4"}});
    QVERIFY(!ring.contains(-1));
    QCOMPARE(asSet(tr.rowLinks()), ring);
    // Byte-hops: the edges 4→5 and 6→7 are 2 links long, 5→6 and 7→4 are 4. The reduce-scatter moves the
    // row's chunk over every edge but the one leaving the rank where it ends (e → e+1); the all-gather
    // starts there and moves it over every edge but the one entering e (e−1 → e). Those two edges are
    // neighbours, so one is 2 links and the other 4, whatever e is: per AllReduce 2·(2+4+2+4) − (2+4) = 18
    // link crossings of 1,536 B, over 50 calls 50 · 18 · 1,536 = 1,382,400 B.
    QCOMPARE(tr.figures.valueOf("trace.link_bytes"), 1382400.0);
    // The gradient AllReduce of DP groups {0,4}, {1,5}, {2,6}, {3,7} (2-rank rings: both directions).
    const std::set<long> gradient = linksNamed(
        topo, {{"n0.gpu0", "n0.pcie0"}, {"n0.pcie0", "n0.rc"}, {"n0.rc", "n0.pcie2"}, {"n0.pcie2", "n0.gpu4"},
               {"n0.gpu4", "n0.pcie2"}, {"n0.pcie2", "n0.rc"}, {"n0.rc", "n0.pcie0"}, {"n0.pcie0", "n0.gpu0"},
               {"n0.gpu1", "n0.pcie0"}, {"n0.pcie2", "n0.gpu5"}, {"n0.gpu5", "n0.pcie2"}, {"n0.pcie0", "n0.gpu1"},
               {"n0.gpu2", "n0.pcie1"}, {"n0.pcie1", "n0.rc"}, {"n0.rc", "n0.pcie3"}, {"n0.pcie3", "n0.gpu6"},
               {"n0.gpu6", "n0.pcie3"}, {"n0.pcie3", "n0.rc"}, {"n0.rc", "n0.pcie1"}, {"n0.pcie1", "n0.gpu2"},
               {"n0.gpu3", "n0.pcie1"}, {"n0.pcie3", "n0.gpu7"}, {"n0.gpu7", "n0.pcie3"}, {"n0.pcie1", "n0.gpu3"}});
    QVERIFY(!gradient.contains(-1));
    std::set<long> withGradients;
    for (const TokenTraceLink& l : tr.links)
        if (l.gradients)
            withGradients.insert(long(l.link));
    QCOMPARE(withGradients, gradient);
    // Every traced link is one of the two sets: nothing else is highlighted.
    std::set<long> all;
    for (const TokenTraceLink& l : tr.links)
        all.insert(long(l.link));
    std::set<long> both = ring;
    both.insert(gradient.begin(), gradient.end());
    QCOMPARE(all, both);
}

void TestTokenTrace::pipelineStages()
{
    // paper-pp: pp = 8, dp = tp = 1, T = 1,024, B = 32, G = 524,288 → N_acc = 16, tied embeddings.
    const Scenario s = presetOrDie("paper-pp");
    const auto d = deriveOrNull(s);
    QVERIFY(d && d->stage3);
    auto r = traceToken(*d, s, 100);
    QVERIFY(r.ok());
    const TokenTrace& tr = r.value();
    // Sequence 0, t = 100, replica 0, micro-batch 0, row 0; stage s is GPU s (g = pp when dp = tp = 1).
    QCOMPARE(tr.position, 100u);
    QCOMPARE(tr.placement.microBatch, 0u);
    QCOMPARE(tr.stageGpus.size(), std::size_t(8));
    for (std::uint32_t st = 0; st < 8; ++st)
        QCOMPARE(tr.stageGpus[st], (std::vector<std::uint32_t>{st}));
    // 7 boundaries forward (activations) + 7 backward (their gradients): 14 Send/Recv of
    // M = B·T·d·s_act = 50,331,648 B, its share M/(B·T) = 1,536 B, sent once each: 14 · 1,536 = 21,504 B.
    QCOMPARE(countCalls(tr, parallel::Strategy::PP, *d, TokenTraceCall::Carries::Row), 14);
    for (const TokenTraceCall& c : tr.calls)
        if (c.carries == TokenTraceCall::Carries::Row) {
            QCOMPARE(c.rowBytes, 1536.0);
            QCOMPARE(c.wireBytes, 1536.0);
        }
    QCOMPARE(tr.figures.valueOf("trace.wire_bytes"), 21504.0);
    // The tied embedding's gradient AllReduce between the first and the last stage feeds on every token.
    QCOMPARE(countCalls(tr, parallel::Strategy::PP, *d, TokenTraceCall::Carries::Gradients), 1);
}

void TestTokenTrace::expertAllToAll()
{
    // paper-moe: dp = ep = 8, 8 experts in every one of the 12 layers, top-1, CF = 1.
    const Scenario s = presetOrDie("paper-moe");
    const auto d = deriveOrNull(s);
    QVERIFY(d && d->stage3);
    auto r = traceToken(*d, s, 10);
    QVERIFY(r.ok());
    const TokenTrace& tr = r.value();
    // Per MoE layer: dispatch and combine forward, their two backward All-to-Alls: 4 · 12 = 48.
    QCOMPARE(countCalls(tr, parallel::Strategy::EP, *d, TokenTraceCall::Carries::Row), 48);
    for (const TokenTraceCall& c : tr.calls)
        if (c.carries == TokenTraceCall::Carries::Row) {
            // M = k·CF·B·T·d·s_act = 50,331,648 B; its share k·CF·d·s_act = M/(B·T) = 1,536 B; pairwise
            // exchange over N = 8 ranks: its blocks to the 7 others, expected 7/8 · 1,536 = 1,344 B on the wire.
            QCOMPARE(c.rowBytes, 1536.0);
            QCOMPARE(c.wireBytes, 1344.0);
        }
    QCOMPARE(tr.figures.valueOf("trace.wire_bytes"), 48 * 1344.0);
}

void TestTokenTrace::figuresClosed()
{
    // With the derivation's figures, the trace's figures form a closed graph, each with a formula, and
    // the row's chain walks back to the model's inputs.
    Scenario s = presetOrDie("paper-tp");
    s.topology.kind = network::TopologyKind::PcieServer;
    const auto d = deriveOrNull(s);
    QVERIFY(d && d->stage3);
    auto net = deriveNetwork(s, *d);
    QVERIFY(net.ok());
    auto r = traceToken(*d, s, 42, net.value()->topology.get());
    QVERIFY(r.ok());
    FigureSet all = d->figures;
    for (const Figure& f : r.value().figures.all()) {
        QVERIFY2(!f.formula.empty(), f.id.c_str());
        all.add(f);
    }
    const auto missing = all.missingInputs();
    QVERIFY2(missing.empty(), missing.empty() ? "" : missing.front().c_str());
    std::set<std::string> chain;
    for (const Figure* f : all.chain("trace.tp.allreduce.wire_bytes"))
        chain.insert(f->id);
    QVERIFY(chain.contains("trace.tp.allreduce.row_bytes"));
    QVERIFY(chain.contains("tp.allreduce_bytes"));
    QVERIFY(chain.contains("batch.T"));
    std::set<std::string> tokenChain;
    for (const Figure* f : all.chain("trace.replica"))
        tokenChain.insert(f->id);
    QVERIFY(tokenChain.contains("trace.token"));
    QVERIFY(tokenChain.contains("tokens.count"));
}

void TestTokenTrace::badIndexAndNoPlan()
{
    const Scenario s = presetOrDie("paper-reference");
    const auto d = deriveOrNull(s);
    QVERIFY(d);
    const std::size_t n = d->tokens().size();
    auto r = traceToken(*d, s, n);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().where.jsonPath, std::string("trace.token"));
    QVERIFY(r.error().message.find(std::to_string(n) + " tokens") != std::string::npos);

    // tp = 8 does not divide GPT-2's 12 heads: no stage 3, the trace stops after stage 2.
    Scenario bad = s;
    bad.parallel.dp = 1;
    bad.parallel.tp = 8;
    const auto nd = deriveOrNull(bad);
    QVERIFY(nd);
    QVERIFY(!nd->stage3);
    auto t = traceToken(*nd, bad, 5);
    QVERIFY(t.ok());
    QVERIFY(!t.value().placed);
    QVERIFY(t.value().calls.empty());
    QCOMPARE(t.value().position, 5u);
    QCOMPARE(t.value().rowBytes, 1536.0);
    QVERIFY(!t.value().notes.empty());
}

QTEST_APPLESS_MAIN(TestTokenTrace)
#include "tst_tokentrace.moc"
