// MeshView's legend under the cluster: what the fills, bands and outlines mean in the current
// colouring, and the status lines (the followed token's GPUs, the warnings).
#include "meshview.h"

#include "meshitems_p.h"

#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QTextDocument>

namespace tw::ui {

// GPUs whose memory at its peak is over their capacity (memory colouring), and the largest excess.
std::size_t MeshView::gpusOverCapacity(double& worstOver) const
{
    std::size_t overGpus = 0;
    worstOver = 0;
    if (m_colorBy == ColorBy::Memory && m_capacity > 0)
        for (std::size_t g = 0; g < std::min(m_memory.size(), m_styles.size()); ++g)
            if (m_memory[g] > m_capacity) {
                ++overGpus;
                worstOver = std::max(worstOver, m_memory[g] - m_capacity);
            }
    return overGpus;
}

// The legend's rows, above the nodes: the colouring's title and swatches, the TP band, the outlines in
// use; they wrap at `width`. Returns the number of the last row.
int MeshView::addLegendRows(qreal width, const QFont& font, const QFont& bold, bool overflows)
{
    QGraphicsScene* s = scene();
    const QFontMetricsF fm(font), fmBold(bold);
    const qreal lineH = fm.height() + 6;
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
    // One entry: a swatch `draw` puts into the entry's group, and its label beside it.
    auto entry = [&](const QString& label, const QColor& ink, const auto& draw) {
        auto* group = new QGraphicsRectItem(0, 0, 0, 0);
        group->setPen(Qt::NoPen);
        draw(group);
        auto* t = text(label, font, ink);
        t->setParentItem(group);
        t->setPos(sw + 5, 0);
        place(group, sw + 5 + fm.horizontalAdvance(label));
        m_legendEntries << label;
    };
    auto box = [&](QGraphicsItem* group, const QBrush& brush, const QPen& pen) {
        auto* b = new QGraphicsRectItem(0, (fm.height() - sh) / 2, sw, sh, group);
        b->setBrush(brush);
        b->setPen(pen);
    };
    for (const auto& [label, color] : swatches)
        entry(label, kInk, [&](QGraphicsItem* g) { box(g, color, QPen(QColor(0x37, 0x41, 0x51), 1)); });
    if (categories > shown) {
        const QString more = tr("… %1 in all (colours repeat in lighter/darker tints)").arg(categories);
        place(text(more, font, kMuted), fm.horizontalAdvance(more));
        m_legendEntries << more;
    }
    entry(tr("top band = TP group"), kInk, [&](QGraphicsItem* g) {
        for (int i = 0; i < 3; ++i) {
            auto* b = new QGraphicsRectItem(qreal(i) * sw / 3, fm.height() * 0.3, sw / 3, fm.height() * 0.4, g);
            b->setBrush(bandColor(i));
            b->setPen(Qt::NoPen);
        }
    });
    if (overflows)
        entry(tr("red outline = does not fit"), kWarn, [&](QGraphicsItem* g) { box(g, kMemOver, QPen(kWarn, 2.5)); });
    if (!m_crossing.empty())
        entry(tr("red dashed = TP group spans nodes"), kWarn,
              [&](QGraphicsItem* g) { box(g, QBrush(), QPen(kWarn, 2, Qt::DashLine)); });
    return line;
}

// The warning line under the legend (TP groups across nodes, GPUs that do not fit) at row `line` + 1;
// returns its height.
qreal MeshView::addWarningLine(qreal width, const QFont& bold, qreal lineH, int line, std::size_t overGpus,
                               double worstOver)
{
    QGraphicsScene* s = scene();
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
                         .arg(m_styles.size())
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
    return warningHeight;
}

// Dashed links between the members of a crossing TP group that sit on different nodes, and a label on
// the first link of each group (a few groups at most, so the labels stay apart).
void MeshView::addCrossingLinks()
{
    QGraphicsScene* s = scene();
    const Metrics m = metricsFor(m_detail);
    const QFont small = pixelFont(std::max(10, m.coordPx > 0 ? m.coordPx - 1 : 11), true);
    int labelled = 0;
    int links = 0;
    for (std::size_t t = 0; t < m_tpGroups.size() && links < 256; ++t) {
        if (!m_tpGroupCrosses[t])
            continue;
        const std::span<const int> members = m_tpGroups[t];
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

}

// The legend under the cluster's title, the warning line, the crossing links and the status line.
void MeshView::updateLegend()
{
    QGraphicsScene* s = scene();
    for (QGraphicsItem* item : m_decor) {
        s->removeItem(item);
        delete item;
    }
    m_decor.clear();
    m_legendEntries.clear();
    if (m_styles.empty())
        return;
    // Text size follows the drawing's width so that the legend reads like the cards.
    const qreal width = std::max<qreal>(m_contentRect.width(), 420);
    m_textWidth = width;
    const int px = m_detail == Detail::Compact ? std::max(10, int(width / 70)) : 14;
    const QFont font = pixelFont(px), bold = pixelFont(px, true);
    const QFontMetricsF fm(font);
    const qreal lineH = fm.height() + 6;
    double worstOver = 0;
    const std::size_t overGpus = gpusOverCapacity(worstOver);
    const int line = addLegendRows(width, font, bold, overGpus > 0);
    const qreal warningHeight = addWarningLine(width, bold, lineH, line, overGpus, worstOver);
    const qreal legendHeight = qreal(line + 1) * lineH + warningHeight + 8;
    for (QGraphicsItem* item : m_decor)
        item->moveBy(m_contentRect.left(), m_contentRect.top() - legendHeight);
    addCrossingLinks();

    // The status line (hover help) under the nodes.
    m_status = new QGraphicsSimpleTextItem(QString());
    m_status->setFont(font);
    m_status->setBrush(kInk);
    m_status->setPos(m_contentRect.left(), m_contentRect.bottom() + 8);
    s->addItem(m_status);
    m_decor.push_back(m_status);
    restyle(); // fills the status text

    const QRectF all(m_contentRect.left(), m_contentRect.top() - legendHeight, width,
                     m_contentRect.height() + legendHeight + 8 + 2 * lineH); // two status lines
    s->setSceneRect(all.adjusted(-10, -10, 10, 10));
}

} // namespace tw::ui
