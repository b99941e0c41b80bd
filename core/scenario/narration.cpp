#include "narration.h"

#include "derive.h"
#include "scenario.h"

#include "base/papervalues.h"
#include "collective/nccl.h"
#include "collective/schedule.h"
#include "network/breakdown.h"
#include "network/simulate.h"
#include "fabric/topology.h"
#include "parallel/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tw::scenario {

namespace {

// How a number is written in a sentence.
enum class Style {
    Number,  // "768", "2.35"
    Count,   // "298 tokens", "1 token" (with a noun)
    Bytes,   // "699 bytes", "50.33 MB"
    Seconds, // "399 ms"
    Percent, // "45.2 %"
    Way,     // "8-way"
    BitRate, // "10 Gb/s" (the value in B/s)
};

std::string significant(double v, int digits)
{
    if (v == 0 || !std::isfinite(v))
        return formatCount(v);
    const int magnitude = int(std::floor(std::log10(std::fabs(v))));
    const int decimals = std::max(0, digits - 1 - magnitude);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0')
            s.pop_back();
        if (s.back() == '.')
            s.pop_back();
    }
    // Thousands separators on the whole part ("1,536").
    const auto point = s.find('.');
    const std::string whole = s.substr(0, point);
    const bool negative = !whole.empty() && whole[0] == '-';
    return (negative ? "-" : "") + formatInteger(std::llabs(std::stoll(whole))) + (point == std::string::npos ? "" : s.substr(point));
}

std::string bitRate(double bytesPerSecond)
{
    const double bits = bytesPerSecond * 8;
    if (bits >= 1e12)
        return significant(bits / 1e12, 3) + " Tb/s";
    if (bits >= 1e9)
        return significant(bits / 1e9, 3) + " Gb/s";
    if (bits >= 1e6)
        return significant(bits / 1e6, 3) + " Mb/s";
    return significant(bits / 1e3, 3) + " kb/s";
}

// The figures a narration can cite, and the set it fills with the ones it did.
class Sources {
public:
    Sources(const Derivation& d, const NetworkStage* network, const network::StepSimulation* simulation,
            const DisplayUnits& units, FigureSet& out)
        : m_d(d), m_network(network), m_simulation(simulation), m_units(units), m_out(out)
    {
    }

    [[nodiscard]] const Figure* find(const std::string& id) const
    {
        if (const Figure* f = m_d.figures.find(id))
            return f;
        if (m_network)
            if (const Figure* f = m_network->figures.find(id))
                return f;
        if (m_simulation)
            if (const Figure* f = m_simulation->figures.find(id))
                return f;
        return m_out.find(id);
    }
    [[nodiscard]] bool has(const std::string& id) const
    {
        const Figure* f = find(id);
        return f && std::isfinite(f->value);
    }
    [[nodiscard]] double value(const std::string& id) const
    {
        const Figure* f = find(id);
        return f ? f->value : std::nan("");
    }
    // Copies a cited figure into the narration's set.
    void cite(const Figure& f) { m_out.add(f); }
    // Adds one of the narration's own figures; its inputs are copied in too.
    const Figure& own(Figure f)
    {
        for (const std::string& in : f.inputs)
            if (const Figure* source = find(in))
                m_out.add(*source);
        return m_out.add(std::move(f));
    }
    [[nodiscard]] const DisplayUnits& units() const { return m_units; }

private:
    const Derivation& m_d;
    const NetworkStage* m_network;
    const network::StepSimulation* m_simulation;
    DisplayUnits m_units;
    FigureSet& m_out;
};

std::string written(double v, Style style, const std::string& singular, const std::string& plural, const DisplayUnits& units)
{
    switch (style) {
    case Style::Number: return formatCount(v, 2);
    case Style::Count: return countNoun(v, singular, plural);
    case Style::Bytes: {
        // Up to 9,999 bytes in bytes ("1,536 bytes"), the rest in the viewer's units.
        return std::fabs(v) < 10000 ? countNoun(v, "byte", "bytes") : formatBytes(v, units);
    }
    case Style::Seconds: return formatSeconds(v, 3);
    case Style::Percent: return formatPercent(v);
    case Style::Way: return formatCount(v, 0) + "-way";
    case Style::BitRate: return bitRate(v);
    }
    return formatCount(v);
}

// Builds one sentence; a number whose figure is missing (or not finite) spoils it, and the stage
// leaves the sentence out rather than print a hole.
class Sentence {
public:
    explicit Sentence(Sources& sources)
        : m_sources(sources)
    {
    }

    Sentence& say(const std::string& words)
    {
        if (words.empty())
            return *this;
        if (!m_s.spans.empty() && m_s.spans.back().figure.empty())
            m_s.spans.back().text += words;
        else
            m_s.spans.push_back({words, {}});
        return *this;
    }
    Sentence& num(const std::string& id, Style style, const std::string& singular = {}, const std::string& plural = {})
    {
        const Figure* f = m_sources.find(id);
        if (!f || !std::isfinite(f->value)) {
            m_ok = false;
            return *this;
        }
        m_sources.cite(*f);
        m_s.spans.push_back({written(f->value, style, singular, plural, m_sources.units()), id});
        return *this;
    }
    // A number of the narration's own (its formula names the figures it came from).
    Sentence& own(Figure figure, Style style, const std::string& singular = {}, const std::string& plural = {})
    {
        if (!std::isfinite(figure.value)) {
            m_ok = false;
            return *this;
        }
        const Figure& f = m_sources.own(std::move(figure));
        m_s.spans.push_back({written(f.value, style, singular, plural, m_sources.units()), f.id});
        return *this;
    }
    [[nodiscard]] bool ok() const { return m_ok; }
    [[nodiscard]] const NarrationSentence& sentence() const { return m_s; }

private:
    Sources& m_sources;
    NarrationSentence m_s;
    bool m_ok = true;
};

// After a GPU's capacity in bytes: a datasheet's "80 GB" counts GiB (2^30 B), so 80 of them are 85.9 GB
// (empty when the capacity is not a whole number of GiB).
std::string binaryCapacityNote(double bytes)
{
    const double gib = bytes / 1073741824.0;
    if (bytes <= 0 || gib != std::floor(gib))
        return "";
    return " (the datasheet's \u201c" + formatUnsigned(std::uint64_t(gib)) + " GB\u201d counts GiB of 2\u00b3\u2070 bytes)";
}

void keep(StageNarration& stage, const Sentence& s)
{
    if (s.ok() && !s.sentence().spans.empty())
        stage.sentences.push_back(s.sentence());
}

const char* const kStrategyIds[] = {"dp", "pp", "tp", "ep"};
const char* const kStrategyAdjectives[] = {"data-parallel", "pipeline", "tensor-parallel", "expert-parallel"};
const char* const kStrategyTraffic[] = {"Data-parallel", "Pipeline", "Tensor-parallel", "Expert-parallel"};

std::string modelName(const Derivation& d)
{
    return d.model.name.empty() ? std::string("The model") : d.model.name;
}

// Stage 1: bytes, words, tokens, tokens per word, sequences of T.
StageNarration textStage(const Derivation& d, Sources& src)
{
    StageNarration st{Stage::Text, "Text → tokens", {}};
    Sentence a(src);
    a.say("Your text is ").num("text.bytes", Style::Bytes).say(": ").num("text.words", Style::Count, "word", "words");
    a.say(" on ").num("text.lines", Style::Count, "line", "lines").say(".");
    keep(st, a);

    Sentence b(src);
    b.say("Tokenized with " + d.tokenizer().name() + ", it is ").num("tokens.count", Style::Count, "token", "tokens");
    if (src.has("tokens.per_word") && src.value("text.words") > 0)
        b.say(", ").num("tokens.per_word", Style::Count, "token per word", "tokens per word");
    b.say(", each an id from a vocabulary of V = ").num("tokenizer.vocab_size", Style::Number).say(".");
    keep(st, b);

    Sentence c(src);
    c.say("Training reads sequences of T = ").num("dataset.T", Style::Count, "token", "tokens").say(": ");
    if (src.value("dataset.sequences") < 1)
        c.say("this text fills ").num("dataset.sequences", Style::Number).say(" of one");
    else
        c.say("this text makes ").num("dataset.sequences", Style::Count, "sequence", "sequences");
    c.say(", and a micro-batch stacks B = ").num("dataset.B", Style::Count, "sequence", "sequences").say(".");
    keep(st, c);
    return st;
}

// Stage 2: d, bytes of activations per token, the hidden state, parameters, memory on one GPU.
StageNarration tensorStage(const Scenario& s, const Derivation& d, Sources& src)
{
    StageNarration st{Stage::Tensors, "Tensors", {}};
    const double hidden = src.value("model.hidden_size"), sAct = src.value("model.bytes.activations");
    Sentence a(src);
    a.say("At d = ").num("model.hidden_size", Style::Number).say(" and ").num("model.bytes.activations", Style::Bytes);
    a.say(" per number (" + std::string(model::toString(s.model.activations)) + "), each token becomes ");
    a.own({"narration.activation_bytes_per_token", "Activation bytes per token per layer", hidden * sAct, "B",
           "d·s_act = " + formatCount(hidden) + "·" + formatCount(sAct) + " = " + formatCount(hidden * sAct) + " B",
           {"model.hidden_size", "model.bytes.activations"}},
          Style::Bytes);
    a.say(" of activations at every layer");
    if (s.model.fp8Recipe != model::Fp8Recipe::None)
        a.say("; its linear layers multiply in FP8 after casting their inputs ("
              + std::string(s.model.fp8Recipe == model::Fp8Recipe::Delayed ? "delayed" : "current")
              + " scaling, as Transformer Engine trains), attention and the head in "
              + std::string(model::toString(s.model.activations)));
    a.say(".");
    keep(st, a);

    Sentence b(src);
    b.say("A micro-batch of B·T = ").num("compute.tokens_per_microbatch", Style::Count, "token", "tokens");
    b.say(" is a hidden state [B,T,d] of ").num("tensor.hidden_bytes", Style::Bytes);
    b.say(", flowing through L = ").num("model.layers", Style::Count, "block", "blocks").say(".");
    keep(st, b);

    Sentence c(src);
    c.say(modelName(d) + " has P = ").num("model.parameters", Style::Count, "parameter", "parameters");
    if (src.has("model.active_parameters") && src.value("model.active_parameters") < src.value("model.parameters"))
        c.say(", of which ").num("model.active_parameters", Style::Number).say(" work on each token");
    c.say(".");
    keep(st, c);

    Sentence m(src);
    const std::string gpu = d.gpu.name.empty() ? std::string("GPU") : d.gpu.name;
    if (src.value("memory.fits") >= 1) {
        m.say("Trained on one " + gpu + ", it needs ").num("memory.total_bytes", Style::Bytes).say(" of its ");
        m.num("memory.gpu_capacity_bytes", Style::Bytes).say(binaryCapacityNote(d.gpu.memoryBytes)).say(": ");
        m.num("memory.model_states_bytes", Style::Bytes);
        m.say(" for weights, gradients and optimizer state, ").num("memory.activations_bytes", Style::Bytes);
        m.say(" for activations");
        if (d.memory && src.has("memory.plan.peak_bytes")) {
            // Where stages 2 and 3 meet: the same model, two different counts, and why.
            m.say("; stage 3 counts ").num("memory.plan.peak_bytes", Style::Bytes).say(" on its largest GPU");
            if (!parallel::attentionScoresStored(d.model, d.gpu))
                m.say(", as its plan runs fused (flash) attention, which stores none of the [B,a,T,T] scores kept "
                      "here as in the paper's Table 2 (its 5as/h term)");
            else
                m.say(", as its plan splits the model, the batch or the optimizer state over its GPUs");
        }
        m.say(".");
    } else {
        m.say("On one " + gpu + " it would need ").num("memory.total_bytes", Style::Bytes).say(" (");
        m.num("memory.model_states_bytes", Style::Bytes).say(" of weights, gradients and optimizer state, ");
        m.num("memory.activations_bytes", Style::Bytes).say(" of activations), more than the GPU's ");
        m.num("memory.gpu_capacity_bytes", Style::Bytes);
        if (d.memory && src.has("memory.plan.peak_bytes")) {
            // Plan-aware: what stage 3's plan leaves on its largest GPU.
            m.say(": stage 3's plan splits it, and its largest GPU holds ").num("memory.plan.peak_bytes", Style::Bytes);
            m.say(d.memory->fits ? ", which fits." : ", which still does not fit.");
        } else {
            m.say(": stage 3 has to split it.");
        }
    }
    keep(st, m);
    return st;
}

// What a sharding splits between the data-parallel replicas ("" for DDP).
std::string shardingClause(parallel::Sharding sharding)
{
    switch (sharding) {
    case parallel::Sharding::Ddp: return {};
    case parallel::Sharding::Zero1: return "ZeRO-1 shards the optimizer state across them";
    case parallel::Sharding::Zero2: return "ZeRO-2 shards the optimizer state and gradients across them";
    case parallel::Sharding::Zero3: return "ZeRO-3 shards weights, gradients and optimizer state across them";
    case parallel::Sharding::FsdpFull: return "FSDP shards weights, gradients and optimizer state across them";
    case parallel::Sharding::FsdpHybrid: return "hybrid FSDP shards the model states inside each shard group";
    }
    return {};
}

// GPU ids as ranges ("0–7, 16–23"), at most `limit` ranges then "…".
std::string gpuRanges(std::vector<std::uint64_t> gpus, std::size_t limit = 3)
{
    std::sort(gpus.begin(), gpus.end());
    std::string out;
    std::size_t ranges = 0;
    for (std::size_t i = 0; i < gpus.size();) {
        std::size_t j = i;
        while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1)
            ++j;
        if (ranges++ == limit)
            return out + ", …";
        out += (out.empty() ? "" : ", ") + formatUnsigned(gpus[i]) + (j > i ? "–" + formatUnsigned(gpus[j]) : "");
        i = j + 1;
    }
    return out;
}

// Stage 3's memory: every GPU fits (the largest named), or which GPUs overflow and by how much.
Sentence memorySentence(const Derivation& d, Sources& src)
{
    const parallel::PlanMemory& pm = *d.memory;
    Sentence m(src);
    std::vector<std::size_t> over;
    std::uint64_t overGpus = 0;
    for (std::size_t r = 0; r < pm.roles.size(); ++r)
        if (!pm.roles[r].fits) {
            over.push_back(r);
            overGpus += pm.roles[r].gpus;
        }
    if (over.empty()) {
        m.say("Every GPU fits: the largest, on stage " + formatUnsigned(pm.peakStage) + ", holds ");
        m.num("memory.plan.peak_bytes", Style::Bytes).say(" plus a reserve of ").num("memory.plan.reserve_bytes", Style::Bytes);
        m.say(" of its ").num("memory.gpu_capacity_bytes", Style::Bytes).say(".");
        return m;
    }
    m.own({"narration.memory_gpus_over", "GPUs that do not fit", double(overGpus), "",
           "GPUs of the stages whose total + reserve exceeds the capacity = " + formatUnsigned(overGpus), {"memory.plan.fits"}},
          Style::Count, "GPU", "GPUs");
    m.say(overGpus == 1 ? " does not fit in its " : " do not fit in their ").num("memory.gpu_capacity_bytes", Style::Bytes).say(": ");
    // The worst stages first, three at most.
    std::sort(over.begin(), over.end(), [&](std::size_t a, std::size_t b) { return pm.roles[a].total > pm.roles[b].total; });
    const std::size_t shown = std::min<std::size_t>(over.size(), 3);
    std::vector<std::vector<std::uint64_t>> gpusOf(pm.roles.size());
    for (std::size_t g = 0; g < pm.roleOfGpu.size(); ++g)
        gpusOf[pm.roleOfGpu[g]].push_back(g);
    for (std::size_t i = 0; i < shown; ++i) {
        const std::size_t r = over[i];
        const std::string id = "memory.plan.stage" + std::to_string(r) + ".";
        const double excess = pm.roles[r].total + pm.keptFreeBytes() - pm.capacityBytes;
        if (i > 0)
            m.say(i + 1 == shown && over.size() == shown ? " and " : ", ");
        m.say("stage " + std::to_string(r) + " (GPU" + (gpusOf[r].size() == 1 ? " " : "s ") + gpuRanges(gpusOf[r]) + ") needs ");
        m.own({"narration.memory_stage" + std::to_string(r) + "_over_bytes",
               "Stage " + std::to_string(r) + ": memory over the capacity", excess, "B",
               "total + reserve + allocator headroom − capacity = " + formatBytes(pm.roles[r].total) + " + "
                   + formatBytes(pm.reserveBytes) + " + " + formatBytes(pm.allocatorHeadroomBytes) + " − "
                   + formatBytes(pm.capacityBytes) + " = " + formatBytes(excess),
               {id + "total_bytes", "memory.plan.reserve_bytes", "memory.plan.allocator_headroom_bytes",
                "memory.gpu_capacity_bytes"}},
              Style::Bytes);
        m.say(" more");
    }
    if (over.size() > shown)
        m.say(", and " + std::to_string(over.size() - shown) + " more stages");
    m.say(". Shard more (ZeRO, TP, PP) or recompute activations.");
    return m;
}

// "The N GPUs on M nodes run d data × p pipeline × t tensor parallelism (with e expert parallelism)."
Sentence layoutSentence(const parallel::ParallelPlan& p, Sources& src)
{
    const std::uint64_t degrees[] = {p.dp, p.pp, p.tp, p.ep};
    const bool ep = p.ep > 1;
    Sentence a(src);
    a.say("The ").num("plan.gpus", Style::Count, "GPU", "GPUs").say(" on ").num("plan.nodes", Style::Count, "node", "nodes");
    a.say(" run ");
    const char* const kinds[] = {"data", "pipeline", "tensor"};
    bool first = true;
    for (int i = 0; i < 3; ++i) {
        if (degrees[i] <= 1)
            continue;
        if (!first)
            a.say(" × ");
        a.num("plan." + std::string(kStrategyIds[i]), Style::Way).say(std::string(" ") + kinds[i]);
        first = false;
    }
    a.say(" parallelism");
    if (ep)
        a.say(", with ").num("plan.ep", Style::Way).say(" expert parallelism inside the data-parallel groups");
    a.say(".");
    return a;
}

// What each data-parallel replica is: the whole model on one GPU, or a group of pp·tp GPUs (sharded how).
Sentence replicaSentence(const Scenario& s, const parallel::ParallelPlan& p, Sources& src)
{
    const bool pp = p.pp > 1, tp = p.tp > 1;
    Sentence b(src);
    b.say("Each of the ").num("plan.dp", Style::Count, "replica", "replicas");
    if (!pp && !tp) {
        b.say(" holds a whole copy of the model and trains its own micro-batches");
    } else {
        const double perReplica = double(p.pp * p.tp);
        b.say(", a group of ");
        b.own({"narration.gpus_per_replica", "GPUs per model replica", perReplica, "",
               "pp·tp = " + formatUnsigned(p.pp) + "·" + formatUnsigned(p.tp) + " = " + formatCount(perReplica),
               {"plan.pp", "plan.tp"}},
              Style::Count, "GPU", "GPUs");
        b.say(", holds one copy of the model and trains its own micro-batches");
    }
    if (const std::string sharded = shardingClause(s.parallel.sharding); !sharded.empty())
        b.say(" (" + sharded + ")");
    b.say(".");
    return b;
}

// Where a token's activations live: on its GPU, split over its TP group, or down the pipeline stages.
Sentence activationSentence(const parallel::ParallelPlan& p, Sources& src)
{
    const bool pp = p.pp > 1, tp = p.tp > 1, ep = p.ep > 1;
    Sentence c(src);
    const double hidden = src.value("model.hidden_size");
    auto columns = [&](Sentence& sentence) {
        sentence.own({"narration.tp_columns", "Hidden columns per tensor-parallel GPU", hidden / double(p.tp), "",
                      "d / tp = " + formatCount(hidden) + " / " + formatUnsigned(p.tp) + " = " + formatCount(hidden / double(p.tp)),
                      {"model.hidden_size", "plan.tp"}},
                     Style::Number);
        sentence.say(" of the d = ").num("model.hidden_size", Style::Number).say(" columns each");
    };
    if (!pp && !tp) {
        c.say("A token's activations never leave the GPU that trains it");
        c.say(ep ? ", except in the MoE layers, where an All-to-All takes it to its experts' GPUs and back."
                 : ": only the gradients travel.");
    } else if (!pp) {
        c.say("Inside every layer a token's activations are split over the ").num("plan.tp", Style::Count, "GPU", "GPUs");
        c.say(" of its tensor-parallel group, ");
        columns(c);
        c.say(".");
    } else {
        c.say("A token's activations travel down the ").num("plan.pp", Style::Count, "pipeline stage", "pipeline stages");
        if (tp) {
            c.say("; in each, ").num("plan.tp", Style::Count, "GPU", "GPUs").say(" split every layer, ");
            columns(c);
        } else {
            c.say(", one GPU each");
        }
        c.say(": ").num("pp.boundary_bytes_fwd", Style::Bytes).say(" of a micro-batch's activations cross each boundary.");
    }

    return c;
}

// The strategy whose traffic is the largest for the busiest GPU: its bytes, calls, payload and how often.
void keepBiggestTraffic(StageNarration& st, const Derivation& d, Sources& src)
{
    // The strategy whose traffic is the largest for the busiest GPU.
    int biggest = -1;
    for (int i = 0; i < parallel::kStrategyCount; ++i) {
        const parallel::StrategySignature& sig = d.stage3->comm.signature[std::size_t(i)];
        if (sig.present && sig.bytesPerGpuPerStep > 0
            && (biggest < 0 || sig.bytesPerGpuPerStep > d.stage3->comm.signature[std::size_t(biggest)].bytesPerGpuPerStep))
            biggest = i;
    }
    if (biggest >= 0) {
        const parallel::StrategySignature& sig = d.stage3->comm.signature[std::size_t(biggest)];
        const std::string id = kStrategyIds[biggest];
        Sentence e(src);
        e.say(std::string(kStrategyTraffic[biggest]) + " traffic is the largest: the busiest GPU sends ");
        e.num(id + ".bytes_per_gpu_per_step", Style::Bytes).say(" per optimizer step");
        if (src.has(id + ".calls_per_gpu_per_step"))
            e.say(", in ").num(id + ".calls_per_gpu_per_step", Style::Count, "call", "calls");
        // The payload figure is the call carrying most of the strategy's bytes, not always the largest.
        if (src.has(id + ".payload_bytes")) {
            e.say(src.value(id + ".calls_per_gpu_per_step") > 1 ? ", the main one of " : " of ").num(id + ".payload_bytes", Style::Bytes);
            if (const std::string paper = paperRounding(id + ".payload_bytes", src.value(id + ".payload_bytes")); !paper.empty())
                e.say(" (the paper, " + paper + ")");
        }
        // How often, without the details ("8× per layer per micro-batch (ReduceScatter + …)").
        const std::string often = sig.frequency.substr(0, std::min(sig.frequency.find(" ("), sig.frequency.find(';')));
        if (!often.empty())
            e.say(", " + often);
        e.say(".");
        keep(st, e);
    }
}

// Stage 3: the plan (DP × PP × TP (× EP)), where a token's activations live, the biggest collective.
StageNarration gpuStage(const Scenario& s, const Derivation& d, Sources& src)
{
    StageNarration st{Stage::Gpus, "GPUs", {}};
    if (!d.stage3) {
        Sentence a(src);
        a.say("This plan cannot run on the ").num("hardware.gpu_count", Style::Count, "GPU", "GPUs").say(": ");
        a.say(d.planErrors.empty() ? std::string("stage 3 says why") : d.planErrors.front().message);
        a.say(".");
        keep(st, a);
        Sentence b(src);
        b.say("Change the degrees in stage 3; stages 4 and 5 wait for a plan that can run.");
        keep(st, b);
        return st;
    }
    const parallel::ParallelPlan& p = d.stage3->plan;
    if (p.dp <= 1 && p.pp <= 1 && p.tp <= 1) {
        Sentence a(src);
        a.say("The model trains on ").num("plan.gpus", Style::Count, "GPU", "GPUs");
        a.say(" without parallelism: no GPU waits for another, and nothing crosses a wire.");
        keep(st, a);
        if (d.memory && !d.memory->roles.empty())
            keep(st, memorySentence(d, src));
        return st;
    }
    keep(st, layoutSentence(p, src));
    if (p.dp > 1)
        keep(st, replicaSentence(s, p, src));

    const Sentence c = activationSentence(p, src); // built (its figures cited) whether it is kept or not

    // Memory: a GPU that overflows is news and takes the place of where the activations travel; a plan
    // that fits says so when the stage has room left (four sentences at most).
    const bool overflows = d.memory && !d.memory->roles.empty() && !d.memory->fits;
    if (overflows)
        keep(st, memorySentence(d, src));
    else
        keep(st, c);
    keepBiggestTraffic(st, d, src);
    if (!overflows && d.memory && !d.memory->roles.empty() && st.sentences.size() < 4)
        keep(st, memorySentence(d, src));
    return st;
}

std::string algorithmName(collective::Algorithm a)
{
    std::string name(collective::toString(a));
    std::replace(name.begin(), name.end(), '-', ' ');
    return name;
}

// Stage 4: the plan's call that moves the most bytes, its algorithm, steps and bytes per rank
// against the closed form, its α–β time.
StageNarration collectiveStage(const Derivation& d, Sources& src)
{
    StageNarration st{Stage::Collectives, "Collectives", {}};
    if (!d.stage3 || !d.stage4) {
        Sentence a(src);
        a.say("Stage 4 plays the collectives of a plan that can run; stage 3 says why this one cannot.");
        keep(st, a);
        return st;
    }
    // The call moving the most bytes per step (the one stage 4 plays first).
    const collective::BoundCall* chosen = nullptr;
    for (const collective::BoundCall& b : d.stage4->calls)
        if (b.counted && (!chosen || b.stepWireBytes > chosen->stepWireBytes))
            chosen = &b;
    if (!chosen) {
        Sentence a(src);
        a.say("No collective runs in this plan: with ").num("plan.gpus", Style::Count, "GPU", "GPUs");
        a.say(" and no parallelism, no byte leaves a GPU.");
        keep(st, a);
        Sentence b(src);
        b.say("Choose more GPUs or a parallel degree in stage 3 to see one played step by step.");
        keep(st, b);
        return st;
    }
    const parallel::CollectiveCall& call = d.stage3->comm.calls[chosen->call];
    const collective::ScheduleSpec& spec = chosen->spec;
    const int strategy = int(call.strategy);
    const std::string sid = kStrategyIds[strategy];
    const std::string opName(collective::displayName(spec.op));
    std::string what = call.what.substr(0, call.what.find(';'));
    if (what.find(opName) == std::string::npos)
        what = opName + " (" + what + ")";
    const std::string algo = algorithmName(spec.algorithm);

    std::vector<std::string> payloadInputs;
    if (src.has(sid + ".payload_bytes") && src.value(sid + ".payload_bytes") == call.payloadBytes)
        payloadInputs.push_back(sid + ".payload_bytes");
    Sentence a(src);
    a.say(std::string("Stage 4 plays the call that moves the most bytes, the ") + kStrategyAdjectives[strategy] + " " + what + ": ");
    a.own({"narration.call.bytes", "Payload M of the call stage 4 plays", spec.bytes, "B",
           call.formula.empty() ? "M = " + formatCount(spec.bytes) + " B" : call.formula, payloadInputs},
          Style::Bytes);
    a.say(" over ");
    a.own({"narration.call.ranks", "Ranks N of the call stage 4 plays", double(spec.ranks), "",
           "the call's group: N = " + formatUnsigned(spec.ranks) + " GPUs", {"plan." + sid}},
          Style::Count, "GPU", "GPUs");
    // An NCCL call (auto or an NCCL algorithm): stage 4 plays the textbook schedule it stands for.
    const std::string ncclPick = chosen->nccl
                                     ? std::string(nccl::algorithmLabel(chosen->prediction))
                                           + (chosen->prediction.pointToPoint
                                                  ? std::string()
                                                  : "/" + std::string(nccl::toString(chosen->prediction.protocol)))
                                     : std::string();
    if (chosen->nccl)
        a.say(", which NCCL runs as " + ncclPick + "; stage 4 plays the textbook " + algo + " schedule it stands for, in ");
    else
        a.say(", with the " + algo + " algorithm in ");
    a.own({"narration.call.steps", "Steps of the call's schedule", double(chosen->steps), "",
           "counted from the " + algo + " " + opName + " schedule of N = " + formatUnsigned(spec.ranks)
               + " ranks: " + formatUnsigned(chosen->steps) + " steps",
           {"narration.call.ranks", "narration.call.bytes"}},
          Style::Count, "step", "steps");
    a.say(".");
    keep(st, a);

    Sentence b(src);
    b.say("In each step a GPU sends at most one message and receives at most one; the busiest GPU sends ");
    b.own({"narration.call.rank_bytes", "Bytes the busiest rank sends in the call", chosen->maxRankSentBytes, "B",
           "Σ of the busiest rank's transfers in the " + algo + " schedule = " + formatCount(chosen->maxRankSentBytes) + " B",
           {"narration.call.ranks", "narration.call.bytes"}},
          Style::Bytes);
    b.say(" in all.");
    keep(st, b);

    const collective::ClosedForm closed = collective::closedForm(spec);
    if (closed.perRankSentBytes) {
        const double cf = *closed.perRankSentBytes;
        Sentence c(src);
        c.say("The closed form (" + closed.formula + ") gives ");
        c.own({"narration.call.closed_rank_bytes", "Closed form: bytes per rank", cf, "B",
               closed.formula + " with N = " + formatUnsigned(spec.ranks) + ", M = " + formatCount(spec.bytes) + " B: "
                   + formatCount(cf) + " B",
               {"narration.call.ranks", "narration.call.bytes"}},
              Style::Bytes);
        const bool same = std::fabs(cf - chosen->maxRankSentBytes) <= 1e-9 * std::max(1.0, std::fabs(cf));
        c.say(same ? ", exactly what the schedule counts."
                   : ", what the schedule counts up to its uneven chunks (M is not a multiple of N bytes).");
        keep(st, c);
    }

    Sentence t(src);
    if (chosen->nccl) {
        // The time is NCCL's own prediction on the call's group (docs/nccl.md), not the α–β of the link.
        t.say("NCCL's own model predicts ");
        t.own({"narration.call.seconds", "NCCL's predicted time of the call", chosen->timeSeconds, "s",
               chosen->how + ": latency + bytes / NCCL's bandwidth = " + formatSeconds(chosen->timeSeconds)
                   + " (NCCL 2.30.7's tuning model, docs/nccl.md)",
               {"narration.call.bytes", "narration.call.ranks"}},
              Style::Seconds);
        t.say(" for it on this fabric.");
    } else {
        t.say("At α = ").num("collective.alpha", Style::Seconds).say(" per message and β = ");
        t.num("collective.bandwidth", Style::BitRate).say(" it takes ");
        t.own({"narration.call.seconds", "α–β time of the call", chosen->timeSeconds, "s",
               "Σ over the " + formatUnsigned(chosen->steps) + " steps of (α + largest message / β) = "
                   + formatSeconds(chosen->timeSeconds),
               {"narration.call.steps", "collective.alpha", "collective.bandwidth"}},
              Style::Seconds);
        t.say(".");
    }
    keep(st, t);
    return st;
}

// The fabric in a few words, with the cluster's numbers.
void sayFabric(Sentence& s, const Scenario& scenario)
{
    using network::TopologyKind;
    switch (scenario.topology.kind) {
    case TopologyKind::NvSwitchNode:
        s.say("an NVSwitch node of ").num("plan.gpus", Style::Count, "GPU", "GPUs");
        break;
    case TopologyKind::PcieServer:
        s.say("a PCIe server of ").num("plan.gpus", Style::Count, "GPU", "GPUs");
        break;
    case TopologyKind::LeafSpine:
        s.say("a leaf–spine fabric of ").num("plan.nodes", Style::Count, "server", "servers").say(" with ");
        s.num("plan.gpus_per_node", Style::Count, "GPU", "GPUs");
        s.say(" each and " + std::string(network::displayName(scenario.topology.nicProtocol)) + " NICs");
        break;
    case TopologyKind::ThreeTier:
        s.say("a three-tier fabric (leaf–spine pods joined by core switches) of ");
        s.num("plan.nodes", Style::Count, "server", "servers").say(" with ");
        s.num("plan.gpus_per_node", Style::Count, "GPU", "GPUs");
        s.say(" each and " + std::string(network::displayName(scenario.topology.nicProtocol)) + " NICs");
        break;
    case TopologyKind::PaperTestbed:
        s.say("the paper's testbed, ").num("plan.nodes", Style::Count, "single-GPU server", "single-GPU servers");
        s.say(" on 10 Gb/s Ethernet");
        break;
    }
}

// Stage 5: the fabric, the step time, the communication share, the busiest link, MFU.
StageNarration wireStage(const Scenario& scenario, const Derivation& d, const NetworkStage* network,
                         const network::StepSimulation* simulation, Sources& src)
{
    StageNarration st{Stage::Wire, "Wire", {}};
    if (!d.stage3) {
        Sentence a(src);
        a.say("Stage 5 simulates a plan that can run; stage 3 says why this one cannot.");
        keep(st, a);
        return st;
    }
    if (!network || !simulation) {
        Sentence a(src);
        a.say("Stage 5 simulates one training step of the whole cluster on ");
        sayFabric(a, scenario);
        a.say(", flow by flow.");
        keep(st, a);
        Sentence b(src);
        b.say("Its step time and communication share appear here once the simulation has run.");
        keep(st, b);
        return st;
    }
    Sentence a(src);
    a.say("On ");
    sayFabric(a, scenario);
    a.say(", one training step takes ").num("sim.step_time_s", Style::Seconds).say(".");
    keep(st, a);

    Sentence b(src);
    // Idle time worth a word: 1 % of the step or more (the rest is rounding or a short tail).
    const bool idle = src.value("sim.bubble_s") >= 0.01 * src.value("sim.step_time_s");
    b.say("Each GPU computes for ").num("sim.compute_s", Style::Seconds).say(idle ? ", waits " : " and waits ");
    b.num("sim.exposed_comm_s", Style::Seconds).say(" on communication");
    if (idle)
        b.say(" and idles ").num("sim.bubble_s", Style::Seconds)
            .say(d.stage3->plan.pp > 1 ? " in the pipeline bubble" : " waiting for the others");
    b.say(": communication holds up ").num("sim.comm_share", Style::Percent).say(" of the step.");
    keep(st, b);

    // The collective the step waits on most (stage 5's "By collective" table), when there is a wait.
    const network::CollectiveBreakdownRow* most = nullptr;
    int waitedOn = 0;
    for (const network::CollectiveBreakdownRow& r : simulation->byCollective)
        if (r.exposedSeconds > 0) {
            ++waitedOn;
            if (!most || r.exposedSeconds > most->exposedSeconds)
                most = &r;
        }
    if (most && src.value("sim.exposed_comm_s") > 0) {
        const std::string what = std::string(parallel::toString(most->strategy)) + " " + std::string(parallel::toString(most->kind));
        Sentence w(src);
        if (waitedOn == 1) {
            w.say("All of that wait is the " + what + ".");
        } else {
            w.say(std::string(most->exposedSeconds >= 0.5 * src.value("sim.exposed_comm_s") ? "Most" : "The largest part")
                  + " of that wait is the " + what + ": ");
            w.num(network::exposedFigureId(*most), Style::Seconds).say(".");
        }
        keep(st, w);
    }

    // The busiest link by bytes on the wire (the rule of "net.busiest_link_bytes").
    const network::Topology& topology = *network->topology;
    if (!topology.links().empty() && src.value("net.busiest_link_bytes") > 0) {
        std::size_t busiest = 0;
        for (std::size_t l = 0; l < network->loads.links.size(); ++l)
            if (network->loads.links[l].wireBytes > network->loads.links[busiest].wireBytes)
                busiest = l;
        const network::Link& link = topology.link(network::LinkId(busiest));
        Sentence c(src);
        c.say("The busiest link, " + link.id + " (" + std::string(network::displayName(link.protocol)) + "), carries ");
        c.num("net.busiest_link_bytes", Style::Bytes).say(" per step, packet overhead included.");
        keep(st, c);
    }
    if (src.value("sim.mfu") > 0) {
        Sentence m(src);
        m.say("The GPUs turn ").num("sim.mfu", Style::Percent).say(" of their peak FLOP/s into the model's work (MFU).");
        keep(st, m);
    }
    return st;
}

} // namespace

std::string NarrationSentence::text() const
{
    std::string out;
    for (const NarrationSpan& s : spans)
        out += s.text;
    return out;
}

std::vector<std::string> NarrationSentence::figures() const
{
    std::vector<std::string> out;
    for (const NarrationSpan& s : spans)
        if (!s.figure.empty())
            out.push_back(s.figure);
    return out;
}

std::string StageNarration::text() const
{
    std::string out;
    for (const NarrationSentence& s : sentences)
        out += (out.empty() ? "" : " ") + s.text();
    return out;
}

const StageNarration* Narration::stage(Stage stage) const
{
    for (const StageNarration& s : stages)
        if (s.stage == stage)
            return &s;
    return nullptr;
}

std::string countNoun(double value, const std::string& singular, const std::string& plural, int decimals)
{
    const std::string number = formatCount(value, decimals);
    return number + " " + (number == "1" ? singular : plural);
}

std::string formatPercent(double fraction)
{
    if (!std::isfinite(fraction))
        return "n/a";
    const double p = fraction * 100;
    if (p == 0)
        return "0 %";
    return significant(p, std::fabs(p) >= 1 ? 3 : 2) + " %";
}

Narration narrate(const Scenario& scenario, const Derivation& derivation, const NetworkStage* network,
                  const network::StepSimulation* simulation, const DisplayUnits& units)
{
    Narration n;
    Sources src(derivation, network, simulation, units, n.figures);
    n.stages.push_back(textStage(derivation, src));
    n.stages.push_back(tensorStage(scenario, derivation, src));
    n.stages.push_back(gpuStage(scenario, derivation, src));
    n.stages.push_back(collectiveStage(derivation, src));
    n.stages.push_back(wireStage(scenario, derivation, network, simulation, src));
    return n;
}

} // namespace tw::scenario
