#pragma once
// Stage 5: NCCL's trees as flows (simulate.h "NCCL trees", docs/nccl.md "In the step"). A call NCCL runs
// as a tree (AllReduce) over groups spanning several nodes, listed node by node, runs on NCCL's tree
// channels (BoundCall::treeChannels, ncclgraph.h): per channel, inside every node a chain from the
// channel's head GPU (child → parent toward the head), and across nodes NCCL's double binary tree of the
// nodes (nccl::doubleBinaryTree, src/graph/trees.cc) joining the heads — one GPU per node in the
// inter-node tree, which it leaves and enters by the channel's rail (Router::preferNics). Tree 0 and
// tree 1 each carry half of the channel's share (NCCL's tree 0 on runtime channel c, tree 1 on
// c + nChannels), S·w/(2·nChannels) for a channel of weight w: reduced up to the root, then broadcast
// down, pipelined in kTreeChunks chunks (chunk c crosses the edge of a child at depth d in step
// c + D − d going up and in step c + D + d − 1 coming down, D the tree's depth). Channels of identical
// chain and rail are merged (exact under max-min fairness, as rings are).

#include "routing.h"
#include "fabric/topology.h"

#include "collective/binding.h"
#include "collective/schedule.h"
#include "parallel/plan.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tw::network {

inline constexpr std::uint32_t kTreeChunks = 8;

struct TreeChannels {
    // Per distinct channel, per tree (index 2·channel + tree): each rank's parent (kNoParent: the root).
    std::vector<std::vector<std::uint32_t>> parent;
    std::vector<std::uint32_t> weight; // per distinct channel: channels sharing its chain and rail
    std::uint32_t channels = 0;        // Σ weight (the tree graph's nChannels)
    bool operator==(const TreeChannels&) const = default;
};
inline constexpr std::uint32_t kNoParent = 0xffffffffu;

// The trees of call `call` (bound as `bound`) and the NIC hints of their node-to-node edges given to
// `router`; nullopt when the call keeps its own schedule (not an NCCL tree AllReduce, one node, groups
// not node by node, a channel without a rail, or a GPU pair that would need two rails).
[[nodiscard]] std::optional<TreeChannels> treeChannels(const Topology& topology, const parallel::CommPlan& plan,
                                                       std::uint32_t call, const collective::BoundCall& bound,
                                                       Router& router);

// The steps of the call's trees: step k holds step k of every tree.
[[nodiscard]] std::vector<std::vector<collective::Transfer>> treeSteps(const collective::ScheduleSpec& spec,
                                                                       const TreeChannels& trees);

} // namespace tw::network
