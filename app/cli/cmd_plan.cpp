// tokenwire-cli plan: stage 3, the plan's validation, communication signature and collective calls.

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "model/tensors.h"
#include "parallel/plan.h"
#include "scenario/derive.h"
#include "scenario/resultjson.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tw::cli {

using json = nlohmann::ordered_json;

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
        out << dumpJson(scenario::planJson(s, d)) << '\n';
        if (!plan)
            printPlanCannotRun(err, d.planErrors.size());
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
                        std::string(parallel::toString(c.strategy)), std::string(model::phaseId(c.phase)),
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

} // namespace tw::cli
