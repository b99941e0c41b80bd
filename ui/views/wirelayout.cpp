#include "wirelayout.h"

#include "qtstrings.h"

#include <QSizeF>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

namespace tw::ui {

using network::LinkId;
using network::NodeId;
using network::NodeKind;

namespace {

// World units: one GPU column is kU wide; everything else is sized from it.
constexpr double kU = 100;
constexpr double kPadX = 22, kPadTop = 16, kRowGap = 48, kTitleH = 34;
constexpr double kGpuW = 80, kGpuH = 54, kNicW = 74, kNicH = 34, kRcW = 82, kRcH = 40, kHostW = 82, kHostH = 34;
constexpr double kSwH = 40, kNvH = 30, kSwitchRowH = 46;
constexpr double kNvLinkMinGap = 30; // GPUs to NVSwitch, however low the area
constexpr double kCompactW = 180, kCompactH = 104;
constexpr double kGroupW = 300, kGroupH = 150, kGroupGapX = 60, kGroupGapY = 90, kTopRowH = 70, kOpenTitleH = 150;

// The trailing number of a node name ("n0.gpu3" → 3, "leaf12" → 12), -1 when none.
int trailingNumber(const std::string& name)
{
    std::size_t i = name.size();
    while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1])))
        --i;
    if (i == name.size())
        return -1;
    return std::atoi(name.c_str() + i);
}

// Label candidates, longest first: the first that fits its box is drawn.
QStringList labelsOf(const network::Node& n)
{
    const int k = trailingNumber(n.name);
    const QString num = QString::number(k);
    switch (n.kind) {
    case NodeKind::Gpu: return {QStringLiteral("GPU %1").arg(n.gpu), QString::number(n.gpu)};
    case NodeKind::PcieSwitch: return {QStringLiteral("PCIe switch %1").arg(k), QStringLiteral("PCIe sw %1").arg(k), QStringLiteral("PCIe")};
    case NodeKind::RootComplex: return {QStringLiteral("CPU · root complex"), QStringLiteral("CPU (RC)"), QStringLiteral("CPU")};
    case NodeKind::HostMemory: return {QStringLiteral("host memory"), QStringLiteral("DRAM"), QStringLiteral("mem")};
    case NodeKind::NvSwitch: return {QStringLiteral("NVSwitch"), QStringLiteral("NVS")};
    case NodeKind::Nic: return {QStringLiteral("NIC %1").arg(k), QStringLiteral("NIC"), num};
    case NodeKind::LeafSwitch:
        if (k < 0)
            return {QStringLiteral("Ethernet switch"), QStringLiteral("switch"), QStringLiteral("sw")};
        return {QStringLiteral("leaf %1").arg(k), QStringLiteral("L%1").arg(k), num};
    case NodeKind::SpineSwitch:
        if (n.name.rfind("core", 0) == 0) // a three-tier fabric's core switch
            return {QStringLiteral("core %1").arg(k), QStringLiteral("C%1").arg(k), num};
        return {QStringLiteral("spine %1").arg(k), QStringLiteral("S%1").arg(k), num};
    }
    return {qs(n.name)};
}

// The point of a rectangle's outline towards `target` (the centre when the target is inside).
QPointF edgeToward(const QRectF& r, QPointF target)
{
    QPointF dir = target - r.center();
    const double len = std::hypot(dir.x(), dir.y());
    if (len < 1e-9)
        return r.center();
    dir /= len;
    const double hw = r.width() / 2, hh = r.height() / 2;
    const double tx = std::fabs(dir.x()) > 1e-9 ? hw / std::fabs(dir.x()) : 1e18;
    const double ty = std::fabs(dir.y()) > 1e-9 ? hh / std::fabs(dir.y()) : 1e18;
    return r.center() + dir * std::min(tx, ty);
}

// One server's parts, in node order.
struct ServerParts {
    int server = 0;
    std::vector<NodeId> gpus, switches, nics;
    NodeId rc = network::kNoNode, host = network::kNoNode, nvswitch = network::kNoNode;
    std::int64_t gpuLo = -1, gpuHi = -1;
};

// Columns of a grid of n group boxes: one row up to 8, else about twice as wide as high.
int groupColumns(std::size_t n)
{
    return n <= 8 ? int(std::max<std::size_t>(n, 1)) : int(std::ceil(std::sqrt(2.0 * double(n))));
}

double groupGridWidth(std::size_t n)
{
    return groupColumns(n) * (kGroupW + kGroupGapX) - kGroupGapX;
}

// Boxes `boxes` in a grid centred in [0, width) from y down; returns the y under the grid.
double placeBoxGrid(WireLayout& L, const std::vector<int>& boxes, double width, double y)
{
    const std::size_t n = boxes.size();
    if (n == 0)
        return y;
    const int cols = groupColumns(n);
    const int rows = int((n + std::size_t(cols) - 1) / std::size_t(cols));
    const double x0 = (width - groupGridWidth(n)) / 2;
    for (std::size_t i = 0; i < n; ++i) {
        const int c = int(i % std::size_t(cols)), r = int(i / std::size_t(cols));
        L.groups[std::size_t(boxes[i])].rect =
            QRectF(x0 + c * (kGroupW + kGroupGapX), y + r * (kGroupH + kGroupGapY), kGroupW, kGroupH);
    }
    return y + rows * (kGroupH + kGroupGapY) - kGroupGapY;
}

// The grouped part of a large fabric, from y = 0 down: the top row (the switches in no group and the
// core planes) and the collapsed pods or server groups in a grid under it, about twice as wide as
// high. Returns the y where the open group's parts (or nothing) start.
double placeGroups(WireLayout& L, const std::vector<NodeId>& topRow, double gridW,
                   double gapScale)
{
    std::vector<int> boxes, planes;
    for (std::size_t g = 0; g < L.grouping().groups.size(); ++g) {
        if (L.groupOpen(int(g)) || L.grouping().groups[g].parent >= 0)
            continue;
        (L.grouping().groups[g].openable() ? boxes : planes).push_back(int(g));
    }
    const std::size_t n = boxes.size();
    const std::size_t top = topRow.size() + planes.size();
    const double width = std::max({gridW, groupGridWidth(n), double(top) * 2.4 * kU});
    // The top row, in node order with the planes after.
    if (top > 0) {
        const double pitch = width / double(top);
        const double w = std::min(2.6 * kU, pitch * 0.86);
        for (std::size_t i = 0; i < top; ++i) {
            const QRectF r((double(i) + 0.5) * pitch - w / 2, 0, w, kTopRowH);
            if (i < topRow.size())
                L.nodes[topRow[i]].rect = r;
            else
                L.groups[std::size_t(planes[i - topRow.size()])].rect = r;
        }
    }
    // The boxes, centred under the row.
    const double y = placeBoxGrid(L, boxes, width, top > 0 ? kTopRowH + 220 * gapScale : 0);
    return L.openGroup >= 0 ? y + 260 * gapScale + kOpenTitleH : y;
}

// What one layout pass shares between its steps: the fabric, the layout being built, the parts found.
struct LayoutPass {
    const network::Topology& t;
    const WireGroups& grouping;
    WireLayout& L;
    std::vector<ServerParts> parts;
    std::vector<NodeId> leaves, spines;
    // With groups: the switches in no group (spines of a leaf–spine, cores of a three-tier) form the top
    // row, the collapsed groups' boxes sit under it; an open group's parts are laid out below as usual.
    std::vector<NodeId> topRow;
    std::vector<char> hiddenServer;
    std::vector<std::size_t> shown; // the servers drawn (not inside a collapsed group)
    bool compact = false;
    double rowGap = kRowGap, titleH = kTitleH;
};

// The grid of the servers shown: columns, each column's width and each row's height, and its width.
struct ServerGrid {
    double gx = 0, gy = 0; // gaps between columns and between rows
    int cols = 1;
    std::vector<double> colW, rowH;
    double width = 0;
};

// A fresh layout for the pass, reusing the previous layout's arrays (no fresh pages to fault in).
WireLayout startLayout(const network::Topology& t, int openServer, double gapScale,
                       const std::shared_ptr<const WireGroups>& shared, int openGroup, WireLayout* recycle)
{
    const WireGroups& grouping = *shared;
    WireLayout L;
    if (recycle) { // the previous layout's per-node, per-server and per-link arrays: no fresh pages to fault in
        L.nodes = std::move(recycle->nodes);
        L.servers = std::move(recycle->servers);
        L.segmentOf = std::move(recycle->segmentOf);
    }
    L.gapScale = gapScale;
    L.openServer = openServer;
    L.nodes.assign(t.nodes().size(), {});
    L.groupingShared = shared;
    L.groups.resize(grouping.groups.size());
    L.openGroup = openGroup >= 0 && std::size_t(openGroup) < grouping.groups.size()
                          && grouping.groups[std::size_t(openGroup)].openable()
                      ? openGroup
                      : -1;
    return L;
}

// Sorts the nodes drawn into servers' parts, switch rows and the top row; decides compact servers.
void collectParts(LayoutPass& P)
{
    const network::Topology& t = P.t;
    WireLayout& L = P.L;
    std::int64_t serverCount = 0;
    for (const auto& n : t.nodes())
        serverCount = std::max(serverCount, n.server + 1);
    P.parts.resize(static_cast<std::size_t>(serverCount));
    P.hiddenServer.assign(P.parts.size(), 0);
    for (NodeId id = 0; id < t.nodes().size(); ++id) {
        const network::Node& n = t.node(id);
        if (L.collapsedGroupOf(id) >= 0) { // not drawn: no labels
            if (n.server >= 0)
                P.hiddenServer[std::size_t(n.server)] = 1;
            continue;
        }
        L.nodes[id].labels = labelsOf(n);
        if (n.server < 0 && !P.grouping.empty() && P.grouping.of(id) < 0) {
            P.topRow.push_back(id);
            continue;
        }
        if (n.server < 0) {
            (n.kind == NodeKind::SpineSwitch ? P.spines : P.leaves).push_back(id);
            continue;
        }
        ServerParts& p = P.parts[std::size_t(n.server)];
        p.server = int(n.server);
        switch (n.kind) {
        case NodeKind::Gpu:
            p.gpus.push_back(id);
            p.gpuLo = p.gpuLo < 0 ? n.gpu : std::min(p.gpuLo, n.gpu);
            p.gpuHi = std::max(p.gpuHi, n.gpu);
            break;
        case NodeKind::PcieSwitch: p.switches.push_back(id); break;
        case NodeKind::Nic: p.nics.push_back(id); break;
        case NodeKind::RootComplex: p.rc = id; break;
        case NodeKind::HostMemory: p.host = id; break;
        case NodeKind::NvSwitch: p.nvswitch = id; break;
        case NodeKind::LeafSwitch: P.leaves.push_back(id); break;
        case NodeKind::SpineSwitch: P.spines.push_back(id); break;
        }
    }
    for (std::size_t s = 0; s < P.parts.size(); ++s)
        if (!P.hiddenServer[s])
            P.shown.push_back(s);
    P.compact = P.shown.size() > std::size_t(WireLayout::kMaxDetailedServers);
    L.compactServers = P.compact;
    if (!P.compact || L.openServer >= int(P.parts.size()) || L.openServer < 0
        || P.hiddenServer[std::size_t(L.openServer)])
        L.openServer = -1;
    P.rowGap = kRowGap * L.gapScale;
    P.titleH = P.shown.size() > std::size_t(WireLayout::kMaxDetailedServers) ? 44 : P.shown.size() > 8 ? 100 : kTitleH;
    L.titleH = P.titleH;
}

// The in-server neighbour a part hangs from (its PCIe switch or the root complex).
NodeId parentOf(const network::Topology& t, NodeId id)
{
    for (const LinkId l : t.outLinks(id)) {
        const network::Node& o = t.node(t.link(l).to);
        if (o.kind == NodeKind::PcieSwitch || o.kind == NodeKind::RootComplex)
            return t.link(l).to;
    }
    return network::kNoNode;
}

// A detailed server's PCIe switches over their GPUs and its NICs over their GPUs or parents (the rows'
// heights are set: switchY and nicY are the rows' tops).
void placeSwitchesAndNics(LayoutPass& P, const ServerParts& p, const std::vector<double>& gpuX, double gpuY,
                          double switchY, double nicY, double left, double cx)
{
    WireLayout& L = P.L;
    const int g = int(p.gpus.size());
    auto put = [&](NodeId id, double x, double top, double w, double h) {
        if (id == network::kNoNode)
            return;
        L.nodes[id].rect = QRectF(x - w / 2, top, w, h);
        L.nodes[id].bar = false;
    };
    std::map<NodeId, std::vector<double>> below; // switch → x of its GPUs
    for (int k = 0; k < g; ++k) {
        put(p.gpus[std::size_t(k)], gpuX[std::size_t(k)], gpuY, kGpuW, kGpuH);
        below[parentOf(P.t, p.gpus[std::size_t(k)])].push_back(gpuX[std::size_t(k)]);
    }
    for (std::size_t j = 0; j < p.switches.size(); ++j) {
        const auto it = below.find(p.switches[j]);
        double x = left + (double(j) + 0.5) * double(g) * kU / double(p.switches.size());
        int n = 1;
        if (it != below.end() && !it->second.empty()) {
            x = (it->second.front() + it->second.back()) / 2;
            n = int(it->second.size());
        }
        put(p.switches[j], x, switchY, std::min(kRcW + (n - 1) * 0.6 * kU, n * kU - 0.2 * kU), kSwH);
    }
    const bool perGpu = int(p.nics.size()) == g && g > 0;
    std::map<NodeId, int> siblings, seen;
    for (const NodeId nic : p.nics)
        ++siblings[parentOf(P.t, nic)];
    for (std::size_t i = 0; i < p.nics.size(); ++i) {
        const NodeId nic = p.nics[i];
        double x = cx;
        if (perGpu) {
            x = gpuX[i];
        } else {
            const NodeId par = parentOf(P.t, nic);
            if (par != network::kNoNode && L.nodes[par].rect.isValid())
                x = L.nodes[par].rect.center().x();
            x += (seen[par]++ - (siblings[par] - 1) / 2.0) * kU * 0.9;
        }
        put(nic, x, nicY, kNicW, kNicH);
    }
}

// A detailed server: rows NICs, (host memory), root complex, PCIe switches, GPUs, NVSwitch; title at
// the bottom. Returns its size; place = false only measures.
QSizeF layoutServer(LayoutPass& P, const ServerParts& p, QPointF origin, bool place)
{
    WireLayout& L = P.L;
    const double kRowGap = P.rowGap;
    const int g = int(p.gpus.size());
    const bool hostAbove = p.nics.size() > 1 && p.host != network::kNoNode;
    const int cols = std::max(g, hostAbove || p.host == network::kNoNode ? 1 : 2);
    const double width = 2 * kPadX + cols * kU;
    const double left = origin.x() + kPadX + (cols - g) * kU / 2;
    const double cx = origin.x() + width / 2;
    double y = origin.y() + (p.nics.empty() ? kPadTop : 0);
    auto put = [&](NodeId id, double x, double top, double w, double h, bool bar = false) {
        if (!place || id == network::kNoNode)
            return;
        L.nodes[id].rect = QRectF(x - w / 2, top, w, h);
        L.nodes[id].bar = bar;
    };
    const double nicY = y - kNicH / 2; // NICs sit on the box's top edge, like ports
    if (!p.nics.empty())
        y += kNicH / 2 + kRowGap;
    double hostY = -1;
    if (hostAbove) {
        hostY = y;
        y += kHostH + kRowGap * 0.6;
    }
    const double rcX = hostAbove || p.host == network::kNoNode ? cx : cx - kU / 2;
    if (p.rc != network::kNoNode) {
        put(p.rc, rcX, y, kRcW, kRcH);
        if (p.host != network::kNoNode) {
            if (hostAbove)
                put(p.host, rcX, hostY, kHostW, kHostH);
            else
                put(p.host, cx + kU / 2, y + (kRcH - kHostH) / 2, kHostW, kHostH);
        }
        y += kRcH + kRowGap;
    }
    std::vector<double> gpuX(static_cast<std::size_t>(g));
    for (int k = 0; k < g; ++k)
        gpuX[std::size_t(k)] = g == 1 && p.rc != network::kNoNode ? rcX : left + (k + 0.5) * kU;
    const double switchY = y;
    if (!p.switches.empty())
        y += kSwH + kRowGap;
    const double gpuY = y;
    y += kGpuH;
    if (p.nvswitch != network::kNoNode) {
        // The NVLinks keep their length when the gaps shrink to fit a low area (1280×720): they are the
        // links an NVSwitch node's step plays on (8 px left no room for a packet).
        y += std::max(kRowGap * 0.7, kNvLinkMinGap);
        if (g > 0)
            put(p.nvswitch, (gpuX.front() + gpuX.back()) / 2, y, gpuX.back() - gpuX.front() + kGpuW, kNvH, true);
        else
            put(p.nvswitch, cx, y, 2 * kU, kNvH, true);
        y += kNvH;
    }
    y += P.titleH + 6;
    if (place)
        placeSwitchesAndNics(P, p, gpuX, gpuY, switchY, nicY, left, cx);
    return {width, y - origin.y()};
}

// Each column's width and each row's height of the servers' sizes in a grid of `cols` columns.
void gridOf(const std::vector<QSizeF>& size, int cols, std::vector<double>& colW, std::vector<double>& rowH)
{
    const std::size_t S = size.size();
    const int rows = int((S + std::size_t(cols) - 1) / std::size_t(cols));
    colW.assign(std::size_t(cols), 0);
    rowH.assign(std::size_t(rows), 0);
    for (std::size_t s = 0; s < S; ++s) {
        colW[s % std::size_t(cols)] = std::max(colW[s % std::size_t(cols)], size[s].width());
        rowH[s / std::size_t(cols)] = std::max(rowH[s / std::size_t(cols)], size[s].height());
    }
}

// The height of a switch row: boxes and gaps grow with the width of the grid so that labels stay readable.
double switchRowHeight(double gridWidth)
{
    return std::clamp(gridWidth / 45, kSwitchRowH, 220.0);
}

// Grid: one row up to 8 servers (no link crosses a server), else the column count that frames best in
// the area, the switch rows above included.
ServerGrid chooseServerGrid(const LayoutPass& P, const std::vector<QSizeF>& size, QSizeF areaSize)
{
    const std::size_t S = size.size();
    ServerGrid G;
    const double aw = std::max(200.0, areaSize.width()), ah = std::max(150.0, areaSize.height());
    G.gx = P.compact ? 40 : 60;
    G.gy = P.compact ? 60 : 70;
    double estW = 0;
    for (std::size_t s = 0; s < S; ++s)
        estW += size[s].width() + G.gx;
    const double sh0 = switchRowHeight(S > 8 ? std::sqrt(double(S)) * estW / double(S) * 1.3 : estW);
    const double topRows = (P.spines.empty() ? 0 : sh0 + 130 * P.L.gapScale + sh0)
                           + (P.leaves.empty() ? 0 : sh0 + 150 * P.L.gapScale + sh0);
    G.cols = std::max<int>(1, int(S));
    if (S > 8) {
        double bestScale = -1;
        std::vector<double> cw, rh;
        for (int c = 1; c <= int(S); ++c) {
            gridOf(size, c, cw, rh);
            double w = G.gx * (c - 1), h = topRows + G.gy * double(rh.size() - 1);
            for (double v : cw)
                w += v;
            for (double v : rh)
                h += v;
            const std::size_t rows = rh.size(), empty = rows * std::size_t(c) - S;
            const double sc = std::min(aw / w, ah / h) * (1 - 0.25 * double(empty) / double(rows * std::size_t(c)));
            if (sc > bestScale * 1.0001) {
                bestScale = sc;
                G.cols = c;
            }
        }
    }
    if (S > 0)
        gridOf(size, G.cols, G.colW, G.rowH);
    for (double v : G.colW)
        G.width += v;
    G.width += G.gx * double(std::max<std::ptrdiff_t>(0, std::ptrdiff_t(G.colW.size()) - 1));
    if (S == 0)
        G.width = std::max<double>(P.leaves.size(), P.spines.size()) * 2 * kU;
    return G;
}

// A row of switches at y, spread over the grid's width, sh high.
void placeSwitchRow(WireLayout& L, const std::vector<NodeId>& row, double y, double gridW, double sh)
{
    if (row.empty())
        return;
    const double pitch = gridW / double(row.size());
    const bool single = row.size() == 1;
    const double w = single ? std::max(2.6 * kU, sh * 4) : std::min(std::max(1.9 * kU, sh * 3.4), pitch * 0.86);
    for (std::size_t i = 0; i < row.size(); ++i) {
        const double x = (double(i) + 0.5) * pitch;
        L.nodes[row[i]].rect = QRectF(x - w / 2, y, w, sh);
    }
}

// The servers shown in their grid from y down, each with its titles; detailed ones with their parts.
void placeServers(LayoutPass& P, const ServerGrid& G, const std::vector<QSizeF>& size, double y)
{
    WireLayout& L = P.L;
    L.servers.assign(P.parts.size(), {});
    for (std::size_t s = 0; s < P.parts.size(); ++s)
        L.servers[s].compact = P.hiddenServer[s] != 0; // inside a collapsed group: not drawn
    std::vector<double> colX(G.colW.size()), rowY(G.rowH.size());
    double x = 0;
    for (std::size_t c = 0; c < G.colW.size(); ++c) {
        colX[c] = x;
        x += G.colW[c] + G.gx;
    }
    double ry = y;
    for (std::size_t r = 0; r < G.rowH.size(); ++r) {
        rowY[r] = ry;
        ry += G.rowH[r] + G.gy;
    }
    for (std::size_t i = 0; i < P.shown.size(); ++i) {
        const std::size_t c = i % std::size_t(G.cols), r = i / std::size_t(G.cols);
        const std::size_t s = P.shown[i];
        const QPointF origin(colX[c] + (G.colW[c] - size[i].width()) / 2, rowY[r]);
        WireLayout::ServerGeom& sg = L.servers[s];
        sg.rect = QRectF(origin, size[i]);
        sg.compact = P.compact && int(s) != L.openServer;
        const ServerParts& p = P.parts[s];
        const QString range = p.gpuLo < 0 ? QString()
            : p.gpuLo == p.gpuHi ? QStringLiteral("GPU %1").arg(p.gpuLo)
                                 : QStringLiteral("GPUs %1–%2").arg(p.gpuLo).arg(p.gpuHi);
        sg.titles = {QStringLiteral("server %1 · %2").arg(s).arg(range), QStringLiteral("server %1").arg(s),
                     QStringLiteral("s%1").arg(s), QString::number(s)};
        if (range.isEmpty())
            sg.titles.removeFirst();
        sg.subtitle = range;
        if (!sg.compact)
            layoutServer(P, p, origin, true);
    }
}

// The objects a link's ends are drawn as: nodes, then compact servers, then collapsed groups.
struct DrawnObjects {
    const network::Topology& t;
    const WireLayout& L;
    NodeId objects = 0, groupObjects = 0; // the first compact server's object, the first group's
    std::vector<NodeId> ofNode;           // each node's object (a million links at 98,304 GPUs read two each)

    DrawnObjects(const network::Topology& topology, const WireLayout& layout, std::size_t servers)
        : t(topology), L(layout), objects(NodeId(topology.nodes().size())), groupObjects(objects + NodeId(servers)),
          ofNode(topology.nodes().size())
    {
        for (NodeId n = 0; n < t.nodes().size(); ++n) {
            const auto s = t.node(n).server;
            const int g = L.collapsedGroupOf(n);
            ofNode[n] = g >= 0 ? groupObjects + NodeId(g)
                        : s >= 0 && std::size_t(s) < servers && L.servers[std::size_t(s)].compact ? objects + NodeId(s)
                                                                                                  : n;
        }
    }
    [[nodiscard]] QRectF rect(NodeId obj) const
    {
        return obj >= groupObjects ? L.groups[obj - groupObjects].rect
               : obj >= objects    ? L.servers[obj - objects].rect
                                   : L.nodes[obj].rect;
    }
    [[nodiscard]] bool bar(NodeId obj) const { return obj < objects && L.nodes[obj].bar; }
    [[nodiscard]] bool isSwitch(NodeId obj) const
    {
        return obj < objects && (t.node(obj).kind == NodeKind::LeafSwitch || t.node(obj).kind == NodeKind::SpineSwitch);
    }
};

// A leaf or spine spreads its links along its top and bottom edges, in the order of their other ends:
// (switch, other object) → anchor x.
std::map<std::pair<NodeId, NodeId>, double> switchSpread(const DrawnObjects& O)
{
    std::map<std::pair<NodeId, NodeId>, double> spreadX;
    std::map<NodeId, std::vector<std::pair<double, NodeId>>> above, below;
    for (const network::Link& link : O.t.links()) {
        const NodeId a = O.ofNode[link.from], b = O.ofNode[link.to];
        if (!O.isSwitch(a) || a == b || O.rect(b).isNull() || O.rect(a).isNull())
            continue;
        const QPointF other = O.rect(b).center();
        (other.y() < O.rect(a).center().y() ? above : below)[a].push_back({other.x(), b});
    }
    for (auto* side : {&above, &below})
        for (auto& [sw, ends] : *side) {
            std::sort(ends.begin(), ends.end());
            ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
            const QRectF r = O.rect(sw);
            const double margin = std::min(r.width() * 0.12, 14.0);
            for (std::size_t i = 0; i < ends.size(); ++i)
                spreadX[{sw, ends[i].second}] = ends.size() == 1
                    ? r.center().x()
                    : r.left() + margin + (r.width() - 2 * margin) * double(i) / double(ends.size() - 1);
        }
    return spreadX;
}

// Segments: each drawn link direction; links of a compact server to the same outside node merge into
// one line, links inside a compact server are not drawn.
void buildSegments(const network::Topology& t, WireLayout& L, std::size_t servers)
{
    L.segmentOf.assign(t.links().size(), -1);
    const DrawnObjects O(t, L, servers);
    const auto spreadX = switchSpread(O);
    auto switchAnchor = [&](NodeId sw, NodeId other, QPointF& anchor) {
        const auto it = spreadX.find({sw, other});
        if (it == spreadX.end())
            return;
        const QRectF r = O.rect(sw);
        anchor = QPointF(it->second, O.rect(other).center().y() < r.center().y() ? r.top() : r.bottom());
    };
    std::map<std::pair<NodeId, NodeId>, int> merged;
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const network::Link& link = t.link(l);
        const NodeId a = O.ofNode[link.from], b = O.ofNode[link.to];
        if (a == b)
            continue;
        const QRectF ra = O.rect(a), rb = O.rect(b);
        if (ra.isNull() || rb.isNull())
            continue;
        if (a >= O.objects || b >= O.objects) {
            const auto it = merged.find({a, b});
            if (it != merged.end()) {
                WireLayout::Segment& seg = L.segments[std::size_t(it->second)];
                seg.members.push_back(l);
                seg.bandwidth += link.bandwidth;
                seg.width = WireLayout::capacityWidth(seg.bandwidth);
                L.segmentOf[l] = it->second;
                continue;
            }
            merged[{a, b}] = int(L.segments.size());
        }
        // Anchors: a bar takes the link straight above or below the other end.
        QPointF ta = rb.center(), tb = ra.center();
        if (O.bar(b) && ra.center().x() > rb.left() && ra.center().x() < rb.right())
            ta = QPointF(ra.center().x(), rb.center().y());
        if (O.bar(a) && rb.center().x() > ra.left() && rb.center().x() < ra.right())
            tb = QPointF(rb.center().x(), ra.center().y());
        WireLayout::Segment seg;
        seg.rep = l;
        seg.members = {l};
        seg.a = edgeToward(ra, ta);
        seg.b = edgeToward(rb, tb);
        if (O.bar(a))
            seg.a = QPointF(tb.x(), rb.center().y() < ra.center().y() ? ra.top() : ra.bottom());
        if (O.bar(b))
            seg.b = QPointF(ta.x(), ra.center().y() < rb.center().y() ? rb.top() : rb.bottom());
        if (O.isSwitch(a))
            switchAnchor(a, b, seg.a);
        if (O.isSwitch(b))
            switchAnchor(b, a, seg.b);
        if (O.isSwitch(a) && !O.isSwitch(b) && !O.bar(b))
            seg.b = edgeToward(rb, seg.a);
        if (O.isSwitch(b) && !O.isSwitch(a) && !O.bar(a))
            seg.a = edgeToward(ra, seg.b);
        seg.bandwidth = link.bandwidth;
        seg.width = WireLayout::capacityWidth(link.bandwidth);
        seg.hash = l * 2654435761u;
        // Switch–switch lines too: in a grouped fabric they pass behind group boxes and open frames' titles.
        seg.between = t.node(link.from).server != t.node(link.to).server || t.node(link.from).server < 0
                      || a >= O.groupObjects || b >= O.groupObjects;
        L.segmentOf[l] = int(L.segments.size());
        L.segments.push_back(std::move(seg));
    }
}

// The open group's frame around its parts, with room above them for its title; an open pod's frame
// around its open server group's too. Then the world's bounds around everything drawn.
void frameGroupsAndWorld(const network::Topology& t, const WireGroups& grouping, WireLayout& L, int openTop,
                         const std::vector<int>& subBoxes)
{
    auto frameAround = [&](auto inside, QRectF frame) {
        for (NodeId id = 0; id < t.nodes().size(); ++id)
            if (inside(id)) {
                const auto s = t.node(id).server;
                frame = frame.united(s >= 0 ? L.servers[std::size_t(s)].rect : L.nodes[id].rect);
            }
        return frame.adjusted(-40, -kOpenTitleH, 40, 30);
    };
    QRectF inner;
    if (L.openGroup >= 0 && L.openGroup != openTop) {
        inner = frameAround([&](NodeId id) { return grouping.subOfNode(id) == L.openGroup; }, QRectF());
        L.groups[std::size_t(L.openGroup)].rect = inner;
        L.groups[std::size_t(L.openGroup)].open = true;
    }
    if (openTop >= 0) {
        for (const int g : subBoxes)
            inner = inner.united(L.groups[std::size_t(g)].rect);
        L.groups[std::size_t(openTop)].rect = frameAround([&](NodeId id) { return grouping.of(id) == openTop; }, inner);
        L.groups[std::size_t(openTop)].open = true;
    }
    QRectF world;
    for (const auto& gg : L.groups)
        world = world.united(gg.rect);
    for (const auto& sg : L.servers)
        world = world.united(sg.rect);
    for (const auto& ng : L.nodes)
        if (!ng.rect.isNull())
            world = world.united(ng.rect);
    L.world = world.adjusted(-10, -10, 10, 10);
}

// One pass at a given gap scale: the parts, the servers' sizes and grid, the rows from the top down
// (groups, spines, the open pod's server groups, leaves, servers), the links' segments, the frames.
WireLayout layoutOnce(const network::Topology& t, QSizeF areaSize, int openServer, double gapScale,
                      const std::shared_ptr<const WireGroups>& shared, int openGroup, WireLayout* recycle)
{
    const WireGroups& grouping = *shared;
    WireLayout L = startLayout(t, openServer, gapScale, shared, openGroup, recycle);
    LayoutPass P{t, grouping, L, {}, {}, {}, {}, {}, {}, false, kRowGap, kTitleH};
    collectParts(P);

    // Server sizes (compact ones except the opened one); indices run over the servers shown.
    const std::size_t S = P.shown.size();
    std::vector<QSizeF> size(S);
    for (std::size_t s = 0; s < S; ++s)
        size[s] = P.compact && int(P.shown[s]) != L.openServer ? QSizeF(kCompactW, kCompactH)
                                                               : layoutServer(P, P.parts[P.shown[s]], {}, false);
    ServerGrid G = chooseServerGrid(P, size, areaSize);
    L.serverColumns = G.cols;
    L.serverRows = S == 0 ? 0 : int((S + std::size_t(G.cols) - 1) / std::size_t(G.cols));

    // The open pod's server groups (those not open) in a grid under its spines.
    const int openTop = L.openGroup >= 0 && grouping.parentOf(L.openGroup) >= 0 ? grouping.parentOf(L.openGroup) : L.openGroup;
    std::vector<int> subBoxes;
    for (std::size_t g = 0; openTop >= 0 && g < grouping.groups.size(); ++g)
        if (grouping.groups[g].parent == openTop && int(g) != L.openGroup)
            subBoxes.push_back(int(g));
    if (!subBoxes.empty())
        G.width = std::max(G.width, groupGridWidth(subBoxes.size()));

    // Switch rows above the servers, spread over the grid's width.
    const double sh = switchRowHeight(G.width);
    double y = 0;
    if (!grouping.empty())
        y = placeGroups(L, P.topRow, G.width, gapScale);
    if (!P.spines.empty()) {
        placeSwitchRow(L, P.spines, y, G.width, sh);
        y += sh + 130 * L.gapScale + sh;
    }
    if (!subBoxes.empty()) {
        y = placeBoxGrid(L, subBoxes, G.width, y);
        // An open server group's frame and title under the others.
        y += openTop != L.openGroup ? 260 * L.gapScale + kOpenTitleH : 130 * L.gapScale;
    }
    if (!P.leaves.empty()) {
        placeSwitchRow(L, P.leaves, y, G.width, sh);
        y += sh + 150 * L.gapScale + sh;
    }
    placeServers(P, G, size, y);

    // Node looks.
    for (NodeId id = 0; id < t.nodes().size(); ++id) {
        const NodeKind k = t.node(id).kind;
        L.nodes[id].dark = k == NodeKind::Gpu || k == NodeKind::NvSwitch;
    }
    buildSegments(t, L, P.parts.size());
    frameGroupsAndWorld(t, grouping, L, openTop, subBoxes);
    return L;
}

} // namespace

WireLayout WireLayout::compute(const network::Topology& topology, QSizeF area, int openServer, bool fitted, int openGroup,
                               std::shared_ptr<const WireGroups> grouping, WireLayout* recycle)
{
    if (!grouping)
        grouping = std::make_shared<const WireGroups>(groupNodes(topology));
    // One row of servers: the row gaps grow so that the drawing fills the area's height too.
    WireLayout L = layoutOnce(topology, area, openServer, 1, grouping, openGroup, recycle);
    L.area = area;
    L.fitted = fitted;
    if (!fitted || L.servers.empty() || L.servers.size() > 8 || L.world.isEmpty() || !grouping->empty())
        return L;
    // The other way round when the height limits the scale: the gaps shrink (down to 0.45).
    const double h1 = L.world.height(), w1 = L.world.width();
    const double target = w1 * area.height() / area.width();
    if (std::abs(target - h1) < 0.02 * h1)
        return L;
    const WireLayout twice = layoutOnce(topology, area, L.openServer, 2, grouping, L.openGroup, nullptr);
    const double slope = twice.world.height() - h1;
    const double g = slope > 0 ? std::clamp(1 + (target - h1) / slope, 0.45, 2.6) : 1.0;
    WireLayout out = layoutOnce(topology, area, L.openServer, g, grouping, L.openGroup, &L);
    out.area = area;
    out.fitted = fitted;
    return out;
}

bool WireLayout::nodeDrawn(const network::Topology& topology, NodeId node) const
{
    if (node >= nodes.size() || nodes[node].rect.isNull())
        return false;
    const auto server = topology.node(node).server;
    return !(server >= 0 && std::size_t(server) < servers.size() && servers[std::size_t(server)].compact);
}

// 1 px at 1 GB/s … 6 px at 500 GB/s, log scale (10 GbE ≈ 1.2 px, NDR ≈ 4.1, NVLink 4 ≈ 5.9).
double WireLayout::capacityWidth(double bandwidth)
{
    if (!(bandwidth > 0))
        return 1;
    return 1 + 5 * std::clamp(std::log(bandwidth / 1e9) / std::log(500.0), 0.0, 1.0);
}

} // namespace tw::ui
