#include "topology.h"

#include "topology_p.h"

#include "base/enumnames.h"
#include "base/unitparse.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <utility>

namespace tw::network {

namespace {

std::string I(std::uint64_t v) { return formatInteger(static_cast<std::int64_t>(v)); }

std::string inQuotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

// One row per enum value: the JSON name and, for protocols, the name people read (base/enumnames.h).
constexpr std::array kNodeKindNames{EnumName{NodeKind::Gpu, "gpu"},
                                    EnumName{NodeKind::PcieSwitch, "pcie-switch"},
                                    EnumName{NodeKind::RootComplex, "root-complex"},
                                    EnumName{NodeKind::NvSwitch, "nvswitch"},
                                    EnumName{NodeKind::Nic, "nic"},
                                    EnumName{NodeKind::LeafSwitch, "leaf"},
                                    EnumName{NodeKind::SpineSwitch, "spine"},
                                    EnumName{NodeKind::HostMemory, "host-memory"}};
constexpr std::array kProtocolNames{
    EnumName{Protocol::PcieGen3, "pcie-gen3", "PCIe Gen3 x16"},
    EnumName{Protocol::PcieGen4, "pcie-gen4", "PCIe Gen4 x16"},
    EnumName{Protocol::PcieGen5, "pcie-gen5", "PCIe Gen5 x16"},
    EnumName{Protocol::NvLink3, "nvlink3", "NVLink 3"},
    EnumName{Protocol::NvLink4, "nvlink4", "NVLink 4"},
    EnumName{Protocol::InfinibandHdr, "ib-hdr", "InfiniBand HDR"},
    EnumName{Protocol::InfinibandNdr, "ib-ndr", "InfiniBand NDR"},
    EnumName{Protocol::RoCEv2, "rocev2", "RoCEv2"},
    EnumName{Protocol::Ethernet10G, "ethernet-10g", "10 Gb/s Ethernet (TCP)"},
    EnumName{Protocol::Ethernet25G, "ethernet-25g", "25 Gb/s Ethernet (TCP)"},
    EnumName{Protocol::Ethernet100G, "ethernet-100g", "100 Gb/s Ethernet (TCP)"},
    EnumName{Protocol::Ethernet400G, "ethernet-400g", "400 Gb/s Ethernet (TCP)"},
    EnumName{Protocol::TcpLoopback, "tcp-loopback", "TCP over loopback"},
    EnumName{Protocol::MemoryBus, "memory-bus", "host memory bus"}};
constexpr std::array kTopologyKindNames{
    EnumName{TopologyKind::PcieServer, "pcie-server"}, EnumName{TopologyKind::NvSwitchNode, "nvswitch-node"},
    EnumName{TopologyKind::LeafSpine, "leaf-spine"}, EnumName{TopologyKind::PaperTestbed, "paper-testbed"},
    EnumName{TopologyKind::ThreeTier, "three-tier"}};
constexpr std::array kIntraNodeNames{EnumName{IntraNode::Pcie, "pcie"}, EnumName{IntraNode::NvSwitch, "nvswitch"}};
constexpr std::array kNicPlacementNames{EnumName{NicPlacement::PerGpu, "per-gpu"},
                                        EnumName{NicPlacement::PerNode, "per-node"}};

template <class Pred>
std::string protocolNames(Pred keep)
{
    std::string out;
    for (const auto& row : kProtocolNames)
        if (const Protocol p = row.value; keep(p))
            out += (out.empty() ? "" : ", ") + std::string(toString(p));
    return out;
}

constexpr double GB = 1e9;
constexpr double Gb = 1e9 / 8;

} // namespace

std::string_view toString(NodeKind k) { return nameOf(kNodeKindNames, k); }
std::string_view toString(Protocol p) { return nameOf(kProtocolNames, p); }
std::optional<Protocol> protocolFromString(std::string_view s) { return valueOf(kProtocolNames, s); }
std::string_view displayName(Protocol p) { return displayOf(kProtocolNames, p, ""); }

// docs/model.md §5: typical link rates per direction.
BytesPerSecond nominalBandwidth(Protocol p)
{
    switch (p) {
    case Protocol::PcieGen3: return 16 * GB;
    case Protocol::PcieGen4: return 32 * GB;
    case Protocol::PcieGen5: return 64 * GB;
    case Protocol::NvLink3: return 300 * GB;
    case Protocol::NvLink4: return 450 * GB;
    case Protocol::InfinibandHdr: return 200 * Gb;
    case Protocol::InfinibandNdr: return 400 * Gb;
    case Protocol::RoCEv2: return 100 * Gb;
    case Protocol::Ethernet10G: return 10 * Gb;
    case Protocol::Ethernet25G: return 25 * Gb;
    case Protocol::Ethernet100G: return 100 * Gb;
    case Protocol::Ethernet400G: return 400 * Gb;
    case Protocol::TcpLoopback: return 0;
    case Protocol::MemoryBus: return 204.8 * GB; // 8 channels × DDR4-3200 × 8 B
    }
    return 0;
}

Seconds nominalLatency(Protocol p)
{
    switch (p) {
    case Protocol::PcieGen3:
    case Protocol::PcieGen4:
    case Protocol::PcieGen5: return 1e-6;
    case Protocol::NvLink3:
    case Protocol::NvLink4: return 0.5e-6;
    case Protocol::InfinibandHdr:
    case Protocol::InfinibandNdr: return 1e-6;
    case Protocol::RoCEv2: return 2e-6;
    case Protocol::Ethernet10G:
    case Protocol::Ethernet25G:
    case Protocol::Ethernet100G:
    case Protocol::Ethernet400G: return 15e-6;
    case Protocol::TcpLoopback: return 10e-6;
    case Protocol::MemoryBus: return 0.1e-6;
    }
    return 0;
}

Protocol nvlinkOf(const TopologySpec& spec) { return spec.nvlink.value_or(kUnresolvedNvLink); }
Protocol pcieOf(const TopologySpec& spec) { return spec.pcie.value_or(kUnresolvedPcie); }

BytesPerSecond nicBandwidthOf(const TopologySpec& spec)
{
    return spec.nicBandwidth.value_or(nominalBandwidth(spec.nicProtocol));
}

BytesPerSecond maxNicBandwidth(Protocol p)
{
    // RoCEv2's nominal 100 Gb/s is a typical port; it runs on any Ethernet rate up to 400 Gb/s.
    return p == Protocol::RoCEv2 ? nominalBandwidth(Protocol::Ethernet400G) : nominalBandwidth(p);
}

bool isPcie(Protocol p) { return p == Protocol::PcieGen3 || p == Protocol::PcieGen4 || p == Protocol::PcieGen5; }
bool isNvLink(Protocol p) { return p == Protocol::NvLink3 || p == Protocol::NvLink4; }
bool isNetwork(Protocol p)
{
    switch (p) {
    case Protocol::InfinibandHdr:
    case Protocol::InfinibandNdr:
    case Protocol::RoCEv2:
    case Protocol::Ethernet10G:
    case Protocol::Ethernet25G:
    case Protocol::Ethernet100G:
    case Protocol::Ethernet400G: return true;
    default: return false;
    }
}

std::string_view toString(TopologyKind k) { return nameOf(kTopologyKindNames, k); }
std::optional<TopologyKind> topologyKindFromString(std::string_view s) { return valueOf(kTopologyKindNames, s); }

bool isSwitchedFabric(TopologyKind k) { return k == TopologyKind::LeafSpine || k == TopologyKind::ThreeTier; }

std::string_view toString(IntraNode k) { return nameOf(kIntraNodeNames, k); }
std::optional<IntraNode> intraNodeFromString(std::string_view s) { return valueOf(kIntraNodeNames, s); }
std::string_view toString(NicPlacement k) { return nameOf(kNicPlacementNames, k); }
std::optional<NicPlacement> nicPlacementFromString(std::string_view s) { return valueOf(kNicPlacementNames, s); }

// ---------------------------------------------------------------------------------------------
// Validation

std::vector<Error> validate(const TopologySpec& spec, const parallel::Cluster& cluster)
{
    std::vector<Error> errors;
    const std::string kind(toString(spec.kind));
    if (cluster.nodes == 0 || cluster.gpusPerNode == 0) {
        errors.push_back(errorAt("topology", "the cluster has no GPUs (" + I(cluster.nodes) + " nodes × "
                                            + I(cluster.gpusPerNode) + " GPUs per node)"));
        return errors;
    }
    if (cluster.gpusPerNode > kMaxTopologyGpus || cluster.nodes > kMaxTopologyGpus / cluster.gpusPerNode)
        errors.push_back(errorAt("topology", "a cluster of " + I(cluster.nodes) + " nodes × " + I(cluster.gpusPerNode)
                                            + " GPUs is more than the fabric model holds (" + I(kMaxTopologyGpus)
                                            + " GPUs)"));
    if ((spec.kind == TopologyKind::PcieServer || spec.kind == TopologyKind::NvSwitchNode) && cluster.nodes != 1)
        errors.push_back(errorAt("topology.kind", kind + " is one server, but the cluster has " + I(cluster.nodes)
                                                 + " nodes (use leaf-spine for several servers)"));
    if (spec.kind == TopologyKind::PaperTestbed && cluster.gpusPerNode != 1)
        errors.push_back(errorAt("topology.kind", "paper-testbed has one GPU per node, but the cluster has "
                                                 + I(cluster.gpusPerNode) + " GPUs per node"));
    if (spec.pcie && !isPcie(*spec.pcie))
        errors.push_back(errorAt("topology.pcie", inQuotes(toString(*spec.pcie)) + " is not a PCIe generation (expected "
                                                 + protocolNames(isPcie) + ")"));
    const bool usesNvLink = spec.kind == TopologyKind::NvSwitchNode
        || (isSwitchedFabric(spec.kind) && spec.intraNode == IntraNode::NvSwitch);
    if (usesNvLink && spec.nvlink && !isNvLink(*spec.nvlink))
        errors.push_back(errorAt("topology.nvlink", inQuotes(toString(*spec.nvlink)) + " is not an NVLink generation (expected "
                                                   + protocolNames(isNvLink) + " or auto)"));
    if (spec.kind != TopologyKind::PaperTestbed && spec.gpusPerPcieSwitch > 1024)
        errors.push_back(errorAt("topology.gpus_per_pcie_switch",
                            I(spec.gpusPerPcieSwitch) + " GPUs on one PCIe switch is more than 1,024"));
    if (isSwitchedFabric(spec.kind)) {
        if (!isNetwork(spec.nicProtocol))
            errors.push_back(errorAt("topology.nic_protocol", inQuotes(toString(spec.nicProtocol))
                                                             + " is not a network protocol (expected "
                                                             + protocolNames(isNetwork) + ")"));
        if (spec.nicBandwidth) {
            const double rate = *spec.nicBandwidth;
            if (!(rate > 0) || !std::isfinite(rate))
                errors.push_back(errorAt("topology.nic_bandwidth", "must be a finite number of bytes per second > 0 (or "
                                                                  "\"auto\"), got " + formatCount(rate, 3)));
            else if (isNetwork(spec.nicProtocol) && rate > maxNicBandwidth(spec.nicProtocol))
                errors.push_back(errorAt("topology.nic_bandwidth",
                                         formatCount(rate * 8 / 1e9, 3) + " Gb/s per direction is faster than "
                                             + std::string(toString(spec.nicProtocol)) + " runs ("
                                             + formatCount(maxNicBandwidth(spec.nicProtocol) * 8 / 1e9, 3)
                                             + " Gb/s); give at most that, or \"auto\" for its nominal rate"));
        }
        if (!(spec.oversubscription >= 1) || !std::isfinite(spec.oversubscription))
            errors.push_back(errorAt("topology.oversubscription",
                                "must be a finite ratio ≥ 1 (1 = non-blocking, 2 = uplinks of half the downlink "
                                "capacity), got "
                                    + formatCount(spec.oversubscription, 3)));
    }
    if (spec.kind == TopologyKind::ThreeTier)
        detail::validateThreeTier(spec, cluster, errors);
    if (spec.kind == TopologyKind::LeafSpine) {
        if (spec.nicsPerLeaf == 0)
            errors.push_back(errorAt("topology.nics_per_leaf", "a leaf needs at least one NIC port"));
        if (spec.spines == 0)
            errors.push_back(errorAt("topology.spines", "a leaf–spine fabric needs at least one spine"));
        if (spec.spines > 4096)
            errors.push_back(errorAt("topology.spines", I(spec.spines) + " spines is more than 4,096"));
    }
    return errors;
}

// ---------------------------------------------------------------------------------------------
// The graph

NodeId Topology::addNode(Node node)
{
    const auto id = static_cast<NodeId>(m_nodes.size());
    if (node.kind == NodeKind::Gpu && node.gpu >= 0) {
        const auto g = static_cast<std::size_t>(node.gpu);
        if (m_gpu.size() <= g)
            m_gpu.resize(g + 1, kNoNode);
        m_gpu[g] = id;
    }
    if (node.kind == NodeKind::HostMemory)
        m_host.emplace_back(node.server, id);
    m_nodes.push_back(std::move(node));
    m_out.emplace_back();
    m_in.emplace_back();
    return id;
}

LinkId Topology::addLinkPair(NodeId a, NodeId b, BytesPerSecond bandwidth, Seconds latency, Protocol protocol)
{
    auto idOf = [&](NodeId x, NodeId y) {
        const Node& nx = m_nodes[x];
        const Node& ny = m_nodes[y];
        std::string second = ny.name;
        if (nx.server >= 0 && nx.server == ny.server) {
            if (const auto dot = second.find('.'); dot != std::string::npos)
                second = second.substr(dot + 1);
        }
        return nx.name + "-" + second;
    };
    const auto ab = static_cast<LinkId>(m_links.size());
    const LinkId ba = ab + 1;
    m_links.push_back({a, b, bandwidth, latency, protocol, ba, idOf(a, b)});
    m_links.push_back({b, a, bandwidth, latency, protocol, ab, idOf(b, a)});
    m_out[a].push_back(ab);
    m_in[b].push_back(ab);
    m_out[b].push_back(ba);
    m_in[a].push_back(ba);
    return ab;
}

std::optional<LinkId> Topology::findLink(std::string_view id) const
{
    for (LinkId l = 0; l < m_links.size(); ++l)
        if (m_links[l].id == id)
            return l;
    return std::nullopt;
}

std::optional<LinkId> Topology::findLink(NodeId from, NodeId to) const
{
    for (LinkId l : m_out[from])
        if (m_links[l].to == to)
            return l;
    return std::nullopt;
}

std::optional<NodeId> Topology::findNode(std::string_view name) const
{
    for (NodeId n = 0; n < m_nodes.size(); ++n)
        if (m_nodes[n].name == name)
            return n;
    return std::nullopt;
}

std::size_t Topology::countNodes(NodeKind k) const
{
    std::size_t n = 0;
    for (const Node& node : m_nodes)
        n += node.kind == k;
    return n;
}

void Topology::setGpuNic(std::uint64_t gpu, NodeId nic)
{
    if (m_gpuNic.size() <= gpu)
        m_gpuNic.resize(gpu + 1, kNoNode);
    m_gpuNic[gpu] = nic;
}

void Topology::setPodPlace(NodeId n, PodPlace place)
{
    if (m_podPlace.size() <= n)
        m_podPlace.resize(n + 1);
    m_podPlace[n] = place;
    if (place.pod != kNoPod)
        m_pods = std::max(m_pods, place.pod + 1);
}

std::optional<NodeId> Topology::hostMemory(std::int64_t server) const
{
    for (const auto& [s, id] : m_host)
        if (s == server)
            return id;
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Builders

namespace {

struct Server {
    NodeId rc = 0, host = 0;
    std::vector<NodeId> gpuParent; // per local GPU: its PCIe switch, or the root complex
};

std::string prefix(std::uint64_t server) { return "n" + std::to_string(server) + "."; }

Link pcieLink(Protocol p) { return {0, 0, nominalBandwidth(p), nominalLatency(p), p, 0, {}}; }

Server addServer(Topology& t, std::uint64_t s, std::uint64_t gpus, std::uint64_t gpusPerSwitch, Protocol pcie,
                 std::optional<Protocol> nvlink);

} // namespace

std::vector<NodeId> detail::addServerWithNics(Topology& t, const TopologySpec& spec, std::uint64_t s,
                                              std::uint64_t gpusPerNode)
{
    const Server srv = addServer(t, s, gpusPerNode, spec.gpusPerPcieSwitch, pcieOf(spec),
                                 spec.intraNode == IntraNode::NvSwitch ? std::optional<Protocol>(nvlinkOf(spec))
                                                                       : std::nullopt);
    const std::string p = prefix(s);
    const Link pl = pcieLink(pcieOf(spec));
    std::vector<NodeId> nics;
    if (spec.nicPlacement == NicPlacement::PerGpu) {
        for (std::uint64_t k = 0; k < gpusPerNode; ++k) {
            const NodeId nic = t.addNode({NodeKind::Nic, p + "nic" + std::to_string(k), -1, static_cast<std::int64_t>(s)});
            t.addLinkPair(srv.gpuParent[k], nic, pl.bandwidth, pl.latency, pcieOf(spec));
            t.setGpuNic(s * gpusPerNode + k, nic);
            nics.push_back(nic);
        }
    } else {
        const NodeId nic = t.addNode({NodeKind::Nic, p + "nic0", -1, static_cast<std::int64_t>(s)});
        t.addLinkPair(srv.rc, nic, pl.bandwidth, pl.latency, pcieOf(spec));
        nics.push_back(nic);
    }
    return nics;
}

namespace {

// One server: root complex (the CPU) with host memory, PCIe switches of gpusPerPcieSwitch GPUs
// (none when 0: the GPUs sit on the root complex), and for NVSwitch servers the NVSwitch.
Server addServer(Topology& t, std::uint64_t s, std::uint64_t gpus, std::uint64_t gpusPerSwitch, Protocol pcie,
                 std::optional<Protocol> nvlink)
{
    const auto server = static_cast<std::int64_t>(s);
    const std::string p = prefix(s);
    Server out;
    out.rc = t.addNode({NodeKind::RootComplex, p + "rc", -1, server});
    out.host = t.addNode({NodeKind::HostMemory, p + "host", -1, server});
    t.addLinkPair(out.rc, out.host, nominalBandwidth(Protocol::MemoryBus), nominalLatency(Protocol::MemoryBus),
                  Protocol::MemoryBus);
    const Link pl = pcieLink(pcie);
    std::vector<NodeId> switches;
    if (gpusPerSwitch > 0) {
        const std::uint64_t n = (gpus + gpusPerSwitch - 1) / gpusPerSwitch;
        for (std::uint64_t k = 0; k < n; ++k) {
            switches.push_back(t.addNode({NodeKind::PcieSwitch, p + "pcie" + std::to_string(k), -1, server}));
            t.addLinkPair(out.rc, switches.back(), pl.bandwidth, pl.latency, pcie);
        }
    }
    std::optional<NodeId> nvswitch;
    if (nvlink)
        nvswitch = t.addNode({NodeKind::NvSwitch, p + "nvswitch", -1, server});
    for (std::uint64_t k = 0; k < gpus; ++k) {
        const NodeId g = t.addNode({NodeKind::Gpu, p + "gpu" + std::to_string(k), static_cast<std::int64_t>(s * gpus + k),
                                    server});
        const NodeId parent = gpusPerSwitch > 0 ? switches[k / gpusPerSwitch] : out.rc;
        out.gpuParent.push_back(parent);
        if (nvswitch)
            t.addLinkPair(g, *nvswitch, nominalBandwidth(*nvlink), nominalLatency(*nvlink), *nvlink);
        t.addLinkPair(g, parent, pl.bandwidth, pl.latency, pcie);
    }
    return out;
}

Topology buildLeafSpine(const TopologySpec& spec, const parallel::Cluster& cluster)
{
    Topology t;
    const bool nv = spec.intraNode == IntraNode::NvSwitch;
    const std::uint64_t per = cluster.gpusPerNode;
    const bool rail = spec.nicPlacement == NicPlacement::PerGpu;
    const std::uint64_t groups = (cluster.nodes + spec.nicsPerLeaf - 1) / spec.nicsPerLeaf;
    const std::uint64_t leafCount = groups * (rail ? per : 1);
    std::vector<NodeId> nics; // per server: its NICs, in order
    std::vector<std::uint64_t> nicLeaf;
    for (std::uint64_t s = 0; s < cluster.nodes; ++s) {
        const std::uint64_t group = s / spec.nicsPerLeaf;
        const std::vector<NodeId> own = detail::addServerWithNics(t, spec, s, per);
        for (std::size_t k = 0; k < own.size(); ++k) {
            nics.push_back(own[k]);
            nicLeaf.push_back(rail ? group * per + k : group);
        }
    }
    std::vector<NodeId> leaves;
    for (std::uint64_t l = 0; l < leafCount; ++l)
        leaves.push_back(t.addNode({NodeKind::LeafSwitch, "leaf" + std::to_string(l), -1, -1}));
    const Seconds lat = nominalLatency(spec.nicProtocol);
    for (std::size_t i = 0; i < nics.size(); ++i)
        t.addLinkPair(nics[i], leaves[nicLeaf[i]], nicBandwidthOf(spec), lat, spec.nicProtocol);
    if (leafCount > 1) {
        // Each leaf's uplink capacity is its downlink capacity (nicsPerLeaf ports) ÷ oversubscription,
        // spread evenly over one uplink to every spine.
        const BytesPerSecond up = static_cast<double>(spec.nicsPerLeaf) * nicBandwidthOf(spec)
            / (spec.oversubscription * static_cast<double>(spec.spines));
        std::vector<NodeId> spines;
        for (std::uint64_t k = 0; k < spec.spines; ++k)
            spines.push_back(t.addNode({NodeKind::SpineSwitch, "spine" + std::to_string(k), -1, -1}));
        for (NodeId leaf : leaves)
            for (NodeId spine : spines)
                t.addLinkPair(leaf, spine, up, lat, spec.nicProtocol);
    }
    t.stagesThroughHost = !spec.gpuDirectP2P;
    t.nvlinkPeers = nv;
    return t;
}

Topology buildTestbed(const parallel::Cluster& cluster, Protocol pcie)
{
    Topology t;
    const NodeId sw = t.addNode({NodeKind::LeafSwitch, "switch", -1, -1});
    for (std::uint64_t s = 0; s < cluster.nodes; ++s) {
        const Server srv = addServer(t, s, 1, 0, pcie, std::nullopt);
        const NodeId nic = t.addNode({NodeKind::Nic, prefix(s) + "nic0", -1, static_cast<std::int64_t>(s)});
        const Link pl = pcieLink(pcie);
        t.addLinkPair(srv.rc, nic, pl.bandwidth, pl.latency, pcie);
        t.addLinkPair(nic, sw, nominalBandwidth(Protocol::Ethernet10G), nominalLatency(Protocol::Ethernet10G),
                      Protocol::Ethernet10G);
    }
    t.stagesThroughHost = true; // TCP sockets: GPU buffers are copied to host memory and back
    return t;
}

} // namespace

Result<Topology> build(const TopologySpec& spec, const parallel::Cluster& cluster)
{
    if (const std::vector<Error> errors = validate(spec, cluster); !errors.empty())
        return errors.front();
    Topology t;
    switch (spec.kind) {
    case TopologyKind::PcieServer:
        addServer(t, 0, cluster.gpusPerNode, spec.gpusPerPcieSwitch, pcieOf(spec), std::nullopt);
        t.stagesThroughHost = !spec.gpuDirectP2P;
        break;
    case TopologyKind::NvSwitchNode:
        addServer(t, 0, cluster.gpusPerNode, spec.gpusPerPcieSwitch, pcieOf(spec), nvlinkOf(spec));
        t.stagesThroughHost = !spec.gpuDirectP2P;
        t.nvlinkPeers = true;
        break;
    case TopologyKind::LeafSpine: t = buildLeafSpine(spec, cluster); break;
    case TopologyKind::PaperTestbed: t = buildTestbed(cluster, pcieOf(spec)); break;
    case TopologyKind::ThreeTier: t = detail::buildThreeTier(spec, cluster); break;
    }
    t.spec = spec;
    t.cluster = cluster;
    return t;
}

// ---------------------------------------------------------------------------------------------
// JSON

std::string topologyToJson(const TopologySpec& s)
{
    using Json = nlohmann::ordered_json;
    // A rate: its number, or "auto".
    auto rate = [](const std::optional<BytesPerSecond>& r) { return r ? Json(*r) : Json("auto"); };
    Json j;
    j["kind"] = toString(s.kind);
    j["gpus_per_pcie_switch"] = s.gpusPerPcieSwitch;
    j["gpudirect_p2p"] = s.gpuDirectP2P;
    j["pcie"] = s.pcie ? toString(*s.pcie) : "auto";
    j["nvlink"] = s.nvlink ? toString(*s.nvlink) : "auto";
    j["intra_node"] = toString(s.intraNode);
    j["nic_placement"] = toString(s.nicPlacement);
    j["nic_protocol"] = toString(s.nicProtocol);
    j["nic_bandwidth"] = rate(s.nicBandwidth);
    j["oversubscription"] = s.oversubscription;
    j["nics_per_leaf"] = s.nicsPerLeaf;
    j["spines"] = s.spines;
    // The three-tier fields: for that kind, or when a field differs from its default (so the files of the
    // other kinds read and write as before these fields existed; a round trip keeps every field).
    const TopologySpec d;
    auto put = [&](const char* key, const auto& value, const auto& byDefault) {
        if (s.kind == TopologyKind::ThreeTier || value != byDefault)
            j[key] = value;
    };
    put("gpus_per_pod", s.gpusPerPod, d.gpusPerPod);
    put("leaves_per_pod", s.leavesPerPod, d.leavesPerPod);
    put("spines_per_pod", s.spinesPerPod, d.spinesPerPod);
    put("core_switches", s.coreSwitches, d.coreSwitches);
    put("core_oversubscription", s.coreOversubscription, d.coreOversubscription);
    put("rail_optimized", s.railOptimized, d.railOptimized);
    put("leaf_spine_bandwidth", rate(s.leafSpineBandwidth), rate(d.leafSpineBandwidth));
    put("spine_core_bandwidth", rate(s.spineCoreBandwidth), rate(d.spineCoreBandwidth));
    return j.dump();
}

namespace {

// A rate of the file: "auto" (or the key left out) is the protocol's nominal rate (a tier's: from its
// oversubscription); a number is B/s; a string with its unit says which: "400Gbps" = "400Gb/s" (bits),
// "50GB/s" (bytes). The problem, at `path`, when it is none of these.
std::optional<Error> readRate(const nlohmann::json& v, const std::string& path, std::optional<BytesPerSecond>& field)
{
    if (v.is_string() && v.get<std::string>() == "auto") {
        field.reset();
    } else if (v.is_number()) {
        field = v.get<double>();
    } else if (v.is_string()) {
        auto parsed = parseBandwidth(v.get<std::string>());
        if (!parsed)
            return errorAt(path, "expected a rate with its unit (400Gbps, 50GB/s), a number of bytes per second or "
                                 "\"auto\": " + parsed.error().message);
        field = parsed.value();
    } else {
        return errorAt(path, std::string("expected a number of bytes per second, a rate with its unit or \"auto\", got ")
                                 + v.type_name());
    }
    return std::nullopt;
}

} // namespace

Result<TopologySpec> topologyFromJson(std::string_view json, const std::string& path, KeyLog* log)
{
    using Json = nlohmann::json;
    const Json j = Json::parse(json, nullptr, false);
    if (j.is_discarded())
        return errorAt(path, "not valid JSON");
    if (!j.is_object())
        return errorAt(path, std::string("expected an object, got ") + j.type_name());
    TopologySpec s;
    const std::string base = path.empty() ? "" : path + ".";
    static const char* const known[] = {"kind",           "gpus_per_pcie_switch", "gpudirect_p2p",         "pcie",
                                        "nvlink",         "intra_node",           "nic_placement",         "nic_protocol",
                                        "nic_bandwidth",  "oversubscription",     "nics_per_leaf",         "spines",
                                        "gpus_per_pod",   "leaves_per_pod",       "spines_per_pod",        "core_switches",
                                        "core_oversubscription", "rail_optimized", "leaf_spine_bandwidth",
                                        "spine_core_bandwidth"};
    for (const auto& [key, value] : j.items()) {
        bool found = false;
        for (const char* k : known)
            found = found || key == k;
        if (!found) {
            std::string expected;
            for (const char* k : known)
                expected += (expected.empty() ? "" : ", ") + std::string(k);
            return errorAt(base + key, "unknown key (expected " + expected + ")");
        }
    }
    std::optional<Error> error;
    auto note = [&](const char* key, const char* type, std::vector<std::string> values = {}) {
        if (log)
            log->push_back({base + key, type, std::move(values)});
    };
    auto text = [&](const char* key, auto parse, const char* what, std::string expected, auto& field) {
        note(key, "name", splitChoices(expected));
        if (error || !j.contains(key))
            return;
        const Json& v = j.at(key);
        if (!v.is_string()) {
            error = errorAt(base + key, std::string("expected a string, got ") + v.type_name());
            return;
        }
        const auto parsed = parse(v.template get<std::string>());
        if (!parsed) {
            error = errorAt(base + key, std::string("unknown ") + what + " " + inQuotes(v.template get<std::string>())
                                       + " (expected " + expected + ")");
            return;
        }
        field = *parsed;
    };
    auto whole = [&](const char* key, std::uint64_t& field) {
        note(key, "integer");
        if (error || !j.contains(key))
            return;
        const Json& v = j.at(key);
        if (v.is_number_unsigned())
            field = v.get<std::uint64_t>();
        else if (v.is_number_integer())
            error = errorAt(base + key, "expected a whole number ≥ 0, got " + v.dump());
        else if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() < 1.8e19
                 && std::floor(v.get<double>()) == v.get<double>())
            field = static_cast<std::uint64_t>(v.get<double>());
        else
            error = errorAt(base + key, std::string("expected a whole number ≥ 0, got ") + (v.is_number() ? v.dump() : v.type_name()));
    };
    // A number or a boolean: `is` tells the JSON type the field takes, `expected` names it in the message.
    auto typed = [&](const char* key, auto& field, bool (Json::*is)() const noexcept, const char* expected) {
        note(key, is == &Json::is_boolean ? "boolean" : "number");
        if (error || !j.contains(key))
            return;
        const Json& v = j.at(key);
        if (!(v.*is)())
            error = errorAt(base + key, std::string("expected ") + expected + ", got " + v.type_name());
        else
            field = v.template get<std::remove_reference_t<decltype(field)>>();
    };
    auto number = [&](const char* key, double& field) { typed(key, field, &Json::is_number, "a number"); };
    auto boolean = [&](const char* key, bool& field) { typed(key, field, &Json::is_boolean, "true or false"); };
    auto any = [](Protocol) { return true; };
    text("kind", topologyKindFromString, "kind", "pcie-server, nvswitch-node, leaf-spine, paper-testbed, three-tier",
         s.kind);
    whole("gpus_per_pcie_switch", s.gpusPerPcieSwitch);
    boolean("gpudirect_p2p", s.gpuDirectP2P);
    // "auto" (or the key left out): follow the GPU.
    auto autoOrProtocol = [](std::string_view name) -> std::optional<std::optional<Protocol>> {
        if (name == "auto")
            return std::optional<Protocol>();
        if (auto p = protocolFromString(name))
            return std::optional<Protocol>(*p);
        return std::nullopt;
    };
    text("pcie", autoOrProtocol, "protocol", "auto, " + protocolNames(any), s.pcie);
    text("nvlink", autoOrProtocol, "protocol", "auto, " + protocolNames(any), s.nvlink);
    text("intra_node", intraNodeFromString, "intra-node fabric", "pcie, nvswitch", s.intraNode);
    text("nic_placement", nicPlacementFromString, "NIC placement", "per-gpu, per-node", s.nicPlacement);
    text("nic_protocol", protocolFromString, "protocol", protocolNames(any), s.nicProtocol);
    auto rate = [&](const char* key, std::optional<BytesPerSecond>& field) {
        note(key, "rate");
        if (!error && j.contains(key))
            error = readRate(j.at(key), base + key, field);
    };
    rate("nic_bandwidth", s.nicBandwidth);
    number("oversubscription", s.oversubscription);
    whole("nics_per_leaf", s.nicsPerLeaf);
    whole("spines", s.spines);
    whole("gpus_per_pod", s.gpusPerPod);
    whole("leaves_per_pod", s.leavesPerPod);
    whole("spines_per_pod", s.spinesPerPod);
    whole("core_switches", s.coreSwitches);
    number("core_oversubscription", s.coreOversubscription);
    boolean("rail_optimized", s.railOptimized);
    rate("leaf_spine_bandwidth", s.leafSpineBandwidth);
    rate("spine_core_bandwidth", s.spineCoreBandwidth);
    if (error)
        return *error;
    return s;
}

} // namespace tw::network
