#pragma once
// Stage 5: the step's traffic on the fabric. Every transfer of every scheduled collective of the
// optimizer step (stage 4's schedules, the same generators the counter and the animation use) is
// routed from its source GPU to its destination GPU, and its bytes × the call's repeat count are
// added to every link on the path, by strategy; wire bytes follow each link's protocol (overhead.h),
// packetized per transfer.
// Flow ids (for ECMP): one connection per communicator and GPU pair, as NCCL keeps per peer — the flow
// id of a transfer is the index of its group in CommPlan::groups.
// Speed: calls with the same groups and the same schedule are merged (their repeats add up, per
// strategy); each distinct schedule is generated once and reduced to its (source rank, destination rank)
// pairs with their bytes, transfers and wire bytes per protocol, which every group then maps through its
// members; a schedule with more than kMaxCachedPairs pairs is regenerated for each group instead.

#include "routing.h"
#include "fabric/topology.h"

#include "base/error.h"
#include "base/progress.h"
#include "collective/binding.h"
#include "collective/schedule.h"
#include "parallel/plan.h"

#include <cstdint>
#include <vector>

namespace tw::network {

// The collective operations a link's bytes come from, per strategy (index = collective::Op).
inline constexpr int kLinkOps = 7;

struct LinkLoad {
    parallel::PerStrategy<Bytes> payloadBytes{}; // per strategy (DP, PP, TP, EP), per optimizer step
    parallel::PerStrategy<std::array<Bytes, kLinkOps>> opBytes{};      // the same bytes by strategy and collective operation (tooltips: "DP AllReduce")
    Bytes wireBytes = 0;                  // all strategies, with the link protocol's packet overhead
    double transfers = 0;                 // transfers crossing the link per step (× repeat)
    [[nodiscard]] Bytes payload() const { return payloadBytes[0] + payloadBytes[1] + payloadBytes[2] + payloadBytes[3]; }
};

struct LinkLoads {
    std::vector<LinkLoad> links;            // indexed by LinkId (each direction its own entry)
    parallel::PerStrategy<Bytes> payloadBytes{};   // Σ over links (byte-hops) per strategy
    Bytes wireBytes = 0;                    // Σ over links
    parallel::PerStrategy<Bytes> injectedBytes{};  // Σ over transfers, each once (stage 4's wire bytes per step)
    std::uint64_t distinctSchedules = 0;    // schedules generated
    std::uint64_t routedPairs = 0;          // (group, source, destination) paths looked up
    std::vector<Error> skipped;             // calls left out (stage 4 could not schedule them)
    [[nodiscard]] const LinkLoad& operator[](LinkId l) const { return links[l]; }
};

inline constexpr std::uint64_t kMaxCachedPairs = std::uint64_t{1} << 20;

// Maps the plan's calls onto the topology. `collectives` is stage 4's binding of the same plan (one
// BoundCall per call). Errors: a group GPU the topology does not have, a pair no path joins, a stop
// request (progress.stop). Calls stage 4 could not schedule are listed in `skipped`, not errors.
[[nodiscard]] Result<LinkLoads> mapLinkLoads(const Topology& topology, const parallel::CommPlan& plan,
                                             const collective::CollectiveDerivation& collectives,
                                             const Progress& progress = {});

} // namespace tw::network
