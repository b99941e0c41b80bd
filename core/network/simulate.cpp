#include "simulate.h"
#include "simulate_p.h"

#include "simengine_p.h"

#include "base/units.h"
#include "collective/schedule.h"

#include <algorithm>
#include <cmath>

// The engine's collective protocol and event loop (simengine_p.h): a call's instance per (call, group,
// micro-batch, bucket), its ranks arriving, entering each step when both ends of a transfer are ready,
// flows started along routed paths, ranks done; the GPUs' operations run until they wait; the loop takes
// the next event or flow end. Setup is simsetup.cpp, the summaries simsummary.cpp.

namespace tw::network {

namespace sim {

// Every rank of a private collective has arrived: each rank's done time from the step recurrence (a
// shift of the cached one when all arrived together), the payload and, when recorded, the link samples.
void Engine::evaluateClosedForm(std::uint32_t slot)
{
    Instance& inst = *instances[slot];
    const ClosedForm& gs = inst.groupSched->closed;
    const Sched& s = *inst.sched;
    if (inst.rankRep) // symmetry: every rank arrived with its orbit's representative
        for (std::uint32_t r = 0; r < s.ranks; ++r)
            inst.arrivedAt[r] = inst.arrivedAt[(*inst.rankRep)[r]];
    if (s.switchRank != kNone) // NVLS: the switch is there when the first GPU arrives
        inst.arrivedAt[s.switchRank] = *std::min_element(inst.arrivedAt.begin(), inst.arrivedAt.begin() + s.switchRank);
    const double first = inst.arrivedAt[0];
    const bool together = std::all_of(inst.arrivedAt.begin(), inst.arrivedAt.end(), [first](double a) { return a == first; });
    std::vector<double>& ready = cfReady;
    ready.assign(inst.arrivedAt.begin(), inst.arrivedAt.end());
    std::vector<std::pair<double, double>>& spans = cfSpans;
    const bool sample = opt.recordLinks && opt.communication;
    if (sample)
        spans.assign(s.transfers.size(), {0.0, 0.0});
    if (together && !sample) {
        for (std::uint32_t r = 0; r < s.ranks; ++r)
            ready[r] = first + gs.lockstep[r];
    } else {
        stepRecurrence(s, gs.duration, ready, cfScratch, sample ? &spans : nullptr);
    }
    inst.doneAt.clear();
    for (std::uint32_t r = 0; r < s.ranks; ++r)
        if (!inst.rankRep || (*inst.rankRep)[r] == r)
            inst.doneAt.push_back({std::max(ready[r], now), r});
    std::sort(inst.doneAt.begin(), inst.doneAt.end());
    inst.doneNext = 0;
    if (!sym.reduced) {
        out.flows += s.transfers.size();
        ++out.closedFormInstances;
        if (opt.communication)
            for (const auto& [l, bytes] : gs.payload)
                out.linkPayloadBytes[l] += bytes;
    } else {
        // The instance stands for sym.order / |Stab| instances; a representative link for its orbit: it gets
        // the bytes of every link l of this instance in its orbit, times |Stab(l)| / |Stab(group)|.
        const double instancesInOrbit = double(sym.order) / sym.stabilizer[inst.key.group];
        out.flows += static_cast<std::uint64_t>(s.transfers.size() * instancesInOrbit);
        out.closedFormInstances += static_cast<std::uint64_t>(instancesInOrbit);
        if (opt.communication)
            addFoldedPayload(*inst.groupSched, inst.key.group);
    }
    if (sample) {
        // Each flow alone on its links: the bottleneck rate from the end of its latency to its end.
        const std::size_t strategy = sIdx(inst.strategy);
        for (std::uint32_t t = 0; t < s.transfers.size(); ++t) {
            if (!(s.transfers[t].bytes > 0))
                continue;
            const double latency = gs.latency[t], bottleneck = gs.rate[t];
            for (LinkId l : *gs.route[t]) {
                if (!sym.reduced) {
                    links->add(l, spans[t].first + latency, spans[t].second, bottleneck, strategy);
                } else if (sym.linkRep[l] != kNone) {
                    // The orbit's instances run at the same times: the representative link gets this
                    // link's rate with ClosedForm::foldedPayload's weight |Γ| / (|orbit(l)| · |Stab(group)|).
                    const double weight = double(sym.order) / (double(sym.linkOrbitSize[l]) * sym.stabilizer[inst.key.group]);
                    links->add(sym.linkRep[l], spans[t].first + latency, spans[t].second, bottleneck * weight, strategy);
                }
            }
        }
    }
    events.push({inst.doneAt.front().first, seq++, EventType::ClosedFormRanksDone, slot});
}

void Engine::closedFormDone(std::uint32_t slot)
{
    Instance& inst = *instances[slot];
    while (inst.doneNext < inst.doneAt.size() && inst.doneAt[inst.doneNext].first <= now)
        rankDone(inst, inst.doneAt[inst.doneNext++].second);
    if (inst.doneNext < inst.doneAt.size())
        events.push({inst.doneAt[inst.doneNext].first, seq++, EventType::ClosedFormRanksDone, slot});
}

void Engine::record(std::uint32_t g, double start, double end, Activity a, Strategy s, const GpuInterval& what,
                    parallel::CollectiveKind kind)
{
    Gpu& gpu = gpus[g];
    if (a == Activity::Compute) {
        gpu.sum.compute += end - start;
    } else if (a == Activity::Communication) {
        gpu.sum.exposed[sIdx(s)] += end - start;
        kindTimes(g).exposed[sIdx(s)][std::size_t(kind)] += end - start;
    }
    if (gpu.timeline < 0 || !(end > start))
        return;
    auto& iv = timelines[std::size_t(gpu.timeline)].intervals;
    const bool same = !iv.empty() && iv.back().activity == a && iv.back().strategy == s && iv.back().end == start
                      && (a != Activity::Compute
                          || (iv.back().pass == what.pass && iv.back().microBatch == what.microBatch
                              && iv.back().chunk == what.chunk));
    if (same)
        iv.back().end = end;
    else
        iv.push_back({start, end, a, s, a == Activity::Compute ? what.pass : ComputePass::Forward,
                      a == Activity::Compute ? what.microBatch : 0, a == Activity::Compute ? what.chunk : 0});
}

// Under symmetry, one instance of a private collective stands for order / |Stab(group)| instances
// (ClosedForm::foldedPayload, folded once per (group, schedule)).
void Engine::addFoldedPayload(GroupSched& gs, std::uint32_t group)
{
    for (const auto& [rep, bytes] : gs.closed.foldedPayload(sym, group))
        out.linkPayloadBytes[rep] += bytes;
}

// The common case of a sym.reduced simulation, without an Instance: a blocking call of a private collective
// (simulate.h "Private collectives") whose group has one simulated rank (every rank in one orbit, as a
// TP group under the tp shift). Its arrival completes it, every rank arriving together with the
// representative, so the closed form reduces to the rank's lockstep time; the counts and payload are
// those evaluateClosedForm adds and the GPU's wait ends as rankDone ends it (exposed communication from
// the arrival: no peer arrives later). False (nothing done) when the call does not qualify.
bool Engine::arriveAlone(const Key& key, std::uint32_t rank, Role role)
{
    if (!sym.reduced || (role != Role::Blocking && role != Role::Optimizer) || classes[key.call].end || !priv.analyzed()
        || (opt.recordLinks && opt.communication) || sym.rankOrbits[key.group] != 1)
        return false;
    const CollectiveCall& c = plan.comm.calls[key.call];
    if (aloneCall.empty()) {
        callGroupBase.assign(plan.comm.calls.size() + 1, 0);
        for (std::uint32_t i = 0; i < plan.comm.calls.size(); ++i)
            callGroupBase[i + 1] = callGroupBase[i] + plan.comm.calls[i].groupCount;
        aloneCall.assign(callGroupBase.back(), -1);
    }
    signed char& decided = aloneCall[callGroupBase[key.call] + (key.group - c.firstGroup)];
    if (decided == 0)
        return false;
    const Sched& sched = *callSched(key.call);
    GroupSched& gs = groupSchedFor(key.group, sched);
    if (decided < 0)
        decided = decideClosedForm(key.group, sched, gs) ? 1 : 0;
    if (decided == 0 || failure)
        return false;
    const std::uint32_t rep = sym.rankRepOf[key.group][rank];
    const std::uint32_t g = sym.gpuRep[plan.comm.groups[key.group].members[rep]];
    const double instancesInOrbit = double(sym.order) / sym.stabilizer[key.group];
    out.collectiveInstances += sym.order / sym.stabilizer[key.group];
    out.flows += static_cast<std::uint64_t>(sched.transfers.size() * instancesInOrbit);
    out.closedFormInstances += static_cast<std::uint64_t>(instancesInOrbit);
    if (opt.communication)
        addFoldedPayload(gs, key.group);
    Gpu& gpu = gpus[g];
    gpu.waitStrategy = strategyOf(key.call);
    gpu.aloneKey = key;
    events.push({std::max(now + gs.closed.lockstep[rep], now), seq++, EventType::AloneDone, g});
    return true;
}

// arriveAlone's collective is done: the GPU's wait ends (rankDone's split, every peer in at the arrival).
void Engine::aloneDone(std::uint32_t g)
{
    Gpu& gpu = gpus[g];
    if (gpu.wait == Wait::Blocking && gpu.waitKey == gpu.aloneKey) {
        const double from = gpu.waitStart;
        addInFlight(g, gpu.waitStrategy, kindOf(gpu.aloneKey.call), now - from);
        record(g, from, from, Activity::Idle, gpu.waitStrategy);
        record(g, from, now, Activity::Communication, gpu.waitStrategy, {}, kindOf(gpu.aloneKey.call));
        gpu.wait = Wait::Running;
        runnable.push_back(g);
    } else {
        gpu.blockingDone = true;
    }
}

void Engine::arrive(const Key& key, std::uint32_t rank, Role role, bool ppBoth)
{
    if (!ppBoth && arriveAlone(key, rank, role))
        return;
    auto [it, fresh] = live.try_emplace(key, 0);
    if (fresh) {
        std::uint32_t slot;
        if (!freeInstances.empty()) {
            slot = freeInstances.back();
            freeInstances.pop_back();
        } else {
            slot = static_cast<std::uint32_t>(instances.size());
            instances.push_back(std::make_unique<Instance>());
        }
        it->second = slot;
        Instance& inst = *instances[slot];
        inst.key = key;
        if (classes[key.call].end) {
            collective::ScheduleSpec spec = coll.calls[key.call].spec;
            const double M = spec.bytes;
            const double bucket = bucketBytesOf(key.call, M);
            spec.bytes = std::round(std::max(0.0, std::min(bucket, M - key.bucket * bucket)));
            inst.sched = schedule(spec, key.call);
        } else {
            inst.sched = callSched(key.call);
        }
        {
            GroupSched& gs = groupSchedFor(key.group, *inst.sched);
            inst.paths = &gs.paths;
            inst.transferRep = gs.transferRep.empty() ? nullptr : &gs.transferRep;
            inst.groupSched = &gs;
        }
        // With link bins under symmetry the closed form folds its bins onto the link orbits
        // (evaluateClosedForm), as its payload.
        inst.closedForm = priv.analyzed() && (role == Role::Blocking || role == Role::Optimizer)
                          && decideClosedForm(key.group, *inst.sched, *inst.groupSched);
        inst.arrivals = 0;
        inst.doneNext = 0;
        inst.doneAt.clear();
        if (inst.closedForm)
            inst.arrivedAt.assign(inst.sched->ranks, 0.0);
        inst.rankRep = sym.reduced ? &sym.rankRepOf[key.group] : nullptr;
        const bool viaSwitch = inst.sched->switchRank != kNone; // NVLS: one more rank, the switch
        inst.rankCount = sym.reduced ? sym.rankOrbits[key.group] + (viaSwitch ? 1 : 0) : inst.sched->ranks;
        inst.members = &plan.comm.groups[key.group].members;
        inst.role = role;
        inst.strategy = strategyOf(key.call);
        inst.done.assign(inst.sched->ranks, -1);
        if (!inst.closedForm) { // a closed-form instance never enters a step
            inst.outstanding.assign(inst.sched->ranks, 0);
            inst.started.assign(inst.sched->transfers.size(), 0);
        }
        inst.ranksDone = 0;
        inst.created = now;
        inst.lastArrival = now;
        out.collectiveInstances += sym.reduced ? sym.order / sym.stabilizer[key.group] : 1;
        if (ppBoth) {
            for (std::uint32_t r = 0; r < inst.sched->ranks; ++r)
                if (r != rank && (!inst.rankRep || (*inst.rankRep)[r] == r))
                    inst.done[r] = 0;
        }
        if (viaSwitch && !inst.closedForm) { // the switch is there from the start, waiting in step 0
            inst.done[inst.sched->switchRank] = 0;
            enterStep(it->second, inst.sched->switchRank);
        }
    }
    const std::uint32_t slot = it->second;
    Instance& inst = *instances[slot];
    if (inst.done[rank] >= 0)
        return; // already arrived (a pre-posted receive)
    inst.done[rank] = 0;
    inst.lastArrival = now;
    if (inst.closedForm) {
        inst.arrivedAt[rank] = now;
        if (++inst.arrivals == inst.rankCount - (inst.sched->switchRank != kNone ? 1 : 0)) // GPUs only
            evaluateClosedForm(slot);
        return;
    }
    if (ppBoth) // the pre-posted ranks enter step 0 too
        for (std::uint32_t r = 0; r < inst.sched->ranks; ++r)
            if (r != rank && inst.done[r] == 0 && inst.outstanding[r] == 0 && (!inst.rankRep || (*inst.rankRep)[r] == r))
                enterStep(slot, r);
    enterStep(slot, rank);
}

// Rank `rank` has finished steps < done[rank]: start its transfers of that step whose other end is
// ready too; a step without transfers of its finishes at once.
void Engine::enterStep(std::uint32_t slot, std::uint32_t rank)
{
    while (true) {
        Instance& inst = *instances[slot];
        const Sched& s = *inst.sched;
        const std::int32_t k = inst.done[rank];
        if (k < 0)
            return;
        if (std::uint32_t(k) >= s.steps) {
            rankDone(inst, rank);
            return;
        }
        const std::size_t cell = std::size_t(k) * s.ranks + rank;
        const std::uint32_t b = s.rankBegin[cell], e = s.rankBegin[cell + 1];
        if (b == e) {
            ++inst.done[rank];
            continue;
        }
        inst.outstanding[rank] = e - b;
        if (rank == s.switchRank && inst.transferRep) { // symmetry: one flow per orbit of the switch's transfers
            inst.outstanding[rank] = 0;
            for (std::uint32_t i = b; i < e; ++i)
                inst.outstanding[rank] += (*inst.transferRep)[s.rankList[i]] == s.rankList[i] ? 1 : 0;
        }
        for (std::uint32_t i = b; i < e; ++i) {
            std::uint32_t t = s.rankList[i];
            const collective::Transfer& tr = s.transfers[t];
            std::uint32_t other = tr.src == rank ? tr.dst : tr.src;
            if (inst.rankRep) { // symmetry: the orbit's representatives stand for the transfer and the peer
                other = (*inst.rankRep)[other];
                if (inst.transferRep)
                    t = (*inst.transferRep)[t];
            }
            if (!inst.started[t] && inst.done[other] == k && inst.outstanding[other] > 0)
                startTransfer(slot, t);
        }
        return;
    }
}

void Engine::startTransfer(std::uint32_t slot, std::uint32_t t)
{
    Instance& inst = *instances[slot];
    inst.started[t] = 1;
    const collective::Transfer& tr = inst.sched->transfers[t];
    std::uint32_t f;
    if (!freeFlows.empty()) {
        f = freeFlows.back();
        freeFlows.pop_back();
    } else {
        f = static_cast<std::uint32_t>(fs.flows.size());
        fs.flows.emplace_back();
    }
    out.flows += sym.reduced ? sym.order : 1;
    if (++out.simulatedFlows > opt.maxFlows)
        fail(errorAt("", "the step has more than " + formatInteger(static_cast<std::int64_t>(opt.maxFlows))
                             + " fs.flows to simulate"));
    Flow& flow = fs.flows[f];
    const std::uint32_t gen = flow.gen;
    flow = Flow{};
    flow.gen = gen + 1;
    flow.instance = slot;
    flow.transfer = t;
    flow.remaining = tr.bytes;
    if (inst.sched->capPerByte > 0)
        flow.cap = tr.bytes * inst.sched->capPerByte;
    flow.strategy = static_cast<std::uint8_t>(inst.strategy);
    if (!opt.communication) {
        fs.done.push_back(f);
        return;
    }
    PathInfo& cached = (*inst.paths)[t];
    if (!cached.path) {
        const auto& members = *inst.members;
        auto path = paths.route(endpointOf(members, tr.src), endpointOf(members, tr.dst), inst.key.group);
        if (!path.ok()) {
            fail(path.error());
            fs.done.push_back(f);
            return;
        }
        double sum = 0;
        for (LinkId l : *path.value()) {
            sum += topo.link(l).latency;
            if (!(capacity[l] > 0)) {
                fail(errorAt("topology", "link " + topo.link(l).id + " has no bandwidth: the transfer from GPU "
                                             + formatInteger(endpointOf(members, tr.src)) + " to GPU " + formatInteger(endpointOf(members, tr.dst))
                                             + " cannot cross it"));
                fs.done.push_back(f);
                return;
            }
        }
        cached.path = path.value();
        cached.latency = sum;
        if (!reference) {
            cached.entries = entriesFor(cached.path, endpointOf(members, tr.src), endpointOf(members, tr.dst), inst.key.group);
            cached.exempt = exemptFor(cached.path);
        }
    }
    flow.path = cached.path;
    flow.entries = cached.entries;
    if (cached.exempt)
        cached.exempt->bytes += tr.bytes;
    const double latency = std::max(cached.latency, inst.sched->stepLatency); // NCCL's latency (simsched.h)
    if (latency > 0)
        events.push({now + latency, seq++, EventType::FlowActivates, f});
    else if (flow.remaining <= 0 || flow.path->empty())
        fs.done.push_back(f);
    else
        rates->activate(f, now);
}

void Engine::transferDone(std::uint32_t f)
{
    const std::uint32_t slot = fs.flows[f].instance, t = fs.flows[f].transfer;
    freeFlows.push_back(f);
    Instance& inst = *instances[slot];
    const collective::Transfer tr = inst.sched->transfers[t];
    for (std::uint32_t r : {tr.src, tr.dst}) {
        Instance& in = *instances[slot];
        if (in.ranksDone == in.rankCount)
            return; // released meanwhile (cannot happen before both ends are done)
        if (in.rankRep)
            r = (*in.rankRep)[r];
        if (--in.outstanding[r] == 0) {
            ++in.done[r];
            enterStep(slot, r);
        }
    }
}

void Engine::rankDone(Instance& inst, std::uint32_t rank)
{
    if (rank == inst.sched->switchRank) { // NVLS's switch: no GPU waits on it
        if (++inst.ranksDone == inst.rankCount) {
            const auto it = live.find(inst.key);
            released.push_back(it->second);
            live.erase(it);
        }
        return;
    }
    const std::uint32_t g = sym.gpuRep[(*inst.members)[rank]];
    const Key key = inst.key;
    const Role role = inst.role;
    const Strategy strategy = inst.strategy;
    const double created = inst.created;
    const double peersIn = inst.lastArrival;
    // A wait [from, now] is idle until every peer has arrived, exposed communication after.
    auto split = [&](std::uint32_t gpuId, double from, Strategy st) {
        const double ready = std::clamp(peersIn, from, now);
        record(gpuId, from, ready, Activity::Idle, st);
        record(gpuId, ready, now, Activity::Communication, st, {}, kindOf(key.call));
    };
    if (++inst.ranksDone == inst.rankCount) {
        const auto it = live.find(key);
        released.push_back(it->second);
        live.erase(it);
    }
    Gpu& gpu = gpus[g];
    switch (role) {
    case Role::Pp:
        if (rank == 1) {
            addInFlight(g, Strategy::PP, kindOf(key.call), now - created); // the transfer, counted at its receiver
            if (gpu.wait == Wait::Recv && gpu.waitKey == key) {
                // Waiting before the send started is idle (bubble), after it exposed PP.
                const double from = std::max(gpu.waitStart, created);
                record(g, gpu.waitStart, from, Activity::Idle, Strategy::PP);
                record(g, from, now, Activity::Communication, Strategy::PP);
                gpu.wait = Wait::Running;
                runnable.push_back(g);
            } else {
                ppArrived.emplace(key, created);
            }
        }
        break;
    case Role::Stream:
        addInFlight(g, strategy, kindOf(key.call), now - std::clamp(peersIn, gpu.streamStarted, now));
        gpu.streamBusy = false;
        if (gpu.wait == Wait::Drain) {
            split(g, gpu.waitStart, strategy);
            gpu.waitStart = now;
        }
        startStream(g);
        if (gpu.wait == Wait::Drain && !gpu.streamBusy && gpu.stream.empty()) {
            gpu.wait = Wait::Running;
            runnable.push_back(g);
        }
        break;
    default:
        if (gpu.wait == Wait::Blocking && gpu.waitKey == key) {
            addInFlight(g, strategy, kindOf(key.call), now - std::clamp(peersIn, gpu.waitStart, now));
            split(g, gpu.waitStart, strategy);
            gpu.wait = Wait::Running;
            runnable.push_back(g);
        } else {
            gpu.blockingDone = true;
        }
        break;
    }
}

void Engine::startStream(std::uint32_t g)
{
    Gpu& gpu = gpus[g];
    if (gpu.streamBusy || gpu.stream.empty())
        return;
    const StreamItem item = gpu.stream.front();
    gpu.stream.pop_front();
    gpu.streamBusy = true;
    gpu.streamStarted = now;
    gpu.streamStrategy = strategyOf(item.key.call);
    arrive(item.key, item.rank, Role::Stream, false);
}

// The GPU waits on a blocking collective it arrives at now (unless the collective is already done).
void Engine::arriveBlocking(Gpu& gpu, const Key& key, std::uint32_t rank, Role role)
{
    gpu.blockingDone = false;
    gpu.wait = Wait::Blocking;
    gpu.waitKey = key;
    gpu.waitStart = now;
    arrive(key, rank, role, false);
    if (gpu.blockingDone && gpu.wait == Wait::Blocking)
        gpu.wait = Wait::Running;
}

// An end-of-backward bucket into the GPU's stream (per micro-batch, or once on the last).
void Engine::enqueueBucket(std::uint32_t g, const Bucket& b, std::uint32_t mb)
{
    gpus[g].stream.push_back({Key{b.call, b.group, b.perMicroBatch ? mb : 0, b.bucket}, b.rank});
    startStream(g);
}

// A compute op starts: it runs until its end or (DDP overlap) until the next bucket's gradients are
// done, releasing the buckets already complete.
void Engine::startCompute(std::uint32_t g, Gpu& gpu, const parallel::PipelineBlock& b, const Op& o)
{
    if (gpu.opLeft < 0)
        gpu.opLeft = o.seconds;
    double run = gpu.opLeft;
    if (b.backward && !gpu.buckets.empty() && plan.plan.ddpOverlap) {
        const std::uint32_t mb = b.microBatch;
        const double tol = 1e-12 * gpu.gradTotal;
        while (gpu.nextBucket[mb] < gpu.buckets.size()) {
            const Bucket& bk = gpu.buckets[gpu.nextBucket[mb]];
            if (!bucketApplies(bk, mb)) {
                ++gpu.nextBucket[mb];
                continue;
            }
            const double need = bk.fraction * gpu.gradTotal - gpu.gradDone[mb];
            if (need <= tol) {
                ++gpu.nextBucket[mb];
                enqueueBucket(g, bk, mb);
                continue;
            }
            if (need < run - tol)
                run = need;
            break;
        }
    }
    gpu.curRun = run;
    gpu.wait = Wait::Compute;
    gpu.waitStart = now;
    events.push({now + run, seq++, EventType::ComputeDone, g});
}

// One op of the current block: compute, a blocking, async or streamed collective, a join, a pipeline
// send or receive. False when the GPU now waits.
bool Engine::runOp(std::uint32_t g, Gpu& gpu, const parallel::PipelineBlock& b, const Op& o)
{
    const Key key{o.call, o.group, b.microBatch, 0};
    switch (o.kind) {
    case OpKind::Compute:
        startCompute(g, gpu, b, o);
        return false;
    case OpKind::Blocking:
        ++gpu.op;
        arriveBlocking(gpu, key, o.rank, Role::Blocking);
        return true;
    case OpKind::Async: // the collective runs while the next compute op does (Join waits for it)
        ++gpu.op;
        gpu.blockingDone = false;
        arrive(key, o.rank, Role::Blocking, false);
        return true;
    case OpKind::Join:
        ++gpu.op;
        if (!gpu.blockingDone) {
            gpu.wait = Wait::Blocking;
            gpu.waitKey = key;
            gpu.waitStart = now;
        }
        return true;
    case OpKind::Stream:
        ++gpu.op;
        gpu.stream.push_back({key, o.rank});
        startStream(g);
        return true;
    case OpKind::Send:
        ++gpu.op;
        arrive(key, o.rank, Role::Pp, true);
        return true;
    case OpKind::Recv:
        ++gpu.op;
        if (auto hit = ppArrived.find(key); hit != ppArrived.end()) {
            ppArrived.erase(hit);
            return true;
        }
        gpu.wait = Wait::Recv;
        gpu.waitKey = key;
        gpu.waitStart = now;
        return false;
    }
    return true;
}

// After the GPU's blocks: the buckets left behind, the stream drained, the optimizer step's compute and
// its collectives, then done. False when the GPU now waits or is done.
bool Engine::runStepEnd(std::uint32_t g, Gpu& gpu)
{
    if (!gpu.blocksDone) {
        gpu.blocksDone = true;
        // Buckets whose threshold rounding left them behind go now.
        for (std::uint32_t mb = 0; mb < nAcc; ++mb)
            for (; gpu.nextBucket[mb] < gpu.buckets.size(); ++gpu.nextBucket[mb])
                if (bucketApplies(gpu.buckets[gpu.nextBucket[mb]], mb))
                    enqueueBucket(g, gpu.buckets[gpu.nextBucket[mb]], mb);
        return true;
    }
    if (gpu.streamBusy || !gpu.stream.empty()) {
        gpu.wait = Wait::Drain;
        gpu.waitStart = now;
        return false;
    }
    if (!gpu.optimizerStepped) { // the optimizer step's compute (simulate.h)
        gpu.optimizerStepped = true;
        const double seconds = plan.kernels.timed ? plan.kernels.optimizer.seconds : 0.0;
        if (seconds > 0) {
            gpu.inOptimizer = true;
            gpu.wait = Wait::Compute;
            gpu.waitStart = now;
            events.push({now + seconds, seq++, EventType::ComputeDone, g});
            return false;
        }
    }
    if (gpu.optIdx < gpu.optimizer.size()) {
        const Op& o = gpu.optimizer[gpu.optIdx++];
        arriveBlocking(gpu, Key{o.call, o.group, 0, 0}, o.rank, Role::Optimizer);
        return true;
    }
    gpu.wait = Wait::Done;
    gpu.sum.finish = now;
    return false;
}

// Runs GPU g until it waits: its blocks' ops in order, then the step's end.
void Engine::runGpu(std::uint32_t g)
{
    Gpu& gpu = gpus[g];
    const auto& blocks = plan.timeline.blocks;
    const auto& order = stageBlocks[gpu.stage];
    while (gpu.wait == Wait::Running && !failure) {
        if (!gpu.blocksDone && gpu.block < order.size()) {
            const parallel::PipelineBlock& b = blocks[order[gpu.block]];
            const std::vector<Op>& tmpl = gpu.templates[std::size_t(b.chunk) * 2 + (b.backward ? 1 : 0)];
            if (gpu.op >= tmpl.size()) {
                ++gpu.block;
                ++blocksFinished;
                gpu.op = 0;
                continue;
            }
            if (!runOp(g, gpu, b, tmpl[gpu.op]))
                return;
            continue;
        }
        if (!runStepEnd(g, gpu))
            return;
    }
}

void Engine::computeDone(std::uint32_t g)
{
    Gpu& gpu = gpus[g];
    if (gpu.inOptimizer) {
        gpu.inOptimizer = false;
        GpuInterval what;
        what.pass = ComputePass::Optimizer;
        record(g, gpu.waitStart, now, Activity::Compute, Strategy::DP, what);
        gpu.wait = Wait::Running;
        runnable.push_back(g);
        return;
    }
    const parallel::PipelineBlock& b = plan.timeline.blocks[stageBlocks[gpu.stage][gpu.block]];
    GpuInterval what;
    what.pass = b.backward ? ComputePass::Backward : ComputePass::Forward;
    what.microBatch = b.microBatch;
    what.chunk = b.chunk;
    record(g, gpu.waitStart, now, Activity::Compute, Strategy::DP, what);
    if (b.backward)
        gpu.gradDone[b.microBatch] += gpu.curRun;
    gpu.opLeft -= gpu.curRun;
    if (gpu.opLeft <= 1e-12 * std::max(gpu.curRun, gpu.gradTotal)) {
        gpu.opLeft = -1;
        ++gpu.op;
    }
    gpu.wait = Wait::Running;
    runnable.push_back(g);
}

void Engine::drain()
{
    while ((!fs.done.empty() || !runnable.empty()) && !failure) {
        while (!fs.done.empty()) {
            const std::uint32_t f = fs.done.back();
            fs.done.pop_back();
            transferDone(f);
            freeInstances.insert(freeInstances.end(), released.begin(), released.end());
            released.clear();
        }
        while (!runnable.empty() && fs.done.empty()) {
            const std::uint32_t g = runnable.front();
            runnable.pop_front();
            runGpu(g);
            freeInstances.insert(freeInstances.end(), released.begin(), released.end());
            released.clear();
        }
    }
}

Result<StepSimulation> Engine::run()
{
    if (Status s = prepare(); !s.ok())
        return s.error();
    planChannels();
    classify();
    analyzeSymmetry();
    if (!reference && opt.collapsePrivateCollectives)
        analyzePrivacy();
    if (Status s = buildGpus(); !s.ok())
        return s.error();
    if (failure)
        return *failure;
    for (std::uint32_t g = 0; g < gpus.size(); ++g)
        if (sym.gpuRep[g] == g) {
            runnable.push_back(g);
            ++out.simulatedGpus;
        }
    std::uint64_t iterations = 0;
    const double totalBlocks = static_cast<double>(plan.timeline.blocks.size());
    while (true) {
        drain();
        if (failure)
            return *failure;
        if (fs.changed) {
            rates->recompute(now);
            fs.changed = false;
        }
        const double tFlow = rates->nextFinish();
        const double tEvent = events.empty() ? kInf : events.top().time;
        const double t = std::min(tFlow, tEvent);
        if (t == kInf)
            break;
        rates->advance(now, t);
        now = t;
        while (!events.empty() && events.top().time <= now) {
            const Event e = events.top();
            events.pop();
            switch (e.type) {
            case EventType::ComputeDone:
                computeDone(e.id);
                break;
            case EventType::ClosedFormRanksDone:
                closedFormDone(e.id);
                break;
            case EventType::AloneDone:
                aloneDone(e.id);
                break;
            case EventType::FlowActivates: {
                Flow& fl = fs.flows[e.id];
                if (fl.remaining <= 0 || fl.path->empty())
                    fs.done.push_back(e.id);
                else
                    rates->activate(e.id, now);
                break;
            }
            }
        }
        if ((++iterations & 1023) == 0) {
            if (progress.stopRequested())
                return errorAt("", "cancelled");
            const double doneBlocks = static_cast<double>(blocksFinished);
            progress(std::min(0.99, doneBlocks / std::max(1.0, totalBlocks * static_cast<double>(out.simulatedGpus) / P)));
        }
    }
    if (progress.stopRequested())
        return errorAt("", "cancelled");
    rates->settle(now);
    for (std::uint32_t g = 0; g < gpus.size(); ++g)
        if (sym.gpuRep[g] == g && gpus[g].wait != Wait::Done)
            return errorAt("", "the simulation stalled: GPU " + formatInteger(g)
                                   + " waits on a collective its peers never reach (an inconsistent plan)");
    progress(1.0);
    summarize();
    return std::move(out);
}

} // namespace sim

Result<StepSimulation> simulateStep(const Topology& topology, const parallel::PlanDerivation& plan,
                                    const collective::CollectiveDerivation& collectives, const SimulationOptions& options,
                                    const Progress& progress)
{
    if (progress.stopRequested())
        return errorAt("", "cancelled");
    sim::Engine engine(topology, plan, collectives, options, progress, false);
    return engine.run();
}

Result<StepSimulation> simulateStepReference(const Topology& topology, const parallel::PlanDerivation& plan,
                                             const collective::CollectiveDerivation& collectives,
                                             const SimulationOptions& options, const Progress& progress)
{
    if (progress.stopRequested())
        return errorAt("", "cancelled");
    sim::Engine engine(topology, plan, collectives, options, progress, true);
    return engine.run();
}

} // namespace tw::network
