#include "fabriclink.h"

#include "collective/nccl.h"

#include <algorithm>
#include <cstdio>

namespace tw::collective {

namespace {

std::string number(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

} // namespace

FabricLink linkFromFabric(const nccl::System& g)
{
    const nccl::TunerConstants& k = nccl::tunerConstants();
    constexpr int ring = static_cast<int>(nccl::Algorithm::Ring);
    constexpr int simple = static_cast<int>(nccl::Protocol::Simple);
    constexpr int nvlinkHw = static_cast<int>(nccl::Hw::NvLink), pciHw = static_cast<int>(nccl::Hw::Pci),
                  netHw = static_cast<int>(nccl::Hw::Net);
    const std::string base = number(k.baseLatencies[ring][simple]);
    // Inside a node: the GPU's NVLink (links × rate) or its PCIe link, as NCCL's topology sees it.
    std::string intra = "the GPU's PCIe link, " + number(g.intraBw) + " GB/s";
    if (g.nvlink)
        intra = "NVLink "
                + (g.gpu.nvlinks > 0 ? std::to_string(g.gpu.nvlinks) + " × " + number(g.gpu.nvlinkBw) + " GB/s = " : "")
                + number(g.intraBw) + " GB/s per GPU";
    FabricLink out;
    if (g.nodes <= 1) {
        const double alphaUs = k.hwLatencies[g.nvlink ? nvlinkHw : pciHw][ring][simple];
        out.link.alphaSeconds = alphaUs * 1e-6;
        out.link.bandwidth = g.intraBw * 1e9;
        out.why = "one node: β = " + intra + "; α = " + number(alphaUs) + " µs, NCCL's ring hop over "
                  + (g.nvlink ? "NVLink" : "PCIe") + " (Simple protocol; NCCL adds " + base + " µs once per call)";
        return out;
    }
    const nccl::Graphs graphs = nccl::searchGraphs(g);
    const double across = graphs.ring.nChannels * graphs.ring.bwInter;
    const double alphaUs = k.hwLatencies[netHw][ring][simple];
    const bool capped = g.gpusPerNode > 1 && g.intraBw < across;
    out.link.alphaSeconds = alphaUs * 1e-6;
    out.link.bandwidth = (capped ? g.intraBw : across) * 1e9;
    out.why = std::to_string(g.nodes) + " nodes: β = NCCL's " + std::to_string(graphs.ring.nChannels) + " ring channel"
              + (graphs.ring.nChannels == 1 ? "" : "s") + " × " + number(graphs.ring.bwInter)
              + " GB/s across nodes = " + number(across) + " GB/s (" + std::to_string(g.nicsPerNode) + " NIC"
              + (g.nicsPerNode == 1 ? "" : "s") + " per node × " + number(g.nicBw) + " GB/s"
              + (g.nicsPerNode > 1 ? ", one rail per channel" : "") + ")"
              + (capped ? ", capped by " + intra : std::string()) + "; α = " + number(alphaUs)
              + " µs, NCCL's ring hop over the network (Simple protocol; NCCL adds " + base + " µs once per call)";
    return out;
}

} // namespace tw::collective
