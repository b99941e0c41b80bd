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
// hashing the flow's header with its own seed. Every run picks the same paths. Single-server kinds only.
// ECMP on a switched fabric (leaf–spine, three-tier): replica-symmetric by construction (docs/model.md
// §5 "ECMP"). A GPU's group is the set of servers whose NICs reach the same leaves (a rail set, or a
// top-of-rack leaf), its place the index of its server among its group's servers, its local index l
// its index in its server (R GPUs per server). The choice among k next hops at node u is
//     ((mix(h) >> 32) + c · l_src) mod k,   c = k / gcd(k, R),
// h = FNV-1a 64 (same basis and prime) over the 20 bytes, little-endian, of (source's place u32,
// destination's place u32, rail offset (l_dst − l_src) mod R u32, u's tier u32 — 0 leaf, 1 spine, 2
// core, 3 + kind elsewhere — and the pair's relation u32: 1 same group | 2 same pod); on a leaf–spine
// (no pods) h is then fed the flow id (u64), which the simulation sets to 0 for every flow
// (EndpointRouter). mix is SplitMix64's finalizer (ecmpMix; Steele, Lea, Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014), and the high half is used: FNV-1a's state for two tiers
// differs by a nearly constant amount (only the tier byte differs), so without the finalizer the choices
// at a leaf and at the spine above it are correlated and leave cores unused. No group id, pod id or global id enters, so any
// permutation of groups (and of pods) that the fabric allows — a data-parallel shift by whole groups,
// whatever its wrap-around — maps the route of every pair onto the route of the image pair with the
// switches above in place; a rotation of the GPUs of every server (a tensor-parallel shift by one, l ↦ l
// + 1 mod R, rails with them) keeps the rail offset and adds c to every choice, R·c ≡ 0 (mod k), so it
// maps spine s (core s) to s + c mod k: a fabric automorphism. All flows of one GPU pair share a path.

#include "fabric/topology.h"

#include "base/error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tw::network {

// FNV-1a 64 of the bytes above (exposed for tests and the UI's explanation).
[[nodiscard]] std::uint64_t ecmpHash(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flowId, NodeId node);
// FNV-1a 64 of the place bytes above (switched fabrics).
[[nodiscard]] std::uint64_t placeEcmpHash(std::uint32_t srcPlace, std::uint32_t dstPlace, std::uint32_t railOffset,
                                          std::uint32_t tier, std::uint32_t relation);
// The same 20 bytes followed by the flow id (u64): a leaf–spine's hash.
// SplitMix64's finalizer (the switched fabrics' choice uses its high half).
[[nodiscard]] std::uint64_t ecmpMix(std::uint64_t z);
[[nodiscard]] std::uint64_t placeEcmpHash(std::uint32_t srcPlace, std::uint32_t dstPlace, std::uint32_t railOffset,
                                          std::uint32_t tier, std::uint32_t relation, std::uint64_t flowId);

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
