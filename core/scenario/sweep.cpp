#include "sweep.h"

#include "base/units.h"
#include "network/simulate.h"
#include "scenario/derive.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

namespace tw::scenario {

namespace {

std::string integer(std::uint64_t v) { return formatUnsigned(v); }

// "23.2 %" (one decimal: the paper gives its shares to a tenth of a point).
std::string percent(double fraction) { return formatCount(100.0 * fraction, 1) + " %"; }

// "12.3 points".
std::string points(double fraction) { return formatCount(100.0 * std::abs(fraction), 1) + " points"; }

// "\"1,x\"" for messages.
std::string inQuotes(std::string_view s)
{
    std::string out(1, '"');
    out.append(s);
    out.push_back('"');
    return out;
}

// A whole decimal number > 0 (no sign, no spaces), or nullopt.
std::optional<std::uint64_t> positiveInteger(std::string_view s)
{
    if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range)
        return std::numeric_limits<std::uint64_t>::max(); // reported as above the limit
    if (ec != std::errc() || end != s.data() + s.size() || v == 0)
        return std::nullopt;
    return v;
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The outcome of one simulated size (the parts runSweep and the calibration share).
struct PointRun {
    SweepPoint point;
    double globalBatchTokens = 0;
    bool cancelled = false;
};

PointRun runPoint(Deriver& deriver, const Scenario& base, std::uint64_t gpus, bool strong, const Progress& progress)
{
    PointRun run;
    SweepPoint& p = run.point;
    p.gpus = gpus;
    auto failed = [&](Error e) {
        p.ok = false;
        p.error = std::move(e);
        run.cancelled = progress.stopRequested();
        return run;
    };
    auto sized = scenarioAtSize(base, gpus, strong);
    if (!sized)
        return failed(sized.error());
    const Scenario& s = sized.value();
    p.nodes = s.hardware.nodes;
    p.gpusPerNode = s.hardware.gpusPerNode;
    p.dp = s.parallel.dp;
    p.pp = s.parallel.pp;
    p.tp = s.parallel.tp;
    p.ep = s.parallel.ep;
    run.globalBatchTokens = double(s.batch.globalBatchTokens);
    auto derived = deriver.derive(s, subProgress(progress, 0.0, 0.2));
    if (!derived)
        return failed(derived.error());
    const Derivation& d = *derived.value();
    if (!d.stage3) {
        std::string reasons;
        for (const Error& e : d.planErrors)
            reasons += (reasons.empty() ? "" : "; ") + e.toString();
        return failed(makeError("the plan cannot run at " + integer(gpus) + " GPUs: " + reasons));
    }
    // No per-link samples: the sweep needs only the step's means.
    auto sim = simulateDerived(s, d, false, subProgress(progress, 0.2, 1.0));
    if (!sim)
        return failed(sim.error());
    const network::StepSimulation& r = *sim.value().simulation;
    p.stepSeconds = r.stepSeconds;
    p.computeSeconds = r.computeSeconds;
    p.exposedCommSeconds = r.exposedCommSeconds;
    p.commShare = r.commShare;
    p.mfu = r.mfu;
    p.tokensPerSecond = r.stepSeconds > 0 ? run.globalBatchTokens / r.stepSeconds : 0;
    p.ok = r.stepSeconds > 0;
    if (!p.ok)
        p.error = makeError("the simulated step of " + integer(gpus) + " GPUs takes no time (nothing to compute)");
    return run;
}

// The paper's A.3 numbers (docs/model.md §5.5).
constexpr std::uint64_t kTestbedSmallGpus = 2;   // the smallest run with an AllReduce
constexpr double kTestbedSmallShare = 0.15;
constexpr std::uint64_t kTestbedLargeGpus = 7;
constexpr double kTestbedLargeShare = 0.245;
constexpr double kTestbedLargeEfficiency = 0.67;
constexpr double kTestbedLargeSpeedup = 4.69;
constexpr const char* kTestbedSource = "arXiv 2609.19924 appendix A.3";

// The sentences comparing the prediction with the measured points (see Sweep::gaps).
std::vector<std::string> gapLines(const Sweep& sweep)
{
    std::vector<std::string> lines;
    for (const MeasuredPoint& m : sweep.measured) {
        const auto it = std::find_if(sweep.points.begin(), sweep.points.end(),
                                     [&](const SweepPoint& p) { return p.gpus == m.gpus && p.ok; });
        const std::string at = "At " + integer(m.gpus) + " GPUs ";
        if (it == sweep.points.end()) {
            lines.push_back(at + "the paper measured " + (m.commShare >= 0 ? "a " + percent(m.commShare) + " AllReduce share" : "")
                            + "; the sweep has no point of that size to compare (add " + integer(m.gpus) + " to the sizes)");
            continue;
        }
        const SweepPoint& p = *it;
        if (m.commShare >= 0) {
            const double diff = p.commShare - m.commShare;
            lines.push_back(at + "the paper measured a " + percent(m.commShare) + " AllReduce share; the model predicts "
                            + percent(p.commShare) + " ("
                            + (std::abs(diff) < 0.0005 ? std::string("the same to a tenth of a point")
                                                       : points(diff) + (diff < 0 ? " below" : " above"))
                            + ")");
        }
        if (m.efficiency <= 0)
            continue;
        if (sweep.baseGpus != 1) {
            lines.push_back(at + "the paper measured " + percent(m.efficiency)
                            + " efficiency against one GPU; this sweep's speedups are against " + integer(sweep.baseGpus)
                            + " GPUs, so add 1 to the sizes to compare them");
            continue;
        }
        lines.push_back(at + "the paper measured " + percent(m.efficiency) + " efficiency (speedup "
                        + formatCount(m.speedup, 2) + "×); the model predicts " + percent(p.efficiency) + " (speedup "
                        + formatCount(p.speedup, 2) + "×)");
        // Slowdown = how much longer the step is than perfect scaling: 1/efficiency − 1.
        const double measuredSlowdown = 1.0 / m.efficiency - 1.0;
        const double modelSlowdown = p.efficiency > 0 ? 1.0 / p.efficiency - 1.0 : 0.0;
        if (modelSlowdown <= measuredSlowdown) {
            lines.push_back("The measured step at " + integer(m.gpus) + " GPUs is 1/" + formatCount(m.efficiency, 3) + " − 1 = "
                            + percent(measuredSlowdown) + " longer than perfect scaling, the model's 1/"
                            + formatCount(p.efficiency, 3) + " − 1 = " + percent(modelSlowdown) + ": the model explains "
                            + formatCount(100.0 * modelSlowdown / measuredSlowdown, 0) + " % of the measured slowdown; the other "
                            + points(measuredSlowdown - modelSlowdown)
                            + " are overhead the model does not see (it has only compute and communication on the links)");
        } else {
            lines.push_back("The measured step at " + integer(m.gpus) + " GPUs is " + percent(measuredSlowdown)
                            + " longer than perfect scaling, the model's " + percent(modelSlowdown)
                            + ": the model predicts " + points(modelSlowdown - measuredSlowdown)
                            + " more slowdown than was measured");
        }
        if (m.commShare >= 0) {
            // docs/model.md: under step = compute + non-overlapped AllReduce, efficiency = 1 − share.
            const double implied = 1.0 - m.commShare;
            lines.push_back("The paper's own figures: a " + percent(m.commShare)
                            + " share under step = compute + non-overlapped AllReduce implies " + percent(implied)
                            + " efficiency, not " + percent(m.efficiency) + ": the testbed's step had ≈"
                            + percent(implied / m.efficiency - 1.0) + " other overhead (" + formatCount(implied, 3) + " / "
                            + formatCount(m.efficiency, 2) + " − 1)");
        }
    }
    return lines;
}

void addFigures(Sweep& sweep)
{
    FigureSet& f = sweep.figures;
    std::string sizes;
    std::size_t ran = 0;
    for (const SweepPoint& p : sweep.points) {
        sizes += (sizes.empty() ? "" : ", ") + integer(p.gpus) + (p.ok ? "" : " (cannot run)");
        ran += p.ok;
    }
    f.add({"sweep.points", "Sizes swept", double(sweep.points.size()), "", "GPUs: " + sizes + "; " + integer(ran) + " ran", {}});
    const SweepPoint* base = nullptr;
    const SweepPoint* largest = nullptr;
    const SweepPoint* smallestShare = nullptr; // the smallest size with exposed communication
    for (const SweepPoint& p : sweep.points) {
        if (!p.ok)
            continue;
        const std::string n = integer(p.gpus);
        // Idle below a nanosecond per step is the rounding of the event times, shown as 0.
        double idle = p.stepSeconds - p.computeSeconds - p.exposedCommSeconds;
        if (idle < 1e-9)
            idle = 0;
        f.add({"sweep.step_time." + n, "Step time at " + n + " GPUs", p.stepSeconds, "s",
               "simulated step = compute + exposed communication + idle = " + formatSeconds(p.computeSeconds) + " + "
                   + formatSeconds(p.exposedCommSeconds) + " + "
                   + formatSeconds(idle) + " = "
                   + formatSeconds(p.stepSeconds) + " (dp×pp×tp = " + integer(p.dp) + "×" + integer(p.pp) + "×" + integer(p.tp) + ")",
               {}});
        f.add({"sweep.tokens_per_s." + n, "Throughput at " + n + " GPUs", p.tokensPerSecond, "tokens/s",
               "global batch / step = " + formatCount(p.tokensPerSecond * p.stepSeconds, 0) + " tokens / "
                   + formatSeconds(p.stepSeconds),
               {"sweep.step_time." + n}});
        f.add({"sweep.comm_share." + n, "Exposed communication share at " + n + " GPUs", p.commShare, "",
               "exposed communication / step = " + formatSeconds(p.exposedCommSeconds) + " / " + formatSeconds(p.stepSeconds),
               {"sweep.step_time." + n}});
        if (!base || p.gpus < base->gpus)
            base = &p;
        if (!largest || p.gpus > largest->gpus)
            largest = &p;
        if (p.commShare > 0 && (!smallestShare || p.gpus < smallestShare->gpus))
            smallestShare = &p;
    }
    if (!base)
        return;
    const std::string b = integer(base->gpus), l = integer(largest->gpus);
    f.add({"sweep.base_gpus", "Speedups measured against", double(base->gpus), "GPUs",
           "the smallest size that ran: " + b + " GPUs", {}});
    f.add({"sweep.speedup", "Speedup at " + l + " GPUs", largest->speedup, "",
           "throughput(" + l + ") / (throughput(" + b + ") / " + b + ") = " + formatCount(largest->tokensPerSecond, 0) + " / ("
               + formatCount(base->tokensPerSecond, 0) + " / " + b + ")",
           {"sweep.tokens_per_s." + l, "sweep.tokens_per_s." + b, "sweep.base_gpus"}});
    f.add({"sweep.efficiency", "Scaling efficiency at " + l + " GPUs", largest->efficiency, "",
           "speedup / GPUs = " + formatCount(largest->speedup, 3) + " / " + l, {"sweep.speedup"}});
    if (smallestShare) {
        const std::string s = integer(smallestShare->gpus);
        f.add({"sweep.comm_share_smallest", "Communication share at the smallest size with communication ("
                                                 + s + " GPUs)",
               smallestShare->commShare, "", percent(smallestShare->commShare) + " at " + s + " GPUs",
               {"sweep.comm_share." + s}});
    }
    f.add({"sweep.comm_share_largest", "Communication share at the largest size (" + l + " GPUs)", largest->commShare, "",
           percent(largest->commShare) + " at " + l + " GPUs", {"sweep.comm_share." + l}});
}

} // namespace

Result<std::vector<std::uint64_t>> parseGpuList(std::string_view text)
{
    const std::string shown = inQuotes(text);
    if (trimmed(text).empty())
        return makeError("empty list; expected GPU counts such as 1,2,4,8 or 1-7");
    std::vector<std::uint64_t> out;
    std::set<std::uint64_t> seen;
    std::size_t item = 0;
    std::size_t start = 0;
    auto add = [&](std::uint64_t n) -> std::optional<Error> {
        if (n > kMaxSweepGpus)
            return makeError(shown + ": item " + integer(item) + " asks for " + (n == std::numeric_limits<std::uint64_t>::max() ? "more than " + integer(kMaxSweepGpus) : integer(n))
                             + " GPUs; a sweep point has at most " + integer(kMaxSweepGpus));
        if (!seen.insert(n).second)
            return makeError(shown + ": item " + integer(item) + " repeats " + integer(n) + " GPUs");
        if (seen.size() > kMaxSweepPoints)
            return makeError(shown + ": more than " + integer(kMaxSweepPoints)
                             + " sizes; a sweep has at most that many points (one simulation each)");
        out.push_back(n);
        return std::nullopt;
    };
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view piece = trimmed(text.substr(start, comma - start));
        ++item;
        const std::size_t dash = piece.find('-');
        if (dash == std::string_view::npos) {
            const auto n = positiveInteger(piece);
            if (!n)
                return makeError(shown + ": item " + integer(item) + " is not a positive integer");
            if (auto e = add(*n))
                return *e;
        } else {
            const auto lo = positiveInteger(trimmed(piece.substr(0, dash)));
            const auto hi = positiveInteger(trimmed(piece.substr(dash + 1)));
            if (!lo || !hi)
                return makeError(shown + ": item " + integer(item) + " is not a range of positive integers (such as 1-7)");
            if (*hi < *lo)
                return makeError(shown + ": item " + integer(item) + " is a range that goes down (" + integer(*lo) + "-"
                                 + integer(*hi) + ")");
            if (*hi > kMaxSweepGpus)
                return makeError(shown + ": item " + integer(item) + " reaches " + integer(*hi) + " GPUs; a sweep point has at most "
                                 + integer(kMaxSweepGpus));
            if (*hi - *lo >= kMaxSweepPoints)
                return makeError(shown + ": item " + integer(item) + " spans " + integer(*hi - *lo + 1) + " sizes; a sweep has at most "
                                 + integer(kMaxSweepPoints) + " points (one simulation each)");
            for (std::uint64_t n = *lo; n <= *hi; ++n)
                if (auto e = add(n))
                    return *e;
        }
        start = comma + 1;
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::uint64_t> defaultSweepSizes(const Scenario& scenario)
{
    const parallel::ParallelPlan& p = scenario.parallel;
    const std::uint64_t unit = std::max<std::uint64_t>(1, p.pp) * std::max<std::uint64_t>(1, p.tp) * std::max<std::uint64_t>(1, p.ep);
    const std::uint64_t cluster = std::min(scenario.hardware.gpuCount(), kMaxSweepGpus);
    constexpr std::size_t kDefaultPoints = 8;
    auto accepted = [&](std::uint64_t gpus) {
        if (gpus % unit != 0)
            return false;
        const auto sized = scenarioAtSize(scenario, gpus);
        return sized && sized.value().parallel.ep == std::max<std::uint64_t>(1, p.ep);
    };
    std::vector<std::uint64_t> out;
    if (scenario.topology.kind == network::TopologyKind::PaperTestbed) {
        for (std::uint64_t n = 1; n <= std::max<std::uint64_t>(cluster, 2) && out.size() < kMaxSweepPoints; ++n)
            if (accepted(n))
                out.push_back(n);
        return out;
    }
    const std::uint64_t limit = std::max(cluster, unit);
    for (std::uint64_t n = unit; n <= limit && n <= kMaxSweepGpus && out.size() < kDefaultPoints; n += unit)
        if ((out.empty() || n >= 2 * out.back()) && accepted(n))
            out.push_back(n);
    // The scenario's own size ends the sweep (its plan is the one on screen) when doubling missed it.
    if (!out.empty() && out.back() != cluster && cluster > out.back() && accepted(cluster)) {
        if (out.size() == kDefaultPoints)
            out.pop_back();
        out.push_back(cluster);
    }
    return out;
}

std::string gpuListText(const std::vector<std::uint64_t>& gpus)
{
    std::string out; // plain digits: parseGpuList reads no thousands separators
    for (std::size_t i = 0; i < gpus.size();) {
        std::size_t j = i;
        while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1)
            ++j;
        if (!out.empty())
            out += ',';
        if (j >= i + 2) {
            out += std::to_string(gpus[i]) + "-" + std::to_string(gpus[j]);
            i = j + 1;
        } else {
            out += std::to_string(gpus[i]);
            ++i;
        }
    }
    return out;
}

Result<Scenario> scenarioAtSize(const Scenario& scenario, std::uint64_t gpus, bool strong)
{
    Scenario s = scenario;
    const std::uint64_t perNode = scenario.hardware.gpusPerNode;
    if (gpus == 0 || perNode == 0)
        return makeError("a sweep point needs at least one GPU");
    // Up to one node's worth of GPUs share a node; more fill whole nodes of the scenario's size.
    if (gpus <= perNode) {
        s.hardware.nodes = 1;
        s.hardware.gpusPerNode = gpus;
    } else if (gpus % perNode == 0) {
        s.hardware.nodes = gpus / perNode;
    } else {
        return makeError(integer(gpus) + " GPUs is not a multiple of the scenario's " + integer(perNode)
                         + " GPUs per node (hardware.gpus_per_node)");
    }
    const std::uint64_t modelParallel = scenario.parallel.pp * scenario.parallel.tp;
    if (modelParallel == 0 || gpus % modelParallel != 0)
        return makeError(integer(gpus) + " GPUs is not a multiple of pp·tp = " + integer(scenario.parallel.pp) + "·"
                         + integer(scenario.parallel.tp) + " (data parallelism takes the GPUs; pp and tp are kept)");
    // The paper testbed has one GPU per node: a point of several GPUs is that many nodes.
    if (s.topology.kind == network::TopologyKind::PaperTestbed && s.hardware.gpusPerNode != 1) {
        s.hardware.nodes = gpus;
        s.hardware.gpusPerNode = 1;
    }
    s.parallel.assignment.clear(); // a placement is for one cluster shape
    fitPlanToCluster(s);
    if (!strong) {
        // Weak scaling: every replica keeps its micro-batch and accumulation steps, G grows with dp.
        const std::uint64_t unit = scenario.batch.microBatch * scenario.batch.sequenceLength * scenario.parallel.dp;
        if (unit == 0 || scenario.batch.globalBatchTokens % unit != 0)
            return makeError("weak scaling keeps the accumulation steps G/(B·T·dp), but the scenario's G = "
                             + integer(scenario.batch.globalBatchTokens) + " tokens is not a multiple of B·T·dp = "
                             + integer(unit) + " (batch.global_batch_tokens)");
        const std::uint64_t accumulation = scenario.batch.globalBatchTokens / unit;
        s.batch.globalBatchTokens = accumulation * scenario.batch.microBatch * scenario.batch.sequenceLength * s.parallel.dp;
    }
    return s;
}

std::vector<MeasuredPoint> publishedMeasurements(const Scenario& s)
{
    if (s.topology.kind != network::TopologyKind::PaperTestbed || s.parallel.sharding != parallel::Sharding::Ddp
        || s.parallel.pp != 1 || s.parallel.tp != 1)
        return {};
    return {{kTestbedSmallGpus, kTestbedSmallShare, -1, -1, kTestbedSource},
            {kTestbedLargeGpus, kTestbedLargeShare, kTestbedLargeEfficiency, kTestbedLargeSpeedup, kTestbedSource}};
}

Result<Sweep> runSweep(const Scenario& scenario, const SweepOptions& options, const Progress& progress)
{
    if (options.gpus.empty())
        return makeError("no sizes to sweep; give GPU counts such as 1,2,4,8");
    if (options.gpus.size() > kMaxSweepPoints)
        return makeError(integer(options.gpus.size()) + " sizes; a sweep has at most " + integer(kMaxSweepPoints)
                         + " points (one simulation each)");
    std::set<std::uint64_t> seen;
    for (std::uint64_t n : options.gpus) {
        if (n == 0 || n > kMaxSweepGpus)
            return makeError(integer(n) + " GPUs: a sweep point has 1 to " + integer(kMaxSweepGpus) + " GPUs");
        if (!seen.insert(n).second)
            return makeError(integer(n) + " GPUs is given twice");
    }
    if (const std::vector<Error> problems = validate(scenario); !problems.empty()) {
        std::string text;
        for (const Error& e : problems)
            text += (text.empty() ? "" : "\n") + e.toString();
        return makeError(text);
    }
    Sweep sweep;
    Deriver deriver; // one for every point: the text is tokenized once, the model derived once
    const double n = double(options.gpus.size());
    for (std::size_t i = 0; i < options.gpus.size(); ++i) {
        if (progress.stopRequested())
            return makeError("cancelled");
        progress(double(i) / n);
        PointRun run = runPoint(deriver, scenario, options.gpus[i], options.strong,
                                subProgress(progress, double(i) / n, double(i + 1) / n));
        if (run.cancelled || progress.stopRequested())
            return makeError("cancelled");
        sweep.points.push_back(std::move(run.point));
    }
    // Speedup against the smallest size that ran (docs/model.md §5.5: the paper's 4.69× is against one GPU).
    const SweepPoint* base = nullptr;
    for (const SweepPoint& p : sweep.points)
        if (p.ok && (!base || p.gpus < base->gpus))
            base = &p;
    if (base) {
        sweep.baseGpus = base->gpus;
        const double perGpu = base->tokensPerSecond / double(base->gpus);
        for (SweepPoint& p : sweep.points)
            if (p.ok && perGpu > 0) {
                p.speedup = p.tokensPerSecond / perGpu;
                p.efficiency = p.speedup / double(p.gpus);
            }
    }
    sweep.measured = publishedMeasurements(scenario);
    sweep.gaps = gapLines(sweep);
    addFigures(sweep);
    progress(1.0);
    return sweep;
}

Result<Calibration> calibrateComputeForShare(const Scenario& scenario, std::uint64_t gpus, double targetShare,
                                             const Progress& progress)
{
    if (!(targetShare > 0 && targetShare < 1))
        return makeError("the target share must be between 0 and 1, got " + formatCount(targetShare, 4));
    if (const std::vector<Error> problems = validate(scenario); !problems.empty())
        return problems.front();
    Deriver deriver;
    Calibration c;
    c.gpus = gpus;
    c.targetShare = targetShare;
    // Bisection on log(layer forward time) between 1 µs and 1,000 s per layer: wide enough for any
    // model here; 60 halvings of that 21-decade bracket give 1e-17 of relative precision, far below
    // the share's tolerance, which stops the search first.
    constexpr int kMaxIterations = 60;
    constexpr double kShareTolerance = 1e-6;
    double lo = std::log(1e-6), hi = std::log(1e3);
    auto shareAt = [&](double logSeconds, int iteration) -> Result<SweepPoint> {
        Scenario s = scenario;
        s.parallel.layerForwardSeconds = {std::exp(logSeconds)};
        PointRun run = runPoint(deriver, s, gpus, false,
                                subProgress(progress, double(iteration) / kMaxIterations, double(iteration + 1) / kMaxIterations));
        if (run.cancelled || progress.stopRequested())
            return makeError("cancelled");
        if (!run.point.ok)
            return run.point.error;
        return run.point;
    };
    auto low = shareAt(lo, 0);
    if (!low)
        return low.error();
    if (low->commShare < targetShare)
        return makeError("at " + integer(gpus) + " GPUs the exposed communication share is " + percent(low->commShare)
                         + " even with 1 µs of compute per layer: no compute time gives " + percent(targetShare));
    SweepPoint best = low.value();
    double bestLog = lo;
    for (int i = 1; i < kMaxIterations; ++i) {
        const double mid = 0.5 * (lo + hi);
        auto at = shareAt(mid, i);
        if (!at)
            return at.error();
        c.iterations = i;
        if (std::abs(at->commShare - targetShare) < std::abs(best.commShare - targetShare)) {
            best = at.value();
            bestLog = mid;
        }
        if (std::abs(at->commShare - targetShare) < kShareTolerance)
            break;
        (at->commShare > targetShare ? lo : hi) = mid; // more share than wanted: more compute
    }
    c.layerForwardSeconds = std::exp(bestLog);
    c.share = best.commShare;
    c.stepSeconds = best.stepSeconds;
    c.computeSeconds = best.computeSeconds;
    progress(1.0);
    return c;
}

} // namespace tw::scenario
