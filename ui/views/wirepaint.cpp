#include "wirepaint.h"

#include "palette.h"
#include "wiretooltips.h"

#include <QApplication>
#include <QCoreApplication>
#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <array>
#include <cmath>

namespace tw::ui {

using network::NodeId;
using network::NodeKind;

namespace {

using palette::kInk;
using palette::kMuted;
const QColor kServerFill(0xF8, 0xFA, 0xFC);
const QColor kServerLine(0x94, 0xA3, 0xB8);
const QColor kGpuFill(0x33, 0x41, 0x55);
const QColor kGpuHighlight(0xF0, 0xE4, 0x42); // palette yellow: the emphasised GPUs
const QColor kPartFill(Qt::white);
const QColor kSwitchFill(0xE2, 0xE8, 0xF0);
const QColor kNvSwitchFill(0x47, 0x55, 0x69);

// `a` blended towards `b`, `t` = the share of `b`, clamped to [0, 1] (palette::mix counts the first colour's share).
QColor towards(const QColor& a, const QColor& b, double t)
{
    return palette::mix(b, a, std::clamp(t, 0.0, 1.0));
}


// Draws the first candidate that fits `box` (font size from the box height, capped; a candidate may
// shrink to 3/4 of it before the next, shorter one is tried), centred.
// `plate`, when valid: filled behind the text (a title that lines pass under).
// Whether drawFittedLabel would draw `text` in `box` (at its size or shrunk by at most a quarter).
bool fitsLabel(const QRectF& box, const QString& text, bool bold, double maxPx)
{
    const double px = std::min(maxPx, box.height() * 0.52);
    if (px < 7.5)
        return false;
    const double room = box.width() - std::min(8.0, box.width() * 0.12);
    for (const double f : {1.0, 0.86, 0.75}) {
        if (px * f < 10 && f < 1)
            break;
        if (QFontMetricsF(pixelFont(px * f, bold)).horizontalAdvance(text) <= room)
            return true;
    }
    return false;
}

void drawFittedLabel(QPainter& p, const QRectF& box, const QStringList& candidates, const QColor& color, bool bold,
                     double maxPx = 17, const QColor& plate = {})
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
            const QFontMetricsF fm(font);
            if (const double w = fm.horizontalAdvance(c); w <= room) {
                if (plate.isValid()) {
                    const QRectF back(box.center().x() - w / 2 - 6, box.center().y() - fm.height() / 2 - 1, w + 12, fm.height() + 2);
                    p.setPen(Qt::NoPen);
                    p.setBrush(plate);
                    p.drawRoundedRect(back, 4, 4);
                }
                p.setFont(font);
                p.setPen(color);
                p.drawText(box, Qt::AlignCenter, c);
                return;
            }
        }
}


} // namespace

QRectF WireViewport::toScreen(const QRectF& world) const
{
    return QRectF(world.topLeft() * scale + offset, world.bottomRight() * scale + offset);
}

// Idle light slate → slate → near-black (palette::kLoad*); any traffic at all is visibly tinted.
QColor loadColor(double u)
{
    if (!(u > 0))
        return palette::kLoadIdle;
    const double t = 0.22 + 0.78 * std::min(u, 1.0);
    return t < 0.5 ? towards(palette::kLoadIdle, palette::kLoadMid, t / 0.5)
                   : towards(palette::kLoadMid, palette::kLoadFull, (t - 0.5) / 0.5);
}

QFont pixelFont(double px, bool bold)
{
    QFont f = QApplication::font();
    f.setPixelSize(std::max(6, int(std::lround(px))));
    f.setBold(bold);
    return f;
}

void paintServerBoxes(QPainter& p, const WireLayout& geo, const network::Topology& t, const WireViewport& vp, int openServer)
{
    const QRectF& view = vp.view;
    auto screenRect = [&](const QRectF& w) { return vp.toScreen(w); };
    // Detailed titles all in the same (longest fitting) form.
    int titleForm = 0;
    {
        const double th = geo.titleH * vp.scale;
        const QFontMetricsF fm(pixelFont(std::min(16.0, th * 0.52), true));
        for (const auto& sg : geo.servers) {
            if (sg.compact)
                continue;
            const double room = sg.rect.width() * vp.scale - 12 - 8;
            while (titleForm + 1 < int(sg.titles.size()) && fm.horizontalAdvance(sg.titles[titleForm]) > room)
                ++titleForm;
        }
    }
    for (std::size_t s = 0; s < geo.servers.size(); ++s) {
        const WireLayout::ServerGeom& sg = geo.servers[s];
        const QRectF r = screenRect(sg.rect);
        if (!r.intersects(view))
            continue;
        const bool open = int(s) == openServer;
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
            const double th = geo.titleH * vp.scale;
            const QRectF title(r.left() + 6, r.bottom() - th - 2, r.width() - 12, th);
            drawFittedLabel(p, title, sg.titles.mid(std::min<int>(titleForm, int(sg.titles.size()) - 1)), kMuted, true, 16);
        }
    }

}

void paintGroupBoxes(QPainter& p, const WireLayout& geo, const WireViewport& vp)
{
    // One title form for every box (the longest that fits all of them, where each box draws it): "group 3"
    // next to "servers 0–31", or "pod 9" next to "p10", would read as two kinds of box.
    auto titleBox = [](const QRectF& r) {
        const QRectF top(r.left(), r.top() + r.height() * 0.12, r.width(), r.height() * 0.42);
        return top.height() * 0.52 >= 7.5 ? std::pair{top, 18.0} : std::pair{r, 14.0};
    };
    int form = 1;
    for (std::size_t g = 0; g < geo.groups.size(); ++g) {
        const WireGroups::Group& info = geo.grouping().groups[g];
        if (geo.groups[g].open || !info.openable() || geo.groups[g].rect.isNull())
            continue;
        const auto [box, maxPx] = titleBox(vp.toScreen(geo.groups[g].rect));
        while (form + 1 < int(info.titles.size()) && !fitsLabel(box, info.titles[form], true, maxPx))
            ++form;
    }
    for (std::size_t g = 0; g < geo.groups.size(); ++g) {
        const WireLayout::GroupGeom& gg = geo.groups[g];
        const WireGroups::Group& info = geo.grouping().groups[g];
        const QRectF r = vp.toScreen(gg.rect);
        if (gg.rect.isNull() || !r.intersects(vp.view))
            continue;
        const double radius = std::min(10.0, r.height() * 0.1);
        if (gg.open) {
            // The open group: a dashed frame around its parts, its title above them.
            p.setPen(QPen(kInk, 1.5, Qt::DashLine));
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(r, radius, radius);
            const double th = std::min(vp.scale * 150 * 0.85, 30.0); // the frame's title band (most of kOpenTitleH)
            QStringList titles;
            // A pod around an open server group: Esc closes the server group first.
            const bool innermost = int(g) == geo.openGroup;
            for (const QString& c : info.titles)
                titles << (innermost ? QCoreApplication::translate("WireView", "%1 · %2 — double-click here or Esc to collapse")
                                     : QCoreApplication::translate("WireView", "%1 · %2 — double-click here to collapse"))
                              .arg(c, info.subtitle)
                       << c;
            drawFittedLabel(p, QRectF(r.left() + 8, r.top() + 6, r.width() - 16, th), titles, kInk, true, 22,
                            QColor(255, 255, 255, 235));
            continue;
        }
        if (!info.openable()) { // a core plane: a switch box
            p.setPen(QPen(kServerLine, 1.2));
            p.setBrush(kSwitchFill);
            p.drawRoundedRect(r, radius, radius);
            if (r.height() * 0.62 * 0.52 >= 7.5) {
                drawFittedLabel(p, r.adjusted(0, 0, 0, -r.height() * 0.38), info.titles, kInk, true, 16);
                drawFittedLabel(p, r.adjusted(0, r.height() * 0.5, 0, 0), {info.subtitle}, kMuted, false, 13);
            } else {
                drawFittedLabel(p, r, info.titles, kInk, true, 14); // too small for two lines
            }
            continue;
        }
        p.setPen(QPen(gg.highlighted ? kInk : kServerLine, gg.highlighted ? 3 : 1.4));
        p.setBrush(Qt::NoBrush); // the load fill is drawn under this layer
        p.drawRoundedRect(r, radius, radius);
        if (gg.highlighted) { // a yellow band: the followed token's GPUs are inside
            const QRectF band(r.left() + 3, r.top() + 3, r.width() - 6, std::max(3.0, r.height() * 0.08));
            p.fillRect(band, kGpuHighlight);
        }
        const QRectF top(r.left(), r.top() + r.height() * 0.12, r.width(), r.height() * 0.42);
        const QRectF bottom(r.left(), r.top() + r.height() * 0.54, r.width(), r.height() * 0.34);
        const QStringList titles = info.titles.mid(std::min<int>(form, int(info.titles.size()) - 1));
        if (top.height() * 0.52 >= 7.5) {
            drawFittedLabel(p, top, titles, kInk, true, 18);
            drawFittedLabel(p, bottom, {info.subtitle, QString::number(info.gpus)}, kInk, false, 16);
        } else {
            drawFittedLabel(p, r, titles, kInk, true, 14);
        }
    }
}

void paintNodeBoxes(QPainter& p, const WireLayout& geo, const network::Topology& t, const WireViewport& vp,
                    const std::vector<int>& highlightedGpus)
{
    const QRectF& view = vp.view;
    auto screenRect = [&](const QRectF& w) { return vp.toScreen(w); };
    auto drawn = [&](NodeId id) { return geo.nodeDrawn(t, id); };
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
        for (NodeId id = 0; id < geo.nodes.size(); ++id) {
            if (!drawn(id))
                continue;
            const int k = int(t.node(id).kind);
            const QSizeF box = geo.nodes[id].rect.size() * vp.scale;
            minBox[std::size_t(k)] = QSizeF(std::min(minBox[std::size_t(k)].width(), box.width()),
                                            std::min(minBox[std::size_t(k)].height(), box.height()));
            const QStringList& labels = geo.nodes[id].labels;
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
            // Half the box's height, a little more in small boxes (a 14 px NIC or DRAM box takes a 9 px
            // "NIC" or "mem", which left them empty at 7 px); a line of text still fits the box.
            const double px = std::min(20.0, box.height() * 0.5 + std::min(box.height() * 0.15, 2.5));
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
    for (NodeId id = 0; id < geo.nodes.size(); ++id) {
        if (!drawn(id))
            continue;
        const WireLayout::NodeGeom& ng = geo.nodes[id];
        const network::Node& node = t.node(id);
        const QRectF r = screenRect(ng.rect);
        if (!r.intersects(view))
            continue;
        const bool highlighted = node.kind == NodeKind::Gpu
            && std::binary_search(highlightedGpus.begin(), highlightedGpus.end(), int(node.gpu));
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

void paintWireLegend(QPainter& p, const QRectF& strip, const std::optional<QString>& token)
{
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
    const QString head = QCoreApplication::translate("tw::ui::WireView", "Packets:");
    p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), head);
    x += fm.horizontalAdvance(head) + 8;
    for (int k = 0; k < parallel::kStrategyCount; ++k) {
        p.fillRect(QRectF(x - 1, cy - 6, 12, 12), Qt::white);
        p.fillRect(QRectF(x, cy - 5, 10, 10), palette::strategy(k));
        x += 14;
        const QString name = strategyShortName(k);
        p.setPen(kInk);
        p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), name);
        x += fm.horizontalAdvance(name) + 14;
    }
    x += 10;
    p.setPen(kMuted);
    const QString load = QCoreApplication::translate("tw::ui::WireView", "Load now:");
    p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), load);
    x += fm.horizontalAdvance(load) + 8;
    const QString idle = QCoreApplication::translate("tw::ui::WireView", "idle");
    p.setPen(kInk);
    p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), idle);
    x += fm.horizontalAdvance(idle) + 6;
    const double gw = 120;
    for (int i = 0; i < int(gw); i += 2)
        p.fillRect(QRectF(x + i, cy - 5, 2, 10), i == 0 ? palette::kLoadIdle : loadColor(i / gw));
    x += gw + 6;
    p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), QCoreApplication::translate("tw::ui::WireView", "100 %"));
    x += fm.horizontalAdvance(QCoreApplication::translate("tw::ui::WireView", "100 %")) + 20;
    if (token) {
        // The followed token's glow.
        p.setRenderHint(QPainter::Antialiasing, true);
        p.setPen(QPen(kInk, 8, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(QPointF(x, cy), QPointF(x + 18, cy));
        p.setPen(QPen(kWireTokenGlow, 5, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(QPointF(x, cy), QPointF(x + 18, cy));
        p.setRenderHint(QPainter::Antialiasing, false);
        x += 26;
        p.setPen(kInk);
        p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), *token);
        x += fm.horizontalAdvance(*token) + 20;
    }
    p.setPen(kMuted);
    const QString width = QCoreApplication::translate("tw::ui::WireView", "line width = capacity; the two directions side by side");
    if (x + fm.horizontalAdvance(width) < strip.right() - 8)
        p.drawText(QPointF(x, cy + fm.ascent() / 2 - 1), width);
    p.setRenderHint(QPainter::Antialiasing, true);
}

} // namespace tw::ui
