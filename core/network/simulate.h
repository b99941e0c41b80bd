#pragma once
// Stage 5: a flow-level simulation of one training step on the fabric. Every transfer of every
// scheduled collective (stage 4's step generators, the same ones the counter and the animation use)
// becomes a flow along its routed path; concurrent flows share each link by max-min fairness; compute
// blocks come from stage 3's pipeline timeline and per-layer times; the stage 3 pipeline schedule sets
// the order of the blocks on each GPU. The model, every simplification stated:
//
// Flows
//   - A transfer becomes one flow on Router's path (flow id = the group's index, as linkload.h).
//   - Latency: the flow waits Σ (link latencies on its path) at its start, then sends at its fair rate
//     (so one transfer alone takes Σ latency + bytes / bottleneck rate: Hockney's α–β with α = path latency).
//   - Rates: max-min fairness by progressive filling, recomputed whenever a flow starts sending or ends
//     (Bertsekas & Gallager, Data Networks, §6.5.2). Each direction of a link is its own resource.
//   - Protocol overhead: with protocolOverhead (default) a link's capacity for payload is
//     bandwidth · efficiency(protocol) (overhead.h, full packets; the partial last packet is ignored);
//     rates and the per-link bins (linkbins.h) are payload bytes (per second).
// Collectives
//   - Each call runs the schedule of its BoundCall::spec: for a call under NCCL (auto or an NCCL
//     algorithm) the textbook stand-in of the algorithm NCCL picked (collective::textbookStandIn: ring,
//     PAT, NVLS, NVLS-tree, CollNet → flat ring over the group in order; tree → double binary tree),
//     except for the NCCL channels, NVLS, NVLS-tree and NCCL trees below (simsched.h ncclLayout picks
//     the layout; linkload.h's static per-link loads use the same layouts, so they put the bytes the
//     simulation moves on the same links).
//   - NCCL channels: a call whose stand-in is the ring, over a group spanning several nodes with several
//     GPUs on each (listed node by node), runs NCCL's ring channels (BoundCall::channels, ncclgraph.h):
//     one flat ring per distinct channel (same GPU order and rail), its ranks in the channel's order
//     (node by node, each node in the channel's GPU order), carrying Σ its channels' share of the bytes
//     (S·w/nChannels; the last ring takes the rounding remainder). Merging channels of identical order and
//     path into one ring of their combined bytes is exact under max-min fairness: their flows cross the
//     same links at the same times, so the fair share of the merged flow is the sum of theirs. Step k of
//     the call is step k of every ring (a rank's rings advance together: a simplification, NCCL's
//     channels run independently — they are symmetric, so they stay in step). The hop from node k to
//     k+1 leaves by the NIC of the channel's rail on node k and enters by the same rail on node k+1
//     (Router::preferNics), so every NIC of a node carries 2(n−1)/n·S/nChannels per channel on its rail
//     (AllReduce). A one-node group keeps the single flat ring (NCCL's channels there share one order).
//     Falls back to the flat ring when a GPU pair would need two rails.
//   - NVLS: a call NCCL runs as NVLS (NVLink SHARP) on one node — AllReduce, ReduceScatter, AllGather —
//     runs through the NVSwitch (nvlsflows.h): the switch is one more rank of the schedule (rank n), every
//     GPU pushes ncclgraph.h's nvlsBytesPerGpuLink "up" bytes into it on its GPU → NVSwitch link and pulls
//     the "down" bytes out on its NVSwitch → GPU link (AllReduce S and S; ReduceScatter S and S/n;
//     AllGather S/n and S), cut into kNvlsChunks = 8 chunks: step k pushes chunk k and pulls chunk k − 1,
//     and the switch finishes a step (so releases its next chunk) once every GPU's push of it arrived —
//     the reduction needs them all. The switch is there from the start; it is fixed by every symmetry
//     shift, and a one-link path into (out of) the switch is its GPU's sending (receiving) side for the
//     private links, so both reductions below stay exact.
//   - NVLS-tree: a call NCCL runs as NVLS-tree (AllReduce over a group spanning several nodes, listed node
//     by node; src/graph/connect.cc connectNvls) runs NVLS inside every node and NCCL's double binary tree
//     of the nodes between the nodes' NVLS heads (BoundCall::nvlsChannels: head GPU i on rail i), as
//     nvlsflows.h "NVLS-tree" lays out: every GPU pushes S into its node's switch, head i pulls the node's
//     reduced slice X_i = S·w_i/W, sends half of it up tree 0 and half up tree 1 to its parent nodes' head
//     i on rail i, gets the result back down, pushes it into the switch, which multicasts S to every GPU;
//     kNvlsChunks pipelined chunks. Every GPU's switch link then carries S + X_i each way (head i), node
//     k's NIC i deg(k)·X_i/2 (tested on 2 and 4 DGX H100 nodes). Simplified: the nodes' switches are one
//     rank of the schedule (a node's switch finishes a step when every node's pushes of it arrived). The
//     symmetry reduction verifies the schedule like any other (a dp shift that moves the heads is refused).
//   - NCCL trees: a call NCCL runs as a tree (AllReduce) over a group spanning several nodes, listed node
//     by node, runs NCCL's tree channels (BoundCall::treeChannels, nccltrees.h): per channel a chain in
//     every node from the channel's head GPU, and NCCL's double binary tree of the nodes (ncclGetDtree)
//     joining the heads, each inter-node edge on the channel's rail in both directions; tree 0 and tree
//     1 each carry S·w/(2·nChannels), reduced up to the root then broadcast down in kTreeChunks = 8
//     pipelined chunks (chunk c crosses a child's edge at depth d in step c + D − d up, c + D + d − 1
//     down). A rank's trees and channels advance step by step together (as the rings'). One node: the
//     textbook double binary tree over the group (docs/nccl.md "In the step").
//   - NCCL's bandwidth (SimulationOptions::ncclBandwidth, on by default): an NCCL collective (auto or an
//     NCCL algorithm; not the p2p path, which is our own model, nor a textbook schedule) moves no faster
//     than NCCL's own model says it can (nccl.h predict: nChannels × per-channel speed × the protocol's
//     factor, the speed quantized to the search's speed arrays and bounded by the link bandwidths NCCL
//     sees — 20 GB/s per NVLink on A100, 20.6 on H100, against 25 raw). Every transfer of its schedule
//     carries a cap of b·steps·algbw / S (b its bytes, S the schedule's — a DDP bucket's or the call's —,
//     algbw NCCL's algorithm bandwidth for the call), so the schedule alone on the fabric takes S / algbw,
//     NCCL's bandwidth term, and under contention less than its cap
//     (max-min fairness with per-flow caps: a flow freezes at its cap as on a private link). Its latency
//     is NCCL's too: each transfer waits max(its path's latency, the prediction's latency term / steps),
//     so alone on an idle fabric the call takes NCCL's predicted time (latency + bandwidth). Without it a
//     ring inside a DGX A100 ran at the NVLink payload rate (282 GB/s of bus bandwidth) where NCCL
//     reaches 240 (docs/nccl.md "Stage 5 — flows").
//   - Per rank, not a barrier: a transfer of step k starts when both its source and its destination
//     rank have finished every transfer of theirs in steps < k and have reached the call (arrived);
//     a rank is done with the call after its last step.
//   - Megatron TP and MoE EP collectives block compute on their GPU (arXiv 2104.04473 §3): a layer's
//     forward (backward) time is cut into n equal segments for its n TP/EP calls, each call after its
//     segment (e.g. "after attention" at half the layer, "after the MLP" at its end).
//   - parallel.tp_overlap (Megatron-LM since late 2021; Korthikanti et al. 2022 §6.2): in the backward, the
//     input-gradient TP collective of a column-parallel linear (flagged overlapsWeightGradient in the plan)
//     is issued after its segment's compute minus w and waited for after w, w = the share of the layer's
//     backward that the linear's ∂weight GEMM takes (plan.kernels.dense); the GEMM beside the NCCL kernel
//     runs on SMs − c SMs: w grows by min(w, t)·c/(SMs − c), t and c NCCL's predicted time and channels.
//   - Calls outside the layers (layer −1) belong to the embedding (first chunk: start of the forward,
//     end of the backward) or, when the call's description names the head, to the head (last chunk: end
//     of the forward, start of the backward). The head's compute is a segment of its own.
//   - ZeRO-3 / FSDP: a unit's parameter AllGather blocks the GPU before the unit's forward (backward);
//     no prefetch. Its gradient ReduceScatter goes to the GPU's communication stream after the unit's
//     backward and does not block compute.
//   - DDP (and ZeRO-1/2, FSDP hybrid replica, tied-embedding) end-of-backward calls: split into buckets
//     of plan.bucketBytes (as derivePlan resolved it: parallel::bucketBytesFor); gradients are taken as produced at a constant
//     rate over the stage's backward compute of a micro-batch (the plan has no per-layer gradient
//     bytes; the embedding's gradient, ready last in reality, is spread), and bucket i starts when the
//     first min((i+1)·bucket, M) bytes are produced — in the last micro-batch for once-per-step calls
//     (no_sync during accumulation), in every micro-batch for calls repeated per micro-batch (ZeRO-2).
//   - parallel.ddp_overlap false (Megatron-LM 2021's own DistributedDataParallel, Narayanan et al. 2021,
//     arXiv 2104.04473; megatron/model/distributed.py allreduce_gradients, called by train_step after
//     the forward-backward pass): no buckets — each end-of-backward call is one instance of its whole
//     bytes, issued to the stream after the GPU's last pipeline block (its last backward).
//   - The communication stream: one per GPU, its collectives run one after another in issue order
//     (one NCCL stream); it competes for links but does not block compute.
//   - The optimizer step (docs/model.md §7): once the GPU's blocks are done and its stream is drained
//     (gradients reduced), a compute interval of plan.kernels.optimizer.seconds (ComputePass::Optimizer;
//     the kernel model's time of the busiest GPU, used for every GPU: a simplification, stages differ by
//     their embedding or head), then the optimizer-phase calls (ZeRO-1/2 and FSDP parameter AllGather,
//     blocking). Only when the plan's times come from the kernel model (plan.kernels.timed): with a fixed
//     compute_efficiency or given layer times the step has no optimizer time, as the paper's fixed-rate
//     examples (Narayanan et al. 2021 §3) count none. The step ends on a GPU after its optimizer-phase calls.
//   - Pipeline Send/Recv: the receiver has its receive posted (Megatron's batched isend/irecv); the
//     transfer starts when the sender's block ends and does not block the sender; the receiver's block
//     waits until it has arrived. Waiting before the send started is idle (bubble), after it exposed PP.
// Outputs, per GPU (intervals recorded for chosen GPUs): compute, exposed communication by strategy
// (time the GPU's compute waits on a collective, a receive or the stream), idle = step − compute −
// exposed. Step-level figures are means over GPUs.
//
// Symmetry (SimulationOptions::exploitSymmetry, on by default; StepSimulation::symmetryFactor says whether
// it was used). When a group Γ of GPU permutations maps the whole step onto itself, the GPUs of one orbit
// do exactly the same thing at the same times, and one representative per orbit is simulated: the result
// is the full simulation's (same mathematics; floating-point sums may differ in their last bits). Γ is
// generated by shifts of the mesh coordinates — dp ↦ dp + s (mod dp), tp ↦ tp + s' (mod tp), the smallest
// step of each that passes — and a shift is used only when every condition is checked to hold:
//   - the mesh is a bijection onto dp × pp × tp coordinates; a GPU is in at most one group per call;
//   - every group of every simulated call maps to a group of the same call, one group to one image for
//     every call; a pipeline pair maps sender to sender; each schedule the call uses (every DDP bucket
//     size) is invariant, step by step, under the induced permutation of ranks (same source, destination
//     and bytes), so e.g. a ring whose chunks differ, a rooted Broadcast or a tree can refuse it;
//   - every routed path (ECMP included: routing.h; flow id 0 on switched fabrics) maps onto the image
//     transfer's path link by link with the same capacities and the same total latency, the map being
//     one permutation of links — except on links no allocation can saturate: a link l is left out of
//     this check (and of the rate allocation, where it cannot bind) when a set B of kept links of strictly smaller capacity meets
//     every path crossing l and Σ capacity(B) ≤ capacity(l) (B chosen greedily; e.g. a NIC link all of
//     whose flows cross one GPU's PCIe link). Whatever the rates, l then carries at most Σ capacity(B),
//     so the max-min allocation without l is the allocation with it. Such links keep their exact rates
//     and payloads: where every shift maps them link by link too (a path and its image have the same
//     shape and each exempt link always meets the same image — a GPU's PCIe link to its NIC), in link
//     orbits like the others; elsewhere summed over the orbits' real paths (every image routed). Explicit GPU swaps, ECMP that spreads one
//     replica's flows over NICs or spine uplinks differently from another's (where those links can
//     saturate), uneven chunks: the shift is refused, the full simulation runs (StepSimulation::reduction
//     says why). Per-node NICs are fine when the check passes (a NIC link then stands for several flows of
//     one orbit: its weight).
// The quotient: a collective instance is simulated once per orbit of groups, with one rank per orbit of its
// ranks and one flow per orbit of its transfers; a flow stands for |Γ| flows, a link for its orbit (rate
// allocation by progressive filling over links weighted by how many flows of the orbit cross them).
// Outputs are for every GPU and every link (copied from the representatives); `flows` and
// `collectiveInstances` count the full step's, simulatedFlows what was simulated. maxFlows bounds the
// simulated flows. The reference engine (simulate_p.h) never reduces.
//
// Private collectives (SimulationOptions::collapsePrivateCollectives, on by default; with symmetry the
// instance's link bins folded onto the link orbits as its payload is, and the one-rank shortcut only when
// link bins are not recorded). A link
// is private when every flow that can ever cross it (every transfer of every simulated call,
// routed) belongs to a blocking call (TP/EP, ZeRO-3 parameter AllGather, optimizer phase) and enters it as
// the first link out of one GPU, or the last link into one GPU — the same GPU for all — and no schedule
// step has that GPU send (receive) two transfers through it (e.g. a GPU's NVLink pair to the NVSwitch
// when only TP crosses NVLink). A GPU is in one blocking collective at a time and its transfers of a step
// end before its next step starts, so a private link carries at most one flow at a time. An instance all
// of whose transfers cross only private links, and in whose schedule every rank's end depends on every
// rank's arrival (AllReduce, AllGather, ReduceScatter rings…), is computed once its last rank arrives:
// each transfer runs alone at its bottleneck capacity (Σ latency + bytes / bottleneck, as a lone flow),
// starting when both ends finished their earlier steps — the engine's own rules, without flows, rate
// updates or events. Its flows count in `flows`, not in simulatedFlows; its link bins are written
// retroactively (a private link has no other traffic).

#include "linkbins.h"
#include "routing.h"
#include "fabric/topology.h"

#include "base/error.h"
#include "base/figure.h"
#include "base/progress.h"
#include "collective/binding.h"
#include "parallel/plan.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tw::network {

// Per-GPU intervals are kept for every GPU up to this many GPUs (else only SimulationOptions::recordGpus).
inline constexpr std::uint64_t kMaxRecordedGpus = 64;

struct SimulationOptions {
    bool communication = true;            // false: collectives take no time (compute and pipeline order only)
    bool protocolOverhead = true;         // link payload capacity = bandwidth · efficiency(protocol)
    double modelFlopsPerStep = 0;         // "compute.model_flops_per_step" (no recomputation); 0: no MFU
    double hardwareFlopsPerStep = 0;      // "compute.flops_per_step" (with recomputation); 0: no HFU
    double peakFlopsPerGpu = 0;           // "compute.gpu_peak_flops" (the GEMM precision's)
    std::string peakText;                 // what that peak is ("NVIDIA H100 SXM 80 GB, dense bf16 peak 989.5 TFLOP/s")
    std::vector<std::uint32_t> recordGpus; // GPUs whose intervals to keep; empty: all when ≤ kMaxRecordedGpus
    bool recordLinks = true;              // per-link payload in time bins over the whole step (linkbins.h)
    std::uint64_t maxLinkBinBytes = std::uint64_t{64} << 20; // the bins' memory for the whole step (linkbins.h)
    std::uint32_t maxLinkBins = 4096;     // bins per link at most (fewer when the budget says so)
    std::uint64_t maxFlows = std::uint64_t{1} << 31;       // refuse larger simulations with an error
    bool exploitSymmetry = true;          // simulate one GPU per orbit when exact (see "Symmetry" above)
    bool collapsePrivateCollectives = true; // private blocking collectives in closed form ("Private collectives")
    bool ncclBandwidth = true;            // NCCL's calls capped at NCCL's own bandwidth ("NCCL's bandwidth" above)
    bool operator==(const SimulationOptions&) const = default;
};

enum class Activity { Compute, Communication, Idle };

// Which compute a compute interval is: a pipeline block's forward or backward pass, or the optimizer step.
enum class ComputePass : std::uint8_t { Forward, Backward, Optimizer };

struct GpuInterval {
    double start = 0, end = 0;            // s from the start of the step
    Activity activity = Activity::Compute;
    parallel::Strategy strategy = parallel::Strategy::DP; // communication only
    // Compute only: the block's identity (stage 5's hover looks its kernels up in plan.kernels):
    // pass, micro-batch and model chunk (parallel::PipelineBlock::chunk, the virtual stage within the
    // GPU's stage); the optimizer step has micro-batch and chunk 0.
    ComputePass pass = ComputePass::Forward;
    std::uint32_t microBatch = 0, chunk = 0;
};

struct GpuTimeline {
    std::uint32_t gpu = 0;
    std::vector<GpuInterval> intervals;   // in time order; gaps are idle
};

struct GpuSummary {
    double compute = 0;                   // s of compute blocks
    parallel::PerStrategy<double> exposed{};     // s waiting on communication, per strategy (DP, PP, TP, EP)
    double idle = 0;                      // step − compute − exposed (pipeline bubble and tail)
    double finish = 0;                    // s when this GPU's step ended
    [[nodiscard]] double exposedTotal() const { return exposed[0] + exposed[1] + exposed[2] + exposed[3]; }
};

// Seconds per collective kind, indexed by the parallel::CollectiveKind's value.
using KindSeconds = parallel::PerKind;

// One strategy's calls of one collective kind in the step (network/breakdown.h computes it).
struct CollectiveBreakdownRow {
    parallel::Strategy strategy = parallel::Strategy::DP;
    parallel::CollectiveKind kind = parallel::CollectiveKind::AllReduce;
    double callsPerStep = 0;     // Σ over the plan's calls of groups × repeat (every group's call counted)
    double wireBytesPerStep = 0; // B: Σ of the calls' stepWireBytes (all groups)
    double secondsAlone = 0;     // s: on the strategy's busiest GPU, Σ repeat × stage 4's time of its calls of this kind
                                 // (stage 4's model: NCCL's for NCCL picks, α–β on collectives.bandwidth for textbook ones)
    double inFlightSeconds = 0;  // s: mean over GPUs of the time these calls were in flight in the step, overlapped or not
    double exposedSeconds = 0;   // s: mean over GPUs of the waits on this kind (0 without a simulation)
    bool operator==(const CollectiveBreakdownRow&) const = default;
};

struct StepSimulation {
    double stepSeconds = 0;               // first compute start (0) to the last GPU's end
    double computeSeconds = 0;            // mean over GPUs
    double exposedCommSeconds = 0;        // mean over GPUs
    parallel::PerStrategy<double> exposedByStrategy{}; // mean over GPUs, DP, PP, TP, EP
    parallel::PerStrategy<KindSeconds> exposedByKind{}; // the same split by collective kind (sums to exposedByStrategy)
    parallel::PerStrategy<KindSeconds> inFlightByKind{}; // mean over GPUs: time its collectives ran (from the last
                                                         // peer's arrival to its end; a pipeline transfer at its receiver)
    std::vector<CollectiveBreakdownRow> byCollective; // per strategy and kind: calls, bytes, in flight, exposed
    double idleSeconds = 0;               // mean over GPUs (bubble)
    double commShare = 0;                 // exposed / step (the paper's "AllReduce share" for DDP)
    double mfu = 0;                       // model FLOPs / (GPUs · peak · step); 0 without the inputs
    double hfu = 0;                       // the same with the recomputed FLOPs; 0 without the inputs
    std::vector<GpuSummary> gpus;         // every GPU
    std::vector<GpuTimeline> gpuTimelines; // the recorded GPUs
    LinkBins linkBins;                    // per link: payload in time bins over the whole step (when recordLinks)
    std::vector<double> linkPayloadBytes; // per LinkId: payload carried during the step
    std::uint64_t flows = 0, collectiveInstances = 0, rateUpdates = 0; // flows, instances: of the full step
    std::uint64_t simulatedFlows = 0;     // flows the engine simulated (flows / symmetryFactor when reduced)
    std::uint64_t simulatedGpus = 0;      // GPUs the engine simulated (one per orbit)
    std::uint64_t closedFormInstances = 0; // private collective instances computed without flows
    std::uint32_t symmetryFactor = 1;     // |Γ|: GPUs per orbit; 1 = full simulation
    std::string reduction;                // the symmetry used ("dp shift 1 × tp shift 1 …") or why none
    std::vector<Error> skipped;           // calls stage 4 could not schedule (left out)
    FigureSet figures;                    // "sim.*"
};

// Max-min fair rates (B/s) of flows over links of the given capacities (progressive filling, the
// simulator's own routine); a flow with an empty path gets +∞. `flowCaps` (empty: none) caps each flow's
// own rate, as "NCCL's bandwidth" does.
[[nodiscard]] std::vector<double> maxMinFairRates(const std::vector<double>& linkCapacity,
                                                  const std::vector<std::vector<LinkId>>& flowPaths,
                                                  const std::vector<double>& flowCaps = {});

// Simulates one optimizer step of `plan` on `topology` with stage 4's schedules. Errors: a pair of GPUs
// no path joins (naming them), a link of zero bandwidth on a path, a pipeline timeline without blocks,
// more flows than options.maxFlows, a stop request ("cancelled").
[[nodiscard]] Result<StepSimulation> simulateStep(const Topology& topology, const parallel::PlanDerivation& plan,
                                                  const collective::CollectiveDerivation& collectives,
                                                  const SimulationOptions& options = {}, const Progress& progress = {});

} // namespace tw::network
