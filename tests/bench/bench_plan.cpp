// Speed of stage 3 (issue 4: "plan and communication plan for 1,024 GPUs in under 5 ms; 65,536 GPUs
// in under 200 ms"): parallel::validate + parallel::derivePlan (mesh, groups, every collective call,
// the signature, the pipeline timeline and the figures) for the GPT-3 175B shape (L = 96, d = 12,288,
// a = 96) on growing clusters of 8-GPU nodes, tp 8 × pp 8 × dp N/64 (dp = N/8 below 64 GPUs), ZeRO-1,
// sequence parallelism, interleaved 1F1B with 2 virtual stages; G = 1,536 × 2,048 × dp/12 rounded so
// that N_acc stays a multiple of pp. Also a swap of two GPUs in a 256-GPU plan (what a drag costs).
// Usage: bench_plan [--runs N]   (Release build; scripts/bench.sh)

#include "model/model.h"
#include "model/gpucatalog.h"
#include "parallel/plan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "benchutil.h"

namespace {

using tw::bench::Clock;
using tw::bench::msSince;
using tw::bench::stats;
using tw::bench::Stats;

struct Case {
    tw::parallel::ParallelPlan plan;
    tw::parallel::Cluster cluster;
    tw::model::BatchShape batch;
};

Case makeCase(std::uint64_t gpus)
{
    Case c;
    c.cluster = {gpus / 8, 8};
    c.plan.tp = 8;
    c.plan.pp = gpus >= 64 ? 8 : 1;
    c.plan.dp = gpus / (c.plan.tp * c.plan.pp);
    c.plan.sharding = tw::parallel::Sharding::Zero1;
    c.plan.sequenceParallel = true;
    if (c.plan.pp > 1) {
        c.plan.schedule = tw::parallel::PipelineSchedule::Interleaved;
        c.plan.virtualStages = 2;
    }
    c.batch.sequenceLength = 2048;
    c.batch.microBatch = 1;
    // 128 micro-batches per replica per step (a multiple of pp), as in GPT-3's 1,536 sequences on dp 12.
    c.batch.globalBatchTokens = 128 * 2048 * c.plan.dp;
    return c;
}

} // namespace

int main(int argc, char** argv)
{
    int runs = 15;
    if (!tw::bench::parseRuns(argc, argv, "bench_plan", runs))
        return 2;
    const auto model = tw::model::knownModel("gpt3-175b");
    const auto gpu = tw::model::findGpu("h100-sxm");
    if (!model || !gpu) {
        std::fprintf(stderr, "bench_plan: gpt3-175b or h100-sxm missing from the catalog\n");
        return 1;
    }
    std::printf("%-8s %-16s %10s %10s %12s %12s %12s %12s\n", "GPUs", "layout", "groups", "calls", "median ms",
                "min ms", "max ms", "target ms");
    for (const std::uint64_t gpus : {8ull, 64ull, 256ull, 1024ull, 4096ull, 16384ull, 65536ull}) {
        const Case c = makeCase(gpus);
        if (auto errors = tw::parallel::validate(c.plan, c.cluster, *model, c.batch); !errors.empty()) {
            std::fprintf(stderr, "bench_plan: %llu GPUs: %s\n", static_cast<unsigned long long>(gpus),
                         errors.front().toString().c_str());
            return 1;
        }
        std::vector<double> times;
        std::size_t groups = 0, calls = 0;
        const int n = gpus >= 16384 ? std::max(3, runs / 3) : runs;
        for (int r = 0; r < n; ++r) {
            const auto t0 = Clock::now();
            const auto errors = tw::parallel::validate(c.plan, c.cluster, *model, c.batch);
            const auto d = tw::parallel::derivePlan(c.plan, c.cluster, *model, c.batch, *gpu);
            times.push_back(msSince(t0));
            groups = d.comm.groups.size();
            calls = d.comm.calls.size();
            if (!errors.empty() || d.comm.signature.size() != 4)
                return 1;
        }
        const Stats s = stats(times);
        const double target = gpus <= 1024 ? 5.0 : gpus == 65536 ? 200.0 : 0.0;
        const std::string layout = "dp" + std::to_string(c.plan.dp) + " pp" + std::to_string(c.plan.pp) + " tp"
                                   + std::to_string(c.plan.tp);
        std::printf("%-8llu %-16s %10zu %10zu %12.3f %12.3f %12.3f %12s\n", static_cast<unsigned long long>(gpus),
                    layout.c_str(), groups, calls, s.median, s.min, s.max,
                    target > 0 ? (std::to_string(static_cast<int>(target)) + (s.median < target ? " met" : " MISSED")).c_str()
                               : "-");
    }

    // A drag in the GUI: swap two GPUs of a 256-GPU plan and derive again (validate + derivePlan).
    Case c = makeCase(256);
    c.plan.assignment = tw::parallel::defaultAssignment(c.plan);
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
        std::swap(c.plan.assignment[3], c.plan.assignment[200 - r % 7]);
        const auto t0 = Clock::now();
        const auto errors = tw::parallel::validate(c.plan, c.cluster, *model, c.batch);
        const auto d = tw::parallel::derivePlan(c.plan, c.cluster, *model, c.batch, *gpu);
        times.push_back(msSince(t0));
        if (!errors.empty() || d.mesh.size() != 256)
            return 1;
    }
    const Stats s = stats(times);
    std::printf("swap two GPUs of 256 and derive: median %.3f ms (min %.3f, max %.3f)\n", s.median, s.min, s.max);
    return 0;
}
