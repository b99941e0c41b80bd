#pragma once
// Stage 4: collective algorithms as explicit schedules. One generator per (collective, algorithm)
// yields the schedule step by step — each step a set of transfers (source rank, destination rank,
// chunk, bytes, reduce or copy) — and the counter, the data checker, the animation and the stage 5
// simulator all consume that same generator, so nothing is computed twice in two ways.
// Step convention (MPICH analyses, Thakur, Rabenseifner & Gropp 2005): in one step a rank sends at
// most one message and receives at most one (single-port, full duplex). Formulas the tests compare
// against: docs/model.md §4.

#include "base/error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::collective {

enum class Op { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, AllToAll, SendRecv };

// JSON / CLI names (scripts rely on them): naive, reduce-broadcast, flat-ring, recursive-doubling,
// rabenseifner, binary-tree, double-binary-tree, hierarchical, recursive-halving, bruck, pairwise,
// flat, binomial, chain, direct (Send/Recv).
enum class Algorithm {
    Naive,             // AllReduce: every rank sends its whole buffer to every other (direct exchange)
    ReduceBroadcast,   // AllReduce: flat reduce to the root, then flat broadcast
    Ring,              // "flat-ring": one ring over the ranks in order; AllReduce (RS + AG), ReduceScatter, AllGather
    RecursiveDoubling, // AllReduce (whole buffer, log2 N rounds), AllGather
    Rabenseifner,      // AllReduce: reduce-scatter by recursive halving + allgather by recursive doubling
    BinaryTree,        // AllReduce: reduce up a binary tree, broadcast down, pipelined in chunks
    DoubleBinaryTree,  // AllReduce: NCCL's two complementary binary trees, each on half the data
    Hierarchical,      // AllReduce: inside each node, across nodes, inside again
    RecursiveHalving,  // ReduceScatter
    Bruck,             // AllGather, All-to-All
    Pairwise,          // All-to-All (pairwise exchange)
    Flat,              // Broadcast, Reduce (root ↔ each rank in turn)
    Binomial,          // Broadcast, Reduce (binomial tree)
    Chain,             // Broadcast, Reduce (pipelined chain)
    Direct,            // Send/Recv
};

[[nodiscard]] std::string_view toString(Op op);        // "allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall", "sendrecv"
[[nodiscard]] std::optional<Op> opFromString(std::string_view s);
[[nodiscard]] std::string_view displayName(Op op);     // "AllReduce", "ReduceScatter", …, "All-to-All", "Send/Recv"
// Every operation, in the order above (the CLI's --list and --op messages, the stage 4 pane's menu).
[[nodiscard]] const std::vector<Op>& allOps();
[[nodiscard]] std::string_view toString(Algorithm a);  // the names above
// Also reads "ring" as flat-ring (its name before NCCL's multi-channel ring took it, binding.h): the
// `collective` command and the Open MPI rows keep it; a scenario's "ring" is NCCL's (AlgorithmPick).
[[nodiscard]] std::optional<Algorithm> algorithmFromString(std::string_view s);
// The algorithms this program has for an operation, the default first (ring for AllReduce,
// ReduceScatter and AllGather; binomial for Broadcast and Reduce; pairwise for All-to-All).
[[nodiscard]] const std::vector<Algorithm>& algorithmsFor(Op op);
[[nodiscard]] std::string describe(Op op, Algorithm a); // one sentence for --list and the UI

// One collective call to schedule. bytes = M: the AllReduce buffer; AllGather's output and
// ReduceScatter's input (the unsharded buffer); All-to-All: each rank's whole send buffer; Broadcast
// and Reduce: the root's buffer; Send/Recv: the message (ranks must be 2: rank 0 sends to rank 1).
struct ScheduleSpec {
    Op op = Op::AllReduce;
    Algorithm algorithm = Algorithm::Ring;
    std::uint64_t ranks = 8;         // N ≥ 1
    double bytes = 0;                // M ≥ 0, whole bytes (chunks may be uneven: they differ by at most one byte)
    std::uint32_t root = 0;          // Broadcast, Reduce, reduce-broadcast
    std::uint64_t ranksPerNode = 0;  // hierarchical: consecutive ranks share a node; 0 = all on one node
    std::uint64_t pipelineChunks = 0; // binary-tree, double-binary-tree, chain: 0 = the default (see chunkCount)
    bool operator==(const ScheduleSpec&) const = default;
};

// Why a spec cannot be scheduled (N = 0, an algorithm the operation does not have, a root out of
// range, bytes negative / not whole / ≥ 2^53, Send/Recv with N ≠ 2 …), each naming its field
// ("ranks", "algorithm", "bytes", "root", "ranks_per_node", "pipeline_chunks"). Limits: N ≤ 16,384
// (every transfer is generated; a 16,384-rank ring is 5.4·10^8 transfers), pipeline_chunks ≤ 4,096. Algorithms that
// need a power of two handle other N as MPICH does (fold the extra ranks in and out).
[[nodiscard]] std::vector<Error> validate(const ScheduleSpec& spec);

// One message of one step. `chunk` indexes the schedule's chunk table (Schedule::chunk); the
// receiver adds the data into its copy (reduce) or overwrites it (copy).
struct Transfer {
    std::uint32_t src = 0, dst = 0;
    std::uint32_t chunk = 0;
    double bytes = 0;
    bool reduce = false;
    bool operator==(const Transfer&) const = default;
};

// A piece of data the schedule moves: `offset`/`bytes` within the operation's buffer; for
// All-to-All, the block rank `origin` sends to rank `destination` (offset within the sender's send
// buffer); for the others origin/destination are unused (0). A Bruck AllGather chunk is a cyclic run
// of slices: it starts at `offset` and may wrap past the end of the buffer.
struct Chunk {
    double offset = 0, bytes = 0;
    std::uint32_t origin = 0, destination = 0;
};

// The step generator: next() fills the transfers of the next step (at most one send and one receive
// per rank) and returns false after the last. Memory does not grow with the number of transfers.
// A message is the transfers between one (src, dst) pair in a step: one transfer everywhere except
// Bruck All-to-All, whose step-k message from a rank carries several blocks (one transfer each).
// M = 0 keeps every step and transfer, each of 0 bytes. Pipelined trees and chains default to
// min(ceil(share / 64 KiB), 64) ≥ 1 chunks (share = M, or M/2 per tree of the double binary tree).
// Hierarchical AllReduce: intra-node ring reduce-scatter, inter-node ring AllReduce of each slice
// among the ranks of the same local index, intra-node ring all-gather (N must be whole nodes).
class Schedule {
public:
    explicit Schedule(const ScheduleSpec& spec); // expects validate(spec) to be empty
    ~Schedule();
    Schedule(Schedule&&) noexcept;
    Schedule& operator=(Schedule&&) noexcept;

    bool next(std::vector<Transfer>& step);
    void reset();                                 // back to step 0
    [[nodiscard]] std::uint64_t stepCount() const; // known up front
    [[nodiscard]] std::uint32_t chunkCount() const;
    [[nodiscard]] Chunk chunk(std::uint32_t index) const;
    [[nodiscard]] const ScheduleSpec& spec() const;
    // True when every transfer carries the sender's original input rather than what it holds at that
    // step (naive direct exchange: each receiver adds every other rank's input once); the checker and
    // the animation replay it that way.
    [[nodiscard]] bool sendsInput() const;
    // Phase names of a step for the UI ("reduce-scatter", "all-gather", "fold in", "broadcast" …).
    [[nodiscard]] std::string phaseOf(std::uint64_t step) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

// Counting from the schedule itself (never from a separate formula), with Hockney's α–β model:
// time = Σ over steps of (α + the step's largest message / β).
struct LinkModel {
    double alphaSeconds = 10e-6;         // per message
    double bandwidth = 10e9 / 8;         // β in B/s (10 Gb/s)
    bool operator==(const LinkModel&) const = default;
};
struct Counts {
    std::uint64_t steps = 0;
    std::uint64_t transfers = 0;
    double totalBytes = 0;                     // Σ over transfers
    std::vector<double> sentPerRank, receivedPerRank;
    double maxRankSentBytes = 0;
    double timeSeconds = 0;
    std::optional<double> algbw;               // M / time (nccl-tests); null for N = 1 or time 0
    std::optional<double> busbw;               // algbw × busbwFactor
    std::optional<double> busbwFactor;         // 2(N−1)/N AllReduce, (N−1)/N RS/AG/A2A, 1 Broadcast/Reduce/SendRecv; null for N = 1
};
[[nodiscard]] Counts count(const ScheduleSpec& spec, const LinkModel& link = {});

// Pushes real numbers through the schedule: each rank starts with its own values for every chunk
// (distinct pseudo-random integers, exact in double), transfers apply step by step (a step reads the
// values as they were at its start), and at the end every rank must hold the element-wise sum
// (AllReduce), its reduced slice (ReduceScatter), every slice (AllGather), the root's data
// (Broadcast), the root the sum (Reduce), the transposed blocks (All-to-All), rank 1 the message
// (Send/Recv). Ok, or an Error naming the first wrong rank and chunk. Also checks the step
// convention (one send, one receive per rank per step) and that chunk indices are in range.
[[nodiscard]] Status checkSchedule(const ScheduleSpec& spec);

// The closed forms of docs/model.md for the cases that have one (tests and the UI compare against
// them): bytes each rank sends (max), total bytes, steps. Empty when there is no simple closed form.
struct ClosedForm {
    std::optional<double> perRankSentBytes, totalBytes;
    std::optional<std::uint64_t> steps;
    std::string formula; // "2(N−1)/N·M per rank, 2(N−1) steps"
};
[[nodiscard]] ClosedForm closedForm(const ScheduleSpec& spec);

// Where a schedule's counts differ from the closed form (relative 1e-9 for bytes, exact steps), one
// sentence each ("total bytes: counted 14 B, closed form 13.33 B (+0.67 B)"); empty when they agree
// or the closed form says nothing.
[[nodiscard]] std::vector<std::string> differencesFromClosedForm(const ClosedForm& closed, const Counts& counts);

} // namespace tw::collective
