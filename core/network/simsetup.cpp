#include "simengine_p.h"

#include "overhead.h"

#include "base/units.h"

#include <algorithm>
#include <cmath>

namespace tw::network::sim {

// ReduceScatter and AllGather move the same count to (from) every rank: NCCL's ncclReduceScatter and
// ncclAllGather take a per-rank count, and Megatron's distributed optimizer pads each gradient bucket to a
// multiple of the data-parallel size for this reason (megatron/core/distributed/param_and_grad_buffer.py,
// _pad_end_of_bucket_if_needed: "a constraint with the reduce_scatter op, which requires all tensors have
// equal size"). So their bytes are rounded up to a multiple of N (each chunk then ⌈M/N⌉ bytes); without it
// a bucket of M bytes, N ∤ M, has chunks a byte apart, and the schedule is not invariant under the
// rotation of the ranks (simulate.h "Symmetry"). docs/model.md §5.
const Sched* Engine::schedule(const collective::ScheduleSpec& given, std::uint32_t call)
{
    collective::ScheduleSpec spec = given;
    if ((spec.op == collective::Op::ReduceScatter || spec.op == collective::Op::AllGather) && spec.ranks > 1)
        spec.bytes = std::ceil(spec.bytes / static_cast<double>(spec.ranks)) * static_cast<double>(spec.ranks);
    const int layout = call < callLayout.size() ? callLayout[call] : -1;
    // NCCL's bandwidth for the call (simulate.h "NCCL's bandwidth"): its collectives, not its p2p path (our
    // model, not NCCL's) nor a textbook schedule. The schedule's S bytes (a DDP bucket's, or the call's) at
    // NCCL's algorithm bandwidth take S / algbw: a transfer of b bytes of its `steps` steps sends at most
    // b·steps·algbw / S.
    const collective::BoundCall* bound = call < coll.calls.size() ? &coll.calls[call] : nullptr;
    const bool capped = opt.ncclBandwidth && bound && bound->nccl && !bound->prediction.pointToPoint
                        && bound->prediction.modelBandwidth > 0 && spec.bytes > 0;
    const double algbw = capped ? bound->prediction.modelBandwidth : 0.0;
    auto [it, fresh] = scheds.try_emplace({specKey(spec, layout), algbw});
    if (fresh) {
        it->second = buildSched(spec, layout < 0 ? nullptr : &layouts[static_cast<std::size_t>(layout)],
                                static_cast<std::uint32_t>(scheds.size() - 1));
        if (capped && it->second->steps > 0) {
            it->second->capPerByte = it->second->steps * algbw / spec.bytes;
            it->second->stepLatency = bound->prediction.latencyTerm / it->second->steps;
        }
    }
    return it->second.get();
}

Status Engine::prepare()
{
    const auto& tl = plan.timeline;
    P = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, plan.plan.pp));
    chunks = static_cast<std::uint32_t>(std::max<std::size_t>(1, plan.plan.layerPartition.size()));
    V = std::max<std::uint32_t>(1, chunks / P);
    chunkFirst.assign(chunks + 1, 0);
    for (std::uint32_t c = 0; c < chunks; ++c)
        chunkFirst[c + 1] = chunkFirst[c] + (c < plan.plan.layerPartition.size() ? plan.plan.layerPartition[c] : 0);
    const std::size_t L = plan.layerForwardSeconds.size();
    layerChunk.assign(L, chunks - 1);
    for (std::uint32_t c = 0; c < chunks; ++c)
        for (std::uint64_t l = chunkFirst[c]; l < chunkFirst[c + 1] && l < L; ++l)
            layerChunk[l] = c;
    if (tl.blocks.empty())
        return errorAt("parallel", "the pipeline timeline has no blocks to simulate (too many micro-batches × stages)");
    stageBlocks.assign(P, {});
    for (std::uint32_t i = 0; i < tl.blocks.size(); ++i) {
        if (tl.blocks[i].stage >= P)
            return errorAt("parallel", "pipeline block on stage " + std::to_string(tl.blocks[i].stage) + " of " + std::to_string(P));
        stageBlocks[tl.blocks[i].stage].push_back(i);
    }
    nAcc = static_cast<std::uint32_t>(std::max<std::size_t>(1, stageBlocks[0].size() / (2 * std::size_t(V))));

    capacity.resize(topo.links().size());
    for (LinkId l = 0; l < topo.links().size(); ++l) {
        const Link& k = topo.link(l);
        capacity[l] = k.bandwidth * (opt.protocolOverhead ? efficiency(k.protocol) : 1.0);
    }
    out.linkPayloadBytes.assign(topo.links().size(), 0.0);
    links = std::make_unique<LinkRates>(topo.links().size(), opt);
    rates = makeFlowRates(reference, fs, capacity, *links, out.linkPayloadBytes, out.rateUpdates);
    return Ok{};
}

// NCCL's algorithms as flows: NVLS on one node through the NVSwitch (simulate.h "NVLS", nvlsflows.h);
// NVLS-tree across nodes (nvlsflows.h); tree AllReduces across nodes on NCCL's trees (simulate.h "NCCL trees", nccltrees.h); the ring channels of each call NCCL runs as a ring across nodes (simulate.h "NCCL channels",
// ncclchannels.h), with their NIC hints given to the router before any routing.
void Engine::planChannels()
{
    callLayout.assign(plan.comm.calls.size(), -1);
    if (!opt.communication)
        return;
    for (std::uint32_t call = 0; call < plan.comm.calls.size() && call < coll.calls.size(); ++call)
        if (auto layout = ncclLayout(topo, plan.comm, call, coll.calls[call], router)) { // simsched.h
            callLayout[call] = static_cast<int>(layouts.size());
            layouts.push_back(std::move(*layout));
        }
}

// Places each call: a blocking unit call in a chunk, a stream call, a pipeline Send/Recv, a bucketed
// end-of-backward call or an optimizer-phase call (see simulate.h).
void Engine::classify()
{
    const bool zero3 = plan.plan.sharding == Sharding::Zero3 || plan.plan.sharding == Sharding::FsdpFull
                       || plan.plan.sharding == Sharding::FsdpHybrid;
    classes.assign(plan.comm.calls.size(), {});
    for (std::size_t i = 0; i < plan.comm.calls.size(); ++i) {
        const CollectiveCall& c = plan.comm.calls[i];
        CallClass& k = classes[i];
        if (c.groupCount == 0 || c.repeat == 0 || i >= coll.calls.size() || !coll.calls[i].counted) {
            k.role = Role::Skip;
            continue;
        }
        k.backward = c.phase == model::Phase::Backward;
        if (c.phase == model::Phase::Optimizer) {
            k.role = Role::Optimizer;
        } else if (c.kind == CollectiveKind::SendRecv) {
            k.role = Role::Pp;
            k.chunk = c.layer >= 0 && std::size_t(c.layer) < layerChunk.size() ? layerChunk[std::size_t(c.layer)] : 0;
        } else if ((c.strategy == Strategy::DP && k.backward
                    && !(zero3 && (c.kind == CollectiveKind::AllGather || c.kind == CollectiveKind::ReduceScatter)))
                   || (c.strategy == Strategy::PP && c.kind == CollectiveKind::AllReduce)) {
            k.role = Role::Stream;
            k.end = true;
        } else {
            const bool head = c.layer < 0 && c.what.find("head") != std::string::npos;
            if (c.layer >= 0 && std::size_t(c.layer) < layerChunk.size()) {
                k.chunk = layerChunk[std::size_t(c.layer)];
                k.unit = 1 + static_cast<int>(std::uint64_t(c.layer) - chunkFirst[k.chunk]);
            } else if (head) {
                k.chunk = chunks - 1;
                k.unit = static_cast<int>(chunkFirst[chunks] - chunkFirst[chunks - 1]) + 1;
            } else {
                k.chunk = 0;
                k.unit = 0;
            }
            const bool zeroCall = c.strategy == Strategy::DP;
            if (zeroCall && c.kind == CollectiveKind::AllGather) {
                k.role = Role::Blocking;
                k.place = CallClass::Before;
            } else if (zeroCall) {
                k.role = Role::Stream;
                k.place = CallClass::After;
            } else {
                k.role = Role::Blocking;
                k.place = CallClass::Mid;
            }
        }
    }
}

// The schedules a call's instances use: its own, or one per distinct bucket size (as arrive() cuts them).
std::vector<const Sched*> Engine::schedulesOf(std::uint32_t call)
{
    std::vector<const Sched*> out1;
    collective::ScheduleSpec spec = coll.calls[call].spec;
    if (!classes[call].end) {
        out1.push_back(schedule(spec, call));
        return out1;
    }
    const double M = spec.bytes;
    const double bucket = bucketBytesOf(call, M);
    const std::uint32_t nb = M > 0 && bucket > 0 ? static_cast<std::uint32_t>(std::ceil(M / bucket)) : 1;
    for (std::uint32_t b = 0; b < nb; ++b) {
        spec.bytes = std::round(std::max(0.0, std::min(bucket, M - b * bucket)));
        const Sched* s = schedule(spec, call);
        if (std::find(out1.begin(), out1.end(), s) == out1.end())
            out1.push_back(s);
    }
    return out1;
}

// Symmetry (simulate.h "Symmetry", symmetry.h): none for the reference engine or when switched off.
void Engine::analyzeSymmetry()
{
    if (reference) {
        sym = Symmetry::none(plan.mesh.size(), "full simulation (reference engine)");
    } else if (!opt.exploitSymmetry) {
        sym = Symmetry::none(plan.mesh.size(), "full simulation (exploitSymmetry off)");
    } else {
        std::vector<char> simulated(classes.size(), 0);
        for (std::size_t i = 0; i < classes.size(); ++i)
            simulated[i] = classes[i].role == Role::Skip ? 0 : classes[i].role == Role::Pp ? 2 : 1;
        sym = Symmetry::analyze({topo, plan, coll, paths, capacity, simulated,
                                 [this](std::uint32_t call) { return schedulesOf(call); }});
    }
    out.reduction = sym.reduction;
    if (sym.reduced)
        out.symmetryFactor = sym.order;
}

// Private links (simulate.h "Private collectives", closedform.h).
void Engine::analyzePrivacy()
{
    std::vector<CallPrivacy> calls(classes.size(), CallPrivacy::NotRun);
    for (std::size_t i = 0; i < classes.size(); ++i)
        if (classes[i].role != Role::Skip)
            calls[i] = classes[i].role == Role::Blocking || classes[i].role == Role::Optimizer ? CallPrivacy::Blocking
                                                                                               : CallPrivacy::NonBlocking;
    priv = PrivateLinks::analyze(topo, plan, coll, paths, calls, [this](std::uint32_t call) { return schedulesOf(call); });
}

bool Engine::decideClosedForm(std::uint32_t group, const Sched& sched, GroupSched& gs)
{
    return gs.closed.decide(sched, plan.comm.groups[group].members, group, topo, paths, priv, capacity, sym,
                            opt.communication);
}

// The allocation's view of a path (PathEntry, symmetry.h); cached per routed path.
const std::vector<PathEntry>* Engine::entriesFor(const std::vector<LinkId>* path, std::uint32_t srcGpu,
                                                 std::uint32_t dstGpu, std::uint32_t group)
{
    auto [it, fresh] = entryCache.try_emplace(path);
    if (fresh) {
        auto entries = sym.pathEntries(plan, paths, *path, srcGpu, dstGpu, group, failure);
        // Without link timelines the exempt links' payload is added at the end (ExemptLoad), so the
        // allocation's entries keep only the links that constrain: a flow of an orbit of |Γ| images no
        // longer carries every image's exempt links through each rate change.
        if (!opt.recordLinks && sym.anyExempt) {
            auto load = std::make_unique<ExemptLoad>();
            const auto keep = std::stable_partition(entries.begin(), entries.end(), [](const PathEntry& e) { return e.constrains; });
            load->links.assign(keep, entries.end());
            entries.erase(keep, entries.end());
            if (!load->links.empty())
                exemptCache.emplace(path, std::move(load));
        }
        it->second = std::make_unique<std::vector<PathEntry>>(std::move(entries));
    }
    return it->second.get();
}

ExemptLoad* Engine::exemptFor(const std::vector<LinkId>* path)
{
    const auto hit = exemptCache.find(path);
    return hit == exemptCache.end() ? nullptr : hit->second.get();
}

// Per-chunk times from the timeline's blocks (the numbers plan.cpp built): forward and backward.
struct Engine::ChunkTimes {
    std::vector<double> forward, backward;
};

// One (local chunk, direction) of a GPU: its layers' time split and its calls sorted by unit and place.
struct Engine::ChunkPass {
    std::uint32_t k = 0;     // the global chunk
    bool bw = false;         // backward
    int units = 0;           // the chunk's layers + 2 (embedding side, head side)
    double sumLf = 0, headF = 0, fwdScale = 0, bwdScale = 0, chunkF = 0, chunkB = 0;
    std::vector<std::vector<Op>> before, mid, after;
    Op recv, send;
    bool haveRecv = false, haveSend = false;
};

// Participations in call order: (call, group, rank) per GPU; notes the calls stage 4 could not schedule.
Status Engine::collectParts(std::vector<std::vector<Part>>& parts)
{
    parts.assign(gpus.size(), {});
    for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i) {
        if (classes[i].role == Role::Skip) {
            const CollectiveCall& c = plan.comm.calls[i];
            if (c.groupCount && c.repeat && i < coll.calls.size() && !coll.calls[i].counted)
                out.skipped.push_back(errorAt("collectives", c.what + " is not simulated: stage 4 could not schedule it"));
            continue;
        }
        const CollectiveCall& c = plan.comm.calls[i];
        if (std::uint64_t{c.firstGroup} + c.groupCount > plan.comm.groups.size())
            return errorAt("calls[" + std::to_string(i) + "]", "groups outside the plan");
        for (std::uint32_t gr = c.firstGroup; gr < c.firstGroup + c.groupCount; ++gr) {
            const auto& members = plan.comm.groups[gr].members;
            if (members.size() != coll.calls[i].spec.ranks)
                return errorAt("calls[" + std::to_string(i) + "]", "group size differs from the schedule's ranks");
            for (std::uint32_t r = 0; r < members.size(); ++r) {
                if (members[r] >= gpus.size())
                    return errorAt("topology", "GPU " + formatInteger(members[r]) + " is not in the plan's mesh");
                parts[members[r]].push_back({i, gr, r});
            }
        }
    }
    // Under symmetry only representatives run, their participations named in canonical groups and ranks.
    if (sym.reduced)
        for (std::size_t g = 0; g < gpus.size(); ++g) {
            if (sym.gpuRep[g] != g) {
                parts[g].clear();
                continue;
            }
            for (Part& pt : parts[g]) {
                const std::uint32_t c = sym.groupCanon[pt.group];
                pt.rank = sym.rankRepOf[c][sym.rankCanon[pt.group][pt.rank]];
                pt.group = c;
            }
        }
    return Ok{};
}

// Each chunk's forward and backward time: the first block of each in the timeline.
Engine::ChunkTimes Engine::chunkTimes() const
{
    ChunkTimes t{std::vector<double>(chunks, 0.0), std::vector<double>(chunks, 0.0)};
    std::vector<char> seenF(chunks, 0), seenB(chunks, 0);
    for (const parallel::PipelineBlock& b : plan.timeline.blocks) {
        const std::uint32_t k = b.chunk * P + b.stage;
        if (k >= chunks)
            continue;
        if (b.backward && !seenB[k]) {
            t.backward[k] = b.end - b.start;
            seenB[k] = 1;
        } else if (!b.backward && !seenF[k]) {
            t.forward[k] = b.end - b.start;
            seenF[k] = 1;
        }
    }
    return t;
}

// parallel.tpOverlap (simulate.h): the share of a layer's backward (recompute included) that the
// weight-gradient GEMM of the linear behind an input-gradient TP collective takes (MLP up or QKV).
double Engine::weightGradientShare(std::uint32_t call) const
{
    const parallel::CollectiveCall& c = plan.comm.calls[call];
    const model::KernelList& list = plan.kernels.dense;
    const double total = list.backwardSeconds();
    if (!plan.plan.tpOverlap || !c.overlapsWeightGradient || total <= 0)
        return 0.0;
    const bool mlp = c.what.find("MLP") != std::string::npos;
    for (const model::Kernel& k : list.kernels)
        if (k.pass == model::KernelPass::Backward && k.name.ends_with(" ∂weight")
            && (mlp ? k.name.starts_with("MLP up") || k.name.starts_with("gate + up") : k.name.starts_with("QKV")))
            return k.seconds / total;
    return 0.0;
}

// The chunk's calls of one direction by unit and place (before, mid, after its compute), and its
// pipeline send and receive.
void Engine::sortChunkCalls(const std::vector<Part>& parts, ChunkPass& cp) const
{
    cp.before.assign(std::size_t(cp.units), {});
    cp.mid.assign(std::size_t(cp.units), {});
    cp.after.assign(std::size_t(cp.units), {});
    for (const Part& pt : parts) {
        const CallClass& cc = classes[pt.call];
        const Op o{OpKind::Blocking, 0, pt.call, pt.group, pt.rank};
        if (cc.role == Role::Pp && cc.backward == cp.bw) {
            // Forward boundary after chunk cc.chunk; backward boundary from cc.chunk+1 to cc.chunk.
            const std::uint32_t from = cp.bw ? cc.chunk + 1 : cc.chunk, to = cp.bw ? cc.chunk : cc.chunk + 1;
            if (pt.rank == 0 && from == cp.k) {
                cp.send = o;
                cp.send.kind = OpKind::Send;
                cp.haveSend = true;
            } else if (pt.rank == 1 && to == cp.k) {
                cp.recv = o;
                cp.recv.kind = OpKind::Recv;
                cp.haveRecv = true;
            }
            continue;
        }
        if ((cc.role != Role::Blocking && !(cc.role == Role::Stream && !cc.end)) || cc.chunk != cp.k
            || cc.backward != cp.bw || cc.unit < 0 || cc.unit >= cp.units)
            continue;
        Op op = o;
        if (cc.role == Role::Stream)
            op.kind = OpKind::Stream;
        (cc.place == CallClass::Before ? cp.before : cc.place == CallClass::Mid ? cp.mid : cp.after)[cc.unit].push_back(op);
    }
}

// A unit's compute of `seconds` with its mid calls between equal shares; an input-gradient TP call that
// overlaps the weight-gradient GEMM is issued before that GEMM and joined after it.
void Engine::emitMidCalls(std::vector<Op>& tmpl, const std::vector<Op>& mid, double seconds, bool bw) const
{
    const std::size_t n = mid.size();
    if (n == 0) {
        if (seconds > 0)
            tmpl.push_back({OpKind::Compute, seconds, 0, 0, 0});
        return;
    }
    for (std::size_t j = 0; j < n; ++j) {
        const double share = seconds / static_cast<double>(n);
        const Op& op = mid[j];
        const double w = bw && op.call < coll.calls.size() ? std::min(share, weightGradientShare(op.call) * seconds) : 0.0;
        if (w <= 0) {
            if (seconds > 0)
                tmpl.push_back({OpKind::Compute, share, 0, 0, 0});
            tmpl.push_back(op);
            continue;
        }
        // Issued after the ∂input GEMM, waited for after the ∂weight GEMM (w); the NCCL
        // kernel holds c of the GPU's SMs while it runs, so the GEMM beside it runs on
        // SMs − c: + min(w, t)·c/(SMs − c) (docs/compute.md, "Check per layer").
        const collective::BoundCall& bc = coll.calls[op.call];
        const double t = bc.nccl ? bc.prediction.time : bc.timeSeconds;
        const double c = bc.nccl ? static_cast<double>(bc.prediction.channels) : 0.0;
        const double sms = static_cast<double>(plan.kernels.smCount);
        const double stretch = sms > c ? std::min(w, t) * c / (sms - c) : 0.0;
        if (share - w > 0)
            tmpl.push_back({OpKind::Compute, share - w, 0, 0, 0});
        tmpl.push_back({OpKind::Async, 0, op.call, op.group, op.rank});
        tmpl.push_back({OpKind::Compute, w + stretch, 0, 0, 0});
        tmpl.push_back({OpKind::Join, 0, op.call, op.group, op.rank});
    }
}

// The template of one (local chunk, direction): the receive, each unit's calls and compute in the
// direction's order (per-layer times from layerForwardSeconds, the head on the last chunk), the send.
void Engine::emitChunkTemplate(Gpu& gpu, std::vector<Op>& tmpl, const ChunkPass& cp) const
{
    const auto& lf = plan.layerForwardSeconds;
    const bool bw = cp.bw;
    const int units = cp.units;
    if (cp.haveRecv)
        tmpl.push_back(cp.recv);
    for (int i = 0; i < units; ++i) {
        const int u = bw ? units - 1 - i : i;
        double seconds = 0;
        if (u == units - 1)
            seconds = bw ? 2 * cp.headF : cp.headF;
        else if (u > 0) {
            const std::uint64_t l = chunkFirst[cp.k] + std::uint64_t(u - 1);
            seconds = l < lf.size() ? lf[l] * (bw ? cp.bwdScale : cp.fwdScale) : 0.0;
        }
        if (cp.sumLf <= 0 && u == 1)
            seconds += bw ? cp.chunkB - 2 * cp.headF : cp.chunkF - cp.headF; // no per-layer split
        tmpl.insert(tmpl.end(), cp.before[u].begin(), cp.before[u].end());
        emitMidCalls(tmpl, cp.mid[u], seconds, bw);
        tmpl.insert(tmpl.end(), cp.after[u].begin(), cp.after[u].end());
        if (bw)
            gpu.gradTotal += seconds;
    }
    if (cp.haveSend)
        tmpl.push_back(cp.send);
}

// A representative GPU's templates: calls per (local chunk, direction, unit, place), the chunk's time
// split over layers by layerForwardSeconds; what the layers do not explain is the head (last chunk only).
void Engine::buildTemplates(Gpu& gpu, const std::vector<Part>& parts, const ChunkTimes& times) const
{
    const auto& lf = plan.layerForwardSeconds;
    gpu.templates.assign(std::size_t(V) * 2, {});
    for (std::uint32_t local = 0; local < V; ++local) {
        const std::uint32_t k = local * P + gpu.stage;
        if (k >= chunks)
            continue;
        ChunkPass cp;
        cp.k = k;
        cp.units = static_cast<int>(chunkFirst[k + 1] - chunkFirst[k]) + 2;
        for (std::uint64_t l = chunkFirst[k]; l < chunkFirst[k + 1] && l < lf.size(); ++l)
            cp.sumLf += lf[l];
        cp.chunkF = times.forward[k];
        cp.chunkB = times.backward[k];
        cp.headF = k + 1 == chunks ? std::max(0.0, cp.chunkF - cp.sumLf) : 0.0;
        cp.fwdScale = cp.sumLf > 0 ? (cp.chunkF - cp.headF) / cp.sumLf : 0.0;
        cp.bwdScale = cp.sumLf > 0 ? (cp.chunkB - 2 * cp.headF) / cp.sumLf : 0.0;
        for (int dir = 0; dir < 2; ++dir) {
            cp.bw = dir == 1;
            cp.haveRecv = cp.haveSend = false;
            sortChunkCalls(parts, cp);
            emitChunkTemplate(gpu, gpu.templates[local * 2 + dir], cp);
        }
    }
}

// Optimizer calls and end-of-backward buckets (sorted by the backward fraction that releases them).
void Engine::buildStepEnd(Gpu& gpu, const std::vector<Part>& parts) const
{
    for (const Part& pt : parts) {
        const CallClass& cc = classes[pt.call];
        if (cc.role == Role::Optimizer) {
            gpu.optimizer.push_back({OpKind::Blocking, 0, pt.call, pt.group, pt.rank});
        } else if (cc.role == Role::Stream && cc.end) {
            const CollectiveCall& c = plan.comm.calls[pt.call];
            const double M = coll.calls[pt.call].spec.bytes;
            const double bucket = bucketBytesOf(pt.call, M);
            const std::uint32_t nb = M > 0 && bucket > 0 ? static_cast<std::uint32_t>(std::ceil(M / bucket)) : 1;
            for (std::uint32_t b = 0; b < nb; ++b) {
                const double upTo = std::min(M, (b + 1) * bucket);
                gpu.buckets.push_back({M > 0 ? upTo / M : 1.0, pt.call, pt.group, pt.rank, b, c.repeat > 1});
            }
        }
    }
    std::stable_sort(gpu.buckets.begin(), gpu.buckets.end(),
                     [](const Bucket& a, const Bucket& b) { return a.fraction < b.fraction; });
    gpu.gradDone.assign(nAcc, 0.0);
    gpu.nextBucket.assign(nAcc, 0);
}

// Which GPUs keep intervals: those asked for, or every GPU of a small plan; their representatives' timelines.
void Engine::chooseRecorded()
{
    std::vector<std::uint32_t> rec = opt.recordGpus;
    if (rec.empty() && gpus.size() <= kMaxRecordedGpus)
        for (std::uint32_t g = 0; g < gpus.size(); ++g)
            rec.push_back(g);
    std::vector<char> seen(gpus.size(), 0);
    for (std::uint32_t g : rec)
        if (g < gpus.size() && !seen[g]) {
            seen[g] = 1;
            recorded.push_back(g);
            Gpu& r = gpus[sym.gpuRep[g]];
            if (r.timeline < 0) {
                r.timeline = static_cast<int>(timelines.size());
                timelines.push_back({sym.gpuRep[g], {}});
            }
        }
}

// The GPUs: their participations, each representative's op templates and step end, the recorded ones.
Status Engine::buildGpus()
{
    const std::size_t G = topo.gpuCount();
    if (plan.mesh.size() > G)
        return errorAt("topology", "the plan has " + formatInteger(static_cast<std::int64_t>(plan.mesh.size()))
                                       + " GPUs, the topology " + formatInteger(static_cast<std::int64_t>(G)));
    gpus.assign(plan.mesh.size(), {});
    for (std::size_t g = 0; g < gpus.size(); ++g)
        gpus[g].stage = plan.mesh[g].pp;
    std::vector<std::vector<Part>> parts;
    if (Status s = collectParts(parts); !s.ok())
        return s;
    const ChunkTimes times = chunkTimes();
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        if (sym.gpuRep[g] != g)
            continue;
        buildTemplates(gpus[g], parts[g], times);
        buildStepEnd(gpus[g], parts[g]);
    }
    chooseRecorded();
    return Ok{};
}

// The schedule of a call without buckets (generated on first use).
const Sched* Engine::callSched(std::uint32_t call)
{
    if (callSchedule.size() <= call)
        callSchedule.resize(plan.comm.calls.size(), nullptr);
    if (!callSchedule[call])
        callSchedule[call] = schedule(coll.calls[call].spec, call);
    return callSchedule[call];
}

// The routed transfers of (group, schedule), created on first use (with the transfers' orbits under symmetry).
GroupSched& Engine::groupSchedFor(std::uint32_t group, const Sched& sched)
{
    auto [pc, added] = pathCache.try_emplace((std::uint64_t{group} << 32) | sched.index);
    if (added) {
        pc->second.paths.resize(sched.transfers.size());
        if (sym.reduced && sym.stabilizer[group] > 1 && !sym.transferOrbits(plan, group, sched, pc->second.transferRep))
            fail(errorAt("", "internal: a schedule is not invariant under the symmetry it passed"));
    }
    return pc->second;
}

} // namespace tw::network::sim
