// How stage 5's step simulation grows with the cluster (issue #21: a Llama-3-405B-shaped step on 16,384
// GPUs in ≤ 3 s and ≤ 1 GB; on 98,304 GPUs of a three-tier fabric in ≤ 15 s and ≤ 3 GB). The step is
// built in code, not from a preset: Llama 3 405B's shape (Llama Team, "The Llama 3 Herd of Models",
// arXiv 2407.21783, Table 3: L 126, d 16,384, 128 heads with 8 KV heads, SwiGLU d_ff 53,248, V 128,256;
// §3.3.2 and Table 4: T 8,192, tp 8 × pp 16, interleaved 1F1B, H100 SXM, 8 GPUs and 8 NICs per server),
// B = 1 and 16 micro-batches per replica (2,048 sequences per step at dp 128), zero1, sequence parallel;
// dp = GPUs / 128. The fabric: a rail-optimized NDR leaf–spine (32 NIC ports per leaf, 8 spines) up to
// 16,384 GPUs, beyond that a rail-optimized three-tier fat tree whose pods hold whole pipeline stages
// (podSize: 6,144 GPUs = 192 leaves, 8 spines per pod, 64 cores; 4,096 GPUs at 65,536). One size per process, so the peak RSS
// (getrusage) is that size's: `bench_scale --gpus N [--kind leaf-spine|three-tier] [--nics-per-leaf P]
// [--runs R]` (P: a leaf–spine's NIC ports per leaf, 32 by default, as a DGX SuperPOD's 32-server scalable
// unit on 64-port NDR switches); without --gpus it lists the sizes. The reduction depends on P: a
// data-parallel shift must move replicas by whole groups of P servers (docs/model.md §5.4), so at dp ≤ P
// every replica shift is a symmetry, beyond it only shifts by P. Prints the simulated step, the reduction used and a RESULT line for
// scripts/bench.sh (name=scale_<N>).

#include "network/simulate.h"
#include "fabric/topology.h"
#include "scenario/derive.h"
#include "scenario/presets.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "benchutil.h"

namespace {

using tw::bench::Clock;
using tw::bench::msSince;
using tw::bench::peakRssMiB;
using tw::bench::stats;
using tw::bench::Stats;

constexpr std::uint64_t kSizes[] = {1024, 2048, 4096, 8192, 16384, 32768, 65536, 98304};
constexpr std::uint64_t kLeafSpineMax = 16384;

tw::scenario::Scenario llama405b(std::uint64_t gpus)
{
    tw::scenario::Scenario s = tw::scenario::preset("llama3-70b").value(); // text, tokenizer, precisions
    s.name = "llama3-405b-shaped";
    auto& m = s.model;
    m.name = "Llama-3-405B-shaped";
    m.layers = 126;
    m.hiddenSize = 16384;
    m.heads = 128;
    m.kvHeads = 8;
    m.ffnSize = 53248;
    m.vocabSize = 128256;
    m.maxPositions = 8192;
    s.batch.sequenceLength = 8192;
    s.batch.microBatch = 1;
    s.hardware.gpu = "h100-sxm";
    s.hardware.gpusPerNode = 8;
    s.hardware.nodes = gpus / 8;
    s.parallel.tp = 8;
    s.parallel.pp = 16;
    s.parallel.dp = gpus / 128;
    s.parallel.schedule = tw::parallel::PipelineSchedule::Interleaved;
    s.parallel.virtualStages = 2;
    s.batch.globalBatchTokens = s.parallel.dp * 16 * s.batch.sequenceLength; // 16 micro-batches per replica
    return s;
}

// GPUs per pod: whole pipeline stages (one stage's replicas are gpus / 16 GPUs, consecutive), as many as
// fit in 6,144 GPUs (Llama 3's pods held 3,072, arXiv 2407.21783 §3.3.1) — 6,144 at 32,768 and 98,304
// GPUs, 4,096 at 65,536. Pods that cut stages (6,144 at 65,536: --gpus-per-pod 6144) leave the data-
// parallel groups of some stages split over two pods, so only the tensor-parallel shift maps the step
// onto itself (docs/model.md §5.4) and the simulation does 16 times the work.
std::uint64_t podSize(std::uint64_t gpus)
{
    const std::uint64_t stage = gpus / 16;
    return stage >= 6144 ? stage : 6144 / stage * stage;
}

tw::network::TopologySpec fabric(tw::network::TopologyKind kind, std::uint64_t nicsPerLeaf, std::uint64_t gpusPerPod)
{
    tw::network::TopologySpec t;
    t.kind = kind;
    t.nicPlacement = tw::network::NicPlacement::PerGpu;
    t.nicProtocol = tw::network::Protocol::InfinibandNdr;
    t.nicsPerLeaf = nicsPerLeaf;
    t.spines = 8;
    t.gpusPerPod = gpusPerPod;
    t.leavesPerPod = gpusPerPod / 8 / 32 * 8; // sets of 8 rail leaves, 32 servers under each
    t.spinesPerPod = 8;
    t.coreSwitches = 64;
    t.railOptimized = true;
    return t;
}

} // namespace

int main(int argc, char** argv)
{
    std::uint64_t gpus = 0;
    int runs = 1;
    std::string kind;
    std::uint64_t nicsPerLeaf = 32;
    std::uint64_t gpusPerPod = 0; // 0: podSize
    bool recordLinks = false;     // as the GUI's stage 5 runs it (link rates binned over the step)
    std::string presetName;       // a preset's scenario and fabric instead of the built step
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--gpus" && i + 1 < argc)
            gpus = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--nics-per-leaf" && i + 1 < argc)
            nicsPerLeaf = std::max<std::uint64_t>(1, std::strtoull(argv[++i], nullptr, 10));
        else if (a == "--kind" && i + 1 < argc)
            kind = argv[++i];
        else if (a == "--record-links")
            recordLinks = true;
        else if (a == "--gpus-per-pod" && i + 1 < argc)
            gpusPerPod = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--preset" && i + 1 < argc)
            presetName = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_scale [--gpus N] [--kind leaf-spine|three-tier] [--nics-per-leaf P] "
                                 "[--gpus-per-pod G] [--preset NAME] [--record-links] [--runs R]\n");
            return 2;
        }
    }
    std::optional<tw::scenario::Scenario> preset;
    if (!presetName.empty()) {
        auto p = tw::scenario::preset(presetName);
        if (!p.ok()) {
            std::fprintf(stderr, "%s\n", p.error().toString().c_str());
            return 2;
        }
        preset = std::move(p).value();
        gpus = preset->hardware.cluster().gpuCount();
    }
    if (gpus == 0) {
        for (std::uint64_t n : kSizes)
            std::printf("%llu\n", static_cast<unsigned long long>(n));
        return 0;
    }
    if (!preset && gpus % 128) {
        std::fprintf(stderr, "bench_scale: --gpus must be a multiple of tp·pp = 128\n");
        return 2;
    }
    if (gpusPerPod == 0)
        gpusPerPod = podSize(gpus);
    if (gpusPerPod % 256) {
        std::fprintf(stderr, "bench_scale: --gpus-per-pod must be a multiple of 256 (sets of 8 rail leaves, 32 servers each)\n");
        return 2;
    }
    const auto topoKind = kind.empty() ? (gpus <= kLeafSpineMax ? tw::network::TopologyKind::LeafSpine
                                                                : tw::network::TopologyKind::ThreeTier)
                                       : (kind == "three-tier" ? tw::network::TopologyKind::ThreeTier
                                                               : tw::network::TopologyKind::LeafSpine);
    const auto t0 = Clock::now();
    auto d = tw::scenario::derive(preset ? *preset : llama405b(gpus));
    if (!d.ok()) {
        std::fprintf(stderr, "cannot derive: %s\n", d.error().toString().c_str());
        return 1;
    }
    if (!d.value()->stage3 || !d.value()->stage4) {
        std::fprintf(stderr, "no plan: %s\n",
                     d.value()->planErrors.empty() ? "?" : d.value()->planErrors.front().toString().c_str());
        return 1;
    }
    const auto& der = *d.value();
    const double deriveMs = msSince(t0);
    const auto t1 = Clock::now();
    const tw::network::TopologySpec spec = preset ? tw::scenario::resolvedTopology(*preset)
                                                  : fabric(topoKind, nicsPerLeaf, gpusPerPod);
    auto topo = tw::network::build(spec, der.cluster);
    if (!topo.ok()) {
        std::fprintf(stderr, "%s\n", topo.error().toString().c_str());
        return 1;
    }
    const double buildMs = msSince(t1);
    tw::network::SimulationOptions o;
    o.modelFlopsPerStep = der.figures.valueOf("compute.flops_per_step");
    o.peakFlopsPerGpu = der.figures.valueOf("compute.gpu_peak_flops");
    o.recordLinks = recordLinks;
    std::vector<double> ms;
    tw::network::StepSimulation last;
    for (int r = 0; r < runs; ++r) {
        const auto t2 = Clock::now();
        auto sim = tw::network::simulateStep(topo.value(), *der.stage3, *der.stage4, o);
        ms.push_back(msSince(t2));
        if (!sim.ok()) {
            std::fprintf(stderr, "%s\n", sim.error().toString().c_str());
            return 1;
        }
        last = std::move(sim).value();
    }
    const Stats s = stats(ms);
    const bool tiers = spec.kind == tw::network::TopologyKind::ThreeTier;
    if (preset)
        gpusPerPod = spec.gpusPerPod;
    const std::string fabricName = tiers ? "three-tier, pods of " + std::to_string(gpusPerPod) + " GPUs" : "leaf-spine";
    const std::string what = preset ? "preset " + presetName : "Llama-3-405B-shaped step";
    std::printf("%s, %llu GPUs (tp %llu x pp %llu x dp %llu), %s: derive %.0f ms, fabric %.0f ms "
                "(%zu links)\n  simulateStep %.1f ms [%.1f, %.1f] (%zu runs); step %.6g s, MFU %.4f; %llu flows, "
                "%llu simulated (+ %llu in closed form), %llu rate updates, %llu GPUs simulated; RSS %.1f MiB\n  symmetry: %s\n",
                what.c_str(), static_cast<unsigned long long>(gpus), static_cast<unsigned long long>(der.stage3->plan.tp),
                static_cast<unsigned long long>(der.stage3->plan.pp), static_cast<unsigned long long>(der.stage3->plan.dp),
                fabricName.c_str(),
                deriveMs, buildMs,
                topo.value().links().size(), s.median, s.min, s.max, ms.size(), last.stepSeconds, last.mfu,
                static_cast<unsigned long long>(last.flows), static_cast<unsigned long long>(last.simulatedFlows),
                static_cast<unsigned long long>(last.closedFormInstances), static_cast<unsigned long long>(last.rateUpdates),
                static_cast<unsigned long long>(last.simulatedGpus), peakRssMiB(), last.reduction.c_str());
    const std::string name = preset ? presetName : "scale_" + std::to_string(gpus);
    std::printf("RESULT name=%s gpus=%llu fabric=%s nics_per_leaf=%llu gpus_per_pod=%llu median_ms=%.4f min_ms=%.4f "
                "max_ms=%.4f runs=%zu rss_mib=%.1f total_ms=%.1f\n",
                name.c_str(), static_cast<unsigned long long>(gpus), tiers ? "three-tier" : "leaf-spine", static_cast<unsigned long long>(nicsPerLeaf),
                static_cast<unsigned long long>(tiers ? gpusPerPod : 0), s.median, s.min, s.max, ms.size(), peakRssMiB(), msSince(t0));
    return 0;
}
