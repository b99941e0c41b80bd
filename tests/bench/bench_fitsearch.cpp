// The plans that fit (scenario/fitsearch.h), the target: GPT-3 175B on 1,024 H100 GPUs (128
// nodes of 8, the preset's rail-optimized leaf-spine fabric) searched in under 30 s, its first results
// (the coarse ranking) within 2 s. Prints the layouts enumerated, valid and fitting, the time to the
// first partial result, to each exact simulation and to the end, the best plans, and the peak RSS.
// Usage: bench_fitsearch [--top N] [--simulate K]   (Release build; scripts/bench.sh)

#include "scenario/fitsearch.h"
#include "scenario/presets.h"

#include "base/units.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "benchutil.h"

int main(int argc, char** argv)
{
    std::size_t top = 10, simulate = 6; // the CLI's defaults
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--top") == 0)
            top = std::size_t(std::atoi(argv[i + 1]));
        if (std::strcmp(argv[i], "--simulate") == 0)
            simulate = std::size_t(std::atoi(argv[i + 1]));
    }
    tw::scenario::Scenario s = tw::scenario::preset("gpt3-175b").value();
    s.hardware.nodes = 128;
    s.hardware.gpusPerNode = 8;
    s.parallel.dp = 16;
    s.parallel.pp = 8;
    s.parallel.tp = 8;
    tw::scenario::FitOptions o;
    o.top = top;
    o.simulate = simulate;
    const auto start = tw::bench::Clock::now();
    double first = -1;
    int partials = 0;
    auto r = tw::scenario::searchFittingPlans(s, o, {}, [&](const tw::scenario::FitSearch& partial) {
        const double ms = tw::bench::msSince(start);
        if (first < 0)
            first = ms;
        std::printf("  partial %d at %.0f ms: %zu plans listed\n", ++partials, ms, partial.plans.size());
        std::fflush(stdout);
    });
    const double total = tw::bench::msSince(start);
    if (!r) {
        std::printf("error: %s\n", r.error().toString().c_str());
        return 1;
    }
    const tw::scenario::FitSearch& f = r.value();
    std::printf("gpt3-175b on 1,024 GPUs: %zu layouts, %zu valid, %zu fit%s\n", f.candidates, f.valid, f.fitting.size(),
                f.truncated ? " (truncated)" : "");
    std::printf("first results %.0f ms (target < 2,000), total %.0f ms (target < 30,000), %d partial results\n", first,
                total, partials);
    for (const tw::scenario::FitPlan& p : f.plans)
        std::printf("  dp %llu pp %llu tp %llu %s B %llu %s: step %s%s, MFU %.1f %%, peak %s\n",
                    (unsigned long long)p.plan.dp, (unsigned long long)p.plan.pp, (unsigned long long)p.plan.tp,
                    std::string(tw::parallel::toString(p.plan.sharding)).c_str(), (unsigned long long)p.microBatch,
                    std::string(tw::model::toString(p.recompute)).c_str(), p.simulated ? "" : "~",
                    tw::formatSeconds(p.stepSeconds).c_str(), p.mfu * 100, tw::formatBytes(p.peakBytes).c_str());
    std::printf("peak RSS %.0f MiB\n", tw::bench::peakRssMiB());
    return 0;
}
