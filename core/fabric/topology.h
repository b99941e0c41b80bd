#pragma once
// Stage 5: the fabric under the stage 3 cluster — GPUs, PCIe switches, root complexes (the CPU),
// host memory, NVSwitches, NICs, leaf and spine switches — as a graph of directed links, each with
// its bandwidth per direction, latency and protocol. One factory, build(), turns a TopologySpec
// (the value the scenario holds) into a Topology. Rates: docs/model.md §5.
//
// Latencies (one-way, per link, switch traversal included in the link that enters the switch);
// first-order figures for a teaching model, not measurements:
//   PCIe (any generation)      1 µs    (a PCIe switch hop, TLP processing on both ends)
//   NVLink 3/4 (to NVSwitch)   0.5 µs
//   InfiniBand HDR/NDR         1 µs    (NIC ↔ leaf and leaf ↔ spine, cut-through switch)
//   RoCEv2                     2 µs
//   Ethernet + TCP             15 µs   (kernel TCP stack and a store-and-forward switch)
//   TCP over loopback          10 µs
//   host memory bus            0.1 µs  (root complex ↔ DRAM; 8 channels DDR4-3200 = 204.8 GB/s)
//
// GPU g of the cluster is local GPU g % gpusPerNode of server g / gpusPerNode (parallel::Cluster).
// One NVSwitch node stands for all the NVSwitch chips of a server (DGX H100 has four); its link to
// each GPU carries that GPU's whole NVLink bandwidth.

#include "base/error.h"
#include "base/keylog.h"
#include "base/units.h"
#include "parallel/plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::network {

using NodeId = std::uint32_t;
using LinkId = std::uint32_t;
inline constexpr NodeId kNoNode = 0xffffffffu;

enum class NodeKind { Gpu, PcieSwitch, RootComplex, NvSwitch, Nic, LeafSwitch, SpineSwitch, HostMemory };

// The link protocols. Ethernet links carry TCP/IPv4 (their overhead is TCP's, see overhead.h);
// RoCEv2 runs on Ethernet at the rate the spec gives. MemoryBus is the root complex ↔ host DRAM
// path that staging without GPUDirect P2P crosses (no packet overhead).
enum class Protocol {
    PcieGen3, PcieGen4, PcieGen5,
    NvLink3, NvLink4,
    InfinibandHdr, InfinibandNdr,
    RoCEv2,
    Ethernet10G, Ethernet25G, Ethernet100G, Ethernet400G,
    TcpLoopback,
    MemoryBus,
};
inline constexpr int kProtocolCount = 14;

// JSON / CLI names: "gpu", "pcie-switch", "root-complex", "nvswitch", "nic", "leaf", "spine", "host-memory".
// A three-tier fabric's core switches are SpineSwitch nodes named "core<k>" (the upper switch tiers
// share one kind until stage 5 draws pods; Topology::podPlace tells the in-pod spines from the cores).
[[nodiscard]] std::string_view toString(NodeKind k);
// "pcie-gen3", "pcie-gen4", "pcie-gen5", "nvlink3", "nvlink4", "ib-hdr", "ib-ndr", "rocev2",
// "ethernet-10g", "ethernet-25g", "ethernet-100g", "ethernet-400g", "tcp-loopback", "memory-bus".
[[nodiscard]] std::string_view toString(Protocol p);
[[nodiscard]] std::optional<Protocol> protocolFromString(std::string_view s);
[[nodiscard]] std::string_view displayName(Protocol p); // "PCIe Gen4 x16", "NVLink 4", "InfiniBand NDR" …

// Nominal rate per direction (B/s): PCIe x16 Gen3 16, Gen4 32, Gen5 64 GB/s; NVLink 3 300, NVLink 4
// 450 GB/s per GPU; IB HDR 200, NDR 400 Gb/s; Ethernet 10/25/100/400 Gb/s; RoCEv2 100 Gb/s (its rate
// is the spec's); loopback 0 (not a wire: memory speed, set by the caller); memory bus 204.8 GB/s.
[[nodiscard]] BytesPerSecond nominalBandwidth(Protocol p);
// One-way latency of a link of this protocol (the table above).
[[nodiscard]] Seconds nominalLatency(Protocol p);

[[nodiscard]] bool isPcie(Protocol p);
[[nodiscard]] bool isNvLink(Protocol p);
[[nodiscard]] bool isNetwork(Protocol p); // InfiniBand, RoCEv2, Ethernet: what a NIC can speak

struct Node {
    NodeKind kind = NodeKind::Gpu;
    std::string name;            // "n0.gpu3", "n0.pcie1", "n0.rc", "n0.host", "n0.nvswitch", "n0.nic2", "leaf2", "spine0"
    std::int64_t gpu = -1;       // the GPU's global id (GPUs only)
    std::int64_t server = -1;    // the server index of in-server parts, -1 for leaves and spines
};

struct Link {
    NodeId from = 0, to = 0;
    BytesPerSecond bandwidth = 0; // this direction
    Seconds latency = 0;
    Protocol protocol = Protocol::PcieGen4;
    LinkId reverse = 0;           // the other direction of the pair
    std::string id;               // "n0.gpu3-nvswitch" (its reverse "n0.nvswitch-gpu3"), "n1.nic0-leaf0", "leaf2-spine0"
};

enum class TopologyKind { PcieServer, NvSwitchNode, LeafSpine, PaperTestbed, ThreeTier };
enum class IntraNode { Pcie, NvSwitch };          // the servers of a leaf–spine fabric
enum class NicPlacement { PerGpu, PerNode };      // per GPU = rail-optimized

// "pcie-server", "nvswitch-node", "leaf-spine", "paper-testbed", "three-tier"; "pcie", "nvswitch";
// "per-gpu", "per-node".
[[nodiscard]] std::string_view toString(TopologyKind k);
[[nodiscard]] std::optional<TopologyKind> topologyKindFromString(std::string_view s);
[[nodiscard]] std::string_view toString(IntraNode k);
[[nodiscard]] std::optional<IntraNode> intraNodeFromString(std::string_view s);
[[nodiscard]] std::string_view toString(NicPlacement k);
[[nodiscard]] std::optional<NicPlacement> nicPlacementFromString(std::string_view s);
// Whether the kind joins several servers of kind intraNode through NICs and switches (leaf-spine,
// three-tier): the kinds whose intraNode, nicPlacement and NIC fields apply.
[[nodiscard]] bool isSwitchedFabric(TopologyKind k);

// What the scenario holds (JSON "topology"). Fields a kind does not use are ignored.
//   pcie-server:   one server, GPUs behind PCIe switches (gpusPerPcieSwitch each; 0 = on the root
//                  complex's own lanes), switches on the root complex, host memory on the root complex.
//   nvswitch-node: one DGX-like server: every GPU on the NVSwitch (NVLink) and, for host and NIC
//                  traffic, on a PCIe switch as in pcie-server.
//   leaf-spine:    cluster.nodes servers of kind intraNode; NICs per GPU (on the GPU's PCIe switch,
//                  NIC k of every server on the rail-k leaf of its group) or one per server (on the root
//                  complex); nicsPerLeaf NIC ports per leaf; every leaf has one uplink to each spine of
//                  nicsPerLeaf·nicBandwidth / (oversubscription·spines) (no spines with one leaf).
//   three-tier:    pods of leaf–spine joined by a core layer (a fat tree / Clos with pods: Al-Fares et al.,
//                  "A Scalable, Commodity Data Center Network Architecture", SIGCOMM 2008, §3; Llama 3's
//                  24k-GPU RoCE clusters, arXiv 2407.21783 §3.3.1). Servers as in leaf-spine, gpusPerPod GPUs
//                  (consecutive servers) per pod. In a pod: leavesPerPod leaves — rail-optimized (railOptimized
//                  and a NIC per GPU): sets of one leaf per rail, NIC k of a server on the rail-k leaf of its
//                  server group; else each leaf takes an equal run of whole servers (a top-of-rack switch) —
//                  and spinesPerPod spines, every leaf linked to every spine of its pod. coreSwitches cores in
//                  spinesPerPod planes of coreSwitches/spinesPerPod: spine j of every pod is linked to every
//                  core of plane j. Per-pair rates (aggregated ports): leaf–spine = a leaf's NIC ports ×
//                  nicBandwidth / (oversubscription · spinesPerPod); spine–core = a spine's downlinks
//                  (leavesPerPod × leaf–spine) / (coreOversubscription · cores per plane); an explicit
//                  leafSpineBandwidth / spineCoreBandwidth replaces its tier's figure (then that tier's
//                  oversubscription must stay 1). One pod has no cores; one pod of one leaf no spines.
//   paper-testbed: the paper's appendix A.3 — single-GPU servers (GPU on the root complex, PCIe),
//                  one 10 Gb/s Ethernet NIC each, one switch; TCP sockets, so GPU data always stages
//                  through host memory (no GPUDirect).
// gpuDirectP2P off: GPU ↔ GPU traffic that would cross PCIe stages through host memory (GPU → root
// complex → host memory → root complex → GPU), and across servers the NICs read and write host
// memory (no GPUDirect RDMA). NVLink traffic is unaffected.
//
// Two fields are "auto" by default (nullopt; JSON "auto" or the key left out):
//   nvlink        follows the GPU: A100 → NVLink 3, H100/H200 → NVLink 4 (scenario::resolvedTopology,
//                 which knows the GPU); a spec never resolved against a GPU builds NVLink 4
//                 (kUnresolvedNvLink).
//   nicBandwidth  the NIC protocol's nominal rate (an ethernet-10g NIC runs at 10 Gb/s). An explicit
//                 rate may be lower (a NIC slower than its link) but not above the nominal rate
//                 (RoCEv2: not above 400 Gb/s, the fastest Ethernet it runs on).
struct TopologySpec {
    TopologyKind kind = TopologyKind::NvSwitchNode;
    std::uint64_t gpusPerPcieSwitch = 2;
    bool gpuDirectP2P = true;
    std::optional<Protocol> pcie;             // nullopt: follow the GPU (scenario::resolvedTopology)
    std::optional<Protocol> nvlink;           // nullopt: follow the GPU
    IntraNode intraNode = IntraNode::NvSwitch;
    NicPlacement nicPlacement = NicPlacement::PerGpu;
    Protocol nicProtocol = Protocol::InfinibandNdr;
    std::optional<BytesPerSecond> nicBandwidth; // per NIC per direction; nullopt: the protocol's nominal rate
    double oversubscription = 1.0;           // leaf downlink : uplink capacity, ≥ 1
    std::uint64_t nicsPerLeaf = 32;
    std::uint64_t spines = 4;
    // three-tier (JSON written only for that kind or when not the default):
    std::uint64_t gpusPerPod = 256;          // whole servers
    std::uint64_t leavesPerPod = 8;
    std::uint64_t spinesPerPod = 8;
    std::uint64_t coreSwitches = 16;         // a multiple of spinesPerPod (one plane per pod spine)
    double coreOversubscription = 1.0;       // spine downlink : uplink capacity, ≥ 1
    bool railOptimized = true;               // with a NIC per GPU; one NIC per server is one rail
    std::optional<BytesPerSecond> leafSpineBandwidth; // per leaf–spine pair per direction; nullopt: from oversubscription
    std::optional<BytesPerSecond> spineCoreBandwidth; // per spine–core pair per direction; nullopt: from coreOversubscription
    bool operator==(const TopologySpec&) const = default;
};

// The NVLink generation of a spec whose "auto" was never resolved against a GPU (hand-made specs, the
// tests of this layer): NVLink 4, the DGX H100's.
inline constexpr Protocol kUnresolvedNvLink = Protocol::NvLink4;
// The PCIe generation of such a spec: Gen4, the DGX A100's.
inline constexpr Protocol kUnresolvedPcie = Protocol::PcieGen4;
// The fields as built: the explicit value, or the auto one (see TopologySpec).
[[nodiscard]] Protocol nvlinkOf(const TopologySpec& spec);
[[nodiscard]] Protocol pcieOf(const TopologySpec& spec);
[[nodiscard]] BytesPerSecond nicBandwidthOf(const TopologySpec& spec);
// The fastest rate a NIC of this protocol may be given: its nominal rate (RoCEv2: 400 Gb/s).
[[nodiscard]] BytesPerSecond maxNicBandwidth(Protocol p);

// A three-tier fabric's shape for a cluster: the figures of TopologySpec's "three-tier" (validate() first).
struct ThreeTierShape {
    std::uint64_t serversPerPod = 0, pods = 0;   // the last pod may be partial
    std::uint64_t rails = 1;                     // leaves per server group (NICs per server when rail-optimized)
    std::uint64_t serversPerGroup = 0;           // servers under one leaf (one set of rail leaves)
    std::uint64_t coresPerPlane = 0;
    BytesPerSecond leafSpine = 0, spineCore = 0; // per pair, per direction
    bool operator==(const ThreeTierShape&) const = default;
};
[[nodiscard]] ThreeTierShape threeTierShape(const TopologySpec& spec, const parallel::Cluster& cluster);

// The fabric's limit (nodes of the graph grow ~3× with the GPUs).
inline constexpr std::uint64_t kMaxTopologyGpus = std::uint64_t{1} << 17;

// Every reason the spec cannot be built for this cluster, each naming its JSON path under
// "topology." (zero or non-finite bandwidth, oversubscription < 1, a protocol of the wrong family,
// a single-server kind for several nodes, a testbed with more than one GPU per node …).
[[nodiscard]] std::vector<Error> validate(const TopologySpec& spec, const parallel::Cluster& cluster);

class Topology {
public:
    NodeId addNode(Node node);
    // Adds the pair a → b and b → a (same rate, latency and protocol); returns the a → b link. The
    // ids are "<a>-<b>", b's server prefix dropped when both are parts of the same server.
    LinkId addLinkPair(NodeId a, NodeId b, BytesPerSecond bandwidth, Seconds latency, Protocol protocol);

    [[nodiscard]] const std::vector<Node>& nodes() const { return m_nodes; }
    [[nodiscard]] const std::vector<Link>& links() const { return m_links; }
    [[nodiscard]] const Node& node(NodeId n) const { return m_nodes[n]; }
    [[nodiscard]] const Link& link(LinkId l) const { return m_links[l]; }
    [[nodiscard]] const std::vector<LinkId>& outLinks(NodeId n) const { return m_out[n]; } // ascending ids
    [[nodiscard]] const std::vector<LinkId>& inLinks(NodeId n) const { return m_in[n]; }
    [[nodiscard]] std::optional<LinkId> findLink(std::string_view id) const;
    [[nodiscard]] std::optional<LinkId> findLink(NodeId from, NodeId to) const;
    [[nodiscard]] std::optional<NodeId> findNode(std::string_view name) const;
    [[nodiscard]] std::size_t countNodes(NodeKind k) const;

    [[nodiscard]] std::uint64_t gpuCount() const { return m_gpu.size(); }
    // The node of GPU `gpu` (< gpuCount()); kNoNode for an id a hand-made topology skipped.
    [[nodiscard]] NodeId gpuNode(std::uint64_t gpu) const { return m_gpu[gpu]; }
    // The NIC GPU `gpu` reaches other servers through: with one NIC per GPU (rail-optimized) the NIC on
    // its own PCIe switch, NIC k for local GPU k, as NCCL's topology search picks the nearest NIC;
    // kNoNode when the fabric has no NIC of the GPU's own (one per server, the testbed, one server).
    void setGpuNic(std::uint64_t gpu, NodeId nic);
    [[nodiscard]] NodeId gpuNic(std::uint64_t gpu) const { return gpu < m_gpuNic.size() ? m_gpuNic[gpu] : kNoNode; }
    // Host memory of a server (the staging point without P2P); nullopt when the server has none.
    [[nodiscard]] std::optional<NodeId> hostMemory(std::int64_t server) const;

    // Pods (three-tier fabrics): every node of pod p (its servers' parts, leaves and spines) has its index
    // among the pod's nodes in build order, so the i-th node of every pod plays the same part; a core
    // switch is in no pod (kNoPod) and has its core index. Empty (hasPods false) for other kinds.
    static constexpr std::uint32_t kNoPod = 0xffffffffu;
    struct PodPlace {
        std::uint32_t pod = kNoPod;
        std::uint32_t index = 0;
        bool operator==(const PodPlace&) const = default;
    };
    void setPodPlace(NodeId n, PodPlace place);
    [[nodiscard]] bool hasPods() const { return m_pods > 0; }
    [[nodiscard]] std::uint32_t podCount() const { return m_pods; }
    [[nodiscard]] PodPlace podPlace(NodeId n) const { return n < m_podPlace.size() ? m_podPlace[n] : PodPlace{}; }

    // Whether GPU ↔ GPU traffic stages through host memory (see TopologySpec::gpuDirectP2P).
    bool stagesThroughHost = false;
    // Whether GPUs of one server reach each other over NVLink (then they never stage, P2P or not).
    bool nvlinkPeers = false;
    TopologySpec spec;          // what it was built from (default for hand-made topologies)
    parallel::Cluster cluster;

private:
    std::vector<Node> m_nodes;
    std::vector<Link> m_links;
    std::vector<std::vector<LinkId>> m_out, m_in;
    std::vector<NodeId> m_gpu; // GPU id → node
    std::vector<NodeId> m_gpuNic; // GPU id → its own NIC (rail-optimized fabrics)
    std::vector<std::pair<std::int64_t, NodeId>> m_host;
    std::vector<PodPlace> m_podPlace; // per node (three-tier)
    std::uint32_t m_pods = 0;
};

// The one factory: validates, then builds the spec's kind for the cluster (node count and GPUs per
// node come from the cluster). The first validation error when it cannot.
[[nodiscard]] Result<Topology> build(const TopologySpec& spec, const parallel::Cluster& cluster);

// JSON of a TopologySpec (an object; every field written):
//   {"kind": "leaf-spine", "gpus_per_pcie_switch": 2, "gpudirect_p2p": true, "pcie": "auto",
//    "nvlink": "auto", "intra_node": "nvswitch", "nic_placement": "per-gpu", "nic_protocol": "ib-ndr",
//    "nic_bandwidth": "auto", "oversubscription": 1, "nics_per_leaf": 32, "spines": 4}
// ("pcie": "pcie-gen5", "nvlink": "nvlink3" and "nic_bandwidth": 2.5e10 when explicit). The three-tier
// fields follow for that kind (and for another kind only when not the default, so its files stay as
// they were):
//   "gpus_per_pod": 256, "leaves_per_pod": 8, "spines_per_pod": 8, "core_switches": 16,
//   "core_oversubscription": 1, "rail_optimized": true, "leaf_spine_bandwidth": "auto", "spine_core_bandwidth": "auto"
// Missing keys keep their defaults; unknown keys, wrong types and unknown names are errors with their
// path below `path` ("topology.kind: unknown kind \"mesh\" (expected …)").
[[nodiscard]] std::string topologyToJson(const TopologySpec& spec);
// With `log`, every key the reader accepts is added to it (read from "{}", the whole list).
[[nodiscard]] Result<TopologySpec> topologyFromJson(std::string_view json, const std::string& path = "topology",
                                                    KeyLog* log = nullptr);

} // namespace tw::network
