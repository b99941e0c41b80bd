#pragma once
// Stage 5's static drawing (WireView caches it as images while the view stays put): server boxes with
// their titles, nodes with their labels (one label form per kind of node, the longest that fits the
// kind's smallest box), and the legend strip; plus the colours and fonts the moving layer shares.

#include "wirelayout.h"

#include "fabric/topology.h"

#include <QColor>
#include <QFont>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <optional>
#include <vector>

class QPainter;

namespace tw::ui {

// World → widget: screen = world · scale + offset; boxes outside `view` are skipped.
struct WireViewport {
    double scale = 1;
    QPointF offset;
    QRectF view;
    [[nodiscard]] QRectF toScreen(const QRectF& world) const;
};

inline const QColor kWireTokenGlow{0xF0, 0xE4, 0x42}; // the followed token's links (palette yellow)

// Idle light slate → slate → near-black (palette::kLoad*) for a utilization in [0, 1]; any traffic at all is visibly tinted.
[[nodiscard]] QColor loadColor(double utilization);
// The application font at a pixel size (at least 6).
[[nodiscard]] QFont pixelFont(double px, bool bold);

// Server boxes (compact ones with their GPU range) and their titles; `openServer` is outlined.
void paintServerBoxes(QPainter& p, const WireLayout& geo, const network::Topology& t, const WireViewport& vp,
                      int openServer);
// Collapsed groups (wiregroups.h): the outlines, titles and GPU counts of the pods and server groups
// (their load fill is the moving layer's), the core planes as switch boxes, the open group's frame.
void paintGroupBoxes(QPainter& p, const WireLayout& geo, const WireViewport& vp);
// Node boxes and labels; the GPUs in `highlightedGpus` (ascending) yellow.
void paintNodeBoxes(QPainter& p, const WireLayout& geo, const network::Topology& t, const WireViewport& vp,
                    const std::vector<int>& highlightedGpus);
// The strip at the bottom: packet colours by strategy, the load colour ramp, the followed token's glow
// (with `token` its name; nullopt when no token is followed), what a line's width means.
void paintWireLegend(QPainter& p, const QRectF& strip, const std::optional<QString>& token);

} // namespace tw::ui
