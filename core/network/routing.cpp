#include "routing.h"

#include "base/units.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace tw::network {

namespace {

constexpr std::uint64_t kInf = std::numeric_limits<std::uint64_t>::max();

struct Key {
    std::uint32_t src, dst;
    std::uint64_t flow;
    bool operator==(const Key&) const = default;
};

// The routes asked for so far: an open-addressing table (linear probing, at most half full) from the key
// to the path's index, the paths in a deque (their addresses never change). A route is looked up far more
// often than it is made (every flow of a step asks for its pair's), and a node-based map spent most of
// that time in cache misses.
class PathCache {
public:
    [[nodiscard]] const std::vector<LinkId>* find(const Key& k) const
    {
        if (m_slots.empty())
            return nullptr;
        for (std::size_t i = slotOf(k);; i = (i + 1) & (m_slots.size() - 1)) {
            const Slot& s = m_slots[i];
            if (s.index == kEmpty)
                return nullptr;
            if (s.key == k)
                return &m_paths[s.index];
        }
    }
    // Adds k's path (k not in the table yet).
    const std::vector<LinkId>* insert(const Key& k, std::vector<LinkId> path)
    {
        if (2 * (m_paths.size() + 1) > m_slots.size())
            grow();
        const auto index = static_cast<std::uint32_t>(m_paths.size());
        m_paths.push_back(std::move(path));
        m_keys.push_back(k);
        place(k, index);
        return &m_paths.back();
    }
    [[nodiscard]] std::size_t size() const { return m_paths.size(); }
    [[nodiscard]] const std::vector<Key>& keys() const { return m_keys; } // in the order they were added

private:
    static constexpr std::uint32_t kEmpty = 0xffffffffu;
    struct Slot {
        Key key{0, 0, 0};
        std::uint32_t index = kEmpty;
    };
    std::vector<Slot> m_slots; // a power of two
    std::deque<std::vector<LinkId>> m_paths;
    std::vector<Key> m_keys;

    [[nodiscard]] std::size_t slotOf(const Key& k) const
    {
        const std::uint64_t h = ecmpMix(((std::uint64_t{k.src} << 32) | k.dst) ^ ecmpMix(k.flow));
        return static_cast<std::size_t>(h) & (m_slots.size() - 1);
    }
    void place(const Key& k, std::uint32_t index)
    {
        std::size_t i = slotOf(k);
        while (m_slots[i].index != kEmpty)
            i = (i + 1) & (m_slots.size() - 1);
        m_slots[i] = {k, index};
    }
    void grow()
    {
        m_slots.assign(std::max<std::size_t>(64, 2 * m_slots.size()), Slot{});
        for (std::uint32_t i = 0; i < m_keys.size(); ++i)
            place(m_keys[i], i);
    }
};

Error routeError(std::string message)
{
    Location where;
    where.jsonPath = "topology";
    return makeError(std::move(message), std::move(where));
}

} // namespace

namespace {
// FNV-1a 64 over the little-endian bytes of the values, each of its width.
struct Fnv1a {
    std::uint64_t h = 0xcbf29ce484222325ull;
    Fnv1a& eat(std::uint64_t v, int bytes)
    {
        for (int i = 0; i < bytes; ++i) {
            h ^= (v >> (8 * i)) & 0xffu;
            h *= 0x100000001b3ull;
        }
        return *this;
    }
};
} // namespace

std::uint64_t ecmpHash(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flowId, NodeId node)
{
    return Fnv1a{}.eat(srcGpu, 4).eat(dstGpu, 4).eat(flowId, 8).eat(node, 4).h;
}

std::uint64_t ecmpMix(std::uint64_t z)
{
    z ^= z >> 30;
    z *= 0xbf58476d1ce4e5b9ull;
    z ^= z >> 27;
    z *= 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

std::uint64_t placeEcmpHash(std::uint32_t srcPlace, std::uint32_t dstPlace, std::uint32_t railOffset, std::uint32_t tier,
                            std::uint32_t relation)
{
    return Fnv1a{}.eat(srcPlace, 4).eat(dstPlace, 4).eat(railOffset, 4).eat(tier, 4).eat(relation, 4).h;
}

std::uint64_t placeEcmpHash(std::uint32_t srcPlace, std::uint32_t dstPlace, std::uint32_t railOffset, std::uint32_t tier,
                            std::uint32_t relation, std::uint64_t flowId)
{
    return Fnv1a{placeEcmpHash(srcPlace, dstPlace, railOffset, tier, relation)}.eat(flowId, 8).h;
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
    // The topology's hot fields in arrays of their own (a Link is a cache line, a Node holds its name):
    // per link its ends, per node its server and its ECMP tier (routing.h: 0 leaf, 1 spine, 2 core,
    // 3 + kind elsewhere).
    std::vector<NodeId> linkFrom, linkTo;
    std::vector<std::int64_t> nodeServer;
    std::vector<std::uint32_t> nodeTier;
    // Distances to one target, settled lazily: Dijkstra (reverse, from the target) runs only until the
    // nodes a walk needs are final and resumes when a later walk needs more. A walk from `from` uses only
    // nodes v with dist[v] ≤ dist[from]; once every node at distance ≤ R is settled (the queue's top is
    // beyond R) those values are exact, and a node still tentative (or unreached) has a true distance > R,
    // so it can never satisfy dist[v] + cost = dist[u] for a u at distance ≤ R. Two GPUs of one server
    // thus explore their server, not the whole fabric (a 1,024-GPU simulation spent a fifth of its time in
    // full Dijkstra runs for NVLink pairs).
    // A search's distances cover a window of node ids: the whole graph, or for a search inside one server
    // (Scope::Server) only that server's nodes when they are consecutive ids (as every builder adds them):
    // a fabric has a server-scope search per GPU, and whole-graph arrays for them grew as GPUs² (330 MB
    // at 2,048 GPUs). Outside the window every distance is infinite (the search never leaves it).
    // A whole-graph search (Scope::All: two GPUs of one server, staging) keeps its distances in a hash
    // map while it has reached few nodes (it usually stays in one server), an array once it has reached
    // an eighth of the graph.
    struct Search {
        std::vector<std::uint64_t> dist; // node base + i (dense), or compact[node] (Scope::Network)
        NodeId base = 0;
        bool sparse = false;
        const std::vector<std::uint32_t>* compact = nullptr; // Scope::Network: the switches' own numbering
        std::unordered_map<NodeId, std::uint64_t> reached; // sparse
        std::vector<std::pair<std::uint64_t, NodeId>> heap; // min-heap (std::greater) of (distance, node)
        std::int64_t server = -1;
        [[nodiscard]] std::uint64_t at(NodeId v) const
        {
            if (compact) {
                const std::uint32_t i = (*compact)[v];
                return i < dist.size() ? dist[i] : kInf;
            }
            if (!sparse)
                return v - base < dist.size() ? dist[v - base] : kInf;
            const auto hit = reached.find(v);
            return hit == reached.end() ? kInf : hit->second;
        }
        void set(NodeId v, std::uint64_t d)
        {
            if (compact)
                dist[(*compact)[v]] = d;
            else if (!sparse)
                dist[v - base] = d;
            else
                reached[v] = d;
        }
        void densify(std::size_t nodes)
        {
            if (!sparse || reached.size() * 8 < nodes)
                return;
            dist.assign(nodes, kInf);
            for (const auto& [v, d] : reached)
                dist[v] = d;
            std::unordered_map<NodeId, std::uint64_t>().swap(reached);
            sparse = false;
        }
    };
    std::unordered_map<std::uint64_t, Search> distTo; // target | scope << 32
    PathCache paths;
    std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> nicHint; // src << 32 | dst → NIC GPUs
    std::unordered_map<std::uint64_t, char> routedPairs; // pairs routed so far (only tracked once a hint exists)
    std::unordered_map<std::int64_t, std::pair<NodeId, NodeId>> serverSpan; // server → [first, last] node id, if consecutive

    // Runs the search for (target, scope) until `from` is final and every node up to its distance is
    // settled (or the search is exhausted); returns it.
    const Search& distances(NodeId target, Scope scope, NodeId from)
    {
        const std::uint64_t key = std::uint64_t{target} | (std::uint64_t(scope) << 32);
        auto [it, fresh] = distTo.try_emplace(key);
        Search& s = it->second;
        if (fresh) {
            s.server = nodeServer[target];
            NodeId first = 0, last = static_cast<NodeId>(topo->nodes().size() - 1);
            if (scope == Scope::Server)
                if (auto span = serverSpan.find(s.server); span != serverSpan.end())
                    std::tie(first, last) = span->second;
            s.base = first;
            s.sparse = scope == Scope::All;
            if (scope == Scope::Network && netSwitches > 0 && compact[target] != kNone32) {
                s.compact = &compact;
                s.dist.assign(netSwitches, kInf);
            } else if (!s.sparse) {
                s.dist.assign(std::size_t(last - first) + 1, kInf);
            }
            s.set(target, 0);
            s.heap.push_back({0, target});
        }
        auto& heap = s.heap;
        const std::greater<> later;
        while (!heap.empty()) {
            const auto [d, u] = heap.front();
            if (d > s.at(from))
                break; // every node up to dist[from] is settled (dist[from] final: its entry was popped)
            std::pop_heap(heap.begin(), heap.end(), later);
            heap.pop_back();
            if (d > s.at(u) || (u != target && !transit[u]))
                continue; // stale, or a GPU / host memory: a path may start there but not pass through
            if (s.compact) { // the same relaxations as below, on the switches' own arrays
                const std::uint32_t cu = compact[u];
                for (std::uint32_t i = netInBegin[cu]; i < netInBegin[cu + 1]; ++i) {
                    const Hop& h = netIn[i];
                    const std::uint64_t nd = d + cost[h.link];
                    if (nd < s.dist[h.sw]) {
                        s.dist[h.sw] = nd;
                        heap.push_back({nd, h.node});
                        std::push_heap(heap.begin(), heap.end(), later);
                    }
                }
                continue;
            }
            for (LinkId l : topo->inLinks(u)) {
                if (scope == Scope::Network && !network[l])
                    continue;
                const NodeId v = linkFrom[l];
                if (scope == Scope::Server && nodeServer[v] != s.server)
                    continue;
                if (s.compact && compact[v] == kNone32)
                    continue; // a network stub (a NIC): never inside a shortest path, walk() steps out of it
                const std::uint64_t nd = d + cost[l];
                if (nd < s.at(v)) {
                    s.set(v, nd);
                    heap.push_back({nd, v});
                    std::push_heap(heap.begin(), heap.end(), later);
                }
            }
        }
        if (heap.empty())
            std::vector<std::pair<std::uint64_t, NodeId>>().swap(heap);
        s.densify(topo->nodes().size());
        return s;
    }

    // Scope::Network searches number only the switches (nodes with a network link that are not network
    // stubs); a network stub — a NIC: one network link out, to the node all its network links come from —
    // is never inside a shortest path (from it the only way on is back), so it is left out of the searches
    // and a walk from it takes its one link first. With one NIC per GPU a whole-graph array per leaf grew
    // as GPUs × leaves (7 GB at 98,304 GPUs); the switches alone are a few thousand.
    static constexpr std::uint32_t kNone32 = 0xffffffffu;
    std::vector<std::uint32_t> compact; // per node: its index among the switches, kNone32 otherwise
    std::vector<LinkId> stubOut;        // per node: a network stub's one network link out (kNone32 otherwise)
    std::uint32_t netSwitches = 0;
    // The network links between switches, per switch (by its index among them) in ascending link id:
    // what a Scope::Network search and walk visit, in arrays of their own (a spine's links to its
    // leaves' NICs and the Link records stay out of the loops).
    struct Hop {
        std::uint32_t sw = 0; // the other end's index among the switches
        NodeId node = 0;      // the other end
        LinkId link = 0;
    };
    std::vector<std::uint32_t> netOutBegin, netInBegin;
    std::vector<Hop> netOut, netIn;

    void buildNetworkIndex()
    {
        const Topology& t = *topo;
        compact.assign(t.nodes().size(), kNone32);
        stubOut.assign(t.nodes().size(), kNone32);
        for (NodeId v = 0; v < t.nodes().size(); ++v) {
            LinkId one = kNone32;
            std::uint32_t outs = 0;
            for (LinkId l : t.outLinks(v))
                if (network[l]) {
                    one = l;
                    ++outs;
                }
            if (outs == 0)
                continue;
            bool stub = outs == 1 && t.node(v).kind == NodeKind::Nic;
            for (LinkId l : t.inLinks(v))
                if (network[l] && t.link(l).from != t.link(one).to)
                    stub = false;
            if (stub)
                stubOut[v] = one;
            else
                compact[v] = netSwitches++;
        }
        netOutBegin.assign(std::size_t(netSwitches) + 1, 0);
        netInBegin.assign(std::size_t(netSwitches) + 1, 0);
        for (NodeId v = 0; v < t.nodes().size(); ++v) {
            if (compact[v] == kNone32)
                continue;
            for (LinkId l : t.outLinks(v))
                if (network[l] && compact[linkTo[l]] != kNone32)
                    netOut.push_back({compact[linkTo[l]], linkTo[l], l});
            netOutBegin[compact[v] + 1] = static_cast<std::uint32_t>(netOut.size());
            for (LinkId l : t.inLinks(v))
                if (network[l] && compact[linkFrom[l]] != kNone32)
                    netIn.push_back({compact[linkFrom[l]], linkFrom[l], l});
            netInBegin[compact[v] + 1] = static_cast<std::uint32_t>(netIn.size());
        }
    }

    // Each server's node ids, when they are consecutive (a server-scope search then needs only them).
    void buildServerSpans()
    {
        std::unordered_map<std::int64_t, std::uint32_t> count;
        for (NodeId n = 0; n < topo->nodes().size(); ++n) {
            const std::int64_t server = topo->node(n).server;
            if (server < 0)
                continue;
            auto [it, fresh] = serverSpan.try_emplace(server, n, n);
            it->second.first = std::min(it->second.first, n);
            it->second.second = std::max(it->second.second, n);
            ++count[server];
        }
        for (auto it = serverSpan.begin(); it != serverSpan.end();)
            it = it->second.second - it->second.first + 1 == count[it->first] ? std::next(it) : serverSpan.erase(it);
    }

    // Whether link l is usable by a search to a target of `server` in `scope` (as distances() filters).
    bool inScope(LinkId l, NodeId other, Scope scope, std::int64_t server) const
    {
        return (scope != Scope::Network || network[l]) && (scope != Scope::Server || nodeServer[other] == server);
    }

    // A stub target: exactly one usable link enters it (from `parent`), and every usable link leaving it
    // goes back to `parent` (a NIC seen from the network, a GPU behind one PCIe link). Every shortest
    // path to it is a shortest path to the parent plus that link: no path to the parent passes through
    // the stub (it could only be entered from the parent), and at the parent the link is the only way
    // on. So its distances are the parent's plus one link, and a walk to it makes the same ECMP choices
    // (the same equal-cost next hops at every node) as a walk to the parent followed by the link. Sharing
    // the parent's search turns 1,024 network searches of a rail-optimized fabric into one per leaf.
    struct Stub {
        NodeId parent = 0;
        LinkId link = 0;
    };
    std::optional<Stub> stubOf(NodeId target, Scope scope) const
    {
        const std::int64_t server = nodeServer[target];
        std::optional<Stub> stub;
        for (LinkId l : topo->inLinks(target)) {
            const NodeId v = linkFrom[l];
            if (!inScope(l, v, scope, server))
                continue;
            if (stub)
                return std::nullopt; // two ways in
            stub = Stub{v, l};
        }
        if (!stub || stub->parent == target)
            return std::nullopt;
        for (LinkId l : topo->outLinks(target)) {
            const NodeId v = linkTo[l];
            if (inScope(l, v, scope, server) && v != stub->parent)
                return std::nullopt; // a way out elsewhere: it could be a transit node
        }
        return stub;
    }

    // Switched fabrics (leaf–spine, three-tier): per GPU its server's place in its group (the servers
    // whose NICs share leaves), its group (the lowest leaf its server's NICs reach), its pod and its
    // index in its server; empty elsewhere (the global hash).
    struct Place {
        std::uint32_t place = 0, group = 0, pod = Topology::kNoPod, local = 0;
    };
    std::vector<Place> places;
    std::uint32_t perServer = 1; // R: GPUs per server

    void buildPlaces()
    {
        const Topology& t = *topo;
        if (!isSwitchedFabric(t.spec.kind))
            return;
        std::unordered_map<std::int64_t, NodeId> leafOf; // server → lowest leaf one of its NICs reaches
        for (NodeId n = 0; n < t.nodes().size(); ++n) {
            if (t.node(n).kind != NodeKind::Nic)
                continue;
            for (LinkId l : t.outLinks(n)) {
                const NodeId v = t.link(l).to;
                if (t.node(v).kind != NodeKind::LeafSwitch)
                    continue;
                auto [it, fresh] = leafOf.try_emplace(t.node(n).server, v);
                if (!fresh)
                    it->second = std::min(it->second, v);
            }
        }
        std::unordered_map<NodeId, std::vector<std::int64_t>> serversOf; // group → its servers, ascending
        std::unordered_map<std::int64_t, std::uint32_t> localCount;
        places.assign(t.gpuCount(), Place{});
        for (std::uint32_t g = 0; g < t.gpuCount(); ++g) {
            const NodeId n = t.gpuNode(g);
            if (n == kNoNode)
                continue;
            const std::int64_t server = t.node(n).server;
            Place& p = places[g];
            p.local = localCount[server]++;
            perServer = std::max(perServer, p.local + 1);
            p.pod = t.podPlace(n).pod;
            const auto leaf = leafOf.find(server);
            p.group = leaf == leafOf.end() ? kNoNode : leaf->second;
            auto& servers = serversOf[p.group];
            if (servers.empty() || servers.back() != server)
                servers.push_back(server); // GPUs come server by server, servers in ascending order
        }
        for (std::uint32_t g = 0; g < t.gpuCount(); ++g) {
            if (t.gpuNode(g) == kNoNode)
                continue;
            const auto& servers = serversOf[places[g].group];
            const std::int64_t server = t.node(t.gpuNode(g)).server;
            places[g].place = static_cast<std::uint32_t>(std::lower_bound(servers.begin(), servers.end(), server)
                                                         - servers.begin());
        }
    }

    // The next hop's index among k equal ones at node u (routing.h "ECMP"): the global hash, or on a
    // switched fabric the high half of the hash of places plus the rail rotation c·l_s (c = k / gcd(k, R)).
    std::size_t choice(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flow, NodeId u, std::size_t k) const
    {
        if (places.empty())
            return static_cast<std::size_t>(ecmpHash(srcGpu, dstGpu, flow, u) % k);
        const Place& s = places[srcGpu];
        const Place& d = places[dstGpu];
        const std::uint32_t tier = nodeTier[u];
        const std::uint32_t relation = (s.group == d.group ? 1u : 0u) | (s.pod == d.pod ? 2u : 0u);
        const std::uint32_t railOffset = (d.local + perServer - s.local) % perServer;
        const std::uint64_t h = topo->hasPods() ? placeEcmpHash(s.place, d.place, railOffset, tier, relation)
                                                : placeEcmpHash(s.place, d.place, railOffset, tier, relation, flow);
        const std::uint64_t c = k / std::gcd<std::uint64_t, std::uint64_t>(k, perServer);
        return static_cast<std::size_t>(((ecmpMix(h) >> 32) + c * s.local) % k);
    }

    // Appends a shortest path from `from` to `target` to `out`, choosing among equal next hops by ECMP.
    bool walk(NodeId from, NodeId target, std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flow,
              std::vector<LinkId>& out, Scope scope = Scope::All)
    {
        if (from == target)
            return true;
        // (The parent is a node the path passes through, so it must be a transit node, or the start.)
        if (const std::optional<Stub> stub = stubOf(target, scope); stub && (transit[stub->parent] || stub->parent == from)) {
            if (!walk(from, stub->parent, srcGpu, dstGpu, flow, out, scope))
                return false;
            out.push_back(stub->link);
            return true;
        }
        if (scope == Scope::Network && compact[target] != kNone32 && stubOut[from] != kNone32) {
            out.push_back(stubOut[from]); // out of a network stub: its one link (see buildNetworkIndex)
            return walk(linkTo[stubOut[from]], target, srcGpu, dstGpu, flow, out, scope);
        }
        const Search& dist = distances(target, scope, from);
        if (dist.at(from) == kInf)
            return false;
        NodeId u = from;
        LinkId choices[64];
        std::vector<LinkId> many;
        while (u != target) {
            std::size_t k = 0;
            many.clear();
            if (dist.compact) { // the loop below on the switches' own arrays (the same links, in the same order)
                const std::uint64_t du = dist.dist[compact[u]];
                for (std::uint32_t i = netOutBegin[compact[u]]; i < netOutBegin[compact[u] + 1]; ++i) {
                    const Hop& h = netOut[i];
                    const std::uint64_t dv = dist.dist[h.sw];
                    if ((h.node != target && !transit[h.node]) || dv == kInf || dv + cost[h.link] != du)
                        continue;
                    if (k < 64)
                        choices[k] = h.link;
                    else
                        many.push_back(h.link);
                    ++k;
                }
            } else {
                for (LinkId l : topo->outLinks(u)) {
                    const NodeId v = linkTo[l];
                    if ((scope == Scope::Network && !network[l]) || (v != target && !transit[v]) || dist.at(v) == kInf
                        || dist.at(v) + cost[l] != dist.at(u))
                        continue;
                    if (k < 64)
                        choices[k] = l;
                    else
                        many.push_back(l);
                    ++k;
                }
            }
            if (k == 0)
                return false; // cannot happen when dist[u] is finite
            const std::size_t pick = k == 1 ? 0 : choice(srcGpu, dstGpu, flow, u, k);
            const LinkId l = pick < 64 ? choices[pick] : many[pick - 64];
            out.push_back(l);
            u = linkTo[l];
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
    m->linkFrom.reserve(topology.links().size());
    m->linkTo.reserve(topology.links().size());
    for (const Link& l : topology.links()) {
        m->linkFrom.push_back(l.from);
        m->linkTo.push_back(l.to);
    }
    m->nodeServer.reserve(topology.nodes().size());
    m->nodeTier.reserve(topology.nodes().size());
    for (NodeId n = 0; n < topology.nodes().size(); ++n) {
        const Node& node = topology.node(n);
        const bool core = topology.hasPods() && topology.podPlace(n).pod == Topology::kNoPod
                          && node.kind == NodeKind::SpineSwitch;
        m->nodeServer.push_back(node.server);
        m->nodeTier.push_back(node.kind == NodeKind::LeafSwitch    ? 0u
                              : core                               ? 2u
                              : node.kind == NodeKind::SpineSwitch ? 1u
                                                                   : 3u + static_cast<std::uint32_t>(node.kind));
    }
    m->buildPlaces();
    m->buildServerSpans();
    m->buildNetworkIndex();
}

Router::~Router() = default;
Router::Router(Router&&) noexcept = default;
Router& Router::operator=(Router&&) noexcept = default;

std::size_t Router::cachedPaths() const { return m->paths.size(); }

bool Router::preferNics(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint32_t srcNicGpu, std::uint32_t dstNicGpu)
{
    const Topology& t = *m->topo;
    const std::uint64_t n = t.gpuCount();
    for (std::uint32_t g : {srcGpu, dstGpu, srcNicGpu, dstNicGpu})
        if (g >= n || t.gpuNode(g) == kNoNode || t.gpuNic(g) == kNoNode)
            return false;
    auto server = [&](std::uint32_t g) { return t.node(t.gpuNode(g)).server; };
    if (server(srcGpu) == server(dstGpu) || server(srcNicGpu) != server(srcGpu) || server(dstNicGpu) != server(dstGpu))
        return false;
    const std::uint64_t pair = (std::uint64_t{srcGpu} << 32) | dstGpu;
    const std::pair<std::uint32_t, std::uint32_t> want{srcNicGpu, dstNicGpu};
    if (auto h = m->nicHint.find(pair); h != m->nicHint.end())
        return h->second == want;
    if (m->routedPairs.count(pair))
        return false;
    if (m->nicHint.empty())
        for (const Key& key : m->paths.keys()) // pairs routed before the first hint
            m->routedPairs.emplace((std::uint64_t{key.src} << 32) | key.dst, 1);
    if (m->routedPairs.count(pair))
        return false;
    m->nicHint.emplace(pair, want);
    return true;
}

Result<const std::vector<LinkId>*> Router::route(std::uint32_t srcGpu, std::uint32_t dstGpu, std::uint64_t flowId)
{
    const Key key{srcGpu, dstGpu, flowId};
    if (const std::vector<LinkId>* hit = m->paths.find(key))
        return hit;
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
        // kNoNode when not staged (a plain NodeId: GCC's -O2 flow analysis mistook an optional's value here
        // for uninitialized).
        const NodeId hs = staged ? t.hostMemory(ss).value_or(kNoNode) : kNoNode;
        const NodeId hd = staged ? t.hostMemory(ds).value_or(kNoNode) : kNoNode;
        bool ok = true;
        NodeId ns = t.gpuNic(srcGpu), nd = t.gpuNic(dstGpu);
        const std::uint64_t pair = (std::uint64_t{srcGpu} << 32) | dstGpu;
        if (!m->nicHint.empty()) {
            m->routedPairs.emplace(pair, 1);
            if (auto h = m->nicHint.find(pair); h != m->nicHint.end()) {
                ns = t.gpuNic(h->second.first);
                nd = t.gpuNic(h->second.second);
            }
        }
        if (hs != kNoNode && hd != kNoNode) {
            ok = m->walk(s, hs, srcGpu, dstGpu, flowId, path);
            if (ok && hs != hd)
                ok = m->walk(hs, hd, srcGpu, dstGpu, flowId, path);
            ok = ok && m->walk(hd, d, srcGpu, dstGpu, flowId, path);
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
    return m->paths.insert(key, std::move(path));
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
