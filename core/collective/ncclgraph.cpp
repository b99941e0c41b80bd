#include "ncclgraph.h"

#include "base/enumnames.h"
#include "base/units.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <span>

namespace tw::nccl {

namespace {

// Speeds (GB/s per channel) the search tries, fastest first: src/graph/search.cc @ 5067397c.
constexpr std::array<double, 13> kSpeedIntra = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr std::array<double, 19> kSpeedInter = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
constexpr std::array<double, 11> kSm90SpeedIntra = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr std::array<double, 17> kSm90SpeedInter = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
constexpr std::array<double, 12> kSm100SpeedIntra = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
constexpr std::array<double, 20> kSm100SpeedInter = {96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
// LOC_BW of topo.h: a GPU alone.
constexpr double kLocBw = 5000.0;
// SUB_ROUND of search.cc rounds to 1e-3 GB/s; a load within this of the capacity fits.
constexpr double kEps = 1e-6;

std::span<const double> speedArray(int sm, bool inter)
{
    if (sm >= 100)
        return inter ? std::span<const double>(kSm100SpeedInter) : std::span<const double>(kSm100SpeedIntra);
    if (sm >= 90)
        return inter ? std::span<const double>(kSm90SpeedInter) : std::span<const double>(kSm90SpeedIntra);
    return inter ? std::span<const double>(kSpeedInter) : std::span<const double>(kSpeedIntra);
}

enum class Pattern { Ring, Tree, Nvls };

// The local GPU next to NIC r (rail r), and the GPU a ring leaves the node from when it entered at `a`:
// the other GPU on a's PCIe switch (so the exit reaches NIC r through the same switch), else a's ring
// predecessor (its NIC traffic then crosses NVLink to a first: NCCL's PXN).
int nicGpu(const System& s, int rail)
{
    if (!s.nicPerGpu)
        return 0;
    return static_cast<int>(static_cast<long long>(rail) * s.gpusPerNode / std::max(1, s.nicsPerNode));
}
int exitGpu(const System& s, int a)
{
    const int g = s.gpusPerNode;
    if (g == 1)
        return a;
    const int sw = s.gpusPerPcieSwitch;
    if (s.nicPerGpu && sw >= 2) {
        const int base = a - a % sw;
        const int b = base + (a % sw + 1) % sw;
        if (b < g && b != a)
            return b;
    }
    return (a + g - 1) % g;
}

// The channels of a pattern, c of them, laid out as described in ncclgraph.h.
std::vector<Channel> layout(const System& s, Pattern p, int c)
{
    const int g = s.gpusPerNode;
    const bool multi = s.nodes > 1 && s.nicsPerNode > 0;
    std::vector<Channel> out;
    out.reserve(static_cast<std::size_t>(c));
    for (int k = 0; k < c; ++k) {
        Channel ch;
        int a = k % g;
        int rail = -1;
        if (multi) {
            rail = k % s.nicsPerNode;
            a = s.nicPerGpu ? nicGpu(s, rail) : k % g;
            // More channels than NICs: the rails repeat (channel k on rail k mod NICs). One NIC per
            // server: every channel uses it and the entry GPU rotates.
            ch.nicIn = ch.nicOut = rail;
        }
        if (p == Pattern::Nvls) {
            ch.gpus = {multi ? a : k % g};
        } else if (p == Pattern::Ring && multi) {
            const int b = exitGpu(s, a);
            ch.gpus.push_back(a);
            for (int i = 1; i < g; ++i) {
                const int x = (a + i) % g;
                if (x != b)
                    ch.gpus.push_back(x);
            }
            if (b != a)
                ch.gpus.push_back(b);
        } else if (p == Pattern::Ring) {
            // One node: every channel replays the first one's order (the search tries PCI order first,
            // then replays it: sameChannels = 1).
            for (int i = 0; i < g; ++i)
                ch.gpus.push_back(i);
        } else {
            for (int i = 0; i < g; ++i)
                ch.gpus.push_back((a + i) % g);
        }
        out.push_back(std::move(ch));
    }
    return out;
}

// Per-direction loads on the links NCCL's search charges (GB/s), against their capacities.
struct Loads {
    std::vector<double> nvlOut, nvlIn, pciOut, pciIn, nicOut, nicIn;
    explicit Loads(const System& s)
        : nvlOut(s.gpusPerNode), nvlIn(s.gpusPerNode), pciOut(s.gpusPerNode), pciIn(s.gpusPerNode),
          nicOut(std::max(1, s.nicsPerNode)), nicIn(std::max(1, s.nicsPerNode))
    {
    }
    void intra(const System& s, int from, int to, double bw)
    {
        if (s.nvlink) {
            nvlOut[from] += bw;
            nvlIn[to] += bw;
        } else {
            pciOut[from] += bw;
            pciIn[to] += bw;
        }
    }
    [[nodiscard]] bool fits(const System& s) const
    {
        const double nic = std::min(s.nicBw, s.pciBw); // the NIC and its PCIe link carry the same bytes
        auto within = [](const std::vector<double>& v, double cap) {
            return std::all_of(v.begin(), v.end(), [cap](double x) { return x <= cap + kEps; });
        };
        return within(nvlOut, s.intraBw) && within(nvlIn, s.intraBw) && within(pciOut, s.pciBw)
               && within(pciIn, s.pciBw) && within(nicOut, nic) && within(nicIn, nic);
    }
};

bool fits(const System& s, Pattern p, const std::vector<Channel>& channels, double bwIntra, double bwInter)
{
    Loads l(s);
    const bool multi = s.nodes > 1 && s.nicsPerNode > 0;
    for (const Channel& ch : channels) {
        const auto& v = ch.gpus;
        if (p == Pattern::Nvls) {
            // Every GPU pulls from and pushes to the NVSwitch for every channel; the head twice
            // (ncclTopoSearchTryNvls).
            for (int d = 0; d < s.gpusPerNode; ++d) {
                const double m = d == v.front() ? 2.0 : 1.0;
                l.nvlOut[d] += m * bwIntra;
                l.nvlIn[d] += m * bwIntra;
            }
        } else {
            for (std::size_t i = 0; i + 1 < v.size(); ++i)
                l.intra(s, v[i], v[i + 1], bwIntra);
            if (p == Pattern::Ring && !multi && v.size() > 1)
                l.intra(s, v.back(), v.front(), bwIntra);
        }
        if (multi) {
            const int in = v.front();
            const int out = p == Pattern::Ring ? v.back() : v.front();
            l.nicIn[ch.nicIn] += bwInter;
            l.pciIn[in] += bwInter;
            l.nicOut[ch.nicOut] += bwInter;
            l.pciOut[out] += bwInter;
        }
    }
    return l.fits(s);
}

// The most channels (≤ maxCh) of a pattern that fit at these speeds; 0 when not even one does.
int maxChannelsAt(const System& s, Pattern p, double bwIntra, double bwInter, int maxCh)
{
    int best = 0;
    for (int c = 1; c <= maxCh; ++c) {
        if (!fits(s, p, layout(s, p, c), bwIntra, bwInter))
            break;
        best = c;
    }
    return best;
}

struct Bounds {
    double maxBw = 0;   // the best GPU → GPU (one node) or GPU → NIC (several) path
    double totalBw = 0; // a GPU's total NVLink or PCIe bandwidth (ncclTopoSearchInit)
};
Bounds bounds(const System& s)
{
    if (s.nodes == 1 && s.gpusPerNode == 1)
        return {kLocBw, kLocBw};
    Bounds b;
    b.totalBw = s.nvlink ? std::max(s.intraBw, s.pciBw) : s.pciBw;
    b.maxBw = s.nodes > 1 ? std::min(s.pciBw, s.nicBw) : s.intraBw;
    return b;
}

std::size_t firstSpeed(std::span<const double> arr, double maxBw, double totalBw, int minCh)
{
    std::size_t i = 0;
    while ((arr[i] > maxBw || arr[i] * minCh > totalBw) && i + 1 < arr.size())
        ++i;
    return i;
}

Graph finish(const System& s, Pattern p, int c, double bwIntra, double bwInter)
{
    Graph g;
    g.found = c > 0;
    g.nChannels = c;
    g.bwIntra = bwIntra;
    g.bwInter = bwInter;
    g.typeIntra = s.typeIntra;
    g.typeInter = s.nodes > 1 ? s.typeInter : PathType::Pix;
    g.channels = layout(s, p, c);
    g.sameChannels = std::all_of(g.channels.begin(), g.channels.end(),
                                 [&](const Channel& ch) { return ch.gpus == g.channels.front().gpus; });
    return g;
}

// Ring: pass 1 keeps the best nChannels·bw over falling speeds (stopping once it reaches totalBw, a
// perfect graph, or the next speed is below 0.49 of the best), ncclTopoDupChannels, then pass 2 raises
// the speed while at least as many channels still fit.
Graph searchRing(const System& s, std::optional<int> forced)
{
    const auto arr = speedArray(s.gpu.sm, s.nodes > 1);
    const Bounds b = bounds(s);
    const int minCh = forced ? *forced : 1;
    const int maxCh = forced ? *forced : kMaxChannels / 2;
    std::size_t idx = firstSpeed(arr, b.maxBw, b.totalBw, minCh);
    int bestC = 0;
    double bestBw = 0;
    for (;;) {
        const double sp = arr[idx];
        const int c = maxChannelsAt(s, Pattern::Ring, sp, sp, maxCh);
        if (c >= minCh && c * sp > bestC * bestBw) {
            bestC = c;
            bestBw = sp;
        }
        if (bestC > 0 && (bestC * bestBw >= b.totalBw || bestC == maxCh))
            break;
        if (idx + 1 < arr.size() && (bestC == 0 || arr[idx + 1] / bestBw > .49))
            ++idx;
        else
            break;
    }
    if (bestC == 0) // "falling back to simple order": one channel at NCCL's 0.1 GB/s
        return finish(s, Pattern::Ring, std::max(1, minCh), 0.1, 0.1);
    // ncclTopoDupChannels
    if (bestBw >= 25.0 && !(s.gpu.sm > 80 && bestBw < 50.0 && bestC > 4)) {
        const int dup = std::min(bestC * 2, maxCh);
        const int div = (dup + bestC - 1) / bestC;
        bestBw /= div;
        bestC = dup;
    }
    // Pass 2: faster channels, no fewer of them.
    idx = 0;
    while (arr[idx] > bestBw && idx + 1 < arr.size())
        ++idx;
    while (idx > 0) {
        const double sp = arr[--idx];
        const int c = maxChannelsAt(s, Pattern::Ring, sp, sp, maxCh);
        if (c >= bestC && c * sp > bestC * bestBw) {
            bestC = c;
            bestBw = sp;
        }
    }
    return finish(s, Pattern::Ring, bestC, bestBw, bestBw);
}

// Tree: exactly the ring's channel count (init.cc: treeGraph min = max = ring nChannels), the fastest
// speed that fits (totalBw scaled by n/(n−1)), then pass 2 raises bwIntra up to 2·bwInter.
Graph searchTree(const System& s, int ringChannels)
{
    const auto arr = speedArray(s.gpu.sm, s.nodes > 1);
    Bounds b = bounds(s);
    if (s.gpusPerNode > 1)
        b.totalBw *= s.gpusPerNode / (s.gpusPerNode - 1.0);
    const int c = ringChannels;
    std::size_t idx = firstSpeed(arr, b.maxBw, b.totalBw, c);
    const auto chans = layout(s, Pattern::Tree, c);
    double bw = 0;
    for (; idx < arr.size(); ++idx)
        if (fits(s, Pattern::Tree, chans, arr[idx], arr[idx])) {
            bw = arr[idx];
            break;
        }
    if (bw == 0)
        return finish(s, Pattern::Tree, c, 0.1, 0.1);
    double bwIntra = bw;
    while (s.gpusPerNode > 1 && idx > 0 && bwIntra < 2 * bw && fits(s, Pattern::Tree, chans, arr[idx - 1], bw))
        bwIntra = arr[--idx];
    return finish(s, Pattern::Tree, c, bwIntra, bw);
}

// NVLS: one channel per head (every GPU on one node; one per NIC, distinct GPUs, on several), the fastest
// speed at which every GPU's NVLink carries all channels (the head's twice), then pass 2 raises bwInter
// up to 2·bwIntra while the NICs carry it.
Graph searchNvls(const System& s)
{
    if (!s.nvls)
        return {};
    const bool multi = s.nodes > 1;
    int c = std::min(kMaxNvlsArity, s.gpusPerNode);
    if (multi)
        c = std::min(c, s.nicPerGpu ? s.nicsPerNode : 1);
    if (c < 1)
        return {};
    const auto arr = speedArray(s.gpu.sm, multi);
    Bounds b = bounds(s);
    if (s.gpusPerNode > 1)
        b.totalBw *= s.gpusPerNode / (s.gpusPerNode - 1.0);
    // Intra-node NVLS forces min = max channels (every GPU pulls evenly); across nodes min is 1.
    std::size_t idx = firstSpeed(arr, b.maxBw, b.totalBw, multi ? 1 : c);
    const auto chans = layout(s, Pattern::Nvls, c);
    double bw = 0;
    for (; idx < arr.size(); ++idx)
        if (fits(s, Pattern::Nvls, chans, arr[idx], arr[idx])) {
            bw = arr[idx];
            break;
        }
    if (bw == 0)
        return {};
    double bwInter = bw;
    while (idx > 0 && bwInter < 2 * bw && fits(s, Pattern::Nvls, chans, bw, arr[idx - 1]))
        bwInter = arr[--idx];
    return finish(s, Pattern::Nvls, c, bw, bwInter);
}

} // namespace

std::string_view toString(PathType t)
{
    // NCCL's names of its path types (src/graph/topo.h).
    static constexpr std::array kNames{
        EnumName{PathType::Loc, "LOC"}, EnumName{PathType::Nvl, "NVL"}, EnumName{PathType::Nvb, "NVB"},
        EnumName{PathType::C2c, "C2C"}, EnumName{PathType::Pix, "PIX"}, EnumName{PathType::Pxb, "PXB"},
        EnumName{PathType::P2c, "P2C"}, EnumName{PathType::Pxn, "PXN"}, EnumName{PathType::Phb, "PHB"},
        EnumName{PathType::Sys, "SYS"}, EnumName{PathType::Net, "NET"}};
    return nameOf(kNames, t);
}

std::string describeFabric(const System& s)
{
    char buf[200];
    std::snprintf(buf, sizeof buf, "%d node%s × %d GPU%s (%s, %s), %s %.1f GB/s per GPU", s.nodes, s.nodes == 1 ? "" : "s",
                  s.gpusPerNode, s.gpusPerNode == 1 ? "" : "s", s.gpu.id.empty() ? "custom GPU" : s.gpu.id.c_str(),
                  std::string(toString(s.compCap())).c_str(), s.nvlink ? "NVLink" : "PCIe", s.intraBw);
    std::string out = buf;
    if (s.nodes > 1) {
        std::snprintf(buf, sizeof buf, ", %d NIC%s per node × %.3g GB/s", s.nicsPerNode, s.nicsPerNode == 1 ? "" : "s",
                      s.nicBw);
        out += buf;
    }
    if (s.nvls)
        out += ", NVLS";
    return out;
}

Result<System> systemFor(std::string_view gpuId, const network::TopologySpec& spec, const parallel::Cluster& cluster)
{
    using network::TopologyKind;
    if (auto errors = network::validate(spec, cluster); !errors.empty())
        return errors.front();
    // NCCL_TOPO_MAX_NODES (src/include/graph.h): at most 640 GPUs in one node's topology.
    if (cluster.gpusPerNode > 640)
        return errorAt("hardware.gpus_per_node", "NCCL's topology holds at most 640 GPUs per node, got "
                                                     + std::to_string(cluster.gpusPerNode));
    System s;
    s.gpu = gpuView(gpuId);
    s.nodes = static_cast<int>(cluster.nodes);
    s.gpusPerNode = static_cast<int>(cluster.gpusPerNode);
    const network::Protocol pcie = network::pcieOf(spec);
    const int gen = pcie == network::Protocol::PcieGen3 ? 3 : pcie == network::Protocol::PcieGen4 ? 4 : 5;
    s.pciBw = pcieBwGBs(gen);
    s.gpusPerPcieSwitch = static_cast<int>(spec.gpusPerPcieSwitch);

    bool fabricNvlink = false;
    switch (spec.kind) {
    case TopologyKind::NvSwitchNode:
        fabricNvlink = true;
        break;
    case TopologyKind::LeafSpine:
    case TopologyKind::ThreeTier:
        fabricNvlink = spec.intraNode == network::IntraNode::NvSwitch;
        break;
    case TopologyKind::PcieServer:
    case TopologyKind::PaperTestbed:
        break;
    }
    if (spec.kind == TopologyKind::PaperTestbed)
        s.gpusPerPcieSwitch = 0;
    // A GPU the catalog knows as a PCIe card (no NVLinks) stays on PCIe even on an NVSwitch fabric; a
    // custom one takes the fabric's NVLink at NCCL's Ampere rate.
    if (fabricNvlink && (s.gpu.nvlinks > 0 || s.gpu.id.empty())) {
        s.nvlink = s.nvswitch = true;
        if (s.gpu.nvlinks > 0) {
            s.intraBw = s.gpu.nvlinks * s.gpu.nvlinkBw;
        } else {
            const int links = network::nvlinkOf(spec) == network::Protocol::NvLink3 ? 12 : 18;
            s.intraBw = links * nvlinkBwPerLink(s.gpu.sm);
        }
        s.typeIntra = PathType::Nvl;
    } else {
        s.intraBw = s.pciBw;
        s.typeIntra = !spec.gpuDirectP2P ? PathType::Sys : s.gpusPerPcieSwitch >= 2 ? PathType::Pxb : PathType::Phb;
    }
    if (s.gpusPerNode == 1)
        s.typeIntra = PathType::Loc;
    s.nvls = s.nvswitch && s.gpu.nvls && s.gpu.sm >= 90;

    if (s.nodes > 1) {
        // The testbed's NICs are 10 Gb/s Ethernet whatever the spec's NIC fields say (topology.cpp buildTestbed).
        s.nicBw = nicBwGBs(spec.kind == TopologyKind::PaperTestbed ? network::nominalBandwidth(network::Protocol::Ethernet10G)
                                                                   : network::nicBandwidthOf(spec));
        const bool perGpu = network::isSwitchedFabric(spec.kind) && spec.nicPlacement == network::NicPlacement::PerGpu;
        s.nicPerGpu = perGpu;
        s.nicsPerNode = perGpu ? s.gpusPerNode : 1;
        // GPU ↔ NIC: the same PCIe switch (PIX) with a NIC per GPU, the root complex (PHB) with one per
        // server; without GPUDirect RDMA the NIC reads host memory (PHB at best), and the testbed's TCP
        // sockets always do.
        s.typeInter = perGpu && s.gpusPerPcieSwitch >= 1 ? PathType::Pix : PathType::Phb;
        if (!spec.gpuDirectP2P || spec.kind == TopologyKind::PaperTestbed)
            s.typeInter = PathType::Phb;
    } else {
        s.typeInter = PathType::Pix;
    }

    s.fabric = describeFabric(s);
    return s;
}

TreeLinks doubleBinaryTree(int nranks, int rank)
{
    // ncclGetBtree / ncclGetDtree, src/graph/trees.cc @ 5067397c.
    auto btree = [nranks](int r, int& u, int& d0, int& d1) {
        int bit = 1;
        for (; bit < nranks; bit <<= 1)
            if (bit & r)
                break;
        if (r == 0) {
            u = -1;
            d0 = -1;
            d1 = nranks > 1 ? bit >> 1 : -1;
            return;
        }
        int up = (r ^ bit) | (bit << 1);
        if (up >= nranks)
            up = r ^ bit;
        u = up;
        int lowbit = bit >> 1;
        d0 = lowbit == 0 ? -1 : r - lowbit;
        int down1 = lowbit == 0 ? -1 : r + lowbit;
        while (down1 >= nranks) {
            down1 = lowbit == 0 ? -1 : r + lowbit;
            lowbit >>= 1;
        }
        d1 = down1;
    };
    TreeLinks t;
    btree(rank, t.up0, t.down0[0], t.down0[1]);
    int u = -1, d0 = -1, d1 = -1;
    if (nranks % 2 == 1) { // shift
        btree((rank - 1 + nranks) % nranks, u, d0, d1);
        t.up1 = u == -1 ? -1 : (u + 1) % nranks;
        t.down1[0] = d0 == -1 ? -1 : (d0 + 1) % nranks;
        t.down1[1] = d1 == -1 ? -1 : (d1 + 1) % nranks;
    } else { // mirror
        btree(nranks - 1 - rank, u, d0, d1);
        t.up1 = u == -1 ? -1 : nranks - 1 - u;
        t.down1[0] = d0 == -1 ? -1 : nranks - 1 - d0;
        t.down1[1] = d1 == -1 ? -1 : nranks - 1 - d1;
    }
    return t;
}

Graphs searchGraphs(const System& s, std::optional<int> channels)
{
    Graphs g;
    if (channels && *channels < 1)
        channels.reset();
    if (channels)
        channels = std::min(*channels, kMaxChannels / 2);
    g.ring = searchRing(s, channels);
    g.tree = searchTree(s, g.ring.nChannels);
    g.nvls = searchNvls(s);
    for (int n = 0; n < s.nodes; ++n)
        g.trees.push_back(doubleBinaryTree(s.nodes, n));
    return g;
}

double ringBytesPerNicPerChannel(double bytes, int ranks, int nChannels)
{
    if (ranks < 1 || nChannels < 1)
        return 0;
    return 2.0 * (ranks - 1) / ranks * bytes / nChannels;
}

LinkBytes nvlsBytesPerGpuLink(collective::Op op, double bytes, int ranks)
{
    const double n = std::max(1, ranks);
    switch (op) {
    case collective::Op::AllReduce: return {bytes, bytes};
    case collective::Op::ReduceScatter: return {bytes, bytes / n};
    case collective::Op::AllGather: return {bytes / n, bytes};
    default: return {};
    }
}

} // namespace tw::nccl
