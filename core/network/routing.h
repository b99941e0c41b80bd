#pragma once
// Stage 5: which links a transfer from one GPU to another crosses.
// Metric: Dijkstra by latency, in whole nanoseconds (each link's latency rounded to ns, so equal paths
// have exactly equal costs); GPUs and host memory are never transit nodes (only a path's ends).
// Staging: when the topology stages through host memory (no GPUDirect P2P) and the two GPUs are not
// NVLink peers of one server, the path is GPU → host memory of its server (→ host memory of the
// destination's server, across servers) → GPU, each leg a shortest path.
// NIC affinity: with one NIC per GPU (rail-optimized), traffic between servers leaves through the
// source GPU's own NIC (Topology::gpuNic: the NIC on its PCIe switch, as NCCL binds each GPU to its
// nearest NIC) and enters through the destination GPU's own NIC; between the two NICs the path stays
// on the network (NIC → leaf → spine → leaf → NIC), never back through a server. Each leg is a
// shortest path.
// NIC hint (Router::preferNics): a pair of GPUs on different servers may be told to leave by the NIC of
// another GPU of the source's server and enter by the NIC of another GPU of the destination's server, as
// NCCL's ring channels do (a channel enters and leaves a node on its own rail, ncclgraph.h Channel: the
// GPU at the end of the channel's order sends through the channel's NIC, which need not be its own). The
// legs are the same shortest paths as above with those NICs in place of the GPUs' own; one hint per
// ordered GPU pair, for every flow of that pair (simulate.h "NCCL channels" sets them).
// ECMP: at every node with several next hops on a shortest path (ascending link id), the choice is
// h mod k, with h = FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over the 20 bytes,
// little-endian, of (source GPU u32, destination GPU u32, flow id u64, current node id u32) — a switch
// hashing the flow's header with its own seed. Every run picks the same paths.
// ECMP on a fabric with pods (three-tier, Topology::hasPods): replica-symmetric by construction. The
// choice is (h >> 32) mod k with h = FNV-1a 64 (same basis and prime) over the 20 bytes, little-endian,
// of (source's place in its pod u32, destination's place in its pod u32, destination pod − source pod
// mod pods u32, current node's place u32, current node's pod − source pod mod pods u32, or 0xffffffff
// at a core switch), a place being a node's index among its pod's nodes (a core's: its index;
// Topology::PodPlace). The high half, because FNV-1a's low bits mix only the inputs' low bits (its
// multiplier is odd): h mod 2 at a leaf and at the spine above it would always agree and leave half the
// cores unused. No global id enters, nor the flow id (a shift maps a group onto another group, whose id
// differs), so a shift of the GPUs by whole pods — the automorphism of the fabric that moves pod p to
// pod p + Δ and keeps the cores — maps the route of every pair onto the route of the shifted pair: a
// data-parallel shift whose replicas fill whole pods maps routes onto routes. All flows of one GPU pair
// share a path. Shifts inside a pod (tensor-parallel ones permute the rails) are not symmetries by
// construction: a hash blind to the rail would send every rail's flow of a server pair over one
// spine–core link.

#include "topology.h"

#include "base/error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tw::network {

// FNV-1a 64 of the bytes above (exposed for tests and the UI's explanation).
[[nodiscard]] std::uint64_t ecmpHash(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flowId, NodeId node);
// FNV-1a 64 of the pod-relative bytes above (fabrics with pods).
[[nodiscard]] std::uint64_t podEcmpHash(std::uint32_t srcPlace, std::uint32_t dstPlace, std::uint32_t dstPodOffset,
                                        std::uint32_t nodePlace, std::uint32_t nodePodOffset);

// Routes with a cache: distances to each destination node (one reverse Dijkstra per destination, kept
// and settled only as far as the walks asked so far needed; a destination whose only neighbour is one
// node shares that node's search) and the paths already asked for. Holds a reference to the topology, which must outlive it. Not
// thread-safe: one router per thread.
class Router {
public:
    explicit Router(const Topology& topology);
    ~Router();
    Router(Router&&) noexcept;
    Router& operator=(Router&&) noexcept;

    // The links from GPU src to GPU dst (empty when src == dst), or an error naming both GPUs when no
    // path joins them or a GPU id is out of range. The reference stays valid until the router dies.
    [[nodiscard]] Result<const std::vector<LinkId>*> route(std::uint32_t srcGpu, std::uint32_t dstGpu,
                                                           std::uint64_t flowId);
    [[nodiscard]] std::size_t cachedPaths() const;
    // From now on, srcGpu → dstGpu (different servers, NIC per GPU) leaves by srcNicGpu's NIC and enters
    // by dstNicGpu's NIC (GPUs of the same servers as srcGpu and dstGpu). False (nothing changed) when
    // the pair already has another hint, a NIC GPU is on another server or has no NIC, or the pair was
    // already routed. Call before routing the pair.
    bool preferNics(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint32_t srcNicGpu, std::uint32_t dstNicGpu);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

// One route without keeping a cache.
[[nodiscard]] Result<std::vector<LinkId>> route(const Topology& topology, std::uint32_t srcGpu, std::uint32_t dstGpu,
                                                std::uint64_t flowId = 0);

} // namespace tw::network
