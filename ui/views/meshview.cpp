#include "meshview.h"

#include "meshitems_p.h"

#include <QApplication>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QResizeEvent>
#include <QStyleOptionGraphicsItem>
#include <QTextDocument>
#include <QToolTip>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace tw::ui {

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
    m_field = nullptr;
    m_styles.clear();
    m_home.clear();
    m_nodeRects.clear();
    m_nodeWarn.clear();
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

// Group membership: core's groups when they cover every GPU once, else read off the coordinates; which
// TP groups span nodes.
void MeshView::buildGroups(const std::vector<parallel::Group>* groups)
{
    const std::uint64_t n = m_gpus.size();
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;
    // Groups by key, in the keys' order, each group's members by `order` (a counting sort over a dense
    // table of the coordinates' ranges: a map, then a vector per group, of 98,304 GPUs took tens of
    // milliseconds of the GUI thread).
    auto fromCoords = [&](auto key, auto order, int Gpu::*slot) {
        std::size_t dims[3] = {0, 0, 0};
        for (std::uint64_t g = 0; g < n; ++g) {
            const Key k = key(m_gpus[g]);
            dims[0] = std::max<std::size_t>(dims[0], std::get<0>(k) + 1u);
            dims[1] = std::max<std::size_t>(dims[1], std::get<1>(k) + 1u);
            dims[2] = std::max<std::size_t>(dims[2], std::get<2>(k) + 1u);
        }
        std::vector<std::size_t> keyOf(n), first(dims[0] * dims[1] * dims[2] + 1, 0);
        for (std::uint64_t g = 0; g < n; ++g) {
            const Key k = key(m_gpus[g]);
            keyOf[g] = (std::get<0>(k) * dims[1] + std::get<1>(k)) * dims[2] + std::get<2>(k);
            ++first[keyOf[g] + 1];
        }
        for (std::size_t k = 1; k < first.size(); ++k)
            first[k] += first[k - 1];
        std::vector<int> sorted(n);
        std::vector<std::size_t> next(first.begin(), first.end() - 1);
        for (std::uint64_t g = 0; g < n; ++g)
            sorted[next[keyOf[g]]++] = int(g);
        GroupTable out;
        out.members.reserve(n);
        for (std::size_t k = 0; k + 1 < first.size(); ++k) {
            if (first[k] == first[k + 1])
                continue;
            const auto begin = sorted.begin() + std::ptrdiff_t(first[k]), end = sorted.begin() + std::ptrdiff_t(first[k + 1]);
            std::stable_sort(begin, end, [&](int a, int b) { return order(m_gpus[std::size_t(a)]) < order(m_gpus[std::size_t(b)]); });
            for (auto it = begin; it != end; ++it) {
                m_gpus[std::size_t(*it)].*slot = int(out.size());
                out.members.push_back(*it);
            }
            out.start.push_back(out.members.size());
        }
        return out;
    };
    auto fromCore = [&](const char* kind, int Gpu::*slot, std::vector<bool>* crosses) -> std::optional<GroupTable> {
        if (!groups)
            return std::nullopt;
        GroupTable out;
        std::vector<int> seen(n, -1);
        for (const parallel::Group& grp : *groups) {
            if (grp.kind != kind)
                continue;
            for (std::uint32_t g : grp.members) {
                if (g >= n || seen[g] >= 0)
                    return std::nullopt;
                seen[g] = int(out.size());
                out.members.push_back(int(g));
            }
            out.start.push_back(out.members.size());
            if (crosses)
                crosses->push_back(grp.crossesNodes);
        }
        if (out.size() == 0 || std::count(seen.begin(), seen.end(), -1) > 0)
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
        for (std::size_t t = 0; t < m_tpGroups.size(); ++t) {
            const std::span<const int> members = m_tpGroups[t];
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

}

// The GPUs of a plan's mesh on the cluster: their coordinates and groups, the cards (rebuilt when the
// cluster's shape changed), the legend.
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

    buildGroups(groups);

    m_crossing.clear();
    for (std::uint64_t g = 0; g < n; ++g)
        if (m_tpGroupCrosses[std::size_t(m_gpus[g].tpGroup)])
            m_crossing.push_back(int(g));

    if (cluster.nodes != m_shapeNodes || cluster.gpusPerNode != m_shapeGpusPerNode || m_home.size() != n)
        rebuildItems((n + cluster.gpusPerNode - 1) / cluster.gpusPerNode, cluster.gpusPerNode);
    if (m_hovered >= int(n))
        m_hovered = -1;
    updateLegend(); // restyles the cards too
    fit();
}

QString MeshView::gpuToolTip(int g) const
{
    if (g < 0 || std::size_t(g) >= m_gpus.size())
        return {};
    const Gpu& gpu = m_gpus[std::size_t(g)];
    const bool known = m_colorBy == ColorBy::Memory && std::size_t(g) < m_memory.size() && m_capacity > 0;
    QString memoryTip;
    if (known) {
        const double used = m_memory[std::size_t(g)];
        const QString usedText = QString::fromStdString(formatBytes(used, m_units));
        const QString capacityText = QString::fromStdString(formatBytes(m_capacity, m_units));
        memoryTip = used > m_capacity
                        ? tr("\nMemory: %1 of %2, %3 over").arg(usedText, capacityText,
                                                                QString::fromStdString(formatBytes(used - m_capacity, m_units)))
                        : tr("\nMemory: %1 of %2 (%3 %)").arg(usedText, capacityText).arg(std::lround(100.0 * used / m_capacity));
    }
    return tr("GPU %1 on node %2\ndp %3 · pp %4 · tp %5\nTP group: %6\nDP group: %7\nPipeline: %8%9%10")
        .arg(g)
        .arg(gpu.node)
        .arg(gpu.dp)
        .arg(gpu.pp)
        .arg(gpu.tp)
        .arg(joined(m_tpGroups[std::size_t(gpu.tpGroup)]))
        .arg(joined(m_dpGroups[std::size_t(gpu.dpGroup)]))
        .arg(joined(m_ppGroups[std::size_t(gpu.ppGroup)]))
        .arg(m_tpGroupCrosses[std::size_t(gpu.tpGroup)] ? tr("\n⚠ this TP group spans nodes") : QString())
        .arg(memoryTip);
}

bool MeshView::viewportEvent(QEvent* event)
{
    // A card's tooltip is written when it is asked for (writing 16,384 of them at every new mesh took
    // most of a derivation's time on the GUI thread).
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString tip = gpuToolTip(gpuAt(help->pos()));
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), tip, viewport());
        return true;
    }
    return QGraphicsView::viewportEvent(event);
}

void MeshView::rebuildItems(std::uint64_t nodes, std::uint64_t gpusPerNode)
{
    QGraphicsScene* s = scene();
    s->clear();
    m_cards.clear();
    m_nodes.clear();
    m_field = nullptr;
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
    // Beyond kMaxCardItems GPUs the cards and node boxes are not scene items (a scene of 110,000 items
    // took 120 ms to build and 270 ms to paint at 98,304 GPUs, each card a fraction of a pixel; building
    // the items alone to hold their styles, 40 ms): one CardFieldItem paints them all from the arrays,
    // cached until a style changes.
    const bool field = n > kMaxCardItems;
    m_styles.assign(n, CardStyle{});
    m_nodeWarn.assign(nodes, 0);
    m_nodeRects.clear();
    m_nodeRects.reserve(nodes);
    m_home.clear();
    m_home.reserve(n);
    for (std::uint64_t node = 0; node < nodes; ++node)
        m_nodeRects.emplace_back(qreal(node % nodeCols) * (nodeW + m.nodeGap), qreal(node / nodeCols) * (nodeH + m.nodeGap), nodeW, nodeH);
    for (std::size_t g = 0; g < n; ++g) {
        const std::uint64_t local = g % gpn;
        const QRectF& box = m_nodeRects[g / gpn];
        const QPointF topLeft(box.left() + m.pad + qreal(local % cols) * (m.cardW + m.gap),
                              box.top() + m.title + qreal(local / cols) * (m.cardH + m.gap));
        m_home.emplace_back(topLeft, QSizeF(m.cardW, m.cardH));
    }
    if (field) {
        QRectF all;
        for (const QRectF& box : m_nodeRects)
            all |= box;
        m_field = new CardFieldItem(m_styles, m_home, m_nodeRects, m_nodeWarn, all);
        s->addItem(m_field);
    } else {
        m_nodes.reserve(nodes);
        m_cards.reserve(n);
        for (std::uint64_t node = 0; node < nodes; ++node) {
            auto* item = new NodeBoxItem(int(node), m_nodeRects[node], m, m_nodeWarn);
            s->addItem(item);
            m_nodes.push_back(item);
        }
        for (std::size_t g = 0; g < n; ++g) {
            auto* card = new GpuCardItem(int(g), m, m_styles);
            card->setPos(m_home[g].topLeft());
            s->addItem(card);
            m_cards.push_back(card);
        }
    }
    m_contentRect = s->itemsBoundingRect();
}

namespace {

// The few outlines a card can have, built once (a pen per card was most of a restyle of 98,304 cards):
// index = kind · 2 + crosses, kinds 0 plain, 1 over its memory, 2 hovered, 3 TP, 4 DP and 5 PP peer of
// the hovered GPU.
class CardPens {
public:
    explicit CardPens(bool compact) : m_compact(compact) {}
    const QPen& penFor(int kind, bool crosses)
    {
        std::optional<QPen>& slot = m_pens[std::size_t(kind * 2 + (crosses ? 1 : 0))];
        if (!slot) {
            const qreal w = m_compact ? 1.8 : 3.0;
            const QColor c = crosses ? kWarn : kInk;
            switch (kind) {
            case 0:
                slot = QPen(crosses ? kWarn : QColor(0x37, 0x41, 0x51), crosses ? 2.2 : 1.0, crosses ? Qt::DashLine : Qt::SolidLine);
                break;
            case 1: slot = QPen(kWarn, m_compact ? 1.8 : 3.2, Qt::SolidLine); break;
            case 2: slot = QPen(c, w + 1.0, Qt::SolidLine); break;
            case 3: slot = QPen(c, w, Qt::SolidLine); break;
            case 4: slot = QPen(c, w, Qt::DashLine); break;
            default: slot = QPen(c, w, Qt::DotLine); break;
            }
            if (m_compact && kind < 2)
                slot->setWidthF(std::min(slot->widthF(), 1.2));
        }
        return *slot;
    }

private:
    bool m_compact;
    std::array<std::optional<QPen>, 12> m_pens;
};

} // namespace

// A card's text lines by detail level; with the memory known, the memory takes the coordinates' place.
QStringList MeshView::cardLines(std::size_t g, bool known, double used, double share, bool overCapacity) const
{
    const Gpu& gpu = m_gpus[g];
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
            lines = QStringList{lines[0], QString::fromStdString(formatBytes(used, m_units)), overCapacity ? over : pct};
        else
            lines = QStringList{lines[0], overCapacity ? over : pct};
    }
    return lines;
}

// The status line under the nodes: the hovered GPU and its peers, or how to use the view.
void MeshView::updateStatusLine(const Gpu* hovered)
{
    if (!m_status)
        return;
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

// Every card's look from the colouring, the memory, the hover and the drag; the nodes' warnings; the
// status line.
void MeshView::restyle()
{
    const std::size_t n = m_styles.size();
    const Gpu* hovered = m_hovered >= 0 ? &m_gpus[std::size_t(m_hovered)] : nullptr;
    std::vector<char> nodeWarn(m_nodeRects.size(), 0);
    CardPens pens(m_detail == Detail::Compact);
    // Fills and bands repeat with the palette's rounds.
    constexpr int kRounds = 3 * int(kCategoricalSize);
    std::array<std::optional<QColor>, std::size_t(kRounds)> fills, bands;
    auto memo = [](auto& table, int i, QColor (*make)(int)) {
        if (i < 0)
            return make(i);
        auto& slot = table[std::size_t(i % kRounds)];
        if (!slot)
            slot = make(i);
        return *slot;
    };
    for (std::size_t g = 0; g < n; ++g) {
        const Gpu& gpu = m_gpus[g];
        CardStyle& card = m_styles[g];
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
        card.over = known && used > m_capacity;
        card.fill = byMemory ? (known ? memoryFill(share) : fillColor(-1)) : memo(fills, colorIndex, fillColor);
        card.band = memo(bands, gpu.tpGroup, bandColor);
        card.crosses = m_tpGroupCrosses[std::size_t(gpu.tpGroup)];
        if (card.crosses)
            nodeWarn[std::size_t(gpu.node)] = 1;

        card.lines = cardLines(g, known, used, share, card.over);

        // Hover: the hovered card and its TP (solid), DP (dashed) and PP (dotted) peers stand out,
        // the others fade.
        int kind = card.over ? 1 : 0;
        bool highlighted = false, dimmed = false;
        if (hovered) {
            if (int(g) == m_hovered)
                kind = 2;
            else if (gpu.tpGroup == hovered->tpGroup)
                kind = 3;
            else if (gpu.dpGroup == hovered->dpGroup)
                kind = 4;
            else if (gpu.ppGroup == hovered->ppGroup)
                kind = 5;
            else
                dimmed = true;
            highlighted = kind >= 2;
        }
        card.outline = pens.penFor(kind, card.crosses);
        card.highlighted = highlighted;
        card.dimmed = dimmed;
        card.drop = int(g) == m_dropTarget;
        card.token = std::binary_search(m_tokenGpus.begin(), m_tokenGpus.end(), int(g));
        if (!m_cards.empty()) {
            m_cards[g]->setOpacity(dimmed ? 0.3 : 1.0);
            m_cards[g]->update();
        }
    }
    if (m_field)
        m_field->update();
    for (std::size_t i = 0; i < m_nodeWarn.size(); ++i) {
        if (m_nodeWarn[i] != nodeWarn[i]) {
            m_nodeWarn[i] = nodeWarn[i];
            if (!m_nodes.empty())
                m_nodes[i]->update();
        }
    }
    updateStatusLine(hovered);
}

void MeshView::setTokenGpus(std::vector<int> gpus)
{
    std::sort(gpus.begin(), gpus.end());
    if (gpus == m_tokenGpus)
        return;
    m_tokenGpus = std::move(gpus);
    if (!m_styles.empty())
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
    if (!m_styles.empty() && m_colorBy == ColorBy::Memory)
        updateLegend();
}

void MeshView::setColorBy(ColorBy mode)
{
    if (mode == m_colorBy)
        return;
    m_colorBy = mode;
    if (m_styles.empty())
        return;
    updateLegend();
}

void MeshView::fit()
{
    if (m_styles.empty())
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
    const CardStyle& c = m_styles[std::size_t(gpu)];
    return {c.fill, c.band, c.outline, c.crosses, c.highlighted, c.dimmed, c.token, c.over, c.lines.join(QLatin1Char('\n'))};
}

QRectF MeshView::cardSceneRect(int gpu) const
{
    if (gpu < 0 || gpu >= gpuCount())
        return {};
    if (m_cards.empty())
        return m_home[std::size_t(gpu)];
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
    if (!m_dragging && !m_field && (pos - m_pressPos).manhattanLength() >= QApplication::startDragDistance()) {
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
                m_styles[std::size_t(m_dropTarget)].drop = false;
                m_cards[std::size_t(m_dropTarget)]->update();
            }
            m_dropTarget = target;
            if (target >= 0) {
                m_styles[std::size_t(target)].drop = true;
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
    if (m_dragging && m_pressed >= 0 && m_pressed < gpuCount()) {
        GpuCardItem* card = m_cards[std::size_t(m_pressed)];
        card->setPos(m_home[std::size_t(m_pressed)].topLeft());
        card->setZValue(kZCard);
        card->setOpacity(m_styles[std::size_t(m_pressed)].dimmed ? 0.3 : 1.0);
    }
    if (m_dropTarget >= 0 && m_dropTarget < gpuCount()) {
        m_styles[std::size_t(m_dropTarget)].drop = false;
        if (!m_cards.empty())
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
