#pragma once
// Which collective the step's communication goes to: per strategy and collective kind, the calls per
// step, stage 4's bytes on the wire and time alone, and the simulated step's time in flight and exposed
// time. The rows of a strategy sum to its totals: bytes to CollectiveDerivation::wireBytesPerStep, time
// alone to secondsPerStep (the strategy's busiest GPU's), exposed time to StepSimulation::exposedByStrategy.

#include "network/simulate.h"

#include "collective/binding.h"
#include "parallel/plan.h"

#include <string>
#include <vector>

namespace tw::network {

// One row per (strategy, kind) the plan calls, in strategy order (DP, PP, TP, EP), then kind order.
// `simulation` may be null (no exposed times). simulateStep fills StepSimulation::byCollective with it.
[[nodiscard]] std::vector<CollectiveBreakdownRow> collectiveBreakdown(const parallel::CommPlan& plan,
                                                                      const collective::CollectiveDerivation& collectives,
                                                                      const StepSimulation* simulation);

// The figure of a row's exposed time: "sim.exposed_tp_allreduce_s" (its strategy's "sim.exposed_tp_s" cites it).
[[nodiscard]] std::string exposedFigureId(const CollectiveBreakdownRow& row);

} // namespace tw::network
