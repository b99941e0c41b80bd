#include "wireview.h"

#include "palette.h"

#include "base/units.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace tw::ui {

using network::LinkId;
using network::NodeId;
using network::NodeKind;

namespace {

const QColor kInk = palette::kInk;
const QColor kMuted = palette::kMuted;
const QColor kServerFill(0xF8, 0xFA, 0xFC);
const QColor kServerLine(0x94, 0xA3, 0xB8);
const QColor kGpuFill(0x33, 0x41, 0x55);
const QColor kGpuHighlight(0xF0, 0xE4, 0x42); // palette yellow: the emphasised GPUs
const QColor kPartFill(Qt::white);
const QColor kSwitchFill(0xE2, 0xE8, 0xF0);
const QColor kNvSwitchFill(0x47, 0x55, 0x69);
const QColor kUnknownStrategy(0x64, 0x74, 0x8B);
const QColor kTokenGlow(0xF0, 0xE4, 0x42); // the followed token's links (palette yellow)

// World units: one GPU column is kU wide; everything else is sized from it.
constexpr double kU = 100;
constexpr double kPadX = 22, kPadTop = 16, kRowGap = 48, kTitleH = 34;
constexpr double kGpuW = 80, kGpuH = 54, kNicW = 74, kNicH = 34, kRcW = 82, kRcH = 40, kHostW = 82, kHostH = 34;
constexpr double kSwH = 40, kNvH = 30, kSwitchRowH = 46;
constexpr double kCompactW = 180, kCompactH = 104;
constexpr double kLegendPx = 34;          // the legend strip at the bottom of the widget
constexpr double kMinSpacingPx = 9;       // packet spacing at a strategy rate equal to the bandwidth
constexpr double kTravelPxPerStep = 2917; // how far the packet phase moves over the whole step
constexpr int kMaxPackets = 4000;
constexpr double kHitPx = 6;

QColor mix(const QColor& a, const QColor& b, double t) // t = share of b
{
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
                            float(a.blueF() * (1 - t) + b.blueF() * t));
}

// Idle grey → orange → vermillion; any traffic at all is visibly tinted.
QColor loadColor(double u)
{
    if (!(u > 0))
        return palette::kLoadIdle;
    const double t = 0.22 + 0.78 * std::min(u, 1.0);
    return t < 0.5 ? mix(palette::kLoadIdle, palette::kLoadMid, t / 0.5) : mix(palette::kLoadMid, palette::kLoadFull, (t - 0.5) / 0.5);
}

// 1 px at 1 GB/s … 6 px at 500 GB/s, log scale (10 GbE ≈ 1.2 px, NDR ≈ 4.1, NVLink 4 ≈ 5.9).
double capacityWidth(double bandwidth)
{
    if (!(bandwidth > 0))
        return 1;
    return 1 + 5 * std::clamp(std::log(bandwidth / 1e9) / std::log(500.0), 0.0, 1.0);
}

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString bytesText(double b, const DisplayUnits& u = {}) { return qs(formatBytes(b, u)); }
QString rateText(double r, const DisplayUnits& u = {}) { return qs(formatBytes(r, u)) + QStringLiteral("/s"); }
QString percent(double x) { return QString::number(x * 100, 'f', x < 0.1 ? 1 : 0) + QStringLiteral(" %"); }

const char* const kStrategyName[4] = {"DP", "PP", "TP", "EP"};

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

QFont pixelFont(double px, bool bold)
{
    QFont f = QApplication::font();
    f.setPixelSize(std::max(6, int(std::lround(px))));
    f.setBold(bold);
    return f;
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
    case NodeKind::SpineSwitch: return {QStringLiteral("spine %1").arg(k), QStringLiteral("S%1").arg(k), num};
    }
    return {qs(n.name)};
}

// Distance from p to the segment ab.
double segmentDistance(QPointF p, QPointF a, QPointF b)
{
    const QPointF d = b - a;
    const double len2 = d.x() * d.x() + d.y() * d.y();
    double t = len2 > 0 ? ((p.x() - a.x()) * d.x() + (p.y() - a.y()) * d.y()) / len2 : 0;
    t = std::clamp(t, 0.0, 1.0);
    const QPointF q = a + d * t - p;
    return std::hypot(q.x(), q.y());
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

// A segment's drawn line in widget coordinates.
struct ScreenLine {
    QPointF p, q;
    double width = 1;
};

} // namespace

struct WireView::Rates {
    double total = 0;         // B/s
    double byStrategy[4] = {0, 0, 0, 0};
    double unknown = 0;       // B/s of no known strategy (neither the sample nor the link loads say)
    double bandwidth = 0;     // B/s of the drawn line (Σ for a merged line)
};

struct WireView::Layout {
    struct NodeGeom {
        QRectF rect;          // world; null when not drawn
        bool bar = false;     // a wide bar (NVSwitch): links attach straight above/below their other end
        QStringList labels;
        bool dark = false;
    };
    struct ServerGeom {
        QRectF rect;
        bool compact = false;
        QStringList titles;   // candidates, longest first
        QString subtitle;     // compact: the GPU range
        bool highlighted = false;
    };
    struct Segment {
        LinkId rep = 0;
        std::vector<LinkId> members; // every link direction this line stands for (rep first)
        QPointF a, b;                // world anchors
        double bandwidth = 0;
        double width = 1;            // px at full line scale
        std::uint32_t hash = 0;      // packet phase offset
        bool between = false;        // joins two servers or a server and a switch (drawn under the boxes)
    };
    std::vector<NodeGeom> nodes;
    std::vector<ServerGeom> servers;
    std::vector<Segment> segments;
    std::vector<int> segmentOf;      // per link: its segment, -1 when not drawn
    std::vector<int> timeline;       // per link: index in the simulation's linkTimelines, -1
    QRectF world;
    int serverColumns = 1;
    double maxPayload = 0;           // busiest link's payload (colour without a simulation)

    // World → widget: screen = world · scale + offset.
    double scale = 1, fitScale = 1;
    QPointF offset;
    double titleH = kTitleH;         // a detailed server's title band
    double gapScale = 1;             // vertical gaps × this (a single row of servers filling the height)
    int serverRows = 1;
    bool fitted = true;

    // Interaction and what the last paint drew.
    int hoveredSegment = -1;
    bool dragging = false;
    QPoint dragFrom;
    QPointF offsetAtDrag;
    int packets = 0;
    int packetsBy[4] = {0, 0, 0, 0};

    // The static layers (server boxes; nodes and labels), cached for the current view.
    struct CacheKey {
        double scale = 0;
        QPointF offset;
        QSize pixels;
        std::uint64_t generation = 0;
    } cacheKey;
    std::uint64_t generation = 1; // bumped by every change of geometry, highlight or open server
    QImage serverLayer, nodeLayer;

    // The shape kept across setNetwork (same shape: keep zoom and pan).
    std::size_t nodeCount = 0, linkCount = 0;
    network::TopologySpec spec;
    parallel::Cluster cluster;

    [[nodiscard]] double lineScale() const { return std::clamp(scale * 1.4, 0.45, 1.0); }

    // Offset to the right of the direction of travel, so that the two directions of a pair sit side by side.
    [[nodiscard]] ScreenLine line(const Segment& seg) const
    {
        ScreenLine s;
        s.p = seg.a * scale + offset;
        s.q = seg.b * scale + offset;
        s.width = std::max(1.0, seg.width * lineScale());
        const QPointF d = s.q - s.p;
        const double len = std::hypot(d.x(), d.y());
        if (len > 1e-9) {
            const QPointF n(-d.y() / len, d.x() / len);
            const QPointF off = n * (s.width / 2 + 1.0);
            s.p += off;
            s.q += off;
        }
        return s;
    }
};

WireView::WireView(QWidget* parent) : QWidget(parent), m_layout(std::make_unique<Layout>())
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(320, 200);
}

WireView::~WireView() = default;

void WireView::setNetwork(std::shared_ptr<const network::Topology> topology, std::shared_ptr<const network::LinkLoads> loads,
                          std::shared_ptr<const network::StepSimulation> simulation)
{
    Layout& L = *m_layout;
    const bool sameShape = topology && m_topology && topology->nodes().size() == L.nodeCount
        && topology->links().size() == L.linkCount && topology->spec == L.spec && topology->cluster == L.cluster;
    m_topology = std::move(topology);
    m_loads = std::move(loads);
    m_simulation = std::move(simulation);
    if (!sameShape) {
        m_openServer = -1;
        L.fitted = true;
    }
    if (m_callers.size() != (m_topology ? m_topology->links().size() : 0))
        m_callers.clear();
    const double keepScale = L.scale;
    const QPointF keepOffset = L.offset;
    rebuildLayout();
    if (sameShape && !L.fitted) {
        L.scale = keepScale;
        L.offset = keepOffset;
    }
    setTime(m_time);
}

void WireView::clear()
{
    m_topology.reset();
    m_loads.reset();
    m_simulation.reset();
    m_callers.clear();
    m_openServer = -1;
    *m_layout = Layout{};
    update();
}

void WireView::setLinkCallers(std::vector<QStringList> callersByLink)
{
    m_callers = std::move(callersByLink);
}

void WireView::setTime(double seconds)
{
    const double end = m_simulation ? m_simulation->stepSeconds : 0;
    m_time = std::clamp(std::isfinite(seconds) ? seconds : 0.0, 0.0, std::max(0.0, end));
    update();
}

void WireView::setTracedLinks(std::vector<std::pair<LinkId, double>> rowLinks, std::vector<LinkId> gradientLinks,
                              QString name)
{
    std::sort(rowLinks.begin(), rowLinks.end());
    std::sort(gradientLinks.begin(), gradientLinks.end());
    m_traced.clear();
    m_tracedBytes.clear();
    for (const auto& [l, b] : rowLinks) {
        m_traced.push_back(l);
        m_tracedBytes.push_back(b);
    }
    // A link carrying its row is drawn as such even when a gradient reduction crosses it too.
    gradientLinks.erase(std::remove_if(gradientLinks.begin(), gradientLinks.end(),
                                       [&](LinkId l) { return std::binary_search(m_traced.begin(), m_traced.end(), l); }),
                        gradientLinks.end());
    m_tracedGradient = std::move(gradientLinks);
    m_traceName = std::move(name);
    update();
}

void WireView::clearTracedLinks()
{
    setTracedLinks({}, {}, {});
}

double WireView::tracedBytes(LinkId link) const
{
    const auto it = std::lower_bound(m_traced.begin(), m_traced.end(), link);
    return it != m_traced.end() && *it == link ? m_tracedBytes[std::size_t(it - m_traced.begin())] : 0.0;
}

bool WireView::isTraced(LinkId link) const
{
    return std::binary_search(m_traced.begin(), m_traced.end(), link)
           || std::binary_search(m_tracedGradient.begin(), m_tracedGradient.end(), link);
}

void WireView::setDisplayUnits(DisplayUnits units)
{
    m_units = units;
    update();
}

void WireView::setHighlightedGpus(std::vector<int> gpus)
{
    std::sort(gpus.begin(), gpus.end());
    m_highlighted = std::move(gpus);
    Layout& L = *m_layout;
    ++L.generation;
    for (std::size_t s = 0; s < L.servers.size(); ++s)
        L.servers[s].highlighted = false;
    if (m_topology)
        for (const int g : m_highlighted)
            if (g >= 0 && std::uint64_t(g) < m_topology->gpuCount() && m_topology->gpuNode(std::uint64_t(g)) != network::kNoNode) {
                const auto server = m_topology->node(m_topology->gpuNode(std::uint64_t(g))).server;
                if (server >= 0 && std::size_t(server) < L.servers.size())
                    L.servers[std::size_t(server)].highlighted = true;
            }
    update();
}

// ---------------------------------------------------------------------------------------------
// Layout

bool WireView::compactServers() const
{
    return m_layout->servers.size() > std::size_t(kMaxDetailedServers);
}

void WireView::rebuildLayout()
{
    // One row of servers: the row gaps grow so that the drawing fills the widget's height too.
    Layout& L = *m_layout;
    L.gapScale = 1;
    layoutOnce();
    if (!L.fitted || L.servers.empty() || L.servers.size() > 8 || L.world.isEmpty())
        return;
    // The other way round when the height limits the scale: the gaps shrink (down to 0.45).
    const QRectF area = contentArea();
    const double h1 = L.world.height(), w1 = L.world.width();
    const double target = w1 * area.height() / area.width();
    if (std::abs(target - h1) < 0.02 * h1)
        return;
    L.gapScale = 2;
    layoutOnce();
    const double slope = L.world.height() - h1;
    const double g = slope > 0 ? std::clamp(1 + (target - h1) / slope, 0.45, 2.6) : 1.0;
    L.gapScale = g;
    layoutOnce();
}

void WireView::layoutOnce()
{
    Layout& L = *m_layout;
    ++L.generation;
    L.nodes.clear();
    L.servers.clear();
    L.segments.clear();
    L.segmentOf.clear();
    L.timeline.clear();
    L.hoveredSegment = -1;
    L.world = QRectF();
    if (!m_topology)
        return;
    const network::Topology& t = *m_topology;
    L.nodeCount = t.nodes().size();
    L.linkCount = t.links().size();
    L.spec = t.spec;
    L.cluster = t.cluster;
    L.nodes.resize(t.nodes().size());

    // Parts per server; switches outside servers.
    std::int64_t serverCount = 0;
    for (const auto& n : t.nodes())
        serverCount = std::max(serverCount, n.server + 1);
    std::vector<ServerParts> parts(static_cast<std::size_t>(serverCount));
    std::vector<NodeId> leaves, spines;
    for (NodeId id = 0; id < t.nodes().size(); ++id) {
        const network::Node& n = t.node(id);
        L.nodes[id].labels = labelsOf(n);
        if (n.server < 0) {
            (n.kind == NodeKind::SpineSwitch ? spines : leaves).push_back(id);
            continue;
        }
        ServerParts& p = parts[std::size_t(n.server)];
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
        case NodeKind::LeafSwitch: leaves.push_back(id); break;
        case NodeKind::SpineSwitch: spines.push_back(id); break;
        }
    }
    const bool compact = parts.size() > std::size_t(kMaxDetailedServers);
    if (!compact)
        m_openServer = -1;
    else if (m_openServer >= int(parts.size()))
        m_openServer = -1;

    // The in-server neighbour a part hangs from (its PCIe switch or the root complex).
    auto parentOf = [&](NodeId id) -> NodeId {
        for (const LinkId l : t.outLinks(id)) {
            const network::Node& o = t.node(t.link(l).to);
            if (o.kind == NodeKind::PcieSwitch || o.kind == NodeKind::RootComplex)
                return t.link(l).to;
        }
        return network::kNoNode;
    };

    // A detailed server: rows NICs, (host memory), root complex, PCIe switches, GPUs, NVSwitch; title at
    // the bottom. place = false only measures.
    const double kRowGap = ::tw::ui::kRowGap * L.gapScale;
    const double kTitleH = parts.size() > std::size_t(kMaxDetailedServers) ? 44 : parts.size() > 8 ? 100 : ::tw::ui::kTitleH;
    L.titleH = kTitleH;
    auto layoutServer = [&](const ServerParts& p, QPointF origin, bool place) -> QSizeF {
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
            y += kRowGap * 0.7;
            if (g > 0)
                put(p.nvswitch, (gpuX.front() + gpuX.back()) / 2, y, gpuX.back() - gpuX.front() + kGpuW, kNvH, true);
            else
                put(p.nvswitch, cx, y, 2 * kU, kNvH, true);
            y += kNvH;
        }
        y += kTitleH + 6;
        if (place) {
            std::map<NodeId, std::vector<double>> below; // switch → x of its GPUs
            for (int k = 0; k < g; ++k) {
                put(p.gpus[std::size_t(k)], gpuX[std::size_t(k)], gpuY, kGpuW, kGpuH);
                below[parentOf(p.gpus[std::size_t(k)])].push_back(gpuX[std::size_t(k)]);
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
                ++siblings[parentOf(nic)];
            for (std::size_t i = 0; i < p.nics.size(); ++i) {
                const NodeId nic = p.nics[i];
                double x = cx;
                if (perGpu) {
                    x = gpuX[i];
                } else {
                    const NodeId par = parentOf(nic);
                    if (par != network::kNoNode && L.nodes[par].rect.isValid())
                        x = L.nodes[par].rect.center().x();
                    x += (seen[par]++ - (siblings[par] - 1) / 2.0) * kU * 0.9;
                }
                put(nic, x, nicY, kNicW, kNicH);
            }
        }
        return {width, y - origin.y()};
    };

    // Server sizes (compact ones except the opened one).
    const std::size_t S = parts.size();
    std::vector<QSizeF> size(S);
    for (std::size_t s = 0; s < S; ++s)
        size[s] = compact && int(s) != m_openServer ? QSizeF(kCompactW, kCompactH) : layoutServer(parts[s], {}, false);

    // Grid: one row up to 8 servers (no link crosses a server), else the column count that frames best.
    const QRectF area = contentArea();
    const double aw = std::max(200.0, area.width()), ah = std::max(150.0, area.height());
    const double gx = compact ? 40 : 60, gy = compact ? 60 : 70;
    // Switch rows: boxes and gaps grow with the width of the grid so that their labels stay readable.
    double estW = 0;
    for (std::size_t s = 0; s < S; ++s)
        estW += size[s].width() + gx;
    auto switchH = [&](double gridWidth) { return std::clamp(gridWidth / 45, kSwitchRowH, 220.0); };
    const double sh0 = switchH(S > 8 ? std::sqrt(double(S)) * estW / double(S) * 1.3 : estW);
    const double topRows = (spines.empty() ? 0 : sh0 + 130 * L.gapScale + sh0) + (leaves.empty() ? 0 : sh0 + 150 * L.gapScale + sh0);
    auto gridOf = [&](int cols, std::vector<double>& colW, std::vector<double>& rowH) {
        const int rows = int((S + std::size_t(cols) - 1) / std::size_t(cols));
        colW.assign(std::size_t(cols), 0);
        rowH.assign(std::size_t(rows), 0);
        for (std::size_t s = 0; s < S; ++s) {
            colW[s % std::size_t(cols)] = std::max(colW[s % std::size_t(cols)], size[s].width());
            rowH[s / std::size_t(cols)] = std::max(rowH[s / std::size_t(cols)], size[s].height());
        }
    };
    int bestCols = std::max<int>(1, int(S));
    if (S > 8) {
        double bestScale = -1;
        std::vector<double> cw, rh;
        for (int c = 1; c <= int(S); ++c) {
            gridOf(c, cw, rh);
            double w = gx * (c - 1), h = topRows + gy * double(rh.size() - 1);
            for (double v : cw)
                w += v;
            for (double v : rh)
                h += v;
            const std::size_t rows = rh.size(), empty = rows * std::size_t(c) - S;
            const double sc = std::min(aw / w, ah / h) * (1 - 0.25 * double(empty) / double(rows * std::size_t(c)));
            if (sc > bestScale * 1.0001) {
                bestScale = sc;
                bestCols = c;
            }
        }
    }
    L.serverColumns = bestCols;
    L.serverRows = S == 0 ? 0 : int((S + std::size_t(bestCols) - 1) / std::size_t(bestCols));
    std::vector<double> colW, rowH;
    if (S > 0)
        gridOf(bestCols, colW, rowH);
    double gridW = 0;
    for (double v : colW)
        gridW += v;
    gridW += gx * double(std::max<std::ptrdiff_t>(0, std::ptrdiff_t(colW.size()) - 1));
    if (S == 0)
        gridW = std::max<double>(leaves.size(), spines.size()) * 2 * kU;

    // Switch rows above the servers, spread over the grid's width.
    const double sh = switchH(gridW);
    auto placeRow = [&](const std::vector<NodeId>& row, double y) {
        if (row.empty())
            return;
        const double pitch = gridW / double(row.size());
        const bool single = row.size() == 1;
        const double w = single ? std::max(2.6 * kU, sh * 4) : std::min(std::max(1.9 * kU, sh * 3.4), pitch * 0.86);
        for (std::size_t i = 0; i < row.size(); ++i) {
            const double x = (double(i) + 0.5) * pitch;
            L.nodes[row[i]].rect = QRectF(x - w / 2, y, w, sh);
        }
    };
    double y = 0;
    if (!spines.empty()) {
        placeRow(spines, y);
        y += sh + 130 * L.gapScale + sh;
    }
    if (!leaves.empty()) {
        placeRow(leaves, y);
        y += sh + 150 * L.gapScale + sh;
    }
    L.servers.resize(S);
    {
        std::vector<double> colX(colW.size()), rowY(rowH.size());
        double x = 0;
        for (std::size_t c = 0; c < colW.size(); ++c) {
            colX[c] = x;
            x += colW[c] + gx;
        }
        double ry = y;
        for (std::size_t r = 0; r < rowH.size(); ++r) {
            rowY[r] = ry;
            ry += rowH[r] + gy;
        }
        for (std::size_t s = 0; s < S; ++s) {
            const std::size_t c = s % std::size_t(bestCols), r = s / std::size_t(bestCols);
            const QPointF origin(colX[c] + (colW[c] - size[s].width()) / 2, rowY[r]);
            Layout::ServerGeom& sg = L.servers[s];
            sg.rect = QRectF(origin, size[s]);
            sg.compact = compact && int(s) != m_openServer;
            const ServerParts& p = parts[s];
            const QString range = p.gpuLo < 0 ? QString()
                : p.gpuLo == p.gpuHi ? QStringLiteral("GPU %1").arg(p.gpuLo)
                                     : QStringLiteral("GPUs %1–%2").arg(p.gpuLo).arg(p.gpuHi);
            sg.titles = {QStringLiteral("server %1 · %2").arg(s).arg(range), QStringLiteral("server %1").arg(s),
                         QStringLiteral("s%1").arg(s), QString::number(s)};
            if (range.isEmpty())
                sg.titles.removeFirst();
            sg.subtitle = range;
            if (!sg.compact)
                layoutServer(p, origin, true);
        }
    }

    // Node looks.
    for (NodeId id = 0; id < t.nodes().size(); ++id) {
        const NodeKind k = t.node(id).kind;
        L.nodes[id].dark = k == NodeKind::Gpu || k == NodeKind::NvSwitch;
    }

    // Segments: each drawn link direction; links of a compact server to the same outside node merge into
    // one line, links inside a compact server are not drawn.
    L.segmentOf.assign(t.links().size(), -1);
    const auto objects = NodeId(t.nodes().size());
    auto objectOf = [&](NodeId n) -> NodeId {
        const auto s = t.node(n).server;
        if (s >= 0 && std::size_t(s) < S && L.servers[std::size_t(s)].compact)
            return objects + NodeId(s);
        return n;
    };
    auto rectOf = [&](NodeId obj) -> QRectF {
        return obj >= objects ? L.servers[obj - objects].rect : L.nodes[obj].rect;
    };
    auto barOf = [&](NodeId obj) { return obj < objects && L.nodes[obj].bar; };
    // A leaf or spine spreads its links along its top and bottom edges, in the order of their other ends.
    auto isSwitch = [&](NodeId obj) {
        return obj < objects && (t.node(obj).kind == NodeKind::LeafSwitch || t.node(obj).kind == NodeKind::SpineSwitch);
    };
    std::map<std::pair<NodeId, NodeId>, double> spreadX; // (switch, other object) → anchor x
    {
        std::map<NodeId, std::vector<std::pair<double, NodeId>>> above, below;
        for (const network::Link& link : t.links()) {
            const NodeId a = objectOf(link.from), b = objectOf(link.to);
            if (!isSwitch(a) || a == b || rectOf(b).isNull() || rectOf(a).isNull())
                continue;
            const QPointF other = rectOf(b).center();
            (other.y() < rectOf(a).center().y() ? above : below)[a].push_back({other.x(), b});
        }
        for (auto* side : {&above, &below})
            for (auto& [sw, ends] : *side) {
                std::sort(ends.begin(), ends.end());
                ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
                const QRectF r = rectOf(sw);
                const double margin = std::min(r.width() * 0.12, 14.0);
                for (std::size_t i = 0; i < ends.size(); ++i)
                    spreadX[{sw, ends[i].second}] = ends.size() == 1
                        ? r.center().x()
                        : r.left() + margin + (r.width() - 2 * margin) * double(i) / double(ends.size() - 1);
            }
    }
    auto switchAnchor = [&](NodeId sw, NodeId other, QPointF& anchor) {
        const auto it = spreadX.find({sw, other});
        if (it == spreadX.end())
            return;
        const QRectF r = rectOf(sw);
        anchor = QPointF(it->second, rectOf(other).center().y() < r.center().y() ? r.top() : r.bottom());
    };
    std::map<std::pair<NodeId, NodeId>, int> merged;
    for (LinkId l = 0; l < t.links().size(); ++l) {
        const network::Link& link = t.link(l);
        const NodeId a = objectOf(link.from), b = objectOf(link.to);
        if (a == b)
            continue;
        const QRectF ra = rectOf(a), rb = rectOf(b);
        if (ra.isNull() || rb.isNull())
            continue;
        if (a >= objects || b >= objects) {
            const auto it = merged.find({a, b});
            if (it != merged.end()) {
                Layout::Segment& seg = L.segments[std::size_t(it->second)];
                seg.members.push_back(l);
                seg.bandwidth += link.bandwidth;
                seg.width = capacityWidth(seg.bandwidth);
                L.segmentOf[l] = it->second;
                continue;
            }
            merged[{a, b}] = int(L.segments.size());
        }
        // Anchors: a bar takes the link straight above or below the other end.
        QPointF ta = rb.center(), tb = ra.center();
        if (barOf(b) && ra.center().x() > rb.left() && ra.center().x() < rb.right())
            ta = QPointF(ra.center().x(), rb.center().y());
        if (barOf(a) && rb.center().x() > ra.left() && rb.center().x() < ra.right())
            tb = QPointF(rb.center().x(), ra.center().y());
        Layout::Segment seg;
        seg.rep = l;
        seg.members = {l};
        seg.a = edgeToward(ra, ta);
        seg.b = edgeToward(rb, tb);
        if (barOf(a))
            seg.a = QPointF(tb.x(), rb.center().y() < ra.center().y() ? ra.top() : ra.bottom());
        if (barOf(b))
            seg.b = QPointF(ta.x(), ra.center().y() < rb.center().y() ? rb.top() : rb.bottom());
        if (isSwitch(a))
            switchAnchor(a, b, seg.a);
        if (isSwitch(b))
            switchAnchor(b, a, seg.b);
        if (isSwitch(a) && !isSwitch(b) && !barOf(b))
            seg.b = edgeToward(rb, seg.a);
        if (isSwitch(b) && !isSwitch(a) && !barOf(a))
            seg.a = edgeToward(ra, seg.b);
        seg.bandwidth = link.bandwidth;
        seg.width = capacityWidth(link.bandwidth);
        seg.hash = l * 2654435761u;
        seg.between = t.node(link.from).server != t.node(link.to).server;
        L.segmentOf[l] = int(L.segments.size());
        L.segments.push_back(std::move(seg));
    }

    // Timelines and the busiest link.
    L.timeline.assign(t.links().size(), -1);
    if (m_simulation)
        for (std::size_t i = 0; i < m_simulation->linkTimelines.size(); ++i)
            if (m_simulation->linkTimelines[i].link < L.timeline.size())
                L.timeline[m_simulation->linkTimelines[i].link] = int(i);
    L.maxPayload = 0;
    for (std::size_t i = 0; i < L.segments.size(); ++i) {
        double payload = 0;
        for (const LinkId l : L.segments[i].members) {
            if (m_loads && l < m_loads->links.size())
                payload += m_loads->links[l].payload();
            else if (m_simulation && l < m_simulation->linkPayloadBytes.size())
                payload += m_simulation->linkPayloadBytes[l];
        }
        L.maxPayload = std::max(L.maxPayload, payload);
    }

    // World bounds.
    QRectF world;
    for (const auto& sg : L.servers)
        world = world.united(sg.rect);
    for (const auto& ng : L.nodes)
        if (!ng.rect.isNull())
            world = world.united(ng.rect);
    L.world = world.adjusted(-10, -10, 10, 10);
    if (L.fitted)
        fitTransform();
    update();
}

QRectF WireView::contentArea() const
{
    const QSizeF s = width() > 50 && height() > 50 ? QSizeF(size()) : QSizeF(1280, 720);
    return QRectF(8, 8, s.width() - 16, s.height() - 16 - kLegendPx);
}

void WireView::fitTransform()
{
    Layout& L = *m_layout;
    const QRectF area = contentArea();
    if (L.world.isEmpty() || area.isEmpty()) {
        L.scale = L.fitScale = 1;
        L.offset = {};
        return;
    }
    L.fitScale = std::min(area.width() / L.world.width(), area.height() / L.world.height());
    L.scale = L.fitScale;
    L.offset = area.center() - L.world.center() * L.scale;
    L.fitted = true;
}

void WireView::fitToView()
{
    m_layout->fitted = true;
    rebuildLayout(); // the grid of servers follows the widget's shape
    update();
}

double WireView::zoom() const
{
    return m_layout->fitScale > 0 ? m_layout->scale / m_layout->fitScale : 1;
}

void WireView::setZoom(double zoom)
{
    zoomAbout(QRectF(rect()).center(), std::clamp(zoom, 0.2, 40.0) / this->zoom());
}

void WireView::zoomAbout(QPointF anchor, double factor)
{
    Layout& L = *m_layout;
    const double next = std::clamp(L.scale * factor, L.fitScale * 0.2, L.fitScale * 40);
    if (next == L.scale)
        return;
    const QPointF w = toWorld(anchor);
    L.scale = next;
    L.offset = anchor - w * next;
    L.fitted = false;
    update();
}

void WireView::openServer(int server)
{
    if (!compactServers() || server < -1 || server >= int(m_layout->servers.size()))
        server = -1;
    if (server == m_openServer)
        return;
    m_openServer = server;
    Layout& L = *m_layout;
    L.fitted = true;
    rebuildLayout();
    // Zoom onto the opened server (its labels readable); 0 or Home shows everything again.
    if (server >= 0) {
        const QRectF r = L.servers[std::size_t(server)].rect;
        const QRectF area = contentArea();
        const double scale = std::min({L.fitScale * 40, 0.6 * area.width() / r.width(), 0.8 * area.height() / r.height()});
        if (scale > L.scale) {
            L.scale = scale;
            L.offset = area.center() - r.center() * scale;
            L.fitted = false;
        }
    }
    update();
    emit serverOpened(server);
}

QPointF WireView::toScreen(QPointF world) const
{
    return world * m_layout->scale + m_layout->offset;
}

QPointF WireView::toWorld(QPointF screen) const
{
    return (screen - m_layout->offset) / m_layout->scale;
}

// ---------------------------------------------------------------------------------------------
// Rates

WireView::Rates WireView::ratesOf(LinkId link) const
{
    Rates r;
    const Layout& L = *m_layout;
    if (!m_topology || link >= m_topology->links().size())
        return r;
    r.bandwidth = m_topology->link(link).bandwidth;
    if (!m_simulation || link >= L.timeline.size() || L.timeline[link] < 0)
        return r;
    const auto& samples = m_simulation->linkTimelines[std::size_t(L.timeline[link])].samples;
    const auto it = std::upper_bound(samples.begin(), samples.end(), m_time,
                                     [](double t, const network::RateSample& s) { return t < s.time; });
    if (it == samples.begin())
        return r;
    const network::RateSample& s = *(it - 1);
    if (!(s.rate > 0))
        return r;
    r.total = s.rate;
    const double known = s.strategyRate[0] + s.strategyRate[1] + s.strategyRate[2] + s.strategyRate[3];
    if (known > 0) {
        for (int k = 0; k < 4; ++k)
            r.byStrategy[k] = std::max(0.0, s.strategyRate[k]);
        r.unknown = std::max(0.0, s.rate - known) > 1e-6 * s.rate ? s.rate - known : 0;
        return r;
    }
    // No split in the sample: the link's share of payload by strategy over the whole step.
    if (m_loads && link < m_loads->links.size() && m_loads->links[link].payload() > 0) {
        const network::LinkLoad& load = m_loads->links[link];
        for (int k = 0; k < 4; ++k)
            r.byStrategy[k] = s.rate * load.payloadBytes[k] / load.payload();
        return r;
    }
    r.unknown = s.rate;
    return r;
}

WireView::Rates WireView::segmentRates(int segment) const
{
    const Layout::Segment& seg = m_layout->segments[std::size_t(segment)];
    if (seg.members.size() == 1)
        return ratesOf(seg.rep);
    Rates sum;
    for (const LinkId l : seg.members) {
        const Rates r = ratesOf(l);
        sum.total += r.total;
        sum.unknown += r.unknown;
        sum.bandwidth += r.bandwidth;
        for (int k = 0; k < 4; ++k)
            sum.byStrategy[k] += r.byStrategy[k];
    }
    return sum;
}

double WireView::drawnUtilization(LinkId link) const
{
    const Layout& L = *m_layout;
    if (link >= L.segmentOf.size() || L.segmentOf[link] < 0) {
        const Rates r = ratesOf(link);
        return r.bandwidth > 0 ? r.total / r.bandwidth : 0;
    }
    const Rates r = segmentRates(L.segmentOf[link]);
    return r.bandwidth > 0 ? r.total / r.bandwidth : 0;
}

QColor WireView::drawnColor(LinkId link) const
{
    const Layout& L = *m_layout;
    if (m_simulation || link >= L.segmentOf.size() || L.segmentOf[link] < 0)
        return loadColor(drawnUtilization(link));
    // Without a simulation: the share of the busiest line's payload.
    double payload = 0;
    for (const LinkId l : L.segments[std::size_t(L.segmentOf[link])].members)
        if (m_loads && l < m_loads->links.size())
            payload += m_loads->links[l].payload();
    return loadColor(L.maxPayload > 0 ? payload / L.maxPayload : 0);
}

// ---------------------------------------------------------------------------------------------
// Geometry queries

std::optional<QPointF> WireView::nodeCenter(NodeId node) const
{
    const Layout& L = *m_layout;
    if (node >= L.nodes.size() || L.nodes[node].rect.isNull())
        return std::nullopt;
    const auto server = m_topology->node(node).server;
    if (server >= 0 && std::size_t(server) < L.servers.size() && L.servers[std::size_t(server)].compact)
        return std::nullopt;
    return toScreen(L.nodes[node].rect.center());
}

std::optional<QPointF> WireView::linkMidpoint(LinkId link) const
{
    const Layout& L = *m_layout;
    if (link >= L.segmentOf.size() || L.segmentOf[link] < 0)
        return std::nullopt;
    const int seg = L.segmentOf[link];
    const ScreenLine s = L.line(L.segments[std::size_t(seg)]);
    // The middle, or the nearest point along the line where no other line is closer (rail links of
    // mirrored servers cross at their middles).
    for (const double t : {0.5, 0.44, 0.56, 0.38, 0.62, 0.32, 0.68, 0.26, 0.74, 0.2, 0.8}) {
        const QPointF p = s.p + (s.q - s.p) * t;
        if (segmentAt(QPointF(p.toPoint())) == seg && segmentAt(p) == seg)
            return p;
    }
    return (s.p + s.q) / 2;
}

int WireView::segmentAt(QPointF pos) const
{
    const Layout& L = *m_layout;
    int best = -1;
    double bestD = 1e18;
    for (std::size_t i = 0; i < L.segments.size(); ++i) {
        const ScreenLine s = L.line(L.segments[i]);
        const double d = segmentDistance(pos, s.p, s.q);
        if (d < bestD) {
            bestD = d;
            best = int(i);
        }
    }
    return bestD <= kHitPx ? best : -1;
}

std::optional<LinkId> WireView::linkAt(QPoint pos) const
{
    const int s = segmentAt(QPointF(pos));
    if (s < 0)
        return std::nullopt;
    return m_layout->segments[std::size_t(s)].rep;
}

std::optional<int> WireView::serverAt(QPoint pos) const
{
    const QPointF w = toWorld(QPointF(pos));
    const auto& servers = m_layout->servers;
    for (std::size_t s = 0; s < servers.size(); ++s)
        if (servers[s].rect.contains(w))
            return int(s);
    return std::nullopt;
}

std::optional<QRectF> WireView::serverRect(int server) const
{
    const auto& servers = m_layout->servers;
    if (server < 0 || std::size_t(server) >= servers.size())
        return std::nullopt;
    const QRectF& r = servers[std::size_t(server)].rect;
    return QRectF(toScreen(r.topLeft()), toScreen(r.bottomRight()));
}

std::vector<LinkId> WireView::drawnWith(LinkId link) const
{
    const Layout& L = *m_layout;
    if (link >= L.segmentOf.size() || L.segmentOf[link] < 0)
        return {};
    return L.segments[std::size_t(L.segmentOf[link])].members;
}

int WireView::packetsDrawn() const
{
    return m_layout->packets;
}

int WireView::packetsDrawn(parallel::Strategy strategy) const
{
    const int k = int(strategy);
    return k >= 0 && k < 4 ? m_layout->packetsBy[k] : 0;
}

std::optional<LinkId> WireView::hoveredLink() const
{
    const int s = m_layout->hoveredSegment;
    if (s < 0 || std::size_t(s) >= m_layout->segments.size())
        return std::nullopt;
    return m_layout->segments[std::size_t(s)].rep;
}

QString WireView::linkToolTip(LinkId link) const
{
    auto bytesIn = [this](double v) { return bytesText(v, m_units); };
    auto rateIn = [this](double v) { return rateText(v, m_units); };
    if (!m_topology || link >= m_topology->links().size())
        return {};
    const network::Topology& t = *m_topology;
    const network::Link& l = t.link(link);
    std::vector<LinkId> members = drawnWith(link);
    if (members.empty())
        members = {link};
    QStringList lines;
    double bandwidth = 0, payload = 0, wire = 0, payloadBy[4] = {0, 0, 0, 0};
    bool haveLoads = false;
    for (const LinkId m : members) {
        bandwidth += t.link(m).bandwidth;
        if (m_loads && m < m_loads->links.size()) {
            haveLoads = true;
            const network::LinkLoad& ll = m_loads->links[m];
            payload += ll.payload();
            wire += ll.wireBytes;
            for (int k = 0; k < 4; ++k)
                payloadBy[k] += ll.payloadBytes[k];
        } else if (m_simulation && m < m_simulation->linkPayloadBytes.size()) {
            payload += m_simulation->linkPayloadBytes[m];
        }
    }
    const QString from = qs(t.node(l.from).name), to = qs(t.node(l.to).name);
    if (members.size() > 1)
        lines << QStringLiteral("<b>%1 links, one line</b> (server %2's NICs ↔ %3)")
                     .arg(members.size())
                     .arg(std::max(t.node(l.from).server, t.node(l.to).server))
                     .arg(t.node(l.from).server >= 0 ? to : from);
    lines << QStringLiteral("<b>%1</b>  (%2 → %3)").arg(qs(l.id), from, to);
    lines << QStringLiteral("%1, %2 per direction%3")
                 .arg(qs(std::string(network::displayName(l.protocol))), rateIn(l.bandwidth),
                      members.size() > 1 ? QStringLiteral(" (Σ %1)").arg(rateIn(bandwidth)) : QString());
    if (haveLoads || payload > 0) {
        QStringList by;
        for (int k = 0; k < 4; ++k)
            if (payloadBy[k] > 0)
                by << QStringLiteral("%1 %2").arg(QLatin1String(kStrategyName[k]), bytesIn(payloadBy[k]));
        lines << QStringLiteral("Payload per step: %1%2").arg(bytesIn(payload), by.isEmpty() ? QString() : QStringLiteral(" (") + by.join(QStringLiteral(", ")) + QStringLiteral(")"));
        if (haveLoads)
            lines << QStringLiteral("Wire bytes per step: %1").arg(bytesIn(wire));
    }
    if (m_simulation && m_simulation->stepSeconds > 0 && bandwidth > 0) {
        const double u = payload / (bandwidth * m_simulation->stepSeconds);
        lines << QStringLiteral("Utilization over the step: %1 = %2 / (%3 × %4)")
                     .arg(percent(u), bytesIn(payload), rateIn(bandwidth), qs(formatSeconds(m_simulation->stepSeconds)));
        Rates now;
        for (const LinkId m : members) {
            const Rates r = ratesOf(m);
            now.total += r.total;
            now.unknown += r.unknown;
            for (int k = 0; k < 4; ++k)
                now.byStrategy[k] += r.byStrategy[k];
        }
        QStringList by;
        for (int k = 0; k < 4; ++k)
            if (now.byStrategy[k] > 0)
                by << QStringLiteral("%1 %2").arg(QLatin1String(kStrategyName[k]), rateIn(now.byStrategy[k]));
        lines << QStringLiteral("Rate at %1: %2 (%3 of the bandwidth)%4")
                     .arg(qs(formatSeconds(m_time)), rateIn(now.total), percent(now.total / bandwidth),
                          by.isEmpty() ? QString() : QStringLiteral(": ") + by.join(QStringLiteral(", ")));
    }
    // The followed token (the story's live thread).
    double tokenBytes = 0;
    bool tokenGradient = false;
    for (const LinkId m : members) {
        tokenBytes += tracedBytes(m);
        tokenGradient = tokenGradient || std::binary_search(m_tracedGradient.begin(), m_tracedGradient.end(), m);
    }
    if (tokenBytes > 0)
        lines << QStringLiteral("<b>%1</b>: its row crosses here, %2 per step").arg(m_traceName.toHtmlEscaped(), bytesIn(tokenBytes));
    else if (tokenGradient)
        lines << QStringLiteral("<b>%1</b>: a gradient reduction it feeds crosses here (no byte is its own)")
                     .arg(m_traceName.toHtmlEscaped());
    QStringList callers;
    for (const LinkId m : members)
        if (m < m_callers.size())
            for (const QString& c : m_callers[m])
                if (!callers.contains(c))
                    callers << c;
    if (!callers.isEmpty()) {
        lines << QStringLiteral("Used by:");
        const int shown = std::min<int>(int(callers.size()), 8);
        for (int i = 0; i < shown; ++i)
            lines << QStringLiteral("&nbsp;&nbsp;• ") + callers[i].toHtmlEscaped();
        if (callers.size() > shown)
            lines << QStringLiteral("&nbsp;&nbsp;… and %1 more").arg(callers.size() - shown);
    }
    return QStringLiteral("<p style='white-space:pre'>") + lines.join(QStringLiteral("<br>")) + QStringLiteral("</p>");
}

// ---------------------------------------------------------------------------------------------
// Painting

namespace {

// Draws the first candidate that fits `box` (font size from the box height, capped; a candidate may
// shrink to 3/4 of it before the next, shorter one is tried), centred.
void drawFittedLabel(QPainter& p, const QRectF& box, const QStringList& candidates, const QColor& color, bool bold,
                     double maxPx = 17)
{
    const double px = std::min(maxPx, box.height() * 0.52);
    if (px < 7.5 || candidates.isEmpty())
        return;
    const double room = box.width() - std::min(8.0, box.width() * 0.12);
    for (const QString& c : candidates)
        for (const double f : {1.0, 0.86, 0.75}) {
            if (px * f < 10 && f < 1)
                break;
            const QFont font = pixelFont(px * f, bold);
            if (QFontMetricsF(font).horizontalAdvance(c) <= room) {
                p.setFont(font);
                p.setPen(color);
                p.drawText(box, Qt::AlignCenter, c);
                return;
            }
        }
}

} // namespace

void WireView::paintServers(QPainter& p) const
{
    const Layout& L = *m_layout;
    const network::Topology& t = *m_topology;
    const QRectF view = QRectF(rect()).adjusted(-20, -20, 20, 20);
    auto screenRect = [&](const QRectF& w) { return QRectF(toScreen(w.topLeft()), toScreen(w.bottomRight())); };
    // Detailed titles all in the same (longest fitting) form.
    int titleForm = 0;
    {
        const double th = L.titleH * L.scale;
        const QFontMetricsF fm(pixelFont(std::min(16.0, th * 0.52), true));
        for (const auto& sg : L.servers) {
            if (sg.compact)
                continue;
            const double room = sg.rect.width() * L.scale - 12 - 8;
            while (titleForm + 1 < int(sg.titles.size()) && fm.horizontalAdvance(sg.titles[titleForm]) > room)
                ++titleForm;
        }
    }
    for (std::size_t s = 0; s < L.servers.size(); ++s) {
        const Layout::ServerGeom& sg = L.servers[s];
        const QRectF r = screenRect(sg.rect);
        if (!r.intersects(view))
            continue;
        const bool open = int(s) == m_openServer;
        p.setPen(QPen(sg.highlighted || open ? kInk : kServerLine, sg.highlighted || open ? 2.5 : 1.2));
        p.setBrush(sg.compact ? (sg.highlighted ? kGpuHighlight : kSwitchFill) : kServerFill);
        const double radius = std::min(8.0, r.height() * 0.1);
        p.drawRoundedRect(r, radius, radius);
        if (sg.compact) {
            const QRectF top(r.left(), r.top() + r.height() * 0.12, r.width(), r.height() * 0.42);
            const QRectF bottom(r.left(), r.top() + r.height() * 0.52, r.width(), r.height() * 0.34);
            if (top.height() * 0.52 >= 7.5) {
                drawFittedLabel(p, top, sg.titles.mid(1), kInk, true, 16);
                drawFittedLabel(p, bottom, {sg.subtitle, QString::number(t.cluster.gpusPerNode)}, kMuted, false, 14);
            } else {
                // Too small for two lines (many servers at the fitted zoom): the server's number alone.
                QStringList one = sg.titles.mid(1);
                one << QString::number(s);
                drawFittedLabel(p, r, one, kInk, true, 14);
            }
        } else {
            const double th = L.titleH * L.scale;
            const QRectF title(r.left() + 6, r.bottom() - th - 2, r.width() - 12, th);
            drawFittedLabel(p, title, sg.titles.mid(std::min<int>(titleForm, int(sg.titles.size()) - 1)), kMuted, true, 16);
        }
    }

}

void WireView::paintNodes(QPainter& p) const
{
    const Layout& L = *m_layout;
    const network::Topology& t = *m_topology;
    const QRectF view = QRectF(rect()).adjusted(-20, -20, 20, 20);
    auto screenRect = [&](const QRectF& w) { return QRectF(toScreen(w.topLeft()), toScreen(w.bottomRight())); };
    const std::size_t S = L.servers.size();
    auto drawn = [&](NodeId id) {
        const network::Node& node = t.node(id);
        return !L.nodes[id].rect.isNull()
            && !(node.server >= 0 && std::size_t(node.server) < S && L.servers[std::size_t(node.server)].compact);
    };
    // One label form per kind of node (all GPUs "GPU 12", or all "12"): the first candidate whose
    // longest text fits the kind's smallest box, at a font that may shrink to 3/4.
    constexpr int kKinds = 8;
    struct Form {
        int index = -1;  // -1: no label fits
        double px = 0;
    };
    std::array<Form, kKinds> forms;
    {
        std::array<QSizeF, kKinds> minBox;
        std::array<QStringList, kKinds> longest;
        minBox.fill(QSizeF(1e18, 1e18));
        for (NodeId id = 0; id < L.nodes.size(); ++id) {
            if (!drawn(id))
                continue;
            const int k = int(t.node(id).kind);
            const QSizeF box = L.nodes[id].rect.size() * L.scale;
            minBox[std::size_t(k)] = QSizeF(std::min(minBox[std::size_t(k)].width(), box.width()),
                                            std::min(minBox[std::size_t(k)].height(), box.height()));
            const QStringList& labels = L.nodes[id].labels;
            QStringList& l = longest[std::size_t(k)];
            for (int i = 0; i < int(labels.size()); ++i) {
                if (i >= int(l.size()))
                    l << labels[i];
                else if (labels[i].size() > l[i].size())
                    l[i] = labels[i];
            }
        }
        for (int k = 0; k < kKinds; ++k) {
            const QSizeF box = minBox[std::size_t(k)];
            if (box.width() > 1e17)
                continue;
            const bool bold = k == int(NodeKind::Gpu) || k == int(NodeKind::LeafSwitch) || k == int(NodeKind::SpineSwitch)
                || k == int(NodeKind::NvSwitch);
            const double px = std::min(20.0, box.height() * 0.5);
            if (px < 7.5)
                continue;
            const double room = box.width() - std::min(8.0, box.width() * 0.12);
            const QStringList& l = longest[std::size_t(k)];
            for (int i = 0; i < int(l.size()) && forms[std::size_t(k)].index < 0; ++i)
                for (const double f : {1.0, 0.86, 0.75}) {
                    if (px * f < 10 && f < 1)
                        break;
                    if (QFontMetricsF(pixelFont(px * f, bold)).horizontalAdvance(l[i]) <= room) {
                        forms[std::size_t(k)] = {i, px * f};
                        break;
                    }
                }
        }
    }
    for (NodeId id = 0; id < L.nodes.size(); ++id) {
        if (!drawn(id))
            continue;
        const Layout::NodeGeom& ng = L.nodes[id];
        const network::Node& node = t.node(id);
        const QRectF r = screenRect(ng.rect);
        if (!r.intersects(view))
            continue;
        const bool highlighted = node.kind == NodeKind::Gpu
            && std::binary_search(m_highlighted.begin(), m_highlighted.end(), int(node.gpu));
        QColor fill = kPartFill, text = kInk;
        switch (node.kind) {
        case NodeKind::Gpu: fill = highlighted ? kGpuHighlight : kGpuFill; text = highlighted ? kInk : QColor(Qt::white); break;
        case NodeKind::NvSwitch: fill = kNvSwitchFill; text = Qt::white; break;
        case NodeKind::LeafSwitch:
        case NodeKind::SpineSwitch:
        case NodeKind::PcieSwitch: fill = kSwitchFill; break;
        default: break;
        }
        p.setPen(QPen(highlighted ? kInk : (ng.dark ? kGpuFill : kServerLine), highlighted ? 3 : 1.2));
        p.setBrush(fill);
        const double radius = std::min(5.0, r.height() * 0.15);
        p.drawRoundedRect(r, radius, radius);
        const Form& form = forms[std::size_t(node.kind)];
        if (form.index < 0 || ng.labels.isEmpty())
            continue;
        const bool bold = node.kind == NodeKind::Gpu || node.kind == NodeKind::LeafSwitch
            || node.kind == NodeKind::SpineSwitch || node.kind == NodeKind::NvSwitch;
        p.setFont(pixelFont(form.px, bold));
        p.setPen(text);
        p.drawText(r, Qt::AlignCenter, ng.labels[std::min<int>(form.index, int(ng.labels.size()) - 1)]);
    }
}

void WireView::paintEvent(QPaintEvent*)
{
    Layout& L = *m_layout;
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    L.packets = 0;
    std::fill(std::begin(L.packetsBy), std::end(L.packetsBy), 0);
    if (!m_topology || L.world.isNull()) {
        p.setPen(kMuted);
        p.setFont(pixelFont(16, false));
        p.drawText(rect(), Qt::AlignCenter, tr("No fabric to draw"));
        return;
    }
    const QRectF view = QRectF(rect()).adjusted(-20, -20, 20, 20);
    p.setRenderHint(QPainter::Antialiasing, true);

    // Where each line is and what it carries now.
    const std::size_t n = L.segments.size();
    std::vector<ScreenLine> lines(n);
    std::vector<char> visible(n, 0);
    std::vector<Rates> rates(n);
    for (std::size_t i = 0; i < n; ++i) {
        lines[i] = L.line(L.segments[i]);
        const QRectF box = QRectF(lines[i].p, lines[i].q).normalized().adjusted(-8, -8, 8, 8);
        visible[i] = box.intersects(view);
        if (visible[i])
            rates[i] = segmentRates(int(i));
    }
    // Per line: 1 = carries the followed token's row, 2 = only a gradient reduction it feeds, 0 = neither.
    std::vector<char> traced(n, 0);
    if (!m_traced.empty() || !m_tracedGradient.empty())
        for (std::size_t i = 0; i < n; ++i)
            for (const LinkId m : L.segments[i].members) {
                if (std::binary_search(m_traced.begin(), m_traced.end(), m)) {
                    traced[i] = 1;
                    break;
                }
                if (std::binary_search(m_tracedGradient.begin(), m_tracedGradient.end(), m))
                    traced[i] = 2;
            }
    auto drawLines = [&](bool between) {
        for (std::size_t i = 0; i < n; ++i) {
            if (!visible[i] || L.segments[i].between != between)
                continue;
            if (int(i) == L.hoveredSegment) {
                p.setPen(QPen(kInk, lines[i].width + 3, Qt::SolidLine, Qt::FlatCap));
                p.drawLine(lines[i].p, lines[i].q);
            }
            // The followed token's links: a yellow glow with a dark rim under the load colour (solid where
            // its row crosses, dashed where only a gradient reduction it feeds does).
            if (traced[i] == 1) {
                p.setPen(QPen(kInk, lines[i].width + 7, Qt::SolidLine, Qt::RoundCap));
                p.drawLine(lines[i].p, lines[i].q);
                p.setPen(QPen(kTokenGlow, lines[i].width + 4, Qt::SolidLine, Qt::RoundCap));
                p.drawLine(lines[i].p, lines[i].q);
            } else if (traced[i] == 2) {
                p.setPen(QPen(kInk, lines[i].width + 4, Qt::DashLine, Qt::FlatCap));
                p.drawLine(lines[i].p, lines[i].q);
            }
            QColor c = m_simulation ? loadColor(rates[i].bandwidth > 0 ? rates[i].total / rates[i].bandwidth : 0)
                                    : drawnColor(L.segments[i].rep);
            if (L.serverRows > 1 && !(rates[i].total > 0) && int(i) != L.hoveredSegment)
                c.setAlpha(m_simulation ? 90 : 160); // a grid of servers: idle lines recede
            p.setPen(QPen(c, lines[i].width, Qt::SolidLine, Qt::FlatCap));
            p.drawLine(lines[i].p, lines[i].q);
        }
    };

    // Packets: one stream per strategy on each line carrying traffic now; spacing ∝ bandwidth / rate,
    // the phase moving with the time. Thinned evenly beyond kMaxPackets.
    struct Stream {
        int segment, strategy; // strategy 4 = unknown
        double spacing;
    };
    std::vector<Stream> streams;
    double thin = 1;
    const bool moving = m_simulation && m_simulation->stepSeconds > 0;
    if (moving) {
        double expected = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (!visible[i] || !(rates[i].total > 0) || !(rates[i].bandwidth > 0))
                continue;
            const double len = std::hypot(lines[i].q.x() - lines[i].p.x(), lines[i].q.y() - lines[i].p.y());
            for (int k = 0; k < 5; ++k) {
                const double r = k < 4 ? rates[i].byStrategy[k] : rates[i].unknown;
                if (!(r > 0))
                    continue;
                const double share = std::min(1.0, r / rates[i].bandwidth);
                const double spacing = kMinSpacingPx / std::max(share, 1e-4);
                streams.push_back({int(i), k, spacing});
                expected += len / spacing + 1;
            }
        }
        thin = expected > kMaxPackets ? expected / kMaxPackets : 1.0;
    }
    const double phase = moving ? m_time / m_simulation->stepSeconds * kTravelPxPerStep : 0;
    const double dot = std::clamp(5.0 * L.lineScale() + 1, 3.0, 6.0);
    int budget = kMaxPackets;
    auto drawPackets = [&](bool between) {
        std::array<std::vector<QRectF>, 5> inner;
        for (const Stream& st : streams) {
            if (L.segments[std::size_t(st.segment)].between != between)
                continue;
            const ScreenLine& ln = lines[std::size_t(st.segment)];
            const QPointF d = ln.q - ln.p;
            const double len = std::hypot(d.x(), d.y());
            if (len < 1)
                continue;
            const double spacing = st.spacing * thin;
            const auto h = L.segments[std::size_t(st.segment)].hash;
            double pos = std::fmod(phase + double(h % 997) + st.strategy * spacing * 0.23, spacing);
            const QPointF u = d / len;
            for (; pos < len && budget > 0; pos += spacing) {
                const QPointF c = ln.p + u * pos;
                inner[std::size_t(st.strategy)].push_back(QRectF(c.x() - dot / 2, c.y() - dot / 2, dot, dot));
                --budget;
                ++L.packets;
                if (st.strategy < 4)
                    ++L.packetsBy[st.strategy];
            }
        }
        // Squares with a white rim (visible on a line of their own colour).
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setPen(QPen(Qt::white, 0));
        for (std::size_t k = 0; k < 5; ++k) {
            if (inner[k].empty())
                continue;
            p.setBrush(k < 4 ? palette::kStrategy[k] : kUnknownStrategy);
            p.drawRects(inner[k].data(), int(inner[k].size()));
        }
        p.setRenderHint(QPainter::Antialiasing, true);
    };

    // 1. Lines between servers and switches (under the server boxes: in a grid they pass behind).
    drawLines(true);
    drawPackets(true);

    // 2. Server boxes, 3. lines inside servers, then the nodes and their labels (both static layers are
    // cached images, redrawn when the view moves), then those lines' packets.
    const QSize pixels = size() * devicePixelRatioF();
    const bool stale = L.cacheKey.scale != L.scale || L.cacheKey.offset != L.offset || L.cacheKey.pixels != pixels
        || L.cacheKey.generation != L.generation || L.serverLayer.isNull();
    if (stale) {
        L.cacheKey = {L.scale, L.offset, pixels, L.generation};
        for (QImage* layer : {&L.serverLayer, &L.nodeLayer}) {
            *layer = QImage(pixels, QImage::Format_ARGB32_Premultiplied);
            layer->setDevicePixelRatio(devicePixelRatioF());
            layer->fill(Qt::transparent);
        }
        {
            QPainter q(&L.serverLayer);
            q.setRenderHint(QPainter::Antialiasing, true);
            paintServers(q);
        }
        QPainter q(&L.nodeLayer);
        q.setRenderHint(QPainter::Antialiasing, true);
        paintNodes(q);
    }
    p.drawImage(QPointF(0, 0), L.serverLayer);
    drawLines(false);
    p.drawImage(QPointF(0, 0), L.nodeLayer);
    drawPackets(false);
    drawLegend(p);
}

void WireView::drawLegend(QPainter& p) const
{
    const QRectF strip(0, height() - kLegendPx, width(), kLegendPx);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.fillRect(strip, QColor(255, 255, 255, 235));
    p.setPen(QPen(QColor(0xE2, 0xE8, 0xF0), 1));
    p.drawLine(strip.topLeft(), strip.topRight());
    const QFont font = pixelFont(14, false);
    const QFontMetricsF fm(font);
    p.setFont(font);
    double x = 12;
    const double cy = strip.center().y();
    p.setPen(kMuted);
    const QString head = tr("Packets:");
    p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), head);
    x += fm.horizontalAdvance(head) + 8;
    for (int k = 0; k < 4; ++k) {
        p.fillRect(QRectF(x - 1, cy - 6, 12, 12), Qt::white);
        p.fillRect(QRectF(x, cy - 5, 10, 10), palette::kStrategy[k]);
        x += 14;
        const QString name = QLatin1String(kStrategyName[k]);
        p.setPen(kInk);
        p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), name);
        x += fm.horizontalAdvance(name) + 14;
    }
    x += 10;
    p.setPen(kMuted);
    const QString load = tr("Load now:");
    p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), load);
    x += fm.horizontalAdvance(load) + 8;
    const QString idle = tr("idle");
    p.setPen(kInk);
    p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), idle);
    x += fm.horizontalAdvance(idle) + 6;
    const double gw = 120;
    for (int i = 0; i < int(gw); i += 2)
        p.fillRect(QRectF(x + i, cy - 5, 2, 10), i == 0 ? palette::kLoadIdle : loadColor(i / gw));
    x += gw + 6;
    p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), tr("100 %"));
    x += fm.horizontalAdvance(tr("100 %")) + 20;
    if (!m_traced.empty() || !m_tracedGradient.empty()) {
        // The followed token's glow.
        p.setRenderHint(QPainter::Antialiasing, true);
        p.setPen(QPen(kInk, 8, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(QPointF(x, cy), QPointF(x + 18, cy));
        p.setPen(QPen(kTokenGlow, 5, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(QPointF(x, cy), QPointF(x + 18, cy));
        p.setRenderHint(QPainter::Antialiasing, false);
        x += 26;
        p.setPen(kInk);
        const QString token = m_traceName.isEmpty() ? tr("followed token") : m_traceName;
        p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), token);
        x += fm.horizontalAdvance(token) + 20;
    }
    p.setPen(kMuted);
    const QString width = tr("line width = capacity; the two directions side by side");
    if (x + fm.horizontalAdvance(width) < strip.right() - 8)
        p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), width);
    p.setRenderHint(QPainter::Antialiasing, true);
}

// ---------------------------------------------------------------------------------------------
// Interaction

void WireView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (m_layout->fitted)
        rebuildLayout();
}

void WireView::wheelEvent(QWheelEvent* event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps != 0)
        zoomAbout(event->position(), std::pow(1.2, steps));
    event->accept();
}

void WireView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        m_layout->dragging = true;
        m_layout->dragFrom = event->position().toPoint();
        m_layout->offsetAtDrag = m_layout->offset;
        setCursor(Qt::ClosedHandCursor);
    }
    QWidget::mousePressEvent(event);
}

void WireView::mouseMoveEvent(QMouseEvent* event)
{
    Layout& L = *m_layout;
    if (L.dragging && (event->buttons() & Qt::LeftButton)) {
        const QPoint d = event->position().toPoint() - L.dragFrom;
        if (d.manhattanLength() > 2) {
            L.offset = L.offsetAtDrag + QPointF(d);
            L.fitted = false;
            update();
        }
        return;
    }
    updateHover(event->position().toPoint());
}

void WireView::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        m_layout->dragging = false;
        unsetCursor();
    }
    QWidget::mouseReleaseEvent(event);
}

void WireView::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (compactServers()) {
        const auto s = serverAt(event->position().toPoint());
        if (s && *s == m_openServer)
            openServer(-1);
        else if (s && m_layout->servers[std::size_t(*s)].compact)
            openServer(*s);
    }
    event->accept();
}

void WireView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomAbout(QRectF(rect()).center(), 1.25); break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore: zoomAbout(QRectF(rect()).center(), 1 / 1.25); break;
    case Qt::Key_0:
    case Qt::Key_Home: fitToView(); break;
    case Qt::Key_Escape:
        if (m_openServer >= 0)
            openServer(-1);
        else
            QWidget::keyPressEvent(event);
        return;
    default: QWidget::keyPressEvent(event); return;
    }
    event->accept();
}

void WireView::leaveEvent(QEvent* event)
{
    if (m_layout->hoveredSegment >= 0) {
        m_layout->hoveredSegment = -1;
        emit linkHovered(-1);
        update();
    }
    QWidget::leaveEvent(event);
}

void WireView::updateHover(QPoint pos)
{
    const int s = segmentAt(QPointF(pos));
    if (s == m_layout->hoveredSegment)
        return;
    m_layout->hoveredSegment = s;
    emit linkHovered(s < 0 ? -1 : int(m_layout->segments[std::size_t(s)].rep));
    update();
}

bool WireView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const auto link = linkAt(help->pos()))
            QToolTip::showText(help->globalPos(), linkToolTip(*link), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace tw::ui
