#pragma once
// NCCL's view of the scenario's fabric and the graphs of its algorithms on it: for each of ring, tree
// and NVLS the channel count, the per-channel speeds bwIntra / bwInter, and the channels themselves
// (the GPU order inside a node and the NIC, i.e. the rail, each channel enters and leaves a node by),
// plus the double binary tree across nodes. A simplified version of NCCL's topology search
// (src/graph/search.cc ncclTopoCompute @ NVIDIA/nccl 5067397c): the largest speed of NCCL's speed array
// for the GPU generation at which the channels fit the link capacities as NCCL sees them, then
// ncclTopoDupChannels, then the pass-2 increases; docs/nccl.md lists what is simplified.
// Stage 4 can draw these channels (each ring with its NIC), stage 5 can turn them into flows on rails.

#include "base/error.h"
#include "collective/nccl.h"
#include "fabric/topology.h"
#include "parallel/plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tw::nccl {

// NCCL's path types (src/graph/topo.h), in its order: the closer the better. LL128 is enabled up to
// PXB between a GPU and its NIC (PXN on Hopper+) and up to NVB between GPUs.
enum class PathType { Loc, Nvl, Nvb, C2c, Pix, Pxb, P2c, Pxn, Phb, Sys, Net };
[[nodiscard]] std::string_view toString(PathType t); // "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET"

// The hardware as NCCL's topology sees it (GB/s per direction, NCCL's units).
struct System {
    GpuView gpu;
    int nodes = 1;
    int gpusPerNode = 8;
    bool nvlink = false;         // GPUs of a node talk over NVLink (through an NVSwitch)
    bool nvswitch = false;       // an NVSwitch is present (CollNet Direct and NVLS need one)
    bool nvls = false;           // NVLS possible: Hopper+ GPU with NVLS on an NVSwitch
    double intraBw = 0;          // per GPU to the other GPUs of its node: NVLink links × rate, or its PCIe link
    double pciBw = 0;            // the GPU's (and a NIC's) PCIe link
    int nicsPerNode = 0;         // 0 on a single node (ncclTopoTrimSystem drops the NICs)
    double nicBw = 0;            // per NIC
    bool nicPerGpu = false;      // a NIC next to each GPU (rail-optimized): NIC k on local GPU k's PCIe switch
    int gpusPerPcieSwitch = 2;   // who shares a NIC's PCIe switch (0: GPUs on the root complex)
    PathType typeIntra = PathType::Nvl; // GPU ↔ GPU inside a node
    PathType typeInter = PathType::Pxb; // GPU ↔ its NIC
    bool collnet = false;        // in-network reduction (SHARP) on the fabric; our fabrics have none
    std::string fabric;          // one line: "1 node × 8 GPUs, NVLink 12 × 20 GB/s", for the CLI and UI
    [[nodiscard]] int ranks() const { return nodes * gpusPerNode; }
    [[nodiscard]] CompCap compCap() const { return compCapOf(gpu.sm); }
    bool operator==(const System&) const = default;
};

// One line for the CLI and the UI: "4 nodes × 8 GPUs (a100-80gb, ampere), NVLink 240.0 GB/s per GPU, 8 NICs per node × 25 GB/s".
[[nodiscard]] std::string describeFabric(const System& system);
// NCCL's view of the cluster on the (resolved) fabric with GPU model `gpuId`; an Error naming the field
// when the fabric cannot be built for the cluster.
[[nodiscard]] Result<System> systemFor(std::string_view gpuId, const network::TopologySpec& resolvedSpec,
                                       const parallel::Cluster& cluster);

// One channel of a graph inside one node (every node runs the same layout, as NCCL's graphs are per node).
//   ring:  gpus = the local GPUs in ring order (one node: the same order 0 … g−1 for every channel, as
//          NCCL's search replays its first channel); on several nodes the ring enters at gpus.front() from
//          nicIn and leaves from gpus.back() through nicOut (the same rail: nicIn == nicOut, so on a
//          rail-optimized leaf–spine it never crosses a spine); one node: it closes back to gpus.front().
//   tree:  gpus = the chain from the node's head gpus.front() (which talks to the other nodes through
//          nicIn/nicOut) down to gpus.back().
//   nvls:  gpus = {head}: the GPU this channel's reduction is pulled by (every GPU talks to the NVSwitch);
//          nicIn/nicOut its NIC on several nodes.
struct Channel {
    std::vector<int> gpus;
    int nicIn = -1, nicOut = -1; // local NIC index (rail); -1 on one node
    bool operator==(const Channel&) const = default;
};

// ncclGetDtree (src/graph/trees.cc): node `node`'s parent and children in tree 0 and tree 1 (-1 none).
struct TreeLinks {
    int up0 = -1, down0[2] = {-1, -1};
    int up1 = -1, down1[2] = {-1, -1};
    bool operator==(const TreeLinks&) const = default;
};
[[nodiscard]] TreeLinks doubleBinaryTree(int nNodes, int node);

struct Graph {
    bool found = false;          // false: NCCL has no graph of this kind here (NVLS without NVSwitch …)
    int nChannels = 0;
    double bwIntra = 0;          // GB/s per channel inside a node
    double bwInter = 0;          // GB/s per channel across nodes
    PathType typeIntra = PathType::Nvl;
    PathType typeInter = PathType::Pxb;
    bool sameChannels = false;   // every channel has the same GPU order (Broadcast/Reduce latency)
    std::vector<Channel> channels;
    bool operator==(const Graph&) const = default;
};

struct Graphs {
    Graph ring, tree, nvls;
    std::vector<TreeLinks> trees; // per node, the double binary tree of every tree channel (tree 0 on
                                  // runtime channel c, tree 1 on c + nChannels, connect.cc)
    bool operator==(const Graphs&) const = default;
};

// The graphs on `system`; `channels` (> 0) forces the ring's (and so the tree's) channel count, as
// NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS would, at the fastest speed that fits.
[[nodiscard]] Graphs searchGraphs(const System& system, std::optional<int> channels = std::nullopt);

// Bytes one ring channel puts on each NIC per direction for an AllReduce of S bytes over n ranks:
// 2(n−1)/n · S / nChannels (every chunk crosses every node boundary once per phase).
[[nodiscard]] double ringBytesPerNicPerChannel(double bytes, int ranks, int nChannels);

// Bytes on one GPU ↔ NVSwitch link per direction for an NVLS collective of S bytes on n GPUs of a node
// (NVLink SHARP: the switch reduces what the GPUs push with multimem reductions and multicasts the result):
//   AllReduce      up S (each GPU's whole buffer once), down S (the reduced buffer once)
//   ReduceScatter  up S, down S/n (its reduced shard)
//   AllGather      up S/n (its shard, multicast by the switch), down S
// against a ring's 2(n−1)/n·S each way for AllReduce: why NVLS busbw exceeds the link rate.
struct LinkBytes {
    double up = 0, down = 0;
    bool operator==(const LinkBytes&) const = default;
};
[[nodiscard]] LinkBytes nvlsBytesPerGpuLink(collective::Op op, double bytes, int ranks);

} // namespace tw::nccl
