// Why ~860 lines: every scenario field's reader and writer and the migrations from each older schema
// version sit together, so a field's read, write, default and migration are checked side by side.
#include "scenariojson.h"
#include "scenariojsondom_p.h"

#include "base/editdistance.h"
#include "base/keylog.h"
#include "base/unitparse.h"
#include "base/units.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

// Schema (version 5), base units throughout:
// { "schema_version": 5, "name", "description",
//   "text": {"source": "sample"|"file"|"inline", "sample", "path", "text", "documents"},
//   "tokenizer": {"kind": "gpt2"|"trained"|"file", "vocab_size", "path"},
//   "model_vocab_from_tokenizer": bool,
//   "model": {"name", "family", "layers", "hidden_size", "heads", "kv_heads", "ffn_size", "vocab_size",
//             "max_positions", "tied_embeddings", "vocab_pad_multiple",
//             "moe": {"experts", "top_k", "capacity_factor", "layer_interval"},
//             "weights", "activations", "gradients", "optimizer_state" (precisions), "fp8_recipe", "recompute",
//             "attention": "auto"|"fused"|"unfused" (written when not auto)},
//   "batch": {"sequence_length", "micro_batch", "global_batch_tokens"},
//   "hardware": {"gpu", "nodes", "gpus_per_node", "custom": {"id", "name", "memory_bytes", "peak_fp32",
//                "peak_bf16", "peak_fp16", "peak_fp8", "memory_bandwidth", "l2_bytes", "l2_bandwidth",
//                "sm_count", "gemm_fraction", "memory_fraction", "gemm_memory_fraction", "flash_forward_fraction",
//                "flash_backward_fraction", "kernel_seconds"}},
//   "parallel": {"dp", "pp", "tp", "ep", "sharding": "ddp"|"zero1"|"zero2"|"zero3"|"fsdp-full"|"fsdp-hybrid",
//                "shard_group_size", "sequence_parallel", "schedule": "gpipe"|"1f1b"|"interleaved",
//                "virtual_stages", "layer_partition": [..], "layer_forward_time_s": [..],
//                "compute_efficiency" (a number, or "auto" = absent = the kernel model), "bucket_bytes", "ddp_overlap", "tp_overlap", "fp8_all_gather",
//                "memory_reserve_bytes", "memory_headroom", "comm_buffer_bytes", "assignment": [[dp, pp, tp] per GPU]},
//   "collectives": {"allreduce", "reducescatter", "allgather", "alltoall", "broadcast" (algorithm names),
//                   "alpha_s", "bandwidth" (B/s)},
//   "topology": {"kind", … (fabric/topology.h: topologyToJson)},
//   "run": {"tokens" (a number or "15.6T"), "gpu_power_w" (or "auto"), "host_power_w_per_gpu", "pue",
//           "price_per_gpu_hour", "failures": {"gpu", "gpu_memory", "network", "software", "host"},
//           "checkpoint": {"storage_gb_per_s_per_gpu", "restart_s", "interval_s" (or "auto")},
//           "batch_ramp": [{"until" (a count), "global_batch_tokens", "sequence_length", "dp"} per phase]}
//           (written when not the defaults),
//   "$schema" (for editors; ignored) }
// Every key with its unit and default: docs/scenario.md, generated from this reader (scenarioschema.h).
// Without "parallel", every GPU is a data-parallel replica (dp = nodes × GPUs per node).
// Keys a kind does not use are written only when they differ from their default, so a round trip
// keeps every field.

namespace tw::scenario {

namespace {

using Json = nlohmann::ordered_json;

// The operations a scenario picks an algorithm for ("collectives.<op>"), in the file's order.
constexpr collective::Op kChosenOps[] = {collective::Op::AllReduce, collective::Op::ReduceScatter,
                                         collective::Op::AllGather, collective::Op::AllToAll, collective::Op::Broadcast};

using detail::childPath;
using detail::DomBuilder;
using detail::inQuotes;

std::string typeName(const Json& j)
{
    switch (j.type()) {
    case Json::value_t::null:
        return "null";
    case Json::value_t::boolean:
        return "boolean";
    case Json::value_t::string:
        return "string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
        return "integer";
    case Json::value_t::number_float:
        return "number";
    case Json::value_t::array:
        return "array";
    case Json::value_t::object:
        return "object";
    default:
        return "binary";
    }
}

// Reads the fields of one JSON object into a struct, collecting every problem with its path.
class Reader {
public:
    Reader(const std::string& file, std::vector<Error>& errors, const std::map<std::string, std::string>& floatText)
        : m_file(file), m_errors(errors), m_floatText(floatText)
    {
    }

    void fail(const std::string& path, std::string message)
    {
        Location where;
        where.file = m_file;
        where.jsonPath = path;
        m_errors.push_back(makeError(std::move(message), std::move(where)));
    }

    // One object: fields are read by name; finish() names the keys nobody read.
    class Object {
    public:
        Object(Reader& r, const Json* j, std::string path) : m_r(r), m_j(j), m_path(std::move(path))
        {
            if (m_j && !m_j->is_object()) {
                m_r.fail(m_path, "expected an object, got " + typeName(*m_j));
                m_j = nullptr;
            }
        }

        // Tells the reader's key log (when it keeps one) that `key` is read as `type`.
        void note(const std::string& key, const char* type, std::vector<std::string> values = {})
        {
            if (m_r.m_log)
                m_r.m_log->push_back({path(key), type, std::move(values)});
        }

        // The member `key` (marked as known), or nullptr when absent.
        const Json* get(const std::string& key)
        {
            m_known.push_back(key);
            if (!m_j)
                return nullptr;
            const auto it = m_j->find(key);
            return it == m_j->end() ? nullptr : &*it;
        }
        [[nodiscard]] std::string path(const std::string& key) const { return childPath(m_path, key); }

        Object object(const std::string& key)
        {
            note(key, "object");
            return Object(m_r, get(key), path(key));
        }

        void u64(const std::string& key, std::uint64_t& out)
        {
            note(key, "integer");
            const Json* v = get(key);
            if (!v)
                return;
            const std::string p = path(key);
            if (v->is_number_unsigned()) {
                out = v->get<std::uint64_t>();
            } else if (v->is_number_integer()) {
                m_r.fail(p, "must not be negative, got " + std::to_string(v->get<std::int64_t>()));
            } else if (v->is_number_float()) {
                const double d = v->get<double>();
                const auto it = m_r.m_floatText.find(p);
                const std::string written = it != m_r.m_floatText.end() ? it->second : v->dump();
                if (d < 0)
                    m_r.fail(p, "must not be negative, got " + written);
                else if (d != std::floor(d))
                    m_r.fail(p, "expected an unsigned integer, got " + written);
                else if (d >= 18446744073709551616.0)
                    m_r.fail(p, "too large: got " + written + ", the most is 18,446,744,073,709,551,615");
                else
                    out = static_cast<std::uint64_t>(d); // 12.0, 1e3: whole numbers written as floats
            } else {
                m_r.fail(p, "expected an unsigned integer, got " + typeName(*v));
            }
        }

        // A JSON value that must be an unsigned integer (array elements); false with a message if not.
        bool unsignedValue(const Json& v, const std::string& p, std::uint64_t& out)
        {
            if (v.is_number_unsigned()) {
                out = v.get<std::uint64_t>();
                return true;
            }
            if (v.is_number_integer())
                m_r.fail(p, "must not be negative, got " + std::to_string(v.get<std::int64_t>()));
            else if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() == std::floor(v.get<double>())
                     && v.get<double>() < 9007199254740992.0) {
                out = static_cast<std::uint64_t>(v.get<double>());
                return true;
            } else
                m_r.fail(p, "expected an unsigned integer, got " + (v.is_number() ? v.dump() : typeName(v)));
            return false;
        }

        // An array: `each` is called for every element with its path ("parallel.layer_partition[3]").
        void array(const std::string& key,
                   const std::function<void(Object&, const Json&, const std::string&)>& each)
        {
            note(key, "array");
            const Json* v = get(key);
            if (!v)
                return;
            if (!v->is_array()) {
                m_r.fail(path(key), "expected an array, got " + typeName(*v));
                return;
            }
            for (std::size_t i = 0; i < v->size(); ++i)
                each(*this, (*v)[i], path(key) + "[" + std::to_string(i) + "]");
        }

        [[nodiscard]] Reader& reader() { return m_r; }

        void real(const std::string& key, double& out)
        {
            note(key, "number");
            const Json* v = get(key);
            if (!v)
                return;
            if (v->is_number())
                out = v->get<double>(); // JSON has no NaN or infinity; 1e400 is refused by the parser
            else
                m_r.fail(path(key), "expected a number, got " + typeName(*v));
        }

        // A number, or "auto" (or the key left out: `out` untouched) for nullopt; `expected` names the
        // number in the message ("a number of bytes").
        void numberOrAuto(const std::string& key, std::optional<double>& out, const std::string& expected)
        {
            note(key, "number-or-auto");
            const Json* v = get(key);
            if (!v)
                return;
            if (v->is_string() && v->get<std::string>() == "auto")
                out.reset();
            else if (v->is_number())
                out = v->get<double>();
            else
                m_r.fail(path(key), "expected " + expected + " or \"auto\", got " + typeName(*v));
        }

        void boolean(const std::string& key, bool& out)
        {
            note(key, "boolean");
            const Json* v = get(key);
            if (!v)
                return;
            if (v->is_boolean())
                out = v->get<bool>();
            else
                m_r.fail(path(key), "expected true or false, got " + typeName(*v));
        }

        void string(const std::string& key, std::string& out)
        {
            note(key, "string");
            const Json* v = get(key);
            if (!v)
                return;
            if (v->is_string())
                out = v->get<std::string>();
            else
                m_r.fail(path(key), "expected a string, got " + typeName(*v));
        }

        // A string naming one of an enum's values; `what` is the noun in messages ("family").
        template <class E>
        void name(const std::string& key, E& out, const std::function<std::optional<E>(std::string_view)>& parse,
                  const std::string& what, const std::string& expected)
        {
            note(key, "name", splitChoices(expected));
            const Json* v = get(key);
            if (!v)
                return;
            if (!v->is_string()) {
                m_r.fail(path(key), "expected a string, got " + typeName(*v));
                return;
            }
            const std::string s = v->get<std::string>();
            if (const auto e = parse(s))
                out = *e;
            else
                m_r.fail(path(key), "unknown " + what + " " + inQuotes(s) + " (expected " + expected + ")");
        }

        // Refuses keys that no field read, so a typo does not pass silently.
        void finish()
        {
            if (!m_j)
                return;
            for (const auto& [key, value] : m_j->items()) {
                if (std::find(m_known.begin(), m_known.end(), key) != m_known.end())
                    continue;
                std::string best;
                std::size_t bestDistance = 3;
                for (const auto& k : m_known) {
                    const std::size_t d = editDistance(key, k);
                    if (d < bestDistance) {
                        bestDistance = d;
                        best = k;
                    }
                }
                std::vector<std::string> known; // each once ("parallel" is asked for twice)
                for (const std::string& k : m_known)
                    if (std::find(known.begin(), known.end(), k) == known.end())
                        known.push_back(k);
                std::string message = "unknown key " + inQuotes(key);
                if (!best.empty()) {
                    message += " (did you mean " + inQuotes(best) + "?)";
                } else {
                    message += " (expected ";
                    for (std::size_t i = 0; i < known.size(); ++i)
                        message += (i == 0 ? "" : i + 1 == known.size() ? " or " : ", ") + known[i];
                    message += ")";
                }
                m_r.fail(path(key), message);
            }
        }

    private:
        Reader& m_r;
        const Json* m_j;
        std::string m_path;
        std::vector<std::string> m_known;
    };

    KeyLog* m_log = nullptr; // every key asked for, when set (scenarioReaderKeys)

private:
    const std::string& m_file;
    std::vector<Error>& m_errors;
    const std::map<std::string, std::string>& m_floatText;
};

void readPrecision(Reader::Object& o, const std::string& key, model::Precision& out)
{
    o.name<model::Precision>(key, out, model::precisionFromString, "precision", "fp32, bf16, fp16 or fp8");
}

// The text and the tokenizer.
void readSources(Reader::Object& top, Scenario& s)
{
    Reader::Object text = top.object("text");
    text.name<TextSource::Kind>("source", s.text.kind, textKindFromString, "text source", "sample, file or inline");
    text.string("sample", s.text.sample);
    text.string("path", s.text.path);
    text.string("text", s.text.text);
    text.u64("documents", s.text.documents);
    text.finish();

    Reader::Object tok = top.object("tokenizer");
    tok.name<TokenizerChoice::Kind>("kind", s.tokenizer.kind, tokenizerKindFromString, "tokenizer kind",
                                    "gpt2, trained or file");
    tok.u64("vocab_size", s.tokenizer.trainedVocab);
    tok.string("path", s.tokenizer.path);
    tok.finish();

}

// The model's shape, its MoE, precisions, recomputation and attention kernel.
void readModel(Reader::Object& top, model::ModelConfig& m)
{
    Reader::Object mo = top.object("model");
    mo.string("name", m.name);
    mo.name<model::Family>("family", m.family, model::familyFromString, "family", "gpt2 or llama");
    mo.u64("layers", m.layers);
    mo.u64("hidden_size", m.hiddenSize);
    mo.u64("heads", m.heads);
    mo.u64("kv_heads", m.kvHeads);
    mo.u64("ffn_size", m.ffnSize);
    mo.u64("vocab_size", m.vocabSize);
    mo.u64("max_positions", m.maxPositions);
    mo.boolean("tied_embeddings", m.tiedEmbeddings);
    mo.u64("vocab_pad_multiple", m.vocabPadMultiple);
    Reader::Object moe = mo.object("moe");
    moe.u64("experts", m.moe.experts);
    moe.u64("top_k", m.moe.topK);
    moe.real("capacity_factor", m.moe.capacityFactor);
    moe.u64("layer_interval", m.moe.layerInterval);
    moe.finish();
    readPrecision(mo, "weights", m.weights);
    readPrecision(mo, "activations", m.activations);
    readPrecision(mo, "gradients", m.gradients);
    readPrecision(mo, "optimizer_state", m.optimizerState);
    mo.name<model::Recompute>("recompute", m.recompute, model::recomputeFromString, "recomputation",
                              "none, selective or full");
    mo.name<model::Attention>("attention", m.attention, model::attentionFromString, "attention kernel",
                              "auto, fused or unfused");
    mo.name<model::Fp8Recipe>("fp8_recipe", m.fp8Recipe, model::fp8RecipeFromString, "FP8 recipe",
                              "none, delayed or current");
    mo.finish();

}

// The GPUs: the catalog id, nodes, GPUs per node and the custom GPU's numbers.
void readHardware(Reader::Object& top, Scenario& s)
{
    Reader::Object hw = top.object("hardware");
    hw.string("gpu", s.hardware.gpu);
    hw.u64("nodes", s.hardware.nodes);
    hw.u64("gpus_per_node", s.hardware.gpusPerNode);
    Reader::Object custom = hw.object("custom");
    custom.string("id", s.hardware.custom.id);
    custom.string("name", s.hardware.custom.name);
    custom.real("memory_bytes", s.hardware.custom.memoryBytes);
    custom.real("peak_fp32", s.hardware.custom.peakFp32);
    custom.real("peak_bf16", s.hardware.custom.peakBf16);
    custom.real("peak_fp16", s.hardware.custom.peakFp16);
    custom.real("peak_fp8", s.hardware.custom.peakFp8);
    // Kernel model (model/kernels.h); missing keys keep GpuSpec's defaults, so older files load.
    custom.real("memory_bandwidth", s.hardware.custom.memoryBandwidth);
    custom.real("l2_bytes", s.hardware.custom.l2Bytes);
    custom.real("l2_bandwidth", s.hardware.custom.l2Bandwidth);
    custom.u64("sm_count", s.hardware.custom.smCount);
    custom.real("gemm_fraction", s.hardware.custom.gemmFraction);
    custom.real("memory_fraction", s.hardware.custom.memoryFraction);
    custom.real("gemm_memory_fraction", s.hardware.custom.gemmMemoryFraction);
    custom.real("flash_forward_fraction", s.hardware.custom.flashForwardFraction);
    custom.real("flash_backward_fraction", s.hardware.custom.flashBackwardFraction);
    custom.real("kernel_seconds", s.hardware.custom.kernelSeconds);
    custom.finish();
    hw.finish();

}

// The fixed rate (a number) or the kernel model (absent or "auto", 0 in ParallelPlan), and the bucket
// size in bytes (absent or "auto" = the framework's default, parallel::bucketBytesFor).
void readAutoNumbers(Reader::Object& par, parallel::ParallelPlan& p)
{
    std::optional<double> efficiency = p.computeEfficiency > 0 ? std::optional<double>(p.computeEfficiency) : std::nullopt;
    par.numberOrAuto("compute_efficiency", efficiency, "a number in (0, 1]");
    p.computeEfficiency = efficiency.value_or(0);
    par.numberOrAuto("bucket_bytes", p.bucketBytes, "a number of bytes");
}

// One GPU's [dp, pp, tp] coordinates of parallel.assignment.
void readAssignment(Reader::Object& o, const Json& v, const std::string& path, parallel::ParallelPlan& p)
{
    if (!v.is_array() || v.size() != 3) {
        o.reader().fail(path, "expected [dp, pp, tp] (three whole numbers), got "
                                  + (v.is_array() ? "an array of " + std::to_string(v.size()) : typeName(v)));
        return;
    }
    std::uint64_t c[3] = {0, 0, 0};
    bool ok = true;
    for (std::size_t i = 0; i < 3; ++i) {
        ok = o.unsignedValue(v[i], path + "[" + std::to_string(i) + "]", c[i]) && ok;
        if (ok && c[i] >= kMaxGpuCount) {
            o.reader().fail(path + "[" + std::to_string(i) + "]", "coordinate " + std::to_string(c[i])
                                                                      + " is larger than any mesh can be");
            ok = false;
        }
    }
    if (ok)
        p.assignment.push_back({std::uint32_t(c[0]), std::uint32_t(c[1]), std::uint32_t(c[2])});
}

// The parallel plan (pure data parallelism over every GPU when absent).
void readParallel(Reader::Object& top, Scenario& s)
{
    parallel::ParallelPlan& p = s.parallel;
    if (!top.get("parallel"))
        p.dp = s.hardware.nodes * s.hardware.gpusPerNode; // pure data parallelism over every GPU
    Reader::Object par = top.object("parallel");
    par.u64("dp", p.dp);
    par.u64("pp", p.pp);
    par.u64("tp", p.tp);
    par.u64("ep", p.ep);
    par.name<parallel::Sharding>("sharding", p.sharding, parallel::shardingFromString, "sharding",
                                 "ddp, zero1, zero2, zero3, fsdp-full or fsdp-hybrid");
    par.u64("shard_group_size", p.shardGroupSize);
    par.boolean("sequence_parallel", p.sequenceParallel);
    par.name<parallel::PipelineSchedule>("schedule", p.schedule, parallel::scheduleFromString, "pipeline schedule",
                                         "gpipe, 1f1b or interleaved");
    par.u64("virtual_stages", p.virtualStages);
    par.array("layer_partition", [&](Reader::Object& o, const Json& v, const std::string& path) {
        std::uint64_t n = 0;
        if (o.unsignedValue(v, path, n))
            p.layerPartition.push_back(n);
    });
    par.array("layer_forward_time_s", [&](Reader::Object& o, const Json& v, const std::string& path) {
        if (v.is_number())
            p.layerForwardSeconds.push_back(v.get<double>());
        else
            o.reader().fail(path, "expected a number of seconds, got " + typeName(v));
    });
    readAutoNumbers(par, p);
    par.boolean("ddp_overlap", p.ddpOverlap);
    par.boolean("tp_overlap", p.tpOverlap);
    par.boolean("fp8_all_gather", p.fp8AllGather);
    par.real("memory_reserve_bytes", p.memoryReserveBytes);
    par.real("memory_headroom", p.memoryHeadroomFraction);
    par.real("comm_buffer_bytes", p.commBufferBytes);
    par.array("assignment", [&](Reader::Object& o, const Json& v, const std::string& path) { readAssignment(o, v, path, p); });
    par.finish();

}

// The collective algorithms chosen per operation and the α–β link.
void readCollectives(Reader::Object& top, collective::AlgorithmChoice& ch)
{
    Reader::Object col = top.object("collectives");
    for (collective::Op op : kChosenOps) {
        collective::AlgorithmPick a = ch.pick(op);
        std::string names;
        for (const std::string& v : collective::pickNamesFor(op))
            names += (names.empty() ? "" : ", ") + v;
        col.name<collective::AlgorithmPick>(std::string(collective::toString(op)), a, collective::pickFromString,
                                            "algorithm", names);
        ch.set(op, a);
    }
    col.real("alpha_s", ch.link.alphaSeconds);
    col.real("bandwidth", ch.link.bandwidth);
    col.finish();

}

// A count of tokens: a number or a count with its unit ("15.6T").
void readTokenCount(Reader::Object& o, const std::string& key, double& out)
{
    o.note(key, "count");
    const Json* t = o.get(key);
    if (!t)
        return;
    if (t->is_number()) {
        out = t->get<double>();
    } else if (t->is_string()) {
        auto parsed = parseCount(t->get<std::string>());
        if (parsed)
            out = parsed.value();
        else
            o.reader().fail(o.path(key), parsed.error().message);
    } else {
        o.reader().fail(o.path(key), "expected a number of tokens or a count with its unit (\"15.6T\"), got " + typeName(*t));
    }
}

// One phase of run.batch_ramp: {"until", "global_batch_tokens", "sequence_length", "dp"}.
void readBatchPhase(Reader::Object& o, const Json& v, const std::string& path, RunSettings& run)
{
    Reader::Object p(o.reader(), &v, path);
    if (!v.is_object())
        return; // the object's reader said what it got
    BatchPhase phase;
    readTokenCount(p, "until", phase.untilTokens);
    p.u64("global_batch_tokens", phase.globalBatchTokens);
    p.u64("sequence_length", phase.sequenceLength);
    p.u64("dp", phase.dp);
    if (!v.contains("until"))
        o.reader().fail(path, "a phase needs \"until\" (the tokens it lasts to) and \"global_batch_tokens\"");
    else if (!v.contains("global_batch_tokens"))
        o.reader().fail(path + ".global_batch_tokens", "missing: the tokens of each optimizer step in this phase");
    p.finish();
    run.batchRamp.push_back(phase);
}

// The whole run: tokens (a number or a count with its unit, "15.6T"), power, PUE, price, failures,
// checkpoints and the batch ramp.
void readRun(Reader::Object& top, RunSettings& run)
{
    Reader::Object o = top.object("run");
    readTokenCount(o, "tokens", run.tokens);
    o.numberOrAuto("gpu_power_w", run.gpuPowerWatts, "watts per GPU");
    o.real("host_power_w_per_gpu", run.hostPowerWattsPerGpu);
    o.real("pue", run.pue);
    o.real("price_per_gpu_hour", run.pricePerGpuHour);
    Reader::Object f = o.object("failures");
    f.real("gpu", run.failures.gpu);
    f.real("gpu_memory", run.failures.gpuMemory);
    f.real("network", run.failures.network);
    f.real("software", run.failures.software);
    f.real("host", run.failures.host);
    f.finish();
    Reader::Object c = o.object("checkpoint");
    c.real("storage_gb_per_s_per_gpu", run.checkpoint.storageGBpsPerGpu);
    c.real("restart_s", run.checkpoint.restartSeconds);
    c.numberOrAuto("interval_s", run.checkpoint.intervalSeconds, "seconds");
    c.finish();
    o.array("batch_ramp", [&](Reader::Object& ro, const Json& v, const std::string& path) { readBatchPhase(ro, v, path, run); });
    o.finish();
}

// A scenario from its JSON document, section by section; problems go to the reader.
Scenario readScenario(const Json& root, Reader& r)
{
    Scenario s;
    Reader::Object top(r, &root, "");
    top.note("schema_version", "integer");
    top.get("schema_version"); // checked before
    top.string("name", s.name);
    top.string("description", s.description);
    top.boolean("model_vocab_from_tokenizer", s.modelVocabFromTokenizer);
    readSources(top, s);
    readModel(top, s.model);
    Reader::Object batch = top.object("batch");
    batch.u64("sequence_length", s.batch.sequenceLength);
    batch.u64("micro_batch", s.batch.microBatch);
    batch.u64("global_batch_tokens", s.batch.globalBatchTokens);
    batch.finish();

    readHardware(top, s);
    readParallel(top, s);
    readCollectives(top, s.collectives);
    // The topology's own reader (fabric/topology.h) reports its problems with "topology.*" paths.
    top.note("topology", "object");
    if (r.m_log) // the topology's own reader names its keys
        (void)network::topologyFromJson("{}", "topology", r.m_log);
    if (const Json* t = top.get("topology")) {
        auto spec = network::topologyFromJson(t->dump(), "topology");
        if (spec)
            s.topology = spec.value();
        else
            r.fail(spec.error().where.jsonPath.empty() ? "topology" : spec.error().where.jsonPath, spec.error().message);
    } else if (s.hardware.nodes > 1) {
        s.topology.kind = network::TopologyKind::LeafSpine; // several servers need a network between them
    }

    readRun(top, s.run);
    std::string schemaReference; // "$schema": for editors only (docs/scenario.md)
    top.string("$schema", schemaReference);
    top.finish();
    return s;
}

// Schema migrations: migrations[v] turns a version-v document into version v + 1.
// Version 0 (before the first release) named the tokenizer with a plain string: "gpt2",
// "trained:8192" or a tokenizer.json path.
void migrate0to1(Json& doc, Reader& r)
{
    if (!doc.contains("tokenizer"))
        return;
    Json& t = doc["tokenizer"];
    if (!t.is_string()) {
        r.fail("tokenizer", "expected a string in schema_version 0 (\"gpt2\", \"trained:V\" or a path), got " + typeName(t));
        return;
    }
    const std::string spec = t.get<std::string>();
    Json out = Json::object();
    if (spec == "gpt2") {
        out["kind"] = "gpt2";
    } else if (spec.starts_with("trained:")) {
        out["kind"] = "trained";
        const std::string digits = spec.substr(8);
        if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
            r.fail("tokenizer", "expected \"trained:V\" with a whole number V, got " + inQuotes(spec));
            return;
        }
        out["vocab_size"] = std::stoull(digits);
    } else {
        out["kind"] = "file";
        out["path"] = spec;
    }
    t = std::move(out);
}

// Version 1 counted GPUs ("hardware.gpu_count") without nodes or a parallel plan: up to 8 GPUs are one
// node, multiples of 8 are nodes of 8, other counts are single-GPU nodes; every GPU is a DP replica.
void migrate1to2(Json& doc, Reader& r)
{
    if (!doc.contains("hardware") || !doc["hardware"].is_object())
        return;
    Json& hw = doc["hardware"];
    const auto it = hw.find("gpu_count");
    if (it == hw.end())
        return;
    if (!it->is_number_unsigned()) {
        r.fail("hardware.gpu_count", "expected an unsigned integer in schema_version 1, got " + typeName(*it));
        return;
    }
    const std::uint64_t n = it->get<std::uint64_t>();
    const std::uint64_t perNode = n <= 8 ? std::max<std::uint64_t>(n, 1) : n % 8 == 0 ? 8 : 1;
    hw.erase(it);
    hw["nodes"] = n == 0 ? 0 : n / perNode;
    hw["gpus_per_node"] = perNode;
    if (!doc.contains("parallel"))
        doc["parallel"] = Json{{"dp", n}};
}

// Version 2 had no "collectives": the defaults (NCCL's auto since version 5; 10 µs, 10 Gb/s) apply.
void migrate2to3(Json&, Reader&) {}

// Version 3 had no "topology": one server is the default NVSwitch node, several are a leaf–spine
// fabric of NVSwitch nodes (read above when the key is absent).
void migrate3to4(Json&, Reader&) {}

// Version 4 named the textbook single ring "ring"; version 5 gives that name to NCCL's multi-channel ring
// and calls the textbook one "flat-ring". Collectives a file does not name are NCCL's auto in both.
void migrate4to5(Json& doc, Reader&)
{
    if (!doc.contains("collectives") || !doc["collectives"].is_object())
        return;
    for (auto& [key, value] : doc["collectives"].items())
        if (value.is_string() && value.get<std::string>() == "ring")
            value = "flat-ring";
}

using Migration = void (*)(Json&, Reader&);
constexpr Migration kMigrations[] = {migrate0to1, migrate1to2, migrate2to3, migrate3to4, migrate4to5};
static_assert(std::size(kMigrations) == kSchemaVersion, "one migration per older schema version");

// Integral doubles below 2^53 as JSON integers (80000000000, not 80000000000.0).
Json numberJson(double v)
{
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
        if (v >= 0)
            return static_cast<std::uint64_t>(v);
        return static_cast<std::int64_t>(v);
    }
    return v;
}

} // namespace

ScenarioLoad loadScenario(std::string_view text, const std::string& fileName)
{
    ScenarioLoad load;
    std::vector<Error>& errors = load.errors;
    DomBuilder dom(text, fileName, errors);
    const bool parsed = Json::sax_parse(text.data(), text.data() + text.size(), &dom);
    if (!parsed || !errors.empty()) {
        if (errors.empty())
            errors.push_back(makeError("invalid JSON", Location{fileName, 0, 0, {}, {}}));
        return load;
    }
    Json& root = dom.root;
    Reader r(fileName, errors, dom.floatText);
    if (!root.is_object()) {
        Location where;
        where.file = fileName;
        errors.push_back(makeError("a scenario is a JSON object, got " + typeName(root), std::move(where)));
        return load;
    }

    // The schema version decides how the rest is read.
    const auto version = root.find("schema_version");
    if (version == root.end()) {
        r.fail("schema_version", "missing; a scenario names its schema version (this program writes "
                                     + std::to_string(kSchemaVersion) + ")");
        return load;
    }
    if (!version->is_number_unsigned()) {
        const bool negative = version->is_number_integer();
        r.fail("schema_version", negative ? "must not be negative, got " + version->dump()
                                          : "expected an unsigned integer, got " + typeName(*version));
        return load;
    }
    const std::uint64_t v = version->get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(kSchemaVersion)) {
        r.fail("schema_version", "schema_version " + std::to_string(v) + " is newer than this program understands ("
                                     + std::to_string(kSchemaVersion) + ")");
        return load;
    }
    for (std::uint64_t from = v; from < static_cast<std::uint64_t>(kSchemaVersion); ++from) {
        kMigrations[from](root, r);
        root["schema_version"] = from + 1;
    }
    if (!errors.empty())
        return load;

    Scenario s = readScenario(root, r);
    const bool readCleanly = errors.empty();
    // Range and consistency checks; a field already refused while reading is not reported twice.
    std::set<std::string> reported;
    for (const Error& e : errors)
        reported.insert(e.where.jsonPath);
    for (Error& e : validate(s)) {
        if (reported.count(e.where.jsonPath))
            continue;
        e.where.file = fileName;
        errors.push_back(std::move(e));
    }
    if (errors.empty())
        load.scenario = std::move(s);
    else if (readCleanly)
        load.unchecked = std::move(s);
    return load;
}

KeyLog scenarioReaderKeys()
{
    std::vector<Error> errors;
    const std::map<std::string, std::string> floatText;
    const std::string file = "(key list)";
    KeyLog log;
    Reader r(file, errors, floatText);
    r.m_log = &log;
    (void)readScenario(Json::object(), r);
    return log;
}

Result<Scenario> scenarioFromJson(std::string_view json, const std::string& fileName)
{
    ScenarioLoad load = loadScenario(json, fileName);
    if (!load.errors.empty())
        return joinErrors(load.errors);
    return std::move(*load.scenario);
}

Error joinErrors(const std::vector<Error>& errors)
{
    if (errors.empty())
        return makeError("unknown error");
    Error joined = errors.front();
    for (std::size_t i = 1; i < errors.size(); ++i)
        joined.message += "\n" + errors[i].toString();
    return joined;
}

namespace {

// The text and the tokenizer sections (keys a kind does not use only when they differ from `d`'s).
void writeSources(Json& j, const Scenario& s, const Scenario& d)
{
    Json text;
    text["source"] = toString(s.text.kind);
    if (s.text.kind == TextSource::Kind::Sample || s.text.sample != d.text.sample)
        text["sample"] = s.text.sample;
    if (s.text.kind == TextSource::Kind::File || s.text.path != d.text.path)
        text["path"] = s.text.path;
    if (s.text.kind == TextSource::Kind::Inline || s.text.text != d.text.text)
        text["text"] = s.text.text;
    text["documents"] = s.text.documents;
    j["text"] = std::move(text);

    Json tok;
    tok["kind"] = toString(s.tokenizer.kind);
    if (s.tokenizer.kind == TokenizerChoice::Kind::Trained || s.tokenizer.trainedVocab != d.tokenizer.trainedVocab)
        tok["vocab_size"] = s.tokenizer.trainedVocab;
    if (s.tokenizer.kind == TokenizerChoice::Kind::File || s.tokenizer.path != d.tokenizer.path)
        tok["path"] = s.tokenizer.path;
    j["tokenizer"] = std::move(tok);

}

Json modelJson(const model::ModelConfig& m)
{
    Json mo;
    mo["name"] = m.name;
    mo["family"] = model::toString(m.family);
    mo["layers"] = m.layers;
    mo["hidden_size"] = m.hiddenSize;
    mo["heads"] = m.heads;
    mo["kv_heads"] = m.kvHeads;
    mo["ffn_size"] = m.ffnSize;
    mo["vocab_size"] = m.vocabSize;
    mo["max_positions"] = m.maxPositions;
    mo["tied_embeddings"] = m.tiedEmbeddings;
    mo["vocab_pad_multiple"] = m.vocabPadMultiple;
    mo["moe"] = Json{{"experts", m.moe.experts},
                     {"top_k", m.moe.topK},
                     {"capacity_factor", numberJson(m.moe.capacityFactor)},
                     {"layer_interval", m.moe.layerInterval}};
    mo["weights"] = model::toString(m.weights);
    mo["activations"] = model::toString(m.activations);
    mo["gradients"] = model::toString(m.gradients);
    mo["optimizer_state"] = model::toString(m.optimizerState);
    mo["recompute"] = model::toString(m.recompute);
    if (m.attention != model::Attention::Auto)
        mo["attention"] = model::toString(m.attention);
    if (m.fp8Recipe != model::Fp8Recipe::None)
        mo["fp8_recipe"] = model::toString(m.fp8Recipe);
    return mo;

}

// The hardware section; the custom GPU only when chosen or changed from `d`'s.
Json hardwareJson(const Scenario& s, const Scenario& d)
{
    Json hw;
    hw["gpu"] = s.hardware.gpu;
    hw["nodes"] = s.hardware.nodes;
    hw["gpus_per_node"] = s.hardware.gpusPerNode;
    const model::GpuSpec& c = s.hardware.custom;
    if (s.hardware.gpu == "custom" || c != d.hardware.custom)
        hw["custom"] = Json{{"id", c.id},
                            {"name", c.name},
                            {"memory_bytes", numberJson(c.memoryBytes)},
                            {"peak_fp32", numberJson(c.peakFp32)},
                            {"peak_bf16", numberJson(c.peakBf16)},
                            {"peak_fp16", numberJson(c.peakFp16)},
                            {"peak_fp8", numberJson(c.peakFp8)},
                            {"memory_bandwidth", numberJson(c.memoryBandwidth)},
                            {"l2_bytes", numberJson(c.l2Bytes)},
                            {"l2_bandwidth", numberJson(c.l2Bandwidth)},
                            {"sm_count", c.smCount},
                            {"gemm_fraction", numberJson(c.gemmFraction)},
                            {"memory_fraction", numberJson(c.memoryFraction)},
                            {"gemm_memory_fraction", numberJson(c.gemmMemoryFraction)},
                            {"flash_forward_fraction", numberJson(c.flashForwardFraction)},
                            {"flash_backward_fraction", numberJson(c.flashBackwardFraction)},
                            {"kernel_seconds", numberJson(c.kernelSeconds)}};
    return hw;

}

// The parallel section; optional keys only when they differ from the defaults.
Json parallelJson(const parallel::ParallelPlan& p)
{
    const parallel::ParallelPlan dp; // defaults: optional keys are written only when they differ
    Json par;
    par["dp"] = p.dp;
    par["pp"] = p.pp;
    par["tp"] = p.tp;
    par["ep"] = p.ep;
    par["sharding"] = parallel::toString(p.sharding);
    if (p.sharding == parallel::Sharding::FsdpHybrid || p.shardGroupSize != dp.shardGroupSize)
        par["shard_group_size"] = p.shardGroupSize;
    par["sequence_parallel"] = p.sequenceParallel;
    par["schedule"] = parallel::toString(p.schedule);
    if (p.schedule == parallel::PipelineSchedule::Interleaved || p.virtualStages != dp.virtualStages)
        par["virtual_stages"] = p.virtualStages;
    if (!p.layerPartition.empty())
        par["layer_partition"] = p.layerPartition;
    if (!p.layerForwardSeconds.empty()) {
        Json times = Json::array();
        for (double t : p.layerForwardSeconds)
            times.push_back(numberJson(t));
        par["layer_forward_time_s"] = std::move(times);
    }
    if (p.computeEfficiency != dp.computeEfficiency)
        par["compute_efficiency"] = numberJson(p.computeEfficiency);
    if (p.bucketBytes)
        par["bucket_bytes"] = numberJson(*p.bucketBytes);
    if (p.ddpOverlap != dp.ddpOverlap)
        par["ddp_overlap"] = p.ddpOverlap;
    if (p.tpOverlap != dp.tpOverlap)
        par["tp_overlap"] = p.tpOverlap;
    if (p.fp8AllGather)
        par["fp8_all_gather"] = true;
    if (p.memoryReserveBytes != dp.memoryReserveBytes)
        par["memory_reserve_bytes"] = numberJson(p.memoryReserveBytes);
    if (p.memoryHeadroomFraction != dp.memoryHeadroomFraction)
        par["memory_headroom"] = numberJson(p.memoryHeadroomFraction);
    if (p.commBufferBytes != dp.commBufferBytes)
        par["comm_buffer_bytes"] = numberJson(p.commBufferBytes);
    if (!p.assignment.empty()) {
        Json a = Json::array();
        for (const parallel::MeshCoord& c : p.assignment)
            a.push_back(Json::array({c.dp, c.pp, c.tp}));
        par["assignment"] = std::move(a);
    }
    return par;

}

} // namespace

// The scenario as its JSON document (schema kSchemaVersion), section by section.
std::string scenarioToJson(const Scenario& s)
{
    const Scenario d; // defaults: keys a kind does not use are written only when they differ
    Json j;
    j["schema_version"] = kSchemaVersion;
    j["name"] = s.name;
    j["description"] = s.description;
    writeSources(j, s, d);
    j["model_vocab_from_tokenizer"] = s.modelVocabFromTokenizer;
    j["model"] = modelJson(s.model);
    j["batch"] = Json{{"sequence_length", s.batch.sequenceLength},
                      {"micro_batch", s.batch.microBatch},
                      {"global_batch_tokens", s.batch.globalBatchTokens}};

    j["hardware"] = hardwareJson(s, d);
    j["parallel"] = parallelJson(s.parallel);
    const collective::AlgorithmChoice& ch = s.collectives;
    Json col;
    for (collective::Op op : kChosenOps)
        col[std::string(collective::toString(op))] = collective::toString(ch.pick(op));
    col["alpha_s"] = numberJson(ch.link.alphaSeconds);
    col["bandwidth"] = numberJson(ch.link.bandwidth);
    j["collectives"] = std::move(col);
    j["topology"] = Json::parse(network::topologyToJson(s.topology));
    // The run: only what differs from the defaults, so files without a run stay as they were.
    Json run = Json::object();
    if (s.run.tokens != d.run.tokens)
        run["tokens"] = numberJson(s.run.tokens);
    if (s.run.gpuPowerWatts)
        run["gpu_power_w"] = numberJson(*s.run.gpuPowerWatts);
    if (s.run.hostPowerWattsPerGpu != d.run.hostPowerWattsPerGpu)
        run["host_power_w_per_gpu"] = numberJson(s.run.hostPowerWattsPerGpu);
    if (s.run.pue != d.run.pue)
        run["pue"] = numberJson(s.run.pue);
    if (s.run.pricePerGpuHour != d.run.pricePerGpuHour)
        run["price_per_gpu_hour"] = numberJson(s.run.pricePerGpuHour);
    Json failures = Json::object();
    const FailureRates &fr = s.run.failures, &fd = d.run.failures;
    for (const auto& [key, v, dv] : {std::tuple{"gpu", fr.gpu, fd.gpu}, std::tuple{"gpu_memory", fr.gpuMemory, fd.gpuMemory},
                                     std::tuple{"network", fr.network, fd.network},
                                     std::tuple{"software", fr.software, fd.software}, std::tuple{"host", fr.host, fd.host}})
        if (v != dv)
            failures[key] = numberJson(v);
    if (!failures.empty())
        run["failures"] = std::move(failures);
    Json checkpoint = Json::object();
    const CheckpointSettings &cs = s.run.checkpoint, &cd = d.run.checkpoint;
    if (cs.storageGBpsPerGpu != cd.storageGBpsPerGpu)
        checkpoint["storage_gb_per_s_per_gpu"] = numberJson(cs.storageGBpsPerGpu);
    if (cs.restartSeconds != cd.restartSeconds)
        checkpoint["restart_s"] = numberJson(cs.restartSeconds);
    if (cs.intervalSeconds)
        checkpoint["interval_s"] = numberJson(*cs.intervalSeconds);
    if (!checkpoint.empty())
        run["checkpoint"] = std::move(checkpoint);
    if (!s.run.batchRamp.empty()) {
        Json ramp = Json::array();
        for (const BatchPhase& p : s.run.batchRamp) {
            Json phase{{"until", numberJson(p.untilTokens)}, {"global_batch_tokens", p.globalBatchTokens}};
            if (p.sequenceLength != 0)
                phase["sequence_length"] = p.sequenceLength;
            if (p.dp != 0)
                phase["dp"] = p.dp;
            ramp.push_back(std::move(phase));
        }
        run["batch_ramp"] = std::move(ramp);
    }
    if (!run.empty())
        j["run"] = std::move(run);
    return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Scenario resolvePaths(Scenario s, const std::string& scenarioFile)
{
    namespace fs = std::filesystem;
    const fs::path base = fs::path(scenarioFile).parent_path();
    auto resolve = [&](std::string& p) {
        if (!p.empty() && fs::path(p).is_relative() && !base.empty())
            p = (base / p).lexically_normal().string();
    };
    if (s.text.kind == TextSource::Kind::File)
        resolve(s.text.path);
    if (s.tokenizer.kind == TokenizerChoice::Kind::File)
        resolve(s.tokenizer.path);
    return s;
}

} // namespace tw::scenario
