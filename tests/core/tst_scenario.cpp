// The scenario file: JSON round trip for every preset, the presets against the published model
// shapes, every malformed-file case with its exact message (or fragment) and JSON path, the
// migration from schema version 0, and "never half-loads".

#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace tw;
using namespace tw::scenario;

Q_DECLARE_METATYPE(std::string)

namespace {

QString str(const std::string& s) { return QString::fromStdString(s); }

// Every error as "path | message" lines, for failure messages.
QString describe(const std::vector<Error>& errors)
{
    QString out;
    for (const Error& e : errors)
        out += str(e.toString()) + QLatin1Char('\n');
    return out;
}

// A minimal version-1 document with `members` (raw JSON text) inside "model": { … }.
std::string withModel(const std::string& members)
{
    return "{\"schema_version\": 1, \"model\": {" + members + "}}";
}

// A minimal version-1 document with raw top-level members after the version.
std::string withTop(const std::string& members)
{
    return "{\"schema_version\": 1, " + members + "}";
}

std::string nested(const std::string& prefix, const std::string& open, int depth)
{
    std::string s = prefix;
    s.reserve(s.size() + std::size_t(depth) * open.size());
    for (int i = 0; i < depth; ++i)
        s += open;
    return s; // never closed: the depth guard must stop before the end of input
}

} // namespace

class TestScenario : public QObject {
    Q_OBJECT
private slots:
    void uncheckedKeepsAScenarioThatReadsButDoesNotValidate();
    void presetNamesAreTheIssues();
    void roundTripEveryPreset_data();
    void roundTripEveryPreset();
    void presetsMatchPublishedShapes_data();
    void presetsMatchPublishedShapes();
    void llama3LayoutIsPublished();
    void paperReferenceInputs();
    void roundTripEveryField();
    void bucketBytesAutoOrANumber();
    void unknownPreset();
    void malformed_data();
    void malformed();
    void syntaxErrorLineColumn();
    void everyProblemIsReported();
    void neverHalfLoads();
    void migrationFromVersion0_data();
    void migrationFromVersion0();
    void migrationFromVersion0Refused();
    void baseUnitsAndIntegers();
    void relativePathsFollowTheFile();
    void schemaOneGpuCountMigrates_data();
    void schemaOneGpuCountMigrates();
    void clusterEditsKeepThePlanConsistent();
};

void TestScenario::schemaOneGpuCountMigrates_data()
{
    QTest::addColumn<std::uint64_t>("gpus");
    QTest::addColumn<std::uint64_t>("nodes");
    QTest::addColumn<std::uint64_t>("perNode");
    // The documented rule: up to 8 GPUs are one node; multiples of 8 are nodes of 8; others one GPU per node.
    QTest::newRow("1") << std::uint64_t{1} << std::uint64_t{1} << std::uint64_t{1};
    QTest::newRow("8") << std::uint64_t{8} << std::uint64_t{1} << std::uint64_t{8};
    QTest::newRow("7") << std::uint64_t{7} << std::uint64_t{1} << std::uint64_t{7};
    QTest::newRow("768") << std::uint64_t{768} << std::uint64_t{96} << std::uint64_t{8};
    QTest::newRow("12") << std::uint64_t{12} << std::uint64_t{12} << std::uint64_t{1};
}

void TestScenario::schemaOneGpuCountMigrates()
{
    QFETCH(std::uint64_t, gpus);
    QFETCH(std::uint64_t, nodes);
    QFETCH(std::uint64_t, perNode);
    const ScenarioLoad load = loadScenario(withTop(R"("hardware": {"gpu_count": )" + std::to_string(gpus) + "}"), "old.json");
    QVERIFY2(load.errors.empty(), qPrintable(describe(load.errors)));
    QCOMPARE(load.scenario->hardware.nodes, nodes);
    QCOMPARE(load.scenario->hardware.gpusPerNode, perNode);
    QCOMPARE(load.scenario->parallel.dp, gpus); // every GPU a replica, as schema 1 meant
    QCOMPARE(load.scenario->parallel.pp, 1ull);
    QCOMPARE(load.scenario->parallel.tp, 1ull);
    // Written back as schema 2 without gpu_count.
    const auto j = nlohmann::json::parse(scenarioToJson(*load.scenario));
    QVERIFY(!j["hardware"].contains("gpu_count"));
    QCOMPARE(j["hardware"]["nodes"].get<std::uint64_t>(), nodes);
}

void TestScenario::clusterEditsKeepThePlanConsistent()
{
    Scenario s; // 1 node × 8 GPUs, dp 8
    s.parallel.dp = 8;
    // TP 4 on 8 GPUs: DP takes the rest, 8 / 4 = 2.
    setParallelDegree(s, tw::parallel::Strategy::TP, 4);
    QCOMPARE(s.parallel.dp, 2ull);
    QCOMPARE(s.parallel.tp, 4ull);
    // Two nodes: DP grows to 16 / 4 = 4, tp kept.
    s.hardware.nodes = 2;
    fitPlanToCluster(s);
    QCOMPARE(s.parallel.dp, 4ull);
    // pp 3 does not divide 16 / 4: dp left alone (stage 3 then says why).
    setParallelDegree(s, tw::parallel::Strategy::PP, 3);
    QCOMPARE(s.parallel.pp, 3ull);
    QCOMPARE(s.parallel.dp, 4ull);
    setParallelDegree(s, tw::parallel::Strategy::PP, 2);
    QCOMPARE(s.parallel.dp, 2ull);
    // EP 2 divides dp 2; TP 8 then leaves dp = 16 / (2·8) = 1, which ep 2 does not divide: ep falls back to 1.
    setParallelDegree(s, tw::parallel::Strategy::EP, 2);
    setParallelDegree(s, tw::parallel::Strategy::TP, 8); // 16 / (2·8) = 1: ep 2 no longer divides dp 1
    QCOMPARE(s.parallel.dp, 1ull);
    QCOMPARE(s.parallel.ep, 1ull);

    // A swap makes the placement explicit; swapping back returns to the default (no explicit list).
    Scenario t;
    t.parallel.dp = 2;
    t.parallel.tp = 4;
    QVERIFY(swapGpus(t, 3, 4));
    QCOMPARE(t.parallel.assignment.size(), std::size_t{8});
    QCOMPARE(t.parallel.assignment[3], (tw::parallel::MeshCoord{1, 0, 0})); // GPU 4's default place
    QCOMPARE(t.parallel.assignment[4], (tw::parallel::MeshCoord{0, 0, 3}));
    QVERIFY(swapGpus(t, 4, 3));
    QVERIFY(t.parallel.assignment.empty());
    QVERIFY(!swapGpus(t, 0, 8)); // no GPU 8
    // A partition that no longer has pp·v entries is dropped.
    t.parallel.pp = 2;
    t.parallel.dp = 1;
    t.parallel.layerPartition = {6, 6};
    setParallelDegree(t, tw::parallel::Strategy::PP, 4);
    QVERIFY(t.parallel.layerPartition.empty());
}

void TestScenario::presetNamesAreTheIssues()
{
    const std::vector<std::string> expected = {"paper-reference", "paper-dp",   "paper-pp",  "paper-tp",
                                               "paper-moe",       "gpt2-xl",    "llama2-7b", "llama3-70b",
                                               "gpt3-175b",       "mixtral-8x7b", "paper-testbed",
                                               "dgx-a100",        "dgx-h100",   "dgx-a100-4node", "dgx-h100-4node",
                                               "llama3-405b",     "llama3-405b-98k"};
    QCOMPARE(presetNames(), expected);
    const auto list = presetList();
    QCOMPARE(list.size(), expected.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        QCOMPARE(list[i].name, expected[i]);
        QVERIFY2(!list[i].description.empty(), list[i].name.c_str());
        QVERIFY2(list[i].description.find('\n') == std::string::npos, "one line");
    }
}

void TestScenario::roundTripEveryPreset_data()
{
    QTest::addColumn<std::string>("name");
    for (const std::string& n : presetNames())
        QTest::newRow(n.c_str()) << n;
}

void TestScenario::roundTripEveryPreset()
{
    QFETCH(std::string, name);
    const auto p = preset(name);
    QVERIFY2(p.ok(), p.ok() ? "" : p.error().toString().c_str());
    QCOMPARE(p->name, name);
    // The shipped file itself loads with no problem.
    const ScenarioLoad shipped = loadScenario(presetJson(name), name);
    QVERIFY2(shipped.errors.empty(), qPrintable(describe(shipped.errors)));
    QVERIFY(*shipped.scenario == p.value());

    const std::string json = scenarioToJson(p.value());
    const ScenarioLoad back = loadScenario(json, "round-trip.json");
    QVERIFY2(back.errors.empty(), qPrintable(describe(back.errors) + str(json)));
    QVERIFY(back.scenario.has_value());
    QVERIFY(*back.scenario == p.value());
    QCOMPARE(scenarioToJson(*back.scenario), json); // writing is stable
}

void TestScenario::presetsMatchPublishedShapes_data()
{
    QTest::addColumn<std::string>("name");
    QTest::addColumn<QString>("family");
    QTest::addColumn<quint64>("L");
    QTest::addColumn<quint64>("d");
    QTest::addColumn<quint64>("a");
    QTest::addColumn<quint64>("kv");
    QTest::addColumn<quint64>("dff");
    QTest::addColumn<quint64>("V");
    QTest::addColumn<bool>("tied");
    QTest::addColumn<quint64>("experts");
    QTest::addColumn<quint64>("topK");
    QTest::addColumn<quint64>("T");
    QTest::addColumn<bool>("vocabFromTokenizer");
    // GPT-2 (Radford et al. 2019; HF config.json): n_layer, n_embd, n_head, 4d MLP, V = 50,257, tied.
    QTest::newRow("paper-reference") << std::string("paper-reference") << "gpt2" << 12ull << 768ull << 12ull << 12ull
                                     << 3072ull << 50257ull << true << 0ull << 1ull << 1024ull << true;
    QTest::newRow("gpt2-xl") << std::string("gpt2-xl") << "gpt2" << 48ull << 1600ull << 25ull << 25ull << 6400ull
                             << 50257ull << true << 0ull << 1ull << 1024ull << true;
    // Llama 2 7B (params.json / HF config): 32 layers, 4,096, 32 heads, d_ff 11,008, V 32,000, untied.
    QTest::newRow("llama2-7b") << std::string("llama2-7b") << "llama" << 32ull << 4096ull << 32ull << 32ull
                               << 11008ull << 32000ull << false << 0ull << 1ull << 4096ull << false;
    // Llama 3 70B: 80 layers, 8,192, 64 heads, 8 KV heads, d_ff 28,672, V 128,256.
    QTest::newRow("llama3-70b") << std::string("llama3-70b") << "llama" << 80ull << 8192ull << 64ull << 8ull
                                << 28672ull << 128256ull << false << 0ull << 1ull << 8192ull << false;
    // GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, 12,288, 96 heads, n_ctx 2,048, GPT-2's BPE.
    QTest::newRow("gpt3-175b") << std::string("gpt3-175b") << "gpt2" << 96ull << 12288ull << 96ull << 96ull
                               << 49152ull << 50257ull << true << 0ull << 1ull << 2048ull << true;
    // Mixtral 8x7B (Jiang et al. 2024): 32 layers, 4,096, 32 heads, 8 KV, 8 experts of 14,336, top-2.
    QTest::newRow("mixtral-8x7b") << std::string("mixtral-8x7b") << "llama" << 32ull << 4096ull << 32ull << 8ull
                                  << 14336ull << 32000ull << false << 8ull << 2ull << 4096ull << false;
    // Llama 3 405B (Dubey et al. 2024, arXiv 2407.21783, Table 3): 126 layers, 16,384, 128 heads, 8 KV heads,
    // d_ff 53,248, V 128,256; pre-trained at T = 8,192 (§3.3.2, Table 4). The what-if keeps the model.
    QTest::newRow("llama3-405b") << std::string("llama3-405b") << "llama" << 126ull << 16384ull << 128ull << 8ull
                                 << 53248ull << 128256ull << false << 0ull << 1ull << 8192ull << false;
    QTest::newRow("llama3-405b-98k") << std::string("llama3-405b-98k") << "llama" << 126ull << 16384ull << 128ull << 8ull
                                     << 53248ull << 128256ull << false << 0ull << 1ull << 8192ull << false;
}

void TestScenario::presetsMatchPublishedShapes()
{
    QFETCH(std::string, name);
    QFETCH(QString, family);
    QFETCH(quint64, L);
    QFETCH(quint64, d);
    QFETCH(quint64, a);
    QFETCH(quint64, kv);
    QFETCH(quint64, dff);
    QFETCH(quint64, V);
    QFETCH(bool, tied);
    QFETCH(quint64, experts);
    QFETCH(quint64, topK);
    QFETCH(quint64, T);
    QFETCH(bool, vocabFromTokenizer);
    const auto p = preset(name);
    QVERIFY(p.ok());
    const model::ModelConfig& m = p->model;
    QCOMPARE(QString::fromUtf8(model::toString(m.family).data(), qsizetype(model::toString(m.family).size())), family);
    QCOMPARE(m.layers, L);
    QCOMPARE(m.hiddenSize, d);
    QCOMPARE(m.heads, a);
    QCOMPARE(m.kvHeads, kv);
    QCOMPARE(m.ffnSize, dff);
    QCOMPARE(m.vocabSize, V);
    QCOMPARE(m.tiedEmbeddings, tied);
    QCOMPARE(m.moe.experts, experts);
    QCOMPARE(m.moe.topK, topK);
    QCOMPARE(p->batch.sequenceLength, T);
    QCOMPARE(p->modelVocabFromTokenizer, vocabFromTokenizer);
    QVERIFY(validate(p.value()).empty());
    // Every preset tokenizes the paper's Italian excerpt with GPT-2.
    QVERIFY(p->text.kind == TextSource::Kind::Sample);
    QCOMPARE(p->text.sample, std::string("inferno-canto1-it"));
    QVERIFY(p->tokenizer.kind == TokenizerChoice::Kind::Gpt2);
    // The large models run on H100s (the description says so); G is a whole number of sequences.
    if (name != "paper-reference" && name != "gpt2-xl") {
        QCOMPARE(p->hardware.gpu, std::string("h100-sxm"));
        QVERIFY(p->description.find("H100") != std::string::npos);
    }
    QCOMPARE(p->batch.globalBatchTokens % p->batch.sequenceLength, 0ull);
    if (!vocabFromTokenizer)
        QVERIFY2(p->description.find("tokenized with GPT-2") != std::string::npos, p->description.c_str());
}

// Llama 3 405B's 3D layout at 16,384 GPUs (Dubey et al. 2024, arXiv 2407.21783, §3.3.2, Table 4): tp 8,
// pp 16, dp 128 (8·16·128 = 16,384 = 2,048 servers × 8), 16 sequences of 8,192 per DP group =
// 16·8,192·128 = 16,777,216 tokens, interleaved; the first and the last chunk one layer lighter (3 + 30·4 + 3
// = 126). The what-if: dp 768 (8·16·768 = 98,304 = 12,288 servers), the same 16 sequences per group
// (16·8,192·768 = 100,663,296 tokens), on 16 pods of 6,144 GPUs (98,304 / 6,144: one pipeline stage's 768
// replicas × 8 GPUs each, twice Meta's 3,072-GPU pods) with 1:7 above the pods.
void TestScenario::llama3LayoutIsPublished()
{
    struct Row { const char* name; std::uint64_t dp, nodes, tokens; };
    for (const Row& r : {Row{"llama3-405b", 128, 2048, 16777216}, Row{"llama3-405b-98k", 768, 12288, 100663296}}) {
        const auto p = preset(r.name);
        QVERIFY(p.ok());
        QCOMPARE(p->parallel.tp, std::uint64_t(8));
        QCOMPARE(p->parallel.pp, std::uint64_t(16));
        QCOMPARE(p->parallel.dp, r.dp);
        QCOMPARE(p->hardware.nodes, r.nodes);
        QCOMPARE(p->hardware.gpusPerNode, std::uint64_t(8));
        QCOMPARE(p->batch.microBatch, std::uint64_t(1));
        QCOMPARE(p->batch.globalBatchTokens, r.tokens);
        QVERIFY(p->parallel.schedule == tw::parallel::PipelineSchedule::Interleaved);
        QCOMPARE(p->parallel.layerPartition.size(), std::size_t(32));
        QCOMPARE(p->parallel.layerPartition.front(), std::uint64_t(3));
        QCOMPARE(p->parallel.layerPartition.back(), std::uint64_t(3));
        QVERIFY(p->model.weights == tw::model::Precision::Bf16);
        QVERIFY(p->topology.nicBandwidth.has_value());
        QCOMPARE(*p->topology.nicBandwidth, 400e9 / 8); // 400 Gb/s RoCE per GPU (§3.3.1)
        QVERIFY(p->description.find("2407.21783") != std::string::npos);
    }
    const auto w = preset("llama3-405b-98k");
    QVERIFY(w->topology.kind == tw::network::TopologyKind::ThreeTier);
    QCOMPARE(w->topology.gpusPerPod, std::uint64_t(768 * 8)); // a stage's DP groups inside one pod
    QCOMPARE(w->topology.gpusPerPod, w->parallel.dp * w->parallel.tp);
    QCOMPARE(w->topology.coreOversubscription, 7.0);
    QVERIFY(w->description.find("What-if") != std::string::npos);
}

void TestScenario::paperReferenceInputs()
{
    // The paper's GPT-2-like example (§5, docs/model.md): d=768, T=1024, B=32, L=12, a=12, V=50,257,
    // tied head, 8 GPUs, G = 524,288 tokens, 16-bit.
    const auto p = preset("paper-reference");
    QVERIFY(p.ok());
    QCOMPARE(p->batch.microBatch, 32ull);
    QCOMPARE(p->batch.globalBatchTokens, 524288ull);
    QCOMPARE(p->hardware.nodes, 1ull);
    QCOMPARE(p->hardware.gpusPerNode, 8ull);
    QCOMPARE(p->parallel.dp, 8ull); // every GPU a data-parallel replica
    QCOMPARE(p->parallel.pp * p->parallel.tp, 1ull);
    QCOMPARE(model::bytesPerElement(p->model.weights), 2.0);
    QCOMPARE(model::bytesPerElement(p->model.activations), 2.0);
    QCOMPARE(model::bytesPerElement(p->model.gradients), 2.0);
    QCOMPARE(p->model.vocabPadMultiple, 0ull);
    QCOMPARE(p->text.documents, 1ull);
}

void TestScenario::roundTripEveryField()
{
    Scenario s;
    s.name = "every field";
    s.description = "π, ü and «quotes» \"escaped\" \\ and a tab\t";
    s.text.kind = TextSource::Kind::File;
    s.text.path = "/data/divina commedia.txt";
    s.text.text = "kept while unused"; // an unused field that differs from its default is kept
    s.text.documents = 100;
    s.tokenizer.kind = TokenizerChoice::Kind::Trained;
    s.tokenizer.trainedVocab = 4096;
    s.tokenizer.path = "/unused/tokenizer.json";
    s.modelVocabFromTokenizer = false;
    s.model.name = "custom MoE";
    s.model.family = model::Family::Llama;
    s.model.layers = 6;
    s.model.hiddenSize = 512;
    s.model.heads = 8;
    s.model.kvHeads = 2;
    s.model.ffnSize = 1408;
    s.model.vocabSize = 4096;
    s.model.maxPositions = 2048;
    s.model.tiedEmbeddings = false;
    s.model.vocabPadMultiple = 64;
    s.model.moe = {4, 2, 1.25, 2};
    s.model.weights = model::Precision::Fp32;
    s.model.activations = model::Precision::Fp16;
    s.model.gradients = model::Precision::Fp32;
    s.model.optimizerState = model::Precision::Bf16;
    s.model.recompute = model::Recompute::Full;
    s.batch = {2048, 3, 3 * 2048 * 7};
    s.hardware.gpu = "custom";
    s.hardware.custom = {"my-gpu", "My GPU", 24e9, 1.5e13, 1.23456789e14, 1.2e14, 0.0};
    s.hardware.nodes = 7;
    s.hardware.gpusPerNode = 2;
    s.parallel.dp = 7;
    s.parallel.pp = 2;
    s.parallel.tp = 1;
    s.parallel.ep = 7;
    s.parallel.sharding = tw::parallel::Sharding::FsdpHybrid;
    s.parallel.shardGroupSize = 7;
    s.parallel.sequenceParallel = true;
    s.parallel.schedule = tw::parallel::PipelineSchedule::Interleaved;
    s.parallel.virtualStages = 3;
    s.parallel.layerPartition = {1, 1, 1, 1, 1, 1};
    s.parallel.layerForwardSeconds = {0.003, 0.0015, 1e-9};
    s.parallel.computeEfficiency = 0.375;
    s.parallel.bucketBytes = 1234567;
    s.parallel.ddpOverlap = false; // Megatron-LM 2021's DDP (default true, written only when false)
    s.parallel.tpOverlap = true;   // Megatron-LM 2022's overlapped TP backward (default false, written only when true)
    for (std::uint32_t g = 0; g < 14; ++g)
        s.parallel.assignment.push_back({g % 7, g / 7, 0});
    s.collectives.allReduce = tw::collective::Algorithm::DoubleBinaryTree;
    s.collectives.reduceScatter = tw::collective::Algorithm::RecursiveHalving;
    s.collectives.allGather = tw::collective::Algorithm::Bruck;
    s.collectives.allToAll = tw::collective::Algorithm::Bruck;
    s.collectives.broadcast = tw::collective::Algorithm::Chain;
    s.collectives.link = {1.5e-6, 4.5e11};
    QVERIFY2(validate(s).empty(), qPrintable(describe(validate(s))));

    const std::string json = scenarioToJson(s);
    const ScenarioLoad back = loadScenario(json, "x.json");
    QVERIFY2(back.errors.empty(), qPrintable(describe(back.errors) + str(json)));
    QVERIFY(*back.scenario == s);
    // Base units in the file: bytes and FLOP/s as plain numbers.
    const auto j = nlohmann::json::parse(json);
    QCOMPARE(j["hardware"]["custom"]["memory_bytes"].get<std::uint64_t>(), 24000000000ull);
    QCOMPARE(j["hardware"]["custom"]["peak_bf16"].get<double>(), 1.23456789e14);
    QCOMPARE(j["schema_version"].get<int>(), 5);
    QVERIFY(j["parallel"]["assignment"][8] == nlohmann::json::parse("[1, 1, 0]")); // GPU 8: dp 8 % 7 = 1, pp 8 / 7 = 1
    QCOMPARE(j["collectives"]["allreduce"].get<std::string>(), std::string("double-binary-tree"));
    QCOMPARE(j["collectives"]["bandwidth"].get<double>(), 4.5e11);
    QCOMPARE(j["parallel"]["ddp_overlap"].get<bool>(), false);
    // Absent = true (PyTorch DDP's overlap), in the same schema version: the default is not written.
    Scenario d = s;
    d.parallel.ddpOverlap = true;
    QVERIFY(!nlohmann::json::parse(scenarioToJson(d))["parallel"].contains("ddp_overlap"));
    QVERIFY(loadScenario(scenarioToJson(d), "y.json").scenario->parallel.ddpOverlap);
    QCOMPARE(j["parallel"]["tp_overlap"].get<bool>(), true);
    d.parallel.tpOverlap = false; // absent = false (synchronous TP, Megatron-LM 2021): not written
    QVERIFY(!nlohmann::json::parse(scenarioToJson(d))["parallel"].contains("tp_overlap"));
    QVERIFY(!loadScenario(scenarioToJson(d), "y.json").scenario->parallel.tpOverlap);
}

void TestScenario::unknownPreset()
{
    const auto p = preset("gpt5");
    QVERIFY(!p.ok());
    QCOMPARE(str(p.error().message),
             QStringLiteral("unknown preset \"gpt5\" (expected one of paper-reference, paper-dp, paper-pp, paper-tp, paper-moe, gpt2-xl, llama2-7b, "
                            "llama3-70b, gpt3-175b, mixtral-8x7b, paper-testbed, dgx-a100, dgx-h100, dgx-a100-4node, dgx-h100-4node, "
                            "llama3-405b, llama3-405b-98k)"));
}

void TestScenario::malformed_data()
{
    QTest::addColumn<std::string>("json");
    QTest::addColumn<QString>("path");     // the JSON path of the (first) error; "" for the document
    QTest::addColumn<QString>("fragment"); // must appear in its message
    QTest::addColumn<bool>("exact");       // the fragment is the whole message

    auto row = [](const char* name, const std::string& json, const char* path, const char* fragment, bool exact) {
        QTest::newRow(name) << json << QString::fromUtf8(path) << QString::fromUtf8(fragment) << exact;
    };
    const std::string deepArrays = "x" + [] {
        std::string p;
        for (int i = 0; i < kMaxJsonDepth - 1; ++i)
            p += "[0]";
        return p;
    }();

    // Syntax: the parser's message, with the line and column (checked in syntaxErrorLineColumn).
    row("truncated", "{\"schema_version\": 1, \"model\": {\"layers\": 12", "", "invalid JSON: syntax error while parsing object - unexpected end of input", false);
    row("truncated mid-string", "{\"schema_version\": 1, \"name\": \"paper-ref", "", "invalid JSON: syntax error while parsing value - invalid string: missing closing quote", false);
    row("empty file", "", "", "invalid JSON: syntax error while parsing value - unexpected end of input", false);
    row("trailing garbage", withTop("\"name\": \"x\"") + " }", "", "invalid JSON: syntax error while parsing value - unexpected '}'; expected end of input", false);
    row("NaN literal", withModel("\"moe\": {\"capacity_factor\": NaN}"), "", "invalid JSON: syntax error while parsing value - invalid literal", false);
    row("Infinity literal", withModel("\"moe\": {\"capacity_factor\": Infinity}"), "", "invalid JSON: syntax error while parsing value - invalid literal", false);
    row("1e400 overflows a double", withModel("\"moe\": {\"capacity_factor\": 1e400}"), "", "invalid JSON: number overflow parsing '1e400'", true);
    row("invalid UTF-8 in a string", withTop("\"name\": \"caf\xC3\x28\""), "", "invalid JSON: syntax error while parsing value - invalid string: ill-formed UTF-8 byte", false);
    row("lone continuation byte", withTop("\"description\": \"\x80\""), "", "invalid string: ill-formed UTF-8 byte", false);
    row("raw NUL byte in a string", withTop(std::string("\"name\": \"a\0b\"", 13)), "", "invalid string: control character U+0000 (NUL) must be escaped to \\u0000", false);
    row("raw NUL byte outside strings", std::string("{\"schema_version\": 1,\0 \"name\": \"a\"}", 36), "", "invalid JSON: a NUL byte (binary data?) where JSON text was expected", true);
    row("escaped NUL in a path", withTop(R"("text": {"source": "file", "path": "a\u0000b.txt"})"), "text.path", "must not contain a NUL character (\\u0000)", true);
    row("100,000 nested arrays", nested("{\"schema_version\": 1, \"x\": ", "[", 100000), deepArrays.c_str(), "JSON nested deeper than 64 levels", true);
    row("100,000 nested objects", nested("", "{\"a\": ", 100000), "a.a.a.a", "JSON nested deeper than 64 levels", false);
    row("duplicate key", withTop(R"("name": "a", "name": "b")"), "name", "duplicate key \"name\"", true);

    // Document shape and schema version.
    row("not an object", "[1, 2, 3]", "", "a scenario is a JSON object, got array", true);
    row("missing schema version", R"({"name": "x"})", "schema_version", "missing; a scenario names its schema version (this program writes 5)", true);
    row("schema version as a string", R"({"schema_version": "1"})", "schema_version", "expected an unsigned integer, got string", true);
    row("negative schema version", R"({"schema_version": -1})", "schema_version", "must not be negative, got -1", true);
    row("future schema version", R"({"schema_version": 7, "anything": "goes"})", "schema_version", "schema_version 7 is newer than this program understands (5)", true);

    // Wrong types.
    row("layers as a string", withModel(R"("layers": "12")"), "model.layers", "expected an unsigned integer, got string", true);
    row("layers as a fraction", withModel(R"("layers": 1.5)"), "model.layers", "expected an unsigned integer, got 1.5", true);
    row("tied as a number", withModel(R"("tied_embeddings": 1)"), "model.tied_embeddings", "expected true or false, got integer", true);
    row("name as a number", withTop(R"("name": 5)"), "name", "expected a string, got integer", true);
    row("text as an array", withTop(R"("text": [])"), "text", "expected an object, got array", true);
    row("moe as null", withModel(R"("moe": null)"), "model.moe", "expected an object, got null", true);
    row("capacity factor as a string", withModel(R"("moe": {"capacity_factor": "1.0"})"), "model.moe.capacity_factor", "expected a number, got string", true);
    row("custom memory as a boolean", withTop(R"("hardware": {"gpu": "custom", "custom": {"memory_bytes": true, "peak_bf16": 1e14}})"), "hardware.custom.memory_bytes", "expected a number, got boolean", true);

    // Numbers out of range: negative, huge (2^70), beyond the model's limits.
    row("negative micro-batch", withTop(R"("batch": {"micro_batch": -32})"), "batch.micro_batch", "must not be negative, got -32", true);
    row("negative fraction", withTop(R"("batch": {"micro_batch": -0.5})"), "batch.micro_batch", "must not be negative, got -0.5", true);
    row("2^70 layers", withModel(R"("layers": 1180591620717411303424)"), "model.layers", "too large: got 1180591620717411303424, the most is 18,446,744,073,709,551,615", true);
    row("2^64 - 1 layers", withModel(R"("layers": 18446744073709551615)"), "model.layers", "must be between 1 and", false);
    row("zero hidden size", withModel(R"("hidden_size": 0)"), "model.hidden_size", "must be between 1 and", false);
    row("hidden not a multiple of heads", withModel(R"("hidden_size": 770)"), "model.hidden_size", "must be a positive multiple of model.heads (12), got 770", true);
    row("kv heads not dividing heads", withModel(R"("kv_heads": 5)"), "model.kv_heads", "must divide model.heads (12), got 5", true);
    row("vocabulary of 0", R"({"schema_version": 1, "model_vocab_from_tokenizer": false, "model": {"vocab_size": 0}})", "model.vocab_size", "got 0", false);
    row("negative capacity factor", withModel(R"("moe": {"experts": 8, "top_k": 2, "capacity_factor": -1})"), "model.moe.capacity_factor", "must be greater than 0", false);
    row("capacity factor 1e300", withModel(R"("moe": {"experts": 8, "top_k": 2, "capacity_factor": 1e300})"), "model.moe.capacity_factor", "must be greater than 0 and at most 64", false);
    row("T beyond learned positions", withTop(R"("batch": {"sequence_length": 2048})"), "batch.sequence_length", "must be at most model.max_positions (1,024) for a gpt2 model (learned positions), got 2,048", true);
    row("zero documents", withTop(R"("text": {"documents": 0})"), "text.documents", "must be between 1 and 4,294,967,296, got 0", true);
    // Schema 1's gpu_count becomes nodes × GPUs per node (0 GPUs: 0 nodes of one GPU).
    row("zero GPUs", withTop(R"("hardware": {"gpu_count": 0})"), "hardware.nodes", "must be between 1 and 1,048,576, got 0", true);
    row("v1 gpu_count not a number", withTop(R"("hardware": {"gpu_count": "eight"})"), "hardware.gpu_count", "expected an unsigned integer in schema_version 1, got string", true);
    row("negative dp", withTop(R"("parallel": {"dp": -8})"), "parallel.dp", "must not be negative, got -8", true);
    row("unknown sharding", withTop(R"("parallel": {"sharding": "zero4"})"), "parallel.sharding", "unknown sharding \"zero4\" (expected ddp, zero1, zero2, zero3, fsdp-full or fsdp-hybrid)", true);
    row("unknown schedule", withTop(R"("parallel": {"schedule": "zigzag"})"), "parallel.schedule", "unknown pipeline schedule \"zigzag\" (expected gpipe, 1f1b or interleaved)", true);
    row("partition not an array", withTop(R"("parallel": {"layer_partition": 12})"), "parallel.layer_partition", "expected an array, got integer", true);
    row("negative partition entry", withTop(R"("parallel": {"layer_partition": [6, -6]})"), "parallel.layer_partition[1]", "must not be negative, got -6", true);
    row("layer time not a number", withTop(R"("parallel": {"layer_forward_time_s": ["3ms"]})"), "parallel.layer_forward_time_s[0]", "expected a number of seconds, got string", true);
    row("assignment pair", withTop(R"("parallel": {"assignment": [[0, 0]]})"), "parallel.assignment[0]", "expected [dp, pp, tp] (three whole numbers), got an array of 2", true);
    row("assignment huge coordinate", withTop(R"("parallel": {"assignment": [[0, 0, 4294967296]]})"), "parallel.assignment[0][2]", "coordinate 4294967296 is larger than any mesh can be", true);
    row("unknown parallel key", withTop(R"("parallel": {"zero": 1})"), "parallel.zero", "unknown key \"zero\"", false);
    row("trained vocabulary too small", withTop(R"("tokenizer": {"kind": "trained", "vocab_size": 100})"), "tokenizer.vocab_size", "must be between 257 and 65,536, got 100", true);
    row("tensors past 2^62 bytes", withTop(R"("model": {"family": "llama"}, "batch": {"sequence_length": 1048576, "micro_batch": 1048576})"), "batch.micro_batch", "make tensors of 2^62 bytes or more", false);
    row("custom GPU without memory", withTop(R"("hardware": {"gpu": "custom", "custom": {"peak_bf16": 1e15}})"), "hardware.custom.memory_bytes", "must be positive", false);

    // Unknown names and keys.
    row("unknown family", withModel(R"("family": "gpt5")"), "model.family", "unknown family \"gpt5\" (expected gpt2 or llama)", true);
    row("unknown precision", withModel(R"("weights": "fp4")"), "model.weights", "unknown precision \"fp4\" (expected fp32, bf16, fp16 or fp8)", true);
    row("unknown recomputation", withModel(R"("recompute": "half")"), "model.recompute", "unknown recomputation \"half\" (expected none, selective or full)", true);
    row("unknown attention kernel", withModel(R"("attention": "flash")"), "model.attention", "unknown attention kernel \"flash\" (expected auto, fused or unfused)", true);
    row("reserve as a string", withTop(R"("parallel": {"memory_reserve_bytes": "1 GiB"})"), "parallel.memory_reserve_bytes", "expected a number, got string", true);
    row("ddp_overlap as a string", withTop(R"("parallel": {"ddp_overlap": "no"})"), "parallel.ddp_overlap", "expected true or false, got string", true);
    row("tp_overlap as a number", withTop(R"("parallel": {"tp_overlap": 1})"), "parallel.tp_overlap", "expected true or false, got integer", true);
    row("unknown text source", withTop(R"("text": {"source": "web"})"), "text.source", "unknown text source \"web\" (expected sample, file or inline)", true);
    row("unknown tokenizer kind", withTop(R"("tokenizer": {"kind": "wordpiece"})"), "tokenizer.kind", "unknown tokenizer kind \"wordpiece\" (expected gpt2, trained or file)", true);
    row("unknown sample", withTop(R"("text": {"sample": "paradiso"})"), "text.sample", "unknown sample \"paradiso\" (expected inferno-canto1-it or inferno-canto1-en)", true);
    row("unknown GPU", withTop(R"("hardware": {"gpu": "tpu-v5"})"), "hardware.gpu", "unknown GPU \"tpu-v5\"", false);
    row("misspelled key", withModel(R"("hiden_size": 768)"), "model.hiden_size", "unknown key \"hiden_size\" (did you mean \"hidden_size\"?)", true);
    row("unknown top-level key", withTop(R"("frobnicate": 1)"), "frobnicate", "unknown key \"frobnicate\" (expected schema_version, name, description", false);
    row("unknown nested key", withModel(R"("moe": {"experts": 0, "jitter": 0.1})"), "model.moe.jitter", "unknown key \"jitter\"", false);
}

void TestScenario::malformed()
{
    QFETCH(std::string, json);
    QFETCH(QString, path);
    QFETCH(QString, fragment);
    QFETCH(bool, exact);
    const ScenarioLoad load = loadScenario(json, "bad.tokenwire.json");
    QVERIFY2(!load.errors.empty(), "accepted");
    QVERIFY(!load.scenario.has_value()); // never half-loads
    const Error& e = load.errors.front();
    QCOMPARE(str(e.where.file), QStringLiteral("bad.tokenwire.json"));
    if (path.endsWith(QLatin1String(".a.a.a")) || path == QLatin1String("a.a.a.a"))
        QVERIFY2(str(e.where.jsonPath).startsWith(path), qPrintable(describe(load.errors)));
    else
        QVERIFY2(str(e.where.jsonPath) == path, qPrintable(QStringLiteral("path '%1', expected '%2'\n").arg(str(e.where.jsonPath), path) + describe(load.errors)));
    if (exact)
        QVERIFY2(str(e.message) == fragment, qPrintable(QStringLiteral("expected \"%1\"\n").arg(fragment) + describe(load.errors)));
    else
        QVERIFY2(str(e.message).contains(fragment), qPrintable(QStringLiteral("expected \"%1\" in\n").arg(fragment) + describe(load.errors)));
    // The joined form carries the same first problem.
    const auto joined = scenarioFromJson(json, "bad.tokenwire.json");
    QVERIFY(!joined.ok());
    QCOMPARE(joined.error().where, e.where);
    // Syntax errors say where (line and column); others say which field.
    if (path.isEmpty() && str(e.message).startsWith(QLatin1String("invalid JSON")))
        QVERIFY2(e.where.line >= 1 && e.where.column >= 1, qPrintable(describe(load.errors)));
}

void TestScenario::syntaxErrorLineColumn()
{
    // Truncated after line 4: the input ends at line 5, column 1.
    const std::string truncated = "{\n  \"schema_version\": 1,\n  \"model\": {\n    \"layers\": 12\n";
    ScenarioLoad load = loadScenario(truncated, "t.json");
    QCOMPARE(load.errors.size(), std::size_t(1));
    QCOMPARE(load.errors[0].where.line, 5);
    QCOMPARE(load.errors[0].where.column, 1);
    QCOMPARE(str(load.errors[0].toString()).left(11), QStringLiteral("t.json:5:1:"));

    // NaN on line 3: the error points at its 'N' (a JSON value cannot start with N).
    const std::string line3 = "    \"moe\": {\"capacity_factor\": NaN}";
    const std::string text = "{\"schema_version\": 1,\n  \"model\": {\n" + line3 + "\n}}";
    load = loadScenario(text, "n.json");
    QCOMPARE(load.errors.size(), std::size_t(1));
    QCOMPARE(load.errors[0].where.line, 3);
    // 4 spaces + "\"moe\": {" (8 characters) + "\"capacity_factor\": " (19) = 31 before the N: column 32.
    QCOMPARE(load.errors[0].where.column, 32);

    // Columns count code points: "é" is two bytes, one column.
    const std::string accented = "{\"name\": \"é\", x}";
    load = loadScenario(accented, "a.json");
    QCOMPARE(load.errors.size(), std::size_t(1));
    QCOMPARE(load.errors[0].where.line, 1);
    QCOMPARE(load.errors[0].where.column, 15); // the 'x': {"name": "é", x → 14 code points before it
}

void TestScenario::everyProblemIsReported()
{
    const std::string json = R"({
  "schema_version": 1,
  "name": 3,
  "text": {"source": "web", "documnets": 2},
  "model": {"layers": "twelve", "hidden_size": 770, "family": "gpt5"},
  "batch": {"micro_batch": -1},
  "hardware": {"gpu": "tpu-v5"}
})";
    const ScenarioLoad load = loadScenario(json, "many.json");
    QVERIFY(!load.scenario);
    QStringList paths;
    for (const Error& e : load.errors)
        paths << str(e.where.jsonPath);
    const QStringList expected = {QStringLiteral("name"),        QStringLiteral("text.source"),
                                  QStringLiteral("text.documnets"), QStringLiteral("model.family"),
                                  QStringLiteral("model.layers"), QStringLiteral("batch.micro_batch"),
                                  QStringLiteral("model.hidden_size"), QStringLiteral("hardware.gpu")};
    for (const QString& p : expected)
        QVERIFY2(paths.contains(p), qPrintable(p + QStringLiteral(" missing in\n") + describe(load.errors)));
    QCOMPARE(paths.size(), expected.size()); // each problem once
    // The joined Error lists them one per line, each with file and path.
    const auto r = scenarioFromJson(json, "many.json");
    QVERIFY(!r.ok());
    const QStringList lines = str(r.error().toString()).split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), expected.size());
    for (const QString& l : lines)
        QVERIFY2(l.startsWith(QLatin1String("many.json: ")), qPrintable(l));
    QVERIFY(str(r.error().toString()).contains(QStringLiteral("many.json: model.hidden_size: must be a positive multiple of model.heads (12), got 770")));
}

void TestScenario::neverHalfLoads()
{
    // One bad field among many good ones: nothing comes back, not even the good fields.
    const auto p = preset("paper-reference");
    QVERIFY(p.ok());
    auto j = nlohmann::json::parse(scenarioToJson(p.value()));
    j["model"]["layers"] = 24;
    j["batch"]["micro_batch"] = "32";
    const ScenarioLoad load = loadScenario(j.dump(), "x.json");
    QVERIFY(!load.scenario.has_value());
    QCOMPARE(load.errors.size(), std::size_t(1));
    QCOMPARE(load.errors[0].where.jsonPath, std::string("batch.micro_batch"));
    QVERIFY(!scenarioFromJson(j.dump(), "x.json").ok());
}

void TestScenario::migrationFromVersion0_data()
{
    QTest::addColumn<std::string>("tokenizer");
    QTest::addColumn<int>("kind");
    QTest::addColumn<quint64>("vocab");
    QTest::addColumn<std::string>("path");
    QTest::newRow("gpt2") << std::string("gpt2") << int(TokenizerChoice::Kind::Gpt2) << 8192ull << std::string();
    QTest::newRow("trained") << std::string("trained:300") << int(TokenizerChoice::Kind::Trained) << 300ull << std::string();
    QTest::newRow("file") << std::string("tokenizers/dante.json") << int(TokenizerChoice::Kind::File) << 8192ull
                          << std::string("tokenizers/dante.json");
}

void TestScenario::migrationFromVersion0()
{
    QFETCH(std::string, tokenizer);
    QFETCH(int, kind);
    QFETCH(quint64, vocab);
    QFETCH(std::string, path);
    // Version 0 named the tokenizer with a plain string; the rest is version 1's shape.
    const std::string v0 = "{\"schema_version\": 0, \"name\": \"old\", \"tokenizer\": \"" + tokenizer
        + "\", \"model\": {\"layers\": 6}}";
    const ScenarioLoad load = loadScenario(v0, "old.json");
    QVERIFY2(load.errors.empty(), qPrintable(describe(load.errors)));
    const Scenario& s = *load.scenario;
    QCOMPARE(int(s.tokenizer.kind), kind);
    QCOMPARE(s.tokenizer.trainedVocab, vocab);
    QCOMPARE(s.tokenizer.path, path);
    QCOMPARE(s.name, std::string("old"));
    QCOMPARE(s.model.layers, 6ull);
    // Saved again, it is a version-1 file with a tokenizer object.
    const auto j = nlohmann::json::parse(scenarioToJson(s));
    QCOMPARE(j["schema_version"].get<int>(), kSchemaVersion);
    QVERIFY(j["tokenizer"].is_object());
}

void TestScenario::migrationFromVersion0Refused()
{
    // A version-0 file with a version-1 tokenizer object is not what version 0 wrote.
    ScenarioLoad load = loadScenario(R"({"schema_version": 0, "tokenizer": {"kind": "gpt2"}})", "old.json");
    QCOMPARE(load.errors.size(), std::size_t(1));
    QCOMPARE(load.errors[0].where.jsonPath, std::string("tokenizer"));
    QCOMPARE(load.errors[0].message,
             std::string("expected a string in schema_version 0 (\"gpt2\", \"trained:V\" or a path), got object"));
    load = loadScenario(R"({"schema_version": 0, "tokenizer": "trained:lots"})", "old.json");
    QCOMPARE(load.errors.size(), std::size_t(1));
    QCOMPARE(load.errors[0].message, std::string("expected \"trained:V\" with a whole number V, got \"trained:lots\""));
    // A migrated file is then checked like any other: V = 100 is below 257.
    load = loadScenario(R"({"schema_version": 0, "tokenizer": "trained:100"})", "old.json");
    QCOMPARE(load.errors.size(), std::size_t(1));
    QCOMPARE(load.errors[0].where.jsonPath, std::string("tokenizer.vocab_size"));
}

void TestScenario::baseUnitsAndIntegers()
{
    // Whole numbers written as floats are accepted (1e3 layers is 1,000 layers); bytes are bytes.
    const ScenarioLoad load = loadScenario(
        withTop(R"("model": {"layers": 24.0}, "hardware": {"gpu": "custom", "custom": {"memory_bytes": 8e10, "peak_bf16": 3.12e14}})"),
        "u.json");
    QVERIFY2(load.errors.empty(), qPrintable(describe(load.errors)));
    QCOMPARE(load.scenario->model.layers, 24ull);
    QCOMPARE(load.scenario->hardware.custom.memoryBytes, 80000000000.0);
    QCOMPARE(load.scenario->hardware.custom.peakBf16, 312000000000000.0);
    const std::string written = scenarioToJson(*load.scenario);
    QVERIFY2(written.find("\"memory_bytes\": 80000000000,") != std::string::npos, written.c_str());
    QVERIFY2(written.find("\"layers\": 24,") != std::string::npos, written.c_str());
}

void TestScenario::relativePathsFollowTheFile()
{
    Scenario s;
    s.text.kind = TextSource::Kind::File;
    s.text.path = "texts/inferno.txt";
    s.tokenizer.kind = TokenizerChoice::Kind::File;
    s.tokenizer.path = "/abs/tokenizer.json";
    const Scenario r = resolvePaths(s, "/home/u/scenarios/run.tokenwire.json");
    QCOMPARE(r.text.path, std::string("/home/u/scenarios/texts/inferno.txt"));
    QCOMPARE(r.tokenizer.path, std::string("/abs/tokenizer.json"));
    // A file in the current folder leaves relative paths as they are.
    QCOMPARE(resolvePaths(s, "run.json").text.path, std::string("texts/inferno.txt"));
}

// d = 1024 with 12 heads reads field by field but fails validation (1024/12 is no head size): the load
// refuses it as a scenario and keeps it as `unchecked` (work in the middle of an edit, for recovery);
// a field of the wrong type ("wide") is not read at all, so nothing is kept.
void TestScenario::uncheckedKeepsAScenarioThatReadsButDoesNotValidate()
{
    nlohmann::json j = nlohmann::json::parse(scenarioToJson(preset("paper-reference").value()));
    j["model"]["hidden_size"] = 1024;
    const ScenarioLoad invalid = loadScenario(j.dump(), "mid-edit.json");
    QVERIFY(!invalid.scenario);
    QVERIFY(invalid.unchecked);
    QCOMPARE(invalid.unchecked->model.hiddenSize, std::uint64_t{1024});
    QVERIFY(!invalid.errors.empty());
    QCOMPARE(invalid.errors.front().where.jsonPath, std::string("model.hidden_size"));
    j["model"]["hidden_size"] = "wide";
    const ScenarioLoad unread = loadScenario(j.dump(), "mid-edit.json");
    QVERIFY(!unread.scenario);
    QVERIFY(!unread.unchecked);
    // A valid file: the scenario, nothing unchecked.
    const ScenarioLoad valid = loadScenario(scenarioToJson(preset("paper-reference").value()), "ok.json");
    QVERIFY(valid.scenario);
    QVERIFY(!valid.unchecked);
}

// parallel.bucket_bytes: absent or "auto" → the framework's default (nullopt: parallel::bucketBytesFor); a
// number → itself, written back; a word → an error naming the field.
void TestScenario::bucketBytesAutoOrANumber()
{
    using tw::scenario::loadScenario;
    tw::scenario::Scenario s = tw::scenario::preset("paper-dp").value();
    s.parallel.bucketBytes.reset();
    const std::string base = tw::scenario::scenarioToJson(s);
    QVERIFY(base.find("\"bucket_bytes\"") == std::string::npos); // auto is not written
    auto absent = loadScenario(base, "x");
    QVERIFY(absent.errors.empty());
    QVERIFY(!absent.scenario->parallel.bucketBytes);
    auto with = [&](const std::string& value) {
        const auto at = base.find("\"parallel\": {");
        return base.substr(0, at) + "\"parallel\": {\"bucket_bytes\": " + value + ", " + base.substr(at + 13);
    };
    auto a = loadScenario(with("\"auto\""), "x");
    QVERIFY(a.errors.empty());
    QVERIFY(!a.scenario->parallel.bucketBytes);
    auto n = loadScenario(with("1048576"), "x");
    QVERIFY(n.errors.empty());
    QCOMPARE(n.scenario->parallel.bucketBytes.value_or(0), 1048576.0);
    QVERIFY(tw::scenario::scenarioToJson(*n.scenario).find("\"bucket_bytes\": 1048576") != std::string::npos);
    auto bad = loadScenario(with("\"big\""), "x");
    QVERIFY(!bad.errors.empty());
    QCOMPARE(bad.errors[0].where.jsonPath, std::string("parallel.bucket_bytes"));
}

QTEST_GUILESS_MAIN(TestScenario)
#include "tst_scenario.moc"
