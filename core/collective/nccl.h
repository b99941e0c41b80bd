#pragma once
// NCCL's own performance model, as NVIDIA/nccl v2.30.7-1 (commit 5067397c) computes it: the names of
// its algorithms and protocols, the tuner constants of src/graph/tuning.cc, NCCL's view of a GPU (compute
// capability, NVLink count × per-link rate of src/graph/topo.h, PCIe and NIC rates as topo.cc computes
// them), the bandwidth / latency model of ncclTopoTuneModel and the time of ncclTopoGetAlgoTime, and the
// default selection (the enabled (algorithm, protocol) of minimum predicted time, no tuner plugin).
// The graphs the model reads (nChannels, bwIntra, bwInter per algorithm) come from ncclgraph.h.
// Units: the tables keep NCCL's (µs, GB/s = 10^9 B/s); results leave in base units (s, B/s).
// See docs/nccl.md for which of NCCL's rules are followed and which are simplified.

#include "base/error.h"
#include "base/units.h"
#include "collective/schedule.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::nccl {

struct Graphs;
struct System;

// NCCL's algorithm indices (src/include/plugin/nccl_tuner.h): TREE 0, RING 1, COLLNET_DIRECT 2,
// COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5, PAT 6.
enum class Algorithm { Tree, Ring, CollNetDirect, CollNetChain, Nvls, NvlsTree, Pat };
inline constexpr int kAlgorithmCount = 7;
// NCCL's protocol indices: LL 0, LL128 1, SIMPLE 2.
enum class Protocol { LL, LL128, Simple };
inline constexpr int kProtocolCount = 3;
// NCCL_HW_NVLINK 0, NCCL_HW_PCI 1, NCCL_HW_NET 2.
enum class Hw { NvLink, Pci, Net };
// Compute-capability rows of the tuner tables: Volta (< sm80), Ampere (sm80–89), Hopper (sm90–99), Blackwell (≥ sm100).
enum class CompCap { Volta, Ampere, Hopper, Blackwell };

// "tree", "ring", "collnet-direct", "collnet-chain", "nvls", "nvls-tree", "pat".
[[nodiscard]] std::string_view toString(Algorithm a);
[[nodiscard]] std::optional<Algorithm> algorithmFromString(std::string_view s);
// "ll", "ll128", "simple".
[[nodiscard]] std::string_view toString(Protocol p);
[[nodiscard]] std::optional<Protocol> protocolFromString(std::string_view s);
[[nodiscard]] std::string_view toString(CompCap c); // "volta", "ampere", "hopper", "blackwell"
[[nodiscard]] CompCap compCapOf(int sm);

// ncclTunerConstantsDefaults of src/graph/tuning.cc @ 5067397c (µs and GB/s); columns of the caps are
// N1 / N2 / N4 (1 node, 2 nodes, 3 or more).
struct TunerConstants {
    double baseLatencies[kAlgorithmCount][kProtocolCount];
    double hwLatencies[3][kAlgorithmCount][kProtocolCount];
    double llMaxBws[4][3];
    double perChMaxRingLL128Bws[4][3];
    double perChMaxTreeLL128Bws[4][3];
    double perChMaxTreeBws[4][3];
    double perChMaxNVLSTreeBws[4][3];
    double nvlsEfficiency[4];
};
[[nodiscard]] const TunerConstants& tunerConstants();
// treeCorrectionFactor[protocol][log2(bytes/64)] of tuning.cc (64 B … 256 MB).
[[nodiscard]] double treeCorrectionFactor(Protocol p, int logSize);
// getNetOverhead() for an x86 Intel (or unknown) CPU: 1 µs. The model does not know the CPU vendor.
inline constexpr double kNetOverheadUs = 1.0;
// MAXCHANNELS (src/include/device.h) and NCCL_MAX_NVLS_ARITY.
inline constexpr int kMaxChannels = 64;
inline constexpr int kMaxNvlsArity = 32;

// NCCL's view of one GPU model of the catalog (model/gpucatalog.h ids), kept here so #19 can extend the
// catalog without touching NCCL's figures.
struct GpuView {
    std::string id;              // catalog id, or "" for the default of a custom / unknown GPU
    int sm = 80;                 // compute capability × 10
    int nvlinks = 0;             // NVLinks per GPU to the NVSwitch (0: PCIe only)
    double nvlinkBw = 0;         // per link, GB/s (topo.h SMxx_NVLINK_BW)
    bool nvls = false;           // NVLink SHARP possible when the GPU sits on an NVSwitch (Hopper SXM and later)
    std::string source;          // where the link count comes from
    bool operator==(const GpuView&) const = default;
};
// The catalog GPU's row; a custom or unknown id gets the conservative default (Ampere row, no NVLink of
// its own, no NVLS: NVLink only when the fabric has it, at 12 links × 20 GB/s).
[[nodiscard]] GpuView gpuView(std::string_view catalogId);
// Per-NVLink bandwidth NCCL assigns (topo.h): SM60 18, SM70 20, SM80 20, SM86 12, SM90 20.6, SM100 40.1 GB/s.
[[nodiscard]] double nvlinkBwPerLink(int sm);
// PCIe x16 as topo.cc computes it: width · speed / 80 with speed 60/120/240/480 for 8/16/32/64 GT/s:
// Gen3 12, Gen4 24, Gen5 48 GB/s.
[[nodiscard]] double pcieBwGBs(int generation, int width = 16);
// A NIC's bandwidth as topo.cc reads it: Mb/s / 8000 (HDR 200 Gb/s → 25 GB/s).
[[nodiscard]] double nicBwGBs(double bytesPerSecond);

// NCCL's bandwidth (algorithm bandwidth, GB/s) and latency (µs) of every (op, algorithm, protocol), as
// ncclTopoTuneModel leaves comm->bandwidths / comm->latencies; bandwidth 0 = not available.
struct Tuning {
    static constexpr int kOps = 5; // AllReduce, ReduceScatter, AllGather, Broadcast, Reduce
    double bandwidth[kOps][kAlgorithmCount][kProtocolCount] = {};
    double latency[kOps][kAlgorithmCount][kProtocolCount] = {};
    std::string disabledWhy[kAlgorithmCount]; // why an algorithm NCCL has is off on this system ("" = on)
    int ringChannels = 0;                     // for the ring "plateau" test of ncclTopoGetAlgoTime
    int nRanks = 1, nNodes = 1;
    int sm = 80;
};
[[nodiscard]] Tuning tuneModel(const System& system, const Graphs& graphs);

// The algorithms NCCL has for an operation (tuning.cc's loops): AllReduce tree, ring, collnet-direct,
// collnet-chain, nvls, nvls-tree; ReduceScatter / AllGather ring, nvls, collnet-direct, pat;
// Broadcast / Reduce ring; All-to-All and Send/Recv none (point-to-point).
[[nodiscard]] std::vector<Algorithm> algorithmsFor(collective::Op op);

// What the user asks for one size.
struct Request {
    collective::Op op = collective::Op::AllReduce;
    double bytes = 0;                    // nccl-tests' size: the whole buffer (AllGather's output, ReduceScatter's input)
    std::optional<Algorithm> algorithm;  // nullopt: auto
    std::optional<Protocol> protocol;    // nullopt: auto
    bool operator==(const Request&) const = default;
};

// One predicted call.
struct Prediction {
    collective::Op op = collective::Op::AllReduce;
    double bytes = 0;
    bool pointToPoint = false;      // All-to-All, Send/Recv: NCCL's p2p path, no algorithm
    Algorithm algorithm = Algorithm::Ring;
    Protocol protocol = Protocol::Simple;
    int channels = 0;               // the graph's nChannels of the algorithm
    Seconds time = 0;               // latency + bandwidth term
    Seconds latencyTerm = 0;        // lat · latCount
    Seconds bandwidthTerm = 0;      // bytes / (model bandwidth)
    double modelBandwidth = 0;      // B/s, NCCL's algorithm bandwidth after the tree correction factor
    double algbw = 0;               // B/s, nccl-tests: bytes / time
    std::optional<double> busbw;    // B/s, nccl-tests' factor; nullopt for one rank
    bool operator==(const Prediction&) const = default;
};

// nccl-tests' busbw factor (doc/PERFORMANCE.md): AllReduce 2(n−1)/n; ReduceScatter, AllGather,
// All-to-All (n−1)/n; Broadcast, Reduce, Send/Recv 1. nullopt for n = 1.
[[nodiscard]] std::optional<double> busBwFactor(collective::Op op, std::uint64_t ranks);

// The prediction for one request; an Error naming the pair when the algorithm is not one NCCL has for the
// operation (with the valid ones) or is off on this system (with why), or a protocol it cannot run.
[[nodiscard]] Result<Prediction> predict(const Tuning& tuning, const System& system, const Graphs& graphs,
                                         const Request& request);

std::string_view algorithmLabel(const Prediction& p); // "ring", "tree", … or "p2p"

} // namespace tw::nccl
