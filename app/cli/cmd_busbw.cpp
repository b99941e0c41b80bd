// tokenwire-cli busbw (issue #17): NCCL's predicted time and bus bandwidth of one collective over all GPUs
// of the scenario, per message size, in nccl-tests' layout (NVIDIA/nccl-tests src/common.cu; busbw factors
// from its doc/PERFORMANCE.md). The figures come from core's NCCL model (collective/nccl.h, ncclgraph.h).

#include "args.h"
#include "cliio.h"
#include "commands.h"

#include "base/units.h"
#include "collective/busbw.h"
#include "collective/nccl.h"
#include "collective/ncclgraph.h"
#include "scenario/scenario.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <ostream>
#include <string>

namespace tw::cli {

namespace {

struct Dtype {
    std::string_view name;  // what nccl-tests prints
    std::string_view alias; // ours
    int size;
};
// nccl-tests' -d names (src/common.cu test_typenames).
constexpr std::array<Dtype, 12> kDtypes = {{{"int8", "int8", 1},
                                            {"uint8", "uint8", 1},
                                            {"int32", "int32", 4},
                                            {"uint32", "uint32", 4},
                                            {"int64", "int64", 8},
                                            {"uint64", "uint64", 8},
                                            {"half", "fp16", 2},
                                            {"float", "fp32", 4},
                                            {"double", "fp64", 8},
                                            {"bfloat16", "bf16", 2},
                                            {"f8e4m3", "fp8", 1},
                                            {"f8e5m2", "f8e5m2", 1}}};

const Dtype* findDtype(std::string_view name)
{
    for (const Dtype& d : kDtypes)
        if (d.name == name || d.alias == name)
            return &d;
    return nullptr;
}

std::string fixed(double v, int width, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%*.*f", width, decimals, v);
    return buf;
}

} // namespace

int busbwDtypeSize(std::string_view name)
{
    const Dtype* d = findDtype(name);
    return d ? d->size : 0;
}

int runBusbw(const BusbwOptions& o, std::ostream& out, std::ostream& err)
{
    const auto loaded = readScenario(o.scenario, err);
    if (!loaded)
        return kExitInput;
    const scenario::Scenario& s = *loaded;
    const network::TopologySpec spec = scenario::resolvedTopology(s);
    auto system = nccl::systemFor(s.hardware.gpu, spec, s.hardware.cluster());
    if (!system) {
        printError(err, system.error());
        return kExitInput;
    }
    const nccl::System& sys = system.value();
    const nccl::Graphs graphs = nccl::searchGraphs(sys, o.channels > 0 ? std::optional<int>(static_cast<int>(o.channels))
                                                                      : std::nullopt);
    const nccl::Tuning tuning = nccl::tuneModel(sys, graphs);
    const Dtype& dtype = *findDtype(o.dtype);

    nccl::Sweep request;
    request.op = o.op;
    request.minBytes = o.minBytes;
    request.maxBytes = o.maxBytes;
    request.factor = static_cast<double>(o.factor);
    request.typeSize = dtype.size;
    if (o.algorithm != "auto")
        request.algorithm = nccl::algorithmFromString(o.algorithm);
    if (o.protocol != "auto")
        request.protocol = nccl::protocolFromString(o.protocol);
    auto swept = nccl::sweep(tuning, sys, graphs, request);
    if (!swept) {
        Error e = swept.error();
        e.where.field = e.where.jsonPath == "protocol" ? "--protocol" : "--algo";
        e.where.jsonPath.clear();
        printError(err, e);
        return kExitInput;
    }
    const std::vector<nccl::Prediction>& rows = swept.value();

    if (o.scenario.json) {
        using json = nlohmann::ordered_json;
        json j;
        j["op"] = std::string(collective::toString(o.op));
        j["gpus"] = sys.ranks();
        j["nodes"] = sys.nodes;
        j["gpus_per_node"] = sys.gpusPerNode;
        j["gpu"] = s.hardware.gpu;
        j["dtype"] = std::string(dtype.name);
        j["fabric"] = sys.fabric;
        j["channels"] = {{"ring", graphs.ring.nChannels}, {"tree", graphs.tree.nChannels}, {"nvls", graphs.nvls.nChannels}};
        // The graphs NCCL's search would build: per channel the local GPU order and the NIC (rail) it
        // enters and leaves each node by (-1 on one node); bandwidths per channel in GB/s as NCCL keeps them.
        auto graphJson = [](const nccl::Graph& g) {
            json layout = json::array();
            for (const nccl::Channel& c : g.channels)
                layout.push_back({{"gpus", c.gpus}, {"nic_in", c.nicIn}, {"nic_out", c.nicOut}});
            return json{{"found", g.found},          {"channels", g.nChannels},
                        {"bw_intra_gbps", g.bwIntra}, {"bw_inter_gbps", g.bwInter},
                        {"same_channels", g.sameChannels}, {"layout", std::move(layout)}};
        };
        j["graphs"] = {{"ring", graphJson(graphs.ring)}, {"tree", graphJson(graphs.tree)}, {"nvls", graphJson(graphs.nvls)}};
        j["model"] = "NCCL 2.30.7 tuning model (NVIDIA/nccl 5067397c src/graph/tuning.cc); predictions";
        json arr = json::array();
        for (const nccl::Prediction& p : rows) {
            json r;
            r["bytes"] = p.bytes;
            r["count"] = p.bytes / dtype.size;
            r["time_s"] = p.time;
            r["algbw"] = p.algbw;
            r["busbw"] = p.busbw ? json(*p.busbw) : json(nullptr);
            r["algorithm"] = std::string(nccl::algorithmLabel(p));
            r["protocol"] = std::string(nccl::toString(p.protocol));
            r["channels"] = p.channels;
            r["latency_s"] = p.latencyTerm;
            r["bandwidth_s"] = p.bandwidthTerm;
            arr.push_back(std::move(r));
        }
        j["rows"] = std::move(arr);
        out << j.dump(2) << '\n';
        return out.good() ? kExitOk : kExitInput;
    }

    out << "# tokenwire-cli busbw: " << collective::displayName(o.op) << " over " << sys.ranks() << " GPUs — "
        << sys.fabric << '\n';
    out << "# NCCL 2.30.7's model (src/graph/tuning.cc) on the channels of its topology search: ring "
        << graphs.ring.nChannels << " × " << formatCount(graphs.ring.bwIntra, 2) << " GB/s";
    if (sys.nodes > 1)
        out << " (inter " << formatCount(graphs.ring.bwInter, 2) << ")";
    out << ", tree " << graphs.tree.nChannels << " × " << formatCount(graphs.tree.bwIntra, 2) << '/'
        << formatCount(graphs.tree.bwInter, 2);
    if (graphs.nvls.found)
        out << ", nvls " << graphs.nvls.nChannels << " × " << formatCount(graphs.nvls.bwIntra, 2) << '/'
            << formatCount(graphs.nvls.bwInter, 2);
    out << '\n';
    if (sys.nodes > 1 && !graphs.ring.channels.empty()) {
        // Which rail each ring channel leaves a node by (and enters the next by): stage 5's flows.
        out << "# ring channels leave node k and enter node k+1 on NIC (rail):";
        for (const nccl::Channel& c : graphs.ring.channels)
            out << ' ' << c.nicOut;
        out << '\n';
    }
    out << "# Predictions, not measurements (docs/nccl.md). GB/s = 10^9 B/s.\n#\n";
    out << "#       size         count      type     time   algbw   busbw  algorithm  protocol  channels\n";
    out << "#        (B)    (elements)               (us)  (GB/s)  (GB/s)\n";
    for (const nccl::Prediction& p : rows) {
        char line[256];
        const std::string busbw = p.busbw ? fixed(*p.busbw / 1e9, 7, 2) : std::string("      -");
        std::snprintf(line, sizeof line, "%12.0f  %12.0f  %8s  %s %s %s  %9s  %8s  %8d\n", p.bytes, p.bytes / dtype.size,
                      std::string(dtype.name).c_str(), fixed(p.time * 1e6, 7, 2).c_str(),
                      fixed(p.algbw / 1e9, 7, 2).c_str(), busbw.c_str(), std::string(nccl::algorithmLabel(p)).c_str(),
                      std::string(nccl::toString(p.protocol)).c_str(), p.channels);
        out << line;
    }
    return out.good() ? kExitOk : kExitInput;
}

} // namespace tw::cli
