#pragma once
// Small helpers the Qt Test suites share (header-only, Qt-free).

#include "base/error.h"
#include "collective/schedule.h"
#include "fabric/topology.h"
#include "parallel/plan.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace tw::test {

// Writes `s` as a scenario file at `path` (what File → Save writes); false when it cannot be written.
inline bool writeScenarioFile(const std::string& path, const scenario::Scenario& s)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << scenario::scenarioToJson(s);
    return static_cast<bool>(out);
}

// A shipped preset; a preset that does not load stops the test program with the reason.
inline scenario::Scenario presetOrDie(const std::string& name)
{
    auto p = scenario::preset(name);
    if (!p) {
        std::fprintf(stderr, "preset %s: %s\n", name.c_str(), p.error().toString().c_str());
        std::abort();
    }
    return p.value();
}

// The fabric of a spec for a cluster; a spec that does not build stops the test program with the reason.
inline network::Topology topologyOrDie(const network::TopologySpec& spec, const parallel::Cluster& cluster)
{
    auto t = network::build(spec, cluster);
    if (!t) {
        std::fprintf(stderr, "build: %s\n", t.error().toString().c_str());
        std::abort();
    }
    return std::move(t).value();
}

inline bool contains(const std::string& haystack, const std::string& needle)
{
    return haystack.find(needle) != std::string::npos;
}

// Every error on its own line (for failure messages).
inline std::string joined(const std::vector<tw::Error>& errors)
{
    std::string s;
    for (const auto& e : errors)
        s += e.toString() + "\n";
    return s;
}

// A plan with these degrees and every other setting at its default.
inline parallel::ParallelPlan planOf(std::uint64_t dp, std::uint64_t pp, std::uint64_t tp, std::uint64_t ep = 1)
{
    parallel::ParallelPlan p;
    p.dp = dp;
    p.pp = pp;
    p.tp = tp;
    p.ep = ep;
    return p;
}

// A collective call with these fields and the others at their defaults.
inline collective::ScheduleSpec specOf(collective::Op op, collective::Algorithm a, std::uint64_t n, double bytes,
                                       std::uint32_t root = 0, std::uint64_t perNode = 0, std::uint64_t chunks = 0)
{
    collective::ScheduleSpec s;
    s.op = op;
    s.algorithm = a;
    s.ranks = n;
    s.bytes = bytes;
    s.root = root;
    s.ranksPerNode = perNode;
    s.pipelineChunks = chunks;
    return s;
}

} // namespace tw::test
