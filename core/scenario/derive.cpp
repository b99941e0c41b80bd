#include "derive.h"

#include "base/editdistance.h"
#include "base/units.h"
#include "model/kernels.h"
#include "scenariojson.h"
#include "text/bpetrainer.h"
#include "text/gpt2.h"
#include "text/samples.h"
#include "text/utf8.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <set>

namespace tw::scenario {

namespace {

namespace fs = std::filesystem;

std::string integer(std::uint64_t v) { return formatUnsigned(v); }

Error fieldError(const std::string& path, std::string message, const std::string& file = {})
{
    Location where;
    where.jsonPath = path;
    where.file = file;
    return makeError(std::move(message), std::move(where));
}

// What identifies a file's contents without reading it: its size and modification time.
struct FileStamp {
    std::uintmax_t size = 0;
    fs::file_time_type modified{};
    bool operator==(const FileStamp&) const = default;
};

FileStamp stampOf(const std::string& path)
{
    FileStamp s;
    std::error_code ec;
    s.size = fs::file_size(path, ec);
    if (ec)
        s.size = 0;
    s.modified = fs::last_write_time(path, ec);
    return s;
}

// The inputs of tokenization.
struct TokenizeKey {
    TextSource::Kind kind{};
    std::string source; // sample id, path or inline text
    FileStamp textStamp;
    TokenizerChoice tokenizer;
    FileStamp tokenizerStamp;
    bool operator==(const TokenizeKey&) const = default;
};

TokenizeKey tokenizeKey(const Scenario& s)
{
    TokenizeKey k;
    k.kind = s.text.kind;
    switch (s.text.kind) {
    case TextSource::Kind::Sample:
        k.source = s.text.sample;
        break;
    case TextSource::Kind::File:
        k.source = s.text.path;
        k.textStamp = stampOf(s.text.path);
        break;
    case TextSource::Kind::Inline:
        k.source = s.text.text;
        break;
    }
    k.tokenizer.kind = s.tokenizer.kind;
    if (s.tokenizer.kind == TokenizerChoice::Kind::Trained)
        k.tokenizer.trainedVocab = s.tokenizer.trainedVocab;
    if (s.tokenizer.kind == TokenizerChoice::Kind::File) {
        k.tokenizer.path = s.tokenizer.path;
        k.tokenizerStamp = stampOf(s.tokenizer.path);
    }
    return k;
}

// The whole file, or an Error naming it and the scenario field that named it.
Result<std::string> readFile(const std::string& path, const std::string& field, const std::string& what)
{
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        return fieldError(field, "cannot read " + what + ": no such file", path);
    if (fs::is_directory(st))
        return fieldError(field, "cannot read " + what + ": is a directory, not a file", path);
    const auto size = fs::file_size(path, ec);
    if (const std::size_t limit = text::maxTextBytes(); !ec && size > limit)
        return fieldError(field, what + " is " + integer(size) + " B, larger than the " + integer(limit)
                                     + " B the program reads in one piece", path);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return fieldError(field, "cannot read " + what, path);
    std::string data{std::istreambuf_iterator<char>(in), {}};
    if (in.bad())
        return fieldError(field, "cannot read " + what, path);
    return data;
}

Result<std::shared_ptr<const TokenizedText>> tokenize(const Scenario& s, const Progress& progress)
{
    auto out = std::make_shared<TokenizedText>();
    switch (s.text.kind) {
    case TextSource::Kind::Sample: {
        const auto sample = text::findSample(s.text.sample);
        if (!sample)
            return fieldError("text.sample", "unknown sample \"" + s.text.sample + "\"");
        out->text = std::string(sample->text);
        out->textName = s.text.sample;
        break;
    }
    case TextSource::Kind::File: {
        auto bytes = readFile(s.text.path, "text.path", "the text");
        if (!bytes)
            return bytes.error();
        out->text = std::move(bytes).value();
        out->textName = s.text.path;
        break;
    }
    case TextSource::Kind::Inline:
        out->text = s.text.text;
        out->textName = "<inline>";
        break;
    }

    // Text that is tokenized anyway, with a warning: empty, invalid UTF-8 (BPE is byte-level), NUL bytes.
    if (out->text.empty())
        out->warnings.push_back(fieldError("text", out->textName + ": the text is empty"));
    if (auto bad = text::firstInvalidUtf8(out->text, out->textName)) {
        bad->message += "; tokenized as bytes (BPE here is byte-level)";
        out->warnings.push_back(*bad);
    }
    if (const auto nul = std::count(out->text.begin(), out->text.end(), '\0'); nul > 0)
        out->warnings.push_back(fieldError("text", out->textName + ": " + integer(std::uint64_t(nul))
                                                       + " NUL byte(s) in the text; tokenized as bytes"));

    double encodeFrom = 0.0;
    switch (s.tokenizer.kind) {
    case TokenizerChoice::Kind::Gpt2: {
        auto m = text::gpt2();
        if (!m)
            return fieldError("tokenizer.kind", m.error().message);
        if (!text::gpt2Note().empty())
            out->warnings.push_back(fieldError("tokenizer.kind", text::gpt2Note()));
        out->tokenizer = std::make_shared<const text::BpeModel>(std::move(m).value());
        break;
    }
    case TokenizerChoice::Kind::Trained: {
        if (out->text.empty())
            return fieldError("tokenizer.kind", "cannot train a tokenizer on an empty text");
        auto trained = text::trainBpe(out->text, static_cast<std::size_t>(s.tokenizer.trainedVocab),
                                      subProgress(progress, 0.0, 0.5));
        if (!trained)
            return fieldError("tokenizer.vocab_size", trained.error().message);
        if (trained->exhausted)
            out->warnings.push_back(fieldError(
                "tokenizer.vocab_size", "the text ran out of pairs after " + integer(trained->merges.size())
                                            + " merges: the vocabulary has " + integer(trained->model.vocabSize())
                                            + " tokens, not " + integer(s.tokenizer.trainedVocab)));
        out->tokenizer = std::make_shared<const text::BpeModel>(std::move(trained->model));
        encodeFrom = 0.5;
        break;
    }
    case TokenizerChoice::Kind::File: {
        auto bytes = readFile(s.tokenizer.path, "tokenizer.path", "the tokenizer file");
        if (!bytes)
            return bytes.error();
        auto m = text::BpeModel::fromHuggingFaceJson(bytes.value(), s.tokenizer.path);
        if (!m) {
            Error e = m.error();
            e.where.jsonPath = "tokenizer.path";
            if (e.where.file.empty())
                e.where.file = s.tokenizer.path;
            e.message = "not a usable tokenizer.json: " + e.message;
            return e;
        }
        out->tokenizer = std::make_shared<const text::BpeModel>(std::move(m).value());
        break;
    }
    }

    text::Encoder encoder(*out->tokenizer);
    auto spans = encoder.encodeWithSpans(out->text, subProgress(progress, encodeFrom, 1.0));
    if (!spans)
        return fieldError("text", spans.error().message);
    out->tokens = std::move(spans).value();
    return std::shared_ptr<const TokenizedText>(std::move(out));
}

text::TrainingShape trainingShape(const Scenario& s)
{
    text::TrainingShape shape;
    shape.sequenceLength = s.batch.sequenceLength;
    shape.microBatch = s.batch.microBatch;
    shape.globalBatchTokens = s.batch.globalBatchTokens;
    shape.documents = s.text.documents;
    return shape;
}

// The inputs of stage 2 and of the figures the scenario adds.
struct ModelKey {
    const TextStage* stage1 = nullptr;
    model::ModelConfig model;
    model::BatchShape batch;
    model::GpuSpec gpu;
    bool vocabFromTokenizer = true;
    bool operator==(const ModelKey&) const = default;
};

// Stage 2 with the figures of stages 1–2 in one set and the problems found so far.
struct ModelStage {
    std::shared_ptr<const TextStage> stage1;
    model::ModelConfig model;
    model::GpuSpec gpu;
    std::shared_ptr<const model::ModelDerivation> derivation;
    FigureSet figures;
    std::vector<Error> problems;
};

// The inputs of stage 3 (and of the hardware figures).
struct PlanKey {
    const ModelStage* stage2 = nullptr;
    parallel::Cluster cluster;
    parallel::ParallelPlan plan;
    collective::AlgorithmChoice collectives;
    collective::NcclFabric fabric; // where NCCL's calls run (GPU model, resolved topology)
    bool operator==(const PlanKey&) const = default;
};

template <class Key, class Value>
struct Memo {
    static constexpr std::size_t kKeep = 4; // a few recent results (switching presets back and forth)
    std::vector<std::pair<Key, std::shared_ptr<const Value>>> entries;

    std::shared_ptr<const Value> find(const Key& key)
    {
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (entries[i].first == key) {
                auto hit = entries[i];
                entries.erase(entries.begin() + std::ptrdiff_t(i));
                entries.insert(entries.begin(), hit); // most recent first
                return hit.second;
            }
        }
        return nullptr;
    }
    void put(Key key, std::shared_ptr<const Value> value)
    {
        entries.insert(entries.begin(), {std::move(key), std::move(value)});
        if (entries.size() > kKeep)
            entries.pop_back();
    }
};

struct DatasetKey {
    const TokenizedText* tokenized = nullptr;
    text::TrainingShape shape;
    bool operator==(const DatasetKey&) const = default;
};

} // namespace

struct Deriver::Cache {
    mutable std::mutex mutex;
    Memo<TokenizeKey, TokenizedText> tokenized;
    Memo<DatasetKey, TextStage> datasets;
    Memo<ModelKey, ModelStage> models;
    Memo<PlanKey, Derivation> derivations;
    // Pointer keys stay valid: each cached value holds what its key points to.
    Counters counters;
};

Deriver::Deriver() : m_cache(std::make_unique<Cache>()) {}
Deriver::~Deriver() = default;

Deriver::Counters Deriver::counters() const
{
    std::lock_guard lock(m_cache->mutex);
    return m_cache->counters;
}

void Deriver::clear()
{
    std::lock_guard lock(m_cache->mutex);
    m_cache->tokenized.entries.clear();
    m_cache->datasets.entries.clear();
    m_cache->models.entries.clear();
    m_cache->derivations.entries.clear();
}

namespace {

// Stage 2's inputs: the model as configured (V from the tokenizer when asked), the batch and the GPU.
ModelKey modelKey(const Scenario& s, const TextStage* stage1, std::uint64_t tokenizerV)
{
    ModelKey mkey;
    mkey.stage1 = stage1;
    mkey.model = s.model;
    if (s.modelVocabFromTokenizer)
        mkey.model.vocabSize = tokenizerV;
    mkey.batch = s.batch;
    mkey.gpu = s.hardware.gpu == "custom" ? s.hardware.custom : model::findGpu(s.hardware.gpu).value_or(model::GpuSpec{});
    mkey.vocabFromTokenizer = s.modelVocabFromTokenizer;
    return mkey;
}

// Stage 2: the model as trained on this batch and GPU, with the figures of stages 1–2 and the problems.
Result<std::shared_ptr<const ModelStage>> buildModelStage(const Scenario& s, const ModelKey& mkey,
                                                          const std::shared_ptr<const TextStage>& stage1,
                                                          const TokenizedText& tokenized)
{
    const std::uint64_t tokenizerV = tokenized.tokenizer->vocabSize();
    if (std::vector<Error> errors = model::validate(mkey.model); !errors.empty()) {
        for (Error& e : errors)
            e.message += " (V = " + integer(tokenizerV) + " comes from the tokenizer)";
        return joinErrors(errors);
    }
    auto m = std::make_shared<ModelStage>();
    m->stage1 = stage1;
    m->model = mkey.model;
    m->gpu = mkey.gpu;
    m->problems = tokenized.warnings;

    // The figures stage 2 may cite: stage 1's, without the tokenizer's V when the model keeps its own.
    FigureSet inputs;
    for (const Figure& f : stage1->stats.figures.all())
        if (s.modelVocabFromTokenizer || f.id != "tokenizer.vocab_size")
            inputs.add(f);
    auto md = std::make_shared<model::ModelDerivation>(model::deriveModel(mkey.model, mkey.batch, mkey.gpu, inputs));
    m->figures = stage1->stats.figures;
    for (const Figure& f : md->figures.all())
        m->figures.add(f);
    if (!s.modelVocabFromTokenizer && s.model.vocabSize != tokenizerV)
        m->problems.push_back(fieldError(
            "model.vocab_size", "the model keeps its own V = " + integer(s.model.vocabSize)
                                    + "; the text is tokenized with " + tokenized.tokenizer->name() + " (V = "
                                    + integer(tokenizerV) + ") for the token figures"));
    if (s.model.fp8Recipe != model::Fp8Recipe::None && !(mkey.gpu.peakFp8 > 0))
        m->problems.push_back(fieldError(
            "model.fp8_recipe", "the " + mkey.gpu.name + " has no FP8 tensor cores: the recipe's GEMMs run at its "
                                    + std::string(model::mathPeak(mkey.gpu, model::Precision::Fp8) == mkey.gpu.peakFp32
                                                      ? "fp32"
                                                      : "16-bit")
                                    + " peak and its casts only add time (FP8 needs Hopper, Ada or newer)"));
    m->derivation = std::move(md);
    return std::shared_ptr<const ModelStage>(std::move(m));
}

// The hardware's input figures: nodes, GPUs per node and their product.
void addHardwareFigures(Derivation& d, const Scenario& s, const model::GpuSpec& gpu)
{
    const std::string gpuName = gpu.name.empty() ? gpu.id : gpu.name;
    d.figures.add({"hardware.nodes", "Nodes", double(s.hardware.nodes), "", "input: " + integer(s.hardware.nodes) + " nodes", {}});
    d.figures.add({"hardware.gpus_per_node", "GPUs per node", double(s.hardware.gpusPerNode), "",
                   "input: " + integer(s.hardware.gpusPerNode) + " × " + gpuName + " per node", {}});
    d.figures.add({"hardware.gpu_count", "GPUs", double(s.hardware.gpuCount()), "",
                   "nodes × GPUs per node = " + integer(s.hardware.nodes) + " × " + integer(s.hardware.gpusPerNode)
                       + " = " + integer(s.hardware.gpuCount()),
                   {"hardware.nodes", "hardware.gpus_per_node"}});
}

// Stages 3 and 4 of a valid plan: the plan, its memory and its collectives bound, their figures and
// problems added to d.
void derivePlanStages(Derivation& d, const Scenario& s, const PlanKey& pkey, const ModelStage& stage2)
{
    auto plan = std::make_shared<parallel::PlanDerivation>(
        parallel::derivePlan(s.parallel, pkey.cluster, stage2.model, s.batch, stage2.gpu, d.figures));
    for (const Figure& f : plan->figures.all())
        d.figures.add(f);
    auto memory = std::make_shared<parallel::PlanMemory>(
        parallel::derivePlanMemory(s.parallel, pkey.cluster, stage2.model, s.batch, stage2.gpu, d.figures));
    for (const Figure& f : memory->figures.all())
        d.figures.add(f);
    d.memory = std::move(memory);
    auto bound = std::make_shared<collective::CollectiveDerivation>(
        collective::bindPlan(plan->comm, pkey.cluster, s.collectives, d.figures, pkey.fabric));
    for (const Figure& f : bound->figures.all())
        d.figures.add(f);
    for (const Error& e : bound->uncounted)
        d.problems.push_back(e);
    for (const collective::BoundCall& b : bound->calls)
        if (b.fellBack) {
            d.problems.push_back(fieldError("collectives.allreduce",
                                            "hierarchical AllReduce needs each group's GPUs spread evenly over "
                                            "its nodes; groups that are not use ring"));
            break;
        }
    if (s.parallel.fp8AllGather) {
        const parallel::Sharding sh = s.parallel.sharding;
        if (sh != parallel::Sharding::Zero3 && sh != parallel::Sharding::FsdpFull && sh != parallel::Sharding::FsdpHybrid)
            d.problems.push_back(fieldError("parallel.fp8_all_gather", "has no effect: only ZeRO-3 and FSDP gather weights, "
                                                                       "and with " + std::string(parallel::toString(sh))
                                                                       + " every rank keeps them"));
        else if (s.model.fp8Recipe == model::Fp8Recipe::None)
            d.problems.push_back(fieldError("parallel.fp8_all_gather", "has no effect without an FP8 recipe (the weights "
                                                                       "are not FP8): set model.fp8_recipe to delayed or "
                                                                       "current"));
    }
    d.stage3 = std::move(plan);
    d.stage4 = std::move(bound);
}

// Does it fit? Under a plan that runs, its largest GPU decides (parallel/memory.h); without one, the
// whole model on one GPU (stage 2).
void addFitProblems(Derivation& d, const PlanKey& pkey, const ModelStage& stage2)
{
    if (d.memory && !d.memory->fits) {
        const parallel::PlanMemory& pm = *d.memory;
        std::uint64_t over = 0;
        for (const parallel::RoleMemory& r : pm.roles)
            over += r.fits ? 0 : r.gpus;
        d.problems.push_back(fieldError(
            "hardware.gpu", integer(over) + " of the " + integer(pkey.cluster.gpuCount()) + " GPUs do not fit: under the plan "
                                + "the largest (stage " + integer(pm.peakStage) + ") holds " + formatBytes(pm.peakBytes)
                                + " + a reserve of " + formatBytes(pm.reserveBytes) + " + the allocator's headroom of "
                                + formatBytes(pm.allocatorHeadroomBytes) + " (parallel.memory_headroom), "
                                + formatBytes(pm.peakBytes + pm.keptFreeBytes() - pm.capacityBytes) + " more than its "
                                + formatBytes(pm.capacityBytes)));
    } else if (!d.memory && !stage2.derivation->fitsInMemory) {
        d.problems.push_back(fieldError(
            "hardware.gpu", "one GPU's memory (" + formatBytes(stage2.gpu.memoryBytes)
                                + ") does not hold this model's weights, gradients, optimizer state and "
                                  "activations without the sharding and parallel layouts of stage 3"));
    }
}

} // namespace

// The scenario through the stages, each memoized on its inputs: the text tokenized, the dataset
// figures, the model (stage 2), then the plan, its memory and collectives (stages 3 and 4).
Result<std::shared_ptr<const Derivation>> Deriver::derive(const Scenario& s, const Progress& progress)
{
    if (const std::vector<Error> errors = validate(s); !errors.empty())
        return joinErrors(errors);
    Cache& c = *m_cache;

    // Stage 1a: the text, tokenized.
    const TokenizeKey tkey = tokenizeKey(s);
    std::shared_ptr<const TokenizedText> tokenized;
    {
        std::lock_guard lock(c.mutex);
        tokenized = c.tokenized.find(tkey);
    }
    if (!tokenized) {
        auto t = tokenize(s, progress);
        if (!t)
            return t.error();
        tokenized = std::move(t).value();
        std::lock_guard lock(c.mutex);
        ++c.counters.tokenizations;
        c.tokenized.put(tkey, tokenized);
    }
    if (progress.stopRequested())
        return makeError("cancelled");

    // Stage 1b: the dataset figures for the training shape.
    const DatasetKey dkey{tokenized.get(), trainingShape(s)};
    std::shared_ptr<const TextStage> stage1;
    {
        std::lock_guard lock(c.mutex);
        stage1 = c.datasets.find(dkey);
    }
    if (!stage1) {
        auto t = std::make_shared<TextStage>();
        t->tokenized = tokenized;
        t->shape = dkey.shape;
        t->stats = text::computeDataset(tokenized->text, tokenized->tokens, *tokenized->tokenizer, dkey.shape);
        stage1 = t;
        std::lock_guard lock(c.mutex);
        ++c.counters.datasets;
        c.datasets.put(dkey, stage1);
    }

    // Stage 2: the model as trained on this batch and GPU.
    const ModelKey mkey = modelKey(s, stage1.get(), tokenized->tokenizer->vocabSize());
    std::shared_ptr<const ModelStage> stage2;
    {
        std::lock_guard lock(c.mutex);
        stage2 = c.models.find(mkey);
    }
    if (!stage2) {
        auto m = buildModelStage(s, mkey, stage1, *tokenized);
        if (!m)
            return m.error();
        stage2 = std::move(m).value();
        std::lock_guard lock(c.mutex);
        ++c.counters.models;
        c.models.put(mkey, stage2);
    }

    // Stage 3: the plan on the cluster.
    PlanKey pkey{stage2.get(), s.hardware.cluster(), s.parallel, s.collectives,
                 collective::NcclFabric{s.hardware.gpu, resolvedTopology(s)}};
    {
        std::lock_guard lock(c.mutex);
        if (auto hit = c.derivations.find(pkey))
            return hit;
    }
    auto d = std::make_shared<Derivation>();
    d->stage1 = stage1;
    d->model = stage2->model;
    d->gpu = stage2->gpu;
    d->stage2 = stage2->derivation;
    d->cluster = pkey.cluster;
    d->anchor = stage2;
    d->problems = stage2->problems;
    d->figures = stage2->figures;
    addHardwareFigures(*d, s, stage2->gpu);
    d->planErrors = parallel::validate(s.parallel, pkey.cluster, stage2->model, s.batch);
    if (d->planErrors.empty())
        derivePlanStages(*d, s, pkey, *stage2);
    addFitProblems(*d, pkey, *stage2);
    for (const Error& e : d->planErrors)
        d->problems.push_back(e); // also listed with the other notes (each names its "parallel.*" path)
    for (const std::string& missing : d->figures.missingInputs())
        d->problems.push_back(fieldError("", "figure input \"" + missing + "\" is not defined (a defect of the program)"));

    std::shared_ptr<const Derivation> result = d;
    progress(1.0);
    std::lock_guard lock(c.mutex);
    ++c.counters.plans;
    c.derivations.put(pkey, result);
    return result;
}

Result<std::shared_ptr<const Derivation>> derive(const Scenario& scenario, const Progress& progress)
{
    Deriver deriver;
    return deriver.derive(scenario, progress);
}

network::SimulationOptions simulationOptions(const Derivation& d, bool recordLinks)
{
    network::SimulationOptions options;
    options.modelFlopsPerStep = d.figures.valueOf("compute.model_flops_per_step");
    options.hardwareFlopsPerStep = d.figures.valueOf("compute.flops_per_step");
    options.peakFlopsPerGpu = d.figures.valueOf("compute.gpu_peak_flops");
    options.peakText = model::gemmPeakText(d.gpu, d.model);
    if (!(options.modelFlopsPerStep > 0) || !(options.hardwareFlopsPerStep > 0) || !(options.peakFlopsPerGpu > 0))
        options.modelFlopsPerStep = options.hardwareFlopsPerStep = options.peakFlopsPerGpu = 0; // no MFU without all
    // Stage 5's GPU hover reads the intervals: every GPU's up to kMaxRecordedGpus, else GPU 0 and one GPU
    // (dp = tp = 0) per pipeline stage.
    options.recordGpus = {0};
    if (d.stage3)
        for (std::uint32_t g = 1; g < d.stage3->mesh.size(); ++g)
            if (d.stage3->mesh.size() <= network::kMaxRecordedGpus
                || (d.stage3->mesh[g].dp == 0 && d.stage3->mesh[g].tp == 0))
                options.recordGpus.push_back(g);
    options.recordLinks = recordLinks;
    return options;
}

Result<SimulatedStep> simulateDerived(const Scenario& s, const Derivation& d, bool recordLinks, const Progress& progress)
{
    auto net = deriveNetwork(s, d, subProgress(progress, 0.0, 0.2));
    if (!net)
        return net.error();
    auto sim = network::simulateStep(*net.value()->topology, *d.stage3, *d.stage4, simulationOptions(d, recordLinks),
                                     subProgress(progress, 0.2, 1.0));
    if (!sim)
        return sim.error();
    return SimulatedStep{std::move(net).value(), std::make_shared<const network::StepSimulation>(std::move(sim).value())};
}

Result<std::shared_ptr<const NetworkStage>> deriveNetwork(const Scenario& s, const Derivation& d, const Progress& progress)
{
    if (!d.stage3 || !d.stage4)
        return fieldError("parallel", "stage 5 needs a parallel plan that can run (see stage 3)");
    const parallel::Cluster cluster = s.hardware.cluster();
    const network::TopologySpec spec = resolvedTopology(s); // "auto" NVLink and NIC rate resolved
    if (std::vector<Error> errors = network::validate(spec, cluster); !errors.empty())
        return joinErrors(errors);
    auto built = network::build(spec, cluster);
    if (!built)
        return built.error();
    auto out = std::make_shared<NetworkStage>();
    out->topology = std::make_shared<const network::Topology>(std::move(built).value());
    auto loads = network::mapLinkLoads(*out->topology, d.stage3->comm, *d.stage4, progress);
    if (!loads)
        return loads.error();
    out->loads = std::move(loads).value();

    // Figures: the busiest link, what enters the network between servers, the protocols' overhead.
    const network::Topology& t = *out->topology;
    FigureSet& f = out->figures;
    std::size_t busiest = 0;
    parallel::PerStrategy<double> interNode{};
    for (std::size_t l = 0; l < out->loads.links.size(); ++l) {
        const network::LinkLoad& load = out->loads.links[l];
        if (load.wireBytes > out->loads.links[busiest].wireBytes)
            busiest = l;
        // Bytes into the network: a NIC's link to its switch (each inter-server byte crosses exactly one;
        // the NIC's link into its own server on the receiving side is not a network link).
        const network::Link& link = t.link(network::LinkId(l));
        if (t.node(link.from).kind == network::NodeKind::Nic && network::isNetwork(link.protocol))
            for (int st = 0; st < parallel::kStrategyCount; ++st)
                interNode[st] += load.payloadBytes[st];
    }
    const std::string kindName(network::toString(s.topology.kind));
    f.add({"net.links", "Links (each direction)", double(t.links().size()), "",
           "the " + kindName + " fabric of " + integer(cluster.nodes) + " × " + integer(cluster.gpusPerNode) + " GPUs: "
               + integer(t.nodes().size()) + " nodes, " + integer(t.links().size()) + " directed links",
           {}});
    if (!t.links().empty()) {
        const network::Link& b = t.link(network::LinkId(busiest));
        const network::LinkLoad& load = out->loads.links[busiest];
        f.add({"net.busiest_link_bytes", "Busiest link: bytes on the wire per step", load.wireBytes, "B",
               b.id + " (" + std::string(network::displayName(b.protocol)) + "): " + formatBytes(load.payload())
                   + " of payload, " + formatBytes(load.wireBytes) + " with packet overhead",
               {}});
        f.add({"net.busiest_link_seconds", "Busiest link: time to carry its bytes", load.wireBytes / b.bandwidth, "s",
               "wire bytes / bandwidth = " + formatBytes(load.wireBytes) + " / " + formatBytes(b.bandwidth) + "/s = "
                   + formatSeconds(load.wireBytes / b.bandwidth) + " (a lower bound on the step's communication)",
               {"net.busiest_link_bytes"}});
    }
    static const char* const names[] = {"dp", "pp", "tp", "ep"};
    double interTotal = 0;
    std::vector<std::string> interIds;
    for (int st = 0; st < parallel::kStrategyCount; ++st) {
        if (!d.stage3->comm.signature[std::size_t(st)].present)
            continue;
        const std::string id = std::string("net.internode_bytes.") + names[st];
        f.add({id, std::string(parallel::toString(parallel::Strategy(st))) + " bytes entering the network per step", interNode[st], "B",
               "Σ of " + std::string(parallel::toString(parallel::Strategy(st))) + " payload on the links leaving a NIC = " + formatBytes(interNode[st])
                   + (interNode[st] == 0 ? " (all of it stays inside the servers)" : ""),
               {}});
        interTotal += interNode[st];
        interIds.push_back(id);
    }
    f.add({"net.internode_bytes", "Bytes entering the network per step", interTotal, "B",
           "Σ over the strategies = " + formatBytes(interTotal), interIds});
    // What "auto" picked for the NICs, and why (no silent defaults).
    const NicRate nic = nicRate(s);
    f.add({"net.nic_bandwidth", "NIC bandwidth per direction", nic.bytesPerSecond, "B/s",
           nic.why + " = " + formatCount(nic.bytesPerSecond / 1e9, 1) + " GB/s", {}});
    // The bytes that climb above the leaves: a fabric edit there (oversubscription, spines) changes the
    // step only when some do.
    if (network::isSwitchedFabric(s.topology.kind)) {
        double up = 0;
        for (std::size_t l = 0; l < out->loads.links.size(); ++l) {
            const network::Link& link = t.link(network::LinkId(l));
            if (t.node(link.from).kind == network::NodeKind::LeafSwitch && t.node(link.to).kind == network::NodeKind::SpineSwitch)
                up += out->loads.links[l].payload();
        }
        const bool oversubscribed = s.topology.oversubscription > 1;
        f.add({"net.spine_bytes", "Bytes climbing from the leaves to the spines per step", up, "B",
               "Σ of payload on the leaf → spine links = " + formatBytes(up)
                   + (up > 0 ? std::string()
                             : std::string(" (every flow stays under its leaf: ")
                                   + (oversubscribed ? "the 1:" + formatCount(s.topology.oversubscription, 0)
                                                           + " oversubscription of the spines changes no traffic"
                                                     : "the spines' bandwidth and oversubscription change no traffic")
                                   + " for this plan)"),
               interIds});
    }
    double payload = 0;
    for (double p : out->loads.payloadBytes)
        payload += p;
    if (out->loads.wireBytes > 0)
        f.add({"net.overhead_share", "Protocol overhead on the wire", 1.0 - payload / out->loads.wireBytes, "",
               "1 − payload / wire bytes, over every link = 1 − " + formatBytes(payload) + " / "
                   + formatBytes(out->loads.wireBytes),
               {}});
    return std::shared_ptr<const NetworkStage>(std::move(out));
}

std::vector<ChainStep> derivationTree(const FigureSet& figures, const std::string& id)
{
    std::vector<ChainStep> out;
    std::set<std::string> seen;
    std::function<void(const std::string&, int)> visit = [&](const std::string& current, int depth) {
        const Figure* f = figures.find(current);
        if (!f)
            return;
        if (!seen.insert(current).second) {
            out.push_back({f, depth, true});
            return;
        }
        out.push_back({f, depth, false});
        for (const auto& in : f->inputs)
            visit(in, depth + 1);
    };
    visit(id, 0);
    return out;
}

std::vector<std::string> closeIds(const FigureSet& figures, const std::string& id, std::size_t max)
{
    std::vector<std::pair<std::size_t, std::string>> ranked;
    const std::size_t limit = std::max<std::size_t>(3, id.size() / 3);
    for (const Figure& f : figures.all()) {
        const std::size_t d = editDistance(id, f.id);
        const bool contains = !id.empty() && (f.id.find(id) != std::string::npos || id.find(f.id) != std::string::npos);
        if (d <= limit || contains)
            ranked.emplace_back(contains ? std::min<std::size_t>(d, 1) : d, f.id);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (const auto& [d, name] : ranked) {
        if (out.size() >= max)
            break;
        out.push_back(name);
    }
    return out;
}

} // namespace tw::scenario
