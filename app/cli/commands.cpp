#include "commands.h"

#include "args.h"
#include "base/fileio.h"
#include "base/units.h"
#include "collective/openmpi.h"
#include "collective/schedule.h"
#include "network/simulate.h"
#include "scenario/derivationjson.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"
#include "scenario/sweep.h"
#include "text/bpe.h"
#include "text/bpetrainer.h"
#include "text/dataset.h"
#include "text/gpt2.h"
#include "text/utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

namespace tw::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr std::string_view kTool = "tokenwire-cli";

// Paths and token pieces may hold any bytes: JSON output replaces invalid UTF-8 instead of throwing.
std::string dumpJson(const json& j, int indent = -1)
{
    return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// One "tokenwire-cli: …" line per line of the message (a joined Error lists several problems).
void printError(std::ostream& err, const Error& e)
{
    const std::string text = e.toString();
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        err << kTool << ": " << text.substr(start, end - start) << '\n';
        start = end + 1;
    }
}

void printWarning(std::ostream& err, const std::string& message)
{
    err << kTool << ": warning: " << message << '\n';
}

std::string displayName(const std::string& path)
{
    return path == "-" ? "<stdin>" : path;
}

Error fileError(const std::string& path, std::string message)
{
    Location where;
    where.file = displayName(path);
    return makeError(std::move(message), std::move(where));
}

std::string tooLarge()
{
    return "larger than " + formatBytes(static_cast<double>(text::maxTextBytes()), {ByteUnits::Binary, 4})
        + ", the most tokenized in one piece";
}

// Reads all bytes of a FILE* until EOF; `what` names the file's role in messages.
Result<std::string> readAll(std::FILE* f, const std::string& path, const std::string& what, std::size_t sizeHint = 0)
{
    std::string data;
    data.reserve(sizeHint);
    std::vector<char> chunk(1 << 16);
    for (;;) {
        const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
        data.append(chunk.data(), n);
        if (data.size() > text::maxTextBytes())
            return fileError(path, what + " is " + tooLarge());
        if (n < chunk.size()) {
            if (std::ferror(f))
                return fileError(path, "cannot read " + what + ": " + std::strerror(errno));
            break;
        }
    }
    return data;
}

// The bytes of a file, or of standard input for "-"; an Error says which file and why not.
Result<std::string> readInput(const std::string& path, const std::string& what)
{
    if (path == "-")
        return readAll(stdin, path, what);
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec) {
        if (ec == std::errc::no_such_file_or_directory)
            return fileError(path, "cannot read " + what + ": no such file");
        if (ec == std::errc::not_a_directory)
            return fileError(path, "cannot read " + what + ": a part of the path is a file, not a directory");
        return fileError(path, "cannot read " + what + ": " + ec.message());
    }
    if (fs::is_directory(st))
        return fileError(path, "cannot read " + what + ": is a directory, not a file");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return fileError(path, "cannot read " + what + ": " + std::strerror(errno));
    std::size_t sizeHint = 0;
    if (fs::is_regular_file(st)) {
        const auto size = fs::file_size(path, ec);
        if (!ec && size > text::maxTextBytes()) {
            std::fclose(f);
            return fileError(path, what + " is " + tooLarge());
        }
        if (!ec)
            sizeHint = static_cast<std::size_t>(size);
    }
    auto all = readAll(f, path, what, sizeHint);
    std::fclose(f);
    return all;
}

// GPT-2 (embedded) or a tokenizer.json file.
Result<text::BpeModel> loadTokenizer(const std::string& spec)
{
    if (spec == "gpt2") {
        if (!text::gpt2Embedded()) {
            Location where;
            where.field = "--tokenizer";
            return makeError("this build does not embed GPT-2. " + text::gpt2HowToGet()
                                 + " Or pass --tokenizer FILE with a tokenizer.json (see train-bpe).",
                             where);
        }
        return text::gpt2();
    }
    auto bytes = readInput(spec, "the tokenizer file");
    if (!bytes)
        return bytes.error();
    auto model = text::BpeModel::fromHuggingFaceJson(bytes.value(), spec);
    if (!model) {
        Error e = model.error();
        if (e.where.file.empty())
            e.where.file = displayName(spec);
        if (e.message.find("tokenizer") == std::string::npos)
            e.message = "not a usable tokenizer.json: " + e.message;
        return e;
    }
    return model;
}

// Warnings about text that is tokenized anyway: empty, invalid UTF-8, NUL bytes.
void warnAboutText(std::string_view textBytes, const std::string& path, std::ostream& err,
                   std::vector<std::string>* collected)
{
    auto warn = [&](const std::string& m) {
        printWarning(err, m);
        if (collected)
            collected->push_back(m);
    };
    const std::string name = displayName(path);
    if (textBytes.empty()) {
        warn(name + ": input is empty");
        return;
    }
    if (auto bad = text::firstInvalidUtf8(textBytes, name))
        warn(bad->toString() + "; tokenized as bytes (BPE here is byte-level)");
    const auto nul = static_cast<std::size_t>(std::count(textBytes.begin(), textBytes.end(), '\0'));
    if (nul > 0)
        warn(name + ": " + formatInteger(static_cast<std::int64_t>(nul)) + " NUL byte" + (nul == 1 ? "" : "s")
             + " in the text (a binary file?); tokenized as bytes");
}

// Numbers and figures are written as core writes them in the derivation document.
using scenario::figureJson;
using scenario::numberJson;

json tokenizerJson(const text::BpeModel& model, const std::string& spec)
{
    return json{{"name", model.name()}, {"source", spec}, {"vocab_size", model.vocabSize()}};
}

// Width of a UTF-8 string in code points (good enough for aligning labels in a terminal).
std::size_t displayWidth(std::string_view s)
{
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string padRight(const std::string& s, std::size_t width)
{
    const std::size_t w = displayWidth(s);
    return w >= width ? s + "  " : s + std::string(width - w + 2, ' ');
}

void printTable(std::ostream& out, const text::DatasetStats& stats, const text::BpeModel& model,
                const TokenizeOptions& o)
{
    out << "Text:       " << displayName(o.input) << '\n';
    out << "Tokenizer:  " << model.name() << " ("
        << formatInteger(static_cast<std::int64_t>(model.vocabSize())) << " tokens)\n\n";

    std::vector<std::array<std::string, 3>> rows;
    rows.push_back({"Figure", "Value", "Formula"});
    for (const Figure& f : stats.figures.all())
        rows.push_back({f.label, formatValue(f.value, f.unit, o.units), f.formula});
    std::size_t w0 = 0;
    std::size_t w1 = 0;
    for (const auto& r : rows) {
        w0 = std::max(w0, displayWidth(r[0]));
        w1 = std::max(w1, displayWidth(r[1]));
    }
    for (const auto& r : rows)
        out << padRight(r[0], w0) << padRight(r[1], w1) << r[2] << '\n';

    out << "\nToken length (bytes)  Tokens\n";
    std::uint64_t most = 1;
    for (auto c : stats.lengthHistogram)
        most = std::max(most, c);
    for (std::size_t k = 0; k < stats.lengthHistogram.size(); ++k) {
        const auto c = stats.lengthHistogram[k];
        if (c == 0)
            continue;
        const auto bar = static_cast<std::size_t>(std::ceil(40.0 * static_cast<double>(c) / static_cast<double>(most)));
        std::string bars;
        for (std::size_t i = 0; i < bar; ++i)
            bars += "█";
        out << padRight(std::to_string(k), 20) << padRight(formatInteger(static_cast<std::int64_t>(c)), 10) << bars
            << '\n';
    }
    out << "\nTokens: " << formatInteger(static_cast<std::int64_t>(stats.tokens)) << '\n';
}

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int runTokenize(const TokenizeOptions& o, std::ostream& out, std::ostream& err)
{
    auto model = loadTokenizer(o.tokenizer);
    if (!model) {
        printError(err, model.error());
        return kExitInput;
    }
    auto input = readInput(o.input, "the text");
    if (!input) {
        printError(err, input.error());
        return kExitInput;
    }
    const std::string& textBytes = input.value();
    std::vector<std::string> warnings;
    warnAboutText(textBytes, o.input, err, &warnings);

    text::Encoder encoder(model.value());
    if (o.format == OutputFormat::Count) {
        std::vector<text::TokenId> ids;
        ids.reserve(textBytes.size() / 3);
        encoder.encode(textBytes, ids);
        out << ids.size() << '\n';
        return out.good() ? kExitOk : kExitInput;
    }

    auto spans = encoder.encodeWithSpans(textBytes);
    if (!spans) {
        printError(err, fileError(o.input, spans.error().message));
        return kExitInput;
    }
    const text::DatasetStats stats = text::computeDataset(textBytes, spans.value(), model.value(), o.shape);

    if (o.format == OutputFormat::Table) {
        printTable(out, stats, model.value(), o);
        return out.good() ? kExitOk : kExitInput;
    }

    std::vector<text::TokenId> ids;
    ids.reserve(spans->size());
    for (const auto& s : spans.value())
        ids.push_back(s.id);
    json figures = json::array();
    for (const Figure& f : stats.figures.all())
        figures.push_back(figureJson(f));
    json top = json::array();
    for (std::size_t i = 0; i < std::min<std::size_t>(20, stats.rankFrequency.size()); ++i) {
        const auto& r = stats.rankFrequency[i];
        top.push_back({{"id", r.id}, {"count", r.count}, {"piece", model->displayForm(r.id)}});
    }
    const json doc{
        {"input", displayName(o.input)},
        {"tokenizer", tokenizerJson(model.value(), o.tokenizer)},
        {"n_bytes", textBytes.size()},
        {"n_tokens", ids.size()},
        {"ids", ids},
        {"training_shape",
         {{"seq_len", o.shape.sequenceLength},
          {"micro_batch", o.shape.microBatch},
          {"global_batch_tokens", o.shape.globalBatchTokens}}},
        {"figures", figures},
        {"length_histogram", stats.lengthHistogram},
        {"top_tokens", top},
        {"warnings", warnings},
    };
    out << dumpJson(doc) << '\n';
    return out.good() ? kExitOk : kExitInput;
}

int runTrainBpe(const TrainBpeOptions& o, std::ostream& out, std::ostream& err)
{
    auto input = readInput(o.input, "the text");
    if (!input) {
        printError(err, input.error());
        return kExitInput;
    }
    const std::string& textBytes = input.value();
    if (textBytes.empty()) {
        printError(err, fileError(o.input, "input is empty: there is nothing to train on"));
        return kExitInput;
    }
    warnAboutText(textBytes, o.input, err, nullptr);

    const auto t0 = std::chrono::steady_clock::now();
    auto trained = text::trainBpe(textBytes, o.vocabSize);
    const double seconds = secondsSince(t0);
    if (!trained) {
        printError(err, trained.error());
        return kExitInput;
    }
    const text::TrainedBpe& t = trained.value();
    const std::string tokenizerJsonText = t.model.toHuggingFaceJson();

    if (o.out.empty()) {
        out << tokenizerJsonText;
        if (!tokenizerJsonText.empty() && tokenizerJsonText.back() != '\n')
            out << '\n';
        if (!out.good()) {
            printError(err, makeError("cannot write the tokenizer to standard output"));
            return kExitInput;
        }
    } else {
        // Atomic: a failed save leaves an existing tokenizer file as it was.
        if (const Status saved = saveFileAtomically(o.out, tokenizerJsonText); !saved.ok()) {
            Location where = saved.error().where;
            where.field = "--out";
            std::string message = saved.error().message; // "cannot save…: reason"
            if (message.rfind("cannot save", 0) == 0)
                message.replace(0, std::string("cannot save").size(), "cannot write the tokenizer");
            printError(err, makeError(message, where));
            return kExitInput;
        }
    }

    if (t.exhausted)
        printWarning(err, displayName(o.input) + ": the text ran out of pairs after "
                              + formatInteger(static_cast<std::int64_t>(t.merges.size())) + " merges: the vocabulary has "
                              + formatInteger(static_cast<std::int64_t>(t.model.vocabSize())) + " tokens, not "
                              + formatInteger(static_cast<std::int64_t>(o.vocabSize)));
    err << kTool << ": trained " << formatInteger(static_cast<std::int64_t>(t.model.vocabSize())) << " tokens ("
        << formatInteger(static_cast<std::int64_t>(t.merges.size())) << " merges) on "
        << formatBytes(static_cast<double>(textBytes.size())) << " of " << displayName(o.input) << " in "
        << formatSeconds(seconds) << "; wrote " << (o.out.empty() ? std::string("standard output") : o.out) << '\n';
    return kExitOk;
}

namespace {

std::string_view kindName(model::TensorKind k)
{
    switch (k) {
    case model::TensorKind::Input:
        return "input";
    case model::TensorKind::Weight:
        return "weight";
    case model::TensorKind::Activation:
        return "activation";
    case model::TensorKind::Gradient:
        return "gradient";
    case model::TensorKind::OptimizerState:
        return "optimizer_state";
    }
    return "activation";
}

std::string_view phaseName(model::Phase p)
{
    switch (p) {
    case model::Phase::Forward:
        return "forward";
    case model::Phase::Backward:
        return "backward";
    case model::Phase::Optimizer:
        return "optimizer";
    }
    return "forward";
}

// The scenario of --scenario FILE (every problem printed, each with its JSON path) or --preset NAME.
Result<scenario::Scenario> scenarioFor(const ScenarioOptions& o, std::ostream& err)
{
    if (!o.preset.empty())
        return scenario::preset(o.preset);
    auto bytes = readInput(o.scenarioFile, "the scenario file");
    if (!bytes)
        return bytes.error();
    scenario::ScenarioLoad load = scenario::loadScenario(bytes.value(), displayName(o.scenarioFile));
    if (!load.errors.empty()) {
        for (std::size_t i = 0; i + 1 < load.errors.size(); ++i)
            printError(err, load.errors[i]);
        return load.errors.back();
    }
    if (o.scenarioFile == "-")
        return std::move(*load.scenario);
    return scenario::resolvePaths(std::move(*load.scenario), o.scenarioFile);
}

// Loads and derives; prints the Error and returns nullptr when either fails.
std::shared_ptr<const scenario::Derivation> deriveFor(const ScenarioOptions& o, scenario::Scenario& s, std::ostream& err)
{
    auto loaded = scenarioFor(o, err);
    if (!loaded) {
        printError(err, loaded.error());
        return nullptr;
    }
    s = std::move(loaded).value();
    auto d = scenario::derive(s);
    if (!d) {
        Error e = d.error();
        if (e.where.file.empty() && !o.scenarioFile.empty())
            e.where.file = displayName(o.scenarioFile);
        printError(err, e);
        return nullptr;
    }
    return d.value();
}

std::string problemText(const Error& e)
{
    return e.toString();
}

void printRows(std::ostream& out, const std::vector<std::vector<std::string>>& rows)
{
    std::vector<std::size_t> widths;
    for (const auto& r : rows)
        for (std::size_t c = 0; c + 1 < r.size(); ++c) {
            if (widths.size() <= c)
                widths.resize(c + 1, 0);
            widths[c] = std::max(widths[c], displayWidth(r[c]));
        }
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t c = 0; c < r.size(); ++c)
            line += c + 1 < r.size() ? padRight(r[c], widths[c]) : r[c];
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out << line << '\n';
    }
}

std::string gpuLine(const scenario::Scenario& s, const scenario::Derivation& d)
{
    const std::string gpu = d.gpu.name.empty() ? d.gpu.id : d.gpu.name;
    if (s.hardware.nodes == 1)
        return formatInteger(static_cast<std::int64_t>(s.hardware.gpusPerNode)) + " × " + gpu;
    return formatInteger(static_cast<std::int64_t>(s.hardware.nodes)) + " nodes × "
           + formatInteger(static_cast<std::int64_t>(s.hardware.gpusPerNode)) + " × " + gpu;
}

} // namespace

int runDerive(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    scenario::Scenario s;
    const auto d = deriveFor(o, s, err);
    if (!d)
        return kExitInput;
    if (o.json) {
        out << scenario::derivationJsonText(s, *d) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    out << "Scenario:   " << s.name << '\n';
    if (!s.description.empty())
        out << "            " << s.description << '\n';
    out << "Text:       " << d->stage1->tokenized->textName << ", tokenizer " << d->tokenizer().name() << " ("
        << formatInteger(static_cast<std::int64_t>(d->tokenizer().vocabSize())) << " tokens)\n";
    out << "Model:      " << d->model.name << " on " << gpuLine(s, *d) << "\n\n";
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Id", "Figure", "Value", "Formula"});
    for (const Figure& f : d->figures.all())
        rows.push_back({f.id, f.label, formatValue(f.value, f.unit, o.units), f.formula});
    printRows(out, rows);
    if (!d->problems.empty()) {
        out << "\nNotes:\n";
        for (const Error& e : d->problems)
            out << "  " << problemText(e) << '\n';
    }
    return out.good() ? kExitOk : kExitInput;
}

namespace {

// The scenario's plan with the command line's overrides: --pp and --tp first (DP takes the rest),
// then --ep, then an explicit --dp, then the sharding.
void applyOverridesOf(const ScenarioOptions& o, scenario::Scenario& s)
{
    if (o.pp)
        scenario::setParallelDegree(s, parallel::Strategy::PP, *o.pp);
    if (o.tp)
        scenario::setParallelDegree(s, parallel::Strategy::TP, *o.tp);
    if (o.ep)
        scenario::setParallelDegree(s, parallel::Strategy::EP, *o.ep);
    if (o.dp)
        scenario::setParallelDegree(s, parallel::Strategy::DP, *o.dp);
    if (o.sharding)
        s.parallel.sharding = parallel::shardingFromString(*o.sharding).value_or(s.parallel.sharding);
}

} // namespace

int runPlan(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    auto derived = deriveScenarioFor(o, err);
    if (!derived)
        return kExitInput;
    const scenario::Scenario& s = derived->scenario;
    const scenario::Derivation& d = *derived->derivation;
    const parallel::PlanDerivation* plan = d.stage3.get();
    const parallel::ParallelPlan& p = s.parallel;

    if (o.json) {
        json errors = json::array();
        for (const Error& e : d.planErrors)
            errors.push_back(e.toString());
        json doc{{"scenario", s.name},
                 {"valid", plan != nullptr},
                 {"errors", errors},
                 {"cluster", {{"nodes", s.hardware.nodes}, {"gpus_per_node", s.hardware.gpusPerNode}}},
                 {"plan",
                  {{"dp", p.dp},
                   {"pp", p.pp},
                   {"tp", p.tp},
                   {"ep", p.ep},
                   {"sharding", parallel::toString(p.sharding)},
                   {"sequence_parallel", p.sequenceParallel},
                   {"schedule", parallel::toString(p.schedule)}}}};
        if (plan) {
            json figures = json::array();
            for (const Figure& f : plan->figures.all())
                figures.push_back(figureJson(f));
            json signature = json::array();
            for (const parallel::StrategySignature& r : plan->comm.signature)
                signature.push_back({{"strategy", parallel::toString(r.strategy)},
                                     {"present", r.present},
                                     {"payload_bytes", r.payloadBytes},
                                     {"calls_per_step", r.callsPerStep},
                                     {"peers", r.peers},
                                     {"bytes_per_gpu_per_step", r.bytesPerGpuPerStep},
                                     {"total_bytes_per_step", r.totalBytesPerStep},
                                     {"groups", r.groups},
                                     {"groups_crossing_nodes", r.groupsCrossingNodes},
                                     {"frequency", r.frequency}});
            json mesh = json::array();
            for (const parallel::MeshCoord& c : plan->mesh)
                mesh.push_back({c.dp, c.pp, c.tp});
            json groups = json::array();
            for (const parallel::Group& g : plan->comm.groups)
                groups.push_back({{"strategy", parallel::toString(g.strategy)},
                                  {"kind", g.kind},
                                  {"members", g.members},
                                  {"crosses_nodes", g.crossesNodes}});
            json calls = json::array();
            for (const parallel::CollectiveCall& c : plan->comm.calls)
                calls.push_back({{"kind", parallel::toString(c.kind)},
                                 {"strategy", parallel::toString(c.strategy)},
                                 {"phase", std::string(phaseName(c.phase))},
                                 {"first_group", c.firstGroup},
                                 {"group_count", c.groupCount},
                                 {"payload_bytes", c.payloadBytes},
                                 {"repeat", c.repeat},
                                 {"layer", c.layer},
                                 {"micro_batch", c.microBatch},
                                 {"what", c.what},
                                 {"formula", c.formula}});
            doc["figures"] = std::move(figures);
            doc["signature"] = std::move(signature);
            doc["mesh"] = std::move(mesh);
            doc["groups"] = std::move(groups);
            doc["calls"] = std::move(calls);
        }
        out << dumpJson(doc) << '\n';
        if (!plan)
            err << "tokenwire-cli: the plan cannot run (" << d.planErrors.size()
                << (d.planErrors.size() == 1 ? " reason" : " reasons") << " in \"errors\")\n";
        if (!out.good())
            return kExitInput;
        return plan ? kExitOk : kExitInput;
    }

    out << "Scenario:   " << s.name << '\n';
    out << "Model:      " << d.model.name << " on " << gpuLine(s, d) << '\n';
    out << "Plan:       dp " << p.dp << " × pp " << p.pp << " × tp " << p.tp << " (ep " << p.ep << "), "
        << parallel::toString(p.sharding) << (p.sequenceParallel ? ", sequence parallel" : "") << ", "
        << parallel::toString(p.schedule) << '\n';
    if (!plan) {
        out << "\nThis plan cannot run (the reasons are on standard error).\n";
        for (const Error& e : d.planErrors)
            printError(err, e);
        return kExitInput;
    }
    out << "\nCommunication signature (one optimizer step; bytes a GPU sends with ring/pairwise algorithms):\n";
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Strategy", "Payload/call", "Frequency", "Calls/GPU", "Peers", "Bytes/GPU/step", "Links"});
    for (const parallel::StrategySignature& r : plan->comm.signature) {
        if (!r.present) {
            rows.push_back({std::string(parallel::toString(r.strategy)), "—", "not used", "", "", "", ""});
            continue;
        }
        rows.push_back({std::string(parallel::toString(r.strategy)), formatBytes(r.payloadBytes, o.units), r.frequency,
                        formatCount(r.callsPerStep, 0), formatInteger(static_cast<std::int64_t>(r.peers)),
                        formatBytes(r.bytesPerGpuPerStep, o.units),
                        r.groupsCrossingNodes == 0 ? std::string("intra-node")
                                                   : formatInteger(static_cast<std::int64_t>(r.groupsCrossingNodes)) + " of "
                                                         + formatInteger(static_cast<std::int64_t>(r.groups))
                                                         + " groups inter-node"});
    }
    printRows(out, rows);
    out << "\nCollective calls (each issued by every group listed, repeat times per step):\n";
    rows.clear();
    rows.push_back({"#", "Kind", "Strategy", "Phase", "Layer", "Groups", "Payload", "Repeat", "What"});
    for (std::size_t i = 0; i < plan->comm.calls.size(); ++i) {
        const parallel::CollectiveCall& c = plan->comm.calls[i];
        const std::size_t size = c.groupCount ? plan->comm.groups[c.firstGroup].members.size() : 0;
        rows.push_back({std::to_string(i + 1), std::string(parallel::toString(c.kind)),
                        std::string(parallel::toString(c.strategy)), std::string(phaseName(c.phase)),
                        c.layer < 0 ? std::string("—") : std::to_string(c.layer),
                        std::to_string(c.groupCount) + " × " + std::to_string(size) + " GPUs",
                        formatBytes(c.payloadBytes, o.units), formatInteger(static_cast<std::int64_t>(c.repeat)), c.what});
    }
    printRows(out, rows);
    out << "\nFigures:\n";
    rows.clear();
    rows.push_back({"Id", "Figure", "Value", "Formula"});
    for (const Figure& f : plan->figures.all())
        rows.push_back({f.id, f.label, formatValue(f.value, f.unit, o.units), f.formula});
    printRows(out, rows);
    return out.good() ? kExitOk : kExitInput;
}

int runSimulate(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    scenario::Scenario s;
    const auto d = deriveFor(o, s, err);
    if (!d)
        return kExitInput;
    if (!d->stage3) {
        for (const Error& e : d->planErrors)
            printError(err, e);
        err << kTool << ": the plan cannot run, so there is no step to simulate (see tokenwire-cli plan)\n";
        return kExitInput;
    }
    const auto net = scenario::deriveNetwork(s, *d);
    if (!net) {
        printError(err, net.error());
        return kExitInput;
    }
    const network::SimulationOptions options = scenario::simulationOptions(*d, false);
    const auto sim = network::simulateStep(*net.value()->topology, *d->stage3, *d->stage4, options);
    if (!sim) {
        printError(err, sim.error());
        return kExitInput;
    }
    const network::StepSimulation& r = sim.value();
    const network::Topology& t = *net.value()->topology;
    // Links by payload carried, busiest first.
    std::vector<std::size_t> order;
    for (std::size_t l = 0; l < r.linkPayloadBytes.size(); ++l)
        if (r.linkPayloadBytes[l] > 0)
            order.push_back(l);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return r.linkPayloadBytes[a] > r.linkPayloadBytes[b]; });
    auto utilization = [&](std::size_t l) {
        const double capacity = t.link(network::LinkId(l)).bandwidth * r.stepSeconds;
        return capacity > 0 ? r.linkPayloadBytes[l] / capacity : 0.0;
    };
    if (o.json) {
        json links = json::array();
        for (std::size_t l : order) {
            const network::Link& k = t.link(network::LinkId(l));
            links.push_back({{"id", k.id},
                             {"from", t.node(k.from).name},
                             {"to", t.node(k.to).name},
                             {"type", std::string(network::toString(k.protocol))},
                             {"bytes", r.linkPayloadBytes[l]},
                             {"wire_bytes", net.value()->loads.links[l].wireBytes},
                             {"utilization", utilization(l)}});
        }
        json figures = json::array();
        for (const Figure& f : r.figures.all())
            figures.push_back(figureJson(f));
        for (const Figure& f : net.value()->figures.all())
            figures.push_back(figureJson(f));
        const json exposed{{"dp", r.exposedByStrategy[0]},
                           {"pp", r.exposedByStrategy[1]},
                           {"tp", r.exposedByStrategy[2]},
                           {"ep", r.exposedByStrategy[3]}};
        const json doc{{"scenario", s.name},
                       {"topology", std::string(network::toString(s.topology.kind))},
                       {"step_time_s", r.stepSeconds},
                       {"compute_s", r.computeSeconds},
                       {"exposed_comm_s", r.exposedCommSeconds},
                       {"exposed_comm_by_strategy_s", exposed},
                       {"idle_s", r.idleSeconds},
                       {"comm_share", r.commShare},
                       {"mfu", r.mfu},
                       {"flows", r.flows},
                       {"simulated_flows", r.simulatedFlows},
                       {"simulated_gpus", r.simulatedGpus},
                       {"closed_form_collectives", r.closedFormInstances},
                       {"symmetry", r.reduction},
                       {"links", links},
                       {"figures", figures}};
        out << dumpJson(doc) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    out << "Scenario:   " << s.name << '\n';
    out << "Model:      " << d->model.name << " on " << gpuLine(s, *d) << ", " << network::toString(s.topology.kind)
        << " fabric (" << t.nodes().size() << " nodes, " << t.links().size() << " directed links)\n\n";
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Step time", formatSeconds(r.stepSeconds)});
    rows.push_back({"Compute (mean per GPU)", formatSeconds(r.computeSeconds)});
    rows.push_back({"Exposed communication", formatSeconds(r.exposedCommSeconds)});
    static const char* const names[] = {"  DP", "  PP", "  TP", "  EP"};
    for (int st = 0; st < 4; ++st)
        if (r.exposedByStrategy[st] > 0)
            rows.push_back({names[st], formatSeconds(r.exposedByStrategy[st])});
    rows.push_back({"Idle (pipeline bubble, tail)", formatSeconds(r.idleSeconds)});
    auto percent = [](double share) { return formatCount(100.0 * share, share < 0.01 ? 3 : 1) + " %"; };
    rows.push_back({"Communication share", percent(r.commShare)});
    if (r.mfu > 0)
        rows.push_back({"MFU", percent(r.mfu)});
    rows.push_back({"Flows in the step", formatInteger(static_cast<std::int64_t>(r.flows))});
    rows.push_back({"Flows simulated", formatInteger(static_cast<std::int64_t>(r.simulatedFlows))
                                           + (r.closedFormInstances
                                                  ? " (+ " + formatInteger(static_cast<std::int64_t>(r.closedFormInstances))
                                                        + " private collectives in closed form)"
                                                  : std::string())});
    rows.push_back({"GPUs simulated", formatInteger(static_cast<std::int64_t>(r.simulatedGpus)) + " of "
                                          + formatInteger(static_cast<std::int64_t>(r.gpus.size()))
                                          + (r.symmetryFactor > 1 ? " (" + r.reduction + ")" : std::string())});
    printRows(out, rows);
    out << "\nBusiest links (payload per step, utilization over the step):\n";
    rows.clear();
    rows.push_back({"Link", "Type", "Payload", "On the wire", "Utilization"});
    for (std::size_t i = 0; i < order.size() && i < 12; ++i) {
        const std::size_t l = order[i];
        const network::Link& k = t.link(network::LinkId(l));
        rows.push_back({k.id, std::string(network::displayName(k.protocol)), formatBytes(r.linkPayloadBytes[l], o.units),
                        formatBytes(net.value()->loads.links[l].wireBytes, o.units),
                        percent(utilization(l))});
    }
    printRows(out, rows);
    for (const Error& e : r.skipped)
        out << "Note: " << e.toString() << '\n';
    return out.good() ? kExitOk : kExitInput;
}

namespace {

// A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break (RFC 4180).
std::string csvField(const std::string& s)
{
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"')
            out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
    return out;
}

// A measured quantity: the number, or null when the paper did not measure it (stored as < 0).
json measuredJson(double v)
{
    return v < 0 ? json(nullptr) : json(v);
}

} // namespace

int runSweep(const SweepCommandOptions& o, std::ostream& out, std::ostream& err)
{
    auto loaded = scenarioFor(o.scenario, err);
    if (!loaded) {
        printError(err, loaded.error());
        return kExitInput;
    }
    const scenario::Scenario s = std::move(loaded).value();
    scenario::SweepOptions options;
    options.gpus = o.gpus;
    options.strong = o.strong;
    auto result = scenario::runSweep(s, options);
    if (!result) {
        Error e = result.error();
        if (e.where.file.empty() && !o.scenario.scenarioFile.empty())
            e.where.file = displayName(o.scenario.scenarioFile);
        printError(err, e);
        return kExitInput;
    }
    const scenario::Sweep& w = result.value();
    bool allRan = true;
    for (const scenario::SweepPoint& p : w.points)
        if (!p.ok) {
            allRan = false;
            Error e = p.error;
            e.message = formatInteger(static_cast<std::int64_t>(p.gpus)) + " GPUs cannot run: " + e.message;
            printError(err, e);
        }
    const int status = allRan ? kExitOk : kExitInput;
    auto pointJson = [](const scenario::SweepPoint& p) {
        return json{{"gpus", p.gpus},
                    {"nodes", p.nodes},
                    {"dp", p.dp},
                    {"pp", p.pp},
                    {"tp", p.tp},
                    {"ep", p.ep},
                    {"step_time_s", p.stepSeconds},
                    {"compute_s", p.computeSeconds},
                    {"exposed_comm_s", p.exposedCommSeconds},
                    {"comm_share", p.commShare},
                    {"tokens_per_s", p.tokensPerSecond},
                    {"speedup", p.speedup},
                    {"efficiency", p.efficiency},
                    {"mfu", p.mfu},
                    {"ok", p.ok},
                    {"error", p.ok ? json(nullptr) : json(p.error.toString())}};
    };
    if (o.scenario.json) {
        json points = json::array();
        for (const scenario::SweepPoint& p : w.points)
            points.push_back(pointJson(p));
        json measured = json::array();
        for (const scenario::MeasuredPoint& m : w.measured)
            measured.push_back({{"gpus", m.gpus},
                                {"comm_share", measuredJson(m.commShare)},
                                {"efficiency", measuredJson(m.efficiency)},
                                {"speedup", measuredJson(m.speedup)},
                                {"source", m.source}});
        json figures = json::array();
        for (const Figure& f : w.figures.all())
            figures.push_back(figureJson(f));
        const json doc{{"scenario", s.name},
                       {"scaling", o.strong ? "strong" : "weak"},
                       {"base_gpus", w.baseGpus},
                       {"points", points},
                       {"measured", measured},
                       {"gaps", w.gaps},
                       {"figures", figures}};
        out << dumpJson(doc) << '\n';
        return out.good() ? status : kExitInput;
    }
    if (o.csv) {
        static const char* const columns[] = {"gpus", "nodes", "dp", "pp", "tp", "ep", "step_time_s", "compute_s",
                                              "exposed_comm_s", "comm_share", "tokens_per_s", "speedup", "efficiency",
                                              "mfu", "ok", "error"};
        std::string header;
        for (const char* c : columns)
            header += (header.empty() ? "" : ",") + std::string(c);
        out << header << '\n';
        for (const scenario::SweepPoint& p : w.points) {
            const json row = pointJson(p);
            std::string line;
            for (std::size_t k = 0; k < std::size(columns); ++k) {
                const json& v = row.at(columns[k]);
                // Numbers as JSON writes them (shortest form that reads back exactly), text as CSV fields,
                // null (no error) as an empty field.
                const std::string cell = v.is_null() ? std::string() : v.is_string() ? csvField(v.get<std::string>()) : v.dump();
                line += (k == 0 ? "" : ",") + cell;
            }
            out << line << '\n';
        }
        return out.good() ? status : kExitInput;
    }
    auto percentText = [](double share) { return formatCount(100.0 * share, 1) + " %"; };
    const scenario::Scenario& base = s;
    out << "Scenario:   " << s.name << '\n';
    out << "Model:      " << base.model.name << ", " << network::toString(base.topology.kind) << " fabric, "
        << (o.strong ? "strong scaling (the global batch is kept)"
                     : "weak scaling (each replica keeps B = " + formatInteger(static_cast<std::int64_t>(base.batch.microBatch))
                           + " sequences of T = " + formatInteger(static_cast<std::int64_t>(base.batch.sequenceLength))
                           + " tokens and its accumulation steps)")
        << '\n';
    if (w.baseGpus > 0)
        out << "Speedup and efficiency against " << formatInteger(static_cast<std::int64_t>(w.baseGpus))
            << (w.baseGpus == 1 ? " GPU" : " GPUs") << " (the smallest size that ran).\n";
    out << '\n';
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"GPUs", "Nodes", "dp×pp×tp", "Step time", "Comm share", "Tokens/s", "Speedup", "Efficiency"});
    for (const scenario::SweepPoint& p : w.points) {
        const std::string gpus = formatInteger(static_cast<std::int64_t>(p.gpus));
        if (!p.ok) {
            rows.push_back({gpus, "", "", "cannot run: " + p.error.toString()});
            continue;
        }
        rows.push_back({gpus, formatInteger(static_cast<std::int64_t>(p.nodes)),
                        formatInteger(static_cast<std::int64_t>(p.dp)) + "×" + formatInteger(static_cast<std::int64_t>(p.pp)) + "×"
                            + formatInteger(static_cast<std::int64_t>(p.tp)),
                        formatSeconds(p.stepSeconds), percentText(p.commShare), formatCount(p.tokensPerSecond, 0),
                        formatCount(p.speedup, 2) + "×", percentText(p.efficiency)});
    }
    printRows(out, rows);
    if (!w.measured.empty()) {
        out << "\nMeasured (" << w.measured.front().source << "):\n";
        rows.clear();
        rows.push_back({"GPUs", "AllReduce share", "Efficiency", "Speedup"});
        for (const scenario::MeasuredPoint& m : w.measured)
            rows.push_back({formatInteger(static_cast<std::int64_t>(m.gpus)), m.commShare < 0 ? "—" : percentText(m.commShare),
                            m.efficiency < 0 ? "—" : percentText(m.efficiency),
                            m.speedup < 0 ? "—" : formatCount(m.speedup, 2) + "×"});
        printRows(out, rows);
    }
    if (!w.gaps.empty()) {
        out << "\nModel against measurement:\n";
        for (const std::string& g : w.gaps)
            out << "  " << g << '\n';
    }
    return out.good() ? status : kExitInput;
}

int runTensors(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    scenario::Scenario s;
    const auto d = deriveFor(o, s, err);
    if (!d)
        return kExitInput;
    const auto& tensors = d->stage2->tensors;
    if (o.json) {
        json list = json::array();
        for (const model::TensorInfo& t : tensors)
            list.push_back({{"name", t.name.str()},
                            {"component", std::string(t.component)},
                            {"shape_symbols", std::string(t.shapeSymbols)},
                            {"shape", t.shape.toVector()},
                            {"dtype", model::toString(t.dtype)},
                            {"bytes", numberJson(t.bytes)},
                            {"layer", t.layer},
                            {"phase", phaseName(t.phase)},
                            {"kind", kindName(t.kind)}});
        out << dumpJson(json{{"scenario", s.name}, {"tensors", list}}) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    out << "Scenario:   " << s.name << " (" << d->model.name << ", B = "
        << formatInteger(static_cast<std::int64_t>(s.batch.microBatch)) << ", T = "
        << formatInteger(static_cast<std::int64_t>(s.batch.sequenceLength)) << ")\n\n";
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Tensor", "Component", "Kind", "Phase", "Layer", "Dtype", "Shape", "Elements", "Bytes"});
    for (const model::TensorInfo& t : tensors) {
        std::string numbers = "[";
        for (std::size_t i = 0; i < t.shape.size(); ++i)
            numbers += (i ? "," : "") + std::to_string(t.shape[i]);
        numbers += "]";
        rows.push_back({t.name.str(), std::string(t.component), std::string(kindName(t.kind)), std::string(phaseName(t.phase)),
                        t.layer < 0 ? "-" : std::to_string(t.layer), std::string(model::toString(t.dtype)),
                        std::string(t.shapeSymbols), numbers, formatBytes(t.bytes, o.units)});
    }
    printRows(out, rows);
    out << "\nTensors: " << formatInteger(static_cast<std::int64_t>(tensors.size())) << '\n';
    return out.good() ? kExitOk : kExitInput;
}

int runExplain(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    scenario::Scenario s;
    const auto d = deriveFor(o, s, err);
    if (!d)
        return kExitInput;
    if (!d->figures.find(o.figureId)) {
        const auto close = scenario::closeIds(d->figures, o.figureId);
        std::string message = "unknown figure id '" + o.figureId + "'";
        if (close.empty()) {
            message += "; `tokenwire-cli derive` lists every id";
        } else {
            message += "; close ids:";
            for (std::size_t i = 0; i < close.size(); ++i)
                message += (i ? ", " : " ") + close[i];
        }
        printError(err, makeError(message));
        return kExitUsage;
    }
    const auto tree = scenario::derivationTree(d->figures, o.figureId);
    if (o.json) {
        json chain = json::array();
        for (const auto& step : tree) {
            json f = figureJson(*step.figure);
            f["depth"] = step.depth;
            f["repeated"] = step.repeated;
            chain.push_back(std::move(f));
        }
        out << dumpJson(json{{"scenario", s.name}, {"id", o.figureId}, {"chain", chain}}) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    for (const auto& step : tree) {
        const Figure& f = *step.figure;
        const std::string indent(std::size_t(step.depth) * 2, ' ');
        if (step.repeated) {
            out << indent << f.id << " = " << formatValue(f.value, f.unit, o.units) << "  (see above)\n";
            continue;
        }
        out << indent << f.id << " = " << formatValue(f.value, f.unit, o.units) << "  " << f.label << '\n';
        out << indent << "    " << f.formula << '\n';
    }
    return out.good() ? kExitOk : kExitInput;
}

namespace {

const std::vector<collective::Op>& allOps()
{
    static const std::vector<collective::Op> ops{collective::Op::AllReduce, collective::Op::ReduceScatter,
                                                 collective::Op::AllGather, collective::Op::Broadcast,
                                                 collective::Op::Reduce,    collective::Op::AllToAll,
                                                 collective::Op::SendRecv};
    return ops;
}

// The command-line option of a field collective::validate names ("ranks" → --ranks).
std::string optionForField(const std::string& field)
{
    static const std::pair<std::string_view, std::string_view> map[] = {
        {"ranks", "--ranks"}, {"bytes", "--bytes"},           {"root", "--root"},       {"ranks_per_node", "--ranks-per-node"},
        {"op", "--op"},       {"pipeline_chunks", "--chunks"}, {"algorithm", "--algo"}};
    for (const auto& [f, option] : map)
        if (field == f)
            return std::string(option);
    return {};
}

// A validate() error with the option name in place of the spec's field name.
Error asOptionError(Error e)
{
    for (std::string* where : {&e.where.field, &e.where.jsonPath}) {
        const std::string option = optionForField(*where);
        if (!option.empty()) {
            e.where.jsonPath.clear();
            e.where.field = option;
            break;
        }
    }
    return e;
}

std::string formatRate(double bytesPerSecond, const DisplayUnits& units)
{
    return formatBytes(bytesPerSecond, units) + "/s";
}

// "10 Gb/s": a rate in bits with decimal prefixes.
std::string formatBits(double bytesPerSecond)
{
    std::string s = formatBytes(bytesPerSecond * 8, DisplayUnits{ByteUnits::Decimal, 4});
    if (!s.empty() && s.back() == 'B')
        s.back() = 'b';
    return s + "/s";
}

// Bytes per rank for the table: "every rank: 448 MB" when equal, else rank by rank (for more than 16
// ranks the first 6 and the last 2, with the least and the most).
std::string perRankLine(const std::vector<double>& v, const DisplayUnits& units)
{
    if (v.empty())
        return "-";
    const auto [least, most] = std::minmax_element(v.begin(), v.end());
    if (*least == *most)
        return (v.size() == 1 ? std::string("the one rank: ") : std::string("every rank: ")) + formatBytes(*least, units);
    auto item = [&](std::size_t r) { return "rank " + std::to_string(r) + ": " + formatBytes(v[r], units); };
    std::string out;
    if (v.size() <= 16) {
        for (std::size_t r = 0; r < v.size(); ++r)
            out += (r ? ", " : "") + item(r);
        return out;
    }
    for (std::size_t r = 0; r < 6; ++r)
        out += (r ? ", " : "") + item(r);
    out += ", …, " + item(v.size() - 2) + ", " + item(v.size() - 1);
    out += " (" + formatInteger(static_cast<std::int64_t>(v.size())) + " ranks; least " + formatBytes(*least, units)
        + ", most " + formatBytes(*most, units) + ")";
    return out;
}

// The counted figures against collective::closedForm: which ones it gives, and the ones that differ.
struct ClosedFormCheck {
    bool present = false;
    std::vector<std::string> differences;
};

ClosedFormCheck compare(const collective::ClosedForm& cf, const collective::Counts& c)
{
    ClosedFormCheck out;
    out.present = cf.perRankSentBytes || cf.totalBytes || cf.steps;
    out.differences = collective::differencesFromClosedForm(cf, c);
    return out;
}

json optionalNumber(const std::optional<double>& v)
{
    return v ? numberJson(*v) : json(nullptr);
}

int listCollectives(const CollectiveOptions& o, std::ostream& out)
{
    std::vector<collective::Op> ops;
    for (collective::Op op : allOps())
        if (!o.opGiven || op == o.spec.op)
            ops.push_back(op);
    if (o.json) {
        json list = json::array();
        for (collective::Op op : ops) {
            json algorithms = json::array();
            const auto& as = collective::algorithmsFor(op);
            for (std::size_t i = 0; i < as.size(); ++i)
                algorithms.push_back({{"name", std::string(collective::toString(as[i]))},
                                      {"default", i == 0},
                                      {"description", collective::describe(op, as[i])}});
            list.push_back({{"op", std::string(collective::toString(op))},
                            {"name", std::string(collective::displayName(op))},
                            {"algorithms", algorithms}});
        }
        out << dumpJson(json{{"operations", list}}) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    std::size_t width = 0;
    for (collective::Op op : ops) {
        const auto& as = collective::algorithmsFor(op);
        for (std::size_t i = 0; i < as.size(); ++i)
            width = std::max(width, collective::toString(as[i]).size() + (i == 0 ? std::string(" (default)").size() : 0));
    }
    for (std::size_t k = 0; k < ops.size(); ++k) {
        const collective::Op op = ops[k];
        out << (k ? "\n" : "") << collective::toString(op) << " — " << collective::displayName(op) << '\n';
        const auto& as = collective::algorithmsFor(op);
        for (std::size_t i = 0; i < as.size(); ++i)
            out << "  " << padRight(std::string(collective::toString(as[i])) + (i == 0 ? " (default)" : ""), width)
                << collective::describe(op, as[i]) << '\n';
    }
    return out.good() ? kExitOk : kExitInput;
}

// --steps in JSON: "chunks" and "schedule" written one element at a time (a schedule of N = 1,024
// has millions of transfers; it is never held whole in memory).
void writeScheduleJson(const collective::ScheduleSpec& spec, std::ostream& out)
{
    collective::Schedule schedule(spec);
    out << ",\"chunks\":[";
    for (std::uint32_t i = 0; i < schedule.chunkCount(); ++i) {
        const collective::Chunk c = schedule.chunk(i);
        out << (i ? "," : "")
            << dumpJson(json{{"index", i},
                             {"offset", numberJson(c.offset)},
                             {"bytes", numberJson(c.bytes)},
                             {"origin", c.origin},
                             {"destination", c.destination}});
    }
    out << "],\"schedule\":[";
    // Transfers written by hand: millions of them go through here, one small json object each is slow.
    std::vector<collective::Transfer> step;
    std::string line;
    for (std::uint64_t i = 0; schedule.next(step); ++i) {
        line = i ? ",{\"step\":" : "{\"step\":";
        line += std::to_string(i + 1);
        line += ",\"phase\":";
        line += dumpJson(json(schedule.phaseOf(i)));
        line += ",\"transfers\":[";
        for (std::size_t k = 0; k < step.size(); ++k) {
            const collective::Transfer& t = step[k];
            line += k ? ",{\"src\":" : "{\"src\":";
            line += std::to_string(t.src);
            line += ",\"dst\":";
            line += std::to_string(t.dst);
            line += ",\"chunk\":";
            line += std::to_string(t.chunk);
            line += ",\"bytes\":";
            line += dumpJson(numberJson(t.bytes));
            line += t.reduce ? ",\"reduce\":true}" : ",\"reduce\":false}";
        }
        line += "]}";
        out << line;
    }
    out << "]";
}

// --steps in the table: each step's transfers, one line each.
void writeScheduleTable(const collective::ScheduleSpec& spec, const DisplayUnits& units, std::ostream& out)
{
    collective::Schedule schedule(spec);
    out << "\nChunks (" << formatInteger(schedule.chunkCount()) << "):\n";
    const bool allToAll = spec.op == collective::Op::AllToAll;
    for (std::uint32_t i = 0; i < schedule.chunkCount(); ++i) {
        const collective::Chunk c = schedule.chunk(i);
        out << "  #" << i << "  offset " << formatCount(c.offset) << " B, " << formatBytes(c.bytes, units);
        if (allToAll)
            out << ", rank " << c.origin << " → rank " << c.destination;
        out << '\n';
    }
    const std::string total = formatInteger(static_cast<std::int64_t>(schedule.stepCount()));
    out << "\nSchedule (" << total << " steps; a rank sends at most one message and receives at most one per step):\n";
    std::vector<collective::Transfer> step;
    for (std::uint64_t i = 0; schedule.next(step); ++i) {
        out << "Step " << formatInteger(static_cast<std::int64_t>(i + 1)) << " of " << total;
        const std::string phase = schedule.phaseOf(i);
        if (!phase.empty())
            out << " (" << phase << ")";
        out << ":\n";
        for (const collective::Transfer& t : step)
            out << "  " << t.src << " → " << t.dst << "  chunk #" << t.chunk << "  " << formatBytes(t.bytes, units) << "  "
                << (t.reduce ? "reduce" : "copy") << '\n';
    }
}

} // namespace

int runCollective(const CollectiveOptions& o, std::ostream& out, std::ostream& err)
{
    if (o.list)
        return listCollectives(o, out);
    const collective::ScheduleSpec& spec = o.spec;
    const std::vector<Error> problems = collective::validate(spec);
    if (!problems.empty()) {
        for (const Error& e : problems)
            printError(err, asOptionError(e));
        err << kTool << ": " << collective::displayName(spec.op) << " with " << collective::toString(spec.algorithm)
            << " cannot be scheduled (" << problems.size() << (problems.size() == 1 ? " reason" : " reasons") << ")\n";
        return kExitInput;
    }
    collective::LinkModel link;
    link.alphaSeconds = o.alphaSeconds;
    link.bandwidth = o.bandwidth;
    const collective::Counts c = collective::count(spec, link);
    const collective::ClosedForm cf = collective::closedForm(spec);
    const ClosedFormCheck check = compare(cf, c);
    const bool usesRoot = spec.op == collective::Op::Broadcast || spec.op == collective::Op::Reduce
        || spec.algorithm == collective::Algorithm::ReduceBroadcast;

    if (o.json) {
        json closed = nullptr;
        if (check.present || !cf.formula.empty())
            closed = json{{"formula", cf.formula},
                          {"per_rank_sent_bytes", optionalNumber(cf.perRankSentBytes)},
                          {"total_bytes", optionalNumber(cf.totalBytes)},
                          {"steps", cf.steps ? json(*cf.steps) : json(nullptr)},
                          {"matches", check.differences.empty()},
                          {"differences", check.differences}};
        json sent = json::array();
        for (double b : c.sentPerRank)
            sent.push_back(numberJson(b));
        json received = json::array();
        for (double b : c.receivedPerRank)
            received.push_back(numberJson(b));
        const json doc{{"op", std::string(collective::toString(spec.op))},
                       {"algorithm", std::string(collective::toString(spec.algorithm))},
                       {"description", collective::describe(spec.op, spec.algorithm)},
                       {"ranks", spec.ranks},
                       {"bytes", numberJson(spec.bytes)},
                       {"root", usesRoot ? json(spec.root) : json(nullptr)},
                       {"ranks_per_node", spec.ranksPerNode},
                       {"pipeline_chunks", spec.pipelineChunks},
                       {"alpha_s", o.alphaSeconds},
                       {"bandwidth_bytes_per_s", numberJson(o.bandwidth)},
                       {"steps", c.steps},
                       {"transfers", c.transfers},
                       {"total_bytes", numberJson(c.totalBytes)},
                       {"per_rank_sent_bytes", std::move(sent)},
                       {"per_rank_received_bytes", std::move(received)},
                       {"max_rank_sent_bytes", numberJson(c.maxRankSentBytes)},
                       {"time_s", c.timeSeconds},
                       {"algbw", optionalNumber(c.algbw)},
                       {"busbw", optionalNumber(c.busbw)},
                       {"busbw_factor", c.busbwFactor ? json(*c.busbwFactor) : json(nullptr)},
                       {"closed_form", closed}};
        if (!o.steps) {
            out << dumpJson(doc) << '\n';
            return out.good() ? kExitOk : kExitInput;
        }
        std::string head = dumpJson(doc);
        head.pop_back(); // the closing brace: "chunks" and "schedule" follow
        out << head;
        writeScheduleJson(spec, out);
        out << "}\n";
        return out.good() ? kExitOk : kExitInput;
    }

    const DisplayUnits& u = o.units;
    out << "Collective:  " << collective::displayName(spec.op) << ", " << collective::toString(spec.algorithm) << " (N = "
        << formatInteger(static_cast<std::int64_t>(spec.ranks)) << (spec.ranks == 1 ? " rank" : " ranks") << ", M = "
        << formatBytes(spec.bytes, u);
    if (!formatBytes(spec.bytes, u).ends_with(" B"))
        out << " = " << formatCount(spec.bytes) << " B";
    if (usesRoot)
        out << ", root " << spec.root;
    if (spec.ranksPerNode)
        out << ", " << spec.ranksPerNode << " ranks per node";
    if (spec.pipelineChunks)
        out << ", " << spec.pipelineChunks << " pipeline chunks";
    out << ")\n";
    out << "             " << collective::describe(spec.op, spec.algorithm) << '\n';
    out << "Link model:  α = " << formatSeconds(o.alphaSeconds) << " per message, β = " << formatBits(o.bandwidth) << " ("
        << formatRate(o.bandwidth, u) << "); time = Σ over steps of (α + the step's largest message / β)\n\n";

    // "3.584 GB (3,584,000,000 B)": the exact count next to the rounded one.
    auto bytesCell = [&](double b) {
        const std::string shown = formatBytes(b, u);
        return shown.ends_with(" B") ? shown : shown + " (" + formatCount(b) + " B)";
    };
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.6g", c.busbwFactor.value_or(0));
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Steps", formatInteger(static_cast<std::int64_t>(c.steps))});
    rows.push_back({"Transfers", formatInteger(static_cast<std::int64_t>(c.transfers))});
    rows.push_back({"Total bytes on the wire", bytesCell(c.totalBytes)});
    rows.push_back({"Most bytes one rank sends", bytesCell(c.maxRankSentBytes)});
    rows.push_back({"Sent per rank", perRankLine(c.sentPerRank, u)});
    rows.push_back({"Received per rank", perRankLine(c.receivedPerRank, u)});
    rows.push_back({"Time (α–β)", formatSeconds(c.timeSeconds)});
    rows.push_back({"algbw = M / time", c.algbw ? formatRate(*c.algbw, u) : std::string("n/a (one rank)")});
    if (c.busbw && c.busbwFactor)
        rows.push_back({"busbw = algbw × factor", formatRate(*c.busbw, u) + " (factor " + factor + ")"});
    else
        rows.push_back({"busbw", "n/a (one rank)"});
    if (!check.present) {
        rows.push_back({"Closed form", "none for this algorithm"});
    } else if (check.differences.empty()) {
        rows.push_back({"Closed form", cf.formula + ": matches"});
    } else {
        rows.push_back({"Closed form", cf.formula + ": differs"});
        for (const std::string& d : check.differences)
            rows.push_back({"", d});
    }
    printRows(out, rows);
    if (o.steps)
        writeScheduleTable(spec, u, out);
    return out.good() ? kExitOk : kExitInput;
}

namespace {

// "+0.21 %" with the sign always shown.
std::string signedPercent(double fraction)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%+.2f %%", fraction * 100);
    return buffer;
}

} // namespace

int runValidate(const ValidateOptions& o, std::ostream& out, std::ostream& err)
{
    namespace om = collective::openmpi;
    // The committed dataset is compiled in, so validate works from any directory and in the tests.
    std::string text;
    std::string source = "data/measurements/openmpi-loopback.json (compiled in)";
    if (o.dataFile.empty()) {
        text = std::string(om::embeddedDataset());
    } else {
        auto bytes = readInput(o.dataFile, "the measured dataset");
        if (!bytes) {
            printError(err, bytes.error());
            return kExitInput;
        }
        text = std::move(bytes).value();
        source = displayName(o.dataFile);
    }
    auto rows = om::parseDataset(text);
    if (!rows) {
        Error e = rows.error();
        e.where.file = source;
        printError(err, e);
        return kExitInput;
    }
    const auto comparisons = om::compare(rows.value());
    std::size_t misses = 0, exclusions = 0;
    double worst = 0;
    for (const auto& c : comparisons) {
        misses += c.pass ? 0 : 1;
        exclusions += c.excluded ? 1 : 0;
        if (!c.excluded)
            worst = std::max(worst, std::fabs(c.error));
    }
    if (o.json) {
        json doc;
        doc["source"] = source;
        doc["tolerance"] = om::kTolerance;
        json list = json::array();
        for (const auto& c : comparisons) {
            json j;
            j["library"] = c.row.library;
            j["op"] = std::string(collective::toString(c.row.measuredCase.op));
            j["algorithm_id"] = c.row.measuredCase.algorithmId;
            j["algorithm"] = c.prediction.algorithmName;
            j["ranks"] = c.row.measuredCase.ranks;
            j["bytes"] = c.row.measuredCase.bytes;
            j["measured_payload_bytes"] = c.row.payloadBytes;
            j["predicted_payload_bytes"] = c.excluded ? json(nullptr) : json(c.prediction.payloadBytes);
            j["ratio"] = c.excluded ? json(nullptr) : json(c.ratio);
            j["error"] = c.excluded ? json(nullptr) : json(c.error);
            j["tokenwire"] = c.excluded ? json(nullptr) : json(std::string(collective::toString(c.prediction.spec.algorithm)));
            j["how"] = c.prediction.how;
            j["excluded"] = c.excluded;
            j["pass"] = c.pass;
            list.push_back(std::move(j));
        }
        doc["rows"] = std::move(list);
        doc["misses"] = misses;
        doc["exclusions"] = exclusions;
        doc["worst_error"] = worst;
        out << dumpJson(doc, 2) << '\n';
    } else {
        out << "Predicted vs measured payload bytes (one call, Σ over ranks), " << source << "\n\n";
        std::vector<std::vector<std::string>> table{
            {"op", "Open MPI algorithm", "N", "bytes", "measured", "predicted", "error", "tokenwire", "status"}};
        for (const auto& c : comparisons) {
            const auto& m = c.row.measuredCase;
            table.push_back({std::string(collective::toString(m.op)),
                             std::to_string(m.algorithmId) + " " + c.prediction.algorithmName,
                             std::to_string(m.ranks), formatCount(m.bytes, 0), formatCount(c.row.payloadBytes, 0),
                             c.excluded ? "—" : formatCount(c.prediction.payloadBytes, 0),
                             c.excluded ? "—" : signedPercent(c.error),
                             c.excluded ? "—" : std::string(collective::toString(c.prediction.spec.algorithm)),
                             c.excluded ? "excluded" : c.pass ? "ok" : "MISS"});
        }
        printRows(out, table);
        out << '\n'
            << comparisons.size() << " rows: " << comparisons.size() - misses - exclusions << " within "
            << formatCount(om::kTolerance * 100, 0) << " %, " << exclusions << " excluded, " << misses
            << " missed; worst error " << formatCount(worst * 100, 2) << " %\n";
        // Each exclusion's reason once per (op, algorithm).
        std::vector<std::string> seen;
        for (const auto& c : comparisons) {
            if (!c.excluded)
                continue;
            const std::string key = std::string(collective::toString(c.row.measuredCase.op)) + " "
                + std::to_string(c.row.measuredCase.algorithmId) + " " + c.prediction.algorithmName;
            if (std::find(seen.begin(), seen.end(), key) != seen.end())
                continue;
            seen.push_back(key);
            out << "excluded: " << key << ": " << c.prediction.how << '\n';
        }
    }
    for (const auto& c : comparisons)
        if (!c.pass)
            err << kTool << ": miss: " << collective::toString(c.row.measuredCase.op) << ' ' << c.prediction.algorithmName
                << " N=" << c.row.measuredCase.ranks << " bytes=" << formatCount(c.row.measuredCase.bytes, 0)
                << ": measured " << formatCount(c.row.payloadBytes, 0) << " B, predicted "
                << formatCount(c.prediction.payloadBytes, 0) << " B (" << signedPercent(c.error) << ")\n";
    if (!out.good())
        return kExitInput;
    return misses > 0 ? kExitInput : kExitOk;
}

int runPresets(std::ostream& out)
{
    const auto list = scenario::presetList();
    for (const auto& p : list)
        out << p.name << '\n';
    out << '\n';
    for (const auto& p : list)
        out << p.name << " — " << p.description << '\n';
    return out.good() ? kExitOk : kExitInput;
}

int runTool(int argc, char** argv, std::ostream& out, std::ostream& err)
{
    std::vector<std::string_view> args;
    for (int i = 1; i < argc; ++i)
        args.emplace_back(argv[i]);
    auto inv = parseArgs(args);
    if (!inv) {
        printError(err, inv.error());
        err << "Try '" << kTool << " --help'.\n";
        return kExitUsage;
    }
    const Invocation& i = inv.value();
    if (i.help) {
        out << usage(i.command);
        return kExitOk;
    }
    if (i.version) {
        out << kTool << ' ' << TOKENWIRE_VERSION << '\n';
        return kExitOk;
    }
    switch (i.command) {
    case Command::Tokenize:
        return runTokenize(i.tokenize, out, err);
    case Command::TrainBpe:
        return runTrainBpe(i.trainBpe, out, err);
    case Command::Derive:
        return runDerive(i.scenario, out, err);
    case Command::Tensors:
        return runTensors(i.scenario, out, err);
    case Command::Explain:
        return runExplain(i.scenario, out, err);
    case Command::Plan:
        return runPlan(i.scenario, out, err);
    case Command::Memory:
        return runMemory(i.scenario, out, err);
    case Command::Kernels:
        return runKernels(i.scenario, out, err);
    case Command::Fit:
        return runFit(i.fit, out, err);
    case Command::Simulate:
        return runSimulate(i.scenario, out, err);
    case Command::Sweep:
        return runSweep(i.sweep, out, err);
    case Command::Collective:
        return runCollective(i.collective, out, err);
    case Command::Presets:
        return runPresets(out);
    case Command::Validate:
        return runValidate(i.validate, out, err);
    case Command::Busbw:
        return runBusbw(i.busbw, out, err);
    case Command::None:
        break;
    }
    out << usage(Command::None);
    return kExitUsage;
}

// For commands in their own files (cmd_*.cpp): the scenario of --scenario / --preset, and the error printer.
Result<scenario::Scenario> loadScenarioFor(const ScenarioOptions& options, std::ostream& err)
{
    return scenarioFor(options, err);
}

void printCliError(std::ostream& err, const Error& e)
{
    printError(err, e);
}

void applyPlanOverrides(const ScenarioOptions& options, scenario::Scenario& s)
{
    applyOverridesOf(options, s);
}

std::string scenarioDisplayName(const std::string& path)
{
    return displayName(path);
}

std::optional<DerivedScenario> deriveScenarioFor(const ScenarioOptions& options, std::ostream& err)
{
    auto loaded = scenarioFor(options, err);
    if (!loaded) {
        printError(err, loaded.error());
        return std::nullopt;
    }
    DerivedScenario out{std::move(loaded).value(), nullptr};
    applyOverridesOf(options, out.scenario);
    auto derived = scenario::derive(out.scenario);
    if (!derived) {
        Error e = derived.error();
        if (e.where.file.empty() && !options.scenarioFile.empty())
            e.where.file = displayName(options.scenarioFile);
        printError(err, e);
        return std::nullopt;
    }
    out.derivation = std::move(derived).value();
    return out;
}

} // namespace tw::cli
