#pragma once
// Stage 5, internal to the simulator (simulate.h): one distinct schedule of a collective, generated once
// from stage 4's step generator (collective::Schedule) or from NCCL's ring channels (ncclchannels.h),
// kept as its transfers step by step and, per step and rank, the transfers that rank sends or receives
// (CSR), so the engine finds a rank's work of a step without scanning the step.

#include "ncclchannels.h"

#include "collective/schedule.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <tuple>
#include <vector>

namespace tw::network::sim {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr std::uint32_t kNone = 0xffffffffu;

struct Sched {
    std::uint32_t index = 0; // creation order
    std::uint32_t ranks = 0, steps = 0;
    std::vector<collective::Transfer> transfers;
    std::vector<std::uint32_t> stepBegin;  // steps + 1
    std::vector<std::uint32_t> rankBegin;  // steps·ranks + 1, into rankList
    std::vector<std::uint32_t> rankList;   // transfer indices
};

// What makes two schedules the same: the spec's fields and the channel layout (−1: the spec's own).
using SpecKey = std::tuple<int, int, std::uint64_t, double, std::uint32_t, std::uint64_t, std::uint64_t, int>;
[[nodiscard]] SpecKey specKey(const collective::ScheduleSpec& s, int layout);

// The schedule of `spec`, over NCCL's rings when `rings` is given; `index` = its creation order.
[[nodiscard]] std::unique_ptr<Sched> buildSched(const collective::ScheduleSpec& spec, const ChannelRings* rings,
                                                std::uint32_t index);

} // namespace tw::network::sim
