#pragma once
// Stage 5, internal to the simulator: the symmetry reduction (simulate.h "Symmetry"). Finds the group Γ
// of shifts of mesh coordinates (dp ↦ dp + s, tp ↦ tp + s') that maps the whole step onto itself — groups
// onto groups of the same call, every schedule invariant under the induced rank permutation, every routed
// path onto its image link by link (links no allocation can saturate exempt) — and, when it is not
// trivial, the orbits of GPUs, groups, ranks and links the quotient simulation uses. The engine only
// reads the result.

#include "flowrates.h"
#include "nvlsflows.h"
#include "routing.h"
#include "simsched.h"
#include "fabric/topology.h"

#include "base/error.h"
#include "collective/binding.h"
#include "parallel/plan.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tw::network::sim {

inline constexpr LinkId kBadLink = 0xfffffffeu; // Shift::link: an exempt link without a consistent image

// One generator of Γ: a shift of one mesh coordinate.
struct Shift {
    int dim = 0;                       // 0 dp, 1 tp
    std::uint32_t step = 1, order = 1; // coordinate + step (mod size); order = size / step
    std::vector<std::uint32_t> group;  // per group used: its image
    std::vector<LinkId> link;          // per link on a path: its image (kNone elsewhere; kBadLink: an exempt
                                       // link the shift does not map consistently)
};

// What the analysis reads: the step's plan, its schedules and its fabric.
struct SymmetryInputs {
    const Topology& topology;
    const parallel::PlanDerivation& plan;
    const collective::CollectiveDerivation& collectives;
    EndpointRouter& router;              // GPU paths and NVLS switch links
    const std::vector<double>& capacity;    // per link, payload B/s
    const std::vector<char>& simulated;     // per call: 0 not run, 1 run, 2 run as a pipeline Send/Recv
    std::function<std::vector<const Sched*>(std::uint32_t)> schedulesOf; // per simulated call: the schedules it uses
};

struct Symmetry {
    bool reduced = false;
    std::string reduction;                 // StepSimulation::reduction
    std::uint32_t order = 1;               // |Γ|
    std::uint32_t dims[3] = {1, 1, 1};     // dp, pp, tp
    std::vector<std::uint32_t> gpuAt;      // (pp·dp + dp)·tp + tp → GPU
    std::vector<Shift> shifts;
    std::vector<std::uint32_t> gpuRep;     // per GPU: its orbit's representative (itself without symmetry)
    std::vector<std::uint32_t> groupCanon; // per group: its orbit's canonical group
    std::vector<std::vector<std::uint32_t>> rankCanon; // per group: rank → rank in the canonical group
    std::vector<std::vector<std::uint32_t>> rankRepOf; // per canonical group: rank → representative rank
                                                       // (one more entry: an NVLS schedule's switch rank)
    std::vector<std::uint32_t> rankOrbits, stabilizer; // per canonical group
    std::vector<LinkId> linkRep;           // per link: its orbit's representative (kNone: unused, or unmapped exempt)
    std::vector<std::uint32_t> linkOrbitSize;
    std::vector<std::vector<LinkId>> linkOrbitMembers; // per representative link
    std::vector<char> exempt;              // links no allocation can saturate
    bool anyExempt = false;
    // Exempt links in orbits like the others (linkRep) when every shift maps them consistently (the
    // paths and their images agree link by link there too, as inside a server); the rest are
    // "unmapped": pathEntries routes every image of a flow to count them.
    bool unmappedExempt = false;

    // No reduction (every GPU its own representative), saying why.
    [[nodiscard]] static Symmetry none(std::size_t gpus, std::string why);
    // The analysis (simulate.h "Symmetry"); not reduced, saying why, whenever a condition fails.
    [[nodiscard]] static Symmetry analyze(const SymmetryInputs& in);

    // GPU g shifted `times` times by `shift`.
    [[nodiscard]] std::uint32_t shiftGpu(const parallel::PlanDerivation& plan, std::uint32_t g, const Shift& shift,
                                         std::uint64_t times) const;
    // Each transfer's orbit representative under the canonical group's stabilizer (the shifts that map
    // the group onto itself, as rank permutations). False when the schedule is not invariant.
    [[nodiscard]] bool transferOrbits(const parallel::PlanDerivation& plan, std::uint32_t group, const Sched& sched,
                                      std::vector<std::uint32_t>& rep) const;
    // The allocation's view of a routed path (PathEntry): its links, or under symmetry their orbits'
    // representatives weighted, plus the exempt links crossed by the orbit's flows. A routing error
    // goes to `failure` (the first one kept).
    [[nodiscard]] std::vector<PathEntry> pathEntries(const parallel::PlanDerivation& plan, EndpointRouter& router,
                                                     const std::vector<LinkId>& path, std::uint32_t srcGpu,
                                                     std::uint32_t dstGpu, std::uint32_t group,
                                                     std::optional<Error>& failure) const;

private:
    void analyzeWith(const SymmetryInputs& in);
    // The exempt links of path p and its image q, position by position when the two have the same shape
    // (exempt where the other is, equal capacities): image[l] and inverse[m] set, or kBadLink where a
    // link already had another partner or the shapes differ.
    void mapExempt(const std::vector<LinkId>& p, const std::vector<LinkId>& q, const std::vector<double>& capacity,
                   std::vector<LinkId>& image, std::vector<LinkId>& inverse) const;
    // The simulated calls' groups by their sorted members, ascending.
    using GroupsBySet = std::map<std::vector<std::uint32_t>, std::vector<std::uint32_t>>;
    bool verifyShift(const SymmetryInputs& in, Shift& shift, const std::vector<std::array<std::uint32_t, 3>>& triples,
                     const std::vector<std::vector<const Sched*>>& callScheds, const GroupsBySet& bySet,
                     const std::vector<std::uint32_t>& firstCall, std::string& why) const;
    class GroupImages; // a group's image under one shift among a call's groups
    bool mapShiftLinks(const SymmetryInputs& in, Shift& shift, const std::vector<std::array<std::uint32_t, 3>>& triples,
                       const std::vector<std::uint32_t>& firstCall, GroupImages& images, std::string& why) const;
    bool checkShiftGroups(const SymmetryInputs& in, Shift& shift, const std::vector<std::vector<const Sched*>>& callScheds,
                          GroupImages& images, std::string& why) const;
    // analyzeWith's steps (symmetry.cpp says what each does).
    struct CallPairs;
    bool indexMesh(const SymmetryInputs& in, std::string& why);
    static bool collectPairs(const SymmetryInputs& in, CallPairs& out, std::string& why);
    static void indexGroups(const SymmetryInputs& in, CallPairs& out);
    bool decideExempt(const SymmetryInputs& in, const CallPairs& pairs);
    std::string findGenerators(const SymmetryInputs& in, const CallPairs& pairs);
    void gpuOrbits(const parallel::PlanDerivation& plan);
    bool groupOrbits(const parallel::PlanDerivation& plan, std::string& why);
    bool rankOrbitsOf(const std::vector<std::uint32_t>& members, std::uint32_t group, std::string& why);
    bool canonicalRanks(const parallel::PlanDerivation& plan, const std::vector<std::vector<std::uint32_t>>& element,
                        std::string& why);
    bool linkOrbits(std::size_t links, std::string& why);
    [[nodiscard]] std::string describeReduction(std::size_t gpus, const std::string& refusals) const;
};

} // namespace tw::network::sim
