// Speed of the memory of every GPU under a plan (issue #18: "memory for every GPU of a 16,384-GPU
// plan in under 5 ms"): parallel::derivePlanMemory for the GPT-3 175B shape on growing clusters of
// 8-GPU nodes, tp 8 × pp 16 × dp N/128 (pp = N/8 below 128 GPUs), ZeRO-1, sequence parallelism,
// interleaved 1F1B with 2 virtual stages, with and without the figures (the plan search's mode).
// Usage: bench_memory [--runs N]   (Release build)

#include "model/gpucatalog.h"
#include "model/model.h"
#include "parallel/memory.h"
#include "parallel/plan.h"

#include <cstdio>
#include <string>
#include <vector>

#include "benchutil.h"

int main(int argc, char** argv)
{
    int runs = 15;
    if (!tw::bench::parseRuns(argc, argv, "bench_memory", runs))
        return 2;
    const auto model = tw::model::knownModel("gpt3-175b");
    const auto gpu = tw::model::findGpu("h100-sxm");
    if (!model || !gpu) {
        std::fprintf(stderr, "bench_memory: gpt3-175b or h100-sxm missing from the catalog\n");
        return 1;
    }
    std::printf("%-8s %-18s %14s %14s %12s\n", "GPUs", "layout", "figures ms", "no figures ms", "target ms");
    for (const std::uint64_t gpus : {64ull, 1024ull, 16384ull, 65536ull}) {
        tw::parallel::ParallelPlan plan;
        plan.tp = 8;
        plan.pp = gpus >= 128 ? 16 : gpus / 8;
        plan.dp = gpus / (plan.tp * plan.pp);
        plan.sharding = tw::parallel::Sharding::Zero1;
        plan.sequenceParallel = true;
        plan.schedule = tw::parallel::PipelineSchedule::Interleaved;
        plan.virtualStages = 2;
        const tw::parallel::Cluster cluster{gpus / 8, 8};
        const tw::model::BatchShape batch{2048, 1, 128ull * 2048 * plan.dp};
        if (auto errors = tw::parallel::validate(plan, cluster, *model, batch); !errors.empty()) {
            std::fprintf(stderr, "bench_memory: %llu GPUs: %s\n", static_cast<unsigned long long>(gpus),
                         errors.front().toString().c_str());
            return 1;
        }
        double medians[2] = {0, 0};
        for (int mode = 0; mode < 2; ++mode) {
            std::vector<double> times;
            for (int r = 0; r < runs; ++r) {
                const auto t0 = tw::bench::Clock::now();
                const auto m = tw::parallel::derivePlanMemory(plan, cluster, *model, batch, *gpu, {}, mode == 0);
                times.push_back(tw::bench::msSince(t0));
                if (m.roleOfGpu.size() != gpus)
                    return 1;
            }
            medians[mode] = tw::bench::stats(times).median;
        }
        const std::string layout = "dp" + std::to_string(plan.dp) + " pp" + std::to_string(plan.pp) + " tp"
                                   + std::to_string(plan.tp);
        std::printf("%-8llu %-18s %14.3f %14.3f %12s\n", static_cast<unsigned long long>(gpus), layout.c_str(),
                    medians[0], medians[1], gpus == 16384 ? (medians[0] < 5.0 ? "5 met" : "5 MISSED") : "-");
    }
    return 0;
}
