#pragma once
// Stage 5's geometry, without a widget: where WireView draws each server box, node and link line, in
// world units (one GPU column is 100 wide). Input: the fabric, the size of the drawing area (the grid
// of servers follows its shape), the compact server drawn open and whether the drawing is fitted
// (then a single row of up to 8 servers stretches or shrinks its vertical gaps to fill the area).
// Output: node and server rectangles, and one segment per drawn link direction (the NIC links of a
// compact server to one outside node merged into one). The view transform, hover and painting stay
// in WireView. Large fabrics draw groups of nodes collapsed (pods, server groups, core planes:
// wiregroups.h) above the rest; one of them can be drawn open.

#include "wiregroups.h"

#include "fabric/topology.h"

#include <QPointF>
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <vector>

namespace tw::ui {

class WireLayout {
public:
    // Beyond this many servers, servers are drawn compact (one box with its GPU count).
    static constexpr int kMaxDetailedServers = 32;

    struct NodeGeom {
        QRectF rect;          // world; null when not placed (inside a compact server)
        bool bar = false;     // a wide bar (NVSwitch): links attach straight above/below their other end
        QStringList labels;   // candidates, longest first
        bool dark = false;    // GPU or NVSwitch (drawn dark)
    };
    struct ServerGeom {
        QRectF rect;
        bool compact = false;
        QStringList titles;   // candidates, longest first
        QString subtitle;     // the GPU range
        bool highlighted = false; // set by the view (a highlighted GPU inside)
    };
    struct Segment {
        network::LinkId rep = 0;
        std::vector<network::LinkId> members; // every link direction this line stands for (rep first)
        QPointF a, b;                         // world anchors on the two ends' outlines
        double bandwidth = 0;                 // B/s (Σ of the members)
        double width = 1;                     // px at full line scale (capacityWidth)
        std::uint32_t hash = 0;               // packet phase offset
        bool between = false;                 // joins two servers, a server and a switch or two switches (drawn under the boxes)
    };

    struct GroupGeom {
        QRectF rect;          // the collapsed box; for the open group the frame around its parts
        bool open = false;
        bool highlighted = false; // set by the view (a highlighted GPU inside)
    };

    std::vector<NodeGeom> nodes;     // per NodeId
    std::vector<ServerGeom> servers; // per server
    std::vector<Segment> segments;
    std::vector<int> segmentOf;      // per LinkId: its segment, -1 when not drawn
    QRectF world;                    // everything, with a 10-unit margin; empty without a fabric
    int serverColumns = 1, serverRows = 1;
    int openServer = -1;             // the compact server drawn in full (-1 when none or not compact)
    double titleH = 34;              // a detailed server's title band
    double gapScale = 1;             // vertical gaps × this
    // Which nodes are drawn collapsed (empty for small fabrics): one per fabric, shared by its layouts.
    std::shared_ptr<const WireGroups> groupingShared = std::make_shared<const WireGroups>();
    [[nodiscard]] const WireGroups& grouping() const { return *groupingShared; }
    std::vector<GroupGeom> groups;   // per grouping().groups
    int openGroup = -1;              // the innermost group drawn open (-1: none); its pod, if any, is open too
    bool compactServers = false;     // the servers shown are drawn compact
    QSizeF area;                     // the drawing area it was computed for
    bool fitted = false;             // computed for a fitted view

    // Lays out `topology` for a drawing area of `area` (widget px; only its shape and size matter).
    // `openGroup`: the pod or server group drawn open (-1 or one that cannot open: none); a server group
    // inside a pod opens its pod too. `grouping`: groupNodes(topology) when already known (it reads
    // every node and link: 10 ms at 98,304 GPUs), else computed here. `recycle`: a layout this one
    // replaces, whose arrays it reuses (left empty).
    [[nodiscard]] static WireLayout compute(const network::Topology& topology, QSizeF area, int openServer, bool fitted,
                                            int openGroup = -1, std::shared_ptr<const WireGroups> grouping = nullptr,
                                            WireLayout* recycle = nullptr);

    [[nodiscard]] bool compact() const { return compactServers; }
    // The collapsed group a node is drawn in (-1: drawn on its own or inside a compact server).
    [[nodiscard]] int collapsedGroupOf(network::NodeId node) const
    {
        const int g = grouping().of(node);
        if (g < 0)
            return -1;
        if (!groupOpen(g))
            return g;
        const int sub = grouping().subOfNode(node); // a server group inside the open pod
        return sub >= 0 && !groupOpen(sub) ? sub : -1;
    }
    // Drawn open: the open group, or the pod around an open server group.
    [[nodiscard]] bool groupOpen(int g) const { return g >= 0 && (g == openGroup || g == grouping().parentOf(openGroup)); }
    // Drawn as its own box (placed, and not inside a compact server).
    [[nodiscard]] bool nodeDrawn(const network::Topology& topology, network::NodeId node) const;

    // Line width for a link's capacity: 1 px at 1 GB/s … 6 px at 500 GB/s, log scale.
    [[nodiscard]] static double capacityWidth(double bandwidth);
};

} // namespace tw::ui
