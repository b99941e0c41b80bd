// tokenwire-cli tokenize and train-bpe: stage 1, a text and its tokens.

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/fileio.h"
#include "base/units.h"
#include "scenario/derivationjson.h"
#include "text/bpe.h"
#include "text/bpetrainer.h"
#include "text/dataset.h"
#include "text/gpt2.h"
#include "text/utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tw::cli {

using json = nlohmann::ordered_json;

namespace {

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

// The tokenize table: the dataset's figures, then the histogram of token lengths.
void printTokenizeTable(std::ostream& out, const text::DatasetStats& stats, const text::BpeModel& model,
                        const TokenizeOptions& o)
{
    out << "Text:       " << displayName(o.input) << '\n';
    out << "Tokenizer:  " << model.name() << " ("
        << formatInteger(static_cast<std::int64_t>(model.vocabSize())) << " tokens)\n\n";

    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Figure", "Value", "Formula"});
    for (const Figure& f : stats.figures.all())
        rows.push_back({f.label, formatValue(f.value, f.unit, o.units), f.formula});
    printRows(out, rows);

    out << '\n';
    rows.clear();
    rows.push_back({"Token length (bytes)", "Tokens", ""});
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
        rows.push_back({std::to_string(k), formatInteger(static_cast<std::int64_t>(c)), bars});
    }
    printRows(out, rows);
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
    if (o.tokenizer == "gpt2" && !text::gpt2Note().empty())
        printWarning(err, text::gpt2Note());
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
        out << encoder.count(textBytes) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }

    auto spans = encoder.encodeWithSpans(textBytes);
    if (!spans) {
        printError(err, fileError(o.input, spans.error().message));
        return kExitInput;
    }
    const text::DatasetStats stats = text::computeDataset(textBytes, spans.value(), model.value(), o.shape);

    if (o.format == OutputFormat::Table) {
        printTokenizeTable(out, stats, model.value(), o);
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

} // namespace tw::cli
