#pragma once
// Stage 4's schedule player: one collective call (a collective::ScheduleSpec) executed step by step.
// Ranks sit on a ring (ring, pairwise, bruck, recursive doubling/halving, Rabenseifner, naive), on a
// tree with the root at the top (binary and double binary tree, binomial, flat, chain,
// reduce-broadcast; the tree is read off the schedule's chunk-0 transfers) or in node boxes
// (hierarchical). Each rank shows its buffer as a row (or a small grid) of cells coloured by whose
// data they hold; a partial sum is drawn as stacked stripes of its contributors' colours. The
// state is replayed from core's step generator only — which chunk goes from which rank to which,
// added or copied — never from a formula of the view's own. The step's transfers are arrows
// (solid = reduce, the receiver adds; dashed = copy, it overwrites); play() moves a packet along
// each arrow, one schedule step per 1/speed seconds. Above kMaxCellRanks ranks the buffers are
// not drawn (aggregated: arrows and counts only).

#include "base/units.h"
#include "collective/schedule.h"

#include <QElapsedTimer>
#include <QGraphicsView>
#include <QPointF>
#include <QSizeF>
#include <QString>

#include <cstdint>
#include <vector>

class QTimer;

namespace tw::ui {

class ScheduleRankItem;
class ScheduleArrowItem;
class SchedulePacketItem;
class ScheduleLabelItem;
class ScheduleNodeItem;

class ScheduleView : public QGraphicsView {
    Q_OBJECT
public:
    enum class LayoutKind { Ring, Tree, Grid };
    // Bit r set: rank r's data is in the cell (a sum when more than one bit is set).
    using Origins = std::uint64_t;
    static constexpr int kMaxCellRanks = 64;

    // How one buffer position of a rank is drawn (tests and tooltips).
    enum class CellState {
        Empty,   // the rank holds nothing there yet
        Held,    // holds data (one origin, or a partial/complete sum)
        Pending, // All-to-All: its own block for another rank, not delivered yet
        Sent,    // All-to-All: its own block for another rank, already delivered (drawn hollow)
    };
    struct CellLook {
        Origins origins = 0;
        CellState state = CellState::Empty;
        bool complete = false; // a reduction cell holding every rank's contribution
    };

    // Wall-clock cost of the animation: the per-frame update (packet moves) and the viewport paint.
    struct FrameStats {
        int frames = 0, paints = 0;
        double meanTickMs = 0, maxTickMs = 0;
        double meanPaintMs = 0, maxPaintMs = 0;
    };

    explicit ScheduleView(QWidget* parent = nullptr);
    ~ScheduleView() override;

    // Shows a new call at step 0 (stops playing). An invalid spec shows core's error instead.
    void setSpec(const collective::ScheduleSpec& spec);
    [[nodiscard]] const collective::ScheduleSpec& spec() const { return m_spec; }
    [[nodiscard]] bool hasSchedule() const { return m_valid; }
    [[nodiscard]] QString errorText() const { return m_error; }

    [[nodiscard]] int currentStep() const { return int(m_applied); } // steps applied, 0 … stepCount()
    [[nodiscard]] int stepCount() const { return int(m_stepCount); }
    // The phase name of the step whose arrows are shown ("reduce-scatter", …; empty at step 0).
    [[nodiscard]] QString phase() const;
    [[nodiscard]] LayoutKind layoutKind() const { return m_layout; }
    [[nodiscard]] bool aggregated() const { return m_aggregated; } // > kMaxCellRanks: no cells
    [[nodiscard]] int rankCount() const { return int(m_n); }

    // Origins in chunk `chunk` (an index of the schedule's chunk table) of `rank` after the current
    // step; for a chunk made of several pieces (Rabenseifner's halves, hierarchical slices) the
    // origins every piece holds. 0 when the rank holds nothing there, or aggregated.
    [[nodiscard]] Origins cellOrigins(int rank, std::uint32_t chunk) const;
    // The elementary pieces the buffer is cut into (the finest split of the chunk table; for ring,
    // trees, chains, binomial, naive and All-to-All a piece is a chunk) and their origins.
    [[nodiscard]] int pieceCount() const { return int(m_pieces); }
    [[nodiscard]] Origins pieceOrigins(int rank, int piece) const;
    // What buffer position `position` of a rank shows (0 … cellsPerRank()−1). All-to-All shows N
    // positions: position j holds the block from rank j once it arrived, before that the rank's
    // own block for rank j.
    [[nodiscard]] int cellsPerRank() const;
    [[nodiscard]] CellLook cellLook(int rank, int position) const;
    // The transfers drawn as arrows: the step in flight while playing, else the step just applied
    // (none at step 0).
    [[nodiscard]] const std::vector<collective::Transfer>& transfersShown() const { return m_shown; }
    // 0-based schedule step of the arrows (-1 for none).
    [[nodiscard]] int shownStep() const { return m_shownStep; }
    // "c2" or, for All-to-All, "0→2" (the block rank 0 sends to rank 2).
    [[nodiscard]] QString chunkLabel(std::uint32_t chunk) const;
    // A rank's centre in viewport coordinates; (-1,-1) for an unknown rank.
    [[nodiscard]] QPointF rankCenter(int rank) const;
    // Parent of each rank in the drawn tree (-1 for the root; empty unless layoutKind() == Tree).
    [[nodiscard]] const std::vector<int>& treeParents() const { return m_parent; }
    [[nodiscard]] int arrowLabelsShown() const;
    // How the arrows' labels fit the drawing at its present size: in full ("+ c5 · 31.11 MB"), by chunk
    // only ("+ c5", the bytes in the caption and the step table), or not at all (they would cover each
    // other or the ranks).
    enum class ArrowLabels { Full, Chunks, None };
    [[nodiscard]] ArrowLabels arrowLabelMode() const { return m_labelMode; }
    // Viewport rectangles of what is drawn at a fixed pixel size (the arrows' labels, the rank names
    // outside a ring) and of the rank cards: tests check that none covers another.
    [[nodiscard]] std::vector<QRectF> labelRects() const;
    [[nodiscard]] std::vector<QRectF> rankRects() const;
    [[nodiscard]] QString caption() const { return m_caption; }
    [[nodiscard]] QStringList legendEntries() const { return m_legend; }
    // Byte sizes of the caption and the arrows' labels in the viewer's units.
    void setDisplayUnits(DisplayUnits units);
    [[nodiscard]] DisplayUnits displayUnits() const { return m_units; }

    [[nodiscard]] bool isPlaying() const { return m_playing; }
    [[nodiscard]] double speed() const { return m_speed; }
    // How far the packets of the step in flight have travelled (0 … 1); -1 when none is in flight.
    [[nodiscard]] double packetProgress() const { return m_inFlight ? m_progress : -1.0; }
    // Test hook: one animation frame as if `seconds` had passed (the timer calls the same code).
    void advanceAnimation(double seconds);
    [[nodiscard]] FrameStats frameStats() const { return m_stats; }
    void resetFrameStats() { m_stats = {}; }

public slots:
    void stepForward();
    void stepBack();       // replays the schedule from the start to the step before
    void setStep(int step);
    void play();           // from the current step; from the start when at the end
    void pause();
    void setSpeed(double stepsPerSecond);

signals:
    void stepChanged(int step, int stepCount);
    void transfersChanged(); // transfersShown() changed
    void playingChanged(bool playing);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void clearScene();
    void buildModel();
    void buildLayout();
    void buildItems();
    void placeRing(QSizeF card); // buildItems' layouts (scheduleview.cpp)
    void placeTree(QSizeF card);
    void placeGrid(QSizeF card);
    void resetState();
    void replayTo(std::uint64_t step);
    bool fetchNext(std::vector<collective::Transfer>& out);
    void apply(const std::vector<collective::Transfer>& step);
    void showTransfers(int scheduleStep, bool inFlight);
    void restyleRanks();
    void placePackets();
    void arrangeLabels(); // after a step is shown and after every resize
    void updateCaption();
    void fit();
    // Where the legend entries go in a viewport `width` pixels wide; returns the number of lines.
    int legendLayout(int width, std::vector<qreal>* xs, std::vector<int>* rowOf) const;
    [[nodiscard]] qreal legendHeight(int width) const;
    void onTick();
    void finishFlight();
    [[nodiscard]] Origins payloadOf(const collective::Transfer& t) const;

    collective::ScheduleSpec m_spec;
    collective::Schedule m_sched;
    bool m_valid = false;
    QString m_error;
    std::uint64_t m_n = 0, m_stepCount = 0;
    std::uint64_t m_genPos = 0;  // steps the generator has handed out since its reset
    std::uint64_t m_applied = 0; // steps applied to the state
    bool m_aggregated = false, m_allToAll = false, m_reduction = false, m_sendsInput = false;
    LayoutKind m_layout = LayoutKind::Ring;

    // Cell model (≤ kMaxCellRanks ranks): m_state[rank · pieces + piece].
    std::uint32_t m_pieces = 0;
    struct PieceRun {
        std::uint32_t first = 0, count = 0; // cyclic run of pieces
    };
    std::vector<PieceRun> m_chunkPieces;      // per chunk of the table
    std::vector<Origins> m_state, m_initial;
    std::vector<std::uint32_t> m_blockChunk;  // All-to-All: chunk of block (origin · N + destination)
    std::vector<collective::Chunk> m_chunks;  // the chunk table (≤ kMaxCellRanks ranks)
    Origins m_all = 0;

    // Layout.
    std::vector<int> m_parent;
    std::vector<QPointF> m_center; // scene coordinates
    QRectF m_contentRect;

    // Items (reused across steps; rebuilt only by setSpec).
    std::vector<ScheduleRankItem*> m_ranks;
    std::vector<ScheduleNodeItem*> m_nodes;
    std::vector<ScheduleArrowItem*> m_arrows;      // pool
    std::vector<ScheduleLabelItem*> m_labels;      // pool
    std::vector<ScheduleLabelItem*> m_rankNames;   // rank names outside a ring
    ArrowLabels m_labelMode = ArrowLabels::Full;
    std::vector<SchedulePacketItem*> m_packets;    // pool

    std::vector<collective::Transfer> m_shown;
    int m_shownStep = -1;
    QString m_caption;
    QStringList m_legend;
    double m_cellPx = 10; // drawn cell width in scene units
    DisplayUnits m_units;

    // Animation.
    QTimer* m_timer = nullptr;
    QElapsedTimer m_clock;
    bool m_playing = false, m_inFlight = false;
    double m_progress = 0, m_speed = 1.0;
    FrameStats m_stats;
};

} // namespace tw::ui
