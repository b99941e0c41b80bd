#include "nvlsflows.h"
#include "ncclchannels.h"

#include "collective/ncclgraph.h"

#include <algorithm>
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
    if (src != kSwitch && dst != kSwitch) // switched fabrics: one flow id for all (routing.h "ECMP")
        return m_router.route(src, dst, isSwitchedFabric(m_topo.spec.kind) ? 0 : flowId);
    const std::uint32_t gpu = src == kSwitch ? dst : src;
    if (gpu == kSwitch || gpu >= m_up.size() || m_up[gpu].empty())
        return errorAt("topology", "GPU " + std::to_string(gpu) + " has no link to an NVSwitch for NVLS");
    return src == kSwitch ? &m_down[gpu] : &m_up[gpu];
}

namespace {

bool linkedToSwitch(const Topology& topo, std::uint32_t g)
{
    if (g >= topo.gpuCount() || topo.gpuNode(g) == kNoNode)
        return false;
    for (LinkId l : topo.outLinks(topo.gpuNode(g)))
        if (topo.node(topo.link(l).to).kind == NodeKind::NvSwitch)
            return true;
    return false;
}

// Chunk c of a total cut into C chunks: an equal share, the last chunk the remainder (they sum to the total).
double chunkShare(double total, std::uint32_t c, std::uint32_t C)
{
    const double each = total / C;
    return c + 1 < C ? each : total - each * (C - 1);
}

} // namespace

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
        for (std::uint32_t g : m)
            if (!linkedToSwitch(topo, g) || topo.node(topo.gpuNode(g)).server != topo.node(topo.gpuNode(m[0])).server)
                return false;
    }
    return true;
}

std::vector<std::vector<collective::Transfer>> nvlsSteps(const collective::ScheduleSpec& spec)
{
    const auto n = static_cast<std::uint32_t>(spec.ranks);
    const nccl::LinkBytes per = nccl::nvlsBytesPerGpuLink(spec.op, spec.bytes, static_cast<int>(n));
    const std::uint32_t C = kNvlsChunks;
    auto share = [C](double total, std::uint32_t c) { return chunkShare(total, c, C); };
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

std::optional<NvlsTree> nvlsTree(const Topology& topo, const parallel::CommPlan& plan, std::uint32_t call,
                                 const collective::BoundCall& b, Router& router)
{
    const auto span = allReduceSpan(topo, plan, call, b, nccl::Algorithm::NvlsTree, b.nvlsChannels); // ncclchannels.h
    if (!span)
        return std::nullopt;
    const parallel::CollectiveCall& c = *span->call;
    const std::uint32_t g = span->g, n = span->n;
    NvlsTree tree;
    tree.perNode = g;
    tree.nodes = n;
    std::vector<std::uint32_t> rail; // per distinct head
    for (const nccl::Channel& ch : b.nvlsChannels) {
        if (ch.gpus.empty() || ch.gpus.front() < 0 || ch.gpus.front() >= int(g) || ch.nicIn < 0 || ch.nicIn >= int(g)
            || ch.nicOut != ch.nicIn)
            return std::nullopt;
        const auto head = static_cast<std::uint32_t>(ch.gpus.front());
        const auto at = std::find(tree.heads.begin(), tree.heads.end(), head);
        if (at != tree.heads.end()) {
            if (rail[static_cast<std::size_t>(at - tree.heads.begin())] != static_cast<std::uint32_t>(ch.nicIn))
                return std::nullopt; // one head on two rails: not modelled
            ++tree.weight[static_cast<std::size_t>(at - tree.heads.begin())];
        } else {
            tree.heads.push_back(head);
            tree.weight.push_back(1);
            rail.push_back(static_cast<std::uint32_t>(ch.nicIn));
        }
        ++tree.channels;
    }
    for (std::uint32_t k = 0; k < n; ++k) {
        const nccl::TreeLinks t = nccl::doubleBinaryTree(static_cast<int>(n), static_cast<int>(k));
        tree.parent[0].push_back(t.up0 < 0 ? kNoParentNode : static_cast<std::uint32_t>(t.up0));
        tree.parent[1].push_back(t.up1 < 0 ? kNoParentNode : static_cast<std::uint32_t>(t.up1));
    }
    for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
        const auto& m = plan.groups[gr].members;
        for (std::uint32_t gpu : m)
            if (!linkedToSwitch(topo, gpu))
                return std::nullopt;
        // Head i's edges between nodes leave and enter by rail i, both ways (reduce up, broadcast down).
        for (std::size_t i = 0; i < tree.heads.size(); ++i) {
            const std::uint32_t h = tree.heads[i], r = rail[i];
            for (const auto& parent : tree.parent)
                for (std::uint32_t k = 0; k < n; ++k) {
                    const std::uint32_t p = parent[k];
                    if (p == kNoParentNode)
                        continue;
                    if (!router.preferNics(m[k * g + h], m[p * g + h], m[k * g + r], m[p * g + r])
                        || !router.preferNics(m[p * g + h], m[k * g + h], m[p * g + r], m[k * g + r]))
                        return std::nullopt;
                }
        }
    }
    return tree;
}

std::vector<std::vector<collective::Transfer>> nvlsTreeSteps(const collective::ScheduleSpec& spec, const NvlsTree& tree)
{
    const std::uint32_t g = tree.perNode, n = tree.nodes, R = g * n, C = kNvlsChunks;
    // Depth of every node in each tree (the root 0) and the deeper tree's depth D.
    std::vector<std::uint32_t> depth[2];
    std::uint32_t D = 0;
    for (int t = 0; t < 2; ++t)
        for (std::uint32_t k = 0; k < n; ++k) {
            std::uint32_t d = 0;
            for (std::uint32_t v = k; tree.parent[t][v] != kNoParentNode && d <= n; v = tree.parent[t][v])
                ++d;
            depth[t].push_back(d);
            D = std::max(D, d);
        }
    std::vector<std::vector<collective::Transfer>> steps(std::size_t{C} + 2 * std::size_t{D} + 3);
    for (std::uint32_t c = 0; c < C; ++c) {
        const double all = chunkShare(spec.bytes, c, C);
        for (std::uint32_t r = 0; r < R; ++r) {
            steps[c].push_back({r, R, c, all, true});                 // into the switch, reduced there
            steps[c + 2 * D + 3].push_back({R, r, c, all, false});    // the result multicast back
        }
        for (std::size_t i = 0; i < tree.heads.size(); ++i) {
            const double slice = spec.bytes * tree.weight[i] / tree.channels; // X_i
            const double mine = chunkShare(slice, c, C), half = chunkShare(slice / 2, c, C);
            const std::uint32_t chunk = static_cast<std::uint32_t>(i + 1) * C + c;
            for (std::uint32_t k = 0; k < n; ++k) {
                const std::uint32_t head = k * g + tree.heads[i];
                steps[c + 1].push_back({R, head, chunk, mine, false});        // the node's reduced slice
                steps[c + 2 * D + 2].push_back({head, R, chunk, mine, false}); // the result, stored for multicast
                for (int t = 0; t < 2; ++t) {
                    const std::uint32_t p = tree.parent[t][k];
                    if (p == kNoParentNode)
                        continue;
                    const std::uint32_t d = depth[t][k], up = p * g + tree.heads[i];
                    steps[c + 1 + D - d + 1].push_back({head, up, chunk, half, true}); // reduce toward the root
                    steps[c + D + d + 1].push_back({up, head, chunk, half, false});    // broadcast back
                }
            }
        }
    }
    return steps;
}

} // namespace tw::network
