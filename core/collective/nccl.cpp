#include "nccl.h"

#include "base/enumnames.h"
#include "collective/ncclgraph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace tw::nccl {

namespace {

constexpr std::array kAlgorithmNames{
    EnumName{Algorithm::Tree, "tree"}, EnumName{Algorithm::Ring, "ring"}, EnumName{Algorithm::CollNetDirect, "collnet-direct"},
    EnumName{Algorithm::CollNetChain, "collnet-chain"}, EnumName{Algorithm::Nvls, "nvls"},
    EnumName{Algorithm::NvlsTree, "nvls-tree"}, EnumName{Algorithm::Pat, "pat"}};
static_assert(kAlgorithmNames.size() == kAlgorithmCount);
constexpr std::array kProtocolNames{EnumName{Protocol::LL, "ll"}, EnumName{Protocol::LL128, "ll128"},
                                    EnumName{Protocol::Simple, "simple"}};
static_assert(kProtocolNames.size() == kProtocolCount);
constexpr std::array kCompCapNames{EnumName{CompCap::Volta, "volta"}, EnumName{CompCap::Ampere, "ampere"},
                                   EnumName{CompCap::Hopper, "hopper"}, EnumName{CompCap::Blackwell, "blackwell"}};

// ncclTunerConstantsDefaults, src/graph/tuning.cc @ NVIDIA/nccl 5067397c (v2.30.7-1).
constexpr TunerConstants kConstants = {
    // baseLatencies (LL, LL128, Simple): Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}},
    // hwLatencies [NVLINK, PCI, NET][algorithm][protocol]
    {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
     {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
     {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}},
    // llMaxBws: single node by GPU row; several nodes row 0 (Intel CPU) or 1 (AMD)
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
    // perChMaxRingLL128Bws
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}},
    // perChMaxTreeLL128Bws
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
    // perChMaxTreeBws
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
    // perChMaxNVLSTreeBws
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}},
    // nvlsEfficiency
    {0.0, 0.0, 0.85, 0.74},
};

// treeCorrectionFactor[protocol][log2(bytes/64)], tuning.cc.
constexpr double kTreeCorrection[kProtocolCount][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

constexpr int A(Algorithm a) { return static_cast<int>(a); }
constexpr int P(Protocol p) { return static_cast<int>(p); }

// Tuning's operation index; -1 for the point-to-point operations.
int opIndex(collective::Op op)
{
    switch (op) {
    case collective::Op::AllReduce: return 0;
    case collective::Op::ReduceScatter: return 1;
    case collective::Op::AllGather: return 2;
    case collective::Op::Broadcast: return 3;
    case collective::Op::Reduce: return 4;
    case collective::Op::AllToAll:
    case collective::Op::SendRecv: return -1;
    }
    return -1;
}

int log2i(unsigned long long x)
{
    int l = -1;
    while (x) {
        x >>= 1;
        ++l;
    }
    return l;
}

const Graph* graphOf(const Graphs& g, Algorithm a)
{
    switch (a) {
    case Algorithm::Tree:
    case Algorithm::Pat: return &g.tree; // init.cc: graphs[] = {tree, ring, collnetDirect, collnetChain, nvls, nvls, tree}
    case Algorithm::Ring: return &g.ring;
    case Algorithm::Nvls:
    case Algorithm::NvlsTree: return &g.nvls;
    case Algorithm::CollNetDirect:
    case Algorithm::CollNetChain: return nullptr; // no CollNet graph: our fabrics have no in-network reduction
    }
    return nullptr;
}

std::string listNames(const std::vector<Algorithm>& list)
{
    std::string s;
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (i)
            s += i + 1 == list.size() ? " or " : ", ";
        s += toString(list[i]);
    }
    return s;
}

} // namespace

std::string_view toString(Algorithm a) { return nameOf(kAlgorithmNames, a); }
std::optional<Algorithm> algorithmFromString(std::string_view s) { return valueOf(kAlgorithmNames, s); }
std::string_view toString(Protocol p) { return nameOf(kProtocolNames, p); }
std::optional<Protocol> protocolFromString(std::string_view s) { return valueOf(kProtocolNames, s); }
std::string_view toString(CompCap c) { return nameOf(kCompCapNames, c); }
CompCap compCapOf(int sm)
{
    // tuning.cc: sm ≥ 100 Blackwell, ≥ 90 Hopper, ≥ 80 Ampere, else Volta.
    return sm >= 100 ? CompCap::Blackwell : sm >= 90 ? CompCap::Hopper : sm >= 80 ? CompCap::Ampere : CompCap::Volta;
}

const TunerConstants& tunerConstants() { return kConstants; }

double treeCorrectionFactor(Protocol p, int logSize)
{
    if (logSize < 0 || logSize >= 24)
        return 1.0;
    return kTreeCorrection[P(p)][logSize];
}

double nvlinkBwPerLink(int sm)
{
    // src/graph/topo.h @ 5067397c: SM60_NVLINK_BW 18, SM70 20, SM80 20, SM86 12, SM90 20.6, SM100 40.1.
    if (sm >= 100) return 40.1;
    if (sm >= 90) return 20.6;
    if (sm == 86) return 12.0;
    if (sm >= 70) return 20.0;
    return 18.0;
}

double pcieBwGBs(int generation, int width)
{
    // topo.cc: bw = width · speed / 80, speed from kvDictPciGen (8 GT/s → 60, 16 → 120, 32 → 240, 64 → 480).
    const int speed = generation <= 3 ? 60 : generation == 4 ? 120 : generation == 5 ? 240 : 480;
    return width * speed / 80.0;
}

double nicBwGBs(double bytesPerSecond)
{
    // topo.cc: net->net.bw = mbps / 8000.0.
    const double mbps = bytesPerSecond * 8.0 / 1e6;
    return mbps / 8000.0;
}

namespace {

// NCCL's view of the catalog's GPUs (model/gpucatalog.h ids). Link counts: what `nvidia-smi topo -m` prints
// between GPUs of an HGX board (NV12 on A100 SXM, NV18 on H100 SXM / H200; NVIDIA/nccl-tests#178,
// NVIDIA/nccl#1357), as NVIDIA's datasheets give them (A100: 12 third-generation links, 600 GB/s
// bidirectional; H100 SXM: 18 fourth-generation links, 900 GB/s); V100 SXM2: 6 NVLink 2 links (DGX-2 puts
// all 6 on its NVSwitches). PCIe cards have none.
struct GpuRow {
    std::string_view id;
    int sm;
    int nvlinks;
    bool nvls;
    std::string_view source;
};
constexpr std::array<GpuRow, 9> kGpuRows = {{
    {"v100-32gb", 70, 6, false, "V100 SXM2: 6 NVLink 2 links"},
    {"a100-40gb", 80, 12, false, "A100 SXM: 12 NVLink 3 links (NV12)"},
    {"a100-80gb", 80, 12, false, "A100 SXM: 12 NVLink 3 links (NV12)"},
    {"h100-sxm", 90, 18, true, "H100 SXM: 18 NVLink 4 links (NV18), NVLink SHARP"},
    {"h100-pcie", 90, 0, false, "H100 PCIe: a PCIe card, no NVSwitch (NVLink bridges not modelled)"},
    {"h200", 90, 18, true, "H200 SXM: 18 NVLink 4 links (NV18), NVLink SHARP"},
    {"l40s", 89, 0, false, "L40S: Ada PCIe card, no NVLink"},
    {"rtx4090", 89, 0, false, "RTX 4090: Ada PCIe card, no NVLink"},
    // AMD's MI300X runs RCCL, not NCCL: it takes the default below.
    {"", 80, 0, false, "custom or unknown GPU: NCCL's Ampere row, no NVLS"},
}};

} // namespace

GpuView gpuView(std::string_view id)
{
    const GpuRow* row = &kGpuRows.back();
    for (const GpuRow& r : kGpuRows)
        if (!r.id.empty() && r.id == id)
            row = &r;
    return {std::string(row->id), row->sm, row->nvlinks, row->nvlinks > 0 ? nvlinkBwPerLink(row->sm) : 0.0, row->nvls,
            std::string(row->source)};
}

std::vector<Algorithm> algorithmsFor(collective::Op op)
{
    // tuning.cc's loops: Broadcast/Reduce only ring; AllGather/ReduceScatter ring, NVLS, CollNet Direct,
    // PAT; AllReduce everything but PAT. The p2p operations have no algorithm.
    switch (op) {
    case collective::Op::AllReduce:
        return {Algorithm::Tree, Algorithm::Ring, Algorithm::CollNetDirect, Algorithm::CollNetChain, Algorithm::Nvls,
                Algorithm::NvlsTree};
    case collective::Op::ReduceScatter:
    case collective::Op::AllGather:
        return {Algorithm::Ring, Algorithm::CollNetDirect, Algorithm::Nvls, Algorithm::Pat};
    case collective::Op::Broadcast:
    case collective::Op::Reduce: return {Algorithm::Ring};
    case collective::Op::AllToAll:
    case collective::Op::SendRecv: return {};
    }
    return {};
}

namespace {

// What tuning.cc's bandwidth and latency formulas read: the fabric's shape and the constants' rows.
struct TuneContext {
    const TunerConstants& k = kConstants;
    int nNodes = 1, nRanks = 1, cc = 0, sm = 0;
    double llMaxBw = 0, perChMaxTreeBw = 0, perChMaxRingLL128Bw = 0, perChMaxTreeLL128Bw = 0, perChMaxNVLSTreeBw = 0;
    double ppn = 1;
    bool patEnable = false;
};

// One collective row of tuning.cc: which family it is and its steps.
struct CollRow {
    bool allReduce = false, rsag = false, bcastReduce = false;
    int nsteps = 0;
};

// Why NCCL would not run an algorithm on this fabric (empty: it would).
void disableAlgorithms(const TuneContext& x, const Graphs& graphs, Tuning& t)
{
    for (int a = 0; a < kAlgorithmCount; ++a) {
        const auto alg = static_cast<Algorithm>(a);
        const Graph* g = graphOf(graphs, alg);
        if (alg == Algorithm::CollNetDirect || alg == Algorithm::CollNetChain)
            t.disabledWhy[a] = "needs in-network reduction (CollNet/SHARP), which this fabric does not have";
        else if (alg == Algorithm::NvlsTree && x.nNodes == 1)
            t.disabledWhy[a] = "is off on a single node (tuning.cc)";
        else if (alg == Algorithm::Nvls && x.nNodes > 1)
            t.disabledWhy[a] = "across nodes needs CollNet (tuning.cc); use nvls-tree";
        else if ((alg == Algorithm::Nvls || alg == Algorithm::NvlsTree) && (!g || !g->found || g->nChannels < 2))
            t.disabledWhy[a] = "needs a Hopper-or-later SXM GPU on an NVLink-4+ NVSwitch (and 2 NVLS channels)";
        else if (alg == Algorithm::Pat && !x.patEnable)
            t.disabledWhy[a] = "is used only with one GPU per node (NCCL_PAT_ENABLE auto)";
    }
}

// tuning.cc's algorithm bandwidth of (collective, algorithm, protocol) on graph g; 0 when disabled.
double tunedBandwidth(const TuneContext& x, const CollRow& row, const Graph* g, Algorithm alg, Protocol proto)
{
    const TunerConstants& k = x.k;
    const int nNodes = x.nNodes, cc = x.cc;
    const double ppn = x.ppn;
    double bw = nNodes <= 2 ? g->bwIntra : g->bwInter;
    if (alg == Algorithm::Nvls || alg == Algorithm::NvlsTree) {
        double intraBw = g->bwIntra * k.nvlsEfficiency[cc] * (g->nChannels - 1) / g->nChannels;
        intraBw *= row.allReduce ? 2.0 : (ppn - 1) / ppn;
        const double interBw = g->bwInter * ((nNodes <= 2 && alg == Algorithm::NvlsTree) ? 2 : 1);
        bw = std::min({intraBw, interBw,
                       alg == Algorithm::NvlsTree ? x.perChMaxNVLSTreeBw : std::numeric_limits<double>::max()});
    }
    double busBw = g->nChannels * bw;
    if (alg == Algorithm::Ring && proto == Protocol::LL)
        busBw = std::min(x.llMaxBw, busBw * .5);
    if (alg == Algorithm::Ring && proto == Protocol::LL128)
        busBw = std::min(busBw * 0.92, g->nChannels * x.perChMaxRingLL128Bw);
    if (alg == Algorithm::Tree && row.allReduce)
        busBw = std::min(busBw * .92, g->nChannels * x.perChMaxTreeBw);
    if (alg == Algorithm::Tree && proto == Protocol::LL)
        busBw = std::min(busBw * 1.0 / 3.8, x.llMaxBw);
    if (alg == Algorithm::Tree && proto == Protocol::LL128)
        busBw = std::min(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g->nChannels * x.perChMaxTreeLL128Bw);
    if (alg == Algorithm::Pat)
        busBw *= .75;
    // NVLS AllGather / ReduceScatter across nodes need a CollNet plugin: off.
    if (alg == Algorithm::Nvls && row.rsag && nNodes > 1)
        busBw = 0;
    // Bus → algorithm bandwidth (not for non-ring AllGather / ReduceScatter).
    if (!(alg != Algorithm::Ring && row.rsag)) {
        const bool ringLike = alg == Algorithm::Ring || alg == Algorithm::Nvls || alg == Algorithm::NvlsTree;
        busBw *= ringLike ? static_cast<double>(x.nRanks) / row.nsteps : .5;
    }
    // LL128 enablement (tuning.cc): up to PXN to the NIC on Hopper+ (LL128_C2C = 1), up to
    // PXB before; up to NVB between GPUs; sm ≥ 70.
    if (proto == Protocol::LL128) {
        bool on = x.sm >= 90 ? g->typeInter <= PathType::Pxn : g->typeInter <= PathType::Pxb;
        on = on && g->typeIntra <= PathType::Nvb && x.sm >= 70;
        if (!on)
            busBw = 0;
    }
    return busBw;
}

// tuning.cc's latency (µs) of (collective, algorithm, protocol) on graph g.
double tunedLatency(const TuneContext& x, const CollRow& row, const Graph* g, Algorithm alg, Protocol proto)
{
    const TunerConstants& k = x.k;
    const int nNodes = x.nNodes, nRanks = x.nRanks, nsteps = row.nsteps;
    const int a = static_cast<int>(alg), p = static_cast<int>(proto);
    const int intraHw = g->typeIntra == PathType::Nvl ? 0 : 1;
    const int hw = nNodes == 1 ? intraHw : 2;
    double lat = k.baseLatencies[a][p];
    double intraLat = k.hwLatencies[intraHw][a][p];
    // latencyInter = 0: the IB and socket plugins report no latency (net_ib/init.cc).
    const double interLat = x.ppn == 1 ? k.hwLatencies[2][A(Algorithm::Tree)][p] : k.hwLatencies[2][a][p];
    if (alg == Algorithm::Ring) {
        double l = k.hwLatencies[hw][a][p];
        if (row.bcastReduce) {
            if (g->sameChannels) {
                lat += l;
            } else { // "some chunk latency, waiting for proper chunk modeling"
                if (proto == Protocol::Simple)
                    l = k.hwLatencies[hw][A(Algorithm::Tree)][p];
                lat += nsteps * l;
            }
        } else {
            double netOverhead = 0;
            if (nNodes > 1)
                netOverhead = kNetOverheadUs * (proto == Protocol::Simple ? 3 : 1);
            intraLat = std::max(intraLat, netOverhead);
            const int nInterSteps = nNodes == 1 ? 0 : row.allReduce ? 2 * (nNodes - 1) : nNodes - 1;
            lat += (nsteps - nInterSteps) * intraLat + nInterSteps * interLat;
        }
    } else if (alg == Algorithm::Tree) {
        if (row.allReduce)
            lat += 2 * ((nRanks / nNodes - 1) * intraLat + log2i(static_cast<unsigned>(nNodes)) * interLat);
    } else if (alg == Algorithm::Nvls) {
        lat = intraLat;
        if (nNodes > 1)
            lat += interLat;
    } else if (alg == Algorithm::NvlsTree) {
        lat += intraLat + 2 * log2i(static_cast<unsigned>(nNodes)) * interLat;
    } else if (alg == Algorithm::Pat) {
        if (row.rsag)
            lat += log2i(static_cast<unsigned>(nNodes)) * (interLat / 3.5) + nRanks * 2.8;
    }
    return lat;
}

} // namespace

// NCCL's tuning model (tuning.cc, ncclTopoTuneModel): per collective, algorithm and protocol, the
// bandwidth and latency it predicts with, and why an algorithm is off.
Tuning tuneModel(const System& s, const Graphs& graphs)
{
    const TunerConstants& k = kConstants;
    Tuning t;
    TuneContext x;
    const int nNodes = x.nNodes = s.nodes;
    const int nRanks = x.nRanks = s.ranks();
    t.nRanks = nRanks;
    t.nNodes = nNodes;
    t.sm = x.sm = s.gpu.sm;
    t.ringChannels = std::min(kMaxChannels, graphs.ring.nChannels * 2); // connect.cc: rings doubled
    if (nRanks <= 1)
        return t;
    const int cc = x.cc = static_cast<int>(compCapOf(s.gpu.sm));
    const int index2 = nNodes <= 2 ? nNodes - 1 : 2;
    const int index1 = nNodes == 1 ? cc : 0; // several nodes: the CPU row, Intel assumed
    x.llMaxBw = k.llMaxBws[index1][index2];
    x.perChMaxTreeBw = k.perChMaxTreeBws[cc][index2];
    x.perChMaxRingLL128Bw = k.perChMaxRingLL128Bws[cc][index2];
    x.perChMaxTreeLL128Bw = k.perChMaxTreeLL128Bws[cc][index2];
    x.perChMaxNVLSTreeBw = k.perChMaxNVLSTreeBws[cc][index2];
    x.ppn = static_cast<double>(nRanks) / nNodes;
    x.patEnable = x.ppn == 1 && s.gpu.sm >= 60; // ncclPatEnable: one GPU per node
    disableAlgorithms(x, graphs, t);

    for (int coll = 0; coll < Tuning::kOps; ++coll) {
        CollRow row;
        row.allReduce = coll == 0;
        row.rsag = coll == 1 || coll == 2;
        row.bcastReduce = coll >= 3;
        row.nsteps = row.allReduce ? 2 * (nRanks - 1) : row.rsag ? nRanks - 1 : nRanks;
        for (int a = 0; a < kAlgorithmCount; ++a) {
            const auto alg = static_cast<Algorithm>(a);
            if (row.bcastReduce && alg != Algorithm::Ring)
                continue;
            if (row.rsag && alg != Algorithm::Pat && alg != Algorithm::Ring && alg != Algorithm::Nvls
                && alg != Algorithm::CollNetDirect)
                continue;
            if (row.allReduce && alg == Algorithm::Pat)
                continue;
            const Graph* g = graphOf(graphs, alg);
            if (!g || !g->found || !t.disabledWhy[a].empty())
                continue;
            for (int p = 0; p < kProtocolCount; ++p) {
                const auto proto = static_cast<Protocol>(p);
                if ((alg == Algorithm::Nvls || alg == Algorithm::NvlsTree) && proto != Protocol::Simple)
                    continue;
                if (row.rsag && alg == Algorithm::Pat && (proto != Protocol::Simple || !x.patEnable))
                    continue;
                if ((alg == Algorithm::Nvls || alg == Algorithm::NvlsTree) && g->nChannels < 2)
                    continue;
                t.bandwidth[coll][a][p] = tunedBandwidth(x, row, g, alg, proto);
                t.latency[coll][a][p] = tunedLatency(x, row, g, alg, proto);
            }
        }
    }
    return t;
}

std::optional<double> busBwFactor(collective::Op op, std::uint64_t ranks)
{
    if (ranks <= 1)
        return std::nullopt;
    const double n = static_cast<double>(ranks);
    switch (op) {
    case collective::Op::AllReduce: return 2 * (n - 1) / n;
    case collective::Op::ReduceScatter:
    case collective::Op::AllGather:
    case collective::Op::AllToAll: return (n - 1) / n;
    case collective::Op::Broadcast:
    case collective::Op::Reduce:
    case collective::Op::SendRecv: return 1.0;
    }
    return 1.0;
}

std::string_view algorithmLabel(const Prediction& p) { return p.pointToPoint ? "p2p" : toString(p.algorithm); }

namespace {

// NCCL's point-to-point path (All-to-All as nccl-tests runs it: ncclSend/ncclRecv of bytes/n to every
// peer; Send/Recv: each rank sends the whole buffer to rank+1). The time of the busiest GPU: its bytes to
// peers in its node over NVLink (or PCIe) at the GPU's intra bandwidth, its bytes to other nodes over the
// node's NICs (shared by the node's GPUs, each NIC behind its PCIe link); the Simple protocol's latency
// of one ring step (baseLatency + hwLatency). NCCL has no tuner model for p2p: this is our model.
Prediction p2p(const System& s, const Graphs& graphs, collective::Op op, double bytes)
{
    const TunerConstants& k = kConstants;
    Prediction r;
    r.op = op;
    r.bytes = bytes;
    r.pointToPoint = true;
    r.protocol = Protocol::Simple;
    r.channels = graphs.ring.nChannels;
    const int n = s.ranks();
    const int g = s.gpusPerNode;
    // Per GPU: bytes to peers of its node, and bytes leaving its node. A GPU's inter-node bytes go out by
    // its own NIC (one per GPU, rail-optimized) or share the server's one NIC with the other GPUs.
    double intraBytes = 0, interBytesPerGpu = 0;
    int gpusPerNic = s.nicPerGpu ? 1 : g;
    if (op == collective::Op::AllToAll) {
        intraBytes = (g - 1) * bytes / n;
        interBytesPerGpu = static_cast<double>(n - g) * bytes / n;
    } else { // Send/Recv as nccl-tests runs it: rank r sends the buffer to r+1 (a ring shift); the last GPU
             // of each node sends across, alone on its NIC.
        intraBytes = g > 1 ? bytes : 0;
        interBytesPerGpu = s.nodes > 1 ? bytes : 0;
        gpusPerNic = 1;
    }
    double t = 0; // µs
    if (intraBytes > 0)
        t = std::max(t, intraBytes / (1000 * s.intraBw));
    if (interBytesPerGpu > 0 && s.nicsPerNode > 0)
        t = std::max(t, gpusPerNic * interBytesPerGpu / (1000 * std::min(s.nicBw, s.pciBw)));
    const int hw = s.nodes > 1 ? 2 : (s.nvlink ? 0 : 1);
    const double lat = k.baseLatencies[A(Algorithm::Ring)][P(Protocol::Simple)]
                       + k.hwLatencies[hw][A(Algorithm::Ring)][P(Protocol::Simple)];
    r.latencyTerm = lat * 1e-6;
    r.bandwidthTerm = t * 1e-6;
    r.time = r.latencyTerm + r.bandwidthTerm;
    r.modelBandwidth = r.bandwidthTerm > 0 ? bytes / r.bandwidthTerm : 0;
    return r;
}

} // namespace

Result<Prediction> predict(const Tuning& t, const System& s, const Graphs& graphs, const Request& q)
{
    const std::string opName(collective::toString(q.op));
    const int ci = opIndex(q.op);
    if (q.bytes < 0 || !std::isfinite(q.bytes))
        return errorAt("bytes", "must be a finite number of bytes ≥ 0");
    Prediction r;
    r.op = q.op;
    r.bytes = q.bytes;
    if (ci < 0) {
        if (q.algorithm)
            return errorAt("algorithm", "NCCL has no " + std::string(toString(*q.algorithm)) + " algorithm for " + opName
                                            + ": it runs point-to-point (ncclSend/ncclRecv); use auto");
        if (q.protocol && *q.protocol != Protocol::Simple)
            return errorAt("protocol", opName + " is modelled with NCCL's simple protocol only; use auto or simple");
        r = p2p(s, graphs, q.op, q.bytes);
    } else if (t.nRanks <= 1) {
        // One rank: NCCL copies locally (LOC_BW 5000 GB/s of topo.h) and the tuner has no model.
        r.algorithm = q.algorithm.value_or(Algorithm::Ring);
        r.protocol = q.protocol.value_or(Protocol::Simple);
        r.channels = graphs.ring.nChannels;
        r.bandwidthTerm = q.bytes / 5000e9;
        r.time = r.bandwidthTerm;
        r.modelBandwidth = 5000e9;
    } else {
        const auto valid = nccl::algorithmsFor(q.op);
        if (q.algorithm && std::find(valid.begin(), valid.end(), *q.algorithm) == valid.end())
            return errorAt("algorithm", "NCCL has no " + std::string(toString(*q.algorithm)) + " algorithm for " + opName
                                            + "; it has " + listNames(valid));
        if (q.algorithm && !t.disabledWhy[A(*q.algorithm)].empty())
            return errorAt("algorithm", std::string(toString(*q.algorithm)) + " for " + opName + " "
                                            + t.disabledWhy[A(*q.algorithm)]);
        const auto bytesInt = static_cast<unsigned long long>(q.bytes);
        const int logSize = log2i(bytesInt >> 6);
        double best = -1;
        for (int a = 0; a < kAlgorithmCount; ++a) {
            if (q.algorithm && A(*q.algorithm) != a)
                continue;
            for (int p = 0; p < kProtocolCount; ++p) {
                if (q.protocol && P(*q.protocol) != p)
                    continue;
                double bw = t.bandwidth[ci][a][p];
                double lat = t.latency[ci][a][p];
                if (bw <= 0)
                    continue;
                // ncclTopoGetAlgoTime
                if (a == A(Algorithm::Tree) && ci == 0 && logSize >= 0 && logSize < 23)
                    bw *= kTreeCorrection[p][logSize];
                if (a == A(Algorithm::NvlsTree) && ci == 0 && logSize >= 0 && logSize < 24 && t.sm >= 100)
                    bw *= kTreeCorrection[p][logSize];
                if (a == A(Algorithm::Ring) && p == P(Protocol::Simple) && t.nNodes > 1 && ci == 0
                    && t.ringChannels > 0 && bytesInt / (static_cast<unsigned long long>(t.ringChannels) * t.nRanks) >= 64)
                    lat *= t.sm < 80 ? 1.9 : 1.4; // plateau effect of ring
                const double time = lat + q.bytes / (1000 * bw);
                if (best < 0 || time < best) {
                    best = time;
                    r.algorithm = static_cast<Algorithm>(a);
                    r.protocol = static_cast<Protocol>(p);
                    r.latencyTerm = lat * 1e-6;
                    r.bandwidthTerm = q.bytes / (1000 * bw) * 1e-6;
                    r.modelBandwidth = bw * 1e9;
                }
            }
        }
        if (best < 0) {
            std::string what = q.algorithm ? std::string(toString(*q.algorithm)) : std::string("any algorithm");
            return errorAt(q.protocol ? "protocol" : "algorithm",
                           "NCCL has no " + (q.protocol ? std::string(toString(*q.protocol)) + " protocol for " : std::string())
                               + what + " of " + opName + " on this fabric");
        }
        r.time = r.latencyTerm + r.bandwidthTerm;
        const Graph* g = graphOf(graphs, r.algorithm);
        r.channels = g ? g->nChannels : 0;
    }
    r.algbw = r.time > 0 ? q.bytes / r.time : 0;
    if (auto f = busBwFactor(q.op, static_cast<std::uint64_t>(s.ranks())))
        r.busbw = r.algbw * *f;
    return r;
}

} // namespace tw::nccl
