#include "meshview.h"

#include "palette.h"

#include "parallel/plan.h"

#include <QApplication>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QResizeEvent>
#include <QStyleOptionGraphicsItem>
#include <QTextDocument>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace tw::ui {

namespace {

// The shared colour-blind-safe palette (views/palette.h).
const auto& kPalette = palette::kCategorical;
constexpr int kPaletteSize = palette::kCategoricalSize;
const QColor kInk = palette::kInk;
const QColor kMuted = palette::kMuted;
const QColor kWarn(0xC0, 0x10, 0x10);

using palette::mix; // t = share of a

// Category i's fill: the palette tinted towards white; later rounds of the palette use other tints
// so that neighbours 7 apart still differ.
QColor fillColor(int i)
{
    if (i < 0)
        return QColor(0xe5, 0xe7, 0xeb);
    static const double tints[] = {0.42, 0.75, 0.22};
    return mix(kPalette[i % kPaletteSize], Qt::white, tints[(i / kPaletteSize) % 3]);
}

QColor bandColor(int i)
{
    if (i < 0)
        return QColor(0x9c, 0xa3, 0xaf);
    static const double shades[] = {1.0, 0.7, 0.45};
    return mix(kPalette[i % kPaletteSize], Qt::black, shades[(i / kPaletteSize) % 3]);
}

// Memory colouring: light green (little used) → amber → orange (full), a light red when over.
const QColor kMemLow(0xd1, 0xfa, 0xe5), kMemMid(0xfd, 0xe6, 0x8a), kMemHigh(0xfb, 0x92, 0x3c), kMemOver(0xfe, 0xca, 0xca);

struct Metrics {
    qreal cardW, cardH, gap, pad, title, nodeGap, band, radius;
    int idPx, coordPx, stagePx, titlePx;
};

Metrics metricsFor(MeshView::Detail d)
{
    switch (d) {
    case MeshView::Detail::Full: return {150, 92, 10, 12, 30, 26, 9, 7, 17, 14, 12, 16};
    case MeshView::Detail::Medium: return {118, 62, 8, 10, 26, 20, 7, 6, 15, 12, 11, 14};
    case MeshView::Detail::Small: return {50, 32, 5, 7, 22, 12, 5, 4, 13, 0, 0, 12};
    case MeshView::Detail::Compact: return {16, 11, 2, 4, 13, 6, 3, 2, 0, 0, 0, 9};
    }
    return {};
}

QFont pixelFont(int px, bool bold = false)
{
    QFont f = QApplication::font();
    f.setPixelSize(std::max(px, 6));
    f.setBold(bold);
    return f;
}

QString joined(const std::vector<int>& gpus, int except = -1, int limit = 12)
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
constexpr int kZNode = 0, kZLinks = 5, kZCard = 10, kZLabels = 20, kZDrag = 100;

} // namespace

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

MeshView::MeshView(QWidget* parent)
    : QGraphicsView(parent)
{
    setObjectName(QStringLiteral("meshView"));
    setScene(new QGraphicsScene(this));
    scene()->setItemIndexMethod(QGraphicsScene::NoIndex); // items move while dragging
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setBackgroundBrush(Qt::white);
    setAlignment(Qt::AlignHCenter | Qt::AlignTop);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setMinimumSize(320, 220);
}

MeshView::~MeshView() = default;

void MeshView::clear()
{
    scene()->clear();
    m_cards.clear();
    m_nodes.clear();
    m_home.clear();
    m_decor.clear();
    m_status = nullptr;
    m_gpus.clear();
    m_tpGroups.clear();
    m_dpGroups.clear();
    m_ppGroups.clear();
    m_epGroups.clear();
    m_tpGroupCrosses.clear();
    m_crossing.clear();
    m_legendEntries.clear();
    m_warning.clear();
    m_shapeNodes = m_shapeGpusPerNode = 0;
    m_hovered = m_pressed = m_dropTarget = -1;
    m_dragging = false;
}

void MeshView::setMesh(const parallel::Cluster& cluster, const std::vector<parallel::MeshCoord>& mesh,
                       const parallel::ParallelPlan& degrees, const std::vector<parallel::Group>* groups)
{
    const std::uint64_t n = std::min<std::uint64_t>(cluster.gpuCount(), mesh.size());
    if (n == 0 || cluster.gpusPerNode == 0) {
        clear();
        return;
    }
    if (m_dragging || m_pressed >= 0)
        endDrag();
    m_dpDegree = std::max<std::uint64_t>(degrees.dp, 1);
    m_ppDegree = std::max<std::uint64_t>(degrees.pp, 1);
    m_tpDegree = std::max<std::uint64_t>(degrees.tp, 1);
    m_epDegree = std::max<std::uint64_t>(degrees.ep, 1);

    m_gpus.assign(n, Gpu{});
    for (std::uint64_t g = 0; g < n; ++g) {
        Gpu& gpu = m_gpus[g];
        gpu.dp = mesh[g].dp;
        gpu.pp = mesh[g].pp;
        gpu.tp = mesh[g].tp;
        gpu.node = int(cluster.nodeOf(g));
    }

    // Group membership: core's groups when they cover every GPU once, else read off the coordinates.
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
    auto fromCoords = [&](auto key, auto order, int Gpu::*slot) {
        std::map<Key, std::vector<int>> byKey;
        for (std::uint64_t g = 0; g < n; ++g)
            byKey[key(m_gpus[g])].push_back(int(g));
        std::vector<std::vector<int>> out;
        for (auto& [k, members] : byKey) {
            std::stable_sort(members.begin(), members.end(),
                             [&](int a, int b) { return order(m_gpus[std::size_t(a)]) < order(m_gpus[std::size_t(b)]); });
            for (int g : members)
                m_gpus[std::size_t(g)].*slot = int(out.size());
            out.push_back(std::move(members));
        }
        return out;
    };
    auto fromCore = [&](const char* kind, int Gpu::*slot, std::vector<bool>* crosses) -> std::optional<std::vector<std::vector<int>>> {
        if (!groups)
            return std::nullopt;
        std::vector<std::vector<int>> out;
        std::vector<int> seen(n, -1);
        for (const parallel::Group& grp : *groups) {
            if (grp.kind != kind)
                continue;
            std::vector<int> members;
            for (std::uint32_t g : grp.members) {
                if (g >= n || seen[g] >= 0)
                    return std::nullopt;
                seen[g] = int(out.size());
                members.push_back(int(g));
            }
            if (crosses)
                crosses->push_back(grp.crossesNodes);
            out.push_back(std::move(members));
        }
        if (out.empty() || std::count(seen.begin(), seen.end(), -1) > 0)
            return std::nullopt;
        for (std::uint64_t g = 0; g < n; ++g)
            m_gpus[g].*slot = seen[g];
        return out;
    };
    const std::uint32_t ep = std::uint32_t(m_epDegree);
    m_tpGroupCrosses.clear();
    if (auto tp = fromCore("tp", &Gpu::tpGroup, &m_tpGroupCrosses)) {
        m_tpGroups = std::move(*tp);
    } else {
        m_tpGroupCrosses.clear();
        m_tpGroups = fromCoords([](const Gpu& g) { return Key{g.pp, g.dp, 0}; }, [](const Gpu& g) { return g.tp; }, &Gpu::tpGroup);
        for (const auto& members : m_tpGroups) {
            bool crosses = false;
            for (int g : members)
                crosses |= m_gpus[std::size_t(g)].node != m_gpus[std::size_t(members.front())].node;
            m_tpGroupCrosses.push_back(crosses);
        }
    }
    if (auto dp = fromCore("dp", &Gpu::dpGroup, nullptr))
        m_dpGroups = std::move(*dp);
    else
        m_dpGroups = fromCoords([](const Gpu& g) { return Key{g.pp, g.tp, 0}; }, [](const Gpu& g) { return g.dp; }, &Gpu::dpGroup);
    m_ppGroups = fromCoords([](const Gpu& g) { return Key{g.dp, g.tp, 0}; }, [](const Gpu& g) { return g.pp; }, &Gpu::ppGroup);
    if (auto epg = fromCore("ep", &Gpu::epGroup, nullptr))
        m_epGroups = std::move(*epg);
    else
        m_epGroups = fromCoords([ep](const Gpu& g) { return Key{g.pp, g.tp, g.dp / ep}; }, [](const Gpu& g) { return g.dp; },
                                &Gpu::epGroup);

    m_crossing.clear();
    for (std::uint64_t g = 0; g < n; ++g)
        if (m_tpGroupCrosses[std::size_t(m_gpus[g].tpGroup)])
            m_crossing.push_back(int(g));

    if (cluster.nodes != m_shapeNodes || cluster.gpusPerNode != m_shapeGpusPerNode || m_cards.size() != n)
        rebuildItems((n + cluster.gpusPerNode - 1) / cluster.gpusPerNode, cluster.gpusPerNode);
    if (m_hovered >= int(n))
        m_hovered = -1;
    updateLegend(); // restyles the cards too
    fit();
}

void MeshView::rebuildItems(std::uint64_t nodes, std::uint64_t gpusPerNode)
{
    QGraphicsScene* s = scene();
    s->clear();
    m_cards.clear();
    m_nodes.clear();
    m_home.clear();
    m_decor.clear();
    m_status = nullptr;
    m_shapeNodes = nodes;
    m_shapeGpusPerNode = gpusPerNode;
    const std::size_t n = m_gpus.size();
    m_detail = n <= 16 ? Detail::Full : n <= 64 ? Detail::Medium : n <= 256 ? Detail::Small : Detail::Compact;
    const Metrics m = metricsFor(m_detail);

    // Cards inside a node: up to 4 in a row for 8 GPUs, two rows up to 16, then near-square.
    const std::uint64_t gpn = gpusPerNode;
    const std::uint64_t cols = gpn <= 4 ? gpn : gpn <= 16 ? (gpn + 1) / 2 : std::uint64_t(std::ceil(std::sqrt(2.0 * double(gpn))));
    const std::uint64_t rows = (gpn + cols - 1) / cols;
    const qreal nodeW = 2 * m.pad + qreal(cols) * m.cardW + qreal(cols - 1) * m.gap;
    const qreal nodeH = m.title + m.pad + qreal(rows) * m.cardH + qreal(rows - 1) * m.gap;
    // Nodes in a grid about 16:10 wide.
    std::uint64_t nodeCols = 1;
    double best = 1e18;
    for (std::uint64_t c = 1; c <= nodes; ++c) {
        const std::uint64_t r = (nodes + c - 1) / c;
        const double w = double(c) * (nodeW + m.nodeGap), h = double(r) * (nodeH + m.nodeGap);
        const double score = std::fabs(std::log((w / h) / 1.6));
        if (score < best - 1e-9) {
            best = score;
            nodeCols = c;
        }
    }
    m_nodes.reserve(nodes);
    m_cards.reserve(n);
    for (std::uint64_t node = 0; node < nodes; ++node) {
        const QRectF box(qreal(node % nodeCols) * (nodeW + m.nodeGap), qreal(node / nodeCols) * (nodeH + m.nodeGap), nodeW, nodeH);
        auto* item = new NodeBoxItem(int(node), box, m);
        s->addItem(item);
        m_nodes.push_back(item);
    }
    for (std::size_t g = 0; g < n; ++g) {
        const std::uint64_t node = g / gpn, local = g % gpn;
        const QRectF box = m_nodes[node]->m_rect;
        const QPointF topLeft(box.left() + m.pad + qreal(local % cols) * (m.cardW + m.gap),
                              box.top() + m.title + qreal(local / cols) * (m.cardH + m.gap));
        auto* card = new GpuCardItem(int(g), m);
        card->setPos(topLeft);
        s->addItem(card);
        m_cards.push_back(card);
        m_home.push_back(QRectF(topLeft, QSizeF(m.cardW, m.cardH)));
    }
    m_contentRect = s->itemsBoundingRect();
}

void MeshView::restyle()
{
    const std::size_t n = m_cards.size();
    const Gpu* hovered = m_hovered >= 0 ? &m_gpus[std::size_t(m_hovered)] : nullptr;
    std::vector<bool> nodeWarn(m_nodes.size(), false);
    for (std::size_t g = 0; g < n; ++g) {
        const Gpu& gpu = m_gpus[g];
        GpuCardItem* card = m_cards[g];
        int colorIndex = 0;
        switch (m_colorBy) {
        case ColorBy::DpReplica: colorIndex = int(gpu.dp); break;
        case ColorBy::PpStage: colorIndex = int(gpu.pp); break;
        case ColorBy::TpGroup: colorIndex = gpu.tpGroup; break;
        case ColorBy::EpGroup: colorIndex = gpu.epGroup; break;
        case ColorBy::Memory: break;
        }
        const bool byMemory = m_colorBy == ColorBy::Memory;
        const bool known = byMemory && g < m_memory.size() && m_capacity > 0;
        const double used = known ? m_memory[g] : 0.0;
        const double share = known ? used / m_capacity : 0.0;
        card->m_over = known && used > m_capacity;
        card->m_fill = byMemory ? (known ? memoryFill(share) : fillColor(-1)) : fillColor(colorIndex);
        card->m_band = bandColor(gpu.tpGroup);
        card->m_crosses = m_tpGroupCrosses[std::size_t(gpu.tpGroup)];
        if (card->m_crosses)
            nodeWarn[std::size_t(gpu.node)] = true;

        // Lines by detail level.
        QStringList lines;
        switch (m_detail) {
        case Detail::Full:
            lines << tr("GPU %1").arg(g) << tr("dp %1 · pp %2 · tp %3").arg(gpu.dp).arg(gpu.pp).arg(gpu.tp)
                  << tr("PP stage %1").arg(gpu.pp);
            break;
        case Detail::Medium:
            lines << tr("GPU %1").arg(g) << tr("dp%1 · pp%2 · tp%3").arg(gpu.dp).arg(gpu.pp).arg(gpu.tp);
            break;
        case Detail::Small: lines << QString::number(g); break;
        case Detail::Compact: break;
        }
        if (known && (m_detail == Detail::Full || m_detail == Detail::Medium)) {
            // The coordinate line gives way to the memory: what the GPU needs of its capacity, the overflow.
            const QString over = tr("+%1 over").arg(QString::fromStdString(formatBytes(used - m_capacity, m_units)));
            const QString pct = tr("%1 % used").arg(std::lround(100.0 * share));
            if (m_detail == Detail::Full)
                lines = QStringList{lines[0], QString::fromStdString(formatBytes(used, m_units)), card->m_over ? over : pct};
            else
                lines = QStringList{lines[0], card->m_over ? over : pct};
        }
        card->m_lines = lines;

        // Hover: the hovered card and its TP (solid), DP (dashed) and PP (dotted) peers stand out,
        // the others fade.
        QPen pen(card->m_crosses ? kWarn : QColor(0x37, 0x41, 0x51), card->m_crosses ? 2.2 : 1.0,
                 card->m_crosses ? Qt::DashLine : Qt::SolidLine);
        if (card->m_over)
            pen = QPen(kWarn, m_detail == Detail::Compact ? 1.8 : 3.2, Qt::SolidLine);
        bool highlighted = false, dimmed = false;
        if (hovered) {
            const qreal w = m_detail == Detail::Compact ? 1.8 : 3.0;
            const QColor c = card->m_crosses ? kWarn : kInk;
            if (int(g) == m_hovered) {
                pen = QPen(c, w + 1.0, Qt::SolidLine);
                highlighted = true;
            } else if (gpu.tpGroup == hovered->tpGroup) {
                pen = QPen(c, w, Qt::SolidLine);
                highlighted = true;
            } else if (gpu.dpGroup == hovered->dpGroup) {
                pen = QPen(c, w, Qt::DashLine);
                highlighted = true;
            } else if (gpu.ppGroup == hovered->ppGroup) {
                pen = QPen(c, w, Qt::DotLine);
                highlighted = true;
            } else {
                dimmed = true;
            }
        }
        if (m_detail == Detail::Compact && !highlighted)
            pen.setWidthF(std::min(pen.widthF(), 1.2));
        card->m_outline = pen;
        card->m_highlighted = highlighted;
        card->m_dimmed = dimmed;
        card->setOpacity(dimmed ? 0.3 : 1.0);
        card->m_drop = int(g) == m_dropTarget;
        card->m_token = std::binary_search(m_tokenGpus.begin(), m_tokenGpus.end(), int(g));
        QString memoryTip;
        if (known)
            memoryTip = card->m_over ? tr("\nMemory: %1 of %2, %3 over").arg(QString::fromStdString(formatBytes(used, m_units)),
                                                                             QString::fromStdString(formatBytes(m_capacity, m_units)),
                                                                             QString::fromStdString(formatBytes(used - m_capacity, m_units)))
                                     : tr("\nMemory: %1 of %2 (%3 %)").arg(QString::fromStdString(formatBytes(used, m_units)),
                                                                          QString::fromStdString(formatBytes(m_capacity, m_units)))
                                           .arg(std::lround(100.0 * share));
        card->setToolTip(tr("GPU %1 on node %2\ndp %3 · pp %4 · tp %5\nTP group: %6\nDP group: %7\nPipeline: %8%9%10")
                             .arg(g)
                             .arg(gpu.node)
                             .arg(gpu.dp)
                             .arg(gpu.pp)
                             .arg(gpu.tp)
                             .arg(joined(m_tpGroups[std::size_t(gpu.tpGroup)]))
                             .arg(joined(m_dpGroups[std::size_t(gpu.dpGroup)]))
                             .arg(joined(m_ppGroups[std::size_t(gpu.ppGroup)]))
                             .arg(card->m_crosses ? tr("\n⚠ this TP group spans nodes") : QString())
                             .arg(memoryTip));
        card->update();
    }
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        if (m_nodes[i]->m_warn != nodeWarn[i]) {
            m_nodes[i]->m_warn = nodeWarn[i];
            m_nodes[i]->update();
        }
    }
    if (m_status) {
        QString statusText;
        if (hovered) {
            const int h = m_hovered;
            statusText = tr("GPU %1 on node %2: dp %3 · pp %4 · tp %5\nTP peers (solid): %6 · DP peers (dashed): %7 · "
                            "PP peers (dotted): %8")
                                  .arg(h)
                                  .arg(hovered->node)
                                  .arg(hovered->dp)
                                  .arg(hovered->pp)
                                  .arg(hovered->tp)
                                  .arg(joined(m_tpGroups[std::size_t(hovered->tpGroup)], h, 8))
                                  .arg(joined(m_dpGroups[std::size_t(hovered->dpGroup)], h, 8))
                                  .arg(joined(m_ppGroups[std::size_t(hovered->ppGroup)], h, 8));
        } else {
            statusText = tr("Hover a GPU to see its groups; drag it onto another GPU to swap their places.");
        }
        const QFontMetricsF fm(m_status->font());
        QStringList lines = statusText.split(QLatin1Char('\n'));
        for (QString& l : lines)
            l = fm.elidedText(l, Qt::ElideRight, m_textWidth);
        m_status->setText(lines.join(QLatin1Char('\n')));
    }
}

void MeshView::updateLegend()
{
    QGraphicsScene* s = scene();
    for (QGraphicsItem* item : m_decor) {
        s->removeItem(item);
        delete item;
    }
    m_decor.clear();
    m_legendEntries.clear();
    if (m_cards.empty())
        return;
    const Metrics m = metricsFor(m_detail);
    // Text size follows the drawing's width so that the legend reads like the cards.
    const qreal width = std::max<qreal>(m_contentRect.width(), 420);
    m_textWidth = width;
    const int px = m_detail == Detail::Compact ? std::max(10, int(width / 70)) : 14;
    const QFont font = pixelFont(px), bold = pixelFont(px, true);
    const QFontMetricsF fm(font), fmBold(bold);
    const qreal lineH = fm.height() + 6;

    // The legend's rows go above the nodes (negative y), the status line below them.
    std::vector<std::pair<QString, QColor>> swatches;
    QString title;
    int categories = 0;
    switch (m_colorBy) {
    case ColorBy::DpReplica: title = tr("Colour = DP replica"); categories = int(m_dpDegree); break;
    case ColorBy::PpStage: title = tr("Colour = PP stage"); categories = int(m_ppDegree); break;
    case ColorBy::TpGroup: title = tr("Colour = TP group"); categories = int(m_tpGroups.size()); break;
    case ColorBy::EpGroup: title = tr("Colour = EP group"); categories = int(m_epGroups.size()); break;
    case ColorBy::Memory: title = tr("Colour = memory at its peak, share of the GPU's capacity"); break;
    }
    if (m_colorBy == ColorBy::Memory)
        for (const auto& [label, share] : {std::pair{tr("≤ 25 %"), 0.25}, {tr("50 %"), 0.5}, {tr("75 %"), 0.75}, {tr("100 %"), 1.0}})
            swatches.emplace_back(label, memoryFill(share));
    const int shown = std::min(categories, 8);
    for (int i = 0; i < shown; ++i) {
        QString label;
        switch (m_colorBy) {
        case ColorBy::DpReplica: label = tr("dp %1").arg(i); break;
        case ColorBy::PpStage: label = tr("stage %1").arg(i); break;
        case ColorBy::TpGroup: label = tr("TP %1").arg(i); break;
        case ColorBy::EpGroup: label = tr("EP %1").arg(i); break;
        case ColorBy::Memory: break;
        }
        swatches.emplace_back(label, fillColor(i));
    }

    std::vector<QGraphicsItem*> row;
    qreal x = 0;
    int line = 0;
    auto place = [&](QGraphicsItem* item, qreal w) {
        if (x > 0 && x + w > width) {
            x = 0;
            ++line;
        }
        item->setPos(x, line * lineH);
        x += w + 14;
        m_decor.push_back(item);
        s->addItem(item);
    };
    auto text = [&](const QString& t, const QFont& f, const QColor& c) {
        auto* item = new QGraphicsSimpleTextItem(t);
        item->setFont(f);
        item->setBrush(c);
        return item;
    };
    {
        auto* t = text(title + QLatin1Char(':'), bold, kInk);
        place(t, fmBold.horizontalAdvance(t->text()));
    }
    const qreal sw = fm.height() * 1.4, sh = fm.height() * 0.9;
    for (const auto& [label, color] : swatches) {
        auto* group = new QGraphicsRectItem(0, 0, 0, 0);
        auto* box = new QGraphicsRectItem(0, (fm.height() - sh) / 2, sw, sh, group);
        box->setBrush(color);
        box->setPen(QPen(QColor(0x37, 0x41, 0x51), 1));
        auto* t = text(label, font, kInk);
        t->setParentItem(group);
        t->setPos(sw + 5, 0);
        group->setPen(Qt::NoPen);
        place(group, sw + 5 + fm.horizontalAdvance(label));
        m_legendEntries << label;
    }
    if (categories > shown) {
        const QString more = tr("… %1 in all (colours repeat in lighter/darker tints)").arg(categories);
        place(text(more, font, kMuted), fm.horizontalAdvance(more));
        m_legendEntries << more;
    }
    {
        const QString band = tr("top band = TP group");
        auto* group = new QGraphicsRectItem(0, 0, 0, 0);
        group->setPen(Qt::NoPen);
        for (int i = 0; i < 3; ++i) {
            auto* b = new QGraphicsRectItem(qreal(i) * sw / 3, fm.height() * 0.3, sw / 3, fm.height() * 0.4, group);
            b->setBrush(bandColor(i));
            b->setPen(Qt::NoPen);
        }
        auto* t = text(band, font, kInk);
        t->setParentItem(group);
        t->setPos(sw + 5, 0);
        place(group, sw + 5 + fm.horizontalAdvance(band));
        m_legendEntries << band;
    }
    std::size_t overGpus = 0;
    double worstOver = 0;
    if (m_colorBy == ColorBy::Memory && m_capacity > 0)
        for (std::size_t g = 0; g < std::min(m_memory.size(), m_cards.size()); ++g)
            if (m_memory[g] > m_capacity) {
                ++overGpus;
                worstOver = std::max(worstOver, m_memory[g] - m_capacity);
            }
    if (overGpus > 0) {
        const QString label = tr("red outline = does not fit");
        auto* group = new QGraphicsRectItem(0, 0, 0, 0);
        group->setPen(Qt::NoPen);
        auto* b = new QGraphicsRectItem(0, (fm.height() - sh) / 2, sw, sh, group);
        b->setBrush(kMemOver);
        b->setPen(QPen(kWarn, 2.5));
        auto* t = text(label, font, kWarn);
        t->setParentItem(group);
        t->setPos(sw + 5, 0);
        place(group, sw + 5 + fm.horizontalAdvance(label));
        m_legendEntries << label;
    }
    if (!m_crossing.empty()) {
        const QString dashed = tr("red dashed = TP group spans nodes");
        auto* group = new QGraphicsRectItem(0, 0, 0, 0);
        group->setPen(Qt::NoPen);
        auto* b = new QGraphicsRectItem(0, (fm.height() - sh) / 2, sw, sh, group);
        b->setPen(QPen(kWarn, 2, Qt::DashLine));
        auto* t = text(dashed, font, kWarn);
        t->setParentItem(group);
        t->setPos(sw + 5, 0);
        place(group, sw + 5 + fm.horizontalAdvance(dashed));
        m_legendEntries << dashed;
    }

    // The warning line, under the legend.
    std::size_t crossingGroups = 0;
    for (bool c : m_tpGroupCrosses)
        crossingGroups += c ? 1 : 0;
    m_warning.clear();
    qreal warningHeight = 0;
    if (crossingGroups > 0)
        m_warning = tr("⚠ %1 of %2 TP groups span nodes: their AllReduces, several per layer, leave the node's "
                       "NVLink for the slower inter-node network.")
                        .arg(crossingGroups)
                        .arg(m_tpGroups.size());
    if (overGpus > 0) {
        if (!m_warning.isEmpty())
            m_warning += QLatin1Char('\n');
        m_warning += tr("⚠ %1 of %2 GPUs do not fit: up to %3 over their %4.")
                         .arg(overGpus)
                         .arg(m_cards.size())
                         .arg(QString::fromStdString(formatBytes(worstOver, m_units)),
                              QString::fromStdString(formatBytes(m_capacity, m_units)));
    }
    if (!m_warning.isEmpty()) {
        auto* w = new QGraphicsTextItem;
        w->setFont(bold);
        w->setDefaultTextColor(kWarn);
        w->setPlainText(m_warning);
        w->setTextWidth(width);
        w->document()->setDocumentMargin(0);
        w->setPos(0, qreal(line + 1) * lineH);
        s->addItem(w);
        m_decor.push_back(w);
        warningHeight = w->boundingRect().height() + 4;
    }
    const qreal legendHeight = qreal(line + 1) * lineH + warningHeight + 8;
    for (QGraphicsItem* item : m_decor)
        item->moveBy(m_contentRect.left(), m_contentRect.top() - legendHeight);

    // Dashed links between the members of a crossing TP group that sit on different nodes, and a
    // label on the first link of each group (a few groups at most, so the labels stay apart).
    const QFont small = pixelFont(std::max(10, m.coordPx > 0 ? m.coordPx - 1 : 11), true);
    int labelled = 0;
    int links = 0;
    for (std::size_t t = 0; t < m_tpGroups.size() && links < 256; ++t) {
        if (!m_tpGroupCrosses[t])
            continue;
        const auto& members = m_tpGroups[t];
        bool labelledThis = false;
        for (std::size_t i = 0; i + 1 < members.size(); ++i) {
            const int a = members[i], b = members[i + 1];
            if (m_gpus[std::size_t(a)].node == m_gpus[std::size_t(b)].node)
                continue;
            const QPointF pa = m_home[std::size_t(a)].center(), pb = m_home[std::size_t(b)].center();
            auto* link = new QGraphicsPathItem;
            QPainterPath path(pa);
            path.lineTo(pb);
            link->setPath(path);
            link->setPen(QPen(QColor(kWarn.red(), kWarn.green(), kWarn.blue(), 190), m_detail == Detail::Compact ? 1.2 : 2.5,
                              Qt::DashLine, Qt::RoundCap));
            link->setZValue(kZLinks);
            link->setToolTip(tr("TP group %1 spans nodes").arg(joined(members)));
            s->addItem(link);
            m_decor.push_back(link);
            ++links;
            if (!labelledThis && labelled < 4 && m_detail != Detail::Compact) {
                labelledThis = true;
                ++labelled;
                auto* label = new QGraphicsSimpleTextItem(tr("TP group spans nodes"));
                label->setFont(small);
                label->setBrush(Qt::white);
                const QRectF r = label->boundingRect();
                auto* bg = new QGraphicsRectItem(r.adjusted(-4, -1, 4, 1));
                bg->setBrush(kWarn);
                bg->setPen(Qt::NoPen);
                label->setParentItem(bg);
                // On the part of the link between the two cards; later labels shifted along their
                // links so that parallel links do not stack them.
                const QPointF d = pb - pa;
                auto leave = [&](const QRectF& card) {
                    const qreal fx = d.x() == 0 ? 1e9 : card.width() / 2 / std::fabs(d.x());
                    const qreal fy = d.y() == 0 ? 1e9 : card.height() / 2 / std::fabs(d.y());
                    return std::min({fx, fy, qreal(0.5)});
                };
                const qreal t0 = leave(m_home[std::size_t(a)]), t1 = 1 - leave(m_home[std::size_t(b)]);
                static const qreal shifts[] = {0.5, 0.25, 0.75, 0.5};
                const QPointF at = pa + d * (t0 + (t1 - t0) * shifts[(labelled - 1) % 4]);
                bg->setPos(at - r.center());
                bg->setZValue(kZLabels);
                s->addItem(bg);
                m_decor.push_back(bg);
            }
        }
    }

    // The status line (hover help) under the nodes.
    m_status = text(QString(), font, kInk);
    m_status->setPos(m_contentRect.left(), m_contentRect.bottom() + 8);
    s->addItem(m_status);
    m_decor.push_back(m_status);
    restyle(); // fills the status text

    const QRectF all(m_contentRect.left(), m_contentRect.top() - legendHeight, width,
                     m_contentRect.height() + legendHeight + 8 + 2 * lineH); // two status lines
    s->setSceneRect(all.adjusted(-10, -10, 10, 10));
}

void MeshView::setTokenGpus(std::vector<int> gpus)
{
    std::sort(gpus.begin(), gpus.end());
    if (gpus == m_tokenGpus)
        return;
    m_tokenGpus = std::move(gpus);
    if (!m_cards.empty())
        restyle();
}

QColor MeshView::memoryFill(double share)
{
    if (share > 1.0)
        return kMemOver;
    share = std::max(0.0, share);
    if (share <= 0.25)
        return kMemLow;
    if (share <= 0.75)
        return mix(kMemMid, kMemLow, (share - 0.25) / 0.5);
    return mix(kMemHigh, kMemMid, (share - 0.75) / 0.25);
}

void MeshView::setMemory(std::vector<double> peakBytes, double capacityBytes, const DisplayUnits& units)
{
    if (peakBytes == m_memory && capacityBytes == m_capacity && units == m_units)
        return;
    m_memory = std::move(peakBytes);
    m_capacity = capacityBytes;
    m_units = units;
    if (!m_cards.empty() && m_colorBy == ColorBy::Memory)
        updateLegend();
}

void MeshView::setColorBy(ColorBy mode)
{
    if (mode == m_colorBy)
        return;
    m_colorBy = mode;
    if (m_cards.empty())
        return;
    updateLegend();
}

void MeshView::fit()
{
    if (m_cards.empty())
        return;
    const QRectF r = scene()->sceneRect();
    const QSize vp = viewport()->size();
    if (r.isEmpty() || vp.isEmpty())
        return;
    // The whole mesh in view, never magnified beyond 1.6× (big fonts on a projector, no giant cards).
    const qreal scale = std::min({qreal(vp.width() - 2) / r.width(), qreal(vp.height() - 2) / r.height(), qreal(1.6)});
    setTransform(QTransform::fromScale(scale, scale));
}

void MeshView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    fit();
}

QPointF MeshView::gpuCenter(int gpu) const
{
    if (gpu < 0 || gpu >= gpuCount())
        return {-1, -1};
    return QPointF(mapFromScene(m_home[std::size_t(gpu)].center()));
}

int MeshView::gpuAt(QPoint viewportPos) const
{
    const QPointF p = mapToScene(viewportPos);
    for (std::size_t g = 0; g < m_home.size(); ++g)
        if (m_home[g].contains(p))
            return int(g);
    return -1;
}

MeshView::CardLook MeshView::cardLook(int gpu) const
{
    if (gpu < 0 || gpu >= gpuCount())
        return {};
    const GpuCardItem* c = m_cards[std::size_t(gpu)];
    return {c->m_fill, c->m_band, c->m_outline, c->m_crosses, c->m_highlighted, c->m_dimmed, c->m_token, c->m_over,
            c->m_lines.join(QLatin1Char('\n'))};
}

QRectF MeshView::cardSceneRect(int gpu) const
{
    if (gpu < 0 || gpu >= gpuCount())
        return {};
    const GpuCardItem* c = m_cards[std::size_t(gpu)];
    return c->m_rect.translated(c->pos());
}

QString MeshView::warningText() const
{
    return m_warning;
}

void MeshView::hoverGpu(int gpu)
{
    if (gpu >= gpuCount())
        gpu = -1;
    if (gpu == m_hovered)
        return;
    m_hovered = gpu;
    restyle();
    emit gpuHovered(gpu);
}

void MeshView::mousePressEvent(QMouseEvent* event)
{
    const int gpu = event->button() == Qt::LeftButton ? gpuAt(event->position().toPoint()) : -1;
    if (gpu < 0) {
        QGraphicsView::mousePressEvent(event);
        return;
    }
    m_pressed = gpu;
    m_dragging = false;
    m_pressPos = event->position().toPoint();
    m_grabOffset = mapToScene(m_pressPos) - m_home[std::size_t(gpu)].topLeft();
    event->accept();
}

void MeshView::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint pos = event->position().toPoint();
    if (m_pressed < 0) {
        hoverGpu(gpuAt(pos));
        QGraphicsView::mouseMoveEvent(event);
        return;
    }
    if (!m_dragging && (pos - m_pressPos).manhattanLength() >= QApplication::startDragDistance()) {
        m_dragging = true;
        m_cards[std::size_t(m_pressed)]->setZValue(kZDrag);
        m_cards[std::size_t(m_pressed)]->setOpacity(0.85);
        viewport()->setCursor(Qt::ClosedHandCursor);
    }
    if (m_dragging) {
        m_cards[std::size_t(m_pressed)]->setPos(mapToScene(pos) - m_grabOffset);
        int target = gpuAt(pos);
        if (target == m_pressed)
            target = -1;
        if (target != m_dropTarget) {
            if (m_dropTarget >= 0) {
                m_cards[std::size_t(m_dropTarget)]->m_drop = false;
                m_cards[std::size_t(m_dropTarget)]->update();
            }
            m_dropTarget = target;
            if (target >= 0) {
                m_cards[std::size_t(target)]->m_drop = true;
                m_cards[std::size_t(target)]->update();
            }
        }
    }
    event->accept();
}

void MeshView::mouseReleaseEvent(QMouseEvent* event)
{
    if (m_pressed < 0) {
        QGraphicsView::mouseReleaseEvent(event);
        return;
    }
    const int source = m_pressed;
    const bool dragged = m_dragging;
    int target = gpuAt(event->position().toPoint());
    endDrag();
    event->accept();
    if (!dragged) {
        emit gpuClicked(source);
        return;
    }
    if (target >= 0 && target != source)
        emit swapRequested(source, target);
}

void MeshView::endDrag()
{
    // The card goes home; the swap, if any, arrives as a new mesh.
    if (m_pressed >= 0 && m_pressed < gpuCount()) {
        GpuCardItem* card = m_cards[std::size_t(m_pressed)];
        card->setPos(m_home[std::size_t(m_pressed)].topLeft());
        card->setZValue(kZCard);
        card->setOpacity(card->m_dimmed ? 0.3 : 1.0);
    }
    if (m_dropTarget >= 0 && m_dropTarget < gpuCount()) {
        m_cards[std::size_t(m_dropTarget)]->m_drop = false;
        m_cards[std::size_t(m_dropTarget)]->update();
    }
    m_pressed = m_dropTarget = -1;
    m_dragging = false;
    viewport()->unsetCursor();
}

void MeshView::leaveEvent(QEvent* event)
{
    QGraphicsView::leaveEvent(event);
    if (m_pressed < 0)
        hoverGpu(-1);
}

} // namespace tw::ui
