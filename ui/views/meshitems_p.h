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
#include <vector>

namespace tw::ui {

namespace meshdraw {


// The shared colour-blind-safe palette (views/palette.h).
inline const auto& kPalette = palette::kCategorical;
inline constexpr int kPaletteSize = palette::kCategoricalSize;
inline const QColor kInk = palette::kInk;
inline const QColor kMuted = palette::kMuted;
inline const QColor kWarn(0xC0, 0x10, 0x10);

using palette::mix; // t = share of a

// Category i's fill: the palette tinted towards white; later rounds of the palette use other tints
// so that neighbours 7 apart still differ.
inline QColor fillColor(int i)
{
    if (i < 0)
        return QColor(0xe5, 0xe7, 0xeb);
    static const double tints[] = {0.42, 0.75, 0.22};
    return mix(kPalette[i % kPaletteSize], Qt::white, tints[(i / kPaletteSize) % 3]);
}

inline QColor bandColor(int i)
{
    if (i < 0)
        return QColor(0x9c, 0xa3, 0xaf);
    static const double shades[] = {1.0, 0.7, 0.45};
    return mix(kPalette[i % kPaletteSize], Qt::black, shades[(i / kPaletteSize) % 3]);
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

inline QString joined(const std::vector<int>& gpus, int except = -1, int limit = 12)
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

// One GPU card, painted in one go (fill, TP band, text, outline) so that 256 of them restyle and
// repaint quickly.
class GpuCardItem : public QGraphicsItem {
public:
    GpuCardItem(int gpu, const Metrics& m)
        : m_gpu(gpu), m_m(m), m_rect(0, 0, m.cardW, m.cardH)
    {
        setZValue(kZCard);
        setAcceptHoverEvents(false);
    }
    QRectF boundingRect() const override { return m_rect.adjusted(-7, -7, 7, 7); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        if (QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform()) * m_rect.width() < kTinyPx) {
            paintTiny(p);
            return;
        }
        if (m_token) {
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
        p->setBrush(m_drop ? m_fill.lighter(112) : m_fill);
        p->drawPath(shape);
        p->save();
        p->setClipPath(shape);
        p->fillRect(QRectF(0, 0, m_rect.width(), m_m.band), m_band);
        p->restore();
        if (!m_lines.isEmpty()) {
            // Dark text on light fills, white on dark ones (the palette's later, darker tints).
            const bool darkFill = 0.2126 * m_fill.redF() + 0.7152 * m_fill.greenF() + 0.0722 * m_fill.blueF() < 0.45;
            const QColor ink = darkFill ? QColor(Qt::white) : kInk;
            const QColor muted = darkFill ? QColor(0xe5, 0xe7, 0xeb) : kMuted;
            const QFont idFont = pixelFont(m_m.idPx, true);
            const QFont coordFont = pixelFont(m_m.coordPx);
            const QFont stageFont = pixelFont(m_m.stagePx);
            qreal total = 0;
            std::vector<qreal> heights;
            for (int i = 0; i < m_lines.size(); ++i) {
                const QFont& f = i == 0 ? idFont : i == 1 ? coordFont : stageFont;
                heights.push_back(QFontMetricsF(f).height());
                total += heights.back();
            }
            qreal y = m_m.band + (m_rect.height() - m_m.band - total) / 2;
            for (int i = 0; i < m_lines.size(); ++i) {
                p->setFont(i == 0 ? idFont : i == 1 ? coordFont : stageFont);
                p->setPen(i == 2 ? muted : ink);
                p->drawText(QRectF(2, y, m_rect.width() - 4, heights[std::size_t(i)]), Qt::AlignCenter, m_lines[i]);
                y += heights[std::size_t(i)];
            }
        }
        // The warning badge: a red triangle with "!" in the top-right corner.
        if (m_crosses && m_m.cardW >= 40) {
            const qreal s = std::min<qreal>(16, m_rect.height() * 0.34);
            const QPointF c(m_rect.right() - s * 0.75, m_m.band + s * 0.15);
            QPainterPath tri;
            tri.moveTo(c.x(), c.y());
            tri.lineTo(c.x() + s * 0.6, c.y() + s);
            tri.lineTo(c.x() - s * 0.6, c.y() + s);
            tri.closeSubpath();
            p->setPen(Qt::NoPen);
            p->setBrush(kWarn);
            p->drawPath(tri);
            p->setPen(Qt::white);
            p->setFont(pixelFont(int(s * 0.7), true));
            p->drawText(QRectF(c.x() - s * 0.5, c.y() + s * 0.2, s, s * 0.8), Qt::AlignCenter, QStringLiteral("!"));
        }
        p->setBrush(Qt::NoBrush);
        p->setPen(m_drop ? QPen(kInk, 3.5) : m_outline);
        p->drawRoundedRect(m_rect, m_m.radius, m_m.radius);
    }
    // A card a few pixels wide (thousands of GPUs in view): its fill, band and any outline that says
    // something (hovered peers, a TP group across nodes, memory over, the token) as plain rectangles —
    // rounded corners, clipping and text do not show at that size and took 120 ms for 16,384 cards.
    void paintTiny(QPainter* p) const
    {
        const bool aa = p->testRenderHint(QPainter::Antialiasing);
        p->setRenderHint(QPainter::Antialiasing, false);
        if (m_token)
            p->fillRect(m_rect.adjusted(-3, -3, 3, 3), QColor(0xF0, 0xE4, 0x42));
        p->fillRect(m_rect, m_drop ? m_fill.lighter(112) : m_fill);
        p->fillRect(QRectF(0, 0, m_rect.width(), m_m.band), m_band);
        if (m_drop || m_highlighted || m_crosses || m_over) {
            p->setBrush(Qt::NoBrush);
            p->setPen(m_drop ? QPen(kInk, 3.5) : m_outline);
            p->drawRect(m_rect);
        }
        p->setRenderHint(QPainter::Antialiasing, aa);
    }

    int m_gpu;
    Metrics m_m;
    QRectF m_rect;
    QColor m_fill, m_band;
    QPen m_outline;
    QStringList m_lines;
    bool m_crosses = false, m_highlighted = false, m_dimmed = false, m_drop = false, m_token = false, m_over = false;
};

// A node's rounded box with its title.
class NodeBoxItem : public QGraphicsItem {
public:
    NodeBoxItem(int node, const QRectF& rect, const Metrics& m)
        : m_node(node), m_rect(rect), m_m(m)
    {
        setZValue(kZNode);
    }
    QRectF boundingRect() const override { return m_rect.adjusted(-2, -2, 2, 2); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        p->setPen(QPen(m_warn ? kWarn : QColor(0x64, 0x74, 0x8b), m_warn ? 2.0 : 1.5));
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
    bool m_warn = false;
};

// Every node box and GPU card of a very large mesh in one item (MeshView::kMaxCardItems): the boxes
// plain (red-rimmed where a TP group crosses nodes), each card one fill, the followed token's GPUs ringed
// in yellow; cached in device pixels until a style changes (update()).
// The cards and boxes are MeshView's, kept out of the scene.
class CardFieldItem : public QGraphicsItem {
public:
    CardFieldItem(const std::vector<GpuCardItem*>& cards, const std::vector<NodeBoxItem*>& nodes, const QRectF& bounds)
        : m_cards(cards), m_nodes(nodes), m_bounds(bounds)
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
        for (const NodeBoxItem* node : m_nodes) {
            p->setPen(node->m_warn ? warn : plain);
            p->drawRect(node->m_rect);
        }
        for (const GpuCardItem* card : m_cards) {
            const QRectF r = card->m_rect.translated(card->pos());
            if (card->m_token)
                p->fillRect(r.adjusted(-3, -3, 3, 3), QColor(0xF0, 0xE4, 0x42));
            // A card is a pixel or two wide: what an outline says in a small mesh, its fill says here (the
            // hovered GPU and its peers dark, a GPU over its memory red, the rest faded while hovering).
            QColor fill = card->m_fill;
            if (card->m_highlighted)
                fill = card->m_outline.color();
            else if (card->m_over)
                fill = kWarn;
            else if (card->m_dimmed)
                fill = mix(fill, Qt::white, 0.3);
            p->fillRect(r, fill);
        }
    }

private:
    const std::vector<GpuCardItem*>& m_cards;
    const std::vector<NodeBoxItem*>& m_nodes;
    QRectF m_bounds;
};

} // namespace tw::ui
