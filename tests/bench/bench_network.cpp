// Speed and memory of stage 5's link-load mapping (the targets: the paper's 8-GPU reference in
// a few ms; GPT-3 175B on 1,024 GPUs — 128 DGX-like nodes, tp 8 × pp 8 × dp 16, rail-optimized NDR
// leaf–spine — under ~1 s and 1 GB). Per case: topology build, mapLinkLoads (cold router: every schedule
// generated, every path routed), median, min and max of the runs; the calls, merged schedules, routed
// pairs, the busiest link and the peak RSS (getrusage) after the row.
// Usage: bench_network [--runs N]   (Release build; scripts/bench.sh)

#include "network/linkload.h"
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
    tw::scenario::Scenario scenario;
    tw::network::TopologySpec topology;
};

} // namespace

int main(int argc, char** argv)
{
    int runs = 5;
    if (!tw::bench::parseRuns(argc, argv, "bench_network", runs))
        return 2;
    std::vector<Case> cases;
    {
        Case c{"paper-reference, 8 GPUs, nvswitch-node", tw::scenario::preset("paper-reference").value(), {}};
        cases.push_back(c);
    }
    {
        Case c{"gpt3-175b, 1,024 GPUs (tp 8 x pp 8 x dp 16), leaf-spine NDR rail-optimized",
               tw::scenario::preset("gpt3-175b").value(), {}};
        c.scenario.hardware.gpu = "h100-sxm";
        c.scenario.hardware.nodes = 128;
        c.scenario.hardware.gpusPerNode = 8;
        c.scenario.parallel.dp = 16;
        c.scenario.parallel.pp = 8;
        c.scenario.parallel.tp = 8;
        c.topology.kind = tw::network::TopologyKind::LeafSpine;
        cases.push_back(c);
    }
    std::printf("%d runs (median [min, max]); RSS = peak resident set after the row\n", runs);
    for (const Case& c : cases) {
        auto d = tw::scenario::derive(c.scenario);
        if (!d.ok() || !d.value()->stage3 || !d.value()->stage4) {
            std::fprintf(stderr, "%s: cannot derive: %s\n", c.name,
                         d.ok() ? (d.value()->planErrors.empty() ? "no stage 3" : d.value()->planErrors.front().toString().c_str())
                                : d.error().toString().c_str());
            return 1;
        }
        const auto& der = *d.value();
        std::vector<double> buildMs, mapMs;
        tw::network::LinkLoads last;
        std::size_t links = 0, nodes = 0;
        for (int r = 0; r < runs; ++r) {
            auto t0 = Clock::now();
            auto topo = tw::network::build(c.topology, der.cluster);
            buildMs.push_back(msSince(t0));
            if (!topo.ok()) {
                std::fprintf(stderr, "%s: %s\n", c.name, topo.error().toString().c_str());
                return 1;
            }
            t0 = Clock::now();
            auto loads = tw::network::mapLinkLoads(topo.value(), der.stage3->comm, *der.stage4);
            mapMs.push_back(msSince(t0));
            if (!loads.ok()) {
                std::fprintf(stderr, "%s: %s\n", c.name, loads.error().toString().c_str());
                return 1;
            }
            links = topo.value().links().size();
            nodes = topo.value().nodes().size();
            last = std::move(loads).value();
        }
        const Stats b = stats(buildMs), m = stats(mapMs);
        double busiest = 0;
        for (const auto& l : last.links)
            busiest = std::max(busiest, l.payload());
        std::printf("%s\n  graph %zu nodes, %zu links; %zu calls, %llu schedules, %llu routed pairs, %zu skipped\n", c.name,
                    nodes, links, der.stage3->comm.calls.size(), static_cast<unsigned long long>(last.distinctSchedules),
                    static_cast<unsigned long long>(last.routedPairs), last.skipped.size());
        std::printf("  build %.3f ms [%.3f, %.3f]; mapLinkLoads %.3f ms [%.3f, %.3f]; busiest link %.4g B/step; "
                    "RSS %.1f MiB\n",
                    b.median, b.min, b.max, m.median, m.min, m.max, busiest, peakRssMiB());
    }
    return 0;
}
