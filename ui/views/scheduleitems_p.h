#pragma once
// The scene items of ScheduleView (a rank's card, a node box, a message's arrow, a moving packet, a
// label) and the drawing helpers they share with the view. Private to ui/views/scheduleview*.cpp.

#include "scheduleview.h"

#include "palette.h"

#include "base/units.h"
#include "views/qtstrings.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace tw::ui {

namespace scheduledraw {

// The shared colour-blind-safe palette (views/palette.h): categorical(), kInk, kMuted, mix (t = share of a).
using namespace palette;

inline const QColor kEmpty(0xf1, 0xf3, 0xf5);
inline const QColor kEmptyLine(0x9c, 0xa3, 0xaf);
inline const QColor kReduceInk(0x11, 0x18, 0x27);
inline const QColor kCopyInk(0x33, 0x41, 0x55);
inline const QColor kGauge(0x33, 0x41, 0x55);

// A rank's colour: the scheme's seven, then the seven darkened, then the seven lightened. Darkened
// first: rank 7's lightened blue (#0072B2 with white) sat beside rank 4's sky blue (#56B4E9), nearly
// the same colour; darkened it is a navy no other rank below 14 comes near.
inline QColor rankColor(int r)
{
    const QColor base = categorical(r % kCategoricalSize);
    switch ((r / kCategoricalSize) % 3) {
    case 1: return mix(base, Qt::black, 0.6);
    case 2: return mix(base, Qt::white, 0.55);
    default: return base;
    }
}

inline bool isDark(const QColor& c)
{
    return 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF() < 0.5;
}

inline QFont pixelFont(qreal px, bool bold = false)
{
    QFont f = QApplication::font();
    f.setPixelSize(std::max(6, int(std::lround(px))));
    f.setBold(bold);
    return f;
}

inline QString bytesText(double b, const DisplayUnits& units)
{
    return qs(formatBytes(b, units));
}

// The point of a rectangle's outline in direction `dir` from its centre, pushed out by `gap`.
inline QPointF edgePoint(const QRectF& r, QPointF dir, qreal gap)
{
    const qreal len = std::hypot(dir.x(), dir.y());
    if (len < 1e-9)
        return r.center();
    dir /= len;
    const qreal hw = r.width() / 2, hh = r.height() / 2;
    const qreal tx = std::fabs(dir.x()) > 1e-9 ? hw / std::fabs(dir.x()) : 1e18;
    const qreal ty = std::fabs(dir.y()) > 1e-9 ? hh / std::fabs(dir.y()) : 1e18;
    return r.center() + dir * (std::min(tx, ty) + gap);
}

inline QPointF bezier(const QPointF& a, const QPointF& c, const QPointF& b, qreal t)
{
    const qreal u = 1 - t;
    return a * (u * u) + c * (2 * u * t) + b * (t * t);
}

// Labels above the packets: a packet passing under a label never hides its text.
inline constexpr int kZNode = 0, kZArrow = 5, kZRank = 10, kZPacket = 40, kZLabel = 50;
inline constexpr int kMaxArrowLabels = 12;
inline constexpr int kLegendPx = 13;
inline constexpr std::uint64_t kProbeSlice = std::uint64_t(1) << 32;


} // namespace scheduledraw

using namespace scheduledraw; // the two scheduleview*.cpp files read the helpers unqualified
using Origins = ScheduleView::Origins;

// A rank's card: a band in the rank's own colour, then its buffer as cells (a row, or a small grid
// for many cells). Aggregated mode: a dot.
class ScheduleRankItem : public QGraphicsItem {
public:
    ScheduleRankItem(int rank, const QRectF& rect) : m_rank(rank), m_rect(rect)
    {
        setZValue(kZRank);
        setCacheMode(QGraphicsItem::DeviceCoordinateCache); // repainted only when the step changes
    }
    QRectF boundingRect() const override { return m_rect.adjusted(-3, -3, 3, 3); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        const QColor own = rankColor(m_rank);
        if (m_dot) {
            p->setPen(QPen(kInk, 0));
            p->setBrush(own);
            p->drawEllipse(m_rect);
            return;
        }
        const qreal scale = p->worldTransform().m11();
        p->setPen(QPen(QColor(0x94, 0xa3, 0xb8), 1.2 / std::max<qreal>(scale, 0.05)));
        p->setBrush(Qt::white);
        p->drawRoundedRect(m_rect, m_pad, m_pad);
        // The rank's own colour as a band on top, its number in it when readable.
        QPainterPath card;
        card.addRoundedRect(m_rect, m_pad, m_pad);
        p->save();
        p->setClipPath(card);
        p->fillRect(QRectF(m_rect.left(), m_rect.top(), m_rect.width(), m_band), own);
        p->restore();
        if (m_band * scale >= 9) {
            p->setPen(isDark(own) ? QColor(Qt::white) : kInk);
            // The title shrinks to the card's width (a card of one cell is narrow: "rank 0" must not clip);
            // below 60 % of the band's size the rank's number alone is drawn.
            const QRectF room(m_rect.left() + m_pad, m_rect.top(), m_rect.width() - 2 * m_pad, m_band);
            QString title = m_title;
            qreal px = m_band * 0.78;
            const qreal wide = QFontMetricsF(pixelFont(px, true)).horizontalAdvance(title);
            if (wide > room.width()) {
                px *= room.width() / wide;
                if (px < m_band * 0.78 * 0.6) {
                    title = QString::number(m_rank);
                    px = std::min(m_band * 0.78,
                                  m_band * 0.78 * room.width()
                                      / std::max<qreal>(1, QFontMetricsF(pixelFont(m_band * 0.78, true)).horizontalAdvance(title)));
                }
            }
            p->setFont(pixelFont(px, true));
            p->drawText(room, Qt::AlignCenter, title);
        }
        const bool labels = m_cell * scale >= 18;
        for (std::size_t i = 0; i < m_looks.size(); ++i)
            paintCell(p, cellRect(int(i)), m_looks[i], scale, labels, int(i));
    }

    QRectF cellRect(int i) const
    {
        const int col = i % m_cols, row = i / m_cols;
        return QRectF(m_rect.left() + m_pad + col * (m_cell + m_gap), m_rect.top() + m_band + m_pad + row * (m_cell + m_gap),
                      m_cell, m_cell);
    }

    void paintCell(QPainter* p, const QRectF& r, const ScheduleView::CellLook& look, qreal scale, bool labels, int position)
    {
        const qreal px = 1.0 / std::max<qreal>(scale, 0.05); // one device pixel in item units
        using S = ScheduleView::CellState;
        const int k = std::popcount(look.origins);
        if (look.state == S::Empty || (k == 0 && look.state != S::Sent)) {
            p->setPen(QPen(kEmptyLine, px, Qt::DashLine));
            p->setBrush(kEmpty);
            p->drawRect(r.adjusted(px / 2, px / 2, -px / 2, -px / 2));
            return;
        }
        if (look.state == S::Sent) {
            // Delivered own block: hollow, outlined in the rank's colour.
            p->setPen(QPen(rankColor(m_rank), 2 * px));
            p->setBrush(Qt::white);
            p->drawRect(r.adjusted(px, px, -px, -px));
            if (labels) {
                p->setPen(kMuted);
                p->setFont(pixelFont(m_cell * 0.36));
                p->drawText(r, Qt::AlignCenter, QStringLiteral("→%1").arg(position));
            }
            return;
        }
        // Too many contributors for stripes a pixel or two high: a gauge of how much of the sum is
        // in (k of N, filled from the bottom in ink), framed once complete.
        p->setPen(Qt::NoPen);
        if (k > 1 && r.height() * scale / k < 2.0) {
            const qreal share = double(k) / double(std::max(m_n, 1));
            p->fillRect(r, QColor(0xe2, 0xe8, 0xf0));
            p->fillRect(QRectF(r.left(), r.bottom() - r.height() * share, r.width(), r.height() * share), kGauge);
            p->setPen(QPen(look.complete ? kInk : QColor(0, 0, 0, 70), look.complete ? 2 * px : px));
            p->setBrush(Qt::NoBrush);
            p->drawRect(r);
            if (labels) {
                p->setPen(look.complete ? QColor(Qt::white) : kInk);
                p->setFont(pixelFont(m_cell * 0.4, true));
                p->drawText(r, Qt::AlignCenter, look.complete ? QStringLiteral("Σ") : QStringLiteral("%1/%2").arg(k).arg(m_n));
            }
            return;
        }
        // Stripes, one per contributor in rank order (a single stripe is a plain fill).
        const qreal h = r.height() / k;
        int i = 0;
        QColor single;
        for (Origins bits = look.origins; bits; bits &= bits - 1, ++i) {
            const int o = std::countr_zero(bits);
            single = rankColor(o);
            const qreal top = r.top() + i * h;
            p->fillRect(QRectF(r.left(), top, r.width(), i + 1 == k ? r.bottom() - top : h + px * 0.5), single);
        }
        p->setBrush(Qt::NoBrush);
        if (look.complete) {
            p->setPen(QPen(kInk, std::max(2.5 * px, r.width() * 0.09)));
            p->drawRect(r.adjusted(r.width() * 0.04, r.width() * 0.04, -r.width() * 0.04, -r.width() * 0.04));
        } else {
            p->setPen(QPen(QColor(0, 0, 0, 70), px));
            p->drawRect(r);
        }
        if (!labels)
            return;
        // Who is in the cell, in words too (colour is never the only cue).
        QString text;
        if (look.state == S::Pending)
            text = QStringLiteral("→%1").arg(position);
        else if (look.complete && m_reduction)
            text = QStringLiteral("Σ");
        else if (k == 1)
            text = QString::number(std::countr_zero(look.origins));
        else if (k <= 3 && m_cell * scale >= 30) {
            QStringList parts;
            for (Origins bits = look.origins; bits; bits &= bits - 1)
                parts << QString::number(std::countr_zero(bits));
            text = parts.join(QLatin1Char('+'));
        } else
            text = QStringLiteral("%1/%2").arg(k).arg(m_n);
        QFont f = pixelFont(m_cell * 0.4, true);
        QFontMetricsF fm(f);
        while (fm.horizontalAdvance(text) > r.width() * 0.92 && f.pixelSize() > 7) {
            f.setPixelSize(f.pixelSize() - 1);
            fm = QFontMetricsF(f);
        }
        p->setFont(f);
        if (k == 1 && look.state != S::Pending) {
            p->setPen(isDark(single) ? QColor(Qt::white) : kInk);
        } else {
            // Mixed stripes: a light pill under the text.
            const QSizeF ts(fm.horizontalAdvance(text) + 4, fm.height());
            const QRectF pill(r.center() - QPointF(ts.width() / 2, ts.height() / 2), ts);
            p->setPen(Qt::NoPen);
            p->setBrush(QColor(255, 255, 255, 215));
            p->drawRoundedRect(pill, 3, 3);
            p->setPen(kInk);
        }
        p->drawText(r, Qt::AlignCenter, text);
    }

    int m_rank;
    QRectF m_rect;
    qreal m_cell = 24, m_gap = 2, m_pad = 5, m_band = 16;
    int m_cols = 1;
    int m_n = 1;
    bool m_dot = false, m_reduction = false;
    QString m_title;
    std::vector<ScheduleView::CellLook> m_looks;
};

// A node box of the hierarchical layout.
class ScheduleNodeItem : public QGraphicsItem {
public:
    explicit ScheduleNodeItem(const QRectF& rect) : m_rect(rect) { setZValue(kZNode); }
    QRectF boundingRect() const override { return m_rect.adjusted(-2, -2, 2, 2); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        const qreal scale = std::max<qreal>(p->worldTransform().m11(), 0.05);
        p->setPen(QPen(QColor(0x64, 0x74, 0x8b), 1.5 / scale));
        p->setBrush(QColor(0xf3, 0xf4, 0xf6));
        p->drawRoundedRect(m_rect, 10, 10);
    }
    QRectF m_rect;
};

// One message of the step: a curved arrow from the sender's card to the receiver's, bowed to the
// left of its direction so that the two directions between a pair never overlap. Reduce: solid;
// copy: dashed. Widths are in device pixels.
class ScheduleArrowItem : public QGraphicsItem {
public:
    ScheduleArrowItem() { setZValue(kZArrow); }
    QRectF boundingRect() const override { return m_bounds; }
    void setGeometry(QPointF a, QPointF c, QPointF b, bool reduce, qreal headScene)
    {
        prepareGeometryChange();
        m_a = a, m_c = c, m_b = b;
        m_reduce = reduce;
        m_head = headScene;
        m_path = QPainterPath(a);
        m_path.quadTo(c, b);
        m_bounds = m_path.boundingRect().adjusted(-headScene, -headScene, headScene, headScene);
        update();
    }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        const qreal scale = std::max<qreal>(p->worldTransform().m11(), 0.02);
        const qreal width = m_thin ? 1.6 : 2.6;
        const QColor ink = m_reduce ? kReduceInk : kCopyInk;
        QPen pen(ink, width / scale, m_reduce ? Qt::SolidLine : Qt::DashLine, Qt::FlatCap);
        if (!m_reduce)
            pen.setDashPattern({4.0, 2.5});
        p->setPen(pen);
        p->setBrush(Qt::NoBrush);
        // Stop the line at the head's base.
        const qreal head = std::min(m_head, (m_thin ? 8.0 : 12.0) / scale);
        QPointF dir = m_b - m_c;
        const qreal len = std::hypot(dir.x(), dir.y());
        if (len < 1e-9)
            return;
        dir /= len;
        const QPointF base = m_b - dir * head;
        QPainterPath line(m_a);
        line.quadTo(m_c, base);
        p->drawPath(line);
        const QPointF n(-dir.y(), dir.x());
        QPolygonF tri;
        tri << m_b << base + n * head * 0.45 << base - n * head * 0.45;
        p->setPen(Qt::NoPen);
        p->setBrush(ink);
        p->drawPolygon(tri);
    }
    QPointF pointAt(qreal t) const { return bezier(m_a, m_c, m_b, t); }

    QPointF m_a, m_c, m_b;
    QPainterPath m_path;
    QRectF m_bounds;
    qreal m_head = 10;
    bool m_reduce = false, m_thin = false;
};

// A moving packet: a small disc (constant size on screen) split into the colours of the data it
// carries.
class SchedulePacketItem : public QGraphicsItem {
public:
    SchedulePacketItem()
    {
        setZValue(kZPacket);
        setFlag(QGraphicsItem::ItemIgnoresTransformations);
    }
    QRectF boundingRect() const override { return QRectF(-m_r - 2, -m_r - 2, 2 * m_r + 4, 2 * m_r + 4); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        const QRectF disc(-m_r, -m_r, 2 * m_r, 2 * m_r);
        const int k = std::popcount(m_origins);
        p->setPen(Qt::NoPen);
        if (k == 0 || k > 8) {
            // Many contributors: a white disc with their number (an ink dot when too small).
            p->setBrush(k == 0 || m_r < 8 ? kInk : QColor(Qt::white));
            p->drawEllipse(disc);
            if (k > 0 && m_r >= 8) {
                p->setPen(kInk);
                p->setFont(pixelFont(m_r * 1.1, true));
                p->drawText(disc, Qt::AlignCenter, QString::number(k));
            }
        } else {
            int i = 0;
            for (Origins bits = m_origins; bits; bits &= bits - 1, ++i) {
                p->setBrush(rankColor(std::countr_zero(bits)));
                p->drawPie(disc, 90 * 16 - i * 5760 / k, -5760 / k);
            }
        }
        p->setPen(QPen(kInk, m_reduce ? 2.0 : 1.2));
        p->setBrush(Qt::NoBrush);
        p->drawEllipse(disc);
    }
    Origins m_origins = 0;
    qreal m_r = 7;
    bool m_reduce = false;
};

// Text with a white pill, constant size on screen. `m_dir` shifts it away from its anchor (a rank
// label outside the ring, an arrow label off its curve).
class ScheduleLabelItem : public QGraphicsItem {
public:
    ScheduleLabelItem()
    {
        setZValue(kZLabel);
        setFlag(QGraphicsItem::ItemIgnoresTransformations);
    }
    QRectF boundingRect() const override { return m_box.adjusted(-1, -1, 1, 1); }
    void setText(const QString& text, qreal px, bool bold, QPointF dir, bool pill)
    {
        prepareGeometryChange();
        m_text = text;
        m_font = pixelFont(px, bold);
        m_pill = pill;
        const QFontMetricsF fm(m_font);
        const QSizeF s(fm.horizontalAdvance(text) + 8, fm.height() + 2);
        // Centre offset so that the box's near edge sits about 4 px from the anchor along dir.
        const qreal len = std::hypot(dir.x(), dir.y());
        QPointF off(0, 0);
        if (len > 1e-9) {
            dir /= len;
            const qreal tx = std::fabs(dir.x()) > 1e-9 ? (s.width() / 2) / std::fabs(dir.x()) : 1e9;
            const qreal ty = std::fabs(dir.y()) > 1e-9 ? (s.height() / 2) / std::fabs(dir.y()) : 1e9;
            off = dir * (std::min(tx, ty) + 3);
        }
        m_box = QRectF(off - QPointF(s.width() / 2, s.height() / 2), s);
        update();
    }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override
    {
        if (m_pill) {
            p->setPen(QPen(QColor(0xcb, 0xd5, 0xe1), 1));
            p->setBrush(QColor(255, 255, 255, 235));
            p->drawRoundedRect(m_box, 4, 4);
        }
        p->setPen(kInk);
        p->setFont(m_font);
        p->drawText(m_box, Qt::AlignCenter, m_text);
    }
    // The box in viewport pixels (the item ignores the view's scale).
    [[nodiscard]] QRectF viewRect(const QGraphicsView* view) const { return m_box.translated(view->mapFromScene(pos())); }
    QString m_text;
    QFont m_font;
    QRectF m_box;
    bool m_pill = true;
    // An arrow's label: its full and its short text, the side it leans to, its size.
    QString m_full, m_short;
    QPointF m_dir;
    qreal m_px = 13;
};

} // namespace tw::ui
