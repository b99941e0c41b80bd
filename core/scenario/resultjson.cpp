#include "resultjson.h"

#include "derivationjson.h"
#include "derive.h"
#include "scenario.h"

#include "model/tensors.h"
#include "network/simulate.h"
#include "fabric/topology.h"
#include "parallel/plan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

namespace tw::scenario {

using json = nlohmann::ordered_json;

json planJson(const Scenario& s, const Derivation& d)
{
    const parallel::PlanDerivation* plan = d.stage3.get();
    const parallel::ParallelPlan& p = s.parallel;
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
    if (!plan)
        return doc;
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
                         {"phase", model::phaseId(c.phase)},
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
    return doc;
}

std::vector<std::size_t> linksByPayload(const network::StepSimulation& r)
{
    std::vector<std::size_t> order;
    for (std::size_t l = 0; l < r.linkPayloadBytes.size(); ++l)
        if (r.linkPayloadBytes[l] > 0)
            order.push_back(l);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return r.linkPayloadBytes[a] > r.linkPayloadBytes[b]; });
    return order;
}

double linkUtilization(const network::Topology& t, const network::StepSimulation& r, std::size_t l)
{
    const double capacity = t.link(network::LinkId(l)).bandwidth * r.stepSeconds;
    return capacity > 0 ? r.linkPayloadBytes[l] / capacity : 0.0;
}

json simulationJson(const Scenario& s, const NetworkStage& net, const network::StepSimulation& r)
{
    json byCollective = json::array();
    for (const network::CollectiveBreakdownRow& b : r.byCollective)
        byCollective.push_back({{"strategy", std::string(parallel::toString(b.strategy))},
                                {"collective", std::string(parallel::toString(b.kind))},
                                {"calls_per_step", b.callsPerStep},
                                {"wire_bytes_per_step", b.wireBytesPerStep},
                                {"in_flight_s", b.inFlightSeconds},
                                {"exposed_s", b.exposedSeconds},
                                {"stage4_seconds_s", b.secondsAlone}});
    const network::Topology& t = *net.topology;
    json links = json::array();
    for (std::size_t l : linksByPayload(r)) {
        const network::Link& k = t.link(network::LinkId(l));
        links.push_back({{"id", k.id},
                         {"from", t.node(k.from).name},
                         {"to", t.node(k.to).name},
                         {"type", std::string(network::toString(k.protocol))},
                         {"bytes", r.linkPayloadBytes[l]},
                         {"wire_bytes", net.loads.links[l].wireBytes},
                         {"utilization", linkUtilization(t, r, l)}});
    }
    json figures = json::array();
    for (const Figure& f : r.figures.all())
        figures.push_back(figureJson(f));
    for (const Figure& f : net.figures.all())
        figures.push_back(figureJson(f));
    const json exposed{{"dp", r.exposedByStrategy[0]},
                       {"pp", r.exposedByStrategy[1]},
                       {"tp", r.exposedByStrategy[2]},
                       {"ep", r.exposedByStrategy[3]}};
    return json{{"scenario", s.name},
                {"topology", std::string(network::toString(s.topology.kind))},
                {"step_time_s", r.stepSeconds},
                {"compute_s", r.computeSeconds},
                {"exposed_comm_s", r.exposedCommSeconds},
                {"exposed_comm_by_strategy_s", exposed},
                {"collectives", byCollective},
                {"idle_s", r.idleSeconds},
                {"comm_share", r.commShare},
                {"mfu", r.mfu},
                {"hfu", r.hfu},
                {"flows", r.flows},
                {"simulated_flows", r.simulatedFlows},
                {"simulated_gpus", r.simulatedGpus},
                {"closed_form_collectives", r.closedFormInstances},
                {"symmetry", r.reduction},
                {"links", links},
                {"figures", figures}};
}

} // namespace tw::scenario
