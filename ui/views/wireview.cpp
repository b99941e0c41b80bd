#include "wireview.h"
#include "wireview_p.h"

#include "palette.h"
#include "wirepaint.h"
#include "wiretooltips.h"

#include "base/units.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <array>
#include <map>
#include <cmath>
#include <utility>

namespace tw::ui {

using network::LinkId;
using network::NodeId;
using network::NodeKind;

namespace {

using palette::kInk;
using palette::kMuted;
const QColor kUnknownStrategy(0x64, 0x74, 0x8B);

constexpr double kLegendPx = 34;          // the legend strip at the bottom of the widget
constexpr double kMinSpacingPx = 9;       // packet spacing at a strategy rate equal to the bandwidth
constexpr double kTravelPxPerStep = 2917; // how far the packet phase moves over the whole step
constexpr int kMaxPackets = 4000;
constexpr std::size_t kMaxSmoothLines = 800; // beyond this many lines a frame draws them aliased

} // namespace

WireView::WireView(QWidget* parent) : QWidget(parent), m_state(std::make_unique<ViewState>())
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(320, 200);
}

WireView::~WireView() = default;

void WireView::setNetwork(std::shared_ptr<const network::Topology> topology, std::shared_ptr<const network::LinkLoads> loads,
                          std::shared_ptr<const network::StepSimulation> simulation, std::shared_ptr<const WireGroups> groups,
                          std::shared_ptr<WireLayout> layout)
{
    ViewState& L = *m_state;
    const bool sameShape = topology && m_topology && topology->nodes().size() == L.nodeCount
        && topology->links().size() == L.linkCount && topology->spec == L.spec && topology->cluster == L.cluster;
    if (groups || topology != m_topology)
        m_groups = std::move(groups); // null: computed by the next layout
    L.groupsStale = true;
    m_prepared = std::move(layout);
    m_topology = std::move(topology);
    m_loads = std::move(loads);
    m_simulation = std::move(simulation);
    if (!sameShape) {
        m_openServer = -1;
        m_openGroup = -1;
        L.fitted = true;
    }
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
    m_groups.reset();
    m_prepared.reset();
    m_callers = nullptr;
    m_openServer = -1;
    m_openGroup = -1;
    *m_state = ViewState{};
    update();
}

void WireView::setLinkCallers(LinkCallers callers)
{
    m_callers = std::move(callers);
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
    ViewState& L = *m_state;
    ++L.generation;
    for (std::size_t s = 0; s < L.geo.servers.size(); ++s)
        L.geo.servers[s].highlighted = false;
    for (auto& g : L.geo.groups)
        g.highlighted = false;
    if (m_topology)
        for (const int g : m_highlighted)
            if (g >= 0 && std::uint64_t(g) < m_topology->gpuCount() && m_topology->gpuNode(std::uint64_t(g)) != network::kNoNode) {
                const auto server = m_topology->node(m_topology->gpuNode(std::uint64_t(g))).server;
                if (server >= 0 && std::size_t(server) < L.geo.servers.size())
                    L.geo.servers[std::size_t(server)].highlighted = true;
                if (const int grp = L.geo.collapsedGroupOf(m_topology->gpuNode(std::uint64_t(g))); grp >= 0)
                    L.geo.groups[std::size_t(grp)].highlighted = true;
            }
    update();
}

// ---------------------------------------------------------------------------------------------
// Layout

bool WireView::compactServers() const
{
    return m_state->geo.compact();
}

void WireView::rebuildLayout()
{
    ViewState& L = *m_state;
    ++L.generation;
    L.hoveredSegment = -1;
    if (m_topology && !m_groups)
        m_groups = std::make_shared<const WireGroups>(groupNodes(*m_topology));
    // A layout computed ahead is taken once, when it was computed for what is drawn now.
    const std::shared_ptr<WireLayout> prepared = std::exchange(m_prepared, nullptr);
    if (prepared && m_topology && prepared->groupingShared == m_groups && prepared->area == contentArea().size()
        && prepared->fitted && L.fitted && m_openServer < 0 && m_openGroup < 0 && prepared->openServer < 0
        && prepared->openGroup < 0 && prepared->nodes.size() == m_topology->nodes().size())
        L.geo = std::move(*prepared);
    else
        L.geo = m_topology ? WireLayout::compute(*m_topology, contentArea().size(), m_openServer, L.fitted, m_openGroup, m_groups, &L.geo)
                           : WireLayout{};
    m_openServer = L.geo.openServer;
    m_openGroup = L.geo.openGroup;
    L.rates = network::LinkRateLookup(m_topology.get(), m_simulation.get(), m_loads.get());
    // The busiest line's payload.
    L.maxPayload = 0;
    for (const WireLayout::Segment& seg : L.geo.segments) {
        double payload = 0;
        for (const LinkId l : seg.members) {
            if (m_loads && l < m_loads->links.size())
                payload += m_loads->links[l].payload();
            else if (m_simulation && l < m_simulation->linkPayloadBytes.size())
                payload += m_simulation->linkPayloadBytes[l];
        }
        L.maxPayload = std::max(L.maxPayload, payload);
    }
    // Per group: its payload and its links gathered by series, once per fabric and step (not again when
    // a group opens or the view resizes).
    if (L.groupsStale) {
        L.groupsStale = false;
        const auto& groups = L.geo.grouping().groups;
        L.groupPayload.assign(groups.size(), 0);
        L.maxGroupPayload = 0;
        L.groupRates.clear();
        L.groupRates.reserve(groups.size());
        std::vector<std::uint32_t> scratch;
        for (std::size_t g = 0; g < groups.size(); ++g) {
            for (const LinkId l : groups[g].internal)
                L.groupPayload[g] += m_loads && l < m_loads->links.size() ? m_loads->links[l].payload()
                                     : m_simulation && l < m_simulation->linkPayloadBytes.size() ? m_simulation->linkPayloadBytes[l]
                                                                                                  : 0.0;
            L.maxGroupPayload = std::max(L.maxGroupPayload, L.groupPayload[g]);
            L.groupRates.push_back(L.rates.gather(groups[g].internal, scratch));
        }
    }
    // The highlight survives a new layout.
    if (!m_highlighted.empty())
        setHighlightedGpus(m_highlighted);
    if (m_topology) {
        L.nodeCount = m_topology->nodes().size();
        L.linkCount = m_topology->links().size();
        L.spec = m_topology->spec;
        L.cluster = m_topology->cluster;
    }
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
    ViewState& L = *m_state;
    const QRectF area = contentArea();
    if (L.geo.world.isEmpty() || area.isEmpty()) {
        L.scale = L.fitScale = 1;
        L.offset = {};
        return;
    }
    L.fitScale = std::min(area.width() / L.geo.world.width(), area.height() / L.geo.world.height());
    L.scale = L.fitScale;
    L.offset = area.center() - L.geo.world.center() * L.scale;
    L.fitted = true;
}

void WireView::fitToView()
{
    m_state->fitted = true;
    rebuildLayout(); // the grid of servers follows the widget's shape
    update();
}

double WireView::zoom() const
{
    return m_state->fitScale > 0 ? m_state->scale / m_state->fitScale : 1;
}

void WireView::setZoom(double zoom)
{
    zoomAbout(QRectF(rect()).center(), std::clamp(zoom, 0.2, 40.0) / this->zoom());
}

void WireView::zoomAbout(QPointF anchor, double factor)
{
    ViewState& L = *m_state;
    const double next = std::clamp(L.scale * factor, L.fitScale * 0.2, L.fitScale * 40);
    if (next == L.scale)
        return;
    const QPointF w = toWorld(anchor);
    L.scale = next;
    L.offset = anchor - w * next;
    L.fitted = false;
    update();
}

// Zooms in (never out) so that r, centred, fills `width` and `height` of the drawing area, at most 40
// times the fitted zoom.
void WireView::zoomOnto(const QRectF& r, double width, double height)
{
    ViewState& L = *m_state;
    const QRectF area = contentArea();
    const double scale = std::min({L.fitScale * 40, width * area.width() / r.width(), height * area.height() / r.height()});
    if (scale > L.scale) {
        L.scale = scale;
        L.offset = area.center() - r.center() * scale;
        L.fitted = false;
    }
}

void WireView::openServer(int server)
{
    if (!compactServers() || server < -1 || server >= int(m_state->geo.servers.size()))
        server = -1;
    if (server == m_openServer)
        return;
    m_openServer = server;
    m_state->fitted = true;
    rebuildLayout();
    // Zoom onto the opened server (its labels readable); 0 or Home shows everything again.
    if (server >= 0)
        zoomOnto(m_state->geo.servers[std::size_t(server)].rect, 0.6, 0.8);
    update();
    emit serverOpened(server);
}

void WireView::openGroup(int group)
{
    const auto& groups = m_state->geo.grouping().groups;
    if (group < -1 || group >= int(groups.size()) || (group >= 0 && !groups[std::size_t(group)].openable()))
        group = -1;
    if (group == m_openGroup)
        return;
    m_openGroup = group;
    m_openServer = -1;
    m_state->fitted = true;
    rebuildLayout();
    // Frame the open group's parts (the boxes stay in view above them at the fitted zoom).
    if (group >= 0)
        zoomOnto(m_state->geo.groups[std::size_t(group)].rect, 0.95, 0.9);
    update();
    emit groupOpened(group);
}

const WireLayout& WireView::layout() const
{
    return m_state->geo;
}

int WireView::groupCount() const
{
    return int(m_state->geo.grouping().groups.size());
}

const WireGroups::Group* WireView::group(int group) const
{
    const auto& groups = m_state->geo.grouping().groups;
    return group >= 0 && group < int(groups.size()) ? &groups[std::size_t(group)] : nullptr;
}

std::optional<QRectF> WireView::groupRect(int group) const
{
    const auto& groups = m_state->geo.groups;
    if (group < 0 || std::size_t(group) >= groups.size() || groups[std::size_t(group)].rect.isNull())
        return std::nullopt;
    const QRectF& r = groups[std::size_t(group)].rect;
    return QRectF(toScreen(r.topLeft()), toScreen(r.bottomRight()));
}

QString WireView::groupToolTip(int g) const
{
    const WireGroups::Group* info = group(g);
    if (!info)
        return {};
    QString tip = tr("<b>%1</b> (%2): %3 switches inside.").arg(info->titles.value(1), info->titles.value(0), QString::number(info->switches));
    if (info->openable()) {
        tip += m_simulation ? tr(" Its network links carry %1 % of their capacity now.")
                                  .arg(QString::number(100 * drawnGroupUtilization(g), 'f', 1))
                            : tr(" Its network links carry %1 % of the busiest group's payload.")
                                  .arg(QString::number(100 * drawnGroupUtilization(g), 'f', 1));
        tip += tr(" Double-click to open it.");
    }
    return tip;
}

double WireView::drawnGroupUtilization(int group) const
{
    const ViewState& L = *m_state;
    if (group < 0 || std::size_t(group) >= L.geo.groups.size())
        return 0;
    if (!m_simulation)
        return L.maxGroupPayload > 0 ? L.groupPayload[std::size_t(group)] / L.maxGroupPayload : 0;
    const network::LinkRateLookup::Gathered& links = L.groupRates[std::size_t(group)];
    return links.bandwidth > 0 ? L.rates.total(links, m_time) / links.bandwidth : 0;
}

QColor WireView::drawnGroupColor(int group) const
{
    return loadColor(drawnGroupUtilization(group));
}

QPointF WireView::toScreen(QPointF world) const
{
    return world * m_state->scale + m_state->offset;
}

WireViewport WireView::viewport() const
{
    return {m_state->scale, m_state->offset, QRectF(rect()).adjusted(-20, -20, 20, 20)};
}

QPointF WireView::toWorld(QPointF screen) const
{
    return (screen - m_state->offset) / m_state->scale;
}

// ---------------------------------------------------------------------------------------------
// Rates

network::LinkRates WireView::segmentRates(int segment) const
{
    return m_state->rates.sum(m_state->geo.segments[std::size_t(segment)].members, m_time);
}

double WireView::drawnUtilization(LinkId link) const
{
    const ViewState& L = *m_state;
    if (link >= L.geo.segmentOf.size() || L.geo.segmentOf[link] < 0) {
        const network::LinkRates r = m_state->rates.at(link, m_time);
        return r.bandwidth > 0 ? r.total / r.bandwidth : 0;
    }
    const network::LinkRates r = segmentRates(L.geo.segmentOf[link]);
    return r.bandwidth > 0 ? r.total / r.bandwidth : 0;
}

QColor WireView::drawnColor(LinkId link) const
{
    const ViewState& L = *m_state;
    if (m_simulation || link >= L.geo.segmentOf.size() || L.geo.segmentOf[link] < 0)
        return loadColor(drawnUtilization(link));
    // Without a simulation: the share of the busiest line's payload.
    double payload = 0;
    for (const LinkId l : L.geo.segments[std::size_t(L.geo.segmentOf[link])].members)
        if (m_loads && l < m_loads->links.size())
            payload += m_loads->links[l].payload();
    return loadColor(L.maxPayload > 0 ? payload / L.maxPayload : 0);
}

// ---------------------------------------------------------------------------------------------
// Geometry queries

std::optional<QPointF> WireView::nodeCenter(NodeId node) const
{
    const WireLayout& geo = m_state->geo;
    if (!m_topology || !geo.nodeDrawn(*m_topology, node))
        return std::nullopt;
    return toScreen(geo.nodes[node].rect.center());
}

std::optional<QRectF> WireView::serverRect(int server) const
{
    const auto& servers = m_state->geo.servers;
    if (server < 0 || std::size_t(server) >= servers.size())
        return std::nullopt;
    const QRectF& r = servers[std::size_t(server)].rect;
    return QRectF(toScreen(r.topLeft()), toScreen(r.bottomRight()));
}

std::vector<LinkId> WireView::drawnWith(LinkId link) const
{
    const ViewState& L = *m_state;
    if (link >= L.geo.segmentOf.size() || L.geo.segmentOf[link] < 0)
        return {};
    return L.geo.segments[std::size_t(L.geo.segmentOf[link])].members;
}

int WireView::packetsDrawn() const
{
    return m_state->packets;
}

int WireView::packetsDrawn(parallel::Strategy strategy) const
{
    const int k = int(strategy);
    return k >= 0 && k < 4 ? m_state->packetsBy[k] : 0;
}

std::optional<LinkId> WireView::hoveredLink() const
{
    const int s = m_state->hoveredSegment;
    if (s < 0 || std::size_t(s) >= m_state->geo.segments.size())
        return std::nullopt;
    return m_state->geo.segments[std::size_t(s)].rep;
}

QString WireView::linkToolTip(LinkId link) const
{
    LinkTipSources src;
    src.topology = m_topology.get();
    src.loads = m_loads.get();
    src.simulation = m_simulation.get();
    src.rates = &m_state->rates;
    src.callers = &m_callers;
    src.time = m_time;
    src.units = m_units;
    src.traceName = m_traceName;
    std::vector<LinkId> members = drawnWith(link);
    if (members.empty())
        members = {link};
    for (const LinkId m : members) {
        src.tokenBytes += tracedBytes(m);
        src.tokenGradient = src.tokenGradient || std::binary_search(m_tracedGradient.begin(), m_tracedGradient.end(), m);
    }
    return ui::linkToolTip(src, link, std::move(members));
}

// ---------------------------------------------------------------------------------------------
// Painting

// What one frame computes once and its steps share: each line's place, load and trace mark, and the
// packet streams on the lines carrying traffic now.
struct WireView::Frame {
    std::size_t n = 0;
    std::vector<ScreenLine> lines;
    std::vector<char> visible;
    std::vector<network::LinkRates> rates;
    // Per line: 1 = carries the followed token's row, 2 = only a gradient reduction it feeds, 0 = neither.
    std::vector<char> traced;
    // Thousands of lines (a large fabric, an open pod): aliased, and the plain ones batched by pen — one
    // drawLines per colour and width, the load quantized to 1/64 — several times cheaper than a pen and a
    // drawLine each.
    bool many = false;
    // Packets: one stream per strategy on each line carrying traffic now; spacing ∝ bandwidth / rate,
    // the phase moving with the time. Thinned evenly beyond kMaxPackets.
    struct Stream {
        int segment, strategy; // strategy 4 = unknown
        double spacing;
    };
    std::vector<Stream> streams;
    double thin = 1, phase = 0, dot = 3;
    int budget = kMaxPackets;
};

// Where each line is on screen, whether it is in view, what it carries now and whether it is traced.
void WireView::measureLines(Frame& F, const QRectF& view) const
{
    const ViewState& L = *m_state;
    const std::size_t n = F.n = L.geo.segments.size();
    F.lines.resize(n);
    F.visible.assign(n, 0);
    F.rates.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        F.lines[i] = L.line(L.geo.segments[i]);
        const QRectF box = QRectF(F.lines[i].p, F.lines[i].q).normalized().adjusted(-8, -8, 8, 8);
        F.visible[i] = box.intersects(view);
        if (F.visible[i])
            F.rates[i] = segmentRates(int(i));
    }
    F.traced.assign(n, 0);
    if (!m_traced.empty() || !m_tracedGradient.empty())
        for (std::size_t i = 0; i < n; ++i)
            for (const LinkId m : L.geo.segments[i].members) {
                if (std::binary_search(m_traced.begin(), m_traced.end(), m)) {
                    F.traced[i] = 1;
                    break;
                }
                if (std::binary_search(m_tracedGradient.begin(), m_tracedGradient.end(), m))
                    F.traced[i] = 2;
            }
    F.many = n > kMaxSmoothLines;
}

// A line's colour: its load (with a simulation) or its payload; idle lines recede in a grid of servers.
QColor WireView::lineColor(const Frame& F, std::size_t i) const
{
    const ViewState& L = *m_state;
    double u = F.rates[i].bandwidth > 0 ? F.rates[i].total / F.rates[i].bandwidth : 0;
    if (F.many)
        u = std::round(u * 64) / 64;
    QColor c = m_simulation ? loadColor(u) : drawnColor(L.geo.segments[i].rep);
    if (L.geo.serverRows > 1 && !(F.rates[i].total > 0) && int(i) != L.hoveredSegment)
        c.setAlpha(m_simulation ? 90 : 160); // a grid of servers: idle lines recede
    return c;
}

// One line with its hover outline and trace glow under its colour.
void WireView::drawLine(QPainter& p, const Frame& F, std::size_t i) const
{
    const ScreenLine& ln = F.lines[i];
    if (int(i) == m_state->hoveredSegment) {
        p.setPen(QPen(kInk, ln.width + 3, Qt::SolidLine, Qt::FlatCap));
        p.drawLine(ln.p, ln.q);
    }
    // The followed token's links: a yellow glow with a dark rim under the load colour (solid where
    // its row crosses, dashed where only a gradient reduction it feeds does).
    if (F.traced[i] == 1) {
        p.setPen(QPen(kInk, ln.width + 7, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(ln.p, ln.q);
        p.setPen(QPen(kWireTokenGlow, ln.width + 4, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(ln.p, ln.q);
    } else if (F.traced[i] == 2) {
        p.setPen(QPen(kInk, ln.width + 4, Qt::DashLine, Qt::FlatCap));
        p.drawLine(ln.p, ln.q);
    }
    p.setPen(QPen(lineColor(F, i), ln.width, Qt::SolidLine, Qt::FlatCap));
    p.drawLine(ln.p, ln.q);
}

// The lines between servers and switches (between = true) or inside servers; many plain ones batched.
void WireView::drawLines(QPainter& p, const Frame& F, bool between) const
{
    const ViewState& L = *m_state;
    // Qt's raster engine fills a shape of more than about 96 scanlines on its GUI thread pool, a dispatch
    // and a wait per line: with thousands of long lines half a frame went to waking threads. An aliased
    // line cut into pieces of at most kPieceRows rows is filled on this thread, and its flat-capped
    // pieces meet without a seam.
    constexpr double kPieceRows = 80;
    auto addPieces = [](std::vector<QLineF>& out, QPointF a, QPointF b) {
        const int pieces = std::max(1, int(std::ceil(std::abs(b.y() - a.y()) / kPieceRows)));
        for (int k = 0; k < pieces; ++k)
            out.emplace_back(a + (b - a) * (double(k) / pieces), a + (b - a) * (double(k + 1) / pieces));
    };
    p.setRenderHint(QPainter::Antialiasing, !F.many);
    auto shown = [&](std::size_t i) { return F.visible[i] && L.geo.segments[i].between == between; };
    auto special = [&](std::size_t i) { return int(i) == L.hoveredSegment || F.traced[i] != 0; };
    if (F.many) {
        std::map<std::pair<QRgb, int>, std::vector<QLineF>> batches;
        for (std::size_t i = 0; i < F.n; ++i)
            if (shown(i) && !special(i))
                addPieces(batches[{lineColor(F, i).rgba(), int(std::lround(F.lines[i].width * 4))}], F.lines[i].p,
                          F.lines[i].q);
        for (const auto& [pen, batch] : batches) {
            p.setPen(QPen(QColor::fromRgba(pen.first), pen.second / 4.0, Qt::SolidLine, Qt::FlatCap));
            p.drawLines(batch.data(), int(batch.size()));
        }
    }
    for (std::size_t i = 0; i < F.n; ++i) // every line, or (many) the hovered and traced ones on top
        if (shown(i) && (!F.many || special(i)))
            drawLine(p, F, i);
}

// The packet streams of the lines in view carrying traffic now, their thinning, phase and dot size.
void WireView::planPackets(Frame& F) const
{
    const bool moving = m_simulation && m_simulation->stepSeconds > 0;
    if (moving) {
        double expected = 0;
        for (std::size_t i = 0; i < F.n; ++i) {
            const network::LinkRates& rate = F.rates[i];
            if (!F.visible[i] || !(rate.total > 0) || !(rate.bandwidth > 0))
                continue;
            const double len = std::hypot(F.lines[i].q.x() - F.lines[i].p.x(), F.lines[i].q.y() - F.lines[i].p.y());
            for (int k = 0; k < 5; ++k) {
                const double r = k < 4 ? rate.byStrategy[std::size_t(k)] : rate.unknown;
                if (!(r > 0))
                    continue;
                const double share = std::min(1.0, r / rate.bandwidth);
                const double spacing = kMinSpacingPx / std::max(share, 1e-4);
                F.streams.push_back({int(i), k, spacing});
                expected += len / spacing + 1;
            }
        }
        F.thin = expected > kMaxPackets ? expected / kMaxPackets : 1.0;
    }
    F.phase = moving ? m_time / m_simulation->stepSeconds * kTravelPxPerStep : 0;
    F.dot = std::clamp(5.0 * m_state->lineScale() + 1, 3.0, 6.0);
}

// The packets on the lines between servers (between = true) or inside them, within the frame's budget.
void WireView::drawPackets(QPainter& p, Frame& F, bool between)
{
    ViewState& L = *m_state;
    std::array<std::vector<QRectF>, 5> inner;
    for (const Frame::Stream& st : F.streams) {
        if (L.geo.segments[std::size_t(st.segment)].between != between)
            continue;
        const ScreenLine& ln = F.lines[std::size_t(st.segment)];
        const QPointF d = ln.q - ln.p;
        const double len = std::hypot(d.x(), d.y());
        if (len < 1)
            continue;
        const double spacing = st.spacing * F.thin;
        const auto h = L.geo.segments[std::size_t(st.segment)].hash;
        double pos = std::fmod(F.phase + double(h % 997) + st.strategy * spacing * 0.23, spacing);
        const QPointF u = d / len;
        const double dot = F.dot;
        for (; pos < len && F.budget > 0; pos += spacing) {
            const QPointF c = ln.p + u * pos;
            inner[std::size_t(st.strategy)].push_back(QRectF(c.x() - dot / 2, c.y() - dot / 2, dot, dot));
            --F.budget;
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
        p.setBrush(k < 4 ? palette::strategy(k) : kUnknownStrategy);
        p.drawRects(inner[k].data(), int(inner[k].size()));
    }
    p.setRenderHint(QPainter::Antialiasing, true);
}

// Collapsed pods and server groups: filled with the load inside them (their outlines and labels are
// in the static layer).
void WireView::paintCollapsedGroups(QPainter& p, const QRectF& view) const
{
    const ViewState& L = *m_state;
    for (std::size_t g = 0; g < L.geo.groups.size(); ++g) {
        if (L.geo.groups[g].open || L.geo.groups[g].rect.isNull() || !L.geo.grouping().groups[g].openable())
            continue;
        const QRectF r = QRectF(toScreen(L.geo.groups[g].rect.topLeft()), toScreen(L.geo.groups[g].rect.bottomRight()));
        if (!r.intersects(view))
            continue;
        p.setPen(Qt::NoPen);
        p.setBrush(palette::mix(drawnGroupColor(int(g)), Qt::white, 0.55));
        const double radius = std::min(10.0, r.height() * 0.1);
        p.drawRoundedRect(r, radius, radius);
    }
}

// The two static layers (server and group boxes; nodes and labels), redrawn when the view moved.
void WireView::refreshStaticLayers()
{
    ViewState& L = *m_state;
    const QSize pixels = size() * devicePixelRatioF();
    const bool stale = L.cacheKey.scale != L.scale || L.cacheKey.offset != L.offset || L.cacheKey.pixels != pixels
        || L.cacheKey.generation != L.generation || L.serverLayer.isNull();
    if (!stale)
        return;
    L.cacheKey = {L.scale, L.offset, pixels, L.generation};
    for (QImage* layer : {&L.serverLayer, &L.nodeLayer}) {
        *layer = QImage(pixels, QImage::Format_ARGB32_Premultiplied);
        layer->setDevicePixelRatio(devicePixelRatioF());
        layer->fill(Qt::transparent);
    }
    {
        QPainter q(&L.serverLayer);
        q.setRenderHint(QPainter::Antialiasing, true);
        paintServerBoxes(q, L.geo, *m_topology, viewport(), m_openServer);
        paintGroupBoxes(q, L.geo, viewport());
    }
    QPainter q(&L.nodeLayer);
    q.setRenderHint(QPainter::Antialiasing, true);
    paintNodeBoxes(q, L.geo, *m_topology, viewport(), m_highlighted);
}

// A frame: lines between servers and their packets, collapsed groups, server boxes, lines inside
// servers, nodes, those lines' packets, the legend.
void WireView::paintEvent(QPaintEvent*)
{
    ViewState& L = *m_state;
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    L.packets = 0;
    std::fill(std::begin(L.packetsBy), std::end(L.packetsBy), 0);
    if (!m_topology || L.geo.world.isNull()) {
        p.setPen(kMuted);
        p.setFont(pixelFont(16, false));
        p.drawText(rect(), Qt::AlignCenter, tr("No fabric to draw"));
        return;
    }
    const QRectF view = QRectF(rect()).adjusted(-20, -20, 20, 20);
    p.setRenderHint(QPainter::Antialiasing, true);
    Frame F;
    measureLines(F, view);
    planPackets(F);

    // 1. Lines between servers and switches (under the server boxes: in a grid they pass behind).
    drawLines(p, F, true);
    p.setRenderHint(QPainter::Antialiasing, true);
    drawPackets(p, F, true);
    paintCollapsedGroups(p, view);

    // 2. Server boxes, 3. lines inside servers, then the nodes and their labels (both static layers are
    // cached images, redrawn when the view moves), then those lines' packets.
    refreshStaticLayers();
    p.drawImage(QPointF(0, 0), L.serverLayer);
    drawLines(p, F, false);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.drawImage(QPointF(0, 0), L.nodeLayer);
    drawPackets(p, F, false);
    std::optional<QString> token;
    if (!m_traced.empty() || !m_tracedGradient.empty())
        token = m_traceName.isEmpty() ? tr("followed token") : m_traceName;
    paintWireLegend(p, QRectF(0, height() - kLegendPx, width(), kLegendPx), token);
}

// ---------------------------------------------------------------------------------------------
} // namespace tw::ui
