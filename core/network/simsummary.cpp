#include "simengine_p.h"

#include "breakdown.h"

#include "base/units.h"
#include "parallel/plan.h"

#include <algorithm>
#include <cmath>

namespace tw::network::sim {

// After the event loop: each GPU's idle time, the means over GPUs, the recorded timelines completed
// with their idle gaps, under symmetry every GPU and link copied from its orbit's representative, the
// per-collective breakdown and the "sim.*" figures.
void Engine::summarize()
{
    // Summaries (simulate.h: means over GPUs).
    const double n = static_cast<double>(std::max<std::size_t>(1, gpus.size()));
    for (std::uint32_t gi = 0; gi < gpus.size(); ++gi)
        if (sym.gpuRep[gi] == gi)
            out.stepSeconds = std::max(out.stepSeconds, gpus[gi].sum.finish);
    for (std::uint32_t gi = 0; gi < gpus.size(); ++gi) {
        Gpu& g = gpus[gi];
        if (sym.gpuRep[gi] != gi)
            continue;
        g.sum.idle = std::max(0.0, out.stepSeconds - g.sum.compute - g.sum.exposedTotal());
        if (g.timeline >= 0 && g.sum.finish < out.stepSeconds)
            record(gi, g.sum.finish, out.stepSeconds, Activity::Idle, Strategy::DP);
    }
    // Every GPU (a representative's copy under symmetry).
    out.gpus.reserve(gpus.size());
    for (std::uint32_t gi = 0; gi < gpus.size(); ++gi) {
        const GpuSummary& g = gpus[sym.gpuRep[gi]].sum;
        out.computeSeconds += g.compute / n;
        for (int s = 0; s < parallel::kStrategyCount; ++s)
            out.exposedByStrategy[s] += g.exposed[s] / n;
        if (const std::int32_t slot = gpus[sym.gpuRep[gi]].byKindSlot; slot >= 0)
            for (int s = 0; s < parallel::kStrategyCount; ++s)
                for (std::size_t k = 0; k < out.exposedByKind[s].size(); ++k) {
                    out.exposedByKind[s][k] += byKind[std::size_t(slot)].exposed[s][k] / n;
                    out.inFlightByKind[s][k] += byKind[std::size_t(slot)].inFlight[s][k] / n;
                }
        out.idleSeconds += g.idle / n;
        out.gpus.push_back(g);
    }
    // Idle gaps inside the recorded timelines are implicit; fill them so the list is complete.
    for (GpuTimeline& tl : timelines) {
        std::vector<GpuInterval> full;
        double t = 0;
        for (const GpuInterval& iv : tl.intervals) {
            if (iv.start > t)
                full.push_back({t, iv.start, Activity::Idle, Strategy::DP});
            full.push_back(iv);
            t = std::max(t, iv.end);
        }
        if (t < out.stepSeconds)
            full.push_back({t, out.stepSeconds, Activity::Idle, Strategy::DP});
        tl.intervals = std::move(full);
    }
    if (!sym.reduced) {
        out.gpuTimelines = std::move(timelines);
    } else {
        for (std::uint32_t g : recorded) {
            out.gpuTimelines.push_back(timelines[std::size_t(gpus[sym.gpuRep[g]].timeline)]);
            out.gpuTimelines.back().gpu = g;
        }
        // Exempt links kept apart (ExemptLoad): each carries its paths' bytes once per orbit flow crossing it.
        for (const auto& [path, load] : exemptCache)
            for (const PathEntry& e : load->links)
                out.linkPayloadBytes[e.link] += load->bytes * e.weight;
        // Links: each orbit's members carry what its representative carried.
        for (LinkId l = 0; l < sym.linkRep.size(); ++l)
            if (sym.linkRep[l] != kNone && sym.linkRep[l] != l)
                out.linkPayloadBytes[l] = out.linkPayloadBytes[sym.linkRep[l]];
    }
    // Link bins over the whole step; under symmetry an orbit's members read their representative's series.
    out.linkBins = links->finish(out.stepSeconds);
    if (sym.reduced)
        for (LinkId l = 0; l < sym.linkRep.size() && l < out.linkBins.seriesOf.size(); ++l)
            if (sym.linkRep[l] != kNone && sym.linkRep[l] != l)
                out.linkBins.seriesOf[l] = out.linkBins.seriesOf[sym.linkRep[l]];
    for (int s = 0; s < parallel::kStrategyCount; ++s)
        out.exposedCommSeconds += out.exposedByStrategy[s];
    // Idle is step − compute − waits per GPU: below a billionth of the step it is the rounding of that
    // difference, not time ("Idle 0.000000222 ns").
    if (std::abs(out.idleSeconds) < 1e-9 * out.stepSeconds)
        out.idleSeconds = 0;
    out.commShare = out.stepSeconds > 0 ? out.exposedCommSeconds / out.stepSeconds : 0.0;
    if (opt.peakFlopsPerGpu > 0 && out.stepSeconds > 0) {
        out.mfu = opt.modelFlopsPerStep / (n * opt.peakFlopsPerGpu * out.stepSeconds);
        out.hfu = opt.hardwareFlopsPerStep / (n * opt.peakFlopsPerGpu * out.stepSeconds);
    }
    out.byCollective = collectiveBreakdown(plan.comm, coll, &out);
    addFigures();
}

// The "sim.*" figures of the summarized step.
void Engine::addFigures()
{
    auto& f = out.figures;
    const std::string G = formatInteger(static_cast<std::int64_t>(gpus.size()));
    f.add({"sim.step_time_s", "Simulated step time", out.stepSeconds, "s",
           "last GPU's end of the step (compute with the optimizer step, exposed communication, optimizer calls), "
               "flow-level simulation on "
               + formatInteger(static_cast<std::int64_t>(topo.links().size())) + " links = " + formatSeconds(out.stepSeconds),
           {}});
    f.add({"sim.compute_s", "Compute time per GPU (mean)", out.computeSeconds, "s",
           "Σ compute blocks per GPU, mean over " + G + " GPUs = " + formatSeconds(out.computeSeconds), {}});
    f.add({"sim.exposed_comm_s", "Exposed communication per GPU (mean)", out.exposedCommSeconds, "s",
           "time a GPU's compute waits on a collective, a pipeline receive or its gradient stream, mean over " + G
               + " GPUs = " + formatSeconds(out.exposedCommSeconds),
           {}});
    static const char* names[4] = {"dp", "pp", "tp", "ep"};
    // Per collective: "sim.exposed_tp_allreduce_s" …, cited by their strategy's figure.
    parallel::PerStrategy<std::vector<std::string>> kindIds;
    for (const CollectiveBreakdownRow& b : out.byCollective) {
        const std::string strategy(parallel::toString(b.strategy)), kind(parallel::toString(b.kind));
        const std::string id = exposedFigureId(b);
        f.add({id, "Exposed " + strategy + " " + kind + " per GPU (mean)", b.exposedSeconds, "s",
               "waits on the " + strategy + " " + kind + " calls (" + formatCount(b.callsPerStep, 0)
                   + " per step over all groups, " + formatBytes(b.wireBytesPerStep) + " on the wire, in flight "
                   + formatSeconds(b.inFlightSeconds) + " per GPU), mean over " + G + " GPUs = "
                   + formatSeconds(b.exposedSeconds),
               {}});
        kindIds[b.strategy].push_back(id);
    }
    for (int s = 0; s < parallel::kStrategyCount; ++s) {
        const std::string label(parallel::toString(parallel::Strategy(s)));
        f.add({std::string("sim.exposed_") + names[s] + "_s", "Exposed " + label + " communication per GPU (mean)",
               out.exposedByStrategy[s], "s",
               "waits on " + label + " collectives, mean over " + G + " GPUs = " + formatSeconds(out.exposedByStrategy[s]),
               kindIds[s]});
    }
    f.add({"sim.bubble_s", "Idle per GPU (mean; pipeline bubble)", out.idleSeconds, "s",
           "step − compute − exposed communication, mean over GPUs = " + formatSeconds(out.stepSeconds) + " − "
               + formatSeconds(out.computeSeconds) + " − " + formatSeconds(out.exposedCommSeconds) + " = "
               + formatSeconds(out.idleSeconds),
           {"sim.step_time_s", "sim.compute_s", "sim.exposed_comm_s"}});
    f.add({"sim.comm_share", "Communication share of the step", out.commShare, "",
           "exposed communication / step time = " + formatSeconds(out.exposedCommSeconds) + " / "
               + formatSeconds(out.stepSeconds) + " = " + formatCount(100 * out.commShare, 1) + " %",
           {"sim.exposed_comm_s", "sim.step_time_s"}});
    const std::string over = " / (" + G + " · " + formatCount(opt.peakFlopsPerGpu, 0) + " · "
                             + formatSeconds(out.stepSeconds) + ") = ";
    const std::string peak = opt.peakText.empty() ? std::string() : " (peak: " + opt.peakText + ")";
    if (out.mfu > 0)
        f.add({"sim.mfu", "Model FLOPs utilization", out.mfu, "",
               "model FLOPs per step (no recomputation) / (GPUs · peak FLOP/s · step time) = "
                   + formatCount(opt.modelFlopsPerStep, 0) + over + formatCount(100 * out.mfu, 1) + " %" + peak,
               {"compute.model_flops_per_step", "compute.gpu_peak_flops", "sim.step_time_s"}});
    if (out.hfu > 0)
        f.add({"sim.hfu", "Hardware FLOPs utilization", out.hfu, "",
               "FLOPs per step with recomputation / (GPUs · peak FLOP/s · step time) = "
                   + formatCount(opt.hardwareFlopsPerStep, 0) + over + formatCount(100 * out.hfu, 1) + " %" + peak,
               {"compute.flops_per_step", "compute.gpu_peak_flops", "sim.step_time_s"}});
}

} // namespace tw::network::sim
