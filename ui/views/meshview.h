#pragma once
// Stage 3's device mesh: each node a rounded box ("Node n") holding its GPU cards; a card shows
// the GPU id and its mesh coordinate (dp · pp · tp), its fill colour follows the chosen grouping
// (DP replica, PP stage, TP group, EP group), a band on top marks its TP group. A TP group whose
// members sit on more than one node gets red dashed outlines, dashed links between the nodes and
// a warning line. Coloured by memory, a card's fill follows the share of the GPU's capacity its peak
// takes (green → amber → orange) and a GPU that does not fit gets a red outline and its overflow. Hovering a card highlights its TP, DP and PP peers. Dragging a card onto another
// asks for the two GPUs' coordinates to be swapped (swapRequested); the view changes nothing and
// the card snaps back until the pane hands it the new mesh.

#include "base/units.h"

#include <QColor>
#include <QGraphicsView>
#include <QPen>
#include <QPointF>
#include <QRectF>

#include <cstdint>
#include <span>
#include <vector>

class QGraphicsSimpleTextItem;
class QGraphicsPathItem;
class QGraphicsRectItem;

namespace tw::parallel {
struct Cluster;
struct MeshCoord;
struct ParallelPlan;
struct Group;
} // namespace tw::parallel

namespace tw::ui {

class CardFieldItem;
class GpuCardItem;
class NodeBoxItem;
struct CardStyle;

class MeshView : public QGraphicsView {
    Q_OBJECT
public:
    enum class ColorBy { DpReplica, PpStage, TpGroup, EpGroup, Memory };
    // How much a card says: id + coordinate + stage, id + short coordinate, id only, nothing.
    enum class Detail { Full, Medium, Small, Compact };

    // What a card was drawn with (for tests and for the pane's tooltips).
    struct CardLook {
        QColor fill;            // by the colour mode
        QColor band;            // TP group band
        QPen outline;           // red dashed when its TP group spans nodes; thicker when highlighted
        bool crossesNodes = false; // its TP group has members on another node
        bool highlighted = false;  // a TP/DP/PP peer of the hovered card (or the hovered card)
        bool dimmed = false;       // a card hovering left unrelated
        bool token = false;        // holds the followed token's activations (yellow ring)
        bool overflows = false;    // coloured by memory and its peak exceeds the capacity (red outline)
        QString text;           // the lines drawn, joined by '\n'
    };

    explicit MeshView(QWidget* parent = nullptr);
    ~MeshView() override;

    // Redraws for a cluster and the coordinate of each GPU (mesh[g] for GPU g). `groups` (the
    // CommPlan's) decide group membership and which TP groups cross nodes; without them the
    // groups are read off the coordinates. Items are reused while the cluster's shape is unchanged.
    void setMesh(const parallel::Cluster& cluster, const std::vector<parallel::MeshCoord>& mesh,
                 const parallel::ParallelPlan& degrees, const std::vector<parallel::Group>* groups = nullptr);
    void clear();

    void setColorBy(ColorBy mode);
    // What "Color GPUs by: memory" shows: per GPU the bytes it needs at its peak, the framework reserve
    // included (core's PlanMemory), and one GPU's capacity. Empty clears it (cards then stay grey).
    void setMemory(std::vector<double> peakBytes, double capacityBytes, const DisplayUnits& units = {});
    [[nodiscard]] const std::vector<double>& memoryBytes() const { return m_memory; }
    // The memory colouring's fill for a share of the capacity (> 1: over).
    [[nodiscard]] static QColor memoryFill(double share);
    // The GPUs holding the followed token (the story's live thread): a yellow ring around each card.
    void setTokenGpus(std::vector<int> gpus);
    [[nodiscard]] const std::vector<int>& tokenGpus() const { return m_tokenGpus; }
    [[nodiscard]] ColorBy colorBy() const { return m_colorBy; }

    [[nodiscard]] int gpuCount() const { return int(m_home.size()); }
    [[nodiscard]] Detail detail() const { return m_detail; }
    // A card's centre in viewport coordinates; (-1,-1) for an unknown GPU.
    [[nodiscard]] QPointF gpuCenter(int gpu) const;
    // The GPU whose card is under a viewport position, -1 for none (cards at their home place).
    [[nodiscard]] int gpuAt(QPoint viewportPos) const;
    [[nodiscard]] CardLook cardLook(int gpu) const;
    // Where a card is drawn now, in scene coordinates (away from home while it is dragged).
    [[nodiscard]] QRectF cardSceneRect(int gpu) const;
    [[nodiscard]] int hoveredGpu() const { return m_hovered; }
    // GPUs whose TP group spans nodes, and the warning drawn for them (empty when none).
    [[nodiscard]] const std::vector<int>& crossingGpus() const { return m_crossing; }
    [[nodiscard]] QString warningText() const;
    // The legend's entries as drawn ("dp 0", "dp 1", …, "band: TP group").
    [[nodiscard]] QStringList legendEntries() const { return m_legendEntries; }
    // What hovering a card shows: the GPU, its coordinate, its groups (and its memory when coloured by it).
    [[nodiscard]] QString gpuToolTip(int gpu) const;
    // Shows the hover highlight of a GPU as if the mouse were on it (-1 clears); emits gpuHovered.
    void hoverGpu(int gpu);

signals:
    void swapRequested(int gpuA, int gpuB);
    void gpuHovered(int gpu); // -1 when the mouse leaves the cards
    void gpuClicked(int gpu);

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool viewportEvent(QEvent* event) override;

private:
    void rebuildItems(std::uint64_t nodes, std::uint64_t gpusPerNode);
    void restyle();
    void updateLegend();
    // updateLegend's steps (meshlegend.cpp).
    [[nodiscard]] std::size_t gpusOverCapacity(double& worstOver) const;
    int addLegendRows(qreal width, const QFont& font, const QFont& bold, bool overflows);
    qreal addWarningLine(qreal width, const QFont& bold, qreal lineH, int line, std::size_t overGpus, double worstOver);
    void addCrossingLinks();
    void fit();
    void endDrag();

    // Per GPU: its coordinate and the group ids it belongs to.
    struct Gpu {
        std::uint32_t dp = 0, pp = 0, tp = 0;
        int node = 0;
        int tpGroup = -1, dpGroup = -1, ppGroup = -1, epGroup = -1;
    };
    std::vector<Gpu> m_gpus;
    // setMesh's and restyle's steps (meshview.cpp).
    void buildGroups(const std::vector<parallel::Group>* groups);
    [[nodiscard]] QStringList cardLines(std::size_t g, bool known, double used, double share, bool overCapacity) const;
    void updateStatusLine(const Gpu* hovered);
    // Groups of GPUs with their members in one array (98,304 GPUs make ~100,000 groups, most of one GPU).
    struct GroupTable {
        std::vector<int> members;
        std::vector<std::size_t> start{0}; // group i is members[start[i], start[i + 1])
        [[nodiscard]] std::size_t size() const { return start.size() - 1; }
        [[nodiscard]] std::span<const int> operator[](std::size_t i) const
        {
            return {members.data() + start[i], start[i + 1] - start[i]};
        }
        void clear()
        {
            members.clear();
            start.assign(1, 0);
        }
    };
    GroupTable m_tpGroups, m_dpGroups, m_ppGroups, m_epGroups;
    std::vector<bool> m_tpGroupCrosses;
    std::uint64_t m_dpDegree = 1, m_ppDegree = 1, m_tpDegree = 1, m_epDegree = 1;

    // Per GPU: how its card is drawn and where (scene coordinates); per node: its box and whether a TP
    // group crosses it. The items read these.
    std::vector<CardStyle> m_styles;
    std::vector<QRectF> m_home;
    std::vector<QRectF> m_nodeRects;
    std::vector<char> m_nodeWarn;
    // Up to kMaxCardItems GPUs, a scene item per card and node box (the cards can be dragged); beyond,
    // none and m_field paints them all (a GPU swap is made in a smaller mesh).
    static constexpr std::size_t kMaxCardItems = 16384;
    std::vector<GpuCardItem*> m_cards;
    std::vector<NodeBoxItem*> m_nodes;
    CardFieldItem* m_field = nullptr;
    std::vector<QGraphicsItem*> m_decor; // legend, warning, links: rebuilt on every setMesh
    QGraphicsSimpleTextItem* m_status = nullptr;
    QRectF m_contentRect;
    qreal m_textWidth = 400; // legend and status line width (scene units)
    std::uint64_t m_shapeNodes = 0, m_shapeGpusPerNode = 0;
    Detail m_detail = Detail::Full;
    ColorBy m_colorBy = ColorBy::DpReplica;
    std::vector<int> m_crossing;
    std::vector<int> m_tokenGpus; // sorted
    std::vector<double> m_memory; // per GPU, with the reserve
    double m_capacity = 0;
    DisplayUnits m_units;
    QStringList m_legendEntries;
    QString m_warning;

    int m_hovered = -1;
    int m_pressed = -1;   // card under the mouse press
    int m_dropTarget = -1;
    bool m_dragging = false;
    QPoint m_pressPos;
    QPointF m_grabOffset;
};

} // namespace tw::ui
