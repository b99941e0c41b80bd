#pragma once
// Stage 5: NVLS (NVLink SHARP) as flows into and out of the NVSwitch (simulate.h "NVLS", docs/nccl.md
// "In the step"). A call NCCL runs as NVLS on one node becomes, per GPU, its bytes pushed into the
// switch on its GPU → NVSwitch link and the switch's result pulled out on its NVSwitch → GPU link, the
// amounts of ncclgraph.h's nvlsBytesPerGpuLink (AllReduce up S, down S; ReduceScatter up S, down S/n;
// AllGather up S/n, down S). The switch is one more rank of the schedule (rank n of a group of n GPUs,
// the endpoint kSwitch): it is there from the start, and it finishes a step when every GPU's push of
// that step has arrived, so chunk c comes out of the switch only once every GPU pushed chunk c (the
// reduction needs them all). The call is cut into kNvlsChunks chunks pipelined as NCCL's kernels do:
// step k pushes chunk k and pulls chunk k − 1, so the pushes and pulls overlap on the two directions of
// each GPU's link.
// NVLS-tree (NCCL's NVLS_TREE AllReduce across nodes, src/graph/connect.cc connectNvls; docs/nccl.md
// "In the step"): NVLS inside every node, NCCL's double binary tree of the nodes (ncclGetDtree) between
// the nodes' NVLS heads. Head i (the GPU of NVLS channel i, on its rail) owns the slice X_i = S·w_i/W of
// the buffer (w_i its channels, W all NVLS channels); NCCL's compute channel c uses tree c mod 2, so half
// of every head's slice goes over tree 0 and half over tree 1. Per chunk c (kNvlsChunks, pipelined):
//   step c               every GPU pushes its chunk of S into its node's switch (reduced there)
//   step c + 1           head i pulls the node's reduced chunk of X_i out of the switch
//   step c + 2 + D − d   up the trees: a head at depth d ≥ 1 sends its half chunk to its parent node's
//                        head i (D the deeper tree's depth), on rail i (Router::preferNics)
//   step c + 1 + D + d   down the trees: the parent's head sends the result back to depth d
//   step c + 2D + 2      head i pushes the result chunk of X_i into the switch (multicast store)
//   step c + 2D + 3      the switch multicasts it: every GPU pulls its chunk of S
// So every GPU's link into the switch carries S + Σ (its heads' X_i), out of it Σ X_i + S, and the NIC of
// rail i on node k deg(k)·X_i/2 each way, deg(k) node k's edges in both trees. The switches of the nodes
// are one rank of the schedule (rank spec.ranks) that advances step by step for all nodes together — a
// simplification: a node's switch then waits for the other nodes' pushes of a step (symmetric nodes run in
// step anyway); every transfer is still routed on its GPU's own switch link.

#include "routing.h"
#include "fabric/topology.h"

#include "base/error.h"
#include "collective/binding.h"
#include "collective/schedule.h"
#include "parallel/plan.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tw::network {

// The NVSwitch as a transfer's endpoint (in place of a GPU id).
inline constexpr std::uint32_t kSwitch = 0xfffffffeu;
// Pipeline chunks of an NVLS call (steps = chunks + 1).
inline constexpr std::uint32_t kNvlsChunks = 8;

// The GPU of rank `rank` of a group, or kSwitch for the rank past its GPUs (an NVLS schedule's switch).
[[nodiscard]] inline std::uint32_t endpointOf(const std::vector<std::uint32_t>& members, std::uint32_t rank)
{
    return rank < members.size() ? members[rank] : kSwitch;
}

// Router's paths plus the switch endpoint: GPU → kSwitch is the GPU's link into its server's NVSwitch,
// kSwitch → GPU the link out of it (one link each).
// On a switched fabric (leaf–spine, three-tier) every flow of a GPU pair is routed with flow id 0, so a
// group and its image under a symmetry (another group id) take corresponding paths (routing.h "ECMP").
class EndpointRouter {
public:
    EndpointRouter(const Topology& topology, Router& router);
    [[nodiscard]] Result<const std::vector<LinkId>*> route(std::uint32_t src, std::uint32_t dst, std::uint64_t flowId);
    [[nodiscard]] Router& router() { return m_router; }

private:
    const Topology& m_topo;
    Router& m_router;
    std::vector<std::vector<LinkId>> m_up, m_down; // per GPU: its one-link path into / out of the switch
};

// Whether call `call` (bound as `bound`) runs as NVLS flows: NCCL picked NVLS for it (auto or asked),
// the operation is AllReduce, ReduceScatter or AllGather, its groups lie in one node, and every GPU of
// them has a link to an NVSwitch. NVLS-tree across nodes is nvlsTree below.
[[nodiscard]] bool nvlsFlows(const Topology& topology, const parallel::CommPlan& plan, std::uint32_t call,
                             const collective::BoundCall& bound);

// The steps of an NVLS call over spec.ranks GPUs and the switch (rank spec.ranks).
[[nodiscard]] std::vector<std::vector<collective::Transfer>> nvlsSteps(const collective::ScheduleSpec& spec);

// An NVLS-tree call's layout: the heads and the trees of the nodes.
struct NvlsTree {
    std::uint32_t perNode = 0, nodes = 0;
    std::vector<std::uint32_t> heads;    // per distinct head: its GPU's index in the node
    std::vector<std::uint32_t> weight;   // per distinct head: the NVLS channels it heads
    std::uint32_t channels = 0;          // Σ weight
    std::vector<std::uint32_t> parent[2]; // per tree, per node: the parent node (kNoParentNode: the root)
    bool operator==(const NvlsTree&) const = default;
};
inline constexpr std::uint32_t kNoParentNode = 0xffffffffu;

// The layout of call `call` (bound as `bound`) as NVLS-tree, and the NIC hints of its heads' edges given to
// `router`; nullopt when the call is not one (not NCCL's NVLS-tree AllReduce, one node, groups not node by
// node, a head without a rail, a GPU without an NVSwitch link, or a GPU pair that would need two rails).
[[nodiscard]] std::optional<NvlsTree> nvlsTree(const Topology& topology, const parallel::CommPlan& plan,
                                               std::uint32_t call, const collective::BoundCall& bound, Router& router);

// The steps of an NVLS-tree call over spec.ranks GPUs (node by node) and the switches (rank spec.ranks).
[[nodiscard]] std::vector<std::vector<collective::Transfer>> nvlsTreeSteps(const collective::ScheduleSpec& spec,
                                                                           const NvlsTree& tree);

} // namespace tw::network
