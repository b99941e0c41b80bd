#include "args.h"

#include "base/editdistance.h"
#include "base/unitparse.h"
#include "collective/nccl.h"
#include "scenario/presets.h"
#include "scenario/sweep.h"
#include "text/bpetrainer.h"

#include <algorithm>
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

// 'text' in single quotes (built by appending: GCC 12 warns falsely on "'" + std::string).
std::string quoted(std::string_view text)
{
    std::string out;
    out.reserve(text.size() + 2);
    out.push_back('\'');
    out.append(text);
    out.push_back('\'');
    return out;
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

constexpr std::string_view kCommandList = "tokenize, train-bpe, derive, tensors, explain, plan, memory, kernels, fit, collective, simulate, sweep, presets, validate or busbw";

std::string commandName(Command command)
{
    switch (command) {
    case Command::Tokenize:
        return "tokenize";
    case Command::TrainBpe:
        return "train-bpe";
    case Command::Derive:
        return "derive";
    case Command::Tensors:
        return "tensors";
    case Command::Explain:
        return "explain";
    case Command::Plan:
        return "plan";
    case Command::Memory:
        return "memory";
    case Command::Kernels:
        return "kernels";
    case Command::Fit:
        return "fit";
    case Command::Collective:
        return "collective";
    case Command::Simulate:
        return "simulate";
    case Command::Sweep:
        return "sweep";
    case Command::Presets:
        return "presets";
    case Command::Validate:
        return "validate";
    case Command::Busbw:
        return "busbw";
    case Command::None:
        break;
    }
    return "tokenwire-cli";
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

} // namespace

Result<Invocation> parseArgs(const std::vector<std::string_view>& args)
{
    Invocation inv;
    ArgCursor cur(args);
    bool formatSet = false;
    bool optionsEnded = false;
    CollectiveSeen collectiveSeen;
    bool gpusGiven = false;
    bool busbwOpGiven = false;
    std::string* input = nullptr;

    while (!cur.atEnd()) {
        const std::string_view arg = cur.take();
        const bool isOption = !optionsEnded && arg.size() > 1 && arg.front() == '-';
        if (isOption && arg == "--") {
            optionsEnded = true;
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
            Result<bool> known = false;
            if (inv.command == Command::Tokenize)
                known = parseTokenizeOption(cur, name, inl, inv.tokenize, formatSet);
            else if (inv.command == Command::TrainBpe)
                known = parseTrainOption(cur, name, inl, inv.trainBpe);
            else if (inv.command == Command::Derive || inv.command == Command::Tensors
                     || inv.command == Command::Explain || inv.command == Command::Simulate)
                known = parseScenarioOption(cur, name, inl, inv.scenario);
            else if (inv.command == Command::Plan || inv.command == Command::Memory || inv.command == Command::Kernels)
                known = parsePlanOption(cur, name, inl, inv.scenario);
            else if (inv.command == Command::Collective)
                known = parseCollectiveOption(cur, name, inl, inv.collective, collectiveSeen);
            else if (inv.command == Command::Sweep)
                known = parseSweepOption(cur, name, inl, inv.sweep, gpusGiven);
            else if (inv.command == Command::Validate)
                known = parseValidateOption(cur, name, inl, inv.validate);
            else if (inv.command == Command::Busbw)
                known = parseBusbwOption(cur, name, inl, inv.busbw, busbwOpGiven);
            else if (inv.command == Command::Fit)
                known = parseFitOption(cur, name, inl, inv.fit);
            if (!known)
                return known.error();
            if (!known.value())
                return unknownOption(name, inv.command);
            continue;
        }
        // A positional argument: first the command, then the input.
        if (inv.command == Command::None) {
            if (arg == "tokenize") {
                inv.command = Command::Tokenize;
                input = &inv.tokenize.input;
            } else if (arg == "train-bpe") {
                inv.command = Command::TrainBpe;
                input = &inv.trainBpe.input;
            } else if (arg == "derive") {
                inv.command = Command::Derive;
            } else if (arg == "tensors") {
                inv.command = Command::Tensors;
            } else if (arg == "explain") {
                inv.command = Command::Explain;
                input = &inv.scenario.figureId;
            } else if (arg == "plan") {
                inv.command = Command::Plan;
            } else if (arg == "memory") {
                inv.command = Command::Memory;
            } else if (arg == "kernels") {
                inv.command = Command::Kernels;
            } else if (arg == "fit") {
                inv.command = Command::Fit;
            } else if (arg == "simulate") {
                inv.command = Command::Simulate;
            } else if (arg == "sweep") {
                inv.command = Command::Sweep;
            } else if (arg == "collective") {
                inv.command = Command::Collective;
            } else if (arg == "presets") {
                inv.command = Command::Presets;
            } else if (arg == "validate") {
                inv.command = Command::Validate;
            } else if (arg == "busbw") {
                inv.command = Command::Busbw;
            } else if (arg == "help") {
                inv.help = true;
            } else {
                return usageError("unknown command '" + std::string(arg) + "'; expected " + std::string(kCommandList));
            }
            continue;
        }
        if (!input)
            return usageError("unexpected argument '" + std::string(arg) + "': " + commandName(inv.command)
                              + (inv.command == Command::Presets      ? " takes no argument"
                                 : inv.command == Command::Validate   ? " takes options only (see --help)"
                                 : inv.command == Command::Collective ? " takes options only (see --help)"
                                 : inv.command == Command::Busbw      ? " takes options only (see --help)"
                                                                      : " reads --scenario FILE or --preset NAME"));
        if (inv.command == Command::Explain) {
            if (!input->empty())
                return usageError("unexpected argument '" + std::string(arg) + "': explain traces one figure ID");
            if (arg.empty())
                return usageError("empty figure ID; expected an id such as model.parameters");
            *input = std::string(arg);
            continue;
        }
        if (!input->empty())
            return usageError("unexpected argument '" + std::string(arg) + "': only one input FILE (or -) is read");
        if (arg.empty())
            return usageError("empty input path; expected a FILE or - for standard input");
        *input = std::string(arg);
    }

    if (inv.help || inv.version)
        return inv;
    if (inv.command == Command::None)
        return usageError("missing command; expected " + std::string(kCommandList) + " (see --help)");
    if (inv.command == Command::Presets || inv.command == Command::Validate)
        return inv;
    if (inv.command == Command::Collective) {
        auto done = finishCollective(inv.collective, collectiveSeen);
        if (!done)
            return done.error();
        return inv;
    }
    if (inv.command == Command::Derive || inv.command == Command::Tensors || inv.command == Command::Explain
        || inv.command == Command::Plan || inv.command == Command::Memory || inv.command == Command::Kernels
        || inv.command == Command::Simulate) {
        if (inv.command == Command::Explain && inv.scenario.figureId.empty())
            return usageError("missing figure ID (for example model.parameters; derive lists every id)");
        if (inv.scenario.scenarioFile.empty() && inv.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        return inv;
    }
    if (inv.command == Command::Fit) {
        if (inv.fit.scenario.scenarioFile.empty() && inv.fit.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        return inv;
    }
    if (inv.command == Command::Busbw) {
        if (inv.busbw.scenario.scenarioFile.empty() && inv.busbw.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        if (!busbwOpGiven)
            return usageError("missing; busbw needs the operation: " + listOr(opNames()), "--op");
        if (inv.busbw.minBytes > inv.busbw.maxBytes)
            return usageError("is larger than --max-bytes", "--min-bytes");
        const int size = busbwDtypeSize(inv.busbw.dtype);
        for (double b : {inv.busbw.minBytes, inv.busbw.maxBytes})
            if (std::fmod(b, size) != 0)
                return usageError(formatInteger(static_cast<std::int64_t>(b)) + " is not a multiple of the " + inv.busbw.dtype
                                      + " size (" + std::to_string(size) + " B)",
                                  b == inv.busbw.minBytes ? "--min-bytes" : "--max-bytes");
        return inv;
    }
    if (inv.command == Command::Sweep) {
        if (inv.sweep.scenario.scenarioFile.empty() && inv.sweep.scenario.preset.empty())
            return usageError("missing scenario: give --scenario FILE or --preset NAME (see tokenwire-cli presets)");
        if (!gpusGiven)
            return usageError("missing; sweep needs the cluster sizes, such as 1,2,4,8 or 1-7", "--gpus");
        return inv;
    }
    if (inv.command == Command::TrainBpe && inv.trainBpe.vocabSize == 0)
        return usageError("missing; train-bpe needs the target vocabulary size V (257…65,536)", "--vocab-size");
    if (input->empty())
        return usageError("missing input FILE (or - for standard input)");
    return inv;
}

std::string usage(Command command)
{
    switch (command) {
    case Command::Tokenize:
        return R"(Usage: tokenwire-cli tokenize [options] FILE|-

Tokenizes a text (FILE, or - for standard input) and prints the dataset figures of stage 1:
bytes, code points, words, lines, tokens, tokens per word, bytes per token, sequences of T
tokens, micro-batches of B, optimizer steps for a global batch of G tokens, each with its formula.

Options:
  --tokenizer gpt2|FILE  gpt2 (embedded, the default) or a Hugging Face tokenizer.json
                         (BPE model, byte-level); write ./gpt2 for a file named gpt2
  --json                 one JSON object: n_tokens, n_bytes, ids, tokenizer, figures
                         ({id,label,value,unit,formula,inputs}), length_histogram, warnings
  --count                only the number of tokens
  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)
  --seq-len T            tokens per training sequence (default 1024)
  --micro-batch B        sequences per micro-batch (default 32)
  --global-batch G       tokens per optimizer step (default 524288)
  -h, --help             this text

Tokenization is byte-level, so any bytes can be tokenized: invalid UTF-8 is reported as a
warning on standard error (with its line and column) and the bytes are tokenized as they are.
Exit status: 0 done, 1 unreadable or corrupt input or tokenizer, 2 wrong usage.
)";
    case Command::TrainBpe:
        return R"(Usage: tokenwire-cli train-bpe --vocab-size V [--out tokenizer.json] FILE|-

Trains a byte-level BPE vocabulary of V tokens on a text (FILE, or - for standard input) with
GPT-2's pre-tokenizer: 256 byte tokens, V-257 merges and <|endoftext|>. Writes a Hugging Face
tokenizer.json that `tokenwire-cli tokenize --tokenizer FILE` reads back.

Options:
  --vocab-size V         target vocabulary size, 257…65,536 (required)
  --out FILE             where to write tokenizer.json (default: standard output)
  -h, --help             this text

A summary (merges learned, time, file written) goes to standard error. When the text runs out
of pairs before V, the smaller vocabulary is written and a warning says so.
Exit status: 0 done, 1 unreadable input or unwritable output, 2 wrong usage.
)";
    case Command::Derive:
        return R"(Usage: tokenwire-cli derive (--scenario FILE | --preset NAME) [--json] [--units si|iec]

Derives every figure of a scenario: stage 1 (the text, its tokens, sequences, batches) and stage 2
(parameters, tensors, memory per GPU, FLOPs), each with its value, unit and formula.

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --json                 one JSON object: scenario, description, figures ({id,label,value,unit,
                         formula,inputs}), problems
  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)
  -h, --help             this text

Relative paths in a scenario file are relative to the file's folder.
Exit status: 0 done, 1 unreadable or invalid scenario (every problem is listed with its JSON
path), 2 wrong usage.
)";
    case Command::Tensors:
        return R"(Usage: tokenwire-cli tensors (--scenario FILE | --preset NAME) [--json] [--units si|iec]

Prints the tensor inventory of one training step: every tensor of the forward pass layer by layer,
then weights, gradients and optimizer state, with its shape in symbols and numbers, dtype, bytes,
layer and phase.

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --json                 one JSON object: scenario, tensors ({name,component,shape_symbols,shape,
                         dtype,bytes,layer,phase,kind})
  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)
  -h, --help             this text

Exit status: 0 done, 1 unreadable or invalid scenario, 2 wrong usage.
)";
    case Command::Explain:
        return R"(Usage: tokenwire-cli explain ID (--scenario FILE | --preset NAME) [--json] [--units si|iec]

Prints how the figure ID was derived: its value and formula, then the figures it came from,
indented by depth, back to the inputs (the text, the tokenizer, the scenario's numbers).

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --json                 one JSON object: id, chain ({id,label,value,unit,formula,inputs,depth})
  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)
  -h, --help             this text

An unknown ID is refused with the ids close to it. `tokenwire-cli derive` lists every id.
Exit status: 0 done, 1 unreadable or invalid scenario, 2 wrong usage or unknown ID.
)";
    case Command::Plan:
        return R"(Usage: tokenwire-cli plan (--scenario FILE | --preset NAME) [--dp N] [--pp N] [--tp N] [--ep N]
                         [--zero K | --sharding NAME] [--json] [--units si|iec]

Stage 3: checks the scenario's parallel plan (dp x pp x tp GPUs, EP carved out of DP) and prints
its communication signature per strategy (payload per call, frequency, peers, bytes per GPU per
optimizer step, whether its groups leave a node) and every collective call of one optimizer step.

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --dp N --pp N --tp N   set a degree; after --pp or --tp alone, DP takes the rest of the GPUs
  --ep N                 expert-parallel degree (divides dp and the experts)
  --zero K               ZeRO stage 0-3 (0 = plain DDP)
  --sharding NAME        ddp, zero1, zero2, zero3, fsdp-full or fsdp-hybrid
  --json                 one JSON object: valid, errors, figures, signature, groups, calls
  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)
  -h, --help             this text

An impossible plan (8-way TP of 12 heads, dp x pp x tp not the GPU count, ...) is printed with
every reason and the valid choices; the exit status is then 1.
Exit status: 0 a valid plan, 1 unreadable scenario or impossible plan, 2 wrong usage.
)";
    case Command::Kernels:
        return R"(Usage: tokenwire-cli kernels (--scenario FILE | --preset NAME) [--dp N] [--pp N] [--tp N] [--ep N]
                            [--json]

Stage 3: the kernels of one Transformer layer on one GPU under the scenario's plan, forward, backward
and recomputed: name, shape (M×N×K for GEMMs), FLOPs, bytes, time, what bounds it (compute or
memory) and the achieved TFLOP/s or GB/s; then the embedding, the head, the optimizer step and the
layer totals (docs/compute.md). With parallel.compute_efficiency set to a number or per-layer times
given, the plan does not use these times (the table says so).

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --dp N --pp N --tp N   set a degree; after --pp or --tp alone, DP takes the rest of the GPUs
  --ep N                 expert-parallel degree (divides dp and the experts)
  --json                 one JSON document instead of the table
  -h, --help             this text

Exit status: 0 done, 1 unreadable scenario or impossible plan, 2 wrong usage.
)";
    case Command::Fit:
        return R"(Usage: tokenwire-cli fit (--scenario FILE | --preset NAME) [--top N] [--simulate K] [--json]
                        [--units si|iec]

Stage 3: the plans that fit the scenario's model on its cluster. Every layout dp x pp x tp (x ep), DDP
or ZeRO-1/2/3, sequence parallelism, recomputation, micro-batch size, pipeline schedule and v is
validated and its memory computed for every GPU; those that fit are ranked by a coarse estimate
(compute, pipeline bubble, communication at nominal rates), then the best K layouts are simulated as `simulate` does and ranked by
step time. Kept: the cluster, the model, T, the global batch G, the fabric. Bounds (docs/memory.md):
TP inside a node, v <= 4, micro-batch <= 64, at most 500,000 candidates.

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --top N                plans listed (1-1000, default 10)
  --simulate K           layouts simulated exactly (0-1000, default 6; a 1,024-GPU step takes seconds),
                         the others listed with their coarse estimate, marked ~
  --json                 {"plans": [{dp, pp, tp, ep, sharding, sequence_parallel, schedule,
                         virtual_stages, micro_batch, accumulation, recompute, simulated, step_time_s,
                         coarse_step_time_s, mfu, exposed_comm_s, peak_bytes}, ...], "candidates",
                         "valid", "fitting", "truncated", "capacity_bytes"}
  --units si|iec         byte units of the table

Exit status: 0 done (also when no plan fits), 1 unreadable scenario, 2 wrong usage.
)";
    case Command::Memory:
        return R"(Usage: tokenwire-cli memory (--scenario FILE | --preset NAME) [--dp N] [--pp N] [--tp N] [--ep N]
                           [--zero K | --sharding NAME] [--json] [--units si|iec]

Stage 3: the memory of every GPU under the scenario's parallel plan, per pipeline stage: weights,
gradients, optimizer state (divided by TP, PP, EP and ZeRO/FSDP), activations (Korthikanti et al.
Table 2 times the micro-batches in flight), buffers (DDP buckets, gathered ZeRO-3/FSDP units, NCCL),
the framework reserve, the peak, the capacity and whether it fits (docs/memory.md).

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --dp N --pp N --tp N   set a degree; after --pp or --tp alone, DP takes the rest of the GPUs
  --ep N                 expert-parallel degree (divides dp and the experts)
  --zero K               ZeRO stage 0-3 (0 = plain DDP)
  --sharding NAME        ddp, zero1, zero2, zero3, fsdp-full or fsdp-hybrid
  --json                 {"gpus": [{gpu, stage, weights, gradients, optimizer, activations, buffers,
                         reserve, total}, ...], "roles": [...], "peak_bytes", "capacity_bytes", "fits"}
                         (bytes as numbers; total = the GPU's peak without the reserve)
  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)
  -h, --help             this text

Exit status: 0 the plan can run (fitting or not: see "fits"), 1 unreadable scenario or impossible
plan, 2 wrong usage.
)";
    case Command::Collective:
        return R"(Usage: tokenwire-cli collective --op OP [--algo NAME] --ranks N --bytes SIZE [--alpha TIME]
                         [--bandwidth RATE] [--root R] [--ranks-per-node K] [--chunks C]
                         [--json] [--steps] [--units si|iec]
       tokenwire-cli collective --list [--op OP] [--json]

Stage 4: schedules one collective call step by step with the algorithm NAME and counts it from the
schedule itself: steps, bytes on the wire, bytes each rank sends and receives, the alpha-beta time
(Hockney: the sum over steps of alpha + the step's largest message / beta), algbw = M / time and
busbw = algbw x factor (nccl-tests: 2(N-1)/N AllReduce, (N-1)/N ReduceScatter, AllGather,
All-to-All, 1 Broadcast, Reduce, Send/Recv; n/a for N = 1), and the closed form when there is one.
In one step a rank sends at most one message and receives at most one (single-port, full duplex).

Options:
  --op OP                allreduce, reducescatter, allgather, broadcast, reduce, alltoall or sendrecv
  --algo NAME            an algorithm of OP (default: the first --list shows for it: ring for
                         allreduce, reducescatter and allgather; binomial for broadcast and reduce;
                         pairwise for alltoall)
  --ranks N              number of ranks, 1-16,384 (sendrecv: 2, rank 0 sends to rank 1)
  --bytes SIZE           M, the buffer: AllReduce's buffer, AllGather's output, ReduceScatter's
                         input, each rank's All-to-All send buffer, the root's Broadcast/Reduce
                         buffer, the Send/Recv message. 256MB (10^6), 48MiB (2^20), 1.5GB, 4096 or
                         4096B (bytes); units B, kB/KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB;
                         whole bytes below 2^53
  --alpha TIME           per-message latency alpha (default 10us); units s, ms, us (or µs), ns
  --bandwidth RATE       link bandwidth beta (default 10Gbps = 1.25 GB/s); b = bits (Gbps, Gb/s,
                         Gbit/s), B = bytes (GB/s, GBps), KiB/s ... TiB/s; a plain number is B/s
  --root R               root rank of broadcast, reduce and reduce-broadcast (default 0)
  --ranks-per-node K     hierarchical: K consecutive ranks share a node (default: one node)
  --chunks C             pipeline chunks of binary-tree, double-binary-tree and chain
                         (default: the algorithm's own)
  --steps                also print the whole schedule, step by step: phase, src -> dst, chunk,
                         bytes, reduce or copy (large N gives long outputs)
  --json                 one JSON object: op, algorithm, ranks, bytes, root, ranks_per_node,
                         pipeline_chunks, alpha_s, bandwidth_bytes_per_s, steps, transfers,
                         total_bytes, per_rank_sent_bytes, per_rank_received_bytes,
                         max_rank_sent_bytes, time_s, algbw, busbw (B/s), busbw_factor (null for
                         N = 1), closed_form (null or {formula, per_rank_sent_bytes, total_bytes,
                         steps, matches}); with --steps also chunks ({index, offset, bytes, origin,
                         destination}) and schedule ([{step, phase, transfers: [{src, dst, chunk,
                         bytes, reduce}]}], steps numbered from 1). Sizes are plain bytes.
  --units si|iec         table sizes in MB (10^6 B, the default) or MiB (2^20 B)
  --list                 every operation with its algorithms (the default first), one sentence each
  -h, --help             this text

Exit status: 0 done, 1 a spec the algorithm cannot schedule (every reason is printed: a root out
of range, ranks per node that do not divide N, sendrecv with N other than 2, ...), 2 wrong usage
(an unknown operation or algorithm, an algorithm OP does not have, a bad size, time or rate).
)";
    case Command::Simulate:
        return R"(Usage: tokenwire-cli simulate (--scenario FILE | --preset NAME) [--json] [--units si|iec]

Stage 5: one optimizer step of the scenario's plan simulated on its fabric ("topology"): every
transfer of every scheduled collective is a flow on its routed path, flows share links by max-min
fairness, compute blocks follow the pipeline schedule, DDP buckets overlap the backward pass.
Prints the step time, compute, exposed communication (per strategy), the communication share, MFU
and the busiest links.

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --json                 one JSON object: step_time_s, compute_s, exposed_comm_s, comm_share, mfu,
                         links ({id,from,to,type,bytes,wire_bytes,utilization}), figures
  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)
  -h, --help             this text

Exit status: 0 done, 1 unreadable scenario, impossible plan or fabric, 2 wrong usage.
)";
    case Command::Sweep:
        return R"(Usage: tokenwire-cli sweep (--scenario FILE | --preset NAME) --gpus LIST [--strong]
                         [--json | --csv] [--units si|iec]

Stage 5's scaling sweep: the scenario on each cluster size of LIST, one simulated optimizer step
each (as `simulate`), with the paper's appendix A.3 quantities: step time, exposed communication
share ("AllReduce share" for a DDP plan), tokens/s, speedup and efficiency against the smallest size
that ran. Weak scaling (the default): data parallelism takes the GPUs (dp = GPUs / (pp x tp)), each
replica keeps its micro-batch and accumulation steps, so the global batch grows with dp. A size up to
the scenario's GPUs per node is one node; a larger size is whole nodes of that many GPUs. For the
paper-testbed fabric every GPU is a node, and the paper's measured points (15 % share at 2 nodes;
24.5 %, 67 % efficiency and 4.69x at 7) are printed next to the prediction with the gap in words.

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --gpus LIST            cluster sizes: 1,2,4,8 or 1-7 or 1,2,4-8 (at most 64 sizes of 1-4,096 GPUs)
  --strong               strong scaling: keep the global batch (accumulation shrinks with dp)
  --json                 one JSON object: scenario, base_gpus, points ({gpus, nodes, dp, pp, tp, ep,
                         step_time_s, compute_s, exposed_comm_s, comm_share, tokens_per_s, speedup,
                         efficiency, mfu, ok, error}), measured ({gpus, comm_share, efficiency,
                         speedup, source}; null when not measured), gaps, figures
  --csv                  one header line, then one row per size (the point fields of --json)
  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)
  -h, --help             this text

Example: tokenwire-cli sweep --preset paper-testbed --gpus 1-7
Exit status: 0 done, 1 unreadable scenario or a size that cannot run (the other sizes are still
printed; the reasons go to standard error), 2 wrong usage (a malformed --gpus, too many sizes, more
than 4,096 GPUs).
)";
    case Command::Validate:
        return R"(Usage: tokenwire-cli validate [--data FILE] [--json]

Compares tokenwire's predicted payload bytes with real collectives measured on loopback (Open MPI
over TCP on lo; tools/measure/tokenwire-measure, scripts/measure.sh): one line per measured row with
Open MPI's algorithm, the tokenwire schedule it maps to, measured and predicted bytes and the error.
Rows whose algorithm tokenwire does not model are listed as exclusions with the reason.

Options:
  --data FILE  a measured dataset (default: data/measurements/openmpi-loopback.json, compiled in)
  --json       one JSON object: tolerance, rows ({op, algorithm_id, algorithm, ranks, bytes,
               measured_payload_bytes, predicted_payload_bytes, ratio, error, tokenwire, how, excluded, pass}),
               misses, exclusions
  -h, --help   this text

Exit status: 0 every modelled row within 2 % of its measured payload, 1 a miss (or an unreadable
dataset), 2 wrong usage.
)";
    case Command::Busbw:
        return R"(Usage: tokenwire-cli busbw (--scenario FILE | --preset NAME) --op OP [--algo auto|ring|tree|nvls|
         nvls-tree|collnet-direct|collnet-chain|pat] [--protocol auto|simple|ll128|ll] [--min-bytes 8]
         [--max-bytes 8G] [--factor 2] [--dtype bf16] [--channels N] [--json]

One NCCL collective over all GPUs of the scenario's cluster on its fabric, per message size, as NCCL's
own performance model (src/graph/tuning.cc, NCCL 2.30.7) predicts it on the channels its topology
search would build: a table in nccl-tests' layout (size, count, type, time, algbw, busbw) with the
algorithm and protocol used. auto picks what NCCL's tuner picks (the minimum predicted time).
See docs/nccl.md for the rules followed and simplified. Predictions, not measurements.

Options:
  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input
  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)
  --op OP                allreduce, reducescatter, allgather, broadcast, reduce, alltoall or sendrecv
  --algo NAME            auto (default) or one of NCCL's algorithms for the operation; alltoall and
                         sendrecv run point-to-point (auto only)
  --protocol NAME        auto (default), simple, ll128 or ll
  --min-bytes SIZE       smallest size (default 8); K, M, G = powers of 1024 as in nccl-tests
  --max-bytes SIZE       largest size (default 8G)
  --factor F             multiply the size by F from one row to the next (default 2)
  --dtype TYPE           element type (default bf16): sizes must be multiples of its size
  --channels N           force the ring's (and tree's) channel count (1…32), as NCCL_MIN/MAX_NCHANNELS
  --json                 {"op", "gpus", "nodes", "dtype", "fabric", "channels", "graphs" (per algorithm
                         its channels: GPU order and NIC), "rows": [{"bytes", "count", "time_s", "algbw",
                         "busbw", "algorithm", "protocol", "channels", "latency_s", "bandwidth_s"}]};
                         bandwidths in B/s, busbw null for one GPU
  -h, --help             this text

Sizes: the whole buffer as nccl-tests counts it (AllGather's output, ReduceScatter's input); for
allgather, reducescatter and alltoall the count is rounded down to a multiple of the GPU count.
Exit status: 0 done, 1 unreadable scenario or a pair NCCL does not have (the message names it), 2
wrong usage.
)";
    case Command::Presets:
        return R"(Usage: tokenwire-cli presets

Lists the scenarios shipped with the program: one name per line, then a blank line, then
"name — description" lines. Use a name with --preset.
)";
    case Command::None:
        break;
    }
    return R"(Usage: tokenwire-cli COMMAND [options]

From words to bits on the wire: the stages of "The Life of a Token" from the shell.

Commands:
  tokenize     tokenize a text (GPT-2 or a tokenizer.json) and print its dataset figures
  train-bpe    train a byte-level BPE vocabulary on a text and write tokenizer.json
  derive       derive every figure of a scenario (--scenario FILE or --preset NAME)
  tensors      the tensor inventory of one training step of a scenario
  explain      the derivation chain of one figure back to the inputs
  plan         the parallel plan: validation, communication signature, collective calls
  memory       memory of every GPU under the plan: states, activations, buffers, peak, fits
  kernels      the kernels of one layer on one GPU: shapes, FLOPs, bytes, time, compute- or memory-bound
  collective   one collective call scheduled step by step: bytes per rank, steps, time, busbw
  simulate     one training step on the scenario's fabric: step time, exposed communication, MFU
  sweep        the step on several cluster sizes: speedup, efficiency, communication share
  presets      the scenarios shipped with the program
  validate     predicted vs measured bytes of real collectives on loopback (exit 1 on a miss > 2 %)
  busbw        NCCL's predicted bus bandwidth per message size on the scenario's fabric (nccl-tests' table)
  fit          the plans that fit the model on the cluster, ranked by simulated step time

Options:
  -h, --help   this text; `tokenwire-cli COMMAND --help` for a command's options
  --version    the program version

Exit status: 0 done, 1 unreadable or corrupt input, 2 wrong usage.
)";
}

} // namespace tw::cli
