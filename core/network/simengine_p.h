#pragma once
// Stage 5, private to the simulator (simulate.cpp, simsetup.cpp, simsummary.cpp): the engine of
// simulateStep. Setup (the plan's shape, the calls' roles, the GPUs' operation templates, simsetup.cpp)
// and the collective protocol and event loop (arrive … rankDone, simulate.cpp) live here; the symmetry
// reduction (symmetry.h), the closed-form private collectives (closedform.h) and the rate allocation
// (flowrates.h) are their own units whose results the engine reads.

#include "closedform.h"
#include "flowrates.h"
#include "ncclchannels.h"
#include "nvlsflows.h"
#include "routing.h"
#include "simsched.h"
#include "simulate.h"
#include "symmetry.h"
#include "fabric/topology.h"

#include "base/error.h"
#include "base/progress.h"
#include "collective/binding.h"
#include "parallel/plan.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tw::network::sim {

using parallel::CollectiveCall;
using parallel::CollectiveKind;
using parallel::Sharding;
using parallel::Strategy;

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
// The links no allocation can saturate that an orbit's flows on one path cross (symmetry.h pathEntries,
// constrains = false), kept apart from the allocation's entries when link timelines are off: their
// payload is Σ bytes of the flows on the path × the count, added once at the end (Engine::summarize)
// instead of being summed at every rate change.
struct ExemptLoad {
    std::vector<PathEntry> links; // weight: flows of the orbit crossing the link
    double bytes = 0;             // Σ bytes of the simulated flows on the path
};
struct PathInfo {
    const std::vector<LinkId>* path = nullptr;
    const std::vector<PathEntry>* entries = nullptr;
    ExemptLoad* exempt = nullptr; // see ExemptLoad; null when none or when timelines are recorded
    double latency = 0;
};

// Per (group, schedule): the routed transfers and, under symmetry, each transfer's orbit representative.
struct GroupSched {
    std::vector<PathInfo> paths;
    std::vector<std::uint32_t> transferRep; // empty: every transfer is its own
    ClosedForm closed;                      // simulate.h "Private collectives"
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

// Async issues a blocking-stream collective and lets compute go on; Join waits for it (parallel.tpOverlap:
// the input-gradient TP collective during its linear's weight-gradient GEMM, simulate.h).
enum class OpKind : std::uint8_t { Compute, Blocking, Stream, Send, Recv, Async, Join };
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
    bool optimizerStepped = false, inOptimizer = false; // the optimizer step's compute (simulate.h)
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
    std::int32_t byKindSlot = -1; // its row of Engine::byKind once it took part in a collective
    double streamStarted = 0;     // when its stream's current item started
};

enum class EventType : std::uint8_t {
    ComputeDone,         // id: the GPU
    FlowActivates,       // id: the flow (its path latency has passed)
    ClosedFormRanksDone, // id: the instance slot (closed-form ranks whose done time has come)
    AloneDone,           // id: the GPU (a private collective of arriveAlone is done)
};

struct Event {
    double time = 0;
    std::uint64_t seq = 0;
    EventType type = EventType::ComputeDone;
    std::uint32_t id = 0;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

inline std::size_t sIdx(Strategy s) { return static_cast<std::size_t>(s); }

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
    EndpointRouter paths{topo, router}; // router's paths and NVLS's GPU ↔ NVSwitch links
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
    // Per strategy and collective kind, of each GPU that took part in one (Gpu::byKindSlot): the time its
    // compute waited on them (exposed) and the time they were in flight.
    struct KindTimes {
        parallel::PerStrategy<KindSeconds> exposed{}, inFlight{};
    };
    std::vector<KindTimes> byKind;
    KindTimes& kindTimes(std::uint32_t g)
    {
        Gpu& gpu = gpus[g];
        if (gpu.byKindSlot < 0) {
            gpu.byKindSlot = static_cast<std::int32_t>(byKind.size());
            byKind.emplace_back();
        }
        return byKind[std::size_t(gpu.byKindSlot)];
    }
    // A collective of `kind` was in flight on GPU g for `seconds`: from the arrival of its last peer (before,
    // the GPU only waits for them), a pipeline transfer from its start.
    void addInFlight(std::uint32_t g, Strategy s, parallel::CollectiveKind kind, double seconds)
    {
        kindTimes(g).inFlight[sIdx(s)][std::size_t(kind)] += seconds;
    }
    std::vector<GpuTimeline> timelines;  // recorded representatives (gpus[g].timeline)
    std::vector<std::uint32_t> recorded; // the GPUs whose timelines are asked for, in order
    std::vector<double> capacity;        // per link, payload B/s
    std::map<std::pair<SpecKey, double>, std::unique_ptr<Sched>> scheds; // (spec, Sched::capPerByte)
    std::unordered_map<std::uint64_t, GroupSched> pathCache; // (group << 32 | schedule index)
    std::vector<const Sched*> callSchedule; // per call without buckets: its schedule (once asked)
    std::unordered_map<Key, std::uint32_t, KeyHash> live; // key → instance slot
    std::vector<std::unique_ptr<Instance>> instances;
    std::vector<std::uint32_t> freeInstances, released; // released: reusable after the current event
    std::vector<double> cfReady, cfScratch;             // evaluateClosedForm's scratch
    std::vector<std::pair<double, double>> cfSpans;
    std::unordered_map<Key, double, KeyHash> ppArrived; // receives done (value: when the send started)

    FlowSet fs;
    std::vector<std::uint32_t> freeFlows;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    std::uint64_t seq = 0;
    std::deque<std::uint32_t> runnable;
    double now = 0;
    std::uint64_t blocksFinished = 0; // Σ gpus[g].block (progress)

    Symmetry sym;      // simulate.h "Symmetry" (symmetry.h)
    PrivateLinks priv; // simulate.h "Private collectives" (closedform.h); empty when not analyzed
    std::unordered_map<const std::vector<LinkId>*, std::unique_ptr<std::vector<PathEntry>>> entryCache;
    std::unordered_map<const std::vector<LinkId>*, std::unique_ptr<ExemptLoad>> exemptCache; // ExemptLoad
    std::unique_ptr<LinkRates> links;  // per-link rates and samples
    std::unique_ptr<FlowRates> rates;  // the max-min allocation (flowrates.h)

    // Setup (simsetup.cpp).
    Status prepare();
    void classify();
    void analyzeSymmetry();
    void analyzePrivacy();
    std::vector<const Sched*> schedulesOf(std::uint32_t call);
    ExemptLoad* exemptFor(const std::vector<LinkId>* path); // after entriesFor; null when none
    const std::vector<PathEntry>* entriesFor(const std::vector<LinkId>* path, std::uint32_t srcGpu, std::uint32_t dstGpu,
                                             std::uint32_t group);
    Status buildGpus();
    // buildGpus' steps (simsetup.cpp).
    struct Part { // a GPU's participation in a call
        std::uint32_t call, group, rank;
    };
    struct ChunkTimes;
    struct ChunkPass;
    Status collectParts(std::vector<std::vector<Part>>& parts);
    ChunkTimes chunkTimes() const;
    double weightGradientShare(std::uint32_t call) const;
    void sortChunkCalls(const std::vector<Part>& parts, ChunkPass& pass) const;
    void emitMidCalls(std::vector<Op>& tmpl, const std::vector<Op>& mid, double seconds, bool backward) const;
    void emitChunkTemplate(Gpu& gpu, std::vector<Op>& tmpl, const ChunkPass& pass) const;
    void buildTemplates(Gpu& gpu, const std::vector<Part>& parts, const ChunkTimes& times) const;
    void buildStepEnd(Gpu& gpu, const std::vector<Part>& parts) const;
    void chooseRecorded();
    const Sched* schedule(const collective::ScheduleSpec& given, std::uint32_t call); // RS / AG padded to N | bytes
    std::vector<NcclLayout> layouts;
    std::vector<int> callLayout; // per call: index into layouts, −1 for the call's own schedule
    void planChannels();
    Strategy strategyOf(std::uint32_t call) const { return plan.comm.calls[call].strategy; }
    const Sched* callSched(std::uint32_t call);
    GroupSched& groupSchedFor(std::uint32_t group, const Sched& sched);
    bool decideClosedForm(std::uint32_t group, const Sched& sched, GroupSched& gs);

    // The protocol and the event loop (simulate.cpp).
    void evaluateClosedForm(std::uint32_t slot);
    void closedFormDone(std::uint32_t slot);
    void arrive(const Key& key, std::uint32_t rank, Role role, bool ppBoth);
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
    // runGpu's steps (simulate.cpp).
    bool runOp(std::uint32_t g, Gpu& gpu, const parallel::PipelineBlock& b, const Op& o);
    void startCompute(std::uint32_t g, Gpu& gpu, const parallel::PipelineBlock& b, const Op& o);
    bool runStepEnd(std::uint32_t g, Gpu& gpu);
    void enqueueBucket(std::uint32_t g, const Bucket& b, std::uint32_t mb);
    // Whether an end-of-backward bucket goes out in micro-batch mb (per micro-batch, or on the last).
    bool bucketApplies(const Bucket& b, std::uint32_t mb) const { return b.perMicroBatch || mb + 1 == nAcc; }
    void arriveBlocking(Gpu& gpu, const Key& key, std::uint32_t rank, Role role);
    void computeDone(std::uint32_t g);
    void startStream(std::uint32_t g);
    // `kind`: the collective a communication wait is for (Send/Recv for pipeline transfers).
    void record(std::uint32_t g, double start, double end, Activity a, Strategy s, const GpuInterval& what = {},
                parallel::CollectiveKind kind = parallel::CollectiveKind::SendRecv);
    [[nodiscard]] parallel::CollectiveKind kindOf(std::uint32_t call) const { return plan.comm.calls[call].kind; }
    // Bytes per instance of an end-of-backward call of M bytes: a DDP bucket, or M (ddp_overlap false, not DP).
    double bucketBytesOf(std::uint32_t call, double M) const
    {
        const double bucket = plan.plan.bucketBytes.value_or(parallel::kPytorchBucketBytes); // derivePlan resolved it
        return plan.plan.ddpOverlap && strategyOf(call) == Strategy::DP && bucket > 0 ? bucket : M;
    }
    void drain();
    void fail(Error e)
    {
        if (!failure)
            failure = std::move(e);
    }

    // The step's summaries and figures once every GPU is done (simsummary.cpp).
    void summarize();
    void addFigures();
};

} // namespace tw::network::sim
