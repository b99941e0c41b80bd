#include "figuresection.h"

namespace tw::scenario {

const std::vector<std::pair<std::string_view, std::string_view>>& modelSectionTable()
{
    // Id prefix → docs/model.md section. A prefix ends with '.' (a family) or is a whole id / the start
    // of one; the longest match wins, so the specific rows override their family's.
    static const std::vector<std::pair<std::string_view, std::string_view>> table = {
        // Stage 1: text, tokenizer, packing into sequences and batches.
        {"text.", "§1"},
        {"tokens.", "§1"},
        {"tokenizer.", "§1"},
        {"dataset.", "§1"},
        {"batch.", "§1"},
        // Stage 2: the model's shape and parameters, activations, model states, FLOPs.
        {"model.", "§2.1"},
        {"model.bytes.", "§2.3"},
        {"model.optimizer_state", "§2.3"},
        {"tensor.", "§2.2"},
        {"memory.", "§2.3"},
        {"memory.activations", "§2.2"},
        {"memory.plan.", "§3.4"},
        {"compute.", "§2.4"},
        {"narration.activation_bytes_per_token", "§2.2"},
        // Stage 3: the mesh, the calls per strategy, compute time and the pipeline, memory per GPU.
        {"hardware.", "§3.1"},
        {"plan.", "§3.1"},
        {"plan.kernel.", "§3.3"},
        {"plan.layer_", "§3.3"},
        {"plan.optimizer_step_seconds", "§3.3"},
        {"plan.mfu", "§3.3"},
        {"plan.hfu", "§3.3"},
        {"plan.peak_flops", "§3.3"},
        {"plan.model_flops_per_step", "§3.3"},
        {"plan.hardware_flops_per_step", "§3.3"},
        {"plan.compute_efficiency", "§3.3"},
        {"plan.bucket_bytes", "§3.2"},
        {"trace.", "§3.1"},
        {"narration.gpus_per_replica", "§3.1"},
        {"narration.tp_columns", "§3.1"},
        {"narration.memory_", "§3.4"},
        {"dp.", "§3.2"},
        {"dp.n_acc", "§3.1"},
        {"tp.", "§3.2"},
        {"ep.", "§3.2"},
        {"zero.", "§3.2"},
        {"pp.", "§3.2"},
        {"pp.makespan", "§3.3"},
        {"pp.bubble_fraction", "§3.3"},
        {"pp.stage_time", "§3.3"},
        {"pp.bottleneck_stage_time", "§3.3"},
        {"pp.balance", "§3.1"},
        // Stage 4: collective algorithms and their cost.
        {"collective.", "§4"},
        {"narration.call.", "§4"},
        // Stage 5: links, overhead, the simulated step, the sweep.
        {"net.", "§5.4"},
        {"net.links", "§5.3"},
        {"net.overhead_share", "§5.2"},
        {"sim.", "§5.4"},
        {"step.", "§5.4"},
        {"sweep.", "§5.5"},
    };
    return table;
}

std::string_view modelSectionOf(std::string_view figureId)
{
    std::string_view best, section;
    for (const auto& [prefix, where] : modelSectionTable())
        if (figureId.substr(0, prefix.size()) == prefix && prefix.size() > best.size()) {
            best = prefix;
            section = where;
        }
    return section;
}

} // namespace tw::scenario
