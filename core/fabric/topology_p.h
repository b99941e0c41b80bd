#pragma once
// Private to the topology builders (topology.cpp, threetier.cpp): the parts two builders share.

#include "topology.h"

#include <vector>

namespace tw::network::detail {

// Server s of a switched fabric (TopologySpec::intraNode) with its NICs — one per GPU on the GPU's PCIe
// switch (Topology::setGpuNic), or one per server on the root complex — returned in order.
[[nodiscard]] std::vector<NodeId> addServerWithNics(Topology& t, const TopologySpec& spec, std::uint64_t s,
                                                    std::uint64_t gpusPerNode);

// The three-tier kind (threetier.cpp): its fields' errors, appended; the fabric (spec validated).
void validateThreeTier(const TopologySpec& spec, const parallel::Cluster& cluster, std::vector<Error>& errors);
[[nodiscard]] Topology buildThreeTier(const TopologySpec& spec, const parallel::Cluster& cluster);

} // namespace tw::network::detail
