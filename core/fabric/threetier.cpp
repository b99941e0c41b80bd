// The three-tier fabric (topology.h "three-tier"): pods of leaf–spine joined by a core layer in planes,
// as a k-ary fat tree (Al-Fares et al., SIGCOMM 2008, §3: "the i-th port of any core switch is connected
// to pod i", consecutive groups of core switches on one aggregation switch of every pod) and the pods of
// Meta's Llama 3 clusters (arXiv 2407.21783 §3.3.1: 3,072-GPU pods at full bisection, joined with a 1:7
// oversubscription above them). Rates and counts: docs/model.md §5.3.

#include "topology.h"
#include "topology_p.h"

#include <algorithm>
#include <cmath>

namespace tw::network {

namespace {

std::string I(std::uint64_t v) { return formatInteger(static_cast<std::int64_t>(v)); }

// Upper bounds that keep the graph within memory: each count of a tier, and the links between switches.
constexpr std::uint64_t kMaxPerTier = 4096;
constexpr std::uint64_t kMaxCores = 65536;
constexpr std::uint64_t kMaxSwitchLinks = std::uint64_t{1} << 22;

std::uint64_t nicsPerServer(const TopologySpec& spec, const parallel::Cluster& cluster)
{
    return spec.nicPlacement == NicPlacement::PerGpu ? cluster.gpusPerNode : 1;
}

void checkRatio(double ratio, const char* path, std::vector<Error>& errors)
{
    if (!(ratio >= 1) || !std::isfinite(ratio))
        errors.push_back(errorAt(path, "must be a finite ratio ≥ 1 (1 = non-blocking, 2 = uplinks of half the downlink "
                                       "capacity), got " + formatCount(ratio, 3)));
}

// An explicit tier rate: > 0 and finite, and not given together with its tier's oversubscription.
void checkRate(const std::optional<BytesPerSecond>& rate, double oversubscription, const char* path,
               const char* ratioName, std::vector<Error>& errors)
{
    if (!rate)
        return;
    if (!(*rate > 0) || !std::isfinite(*rate))
        errors.push_back(errorAt(path, "must be a finite number of bytes per second > 0 (or \"auto\"), got "
                                           + formatCount(*rate, 3)));
    else if (oversubscription != 1)
        errors.push_back(errorAt(path, std::string("give either this rate or ") + ratioName + " ("
                                           + formatCount(oversubscription, 3) + "), not both: a rate sets the tier's "
                                           "oversubscription"));
}

} // namespace

ThreeTierShape threeTierShape(const TopologySpec& spec, const parallel::Cluster& cluster)
{
    ThreeTierShape out;
    const std::uint64_t per = cluster.gpusPerNode;
    if (per == 0 || spec.gpusPerPod < per)
        return out;
    out.serversPerPod = spec.gpusPerPod / per;
    out.pods = (cluster.nodes + out.serversPerPod - 1) / out.serversPerPod;
    const std::uint64_t nics = nicsPerServer(spec, cluster);
    out.rails = spec.railOptimized ? nics : 1;
    const std::uint64_t groups = spec.leavesPerPod / out.rails;
    out.serversPerGroup = groups > 0 ? out.serversPerPod / groups : 0;
    out.coresPerPlane = spec.spinesPerPod > 0 ? spec.coreSwitches / spec.spinesPerPod : 0;
    // A leaf's downlinks: its servers' NICs on it (one per server on a rail leaf, all of them on a ToR).
    const double ports = double(out.serversPerGroup) * double(nics / out.rails);
    if (spec.leafSpineBandwidth)
        out.leafSpine = *spec.leafSpineBandwidth;
    else if (spec.spinesPerPod > 0)
        out.leafSpine = ports * nicBandwidthOf(spec) / (spec.oversubscription * double(spec.spinesPerPod));
    if (spec.spineCoreBandwidth)
        out.spineCore = *spec.spineCoreBandwidth;
    else if (out.coresPerPlane > 0)
        out.spineCore = double(spec.leavesPerPod) * out.leafSpine / (spec.coreOversubscription * double(out.coresPerPlane));
    return out;
}

void detail::validateThreeTier(const TopologySpec& spec, const parallel::Cluster& cluster, std::vector<Error>& errors)
{
    const std::uint64_t per = cluster.gpusPerNode;
    if (spec.gpusPerPod == 0 || spec.gpusPerPod % per != 0) {
        errors.push_back(errorAt("topology.gpus_per_pod", "a pod holds whole servers: " + I(spec.gpusPerPod)
                                                              + " GPUs is not a multiple of the " + I(per)
                                                              + " GPUs per node"));
        return;
    }
    if (spec.gpusPerPod > kMaxTopologyGpus)
        errors.push_back(errorAt("topology.gpus_per_pod", I(spec.gpusPerPod) + " GPUs per pod is more than the fabric "
                                                              "model holds (" + I(kMaxTopologyGpus) + ")"));
    const std::uint64_t servers = spec.gpusPerPod / per;
    const std::uint64_t rails = spec.railOptimized ? nicsPerServer(spec, cluster) : 1;
    if (spec.leavesPerPod == 0)
        errors.push_back(errorAt("topology.leaves_per_pod", "a pod needs at least one leaf"));
    else if (spec.leavesPerPod > kMaxPerTier)
        errors.push_back(errorAt("topology.leaves_per_pod", I(spec.leavesPerPod) + " leaves per pod is more than "
                                                                + I(kMaxPerTier)));
    else if (spec.leavesPerPod % rails != 0)
        errors.push_back(errorAt("topology.leaves_per_pod",
                                 "rail-optimized leaves come in sets of one per rail (" + I(rails) + " NICs per server): "
                                     + I(spec.leavesPerPod) + " is not a multiple of " + I(rails)
                                     + " (or set rail_optimized to false)"));
    else if (const std::uint64_t groups = spec.leavesPerPod / rails; servers % groups != 0)
        errors.push_back(errorAt("topology.leaves_per_pod",
                                 "the pod's " + I(servers) + " servers do not split evenly over " + I(groups)
                                     + (rails > 1 ? " sets of rail leaves" : " leaves")));
    if (spec.spinesPerPod == 0)
        errors.push_back(errorAt("topology.spines_per_pod", "a pod needs at least one spine"));
    else if (spec.spinesPerPod > kMaxPerTier)
        errors.push_back(errorAt("topology.spines_per_pod", I(spec.spinesPerPod) + " spines per pod is more than "
                                                                + I(kMaxPerTier)));
    if (spec.coreSwitches == 0)
        errors.push_back(errorAt("topology.core_switches", "a three-tier fabric needs at least one core switch"));
    else if (spec.coreSwitches > kMaxCores)
        errors.push_back(errorAt("topology.core_switches", I(spec.coreSwitches) + " core switches is more than "
                                                               + I(kMaxCores)));
    else if (spec.spinesPerPod > 0 && spec.coreSwitches % spec.spinesPerPod != 0)
        errors.push_back(errorAt("topology.core_switches",
                                 "the cores form one plane per pod spine: " + I(spec.coreSwitches)
                                     + " is not a multiple of spines_per_pod (" + I(spec.spinesPerPod) + ")"));
    checkRatio(spec.coreOversubscription, "topology.core_oversubscription", errors);
    checkRate(spec.leafSpineBandwidth, spec.oversubscription, "topology.leaf_spine_bandwidth", "oversubscription", errors);
    checkRate(spec.spineCoreBandwidth, spec.coreOversubscription, "topology.spine_core_bandwidth",
              "core_oversubscription", errors);
    if (!errors.empty() || spec.leavesPerPod > kMaxPerTier || spec.spinesPerPod > kMaxPerTier)
        return;
    const std::uint64_t pods = (cluster.nodes + servers - 1) / servers;
    const std::uint64_t links = pods * spec.spinesPerPod * (spec.leavesPerPod + spec.coreSwitches / spec.spinesPerPod);
    if (links > kMaxSwitchLinks)
        errors.push_back(errorAt("topology", "the switch tiers need " + I(links) + " links (pods × spines per pod × "
                                                 "(leaves per pod + cores per plane)), more than the fabric model "
                                                 "holds (" + I(kMaxSwitchLinks) + ")"));
}

Topology detail::buildThreeTier(const TopologySpec& spec, const parallel::Cluster& cluster)
{
    const ThreeTierShape sh = threeTierShape(spec, cluster);
    Topology t;
    const Protocol net = spec.nicProtocol;
    const Seconds lat = nominalLatency(net);
    const BytesPerSecond nicBw = nicBandwidthOf(spec);
    const bool withSpines = sh.pods > 1 || spec.leavesPerPod > 1;
    std::vector<std::vector<NodeId>> spines(sh.pods);
    // Pod by pod, each pod's nodes and links in the same order (servers with their NICs, leaves, NIC–leaf
    // links, spines, leaf–spine links), so the i-th node of every pod plays the same part (PodPlace).
    for (std::uint64_t p = 0; p < sh.pods; ++p) {
        const auto first = static_cast<NodeId>(t.nodes().size());
        const std::uint64_t s0 = p * sh.serversPerPod;
        const std::uint64_t s1 = std::min(cluster.nodes, s0 + sh.serversPerPod);
        std::vector<std::vector<NodeId>> nics;
        for (std::uint64_t s = s0; s < s1; ++s)
            nics.push_back(addServerWithNics(t, spec, s, cluster.gpusPerNode));
        const std::string name = "p" + std::to_string(p) + ".";
        const std::uint64_t groups = (s1 - s0 + sh.serversPerGroup - 1) / sh.serversPerGroup; // a partial pod: fewer
        std::vector<NodeId> leaves;
        for (std::uint64_t l = 0; l < groups * sh.rails; ++l)
            leaves.push_back(t.addNode({NodeKind::LeafSwitch, name + "leaf" + std::to_string(l), -1, -1}));
        for (std::size_t i = 0; i < nics.size(); ++i)
            for (std::size_t k = 0; k < nics[i].size(); ++k)
                t.addLinkPair(nics[i][k], leaves[(i / sh.serversPerGroup) * sh.rails + k % sh.rails], nicBw, lat, net);
        if (withSpines) {
            for (std::uint64_t j = 0; j < spec.spinesPerPod; ++j)
                spines[p].push_back(t.addNode({NodeKind::SpineSwitch, name + "spine" + std::to_string(j), -1, -1}));
            for (NodeId leaf : leaves)
                for (NodeId spine : spines[p])
                    t.addLinkPair(leaf, spine, sh.leafSpine, lat, net);
        }
        for (auto n = first; n < t.nodes().size(); ++n)
            t.setPodPlace(n, {static_cast<std::uint32_t>(p), n - first});
    }
    if (sh.pods > 1) {
        // Plane j: cores j·K … j·K + K − 1 (K cores per plane), each linked to spine j of every pod.
        std::vector<NodeId> cores;
        for (std::uint64_t c = 0; c < spec.coreSwitches; ++c) {
            cores.push_back(t.addNode({NodeKind::SpineSwitch, "core" + std::to_string(c), -1, -1}));
            t.setPodPlace(cores.back(), {Topology::kNoPod, static_cast<std::uint32_t>(c)});
        }
        for (std::uint64_t p = 0; p < sh.pods; ++p)
            for (std::uint64_t j = 0; j < spec.spinesPerPod; ++j)
                for (std::uint64_t c = 0; c < sh.coresPerPlane; ++c)
                    t.addLinkPair(spines[p][j], cores[j * sh.coresPerPlane + c], sh.spineCore, lat, net);
    }
    t.stagesThroughHost = !spec.gpuDirectP2P;
    t.nvlinkPeers = spec.intraNode == IntraNode::NvSwitch;
    return t;
}

} // namespace tw::network
