// ScheduleView's playback: the buffers' state replayed step by step, the animation of one step's
// messages (arrows, labels, packets from the item pools) and the look of every cell.
#include "scheduleview.h"

#include "scheduleitems_p.h"

#include <QGraphicsScene>
#include <QTimer>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

namespace tw::ui {

using collective::Algorithm;
using collective::Op;
using collective::Transfer;

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
            l->m_full.clear();
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
        l->m_full = text;
        l->m_short = (m.reduce ? QStringLiteral("+ ") : QString())
                     + (m.transfers == 1 ? chunkLabel(m.chunk) : tr("%1 blocks").arg(m.transfers));
        l->m_dir = dir;
        l->m_px = m_n <= 8 ? 13 : 11;
        l->setPos(mid);
        l->setVisible(true);
    }
    arrangeLabels();
    placePackets();
    updateCaption();
    emit transfersChanged();
}

// The arrows' labels are drawn at a fixed pixel size while the drawing scales with the view: at the size
// the view has now, the full labels, else the chunks alone, else none, whichever first covers neither
// another label nor a rank card. Rank names outside a small ring show when the cards are too small
// to carry their own.
void ScheduleView::arrangeLabels()
{
    const qreal scale = transform().m11();
    const bool titled = !m_ranks.empty() && m_ranks.front()->m_band * scale >= 9;
    std::vector<QRectF> taken = rankRects();
    for (ScheduleLabelItem* name : m_rankNames) {
        // Each name only where it covers no card and no other name (a squeezed ring).
        const QRectF box = name->viewRect(this).adjusted(1, 1, -1, -1);
        const bool free = std::none_of(taken.begin(), taken.end(), [&](const QRectF& r) { return box.intersects(r); });
        name->setVisible((m_n > 8 || !titled) && free);
        if (name->isVisible())
            taken.push_back(box);
    }
    std::vector<ScheduleLabelItem*> shown; // the step's labels (a label without text is not in use)
    for (ScheduleLabelItem* l : m_labels)
        if (!l->m_full.isEmpty()) {
            l->setVisible(true);
            shown.push_back(l);
        }
    auto fits = [&](bool full) {
        std::vector<QRectF> boxes = taken;
        for (ScheduleLabelItem* l : shown) {
            l->setText(full ? l->m_full : l->m_short, l->m_px, false, l->m_dir, true);
            const QRectF box = l->viewRect(this).adjusted(1, 1, -1, -1);
            if (!viewport()->rect().contains(box.toAlignedRect()))
                return false;
            for (const QRectF& other : boxes)
                if (box.intersects(other))
                    return false;
            boxes.push_back(box);
        }
        return true;
    };
    if (fits(true))
        m_labelMode = ArrowLabels::Full;
    else if (fits(false))
        m_labelMode = ArrowLabels::Chunks;
    else {
        m_labelMode = shown.empty() ? ArrowLabels::Full : ArrowLabels::None;
        for (ScheduleLabelItem* l : shown)
            l->setVisible(false);
    }
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

} // namespace tw::ui
