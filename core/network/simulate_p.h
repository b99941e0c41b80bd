#pragma once
// Private to the simulator and its tests: the original full-recomputation engine (every active flow's
// max-min fair rate recomputed at every change, every flow advanced at every event), kept as the
// reference the optimized simulateStep is tested against (tests/core/tst_simulate.cpp).

#include "simulate.h"

namespace tw::network {

[[nodiscard]] Result<StepSimulation> simulateStepReference(const Topology& topology, const parallel::PlanDerivation& plan,
                                                           const collective::CollectiveDerivation& collectives,
                                                           const SimulationOptions& options = {},
                                                           const Progress& progress = {});

} // namespace tw::network
