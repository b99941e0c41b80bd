#pragma once
// Stage 4's α–β link taken from the fabric of a call's group as NCCL sees it (issue #17), instead of a
// fixed 10 µs / 10 Gb/s: β is the bandwidth a rank of the group can push, α NCCL's per-hop latency of a
// ring step on the link the group crosses (docs/model.md §4, docs/nccl.md "NCCL's view of the hardware").
//   one node:    β = the GPU's NVLink (link count × per-link rate, src/graph/topo.h) or, without NVLink,
//                its PCIe link; α = hwLatencies[NVLINK | PCI][RING][SIMPLE] of src/graph/tuning.cc.
//   several:     β = NCCL's ring channels × their per-channel speed across nodes (ncclgraph.h: channel
//                k on rail k mod NICs, so the channels together use every rail the group has), capped
//                by the GPU's NVLink / PCIe link when a node holds several of the group's GPUs;
//                α = hwLatencies[NET][RING][SIMPLE] (the hop between nodes bounds a step).
// NCCL also charges a base latency once per call (baseLatencies[RING][SIMPLE] = 8.4 µs); a Hockney α is
// per step, so it is named in `why`, not folded in. The paper's example link is LinkModel{} (10 µs, 10 Gb/s).

#include "collective/ncclgraph.h"
#include "collective/schedule.h"

#include <string>

namespace tw::collective {

struct FabricLink {
    LinkModel link;
    std::string why; // one sentence: where α and β come from, with NCCL's figures
    bool operator==(const FabricLink&) const = default;
};

// The α–β link of a collective over `group` (collective::groupSystem of the call's group).
[[nodiscard]] FabricLink linkFromFabric(const nccl::System& group);

// The paper's testbed link, the program's default before issue #17: α = 10 µs, β = 10 Gb/s.
[[nodiscard]] inline LinkModel papersExampleLink() { return LinkModel{}; }

} // namespace tw::collective
