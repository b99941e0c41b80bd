#pragma once
// Private to WireView (wireview.cpp paints, wireviewinput.cpp takes the mouse and keys and finds what is
// under a point): the view's state — the world geometry, the view transform, hover and drag, what the
// last frame drew and its cached layers.

#include "wireview.h"

#include "network/simresults.h"

#include <QImage>
#include <QPointF>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tw::ui {

// A segment's drawn line in widget coordinates.
struct ScreenLine {
    QPointF p, q;
    double width = 1;
};

struct WireView::ViewState {
    WireLayout geo;                  // world coordinates (wirelayout.h)
    network::LinkRateLookup rates;   // the simulation's rate samples by link
    double maxPayload = 0;           // busiest line's payload (colour without a simulation)
    std::vector<double> groupPayload; // per group: its internal links' payload
    double maxGroupPayload = 0;
    // Per group: its internal links gathered by bin series (a box's load each frame without summing
    // tens of thousands of links: 98,304 GPUs, 450 ms a frame for the pods' colours).
    std::vector<network::LinkRateLookup::Gathered> groupRates;
    bool groupsStale = true; // the two above are recomputed by the next layout (set by a new network)

    // World → widget: screen = world · scale + offset.
    double scale = 1, fitScale = 1;
    QPointF offset;
    bool fitted = true;

    // Interaction and what the last paint drew.
    int hoveredSegment = -1;
    bool dragging = false;
    QPoint dragFrom;
    QPointF offsetAtDrag;
    int packets = 0;
    int packetsBy[parallel::kStrategyCount] = {0, 0, 0, 0};

    // The static layers (server boxes; nodes and labels), cached for the current view.
    struct CacheKey {
        double scale = 0;
        QPointF offset;
        QSize pixels;
        std::uint64_t generation = 0;
    } cacheKey;
    std::uint64_t generation = 1; // bumped by every change of geometry, highlight or open server
    QImage serverLayer, nodeLayer;

    // The shape kept across setNetwork (same shape: keep zoom and pan).
    std::size_t nodeCount = 0, linkCount = 0;
    network::TopologySpec spec;
    parallel::Cluster cluster;

    [[nodiscard]] double lineScale() const { return std::clamp(scale * 1.4, 0.45, 1.0); }

    // Offset to the right of the direction of travel, so that the two directions of a pair sit side by side.
    [[nodiscard]] ScreenLine line(const WireLayout::Segment& seg) const
    {
        ScreenLine s;
        s.p = seg.a * scale + offset;
        s.q = seg.b * scale + offset;
        s.width = std::max(1.0, seg.width * lineScale());
        const QPointF d = s.q - s.p;
        const double len = std::hypot(d.x(), d.y());
        if (len > 1e-9) {
            const QPointF n(-d.y() / len, d.x() / len);
            const QPointF off = n * (s.width / 2 + 1.0);
            s.p += off;
            s.q += off;
        }
        return s;
    }
};

} // namespace tw::ui
