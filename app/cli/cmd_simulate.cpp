// tokenwire-cli simulate and sweep: stage 5, one step on the scenario's fabric and its scaling.

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "network/simulate.h"
#include "fabric/topology.h"
#include "scenario/derive.h"
#include "scenario/resultjson.h"
#include "scenario/derivationjson.h"
#include "scenario/sweep.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

namespace tw::cli {

using json = nlohmann::ordered_json;

using scenario::figureJson;

int runSimulate(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    const auto derived = deriveScenarioFor(o, err);
    if (!derived)
        return kExitInput;
    const scenario::Scenario& s = derived->scenario;
    const auto& d = derived->derivation;
    if (!d->stage3) {
        for (const Error& e : d->planErrors)
            printError(err, e);
        err << kTool << ": the plan cannot run, so there is no step to simulate (see tokenwire-cli plan)\n";
        return kExitInput;
    }
    const auto step = scenario::simulateDerived(s, *d, false);
    if (!step) {
        printError(err, step.error());
        return kExitInput;
    }
    const scenario::NetworkStage& net = *step.value().network;
    const network::StepSimulation& r = *step.value().simulation;
    const network::Topology& t = *net.topology;
    const std::vector<std::size_t> order = scenario::linksByPayload(r);
    auto utilization = [&](std::size_t l) { return scenario::linkUtilization(t, r, l); };
    if (o.json) {
        out << dumpJson(scenario::simulationJson(s, net, r)) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }
    out << "Scenario:   " << s.name << '\n';
    out << "Model:      " << d->model.name << " on " << gpuLine(s, *d) << ", " << network::toString(s.topology.kind)
        << " fabric (" << t.nodes().size() << " nodes, " << t.links().size() << " directed links)\n";
    if (network::isSwitchedFabric(s.topology.kind))
        out << "NICs:       " << scenario::nicRate(s).why << '\n';
    out << "PCIe:       " << scenario::pcieChoice(s).why << '\n';
    out << '\n';
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"Step time", formatSeconds(r.stepSeconds)});
    rows.push_back({"Compute (mean per GPU)", formatSeconds(r.computeSeconds)});
    rows.push_back({"Exposed communication", formatSeconds(r.exposedCommSeconds)});
    static const char* const names[] = {"  DP", "  PP", "  TP", "  EP"};
    for (int st = 0; st < parallel::kStrategyCount; ++st)
        if (r.exposedByStrategy[st] > 0)
            rows.push_back({names[st], formatSeconds(r.exposedByStrategy[st])});
    rows.push_back({"Idle (pipeline bubble, tail)", formatSeconds(r.idleSeconds)});
    auto percent = [](double share) { return formatCount(100.0 * share, share < 0.01 ? 3 : 1) + " %"; };
    rows.push_back({"Communication share", percent(r.commShare)});
    if (r.mfu > 0) {
        rows.push_back({"MFU (model FLOPs, no recomputation)", percent(r.mfu)});
        rows.push_back({"HFU (with recomputation)", percent(r.hfu)});
        rows.push_back({"  against", model::gemmPeakText(d->gpu, d->model)});
    }
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
    out << "\nBy collective (calls and bytes on the wire per step, all groups; in flight and exposed: mean per GPU, "
           "exposed = the part its compute waited on):\n";
    rows.clear();
    rows.push_back({"Strategy", "Collective", "Calls", "On the wire", "In flight", "Exposed"});
    for (const network::CollectiveBreakdownRow& b : r.byCollective)
        rows.push_back({std::string(parallel::toString(b.strategy)), std::string(parallel::toString(b.kind)),
                        formatCount(b.callsPerStep, 0), formatBytes(b.wireBytesPerStep, o.units),
                        formatSeconds(b.inFlightSeconds), formatSeconds(b.exposedSeconds)});
    printRows(out, rows);
    out << "\nBusiest links (payload per step, utilization over the step):\n";
    rows.clear();
    rows.push_back({"Link", "Type", "Payload", "On the wire", "Utilization"});
    for (std::size_t i = 0; i < order.size() && i < 12; ++i) {
        const std::size_t l = order[i];
        const network::Link& k = t.link(network::LinkId(l));
        rows.push_back({k.id, std::string(network::displayName(k.protocol)), formatBytes(r.linkPayloadBytes[l], o.units),
                        formatBytes(net.loads.links[l].wireBytes, o.units),
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

// One sweep point as JSON (and the CSV's cells).
json pointJson(const scenario::SweepPoint& p)
{
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
}

// The sweep as one JSON document: its points, the measured points, the gaps and the figures.
void printSweepJson(std::ostream& out, const scenario::Scenario& s, const scenario::Sweep& w, bool strong)
{
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
                   {"scaling", strong ? "strong" : "weak"},
                   {"base_gpus", w.baseGpus},
                   {"points", points},
                   {"measured", measured},
                   {"gaps", w.gaps},
                   {"figures", figures}};
    out << dumpJson(doc) << '\n';
}

// The sweep's points as CSV, one row a point.
void printSweepCsv(std::ostream& out, const scenario::Sweep& w)
{
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
}

// The sweep as tables: the scenario, the points, the measured points and the gaps.
void printSweepTable(std::ostream& out, const scenario::Scenario& s, const scenario::Sweep& w, bool strong)
{
    auto percentText = [](double share) { return formatCount(100.0 * share, 1) + " %"; };
    const scenario::Scenario& base = s;
    out << "Scenario:   " << s.name << '\n';
    out << "Model:      " << base.model.name << ", " << network::toString(base.topology.kind) << " fabric, "
        << (strong ? "strong scaling (the global batch is kept)"
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
}

} // namespace

// tokenwire-cli sweep: the step simulated for each cluster size, as JSON, CSV or tables; the points that
// cannot run are reported on err (exit 1).
int runSweep(const SweepCommandOptions& o, std::ostream& out, std::ostream& err)
{
    const auto loaded = readScenario(o.scenario, err);
    if (!loaded)
        return kExitInput;
    const scenario::Scenario& s = *loaded;
    scenario::SweepOptions options;
    options.gpus = o.gpus;
    options.strong = o.strong;
    auto result = scenario::runSweep(s, options);
    if (!result) {
        printError(err, inScenarioFile(result.error(), o.scenario));
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
    if (o.scenario.json)
        printSweepJson(out, s, w, o.strong);
    else if (o.csv)
        printSweepCsv(out, w);
    else
        printSweepTable(out, s, w, o.strong);
    return out.good() ? status : kExitInput;
}

} // namespace tw::cli
