#include "ncclchannels.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tw::network {

bool groupsNodeByNode(const Topology& topo, const parallel::CommPlan& plan, const parallel::CollectiveCall& c,
                      std::uint32_t g, std::uint32_t n)
{
    if (std::uint64_t{c.firstGroup} + c.groupCount > plan.groups.size())
        return false;
    auto serverOf = [&](std::uint32_t gpu) { return topo.node(topo.gpuNode(gpu)).server; };
    for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
        const auto& m = plan.groups[gr].members;
        if (m.size() != std::size_t{g} * n)
            return false;
        for (std::uint32_t i = 0; i < m.size(); ++i)
            if (m[i] >= topo.gpuCount() || topo.gpuNode(m[i]) == kNoNode)
                return false;
        for (std::uint32_t k = 0; k < n; ++k) {
            for (std::uint32_t j = 1; j < g; ++j)
                if (serverOf(m[k * g + j]) != serverOf(m[k * g]))
                    return false;
            if (k > 0 && serverOf(m[k * g]) == serverOf(m[(k - 1) * g]))
                return false;
        }
    }
    return true;
}

std::optional<NodeSpan> nodeSpan(const Topology& topo, const parallel::CommPlan& plan, std::uint32_t call,
                                 const collective::BoundCall& b, int minPerNode)
{
    if (call >= plan.calls.size() || !b.nccl || !b.counted || b.prediction.pointToPoint || b.groupNodes < 2
        || b.groupPerNode < minPerNode)
        return std::nullopt;
    const parallel::CollectiveCall& c = plan.calls[call];
    const auto g = static_cast<std::uint32_t>(b.groupPerNode), n = static_cast<std::uint32_t>(b.groupNodes);
    if (b.spec.ranks != std::uint64_t{g} * n || !groupsNodeByNode(topo, plan, c, g, n))
        return std::nullopt;
    return NodeSpan{&c, g, n};
}

std::optional<NodeSpan> allReduceSpan(const Topology& topo, const parallel::CommPlan& plan, std::uint32_t call,
                                      const collective::BoundCall& b, nccl::Algorithm algorithm,
                                      const std::vector<nccl::Channel>& channels)
{
    if (b.prediction.algorithm != algorithm || b.spec.op != collective::Op::AllReduce || channels.empty())
        return std::nullopt;
    return nodeSpan(topo, plan, call, b, 1);
}

std::optional<ChannelRings> channelRings(const Topology& topo, const parallel::CommPlan& plan, std::uint32_t call,
                                         const collective::BoundCall& b, Router& router)
{
    if (b.channels.empty() || b.spec.algorithm != collective::Algorithm::Ring)
        return std::nullopt;
    const std::optional<NodeSpan> span = nodeSpan(topo, plan, call, b, 2);
    if (!span)
        return std::nullopt;
    const parallel::CollectiveCall& c = *span->call;
    const std::uint32_t g = span->g, n = span->n;
    // Distinct channels (GPU order and rail); one ring per distinct order.
    ChannelRings rings;
    std::vector<std::pair<std::vector<int>, std::pair<int, int>>> seen;
    for (const nccl::Channel& ch : b.channels) {
        if (ch.gpus.size() != g || ch.nicIn < 0 || ch.nicOut < 0 || ch.nicIn >= int(g) || ch.nicOut >= int(g))
            return std::nullopt;
        std::pair<std::vector<int>, std::pair<int, int>> id{ch.gpus, {ch.nicIn, ch.nicOut}};
        auto at = std::find(seen.begin(), seen.end(), id);
        if (at == seen.end()) {
            std::vector<std::uint32_t> order;
            for (std::uint32_t k = 0; k < n; ++k)
                for (int j : ch.gpus)
                    order.push_back(k * g + static_cast<std::uint32_t>(j));
            rings.orders.push_back(std::move(order));
            rings.weight.push_back(1);
            seen.push_back(std::move(id));
        } else {
            ++rings.weight[static_cast<std::size_t>(at - seen.begin())];
        }
        ++rings.channels;
    }
    if (rings.orders.empty())
        return std::nullopt;
    // The rails: the hop from node k's last GPU to node k+1's first leaves by NIC nicOut of node k and
    // enters by NIC nicIn of node k+1 (the NICs of the group's local GPUs nicOut / nicIn). The ring sends
    // rank i → i + 1 only (reduce-scatter and all-gather alike), so one hint per ordered pair.
    for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
        const auto& m = plan.groups[gr].members;
        for (const auto& [gpus, nics] : seen)
            for (std::uint32_t k = 0; k < n; ++k) {
                const std::uint32_t next = (k + 1) % n;
                const std::uint32_t from = m[k * g + static_cast<std::uint32_t>(gpus.back())];
                const std::uint32_t to = m[next * g + static_cast<std::uint32_t>(gpus.front())];
                const std::uint32_t nicFrom = m[k * g + static_cast<std::uint32_t>(nics.second)];
                const std::uint32_t nicTo = m[next * g + static_cast<std::uint32_t>(nics.first)];
                if (!router.preferNics(from, to, nicFrom, nicTo))
                    return std::nullopt;
            }
    }
    return rings;
}

ChannelSchedule::ChannelSchedule(const collective::ScheduleSpec& spec, const ChannelRings& rings) : m_rings(&rings)
{
    double left = spec.bytes;
    for (std::size_t r = 0; r < rings.orders.size(); ++r) {
        collective::ScheduleSpec one = spec;
        one.bytes = r + 1 == rings.orders.size() ? left : std::floor(spec.bytes * rings.weight[r] / rings.channels);
        left -= one.bytes;
        m_gens.emplace_back(one);
    }
    m_chunksPer = m_gens.empty() ? 0 : m_gens.front().chunkCount();
}

bool ChannelSchedule::next(std::vector<collective::Transfer>& step)
{
    step.clear();
    bool more = false;
    for (std::size_t r = 0; r < m_gens.size(); ++r) {
        if (!m_gens[r].next(m_one))
            continue;
        more = true;
        for (collective::Transfer t : m_one) {
            t.src = m_rings->orders[r][t.src];
            t.dst = m_rings->orders[r][t.dst];
            t.chunk += static_cast<std::uint32_t>(r) * m_chunksPer;
            step.push_back(t);
        }
    }
    return more;
}

} // namespace tw::network
