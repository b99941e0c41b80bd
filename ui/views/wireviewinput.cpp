// WireView's input: the mouse (drag to pan, wheel to zoom, double-click to open a server or a group), the
// keys, hover and tooltips, and the hit tests that find the link, server, group or GPU under a point.
#include "wireview.h"
#include "wireview_p.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QResizeEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace tw::ui {

using network::LinkId;
using network::NodeId;

namespace {

constexpr double kHitPx = 6;

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

} // namespace

std::optional<int> WireView::groupAt(QPoint pos) const
{
    const QPointF w = toWorld(QPointF(pos));
    const auto& groups = m_state->geo.groups;
    for (std::size_t g = 0; g < groups.size(); ++g)
        if (!groups[g].open && groups[g].rect.contains(w))
            return int(g);
    // The open frames, innermost first (a server group's inside its pod's).
    for (int g = m_openGroup; g >= 0; g = m_state->geo.grouping().parentOf(g))
        if (groups[std::size_t(g)].rect.contains(w))
            return g;
    return std::nullopt;
}

std::optional<QPointF> WireView::linkMidpoint(LinkId link) const
{
    const ViewState& L = *m_state;
    if (link >= L.geo.segmentOf.size() || L.geo.segmentOf[link] < 0)
        return std::nullopt;
    const int seg = L.geo.segmentOf[link];
    const ScreenLine s = L.line(L.geo.segments[std::size_t(seg)]);
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
    const ViewState& L = *m_state;
    int best = -1;
    double bestD = 1e18;
    for (std::size_t i = 0; i < L.geo.segments.size(); ++i) {
        const ScreenLine s = L.line(L.geo.segments[i]);
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
    return m_state->geo.segments[std::size_t(s)].rep;
}

std::optional<int> WireView::serverAt(QPoint pos) const
{
    const QPointF w = toWorld(QPointF(pos));
    const auto& servers = m_state->geo.servers;
    for (std::size_t s = 0; s < servers.size(); ++s)
        if (servers[s].rect.contains(w))
            return int(s);
    return std::nullopt;
}

// Interaction

void WireView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (m_state->fitted)
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
        m_state->dragging = true;
        m_state->dragFrom = event->position().toPoint();
        m_state->offsetAtDrag = m_state->offset;
        setCursor(Qt::ClosedHandCursor);
    }
    QWidget::mousePressEvent(event);
}

void WireView::mouseMoveEvent(QMouseEvent* event)
{
    ViewState& L = *m_state;
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
        m_state->dragging = false;
        unsetCursor();
    }
    QWidget::mouseReleaseEvent(event);
}

void WireView::mouseDoubleClickEvent(QMouseEvent* event)
{
    // A collapsed group opens; a double-click on an open group's frame (not on one of its servers) closes
    // it (a server group's frame: back to its open pod).
    if (const auto g = groupAt(event->position().toPoint())) {
        const auto s = serverAt(event->position().toPoint());
        if (!m_state->geo.groupOpen(*g)) {
            openGroup(*g);
            event->accept();
            return;
        }
        if (!s) {
            openGroup(m_state->geo.grouping().parentOf(*g));
            event->accept();
            return;
        }
    }
    if (compactServers()) {
        const auto s = serverAt(event->position().toPoint());
        if (s && *s == m_openServer)
            openServer(-1);
        else if (s && m_state->geo.servers[std::size_t(*s)].compact)
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
        else if (m_openGroup >= 0)
            openGroup(m_state->geo.grouping().parentOf(m_openGroup)); // a server group: back to its pod
        else
            QWidget::keyPressEvent(event);
        return;
    default: QWidget::keyPressEvent(event); return;
    }
    event->accept();
}

void WireView::leaveEvent(QEvent* event)
{
    if (m_state->hoveredSegment >= 0) {
        m_state->hoveredSegment = -1;
        emit linkHovered(-1);
        update();
    }
    QWidget::leaveEvent(event);
}

void WireView::updateHover(QPoint pos)
{
    const int s = segmentAt(QPointF(pos));
    if (s == m_state->hoveredSegment)
        return;
    m_state->hoveredSegment = s;
    emit linkHovered(s < 0 ? -1 : int(m_state->geo.segments[std::size_t(s)].rep));
    update();
}

void WireView::setGpuToolTips(std::function<QString(int gpu, double time)> text)
{
    m_gpuToolTips = std::move(text);
}

std::optional<int> WireView::gpuAt(QPoint pos) const
{
    if (!m_topology)
        return std::nullopt;
    const WireLayout& geo = m_state->geo;
    for (std::uint64_t g = 0; g < m_topology->gpuCount(); ++g) {
        const NodeId node = m_topology->gpuNode(g);
        if (node == network::kNoNode || !geo.nodeDrawn(*m_topology, node))
            continue;
        const QRectF r = geo.nodes[node].rect;
        if (QRectF(toScreen(r.topLeft()), toScreen(r.bottomRight())).normalized().contains(QPointF(pos)))
            return int(g);
    }
    return std::nullopt;
}

QString WireView::gpuToolTip(int gpu) const
{
    return m_gpuToolTips && gpu >= 0 ? m_gpuToolTips(gpu, m_time) : QString();
}

bool WireView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const auto gpu = gpuAt(help->pos()); gpu && m_gpuToolTips)
            QToolTip::showText(help->globalPos(), gpuToolTip(*gpu), this);
        else if (const auto link = linkAt(help->pos()))
            QToolTip::showText(help->globalPos(), linkToolTip(*link), this);
        else if (const auto g = groupAt(help->pos()); g && !m_state->geo.groupOpen(*g))
            QToolTip::showText(help->globalPos(), groupToolTip(*g), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace tw::ui
