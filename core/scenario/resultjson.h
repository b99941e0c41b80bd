#pragma once
// The stage 3 plan and the stage 5 step of a derived scenario as JSON documents, written here once
// so `tokenwire-cli plan --json` / `simulate --json` and any export of the GUI say the same thing.
// Keys keep their order (ordered_json); numbers and figures as derivationjson.h writes them.

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <vector>

namespace tw::network {
class Topology;
struct StepSimulation;
}

namespace tw::scenario {

struct Scenario;
struct Derivation;
struct NetworkStage;

// {"scenario", "valid", "errors", "cluster", "plan"} and, when the plan runs, "figures", "signature",
// "mesh", "groups", "calls" (every collective call of one optimizer step).
[[nodiscard]] nlohmann::ordered_json planJson(const Scenario& scenario, const Derivation& derivation);

// The links that carried payload in the step, busiest first (ties in link order).
[[nodiscard]] std::vector<std::size_t> linksByPayload(const network::StepSimulation& step);
// Payload carried over what the link could carry during the step (0 for a zero-length step).
[[nodiscard]] double linkUtilization(const network::Topology& topology, const network::StepSimulation& step,
                                     std::size_t link);

// {"scenario", "topology", "step_time_s", … , "collectives": per strategy and collective kind (calls, bytes,
// in flight, exposed, stage 4's time; network/breakdown.h), "links": busiest first, "figures": the step's
// and "net.*"}.
[[nodiscard]] nlohmann::ordered_json simulationJson(const Scenario& scenario, const NetworkStage& network,
                                                    const network::StepSimulation& step);

} // namespace tw::scenario
