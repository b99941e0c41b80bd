// tokenwire-cli kernels: the kernels of one Transformer layer on one GPU under the scenario's plan
// (issue #19, docs/compute.md).

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "model/kernels.h"
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

// Achieved rate of a kernel: TFLOP/s for compute-bound kernels, GB/s for memory-bound ones.
std::string achieved(const model::Kernel& k)
{
    if (!(k.seconds > 0))
        return "";
    if (k.computeBound && k.flops > 0)
        return formatCount(k.hardwareFlops / k.seconds / 1e12, 1) + " TFLOP/s";
    return formatCount(k.bytes / k.seconds / 1e9, 0) + " GB/s";
}

std::string pad(std::string s, std::size_t width, bool right = false)
{
    // Width in code points (names carry ∂, ×, ²).
    std::size_t cps = 0;
    for (unsigned char c : s)
        cps += (c & 0xC0) != 0x80;
    while (cps < width) {
        if (right)
            s.insert(s.begin(), ' ');
        else
            s += ' ';
        ++cps;
    }
    return s;
}

json kernelJson(const model::Kernel& k)
{
    return json{{"name", k.name},
                {"shape", k.shape},
                {"class", model::toString(k.kind)},
                {"pass", model::toString(k.pass)},
                {"count", k.count},
                {"flops", k.flops},
                {"hardware_flops", k.hardwareFlops},
                {"bytes", k.bytes},
                {"seconds", k.seconds},
                {"bound", k.computeBound ? "compute" : "memory"},
                {"achieved", achieved(k)}};
}

json listJson(const model::KernelList& list)
{
    json arr = json::array();
    for (const model::Kernel& k : list.kernels)
        arr.push_back(kernelJson(k));
    return json{{"kernels", std::move(arr)},
                {"forward_seconds", list.forwardSeconds()},
                {"backward_seconds", list.seconds(model::KernelPass::Backward)},
                {"recompute_seconds", list.seconds(model::KernelPass::Recompute)}};
}

void printList(std::ostream& out, const std::string& title, const model::KernelList& list)
{
    out << '\n' << title << '\n';
    out << "  " << pad("kernel", 40) << pad("pass", 10) << pad("shape", 30) << pad("GFLOP", 10, true)
        << pad("MB", 10, true) << pad("time", 12, true) << "  " << pad("bound", 8) << "achieved\n";
    for (const model::Kernel& k : list.kernels)
        out << "  " << pad(k.name, 40) << pad(std::string(model::toString(k.pass)), 10) << pad(k.shape, 30)
            << pad(formatCount(k.flops / 1e9, 2), 10, true) << pad(formatCount(k.bytes / 1e6, 1), 10, true)
            << pad(formatSeconds(k.seconds), 12, true) << "  " << pad(k.computeBound ? "compute" : "memory", 8)
            << achieved(k) << '\n';
    out << "  total: forward " << formatSeconds(list.forwardSeconds()) << ", backward "
        << formatSeconds(list.seconds(model::KernelPass::Backward)) << ", recompute "
        << formatSeconds(list.seconds(model::KernelPass::Recompute)) << '\n';
}

} // namespace

int runKernels(const ScenarioOptions& o, std::ostream& out, std::ostream& err)
{
    auto derived = deriveScenarioFor(o, err);
    if (!derived)
        return kExitInput;
    const scenario::Scenario& s = derived->scenario;
    const scenario::Derivation& d = *derived->derivation;
    if (!d.stage3) {
        for (const Error& e : d.planErrors)
            printError(err, e);
        return kExitInput;
    }
    const parallel::ComputeKernels& k = d.stage3->kernels;
    const parallel::ParallelPlan& p = s.parallel;
    const bool hasMoe = !k.moe.kernels.empty();
    const double mfu = d.stage3->figures.valueOf("plan.mfu"), hfu = d.stage3->figures.valueOf("plan.hfu");

    if (o.json) {
        json doc{{"scenario", s.name},
                 {"gpu", d.gpu.id},
                 {"timed", k.timed},
                 {"micro_batch", k.setup.microBatch},
                 {"sequence_length", k.setup.sequenceLength},
                 {"tp", k.setup.tp},
                 {"sequence_parallel", k.setup.sequenceParallel},
                 {"ep", k.setup.ep},
                 {"attention", k.setup.fusedAttention ? "fused" : "unfused"},
                 {"recompute", model::toString(d.model.recompute)},
                 {"layer", listJson(k.dense)}};
        if (hasMoe)
            doc["moe_layer"] = listJson(k.moe);
        doc["embedding"] = listJson(k.embedding);
        doc["head"] = listJson(k.head);
        doc["optimizer"] = kernelJson(k.optimizer);
        doc["mfu"] = mfu;
        doc["hfu"] = hfu;
        out << doc.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }

    const std::string gpu = d.gpu.name.empty() ? d.gpu.id : d.gpu.name;
    out << "Scenario:   " << s.name << '\n';
    out << "Model:      " << d.model.name << " on " << gpu << " (" << formatUnsigned(s.hardware.gpuCount())
        << " GPUs)\n";
    out << "Per GPU:    micro-batch " << k.setup.microBatch << " × " << k.setup.sequenceLength << " tokens, tp "
        << k.setup.tp << (k.setup.sequenceParallel ? " + sequence parallel" : "") << ", ep " << k.setup.ep << ", "
        << (k.setup.fusedAttention ? "fused" : "unfused") << " attention, " << model::toString(d.model.recompute)
        << " recomputation\n";
    if (!k.timed)
        out << "Note:       the plan's times come from "
            << (p.layerForwardSeconds.empty() ? "parallel.compute_efficiency = " + formatCount(p.computeEfficiency, 3)
                                              : std::string("parallel.layer_forward_time_s"))
            << ", not from these kernels\n";
    if (!(d.model.layers > d.model.moeLayers()) && hasMoe) {
        printList(out, "MoE layer", k.moe);
    } else {
        printList(out, "Layer", k.dense);
        if (hasMoe)
            printList(out, "MoE layer", k.moe);
    }
    printList(out, "Embedding (first stage)", k.embedding);
    printList(out, "Head (last stage)", k.head);
    out << "\nOptimizer step: " << k.optimizer.shape << ", " << formatSeconds(k.optimizer.seconds) << " ("
        << achieved(k.optimizer) << ")\n";
    out << "Step (compute timeline, no communication): MFU " << formatCount(mfu * 100, 1) << " %, HFU "
        << formatCount(hfu * 100, 1) << " %\n";
    return out.good() ? kExitOk : kExitInput;
}

} // namespace tw::cli
