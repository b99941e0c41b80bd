#include "fitsearch.h"

#include "derive.h"

#include "network/simulate.h"
#include "fabric/topology.h"
#include "model/tensors.h"
#include "parallel/memory.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <tuple>

namespace tw::scenario {

namespace {

using parallel::PipelineSchedule;
using parallel::Sharding;
using model::Recompute;

std::vector<std::uint64_t> divisors(std::uint64_t n, std::uint64_t upTo)
{
    std::vector<std::uint64_t> out;
    for (std::uint64_t k = 1; k <= n && k <= upTo; ++k)
        if (n % k == 0)
            out.push_back(k);
    return out;
}

// Less traffic and less work first: DDP's one AllReduce (ZeRO-1/2 the same volume as ReduceScatter +
// AllGather, ZeRO-3 1.5×, arXiv 1910.02054 §7), no recomputation before selective before full.
int shardingRank(Sharding s)
{
    switch (s) {
    case Sharding::Ddp: return 0;
    case Sharding::Zero1: return 1;
    case Sharding::Zero2: return 2;
    case Sharding::Zero3: return 3;
    case Sharding::FsdpFull: return 4;
    case Sharding::FsdpHybrid: return 5;
    }
    return 6;
}

auto coarseKey(const FitPlan& f)
{
    const parallel::ParallelPlan& p = f.plan;
    // Equal estimates: less TP (its collectives run several times per layer, Megatron §3), the larger
    // micro-batch (fewer, larger messages and kernels), then less memory.
    return std::make_tuple(f.coarseSeconds, shardingRank(p.sharding), int(f.recompute), p.tp, ~f.microBatch, f.peakBytes,
                           p.pp, p.ep, p.sequenceParallel, int(p.schedule), p.virtualStages);
}

bool sameLayout(const FitPlan& a, const FitPlan& b)
{
    return a.plan.dp == b.plan.dp && a.plan.pp == b.plan.pp && a.plan.tp == b.plan.tp && a.plan.ep == b.plan.ep
           && a.plan.schedule == b.plan.schedule && a.plan.virtualStages == b.plan.virtualStages;
}

// The list shown: simulated plans by step time, then the best coarse ones not simulated, `top` in all.
void rankPlans(FitSearch& r, const std::vector<FitPlan>& simulated, std::size_t top)
{
    r.plans = simulated;
    std::stable_sort(r.plans.begin(), r.plans.end(),
                     [](const FitPlan& a, const FitPlan& b) { return a.stepSeconds < b.stepSeconds; });
    for (const FitPlan& f : r.fitting) {
        if (r.plans.size() >= top)
            break;
        const bool done = std::any_of(simulated.begin(), simulated.end(), [&](const FitPlan& s) {
            return s.plan == f.plan && s.microBatch == f.microBatch && s.recompute == f.recompute;
        });
        if (!done)
            r.plans.push_back(f);
    }
    if (r.plans.size() > top)
        r.plans.resize(top);
}

} // namespace

Scenario applyFitPlan(const Scenario& scenario, const FitPlan& plan)
{
    Scenario s = scenario;
    s.parallel = plan.plan;
    s.batch.microBatch = plan.microBatch;
    s.model.recompute = plan.recompute;
    return s;
}

double coarseStepSeconds(double flopsPerStep, std::uint64_t gpus, double peakFlops, double efficiency,
                         PipelineSchedule schedule, std::uint64_t pp, std::uint64_t v, std::uint64_t microBatches)
{
    const double rate = double(gpus) * peakFlops * efficiency;
    if (!(rate > 0) || microBatches == 0)
        return 0;
    const double m = double(microBatches), p = double(pp);
    // Narayanan et al. 2021 §2.2: bubble (p − 1)/m of the ideal time, ÷ v when interleaved.
    const double bubble = schedule == PipelineSchedule::Interleaved ? (p - 1) / (double(std::max<std::uint64_t>(v, 1)) * m)
                                                                    : (p - 1) / m;
    return flopsPerStep / rate * (1 + bubble);
}

double coarseCommSeconds(const CoarseComm& c)
{
    double seconds = 0;
    const double m = double(c.microBatches);
    if (c.tp > 1 && c.intraBandwidth > 0) {
        const double t = double(c.tp);
        const double calls = c.fullRecompute ? 6 : 4;
        seconds += double(c.layers) / double(c.pp) * m * calls * 2 * (t - 1) / t * c.activationBytes / c.intraBandwidth;
    }
    if (c.pp > 1 && c.ppBandwidth > 0)
        seconds += m * double(c.v) * 2 * c.activationBytes / c.ppBandwidth;
    if (c.dp > 1 && c.dpBandwidth > 0) {
        const double d = double(c.dp);
        seconds += (c.zero3 ? 3.0 : 2.0) * (d - 1) / d * c.gradientBytes / c.dpBandwidth;
    }
    return seconds;
}

namespace {

constexpr std::array<Recompute, 3> kRecomputes = {Recompute::None, Recompute::Selective, Recompute::Full};

// What the search knows before it enumerates: stage 2 under each recomputation, the cluster, the
// nominal rates of the communication term and the sequences per step.
struct FitContext {
    std::array<model::ModelConfig, 3> models;
    std::array<double, 3> flops{};
    std::array<double, 3> efficiency{}; // achieved / peak FLOP/s of the coarse estimate, per recomputation
    model::GpuSpec gpu;
    parallel::Cluster cluster;
    std::uint64_t N = 0, T = 0, G = 0, L = 0, experts = 0, sequences = 0;
    double peak = 0, intra = 0, inter = 0, parameters = 0;
};

// Stage 2 under each recomputation: the model as derived (V from the tokenizer) and its FLOPs.
Status deriveRecomputes(const Scenario& s, Deriver& deriver, const Progress& quiet, FitContext& c)
{
    for (std::size_t r = 0; r < kRecomputes.size(); ++r) {
        Scenario v = s;
        v.model.recompute = kRecomputes[r];
        auto d = deriver.derive(v, quiet);
        if (!d)
            return d.error();
        c.models[r] = d.value()->model;
        c.flops[r] = d.value()->figures.valueOf("compute.flops_per_step");
        c.gpu = d.value()->gpu;
        // A fixed rate is the coarse estimate's efficiency. With the kernel model (compute_efficiency
        // auto, 0) the estimate takes the efficiency the kernels give the scenario's own plan: its FLOPs
        // per GPU over peak × the busiest stage's compute time per step (kernels run faster or slower
        // for other shapes, which the exact simulation of the best layouts then sees); without a valid
        // plan of its own, the fixed 0.45 of docs/model.md §3.3.
        c.efficiency[r] = s.parallel.computeEfficiency > 0 ? s.parallel.computeEfficiency : 0.45;
        if (s.parallel.computeEfficiency <= 0 && d.value()->stage3) {
            const auto& busy = d.value()->stage3->timeline.stageBusySeconds;
            const double slowest = busy.empty() ? 0.0 : *std::max_element(busy.begin(), busy.end());
            const double peakNow = model::gemmPeak(d.value()->gpu, d.value()->model);
            const double gpus = double(s.hardware.gpuCount());
            if (slowest > 0 && peakNow > 0 && gpus > 0)
                c.efficiency[r] = c.flops[r] / gpus / (peakNow * slowest);
        }
    }
    return Ok{};
}

// The cluster's shape and the nominal rates for the communication term: NVLink (or PCIe) inside a node,
// the NIC across nodes (a per-node NIC shared by the node's GPUs).
void describeCluster(const Scenario& s, FitContext& c)
{
    c.cluster = s.hardware.cluster();
    c.N = c.cluster.gpuCount();
    c.T = s.batch.sequenceLength;
    c.G = s.batch.globalBatchTokens;
    c.L = c.models[0].layers;
    c.experts = c.models[0].moe.experts;
    c.peak = model::gemmPeak(c.gpu, c.models[0]);
    const network::TopologySpec spec = resolvedTopology(s);
    const bool nvlink = spec.kind == network::TopologyKind::NvSwitchNode
                        || (network::isSwitchedFabric(spec.kind) && spec.intraNode == network::IntraNode::NvSwitch);
    c.intra = nominalBandwidth(nvlink ? network::nvlinkOf(spec) : network::pcieOf(spec));
    c.inter = c.intra;
    if (c.cluster.nodes > 1) {
        c.inter = network::nicBandwidthOf(spec);
        if (spec.nicPlacement == network::NicPlacement::PerNode || spec.kind == network::TopologyKind::PaperTestbed)
            c.inter /= double(std::max<std::uint64_t>(c.cluster.gpusPerNode, 1));
    }
    c.parameters = model::parameterCountAsDouble(c.models[0]);
    c.sequences = c.T == 0 ? 0 : c.G / c.T;
}

// A candidate that fits in memory, with its coarse step time (compute with the pipeline bubble, plus the
// communication term); nothing when the plan is invalid or does not fit.
std::optional<FitPlan> evaluateCandidate(const FitContext& c, parallel::ParallelPlan plan, std::size_t r, std::uint64_t b,
                                         FitSearch& out)
{
    const std::uint64_t dp = plan.dp, pp = plan.pp, tp = plan.tp, v = plan.virtualStages;
    const model::BatchShape batch{c.T, b, c.G};
    const model::ModelConfig& m = c.models[r];
    if (!parallel::validate(plan, c.cluster, m, batch).empty())
        return std::nullopt;
    ++out.valid;
    const parallel::PlanMemory mem = parallel::derivePlanMemory(plan, c.cluster, m, batch, c.gpu, {}, false);
    if (!mem.fits)
        return std::nullopt;
    FitPlan f;
    const PipelineSchedule schedule = plan.schedule;
    const Sharding sharding = plan.sharding;
    f.plan = std::move(plan);
    f.microBatch = b;
    f.recompute = kRecomputes[r];
    f.accumulation = c.sequences / (dp * b);
    f.peakBytes = mem.peakBytes + mem.keptFreeBytes();
    f.capacityBytes = mem.capacityBytes;
    CoarseComm comm;
    comm.dp = dp;
    comm.pp = pp;
    comm.tp = tp;
    comm.v = v;
    comm.microBatches = f.accumulation;
    comm.layers = c.L;
    comm.activationBytes = double(b * c.T * m.hiddenSize) * model::bytesPerElement(m.activations);
    comm.gradientBytes = c.parameters / double(tp * pp) * model::bytesPerElement(m.gradients);
    comm.fullRecompute = kRecomputes[r] == Recompute::Full;
    comm.zero3 = sharding == Sharding::Zero3;
    // Megatron's order (TP fastest, then DP, then PP): a DP group leaves the
    // node once tp·dp exceeds it, pipeline neighbours once tp·dp fills it.
    comm.intraBandwidth = c.intra;
    comm.dpBandwidth = tp * dp > c.cluster.gpusPerNode ? c.inter : c.intra;
    comm.ppBandwidth = tp * dp >= c.cluster.gpusPerNode ? c.inter : c.intra;
    f.coarseCommSeconds = coarseCommSeconds(comm);
    f.coarseSeconds =
        coarseStepSeconds(c.flops[r], c.N, c.peak, c.efficiency[r], schedule, pp, v, f.accumulation) + f.coarseCommSeconds;
    f.stepSeconds = f.coarseSeconds;
    return f;
}

// Every candidate of one (tp, pp) layout — ep, schedule, sharding, SP, recomputation, micro-batch — up
// to the search's limit; those that fit go to out.fitting. False when the limit was reached.
bool enumerateLayout(const Scenario& s, const FitOptions& o, const FitContext& c, std::uint64_t tp, std::uint64_t pp,
                     FitSearch& out)
{
    const std::uint64_t dp = c.N / (tp * pp);
    if (c.sequences % dp != 0)
        return true; // no micro-batch splits the global batch over dp replicas
    const std::vector<std::uint64_t> eps = c.experts > 0 ? divisors(dp, c.experts) : std::vector<std::uint64_t>{1};
    std::vector<std::pair<PipelineSchedule, std::uint64_t>> schedules{{PipelineSchedule::OneFOneB, 1}};
    if (pp > 1) {
        schedules.emplace_back(PipelineSchedule::GPipe, 1);
        for (std::uint64_t v = 2; v <= 4; ++v)
            if (c.L % (pp * v) == 0)
                schedules.emplace_back(PipelineSchedule::Interleaved, v);
    }
    std::vector<Sharding> shardings{Sharding::Ddp};
    if (dp > 1)
        shardings.insert(shardings.end(), {Sharding::Zero1, Sharding::Zero2, Sharding::Zero3});
    bool more = true;
    for (std::uint64_t ep : eps)
        for (const auto& [schedule, v] : schedules)
            for (Sharding sharding : shardings)
                for (bool sp : tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})
                    for (std::size_t r = 0; r < kRecomputes.size(); ++r)
                        for (std::uint64_t b : divisors(c.sequences / dp, 64)) {
                            if (out.candidates >= o.maxCandidates) {
                                out.truncated = true;
                                more = false;
                                break;
                            }
                            ++out.candidates;
                            parallel::ParallelPlan plan = s.parallel;
                            plan.dp = dp;
                            plan.pp = pp;
                            plan.tp = tp;
                            plan.ep = ep;
                            plan.sharding = sharding;
                            plan.shardGroupSize = 0;
                            plan.sequenceParallel = sp;
                            plan.schedule = schedule;
                            plan.virtualStages = v;
                            plan.layerPartition.clear();
                            plan.assignment.clear();
                            if (auto f = evaluateCandidate(c, std::move(plan), r, b, out))
                                out.fitting.push_back(std::move(*f));
                        }
    return more;
}

// Exact: the best candidate of each layout, in coarse order, simulated as `tokenwire-cli simulate` does,
// within the time budget; the list re-ranked after each.
Status simulateBest(const Scenario& s, const FitOptions& o, Deriver& deriver, const Progress& progress,
                    const std::function<void(const FitSearch&)>& partial,
                    std::chrono::steady_clock::time_point started, FitSearch& out)
{
    const Progress quiet{{}, progress.stop};
    std::vector<FitPlan> chosen;
    for (const FitPlan& f : out.fitting) {
        if (chosen.size() >= o.simulate)
            break;
        if (std::none_of(chosen.begin(), chosen.end(), [&](const FitPlan& c) { return sameLayout(c, f); }))
            chosen.push_back(f);
    }
    std::vector<FitPlan> simulated;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        if (progress.stopRequested())
            return makeError("cancelled");
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (o.simulateBudgetSeconds > 0 && elapsed > o.simulateBudgetSeconds) {
            out.budgetReached = true;
            break;
        }
        FitPlan f = chosen[i];
        const Scenario sc = applyFitPlan(s, f);
        auto d = deriver.derive(sc, quiet);
        if (!d || !d.value()->stage3) {
            out.simulationErrors.push_back(d ? makeError("the plan does not derive") : d.error());
            continue;
        }
        const auto step = simulateDerived(sc, *d.value(), false, quiet);
        if (!step) {
            if (progress.stopRequested())
                return makeError("cancelled");
            out.simulationErrors.push_back(step.error());
            continue;
        }
        const network::StepSimulation& sim = *step.value().simulation;
        f.simulated = true;
        f.stepSeconds = sim.stepSeconds;
        f.mfu = sim.mfu;
        f.exposedCommSeconds = sim.exposedCommSeconds;
        simulated.push_back(std::move(f));
        rankPlans(out, simulated, o.top);
        progress(0.5 + 0.5 * double(i + 1) / double(chosen.size()));
        if (partial)
            partial(out);
    }
    rankPlans(out, simulated, o.top);
    return Ok{};
}

} // namespace

// The plans that fit: every layout's candidates estimated coarsely (memory, compute, communication),
// ranked, then the best of each layout simulated exactly.
Result<FitSearch> searchFittingPlans(const Scenario& s, const FitOptions& o, const Progress& progress,
                                     const std::function<void(const FitSearch&)>& partial)
{
    const Progress quiet{{}, progress.stop};
    const auto started = std::chrono::steady_clock::now();
    Deriver deriver;
    FitContext c;
    if (Status st = deriveRecomputes(s, deriver, quiet, c); !st.ok())
        return st.error();
    progress(0.02);
    describeCluster(s, c);
    FitSearch out;
    if (c.T == 0 || c.G % c.T != 0 || c.N == 0)
        return out;

    // TP inside a node: t divides the GPUs per node (and the cluster).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> layouts; // (tp, pp)
    for (std::uint64_t tp : divisors(c.cluster.gpusPerNode, c.cluster.gpusPerNode))
        if (c.N % tp == 0)
            for (std::uint64_t pp : divisors(c.N / tp, c.L))
                layouts.emplace_back(tp, pp);
    for (std::size_t li = 0; li < layouts.size(); ++li) {
        if (progress.stopRequested())
            return makeError("cancelled");
        progress(0.02 + 0.48 * double(li) / double(layouts.size()));
        if (!enumerateLayout(s, o, c, layouts[li].first, layouts[li].second, out))
            break;
    }
    std::sort(out.fitting.begin(), out.fitting.end(),
              [](const FitPlan& a, const FitPlan& b) { return coarseKey(a) < coarseKey(b); });
    rankPlans(out, {}, o.top);
    progress(0.5);
    if (partial)
        partial(out);
    if (Status st = simulateBest(s, o, deriver, progress, partial, started, out); !st.ok())
        return st.error();
    progress(1.0);
    return out;
}

} // namespace tw::scenario
