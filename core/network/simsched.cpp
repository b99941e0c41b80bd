#include "simsched.h"

#include <utility>

namespace tw::network::sim {

SpecKey specKey(const collective::ScheduleSpec& s, int layout)
{
    return {int(s.op), int(s.algorithm), s.ranks, s.bytes, s.root, s.ranksPerNode, s.pipelineChunks, layout};
}

std::optional<NcclLayout> ncclLayout(const Topology& topo, const parallel::CommPlan& plan, std::uint32_t call,
                                     const collective::BoundCall& bound, Router& router)
{
    NcclLayout out;
    if (nvlsFlows(topo, plan, call, bound)) {
        out.kind = NcclLayout::Kind::Nvls;
    } else if (auto nt = nvlsTree(topo, plan, call, bound, router)) {
        out.kind = NcclLayout::Kind::NvlsTree;
        out.nvlsTree = std::move(*nt);
    } else if (auto trees = treeChannels(topo, plan, call, bound, router)) {
        out.kind = NcclLayout::Kind::Trees;
        out.trees = std::move(*trees);
    } else if (auto rings = channelRings(topo, plan, call, bound, router)) {
        out.rings = std::move(*rings);
    } else {
        return std::nullopt;
    }
    return out;
}

std::unique_ptr<Sched> buildSched(const collective::ScheduleSpec& spec, const NcclLayout* layout, std::uint32_t index)
{
    auto s = std::make_unique<Sched>();
    s->index = index;
    s->ranks = static_cast<std::uint32_t>(spec.ranks);
    std::vector<collective::Transfer> step;
    s->stepBegin.push_back(0);
    if (layout && layout->kind != NcclLayout::Kind::Rings) {
        if (layout->kind == NcclLayout::Kind::Nvls || layout->kind == NcclLayout::Kind::NvlsTree)
            s->switchRank = s->ranks++;
        const auto steps = layout->kind == NcclLayout::Kind::Nvls     ? nvlsSteps(spec)
                           : layout->kind == NcclLayout::Kind::NvlsTree ? nvlsTreeSteps(spec, layout->nvlsTree)
                                                                        : treeSteps(spec, layout->trees);
        for (const auto& one : steps) {
            s->transfers.insert(s->transfers.end(), one.begin(), one.end());
            s->stepBegin.push_back(static_cast<std::uint32_t>(s->transfers.size()));
        }
    } else if (!layout) {
        collective::Schedule gen(spec);
        while (gen.next(step)) {
            s->transfers.insert(s->transfers.end(), step.begin(), step.end());
            s->stepBegin.push_back(static_cast<std::uint32_t>(s->transfers.size()));
        }
    } else {
        ChannelSchedule gen(spec, layout->rings); // ncclchannels.h
        while (gen.next(step)) {
            s->transfers.insert(s->transfers.end(), step.begin(), step.end());
            s->stepBegin.push_back(static_cast<std::uint32_t>(s->transfers.size()));
        }
    }
    s->steps = static_cast<std::uint32_t>(s->stepBegin.size() - 1);
    const std::size_t N = s->ranks;
    std::vector<std::uint32_t> count(std::size_t(s->steps) * N + 1, 0);
    for (std::uint32_t k = 0; k < s->steps; ++k)
        for (std::uint32_t t = s->stepBegin[k]; t < s->stepBegin[k + 1]; ++t) {
            ++count[k * N + s->transfers[t].src];
            ++count[k * N + s->transfers[t].dst];
        }
    s->rankBegin.assign(count.size(), 0);
    for (std::size_t i = 1; i < count.size(); ++i)
        s->rankBegin[i] = s->rankBegin[i - 1] + count[i - 1];
    s->rankList.resize(s->rankBegin.back());
    std::vector<std::uint32_t> fill(s->rankBegin.begin(), s->rankBegin.end() - 1);
    for (std::uint32_t k = 0; k < s->steps; ++k)
        for (std::uint32_t t = s->stepBegin[k]; t < s->stepBegin[k + 1]; ++t) {
            s->rankList[fill[k * N + s->transfers[t].src]++] = t;
            s->rankList[fill[k * N + s->transfers[t].dst]++] = t;
        }
    return s;
}

} // namespace tw::network::sim
