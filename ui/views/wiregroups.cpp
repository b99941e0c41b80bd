#include "wiregroups.h"

#include "qtstrings.h"

#include "base/units.h"

#include <algorithm>
#include <map>

namespace tw::ui {

using network::LinkId;
using network::NodeId;
using network::NodeKind;

namespace {

WireGroups::Group makeGroup(WireGroups::Kind kind, int index)
{
    WireGroups::Group g;
    g.kind = kind;
    g.index = index;
    return g;
}

QString num(std::int64_t v)
{
    return qs(formatInteger(v));
}

// Ranges, counts, the network links inside and the labels, once every node has its group(s).
void describe(const network::Topology& t, WireGroups& out)
{
    auto count = [&](WireGroups::Group& grp, const network::Node& node) {
        if (node.server >= 0) {
            grp.serverLo = grp.serverLo < 0 ? node.server : std::min(grp.serverLo, node.server);
            grp.serverHi = std::max(grp.serverHi, node.server);
        }
        if (node.kind == NodeKind::Gpu) {
            ++grp.gpus;
            grp.gpuLo = grp.gpuLo < 0 ? node.gpu : std::min(grp.gpuLo, node.gpu);
            grp.gpuHi = std::max(grp.gpuHi, node.gpu);
        }
        if (node.kind == NodeKind::LeafSwitch || node.kind == NodeKind::SpineSwitch)
            ++grp.switches;
    };
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        for (const int g : {out.of(n), out.subOfNode(n)})
            if (g >= 0)
                count(out.groups[std::size_t(g)], t.node(n));
    }
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const network::Link& link = t.link(l);
        if (!network::isNetwork(link.protocol))
            continue;
        if (const int g = out.of(link.from); g >= 0 && g == out.of(link.to))
            out.groups[std::size_t(g)].internal.push_back(l);
        if (const int g = out.subOfNode(link.from); g >= 0 && g == out.subOfNode(link.to))
            out.groups[std::size_t(g)].internal.push_back(l);
    }
    for (WireGroups::Group& g : out.groups) {
        const QString k = QString::number(g.index);
        const QString gpus = g.gpuLo == g.gpuHi ? QStringLiteral("GPU %1").arg(num(g.gpuLo))
                                                : QStringLiteral("GPUs %1–%2").arg(num(g.gpuLo), num(g.gpuHi));
        switch (g.kind) {
        case WireGroups::Kind::Pod:
            g.titles = {QStringLiteral("pod %1 · %2").arg(k, gpus), QStringLiteral("pod %1").arg(k), QStringLiteral("p%1").arg(k), k};
            g.subtitle = QStringLiteral("%1 GPUs").arg(num(std::int64_t(g.gpus)));
            break;
        case WireGroups::Kind::Servers:
            g.titles = {QStringLiteral("servers %1–%2 · %3").arg(num(g.serverLo), num(g.serverHi), gpus),
                        QStringLiteral("servers %1–%2").arg(num(g.serverLo), num(g.serverHi)),
                        QStringLiteral("group %1").arg(k), QStringLiteral("g%1").arg(k), k};
            g.subtitle = QStringLiteral("%1 GPUs").arg(num(std::int64_t(g.gpus)));
            break;
        case WireGroups::Kind::CorePlane:
            g.titles = {QStringLiteral("core plane %1").arg(k), QStringLiteral("plane %1").arg(k), QStringLiteral("P%1").arg(k), k};
            g.subtitle = QStringLiteral("%1 cores").arg(num(std::int64_t(g.switches)));
            break;
        }
    }
}

// The pods of a three-tier fabric, and its core planes when the cores are too many to draw.
void podGroups(const network::Topology& t, WireGroups& out)
{
    const auto pods = t.podCount();
    for (std::uint32_t p = 0; p < pods; ++p)
        out.groups.push_back(makeGroup(WireGroups::Kind::Pod, int(p)));
    std::vector<NodeId> cores;
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        const auto place = t.podPlace(n);
        if (place.pod != network::Topology::kNoPod)
            out.groupOf[n] = int(place.pod);
        else if (t.node(n).server < 0 && t.node(n).kind == NodeKind::SpineSwitch)
            cores.push_back(n);
    }
    if (cores.size() <= WireGroups::kMaxDrawnCores || t.spec.spinesPerPod == 0)
        return;
    // Plane j: the cores spine j of every pod links to (consecutive core indices).
    const std::uint64_t perPlane = std::max<std::uint64_t>(1, t.spec.coreSwitches / t.spec.spinesPerPod);
    std::map<std::uint64_t, int> planeGroup;
    for (const NodeId c : cores) {
        const std::uint64_t plane = t.podPlace(c).index / perPlane;
        auto [it, added] = planeGroup.try_emplace(plane, int(out.groups.size()));
        if (added)
            out.groups.push_back(makeGroup(WireGroups::Kind::CorePlane, int(plane)));
        out.groupOf[c] = it->second;
    }
}

// Server groups among `leaves`: the leaves that serve the same servers, with those servers. The groups
// are appended (their `parent` given), each leaf's written into `slot` (groupOf or subOf) and each
// served server's into `serverGroup` (the caller gives the servers' nodes theirs).
void leafGroups(const network::Topology& t, const std::vector<NodeId>& leaves, int parent, std::vector<int>& slot,
                std::vector<int>& serverGroup, WireGroups& out)
{
    std::map<std::vector<std::int64_t>, std::vector<NodeId>> leavesOf; // served servers → leaves
    for (const NodeId n : leaves) {
        std::vector<std::int64_t> served;
        for (const LinkId l : t.outLinks(n))
            if (const auto s = t.node(t.link(l).to).server; s >= 0)
                served.push_back(s);
        std::sort(served.begin(), served.end());
        served.erase(std::unique(served.begin(), served.end()), served.end());
        if (!served.empty())
            leavesOf[served].push_back(n);
    }
    // In order of their first server; consecutive sets share a box beyond kMaxGroups.
    std::vector<std::pair<std::int64_t, const std::pair<const std::vector<std::int64_t>, std::vector<NodeId>>*>> sets;
    for (const auto& entry : leavesOf)
        sets.emplace_back(entry.first.front(), &entry);
    std::sort(sets.begin(), sets.end());
    if (sets.empty())
        return;
    const std::size_t per = (sets.size() + WireGroups::kMaxGroups - 1) / WireGroups::kMaxGroups;
    const std::size_t base = out.groups.size();
    for (std::size_t i = 0; i < sets.size(); ++i) {
        const std::size_t g = base + i / per;
        if (g >= out.groups.size()) {
            out.groups.push_back(makeGroup(WireGroups::Kind::Servers, int(i / per)));
            out.groups.back().parent = parent;
        }
        for (const NodeId leaf : sets[i].second->second)
            slot[leaf] = int(g);
        for (const std::int64_t s : sets[i].second->first)
            if (s < std::int64_t(serverGroup.size()) && serverGroup[std::size_t(s)] < 0)
                serverGroup[std::size_t(s)] = int(g);
    }
}

bool isLeaf(const network::Node& n)
{
    return n.kind == NodeKind::LeafSwitch && n.server < 0;
}

// Every node of a server in a server group gets that group in `slot`.
void serversJoin(const network::Topology& t, const std::vector<int>& serverGroup, std::vector<int>& slot)
{
    for (NodeId n = 0; n < t.nodes().size(); ++n)
        if (const auto s = t.node(n).server; s >= 0 && std::size_t(s) < serverGroup.size() && serverGroup[std::size_t(s)] >= 0)
            slot[n] = serverGroup[std::size_t(s)];
}

// The server groups inside each pod of more than kMaxDrawnServers servers.
void podServerGroups(const network::Topology& t, std::int64_t servers, WireGroups& out)
{
    const std::size_t pods = out.groups.size(); // the pods come first, pod p at index p
    std::vector<std::vector<NodeId>> leaves(pods);
    std::vector<int> serverPod(std::size_t(servers), -1);
    std::vector<std::size_t> serverCount(pods, 0);
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        const int p = out.of(n);
        if (p < 0 || std::size_t(p) >= pods || out.groups[std::size_t(p)].kind != WireGroups::Kind::Pod)
            continue;
        const network::Node& node = t.node(n);
        if (isLeaf(node))
            leaves[std::size_t(p)].push_back(n);
        if (node.server >= 0 && node.server < servers && serverPod[std::size_t(node.server)] < 0) {
            serverPod[std::size_t(node.server)] = p;
            ++serverCount[std::size_t(p)];
        }
    }
    std::vector<int> serverGroup(std::size_t(servers), -1);
    for (std::size_t p = 0; p < pods; ++p)
        if (serverCount[p] > WireGroups::kMaxDrawnServers) {
            if (out.subOf.empty())
                out.subOf.assign(t.nodes().size(), -1);
            leafGroups(t, leaves[p], int(p), out.subOf, serverGroup, out);
        }
    if (!out.subOf.empty())
        serversJoin(t, serverGroup, out.subOf);
}

} // namespace

WireGroups groupNodes(const network::Topology& t)
{
    WireGroups out;
    std::int64_t servers = 0;
    for (const network::Node& n : t.nodes())
        servers = std::max(servers, n.server + 1);
    const bool pods = t.hasPods() && t.podCount() > 1;
    if (!pods && std::size_t(servers) <= WireGroups::kMaxDrawnServers)
        return out;
    out.groupOf.assign(t.nodes().size(), -1);
    if (pods) {
        podGroups(t, out);
        podServerGroups(t, servers, out);
    } else {
        std::vector<NodeId> leaves;
        for (NodeId n = 0; n < t.nodes().size(); ++n)
            if (isLeaf(t.node(n)))
                leaves.push_back(n);
        std::vector<int> serverGroup(std::size_t(servers), -1);
        leafGroups(t, leaves, -1, out.groupOf, serverGroup, out);
        serversJoin(t, serverGroup, out.groupOf);
    }
    if (out.groups.empty()) {
        out.groupOf.clear();
        out.subOf.clear();
        return out;
    }
    describe(t, out);
    return out;
}

} // namespace tw::ui
