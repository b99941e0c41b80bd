// Speed and memory of stage 5's flow-level step simulation (the targets: one step of the paper's
// 8-GPU reference in under 10 ms; a 3D-parallel GPT-3 175B step on 1,024 GPUs — 128 DGX-like nodes,
// tp 8 × pp 8 × dp 16, rail-optimized NDR leaf–spine — in under 1 s and 1 GB). Per case: simulateStep
// (cold: every schedule generated, every path routed), median, min and max of the runs; the step time,
// flows, collective instances, rate updates and the peak RSS (getrusage) after the row.
// Usage: bench_simulate [--runs N]   (Release build)

#include "network/simulate.h"
#include "network/topology.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <cstdio>
#include <string>
#include <vector>

#include "benchutil.h"

namespace {

using tw::bench::Clock;
using tw::bench::msSince;
using tw::bench::peakRssMiB;
using tw::bench::stats;
using tw::bench::Stats;

struct Case {
    const char* name;
    tw::scenario::Scenario scenario;
    tw::network::TopologySpec topology;
    int runs;
};

} // namespace

int main(int argc, char** argv)
{
    int runs = 5;
    if (!tw::bench::parseRuns(argc, argv, "bench_simulate", runs))
        return 2;
    std::vector<Case> cases;
    cases.push_back({"paper-reference, 8 GPUs (dp 8), nvswitch-node", tw::scenario::preset("paper-reference").value(), {}, runs});
    {
        Case c{"gpt3-175b, 1,024 GPUs (tp 8 x pp 8 x dp 16), leaf-spine NDR rail-optimized",
               tw::scenario::preset("gpt3-175b").value(), {}, 1};
        c.scenario.hardware.gpu = "h100-sxm";
        c.scenario.hardware.nodes = 128;
        c.scenario.hardware.gpusPerNode = 8;
        c.scenario.parallel.dp = 16;
        c.scenario.parallel.pp = 8;
        c.scenario.parallel.tp = 8;
        c.topology.kind = tw::network::TopologyKind::LeafSpine;
        cases.push_back(c);
    }
    std::printf("median [min, max] of the runs; RSS = peak resident set after the row\n");
    for (const Case& c : cases) {
        auto d = tw::scenario::derive(c.scenario);
        if (!d.ok() || !d.value()->stage3 || !d.value()->stage4) {
            std::fprintf(stderr, "%s: cannot derive\n", c.name);
            return 1;
        }
        const auto& der = *d.value();
        auto topo = tw::network::build(c.topology, der.cluster);
        if (!topo.ok()) {
            std::fprintf(stderr, "%s: %s\n", c.name, topo.error().toString().c_str());
            return 1;
        }
        tw::network::SimulationOptions o;
        o.modelFlopsPerStep = der.figures.valueOf("compute.flops_per_step");
        o.peakFlopsPerGpu = der.figures.valueOf("compute.gpu_peak_flops");
        std::vector<double> ms;
        tw::network::StepSimulation last;
        for (int r = 0; r < c.runs; ++r) {
            const auto t0 = Clock::now();
            auto sim = tw::network::simulateStep(topo.value(), *der.stage3, *der.stage4, o);
            ms.push_back(msSince(t0));
            if (!sim.ok()) {
                std::fprintf(stderr, "%s: %s\n", c.name, sim.error().toString().c_str());
                return 1;
            }
            last = std::move(sim).value();
        }
        const Stats s = stats(ms);
        std::printf("%s\n  simulateStep %.3f ms [%.3f, %.3f] (%zu runs); step %.6g s, comm share %.4f, MFU %.4f; "
                    "%llu flows, %llu collective instances, %llu rate updates; RSS %.1f MiB\n",
                    c.name, s.median, s.min, s.max, ms.size(), last.stepSeconds, last.commShare, last.mfu,
                    static_cast<unsigned long long>(last.flows), static_cast<unsigned long long>(last.collectiveInstances),
                    static_cast<unsigned long long>(last.rateUpdates), peakRssMiB());
    }
    return 0;
}
