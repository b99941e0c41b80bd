#pragma once
// Stage 5: NCCL's ring channels of a call as rings of transfers on their rails (simulate.h "NCCL
// channels", docs/nccl.md "In the step"). A call NCCL runs as a ring (BoundCall::nccl, stand-in
// flat-ring) over groups spanning several nodes with several GPUs on each, listed node by node, becomes
// one flat ring per distinct channel of BoundCall::channels (same GPU order and rail), its ranks in the
// channel's order, carrying its channels' share of the bytes; the hop from node k to node k+1 leaves by
// the channel's rail on node k and enters by it on node k+1 (Router::preferNics). Used by the simulator
// and by the static link loads, so both put the same bytes on the same links.

#include "routing.h"
#include "fabric/topology.h"

#include "collective/binding.h"
#include "collective/schedule.h"
#include "parallel/plan.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tw::network {

// Whether every group of call `c` lists its GPUs node by node: g GPUs on each of n servers, node k's
// GPUs at ranks k·g … k·g + g − 1 (what NCCL's channels and trees on the group assume).
[[nodiscard]] bool groupsNodeByNode(const Topology& topology, const parallel::CommPlan& plan,
                                    const parallel::CollectiveCall& c, std::uint32_t g, std::uint32_t n);

// A call NCCL runs over whole nodes: its plan entry, g GPUs on each of n ≥ 2 nodes.
struct NodeSpan {
    const parallel::CollectiveCall* call = nullptr;
    std::uint32_t g = 0, n = 0;
};
// The span of call `call` (bound as `bound`) when it is a counted NCCL collective (not point-to-point)
// whose groups list their GPUs node by node (groupsNodeByNode) over at least two nodes with at least
// `minPerNode` GPUs each; nullopt otherwise. What channelRings, treeChannels and nvlsTree first ask.
[[nodiscard]] std::optional<NodeSpan> nodeSpan(const Topology& topology, const parallel::CommPlan& plan,
                                               std::uint32_t call, const collective::BoundCall& bound,
                                               int minPerNode);
// The span of an AllReduce NCCL runs with `algorithm` on `channels` (the bound call's tree or NVLS
// channels; none: nullopt), one GPU or more per node.
[[nodiscard]] std::optional<NodeSpan> allReduceSpan(const Topology& topology, const parallel::CommPlan& plan,
                                                    std::uint32_t call, const collective::BoundCall& bound,
                                                    nccl::Algorithm algorithm, const std::vector<nccl::Channel>& channels);

struct ChannelRings {
    std::vector<std::vector<std::uint32_t>> orders; // per distinct channel: the group's ranks in ring order
    std::vector<std::uint32_t> weight;              // channels sharing that order and rail
    std::uint32_t channels = 0;                     // Σ weight (the graph's nChannels)
    bool operator==(const ChannelRings&) const = default;
};

// The rings of call `call` (bound as `bound`) and the NIC hints of its node-to-node hops given to
// `router` (for every group of the call); nullopt when the call keeps its own schedule (not an NCCL ring,
// one node, one GPU per node, groups not node by node, or a GPU pair that would need two rails — hints
// already given for it then stay: they only choose NICs).
[[nodiscard]] std::optional<ChannelRings> channelRings(const Topology& topology, const parallel::CommPlan& plan,
                                                       std::uint32_t call, const collective::BoundCall& bound,
                                                       Router& router);

// The call's schedule over its rings: step k holds step k of every ring (ring r's share
// floor(M·w_r/channels), the last ring the remainder), ranks renamed to the ring's order, chunks numbered
// ring by ring.
class ChannelSchedule {
public:
    ChannelSchedule(const collective::ScheduleSpec& spec, const ChannelRings& rings);
    bool next(std::vector<collective::Transfer>& step);

private:
    const ChannelRings* m_rings;
    std::vector<collective::Schedule> m_gens;
    std::vector<collective::Transfer> m_one;
    std::uint32_t m_chunksPer = 0;
};

} // namespace tw::network
