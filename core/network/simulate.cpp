#include "simulate.h"
#include "simulate_p.h"

#include "overhead.h"

#include "base/units.h"
#include "collective/schedule.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace tw::network {

namespace {

using parallel::CollectiveCall;
using parallel::CollectiveKind;
using parallel::Strategy;
using parallel::Sharding;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint32_t kNone = 0xffffffffu;

// One distinct schedule, generated once: its transfers step by step and, per step and rank, the
// transfers that rank sends or receives (CSR).
struct Sched {
    std::uint32_t ranks = 0, steps = 0;
    std::vector<collective::Transfer> transfers;
    std::vector<std::uint32_t> stepBegin;  // steps + 1
    std::vector<std::uint32_t> rankBegin;  // steps·ranks + 1, into rankList
    std::vector<std::uint32_t> rankList;   // transfer indices
};

using SpecKey = std::tuple<int, int, std::uint64_t, double, std::uint32_t, std::uint64_t, std::uint64_t>;
SpecKey specKey(const collective::ScheduleSpec& s)
{
    return {int(s.op), int(s.algorithm), s.ranks, s.bytes, s.root, s.ranksPerNode, s.pipelineChunks};
}

// Which instance of which call: (call, group, occurrence = micro-batch or 0, bucket).
struct Key {
    std::uint32_t call = 0, group = 0, occ = 0, bucket = 0;
    bool operator==(const Key&) const = default;
};
struct KeyHash {
    std::size_t operator()(const Key& k) const
    {
        std::uint64_t h = 0xcbf29ce484222325ull;
        for (std::uint32_t v : {k.call, k.group, k.occ, k.bucket}) {
            h ^= v;
            h *= 0x100000001b3ull;
        }
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

// How a call sits in the step.
enum class Role : std::uint8_t { Blocking, Stream, Pp, Optimizer, Skip };

struct CallClass {
    Role role = Role::Skip;
    bool end = false;         // bucketed end-of-backward call
    std::uint32_t chunk = 0;  // unit calls: the virtual stage; PP: the chunk of its layer
    int unit = 0;             // 0 embedding, 1 + layer offset in the chunk, layers + 1 head
    enum Place : std::uint8_t { Before, Mid, After } place = Mid;
    bool backward = false;
};

// A routed transfer of a schedule in a group: its path and Σ link latency (routed once, on first use).
struct PathInfo {
    const std::vector<LinkId>* path = nullptr;
    double latency = 0;
};

struct Instance {
    Key key;
    const Sched* sched = nullptr;
    std::vector<PathInfo>* paths = nullptr; // per transfer, shared by every instance of (group, schedule)
    const std::vector<std::uint32_t>* members = nullptr;
    Role role = Role::Blocking;
    Strategy strategy = Strategy::DP;
    std::vector<std::int32_t> done;         // per rank: steps finished, −1 before arrival
    std::vector<std::uint32_t> outstanding; // per rank: unfinished transfers of its current step
    std::vector<char> started;              // per transfer
    std::uint32_t ranksDone = 0;
    double created = 0;      // first arrival (PP: when the send started)
    double lastArrival = 0;  // latest arrival so far: waiting before it is waiting for peers (idle)
};

struct Flow {
    std::uint32_t instance = 0, transfer = 0;
    const std::vector<LinkId>* path = nullptr;
    double remaining = 0, rate = 0, finishAt = kInf;
    std::uint32_t activePos = kNone;
    double upd = 0;          // fast path: `remaining` is as of this time (advanced lazily)
    std::uint32_t gen = 0;   // fast path: bumped at every rate change (stale heap entries)
};

// Fast path: a flow's predicted finish (stale when gen or finishAt no longer match the flow).
struct FinishEntry {
    double time = 0;
    std::uint32_t flow = 0, gen = 0;
    bool operator>(const FinishEntry& o) const { return time != o.time ? time > o.time : flow > o.flow; }
};

enum class OpKind : std::uint8_t { Compute, Blocking, Stream, Send, Recv };
struct Op {
    OpKind kind = OpKind::Compute;
    double seconds = 0;
    std::uint32_t call = 0, group = 0, rank = 0;
};

struct Bucket {
    double fraction = 1;      // of the stage's backward compute of the micro-batch
    std::uint32_t call = 0, group = 0, rank = 0, bucket = 0;
    bool perMicroBatch = false;
};

enum class Wait : std::uint8_t { Running, Compute, Blocking, Recv, Drain, Done };

struct StreamItem {
    Key key;
    std::uint32_t rank = 0;
};

struct Gpu {
    std::uint32_t stage = 0;
    std::vector<std::vector<Op>> templates; // (local chunk · 2 + backward)
    std::vector<Op> optimizer;              // blocking, after the stream drained
    std::vector<Bucket> buckets;            // sorted by fraction
    double gradTotal = 0;                   // backward compute of one micro-batch on this GPU
    std::vector<double> gradDone;           // per micro-batch slot
    std::vector<std::uint32_t> nextBucket;  // per micro-batch slot
    std::uint64_t block = 0;
    std::uint32_t op = 0;
    double opLeft = -1, curRun = 0;
    bool blocksDone = false, flushed = false, blockingDone = false;
    std::uint32_t optIdx = 0;
    Wait wait = Wait::Running;
    double waitStart = 0;
    Key waitKey;
    Strategy waitStrategy = Strategy::DP;
    std::deque<StreamItem> stream;
    bool streamBusy = false;
    Strategy streamStrategy = Strategy::DP;
    GpuSummary sum;
    int timeline = -1;
};

struct Event {
    double time = 0;
    std::uint64_t seq = 0;
    std::uint32_t type = 0, id = 0; // 0 compute done (gpu), 1 flow activates (flow)
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

std::size_t sIdx(Strategy s) { return static_cast<std::size_t>(s); }

class Engine {
public:
    Engine(const Topology& t, const parallel::PlanDerivation& p, const collective::CollectiveDerivation& c,
           const SimulationOptions& o, const Progress& pr, bool referenceAlgorithm)
        : topo(t), plan(p), coll(c), opt(o), progress(pr), router(t), reference(referenceAlgorithm)
    {
    }

    Result<StepSimulation> run();

private:
    const Topology& topo;
    const parallel::PlanDerivation& plan;
    const collective::CollectiveDerivation& coll;
    const SimulationOptions& opt;
    const Progress& progress;
    Router router;
    const bool reference; // the original full recomputation (simulate_p.h)
    StepSimulation out;
    std::optional<Error> failure;

    // Plan shape.
    std::uint32_t P = 1, V = 1, chunks = 1, nAcc = 1;
    std::vector<std::uint64_t> chunkFirst;
    std::vector<std::uint32_t> layerChunk;
    std::vector<std::vector<std::uint32_t>> stageBlocks; // indices into timeline.blocks per stage

    std::vector<CallClass> classes;
    std::vector<Gpu> gpus;
    std::vector<double> capacity;        // per link, payload B/s
    std::map<SpecKey, std::unique_ptr<Sched>> scheds;
    std::map<std::pair<std::uint32_t, const Sched*>, std::vector<PathInfo>> pathCache; // (group, schedule)
    std::unordered_map<Key, std::uint32_t, KeyHash> live; // key → instance slot
    std::vector<std::unique_ptr<Instance>> instances;
    std::vector<std::uint32_t> freeInstances, released; // released: reusable after the current event
    std::unordered_map<Key, double, KeyHash> ppArrived; // receives done (value: when the send started)
    std::unordered_map<Key, double, KeyHash> ppSent;    // sends started and not yet received

    std::vector<Flow> flows;
    std::vector<std::uint32_t> freeFlows, active, doneFlows;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    std::uint64_t seq = 0;
    std::deque<std::uint32_t> runnable;
    bool ratesChanged = false;
    double now = 0;
    std::uint64_t blocksFinished = 0; // Σ gpus[g].block (progress)

    // Link accounting.
    std::vector<double> linkRate;
    std::vector<std::uint32_t> busyLinks; // links with a non-zero rate
    std::vector<int> linkTimeline;        // per link: index into out.linkTimelines or −1
    std::uint64_t samples = 0;
    // Progressive filling scratch.
    std::vector<std::uint32_t> cnt;
    std::vector<double> capLeft, newRate;
    std::vector<std::uint32_t> touched;

    // Fast path (not reference): rates are recomputed only for the connected component (flows sharing
    // links, transitively) of the links whose flow set changed; max-min fair rates of other components
    // cannot change. Finish times in a heap with lazy invalidation; remaining bytes and link payloads
    // advanced lazily.
    struct LinkEntry {
        std::uint32_t flow, index; // index into the flow's path
    };
    std::vector<std::vector<LinkEntry>> linkFlows;      // per link: active flows crossing it
    std::vector<std::vector<std::uint32_t>> flowLinkPos; // per flow, per path index: position in linkFlows
    std::vector<char> linkDirty, linkVisited, flowMark;
    std::vector<std::uint32_t> dirtyLinks, compFlows, compLinks, fillUnfrozen, fillKeep, fillFrozen;
    std::vector<double> linkSince; // payload accumulated up to this time at linkRate
    std::priority_queue<FinishEntry, std::vector<FinishEntry>, std::greater<>> finishQueue;

    Status prepare();
    void classify();
    Status buildGpus();
    const Sched* schedule(const collective::ScheduleSpec& spec);
    Strategy strategyOf(std::uint32_t call) const { return plan.comm.calls[call].strategy; }

    void arrive(const Key& key, std::uint32_t rank, Role role, bool ppBoth);
    void enterStep(std::uint32_t slot, std::uint32_t rank);
    void startTransfer(std::uint32_t slot, std::uint32_t t);
    void transferDone(std::uint32_t flow);
    void rankDone(Instance& inst, std::uint32_t rank);
    void runGpu(std::uint32_t g);
    void computeDone(std::uint32_t g);
    void startStream(std::uint32_t g);
    void resume(std::uint32_t g, Activity activity, Strategy s);
    void record(std::uint32_t g, double start, double end, Activity a, Strategy s);
    void recomputeRates();
    void advanceTo(double t);
    void activate(std::uint32_t f);
    void deactivate(std::uint32_t f);
    void recomputeComponent();
    void fillComponent();
    void recordSample(LinkId l);
    void sampleLink(LinkId l, double sum);
    double nextFinish();
    void advanceFast(double t);
    void drain();
    void fail(Error e)
    {
        if (!failure)
            failure = std::move(e);
    }
};

const Sched* Engine::schedule(const collective::ScheduleSpec& spec)
{
    auto [it, fresh] = scheds.try_emplace(specKey(spec));
    if (fresh) {
        auto s = std::make_unique<Sched>();
        collective::Schedule gen(spec);
        s->ranks = static_cast<std::uint32_t>(spec.ranks);
        std::vector<collective::Transfer> step;
        s->stepBegin.push_back(0);
        while (gen.next(step)) {
            s->transfers.insert(s->transfers.end(), step.begin(), step.end());
            s->stepBegin.push_back(static_cast<std::uint32_t>(s->transfers.size()));
        }
        s->steps = static_cast<std::uint32_t>(s->stepBegin.size() - 1);
        const std::size_t N = s->ranks;
        std::vector<std::uint32_t> count(std::size_t(s->steps) * N + 1, 0);
        for (std::uint32_t k = 0; k < s->steps; ++k)
            for (std::uint32_t t = s->stepBegin[k]; t < s->stepBegin[k + 1]; ++t) {
                ++count[k * N + s->transfers[t].src];
                ++count[k * N + s->transfers[t].dst];
            }
        s->rankBegin.assign(count.size(), 0);
        for (std::size_t i = 1; i < count.size(); ++i)
            s->rankBegin[i] = s->rankBegin[i - 1] + count[i - 1];
        s->rankList.resize(s->rankBegin.back());
        std::vector<std::uint32_t> fill(s->rankBegin.begin(), s->rankBegin.end() - 1);
        for (std::uint32_t k = 0; k < s->steps; ++k)
            for (std::uint32_t t = s->stepBegin[k]; t < s->stepBegin[k + 1]; ++t) {
                s->rankList[fill[k * N + s->transfers[t].src]++] = t;
                s->rankList[fill[k * N + s->transfers[t].dst]++] = t;
            }
        it->second = std::move(s);
    }
    return it->second.get();
}

Status Engine::prepare()
{
    const auto& tl = plan.timeline;
    P = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.pp));
    chunks = static_cast<std::uint32_t>(std::max<std::size_t>(1, plan.plan.layerPartition.size()));
    V = std::max<std::uint32_t>(1, chunks / P);
    chunkFirst.assign(chunks + 1, 0);
    for (std::uint32_t c = 0; c < chunks; ++c)
        chunkFirst[c + 1] = chunkFirst[c] + (c < plan.plan.layerPartition.size() ? plan.plan.layerPartition[c] : 0);
    const std::size_t L = plan.layerForwardSeconds.size();
    layerChunk.assign(L, chunks - 1);
    for (std::uint32_t c = 0; c < chunks; ++c)
        for (std::uint64_t l = chunkFirst[c]; l < chunkFirst[c + 1] && l < L; ++l)
            layerChunk[l] = c;
    if (tl.blocks.empty())
        return errorAt("parallel", "the pipeline timeline has no blocks to simulate (too many micro-batches × stages)");
    stageBlocks.assign(P, {});
    for (std::uint32_t i = 0; i < tl.blocks.size(); ++i) {
        if (tl.blocks[i].stage >= P)
            return errorAt("parallel", "pipeline block on stage " + std::to_string(tl.blocks[i].stage) + " of " + std::to_string(P));
        stageBlocks[tl.blocks[i].stage].push_back(i);
    }
    nAcc = static_cast<std::uint32_t>(std::max<std::size_t>(1, stageBlocks[0].size() / (2 * std::size_t(V))));

    capacity.resize(topo.links().size());
    for (LinkId l = 0; l < topo.links().size(); ++l) {
        const Link& k = topo.link(l);
        capacity[l] = k.bandwidth * (opt.protocolOverhead ? efficiency(k.protocol) : 1.0);
    }
    linkRate.assign(topo.links().size(), 0.0);
    linkTimeline.assign(topo.links().size(), -1);
    cnt.assign(topo.links().size(), 0);
    capLeft.assign(topo.links().size(), 0.0);
    out.linkPayloadBytes.assign(topo.links().size(), 0.0);
    if (!reference) {
        linkFlows.assign(topo.links().size(), {});
        linkDirty.assign(topo.links().size(), 0);
        linkVisited.assign(topo.links().size(), 0);
        linkSince.assign(topo.links().size(), 0.0);
    }
    return Ok{};
}

// Places each call: a blocking unit call in a chunk, a stream call, a pipeline Send/Recv, a bucketed
// end-of-backward call or an optimizer-phase call (see simulate.h).
void Engine::classify()
{
    const bool zero3 = plan.plan.sharding == Sharding::Zero3 || plan.plan.sharding == Sharding::FsdpFull
                       || plan.plan.sharding == Sharding::FsdpHybrid;
    classes.assign(plan.comm.calls.size(), {});
    for (std::size_t i = 0; i < plan.comm.calls.size(); ++i) {
        const CollectiveCall& c = plan.comm.calls[i];
        CallClass& k = classes[i];
        if (c.groupCount == 0 || c.repeat == 0 || i >= coll.calls.size() || !coll.calls[i].counted) {
            k.role = Role::Skip;
            continue;
        }
        k.backward = c.phase == model::Phase::Backward;
        if (c.phase == model::Phase::Optimizer) {
            k.role = Role::Optimizer;
        } else if (c.kind == CollectiveKind::SendRecv) {
            k.role = Role::Pp;
            k.chunk = c.layer >= 0 && std::size_t(c.layer) < layerChunk.size() ? layerChunk[std::size_t(c.layer)] : 0;
        } else if ((c.strategy == Strategy::DP && k.backward
                    && !(zero3 && (c.kind == CollectiveKind::AllGather || c.kind == CollectiveKind::ReduceScatter)))
                   || (c.strategy == Strategy::PP && c.kind == CollectiveKind::AllReduce)) {
            k.role = Role::Stream;
            k.end = true;
        } else {
            const bool head = c.layer < 0 && c.what.find("head") != std::string::npos;
            if (c.layer >= 0 && std::size_t(c.layer) < layerChunk.size()) {
                k.chunk = layerChunk[std::size_t(c.layer)];
                k.unit = 1 + static_cast<int>(std::uint64_t(c.layer) - chunkFirst[k.chunk]);
            } else if (head) {
                k.chunk = chunks - 1;
                k.unit = static_cast<int>(chunkFirst[chunks] - chunkFirst[chunks - 1]) + 1;
            } else {
                k.chunk = 0;
                k.unit = 0;
            }
            const bool zeroCall = c.strategy == Strategy::DP;
            if (zeroCall && c.kind == CollectiveKind::AllGather) {
                k.role = Role::Blocking;
                k.place = CallClass::Before;
            } else if (zeroCall) {
                k.role = Role::Stream;
                k.place = CallClass::After;
            } else {
                k.role = Role::Blocking;
                k.place = CallClass::Mid;
            }
        }
    }
}

Status Engine::buildGpus()
{
    const std::size_t G = topo.gpuCount();
    if (plan.mesh.size() > G)
        return errorAt("topology", "the plan has " + formatInteger(static_cast<std::int64_t>(plan.mesh.size()))
                                       + " GPUs, the topology " + formatInteger(static_cast<std::int64_t>(G)));
    gpus.assign(plan.mesh.size(), {});
    for (std::size_t g = 0; g < gpus.size(); ++g)
        gpus[g].stage = plan.mesh[g].pp;

    // Participations in call order: (call, group, rank) per GPU.
    struct Part {
        std::uint32_t call, group, rank;
    };
    std::vector<std::vector<Part>> parts(gpus.size());
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (classes[i].role == Role::Skip) {
            const CollectiveCall& c = plan.comm.calls[i];
            if (c.groupCount && c.repeat && i < coll.calls.size() && !coll.calls[i].counted)
                out.skipped.push_back(errorAt("collectives", c.what + " is not simulated: stage 4 could not schedule it"));
            continue;
        }
        const CollectiveCall& c = plan.comm.calls[i];
        if (std::uint64_t{c.firstGroup} + c.groupCount > plan.comm.groups.size())
            return errorAt("calls[" + std::to_string(i) + "]", "groups outside the plan");
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            const auto& members = plan.comm.groups[gr].members;
            if (members.size() != coll.calls[i].spec.ranks)
                return errorAt("calls[" + std::to_string(i) + "]", "group size differs from the schedule's ranks");
            for (std::uint32_t r = 0; r < members.size(); ++r) {
                if (members[r] >= gpus.size())
                    return errorAt("topology", "GPU " + formatInteger(members[r]) + " is not in the plan's mesh");
                parts[members[r]].push_back({i, gr, r});
            }
        }
    }

    // Per-chunk times from the timeline's blocks (the numbers plan.cpp built), split over layers by
    // layerForwardSeconds; what the layers do not explain is the head (last chunk only).
    std::vector<double> chunkF(chunks, 0.0), chunkB(chunks, 0.0);
    std::vector<char> seenF(chunks, 0), seenB(chunks, 0);
    for (const parallel::PipelineBlock& b : plan.timeline.blocks) {
        const std::uint32_t k = b.chunk * P + b.stage;
        if (k >= chunks)
            continue;
        if (b.backward && !seenB[k]) {
            chunkB[k] = b.end - b.start;
            seenB[k] = 1;
        } else if (!b.backward && !seenF[k]) {
            chunkF[k] = b.end - b.start;
            seenF[k] = 1;
        }
    }
    const auto& lf = plan.layerForwardSeconds;
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        Gpu& gpu = gpus[g];
        gpu.templates.assign(std::size_t(V) * 2, {});
        // Calls per (local chunk, direction, unit, place).
        for (std::uint32_t local = 0; local < V; ++local) {
            const std::uint32_t k = local * P + gpu.stage;
            if (k >= chunks)
                continue;
            const std::uint64_t nl = chunkFirst[k + 1] - chunkFirst[k];
            const int units = static_cast<int>(nl) + 2;
            double sumLf = 0;
            for (std::uint64_t l = chunkFirst[k]; l < chunkFirst[k + 1] && l < lf.size(); ++l)
                sumLf += lf[l];
            const double headF = k + 1 == chunks ? std::max(0.0, chunkF[k] - sumLf) : 0.0;
            const double fwdScale = sumLf > 0 ? (chunkF[k] - headF) / sumLf : 0.0;
            const double bwdScale = sumLf > 0 ? (chunkB[k] - 2 * headF) / sumLf : 0.0;
            for (int dir = 0; dir < 2; ++dir) {
                const bool bw = dir == 1;
                std::vector<std::vector<Op>> before(units), mid(units), after(units);
                Op recv, send;
                bool haveRecv = false, haveSend = false;
                for (const Part& pt : parts[g]) {
                    const CallClass& cc = classes[pt.call];
                    const Op o{OpKind::Blocking, 0, pt.call, pt.group, pt.rank};
                    if (cc.role == Role::Pp && cc.backward == bw) {
                        // Forward boundary after chunk cc.chunk; backward boundary from cc.chunk+1 to cc.chunk.
                        const std::uint32_t from = bw ? cc.chunk + 1 : cc.chunk, to = bw ? cc.chunk : cc.chunk + 1;
                        if (pt.rank == 0 && from == k) {
                            send = o;
                            send.kind = OpKind::Send;
                            haveSend = true;
                        } else if (pt.rank == 1 && to == k) {
                            recv = o;
                            recv.kind = OpKind::Recv;
                            haveRecv = true;
                        }
                        continue;
                    }
                    if ((cc.role != Role::Blocking && !(cc.role == Role::Stream && !cc.end)) || cc.chunk != k
                        || cc.backward != bw || cc.unit < 0 || cc.unit >= units)
                        continue;
                    Op op = o;
                    if (cc.role == Role::Stream)
                        op.kind = OpKind::Stream;
                    (cc.place == CallClass::Before ? before : cc.place == CallClass::Mid ? mid : after)[cc.unit].push_back(op);
                }
                std::vector<Op>& tmpl = gpu.templates[local * 2 + dir];
                if (haveRecv)
                    tmpl.push_back(recv);
                for (int i = 0; i < units; ++i) {
                    const int u = bw ? units - 1 - i : i;
                    double seconds = 0;
                    if (u == units - 1)
                        seconds = bw ? 2 * headF : headF;
                    else if (u > 0) {
                        const std::uint64_t l = chunkFirst[k] + std::uint64_t(u - 1);
                        seconds = l < lf.size() ? lf[l] * (bw ? bwdScale : fwdScale) : 0.0;
                    }
                    if (sumLf <= 0 && u == 1)
                        seconds += bw ? chunkB[k] - 2 * headF : chunkF[k] - headF; // no per-layer split
                    tmpl.insert(tmpl.end(), before[u].begin(), before[u].end());
                    const std::size_t n = mid[u].size();
                    if (n == 0) {
                        if (seconds > 0)
                            tmpl.push_back({OpKind::Compute, seconds, 0, 0, 0});
                    } else {
                        for (std::size_t j = 0; j < n; ++j) {
                            if (seconds > 0)
                                tmpl.push_back({OpKind::Compute, seconds / static_cast<double>(n), 0, 0, 0});
                            tmpl.push_back(mid[u][j]);
                        }
                    }
                    tmpl.insert(tmpl.end(), after[u].begin(), after[u].end());
                    if (bw)
                        gpu.gradTotal += seconds;
                }
                if (haveSend)
                    tmpl.push_back(send);
            }
        }
        // Optimizer calls and end-of-backward buckets.
        for (const Part& pt : parts[g]) {
            const CallClass& cc = classes[pt.call];
            if (cc.role == Role::Optimizer) {
                gpu.optimizer.push_back({OpKind::Blocking, 0, pt.call, pt.group, pt.rank});
            } else if (cc.role == Role::Stream && cc.end) {
                const CollectiveCall& c = plan.comm.calls[pt.call];
                const double M = coll.calls[pt.call].spec.bytes;
                const double bucket = c.strategy == Strategy::DP && plan.plan.bucketBytes > 0 ? plan.plan.bucketBytes : M;
                const std::uint32_t nb = M > 0 && bucket > 0 ? static_cast<std::uint32_t>(std::ceil(M / bucket)) : 1;
                for (std::uint32_t b = 0; b < nb; ++b) {
                    const double upTo = std::min(M, (b + 1) * bucket);
                    gpu.buckets.push_back({M > 0 ? upTo / M : 1.0, pt.call, pt.group, pt.rank, b, c.repeat > 1});
                }
            }
        }
        std::stable_sort(gpu.buckets.begin(), gpu.buckets.end(),
                         [](const Bucket& a, const Bucket& b) { return a.fraction < b.fraction; });
        gpu.gradDone.assign(nAcc, 0.0);
        gpu.nextBucket.assign(nAcc, 0);
    }

    // Which GPUs keep intervals.
    std::vector<std::uint32_t> rec = opt.recordGpus;
    if (rec.empty() && gpus.size() <= kMaxRecordedGpus)
        for (std::uint32_t g = 0; g < gpus.size(); ++g)
            rec.push_back(g);
    for (std::uint32_t g : rec)
        if (g < gpus.size() && gpus[g].timeline < 0) {
            gpus[g].timeline = static_cast<int>(out.gpuTimelines.size());
            out.gpuTimelines.push_back({g, {}});
        }
    return Ok{};
}

void Engine::record(std::uint32_t g, double start, double end, Activity a, Strategy s)
{
    Gpu& gpu = gpus[g];
    if (a == Activity::Compute)
        gpu.sum.compute += end - start;
    else if (a == Activity::Communication)
        gpu.sum.exposed[sIdx(s)] += end - start;
    if (gpu.timeline < 0 || !(end > start))
        return;
    auto& iv = out.gpuTimelines[std::size_t(gpu.timeline)].intervals;
    if (!iv.empty() && iv.back().activity == a && iv.back().strategy == s && iv.back().end == start)
        iv.back().end = end;
    else
        iv.push_back({start, end, a, s});
}

void Engine::arrive(const Key& key, std::uint32_t rank, Role role, bool ppBoth)
{
    auto [it, fresh] = live.try_emplace(key, 0);
    if (fresh) {
        std::uint32_t slot;
        if (!freeInstances.empty()) {
            slot = freeInstances.back();
            freeInstances.pop_back();
        } else {
            slot = static_cast<std::uint32_t>(instances.size());
            instances.push_back(std::make_unique<Instance>());
        }
        it->second = slot;
        Instance& inst = *instances[slot];
        collective::ScheduleSpec spec = coll.calls[key.call].spec;
        if (classes[key.call].end) {
            const double M = spec.bytes;
            const double bucket = strategyOf(key.call) == Strategy::DP && plan.plan.bucketBytes > 0 ? plan.plan.bucketBytes : M;
            spec.bytes = std::round(std::max(0.0, std::min(bucket, M - key.bucket * bucket)));
        }
        inst.key = key;
        inst.sched = schedule(spec);
        {
            auto [pc, added] = pathCache.try_emplace({key.group, inst.sched});
            if (added)
                pc->second.resize(inst.sched->transfers.size());
            inst.paths = &pc->second;
        }
        inst.members = &plan.comm.groups[key.group].members;
        inst.role = role;
        inst.strategy = strategyOf(key.call);
        inst.done.assign(inst.sched->ranks, -1);
        inst.outstanding.assign(inst.sched->ranks, 0);
        inst.started.assign(inst.sched->transfers.size(), 0);
        inst.ranksDone = 0;
        inst.created = now;
        inst.lastArrival = now;
        ++out.collectiveInstances;
        if (ppBoth) {
            for (std::uint32_t r = 0; r < inst.sched->ranks; ++r)
                if (r != rank)
                    inst.done[r] = 0;
        }
    }
    const std::uint32_t slot = it->second;
    Instance& inst = *instances[slot];
    if (inst.done[rank] >= 0)
        return; // already arrived (a pre-posted receive)
    inst.done[rank] = 0;
    inst.lastArrival = now;
    if (ppBoth) // the pre-posted ranks enter step 0 too
        for (std::uint32_t r = 0; r < inst.sched->ranks; ++r)
            if (r != rank && inst.done[r] == 0 && inst.outstanding[r] == 0)
                enterStep(slot, r);
    enterStep(slot, rank);
}

// Rank `rank` has finished steps < done[rank]: start its transfers of that step whose other end is
// ready too; a step without transfers of its finishes at once.
void Engine::enterStep(std::uint32_t slot, std::uint32_t rank)
{
    while (true) {
        Instance& inst = *instances[slot];
        const Sched& s = *inst.sched;
        const std::int32_t k = inst.done[rank];
        if (k < 0)
            return;
        if (std::uint32_t(k) >= s.steps) {
            rankDone(inst, rank);
            return;
        }
        const std::size_t cell = std::size_t(k) * s.ranks + rank;
        const std::uint32_t b = s.rankBegin[cell], e = s.rankBegin[cell + 1];
        if (b == e) {
            ++inst.done[rank];
            continue;
        }
        inst.outstanding[rank] = e - b;
        for (std::uint32_t i = b; i < e; ++i) {
            const std::uint32_t t = s.rankList[i];
            const collective::Transfer& tr = s.transfers[t];
            const std::uint32_t other = tr.src == rank ? tr.dst : tr.src;
            if (!inst.started[t] && inst.done[other] == k && inst.outstanding[other] > 0)
                startTransfer(slot, t);
        }
        return;
    }
}

void Engine::startTransfer(std::uint32_t slot, std::uint32_t t)
{
    Instance& inst = *instances[slot];
    inst.started[t] = 1;
    const collective::Transfer& tr = inst.sched->transfers[t];
    std::uint32_t f;
    if (!freeFlows.empty()) {
        f = freeFlows.back();
        freeFlows.pop_back();
    } else {
        f = static_cast<std::uint32_t>(flows.size());
        flows.emplace_back();
    }
    if (++out.flows > opt.maxFlows)
        fail(errorAt("", "the step has more than " + formatInteger(static_cast<std::int64_t>(opt.maxFlows))
                             + " flows to simulate"));
    Flow& flow = flows[f];
    const std::uint32_t gen = flow.gen;
    flow = Flow{};
    flow.gen = gen + 1;
    flow.instance = slot;
    flow.transfer = t;
    flow.remaining = tr.bytes;
    if (!opt.communication) {
        doneFlows.push_back(f);
        return;
    }
    PathInfo& cached = (*inst.paths)[t];
    if (!cached.path) {
        const auto& members = *inst.members;
        auto path = router.route(members[tr.src], members[tr.dst], inst.key.group);
        if (!path.ok()) {
            fail(path.error());
            doneFlows.push_back(f);
            return;
        }
        double sum = 0;
        for (LinkId l : *path.value()) {
            sum += topo.link(l).latency;
            if (!(capacity[l] > 0)) {
                fail(errorAt("topology", "link " + topo.link(l).id + " has no bandwidth: the transfer from GPU "
                                             + formatInteger(members[tr.src]) + " to GPU " + formatInteger(members[tr.dst])
                                             + " cannot cross it"));
                doneFlows.push_back(f);
                return;
            }
        }
        cached.path = path.value();
        cached.latency = sum;
    }
    flow.path = cached.path;
    const double latency = cached.latency;
    if (latency > 0)
        events.push({now + latency, seq++, 1, f});
    else if (flow.remaining <= 0 || flow.path->empty())
        doneFlows.push_back(f);
    else
        activate(f);
}

void Engine::transferDone(std::uint32_t f)
{
    const std::uint32_t slot = flows[f].instance, t = flows[f].transfer;
    freeFlows.push_back(f);
    Instance& inst = *instances[slot];
    const collective::Transfer tr = inst.sched->transfers[t];
    for (std::uint32_t r : {tr.src, tr.dst}) {
        Instance& in = *instances[slot];
        if (in.ranksDone == in.sched->ranks)
            return; // released meanwhile (cannot happen before both ends are done)
        if (--in.outstanding[r] == 0) {
            ++in.done[r];
            enterStep(slot, r);
        }
    }
}

void Engine::rankDone(Instance& inst, std::uint32_t rank)
{
    const std::uint32_t g = (*inst.members)[rank];
    const Key key = inst.key;
    const Role role = inst.role;
    const Strategy strategy = inst.strategy;
    const double created = inst.created;
    const double peersIn = inst.lastArrival;
    // A wait [from, now] is idle until every peer has arrived, exposed communication after.
    auto split = [&](std::uint32_t gpuId, double from, Strategy st) {
        const double ready = std::clamp(peersIn, from, now);
        record(gpuId, from, ready, Activity::Idle, st);
        record(gpuId, ready, now, Activity::Communication, st);
    };
    if (++inst.ranksDone == inst.sched->ranks) {
        const std::uint32_t slot = live[key];
        live.erase(key);
        released.push_back(slot);
    }
    Gpu& gpu = gpus[g];
    switch (role) {
    case Role::Pp:
        if (rank == 1) {
            if (gpu.wait == Wait::Recv && gpu.waitKey == key) {
                // Waiting before the send started is idle (bubble), after it exposed PP.
                const double from = std::max(gpu.waitStart, created);
                record(g, gpu.waitStart, from, Activity::Idle, Strategy::PP);
                record(g, from, now, Activity::Communication, Strategy::PP);
                gpu.wait = Wait::Running;
                runnable.push_back(g);
            } else {
                ppArrived.emplace(key, created);
            }
        }
        break;
    case Role::Stream:
        gpu.streamBusy = false;
        if (gpu.wait == Wait::Drain) {
            split(g, gpu.waitStart, strategy);
            gpu.waitStart = now;
        }
        startStream(g);
        if (gpu.wait == Wait::Drain && !gpu.streamBusy && gpu.stream.empty()) {
            gpu.wait = Wait::Running;
            runnable.push_back(g);
        }
        break;
    default:
        if (gpu.wait == Wait::Blocking && gpu.waitKey == key) {
            split(g, gpu.waitStart, strategy);
            gpu.wait = Wait::Running;
            runnable.push_back(g);
        } else {
            gpu.blockingDone = true;
        }
        break;
    }
}

void Engine::startStream(std::uint32_t g)
{
    Gpu& gpu = gpus[g];
    if (gpu.streamBusy || gpu.stream.empty())
        return;
    const StreamItem item = gpu.stream.front();
    gpu.stream.pop_front();
    gpu.streamBusy = true;
    gpu.streamStrategy = strategyOf(item.key.call);
    arrive(item.key, item.rank, Role::Stream, false);
}

void Engine::runGpu(std::uint32_t g)
{
    Gpu& gpu = gpus[g];
    const auto& blocks = plan.timeline.blocks;
    const auto& order = stageBlocks[gpu.stage];
    auto enqueueBucket = [&](const Bucket& b, std::uint32_t mb) {
        gpu.stream.push_back({Key{b.call, b.group, b.perMicroBatch ? mb : 0, b.bucket}, b.rank});
        startStream(g);
    };
    auto applicable = [&](const Bucket& b, std::uint32_t mb) { return b.perMicroBatch || mb + 1 == nAcc; };
    while (gpu.wait == Wait::Running && !failure) {
        if (!gpu.blocksDone && gpu.block < order.size()) {
            const parallel::PipelineBlock& b = blocks[order[gpu.block]];
            const std::vector<Op>& tmpl = gpu.templates[std::size_t(b.chunk) * 2 + (b.backward ? 1 : 0)];
            if (gpu.op >= tmpl.size()) {
                ++gpu.block;
                ++blocksFinished;
                gpu.op = 0;
                continue;
            }
            const Op& o = tmpl[gpu.op];
            const Key key{o.call, o.group, b.microBatch, 0};
            switch (o.kind) {
            case OpKind::Compute: {
                if (gpu.opLeft < 0)
                    gpu.opLeft = o.seconds;
                double run = gpu.opLeft;
                if (b.backward && !gpu.buckets.empty()) {
                    const std::uint32_t mb = b.microBatch;
                    const double tol = 1e-12 * gpu.gradTotal;
                    while (gpu.nextBucket[mb] < gpu.buckets.size()) {
                        const Bucket& bk = gpu.buckets[gpu.nextBucket[mb]];
                        if (!applicable(bk, mb)) {
                            ++gpu.nextBucket[mb];
                            continue;
                        }
                        const double need = bk.fraction * gpu.gradTotal - gpu.gradDone[mb];
                        if (need <= tol) {
                            ++gpu.nextBucket[mb];
                            enqueueBucket(bk, mb);
                            continue;
                        }
                        if (need < run - tol)
                            run = need;
                        break;
                    }
                }
                gpu.curRun = run;
                gpu.wait = Wait::Compute;
                gpu.waitStart = now;
                events.push({now + run, seq++, 0, g});
                return;
            }
            case OpKind::Blocking:
                ++gpu.op;
                gpu.blockingDone = false;
                gpu.wait = Wait::Blocking;
                gpu.waitKey = key;
                gpu.waitStart = now;
                arrive(key, o.rank, Role::Blocking, false);
                if (gpu.blockingDone && gpu.wait == Wait::Blocking)
                    gpu.wait = Wait::Running;
                continue;
            case OpKind::Stream:
                ++gpu.op;
                gpu.stream.push_back({key, o.rank});
                startStream(g);
                continue;
            case OpKind::Send:
                ++gpu.op;
                arrive(key, o.rank, Role::Pp, true);
                continue;
            case OpKind::Recv:
                ++gpu.op;
                if (auto hit = ppArrived.find(key); hit != ppArrived.end()) {
                    ppArrived.erase(hit);
                    continue;
                }
                gpu.wait = Wait::Recv;
                gpu.waitKey = key;
                gpu.waitStart = now;
                return;
            }
        }
        if (!gpu.blocksDone) {
            gpu.blocksDone = true;
            // Buckets whose threshold rounding left them behind go now.
            for (std::uint32_t mb = 0; mb < nAcc; ++mb)
                for (; gpu.nextBucket[mb] < gpu.buckets.size(); ++gpu.nextBucket[mb])
                    if (applicable(gpu.buckets[gpu.nextBucket[mb]], mb))
                        enqueueBucket(gpu.buckets[gpu.nextBucket[mb]], mb);
            continue;
        }
        if (gpu.streamBusy || !gpu.stream.empty()) {
            gpu.wait = Wait::Drain;
            gpu.waitStart = now;
            return;
        }
        if (gpu.optIdx < gpu.optimizer.size()) {
            const Op& o = gpu.optimizer[gpu.optIdx++];
            const Key key{o.call, o.group, 0, 0};
            gpu.blockingDone = false;
            gpu.wait = Wait::Blocking;
            gpu.waitKey = key;
            gpu.waitStart = now;
            arrive(key, o.rank, Role::Optimizer, false);
            if (gpu.blockingDone && gpu.wait == Wait::Blocking)
                gpu.wait = Wait::Running;
            continue;
        }
        gpu.wait = Wait::Done;
        gpu.sum.finish = now;
        return;
    }
}

void Engine::computeDone(std::uint32_t g)
{
    Gpu& gpu = gpus[g];
    record(g, gpu.waitStart, now, Activity::Compute, Strategy::DP);
    const parallel::PipelineBlock& b = plan.timeline.blocks[stageBlocks[gpu.stage][gpu.block]];
    if (b.backward)
        gpu.gradDone[b.microBatch] += gpu.curRun;
    gpu.opLeft -= gpu.curRun;
    if (gpu.opLeft <= 1e-12 * std::max(gpu.curRun, gpu.gradTotal)) {
        gpu.opLeft = -1;
        ++gpu.op;
    }
    gpu.wait = Wait::Running;
    runnable.push_back(g);
}

// Max-min fair rates by progressive filling (Bertsekas & Gallager §6.5.2): repeatedly the most
// constrained link (least capacity left per unfrozen flow) fixes the rate of every unfrozen flow
// crossing it. rate[i] for flow ids[i]; cnt must be all zero on entry and is left so.
template <class PathOf>
void progressiveFill(const std::vector<std::uint32_t>& ids, PathOf pathOf, const std::vector<double>& capacity,
                     std::vector<std::uint32_t>& cnt, std::vector<double>& capLeft, std::vector<LinkId>& touched,
                     std::vector<double>& rate)
{
    touched.clear();
    rate.assign(ids.size(), 0.0);
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        for (LinkId l : pathOf(ids[i]))
            if (cnt[l]++ == 0) {
                touched.push_back(l);
                capLeft[l] = capacity[l];
            }
    std::vector<std::uint32_t> unfrozen(ids.size()), keep, frozen;
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        unfrozen[i] = i;
    while (!unfrozen.empty()) {
        double share = kInf;
        for (LinkId l : touched)
            if (cnt[l] > 0)
                share = std::min(share, std::max(0.0, capLeft[l]) / cnt[l]);
        keep.clear();
        frozen.clear();
        for (std::uint32_t i : unfrozen) {
            bool bottleneck = false;
            for (LinkId l : pathOf(ids[i]))
                if (std::max(0.0, capLeft[l]) / cnt[l] <= share * (1 + 1e-12)) {
                    bottleneck = true;
                    break;
                }
            (bottleneck ? frozen : keep).push_back(i);
        }
        for (std::uint32_t i : frozen) {
            rate[i] = share;
            for (LinkId l : pathOf(ids[i])) {
                capLeft[l] -= share;
                --cnt[l];
            }
        }
        unfrozen.swap(keep);
    }
    for (LinkId l : touched)
        cnt[l] = 0;
}

void Engine::recomputeRates()
{
    ++out.rateUpdates;
    progressiveFill(active, [this](std::uint32_t f) -> const std::vector<LinkId>& { return *flows[f].path; }, capacity,
                    cnt, capLeft, touched, newRate);
    for (std::size_t i = 0; i < active.size(); ++i)
        flows[active[i]].rate = newRate[i];
    // New per-link sums; samples where they changed.
    for (LinkId l : busyLinks)
        capLeft[l] = 0; // reuse as the new sum
    for (LinkId l : touched)
        capLeft[l] = 0;
    for (std::uint32_t f : active) {
        Flow& fl = flows[f];
        fl.finishAt = fl.rate > 0 ? now + fl.remaining / fl.rate : kInf;
        for (LinkId l : *fl.path)
            capLeft[l] += fl.rate;
    }
    auto sample = [&](LinkId l) {
        if (capLeft[l] == linkRate[l])
            return;
        linkRate[l] = capLeft[l];
        recordSample(l);
    };
    for (LinkId l : busyLinks)
        sample(l);
    for (LinkId l : touched)
        sample(l);
    busyLinks.clear();
    for (LinkId l : touched)
        if (linkRate[l] > 0)
            busyLinks.push_back(l);
}

void Engine::advanceTo(double t)
{
    const double dt = t - now;
    if (dt > 0)
        for (LinkId l : busyLinks)
            out.linkPayloadBytes[l] += linkRate[l] * dt;
    const double eps = 1e-13 * std::max(std::abs(t), 1e-9);
    for (std::size_t i = 0; i < active.size();) {
        Flow& fl = flows[active[i]];
        if (fl.finishAt <= t + eps) {
            fl.remaining = 0;
            doneFlows.push_back(active[i]);
            flows[active.back()].activePos = static_cast<std::uint32_t>(i);
            active[i] = active.back();
            active.pop_back();
            fl.activePos = kNone;
            ratesChanged = true;
        } else {
            fl.remaining = std::max(0.0, fl.remaining - fl.rate * dt);
            ++i;
        }
    }
    now = t;
}

void Engine::activate(std::uint32_t f)
{
    Flow& fl = flows[f];
    fl.activePos = static_cast<std::uint32_t>(active.size());
    active.push_back(f);
    ratesChanged = true;
    if (reference)
        return;
    fl.upd = now;
    if (flowLinkPos.size() < flows.size())
        flowLinkPos.resize(flows.size());
    if (flowMark.size() < flows.size())
        flowMark.resize(flows.size(), 0);
    const std::vector<LinkId>& path = *fl.path;
    auto& pos = flowLinkPos[f];
    pos.resize(path.size());
    for (std::uint32_t i = 0; i < path.size(); ++i) {
        const LinkId l = path[i];
        pos[i] = static_cast<std::uint32_t>(linkFlows[l].size());
        linkFlows[l].push_back({f, i});
        if (!linkDirty[l]) {
            linkDirty[l] = 1;
            dirtyLinks.push_back(l);
        }
    }
}

// Fast path: the flow leaves the active set (its rate no longer counts on its links).
void Engine::deactivate(std::uint32_t f)
{
    Flow& fl = flows[f];
    const std::uint32_t i = fl.activePos;
    flows[active.back()].activePos = i;
    active[i] = active.back();
    active.pop_back();
    fl.activePos = kNone;
    ratesChanged = true;
    const std::vector<LinkId>& path = *fl.path;
    const auto& pos = flowLinkPos[f];
    for (std::uint32_t k = 0; k < path.size(); ++k) {
        const LinkId l = path[k];
        auto& list = linkFlows[l];
        const LinkEntry last = list.back();
        list[pos[k]] = last;
        flowLinkPos[last.flow][last.index] = pos[k];
        list.pop_back();
        if (!linkDirty[l]) {
            linkDirty[l] = 1;
            dirtyLinks.push_back(l);
        }
    }
}

// Progressive filling over compFlows (the algorithm of progressiveFill, with the engine's scratch):
// newRate[i] for compFlows[i]; touched = the component's links.
void Engine::fillComponent()
{
    const auto& ids = compFlows;
    touched.clear();
    newRate.assign(ids.size(), 0.0);
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        for (LinkId l : *flows[ids[i]].path)
            if (cnt[l]++ == 0) {
                touched.push_back(l);
                capLeft[l] = capacity[l];
            }
    fillUnfrozen.resize(ids.size());
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        fillUnfrozen[i] = i;
    while (!fillUnfrozen.empty()) {
        double share = kInf;
        for (LinkId l : touched)
            if (cnt[l] > 0)
                share = std::min(share, std::max(0.0, capLeft[l]) / cnt[l]);
        fillKeep.clear();
        fillFrozen.clear();
        for (std::uint32_t i : fillUnfrozen) {
            bool bottleneck = false;
            for (LinkId l : *flows[ids[i]].path)
                if (std::max(0.0, capLeft[l]) / cnt[l] <= share * (1 + 1e-12)) {
                    bottleneck = true;
                    break;
                }
            (bottleneck ? fillFrozen : fillKeep).push_back(i);
        }
        for (std::uint32_t i : fillFrozen) {
            newRate[i] = share;
            for (LinkId l : *flows[ids[i]].path) {
                capLeft[l] -= share;
                --cnt[l];
            }
        }
        fillUnfrozen.swap(fillKeep);
        // Links whose flows are all frozen leave the scan.
        std::size_t w = 0;
        for (LinkId l : touched)
            if (cnt[l] > 0)
                touched[w++] = l;
        touched.resize(w);
    }
    for (LinkId l : touched)
        cnt[l] = 0;
}

void Engine::sampleLink(LinkId l, double sum)
{
    if (sum == linkRate[l])
        return;
    if (now > linkSince[l] && linkRate[l] > 0)
        out.linkPayloadBytes[l] += linkRate[l] * (now - linkSince[l]);
    linkSince[l] = now;
    linkRate[l] = sum;
    recordSample(l);
}

// Appends link l's new rate to its timeline (one sample per change; the last one replaced when the
// rate changes twice at the same instant), up to opt.maxLinkSamples.
void Engine::recordSample(LinkId l)
{
    if (!opt.recordLinks || out.linkTimelineTruncated)
        return;
    if (samples >= opt.maxLinkSamples) {
        out.linkTimelineTruncated = true;
        return;
    }
    if (linkTimeline[l] < 0) {
        linkTimeline[l] = static_cast<int>(out.linkTimelines.size());
        out.linkTimelines.push_back({l, {}});
    }
    auto& s = out.linkTimelines[std::size_t(linkTimeline[l])].samples;
    if (!s.empty() && s.back().time == now)
        s.back().rate = linkRate[l];
    else {
        s.push_back({now, linkRate[l]});
        ++samples;
    }
}

// Fast path: new max-min fair rates for the flows connected (through shared links, transitively) to
// the links whose flow set changed since the last recomputation.
void Engine::recomputeComponent()
{
    ++out.rateUpdates;
    compFlows.clear();
    compLinks.clear();
    for (LinkId l : dirtyLinks) {
        linkDirty[l] = 0;
        if (!linkVisited[l]) {
            linkVisited[l] = 1;
            compLinks.push_back(l);
        }
    }
    dirtyLinks.clear();
    for (std::size_t i = 0; i < compLinks.size(); ++i)
        for (const LinkEntry& e : linkFlows[compLinks[i]]) {
            if (flowMark[e.flow])
                continue;
            flowMark[e.flow] = 1;
            compFlows.push_back(e.flow);
            for (LinkId l : *flows[e.flow].path)
                if (!linkVisited[l]) {
                    linkVisited[l] = 1;
                    compLinks.push_back(l);
                }
        }
    for (std::uint32_t f : compFlows) {
        Flow& fl = flows[f];
        if (now > fl.upd)
            fl.remaining = std::max(0.0, fl.remaining - fl.rate * (now - fl.upd));
        fl.upd = now;
    }
    fillComponent();
    for (LinkId l : compLinks)
        capLeft[l] = 0; // reuse as the new sum
    for (std::size_t i = 0; i < compFlows.size(); ++i) {
        const std::uint32_t f = compFlows[i];
        Flow& fl = flows[f];
        fl.rate = newRate[i];
        fl.finishAt = fl.rate > 0 ? now + fl.remaining / fl.rate : kInf;
        ++fl.gen;
        if (fl.finishAt < kInf)
            finishQueue.push({fl.finishAt, f, fl.gen});
        for (LinkId l : *fl.path)
            capLeft[l] += fl.rate;
        flowMark[f] = 0;
    }
    for (LinkId l : compLinks) {
        sampleLink(l, capLeft[l]);
        linkVisited[l] = 0;
    }
}

double Engine::nextFinish()
{
    while (!finishQueue.empty()) {
        const FinishEntry& e = finishQueue.top();
        const Flow& fl = flows[e.flow];
        if (fl.activePos != kNone && fl.gen == e.gen)
            return e.time;
        finishQueue.pop();
    }
    return kInf;
}

void Engine::advanceFast(double t)
{
    const double eps = 1e-13 * std::max(std::abs(t), 1e-9);
    while (!finishQueue.empty() && finishQueue.top().time <= t + eps) {
        const FinishEntry e = finishQueue.top();
        finishQueue.pop();
        Flow& fl = flows[e.flow];
        if (fl.activePos == kNone || fl.gen != e.gen)
            continue;
        fl.remaining = 0;
        fl.upd = t;
        deactivate(e.flow);
        doneFlows.push_back(e.flow);
    }
    now = t;
}

void Engine::drain()
{
    while ((!doneFlows.empty() || !runnable.empty()) && !failure) {
        while (!doneFlows.empty()) {
            const std::uint32_t f = doneFlows.back();
            doneFlows.pop_back();
            transferDone(f);
            freeInstances.insert(freeInstances.end(), released.begin(), released.end());
            released.clear();
        }
        while (!runnable.empty() && doneFlows.empty()) {
            const std::uint32_t g = runnable.front();
            runnable.pop_front();
            runGpu(g);
            freeInstances.insert(freeInstances.end(), released.begin(), released.end());
            released.clear();
        }
    }
}

Result<StepSimulation> Engine::run()
{
    if (Status s = prepare(); !s.ok())
        return s.error();
    classify();
    if (Status s = buildGpus(); !s.ok())
        return s.error();
    for (std::uint32_t g = 0; g < gpus.size(); ++g)
        runnable.push_back(g);
    std::uint64_t iterations = 0;
    const double totalBlocks = static_cast<double>(plan.timeline.blocks.size());
    while (true) {
        drain();
        if (failure)
            return *failure;
        if (ratesChanged) {
            if (reference)
                recomputeRates();
            else
                recomputeComponent();
            ratesChanged = false;
        }
        double tFlow = kInf;
        if (reference) {
            for (std::uint32_t f : active)
                tFlow = std::min(tFlow, flows[f].finishAt);
        } else {
            tFlow = nextFinish();
        }
        const double tEvent = events.empty() ? kInf : events.top().time;
        const double t = std::min(tFlow, tEvent);
        if (t == kInf)
            break;
        if (reference)
            advanceTo(t);
        else
            advanceFast(t);
        while (!events.empty() && events.top().time <= now) {
            const Event e = events.top();
            events.pop();
            if (e.type == 0) {
                computeDone(e.id);
            } else {
                Flow& fl = flows[e.id];
                if (fl.remaining <= 0 || fl.path->empty()) {
                    doneFlows.push_back(e.id);
                } else {
                    activate(e.id);
                }
            }
        }
        if ((++iterations & 1023) == 0) {
            if (progress.stopRequested())
                return errorAt("", "cancelled");
            const double doneBlocks = static_cast<double>(blocksFinished);
            progress(std::min(0.99, doneBlocks / std::max(1.0, totalBlocks * static_cast<double>(gpus.size()) / P)));
        }
    }
    if (progress.stopRequested())
        return errorAt("", "cancelled");
    if (!reference) // payload still owed at the last rates (zero once every flow ended)
        for (LinkId l = 0; l < linkRate.size(); ++l)
            if (linkRate[l] > 0 && now > linkSince[l]) {
                out.linkPayloadBytes[l] += linkRate[l] * (now - linkSince[l]);
                linkSince[l] = now;
            }
    for (std::uint32_t g = 0; g < gpus.size(); ++g)
        if (gpus[g].wait != Wait::Done)
            return errorAt("", "the simulation stalled: GPU " + formatInteger(g)
                                   + " waits on a collective its peers never reach (an inconsistent plan)");
    progress(1.0);

    // Summaries (simulate.h: means over GPUs).
    const double n = static_cast<double>(std::max<std::size_t>(1, gpus.size()));
    for (const Gpu& g : gpus)
        out.stepSeconds = std::max(out.stepSeconds, g.sum.finish);
    for (std::uint32_t gi = 0; gi < gpus.size(); ++gi) {
        Gpu& g = gpus[gi];
        g.sum.idle = std::max(0.0, out.stepSeconds - g.sum.compute - g.sum.exposedTotal());
        out.computeSeconds += g.sum.compute / n;
        for (int s = 0; s < 4; ++s)
            out.exposedByStrategy[s] += g.sum.exposed[s] / n;
        out.idleSeconds += g.sum.idle / n;
        out.gpus.push_back(g.sum);
        if (g.timeline >= 0 && g.sum.finish < out.stepSeconds)
            record(gi, g.sum.finish, out.stepSeconds, Activity::Idle, Strategy::DP);
    }
    // Idle gaps inside the recorded timelines are implicit; fill them so the list is complete.
    for (GpuTimeline& tl : out.gpuTimelines) {
        std::vector<GpuInterval> full;
        double t = 0;
        for (const GpuInterval& iv : tl.intervals) {
            if (iv.start > t)
                full.push_back({t, iv.start, Activity::Idle, Strategy::DP});
            full.push_back(iv);
            t = std::max(t, iv.end);
        }
        if (t < out.stepSeconds)
            full.push_back({t, out.stepSeconds, Activity::Idle, Strategy::DP});
        tl.intervals = std::move(full);
    }
    for (int s = 0; s < 4; ++s)
        out.exposedCommSeconds += out.exposedByStrategy[s];
    out.commShare = out.stepSeconds > 0 ? out.exposedCommSeconds / out.stepSeconds : 0.0;
    if (opt.modelFlopsPerStep > 0 && opt.peakFlopsPerGpu > 0 && out.stepSeconds > 0)
        out.mfu = opt.modelFlopsPerStep / (n * opt.peakFlopsPerGpu * out.stepSeconds);

    // Figures.
    auto& f = out.figures;
    const std::string G = formatInteger(static_cast<std::int64_t>(gpus.size()));
    f.add({"sim.step_time_s", "Simulated step time", out.stepSeconds, "s",
           "last GPU's end of the step (compute, exposed communication, optimizer calls), flow-level simulation on "
               + formatInteger(static_cast<std::int64_t>(topo.links().size())) + " links = " + formatSeconds(out.stepSeconds),
           {}});
    f.add({"sim.compute_s", "Compute time per GPU (mean)", out.computeSeconds, "s",
           "Σ compute blocks per GPU, mean over " + G + " GPUs = " + formatSeconds(out.computeSeconds), {}});
    f.add({"sim.exposed_comm_s", "Exposed communication per GPU (mean)", out.exposedCommSeconds, "s",
           "time a GPU's compute waits on a collective, a pipeline receive or its gradient stream, mean over " + G
               + " GPUs = " + formatSeconds(out.exposedCommSeconds),
           {}});
    static const char* names[4] = {"dp", "pp", "tp", "ep"};
    static const char* labels[4] = {"DP", "PP", "TP", "EP"};
    for (int s = 0; s < 4; ++s)
        f.add({std::string("sim.exposed_") + names[s] + "_s", std::string("Exposed ") + labels[s] + " communication per GPU (mean)",
               out.exposedByStrategy[s], "s",
               std::string("waits on ") + labels[s] + " collectives, mean over " + G + " GPUs = "
                   + formatSeconds(out.exposedByStrategy[s]),
               {}});
    f.add({"sim.bubble_s", "Idle per GPU (mean; pipeline bubble)", out.idleSeconds, "s",
           "step − compute − exposed communication, mean over GPUs = " + formatSeconds(out.stepSeconds) + " − "
               + formatSeconds(out.computeSeconds) + " − " + formatSeconds(out.exposedCommSeconds) + " = "
               + formatSeconds(out.idleSeconds),
           {"sim.step_time_s", "sim.compute_s", "sim.exposed_comm_s"}});
    f.add({"sim.comm_share", "Communication share of the step", out.commShare, "",
           "exposed communication / step time = " + formatSeconds(out.exposedCommSeconds) + " / "
               + formatSeconds(out.stepSeconds) + " = " + formatCount(100 * out.commShare, 1) + " %",
           {"sim.exposed_comm_s", "sim.step_time_s"}});
    if (out.mfu > 0)
        f.add({"sim.mfu", "Model FLOPs utilization", out.mfu, "",
               "FLOPs per step / (GPUs · peak FLOP/s · step time) = " + formatCount(opt.modelFlopsPerStep, 0) + " / (" + G
                   + " · " + formatCount(opt.peakFlopsPerGpu, 0) + " · " + formatSeconds(out.stepSeconds) + ") = "
                   + formatCount(100 * out.mfu, 1) + " %",
               {"compute.flops_per_step", "compute.gpu_peak_flops", "sim.step_time_s"}});
    return std::move(out);
}

} // namespace

std::vector<double> maxMinFairRates(const std::vector<double>& linkCapacity, const std::vector<std::vector<LinkId>>& flowPaths)
{
    std::vector<std::uint32_t> ids(flowPaths.size());
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        ids[i] = i;
    std::vector<std::uint32_t> cnt(linkCapacity.size(), 0);
    std::vector<double> capLeft(linkCapacity.size(), 0.0), rate;
    std::vector<LinkId> touched;
    progressiveFill(ids, [&](std::uint32_t f) -> const std::vector<LinkId>& { return flowPaths[f]; }, linkCapacity, cnt,
                    capLeft, touched, rate);
    for (std::size_t i = 0; i < rate.size(); ++i)
        if (flowPaths[i].empty())
            rate[i] = kInf;
    return rate;
}

Result<StepSimulation> simulateStep(const Topology& topology, const parallel::PlanDerivation& plan,
                                    const collective::CollectiveDerivation& collectives, const SimulationOptions& options,
                                    const Progress& progress)
{
    if (progress.stopRequested())
        return errorAt("", "cancelled");
    Engine engine(topology, plan, collectives, options, progress, false);
    return engine.run();
}

Result<StepSimulation> simulateStepReference(const Topology& topology, const parallel::PlanDerivation& plan,
                                             const collective::CollectiveDerivation& collectives,
                                             const SimulationOptions& options, const Progress& progress)
{
    if (progress.stopRequested())
        return errorAt("", "cancelled");
    Engine engine(topology, plan, collectives, options, progress, true);
    return engine.run();
}

} // namespace tw::network
