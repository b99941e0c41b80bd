#include "ncclchannelview.h"

#include "views/palette.h"
#include "views/qtstrings.h"

#include <QPainter>
#include <QPainterPath>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {

// Twelve colours for up to twelve distinct channels: Okabe–Ito, then Tol's bright ones it lacks.
const QColor kChannelColors[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73),
                                 QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00),
                                 QColor(0x33, 0x22, 0x88), QColor(0xEE, 0x66, 0x77), QColor(0x22, 0x88, 0x33),
                                 QColor(0xAA, 0x33, 0x77), QColor(0x99, 0x99, 0x33), QColor(0x88, 0x22, 0x55)};

constexpr int kMargin = 12;
constexpr int kRowHeight = 44;
constexpr int kGpu = 26;       // circle diameter
constexpr int kGpuStep = 46;   // centre to centre
constexpr int kLabelWidth = 110;
constexpr int kNicWidth = 58;
constexpr int kMaxGpusDrawn = 16; // more: the first 12 and the last 2 around "…"

QString protocolText(nccl::Protocol p)
{
    switch (p) {
    case nccl::Protocol::Simple:
        return QObject::tr("Simple protocol: large chunks with a memory fence per chunk — full bandwidth, the highest "
                           "latency; NCCL's choice for large messages.");
    case nccl::Protocol::LL128:
        return QObject::tr("LL128 protocol: 128-byte lines carrying 8 bytes of flags, stored without fences — "
                           "≈ 92 % of the bandwidth at a lower latency (NVLink paths).");
    case nccl::Protocol::LL:
        return QObject::tr("LL (low-latency) protocol: 8-byte stores of 4 bytes of data and a 4-byte flag — half the "
                           "bandwidth or less, the lowest latency; NCCL's choice for small messages.");
    }
    return {};
}

QString channelList(const std::vector<int>& channels)
{
    if (channels.size() == 1)
        return QObject::tr("ch %1").arg(channels.front());
    bool consecutive = true;
    for (std::size_t i = 1; i < channels.size(); ++i)
        consecutive = consecutive && channels[i] == channels[i - 1] + 1;
    if (consecutive)
        return QObject::tr("ch %1–%2").arg(channels.front()).arg(channels.back());
    QStringList out;
    for (int c : channels)
        out << QString::number(c);
    return QObject::tr("ch %1").arg(out.join(QLatin1Char(',')));
}

// The GPUs drawn for a layout: all of them, or the first 12, a gap (-1) and the last 2.
std::vector<int> drawnGpus(const std::vector<int>& gpus)
{
    if (int(gpus.size()) <= kMaxGpusDrawn)
        return gpus;
    std::vector<int> out(gpus.begin(), gpus.begin() + 12);
    out.push_back(-1);
    out.insert(out.end(), gpus.end() - 2, gpus.end());
    return out;
}

void arrow(QPainter& p, QPointF from, QPointF to, const QColor& color, double width = 2)
{
    p.setPen(QPen(color, width, Qt::SolidLine, Qt::RoundCap));
    p.drawLine(from, to);
    const QPointF d = to - from;
    const double len = std::hypot(d.x(), d.y());
    if (len < 1)
        return;
    const QPointF u = d / len, n(-u.y(), u.x());
    QPolygonF head;
    head << to << to - u * 8 + n * 4 << to - u * 8 - n * 4;
    p.setBrush(color);
    p.drawPolygon(head);
    p.setBrush(Qt::NoBrush);
}

void gpuCircle(QPainter& p, QPointF centre, int gpu, const QColor& rim)
{
    p.setPen(QPen(rim, 2));
    p.setBrush(Qt::white);
    p.drawEllipse(centre, kGpu / 2.0, kGpu / 2.0);
    p.setPen(palette::kInk);
    p.drawText(QRectF(centre.x() - kGpu / 2.0, centre.y() - kGpu / 2.0, kGpu, kGpu), Qt::AlignCenter,
               gpu < 0 ? QStringLiteral("…") : QString::number(gpu));
    p.setBrush(Qt::NoBrush);
}

void nicBox(QPainter& p, QRectF r, int nic, const QColor& color)
{
    p.setPen(QPen(color, 2));
    p.setBrush(QColor(color.red(), color.green(), color.blue(), 40));
    p.drawRoundedRect(r, 5, 5);
    p.setPen(palette::kInk);
    p.drawText(r, Qt::AlignCenter, QObject::tr("NIC %1").arg(nic));
    p.setBrush(Qt::NoBrush);
}

} // namespace

NcclChannelView::NcclChannelView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("ncclChannelView"));
    setAutoFillBackground(true);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, Qt::white);
    setPalette(pal);
    clear(tr("No call yet."));
}

void NcclChannelView::setDisplayUnits(DisplayUnits units)
{
    m_units = units;
    if (m_prediction)
        setCall(m_system, *m_prediction, m_bytes, m_context);
}

void NcclChannelView::clear(const QString& why)
{
    m_prediction.reset();
    m_rows.clear();
    m_switch = false;
    m_headline = why;
    m_protocolLine.clear();
    m_notes.clear();
    setMinimumHeight(contentHeight());
    updateGeometry();
    update();
}

void NcclChannelView::setCall(const nccl::System& system, const nccl::Prediction& p, double bytes, const QString& context)
{
    m_context = context;
    m_system = system;
    m_prediction = p;
    m_bytes = bytes;
    m_rows.clear();
    m_switch = false;
    m_notes.clear();
    if (!context.isEmpty())
        m_notes << context;
    m_graphs = nccl::searchGraphs(system);
    const QString op = qs(collective::displayName(p.op));
    const QString size = qs(formatBytes(bytes, m_units));
    if (p.pointToPoint) {
        m_headline = tr("NCCL runs this %1 of %2 on its point-to-point path: each GPU sends to its peers directly, "
                        "over NVLink or PCIe inside a node and its own NIC across nodes; no ring or tree channels. "
                        "Predicted %3.")
                         .arg(op, size, qs(formatSeconds(p.time)));
        m_protocolLine = protocolText(p.protocol);
    } else {
        const nccl::Graph& g = p.algorithm == nccl::Algorithm::Tree || p.algorithm == nccl::Algorithm::Pat ? m_graphs.tree
                               : p.algorithm == nccl::Algorithm::Nvls || p.algorithm == nccl::Algorithm::NvlsTree
                                   ? m_graphs.nvls
                                   : m_graphs.ring;
        m_headline = tr("NCCL runs this %1 of %2 as <b>%3</b> with the <b>%4</b> protocol on %5 of %6 GB/s "
                        "each (%7); predicted %8.")
                         .arg(op, size, qs(nccl::toString(p.algorithm)), qs(nccl::toString(p.protocol)))
                         .arg(p.channels == 1 ? tr("1 channel") : tr("%1 channels").arg(p.channels))
                         .arg(system.nodes > 1 ? g.bwInter : g.bwIntra, 0, 'g', 4)
                         .arg(qs(system.fabric).toHtmlEscaped(), qs(formatSeconds(p.time)));
        m_protocolLine = protocolText(p.protocol);
        if (p.algorithm == nccl::Algorithm::Nvls || p.algorithm == nccl::Algorithm::NvlsTree) {
            m_switch = true;
            const nccl::LinkBytes link = nccl::nvlsBytesPerGpuLink(p.op, bytes, system.gpusPerNode);
            m_notes << tr("NVLink SHARP: every GPU pushes %1 into the NVSwitch, which reduces it (multimem "
                          "reductions) and multicasts %2 back to each GPU — against a ring's %3 each way.")
                           .arg(qs(formatBytes(link.up, m_units)), qs(formatBytes(link.down, m_units)),
                                qs(formatBytes(2.0 * (system.gpusPerNode - 1) / system.gpusPerNode * bytes, m_units)));
            QStringList heads;
            for (const nccl::Channel& c : g.channels)
                if (!c.gpus.empty())
                    heads << (c.nicOut >= 0 ? tr("%1 (NIC %2)").arg(c.gpus.front()).arg(c.nicOut) : QString::number(c.gpus.front()));
            m_notes << tr("%1 NVLS channels, one per head GPU: %2.").arg(g.nChannels).arg(heads.join(QStringLiteral(", ")));
            if (p.algorithm == nccl::Algorithm::NvlsTree)
                m_notes << tr("Across the %1 nodes the heads run NCCL's double binary tree through their NICs.").arg(system.nodes);
        } else if (p.algorithm == nccl::Algorithm::Ring || p.algorithm == nccl::Algorithm::Tree) {
            // Channels of the same layout share a row (one node: NCCL replays its first ring).
            for (std::size_t c = 0; c < g.channels.size(); ++c) {
                auto same = std::find_if(m_rows.begin(), m_rows.end(), [&](const Row& r) { return r.layout == g.channels[c]; });
                if (same != m_rows.end()) {
                    same->channels.push_back(int(c));
                    continue;
                }
                Row r;
                r.channels = {int(c)};
                r.layout = g.channels[c];
                r.color = kChannelColors[m_rows.size() % std::size(kChannelColors)];
                m_rows.push_back(std::move(r));
            }
            if (system.nodes > 1)
                m_notes << tr("Every node runs the same layout: a channel enters node k by its NIC and leaves it by the "
                              "same NIC for node k + 1 (rail-aligned); drawn here for one node.");
            else if (m_rows.size() == 1 && g.channels.size() > 1)
                m_notes << tr("One node: all %1 channels replay the same GPU order (NCCL's search repeats its first "
                              "ring); each channel carries 1/%1 of the bytes.")
                               .arg(g.channels.size());
            if (p.algorithm == nccl::Algorithm::Tree) {
                m_notes << tr("Tree: inside a node a chain from the head GPU; across nodes NCCL's double binary tree "
                              "(tree 0 and tree 1 each carry half the buffer).");
                for (int n = 0; n < system.nodes && n < 8 && n < int(m_graphs.trees.size()); ++n) {
                    const nccl::TreeLinks& t = m_graphs.trees[std::size_t(n)];
                    auto kids = [](const int d[2]) {
                        QStringList k;
                        for (int i = 0; i < 2; ++i)
                            if (d[i] >= 0)
                                k << QString::number(d[i]);
                        return k.isEmpty() ? QObject::tr("none") : k.join(QLatin1Char(' '));
                    };
                    m_notes << tr("node %1: tree 0 parent %2, children %3; tree 1 parent %4, children %5")
                                   .arg(n)
                                   .arg(t.up0 < 0 ? tr("none (root)") : QString::number(t.up0), kids(t.down0),
                                        t.up1 < 0 ? tr("none (root)") : QString::number(t.up1), kids(t.down1));
                }
            }
        } else {
            m_notes << tr("%1 is not drawn channel by channel (docs/nccl.md: CollNet and PAT are modelled by their "
                          "time only).")
                           .arg(qs(nccl::toString(p.algorithm)));
        }
    }
    if (!context.isEmpty()) // the scenario runs a textbook schedule: this is what NCCL would do
        m_headline.replace(QStringLiteral("NCCL runs this"), tr("NCCL would run this"));
    setMinimumHeight(contentHeight());
    updateGeometry();
    update();
}

int NcclChannelView::contentHeight() const
{
    const QFontMetrics fm(font());
    const int w = std::max(400, width() - 2 * kMargin);
    int h = kMargin;
    QStringList blocks{m_headline, m_protocolLine};
    blocks << m_notes;
    for (const QString& b : blocks)
        if (!b.isEmpty())
            h += fm.boundingRect(QRect(0, 0, w, 10000), Qt::TextWordWrap, QString(b).remove(QRegularExpression(QStringLiteral("<[^>]*>")))).height() + 6;
    h += int(m_rows.size()) * kRowHeight;
    if (m_switch)
        h += 150;
    return h + kMargin;
}

QSize NcclChannelView::sizeHint() const
{
    return {760, contentHeight()};
}

void NcclChannelView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QFontMetrics fm(font());
    const int w = width() - 2 * kMargin;
    double y = kMargin;
    auto text = [&](const QString& t, bool bold, const QColor& color) {
        if (t.isEmpty())
            return;
        QFont f = font();
        f.setBold(bold);
        p.setFont(f);
        p.setPen(color);
        const QString plain = QString(t).remove(QRegularExpression(QStringLiteral("<[^>]*>")));
        const QRect r = QFontMetrics(f).boundingRect(QRect(0, 0, w, 10000), Qt::TextWordWrap, plain);
        p.drawText(QRectF(kMargin, y, w, r.height()), Qt::TextWordWrap, plain);
        y += r.height() + 6;
        p.setFont(font());
    };
    text(m_headline, true, palette::kInk);
    text(m_protocolLine, false, palette::kMuted);
    for (const QString& n : m_notes)
        text(n, false, palette::kMuted);

    const bool nodes = m_system.nodes > 1;
    for (const Row& r : m_rows) {
        const double cy = y + kRowHeight / 2.0;
        p.setPen(r.color);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRectF(kMargin, y, kLabelWidth, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft, channelList(r.channels));
        p.setFont(font());
        double x = kMargin + kLabelWidth;
        if (nodes && r.layout.nicIn >= 0) {
            nicBox(p, QRectF(x, cy - 12, kNicWidth, 24), r.layout.nicIn, r.color);
            x += kNicWidth;
            arrow(p, {x + 2, cy}, {x + kGpuStep - kGpu / 2.0 - 2, cy}, r.color);
            x += kGpuStep - kGpu / 2.0;
        } else {
            x += kGpu / 2.0;
        }
        const std::vector<int> gpus = drawnGpus(r.layout.gpus);
        const double first = x;
        for (std::size_t i = 0; i < gpus.size(); ++i) {
            const QPointF c(x, cy);
            if (i + 1 < gpus.size())
                arrow(p, {x + kGpu / 2.0 + 1, cy}, {x + kGpuStep - kGpu / 2.0 - 1, cy}, r.color);
            gpuCircle(p, c, gpus[i], r.color);
            x += kGpuStep;
        }
        x -= kGpuStep;
        if (nodes && r.layout.nicOut >= 0) {
            arrow(p, {x + kGpu / 2.0 + 1, cy}, {x + kGpuStep - kGpu / 2.0 - 2, cy}, r.color);
            x += kGpuStep - kGpu / 2.0;
            nicBox(p, QRectF(x, cy - 12, kNicWidth, 24), r.layout.nicOut, r.color);
            x += kNicWidth + 8;
            p.setPen(palette::kMuted);
            p.drawText(QRectF(x, y, std::max(0.0, kMargin + w - x), kRowHeight), Qt::AlignVCenter | Qt::AlignLeft,
                       m_prediction && m_prediction->algorithm == nccl::Algorithm::Tree
                           ? tr("⇅ other nodes on rail %1").arg(r.layout.nicOut)
                           : tr("→ next node, rail %1").arg(r.layout.nicOut));
        } else if (m_prediction && m_prediction->algorithm == nccl::Algorithm::Ring && gpus.size() > 1) {
            // One node: the ring closes from the last GPU back to the first, under the row.
            QPainterPath back;
            back.moveTo(x, cy + kGpu / 2.0);
            back.cubicTo(x, cy + kGpu / 2.0 + 10, first, cy + kGpu / 2.0 + 10, first + 4, cy + kGpu / 2.0 + 3);
            p.setPen(QPen(r.color, 1.5, Qt::DashLine));
            p.drawPath(back);
        }
        y += kRowHeight;
    }

    if (m_switch) {
        // NVLS: the NVSwitch above the node's GPUs; each GPU's link carries its push up and the multicast down.
        const int g = m_system.gpusPerNode;
        const std::vector<int> all = [&] {
            std::vector<int> v(std::size_t(std::max(0, g)));
            for (int i = 0; i < g; ++i)
                v[std::size_t(i)] = i;
            return drawnGpus(v);
        }();
        const double left = kMargin + kLabelWidth, right = left + (double(all.size()) - 1) * kGpuStep;
        const QRectF sw(left - kGpu, y + 6, right - left + 2 * kGpu, 30);
        p.setPen(QPen(palette::kInk, 2));
        p.setBrush(QColor(0xe5, 0xe7, 0xeb));
        p.drawRoundedRect(sw, 6, 6);
        p.setBrush(Qt::NoBrush);
        p.setPen(palette::kInk);
        p.drawText(sw, Qt::AlignCenter, tr("NVSwitch: reduces (multimem.ld_reduce) and multicasts"));
        const double gy = y + 110;
        const QColor up = kChannelColors[0], down = kChannelColors[5];
        for (std::size_t i = 0; i < all.size(); ++i) {
            const double x = left + double(i) * kGpuStep;
            if (all[i] >= 0) {
                arrow(p, {x - 6, gy - kGpu / 2.0 - 2}, {x - 6, sw.bottom() + 2}, up, 2.5);
                arrow(p, {x + 6, sw.bottom() + 2}, {x + 6, gy - kGpu / 2.0 - 2}, down, 2.5);
            }
            gpuCircle(p, {x, gy}, all[i], palette::kInk);
        }
        const double lx = right + kGpu + 16;
        if (m_prediction) {
            const nccl::LinkBytes link = nccl::nvlsBytesPerGpuLink(m_prediction->op, m_bytes, g);
            p.setPen(up);
            p.drawText(QPointF(lx, y + 62), tr("↑ into the switch: %1 per GPU").arg(qs(formatBytes(link.up, m_units))));
            p.setPen(down);
            p.drawText(QPointF(lx, y + 62 + fm.height() + 4), tr("↓ out of the switch: %1 per GPU").arg(qs(formatBytes(link.down, m_units))));
        }
    }
}

} // namespace tw::ui
