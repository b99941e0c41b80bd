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

#include "routing.h"
#include "topology.h"

#include "base/error.h"
#include "collective/binding.h"
#include "collective/schedule.h"
#include "parallel/plan.h"

#include <cstdint>
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
// them has a link to an NVSwitch. NVLS-tree across nodes is not one of them (its ring channels stand in).
[[nodiscard]] bool nvlsFlows(const Topology& topology, const parallel::CommPlan& plan, std::uint32_t call,
                             const collective::BoundCall& bound);

// The steps of an NVLS call over spec.ranks GPUs and the switch (rank spec.ranks).
[[nodiscard]] std::vector<std::vector<collective::Transfer>> nvlsSteps(const collective::ScheduleSpec& spec);

} // namespace tw::network
