#include "scheduleview.h"

#include "palette.h"

#include "base/units.h"
#include "views/qtstrings.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QPainter>
#include <QPainterPath>
#include <QResizeEvent>
#include <QStyleOptionGraphicsItem>
#include <QTimer>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <numbers>

namespace tw::ui {

using collective::Algorithm;
using collective::Op;
using collective::Transfer;
using Origins = ScheduleView::Origins;

namespace {

// The shared colour-blind-safe palette (views/palette.h).
const auto& kPalette = palette::kCategorical;
constexpr int kPaletteSize = palette::kCategoricalSize;
const QColor kInk = palette::kInk;
const QColor kMuted = palette::kMuted;
const QColor kEmpty(0xf1, 0xf3, 0xf5);
const QColor kEmptyLine(0x9c, 0xa3, 0xaf);
const QColor kReduceInk(0x11, 0x18, 0x27);
const QColor kCopyInk(0x33, 0x41, 0x55);
const QColor kGauge(0x33, 0x41, 0x55);

using palette::mix; // t = share of a

QColor rankColor(int r)
{
    static const double tints[] = {1.0, 0.55, 0.6};
    const QColor base = kPalette[r % kPaletteSize];
    switch ((r / kPaletteSize) % 3) {
    case 1: return mix(base, Qt::white, tints[1]);
    case 2: return mix(base, Qt::black, tints[2]);
    default: return base;
    }
}

bool isDark(const QColor& c)
{
    return 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF() < 0.5;
}

QFont pixelFont(qreal px, bool bold = false)
{
    QFont f = QApplication::font();
    f.setPixelSize(std::max(6, int(std::lround(px))));
    f.setBold(bold);
    return f;
}

QString bytesText(double b, const DisplayUnits& units)
{
    return qs(formatBytes(b, units));
}

// The point of a rectangle's outline in direction `dir` from its centre, pushed out by `gap`.
QPointF edgePoint(const QRectF& r, QPointF dir, qreal gap)
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

QPointF bezier(const QPointF& a, const QPointF& c, const QPointF& b, qreal t)
{
    const qreal u = 1 - t;
    return a * (u * u) + c * (2 * u * t) + b * (t * t);
}

constexpr int kZNode = 0, kZArrow = 5, kZRank = 10, kZLabel = 30, kZPacket = 40;
constexpr int kMaxArrowLabels = 12;
constexpr int kLegendPx = 13;
constexpr std::uint64_t kProbeSlice = std::uint64_t(1) << 32;

} // namespace

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
    QString m_text;
    QFont m_font;
    QRectF m_box;
    bool m_pill = true;
};

// ---------------------------------------------------------------------------------------------

ScheduleView::ScheduleView(QWidget* parent)
    : QGraphicsView(parent), m_sched(collective::ScheduleSpec{})
{
    setObjectName(QStringLiteral("scheduleView"));
    setScene(new QGraphicsScene(this));
    scene()->setItemIndexMethod(QGraphicsScene::NoIndex); // packets move every frame
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setBackgroundBrush(Qt::white);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontSavePainterState);
    setFrameShape(QFrame::NoFrame);
    setMinimumSize(360, 260);
    m_timer = new QTimer(this);
    m_timer->setTimerType(Qt::PreciseTimer);
    m_timer->setInterval(16); // ≈ 60 Hz
    connect(m_timer, &QTimer::timeout, this, &ScheduleView::onTick);
}

ScheduleView::~ScheduleView() = default;

void ScheduleView::clearScene()
{
    scene()->clear();
    m_ranks.clear();
    m_nodes.clear();
    m_arrows.clear();
    m_labels.clear();
    m_packets.clear();
}

void ScheduleView::setSpec(const collective::ScheduleSpec& spec)
{
    pause();
    m_inFlight = false;
    m_spec = spec;
    buildModel();
    buildLayout();
    buildItems();
    replayTo(0);
    fit();
}

void ScheduleView::buildModel()
{
    m_shown.clear();
    m_shownStep = -1;
    m_state.clear();
    m_initial.clear();
    m_chunkPieces.clear();
    m_blockChunk.clear();
    m_chunks.clear();
    m_parent.clear();
    m_pieces = 0;
    m_applied = m_genPos = 0;
    const auto errors = collective::validate(m_spec);
    m_valid = errors.empty();
    m_error = m_valid ? QString() : qs(errors.front().toString());
    m_sched = collective::Schedule(m_valid ? m_spec : collective::ScheduleSpec{});
    m_n = m_valid ? m_spec.ranks : 0;
    m_stepCount = m_valid ? m_sched.stepCount() : 0;
    m_aggregated = m_n > std::uint64_t(kMaxCellRanks);
    m_allToAll = m_spec.op == Op::AllToAll;
    m_reduction = m_spec.op == Op::AllReduce || m_spec.op == Op::ReduceScatter || m_spec.op == Op::Reduce;
    // Direct exchange sends each rank's own input, not what it has summed so far: core says which.
    m_sendsInput = m_valid && m_sched.sendsInput();
    m_all = m_n >= 64 ? ~Origins(0) : (Origins(1) << m_n) - 1;
    if (!m_valid || m_aggregated || m_n == 0)
        return;

    const std::uint32_t chunks = m_sched.chunkCount();
    m_chunks.resize(chunks);
    for (std::uint32_t c = 0; c < chunks; ++c)
        m_chunks[c] = m_sched.chunk(c);
    const std::uint64_t n = m_n;

    if (m_allToAll) {
        // Every block is its own piece; chunk o·N + d per the table's origin/destination.
        m_pieces = chunks;
        m_chunkPieces.resize(chunks);
        m_blockChunk.assign(n * n, 0);
        for (std::uint32_t c = 0; c < chunks; ++c) {
            m_chunkPieces[c] = {c, 1};
            if (m_chunks[c].origin < n && m_chunks[c].destination < n)
                m_blockChunk[m_chunks[c].origin * n + m_chunks[c].destination] = c;
        }
        m_initial.assign(n * m_pieces, 0);
        for (std::uint64_t r = 0; r < n; ++r)
            for (std::uint32_t c = 0; c < chunks; ++c)
                if (m_chunks[c].origin == r)
                    m_initial[r * m_pieces + c] = Origins(1) << r;
    } else {
        // The finest split of the chunk table. Its boundaries are read off a probe schedule of the
        // same call with M = N·2^32 bytes (the same chunk table with no empty pieces, whatever the
        // real M), so slice r of the even split is [r·2^32, (r+1)·2^32).
        collective::ScheduleSpec probeSpec = m_spec;
        probeSpec.bytes = double(n * kProbeSlice);
        const bool pipelined = m_spec.algorithm == Algorithm::BinaryTree || m_spec.algorithm == Algorithm::DoubleBinaryTree
                               || m_spec.algorithm == Algorithm::Chain;
        if (pipelined && probeSpec.pipelineChunks == 0)
            probeSpec.pipelineChunks = chunks / (m_spec.algorithm == Algorithm::DoubleBinaryTree ? 2 : 1);
        std::vector<collective::Chunk> table;
        double total = probeSpec.bytes;
        if (collective::validate(probeSpec).empty()) {
            collective::Schedule probe(probeSpec);
            if (probe.chunkCount() == chunks) {
                table.resize(chunks);
                for (std::uint32_t c = 0; c < chunks; ++c)
                    table[c] = probe.chunk(c);
            }
        }
        if (table.empty()) { // fall back on the real table
            table = m_chunks;
            total = std::max(1.0, m_spec.bytes);
        }
        std::vector<double> bounds{0};
        for (const auto& ch : table) {
            if (ch.bytes <= 0)
                continue;
            bounds.push_back(std::fmod(ch.offset, total));
            bounds.push_back(std::fmod(ch.offset + ch.bytes, total));
        }
        std::sort(bounds.begin(), bounds.end());
        bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
        m_pieces = std::uint32_t(bounds.size());
        auto index = [&](double at) {
            return std::uint32_t(std::lower_bound(bounds.begin(), bounds.end(), at) - bounds.begin());
        };
        m_chunkPieces.resize(chunks);
        for (std::uint32_t c = 0; c < chunks; ++c) {
            const auto& ch = table[c];
            const double start = std::fmod(ch.offset, total), end = ch.offset + ch.bytes;
            const std::uint32_t first = index(start);
            std::uint32_t count = 0;
            if (ch.bytes <= 0)
                count = 0;
            else if (end <= total)
                count = (end >= total ? m_pieces : index(end)) - first;
            else
                count = (m_pieces - first) + index(end - total);
            m_chunkPieces[c] = {first, count};
        }
        m_initial.assign(n * m_pieces, 0);
        for (std::uint64_t r = 0; r < n; ++r)
            for (std::uint32_t p = 0; p < m_pieces; ++p) {
                bool holds = false;
                switch (m_spec.op) {
                case Op::AllReduce:
                case Op::ReduceScatter:
                case Op::Reduce: holds = true; break;
                case Op::AllGather:
                    holds = total == probeSpec.bytes ? std::uint64_t(bounds[p]) / kProbeSlice == r
                                                     : std::uint64_t(bounds[p] * double(n) / total) == r;
                    break;
                case Op::Broadcast: holds = r == m_spec.root; break;
                case Op::SendRecv: holds = r == 0; break;
                case Op::AllToAll: break;
                }
                if (holds)
                    m_initial[r * m_pieces + p] = Origins(1) << r;
            }
    }
}

void ScheduleView::buildLayout()
{
    m_center.assign(m_n, QPointF());
    m_parent.clear();
    if (!m_valid || m_n == 0) {
        m_layout = LayoutKind::Ring;
        return;
    }
    using A = Algorithm;
    switch (m_spec.algorithm) {
    case A::BinaryTree:
    case A::DoubleBinaryTree:
    case A::Binomial:
    case A::Flat:
    case A::Chain:
    case A::ReduceBroadcast: m_layout = LayoutKind::Tree; break;
    case A::Hierarchical: m_layout = LayoutKind::Grid; break;
    default: m_layout = LayoutKind::Ring; break;
    }
    if (m_layout == LayoutKind::Tree) {
        // The tree is read off the schedule: chunk 0's reduce transfers go child → parent, its
        // copies parent → child (for the double binary tree chunk 0 is in the first tree).
        std::vector<int> parent(m_n, -2);
        std::uint64_t known = 0;
        std::vector<Transfer> step;
        m_sched.reset();
        while (known + 1 < m_n && m_sched.next(step))
            for (const Transfer& t : step) {
                if (t.chunk != 0)
                    continue;
                const std::uint32_t child = t.reduce ? t.src : t.dst, up = t.reduce ? t.dst : t.src;
                if (parent[child] == -2) {
                    parent[child] = int(up);
                    ++known;
                }
            }
        m_sched.reset();
        m_genPos = 0;
        int roots = 0;
        for (auto& p : parent)
            if (p == -2) {
                p = -1;
                ++roots;
            }
        bool ok = roots == 1;
        for (std::uint64_t r = 0; ok && r < m_n; ++r) { // no cycles
            int v = int(r);
            for (std::uint64_t hops = 0; v >= 0 && hops <= m_n; ++hops)
                v = parent[std::size_t(v)];
            ok = v < 0;
        }
        if (ok)
            m_parent = std::move(parent);
        else
            m_layout = LayoutKind::Ring;
    }
}

void ScheduleView::buildItems()
{
    clearScene();
    if (!m_valid || m_n == 0) {
        m_contentRect = QRectF(0, 0, 400, 200);
        updateCaption();
        return;
    }
    QGraphicsScene* s = scene();
    const std::uint64_t n = m_n;
    const int positions = cellsPerRank();
    // Card geometry (scene units; fit() scales the whole drawing).
    const qreal cell = n <= 8 ? 34 : 26, gap = 2, pad = 5, band = n <= 8 ? 22 : n <= 16 ? 18 : 24;
    const int cols = positions <= 8 ? std::max(positions, 1) : int(std::ceil(std::sqrt(double(positions))));
    const int rows = positions == 0 ? 0 : (positions + cols - 1) / cols;
    QSizeF card(2 * pad + cols * cell + (cols - 1) * gap, band + 2 * pad + rows * cell + std::max(rows - 1, 0) * gap);
    if (m_aggregated)
        card = QSizeF(18, 18);
    card.setWidth(std::max<qreal>(card.width(), m_aggregated ? 18 : 54));
    m_cellPx = cell;
    const qreal diag = std::hypot(card.width(), card.height());

    if (m_layout == LayoutKind::Ring) {
        // An ellipse about as wide as a projector's 16:9 picture, ranks at equal arc lengths from
        // the top, clockwise; neighbours ~1.3 card diagonals apart (room for the arrow between).
        const qreal pi = std::numbers::pi, aspect = n <= 2 ? 1.0 : 1.9;
        constexpr int kSamples = 2048;
        std::vector<QPointF> unit(kSamples + 1);
        std::vector<qreal> arc(kSamples + 1, 0);
        for (int i = 0; i <= kSamples; ++i) {
            const qreal t = -pi / 2 + 2 * pi * i / kSamples;
            unit[std::size_t(i)] = QPointF(aspect * std::cos(t), std::sin(t));
            if (i > 0)
                arc[std::size_t(i)] = arc[std::size_t(i - 1)] + QLineF(unit[std::size_t(i - 1)], unit[std::size_t(i)]).length();
        }
        const qreal perimeter = arc.back();
        const qreal ry = std::max(double(n) * (n <= 8 ? 1.3 : 1.15) * diag / perimeter, n <= 2 ? 1.2 * diag : 0.9 * diag);
        std::size_t at = 0;
        for (std::uint64_t r = 0; r < n; ++r) {
            const qreal want = perimeter * double(r) / double(n);
            while (at + 1 < arc.size() && arc[at + 1] <= want)
                ++at;
            m_center[r] = unit[at] * ry;
        }
    } else if (m_layout == LayoutKind::Tree) {
        std::vector<std::vector<int>> kids(n);
        int root = 0;
        for (std::uint64_t r = 0; r < n; ++r) {
            if (m_parent[r] < 0)
                root = int(r);
            else
                kids[std::size_t(m_parent[r])].push_back(int(r));
        }
        std::size_t maxKids = 0;
        for (const auto& k : kids)
            maxKids = std::max(maxKids, k.size());
        const qreal dx = card.width() + std::max<qreal>(18, card.width() * 0.25);
        const qreal dy = card.height() + std::max<qreal>(80, card.height() * 0.9);
        if (maxKids <= 1 && n >= 6) {
            // A chain: a serpentine, left to right, then right to left.
            const std::uint64_t perRow = std::uint64_t(std::ceil(std::sqrt(double(n) * 1.6)));
            int v = root;
            for (std::uint64_t i = 0; i < n && v >= 0; ++i) {
                const std::uint64_t row = i / perRow, col = row % 2 == 0 ? i % perRow : perRow - 1 - i % perRow;
                m_center[std::size_t(v)] = QPointF(double(col) * (dx + 40), double(row) * dy);
                v = kids[std::size_t(v)].empty() ? -1 : kids[std::size_t(v)].front();
            }
        } else if (kids[std::size_t(root)].size() + 1 == n && n > 12) {
            // A star (flat): the root on top, the others in rows under it.
            const std::uint64_t k = n - 1;
            const std::uint64_t perRow = std::uint64_t(std::ceil(std::sqrt(double(k) * 2.5)));
            const std::uint64_t rowsK = (k + perRow - 1) / perRow;
            m_center[std::size_t(root)] = QPointF(double(perRow - 1) * dx / 2, 0);
            for (std::uint64_t i = 0; i < k; ++i) {
                const int v = kids[std::size_t(root)][i];
                m_center[std::size_t(v)] = QPointF(double(i % perRow) * dx, dy * 1.3 + double(i / perRow) * (card.height() + 34));
            }
            (void)rowsK;
        } else {
            // Tidy tree: leaves on consecutive slots, a parent over the middle of its children. Many
            // leaves: slots half a card apart, neighbouring leaves staggered up and down.
            std::uint64_t leaves = 0;
            for (const auto& k : kids)
                leaves += k.empty();
            const bool stagger = leaves > 8;
            const qreal slotW = stagger ? card.width() * 0.62 : dx;
            qreal slot = 0;
            int maxDepth = 0;
            std::vector<int> depth(n, 0);
            std::function<void(int, int)> place = [&](int v, int d) {
                depth[std::size_t(v)] = d;
                maxDepth = std::max(maxDepth, d);
                const auto& ks = kids[std::size_t(v)];
                if (ks.empty()) {
                    m_center[std::size_t(v)] = QPointF(slot * slotW, d);
                    slot += 1;
                    return;
                }
                for (int c : ks)
                    place(c, d + 1);
                const qreal x = (m_center[std::size_t(ks.front())].x() + m_center[std::size_t(ks.back())].x()) / 2;
                m_center[std::size_t(v)] = QPointF(x, d);
            };
            place(root, 0);
            // Levels spread out until the drawing is about as tall as a 16:9 picture allows.
            const qreal width = std::max<qreal>(slot * slotW, card.width());
            qreal levelGap = dy;
            if (maxDepth > 0)
                levelGap = std::clamp<qreal>((width / 2.0 - card.height()) / maxDepth, dy, dy * 2.2);
            std::map<int, int> seenAtDepth;
            for (std::uint64_t v = 0; v < n; ++v) {
                const int d = int(m_center[v].y());
                qreal y = d * levelGap;
                if (stagger && kids[v].empty())
                    y += (int(std::lround(m_center[v].x() / slotW)) % 2) * (card.height() + 16);
                m_center[v].setY(y);
            }
        }
    } else { // Grid: one box per node, its ranks in a row (or two)
        const std::uint64_t g = m_spec.ranksPerNode == 0 ? n : m_spec.ranksPerNode;
        const std::uint64_t nodes = (n + g - 1) / g;
        const std::uint64_t inCols = g <= 4 ? g : std::uint64_t(std::ceil(std::sqrt(double(g))));
        const std::uint64_t inRows = (g + inCols - 1) / inCols;
        const qreal cgap = 30, npad = 16, title = 12;
        const qreal nodeW = 2 * npad + double(inCols) * card.width() + double(inCols - 1) * cgap;
        const qreal nodeH = title + npad + double(inRows) * card.height() + double(inRows - 1) * cgap;
        const qreal ngap = std::max<qreal>(90, card.height() * 0.8);
        std::uint64_t nodeCols = 1;
        double best = 1e18;
        for (std::uint64_t c = 1; c <= nodes; ++c) {
            const std::uint64_t r = (nodes + c - 1) / c;
            const double score = std::fabs(std::log((double(c) * (nodeW + ngap)) / (double(r) * (nodeH + ngap)) / 2.0));
            if (score < best - 1e-9) {
                best = score;
                nodeCols = c;
            }
        }
        for (std::uint64_t k = 0; k < nodes; ++k) {
            // Snake order (left to right, then right to left) so that the ring of nodes k → k+1 runs
            // between neighbouring boxes.
            const std::uint64_t row = k / nodeCols, col = row % 2 == 0 ? k % nodeCols : nodeCols - 1 - k % nodeCols;
            const QRectF box(double(col) * (nodeW + ngap), double(row) * (nodeH + ngap), nodeW, nodeH);
            auto* item = new ScheduleNodeItem(box);
            s->addItem(item);
            m_nodes.push_back(item);
            auto* label = new ScheduleLabelItem;
            label->setText(tr("node %1").arg(k), n <= 16 ? 14 : 12, true, QPointF(0.35, -1), false);
            label->setPos(box.topLeft() + QPointF(8, 0));
            s->addItem(label);
            for (std::uint64_t i = 0; i < g && k * g + i < n; ++i)
                m_center[k * g + i] = QPointF(box.left() + npad + double(i % inCols) * (card.width() + cgap) + card.width() / 2,
                                              box.top() + title + double(i / inCols) * (card.height() + cgap) + card.height() / 2);
        }
    }

    m_ranks.reserve(n);
    for (std::uint64_t r = 0; r < n; ++r) {
        auto* item = new ScheduleRankItem(int(r), QRectF(m_center[r] - QPointF(card.width() / 2, card.height() / 2), card));
        item->m_cell = cell;
        item->m_gap = gap;
        item->m_pad = pad;
        item->m_band = band;
        item->m_cols = cols;
        item->m_n = int(n);
        item->m_dot = m_aggregated;
        item->m_reduction = m_reduction;
        item->m_title = n <= 8 ? tr("rank %1").arg(r) : QString::number(r);
        s->addItem(item);
        m_ranks.push_back(item);
    }
    // Rank numbers outside the ring when the cards are too small to carry them (every k-th above 64).
    if (m_layout == LayoutKind::Ring && n > 8) {
        const std::uint64_t every = n <= 64 ? 1 : (n + 63) / 64;
        for (std::uint64_t r = 0; r < n; r += every) {
            auto* label = new ScheduleLabelItem;
            const QPointF c = m_center[r];
            const qreal len = std::hypot(c.x(), c.y());
            const QPointF dir = len > 1e-9 ? c / len : QPointF(0, -1);
            label->setText(QString::number(r), n <= 32 ? 13 : 11, true, dir, false);
            label->setPos(edgePoint(m_ranks[r]->m_rect, dir, 2));
            s->addItem(label);
        }
    }
    m_contentRect = s->itemsBoundingRect();
    for (const QPointF& c : m_center) // room for the arrows bowing outward around a ring
        m_contentRect |= QRectF(c - QPointF(1, 1), QSizeF(2, 2));
    const qreal margin = m_layout == LayoutKind::Ring ? diag * 0.3 : diag * 0.15;
    m_contentRect.adjust(-margin, -margin, margin, margin);
    // Tree: the top margin holds the arrows into the root (none) — keep it small.
    if (m_layout == LayoutKind::Tree)
        m_contentRect.adjust(0, margin * 0.5, 0, 0);
}

int ScheduleView::cellsPerRank() const
{
    if (!m_valid || m_aggregated)
        return 0;
    return m_allToAll ? int(m_n) : int(m_pieces);
}

void ScheduleView::resetState()
{
    m_state = m_initial;
    m_sched.reset();
    m_genPos = 0;
    m_applied = 0;
}

bool ScheduleView::fetchNext(std::vector<Transfer>& out)
{
    if (!m_valid || m_genPos >= m_stepCount) {
        out.clear();
        return false;
    }
    if (!m_sched.next(out))
        return false;
    ++m_genPos;
    return true;
}

Origins ScheduleView::payloadOf(const Transfer& t) const
{
    if (m_aggregated || t.chunk >= m_chunkPieces.size())
        return 0;
    const PieceRun run = m_chunkPieces[t.chunk];
    const std::vector<Origins>& from = m_sendsInput ? m_initial : m_state;
    Origins o = 0;
    for (std::uint32_t i = 0; i < run.count; ++i)
        o |= from[std::size_t(t.src) * m_pieces + (run.first + i) % m_pieces];
    return o;
}

// Applies one step: every transfer reads the sender's pieces as they were at the start of the step;
// a reduce adds the sender's contributors to the receiver's, a copy overwrites them.
void ScheduleView::apply(const std::vector<Transfer>& step)
{
    if (m_aggregated || m_pieces == 0)
        return;
    const std::vector<Origins>& from = m_sendsInput ? m_initial : m_state;
    std::vector<Origins> payload;
    std::vector<std::size_t> start;
    start.reserve(step.size());
    for (const Transfer& t : step) {
        start.push_back(payload.size());
        if (t.chunk >= m_chunkPieces.size() || t.src >= m_n)
            continue;
        const PieceRun run = m_chunkPieces[t.chunk];
        for (std::uint32_t i = 0; i < run.count; ++i)
            payload.push_back(from[std::size_t(t.src) * m_pieces + (run.first + i) % m_pieces]);
    }
    for (std::size_t k = 0; k < step.size(); ++k) {
        const Transfer& t = step[k];
        if (t.chunk >= m_chunkPieces.size() || t.dst >= m_n)
            continue;
        const PieceRun run = m_chunkPieces[t.chunk];
        for (std::uint32_t i = 0; i < run.count; ++i) {
            Origins& d = m_state[std::size_t(t.dst) * m_pieces + (run.first + i) % m_pieces];
            d = t.reduce ? (d | payload[start[k] + i]) : payload[start[k] + i];
        }
    }
}

void ScheduleView::replayTo(std::uint64_t step)
{
    m_inFlight = false;
    resetState();
    step = std::min(step, m_stepCount);
    std::vector<Transfer> t;
    std::vector<Transfer> last;
    while (m_applied < step && fetchNext(t)) {
        apply(t);
        ++m_applied;
        last.swap(t);
    }
    m_shown = std::move(last);
    showTransfers(m_applied == 0 ? -1 : int(m_applied) - 1, false);
    restyleRanks();
    emit stepChanged(currentStep(), stepCount());
}

void ScheduleView::stepForward()
{
    if (m_inFlight) {
        finishFlight();
        return;
    }
    if (m_applied >= m_stepCount)
        return;
    std::vector<Transfer> t;
    if (!fetchNext(t))
        return;
    apply(t);
    ++m_applied;
    m_shown = std::move(t);
    showTransfers(int(m_applied) - 1, false);
    restyleRanks();
    emit stepChanged(currentStep(), stepCount());
}

void ScheduleView::stepBack()
{
    if (m_playing)
        pause();
    if (m_applied == 0 && !m_inFlight)
        return;
    replayTo(m_applied == 0 ? 0 : m_applied - 1);
}

void ScheduleView::setStep(int step)
{
    replayTo(std::uint64_t(std::max(step, 0)));
}

void ScheduleView::play()
{
    if (!m_valid || m_stepCount == 0)
        return;
    if (m_applied >= m_stepCount && !m_inFlight)
        replayTo(0);
    m_playing = true;
    m_clock.start();
    m_timer->start();
    emit playingChanged(true);
}

void ScheduleView::pause()
{
    if (!m_playing)
        return;
    m_playing = false;
    m_timer->stop();
    emit playingChanged(false);
}

void ScheduleView::setSpeed(double stepsPerSecond)
{
    m_speed = std::clamp(stepsPerSecond, 0.05, 240.0);
}

void ScheduleView::onTick()
{
    const double dt = std::min(0.1, double(m_clock.nsecsElapsed()) * 1e-9);
    m_clock.restart();
    advanceAnimation(dt);
}

void ScheduleView::advanceAnimation(double seconds)
{
    if (!m_valid)
        return;
    QElapsedTimer cost;
    cost.start();
    if (!m_inFlight) {
        if (m_applied >= m_stepCount) {
            pause();
            return;
        }
        // The next step takes off: its transfers become the arrows, packets leave the senders.
        if (!fetchNext(m_shown)) {
            pause();
            return;
        }
        m_inFlight = true;
        m_progress = 0;
        showTransfers(int(m_applied), true);
    }
    m_progress += std::max(0.0, seconds) * m_speed;
    while (m_progress >= 1.0) {
        const double rest = m_progress - 1.0;
        finishFlight();
        if (m_applied >= m_stepCount) {
            pause();
            break;
        }
        if (!fetchNext(m_shown))
            break;
        m_inFlight = true;
        m_progress = rest;
        showTransfers(int(m_applied), true);
    }
    placePackets();
    const double ms = double(cost.nsecsElapsed()) * 1e-6;
    ++m_stats.frames;
    m_stats.meanTickMs += (ms - m_stats.meanTickMs) / m_stats.frames;
    m_stats.maxTickMs = std::max(m_stats.maxTickMs, ms);
}

void ScheduleView::finishFlight()
{
    if (!m_inFlight)
        return;
    apply(m_shown);
    ++m_applied;
    m_inFlight = false;
    m_progress = 0;
    showTransfers(int(m_applied) - 1, false);
    restyleRanks();
    emit stepChanged(currentStep(), stepCount());
}

// Arrows (one per message: the transfers between one pair in the step), their labels and packets,
// from the item pools.
void ScheduleView::showTransfers(int scheduleStep, bool inFlight)
{
    m_shownStep = scheduleStep;
    if (scheduleStep < 0)
        m_shown.clear();
    struct Message {
        std::uint32_t src, dst;
        std::uint32_t chunk;
        int transfers = 0;
        double bytes = 0;
        bool reduce = false;
        Origins payload = 0;
    };
    std::vector<Message> messages;
    {
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> at;
        for (const Transfer& t : m_shown) {
            if (t.src >= m_n || t.dst >= m_n)
                continue;
            auto [it, fresh] = at.try_emplace({t.src, t.dst}, messages.size());
            if (fresh)
                messages.push_back({t.src, t.dst, t.chunk, 0, 0, t.reduce, 0});
            Message& m = messages[it->second];
            ++m.transfers;
            m.bytes += t.bytes;
            m.reduce = m.reduce || t.reduce;
            if (inFlight)
                m.payload |= m_allToAll && t.chunk < m_chunks.size() ? Origins(1) << (m_chunks[t.chunk].origin % 64) : payloadOf(t);
        }
    }
    QGraphicsScene* s = scene();
    while (m_arrows.size() < messages.size()) {
        auto* a = new ScheduleArrowItem;
        s->addItem(a);
        m_arrows.push_back(a);
        auto* p = new SchedulePacketItem;
        s->addItem(p);
        m_packets.push_back(p);
    }
    const bool labels = messages.size() <= std::size_t(kMaxArrowLabels) && !m_aggregated;
    while (labels && m_labels.size() < messages.size()) {
        auto* l = new ScheduleLabelItem;
        s->addItem(l);
        m_labels.push_back(l);
    }
    const qreal head = m_aggregated ? 8 : m_cellPx * 0.6;
    for (std::size_t i = 0; i < m_arrows.size(); ++i) {
        ScheduleArrowItem* a = m_arrows[i];
        SchedulePacketItem* p = m_packets[i];
        if (i >= messages.size()) {
            a->setVisible(false);
            p->setVisible(false);
            continue;
        }
        const Message& m = messages[i];
        const QRectF from = m_ranks[m.src]->m_rect, to = m_ranks[m.dst]->m_rect;
        const QPointF c0 = from.center(), c1 = to.center();
        QPointF d = c1 - c0;
        const qreal len = std::hypot(d.x(), d.y());
        const QPointF left = len > 1e-9 ? QPointF(d.y(), -d.x()) / len : QPointF(0, -1); // left of travel (y down)
        const qreal bow = std::min<qreal>(len * 0.18, m_cellPx * 5);
        const QPointF ctrl = (c0 + c1) / 2 + left * bow;
        const QPointF a0 = edgePoint(from, ctrl - c0, 3), a1 = edgePoint(to, ctrl - c1, 3);
        a->m_thin = messages.size() > 24;
        a->setGeometry(a0, (a0 + a1) / 2 + left * bow, a1, m.reduce, head);
        a->setVisible(true);
        p->m_origins = m.payload;
        p->m_reduce = m.reduce;
        p->m_r = m_n <= 8 ? 11 : m_n <= 16 ? 8.5 : m_n <= 64 ? 4.5 : 3;
        p->setVisible(inFlight);
        p->update();
    }
    for (std::size_t i = 0; i < m_labels.size(); ++i) {
        ScheduleLabelItem* l = m_labels[i];
        if (!labels || i >= messages.size()) {
            l->setVisible(false);
            continue;
        }
        const Message& m = messages[i];
        QString text = m.transfers == 1 ? chunkLabel(m.chunk) : tr("%1 blocks").arg(m.transfers);
        text += QStringLiteral(" · ") + bytesText(m.bytes, m_units);
        if (m.reduce)
            text = QStringLiteral("+ ") + text;
        const ScheduleArrowItem* a = m_arrows[i];
        const QPointF mid = a->pointAt(0.5);
        QPointF dir = mid - (a->m_a + a->m_b) / 2;
        if (std::hypot(dir.x(), dir.y()) < 1e-6)
            dir = QPointF(0, -1);
        l->setText(text, m_n <= 8 ? 13 : 11, false, dir, true);
        l->setPos(mid);
        l->setVisible(true);
    }
    placePackets();
    updateCaption();
    emit transfersChanged();
}

void ScheduleView::placePackets()
{
    for (std::size_t i = 0; i < m_packets.size(); ++i) {
        SchedulePacketItem* p = m_packets[i];
        if (!p->isVisible())
            continue;
        if (!m_inFlight) {
            p->setVisible(false);
            continue;
        }
        // Ease in and out so that a packet leaves and lands gently.
        const double t = m_progress, e = t * t * (3 - 2 * t);
        p->setPos(m_arrows[i]->pointAt(e));
    }
}

void ScheduleView::restyleRanks()
{
    const int positions = cellsPerRank();
    for (std::size_t r = 0; r < m_ranks.size(); ++r) {
        ScheduleRankItem* item = m_ranks[r];
        item->m_looks.resize(std::size_t(positions));
        for (int j = 0; j < positions; ++j)
            item->m_looks[std::size_t(j)] = cellLook(int(r), j);
        item->update();
    }
}

ScheduleView::CellLook ScheduleView::cellLook(int rank, int position) const
{
    CellLook look;
    if (rank < 0 || std::uint64_t(rank) >= m_n || position < 0 || position >= cellsPerRank())
        return look;
    const std::size_t r = std::size_t(rank);
    if (m_allToAll) {
        const std::uint64_t n = m_n, j = std::uint64_t(position);
        auto holds = [&](std::uint64_t who, std::uint64_t o, std::uint64_t d) {
            return m_state[who * m_pieces + m_blockChunk[o * n + d]] != 0;
        };
        if (j == r || holds(r, j, r)) { // its own block for itself, or the block from j arrived
            look.origins = j == r ? (holds(r, r, r) ? Origins(1) << r : 0) : Origins(1) << j;
            look.state = look.origins ? CellState::Held : CellState::Empty;
        } else if (holds(j, r, j)) {
            look.origins = Origins(1) << r;
            look.state = CellState::Sent;
        } else if (holds(r, r, j)) {
            look.origins = Origins(1) << r;
            look.state = CellState::Pending;
        }
        return look;
    }
    look.origins = m_state[r * m_pieces + std::size_t(position)];
    look.state = look.origins ? CellState::Held : CellState::Empty;
    look.complete = m_reduction && look.origins == m_all && m_n > 1;
    return look;
}

ScheduleView::Origins ScheduleView::pieceOrigins(int rank, int piece) const
{
    if (m_aggregated || rank < 0 || std::uint64_t(rank) >= m_n || piece < 0 || std::uint32_t(piece) >= m_pieces)
        return 0;
    return m_state[std::size_t(rank) * m_pieces + std::size_t(piece)];
}

ScheduleView::Origins ScheduleView::cellOrigins(int rank, std::uint32_t chunk) const
{
    if (m_aggregated || rank < 0 || std::uint64_t(rank) >= m_n || chunk >= m_chunkPieces.size())
        return 0;
    const PieceRun run = m_chunkPieces[chunk];
    if (run.count == 0)
        return 0;
    Origins o = ~Origins(0);
    for (std::uint32_t i = 0; i < run.count; ++i)
        o &= m_state[std::size_t(rank) * m_pieces + (run.first + i) % m_pieces];
    return o;
}

QString ScheduleView::chunkLabel(std::uint32_t chunk) const
{
    if (m_allToAll && chunk < m_chunks.size())
        return QStringLiteral("%1→%2").arg(m_chunks[chunk].origin).arg(m_chunks[chunk].destination);
    if (m_allToAll && m_n > 0)
        return QStringLiteral("%1→%2").arg(chunk / m_n).arg(chunk % m_n);
    return QStringLiteral("c%1").arg(chunk);
}

QString ScheduleView::phase() const
{
    if (!m_valid || m_shownStep < 0)
        return {};
    return qs(m_sched.phaseOf(std::uint64_t(m_shownStep)));
}

QPointF ScheduleView::rankCenter(int rank) const
{
    if (rank < 0 || std::size_t(rank) >= m_ranks.size())
        return {-1, -1};
    return QPointF(mapFromScene(m_ranks[std::size_t(rank)]->m_rect.center()));
}

int ScheduleView::arrowLabelsShown() const
{
    return int(std::count_if(m_labels.begin(), m_labels.end(), [](const ScheduleLabelItem* l) { return l->isVisible(); }));
}

void ScheduleView::setDisplayUnits(DisplayUnits units)
{
    if (units == m_units)
        return;
    m_units = units;
    if (m_valid && !m_inFlight)
        showTransfers(m_shownStep, false); // the arrows' byte labels
    updateCaption();
}

void ScheduleView::updateCaption()
{
    if (!m_valid) {
        m_caption = tr("Cannot schedule this call: %1").arg(m_error);
        m_legend.clear();
        viewport()->update();
        return;
    }
    const QString head = tr("%1 · %2 · N = %3 ranks · M = %4")
                             .arg(qs(std::string(collective::displayName(m_spec.op))), qs(std::string(collective::toString(m_spec.algorithm))))
                             .arg(m_n)
                             .arg(bytesText(m_spec.bytes, m_units));
    QString line;
    if (m_shownStep < 0) {
        line = tr("Step 0 of %1 — before the first step").arg(m_stepCount);
    } else {
        double bytes = 0;
        for (const Transfer& t : m_shown)
            bytes += t.bytes;
        line = tr("Step %1 of %2 — %3 · %4 transfers · %5 on the wire")
                   .arg(m_shownStep + 1)
                   .arg(m_stepCount)
                   .arg(phase())
                   .arg(m_shown.size())
                   .arg(bytesText(bytes, m_units));
        if (m_inFlight)
            line += tr(" (in flight)");
    }
    m_caption = head + QLatin1Char('\n') + line;
    m_legend.clear();
    if (!m_aggregated) {
        if (m_n <= 8)
            for (std::uint64_t r = 0; r < m_n; ++r)
                m_legend << tr("rank %1").arg(r);
        else
            m_legend << tr("colour = rank whose data it is (cycles after 7)");
        if (m_reduction && m_n <= 8)
            m_legend << tr("stripes = partial sum") << tr("thick frame Σ = full sum");
        else if (m_reduction)
            m_legend << tr("stripes (or dark bar height, when thin) = ranks in the partial sum") << tr("framed = full sum");
        if (m_allToAll)
            m_legend << tr("→j = own block for rank j, hollow once delivered");
        m_legend << tr("grey = not there yet");
    } else {
        m_legend << tr("%1 ranks: buffers not drawn (aggregated)").arg(m_n);
    }
    m_legend << tr("solid arrow = reduce (adds)") << tr("dashed arrow = copy (overwrites)")
             << tr("one send + one receive per rank per step");
    viewport()->update();
}

// Caption on top and legend at the bottom, in viewport pixels (readable whatever the zoom).
void ScheduleView::drawForeground(QPainter* p, const QRectF&)
{
    p->save();
    p->resetTransform();
    const QRect vp = viewport()->rect();
    const QStringList lines = m_caption.split(QLatin1Char('\n'));
    qreal y = 8;
    for (int i = 0; i < lines.size(); ++i) {
        const QFont f = pixelFont(i == 0 ? 18 : 15, i == 0);
        p->setFont(f);
        p->setPen(i == 0 ? kInk : kMuted);
        const qreal h = QFontMetricsF(f).height();
        p->drawText(QRectF(12, y, vp.width() - 24, h), Qt::AlignLeft | Qt::AlignVCenter, lines[i]);
        y += h + 2;
    }
    // Legend: swatches for ranks, then the entries, wrapped over the bottom lines.
    std::vector<qreal> xs;
    std::vector<int> rowOf;
    const int rows = legendLayout(vp.width(), &xs, &rowOf);
    const QFont lf = pixelFont(kLegendPx);
    const QFontMetricsF fm(lf);
    p->setFont(lf);
    const qreal lh = fm.height() + 6;
    const qreal rowY = vp.height() - rows * lh - 4;
    for (int i = 0; i < m_legend.size(); ++i) {
        const bool swatch = i < int(m_n) && m_n <= 8 && !m_aggregated;
        qreal cx = xs[std::size_t(i)];
        const qreal cy = rowY + rowOf[std::size_t(i)] * lh;
        if (swatch) {
            p->fillRect(QRectF(cx, cy + (lh - 14) / 2, 14, 14), rankColor(i));
            cx += 18;
        }
        p->setPen(kInk);
        p->drawText(QRectF(cx, cy, fm.horizontalAdvance(m_legend[i]) + 4, lh), Qt::AlignLeft | Qt::AlignVCenter, m_legend[i]);
    }
    p->restore();
}

int ScheduleView::legendLayout(int width, std::vector<qreal>* xs, std::vector<int>* rowOf) const
{
    const QFontMetricsF fm(pixelFont(kLegendPx));
    qreal x = 12;
    int rows = 1;
    for (int i = 0; i < m_legend.size(); ++i) {
        const bool swatch = i < int(m_n) && m_n <= 8 && !m_aggregated;
        const qreal w = (swatch ? 18 : 0) + fm.horizontalAdvance(m_legend[i]) + 22;
        if (x + w > width - 8 && x > 12) {
            x = 12;
            ++rows;
        }
        if (xs)
            xs->push_back(x);
        if (rowOf)
            rowOf->push_back(rows - 1);
        x += w;
    }
    return m_legend.isEmpty() ? 0 : rows;
}

qreal ScheduleView::legendHeight(int width) const
{
    return legendLayout(width, nullptr, nullptr) * (QFontMetricsF(pixelFont(kLegendPx)).height() + 6) + 4;
}

void ScheduleView::fit()
{
    const QSize vp = viewport()->size();
    if (vp.isEmpty() || m_contentRect.isEmpty())
        return;
    // Bands for the caption (two lines) and the legend (one or two lines).
    const qreal top = 62, bottom = legendHeight(vp.width()) + 8;
    const qreal availW = std::max<qreal>(40, vp.width() - 16), availH = std::max<qreal>(40, vp.height() - top - bottom);
    const qreal scale = std::min({availW / m_contentRect.width(), availH / m_contentRect.height(), qreal(2.4)});
    const qreal extraX = (vp.width() / scale - m_contentRect.width()) / 2;
    const qreal extraY = (availH / scale - m_contentRect.height()) / 2;
    const QRectF scene = m_contentRect.adjusted(-extraX, -top / scale - extraY, extraX, bottom / scale + extraY);
    setSceneRect(scene);
    setTransform(QTransform::fromScale(scale, scale));
    centerOn(scene.center());
}

void ScheduleView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    fit();
}

void ScheduleView::paintEvent(QPaintEvent* event)
{
    QElapsedTimer t;
    t.start();
    QGraphicsView::paintEvent(event);
    const double ms = double(t.nsecsElapsed()) * 1e-6;
    ++m_stats.paints;
    m_stats.meanPaintMs += (ms - m_stats.meanPaintMs) / m_stats.paints;
    m_stats.maxPaintMs = std::max(m_stats.maxPaintMs, ms);
}

} // namespace tw::ui
