#include "scenario.h"

#include "base/enumnames.h"
#include "base/units.h"
#include "text/bpe.h"
#include "text/bpetrainer.h"
#include "text/samples.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace tw::scenario {

namespace {

std::string integer(std::uint64_t v) { return formatUnsigned(v); }

void checkRange(std::vector<Error>& errors, const std::string& path, std::uint64_t value, std::uint64_t lo,
                std::uint64_t hi)
{
    if (value < lo || value > hi)
        errors.push_back(errorAt(path, "must be between " + integer(lo) + " and " + integer(hi) + ", got " + integer(value)));
}

void checkNoNul(std::vector<Error>& errors, const std::string& path, const std::string& value)
{
    if (value.find('\0') != std::string::npos)
        errors.push_back(errorAt(path, "must not contain a NUL character (\\u0000)"));
}

} // namespace

namespace {

constexpr std::array kTextKindNames{EnumName{TextSource::Kind::Sample, "sample"}, EnumName{TextSource::Kind::File, "file"},
                                    EnumName{TextSource::Kind::Inline, "inline"}};
constexpr std::array kTokenizerKindNames{EnumName{TokenizerChoice::Kind::Gpt2, "gpt2"},
                                         EnumName{TokenizerChoice::Kind::Trained, "trained"},
                                         EnumName{TokenizerChoice::Kind::File, "file"}};

} // namespace

std::string_view toString(TextSource::Kind kind) { return nameOf(kTextKindNames, kind, "sample"); }
std::optional<TextSource::Kind> textKindFromString(std::string_view s) { return valueOf(kTextKindNames, s); }
std::string_view toString(TokenizerChoice::Kind kind) { return nameOf(kTokenizerKindNames, kind, "gpt2"); }
std::optional<TokenizerChoice::Kind> tokenizerKindFromString(std::string_view s)
{
    return valueOf(kTokenizerKindNames, s);
}

namespace {

// The run's inputs: finite and in a range a real run can have.
void validateRun(std::vector<Error>& errors, const RunSettings& r)
{
    auto written = [](double v) { // as a file writes it: 0.8, 1e+20, -2
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%g", v);
        return std::string(buffer);
    };
    auto range = [&](const char* path, double v, double lo, double hi, const char* what) {
        if (!(std::isfinite(v) && v >= lo && v <= hi))
            errors.push_back(errorAt(path, std::string("must be ") + what + ", got " + written(v)));
    };
    range("run.tokens", r.tokens, 0, kMaxRunTokens, "between 0 and 10^16 tokens");
    if (r.gpuPowerWatts && !(std::isfinite(*r.gpuPowerWatts) && *r.gpuPowerWatts > 0 && *r.gpuPowerWatts <= 5000))
        errors.push_back(errorAt("run.gpu_power_w", "must be above 0 and at most 5,000 W per GPU, got "
                                                        + written(*r.gpuPowerWatts)));
    range("run.host_power_w_per_gpu", r.hostPowerWattsPerGpu, 0, 10000, "between 0 and 10,000 W per GPU");
    range("run.pue", r.pue, 1, 3, "between 1 (no overhead) and 3");
    range("run.price_per_gpu_hour", r.pricePerGpuHour, 0, 10000, "between 0 and 10,000 per GPU-hour");
    // A rate of 0 would be a part that never fails: no checkpoint interval follows from it (the back-to-back
    // figures run.days and run.gpu_hours are the run without failures). 10^5 per 10^6 h: each unit every 10 h.
    auto rate = [&](const char* path, double v, const char* unit) {
        if (!(std::isfinite(v) && v > 0 && v <= 1e5))
            errors.push_back(errorAt(path, std::string("must be above 0 and at most 100,000 interruptions per 10^6 ") + unit
                                               + " (the run without failures is run.days), got " + written(v)));
    };
    rate("run.failures.gpu", r.failures.gpu, "GPU-hours");
    rate("run.failures.gpu_memory", r.failures.gpuMemory, "GPU-hours");
    rate("run.failures.network", r.failures.network, "GPU-hours");
    rate("run.failures.software", r.failures.software, "GPU-hours");
    rate("run.failures.host", r.failures.host, "server-hours");
    const CheckpointSettings& c = r.checkpoint;
    if (!(std::isfinite(c.storageGBpsPerGpu) && c.storageGBpsPerGpu > 0 && c.storageGBpsPerGpu <= 1000))
        errors.push_back(errorAt("run.checkpoint.storage_gb_per_s_per_gpu",
                                 "must be above 0 and at most 1,000 GB/s per GPU, got " + written(c.storageGBpsPerGpu)));
    range("run.checkpoint.restart_s", c.restartSeconds, 0, 7 * 86400, "between 0 and 604,800 s (a week)");
    if (c.intervalSeconds && !(std::isfinite(*c.intervalSeconds) && *c.intervalSeconds > 0 && *c.intervalSeconds <= 1e7))
        errors.push_back(errorAt("run.checkpoint.interval_s", "must be above 0 and at most 10,000,000 s, or \"auto\", got "
                                                                  + written(*c.intervalSeconds)));
    // The ramp's phases: in order, each a whole number of its sequences (the plan's divisions are the
    // phase derivation's to check, run.h simulateRamp).
    double before = 0;
    for (std::size_t i = 0; i < r.batchRamp.size(); ++i) {
        const BatchPhase& p = r.batchRamp[i];
        const std::string at = "run.batch_ramp[" + std::to_string(i) + "]";
        if (!(std::isfinite(p.untilTokens) && p.untilTokens > before && p.untilTokens <= kMaxRunTokens))
            errors.push_back(errorAt(at + ".until", "must be above " + (i == 0 ? std::string("0") : "the phase before's "
                                                                                                      + written(before))
                                                        + " and at most 10^16 tokens, got " + written(p.untilTokens)));
        before = std::isfinite(p.untilTokens) ? std::max(before, p.untilTokens) : before;
        if (p.globalBatchTokens == 0 || p.globalBatchTokens > kMaxGlobalBatchTokens)
            errors.push_back(errorAt(at + ".global_batch_tokens", "must be between 1 and 2^40 tokens, got "
                                                                      + std::to_string(p.globalBatchTokens)));
        if (p.dp > kMaxGpuCount)
            errors.push_back(errorAt(at + ".dp", "must be at most 2^20 replicas (0: the plan's dp), got " + std::to_string(p.dp)));
        if (p.sequenceLength > kMaxSequenceLength)
            errors.push_back(errorAt(at + ".sequence_length", "must be at most 2^20 tokens (0: the batch's T), got "
                                                                  + std::to_string(p.sequenceLength)));
    }
}

} // namespace

std::vector<Error> validate(const Scenario& s)
{
    std::vector<Error> errors;
    checkNoNul(errors, "name", s.name);
    checkNoNul(errors, "description", s.description);

    // Stage 1: the text and the tokenizer.
    switch (s.text.kind) {
    case TextSource::Kind::Sample:
        if (!text::findSample(s.text.sample)) {
            std::string known;
            for (const auto& id : text::sampleIds())
                known += (known.empty() ? "" : " or ") + id;
            errors.push_back(errorAt("text.sample", "unknown sample \"" + s.text.sample + "\" (expected " + known + ")"));
        }
        break;
    case TextSource::Kind::File:
        if (s.text.path.empty())
            errors.push_back(errorAt("text.path", "must name a text file"));
        checkNoNul(errors, "text.path", s.text.path);
        break;
    case TextSource::Kind::Inline:
        if (const std::size_t limit = text::maxTextBytes(); s.text.text.size() > limit)
            errors.push_back(errorAt("text.text", "the text is " + integer(s.text.text.size()) + " B, longer than the "
                                                      + integer(limit) + " B the program tokenizes in one piece"));
        break;
    }
    checkRange(errors, "text.documents", s.text.documents, 1, kMaxDocuments);
    switch (s.tokenizer.kind) {
    case TokenizerChoice::Kind::Gpt2:
        break;
    case TokenizerChoice::Kind::Trained:
        checkRange(errors, "tokenizer.vocab_size", s.tokenizer.trainedVocab, text::kMinTrainVocab, text::kMaxTrainVocab);
        break;
    case TokenizerChoice::Kind::File:
        if (s.tokenizer.path.empty())
            errors.push_back(errorAt("tokenizer.path", "must name a tokenizer.json file"));
        checkNoNul(errors, "tokenizer.path", s.tokenizer.path);
        break;
    }

    // Stage 2: the model, the batch, the GPU.
    for (Error& e : model::validate(s.model))
        errors.push_back(std::move(e));
    checkRange(errors, "batch.sequence_length", s.batch.sequenceLength, 1, kMaxSequenceLength);
    checkRange(errors, "batch.micro_batch", s.batch.microBatch, 1, kMaxMicroBatch);
    checkRange(errors, "batch.global_batch_tokens", s.batch.globalBatchTokens, 1, kMaxGlobalBatchTokens);
    if (s.model.family == model::Family::Gpt2 && s.batch.sequenceLength > s.model.maxPositions
        && s.batch.sequenceLength <= kMaxSequenceLength)
        errors.push_back(errorAt("batch.sequence_length", "must be at most model.max_positions (" + integer(s.model.maxPositions)
                                                         + ") for a gpt2 model (learned positions), got "
                                                         + integer(s.batch.sequenceLength)));
    // The largest activations ([B,T,V] logits, [B,a,T,T] scores, [B,T,d_ff]) in fp32 stay below 2^62 B.
    const double B = double(s.batch.microBatch);
    const double T = double(s.batch.sequenceLength);
    const double widest = std::max({double(s.model.vocabSize), double(s.model.hiddenSize), double(s.model.ffnSize),
                                    double(s.model.heads) * T});
    if (B * T * widest * 4.0 >= std::ldexp(1.0, 62))
        errors.push_back(errorAt("batch.micro_batch", "B = " + integer(s.batch.microBatch) + " sequences of T = "
                                                     + integer(s.batch.sequenceLength)
                                                     + " tokens make tensors of 2^62 bytes or more with this model"));

    if (s.hardware.gpu == "custom") {
        for (Error& e : model::validate(s.hardware.custom, "hardware.custom"))
            errors.push_back(std::move(e));
    } else if (!model::findGpu(s.hardware.gpu)) {
        std::string known;
        for (const auto& g : model::gpuCatalog())
            known += g.id + ", ";
        errors.push_back(errorAt("hardware.gpu", "unknown GPU \"" + s.hardware.gpu + "\" (expected one of " + known + "or custom)"));
    }
    for (Error& e : collective::validate(s.collectives))
        errors.push_back(std::move(e));
    validateRun(errors, s.run);
    checkRange(errors, "hardware.nodes", s.hardware.nodes, 1, kMaxGpuCount);
    checkRange(errors, "hardware.gpus_per_node", s.hardware.gpusPerNode, 1, kMaxGpusPerNode);
    if (s.hardware.nodes >= 1 && s.hardware.gpusPerNode >= 1 && s.hardware.nodes <= kMaxGpuCount
        && s.hardware.gpusPerNode <= kMaxGpusPerNode && s.hardware.gpuCount() > kMaxGpuCount)
        errors.push_back(errorAt("hardware.nodes", integer(s.hardware.nodes) + " nodes × " + integer(s.hardware.gpusPerNode)
                                                  + " GPUs = " + integer(s.hardware.gpuCount()) + " GPUs; the most is "
                                                  + integer(kMaxGpuCount)));
    return errors;
}

void fitPlanToCluster(Scenario& s)
{
    parallel::ParallelPlan& p = s.parallel;
    const std::uint64_t n = s.hardware.gpuCount();
    if (p.pp == 0 || p.tp == 0 || n % (p.pp * p.tp) != 0)
        return;
    p.dp = n / (p.pp * p.tp);
    if (p.ep == 0 || p.dp % p.ep != 0)
        p.ep = 1;
    if (p.shardGroupSize != 0 && p.dp % p.shardGroupSize != 0)
        p.shardGroupSize = 0;
    dropStalePlanParts(s);
    // Several servers need a network: a one-server topology becomes a leaf–spine of such servers.
    if (s.hardware.nodes > 1 && (s.topology.kind == network::TopologyKind::NvSwitchNode
                                 || s.topology.kind == network::TopologyKind::PcieServer)) {
        s.topology.intraNode = s.topology.kind == network::TopologyKind::PcieServer ? network::IntraNode::Pcie
                                                                                     : network::IntraNode::NvSwitch;
        s.topology.kind = network::TopologyKind::LeafSpine;
    }
}

void dropStalePlanParts(Scenario& s)
{
    parallel::ParallelPlan& p = s.parallel;
    const std::uint64_t v = p.schedule == parallel::PipelineSchedule::Interleaved ? p.virtualStages : 1;
    if (!p.layerPartition.empty() && p.layerPartition.size() != p.pp * v)
        p.layerPartition.clear();
    if (p.assignment.empty())
        return;
    bool fits = p.assignment.size() == s.hardware.gpuCount();
    for (const parallel::MeshCoord& c : p.assignment)
        fits = fits && c.dp < p.dp && c.pp < p.pp && c.tp < p.tp;
    if (!fits)
        p.assignment.clear();
}

void setParallelDegree(Scenario& s, parallel::Strategy strategy, std::uint64_t degree)
{
    parallel::ParallelPlan& p = s.parallel;
    const std::uint64_t n = s.hardware.gpuCount();
    switch (strategy) {
    case parallel::Strategy::DP:
        p.dp = degree;
        break;
    case parallel::Strategy::PP:
    case parallel::Strategy::TP:
        (strategy == parallel::Strategy::PP ? p.pp : p.tp) = degree;
        if (p.pp > 0 && p.tp > 0 && n % (p.pp * p.tp) == 0)
            p.dp = n / (p.pp * p.tp);
        break;
    case parallel::Strategy::EP:
        p.ep = degree;
        break;
    }
    if (strategy != parallel::Strategy::EP && (p.ep == 0 || p.dp == 0 || p.dp % p.ep != 0))
        p.ep = 1;
    if (p.shardGroupSize != 0 && (p.dp == 0 || p.dp % p.shardGroupSize != 0))
        p.shardGroupSize = 0;
    // A new mesh shape makes an explicit placement meaningless.
    if (strategy != parallel::Strategy::EP)
        p.assignment.clear();
    dropStalePlanParts(s);
}

std::optional<network::Protocol> nvlinkOfGpu(std::string_view gpuId)
{
    // NVIDIA datasheets: A100 SXM NVLink 3 (600 GB/s both ways), H100 SXM and H200 NVLink 4 (900 GB/s).
    if (gpuId == "a100-40gb" || gpuId == "a100-80gb")
        return network::Protocol::NvLink3;
    if (gpuId == "h100-sxm" || gpuId == "h200")
        return network::Protocol::NvLink4;
    return std::nullopt;
}

NicRate nicRate(const Scenario& s)
{
    const network::TopologySpec& t = s.topology;
    const std::string protocol(network::displayName(t.nicProtocol));
    auto gbps = [](double bytesPerSecond) { return formatCount(bytesPerSecond * 8 / 1e9, 0) + " Gb/s"; };
    if (t.nicBandwidth)
        return {*t.nicBandwidth, "input: " + protocol + " at " + gbps(*t.nicBandwidth) + " (topology.nic_bandwidth)"};
    if (t.nicProtocol != network::Protocol::RoCEv2) {
        const double rate = network::nicBandwidthOf(t);
        return {rate, "auto: " + protocol + " runs at " + gbps(rate)};
    }
    // The server generation is the GPU's NVLink generation (nvlinkOfGpu, above). NVIDIA DGX A100
    // datasheet: 8 single-port ConnectX-6 VPI, 200 Gb/s; DGX H100 (and H200): 8 ConnectX-7 VPI, 400 Gb/s —
    // InfiniBand or Ethernet (RoCE) alike.
    const std::string& gpu = s.hardware.gpu;
    constexpr double Gb = 1e9 / 8;
    const std::optional<network::Protocol> nvlink = nvlinkOfGpu(gpu);
    if (nvlink == network::Protocol::NvLink3)
        return {200 * Gb, "auto: RoCEv2 on A100 servers: 200 Gb/s (DGX A100's ConnectX-6 NICs)"};
    if (nvlink == network::Protocol::NvLink4)
        return {400 * Gb, "auto: RoCEv2 on H100 SXM / H200 servers: 400 Gb/s (DGX H100's ConnectX-7 NICs)"};
    const double rate = network::nicBandwidthOf(t);
    return {rate, "auto: RoCEv2 at " + gbps(rate) + ", a typical port (no server generation is known for GPU \""
                      + gpu + "\"; give topology.nic_bandwidth)"};
}

PcieChoice pcieChoice(const Scenario& s)
{
    using network::Protocol;
    const std::string& gpu = s.hardware.gpu;
    if (s.topology.pcie)
        return {*s.topology.pcie, std::string(network::displayName(*s.topology.pcie)) + " (given)"};
    // The GPUs' datasheets (host interface): V100 SXM2 PCIe Gen3; A100, L40S, RTX 4090 Gen4; H100, H200,
    // MI300X Gen5.
    std::optional<Protocol> g;
    if (gpu == "v100-32gb")
        g = Protocol::PcieGen3;
    else if (gpu == "a100-40gb" || gpu == "a100-80gb" || gpu == "l40s" || gpu == "rtx4090")
        g = Protocol::PcieGen4;
    else if (gpu == "h100-sxm" || gpu == "h100-pcie" || gpu == "h200" || gpu == "mi300x")
        g = Protocol::PcieGen5;
    if (!g)
        return {network::kUnresolvedPcie, "auto: " + std::string(network::displayName(network::kUnresolvedPcie))
                                              + " (no generation is known for GPU \"" + gpu + "\"; give topology.pcie)"};
    const std::string name = model::findGpu(gpu) ? model::findGpu(gpu)->name : gpu;
    return {*g, "auto: " + std::string(network::displayName(*g)) + ", the host interface of the " + name};
}

network::TopologySpec resolvedTopology(const Scenario& s)
{
    network::TopologySpec t = s.topology;
    if (!t.pcie)
        t.pcie = pcieChoice(s).generation;
    if (!t.nvlink)
        t.nvlink = nvlinkOfGpu(s.hardware.gpu).value_or(network::kUnresolvedNvLink);
    if (!t.nicBandwidth)
        t.nicBandwidth = nicRate(s).bytesPerSecond;
    return t;
}

bool swapGpus(Scenario& s, std::uint64_t a, std::uint64_t b)
{
    const std::uint64_t n = s.hardware.gpuCount();
    parallel::ParallelPlan& p = s.parallel;
    if (a >= n || b >= n || p.dp * p.pp * p.tp != n)
        return false;
    if (p.assignment.empty())
        p.assignment = parallel::defaultAssignment(p);
    if (p.assignment.size() != n)
        return false;
    std::swap(p.assignment[a], p.assignment[b]);
    if (p.assignment == parallel::defaultAssignment(p))
        p.assignment.clear(); // back to the default placement
    return true;
}

Result<Scenario> withCatalogueModel(const Scenario& scenario, const std::string& modelId)
{
    const auto catalogue = model::knownModel(modelId);
    if (!catalogue)
        return errorAt("model", "\"" + modelId + "\" is not in the model catalogue");
    Scenario s = scenario;
    model::ModelConfig m = *catalogue;
    // The run's choices stay: precisions and recomputation.
    m.weights = s.model.weights;
    m.activations = s.model.activations;
    m.gradients = s.model.gradients;
    m.optimizerState = s.model.optimizerState;
    m.recompute = s.model.recompute;
    m.attention = s.model.attention;
    const bool depthChanged = m.layers != s.model.layers;
    s.model = m;
    // GPT-2-shaped models read the GPT-2 vocabulary; Llama and Mixtral bring their own V.
    if (m.family != model::Family::Gpt2)
        s.modelVocabFromTokenizer = false;
    if (m.moe.experts == 0 && s.parallel.ep > 1)
        setParallelDegree(s, parallel::Strategy::EP, 1);
    if (depthChanged) {
        s.parallel.layerPartition.clear();
        if (s.parallel.layerForwardSeconds.size() > 1)
            s.parallel.layerForwardSeconds.clear();
    }
    dropStalePlanParts(s);
    return s;
}

Result<Scenario> withFabric(const Scenario& scenario, network::TopologyKind kind)
{
    using network::TopologyKind;
    Scenario s = scenario;
    const std::uint64_t gpus = s.hardware.nodes * s.hardware.gpusPerNode;
    if (kind == TopologyKind::PcieServer || kind == TopologyKind::NvSwitchNode) {
        if (gpus > kMaxServerGpus)
            return errorAt("topology.kind", "one server holds at most " + std::to_string(kMaxServerGpus)
                                                + " GPUs; the cluster has " + std::to_string(gpus)
                                                + ". Make it smaller first (GPUs or stage 3).");
        s.hardware.nodes = 1;
        s.hardware.gpusPerNode = gpus;
    } else if (kind == TopologyKind::PaperTestbed) {
        s.hardware.nodes = gpus;
        s.hardware.gpusPerNode = 1;
    } else if (s.hardware.nodes == 1 && gpus >= 2 && gpus % 2 == 0) {
        s.hardware.nodes = 2;
        s.hardware.gpusPerNode = gpus / 2;
    }
    s.topology.kind = kind;
    if (kind == TopologyKind::PaperTestbed) {
        // The testbed's network is 10 Gb/s Ethernet with TCP and no GPUDirect.
        s.topology.nicProtocol = network::Protocol::Ethernet10G;
        s.topology.gpuDirectP2P = false;
    }
    fitPlanToCluster(s);
    s.topology.kind = kind; // fitting keeps a one-server kind only for one node
    return s;
}

std::string catalogueModelOf(const model::ModelConfig& m)
{
    for (const std::string& id : model::knownModelIds()) {
        const auto c = model::knownModel(id);
        if (c && c->family == m.family && c->layers == m.layers && c->hiddenSize == m.hiddenSize && c->heads == m.heads
            && c->kvHeads == m.kvHeads && c->ffnSize == m.ffnSize && c->moe.experts == m.moe.experts
            && (m.moe.experts == 0 || c->moe.topK == m.moe.topK))
            return id;
    }
    return {};
}

} // namespace tw::scenario
