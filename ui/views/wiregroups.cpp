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

// Ranges, counts, the network links inside and the labels, once every node has its group.
void describe(const network::Topology& t, WireGroups& out)
{
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        const int g = out.of(n);
        if (g < 0)
            continue;
        WireGroups::Group& grp = out.groups[std::size_t(g)];
        const network::Node& node = t.node(n);
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
    }
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const network::Link& link = t.link(l);
        const int g = out.of(link.from);
        if (g >= 0 && g == out.of(link.to) && network::isNetwork(link.protocol))
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

// Server groups: the leaves that serve the same servers, with those servers.
void leafGroups(const network::Topology& t, std::int64_t servers, WireGroups& out)
{
    std::map<std::vector<std::int64_t>, std::vector<NodeId>> leavesOf; // served servers → leaves
    for (NodeId n = 0; n < t.nodes().size(); ++n) {
        if (t.node(n).kind != NodeKind::LeafSwitch || t.node(n).server >= 0)
            continue;
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
    std::vector<int> serverGroup(std::size_t(servers), -1);
    for (std::size_t i = 0; i < sets.size(); ++i) {
        const int g = int(i / per);
        if (std::size_t(g) >= out.groups.size())
            out.groups.push_back(makeGroup(WireGroups::Kind::Servers, g));
        for (const NodeId leaf : sets[i].second->second)
            out.groupOf[leaf] = g;
        for (const std::int64_t s : sets[i].second->first)
            if (serverGroup[std::size_t(s)] < 0)
                serverGroup[std::size_t(s)] = g;
    }
    for (NodeId n = 0; n < t.nodes().size(); ++n)
        if (const auto s = t.node(n).server; s >= 0 && s < servers)
            out.groupOf[n] = serverGroup[std::size_t(s)];
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
    if (pods)
        podGroups(t, out);
    else
        leafGroups(t, servers, out);
    if (out.groups.empty()) {
        out.groupOf.clear();
        return out;
    }
    describe(t, out);
    return out;
}

} // namespace tw::ui
