#include "computeblock.h"

#include "base/units.h"

#include <algorithm>
#include <map>

namespace tw::scenario {

namespace {

void add(std::map<std::string, BlockKernel>& sums, const model::Kernel& k, double times)
{
    const std::string name = k.pass == model::KernelPass::Recompute ? k.name + " (recomputed)" : k.name;
    BlockKernel& b = sums[name];
    b.name = name;
    b.seconds += times * k.seconds;
    b.flops += times * k.hardwareFlops;
    b.bytes += times * k.bytes;
    b.computeBound = k.computeBound && k.kind != model::KernelClass::MemoryBound;
}

void addList(std::map<std::string, BlockKernel>& sums, const model::KernelList& list, network::ComputePass pass,
             double times)
{
    for (const model::Kernel& k : list.kernels) {
        const bool forward = k.pass == model::KernelPass::Forward;
        if ((pass == network::ComputePass::Forward) == forward)
            add(sums, k, times);
    }
}

} // namespace

ComputeBlockBreakdown computeBlockBreakdown(const parallel::PlanDerivation& plan, const model::ModelConfig& model,
                                            std::uint64_t stage, const network::GpuInterval& interval,
                                            std::size_t top)
{
    ComputeBlockBreakdown out;
    out.intervalSeconds = interval.end - interval.start;
    const parallel::ComputeKernels& k = plan.kernels;
    out.timed = k.timed;
    std::map<std::string, BlockKernel> sums;
    if (interval.pass == network::ComputePass::Optimizer) {
        out.title = "Optimizer step";
        add(sums, k.optimizer, 1);
    } else {
        const auto& part = plan.plan.layerPartition;
        const std::uint64_t P = std::max<std::uint64_t>(1, plan.plan.pp);
        const std::uint64_t chunk = interval.chunk * P + stage;
        std::uint64_t first = 0;
        for (std::uint64_t c = 0; c < chunk && c < part.size(); ++c)
            first += part[c];
        out.layers = chunk < part.size() ? part[chunk] : 0;
        std::uint64_t moe = 0;
        for (std::uint64_t l = first; l < first + out.layers; ++l)
            moe += model.isMoeLayer(l) ? 1 : 0;
        addList(sums, k.dense, interval.pass, static_cast<double>(out.layers - moe));
        if (moe > 0)
            addList(sums, k.moe, interval.pass, static_cast<double>(moe));
        if (chunk == 0)
            addList(sums, k.embedding, interval.pass, 1);
        if (!part.empty() && chunk + 1 == part.size())
            addList(sums, k.head, interval.pass, 1);
        const bool backward = interval.pass == network::ComputePass::Backward;
        out.title = std::string(backward ? "Backward" : "Forward") + " of micro-batch "
                    + std::to_string(interval.microBatch) + ": " + std::to_string(out.layers)
                    + (out.layers == 1 ? " layer" : " layers")
                    + (backward && model.recompute != model::Recompute::None ? ", recomputation included" : "");
    }
    std::vector<BlockKernel> all;
    for (auto& [name, b] : sums)
        if (b.seconds > 0)
            all.push_back(b);
    std::stable_sort(all.begin(), all.end(), [](const BlockKernel& a, const BlockKernel& b) { return a.seconds > b.seconds; });
    for (const BlockKernel& b : all) {
        out.kernelSeconds += b.seconds;
        if (out.top.size() < top) {
            out.top.push_back(b);
        } else {
            ++out.others;
            out.otherSeconds += b.seconds;
        }
    }
    return out;
}

std::string toText(const ComputeBlockBreakdown& b)
{
    std::string s = b.title + "\n";
    if (!b.timed)
        return s + "Times from a fixed compute rate or given layer times: no kernel breakdown.";
    for (const BlockKernel& k : b.top) {
        s += "  " + k.name + ": " + formatSeconds(k.seconds) + ", "
             + (k.computeBound ? formatCount(k.rate() / 1e12, 0) + " TFLOP/s, compute-bound"
                               : formatCount(k.rate() / 1e9, 0) + " GB/s, memory-bound")
             + "\n";
    }
    if (b.others > 0)
        s += "  " + std::to_string(b.others) + " more kernels: " + formatSeconds(b.otherSeconds) + "\n";
    s += "Kernels of the block: " + formatSeconds(b.kernelSeconds);
    if (b.intervalSeconds > 0 && b.intervalSeconds < b.kernelSeconds * (1 - 1e-6))
        s += " (this part of it: " + formatSeconds(b.intervalSeconds) + ")";
    return s;
}

} // namespace tw::scenario
