// Speed of NCCL's model on a fabric (issue #17: "busbw over 8 B … 8 GB (31 sizes) on 32 GPUs in under
// 1 s"): for the dgx-h100-4node and dgx-a100-4node presets (4 nodes × 8 GPUs, 8 rails), the whole of what
// `tokenwire-cli busbw --op allreduce` computes — NCCL's view of the fabric (systemFor), the graph search
// (searchGraphs), the tuner tables (tuneModel) and one auto prediction per size, 8 B × 2^0 … 2^30.
// Usage: bench_busbw [--runs N]   (Release build)

#include "collective/nccl.h"
#include "collective/ncclgraph.h"
#include "scenario/presets.h"
#include "scenario/scenario.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "benchutil.h"

int main(int argc, char** argv)
{
    int runs = 15;
    if (!tw::bench::parseRuns(argc, argv, "bench_busbw", runs))
        return 2;
    std::printf("%-16s %6s %6s %14s %14s %10s\n", "preset", "GPUs", "sizes", "median ms", "max ms", "target ms");
    for (const char* name : {"dgx-a100-4node", "dgx-h100-4node"}) {
        auto p = tw::scenario::preset(name);
        if (!p) {
            std::fprintf(stderr, "bench_busbw: %s\n", p.error().toString().c_str());
            return 1;
        }
        const tw::scenario::Scenario s = p.value();
        std::vector<double> times;
        for (int r = 0; r < runs; ++r) {
            const auto t0 = tw::bench::Clock::now();
            auto system = tw::nccl::systemFor(s.hardware.gpu, tw::scenario::resolvedTopology(s), s.hardware.cluster());
            if (!system)
                return 1;
            const tw::nccl::Graphs graphs = tw::nccl::searchGraphs(system.value());
            const tw::nccl::Tuning tuning = tw::nccl::tuneModel(system.value(), graphs);
            for (int i = 0; i < 31; ++i) {
                tw::nccl::Request q;
                q.op = tw::collective::Op::AllReduce;
                q.bytes = 8.0 * std::pow(2.0, i);
                if (!tw::nccl::predict(tuning, system.value(), graphs, q))
                    return 1;
            }
            times.push_back(tw::bench::msSince(t0));
        }
        const tw::bench::Stats st = tw::bench::stats(times);
        std::printf("%-16s %6llu %6d %14.3f %14.3f %10d\n", name, static_cast<unsigned long long>(s.hardware.gpuCount()),
                    31, st.median, st.max, 1000);
        std::printf("RESULT busbw_%s_ms %.3f\n", name, st.median);
    }
    return 0;
}
