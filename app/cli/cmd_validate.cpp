// tokenwire-cli validate (issue #10): tokenwire's predicted payloads against a measured Open MPI dataset.

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "collective/openmpi.h"
#include "collective/schedule.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace tw::cli {

using json = nlohmann::ordered_json;

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

} // namespace tw::cli
