// Fuzz target: the topology reader (network::topologyFromJson) on any bytes returns a spec or a
// located problem, never a crash; an accepted spec survives topologyToJson → topologyFromJson
// unchanged; validate() and build() on small clusters (up to 4 nodes × 8 GPUs, chosen from the input)
// agree: a spec validate() accepts builds, and every GPU of the built fabric reaches every other.

#include "fuzzcheck.h"

#include "network/routing.h"
#include "fabric/topology.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace tw;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto spec = network::topologyFromJson(input, "topology");
    if (!spec) {
        fuzz::check(!spec.error().message.empty(), "refused without a reason");
        return 0;
    }
    const auto again = network::topologyFromJson(network::topologyToJson(spec.value()), "topology");
    fuzz::check(again.ok(), "topologyToJson output does not load", again.ok() ? std::string() : again.error().toString());
    fuzz::check(again.value() == spec.value(), "the topology changed through save and load");

    // A small cluster picked from the input's first and last bytes.
    const std::uint64_t nodes = size ? 1 + data[0] % 4 : 1;
    const std::uint64_t perNode = size ? 1 + data[size - 1] % 8 : 8;
    const parallel::Cluster cluster{nodes, perNode};
    const bool valid = network::validate(spec.value(), cluster).empty();
    const auto built = network::build(spec.value(), cluster);
    fuzz::check(!valid || built.ok(), "validate() accepted a spec that does not build",
                built.ok() ? std::string() : built.error().toString());
    if (!valid || !built.ok())
        return 0;
    network::Router router(built.value());
    for (std::uint32_t a = 0; a < cluster.gpuCount(); ++a)
        for (std::uint32_t b = 0; b < cluster.gpuCount(); ++b)
            if (a != b) {
                const auto path = router.route(a, b, 0);
                fuzz::check(path.ok(), "two GPUs of a built fabric are not connected",
                            path.ok() ? std::string() : path.error().toString());
            }
    return 0;
}
