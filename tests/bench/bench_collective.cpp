// Speed and memory of stage 4 (the target: ring AllReduce at N = 4,096 — 2·4,095 steps ×
// 4,096 transfers = 33.5 million transfers — generated and counted in under 1 s, N = 1,024 in under
// 50 ms, with memory that does not grow with the number of transfers). For N = 1,024 and 4,096, ring
// AllReduce of 1 GiB: Schedule::next over every step (generate only) and count() (generate + count
// bytes, steps and α–β time); median, min and max of the runs, and the peak RSS (getrusage) after
// each N — the peak after N = 4,096 staying at the N = 1,024 level shows the generator holds one step,
// never the schedule.
// Usage: bench_collective [--runs N]   (Release build; scripts/bench.sh)

#include "collective/schedule.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "benchutil.h"

namespace {

using tw::bench::Clock;
using tw::bench::msSince;
using tw::bench::stats;
using tw::bench::Stats;
using tw::bench::peakRssMiB;

using namespace tw::collective;

} // namespace

int main(int argc, char** argv)
{
    int runs = 5;
    if (!tw::bench::parseRuns(argc, argv, "bench_collective", runs))
        return 2;
    const double gib = 1024.0 * 1024 * 1024;
    std::printf("ring AllReduce of 1 GiB, %d runs (median [min, max]); RSS = peak resident set after the row\n", runs);
    std::printf("%8s %8s %14s %24s %24s %10s %14s\n", "N", "steps", "transfers", "generate ms", "count() ms", "RSS MiB",
                "total bytes");
    std::printf("%8s %8s %14s %24s %24s %10.1f %14s\n", "start", "-", "-", "-", "-", peakRssMiB(), "-");
    for (std::uint64_t n : {std::uint64_t(1024), std::uint64_t(4096)}) {
        ScheduleSpec spec;
        spec.op = Op::AllReduce;
        spec.algorithm = Algorithm::Ring;
        spec.ranks = n;
        spec.bytes = gib;
        std::vector<double> gen, cnt;
        std::uint64_t transfers = 0, steps = 0;
        double total = 0;
        volatile double sink = 0;
        for (int r = 0; r < runs; ++r) {
            auto t0 = Clock::now();
            Schedule s(spec);
            std::vector<Transfer> step;
            std::uint64_t t = 0;
            double bytes = 0;
            while (s.next(step)) {
                t += step.size();
                bytes += step.back().bytes; // keeps the loop from being optimized away
            }
            gen.push_back(msSince(t0));
            transfers = t;
            steps = s.stepCount();
            t0 = Clock::now();
            const Counts c = count(spec);
            cnt.push_back(msSince(t0));
            total = c.totalBytes;
            sink = sink + bytes;
            if (c.transfers != t || c.steps != steps)
                return 1;
        }
        const Stats g = stats(gen), c = stats(cnt);
        char gs[64], cs[64];
        std::snprintf(gs, sizeof gs, "%.1f [%.1f, %.1f]", g.median, g.min, g.max);
        std::snprintf(cs, sizeof cs, "%.1f [%.1f, %.1f]", c.median, c.min, c.max);
        std::printf("%8llu %8llu %14llu %24s %24s %10.1f %14.4g\n", static_cast<unsigned long long>(n),
                    static_cast<unsigned long long>(steps), static_cast<unsigned long long>(transfers), gs, cs, peakRssMiB(),
                    total);
    }
    std::printf("targets: N = 1,024 count() < 50 ms; N = 4,096 < 1,000 ms; RSS flat between the rows\n");
    return 0;
}
