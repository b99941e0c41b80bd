#include "breakdown.h"

#include <tuple>

namespace tw::network {

std::string exposedFigureId(const CollectiveBreakdownRow& row)
{
    static const char* const names[] = {"dp", "pp", "tp", "ep"};
    return std::string("sim.exposed_") + names[std::size_t(row.strategy)] + "_" + std::string(parallel::slug(row.kind))
           + "_s";
}

std::vector<CollectiveBreakdownRow> collectiveBreakdown(const parallel::CommPlan& plan,
                                                        const collective::CollectiveDerivation& collectives,
                                                        const StepSimulation* simulation)
{
    parallel::PerStrategy<parallel::PerKind> calls{}, bytes{};
    parallel::PerStrategy<std::array<bool, std::tuple_size_v<parallel::PerKind>>> present{};
    for (const parallel::CollectiveCall& c : plan.calls) {
        const std::size_t st = std::size_t(c.strategy), k = std::size_t(c.kind);
        calls[st][k] += static_cast<double>(c.groupCount) * static_cast<double>(c.repeat);
        present[st][k] = true;
    }
    for (const collective::BoundCall& b : collectives.calls) {
        const parallel::CollectiveCall& c = plan.calls[b.call];
        bytes[std::size_t(c.strategy)][std::size_t(c.kind)] += b.stepWireBytes;
    }
    std::vector<CollectiveBreakdownRow> rows;
    for (std::size_t st = 0; st < parallel::kStrategyCount; ++st)
        for (std::size_t k = 0; k < calls[st].size(); ++k) {
            const double exposed = simulation ? simulation->exposedByKind[st][k] : 0;
            const double inFlight = simulation ? simulation->inFlightByKind[st][k] : 0;
            if (!present[st][k] && exposed == 0 && inFlight == 0)
                continue;
            rows.push_back({parallel::Strategy(st), parallel::CollectiveKind(k), calls[st][k], bytes[st][k],
                            collectives.secondsPerStepByKind[st][k], inFlight, exposed});
        }
    return rows;
}

} // namespace tw::network
