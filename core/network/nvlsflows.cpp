#include "nvlsflows.h"

#include "collective/ncclgraph.h"

#include <cmath>

namespace tw::network {

EndpointRouter::EndpointRouter(const Topology& topology, Router& router) : m_topo(topology), m_router(router)
{
    m_up.resize(topology.gpuCount());
    m_down.resize(topology.gpuCount());
    for (std::uint64_t g = 0; g < topology.gpuCount(); ++g) {
        const NodeId n = topology.gpuNode(g);
        if (n == kNoNode)
            continue;
        for (LinkId l : topology.outLinks(n))
            if (topology.node(topology.link(l).to).kind == NodeKind::NvSwitch) {
                m_up[g] = {l};
                m_down[g] = {topology.link(l).reverse};
                break;
            }
    }
}

Result<const std::vector<LinkId>*> EndpointRouter::route(std::uint32_t src, std::uint32_t dst, std::uint64_t flowId)
{
    if (src != kSwitch && dst != kSwitch)
        return m_router.route(src, dst, flowId);
    const std::uint32_t gpu = src == kSwitch ? dst : src;
    if (gpu == kSwitch || gpu >= m_up.size() || m_up[gpu].empty())
        return errorAt("topology", "GPU " + std::to_string(gpu) + " has no link to an NVSwitch for NVLS");
    return src == kSwitch ? &m_down[gpu] : &m_up[gpu];
}

bool nvlsFlows(const Topology& topo, const parallel::CommPlan& plan, std::uint32_t call, const collective::BoundCall& b)
{
    using collective::Op;
    if (call >= plan.calls.size() || !b.nccl || !b.counted || b.prediction.pointToPoint
        || b.prediction.algorithm != nccl::Algorithm::Nvls || b.groupNodes != 1
        || (b.spec.op != Op::AllReduce && b.spec.op != Op::ReduceScatter && b.spec.op != Op::AllGather))
        return false;
    const parallel::CollectiveCall& c = plan.calls[call];
    if (std::uint64_t{c.firstGroup} + c.groupCount > plan.groups.size())
        return false;
    for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
        const auto& m = plan.groups[gr].members;
        if (m.size() != b.spec.ranks || m.size() < 2)
            return false;
        for (std::uint32_t g : m) {
            if (g >= topo.gpuCount() || topo.gpuNode(g) == kNoNode)
                return false;
            bool linked = false;
            for (LinkId l : topo.outLinks(topo.gpuNode(g)))
                linked = linked || topo.node(topo.link(l).to).kind == NodeKind::NvSwitch;
            if (!linked || topo.node(topo.gpuNode(g)).server != topo.node(topo.gpuNode(m[0])).server)
                return false;
        }
    }
    return true;
}

std::vector<std::vector<collective::Transfer>> nvlsSteps(const collective::ScheduleSpec& spec)
{
    const auto n = static_cast<std::uint32_t>(spec.ranks);
    const nccl::LinkBytes per = nccl::nvlsBytesPerGpuLink(spec.op, spec.bytes, static_cast<int>(n));
    const std::uint32_t C = kNvlsChunks;
    // Chunk c of a total: an equal share, the last chunk the remainder (so the chunks sum to the total).
    auto share = [C](double total, std::uint32_t c) {
        const double each = total / C;
        return c + 1 < C ? each : total - each * (C - 1);
    };
    std::vector<std::vector<collective::Transfer>> steps(C + 1);
    for (std::uint32_t k = 0; k <= C; ++k) {
        for (std::uint32_t r = 0; r < n; ++r) {
            if (k < C) // push chunk k into the switch (reduced there when the operation reduces)
                steps[k].push_back({r, n, k, share(per.up, k), spec.op != collective::Op::AllGather});
            if (k > 0) // pull chunk k − 1 out of it
                steps[k].push_back({n, r, k - 1, share(per.down, k - 1), false});
        }
    }
    return steps;
}

} // namespace tw::network
