// Why ~840 lines: the one parser of every command's options (15 commands share the cursor, the unit
// and name parsers and the did-you-mean messages); the usage texts live in usage.cpp.
#include "args.h"

#include "base/editdistance.h"
#include "base/enumnames.h"
#include "base/unitparse.h"
#include "collective/nccl.h"
#include "scenario/presets.h"
#include "scenario/sweep.h"
#include "text/bpetrainer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <system_error>

namespace tw::cli {

namespace {

Error usageError(std::string message, std::string field = {})
{
    Location where;
    where.field = std::move(field);
    return makeError(std::move(message), std::move(where));
}

// A whole decimal number in [lo, hi], or an Error naming the option.
Result<std::uint64_t> parseUnsigned(std::string_view option, std::string_view text, std::uint64_t lo, std::uint64_t hi)
{
    const std::string shown = quoted(text);
    if (text.empty())
        return usageError("empty value; expected a whole number", std::string(option));
    bool digitsOnly = true;
    for (char c : text)
        digitsOnly = digitsOnly && c >= '0' && c <= '9';
    const bool negative = text.front() == '-' && text.size() > 1
        && text.find_first_not_of("0123456789", 1) == std::string_view::npos;
    if (!digitsOnly && !negative)
        return usageError(shown + " is not a number; expected a whole number", std::string(option));
    const std::string range = formatInteger(static_cast<std::int64_t>(lo)) + "…"
        + formatInteger(static_cast<std::int64_t>(hi));
    if (negative)
        return usageError(shown + " is out of range (" + range + ")", std::string(option));
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range || value < lo || value > hi)
        return usageError(shown + " is out of range (" + range + ")", std::string(option));
    if (ec != std::errc() || end != text.data() + text.size())
        return usageError(shown + " is not a number; expected a whole number", std::string(option));
    return value;
}

// Walks argv one item at a time; `--name=value` and `--name value` both give a value.
class ArgCursor {
public:
    explicit ArgCursor(const std::vector<std::string_view>& args) : m_args(args) {}
    [[nodiscard]] bool atEnd() const { return m_pos >= m_args.size(); }
    std::string_view take() { return m_args[m_pos++]; }

    // The value of option `name` whose inline part (after '=') is `inlineValue` when present.
    Result<std::string_view> value(std::string_view name, std::optional<std::string_view> inlineValue)
    {
        if (inlineValue)
            return *inlineValue;
        if (atEnd())
            return usageError("missing value", std::string(name));
        const std::string_view next = m_args[m_pos];
        if (next.size() > 1 && next.starts_with("--"))
            return usageError("missing value (found option '" + std::string(next) + "' instead)", std::string(name));
        ++m_pos;
        return next;
    }

private:
    const std::vector<std::string_view>& m_args;
    std::size_t m_pos = 0;
};

// Splits "--name=value" into its name and value; other arguments come back unchanged.
std::pair<std::string_view, std::optional<std::string_view>> splitOption(std::string_view arg)
{
    if (!arg.starts_with("--"))
        return {arg, std::nullopt};
    const auto eq = arg.find('=');
    if (eq == std::string_view::npos)
        return {arg, std::nullopt};
    return {arg.substr(0, eq), arg.substr(eq + 1)};
}

constexpr std::array kCommandNames{
    EnumName{Command::Tokenize, "tokenize"}, EnumName{Command::TrainBpe, "train-bpe"}, EnumName{Command::Derive, "derive"},
    EnumName{Command::Tensors, "tensors"},   EnumName{Command::Explain, "explain"},     EnumName{Command::Plan, "plan"},
    EnumName{Command::Memory, "memory"},     EnumName{Command::Kernels, "kernels"},     EnumName{Command::Fit, "fit"},
    EnumName{Command::Collective, "collective"}, EnumName{Command::Simulate, "simulate"}, EnumName{Command::Sweep, "sweep"},
    EnumName{Command::Presets, "presets"},   EnumName{Command::Validate, "validate"},   EnumName{Command::Busbw, "busbw"},
    EnumName{Command::Schema, "schema"}, EnumName{Command::Run, "run"}};

std::string commandName(Command command)
{
    return std::string(nameOf(kCommandNames, command, "tokenwire-cli"));
}

Error unknownOption(std::string_view name, Command command)
{
    return usageError("unknown option '" + std::string(name) + "' for " + commandName(command) + " (see --help)");
}

// --units si|iec into units.
Result<bool> parseUnits(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl, DisplayUnits& units)
{
    auto v = cur.value(name, inl);
    if (!v)
        return v.error();
    if (v.value() == "si")
        units.bytes = ByteUnits::Decimal;
    else if (v.value() == "iec")
        units.bytes = ByteUnits::Binary;
    else
        return usageError(quoted(v.value()) + " is not a unit system; expected si (MB) or iec (MiB)", std::string(name));
    return true;
}

// Options of derive, tensors and explain; returns false when `name` is not one of them.
Result<bool> parseScenarioOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl,
                                 ScenarioOptions& o)
{
    if (name == "--json") {
        if (inl)
            return usageError("takes no value", std::string(name));
        o.json = true;
        return true;
    }
    if (name == "--units")
        return parseUnits(cur, name, inl, o.units);
    if (name == "--scenario" || name == "--preset") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        const bool isFile = name == "--scenario";
        if (v->empty())
            return usageError(isFile ? "empty value; expected a scenario file (or - for standard input)"
                                     : "empty value; expected a preset name (see tokenwire-cli presets)",
                              std::string(name));
        if ((isFile && !o.preset.empty()) || (!isFile && !o.scenarioFile.empty()))
            return usageError("--scenario and --preset cannot be used together", std::string(name));
        std::string& target = isFile ? o.scenarioFile : o.preset;
        if (!target.empty())
            return usageError("given twice", std::string(name));
        target = std::string(v.value());
        if (!isFile) {
            auto p = scenario::preset(target);
            if (!p)
                return usageError(p.error().message, std::string(name));
        }
        return true;
    }
    return false;
}

// Options of `plan` beyond the scenario's; returns false when `name` is not one of them.
Result<bool> parsePlanOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl, ScenarioOptions& o)
{
    std::optional<std::uint64_t>* degree = name == "--dp" ? &o.dp
                                           : name == "--pp" ? &o.pp
                                           : name == "--tp" ? &o.tp
                                           : name == "--ep" ? &o.ep
                                                            : nullptr;
    if (degree) {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        auto n = parseUnsigned(name, v.value(), 1, std::uint64_t{1} << 20);
        if (!n)
            return n.error();
        if (*degree)
            return usageError("given twice", std::string(name));
        *degree = n.value();
        return true;
    }
    if (name == "--zero" || name == "--sharding") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        if (o.sharding)
            return usageError("--zero and --sharding set the same thing; give one of them once", std::string(name));
        if (name == "--zero") {
            auto k = parseUnsigned(name, v.value(), 0, 3);
            if (!k)
                return k.error();
            o.sharding = k.value() == 0 ? std::string("ddp") : "zero" + std::to_string(k.value());
        } else {
            if (!parallel::shardingFromString(v.value()))
                return usageError(quoted(v.value()) + " is not a sharding; expected ddp, zero1, zero2, zero3, fsdp-full or fsdp-hybrid",
                                  std::string(name));
            o.sharding = std::string(v.value());
        }
        return true;
    }
    return parseScenarioOption(cur, name, inl, o);
}

// Options of `sweep`; returns false when `name` is not one of them. A malformed --gpus is wrong usage
// (exit 2), as a malformed value of any other option is.
Result<bool> parseSweepOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl,
                              SweepCommandOptions& o, bool& gpusGiven)
{
    if (name == "--gpus") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        if (gpusGiven)
            return usageError("given twice", std::string(name));
        auto list = scenario::parseGpuList(v.value());
        if (!list)
            return usageError(list.error().message, std::string(name));
        o.gpus = std::move(list).value();
        gpusGiven = true;
        return true;
    }
    if (name == "--strong" || name == "--csv") {
        if (inl)
            return usageError("takes no value", std::string(name));
        (name == "--strong" ? o.strong : o.csv) = true;
        if (o.csv && o.scenario.json)
            return usageError("--json and --csv cannot be used together", std::string(name));
        return true;
    }
    if (name == "--json" && o.csv)
        return usageError("--json and --csv cannot be used together", std::string(name));
    return parseScenarioOption(cur, name, inl, o.scenario);
}

// Options of `validate`; returns false when `name` is not one of them.
Result<bool> parseValidateOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl, ValidateOptions& o)
{
    if (name == "--json") {
        if (inl)
            return usageError("takes no value", std::string(name));
        o.json = true;
        return true;
    }
    if (name == "--data") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        if (v.value().empty())
            return usageError("empty value; expected a measured dataset (JSON) FILE", std::string(name));
        o.dataFile = std::string(v.value());
        return true;
    }
    return false;
}

// Options of `tokenize`; returns false when `name` is not one of them.
Result<bool> parseTokenizeOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl,
                                 TokenizeOptions& o, bool& formatSet)
{
    auto setFormat = [&](OutputFormat f) -> Result<bool> {
        if (inl)
            return usageError("takes no value", std::string(name));
        if (formatSet && o.format != f)
            return usageError("--json and --count cannot be used together", std::string(name));
        o.format = f;
        formatSet = true;
        return true;
    };
    if (name == "--json")
        return setFormat(OutputFormat::Json);
    if (name == "--count")
        return setFormat(OutputFormat::Count);
    if (name == "--tokenizer") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        if (v->empty())
            return usageError("empty value; expected gpt2 or a tokenizer.json path", std::string(name));
        o.tokenizer = std::string(v.value());
        return true;
    }
    if (name == "--units") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        if (v.value() == "si")
            o.units.bytes = ByteUnits::Decimal;
        else if (v.value() == "iec")
            o.units.bytes = ByteUnits::Binary;
        else
            return usageError(quoted(v.value()) + " is not a unit system; expected si (MB) or iec (MiB)",
                              std::string(name));
        return true;
    }
    std::uint64_t* target = name == "--seq-len" ? &o.shape.sequenceLength
        : name == "--micro-batch"               ? &o.shape.microBatch
        : name == "--global-batch"              ? &o.shape.globalBatchTokens
                                                : nullptr;
    if (!target)
        return false;
    auto v = cur.value(name, inl);
    if (!v)
        return v.error();
    auto n = parseUnsigned(name, v.value(), 1, std::uint64_t{1} << 40);
    if (!n)
        return n.error();
    *target = n.value();
    return true;
}

// Options of `train-bpe`; returns false when `name` is not one of them.
Result<bool> parseTrainOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl,
                              TrainBpeOptions& o)
{
    if (name == "--vocab-size") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        auto n = parseUnsigned(name, v.value(), text::kMinTrainVocab, text::kMaxTrainVocab);
        if (!n)
            return n.error();
        o.vocabSize = static_cast<std::size_t>(n.value());
        return true;
    }
    if (name == "--out") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        if (v->empty())
            return usageError("empty value; expected a file path", std::string(name));
        o.out = std::string(v.value());
        return true;
    }
    return false;
}


// Lowercase, '_' as '-': "AllReduce", "all_reduce" and "all-reduce" name the same thing.
std::string normalizedName(std::string_view s, bool dropDashes)
{
    std::string out;
    for (char c : s) {
        if (c == '_')
            c = '-';
        if (dropDashes && (c == '-' || c == '/'))
            continue;
        out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    }
    return out;
}

// "a, b or c".
std::string listOr(const std::vector<std::string>& names)
{
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

// "tokenize, train-bpe, … , validate or busbw".
std::string commandList()
{
    std::vector<std::string> names;
    for (const auto& row : kCommandNames)
        names.emplace_back(row.name);
    return listOr(names);
}

// The names close to a misspelled one: a small edit distance, or containing it.
std::vector<std::string> closeNames(std::string_view given, const std::vector<std::string>& names)
{
    const std::string g = normalizedName(given, false);
    const std::size_t limit = std::max<std::size_t>(2, g.size() / 4);
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (const std::string& n : names) {
        const std::size_t d = editDistance(g, n);
        if (d <= limit || (g.size() >= 3 && n.find(g) != std::string::npos))
            scored.push_back({d, n});
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && i < 3; ++i)
        out.push_back(scored[i].second);
    return out;
}

std::string didYouMean(const std::vector<std::string>& close)
{
    return close.empty() ? std::string() : " (did you mean " + listOr(close) + "?)";
}

std::vector<std::string> opNames()
{
    std::vector<std::string> out;
    for (collective::Op op : collective::allOps())
        out.emplace_back(collective::toString(op));
    return out;
}

std::vector<std::string> algorithmNames(const std::vector<collective::Algorithm>& list)
{
    std::vector<std::string> out;
    for (collective::Algorithm a : list)
        out.emplace_back(collective::toString(a));
    return out;
}

// Every algorithm of every operation, each name once, in the order of the operations.
std::vector<std::string> allAlgorithmNames()
{
    std::vector<std::string> out;
    for (const std::string& op : opNames())
        for (const std::string& a : algorithmNames(collective::algorithmsFor(*collective::opFromString(op))))
            if (std::find(out.begin(), out.end(), a) == out.end())
                out.push_back(a);
    return out;
}

// --op NAME: the JSON/CLI name, or the display name in any case ("AllReduce", "all-to-all").
Result<collective::Op> parseOpName(std::string_view name, std::string_view text)
{
    if (auto op = collective::opFromString(text))
        return *op;
    const std::vector<std::string> names = opNames();
    for (const std::string& n : names)
        if (normalizedName(n, true) == normalizedName(text, true))
            return *collective::opFromString(n);
    if (text.empty())
        return usageError("empty value; expected " + listOr(names), std::string(name));
    return usageError(quoted(text) + " is not an operation" + didYouMean(closeNames(text, names)) + "; expected "
                          + listOr(names),
                      std::string(name));
}

// --algo NAME for the operation: an algorithm it has, or a message with the ones it has.
Result<collective::Algorithm> parseAlgorithmName(std::string_view name, std::string_view text, collective::Op op)
{
    const auto& available = collective::algorithmsFor(op);
    const std::vector<std::string> names = algorithmNames(available);
    const std::string opName(collective::toString(op));
    std::optional<collective::Algorithm> a = collective::algorithmFromString(text);
    if (!a) {
        for (const std::string& n : allAlgorithmNames())
            if (normalizedName(n, true) == normalizedName(text, true))
                a = collective::algorithmFromString(n);
    }
    if (!a) {
        if (text.empty())
            return usageError("empty value; " + opName + " has " + listOr(names), std::string(name));
        std::vector<std::string> close = closeNames(text, names);
        if (close.empty())
            close = closeNames(text, allAlgorithmNames());
        return usageError(quoted(text) + " is not an algorithm" + didYouMean(close) + "; " + opName + " has "
                              + listOr(names),
                          std::string(name));
    }
    if (std::find(available.begin(), available.end(), *a) == available.end())
        return usageError(opName + " has no " + std::string(collective::toString(*a)) + " algorithm; it has "
                              + listOr(names) + " (see tokenwire-cli collective --list)",
                          std::string(name));
    return *a;
}

// What `collective` has seen so far: options given twice are refused; --algo is resolved once --op is known.
struct CollectiveSeen {
    std::vector<std::string> given;
    std::optional<std::string> algorithm;
    bool ranks = false, bytes = false;

    Result<bool> once(std::string_view name)
    {
        if (std::find(given.begin(), given.end(), name) != given.end())
            return usageError("given twice", std::string(name));
        given.emplace_back(name);
        return true;
    }
};

// Options of `collective`; returns false when `name` is not one of them.
Result<bool> parseCollectiveOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl,
                                   CollectiveOptions& o, CollectiveSeen& seen)
{
    const bool flag = name == "--json" || name == "--steps" || name == "--list";
    const bool valued = name == "--op" || name == "--algo" || name == "--ranks" || name == "--bytes" || name == "--alpha"
        || name == "--bandwidth" || name == "--root" || name == "--ranks-per-node" || name == "--chunks";
    if (name == "--units")
        return parseUnits(cur, name, inl, o.units);
    if (!flag && !valued)
        return false;
    if (auto first = seen.once(name); !first)
        return first.error();
    if (flag) {
        if (inl)
            return usageError("takes no value", std::string(name));
        (name == "--json" ? o.json : name == "--steps" ? o.steps : o.list) = true;
        return true;
    }
    auto v = cur.value(name, inl);
    if (!v)
        return v.error();
    const std::string_view text = v.value();
    auto withField = [&](const Error& e) { return usageError(e.message, std::string(name)); };
    if (name == "--op") {
        auto op = parseOpName(name, text);
        if (!op)
            return op.error();
        o.spec.op = op.value();
        o.opGiven = true;
    } else if (name == "--algo") {
        seen.algorithm = std::string(text);
    } else if (name == "--ranks" || name == "--ranks-per-node" || name == "--chunks") {
        auto n = parseUnsigned(name, text, 1, std::uint64_t{1} << 20);
        if (!n)
            return n.error();
        (name == "--ranks" ? o.spec.ranks : name == "--chunks" ? o.spec.pipelineChunks : o.spec.ranksPerNode) = n.value();
        seen.ranks = seen.ranks || name == "--ranks";
    } else if (name == "--root") {
        auto n = parseUnsigned(name, text, 0, (std::uint64_t{1} << 20) - 1);
        if (!n)
            return n.error();
        o.spec.root = static_cast<std::uint32_t>(n.value());
    } else if (name == "--bytes") {
        auto b = parseBytes(text);
        if (!b)
            return withField(b.error());
        o.spec.bytes = b.value();
        seen.bytes = true;
    } else if (name == "--alpha") {
        auto t = parseSeconds(text);
        if (!t)
            return withField(t.error());
        o.alphaSeconds = t.value();
    } else {
        auto r = parseBandwidth(text);
        if (!r)
            return withField(r.error());
        o.bandwidth = r.value();
    }
    return true;
}

// After the last argument: --list alone (or with --op, --json), or a whole spec with its algorithm.
Result<bool> finishCollective(CollectiveOptions& o, CollectiveSeen& seen)
{
    if (o.list) {
        for (const std::string& n : seen.given)
            if (n != "--list" && n != "--op" && n != "--json")
                return usageError("--list prints the operations and their algorithms; it takes only --op and --json",
                                  n);
        return true;
    }
    const std::string ops = listOr(opNames());
    if (!o.opGiven)
        return usageError("missing; collective needs the operation: " + ops + " (or --list)", "--op");
    if (seen.algorithm) {
        auto a = parseAlgorithmName("--algo", *seen.algorithm, o.spec.op);
        if (!a)
            return a.error();
        o.spec.algorithm = a.value();
    } else {
        o.spec.algorithm = collective::algorithmsFor(o.spec.op).front();
    }
    if (!seen.ranks)
        return usageError("missing; collective needs the number of ranks N (1…1,048,576)", "--ranks");
    if (!seen.bytes)
        return usageError("missing; collective needs the buffer size M, such as 256MB, 48MiB or 4096 (bytes)", "--bytes");
    return true;
}


// A size as nccl-tests reads it (parsesize): a whole number with an optional K, M, G or T suffix, powers
// of 1024 ("8G" = 8·2^30); "256MB" / "48MiB" forms as everywhere else in the tool.
Result<double> parseNcclSize(std::string_view name, std::string_view text)
{
    if (!text.empty()) {
        const char last = text.back();
        double mult = 0;
        switch (last) {
        case 'K': case 'k': mult = 1024.0; break;
        case 'M': case 'm': mult = 1024.0 * 1024; break;
        case 'G': case 'g': mult = 1024.0 * 1024 * 1024; break;
        case 'T': case 't': mult = 1024.0 * 1024 * 1024 * 1024; break;
        default: break;
        }
        const std::string_view digits = mult > 0 ? text.substr(0, text.size() - 1) : text;
        if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos) {
            auto v = parseUnsigned(name, digits, 0, std::uint64_t{1} << 50);
            if (!v)
                return v.error();
            return static_cast<double>(v.value()) * (mult > 0 ? mult : 1.0);
        }
    }
    auto b = parseBytes(text);
    if (!b)
        return usageError(b.error().message + " (nccl-tests sizes: 8, 64K, 128M, 8G; K/M/G = powers of 1024)",
                          std::string(name));
    return b.value();
}

// "--name N" with N an unsigned integer in [lo, hi] into `out`.
template <typename T>
Result<bool> unsignedOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl, std::uint64_t lo,
                            std::uint64_t hi, T& out)
{
    auto v = cur.value(name, inl);
    if (!v)
        return v.error();
    auto n = parseUnsigned(name, v.value(), lo, hi);
    if (!n)
        return n.error();
    out = static_cast<T>(n.value());
    return true;
}

// Options of `fit`; returns false when `name` is not one of them.
Result<bool> parseFitOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl, FitCommandOptions& o)
{
    if (name == "--json" || name == "--scenario" || name == "--preset")
        return parseScenarioOption(cur, name, inl, o.scenario);
    if (name == "--top")
        return unsignedOption(cur, name, inl, 1, 1000, o.top);
    if (name == "--simulate")
        return unsignedOption(cur, name, inl, 0, 1000, o.simulate);
    return false;
}

Result<bool> parseRunOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl, RunCommandOptions& o)
{
    if (name == "--json" || name == "--scenario" || name == "--preset")
        return parseScenarioOption(cur, name, inl, o.scenario);
    if (name == "--tokens" || name == "--price") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        auto n = parseCount(v.value());
        if (!n)
            return usageError(n.error().message, std::string(name));
        (name == "--tokens" ? o.tokens : o.price) = n.value();
        return true;
    }
    return false;
}

Result<bool> parseBusbwOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl, BusbwOptions& o,
                              bool& opGiven)
{
    if (name == "--json" || name == "--scenario" || name == "--preset")
        return parseScenarioOption(cur, name, inl, o.scenario);
    if (name == "--op") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        auto op = parseOpName(name, v.value());
        if (!op)
            return op.error();
        o.op = op.value();
        opGiven = true;
        return true;
    }
    if (name == "--algo" || name == "--protocol" || name == "--dtype") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        const std::string text(v.value());
        if (name == "--algo") {
            if (text != "auto" && !nccl::algorithmFromString(text))
                return usageError(quoted(text) + " is not an NCCL algorithm; expected auto, ring, tree, nvls, nvls-tree, "
                                  "collnet-direct, collnet-chain or pat", std::string(name));
            o.algorithm = text;
        } else if (name == "--protocol") {
            if (text != "auto" && !nccl::protocolFromString(text))
                return usageError(quoted(text) + " is not an NCCL protocol; expected auto, simple, ll128 or ll",
                                  std::string(name));
            o.protocol = text;
        } else {
            if (busbwDtypeSize(text) == 0)
                return usageError(quoted(text) + " is not a data type; expected int8, uint8, int32, uint32, int64, uint64, "
                                  "half (fp16), float (fp32), double (fp64), bfloat16 (bf16), f8e4m3 or f8e5m2",
                                  std::string(name));
            o.dtype = text;
        }
        return true;
    }
    if (name == "--min-bytes" || name == "--max-bytes") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        auto size = parseNcclSize(name, v.value());
        if (!size)
            return size.error();
        (name == "--min-bytes" ? o.minBytes : o.maxBytes) = size.value();
        return true;
    }
    if (name == "--factor" || name == "--channels") {
        auto v = cur.value(name, inl);
        if (!v)
            return v.error();
        auto n = name == "--factor" ? parseUnsigned(name, v.value(), 2, 1024) : parseUnsigned(name, v.value(), 1, 32);
        if (!n)
            return n.error();
        (name == "--factor" ? o.factor : o.channels) = n.value();
        return true;
    }
    return false;
}

// What parseArgs keeps between arguments.
struct ParseState {
    bool formatSet = false;
    bool optionsEnded = false;
    CollectiveSeen collectiveSeen;
    bool gpusGiven = false;
    bool busbwOpGiven = false;
    std::string* input = nullptr; // where the command's positional input goes
};

// An option of the current command: true when it knew it.
Result<bool> parseCommandOption(ArgCursor& cur, std::string_view name, std::optional<std::string_view> inl,
                                Invocation& inv, ParseState& st)
{
    Result<bool> known = false;
    if (inv.command == Command::Tokenize)
        known = parseTokenizeOption(cur, name, inl, inv.tokenize, st.formatSet);
    else if (inv.command == Command::TrainBpe)
        known = parseTrainOption(cur, name, inl, inv.trainBpe);
    else if (inv.command == Command::Derive || inv.command == Command::Tensors
             || inv.command == Command::Explain || inv.command == Command::Simulate)
        known = parseScenarioOption(cur, name, inl, inv.scenario);
    else if (inv.command == Command::Plan || inv.command == Command::Memory || inv.command == Command::Kernels)
        known = parsePlanOption(cur, name, inl, inv.scenario);
    else if (inv.command == Command::Collective)
        known = parseCollectiveOption(cur, name, inl, inv.collective, st.collectiveSeen);
    else if (inv.command == Command::Sweep)
        known = parseSweepOption(cur, name, inl, inv.sweep, st.gpusGiven);
    else if (inv.command == Command::Validate)
        known = parseValidateOption(cur, name, inl, inv.validate);
    else if (inv.command == Command::Busbw)
        known = parseBusbwOption(cur, name, inl, inv.busbw, st.busbwOpGiven);
    else if (inv.command == Command::Fit)
        known = parseFitOption(cur, name, inl, inv.fit);
    else if (inv.command == Command::Run)
        known = parseRunOption(cur, name, inl, inv.run);
    else if (inv.command == Command::Schema && name == "--markdown" && !inl)
        known = inv.schemaMarkdown = true;
    return known;
}

// A positional argument: first the command, then the input.
Status takePositional(std::string_view arg, Invocation& inv, ParseState& st)
{
    if (inv.command == Command::None) {
        if (const std::optional<Command> command = valueOf(kCommandNames, arg)) {
            inv.command = *command;
            if (*command == Command::Tokenize)
                st.input = &inv.tokenize.input;
            else if (*command == Command::TrainBpe)
                st.input = &inv.trainBpe.input;
            else if (*command == Command::Explain)
                st.input = &inv.scenario.figureId;
        } else if (arg == "help") {
            inv.help = true;
        } else {
            return usageError("unknown command '" + std::string(arg) + "'; expected " + commandList());
        }
        return Ok{};
    }
    if (!st.input)
        return usageError("unexpected argument '" + std::string(arg) + "': " + commandName(inv.command)
                          + (inv.command == Command::Presets      ? " takes no argument"
                             : inv.command == Command::Validate   ? " takes options only (see --help)"
                             : inv.command == Command::Collective ? " takes options only (see --help)"
                             : inv.command == Command::Busbw      ? " takes options only (see --help)"
                             : inv.command == Command::Schema     ? " takes options only (see --help)"
                                                                  : " reads --scenario FILE or --preset NAME"));
    if (inv.command == Command::Explain) {
        if (!st.input->empty())
            return usageError("unexpected argument '" + std::string(arg) + "': explain traces one figure ID");
        if (arg.empty())
            return usageError("empty figure ID; expected an id such as model.parameters");
        *st.input = std::string(arg);
        return Ok{};
    }
    if (!st.input->empty())
        return usageError("unexpected argument '" + std::string(arg) + "': only one input FILE (or -) is read");
    if (arg.empty())
        return usageError("empty input path; expected a FILE or - for standard input");
    *st.input = std::string(arg);
    return Ok{};
}

// What the command needs once every argument is read (a scenario, an input, the sweep's sizes …); the
// collective command's options completed.
Status checkComplete(Invocation& inv, ParseState& st)
{
    if (inv.help || inv.version)
        return Ok{};
    if (inv.command == Command::None)
        return usageError("missing command; expected " + commandList() + " (see --help)");
    if (inv.command == Command::Presets || inv.command == Command::Validate || inv.command == Command::Schema)
        return Ok{};
    if (inv.command == Command::Collective) {
        auto done = finishCollective(inv.collective, st.collectiveSeen);
        if (!done)
            return done.error();
        return Ok{};
    }
    if (inv.command == Command::Derive || inv.command == Command::Tensors || inv.command == Command::Explain
        || inv.command == Command::Plan || inv.command == Command::Memory || inv.command == Command::Kernels
        || inv.command == Command::Simulate) {
        if (inv.command == Command::Explain && inv.scenario.figureId.empty())
            return usageError("missing figure ID (for example model.parameters; derive lists every id)");
        if (inv.scenario.scenarioFile.empty() && inv.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        return Ok{};
    }
    if (inv.command == Command::Run) {
        if (inv.run.scenario.scenarioFile.empty() && inv.run.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        return Ok{};
    }
    if (inv.command == Command::Fit) {
        if (inv.fit.scenario.scenarioFile.empty() && inv.fit.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        return Ok{};
    }
    if (inv.command == Command::Busbw) {
        if (inv.busbw.scenario.scenarioFile.empty() && inv.busbw.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        if (!st.busbwOpGiven)
            return usageError("missing; busbw needs the operation: " + listOr(opNames()), "--op");
        if (inv.busbw.minBytes > inv.busbw.maxBytes)
            return usageError("is larger than --max-bytes", "--min-bytes");
        const int size = busbwDtypeSize(inv.busbw.dtype);
        for (double b : {inv.busbw.minBytes, inv.busbw.maxBytes})
            if (std::fmod(b, size) != 0)
                return usageError(formatInteger(static_cast<std::int64_t>(b)) + " is not a multiple of the " + inv.busbw.dtype
                                      + " size (" + std::to_string(size) + " B)",
                                  b == inv.busbw.minBytes ? "--min-bytes" : "--max-bytes");
        return Ok{};
    }
    if (inv.command == Command::Sweep) {
        if (inv.sweep.scenario.scenarioFile.empty() && inv.sweep.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        if (!st.gpusGiven)
            return usageError("missing; sweep needs the cluster sizes, such as 1,2,4,8 or 1-7", "--gpus");
        return Ok{};
    }
    if (inv.command == Command::TrainBpe && inv.trainBpe.vocabSize == 0)
        return usageError("missing; train-bpe needs the target vocabulary size V (257…65,536)", "--vocab-size");
    if (st.input->empty())
        return usageError("missing input FILE (or - for standard input)");
    return Ok{};
}

} // namespace

// The command line: the command, its options and its input, checked.
Result<Invocation> parseArgs(const std::vector<std::string_view>& args)
{
    Invocation inv;
    ArgCursor cur(args);
    ParseState st;
    while (!cur.atEnd()) {
        const std::string_view arg = cur.take();
        const bool isOption = !st.optionsEnded && arg.size() > 1 && arg.front() == '-';
        if (isOption && arg == "--") {
            st.optionsEnded = true;
            continue;
        }
        if (isOption) {
            const auto [name, inl] = splitOption(arg);
            if (name == "--help" || name == "-h") {
                inv.help = true;
                continue;
            }
            if (name == "--version" && inv.command == Command::None) {
                inv.version = true;
                continue;
            }
            Result<bool> known = parseCommandOption(cur, name, inl, inv, st);
            if (!known)
                return known.error();
            if (!known.value())
                return unknownOption(name, inv.command);
            continue;
        }
        if (Status taken = takePositional(arg, inv, st); !taken.ok())
            return taken.error();
    }
    if (Status complete = checkComplete(inv, st); !complete.ok())
        return complete.error();
    return inv;
}

} // namespace tw::cli
