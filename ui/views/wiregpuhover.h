#pragma once
// The tooltip of a GPU on stage 5's fabric (WireView; issue #19, "stage 5's compute blocks carry the
// kernel breakdown on hover"): what the GPU is doing at the animation's time, read from the simulated
// step's interval of that GPU. Inside a compute interval: the block's kernels (scenario/computeblock.h:
// pass, micro-batch, chunk, the longest kernels with their achieved TFLOP/s or GB/s and bound, the total);
// in an exposed-communication interval: the strategy it waits on; otherwise idle (the pipeline bubble
// before its next block, or its step done).

#include "model/model.h"
#include "network/simulate.h"
#include "parallel/plan.h"

#include <QString>

#include <cstdint>

namespace tw::ui {

// What the tooltip reads; a null pointer leaves its part out.
struct GpuHoverSources {
    const network::StepSimulation* simulation = nullptr;
    const parallel::PlanDerivation* plan = nullptr; // the plan simulated: the GPU's pipeline stage, its kernels
    const model::ModelConfig* model = nullptr;      // which layers are MoE
    double time = 0;                                 // s within the step
};

// The interval of `gpu`'s recorded timeline holding `time` (start ≤ time < end; compute wins at a shared
// edge); null when the GPU's timeline is not recorded or the time falls in a gap (idle).
[[nodiscard]] const network::GpuInterval* intervalAt(const network::StepSimulation& simulation, std::uint32_t gpu,
                                                     double time);

// Rich text (one <p>, lines kept) for the GPU's tooltip; empty without a simulation.
[[nodiscard]] QString gpuToolTip(const GpuHoverSources& sources, std::uint32_t gpu);

} // namespace tw::ui
