#pragma once
// Stage 5 at cluster scale: which nodes WireLayout draws collapsed into one box, so that 16k–100k
// GPUs stay legible and a frame stays cheap. Decided once per fabric, without a widget:
//   - a three-tier fabric with several pods: one box per pod (its servers, leaves and spines;
//     Topology::podPlace says which), and when it has more than kMaxDrawnCores core switches, one box
//     per core plane (the cores one pod spine of every pod links to, topology.h "three-tier"). A pod
//     of more than kMaxDrawnServers servers holds server groups of its own (its `parent`), drawn
//     collapsed when the pod is open: 6,144 GPUs of a pod drawn server by server were a grid of 768
//     boxes under a veil of 12,000 lines (and 600 ms a frame);
//   - a leaf–spine (or any fabric with leaves) of more than kMaxDrawnServers servers: one box per set
//     of leaves that serve the same servers (the rail leaves of a server group, or a top-of-rack
//     switch) with those servers; beyond kMaxGroups such sets, consecutive sets share a box.
// Other fabrics have no groups (drawn as before: servers compact beyond 32, see wirelayout.h).
// A pod or server group can be drawn open (its parts laid out below the boxes); core planes cannot. A
// pod's server group opens inside its open pod.

#include "fabric/topology.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace tw::ui {

struct WireGroups {
    static constexpr std::size_t kMaxDrawnServers = 128; // a leaf–spine up to 1,024 GPUs of 8 stays per server
    static constexpr std::size_t kMaxGroups = 64;
    static constexpr std::size_t kMaxDrawnCores = 32;

    enum class Kind { Pod, Servers, CorePlane };
    struct Group {
        Kind kind = Kind::Pod;
        int index = 0;                       // pod, server group or core plane number (within its parent)
        int parent = -1;                     // the pod a server group is inside (-1: a top-level group)
        std::int64_t serverLo = -1, serverHi = -1;
        std::int64_t gpuLo = -1, gpuHi = -1;
        std::uint64_t gpus = 0, switches = 0; // GPUs inside; leaf, spine or core switches inside
        std::vector<network::LinkId> internal; // the network links inside (NIC–leaf, leaf–spine), its load
        QStringList titles;                  // candidates, longest first
        QString subtitle;                    // "3,072 GPUs" …
        [[nodiscard]] bool openable() const { return kind != Kind::CorePlane; }
    };
    std::vector<Group> groups;
    std::vector<int> groupOf; // per NodeId: its top-level group, -1 when drawn on its own (empty without groups)
    std::vector<int> subOf;   // per NodeId: its server group inside a pod, -1 when none (empty without them)

    [[nodiscard]] bool empty() const { return groups.empty(); }
    [[nodiscard]] int of(network::NodeId n) const { return n < groupOf.size() ? groupOf[n] : -1; }
    [[nodiscard]] int subOfNode(network::NodeId n) const { return n < subOf.size() ? subOf[n] : -1; }
    [[nodiscard]] int parentOf(int g) const
    {
        return g >= 0 && std::size_t(g) < groups.size() ? groups[std::size_t(g)].parent : -1;
    }
};

[[nodiscard]] WireGroups groupNodes(const network::Topology& topology);

} // namespace tw::ui
