// What a drag in stage 3 costs on screen (issue 4: "dragging a GPU redraws within one frame (16 ms)
// for 256 GPUs"): core's validate + derivePlan after a swap, then MeshView::setMesh with the new
// mesh and one full repaint of the view (QWidget::grab renders every card), offscreen, at 8, 64 and
// 256 GPUs (GPT-3 175B shape, tp 8, pp 1 or 8, 8-GPU nodes). Then a new plan's delivery at cluster
// scale (issue 21, the GUI thread under 50 ms): setMesh on a new view (the items built) and again with
// the same shape (restyled only), and a repaint, at 16,384 and 98,304 GPUs (tp 8 · pp 16).
// Usage: QT_QPA_PLATFORM=offscreen bench_meshview [--runs N]   (Release build; scripts/bench.sh)

#include "views/meshview.h"

#include "model/gpucatalog.h"
#include "model/model.h"
#include "parallel/plan.h"

#include <QApplication>

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

double median(const std::vector<double>& v)
{
    return tw::bench::stats(v).median;
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    int runs = 30;
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
    const auto model = tw::model::knownModel("gpt3-175b");
    const auto gpu = tw::model::findGpu("h100-sxm");
    if (!model || !gpu)
        return 1;
    std::printf("%-6s %12s %12s %12s %12s   (medians over %d drags; target: total < 16 ms at 256 GPUs)\n", "GPUs",
                "core ms", "setMesh ms", "paint ms", "total ms", runs);
    for (const std::uint64_t gpus : {8ull, 64ull, 256ull}) {
        tw::parallel::ParallelPlan plan;
        plan.tp = 8;
        plan.pp = gpus >= 64 ? 8 : 1;
        plan.dp = gpus / (plan.tp * plan.pp);
        tw::model::BatchShape batch{2048, 1, 128 * 2048 * plan.dp};
        const tw::parallel::Cluster cluster{gpus / 8, 8};
        plan.assignment = tw::parallel::defaultAssignment(plan);
        tw::ui::MeshView view;
        view.resize(1100, 420);
        view.show();
        auto first = tw::parallel::derivePlan(plan, cluster, *model, batch, *gpu);
        view.setMesh(cluster, first.mesh, first.plan, &first.comm.groups);
        (void)view.grab();
        std::vector<double> core, set, paint, total;
        for (int r = 0; r < runs; ++r) {
            std::swap(plan.assignment[std::size_t(r) % gpus], plan.assignment[gpus - 1 - std::size_t(r) % (gpus / 2)]);
            const auto t0 = Clock::now();
            if (!tw::parallel::validate(plan, cluster, *model, batch).empty())
                return 1;
            const auto d = tw::parallel::derivePlan(plan, cluster, *model, batch, *gpu);
            const double c = msSince(t0);
            const auto t1 = Clock::now();
            view.setMesh(cluster, d.mesh, d.plan, &d.comm.groups);
            const double s = msSince(t1);
            const auto t2 = Clock::now();
            (void)view.grab();
            const double p = msSince(t2);
            core.push_back(c);
            set.push_back(s);
            paint.push_back(p);
            total.push_back(c + s + p);
        }
        std::printf("%-6llu %12.3f %12.3f %12.3f %12.3f\n", static_cast<unsigned long long>(gpus), median(core), median(set),
                    median(paint), median(total));
    }
    std::printf("\n%-6s %14s %14s %12s   (a new plan's delivery; GUI-thread target 50 ms)\n", "GPUs", "first setMesh",
                "again setMesh", "paint ms");
    for (const std::uint64_t gpus : {16384ull, 98304ull}) {
        tw::parallel::ParallelPlan plan;
        plan.tp = 8;
        plan.pp = 16;
        plan.dp = gpus / (plan.tp * plan.pp);
        tw::model::BatchShape batch{2048, 1, 16 * 2048 * plan.dp};
        const tw::parallel::Cluster cluster{gpus / 8, 8};
        plan.assignment = tw::parallel::defaultAssignment(plan);
        const auto d = tw::parallel::derivePlan(plan, cluster, *model, batch, *gpu);
        tw::ui::MeshView view;
        view.resize(1100, 420);
        view.show();
        const auto t0 = Clock::now();
        view.setMesh(cluster, d.mesh, d.plan, &d.comm.groups);
        const double first = msSince(t0);
        (void)view.grab();
        std::vector<double> again, paint;
        for (int r = 0; r < std::min(runs, 5); ++r) {
            const auto t1 = Clock::now();
            view.setMesh(cluster, d.mesh, d.plan, &d.comm.groups);
            again.push_back(msSince(t1));
            const auto t2 = Clock::now();
            (void)view.grab();
            paint.push_back(msSince(t2));
        }
        std::printf("%-6llu %14.1f %14.1f %12.1f\n", static_cast<unsigned long long>(gpus), first, median(again), median(paint));
    }
    return 0;
}
