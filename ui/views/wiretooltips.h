#pragma once
// The tooltip of a link on stage 5's fabric (WireView): payload and wire bytes per step, utilization
// over the step, the rate at the current time by strategy, the followed token's bytes on it and the
// collectives using it. For a merged line (a compact server's NIC links to one leaf) the figures are
// Σ over its links.

#include "base/units.h"
#include "network/linkload.h"
#include "network/simresults.h"
#include "network/simulate.h"
#include "fabric/topology.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

namespace tw::ui {

// The collectives using a link, as tooltip lines (WireView::setLinkCallers).
using LinkCallers = std::function<QStringList(network::LinkId)>;

// What a tooltip reads; pointers may be null (no loads, no simulation, no callers).
struct LinkTipSources {
    const network::Topology* topology = nullptr;
    const network::LinkLoads* loads = nullptr;
    const network::StepSimulation* simulation = nullptr;
    const network::LinkRateLookup* rates = nullptr;
    const LinkCallers* callers = nullptr; // per link: "DP AllReduce of the gradients, 2.3 GB"
    double time = 0;                                   // s within the step
    DisplayUnits units;
    QString traceName;      // the followed token ("token #12 “·che”")
    double tokenBytes = 0;  // its row's bytes per step on the line
    bool tokenGradient = false; // a gradient reduction it feeds crosses the line
};

// Rich text for `link`, drawn as one line with `members` (rep first; empty = the link alone).
[[nodiscard]] QString linkToolTip(const LinkTipSources& sources, network::LinkId link,
                                  std::vector<network::LinkId> members);

// "DP", "PP", "TP", "EP" by strategy index.
[[nodiscard]] QString strategyShortName(int strategy);

} // namespace tw::ui
