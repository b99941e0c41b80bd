#pragma once
// The scene items of MeshView (a GPU card, a node box) and the drawing helpers they share with the
// view and its legend. Private to ui/views/mesh*.cpp.

#include "meshview.h"

#include "palette.h"

#include "parallel/plan.h"

#include <QApplication>
#include <QGraphicsItem>
#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace tw::ui {

namespace meshdraw {

// The shared colour-blind-safe palette (views/palette.h): categorical(), kInk, kMuted, mix (t = share of a).
using namespace palette;

inline const QColor kWarn(0xC0, 0x10, 0x10);

// Category i's fill: the palette tinted towards white; later rounds of the palette use other tints
// so that neighbours 7 apart still differ.
inline QColor fillColor(int i)
{
    if (i < 0)
        return QColor(0xe5, 0xe7, 0xeb);
    static const double tints[] = {0.42, 0.75, 0.22};
    return mix(categorical(i % kCategoricalSize), Qt::white, tints[(i / kCategoricalSize) % 3]);
}

inline QColor bandColor(int i)
{
    if (i < 0)
        return QColor(0x9c, 0xa3, 0xaf);
    static const double shades[] = {1.0, 0.7, 0.45};
    return mix(categorical(i % kCategoricalSize), Qt::black, shades[(i / kCategoricalSize) % 3]);
}

// Memory colouring: light green (little used) → amber → orange (full), a light red when over.
inline const QColor kMemLow(0xd1, 0xfa, 0xe5), kMemMid(0xfd, 0xe6, 0x8a), kMemHigh(0xfb, 0x92, 0x3c), kMemOver(0xfe, 0xca, 0xca);

struct Metrics {
    qreal cardW, cardH, gap, pad, title, nodeGap, band, radius;
    int idPx, coordPx, stagePx, titlePx;
};

// A card narrower than this on screen (px) is drawn plain (GpuCardItem::paintTiny).
inline constexpr qreal kTinyPx = 8;

inline Metrics metricsFor(MeshView::Detail d)
{
    switch (d) {
    case MeshView::Detail::Full: return {150, 92, 10, 12, 30, 26, 9, 7, 17, 14, 12, 16};
    case MeshView::Detail::Medium: return {118, 62, 8, 10, 26, 20, 7, 6, 15, 12, 11, 14};
    case MeshView::Detail::Small: return {50, 32, 5, 7, 22, 12, 5, 4, 13, 0, 0, 12};
    case MeshView::Detail::Compact: return {16, 11, 2, 4, 13, 6, 3, 2, 0, 0, 0, 9};
    }
    return {};
}

inline QFont pixelFont(int px, bool bold = false)
{
    QFont f = QApplication::font();
    f.setPixelSize(std::max(px, 6));
    f.setBold(bold);
    return f;
}

inline QString joined(std::span<const int> gpus, int except = -1, int limit = 12)
{
    QStringList parts;
    int shown = 0;
    for (int g : gpus) {
        if (g == except)
            continue;
        if (shown++ == limit) {
            parts << QStringLiteral("…");
            break;
        }
        parts << QString::number(g);
    }
    return parts.isEmpty() ? QStringLiteral("—") : parts.join(QStringLiteral(", "));
}

// Links between nodes run under the cards (visible between them), their labels above.
inline constexpr int kZNode = 0, kZLinks = 5, kZCard = 10, kZLabels = 20, kZDrag = 100;


} // namespace meshdraw

using namespace meshdraw; // meshview.cpp and meshlegend.cpp read the helpers unqualified

// How a GPU's card is drawn now: MeshView's restyle writes one per GPU, the card items (or, in a very
// large mesh, the one field item) read them.
struct CardStyle {
    QColor fill, band;
    QPen outline;
    QStringList lines;
    bool crosses = false, highlighted = false, dimmed = false, drop = false, token = false, over = false;
};

// One GPU card, painted in one go (fill, TP band, text, outline) so that 256 of them restyle and
// repaint quickly. Its style is MeshView's (styles[gpu]).
class GpuCardItem : public QGraphicsItem {
public:
    GpuCardItem(int gpu, const Metrics& m, const std::vector<CardStyle>& styles)
        : m_gpu(gpu), m_m(m), m_rect(0, 0, m.cardW, m.cardH), m_styles(styles)
    {
        setZValue(kZCard);
        setAcceptHoverEvents(false);
    }
    QRectF boundingRect() const override { return m_rect.adjusted(-7, -7, 7, 7); }
    [[nodiscard]] const CardStyle& style() const { return m_styles[std::size_t(m_gpu)]; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        if (QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform()) * m_rect.width() < kTinyPx) {
            paintTiny(p);
            return;
        }
        const CardStyle& s = style();
        if (s.token) {
            // The followed token's GPU: a yellow ring with a dark rim outside the card.
            p->setBrush(Qt::NoBrush);
            p->setPen(QPen(kInk, 7.0));
            p->drawRoundedRect(m_rect.adjusted(-3, -3, 3, 3), m_m.radius + 3, m_m.radius + 3);
            p->setPen(QPen(QColor(0xF0, 0xE4, 0x42), 4.5));
            p->drawRoundedRect(m_rect.adjusted(-3, -3, 3, 3), m_m.radius + 3, m_m.radius + 3);
        }
        QPainterPath shape;
        shape.addRoundedRect(m_rect, m_m.radius, m_m.radius);
        p->setPen(Qt::NoPen);
        p->setBrush(s.drop ? s.fill.lighter(112) : s.fill);
        p->drawPath(shape);
        p->save();
        p->setClipPath(shape);
        p->fillRect(QRectF(0, 0, m_rect.width(), m_m.band), s.band);
        p->restore();
        if (!s.lines.isEmpty()) {
            // Dark text on light fills, white on dark ones (the palette's later, darker tints).
            const bool darkFill = 0.2126 * s.fill.redF() + 0.7152 * s.fill.greenF() + 0.0722 * s.fill.blueF() < 0.45;
            const QColor ink = darkFill ? QColor(Qt::white) : kInk;
            const QColor muted = darkFill ? QColor(0xe5, 0xe7, 0xeb) : kMuted;
            const QFont idFont = pixelFont(m_m.idPx, true);
            const QFont coordFont = pixelFont(m_m.coordPx);
            const QFont stageFont = pixelFont(m_m.stagePx);
            qreal total = 0;
            std::vector<qreal> heights;
            for (int i = 0; i < s.lines.size(); ++i) {
                const QFont& f = i == 0 ? idFont : i == 1 ? coordFont : stageFont;
                heights.push_back(QFontMetricsF(f).height());
                total += heights.back();
            }
            qreal y = m_m.band + (m_rect.height() - m_m.band - total) / 2;
            for (int i = 0; i < s.lines.size(); ++i) {
                p->setFont(i == 0 ? idFont : i == 1 ? coordFont : stageFont);
                p->setPen(i == 2 ? muted : ink);
                p->drawText(QRectF(2, y, m_rect.width() - 4, heights[std::size_t(i)]), Qt::AlignCenter, s.lines[i]);
                y += heights[std::size_t(i)];
            }
        }
        // The warning badge: a red triangle with "!" in the top-right corner.
        if (s.crosses && m_m.cardW >= 40) {
            const qreal sz = std::min<qreal>(16, m_rect.height() * 0.34);
            const QPointF c(m_rect.right() - sz * 0.75, m_m.band + sz * 0.15);
            QPainterPath tri;
            tri.moveTo(c.x(), c.y());
            tri.lineTo(c.x() + sz * 0.6, c.y() + sz);
            tri.lineTo(c.x() - sz * 0.6, c.y() + sz);
            tri.closeSubpath();
            p->setPen(Qt::NoPen);
            p->setBrush(kWarn);
            p->drawPath(tri);
            p->setPen(Qt::white);
            p->setFont(pixelFont(int(sz * 0.7), true));
            p->drawText(QRectF(c.x() - sz * 0.5, c.y() + sz * 0.2, sz, sz * 0.8), Qt::AlignCenter, QStringLiteral("!"));
        }
        p->setBrush(Qt::NoBrush);
        p->setPen(s.drop ? QPen(kInk, 3.5) : s.outline);
        p->drawRoundedRect(m_rect, m_m.radius, m_m.radius);
    }
    // A card a few pixels wide (thousands of GPUs in view): its fill, band and any outline that says
    // something (hovered peers, a TP group across nodes, memory over, the token) as plain rectangles —
    // rounded corners, clipping and text do not show at that size and took 120 ms for 16,384 cards.
    void paintTiny(QPainter* p) const
    {
        const CardStyle& s = style();
        const bool aa = p->testRenderHint(QPainter::Antialiasing);
        p->setRenderHint(QPainter::Antialiasing, false);
        if (s.token)
            p->fillRect(m_rect.adjusted(-3, -3, 3, 3), QColor(0xF0, 0xE4, 0x42));
        p->fillRect(m_rect, s.drop ? s.fill.lighter(112) : s.fill);
        p->fillRect(QRectF(0, 0, m_rect.width(), m_m.band), s.band);
        if (s.drop || s.highlighted || s.crosses || s.over) {
            p->setBrush(Qt::NoBrush);
            p->setPen(s.drop ? QPen(kInk, 3.5) : s.outline);
            p->drawRect(m_rect);
        }
        p->setRenderHint(QPainter::Antialiasing, aa);
    }

    int m_gpu;
    Metrics m_m;
    QRectF m_rect;

private:
    const std::vector<CardStyle>& m_styles;
};

// A node's rounded box with its title; red-rimmed when warn[node] (MeshView's) is set.
class NodeBoxItem : public QGraphicsItem {
public:
    NodeBoxItem(int node, const QRectF& rect, const Metrics& m, const std::vector<char>& warn)
        : m_node(node), m_rect(rect), m_m(m), m_warn(warn)
    {
        setZValue(kZNode);
    }
    QRectF boundingRect() const override { return m_rect.adjusted(-2, -2, 2, 2); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        const bool warn = m_warn[std::size_t(m_node)] != 0;
        p->setPen(QPen(warn ? kWarn : QColor(0x64, 0x74, 0x8b), warn ? 2.0 : 1.5));
        p->setBrush(QColor(0xf3, 0xf4, 0xf6));
        const qreal lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
        if (lod * m_rect.width() < 3 * kTinyPx) { // a box of tiny cards: plain, and its title unreadable
            const bool aa = p->testRenderHint(QPainter::Antialiasing);
            p->setRenderHint(QPainter::Antialiasing, false);
            p->drawRect(m_rect);
            p->setRenderHint(QPainter::Antialiasing, aa);
            return;
        }
        p->drawRoundedRect(m_rect, m_m.radius + 3, m_m.radius + 3);
        p->setPen(kInk);
        p->setFont(pixelFont(m_m.titlePx, true));
        const QString title = m_m.titlePx >= 11 ? QObject::tr("Node %1").arg(m_node) : QStringLiteral("N%1").arg(m_node);
        p->drawText(QRectF(m_rect.left() + m_m.pad, m_rect.top(), m_rect.width() - 2 * m_m.pad, m_m.title),
                    Qt::AlignLeft | Qt::AlignVCenter, title);
    }
    int m_node;
    QRectF m_rect;
    Metrics m_m;

private:
    const std::vector<char>& m_warn;
};

// Every node box and GPU card of a very large mesh in one item (MeshView::kMaxCardItems), painted from
// MeshView's arrays (no item per card or box): the boxes plain (red-rimmed where a TP group crosses
// nodes), each card one fill, the followed token's GPUs ringed in yellow; cached in device pixels until
// a style changes (update()).
class CardFieldItem : public QGraphicsItem {
public:
    CardFieldItem(const std::vector<CardStyle>& styles, const std::vector<QRectF>& cards, const std::vector<QRectF>& nodes,
                  const std::vector<char>& nodeWarn, const QRectF& bounds)
        : m_styles(styles), m_cards(cards), m_nodes(nodes), m_nodeWarn(nodeWarn), m_bounds(bounds)
    {
        setZValue(kZCard);
        setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    }
    QRectF boundingRect() const override { return m_bounds.adjusted(-4, -4, 4, 4); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        p->setRenderHint(QPainter::Antialiasing, false);
        p->setBrush(QColor(0xf3, 0xf4, 0xf6));
        const QPen plain(QColor(0x64, 0x74, 0x8b), 0), warn(kWarn, 0);
        for (std::size_t i = 0; i < m_nodes.size(); ++i) {
            p->setPen(m_nodeWarn[i] ? warn : plain);
            p->drawRect(m_nodes[i]);
        }
        for (std::size_t g = 0; g < m_cards.size(); ++g) {
            const CardStyle& s = m_styles[g];
            const QRectF& r = m_cards[g];
            if (s.token)
                p->fillRect(r.adjusted(-3, -3, 3, 3), QColor(0xF0, 0xE4, 0x42));
            // A card is a pixel or two wide: what an outline says in a small mesh, its fill says here (the
            // hovered GPU and its peers dark, a GPU over its memory red, the rest faded while hovering).
            QColor fill = s.fill;
            if (s.highlighted)
                fill = s.outline.color();
            else if (s.over)
                fill = kWarn;
            else if (s.dimmed)
                fill = mix(fill, Qt::white, 0.3);
            p->fillRect(r, fill);
        }
    }

private:
    const std::vector<CardStyle>& m_styles;
    const std::vector<QRectF>& m_cards;
    const std::vector<QRectF>& m_nodes;
    const std::vector<char>& m_nodeWarn;
    QRectF m_bounds;
};

} // namespace tw::ui
