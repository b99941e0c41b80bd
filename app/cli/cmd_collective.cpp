// tokenwire-cli collective: stage 4, one collective call scheduled and counted, or the list of them.

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "collective/schedule.h"
#include "scenario/derivationjson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tw::cli {

using json = nlohmann::ordered_json;

using scenario::numberJson;

namespace {

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
    for (collective::Op op : collective::allOps())
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

} // namespace tw::cli
