#include "routing.h"

#include "base/units.h"

#include <cmath>
#include <limits>
#include <queue>
#include <unordered_map>

namespace tw::network {

namespace {

constexpr std::uint64_t kInf = std::numeric_limits<std::uint64_t>::max();

struct Key {
    std::uint32_t src, dst;
    std::uint64_t flow;
    bool operator==(const Key&) const = default;
};
struct KeyHash {
    std::size_t operator()(const Key& k) const
    {
        return static_cast<std::size_t>(ecmpHash(k.src, k.dst, k.flow, 0));
    }
};

Error routeError(std::string message)
{
    Location where;
    where.jsonPath = "topology";
    return makeError(std::move(message), std::move(where));
}

} // namespace

std::uint64_t ecmpHash(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flowId, NodeId node)
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    auto eat = [&h](std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) {
            h ^= (v >> (8 * i)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    };
    eat(srcGpu, 4);
    eat(dstGpu, 4);
    eat(flowId, 8);
    eat(node, 4);
    return h;
}

namespace {
// Which links a leg of a route may use.
enum class Scope : std::uint32_t { All, Network, Server };
} // namespace

struct Router::Impl {
    const Topology* topo = nullptr;
    std::vector<std::uint64_t> cost; // per link, ns (≥ 1)
    std::vector<char> transit;       // per node
    std::vector<char> network;       // per link: a network protocol (NIC, leaf, spine)
    std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> distTo; // target | scope << 32
    std::unordered_map<Key, std::vector<LinkId>, KeyHash> paths;

    // Distances to `target` over all links, over network links only (NIC ↔ leaf ↔ spine), or inside the
    // target's server only (a GPU's leg to or from its own NIC: the search stays in one server instead
    // of exploring the whole fabric, which was a third of a 1,024-GPU simulation).
    const std::vector<std::uint64_t>& distances(NodeId target, Scope scope)
    {
        const std::uint64_t key = std::uint64_t{target} | (std::uint64_t(scope) << 32);
        const std::int64_t server = topo->node(target).server;
        auto hit = distTo.find(key);
        if (hit != distTo.end())
            return hit->second;
        std::vector<std::uint64_t> dist(topo->nodes().size(), kInf);
        using Item = std::pair<std::uint64_t, NodeId>;
        std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
        dist[target] = 0;
        queue.push({0, target});
        while (!queue.empty()) {
            const auto [d, u] = queue.top();
            queue.pop();
            if (d > dist[u] || (u != target && !transit[u]))
                continue; // stale, or a GPU / host memory: a path may start there but not pass through
            for (LinkId l : topo->inLinks(u)) {
                if (scope == Scope::Network && !network[l])
                    continue;
                const NodeId v = topo->link(l).from;
                if (scope == Scope::Server && topo->node(v).server != server)
                    continue;
                const std::uint64_t nd = d + cost[l];
                if (nd < dist[v]) {
                    dist[v] = nd;
                    queue.push({nd, v});
                }
            }
        }
        return distTo.emplace(key, std::move(dist)).first->second;
    }

    // Appends a shortest path from `from` to `target` to `out`, choosing among equal next hops by ECMP.
    bool walk(NodeId from, NodeId target, std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flow,
              std::vector<LinkId>& out, Scope scope = Scope::All)
    {
        const std::vector<std::uint64_t>& dist = distances(target, scope);
        if (dist[from] == kInf)
            return false;
        NodeId u = from;
        LinkId choices[64];
        std::vector<LinkId> many;
        while (u != target) {
            std::size_t k = 0;
            many.clear();
            for (LinkId l : topo->outLinks(u)) {
                const NodeId v = topo->link(l).to;
                if ((scope == Scope::Network && !network[l]) || (v != target && !transit[v]) || dist[v] == kInf
                    || dist[v] + cost[l] != dist[u])
                    continue;
                if (k < 64)
                    choices[k] = l;
                else
                    many.push_back(l);
                ++k;
            }
            if (k == 0)
                return false; // cannot happen when dist[u] is finite
            const std::size_t pick = k == 1 ? 0 : static_cast<std::size_t>(ecmpHash(srcGpu, dstGpu, flow, u) % k);
            const LinkId l = pick < 64 ? choices[pick] : many[pick - 64];
            out.push_back(l);
            u = topo->link(l).to;
        }
        return true;
    }
};

Router::Router(const Topology& topology) : m(std::make_unique<Impl>())
{
    m->topo = &topology;
    m->cost.reserve(topology.links().size());
    for (const Link& l : topology.links())
        m->cost.push_back(std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(l.latency * 1e9))));
    m->transit.reserve(topology.nodes().size());
    for (const Node& n : topology.nodes())
        m->transit.push_back(n.kind != NodeKind::Gpu && n.kind != NodeKind::HostMemory);
    m->network.reserve(topology.links().size());
    for (const Link& l : topology.links())
        m->network.push_back(isNetwork(l.protocol));
}

Router::~Router() = default;
Router::Router(Router&&) noexcept = default;
Router& Router::operator=(Router&&) noexcept = default;

std::size_t Router::cachedPaths() const { return m->paths.size(); }

Result<const std::vector<LinkId>*> Router::route(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flowId)
{
    const Key key{srcGpu, dstGpu, flowId};
    if (auto hit = m->paths.find(key); hit != m->paths.end())
        return &hit->second;
    const Topology& t = *m->topo;
    const std::uint64_t n = t.gpuCount();
    for (std::uint32_t g : {srcGpu, dstGpu})
        if (g >= n || t.gpuNode(g) == kNoNode)
            return routeError("GPU " + formatInteger(g) + " is not in the topology (it has "
                              + formatInteger(static_cast<std::int64_t>(n)) + " GPU ids)");
    std::vector<LinkId> path;
    if (srcGpu != dstGpu) {
        const NodeId s = t.gpuNode(srcGpu), d = t.gpuNode(dstGpu);
        const std::int64_t ss = t.node(s).server, ds = t.node(d).server;
        const bool staged = t.stagesThroughHost && !(t.nvlinkPeers && ss == ds);
        const std::optional<NodeId> hs = staged ? t.hostMemory(ss) : std::nullopt;
        const std::optional<NodeId> hd = staged ? t.hostMemory(ds) : std::nullopt;
        bool ok = true;
        const NodeId ns = t.gpuNic(srcGpu), nd = t.gpuNic(dstGpu);
        if (hs && hd) {
            ok = m->walk(s, *hs, srcGpu, dstGpu, flowId, path);
            if (ok && *hs != *hd)
                ok = m->walk(*hs, *hd, srcGpu, dstGpu, flowId, path);
            ok = ok && m->walk(*hd, d, srcGpu, dstGpu, flowId, path);
        } else if (ss != ds && ns != kNoNode && nd != kNoNode) {
            // NIC affinity: out through the source GPU's own NIC, across the network only, in through
            // the destination GPU's own NIC.
            ok = m->walk(s, ns, srcGpu, dstGpu, flowId, path, Scope::Server);
            ok = ok && m->walk(ns, nd, srcGpu, dstGpu, flowId, path, Scope::Network);
            ok = ok && m->walk(nd, d, srcGpu, dstGpu, flowId, path, Scope::Server);
        } else {
            ok = m->walk(s, d, srcGpu, dstGpu, flowId, path);
        }
        if (!ok)
            return routeError("no path from GPU " + formatInteger(srcGpu) + " (" + t.node(s).name + ") to GPU "
                              + formatInteger(dstGpu) + " (" + t.node(d).name + "): the topology does not connect them");
    }
    return &m->paths.emplace(key, std::move(path)).first->second;
}

Result<std::vector<LinkId>> route(const Topology& topology, std::uint32_t srcGpu, std::uint32_t dstGpu,
                                  std::uint64_t flowId)
{
    Router r(topology);
    auto p = r.route(srcGpu, dstGpu, flowId);
    if (!p.ok())
        return p.error();
    return *p.value();
}

} // namespace tw::network
