// tokenwire-cli memory: the memory of every GPU under the scenario's parallel plan (issue #18).

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "parallel/memory.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace tw::cli {

namespace {

using json = nlohmann::ordered_json;

constexpr std::string_view kTool = "tokenwire-cli";

// Bytes as a JSON number: an integer when the value is one (exact below 2^53).
json bytesJson(double v)
{
    if (v >= 0 && v < 9007199254740992.0 && std::floor(v) == v)
        return static_cast<std::uint64_t>(v);
    return v;
}

json kinds(const parallel::RoleMemory& r, double reserve)
{
    return json{{"weights", bytesJson(r.weights)},         {"gradients", bytesJson(r.gradients)},
                {"optimizer", bytesJson(r.optimizer)},     {"activations", bytesJson(r.activations)},
                {"buffers", bytesJson(r.buffers)},         {"reserve", bytesJson(reserve)},
                {"total", bytesJson(r.total)}};
}

// GPU ids as ranges: "0-3, 8-11".
std::string ranges(const std::vector<std::uint32_t>& roleOfGpu, std::uint64_t stage)
{
    std::string out;
    std::size_t g = 0;
    while (g < roleOfGpu.size()) {
        if (roleOfGpu[g] != stage) {
            ++g;
            continue;
        }
        std::size_t end = g;
        while (end + 1 < roleOfGpu.size() && roleOfGpu[end + 1] == stage)
            ++end;
        out += (out.empty() ? "" : ", ") + std::to_string(g) + (end > g ? "-" + std::to_string(end) : "");
        g = end + 1;
    }
    return out;
}

std::string line(const std::string& label, double bytes, const DisplayUnits& units)
{
    std::string l = "  " + label;
    while (l.size() < 16)
        l += ' ';
    std::string b = formatCount(bytes, 0) + " B";
    while (b.size() < 24)
        b.insert(b.begin(), ' ');
    return l + b + "  (" + formatBytes(bytes, units) + ")";
}

} // namespace

int runMemory(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    auto derived = deriveScenarioFor(o, err);
    if (!derived)
        return kExitInput;
    const scenario::Scenario& s = derived->scenario;
    const scenario::Derivation& d = *derived->derivation;
    const parallel::PlanMemory* mem = d.memory.get();
    const parallel::ParallelPlan& p = s.parallel;

    if (o.json) {
        if (!mem) {
            json errors = json::array();
            for (const Error& e : d.planErrors)
                errors.push_back(e.toString());
            out << json{{"scenario", s.name}, {"valid", false}, {"errors", errors}}.dump(-1, ' ', false,
                                                                                            json::error_handler_t::replace)
                << '\n';
            printPlanCannotRun(err, d.planErrors.size());
            return kExitInput;
        }
        json gpus = json::array();
        for (std::size_t g = 0; g < mem->roleOfGpu.size(); ++g) {
            const parallel::RoleMemory& r = mem->roles[mem->roleOfGpu[g]];
            json e{{"gpu", g}, {"stage", r.stage}};
            e.update(kinds(r, mem->reserveBytes));
            gpus.push_back(std::move(e));
        }
        json roles = json::array();
        for (const parallel::RoleMemory& r : mem->roles) {
            json e{{"stage", r.stage}, {"gpus", r.gpus}, {"layers", r.layers},
                   {"holds_embedding", r.holdsEmbedding}, {"holds_output", r.holdsOutput},
                   {"parameters", bytesJson(r.parameters)}, {"micro_batches_in_flight", r.inFlight}};
            e.update(kinds(r, mem->reserveBytes));
            e["headroom"] = bytesJson(r.headroom);
            e["fits"] = r.fits;
            roles.push_back(std::move(e));
        }
        json doc{{"scenario", s.name},
                 {"valid", true},
                 {"gpus", std::move(gpus)},
                 {"roles", std::move(roles)},
                 {"peak_bytes", bytesJson(mem->peakBytes)},
                 {"peak_stage", mem->peakStage},
                 {"peak_gpu", mem->peakGpu},
                 {"capacity_bytes", bytesJson(mem->capacityBytes)},
                 {"reserve_bytes", bytesJson(mem->reserveBytes)},
                 {"allocator_headroom_bytes", bytesJson(mem->allocatorHeadroomBytes)},
                 {"fits", mem->fits}};
        out << doc.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }

    const std::string gpu = d.gpu.name.empty() ? d.gpu.id : d.gpu.name;
    out << "Scenario:   " << s.name << '\n';
    out << "Model:      " << d.model.name << " on " << formatUnsigned(s.hardware.gpuCount()) << " × " << gpu << '\n';
    out << "Plan:       dp " << p.dp << " × pp " << p.pp << " × tp " << p.tp << " (ep " << p.ep << "), "
        << parallel::toString(p.sharding) << (p.sequenceParallel ? ", sequence parallel" : "") << ", "
        << parallel::toString(p.schedule) << ", " << model::toString(d.model.recompute) << " recomputation, "
        << (parallel::attentionScoresStored(d.model, d.gpu) ? "unfused" : "fused") << " attention\n";
    if (!mem) {
        out << "\nThis plan cannot run (the reasons are on standard error).\n";
        for (const Error& e : d.planErrors)
            printError(err, e);
        return kExitInput;
    }
    for (const parallel::RoleMemory& r : mem->roles) {
        std::string in;
        for (std::size_t k = 0; k < r.inFlight.size(); ++k)
            in += (k ? ", " : "") + std::to_string(r.inFlight[k]);
        out << "\nStage " << r.stage << " (" << r.gpus << (r.gpus == 1 ? " GPU: " : " GPUs: ")
            << ranges(mem->roleOfGpu, r.stage) << "; " << r.layers << " layers"
            << (r.holdsEmbedding ? ", embedding" : "") << (r.holdsOutput ? ", output layer" : "")
            << "; micro-batches in flight " << in << ")\n";
        out << line("weights", r.weights, o.units) << '\n';
        out << line("gradients", r.gradients, o.units) << '\n';
        out << line("optimizer", r.optimizer, o.units) << '\n';
        out << line("activations", r.activations, o.units) << '\n';
        out << line("buffers", r.buffers, o.units) << '\n';
        out << line("total", r.total, o.units) << '\n';
        out << line("reserve", mem->reserveBytes, o.units) << '\n';
        out << line("alloc headroom", mem->allocatorHeadroomBytes, o.units) << '\n';
        out << line("left", r.headroom, o.units) << (r.fits ? "" : "  DOES NOT FIT") << '\n';
    }
    out << "\nPeak:       " << formatBytes(mem->peakBytes, o.units) << " on stage " << mem->peakStage << " (GPU "
        << mem->peakGpu << "), + reserve " << formatBytes(mem->reserveBytes, o.units) << " + allocator headroom "
        << formatBytes(mem->allocatorHeadroomBytes, o.units) << " of "
        << formatBytes(mem->capacityBytes, o.units) << '\n';
    out << "Fits:       " << (mem->fits ? "yes, every GPU" : "no") << '\n';
    return out.good() ? kExitOk : kExitInput;
}

} // namespace tw::cli
