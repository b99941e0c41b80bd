// Speed and memory of stage 5's flow-level step simulation (the targets: one step of the paper's
// 8-GPU reference in under 10 ms; a 3D-parallel GPT-3 175B step on 1,024 GPUs — 128 DGX-like nodes,
// tp 8 × pp 8 × dp 16, rail-optimized NDR leaf–spine — in under 1 s and 1 GB). Per case: simulateStep
// (cold: every schedule generated, every path routed; the 1,024-GPU cases at most 3 runs), median, min
// and max of the runs with link bins off (as the CLI runs it), then one run with them on (its time and the
// bins' memory against SimulationOptions::maxLinkBinBytes); the step time, flows (of the full step, and those actually simulated), collective instances, rate updates, the
// symmetry used and the peak RSS (getrusage) after the row.
// Usage: bench_simulate [--runs N] [--no-link-run]   (Release build)

#include "network/simulate.h"
#include "fabric/topology.h"
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
    const char* key; // RESULT name=simulate_<key>
    tw::scenario::Scenario scenario;
    tw::network::TopologySpec topology;
    int runs;
};

} // namespace

int main(int argc, char** argv)
{
    int runs = 5;
    bool linkRun = true;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--no-link-run")
            linkRun = false;
        else
            rest.push_back(argv[i]);
    }
    if (!tw::bench::parseRuns(static_cast<int>(rest.size()), rest.data(), "bench_simulate", runs))
        return 2;
    std::vector<Case> cases;
    cases.push_back({"paper-reference, 8 GPUs (dp 8), nvswitch-node", "reference", tw::scenario::preset("paper-reference").value(), {}, runs});
    {
        Case c{"gpt3-175b, 1,024 GPUs (tp 8 x pp 8 x dp 16), leaf-spine NDR rail-optimized", "gpt3_1024",
               tw::scenario::preset("gpt3-175b").value(), {}, runs < 3 ? runs : 3};
        c.scenario.hardware.gpu = "h100-sxm";
        c.scenario.hardware.nodes = 128;
        c.scenario.hardware.gpusPerNode = 8;
        c.scenario.parallel.dp = 16;
        c.scenario.parallel.pp = 8;
        c.scenario.parallel.tp = 8;
        c.topology.kind = tw::network::TopologyKind::LeafSpine;
        cases.push_back(c);
        // The same with one GPU per PCIe switch: each GPU reaches only its own NIC (strictly rail-aligned
        // paths, no ECMP between the two NICs of a shared switch), so DP replicas and TP ranks are symmetric.
        c.name = "gpt3-175b, 1,024 GPUs, one GPU (and NIC) per PCIe switch";
        c.key = "gpt3_1024_pcie1";
        c.topology.gpusPerPcieSwitch = 1;
        cases.push_back(c);
    }
    std::printf("median [min, max] of the runs; RSS = peak resident set after the row\n");
    for (const Case& c : cases) {
        auto d = tw::scenario::derive(c.scenario);
        if (!d.ok()) {
            std::fprintf(stderr, "%s: cannot derive: %s\n", c.name, d.error().toString().c_str());
            return 1;
        }
        if (!d.value()->stage3 || !d.value()->stage4) {
            std::fprintf(stderr, "%s: no plan: %s\n", c.name,
                         d.value()->planErrors.empty() ? "?" : d.value()->planErrors.front().toString().c_str());
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
        o.recordLinks = false;
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
        std::printf("  %llu flows simulated (%llu private collectives in closed form), %llu GPUs simulated; symmetry: %s\n",
                    static_cast<unsigned long long>(last.simulatedFlows),
                    static_cast<unsigned long long>(last.closedFormInstances),
                    static_cast<unsigned long long>(last.simulatedGpus), last.reduction.c_str());
        // For scripts/bench.sh (the targets: 10 ms for the reference, 1 s and 1 GB for 1,024 GPUs).
        std::printf("RESULT name=simulate_%s median_ms=%.4f min_ms=%.4f max_ms=%.4f runs=%zu rss_mib=%.1f\n", c.key,
                    s.median, s.min, s.max, ms.size(), peakRssMiB());
        if (!linkRun)
            continue;
        o.recordLinks = true;
        const auto t1 = Clock::now();
        auto withLinks = tw::network::simulateStep(topo.value(), *der.stage3, *der.stage4, o);
        const double linkMs = msSince(t1);
        if (!withLinks.ok()) {
            std::fprintf(stderr, "%s: %s\n", c.name, withLinks.error().toString().c_str());
            return 1;
        }
        // The link bins (linkbins.h): bounded by SimulationOptions::maxLinkBinBytes whatever the step's length.
        const tw::network::LinkBins& bins = withLinks.value().linkBins;
        std::printf("  with link bins: %.3f ms, %zu links binned, %llu bins of %.4g ms (%llu per link at most), "
                    "%.2f MiB of bins (budget %.0f MiB); RSS %.1f MiB\n",
                    linkMs, bins.series.size(), static_cast<unsigned long long>(bins.binCount()), bins.binSeconds * 1e3,
                    static_cast<unsigned long long>(o.maxLinkBins), double(bins.memoryBytes()) / 1048576.0,
                    double(o.maxLinkBinBytes) / 1048576.0, peakRssMiB());
        std::printf("RESULT name=simulate_%s_link_bins ms=%.4f bins_mib=%.3f budget_mib=%.0f %s\n", c.key, linkMs,
                    double(bins.memoryBytes()) / 1048576.0, double(o.maxLinkBinBytes) / 1048576.0,
                    bins.memoryBytes() <= o.maxLinkBinBytes ? "PASS" : "FAIL");
    }
    return 0;
}
