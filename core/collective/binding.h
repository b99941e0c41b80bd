#pragma once
// Stage 3 → stage 4: every collective call of the optimizer step's communication plan bound to an
// algorithm (a per-collective default the user can change), so the step's traffic is the sum of
// real schedules — bytes on the wire, busiest rank, steps and α–β time counted from the generators.

#include "nccl.h"
#include "ncclgraph.h"
#include "schedule.h"

#include "base/error.h"
#include "base/figure.h"
#include "fabric/topology.h"
#include "parallel/plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tw::collective {

// What one kind of collective runs with: NCCL's own pick for each call ("auto", the default), one of
// NCCL's algorithms (nccl.h: "ring", "tree", "nvls", "nvls-tree", "collnet-direct", "collnet-chain",
// "pat"), or a textbook schedule of schedule.h ("flat-ring", "rabenseifner", …). A textbook Algorithm
// converts to a textbook pick.
struct AlgorithmPick {
    enum class Kind { Auto, Nccl, Textbook };
    Kind kind = Kind::Auto;
    nccl::Algorithm nccl = nccl::Algorithm::Ring;  // Kind::Nccl
    Algorithm textbook = Algorithm::Ring;          // Kind::Textbook
    AlgorithmPick() = default;
    AlgorithmPick(Algorithm a) : kind(Kind::Textbook), textbook(a) {} // NOLINT: implicit on purpose
    [[nodiscard]] static AlgorithmPick automatic() { return {}; }
    [[nodiscard]] static AlgorithmPick ofNccl(nccl::Algorithm a)
    {
        AlgorithmPick p;
        p.kind = Kind::Nccl;
        p.nccl = a;
        return p;
    }
    [[nodiscard]] bool usesNccl() const { return kind != Kind::Textbook; }
    bool operator==(const AlgorithmPick&) const = default;
};
// "auto", NCCL's name, or the textbook name ("flat-ring" …).
[[nodiscard]] std::string toString(const AlgorithmPick& pick);
// A scenario's name: "auto", then NCCL's names ("ring" is NCCL's ring), then the textbook names
// ("flat-ring"; schedule.h's "ring" alias is not read here).
[[nodiscard]] std::optional<AlgorithmPick> pickFromString(std::string_view s);
// The names a scenario accepts for the operation: auto, NCCL's for it (nccl::algorithmsFor), the textbook ones.
[[nodiscard]] std::vector<std::string> pickNamesFor(Op op);

// The textbook schedule that stands for an NCCL call where a schedule is needed (stage 4's animation,
// stage 5's flows, which turn a multi-node ring into NCCL's channels): ring, pat, nvls, nvls-tree,
// collnet-* → flat-ring (Broadcast, Reduce: chain); tree → double-binary-tree (AllReduce); p2p →
// pairwise (All-to-All), direct (Send/Recv).
[[nodiscard]] Algorithm textbookStandIn(Op op, std::optional<nccl::Algorithm> a);

// The algorithm each kind of collective of the plan runs with, and the link of the α–β time (textbook
// schedules only: NCCL's calls are timed by NCCL's model on the group's fabric).
struct AlgorithmChoice {
    AlgorithmPick allReduce;
    AlgorithmPick reduceScatter;
    AlgorithmPick allGather;
    AlgorithmPick allToAll;
    AlgorithmPick broadcast;
    LinkModel link;
    bool operator==(const AlgorithmChoice&) const = default;

    [[nodiscard]] AlgorithmPick pick(Op op) const; // Send/Recv and Reduce: auto (NCCL)
    // The textbook schedule of the op: the pick's, or textbookStandIn for an NCCL pick (auto: NCCL's
    // usual algorithm, ring). Stage 4's pane plays it.
    [[nodiscard]] Algorithm forOp(Op op) const;
    void set(Op op, AlgorithmPick pick);       // Send/Recv and Reduce: ignored
};

// The textbook picks of the paper's examples: flat-ring, pairwise, binomial (the defaults before NCCL's).
[[nodiscard]] AlgorithmChoice textbookChoice();

// Each choice must be auto, an algorithm NCCL has for the collective, or a textbook algorithm of it; α ≥ 0
// and β > 0, finite; paths "collectives.allreduce", "collectives.alpha_s", "collectives.bandwidth".
[[nodiscard]] std::vector<Error> validate(const AlgorithmChoice& choice);

// Where NCCL's calls run: the scenario's GPU model (catalog id) and resolved fabric. Each call's group is
// seen as NCCL would see it (groupSystem).
struct NcclFabric {
    std::string gpuId;
    network::TopologySpec topology; // resolved (scenario::resolvedTopology)
    bool operator==(const NcclFabric&) const = default;
};

// NCCL's view of one group of `nodes` nodes × `perNode` GPUs of the cluster on the fabric: systemFor on
// the whole cluster, restricted to the group's GPUs. With a NIC per GPU the group sees its GPUs' own NICs
// (perNode of them: a DP group of one GPU per node uses that GPU's rail, the other rails carry the other
// groups side by side); with one NIC per server, that NIC.
[[nodiscard]] Result<nccl::System> groupSystem(const NcclFabric& fabric, const parallel::Cluster& cluster,
                                               int nodes, int perNode);

[[nodiscard]] Op opFor(parallel::CollectiveKind kind);

// The nodes a group's GPUs span and its GPUs per node (the largest count on one node when they differ).
[[nodiscard]] std::pair<int, int> groupShape(const std::vector<std::uint32_t>& members, const parallel::Cluster& cluster);

// One call of the plan with its schedule's counts (one instance: one group, one repeat).
struct BoundCall {
    std::uint32_t call = 0;       // index into CommPlan::calls
    ScheduleSpec spec;            // ranks = group size, bytes = the payload rounded to whole bytes
    std::uint64_t steps = 0;
    double wireBytes = 0;         // Σ of the schedule's transfers
    double maxRankSentBytes = 0;
    double timeSeconds = 0;       // α–β
    double stepWireBytes = 0;     // the call's bytes on the wire per optimizer step: wireBytes × groups × repeat
    bool fellBack = false;        // hierarchical asked, but the group's GPUs are not spread evenly over nodes: ring
    bool counted = true;          // false: the schedule could not be generated (validate refused it, e.g. too many ranks)
    // NCCL calls (auto or an NCCL algorithm): spec holds textbookStandIn (what stage 5 simulates), the
    // counts come from NCCL's model on the group (docs/nccl.md "In the step").
    AlgorithmPick pick;           // what the scenario asked for
    bool nccl = false;
    nccl::Prediction prediction;  // NCCL's algorithm, protocol, channels, time
    int groupNodes = 1, groupPerNode = 1; // the group's shape as NCCL sees it
    std::string how;              // "auto → ring/simple, 8 channels (2 nodes × 8 GPUs …)"
    // NCCL's ring channels on the group's system (searchGraphs: local GPU order, rail) when the group spans
    // several nodes; stage 5 turns them into flows on their rails (simulate.h "NCCL channels").
    std::vector<nccl::Channel> channels;
    // NCCL's tree channels (the chain in each node from its head, the head's rail) when NCCL runs the call
    // as a tree across several nodes; stage 5 runs its double binary trees on them (nccltrees.h).
    std::vector<nccl::Channel> treeChannels;
    // NCCL's NVLS channels (each its head GPU and rail) when NCCL runs the call as NVLS-tree across several
    // nodes; stage 5 runs the heads' trees on them (nvlsflows.h "NVLS-tree").
    std::vector<nccl::Channel> nvlsChannels;
};

struct CollectiveDerivation {
    std::vector<BoundCall> calls;   // one per CommPlan call, same order
    parallel::PerStrategy<double> wireBytesPerStep{};   // per strategy (DP, PP, TP, EP): Σ calls · groups · repeat
    parallel::PerStrategy<double> secondsPerStep{};     // per strategy: the busiest GPU's Σ over its calls of time · repeat
    parallel::PerStrategy<parallel::PerKind> secondsPerStepByKind{}; // that GPU's Σ split by collective kind
    std::uint64_t distinctSchedules = 0;         // schedules actually generated (identical calls share one)
    std::vector<Error> uncounted;                // why some calls have no schedule (their bytes are left out)
    FigureSet figures;                           // "collective.*"
};

// Counts every call of the plan with its chosen algorithm. `cluster` places the groups' GPUs on nodes
// (hierarchical uses the GPUs per node of each group; NCCL the nodes a group spans). Textbook picks are
// counted from their schedules with α–β; NCCL picks by nccl::predict on the group's system (groupSystem
// on `fabric`): time, algorithm, protocol, channels, and the bytes of the algorithm NCCL runs (ring
// 2(n−1)/n·M per rank for AllReduce …, NVLS nvlsBytesPerGpuLink; docs/nccl.md "In the step"). A pair NCCL
// lacks on the fabric (NVLS on an A100 …) leaves the call uncounted with NCCL's reason. Expects
// validate(choice) to be empty.
[[nodiscard]] CollectiveDerivation bindPlan(const parallel::CommPlan& plan, const parallel::Cluster& cluster,
                                            const AlgorithmChoice& choice, const FigureSet& inputs = {},
                                            const NcclFabric& fabric = {});

} // namespace tw::collective
