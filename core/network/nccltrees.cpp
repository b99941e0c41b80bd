#include "nccltrees.h"
#include "ncclchannels.h"

#include "collective/ncclgraph.h"

#include <algorithm>
#include <utility>

namespace tw::network {

std::optional<TreeChannels> treeChannels(const Topology& topo, const parallel::CommPlan& plan, std::uint32_t call,
                                         const collective::BoundCall& b, Router& router)
{
    const auto span = allReduceSpan(topo, plan, call, b, nccl::Algorithm::Tree, b.treeChannels); // ncclchannels.h
    if (!span)
        return std::nullopt;
    const parallel::CollectiveCall& c = *span->call;
    const std::uint32_t g = span->g, n = span->n;
    // The double binary tree of the nodes (the same for every channel).
    std::vector<nccl::TreeLinks> nodeTree;
    for (std::uint32_t k = 0; k < n; ++k)
        nodeTree.push_back(nccl::doubleBinaryTree(static_cast<int>(n), static_cast<int>(k)));
    TreeChannels trees;
    std::vector<nccl::Channel> seen;
    for (const nccl::Channel& ch : b.treeChannels) {
        if (ch.gpus.size() != g || ch.nicIn < 0 || ch.nicOut < 0 || ch.nicIn >= int(g) || ch.nicOut >= int(g))
            return std::nullopt;
        auto at = std::find(seen.begin(), seen.end(), ch);
        if (at != seen.end()) {
            ++trees.weight[static_cast<std::size_t>(at - seen.begin())];
            ++trees.channels;
            continue;
        }
        for (int t = 0; t < 2; ++t) {
            std::vector<std::uint32_t> parent(std::size_t{g} * n, kNoParent);
            for (std::uint32_t k = 0; k < n; ++k) {
                for (std::size_t j = 1; j < ch.gpus.size(); ++j) // the chain toward the head
                    parent[k * g + static_cast<std::uint32_t>(ch.gpus[j])] = k * g + static_cast<std::uint32_t>(ch.gpus[j - 1]);
                const int up = t == 0 ? nodeTree[k].up0 : nodeTree[k].up1;
                if (up >= 0)
                    parent[k * g + static_cast<std::uint32_t>(ch.gpus.front())]
                        = static_cast<std::uint32_t>(up) * g + static_cast<std::uint32_t>(ch.gpus.front());
            }
            trees.parent.push_back(std::move(parent));
        }
        trees.weight.push_back(1);
        ++trees.channels;
        seen.push_back(ch);
    }
    // The rails: a head's edge to its parent node's head leaves by the channel's NIC on one node and
    // enters by it on the other, in both directions (reduce up, broadcast down).
    for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
        const auto& m = plan.groups[gr].members;
        for (std::size_t i = 0; i < seen.size(); ++i) {
            const nccl::Channel& ch = seen[i];
            const auto head = static_cast<std::uint32_t>(ch.gpus.front());
            const auto nicIn = static_cast<std::uint32_t>(ch.nicIn), nicOut = static_cast<std::uint32_t>(ch.nicOut);
            for (int t = 0; t < 2; ++t)
                for (std::uint32_t k = 0; k < n; ++k) {
                    const std::uint32_t up = trees.parent[2 * i + static_cast<std::size_t>(t)][k * g + head];
                    if (up == kNoParent)
                        continue;
                    const std::uint32_t p = up / g;
                    if (!router.preferNics(m[k * g + head], m[p * g + head], m[k * g + nicOut], m[p * g + nicIn])
                        || !router.preferNics(m[p * g + head], m[k * g + head], m[p * g + nicOut], m[k * g + nicIn]))
                        return std::nullopt;
                }
        }
    }
    return trees;
}

std::vector<std::vector<collective::Transfer>> treeSteps(const collective::ScheduleSpec& spec, const TreeChannels& trees)
{
    const std::uint32_t C = kTreeChunks;
    std::vector<std::vector<collective::Transfer>> steps;
    std::uint32_t chunkBase = 0;
    for (std::size_t i = 0; i < trees.parent.size(); ++i) {
        const std::vector<std::uint32_t>& parent = trees.parent[i];
        const double share = spec.bytes * trees.weight[i / 2] / (2.0 * trees.channels); // this tree's bytes
        // Depth of every rank (the root 0).
        const std::size_t R = parent.size();
        std::vector<std::uint32_t> depth(R, 0);
        std::uint32_t D = 0;
        for (std::size_t r = 0; r < R; ++r) {
            std::uint32_t d = 0;
            for (std::uint32_t v = static_cast<std::uint32_t>(r); parent[v] != kNoParent && d <= R; v = parent[v])
                ++d;
            depth[r] = d;
            D = std::max(D, d);
        }
        const std::size_t total = D == 0 ? 0 : std::size_t{C} + 2 * std::size_t{D} - 1;
        if (steps.size() < total)
            steps.resize(total);
        for (std::uint32_t c = 0; c < C; ++c) {
            const double bytes = c + 1 < C ? share / C : share - share / C * (C - 1);
            for (std::size_t r = 0; r < R; ++r) {
                if (parent[r] == kNoParent)
                    continue;
                const auto v = static_cast<std::uint32_t>(r);
                const std::uint32_t d = depth[r];
                steps[c + D - d].push_back({v, parent[r], chunkBase + c, bytes, true});      // reduce toward the root
                steps[c + D + d - 1].push_back({parent[r], v, chunkBase + c, bytes, false}); // broadcast back
            }
        }
        chunkBase += C;
    }
    return steps;
}

} // namespace tw::network
