// The stage 4 animation's frame time (issue 5: "the animation holds 60 frames per second with 64
// ranks"): a ring AllReduce of 64 ranks (and 8, 16 for comparison) played for 240 frames offscreen —
// each frame is the timer's own update (ScheduleView::advanceAnimation, 1/60 s) and a full repaint
// of the view (QWidget::grab renders the whole scene). Median and worst frame; 16.7 ms is the budget.
// Usage: QT_QPA_PLATFORM=offscreen bench_scheduleview [--runs N]   (Release build; scripts/bench.sh)

#include "views/scheduleview.h"

#include "benchutil.h"

#include <QApplication>

#include <cstdio>
#include <vector>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    int frames = 240;
    if (!tw::bench::parseRuns(argc, argv, "bench_scheduleview", frames))
        return 2;
    std::printf("%-6s %14s %14s %14s   (%d frames at 1/60 s of schedule time each; budget 16.7 ms)\n", "ranks",
                "median ms", "worst ms", "update ms", frames);
    for (const std::uint64_t n : {8ull, 16ull, 64ull}) {
        tw::collective::ScheduleSpec spec;
        spec.op = tw::collective::Op::AllReduce;
        spec.algorithm = tw::collective::Algorithm::Ring;
        spec.ranks = n;
        spec.bytes = 256e6;
        tw::ui::ScheduleView view;
        view.resize(1280, 720);
        view.show();
        view.setSpec(spec);
        view.setSpeed(4); // four schedule steps per second: packets move every frame
        (void)view.grab();
        std::vector<double> frame, update;
        for (int f = 0; f < frames; ++f) {
            const auto t0 = tw::bench::Clock::now();
            view.advanceAnimation(1.0 / 60.0);
            const double u = tw::bench::msSince(t0);
            (void)view.grab();
            frame.push_back(tw::bench::msSince(t0));
            update.push_back(u);
        }
        const auto s = tw::bench::stats(frame);
        std::printf("%-6llu %14.3f %14.3f %14.3f\n", static_cast<unsigned long long>(n), s.median, s.max,
                    tw::bench::stats(update).median);
    }
    return 0;
}
