#pragma once
// Stage 5's picture: the fabric under the cluster and one simulated training step on it. Nodes as
// boxes (servers with their GPUs, PCIe switches, root complex, host memory, NVSwitch and NICs inside;
// leaf and spine switches above), links as lines whose width follows capacity and whose colour
// follows the load at the current time of the step; packets travel along the links that carry
// traffic at that time, coloured by strategy (DP, PP, TP, EP), their density proportional to the
// strategy's rate on the link. The two directions of a link pair are drawn side by side.
//
// Plain QWidget painting (no QGraphicsScene): a frame is one pass over the visible links and
// packets, so the animation holds 60 fps with 64 GPUs. Zoom (wheel, +/−) around the cursor and pan
// (drag); fitToView() frames everything. Beyond kMaxDetailedServers servers, servers are drawn
// compact (one box with its GPU count, its NIC links merged into one line per leaf); double-clicking
// a compact server opens it (drawn in full in place of its box); openServer(-1) closes it. Larger
// fabrics collapse groups (wiregroups.h): a three-tier fabric's pods, or the servers under one set of
// leaves beyond 128 servers, each one box with its GPU count, filled with the load of the network links
// inside it; double-clicking a box opens that group (its parts drawn under the boxes, framed),
// double-clicking its frame (or Esc) closes it.
//
// The time is set from outside (the pane's play/scrub controls). Hovering a link emits linkHovered
// and shows a tooltip (payload and wire bytes, utilization over the step, the rate now, the
// collectives using it when the pane has supplied them through setLinkCallers).
//
// The parts: WireLayout (wirelayout.h) places everything in world units without a widget; the rates
// come from network::LinkRateLookup (network/simresults.h); wiretooltips.h writes the tooltips and
// wirepaint.h draws the static layers (boxes, labels, legend). This class holds the view transform,
// hover and drag state, draws the moving layer (lines, packets) and handles input.

#include "wirelayout.h"
#include "wiretooltips.h"

#include "base/units.h"
#include "network/linkload.h"
#include "network/simresults.h"
#include "network/simulate.h"
#include "fabric/topology.h"

#include <QColor>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QPainter;

namespace tw::ui {

struct WireViewport;

class WireView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxDetailedServers = WireLayout::kMaxDetailedServers;

    explicit WireView(QWidget* parent = nullptr);
    ~WireView() override;

    // The fabric, the step's link loads (payload by strategy, wire bytes; may be null) and the
    // simulated step (may be null: links are then coloured by their share of the busiest link's
    // bytes, and no packets move). Keeps zoom and pan while the topology's shape is unchanged,
    // otherwise fits the view. `groups`: groupNodes(*topology) when the caller has it (computed off the
    // GUI thread), else computed here once per topology. `layout`: the fabric's layout computed ahead
    // (off the GUI thread, with `groups`), taken when it was computed for what the view then draws (its
    // drawingArea, fitted, nothing open), else ignored.
    void setNetwork(std::shared_ptr<const network::Topology> topology,
                    std::shared_ptr<const network::LinkLoads> loads,
                    std::shared_ptr<const network::StepSimulation> simulation,
                    std::shared_ptr<const WireGroups> groups = nullptr, std::shared_ptr<WireLayout> layout = nullptr);
    // The drawing area a layout is computed for (the widget less its margins and legend).
    [[nodiscard]] QSizeF drawingArea() const { return contentArea().size(); }
    void clear();
    [[nodiscard]] const network::Topology* topology() const { return m_topology.get(); }

    // The collectives using a link, for its tooltip ("DP AllReduce of the gradients, 2.3 GB"), asked for
    // when a tooltip shows (not for every link of a fabric at each new step); empty: none known.
    void setLinkCallers(LinkCallers callers);

    // The time within the simulated step, s (clamped to [0, step time]); repaints.
    void setTime(double seconds);
    [[nodiscard]] double time() const { return m_time; }

    // The GPUs to emphasise (the stage 3 token's GPUs, or a hovered group); empty for none.
    void setHighlightedGpus(std::vector<int> gpus);
    [[nodiscard]] const std::vector<int>& highlightedGpus() const { return m_highlighted; }

    // The story's live thread: the links the followed token's row crosses (with its bytes per step on
    // each) glow yellow under their load colour; the links only a gradient reduction it feeds crosses
    // get a dashed dark outline. `name` ("token #12 “·che”") is used in the legend and the tooltips.
    void setTracedLinks(std::vector<std::pair<network::LinkId, double>> rowLinks,
                        std::vector<network::LinkId> gradientLinks, QString name);
    void clearTracedLinks();
    [[nodiscard]] const std::vector<network::LinkId>& tracedLinks() const { return m_traced; }          // ascending
    [[nodiscard]] const std::vector<network::LinkId>& tracedGradientLinks() const { return m_tracedGradient; } // ascending, not in tracedLinks
    [[nodiscard]] bool isTraced(network::LinkId link) const;
    [[nodiscard]] double tracedBytes(network::LinkId link) const; // its row's bytes per step on the link

    // Byte sizes of the tooltips in the viewer's units.
    void setDisplayUnits(DisplayUnits units);

    // Zoom factor (1 = fitted); zoom about the widget centre.
    void setZoom(double zoom);
    [[nodiscard]] double zoom() const;
    void fitToView();
    // The compact server drawn open (-1: none).
    void openServer(int server);
    [[nodiscard]] int openedServer() const { return m_openServer; }
    [[nodiscard]] bool compactServers() const;
    // The pod or server group drawn open (-1: none; see wiregroups.h); groups drawn collapsed.
    void openGroup(int group);
    [[nodiscard]] int openedGroup() const { return m_openGroup; }
    [[nodiscard]] int groupCount() const;
    [[nodiscard]] const WireGroups::Group* group(int group) const;
    [[nodiscard]] std::optional<int> groupAt(QPoint pos) const;     // a collapsed box, or the open group's frame
    [[nodiscard]] std::optional<QRectF> groupRect(int group) const; // widget coordinates (the frame when open)
    // A collapsed group's load: Σ rate now / Σ bandwidth of the network links inside it; without a
    // simulation, its payload over the busiest group's.
    [[nodiscard]] double drawnGroupUtilization(int group) const;
    [[nodiscard]] QColor drawnGroupColor(int group) const;
    [[nodiscard]] QString groupToolTip(int group) const;
    [[nodiscard]] const WireLayout& layout() const; // the geometry drawn now (world units)

    // Geometry and what the last paint drew, for tests and the pane (widget coordinates).
    [[nodiscard]] std::optional<QPointF> nodeCenter(network::NodeId node) const; // nullopt: not drawn
    [[nodiscard]] std::optional<QPointF> linkMidpoint(network::LinkId link) const; // on the drawn direction's line
    [[nodiscard]] std::optional<network::LinkId> linkAt(QPoint pos) const;          // nearest link within a few px
    [[nodiscard]] std::optional<int> serverAt(QPoint pos) const;
    // A server's box (compact or detailed); nullopt for an unknown server.
    [[nodiscard]] std::optional<QRectF> serverRect(int server) const;
    // How a link direction is drawn: its own line, merged into one line with others (compact server's
    // NIC links to one leaf), or not at all (inside a compact server).
    [[nodiscard]] std::vector<network::LinkId> drawnWith(network::LinkId link) const;
    // The utilization drawn for a link direction at the current time: rate now / bandwidth, from the
    // simulation's rate samples (0 when idle or without a simulation); for a merged line (a compact
    // server's NIC links to one leaf) Σ rate / Σ bandwidth of its links.
    [[nodiscard]] double drawnUtilization(network::LinkId link) const;
    [[nodiscard]] QColor drawnColor(network::LinkId link) const;
    // Packets drawn by the last paint, in total and per strategy.
    [[nodiscard]] int packetsDrawn() const;
    [[nodiscard]] int packetsDrawn(parallel::Strategy strategy) const;
    [[nodiscard]] QString linkToolTip(network::LinkId link) const;
    [[nodiscard]] std::optional<network::LinkId> hoveredLink() const;
    // Hovering a drawn GPU shows what it does at the current time (wiregpuhover.h): the pane supplies the
    // text for (GPU, time); without it, or off the GPUs, the links' and groups' tooltips.
    void setGpuToolTips(std::function<QString(int gpu, double time)> text);
    [[nodiscard]] std::optional<int> gpuAt(QPoint pos) const; // a GPU drawn (not inside a compact server)
    [[nodiscard]] QString gpuToolTip(int gpu) const;          // at the current time; empty without the text

signals:
    void linkHovered(int link); // -1 when the pointer leaves the links
    void serverOpened(int server);
    void groupOpened(int group); // -1 when closed

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;
    bool event(QEvent* event) override; // tooltips

private:
    struct ViewState; // the geometry, the view transform, hover and drag, what the last paint drew, caches
    struct Frame;     // what one paint computes once: the lines' places, loads, trace marks, packet streams
    void measureLines(Frame& frame, const QRectF& view) const;
    [[nodiscard]] QColor lineColor(const Frame& frame, std::size_t line) const;
    void drawLine(QPainter& p, const Frame& frame, std::size_t line) const;
    void drawLines(QPainter& p, const Frame& frame, bool between) const;
    void planPackets(Frame& frame) const;
    void drawPackets(QPainter& p, Frame& frame, bool between);
    void paintCollapsedGroups(QPainter& p, const QRectF& view) const;
    void refreshStaticLayers();
    void rebuildLayout();
    void fitTransform();
    void updateHover(QPoint pos);
    void zoomAbout(QPointF anchor, double factor);
    [[nodiscard]] network::LinkRates segmentRates(int segment) const;
    [[nodiscard]] int segmentAt(QPointF pos) const;
    [[nodiscard]] QPointF toScreen(QPointF world) const;
    [[nodiscard]] QPointF toWorld(QPointF screen) const;
    [[nodiscard]] QRectF contentArea() const;
    void zoomOnto(const QRectF& r, double width, double height);
    [[nodiscard]] WireViewport viewport() const; // the current transform and visible area
    std::unique_ptr<ViewState> m_state;
    std::shared_ptr<const network::Topology> m_topology;
    std::shared_ptr<const network::LinkLoads> m_loads;
    std::shared_ptr<const network::StepSimulation> m_simulation;
    std::shared_ptr<const WireGroups> m_groups; // of m_topology (null until the first layout needs it)
    std::shared_ptr<WireLayout> m_prepared;     // a layout computed ahead, for the next layout (setNetwork)
    LinkCallers m_callers;
    std::vector<int> m_highlighted;
    std::vector<network::LinkId> m_traced, m_tracedGradient;
    std::vector<double> m_tracedBytes;
    QString m_traceName;
    std::function<QString(int, double)> m_gpuToolTips;
    DisplayUnits m_units;
    double m_time = 0;
    int m_openServer = -1;
    int m_openGroup = -1;
};

} // namespace tw::ui
