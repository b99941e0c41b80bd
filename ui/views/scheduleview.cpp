#include "scheduleview.h"

#include "scheduleitems_p.h"

#include <QGraphicsScene>
#include <QResizeEvent>
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
    m_rankNames.clear();
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

// Ranks on an ellipse about as wide as a projector's 16:9 picture, at equal arc lengths from the top,
// clockwise; neighbours ~1.3 card diagonals apart (room for the arrow between).
void ScheduleView::placeRing(QSizeF card)
{
    const std::uint64_t n = m_n;
    const qreal diag = std::hypot(card.width(), card.height());
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
}

// Ranks of a tree schedule: a chain as a serpentine, a flat star as rows under the root, else a tidy tree.
void ScheduleView::placeTree(QSizeF card)
{
    const std::uint64_t n = m_n;
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
}

// One box per node, its ranks in a row (or two), the boxes in snake order.
void ScheduleView::placeGrid(QSizeF card)
{
    QGraphicsScene* s = scene();
    const std::uint64_t n = m_n;
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

// The scene: the rank cards placed by the layout (ring, tree or node grid), rank numbers outside a large
// ring, and the content's bounds.
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
    if (m_layout == LayoutKind::Ring)
        placeRing(card);
    else if (m_layout == LayoutKind::Tree)
        placeTree(card);
    else
        placeGrid(card);

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
    // Rank names outside the ring: numbers on a large ring (every k-th above 64), "rank r" on a small one
    // whose cards are drawn too small to carry their titles (arrangeLabels shows them then).
    if (m_layout == LayoutKind::Ring && n >= 2) {
        const std::uint64_t every = n <= 64 ? 1 : (n + 63) / 64;
        for (std::uint64_t r = 0; r < n; r += every) {
            auto* label = new ScheduleLabelItem;
            const QPointF c = m_center[r];
            const qreal len = std::hypot(c.x(), c.y());
            const QPointF dir = len > 1e-9 ? c / len : QPointF(0, -1);
            label->setText(n <= 8 ? tr("rank %1").arg(r) : QString::number(r), n <= 32 ? 13 : 11, true, dir, false);
            label->setPos(edgePoint(m_ranks[r]->m_rect, dir, 2));
            label->setVisible(n > 8);
            s->addItem(label);
            m_rankNames.push_back(label);
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

std::vector<QRectF> ScheduleView::labelRects() const
{
    std::vector<QRectF> out;
    for (const std::vector<ScheduleLabelItem*>* items : {&m_labels, &m_rankNames})
        for (const ScheduleLabelItem* l : *items)
            if (l->isVisible())
                out.push_back(l->viewRect(this));
    return out;
}

std::vector<QRectF> ScheduleView::rankRects() const
{
    std::vector<QRectF> out;
    out.reserve(m_ranks.size());
    for (const ScheduleRankItem* r : m_ranks)
        out.push_back(mapFromScene(r->m_rect).boundingRect());
    return out;
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
        if (m_labelMode == ArrowLabels::None)
            line += tr(" · sizes in the table below");
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
    if (m_valid) {
        arrangeLabels();
        updateCaption();
    }
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
