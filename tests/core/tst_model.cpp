// Stage 2 (model and tensors): parameter counts against the published ones, tensor shapes of the
// paper's GPT-2-like model and of Llama's grouped-query attention, memory and FLOPs against values
// derived by hand in the comments, validation messages, the GPU catalog and the provenance graph.

#include "../support/testsupport.h"
#include "model/gpucatalog.h"
#include "model/model.h"
#include "model/tensors.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace tw::model;

using tw::test::contains;
using tw::test::joined;

namespace {

ModelConfig known(const char* id)
{
    auto m = knownModel(id);
    if (!m)
        qFatal("unknown model %s", id);
    return *m;
}

GpuSpec gpu(const char* id)
{
    auto g = findGpu(id);
    if (!g)
        qFatal("unknown GPU %s", id);
    return *g;
}

// The paper's batch: B = 32 sequences of T = 1,024 tokens, G = 524,288 tokens per optimizer step.
const BatchShape kPaperBatch{1024, 32, 524288};

const TensorInfo* tensor(const ModelDerivation& d, const std::string& name)
{
    for (const TensorInfo& t : d.tensors)
        if (t.name == name)
            return &t;
    return nullptr;
}

// Stage 1 figures as the dataset stage would give them for the paper's setup.
tw::FigureSet stage1()
{
    tw::FigureSet s;
    s.add({"tokenizer.vocab_size", "Vocabulary size V", 50257, "tokens", "input", {}});
    s.add({"dataset.T", "Sequence length T", 1024, "tokens", "input", {}});
    s.add({"dataset.B", "Micro-batch B", 32, "sequences", "input", {}});
    s.add({"dataset.G", "Global batch G", 524288, "tokens", "input", {}});
    return s;
}

} // namespace

class TestModel : public QObject {
    Q_OBJECT
private slots:
    void publishedParameterCounts_data();
    void publishedParameterCounts();
    void tiedAndUntied();
    void vocabPadding();
    void componentsGpt2Small();
    void mixtureOfExperts();
    void moeLayerInterval();
    void tensorShapesGpt2Small_data();
    void tensorShapesGpt2Small();
    void llamaGroupedQueryAttention();
    void inventoryMatchesMemory_data();
    void inventoryMatchesMemory();
    void tensorNamesFitInline_data();
    void tensorNamesFitInline();
    void memoryGpt2Small();
    void activationsByRecompute_data();
    void activationsByRecompute();
    void fitsInMemory_data();
    void fitsInMemory();
    void flopsGpt2Small();
    void flopsFullRecompute();
    void formulasShowTheNumbers();
    void validationMessages_data();
    void validationMessages();
    void validationCollectsEveryProblem();
    void knownModelsAreValid();
    void batchValidation();
    void graphClosed_data();
    void graphClosed();
    void stage1Inputs();
    void gpuCatalog();
    void enumStrings();
};

void TestModel::publishedParameterCounts_data()
{
    QTest::addColumn<QByteArray>("id");
    QTest::addColumn<quint64>("parameters");
    // GPT-2 (Radford et al. 2019; HF transformers, tied head): the docs/model.md counts.
    QTest::newRow("gpt2-small") << QByteArray("gpt2-small") << quint64(124'439'808);
    QTest::newRow("gpt2-medium") << QByteArray("gpt2-medium") << quint64(354'823'168);
    QTest::newRow("gpt2-large") << QByteArray("gpt2-large") << quint64(774'030'080);
    QTest::newRow("gpt2-xl") << QByteArray("gpt2-xl") << quint64(1'557'611'200);
    // Meta's checkpoints (HF safetensors metadata): Llama-2-7B, Llama-3-8B, Llama-3-70B
    // (total_size 141,107,412,992 B in bf16 = 2·70,553,706,496).
    QTest::newRow("llama2-7b") << QByteArray("llama2-7b") << quint64(6'738'415'616);
    QTest::newRow("llama3-8b") << QByteArray("llama3-8b") << quint64(8'030'261'248);
    QTest::newRow("llama3-70b") << QByteArray("llama3-70b") << quint64(70'553'706'496);
    // Mixtral-8x7B with its routers (docs/model.md).
    QTest::newRow("mixtral-8x7b") << QByteArray("mixtral-8x7b") << quint64(46'702'792'704);
    // GPT-3 175B: the paper says 175.0B; by hand with the GPT-2 formula (L=96, d=12,288, V=50,257, T=2,048):
    // 12·96·12,288² = 173,946,175,488; 13·96·12,288 = 15,335,424; (50,257+2,048)·12,288 = 642,723,840;
    // 2·12,288 = 24,576; sum = 174,604,259,328.
    QTest::newRow("gpt3-175b") << QByteArray("gpt3-175b") << quint64(174'604'259'328);
}

void TestModel::publishedParameterCounts()
{
    QFETCH(QByteArray, id);
    QFETCH(quint64, parameters);
    const ModelConfig m = known(id.constData());
    QCOMPARE(quint64(parameterCount(m)), parameters);
    QCOMPARE(parameterCountAsDouble(m), double(parameters));
    const ModelDerivation d = deriveModel(m, kPaperBatch, gpu("a100-80gb"));
    QCOMPARE(d.parameters, double(parameters));
    QCOMPARE(d.figures.valueOf("model.parameters"), double(parameters));
}

void TestModel::tiedAndUntied()
{
    // Untying adds the head V·d: GPT-2 small 124,439,808 + 50,257·768 (38,597,376) = 163,037,184
    // (docs/model.md); Llama-2-7B tied would be 6,738,415,616 − 32,000·4,096 (131,072,000) = 6,607,343,616.
    ModelConfig g = known("gpt2-small");
    g.tiedEmbeddings = false;
    QCOMPARE(parameterCount(g), 163'037'184ull);
    ModelConfig l = known("llama2-7b");
    l.tiedEmbeddings = true;
    QCOMPARE(parameterCount(l), 6'607'343'616ull);

    const ModelDerivation d = deriveModel(g, kPaperBatch, gpu("a100-80gb"));
    QCOMPARE(d.figures.valueOf("model.params.head"), 38'597'376.0);
    QVERIFY(tensor(d, "head.weight"));
    const ModelDerivation tied = deriveModel(known("gpt2-small"), kPaperBatch, gpu("a100-80gb"));
    QCOMPARE(tied.figures.valueOf("model.params.head"), 0.0);
    QVERIFY(!tensor(tied, "head.weight"));
}

void TestModel::vocabPadding()
{
    // 50,257 / 64 = 785.27 → 786·64 = 50,304 rows: 47 more rows of d = 768, so P grows by
    // 47·768 = 36,096 (tied: one table) → 124,475,904; untied pads the head too: + 2·36,096 →
    // 163,109,376. The logits become [32,1024,50304].
    ModelConfig m = known("gpt2-small");
    m.vocabPadMultiple = 64;
    QCOMPARE(m.paddedVocab(), 50'304ull);
    QCOMPARE(parameterCount(m), 124'475'904ull);
    QCOMPARE(parameterCount(m) - parameterCount(known("gpt2-small")), 47ull * 768);
    const ModelDerivation d = deriveModel(m, kPaperBatch, gpu("a100-80gb"));
    const TensorInfo* logits = tensor(d, "logits");
    QVERIFY(logits);
    QCOMPARE(logits->shape.toVector(), (std::vector<std::uint64_t>{32, 1024, 50304}));
    QCOMPARE(logits->shapeSymbols, std::string("[B,T,V_p]"));
    QVERIFY2(contains(d.figures.find("model.vocab_padded")->formula, "= 50,304"),
             d.figures.find("model.vocab_padded")->formula.c_str());
    m.tiedEmbeddings = false;
    QCOMPARE(parameterCount(m), 163'109'376ull);
    // Already a multiple: no change.
    m.vocabSize = 50304;
    QCOMPARE(m.paddedVocab(), 50'304ull);
}

void TestModel::componentsGpt2Small()
{
    // L = 12, d = 768, d_ff = 3,072, V = 50,257, T_max = 1,024:
    //   embedding 50,257·768 = 38,597,376; positions 1,024·768 = 786,432;
    //   attention 12·(4·768² + 4·768) = 12·2,362,368 = 28,348,416;
    //   MLP 12·(2·768·3,072 + 3,072 + 768) = 12·4,722,432 = 56,669,184;
    //   norms 12·4·768 + 2·768 = 38,400; head 0 (tied); sum 124,439,808.
    const ModelDerivation d = deriveModel(known("gpt2-small"), kPaperBatch, gpu("a100-80gb"));
    const std::map<std::string, double> expected = {
        {"model.params.embedding", 38'597'376}, {"model.params.positions", 786'432},
        {"model.params.attention", 28'348'416}, {"model.params.mlp", 56'669'184},
        {"model.params.experts", 0},            {"model.params.router", 0},
        {"model.params.norms", 38'400},         {"model.params.head", 0},
        {"model.active_parameters", 124'439'808}};
    for (const auto& [id, value] : expected) {
        QVERIFY2(d.figures.find(id), id.c_str());
        QCOMPARE(d.figures.valueOf(id), value);
    }
}

void TestModel::mixtureOfExperts()
{
    // Mixtral-8x7B (L = 32, d = 4,096, d_kv = 8·128 = 1,024, d_ff = 14,336, E = 8, k = 2, V = 32,000):
    //   experts 32·8·3·4,096·14,336 = 45,097,156,608; routers 32·4,096·8 = 1,048,576;
    //   attention 32·(2·4,096² + 2·4,096·1,024) = 1,342,177,280; dense MLP 0.
    //   Active per token: P − 32·(8 − 2)·176,160,768 = 46,702,792,704 − 33,822,867,456 = 12,879,925,248
    //   (Mistral's "12.9B active parameters").
    const ModelDerivation d = deriveModel(known("mixtral-8x7b"), kPaperBatch, gpu("h100-sxm"));
    QCOMPARE(d.figures.valueOf("model.params.experts"), 45'097'156'608.0);
    QCOMPARE(d.figures.valueOf("model.params.router"), 1'048'576.0);
    QCOMPARE(d.figures.valueOf("model.params.attention"), 1'342'177'280.0);
    QCOMPARE(d.figures.valueOf("model.params.mlp"), 0.0);
    QCOMPARE(d.figures.valueOf("model.active_parameters"), 12'879'925'248.0);
    // FLOPs count the active parameters: 6·12,879,925,248 = 77,279,551,488 per token.
    QCOMPARE(d.figures.valueOf("compute.flops.params_per_token"), 77'279'551'488.0);
    QVERIFY(contains(d.figures.find("compute.flops.params_per_token")->formula, "k routed experts"));
    // Tensors: router logits [B,T,E]; expert capacity C = ⌈CF·k·B·T/E⌉ = 1·2·32·1,024/8 = 8,192.
    const TensorInfo* router = tensor(d, "layer0.router.logits");
    QVERIFY(router);
    QCOMPARE(router->shape.toVector(), (std::vector<std::uint64_t>{32, 1024, 8}));
    const TensorInfo* dispatch = tensor(d, "layer31.experts.dispatch");
    QVERIFY(dispatch);
    QCOMPARE(dispatch->shape.toVector(), (std::vector<std::uint64_t>{8, 8192, 4096}));
    const TensorInfo* gate = tensor(d, "layer5.experts.w_gate");
    QVERIFY(gate);
    QCOMPARE(gate->shape.toVector(), (std::vector<std::uint64_t>{8, 4096, 14336}));
    QCOMPARE(gate->component, std::string("experts"));
    QVERIFY(!tensor(d, "layer0.mlp.w_gate"));
}

void TestModel::moeLayerInterval()
{
    // GPT-2 small with E = 4 GELU experts, top-1, every second layer: layers 1, 3, 5, 7, 9, 11
    // (0-based) are MoE, L_moe = 6. Each MoE layer swaps one MLP (4,722,432) for 4 experts with
    // biases and adds a router 768·4 = 3,072:
    //   P = 124,439,808 + 6·3·4,722,432 + 6·3,072 = 124,439,808 + 85,003,776 + 18,432 = 209,462,016.
    ModelConfig m = known("gpt2-small");
    m.moe.experts = 4;
    m.moe.topK = 1;
    m.moe.layerInterval = 2;
    QVERIFY2(validate(m).empty(), joined(validate(m)).c_str());
    QCOMPARE(m.moeLayers(), 6ull);
    QVERIFY(!m.isMoeLayer(0));
    QVERIFY(m.isMoeLayer(1));
    QVERIFY(m.isMoeLayer(11));
    QVERIFY(!m.isMoeLayer(12));
    QCOMPARE(parameterCount(m), 209'462'016ull);
    const ModelDerivation d = deriveModel(m, kPaperBatch, gpu("a100-80gb"));
    QVERIFY(tensor(d, "layer0.mlp.fc.weight"));
    QVERIFY(tensor(d, "layer1.experts.fc.weight"));
    QVERIFY(!tensor(d, "layer1.mlp.fc.weight"));
    // Active: P − 6·(4 − 1)·4,722,432 = 209,462,016 − 85,003,776 = 124,458,240 (the dense model + routers).
    QCOMPARE(d.figures.valueOf("model.active_parameters"), 124'458'240.0);
}

void TestModel::tensorShapesGpt2Small_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<QList<quint64>>("shape");
    QTest::addColumn<QByteArray>("symbols");
    QTest::addColumn<double>("bytes");
    // B = 32, T = 1,024, d = 768, a = 12, V = 50,257, bf16 activations (2 B), int64 ids (8 B).
    QTest::newRow("ids") << QByteArray("input.ids") << QList<quint64>{32, 1024} << QByteArray("[B,T]") << 32.0 * 1024 * 8;
    QTest::newRow("wte") << QByteArray("embedding.wte") << QList<quint64>{50257, 768} << QByteArray("[V,d]")
                         << 50257.0 * 768 * 2;
    QTest::newRow("wpe") << QByteArray("embedding.wpe") << QList<quint64>{1024, 768} << QByteArray("[T_max,d]")
                         << 1024.0 * 768 * 2;
    // 32·1,024·768·2 = 50,331,648 B: the paper's boundary activation (§5.2).
    QTest::newRow("hidden") << QByteArray("embedding.output") << QList<quint64>{32, 1024, 768} << QByteArray("[B,T,d]")
                            << 50'331'648.0;
    QTest::newRow("q") << QByteArray("layer0.attn.q") << QList<quint64>{32, 1024, 768} << QByteArray("[B,T,d]")
                       << 50'331'648.0;
    QTest::newRow("k") << QByteArray("layer11.attn.k") << QList<quint64>{32, 1024, 768} << QByteArray("[B,T,d]")
                       << 50'331'648.0;
    // 32·12·1,024²·2 = 805,306,368 B.
    QTest::newRow("scores") << QByteArray("layer3.attn.scores") << QList<quint64>{32, 12, 1024, 1024}
                            << QByteArray("[B,a,T,T]") << 805'306'368.0;
    QTest::newRow("softmax") << QByteArray("layer3.attn.softmax") << QList<quint64>{32, 12, 1024, 1024}
                             << QByteArray("[B,a,T,T]") << 805'306'368.0;
    // 32·1,024·3,072·2 = 201,326,592 B.
    QTest::newRow("mlp up") << QByteArray("layer5.mlp.up") << QList<quint64>{32, 1024, 3072} << QByteArray("[B,T,d_ff]")
                            << 201'326'592.0;
    QTest::newRow("block output") << QByteArray("layer11.output") << QList<quint64>{32, 1024, 768}
                                  << QByteArray("[B,T,d]") << 50'331'648.0;
    // 32·1,024·50,257·2 = 3,293,642,752 B; the fp32 copy for the loss twice that.
    QTest::newRow("logits") << QByteArray("logits") << QList<quint64>{32, 1024, 50257} << QByteArray("[B,T,V]")
                            << 3'293'642'752.0;
    QTest::newRow("logits fp32") << QByteArray("loss.logits_fp32") << QList<quint64>{32, 1024, 50257}
                                 << QByteArray("[B,T,V]") << 6'587'285'504.0;
    QTest::newRow("qkv weight") << QByteArray("layer0.attn.qkv.weight") << QList<quint64>{768, 2304}
                                << QByteArray("[d,3d]") << 768.0 * 2304 * 2;
}

void TestModel::tensorShapesGpt2Small()
{
    QFETCH(QByteArray, name);
    QFETCH(QList<quint64>, shape);
    QFETCH(QByteArray, symbols);
    QFETCH(double, bytes);
    const ModelDerivation d = deriveModel(known("gpt2-small"), kPaperBatch, gpu("a100-80gb"));
    const TensorInfo* t = tensor(d, name.toStdString());
    QVERIFY2(t, name.constData());
    QCOMPARE(t->shape.toVector(), std::vector<std::uint64_t>(shape.begin(), shape.end()));
    QCOMPARE(t->shapeSymbols, symbols.toStdString());
    QCOMPARE(t->bytes, bytes);
    QCOMPARE(d.figures.valueOf("tensor.hidden_bytes"), 50'331'648.0);
    QCOMPARE(d.figures.valueOf("tensor.scores_bytes"), 805'306'368.0);
    QCOMPARE(d.figures.valueOf("tensor.logits_bytes"), 3'293'642'752.0);
}

void TestModel::llamaGroupedQueryAttention()
{
    // Llama-3-8B: 32 query heads of 4,096/32 = 128, 8 key/value heads → d_kv = 8·128 = 1,024.
    // K at B = 32, T = 1,024: [32,1024,1024], 32·1,024·1,024·2 = 67,108,864 B; W_k [4096,1024].
    const ModelDerivation d = deriveModel(known("llama3-8b"), kPaperBatch, gpu("h100-sxm"));
    QCOMPARE(d.figures.valueOf("model.kv_dim"), 1024.0);
    QCOMPARE(d.figures.valueOf("model.head_dim"), 128.0);
    const TensorInfo* k = tensor(d, "layer0.attn.k");
    QVERIFY(k);
    QCOMPARE(k->shape.toVector(), (std::vector<std::uint64_t>{32, 1024, 1024}));
    QCOMPARE(k->shapeSymbols, std::string("[B,T,d_kv]"));
    QCOMPARE(k->bytes, 67'108'864.0);
    const TensorInfo* q = tensor(d, "layer0.attn.q");
    QVERIFY(q);
    QCOMPARE(q->shape.toVector(), (std::vector<std::uint64_t>{32, 1024, 4096}));
    const TensorInfo* wk = tensor(d, "layer31.attn.wk");
    QVERIFY(wk);
    QCOMPARE(wk->shape.toVector(), (std::vector<std::uint64_t>{4096, 1024}));
    // SwiGLU: gate and up [B,T,d_ff] = [32,1024,14336]; no learned positions; untied head [V,d].
    const TensorInfo* gate = tensor(d, "layer0.mlp.gate");
    QVERIFY(gate);
    QCOMPARE(gate->shape.toVector(), (std::vector<std::uint64_t>{32, 1024, 14336}));
    QVERIFY(tensor(d, "layer0.mlp.up"));
    QVERIFY(!tensor(d, "embedding.wpe"));
    const TensorInfo* head = tensor(d, "head.weight");
    QVERIFY(head);
    QCOMPARE(head->shape.toVector(), (std::vector<std::uint64_t>{128256, 4096}));
    QCOMPARE(d.figures.valueOf("model.params.positions"), 0.0);
}

void TestModel::inventoryMatchesMemory_data()
{
    QTest::addColumn<QByteArray>("id");
    for (const std::string& id : knownModelIds())
        QTest::newRow(id.c_str()) << QByteArray(id.c_str());
}

void TestModel::tensorNamesFitInline_data() { inventoryMatchesMemory_data(); }

void TestModel::tensorNamesFitInline()
{
    // TensorName keeps at most kCapacity bytes inline. A block's name is "layerN." + a tail that does
    // not depend on N, and validate() allows N up to 99,999 ("layer99999." is 11 bytes): every tail of
    // every known model (dense and MoE blocks, GPT-2 and Llama) must fit after that prefix.
    QFETCH(QByteArray, id);
    const ModelConfig m = known(id.constData());
    ModelConfig deepest = m;
    deepest.layers = 100'000;
    bool layersOk = true;
    for (const tw::Error& e : validate(deepest))
        layersOk = layersOk && e.where.jsonPath != "model.layers";
    QVERIFY2(layersOk, "validate() refuses 100,000 layers: the bound below is no longer the right one");
    deepest.layers = 100'001;
    bool refused = false;
    for (const tw::Error& e : validate(deepest))
        refused = refused || e.where.jsonPath == "model.layers";
    QVERIFY2(refused, "validate() accepts 100,001 layers: names could outgrow TensorName");

    const ModelDerivation d = deriveModel(m, kPaperBatch, gpu("h100-sxm"));
    std::size_t longest = 0;
    for (const TensorInfo& t : d.tensors) {
        const std::string name = t.name.str();
        QVERIFY2(name.size() < TensorName::kCapacity, name.c_str()); // nothing was cut
        if (t.layer < 0) {
            longest = std::max(longest, name.size());
            continue;
        }
        const std::string prefix = "layer" + std::to_string(t.layer) + ".";
        QVERIFY2(name.rfind(prefix, 0) == 0, name.c_str());
        longest = std::max(longest, std::string("layer99999.").size() + name.size() - prefix.size());
    }
    QVERIFY2(longest <= TensorName::kCapacity, std::to_string(longest).c_str());

    // The inline name behaves as the string it holds.
    TensorName n("layer7.");
    n.append("attn.q").append(".grad");
    QCOMPARE(n.str(), std::string("layer7.attn.q.grad"));
    QVERIFY(n == std::string_view("layer7.attn.q.grad"));
    QVERIFY(!(n == TensorName("layer7.attn.q")));
    QVERIFY(TensorName("a") < TensorName("b"));
    QCOMPARE(n.size(), std::size_t(18));
}

void TestModel::inventoryMatchesMemory()
{
    // The weight tensors hold P elements; gradients, Adam states and master weights add up to the
    // memory figures (one tensor list, one set of figures, two ways to the same sums).
    QFETCH(QByteArray, id);
    const ModelConfig m = known(id.constData());
    const ModelDerivation d = deriveModel(m, kPaperBatch, gpu("h100-sxm"));
    double elements = 0, weights = 0, gradients = 0, optimizer = 0;
    std::set<std::string> names;
    for (const TensorInfo& t : d.tensors) {
        QVERIFY2(names.insert(t.name.str()).second, t.name.str().c_str());
        QVERIFY(t.bytes > 0);
        QVERIFY(!t.component.empty());
        QCOMPARE(t.shape.size(), std::size_t(std::count(t.shapeSymbols.begin(), t.shapeSymbols.end(), ',') + 1));
        if (t.kind == TensorKind::Weight) {
            double n = 1;
            for (auto s : t.shape)
                n *= double(s);
            elements += n;
            weights += t.bytes;
        } else if (t.kind == TensorKind::Gradient) {
            gradients += t.bytes;
            QVERIFY(t.phase == Phase::Backward);
        } else if (t.kind == TensorKind::OptimizerState) {
            optimizer += t.bytes;
            QVERIFY(t.phase == Phase::Optimizer);
        }
    }
    QCOMPARE(elements, double(parameterCount(m)));
    QCOMPARE(weights, d.figures.valueOf("memory.weights_bytes"));
    QCOMPARE(gradients, d.figures.valueOf("memory.gradients_bytes"));
    QCOMPARE(optimizer, d.figures.valueOf("memory.optimizer_bytes"));
    QCOMPARE(d.figures.valueOf("tensor.count"), double(d.tensors.size()));
    // The forward pass comes first, layer by layer.
    int lastLayer = -1;
    for (const TensorInfo& t : d.tensors) {
        if (t.kind != TensorKind::Activation)
            continue;
        if (t.layer >= 0) {
            QVERIFY(t.layer >= lastLayer);
            lastLayer = t.layer;
        }
    }
    QCOMPARE(lastLayer, int(m.layers) - 1);
}

void TestModel::memoryGpt2Small()
{
    // bf16 weights and gradients, fp32 Adam m, v and master copy (docs/model.md, ZeRO §3.1):
    //   weights 2P = 248,879,616 B; gradients 2P = 248,879,616 B; optimizer 12P = 1,493,277,696 B;
    //   together 16P = 16·124,439,808 = 1,991,036,928 B.
    // Activations (Korthikanti Table 2, no recomputation), B·T·d = 32·1,024·768 = 25,165,824:
    //   per layer T·B·d·(34 + 5·a·T/d) = 25,165,824·(34 + 5·12·1,024/768) = 25,165,824·(34 + 80)
    //   = 2,868,903,936 B; 12 layers = 34,426,847,232 B;
    //   embedding dropout mask B·T·d·1 = 25,165,824 B;
    //   output 4·B·T·d + 4·B·T·V = 100,663,296 + 4·32·1,024·50,257 (6,587,285,504) = 6,687,948,800 B;
    //   activations = 34,426,847,232 + 25,165,824 + 6,687,948,800 = 41,139,961,856 B;
    //   total = 41,139,961,856 + 1,991,036,928 = 43,130,998,784 B.
    const ModelDerivation d = deriveModel(known("gpt2-small"), kPaperBatch, gpu("a100-80gb"));
    QCOMPARE(d.figures.valueOf("memory.weights_bytes"), 248'879'616.0);
    QCOMPARE(d.figures.valueOf("memory.gradients_bytes"), 248'879'616.0);
    QCOMPARE(d.figures.valueOf("memory.optimizer_bytes"), 1'493'277'696.0);
    QCOMPARE(d.figures.valueOf("memory.model_states_bytes"), 1'991'036'928.0);
    QCOMPARE(d.figures.valueOf("memory.activations.layer_bytes"), 2'868'903'936.0);
    QCOMPARE(d.figures.valueOf("memory.activations.embedding_bytes"), 25'165'824.0);
    QCOMPARE(d.figures.valueOf("memory.activations.output_bytes"), 6'687'948'800.0);
    QCOMPARE(d.figures.valueOf("memory.activations_bytes"), 41'139'961'856.0);
    QCOMPARE(d.figures.valueOf("memory.total_bytes"), 43'130'998'784.0);
    // 80 GiB = 85,899,345,920 B; headroom 85,899,345,920 − 43,130,998,784 = 42,768,347,136 B.
    QCOMPARE(d.figures.valueOf("memory.gpu_capacity_bytes"), 85'899'345'920.0);
    QCOMPARE(d.figures.valueOf("memory.headroom_bytes"), 42'768'347'136.0);

    // All fp32 (weights are their own master copy): 4P + 4P + 8P = 16P, and activations double.
    ModelConfig fp32 = known("gpt2-small");
    fp32.weights = fp32.activations = fp32.gradients = Precision::Fp32;
    const ModelDerivation e = deriveModel(fp32, kPaperBatch, gpu("a100-80gb"));
    QCOMPARE(e.figures.valueOf("memory.optimizer_bytes"), 8.0 * 124'439'808);
    QCOMPARE(e.figures.valueOf("memory.model_states_bytes"), 16.0 * 124'439'808);
    QCOMPARE(e.figures.valueOf("memory.activations.layer_bytes"), 2.0 * 2'868'903'936.0);
    // bf16 optimizer states with bf16 weights: 2P + 2P + (2·2 + 4)P = 12P.
    ModelConfig lean = known("gpt2-small");
    lean.optimizerState = Precision::Bf16;
    QCOMPARE(deriveModel(lean, kPaperBatch, gpu("a100-80gb")).figures.valueOf("memory.model_states_bytes"),
             12.0 * 124'439'808);
}

void TestModel::activationsByRecompute_data()
{
    QTest::addColumn<QByteArray>("mode");
    QTest::addColumn<double>("perLayer");
    QTest::addColumn<double>("total");
    // B·T·d = 25,165,824; embedding + output = 25,165,824 + 6,687,948,800 = 6,713,114,624.
    // none: 114·25,165,824 = 2,868,903,936; 12 layers + 6,713,114,624 = 41,139,961,856.
    QTest::newRow("none") << QByteArray("none") << 2'868'903'936.0 << 41'139'961'856.0;
    // selective: 34·25,165,824 = 855,638,016; ·12 = 10,267,656,192; + 6,713,114,624 = 16,980,770,816.
    QTest::newRow("selective") << QByteArray("selective") << 855'638'016.0 << 16'980'770'816.0;
    // full: 2·25,165,824 = 50,331,648 (the layer input); ·12 = 603,979,776; + 6,713,114,624 = 7,317,094,400.
    QTest::newRow("full") << QByteArray("full") << 50'331'648.0 << 7'317'094'400.0;
}

void TestModel::activationsByRecompute()
{
    QFETCH(QByteArray, mode);
    QFETCH(double, perLayer);
    QFETCH(double, total);
    ModelConfig m = known("gpt2-small");
    m.recompute = *recomputeFromString(mode.toStdString());
    const ModelDerivation d = deriveModel(m, kPaperBatch, gpu("a100-80gb"));
    QCOMPARE(d.figures.valueOf("memory.activations.layer_bytes"), perLayer);
    QCOMPARE(d.figures.valueOf("memory.activations_bytes"), total);
}

void TestModel::fitsInMemory_data()
{
    QTest::addColumn<QByteArray>("model");
    QTest::addColumn<QByteArray>("gpu");
    QTest::addColumn<bool>("fits");
    // GPT-2 small at B = 32, T = 1,024 needs 43,130,998,784 B (memoryGpt2Small): it fits in 80 GiB
    // (85,899,345,920 B) but not in 40 GiB (42,949,672,960 B, short by 181,325,824 B), and not in
    // an RTX 4090's 24 GiB.
    QTest::newRow("gpt2-small on A100 80GB") << QByteArray("gpt2-small") << QByteArray("a100-80gb") << true;
    QTest::newRow("gpt2-small on A100 40GB") << QByteArray("gpt2-small") << QByteArray("a100-40gb") << false;
    QTest::newRow("gpt2-small on RTX 4090") << QByteArray("gpt2-small") << QByteArray("rtx4090") << false;
    // Llama-2-7B: 16P = 16·6,738,415,616 = 107,814,649,856 B of model states alone > 80 GiB and
    // < 192 GiB (206,158,430,208 B), but its activations (32 layers of 4,096·32·1,024·(34 + 5·32·1,024/4,096)
    // = 134,217,728·74 = 9,932,111,872 B each) do not fit an MI300X either.
    QTest::newRow("llama2-7b on A100 80GB") << QByteArray("llama2-7b") << QByteArray("a100-80gb") << false;
    QTest::newRow("llama2-7b on MI300X") << QByteArray("llama2-7b") << QByteArray("mi300x") << false;
}

void TestModel::fitsInMemory()
{
    QFETCH(QByteArray, model);
    QFETCH(QByteArray, gpu);
    QFETCH(bool, fits);
    const ModelDerivation d = deriveModel(known(model.constData()), kPaperBatch, ::gpu(gpu.constData()));
    QCOMPARE(d.fitsInMemory, fits);
    QCOMPARE(d.figures.valueOf("memory.fits"), fits ? 1.0 : 0.0);
    QCOMPARE(d.figures.valueOf("memory.total_bytes") <= d.figures.valueOf("memory.gpu_capacity_bytes"), fits);
}

void TestModel::flopsGpt2Small()
{
    // Per token: 6P = 6·124,439,808 = 746,638,848; attention 12·B·T²·d·L per micro-batch =
    // 12·32·1,024²·768·12 = 3,710,851,743,744, per token 12·T·d·L = 12·1,024·768·12 = 113,246,208.
    // Per token 746,638,848 + 113,246,208 = 859,885,056; per micro-batch ·32,768 = 28,176,713,515,008;
    // per step ·524,288 = 450,827,416,240,128 (16 micro-batches).
    const ModelDerivation d = deriveModel(known("gpt2-small"), kPaperBatch, gpu("a100-80gb"));
    QCOMPARE(d.figures.valueOf("compute.flops.params_per_token"), 746'638'848.0);
    QCOMPARE(d.figures.valueOf("compute.flops.attention_per_microbatch"), 3'710'851'743'744.0);
    QCOMPARE(d.figures.valueOf("compute.flops_per_token"), 859'885'056.0);
    QCOMPARE(d.figures.valueOf("compute.flops_per_microbatch"), 28'176'713'515'008.0);
    QCOMPARE(d.figures.valueOf("compute.flops_per_step"), 450'827'416'240'128.0);
    QCOMPARE(d.figures.valueOf("compute.tokens_per_step"), 524'288.0);
    QCOMPARE(d.figures.valueOf("compute.microbatches_per_step"), 16.0);
    // Megatron's form per token: 72·L·d² + 12·T·L·d + 6·V·d = 509,607,936 + 113,246,208 +
    // 231,584,256 = 854,438,400; per micro-batch ·32,768 = 27,998,237,491,200. Ours minus theirs is
    // 6·(13·L·d + T·d + 2·d) = 6·907,776 = 5,446,656 per token (biases, norms, position rows):
    // ratio 859,885,056 / 854,438,400 = 1.006374545 (0.64% apart).
    QCOMPARE(d.figures.valueOf("compute.flops_crosscheck_72"), 27'998'237'491'200.0);
    QVERIFY(std::abs(d.figures.valueOf("compute.flops_crosscheck_ratio") - 859'885'056.0 / 854'438'400.0) < 1e-12);
    QVERIFY(std::abs(d.figures.valueOf("compute.flops_crosscheck_ratio") - 1.0063745) < 1e-6);
    // At A100 bf16 peak 312 TFLOP/s: 450,827,416,240,128 / 312e12 = 1.44496 s per step.
    QVERIFY(std::abs(d.figures.valueOf("compute.step_time_at_peak") - 450'827'416'240'128.0 / 312e12) < 1e-9);
}

void TestModel::flopsFullRecompute()
{
    // Full recomputation re-runs each block's forward: + 2·P_blocks per token and + 4·B·T²·d per layer.
    // P_blocks = attention + MLP + block norms = 28,348,416 + 56,669,184 + 12·4·768 (36,864) = 85,054,464.
    // Per token: 746,638,848 + 2·85,054,464 (170,108,928) + 16·1,024·768·12 (150,994,944) = 1,067,742,720.
    // Megatron's 96 form per token: 96·12·768² + 16·1,024·12·768 + 6·50,257·768 = 679,477,248 +
    // 150,994,944 + 231,584,256 = 1,062,056,448 (they do not recompute the head either); ratio
    // 1,067,742,720 / 1,062,056,448 = 1.005354.
    ModelConfig m = known("gpt2-small");
    m.recompute = Recompute::Full;
    const ModelDerivation d = deriveModel(m, kPaperBatch, gpu("a100-80gb"));
    QCOMPARE(d.figures.valueOf("compute.flops_per_token"), 1'067'742'720.0);
    QCOMPARE(d.figures.valueOf("compute.flops_crosscheck_96"), 1'062'056'448.0 * 32768);
    QVERIFY(std::abs(d.figures.valueOf("compute.flops_crosscheck_ratio") - 1'067'742'720.0 / 1'062'056'448.0) < 1e-12);
    // Selective recomputation re-runs only the attention core: 746,638,848 + 150,994,944 = 897,633,792.
    m.recompute = Recompute::Selective;
    QCOMPARE(deriveModel(m, kPaperBatch, gpu("a100-80gb")).figures.valueOf("compute.flops_per_token"), 897'633'792.0);
}

void TestModel::formulasShowTheNumbers()
{
    const ModelDerivation d = deriveModel(known("gpt2-small"), kPaperBatch, gpu("a100-80gb"));
    auto formula = [&](const char* id) { return d.figures.find(id)->formula; };
    const std::vector<std::pair<const char*, const char*>> expected = {
        {"model.parameters", "12·L·d² + 13·L·d + (V+T)·d + 2·d"},
        {"model.parameters", "12·12·768² + 13·12·768 + (50,257+1,024)·768 + 2·768 = 124,439,808"},
        {"tensor.hidden_bytes", "B·T·d·s_act = 32·1,024·768·2 = 50,331,648 B"},
        {"memory.weights_bytes", "P·s_w = 124,439,808·2 = 248,879,616 B"},
        {"memory.activations.layer_bytes", "T·B·d·(34 + 5·a·T/d)"},
        {"memory.activations.layer_bytes", "1,024·32·768·(34 + 5·12·1,024/768) = 2,868,903,936 B"},
        {"compute.flops.params_per_token", "6·P_active"},
        {"compute.flops_crosscheck_72", "72·B·T·L·d²·(1 + T/(6·d) + V_p/(12·L·d))"},
        {"compute.flops_crosscheck_ratio", "1.0064"},
        {"model.params.attention", "12·(4·768² + 4·768) = 28,348,416"},
    };
    for (const auto& [id, text] : expected)
        QVERIFY2(contains(formula(id), text), (std::string(id) + ": " + formula(id)).c_str());
    // Llama's closed form.
    const ModelDerivation l = deriveModel(known("llama2-7b"), kPaperBatch, gpu("a100-80gb"));
    QVERIFY2(contains(l.figures.find("model.parameters")->formula,
                      "L·(2·d² + 2·d·d_kv + 3·d·d_ff + 2·d) + 2·V·d + d = 32·(2·4,096² + 2·4,096·4,096 + "
                      "3·4,096·11,008 + 2·4,096) + 2·32,000·4,096 + 4,096 = 6,738,415,616"),
             l.figures.find("model.parameters")->formula.c_str());
}

void TestModel::validationMessages_data()
{
    QTest::addColumn<QByteArray>("field");
    QTest::addColumn<quint64>("value");
    QTest::addColumn<QByteArray>("message");
    QTest::newRow("d not a multiple of a") << QByteArray("hidden_size") << quint64(770)
                                           << QByteArray("model.hidden_size: must be a positive multiple of model.heads (12), got 770");
    QTest::newRow("kv_heads not dividing heads") << QByteArray("kv_heads") << quint64(5)
                                                 << QByteArray("model.kv_heads: must divide model.heads (12), got 5");
    QTest::newRow("kv_heads 0") << QByteArray("kv_heads") << quint64(0)
                                << QByteArray("model.kv_heads: must be at least 1, got 0");
    QTest::newRow("V = 0") << QByteArray("vocab_size") << quint64(0)
                           << QByteArray("model.vocab_size: must be between 1 and 16,777,216, got 0");
    QTest::newRow("V too large") << QByteArray("vocab_size") << quint64(16'777'217)
                                 << QByteArray("model.vocab_size: must be between 1 and 16,777,216, got 16,777,217");
    QTest::newRow("no layers") << QByteArray("layers") << quint64(0)
                               << QByteArray("model.layers: must be between 1 and 100,000, got 0");
    QTest::newRow("d = 0") << QByteArray("hidden_size") << quint64(0)
                           << QByteArray("model.hidden_size: must be between 1 and 1,048,576, got 0");
    QTest::newRow("no heads") << QByteArray("heads") << quint64(0)
                              << QByteArray("model.heads: must be between 1 and 1,048,576, got 0");
    QTest::newRow("ffn 0") << QByteArray("ffn_size") << quint64(0)
                           << QByteArray("model.ffn_size: must be between 1 and 16,777,216, got 0");
    QTest::newRow("no positions") << QByteArray("max_positions") << quint64(0)
                                  << QByteArray("model.max_positions: must be between 1 and 16,777,216, got 0");
    QTest::newRow("one expert") << QByteArray("moe.experts") << quint64(1)
                                << QByteArray("model.moe.experts: must be 0 (a dense model) or between 2 and 4,096, got 1");
    QTest::newRow("top_k 0") << QByteArray("moe.top_k") << quint64(0)
                             << QByteArray("model.moe.top_k: must be at least 1, got 0");
}

void TestModel::validationMessages()
{
    QFETCH(QByteArray, field);
    QFETCH(quint64, value);
    QFETCH(QByteArray, message);
    ModelConfig m = known("gpt2-small");
    const std::map<QByteArray, std::uint64_t*> fields = {
        {"hidden_size", &m.hiddenSize}, {"kv_heads", &m.kvHeads},         {"vocab_size", &m.vocabSize},
        {"layers", &m.layers},          {"heads", &m.heads},              {"ffn_size", &m.ffnSize},
        {"max_positions", &m.maxPositions}, {"moe.experts", &m.moe.experts}, {"moe.top_k", &m.moe.topK}};
    *fields.at(field) = value;
    const auto errors = validate(m);
    QCOMPARE(errors.size(), std::size_t(1));
    QCOMPARE(QByteArray::fromStdString(errors.front().toString()), message);
    QCOMPARE(QByteArray::fromStdString(errors.front().where.jsonPath), "model." + field);
}

void TestModel::validationCollectsEveryProblem()
{
    // Three bad fields → three errors, each naming its field; no overflow check on a broken model.
    ModelConfig m = known("gpt2-small");
    m.layers = 0;
    m.vocabSize = 0;
    m.hiddenSize = 770;
    auto errors = validate(m);
    QCOMPARE(errors.size(), std::size_t(3));
    QCOMPARE(errors[0].where.jsonPath, std::string("model.layers"));
    QCOMPARE(errors[1].where.jsonPath, std::string("model.hidden_size"));
    QCOMPARE(errors[2].where.jsonPath, std::string("model.vocab_size"));

    // Overflow: every field in range, but P ≈ 12·100,000·1,048,576² ≈ 1.32e18 parameters, and
    // 16 B each (bf16 mixed-precision Adam) ≈ 2.1e19 B > 2^63 ≈ 9.22e18 B.
    ModelConfig huge = known("gpt2-small");
    huge.layers = 100'000;
    huge.hiddenSize = 1'048'576;
    huge.heads = huge.kvHeads = 16;
    huge.ffnSize = 4 * 1'048'576;
    errors = validate(huge);
    QCOMPARE(errors.size(), std::size_t(1));
    QCOMPARE(errors[0].where.jsonPath, std::string("model"));
    QVERIFY2(contains(errors[0].message, "model is too large: P·bytes overflows 64-bit byte counts"),
             errors[0].message.c_str());
    // 10,000 layers of the same width: P ≈ 1.32e17, ·16 ≈ 2.1e18 B < 2^63: accepted.
    huge.layers = 10'000;
    QVERIFY2(validate(huge).empty(), joined(validate(huge)).c_str());

    // MoE fields and precisions.
    ModelConfig moe = known("gpt2-small");
    moe.moe.experts = 2;
    moe.moe.topK = 3;
    moe.moe.capacityFactor = 0;
    moe.moe.layerInterval = 13;
    moe.optimizerState = Precision::Fp8;
    errors = validate(moe);
    QCOMPARE(errors.size(), std::size_t(4));
    QCOMPARE(errors[0].toString(), std::string("model.moe.top_k: must be between 1 and model.moe.experts (2), got 3"));
    QCOMPARE(errors[1].toString(), std::string("model.moe.capacity_factor: must be greater than 0 and at most 64, got 0"));
    QCOMPARE(errors[2].where.jsonPath, std::string("model.moe.layer_interval"));
    QCOMPARE(errors[3].toString(),
             std::string("model.optimizer_state: fp8 optimizer state is not supported: use fp32, bf16 or fp16"));
    moe.moe.capacityFactor = std::nan("");
    QCOMPARE(validate(moe)[1].where.jsonPath, std::string("model.moe.capacity_factor"));
}

void TestModel::knownModelsAreValid()
{
    QCOMPARE(knownModelIds().size(), std::size_t(9));
    for (const std::string& id : knownModelIds()) {
        auto m = knownModel(id);
        QVERIFY2(m, id.c_str());
        QVERIFY2(validate(*m).empty(), (id + ": " + joined(validate(*m))).c_str());
    }
    QVERIFY(!knownModel("gpt5"));
    // The default ModelConfig is the paper's model: GPT-2 small.
    QCOMPARE(ModelConfig{}.hiddenSize, known("gpt2-small").hiddenSize);
    QCOMPARE(parameterCount(ModelConfig{}), 124'439'808ull);
}

void TestModel::batchValidation()
{
    const ModelConfig g = known("gpt2-small");
    QVERIFY(validate(kPaperBatch, g).empty());
    auto errors = validate(BatchShape{2048, 32, 524288}, g);
    QCOMPARE(errors.size(), std::size_t(1));
    QCOMPARE(errors[0].where.jsonPath, std::string("batch.sequence_length"));
    QVERIFY2(contains(errors[0].message, "must be at most model.max_positions (1,024)"), errors[0].message.c_str());
    // RoPE has no position table: Llama takes T = 2,048.
    QVERIFY(validate(BatchShape{2048, 32, 524288}, known("llama2-7b")).empty());
    errors = validate(BatchShape{1024, 0, 0}, g);
    QCOMPARE(errors.size(), std::size_t(2));
    QCOMPARE(errors[0].toString(), std::string("batch.micro_batch: must be between 1 and 16,777,216, got 0"));
    // Scores [B,a,T,T] at T = 2^24 and B = 2^24 with 64 heads: 2^24·64·2^48·4 B = 2^80 B ≫ 2^63.
    errors = validate(BatchShape{16'777'216, 16'777'216, 524288}, known("llama3-70b"));
    QCOMPARE(errors.size(), std::size_t(1));
    QCOMPARE(errors[0].where.jsonPath, std::string("batch"));
}

void TestModel::graphClosed_data()
{
    QTest::addColumn<QByteArray>("id");
    QTest::addColumn<bool>("withStage1");
    for (const std::string& id : knownModelIds()) {
        QTest::newRow((id + " alone").c_str()) << QByteArray(id.c_str()) << false;
        QTest::newRow((id + " with stage 1").c_str()) << QByteArray(id.c_str()) << true;
    }
}

void TestModel::graphClosed()
{
    // Every input id names a figure of this set or of the stage-1 inputs; no cycles; every figure
    // has a label, a formula and a finite value; the ids the CLI and the later stages rely on exist.
    QFETCH(QByteArray, id);
    QFETCH(bool, withStage1);
    const tw::FigureSet inputs = withStage1 ? stage1() : tw::FigureSet{};
    ModelConfig m = known(id.constData());
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
        m.recompute = r;
        const ModelDerivation d = deriveModel(m, kPaperBatch, gpu("h100-sxm"), inputs);
        for (const tw::Figure& f : d.figures.all()) {
            QVERIFY2(!f.label.empty(), f.id.c_str());
            QVERIFY2(!f.formula.empty(), f.id.c_str());
            QVERIFY2(!f.id.empty(), f.label.c_str());
            QVERIFY2(std::isfinite(f.value), f.id.c_str());
            QVERIFY2(!inputs.find(f.id), f.id.c_str()); // stage 2 does not redefine stage 1
            for (const std::string& in : f.inputs)
                QVERIFY2(d.figures.find(in) || inputs.find(in), (f.id + " cites " + in).c_str());
        }
        // No cycles: depth-first search with colours.
        std::map<std::string, int> colour;
        std::function<bool(const std::string&)> acyclic = [&](const std::string& node) {
            const tw::Figure* f = d.figures.find(node);
            if (!f)
                return true; // a stage-1 input: a leaf here
            int& c = colour[node];
            if (c == 1)
                return false;
            if (c == 2)
                return true;
            c = 1;
            for (const std::string& in : f->inputs)
                if (!acyclic(in))
                    return false;
            colour[node] = 2;
            return true;
        };
        for (const tw::Figure& f : d.figures.all())
            QVERIFY2(acyclic(f.id), f.id.c_str());
        for (const char* required :
             {"model.parameters", "memory.weights_bytes", "memory.gradients_bytes", "memory.optimizer_bytes",
              "memory.activations_bytes", "memory.total_bytes", "memory.gpu_capacity_bytes", "compute.flops_per_step",
              "compute.flops_per_token", "compute.flops_per_microbatch", "model.params.embedding",
              "model.params.positions", "model.params.attention", "model.params.mlp", "model.params.experts",
              "model.params.router", "model.params.norms", "model.params.head", "memory.activations.layer_bytes",
              "tensor.hidden_bytes", "compute.flops_crosscheck_72", "compute.flops_crosscheck_96",
              "compute.tokens_per_step", "model.layers", "model.hidden_size", "model.heads", "model.vocab_size",
              "batch.T", "batch.B", "batch.G"})
            QVERIFY2(d.figures.find(required), required);
    }
}

void TestModel::stage1Inputs()
{
    // With stage 1 present, V and the batch trace back to the tokenizer and the dataset.
    const ModelDerivation d = deriveModel(known("gpt2-small"), kPaperBatch, gpu("a100-80gb"), stage1());
    QCOMPARE(d.figures.find("model.vocab_size")->inputs, std::vector<std::string>{"tokenizer.vocab_size"});
    QCOMPARE(d.figures.find("batch.T")->inputs, std::vector<std::string>{"dataset.T"});
    std::set<std::string> chain;
    for (const tw::Figure* f : d.figures.chain("compute.flops_per_step"))
        chain.insert(f->id);
    for (const char* id : {"model.parameters", "model.vocab_size", "batch.G", "batch.T", "model.layers"})
        QVERIFY2(chain.count(id), id);
    // A model V that differs from the tokenizer's is an input of its own, not a citation.
    ModelConfig m = known("llama2-7b");
    const ModelDerivation l = deriveModel(m, kPaperBatch, gpu("a100-80gb"), stage1());
    QVERIFY(l.figures.find("model.vocab_size")->inputs.empty());
    QVERIFY(contains(l.figures.find("model.vocab_size")->formula, "the tokenizer has 50,257"));
    // Without stage 1 nothing outside the set is cited.
    QVERIFY(deriveModel(m, kPaperBatch, gpu("a100-80gb")).figures.missingInputs().empty());
}

void TestModel::gpuCatalog()
{
    const auto& catalog = tw::model::gpuCatalog();
    const std::set<std::string> ids = {"v100-32gb", "a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie",
                                       "h200",      "mi300x",    "l40s",      "rtx4090"};
    QCOMPARE(catalog.size(), ids.size());
    for (const GpuSpec& g : catalog) {
        QVERIFY2(ids.count(g.id), g.id.c_str());
        QVERIFY2(!g.name.empty(), g.id.c_str());
        QVERIFY2(g.memoryBytes > 0, g.id.c_str());
        QVERIFY2(g.peakFp32 > 0, g.id.c_str());
        QVERIFY2(g.peakFp16 > g.peakFp32, g.id.c_str()); // tensor cores beat plain fp32 everywhere
        // Volta has no bf16 (documented in gpucatalog.cpp): its bf16 peak is 0, every other is positive.
        if (g.id == "v100-32gb")
            QCOMPARE(g.peakBf16, 0.0);
        else
            QVERIFY2(g.peakBf16 > 0, g.id.c_str());
        QVERIFY2(validate(g, "hardware.custom").empty() == (g.id != "v100-32gb"), g.id.c_str());
        QCOMPARE(g.peak(Precision::Bf16), g.peakBf16);
        QCOMPARE(g.peak(Precision::Fp8), g.peakFp8);
        QVERIFY(findGpu(g.id));
    }
    // Datasheet spot checks (dense): A100 312 TFLOP/s bf16, 19.5 fp32, 80 GiB; H100 SXM 989.5 bf16
    // and 1,979 fp8 (half the sparse 1,979 / 3,958); Ampere and Volta have no fp8.
    const GpuSpec a100 = gpu("a100-80gb");
    QCOMPARE(a100.peakBf16, 312e12);
    QCOMPARE(a100.peakFp32, 19.5e12);
    QCOMPARE(a100.memoryBytes, 80.0 * 1024 * 1024 * 1024);
    QCOMPARE(a100.peakFp8, 0.0);
    QCOMPARE(gpu("v100-32gb").peakFp8, 0.0);
    QCOMPARE(gpu("v100-32gb").peakFp16, 125e12);
    QCOMPARE(gpu("h100-sxm").peakBf16, 989.5e12);
    QCOMPARE(gpu("h100-sxm").peakFp8, 1979e12);
    QCOMPARE(gpu("h100-sxm").peakFp8, 2 * gpu("h100-sxm").peakBf16);
    QCOMPARE(gpu("mi300x").memoryBytes, 192.0 * 1024 * 1024 * 1024);
    QVERIFY(!findGpu("tpu-v5"));

    // A user-defined entry: memory and the bf16 peak must be positive and finite.
    GpuSpec custom;
    custom.id = "custom";
    custom.peakBf16 = std::nan("");
    custom.peakFp8 = -1;
    const auto errors = validate(custom, "hardware.custom");
    QCOMPARE(errors.size(), std::size_t(3));
    QCOMPARE(errors[0].where.jsonPath, std::string("hardware.custom.memory_bytes"));
    QCOMPARE(errors[1].where.jsonPath, std::string("hardware.custom.peak_bf16"));
    QCOMPARE(errors[2].where.jsonPath, std::string("hardware.custom.peak_fp8"));

    // V100 with a bf16 model: Volta has no bf16 tensor cores, so the GEMMs (and MFU's peak) run at its
    // fp16 peak, 125 TFLOP/s (datasheet), and the figure says so.
    const ModelDerivation d = deriveModel(known("gpt2-small"), kPaperBatch, gpu("v100-32gb"));
    QCOMPARE(d.figures.valueOf("compute.gpu_peak_flops"), 125e12);
    QVERIFY(contains(d.figures.find("compute.gpu_peak_flops")->formula, "no bf16 tensor cores"));
    QVERIFY(!contains(d.figures.find("compute.step_time_at_peak")->formula, "undefined"));
    // A custom GPU with no peak at all: the step time at peak is undefined, said in the formula, not infinite.
    GpuSpec none = gpu("v100-32gb");
    none.peakFp16 = none.peakFp32 = none.peakBf16 = 0;
    const ModelDerivation z = deriveModel(known("gpt2-small"), kPaperBatch, none);
    QCOMPARE(z.figures.valueOf("compute.gpu_peak_flops"), 0.0);
    QVERIFY(contains(z.figures.find("compute.step_time_at_peak")->formula, "undefined"));
}

void TestModel::enumStrings()
{
    for (Precision p : {Precision::Fp32, Precision::Bf16, Precision::Fp16, Precision::Fp8})
        QVERIFY(precisionFromString(toString(p)) == p);
    for (Family f : {Family::Gpt2, Family::Llama})
        QVERIFY(familyFromString(toString(f)) == f);
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
        QVERIFY(recomputeFromString(toString(r)) == r);
    QCOMPARE(toString(Precision::Bf16), std::string_view("bf16"));
    QCOMPARE(bytesPerElement(Precision::Fp32), 4.0);
    QCOMPARE(bytesPerElement(Precision::Bf16), 2.0);
    QCOMPARE(bytesPerElement(Precision::Fp16), 2.0);
    QCOMPARE(bytesPerElement(Precision::Fp8), 1.0);
    QVERIFY(!precisionFromString("int8"));
    QVERIFY(!familyFromString("GPT2"));
    QVERIFY(!recomputeFromString(""));
}

QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
