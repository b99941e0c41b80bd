#include "simulate.h"
#include "simulate_p.h"

#include "ncclchannels.h"
#include "overhead.h"

#include "base/units.h"
#include "collective/schedule.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
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
    std::uint32_t index = 0; // creation order
    std::uint32_t ranks = 0, steps = 0;
    std::vector<collective::Transfer> transfers;
    std::vector<std::uint32_t> stepBegin;  // steps + 1
    std::vector<std::uint32_t> rankBegin;  // steps·ranks + 1, into rankList
    std::vector<std::uint32_t> rankList;   // transfer indices
};

using SpecKey = std::tuple<int, int, std::uint64_t, double, std::uint32_t, std::uint64_t, std::uint64_t, int>;
SpecKey specKey(const collective::ScheduleSpec& s, int layout)
{
    return {int(s.op), int(s.algorithm), s.ranks, s.bytes, s.root, s.ranksPerNode, s.pipelineChunks, layout};
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

// One link of a flow as the rate allocation sees it: without symmetry the path's links, weight 1; with
// it, the representative of each link's orbit weighted by how many flows of the flow's orbit cross that
// link, and the links no allocation can saturate (constrains = false: only their rate is summed).
struct PathEntry {
    LinkId link = 0;
    std::uint32_t weight = 1;
    bool constrains = true;
};

// A routed transfer of a schedule in a group: its path and Σ link latency (routed once, on first use).
struct PathInfo {
    const std::vector<LinkId>* path = nullptr;
    const std::vector<PathEntry>* entries = nullptr;
    double latency = 0;
};

// Per (group, schedule): the routed transfers and, under symmetry, each transfer's orbit representative.
struct GroupSched {
    std::vector<PathInfo> paths;
    std::vector<std::uint32_t> transferRep; // empty: every transfer is its own
    // Closed form (simulate.h "Private collectives"): −1 not decided, 0 no, 1 yes.
    int closedForm = -1;
    std::vector<double> duration;                   // per transfer: Σ latency + bytes / bottleneck capacity
    std::vector<double> lockstep;                   // per rank: done − arrival when all arrive together
    std::vector<std::pair<LinkId, double>> payload; // bytes per link of one instance
    // Under symmetry: payload folded onto the links' orbit representatives, each scaled by
    // order / |orbit(l)| / |Stab(group)| (filled at the first evaluation, `folded`).
    std::vector<std::pair<LinkId, double>> payloadRep;
    bool folded = false;
    std::vector<const std::vector<LinkId>*> route;  // per transfer: its path
    std::vector<double> latency, rate;              // per transfer: Σ latency, bottleneck capacity
};

struct Instance {
    Key key;
    const Sched* sched = nullptr;
    std::vector<PathInfo>* paths = nullptr; // per transfer, shared by every instance of (group, schedule)
    const std::vector<std::uint32_t>* transferRep = nullptr; // symmetry: transfer → its orbit's representative
    const std::vector<std::uint32_t>* rankRep = nullptr;     // symmetry: rank → its orbit's representative
    std::uint32_t rankCount = 0;            // ranks simulated (orbits of ranks)
    GroupSched* groupSched = nullptr;
    bool closedForm = false;                // private collective: computed when every rank has arrived
    std::uint32_t arrivals = 0;
    std::vector<double> arrivedAt;          // closed form: per rank
    std::vector<std::pair<double, std::uint32_t>> doneAt; // closed form: (time, rank), sorted
    std::uint32_t doneNext = 0;
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
    const std::vector<PathEntry>* entries = nullptr; // fast path
    double remaining = 0, rate = 0, finishAt = kInf;
    std::uint8_t strategy = 0;
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
    Strategy waitStrategy = Strategy::DP; // arriveAlone: the strategy of the call waited for
    Key aloneKey;                         // arriveAlone: the call waited for
    std::deque<StreamItem> stream;
    bool streamBusy = false;
    Strategy streamStrategy = Strategy::DP;
    GpuSummary sum;
    int timeline = -1;
};

struct Event {
    double time = 0;
    std::uint64_t seq = 0;
    std::uint32_t type = 0, id = 0; // 0 compute done (gpu), 1 flow activates (flow), 2 closed-form ranks done
                                    // (instance), 3 a private collective of arriveAlone done (gpu)
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
    std::vector<GpuTimeline> timelines;  // recorded representatives (gpus[g].timeline)
    std::vector<std::uint32_t> recorded; // the GPUs whose timelines are asked for, in order
    std::vector<double> capacity;        // per link, payload B/s
    std::map<SpecKey, std::unique_ptr<Sched>> scheds;
    std::unordered_map<std::uint64_t, GroupSched> pathCache; // (group << 32 | schedule index)
    std::vector<const Sched*> callSchedule; // per call without buckets: its schedule (once asked)
    std::unordered_map<Key, std::uint32_t, KeyHash> live; // key → instance slot
    std::vector<std::unique_ptr<Instance>> instances;
    std::vector<std::uint32_t> freeInstances, released; // released: reusable after the current event
    std::vector<double> cfReady, cfScratch;             // evaluateClosedForm's scratch
    std::vector<std::pair<double, double>> cfSpans;
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

    // Symmetry (simulate.h): shifts of mesh coordinates that map the step onto itself.
    struct Shift {
        int dim = 0;                       // 0 dp, 1 tp
        std::uint32_t step = 1, order = 1; // coordinate + step (mod size); order = size / step
        std::vector<std::uint32_t> group;  // per group used: its image
        std::vector<LinkId> link;          // per constraining link on a path: its image (kNone elsewhere)
    };
    bool reduced = false;
    std::uint32_t order = 1;               // |Γ|
    std::uint32_t dims[3] = {1, 1, 1};     // dp, pp, tp
    std::vector<std::uint32_t> gpuAt;      // (pp·dp + dp)·tp + tp → GPU
    std::vector<Shift> shifts;
    std::vector<std::uint32_t> gpuRep;     // per GPU: its orbit's representative (itself without symmetry)
    std::vector<std::uint32_t> groupCanon; // per group: its orbit's canonical group
    std::vector<std::vector<std::uint32_t>> rankCanon; // per group: rank → rank in the canonical group
    std::vector<std::vector<std::uint32_t>> rankRepOf; // per canonical group: rank → representative rank
    std::vector<std::uint32_t> rankOrbits, stabilizer; // per canonical group
    std::vector<LinkId> linkRep;           // per link: its orbit's representative (kNone: exempt or unused)
    std::vector<std::uint32_t> linkOrbitSize;
    std::vector<std::vector<LinkId>> linkOrbitMembers; // per representative link
    std::vector<char> exempt;              // links no allocation can saturate
    bool anyExempt = false;
    std::unordered_map<const std::vector<LinkId>*, std::unique_ptr<std::vector<PathEntry>>> entryCache;
    // Private links (closed form): per link 0 unused, 1 private to one GPU's side, 2 shared.
    std::vector<char> linkPrivacy;
    std::vector<std::uint64_t> linkOwner; // 2·GPU (its sending side) or 2·GPU + 1 (its receiving side)

    // Link accounting.
    std::vector<std::array<double, 4>> linkStrategyRate, strategySum;
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
    void analyzeSymmetry();
    bool verifyShift(Shift& shift, const std::vector<std::array<std::uint32_t, 3>>& triples,
                     const std::vector<std::vector<const Sched*>>& callScheds, std::string& why);
    std::uint32_t shiftGpu(std::uint32_t g, const Shift& shift, std::uint64_t times) const;
    std::vector<const Sched*> schedulesOf(std::uint32_t call);
    const std::vector<PathEntry>* entriesFor(const std::vector<LinkId>* path, std::uint32_t srcGpu, std::uint32_t dstGpu,
                                             std::uint32_t group);
    bool transferOrbits(std::uint32_t group, const Sched& sched, std::vector<std::uint32_t>& rep);
    void analyzePrivacy();
    bool decideClosedForm(std::uint32_t group, const Sched& sched, GroupSched& gs);
    void evaluateClosedForm(std::uint32_t slot);
    void closedFormDone(std::uint32_t slot);
    Status buildGpus();
    const Sched* schedule(const collective::ScheduleSpec& spec, std::uint32_t call);
    std::vector<ChannelRings> layouts;
    std::vector<int> callLayout; // per call: index into layouts, −1 for the call's own schedule
    void planChannels();
    Strategy strategyOf(std::uint32_t call) const { return plan.comm.calls[call].strategy; }

    void arrive(const Key& key, std::uint32_t rank, Role role, bool ppBoth);
    const Sched* callSched(std::uint32_t call);
    GroupSched& groupSchedFor(std::uint32_t group, const Sched& sched);
    void addFoldedPayload(GroupSched& gs, std::uint32_t group);
    bool arriveAlone(const Key& key, std::uint32_t rank, Role role);
    void aloneDone(std::uint32_t g);
    std::vector<signed char> aloneCall; // per call × group offset: −1 undecided, 0 no, 1 arriveAlone applies
    std::vector<std::uint32_t> callGroupBase; // per call: its first index into aloneCall
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
    void sampleLink(LinkId l, double sum, const std::array<double, 4>& strategy);
    double nextFinish();
    void advanceFast(double t);
    void drain();
    void fail(Error e)
    {
        if (!failure)
            failure = std::move(e);
    }
};

const Sched* Engine::schedule(const collective::ScheduleSpec& spec, std::uint32_t call)
{
    const int layout = call < callLayout.size() ? callLayout[call] : -1;
    auto [it, fresh] = scheds.try_emplace(specKey(spec, layout));
    if (fresh) {
        auto s = std::make_unique<Sched>();
        s->index = static_cast<std::uint32_t>(scheds.size() - 1);
        s->ranks = static_cast<std::uint32_t>(spec.ranks);
        std::vector<collective::Transfer> step;
        s->stepBegin.push_back(0);
        if (layout < 0) {
            collective::Schedule gen(spec);
            while (gen.next(step)) {
                s->transfers.insert(s->transfers.end(), step.begin(), step.end());
                s->stepBegin.push_back(static_cast<std::uint32_t>(s->transfers.size()));
            }
        } else {
            ChannelSchedule gen(spec, layouts[static_cast<std::size_t>(layout)]); // ncclchannels.h
            while (gen.next(step)) {
                s->transfers.insert(s->transfers.end(), step.begin(), step.end());
                s->stepBegin.push_back(static_cast<std::uint32_t>(s->transfers.size()));
            }
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
    linkStrategyRate.assign(topo.links().size(), {0, 0, 0, 0});
    strategySum.assign(topo.links().size(), {0, 0, 0, 0});
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

// NCCL's ring channels as flows (simulate.h "NCCL channels", ncclchannels.h): the rings of each call
// NCCL runs as a ring across nodes, with their NIC hints given to the router before any routing.
void Engine::planChannels()
{
    callLayout.assign(plan.comm.calls.size(), -1);
    if (!opt.communication)
        return;
    for (std::uint32_t call = 0; call < plan.comm.calls.size() && call < coll.calls.size(); ++call)
        if (auto rings = channelRings(topo, plan.comm, call, coll.calls[call], router)) {
            callLayout[call] = static_cast<int>(layouts.size());
            layouts.push_back(std::move(*rings));
        }
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

std::uint32_t Engine::shiftGpu(std::uint32_t g, const Shift& shift, std::uint64_t times) const
{
    parallel::MeshCoord c = plan.mesh[g];
    if (shift.dim == 0)
        c.dp = static_cast<std::uint32_t>((c.dp + times * shift.step) % dims[0]);
    else
        c.tp = static_cast<std::uint32_t>((c.tp + times * shift.step) % dims[2]);
    return gpuAt[(std::size_t(c.pp) * dims[0] + c.dp) * dims[2] + c.tp];
}

// The schedules a call's instances use: its own, or one per distinct bucket size (as arrive() cuts them).
std::vector<const Sched*> Engine::schedulesOf(std::uint32_t call)
{
    std::vector<const Sched*> out1;
    collective::ScheduleSpec spec = coll.calls[call].spec;
    if (!classes[call].end) {
        out1.push_back(schedule(spec, call));
        return out1;
    }
    const double M = spec.bytes;
    const double bucket = strategyOf(call) == Strategy::DP && plan.plan.bucketBytes > 0 ? plan.plan.bucketBytes : M;
    const std::uint32_t nb = M > 0 && bucket > 0 ? static_cast<std::uint32_t>(std::ceil(M / bucket)) : 1;
    for (std::uint32_t b = 0; b < nb; ++b) {
        spec.bytes = std::round(std::max(0.0, std::min(bucket, M - b * bucket)));
        const Sched* s = schedule(spec, call);
        if (std::find(out1.begin(), out1.end(), s) == out1.end())
            out1.push_back(s);
    }
    return out1;
}

// Whether `shift` maps the step onto itself (simulate.h "Symmetry"): groups onto groups of the same call,
// schedules invariant under the rank permutation, routed paths onto image paths link by link (apart from
// exempt links). Fills shift.group and shift.link.
bool Engine::verifyShift(Shift& shift, const std::vector<std::array<std::uint32_t, 3>>& triples,
                         const std::vector<std::vector<const Sched*>>& callScheds, std::string& why)
{
    const auto& groups = plan.comm.groups;
    shift.group.assign(groups.size(), kNone);
    std::map<std::vector<std::uint32_t>, std::vector<std::uint32_t>> bySet; // sorted members → groups
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (classes[i].role == Role::Skip)
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            std::vector<std::uint32_t> m = groups[gr].members;
            std::sort(m.begin(), m.end());
            auto& v = bySet[m];
            if (std::find(v.begin(), v.end(), gr) == v.end())
                v.push_back(gr);
        }
    }
    std::vector<std::uint32_t> pos(plan.mesh.size(), kNone);
    std::set<std::pair<const Sched*, std::vector<std::uint32_t>>> invariant;
    std::vector<std::uint32_t> image, rho;
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (classes[i].role == Role::Skip)
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            const auto& members = groups[gr].members;
            image.resize(members.size());
            for (std::size_t r = 0; r < members.size(); ++r)
                image[r] = shiftGpu(members[r], shift, 1);
            std::vector<std::uint32_t> sorted = image;
            std::sort(sorted.begin(), sorted.end());
            std::uint32_t target = kNone;
            if (auto hit = bySet.find(sorted); hit != bySet.end())
                for (std::uint32_t h : hit->second)
                    if (h >= c.firstGroup && h < c.firstGroup + c.groupCount) {
                        target = h;
                        break;
                    }
            if (target == kNone) {
                why = "the image of a group of \"" + c.what + "\" is not a group of that call";
                return false;
            }
            if (shift.group[gr] != kNone && shift.group[gr] != target) {
                why = "a group maps to different groups in different calls";
                return false;
            }
            shift.group[gr] = target;
            const auto& tm = groups[target].members;
            for (std::uint32_t r = 0; r < tm.size(); ++r)
                pos[tm[r]] = r;
            rho.resize(members.size());
            bool identity = true;
            for (std::size_t r = 0; r < members.size(); ++r) {
                rho[r] = pos[image[r]];
                identity = identity && rho[r] == r;
            }
            for (std::uint32_t g : tm)
                pos[g] = kNone;
            if (classes[i].role == Role::Pp && !identity) {
                why = "a pipeline pair's sender maps to a receiver";
                return false;
            }
            if (identity)
                continue;
            for (const Sched* s : callScheds[i]) {
                if (invariant.count({s, rho}))
                    continue;
                // Step by step, the multiset of (source, destination, bytes) under the rank permutation.
                std::vector<std::tuple<std::uint32_t, std::uint32_t, double>> a, b;
                for (std::uint32_t k = 0; k < s->steps; ++k) {
                    a.clear();
                    b.clear();
                    for (std::uint32_t t = s->stepBegin[k]; t < s->stepBegin[k + 1]; ++t) {
                        const collective::Transfer& tr = s->transfers[t];
                        a.emplace_back(tr.src, tr.dst, tr.bytes);
                        b.emplace_back(rho[tr.src], rho[tr.dst], tr.bytes);
                    }
                    std::sort(a.begin(), a.end());
                    std::sort(b.begin(), b.end());
                    if (a != b) {
                        why = "the schedule of \"" + c.what + "\" is not invariant under the ranks' permutation";
                        return false;
                    }
                }
                invariant.insert({s, rho});
            }
        }
    }
    // Paths: the image transfer's path, link by link on the constraining links.
    shift.link.assign(topo.links().size(), kNone);
    std::vector<LinkId> inverse(topo.links().size(), kNone), a, b;
    for (const auto& [gr, srcGpu, dstGpu] : triples) {
        auto p = router.route(srcGpu, dstGpu, gr);
        auto q = router.route(shiftGpu(srcGpu, shift, 1), shiftGpu(dstGpu, shift, 1), shift.group[gr]);
        if (!p.ok() || !q.ok()) {
            why = "a path cannot be routed";
            return false;
        }
        double la = 0, lb = 0;
        a.clear();
        b.clear();
        for (LinkId l : *p.value()) {
            la += topo.link(l).latency;
            if (!exempt[l])
                a.push_back(l);
        }
        for (LinkId l : *q.value()) {
            lb += topo.link(l).latency;
            if (!exempt[l])
                b.push_back(l);
        }
        if (la != lb || a.size() != b.size()) {
            why = "GPU " + formatInteger(srcGpu) + " → " + formatInteger(dstGpu) + " and its image take different paths";
            return false;
        }
        for (std::size_t k = 0; k < a.size(); ++k) {
            if (capacity[a[k]] != capacity[b[k]] || (shift.link[a[k]] != kNone && shift.link[a[k]] != b[k])
                || (inverse[b[k]] != kNone && inverse[b[k]] != a[k])) {
                why = "link " + topo.link(a[k]).id + " has no consistent image (the fabric or ECMP treats the GPUs differently)";
                return false;
            }
            shift.link[a[k]] = b[k];
            inverse[b[k]] = a[k];
        }
    }
    return true;
}

// Finds the symmetry group (simulate.h "Symmetry") and, when it is not trivial, the orbits of GPUs,
// groups, ranks and links the quotient simulation uses. Leaves `reduced` false (full simulation) and
// says why in out.reduction whenever a condition fails.
void Engine::analyzeSymmetry()
{
    const std::size_t N = plan.mesh.size();
    gpuRep.resize(N);
    std::iota(gpuRep.begin(), gpuRep.end(), 0u);
    if (reference) {
        out.reduction = "full simulation (reference engine)";
        return;
    }
    if (!opt.exploitSymmetry) {
        out.reduction = "full simulation (exploitSymmetry off)";
        return;
    }
    auto refuse = [&](const std::string& why) { out.reduction = "full simulation: " + why; };
    dims[0] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.dp));
    dims[1] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.pp));
    dims[2] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.tp));
    if (std::uint64_t{dims[0]} * dims[1] * dims[2] != N || N > topo.gpuCount())
        return refuse("the mesh is not dp × pp × tp GPUs of the topology");
    if (dims[0] == 1 && dims[2] == 1)
        return refuse("no data- or tensor-parallel dimension to shift");
    gpuAt.assign(N, kNone);
    for (std::uint32_t g = 0; g < N; ++g) {
        const parallel::MeshCoord& c = plan.mesh[g];
        if (c.dp >= dims[0] || c.pp >= dims[1] || c.tp >= dims[2])
            return refuse("a mesh coordinate is out of range");
        const std::size_t idx = (std::size_t(c.pp) * dims[0] + c.dp) * dims[2] + c.tp;
        if (gpuAt[idx] != kNone)
            return refuse("two GPUs share mesh coordinates");
        gpuAt[idx] = g;
    }
    // The calls' schedules, the partition condition and every (group, source GPU, destination GPU) routed.
    const auto& groups = plan.comm.groups;
    std::vector<std::vector<const Sched*>> callScheds(plan.comm.calls.size());
    std::vector<std::uint32_t> stamp(N, kNone);
    std::set<std::pair<std::uint32_t, const Sched*>> uses;
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (classes[i].role == Role::Skip)
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        if (std::uint64_t{c.firstGroup} + c.groupCount > groups.size())
            return refuse("a call's groups are outside the plan");
        callScheds[i] = schedulesOf(i);
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            if (groups[gr].members.size() != coll.calls[i].spec.ranks)
                return refuse("a group's size differs from its schedule's ranks");
            for (std::uint32_t m : groups[gr].members) {
                if (m >= N)
                    return refuse("a group member is outside the mesh");
                if (stamp[m] == i)
                    return refuse("a GPU is in two groups of one call");
                stamp[m] = i;
            }
            for (const Sched* s : callScheds[i])
                uses.insert({gr, s});
        }
    }
    std::vector<std::array<std::uint32_t, 3>> triples;
    for (const auto& [gr, s] : uses) {
        const auto& members = groups[gr].members;
        for (const collective::Transfer& t : s->transfers)
            triples.push_back({gr, members[t.src], members[t.dst]});
    }
    std::sort(triples.begin(), triples.end());
    triples.erase(std::unique(triples.begin(), triples.end()), triples.end());

    // Exempt links: decided by increasing capacity; a link is exempt when a set B of kept links of
    // strictly smaller capacity meets every path crossing it and Σ capacity(B) ≤ its own (B chosen
    // greedily, the link meeting most uncovered paths first). Equal capacities never justify each other,
    // so the decisions do not depend on link numbering (an automorphism maps exempt links to exempt links)
    // and a path's smallest links always stay.
    const std::size_t L = topo.links().size();
    std::vector<const std::vector<LinkId>*> paths;
    paths.reserve(triples.size());
    std::vector<std::uint32_t> begin(L + 1, 0);
    for (const auto& [gr, srcGpu, dstGpu] : triples) {
        auto p = router.route(srcGpu, dstGpu, gr);
        if (!p.ok())
            return refuse("a path cannot be routed");
        paths.push_back(p.value());
        for (LinkId l : *p.value())
            ++begin[l + 1];
    }
    for (std::size_t l = 0; l < L; ++l)
        begin[l + 1] += begin[l];
    std::vector<std::uint32_t> through(begin[L]), fill(begin.begin(), begin.end() - 1);
    for (std::uint32_t p = 0; p < paths.size(); ++p)
        for (LinkId l : *paths[p])
            through[fill[l]++] = p;
    std::vector<LinkId> byCapacity;
    for (LinkId l = 0; l < L; ++l)
        if (begin[l + 1] > begin[l])
            byCapacity.push_back(l);
    std::sort(byCapacity.begin(), byCapacity.end(),
              [&](LinkId x, LinkId y) { return capacity[x] != capacity[y] ? capacity[x] < capacity[y] : x < y; });
    exempt.assign(L, 0);
    std::vector<char> covered;
    std::unordered_map<LinkId, std::uint32_t> meets;
    for (LinkId l : byCapacity) {
        const std::uint32_t n = begin[l + 1] - begin[l];
        covered.assign(n, 0);
        std::uint32_t left = n;
        double sum = 0;
        while (left > 0 && sum <= capacity[l]) {
            meets.clear();
            for (std::uint32_t k = 0; k < n; ++k)
                if (!covered[k])
                    for (LinkId m : *paths[through[begin[l] + k]])
                        if (capacity[m] < capacity[l] && !exempt[m])
                            ++meets[m];
            LinkId best = kNone;
            for (const auto& [m, c] : meets)
                if (best == kNone || c > meets[best] || (c == meets[best] && (capacity[m] < capacity[best]
                                                                              || (capacity[m] == capacity[best] && m < best))))
                    best = m;
            if (best == kNone)
                break;
            sum += capacity[best];
            for (std::uint32_t k = 0; k < n; ++k)
                if (!covered[k]) {
                    const auto& path = *paths[through[begin[l] + k]];
                    if (std::find(path.begin(), path.end(), best) != path.end()) {
                        covered[k] = 1;
                        --left;
                    }
                }
        }
        exempt[l] = left == 0 && sum <= capacity[l];
        anyExempt = anyExempt || exempt[l];
    }

    // Generators: per dimension the smallest step that passes.
    std::string refusals;
    for (int dim : {0, 1}) {
        const std::uint32_t size = dims[dim == 0 ? 0 : 2];
        for (std::uint32_t step = 1; step < size; ++step) {
            if (size % step)
                continue;
            Shift sh;
            sh.dim = dim;
            sh.step = step;
            sh.order = size / step;
            std::string why;
            if (verifyShift(sh, triples, callScheds, why)) {
                shifts.push_back(std::move(sh));
                break;
            }
            refusals += std::string(refusals.empty() ? "" : "; ") + (dim == 0 ? "dp" : "tp") + " shift "
                        + formatInteger(step) + ": " + why;
        }
    }
    if (shifts.empty())
        return refuse(refusals);
    order = 1;
    for (const Shift& sh : shifts)
        order *= sh.order;

    // GPU orbits: the representative has coordinate mod step in each shifted dimension.
    auto exponent = [&](std::uint32_t g, const Shift& sh) {
        return (sh.dim == 0 ? plan.mesh[g].dp : plan.mesh[g].tp) / sh.step;
    };
    for (std::uint32_t g = 0; g < N; ++g) {
        std::uint32_t r = g;
        for (const Shift& sh : shifts)
            r = shiftGpu(r, sh, sh.order - exponent(g, sh));
        gpuRep[g] = r;
    }
    // Group orbits (breadth first from the first group of each), each group's element from its canonical
    // group, and its ranks in the canonical group's numbering.
    groupCanon.assign(groups.size(), kNone);
    rankCanon.assign(groups.size(), {});
    rankRepOf.assign(groups.size(), {});
    rankOrbits.assign(groups.size(), 0);
    stabilizer.assign(groups.size(), 0);
    std::vector<std::vector<std::uint32_t>> element(groups.size());
    std::vector<std::uint32_t> pos(N, kNone);
    for (std::uint32_t c = 0; c < groups.size(); ++c) {
        if (shifts[0].group[c] == kNone || groupCanon[c] != kNone)
            continue;
        groupCanon[c] = c;
        element[c].assign(shifts.size(), 0);
        std::deque<std::uint32_t> queue{c};
        while (!queue.empty()) {
            const std::uint32_t gr = queue.front();
            queue.pop_front();
            for (std::size_t i = 0; i < shifts.size(); ++i) {
                const std::uint32_t h = shifts[i].group[gr];
                if (h == kNone)
                    return refuse("a group's image is not mapped");
                if (groupCanon[h] != kNone)
                    continue;
                groupCanon[h] = c;
                element[h] = element[gr];
                element[h][i] = (element[h][i] + 1) % shifts[i].order;
                queue.push_back(h);
            }
        }
        // Ranks of the canonical group: orbits are the GPU orbits met (a GPU is in one group per call).
        const auto& cm = groups[c].members;
        std::unordered_map<std::uint32_t, std::uint32_t> first;
        std::vector<std::uint32_t> size(cm.size(), 0);
        rankRepOf[c].resize(cm.size());
        for (std::uint32_t r = 0; r < cm.size(); ++r) {
            auto [it, fresh] = first.try_emplace(gpuRep[cm[r]], r);
            rankRepOf[c][r] = it->second;
            rankOrbits[c] += fresh ? 1 : 0;
            ++size[it->second];
        }
        stabilizer[c] = size[0];
        for (std::uint32_t r = 0; r < cm.size(); ++r)
            if (rankRepOf[c][r] == r && size[r] != stabilizer[c])
                return refuse("a group's ranks fall in orbits of different sizes");
    }
    for (std::uint32_t gr = 0; gr < groups.size(); ++gr) {
        if (groupCanon[gr] == kNone)
            continue;
        const auto& cm = groups[groupCanon[gr]].members;
        for (std::uint32_t r = 0; r < cm.size(); ++r)
            pos[cm[r]] = r;
        const auto& members = groups[gr].members;
        rankCanon[gr].resize(members.size());
        for (std::uint32_t r = 0; r < members.size(); ++r) {
            std::uint32_t g = members[r];
            for (std::size_t i = 0; i < shifts.size(); ++i)
                g = shiftGpu(g, shifts[i], shifts[i].order - element[gr][i]);
            if (pos[g] == kNone)
                return refuse("a group's image is inconsistent");
            rankCanon[gr][r] = pos[g];
        }
        for (std::uint32_t g : cm)
            pos[g] = kNone;
    }
    // Link orbits under the shifts' link maps (union–find).
    std::vector<LinkId> parent(L);
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](LinkId x) {
        while (parent[x] != x)
            x = parent[x] = parent[parent[x]];
        return x;
    };
    for (const Shift& sh : shifts)
        for (LinkId l = 0; l < L; ++l)
            if (sh.link[l] != kNone) {
                const LinkId a = find(l), b = find(sh.link[l]);
                if (a != b)
                    parent[std::max(a, b)] = std::min(a, b);
            }
    linkRep.assign(L, kNone);
    linkOrbitSize.assign(L, 0);
    linkOrbitMembers.assign(L, {});
    for (LinkId l = 0; l < L; ++l)
        if (shifts[0].link[l] != kNone) {
            linkRep[l] = find(l);
            linkOrbitMembers[linkRep[l]].push_back(l);
        }
    for (LinkId l = 0; l < L; ++l)
        if (linkRep[l] != kNone) {
            linkOrbitSize[l] = static_cast<std::uint32_t>(linkOrbitMembers[linkRep[l]].size());
            if (order % linkOrbitSize[l])
                return refuse("a link orbit's size does not divide the group's order");
        }
    reduced = true;
    out.symmetryFactor = order;
    std::string what;
    for (const Shift& sh : shifts)
        what += std::string(what.empty() ? "" : " × ") + (sh.dim == 0 ? "dp" : "tp") + " shift "
                + formatInteger(sh.step) + " (" + formatInteger(sh.order) + ")";
    out.reduction = what + ": " + formatInteger(static_cast<std::int64_t>(order)) + " GPUs per orbit, "
                    + formatInteger(static_cast<std::int64_t>(N / order)) + " simulated"
                    + (refusals.empty() ? "" : " (refused: " + refusals + ")");
}

// The allocation's view of a path (PathEntry); cached per routed path.
const std::vector<PathEntry>* Engine::entriesFor(const std::vector<LinkId>* path, std::uint32_t srcGpu,
                                                 std::uint32_t dstGpu, std::uint32_t group)
{
    auto [it, fresh] = entryCache.try_emplace(path);
    if (!fresh)
        return it->second.get();
    auto e = std::make_unique<std::vector<PathEntry>>();
    if (!reduced) {
        for (LinkId l : *path)
            e->push_back({l, 1, true});
    } else {
        for (LinkId l : *path) {
            if (exempt[l])
                continue;
            const LinkId r = linkRep[l];
            const std::uint32_t w = order / linkOrbitSize[l];
            auto hit = std::find_if(e->begin(), e->end(), [r](const PathEntry& x) { return x.link == r; });
            if (hit != e->end())
                hit->weight += w;
            else
                e->push_back({r, w, true});
        }
        if (anyExempt) {
            // Exempt links are real links: count the flows of the orbit crossing each (every image routed).
            std::map<LinkId, std::uint32_t> count;
            std::vector<std::uint32_t> outer{group};
            for (std::uint32_t a = 1; a < shifts[0].order; ++a)
                outer.push_back(shifts[0].group[outer.back()]);
            for (std::uint32_t a = 0; a < shifts[0].order; ++a) {
                std::uint32_t gr = outer[a];
                const std::uint32_t inner = shifts.size() > 1 ? shifts[1].order : 1;
                for (std::uint32_t b = 0; b < inner; ++b) {
                    std::uint32_t s = shiftGpu(srcGpu, shifts[0], a), d = shiftGpu(dstGpu, shifts[0], a);
                    if (shifts.size() > 1) {
                        s = shiftGpu(s, shifts[1], b);
                        d = shiftGpu(d, shifts[1], b);
                        if (b > 0)
                            gr = shifts[1].group[gr];
                    }
                    auto p = router.route(s, d, gr);
                    if (!p.ok()) {
                        fail(p.error());
                        break;
                    }
                    for (LinkId l : *p.value())
                        if (exempt[l])
                            ++count[l];
                }
            }
            for (const auto& [l, n] : count)
                e->push_back({l, n, false});
        }
    }
    it->second = std::move(e);
    return it->second.get();
}

// Under symmetry: each transfer's orbit representative under the canonical group's stabilizer (the
// shifts that map the group onto itself, as rank permutations). False when the schedule is not invariant.
bool Engine::transferOrbits(std::uint32_t group, const Sched& sched, std::vector<std::uint32_t>& rep)
{
    const auto& members = plan.comm.groups[group].members;
    std::unordered_map<std::uint32_t, std::uint32_t> pos;
    for (std::uint32_t r = 0; r < members.size(); ++r)
        pos[members[r]] = r;
    // The stabilizer: for each rank in rank 0's orbit, the element taking member 0 to it.
    std::vector<std::vector<std::uint32_t>> perms;
    for (std::uint32_t r = 1; r < members.size(); ++r) {
        if (rankRepOf[group][r] != 0)
            continue;
        std::vector<std::uint32_t> rho(members.size());
        for (std::uint32_t q = 0; q < members.size(); ++q) {
            std::uint32_t g = members[q];
            for (const Shift& sh : shifts) {
                auto e = [&](std::uint32_t x) { return (sh.dim == 0 ? plan.mesh[x].dp : plan.mesh[x].tp) / sh.step; };
                g = shiftGpu(g, sh, (e(members[r]) + sh.order - e(members[0])) % sh.order);
            }
            auto hit = pos.find(g);
            if (hit == pos.end())
                return false;
            rho[q] = hit->second;
        }
        perms.push_back(std::move(rho));
    }
    rep.assign(sched.transfers.size(), kNone);
    std::unordered_multimap<std::uint64_t, std::uint32_t> at;
    for (std::uint32_t k = 0; k < sched.steps; ++k) {
        at.clear();
        for (std::uint32_t t = sched.stepBegin[k]; t < sched.stepBegin[k + 1]; ++t)
            at.emplace((std::uint64_t{sched.transfers[t].src} << 32) | sched.transfers[t].dst, t);
        for (std::uint32_t t = sched.stepBegin[k]; t < sched.stepBegin[k + 1]; ++t) {
            if (rep[t] != kNone)
                continue;
            rep[t] = t;
            const collective::Transfer& tr = sched.transfers[t];
            for (const auto& rho : perms) {
                const std::uint64_t key = (std::uint64_t{rho[tr.src]} << 32) | rho[tr.dst];
                bool found = false;
                for (auto [i, e] = at.equal_range(key); i != e; ++i)
                    if (rep[i->second] == kNone && sched.transfers[i->second].bytes == tr.bytes) {
                        rep[i->second] = t;
                        found = true;
                        break;
                    }
                if (!found)
                    return false;
            }
        }
    }
    return true;
}

// Private links (simulate.h "Private collectives"): a link is private when every potential flow crossing
// it belongs to a blocking call and has it as the first link of its path from one GPU (that GPU's sending
// side) or as the last link into one GPU (its receiving side), and no schedule step has that GPU send
// (receive) two transfers through it.
void Engine::analyzePrivacy()
{
    const std::size_t L = topo.links().size();
    const auto& groups = plan.comm.groups;
    std::set<std::tuple<std::uint32_t, const Sched*, bool>> uses;
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (classes[i].role == Role::Skip)
            continue;
        const CollectiveCall& c = plan.comm.calls[i];
        if (std::uint64_t{c.firstGroup} + c.groupCount > groups.size())
            return;
        const bool blocking = classes[i].role == Role::Blocking || classes[i].role == Role::Optimizer;
        const auto scheds = schedulesOf(i);
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            if (groups[gr].members.size() != coll.calls[i].spec.ranks)
                return;
            for (const Sched* sc : scheds)
                uses.insert({gr, sc, blocking});
        }
    }
    linkPrivacy.assign(L, 0);
    linkOwner.assign(L, 0);
    std::vector<LinkId> seenFirst, seenLast;
    for (const auto& [gr, sc, blocking] : uses) {
        const auto& members = groups[gr].members;
        for (std::uint32_t k = 0; k < sc->steps; ++k) {
            seenFirst.clear();
            seenLast.clear();
            for (std::uint32_t t = sc->stepBegin[k]; t < sc->stepBegin[k + 1]; ++t) {
                const collective::Transfer& tr = sc->transfers[t];
                const std::uint32_t src = members[tr.src], dst = members[tr.dst];
                auto p = router.route(src, dst, gr);
                if (!p.ok())
                    continue; // the simulation reports it
                const std::vector<LinkId>& path = *p.value();
                for (std::size_t i = 0; i < path.size(); ++i) {
                    const LinkId l = path[i];
                    const bool own = path.size() > 1 && (i == 0 || i + 1 == path.size());
                    const std::uint64_t key = i == 0 ? 2 * std::uint64_t{src} : 2 * std::uint64_t{dst} + 1;
                    if (!blocking || !own)
                        linkPrivacy[l] = 2;
                    else if (linkPrivacy[l] == 0) {
                        linkPrivacy[l] = 1;
                        linkOwner[l] = key;
                    } else if (linkOwner[l] != key)
                        linkPrivacy[l] = 2;
                }
                if (path.size() > 1) {
                    for (auto [l, seen] : {std::pair{path.front(), &seenFirst}, std::pair{path.back(), &seenLast}}) {
                        if (std::find(seen->begin(), seen->end(), l) != seen->end())
                            linkPrivacy[l] = 2;
                        seen->push_back(l);
                    }
                }
            }
        }
    }
}

namespace {

// Per-rank step recurrence of a collective whose flows run alone: a transfer of step k starts when both
// ends have finished their steps < k and takes its duration; ready[r] becomes rank r's done time.
void stepRecurrence(const Sched& s, const std::vector<double>& duration, std::vector<double>& ready,
                    std::vector<double>& scratch, std::vector<std::pair<double, double>>* spans = nullptr)
{
    for (std::uint32_t k = 0; k < s.steps; ++k) {
        scratch = ready;
        for (std::uint32_t t = s.stepBegin[k]; t < s.stepBegin[k + 1]; ++t) {
            const collective::Transfer& tr = s.transfers[t];
            const double start = std::max(ready[tr.src], ready[tr.dst]);
            const double end = start + duration[t];
            scratch[tr.src] = std::max(scratch[tr.src], end);
            scratch[tr.dst] = std::max(scratch[tr.dst], end);
            if (spans)
                (*spans)[t] = {start, end};
        }
        ready.swap(scratch);
    }
}

} // namespace

// Whether instances of this (group, schedule) can be computed in closed form: every link of every
// transfer private, and every rank's end depending on every rank's arrival (so no rank is done before
// the last one arrives, when the closed form is evaluated).
bool Engine::decideClosedForm(std::uint32_t group, const Sched& sched, GroupSched& gs)
{
    if (gs.closedForm >= 0)
        return gs.closedForm == 1;
    gs.closedForm = 0;
    if (sched.ranks > 64 || sched.transfers.empty())
        return false;
    const auto& members = plan.comm.groups[group].members;
    gs.duration.assign(sched.transfers.size(), 0.0);
    gs.route.assign(sched.transfers.size(), nullptr);
    gs.latency.assign(sched.transfers.size(), 0.0);
    gs.rate.assign(sched.transfers.size(), 0.0);
    std::map<LinkId, double> payload;
    for (std::uint32_t t = 0; t < sched.transfers.size(); ++t) {
        const collective::Transfer& tr = sched.transfers[t];
        auto p = router.route(members[tr.src], members[tr.dst], group);
        if (!p.ok())
            return false;
        double latency = 0, bottleneck = kInf;
        for (LinkId l : *p.value()) {
            if (linkPrivacy[l] != 1 || !(capacity[l] > 0) || (reduced && (exempt[l] || linkRep[l] == kNone)))
                return false;
            latency += topo.link(l).latency;
            bottleneck = std::min(bottleneck, capacity[l]);
        }
        gs.route[t] = p.value();
        gs.latency[t] = latency;
        gs.rate[t] = bottleneck;
        if (!opt.communication)
            continue;
        const bool sends = tr.bytes > 0 && !p.value()->empty();
        gs.duration[t] = latency + (sends ? tr.bytes / bottleneck : 0.0);
        if (sends)
            for (LinkId l : *p.value())
                payload[l] += tr.bytes;
    }
    std::vector<double> ready, scratch, zero(sched.transfers.size(), 0.0);
    for (std::uint32_t j = 0; j < sched.ranks; ++j) {
        ready.assign(sched.ranks, 0.0);
        ready[j] = 1;
        stepRecurrence(sched, zero, ready, scratch);
        if (*std::min_element(ready.begin(), ready.end()) < 1)
            return false;
    }
    ready.assign(sched.ranks, 0.0);
    stepRecurrence(sched, gs.duration, ready, scratch);
    gs.lockstep = ready;
    gs.payload.assign(payload.begin(), payload.end());
    gs.closedForm = 1;
    return true;
}

// Every rank of a private collective has arrived: each rank's done time from the step recurrence (a
// shift of the cached one when all arrived together), the payload and, when recorded, the link samples.
void Engine::evaluateClosedForm(std::uint32_t slot)
{
    Instance& inst = *instances[slot];
    const GroupSched& gs = *inst.groupSched;
    const Sched& s = *inst.sched;
    if (inst.rankRep) // symmetry: every rank arrived with its orbit's representative
        for (std::uint32_t r = 0; r < s.ranks; ++r)
            inst.arrivedAt[r] = inst.arrivedAt[(*inst.rankRep)[r]];
    const double first = inst.arrivedAt[0];
    const bool together = std::all_of(inst.arrivedAt.begin(), inst.arrivedAt.end(), [first](double a) { return a == first; });
    std::vector<double>& ready = cfReady;
    ready.assign(inst.arrivedAt.begin(), inst.arrivedAt.end());
    std::vector<std::pair<double, double>>& spans = cfSpans;
    const bool sample = opt.recordLinks && opt.communication && !out.linkTimelineTruncated;
    if (sample)
        spans.assign(s.transfers.size(), {0.0, 0.0});
    if (together && !sample) {
        for (std::uint32_t r = 0; r < s.ranks; ++r)
            ready[r] = first + gs.lockstep[r];
    } else {
        stepRecurrence(s, gs.duration, ready, cfScratch, sample ? &spans : nullptr);
    }
    inst.doneAt.clear();
    for (std::uint32_t r = 0; r < s.ranks; ++r)
        if (!inst.rankRep || (*inst.rankRep)[r] == r)
            inst.doneAt.push_back({std::max(ready[r], now), r});
    std::sort(inst.doneAt.begin(), inst.doneAt.end());
    inst.doneNext = 0;
    if (!reduced) {
        out.flows += s.transfers.size();
        ++out.closedFormInstances;
        if (opt.communication)
            for (const auto& [l, bytes] : gs.payload)
                out.linkPayloadBytes[l] += bytes;
    } else {
        // The instance stands for order / |Stab| instances; a representative link for its orbit: it gets
        // the bytes of every link l of this instance in its orbit, times |Stab(l)| / |Stab(group)|.
        const double instancesInOrbit = double(order) / stabilizer[inst.key.group];
        out.flows += static_cast<std::uint64_t>(s.transfers.size() * instancesInOrbit);
        out.closedFormInstances += static_cast<std::uint64_t>(instancesInOrbit);
        if (opt.communication)
            addFoldedPayload(*inst.groupSched, inst.key.group);
    }
    if (sample) {
        // Each flow alone on its links: the bottleneck rate from the end of its latency to its end.
        const std::size_t strategy = sIdx(inst.strategy);
        const double saved = now;
        for (std::uint32_t t = 0; t < s.transfers.size(); ++t) {
            if (!(s.transfers[t].bytes > 0))
                continue;
            const double latency = gs.latency[t], bottleneck = gs.rate[t];
            for (LinkId l : *gs.route[t]) {
                for (auto [time, rate] : {std::pair{spans[t].first + latency, bottleneck}, std::pair{spans[t].second, 0.0}}) {
                    now = time;
                    linkRate[l] = rate;
                    linkStrategyRate[l] = {0, 0, 0, 0};
                    linkStrategyRate[l][strategy] = rate;
                    recordSample(l);
                }
            }
        }
        now = saved;
    }
    events.push({inst.doneAt.front().first, seq++, 2, slot});
}

void Engine::closedFormDone(std::uint32_t slot)
{
    Instance& inst = *instances[slot];
    while (inst.doneNext < inst.doneAt.size() && inst.doneAt[inst.doneNext].first <= now)
        rankDone(inst, inst.doneAt[inst.doneNext++].second);
    if (inst.doneNext < inst.doneAt.size())
        events.push({inst.doneAt[inst.doneNext].first, seq++, 2, slot});
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

    // Under symmetry only representatives run, their participations named in canonical groups and ranks.
    if (reduced)
        for (std::size_t g = 0; g < gpus.size(); ++g) {
            if (gpuRep[g] != g) {
                parts[g].clear();
                continue;
            }
            for (Part& pt : parts[g]) {
                const std::uint32_t c = groupCanon[pt.group];
                pt.rank = rankRepOf[c][rankCanon[pt.group][pt.rank]];
                pt.group = c;
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
        if (gpuRep[g] != g)
            continue;
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
    std::vector<char> seen(gpus.size(), 0);
    for (std::uint32_t g : rec)
        if (g < gpus.size() && !seen[g]) {
            seen[g] = 1;
            recorded.push_back(g);
            Gpu& r = gpus[gpuRep[g]];
            if (r.timeline < 0) {
                r.timeline = static_cast<int>(timelines.size());
                timelines.push_back({gpuRep[g], {}});
            }
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
    auto& iv = timelines[std::size_t(gpu.timeline)].intervals;
    if (!iv.empty() && iv.back().activity == a && iv.back().strategy == s && iv.back().end == start)
        iv.back().end = end;
    else
        iv.push_back({start, end, a, s});
}

// Under symmetry, one instance of a private collective stands for order / |Stab(group)| instances: each
// link l of its payload adds bytes · order / |orbit(l)| / |Stab(group)| to l's orbit representative
// (folded once per (group, schedule)).
void Engine::addFoldedPayload(GroupSched& gs, std::uint32_t group)
{
    if (!gs.folded) {
        std::map<LinkId, double> byRep;
        for (const auto& [l, bytes] : gs.payload)
            byRep[linkRep[l]] += bytes * (double(order) / linkOrbitSize[l]) / stabilizer[group];
        gs.payloadRep.assign(byRep.begin(), byRep.end());
        gs.folded = true;
    }
    for (const auto& [rep, bytes] : gs.payloadRep)
        out.linkPayloadBytes[rep] += bytes;
}

// The schedule of a call without buckets (generated on first use).
const Sched* Engine::callSched(std::uint32_t call)
{
    if (callSchedule.size() <= call)
        callSchedule.resize(plan.comm.calls.size(), nullptr);
    if (!callSchedule[call])
        callSchedule[call] = schedule(coll.calls[call].spec, call);
    return callSchedule[call];
}

// The routed transfers of (group, schedule), created on first use (with the transfers' orbits under symmetry).
GroupSched& Engine::groupSchedFor(std::uint32_t group, const Sched& sched)
{
    auto [pc, added] = pathCache.try_emplace((std::uint64_t{group} << 32) | sched.index);
    if (added) {
        pc->second.paths.resize(sched.transfers.size());
        if (reduced && stabilizer[group] > 1 && !transferOrbits(group, sched, pc->second.transferRep))
            fail(errorAt("", "internal: a schedule is not invariant under the symmetry it passed"));
    }
    return pc->second;
}

// The common case of a reduced simulation, without an Instance: a blocking call of a private collective
// (simulate.h "Private collectives") whose group has one simulated rank (every rank in one orbit, as a
// TP group under the tp shift). Its arrival completes it, every rank arriving together with the
// representative, so the closed form reduces to the rank's lockstep time; the counts and payload are
// those evaluateClosedForm adds and the GPU's wait ends as rankDone ends it (exposed communication from
// the arrival: no peer arrives later). False (nothing done) when the call does not qualify.
bool Engine::arriveAlone(const Key& key, std::uint32_t rank, Role role)
{
    if (!reduced || (role != Role::Blocking && role != Role::Optimizer) || classes[key.call].end || linkPrivacy.empty()
        || (opt.recordLinks && opt.communication && !out.linkTimelineTruncated) || rankOrbits[key.group] != 1)
        return false;
    const CollectiveCall& c = plan.comm.calls[key.call];
    if (aloneCall.empty()) {
        callGroupBase.assign(plan.comm.calls.size() + 1, 0);
        for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i)
            callGroupBase[i + 1] = callGroupBase[i] + plan.comm.calls[i].groupCount;
        aloneCall.assign(callGroupBase.back(), -1);
    }
    signed char& decided = aloneCall[callGroupBase[key.call] + (key.group - c.firstGroup)];
    if (decided == 0)
        return false;
    const Sched& sched = *callSched(key.call);
    GroupSched& gs = groupSchedFor(key.group, sched);
    if (decided < 0)
        decided = decideClosedForm(key.group, sched, gs) ? 1 : 0;
    if (decided == 0 || failure)
        return false;
    const std::uint32_t rep = rankRepOf[key.group][rank];
    const std::uint32_t g = gpuRep[plan.comm.groups[key.group].members[rep]];
    const double instancesInOrbit = double(order) / stabilizer[key.group];
    out.collectiveInstances += order / stabilizer[key.group];
    out.flows += static_cast<std::uint64_t>(sched.transfers.size() * instancesInOrbit);
    out.closedFormInstances += static_cast<std::uint64_t>(instancesInOrbit);
    if (opt.communication)
        addFoldedPayload(gs, key.group);
    Gpu& gpu = gpus[g];
    gpu.waitStrategy = strategyOf(key.call);
    gpu.aloneKey = key;
    events.push({std::max(now + gs.lockstep[rep], now), seq++, 3, g});
    return true;
}

// arriveAlone's collective is done: the GPU's wait ends (rankDone's split, every peer in at the arrival).
void Engine::aloneDone(std::uint32_t g)
{
    Gpu& gpu = gpus[g];
    if (gpu.wait == Wait::Blocking && gpu.waitKey == gpu.aloneKey) {
        const double from = gpu.waitStart;
        record(g, from, from, Activity::Idle, gpu.waitStrategy);
        record(g, from, now, Activity::Communication, gpu.waitStrategy);
        gpu.wait = Wait::Running;
        runnable.push_back(g);
    } else {
        gpu.blockingDone = true;
    }
}

void Engine::arrive(const Key& key, std::uint32_t rank, Role role, bool ppBoth)
{
    if (!ppBoth && arriveAlone(key, rank, role))
        return;
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
        inst.key = key;
        if (classes[key.call].end) {
            collective::ScheduleSpec spec = coll.calls[key.call].spec;
            const double M = spec.bytes;
            const double bucket = strategyOf(key.call) == Strategy::DP && plan.plan.bucketBytes > 0 ? plan.plan.bucketBytes : M;
            spec.bytes = std::round(std::max(0.0, std::min(bucket, M - key.bucket * bucket)));
            inst.sched = schedule(spec, key.call);
        } else {
            inst.sched = callSched(key.call);
        }
        {
            GroupSched& gs = groupSchedFor(key.group, *inst.sched);
            inst.paths = &gs.paths;
            inst.transferRep = gs.transferRep.empty() ? nullptr : &gs.transferRep;
            inst.groupSched = &gs;
        }
        // Under symmetry the retroactive link samples could interleave on a link orbit: closed form only
        // without them.
        const bool samplesWanted = opt.recordLinks && opt.communication && !out.linkTimelineTruncated;
        inst.closedForm = !(reduced && samplesWanted) && !linkPrivacy.empty() && (role == Role::Blocking || role == Role::Optimizer)
                          && decideClosedForm(key.group, *inst.sched, *inst.groupSched);
        inst.arrivals = 0;
        inst.doneNext = 0;
        inst.doneAt.clear();
        if (inst.closedForm)
            inst.arrivedAt.assign(inst.sched->ranks, 0.0);
        inst.rankRep = reduced ? &rankRepOf[key.group] : nullptr;
        inst.rankCount = reduced ? rankOrbits[key.group] : inst.sched->ranks;
        inst.members = &plan.comm.groups[key.group].members;
        inst.role = role;
        inst.strategy = strategyOf(key.call);
        inst.done.assign(inst.sched->ranks, -1);
        if (!inst.closedForm) { // a closed-form instance never enters a step
            inst.outstanding.assign(inst.sched->ranks, 0);
            inst.started.assign(inst.sched->transfers.size(), 0);
        }
        inst.ranksDone = 0;
        inst.created = now;
        inst.lastArrival = now;
        out.collectiveInstances += reduced ? order / stabilizer[key.group] : 1;
        if (ppBoth) {
            for (std::uint32_t r = 0; r < inst.sched->ranks; ++r)
                if (r != rank && (!inst.rankRep || (*inst.rankRep)[r] == r))
                    inst.done[r] = 0;
        }
    }
    const std::uint32_t slot = it->second;
    Instance& inst = *instances[slot];
    if (inst.done[rank] >= 0)
        return; // already arrived (a pre-posted receive)
    inst.done[rank] = 0;
    inst.lastArrival = now;
    if (inst.closedForm) {
        inst.arrivedAt[rank] = now;
        if (++inst.arrivals == inst.rankCount)
            evaluateClosedForm(slot);
        return;
    }
    if (ppBoth) // the pre-posted ranks enter step 0 too
        for (std::uint32_t r = 0; r < inst.sched->ranks; ++r)
            if (r != rank && inst.done[r] == 0 && inst.outstanding[r] == 0 && (!inst.rankRep || (*inst.rankRep)[r] == r))
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
            std::uint32_t t = s.rankList[i];
            const collective::Transfer& tr = s.transfers[t];
            std::uint32_t other = tr.src == rank ? tr.dst : tr.src;
            if (inst.rankRep) { // symmetry: the orbit's representatives stand for the transfer and the peer
                other = (*inst.rankRep)[other];
                if (inst.transferRep)
                    t = (*inst.transferRep)[t];
            }
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
    out.flows += reduced ? order : 1;
    if (++out.simulatedFlows > opt.maxFlows)
        fail(errorAt("", "the step has more than " + formatInteger(static_cast<std::int64_t>(opt.maxFlows))
                             + " flows to simulate"));
    Flow& flow = flows[f];
    const std::uint32_t gen = flow.gen;
    flow = Flow{};
    flow.gen = gen + 1;
    flow.instance = slot;
    flow.transfer = t;
    flow.remaining = tr.bytes;
    flow.strategy = static_cast<std::uint8_t>(inst.strategy);
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
        if (!reference)
            cached.entries = entriesFor(cached.path, members[tr.src], members[tr.dst], inst.key.group);
    }
    flow.path = cached.path;
    flow.entries = cached.entries;
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
        if (in.ranksDone == in.rankCount)
            return; // released meanwhile (cannot happen before both ends are done)
        if (in.rankRep)
            r = (*in.rankRep)[r];
        if (--in.outstanding[r] == 0) {
            ++in.done[r];
            enterStep(slot, r);
        }
    }
}

void Engine::rankDone(Instance& inst, std::uint32_t rank)
{
    const std::uint32_t g = gpuRep[(*inst.members)[rank]];
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
    if (++inst.ranksDone == inst.rankCount) {
        const auto it = live.find(key);
        released.push_back(it->second);
        live.erase(it);
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
    for (LinkId l : busyLinks) {
        capLeft[l] = 0; // reuse as the new sum
        strategySum[l] = {0, 0, 0, 0};
    }
    for (LinkId l : touched) {
        capLeft[l] = 0;
        strategySum[l] = {0, 0, 0, 0};
    }
    for (std::uint32_t f : active) {
        Flow& fl = flows[f];
        fl.finishAt = fl.rate > 0 ? now + fl.remaining / fl.rate : kInf;
        for (LinkId l : *fl.path) {
            capLeft[l] += fl.rate;
            strategySum[l][fl.strategy] += fl.rate;
        }
    }
    auto sample = [&](LinkId l) {
        if (capLeft[l] == linkRate[l] && strategySum[l] == linkStrategyRate[l])
            return;
        linkRate[l] = capLeft[l];
        linkStrategyRate[l] = strategySum[l];
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
    const std::vector<PathEntry>& path = *fl.entries;
    auto& pos = flowLinkPos[f];
    pos.resize(path.size());
    for (std::uint32_t i = 0; i < path.size(); ++i) {
        const LinkId l = path[i].link;
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
    const std::vector<PathEntry>& path = *fl.entries;
    const auto& pos = flowLinkPos[f];
    for (std::uint32_t k = 0; k < path.size(); ++k) {
        const LinkId l = path[k].link;
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
        for (const PathEntry& e : *flows[ids[i]].entries)
            if (e.constrains) {
                if (cnt[e.link] == 0) {
                    touched.push_back(e.link);
                    capLeft[e.link] = capacity[e.link];
                }
                cnt[e.link] += e.weight;
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
            for (const PathEntry& e : *flows[ids[i]].entries)
                if (e.constrains && std::max(0.0, capLeft[e.link]) / cnt[e.link] <= share * (1 + 1e-12)) {
                    bottleneck = true;
                    break;
                }
            (bottleneck ? fillFrozen : fillKeep).push_back(i);
        }
        for (std::uint32_t i : fillFrozen) {
            newRate[i] = share;
            for (const PathEntry& e : *flows[ids[i]].entries)
                if (e.constrains) {
                    capLeft[e.link] -= share * e.weight;
                    cnt[e.link] -= e.weight;
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

void Engine::sampleLink(LinkId l, double sum, const std::array<double, 4>& strategy)
{
    if (sum == linkRate[l] && strategy == linkStrategyRate[l])
        return;
    if (now > linkSince[l] && linkRate[l] > 0)
        out.linkPayloadBytes[l] += linkRate[l] * (now - linkSince[l]);
    linkSince[l] = now;
    linkRate[l] = sum;
    linkStrategyRate[l] = strategy;
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
    const auto& by = linkStrategyRate[l];
    if (s.empty() || s.back().time != now) {
        s.emplace_back();
        ++samples;
    }
    s.back() = {now, linkRate[l], {by[0], by[1], by[2], by[3]}};
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
            for (const PathEntry& x : *flows[e.flow].entries)
                if (!linkVisited[x.link]) {
                    linkVisited[x.link] = 1;
                    compLinks.push_back(x.link);
                }
        }
    for (std::uint32_t f : compFlows) {
        Flow& fl = flows[f];
        if (now > fl.upd)
            fl.remaining = std::max(0.0, fl.remaining - fl.rate * (now - fl.upd));
        fl.upd = now;
    }
    fillComponent();
    for (LinkId l : compLinks) {
        capLeft[l] = 0; // reuse as the new sum
        strategySum[l] = {0, 0, 0, 0};
    }
    for (std::size_t i = 0; i < compFlows.size(); ++i) {
        const std::uint32_t f = compFlows[i];
        Flow& fl = flows[f];
        if (fl.rate != newRate[i] || fl.finishAt == kInf) { // an unchanged rate keeps its finish (and heap entry)
            fl.rate = newRate[i];
            fl.finishAt = fl.rate > 0 ? now + fl.remaining / fl.rate : kInf;
            ++fl.gen;
            if (fl.finishAt < kInf)
                finishQueue.push({fl.finishAt, f, fl.gen});
        }
        for (const PathEntry& x : *fl.entries) {
            capLeft[x.link] += fl.rate * x.weight;
            strategySum[x.link][fl.strategy] += fl.rate * x.weight;
        }
        flowMark[f] = 0;
    }
    for (LinkId l : compLinks) {
        sampleLink(l, capLeft[l], strategySum[l]);
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
    planChannels();
    classify();
    analyzeSymmetry();
    if (!reference && opt.collapsePrivateCollectives)
        analyzePrivacy();
    if (Status s = buildGpus(); !s.ok())
        return s.error();
    if (failure)
        return *failure;
    for (std::uint32_t g = 0; g < gpus.size(); ++g)
        if (gpuRep[g] == g) {
            runnable.push_back(g);
            ++out.simulatedGpus;
        }
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
            } else if (e.type == 2) {
                closedFormDone(e.id);
            } else if (e.type == 3) {
                aloneDone(e.id);
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
            progress(std::min(0.99, doneBlocks / std::max(1.0, totalBlocks * static_cast<double>(out.simulatedGpus) / P)));
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
        if (gpuRep[g] == g && gpus[g].wait != Wait::Done)
            return errorAt("", "the simulation stalled: GPU " + formatInteger(g)
                                   + " waits on a collective its peers never reach (an inconsistent plan)");
    progress(1.0);

    // Summaries (simulate.h: means over GPUs).
    const double n = static_cast<double>(std::max<std::size_t>(1, gpus.size()));
    for (std::uint32_t gi = 0; gi < gpus.size(); ++gi)
        if (gpuRep[gi] == gi)
            out.stepSeconds = std::max(out.stepSeconds, gpus[gi].sum.finish);
    for (std::uint32_t gi = 0; gi < gpus.size(); ++gi) {
        Gpu& g = gpus[gi];
        if (gpuRep[gi] != gi)
            continue;
        g.sum.idle = std::max(0.0, out.stepSeconds - g.sum.compute - g.sum.exposedTotal());
        if (g.timeline >= 0 && g.sum.finish < out.stepSeconds)
            record(gi, g.sum.finish, out.stepSeconds, Activity::Idle, Strategy::DP);
    }
    // Every GPU (a representative's copy under symmetry).
    out.gpus.reserve(gpus.size());
    for (std::uint32_t gi = 0; gi < gpus.size(); ++gi) {
        const GpuSummary& g = gpus[gpuRep[gi]].sum;
        out.computeSeconds += g.compute / n;
        for (int s = 0; s < 4; ++s)
            out.exposedByStrategy[s] += g.exposed[s] / n;
        out.idleSeconds += g.idle / n;
        out.gpus.push_back(g);
    }
    // Idle gaps inside the recorded timelines are implicit; fill them so the list is complete.
    for (GpuTimeline& tl : timelines) {
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
    if (!reduced) {
        out.gpuTimelines = std::move(timelines);
    } else {
        for (std::uint32_t g : recorded) {
            out.gpuTimelines.push_back(timelines[std::size_t(gpus[gpuRep[g]].timeline)]);
            out.gpuTimelines.back().gpu = g;
        }
        // Links: each orbit's members carry what its representative carried.
        for (LinkId l = 0; l < linkRep.size(); ++l)
            if (linkRep[l] != kNone && linkRep[l] != l)
                out.linkPayloadBytes[l] = out.linkPayloadBytes[linkRep[l]];
        const std::size_t recordedLinks = out.linkTimelines.size();
        for (std::size_t i = 0; i < recordedLinks && !out.linkTimelineTruncated; ++i) {
            const LinkId l = out.linkTimelines[i].link;
            if (linkRep[l] != l)
                continue;
            for (LinkId m : linkOrbitMembers[l]) {
                if (m == l)
                    continue;
                if (samples + out.linkTimelines[i].samples.size() > opt.maxLinkSamples) {
                    out.linkTimelineTruncated = true;
                    break;
                }
                samples += out.linkTimelines[i].samples.size();
                out.linkTimelines.push_back({m, out.linkTimelines[i].samples});
            }
        }
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
