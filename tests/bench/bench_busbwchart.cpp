// Stage 4's bus-bandwidth chart after an edit (issue #17: "the stage 4 bandwidth chart redraws after an
// edit in under 100 ms"): BusBwChart::setCall — NCCL's graphs and tuner on the group's system, one
// nccl::sweep of 31 sizes (8 B … 8 GiB) per algorithm of the op and one for NCCL's pick, the call's
// marker, the QCustomPlot replot — then a full repaint of the widget (QWidget::grab), for the AllReduce
// and AllGather of the whole cluster of dgx-a100-4node and dgx-h100-4node (4 nodes × 8 GPUs) and of one
// dgx-h100 node (NVLS on). Median and worst of the runs; budget 100 ms.
// Usage: QT_QPA_PLATFORM=offscreen bench_busbwchart [--runs N]   (Release build)

#include "charts/busbwchart.h"

#include "scenario/presets.h"
#include "scenario/scenario.h"

#include "benchutil.h"

#include <QApplication>

#include <cstdio>
#include <vector>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    int runs = 30;
    if (!tw::bench::parseRuns(argc, argv, "bench_busbwchart", runs))
        return 2;
    std::printf("%-16s %-14s %6s %12s %12s %10s\n", "preset", "op", "GPUs", "median ms", "worst ms", "budget ms");
    tw::ui::BusBwChart chart;
    chart.resize(1000, 420);
    chart.show();
    for (const char* name : {"dgx-a100-4node", "dgx-h100-4node", "dgx-h100"}) {
        auto p = tw::scenario::preset(name);
        if (!p) {
            std::fprintf(stderr, "bench_busbwchart: %s\n", p.error().toString().c_str());
            return 1;
        }
        const tw::scenario::Scenario& s = p.value();
        auto system = tw::nccl::systemFor(s.hardware.gpu, tw::scenario::resolvedTopology(s), s.hardware.cluster());
        if (!system)
            return 1;
        for (const tw::collective::Op op : {tw::collective::Op::AllReduce, tw::collective::Op::AllGather}) {
            std::vector<double> times;
            for (int r = 0; r < runs; ++r) {
                const auto t0 = tw::bench::Clock::now();
                chart.setCall(system.value(), op, 1e6 * (r + 1)); // a new size each run: an edit
                (void)chart.grab();
                times.push_back(tw::bench::msSince(t0));
            }
            const tw::bench::Stats st = tw::bench::stats(times);
            const std::string opName(tw::collective::displayName(op));
            std::printf("%-16s %-14s %6llu %12.3f %12.3f %10d\n", name, opName.c_str(),
                        static_cast<unsigned long long>(s.hardware.gpuCount()), st.median, st.max, 100);
            std::printf("RESULT busbwchart_%s_%s_ms %.3f\n", name, opName.c_str(), st.median);
        }
    }
    return 0;
}
