#pragma once
// Stage 3 → stage 4: every collective call of the optimizer step's communication plan bound to an
// algorithm (a per-collective default the user can change), so the step's traffic is the sum of
// real schedules — bytes on the wire, busiest rank, steps and α–β time counted from the generators.

#include "schedule.h"

#include "base/error.h"
#include "base/figure.h"
#include "parallel/plan.h"

#include <cstdint>
#include <vector>

namespace tw::collective {

// The algorithm each kind of collective of the plan runs with, and the link of the α–β time.
struct AlgorithmChoice {
    Algorithm allReduce = Algorithm::Ring;
    Algorithm reduceScatter = Algorithm::Ring;
    Algorithm allGather = Algorithm::Ring;
    Algorithm allToAll = Algorithm::Pairwise;
    Algorithm broadcast = Algorithm::Binomial;
    LinkModel link;
    bool operator==(const AlgorithmChoice&) const = default;

    [[nodiscard]] Algorithm forOp(Op op) const; // Send/Recv: direct; Reduce: binomial
    void set(Op op, Algorithm algorithm);       // Send/Recv and Reduce: ignored
};

// Each choice must be an algorithm of its collective, α ≥ 0 and β > 0, finite; paths
// "collectives.allreduce", "collectives.alpha_s", "collectives.bandwidth".
[[nodiscard]] std::vector<Error> validate(const AlgorithmChoice& choice);

[[nodiscard]] Op opFor(parallel::CollectiveKind kind);

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
};

struct CollectiveDerivation {
    std::vector<BoundCall> calls;   // one per CommPlan call, same order
    double wireBytesPerStep[4] = {0, 0, 0, 0};   // per strategy (DP, PP, TP, EP): Σ calls · groups · repeat
    double secondsPerStep[4] = {0, 0, 0, 0};     // per strategy: Σ calls · repeat (groups run side by side)
    std::uint64_t distinctSchedules = 0;         // schedules actually generated (identical calls share one)
    std::vector<Error> uncounted;                // why some calls have no schedule (their bytes are left out)
    FigureSet figures;                           // "collective.*"
};

// Counts every call of the plan with its chosen algorithm. `cluster` places the groups' GPUs on nodes
// (hierarchical uses the GPUs per node of each group). Expects validate(choice) to be empty.
[[nodiscard]] CollectiveDerivation bindPlan(const parallel::CommPlan& plan, const parallel::Cluster& cluster,
                                            const AlgorithmChoice& choice, const FigureSet& inputs = {});

} // namespace tw::collective
