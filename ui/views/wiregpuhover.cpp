#include "wiregpuhover.h"

#include "base/units.h"
#include "scenario/computeblock.h"
#include "views/qtstrings.h"
#include "views/wiretooltips.h"

#include <QObject>
#include <QStringList>

#include <algorithm>

namespace tw::ui {

namespace {

const network::GpuTimeline* timelineOf(const network::StepSimulation& sim, std::uint32_t gpu)
{
    for (const network::GpuTimeline& t : sim.gpuTimelines)
        if (t.gpu == gpu)
            return &t;
    return nullptr;
}

QString seconds(double s) { return qs(formatSeconds(s)); }

// "forward of micro-batch 3" (the block an idle GPU waits to start).
QString blockName(const network::GpuInterval& i)
{
    if (i.pass == network::ComputePass::Optimizer)
        return QObject::tr("the optimizer step");
    return (i.pass == network::ComputePass::Forward ? QObject::tr("forward of micro-batch %1")
                                                    : QObject::tr("backward of micro-batch %1"))
        .arg(i.microBatch);
}

} // namespace

const network::GpuInterval* intervalAt(const network::StepSimulation& sim, std::uint32_t gpu, double time)
{
    const network::GpuTimeline* t = timelineOf(sim, gpu);
    if (!t)
        return nullptr;
    const network::GpuInterval* found = nullptr;
    for (const network::GpuInterval& i : t->intervals) {
        if (i.start > time)
            break;
        if (time < i.end && (!found || i.activity == network::Activity::Compute))
            found = &i;
    }
    return found;
}

QString gpuToolTip(const GpuHoverSources& src, std::uint32_t gpu)
{
    if (!src.simulation)
        return {};
    const network::StepSimulation& sim = *src.simulation;
    const double t = src.time;
    QStringList lines;
    const std::uint32_t stage = src.plan && gpu < src.plan->mesh.size() ? src.plan->mesh[gpu].pp : 0;
    lines << QObject::tr("<b>GPU %1</b> (pipeline stage %2) at %3").arg(gpu).arg(stage).arg(seconds(t));
    const network::GpuTimeline* timeline = timelineOf(sim, gpu);
    if (!timeline) {
        lines << QObject::tr("Its timeline was not recorded: beyond %1 GPUs the step keeps GPU 0's and one GPU's "
                             "per pipeline stage (data- and tensor-parallel rank 0).")
                     .arg(network::kMaxRecordedGpus);
    } else if (const network::GpuInterval* i = intervalAt(sim, gpu, t)) {
        if (i->activity == network::Activity::Compute) {
            lines << QObject::tr("Computing, %1 – %2 (chunk %3):").arg(seconds(i->start), seconds(i->end)).arg(i->chunk);
            if (src.plan && src.model)
                lines << qs(scenario::toText(scenario::computeBlockBreakdown(*src.plan, *src.model, stage, *i)))
                             .toHtmlEscaped()
                             .replace(QLatin1Char('\n'), QStringLiteral("<br>"));
        } else {
            lines << QObject::tr("Waiting on %1 communication (exposed), %2 – %3")
                         .arg(strategyShortName(int(i->strategy)), seconds(i->start), seconds(i->end));
            if (i->strategy == parallel::Strategy::PP)
                lines << QObject::tr("(its block's input from the previous stage: the pipeline bubble until it is sent, "
                                     "then the transfer)");
            const auto next = std::find_if(i, timeline->intervals.data() + timeline->intervals.size(),
                                           [](const network::GpuInterval& n) { return n.activity == network::Activity::Compute; });
            if (next != timeline->intervals.data() + timeline->intervals.size())
                lines << QObject::tr("Then %1 at %2").arg(blockName(*next), seconds(next->start));
        }
    } else {
        const auto next = std::find_if(timeline->intervals.begin(), timeline->intervals.end(),
                                       [t](const network::GpuInterval& i) { return i.start > t; });
        const auto nextCompute = std::find_if(next, timeline->intervals.end(), [](const network::GpuInterval& i) {
            return i.activity == network::Activity::Compute;
        });
        if (next == timeline->intervals.end()) {
            const double finish = gpu < sim.gpus.size() ? sim.gpus[gpu].finish : 0;
            lines << (t >= finish ? QObject::tr("Done: its step ended at %1 (the step's last GPU at %2)")
                                  : QObject::tr("Idle until its step ends at %1 (the step's last GPU at %2)"))
                         .arg(seconds(finish), seconds(sim.stepSeconds));
        } else if (nextCompute != timeline->intervals.end()) {
            lines << QObject::tr("Idle (pipeline bubble): %1 starts at %2")
                         .arg(blockName(*nextCompute), seconds(nextCompute->start));
        } else {
            lines << QObject::tr("Idle until %1").arg(seconds(next->start));
        }
    }
    return QStringLiteral("<p style='white-space:pre'>") + lines.join(QStringLiteral("<br>")) + QStringLiteral("</p>");
}

} // namespace tw::ui
