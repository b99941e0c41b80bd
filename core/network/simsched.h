#pragma once
// Stage 5, internal to the simulator (simulate.h): one distinct schedule of a collective, generated once
// from stage 4's step generator (collective::Schedule), NCCL's ring channels (ncclchannels.h), NVLS
// through the NVSwitch (nvlsflows.h) or NCCL's trees (nccltrees.h),
// kept as its transfers step by step and, per step and rank, the transfers that rank sends or receives
// (CSR), so the engine finds a rank's work of a step without scanning the step.

#include "ncclchannels.h"
#include "nccltrees.h"
#include "nvlsflows.h"

#include "collective/schedule.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

namespace tw::network::sim {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr std::uint32_t kNone = 0xffffffffu;

struct Sched {
    std::uint32_t index = 0; // creation order
    std::uint32_t ranks = 0, steps = 0;    // ranks: the group's, plus the switch for NVLS
    std::uint32_t switchRank = kNone;       // NVLS: the NVSwitch's rank (the last one)
    std::vector<collective::Transfer> transfers;
    std::vector<std::uint32_t> stepBegin;  // steps + 1
    std::vector<std::uint32_t> rankBegin;  // steps·ranks + 1, into rankList
    std::vector<std::uint32_t> rankList;   // transfer indices
    // NCCL's own bandwidth for the call (0: none, a textbook schedule): a transfer of b bytes sends at most
    // b·capPerByte B/s, capPerByte = steps · algbw / S (S the schedule's bytes, algbw NCCL's algorithm
    // bandwidth for the call), so the schedule alone on the fabric takes S / algbw, NCCL's bandwidth time
    // (simulate.h "NCCL's bandwidth").
    double capPerByte = 0;
    // NCCL's latency for the call spread over its steps (its prediction's latency term / steps; 0: none): a
    // transfer waits max(its path's latency, stepLatency) before it sends.
    double stepLatency = 0;
};

// What makes two schedules the same: the spec's fields and the channel layout (−1: the spec's own).
using SpecKey = std::tuple<int, int, std::uint64_t, double, std::uint32_t, std::uint64_t, std::uint64_t, int>;
[[nodiscard]] SpecKey specKey(const collective::ScheduleSpec& s, int layout);

// How NCCL's algorithm of a call is laid out as flows (nullptr for a schedule of its own).
struct NcclLayout {
    enum class Kind { Rings, Nvls, Trees, NvlsTree };
    Kind kind = Kind::Rings; // NCCL's ring channels, NVLS through the switch (nvlsflows.h), its trees
                             // (nccltrees.h), NVLS-tree across nodes (nvlsflows.h)
    ChannelRings rings;
    TreeChannels trees;
    NvlsTree nvlsTree;
    bool operator==(const NcclLayout&) const = default;
};

// How call `call` runs as flows when NCCL's algorithm has a layout of its own (NVLS, NVLS-tree, trees,
// ring channels; the NIC hints given to `router`), else nullopt (its stand-in schedule). The simulator
// and the static link loads (linkload.h) both use it, so they put the same bytes on the same links.
[[nodiscard]] std::optional<NcclLayout> ncclLayout(const Topology& topology, const parallel::CommPlan& plan,
                                                   std::uint32_t call, const collective::BoundCall& bound,
                                                   Router& router);

// The schedule of `spec`, laid out as `layout` when given; `index` = its creation order.
[[nodiscard]] std::unique_ptr<Sched> buildSched(const collective::ScheduleSpec& spec, const NcclLayout* layout,
                                                std::uint32_t index);

} // namespace tw::network::sim
