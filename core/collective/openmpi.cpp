// What Open MPI 4.1's coll/tuned algorithms send, from this program's schedules (count()) plus the places
// where Open MPI's code differs from the textbook schedule (ompi/mca/coll/base/coll_base_*.c, v4.1.4), and
// the comparison with a measured dataset. Every mapping states its reason next to it.

#include "openmpi.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

namespace tw::collective::openmpi {

namespace embedded {
std::string_view openmpiLoopback(); // data/measurements/openmpi-loopback.json (core/CMakeLists.txt)
}

namespace {

using u64 = std::uint64_t;

struct Named {
    int id;
    std::string_view name;
};

// Open MPI 4.1.4's coll/tuned algorithm ids and names (`ompi_info --param coll tuned --level 9`).
const std::vector<Named>& namesFor(Op op)
{
    static const std::vector<Named> allReduce{{1, "basic_linear"}, {2, "nonoverlapping"}, {3, "recursive_doubling"},
                                              {4, "ring"}, {5, "segmented_ring"}, {6, "rabenseifner"}};
    static const std::vector<Named> allGather{{1, "linear"}, {2, "bruck"}, {3, "recursive_doubling"},
                                              {4, "ring"}, {5, "neighbor"}, {6, "two_proc"}};
    static const std::vector<Named> reduceScatter{{1, "non-overlapping"}, {2, "recursive_halving"}, {3, "ring"}, {4, "butterfly"}};
    static const std::vector<Named> broadcast{{1, "basic_linear"}, {2, "chain"}, {3, "pipeline"}, {4, "split_binary_tree"},
                                              {5, "binary_tree"}, {6, "binomial"}, {7, "knomial"}, {8, "scatter_allgather"},
                                              {9, "scatter_allgather_ring"}};
    static const std::vector<Named> reduce{{1, "linear"}, {2, "chain"}, {3, "pipeline"}, {4, "binary"},
                                           {5, "binomial"}, {6, "in-order_binary"}, {7, "rabenseifner"}};
    static const std::vector<Named> allToAll{{1, "linear"}, {2, "pairwise"}, {3, "modified_bruck"}, {4, "linear_sync"}, {5, "two_proc"}};
    static const std::vector<Named> none;
    switch (op) {
    case Op::AllReduce: return allReduce;
    case Op::AllGather: return allGather;
    case Op::ReduceScatter: return reduceScatter;
    case Op::Broadcast: return broadcast;
    case Op::Reduce: return reduce;
    case Op::AllToAll: return allToAll;
    case Op::SendRecv: break;
    }
    return none;
}

bool isPowerOfTwo(u64 n) { return n > 0 && (n & (n - 1)) == 0; }

// Bytes each rank sends; an adjustment edits them where Open MPI differs from the tokenwire schedule.
using Adjust = void (*)(std::vector<double>& sentPerRank, const Case& c);

// The prediction from one tokenwire schedule (count()), then `adjust` for Open MPI's documented differences.
Prediction fromSchedule(const Case& c, Algorithm a, std::string how, Adjust adjust = nullptr, std::uint32_t root = 0)
{
    Prediction p;
    p.modelled = true;
    p.spec.op = c.op;
    p.spec.algorithm = a;
    p.spec.ranks = c.ranks;
    p.spec.bytes = c.bytes;
    p.spec.root = root;
    p.how = std::move(how);
    if (!validate(p.spec).empty()) {
        p.modelled = false;
        p.how = "tokenwire cannot schedule this case: " + validate(p.spec).front().message;
        return p;
    }
    std::vector<double> sent = count(p.spec).sentPerRank;
    if (adjust)
        adjust(sent, c);
    for (double b : sent) {
        p.payloadBytes += b;
        p.maxRankSentBytes = std::max(p.maxRankSentBytes, b);
    }
    return p;
}

Prediction excluded(std::string why)
{
    Prediction p;
    p.modelled = false;
    p.how = std::move(why);
    return p;
}

} // namespace

std::optional<std::string_view> algorithmName(Op op, int id)
{
    for (const Named& n : namesFor(op))
        if (n.id == id)
            return n.name;
    return std::nullopt;
}

namespace {

// Open MPI 4.1's AllReduce algorithms (coll_tuned_allreduce_algorithm) as tokenwire schedules.
Prediction predictAllReduce(const Case& c)
{
    using A = Algorithm;
    Prediction p;
    switch (c.algorithmId) {
    case 1: // coll_base_allreduce_intra_basic_linear: basic linear reduce to rank 0, basic linear bcast.
        p = fromSchedule(c, A::ReduceBroadcast, "reduce-broadcast (root 0): linear reduce to rank 0, then linear broadcast");
        break;
    case 2:
        p = excluded("nonoverlapping is the tuned module's own reduce then bcast, each picked by the fixed decision "
                     "rules (segmented trees whose choice depends on N and M): not one schedule");
        break;
    case 3: // Same MPICH fold as tokenwire: even rank of the first 2r sends its whole buffer to rank+1, and back at the end.
        p = fromSchedule(c, A::RecursiveDoubling, "recursive-doubling with the MPICH fold of the extra ranks (same as tokenwire's)");
        break;
    case 4:
        p = fromSchedule(c, A::Ring, "ring: reduce-scatter then all-gather, blocks split by whole elements");
        break;
    case 5: // segmented_ring with segment size 0 (the forced default) computes one segment = count and runs ring.
        p = fromSchedule(c, A::Ring, "segmented_ring: the same blocks as ring (segments only pipeline them)");
        break;
    case 6:
        // coll_base_allreduce_intra_redscat_allgather: the fold exchanges halves (even sends the second half to
        // rank+1, odd the first half to rank−1: M per pair) and the odd rank sends its reduced half to the even
        // one (M/2), where tokenwire's MPICH-style fold sends the whole buffer once (M). Fold out is M in both.
        // The even rank of each pair then goes on (tokenwire's odd one does): the pair's counts swap, and the
        // even rank sends M/2 more.
        p = fromSchedule(c, A::Rabenseifner,
                         "rabenseifner; for N not a power of two Open MPI's fold sends 3M/2 per folded pair where tokenwire's sends M",
                         [](std::vector<double>& sent, const Case& k) {
                             const u64 pairs = k.ranks - std::bit_floor(k.ranks);
                             for (u64 i = 0; i < pairs; ++i) {
                                 std::swap(sent[2 * i], sent[2 * i + 1]);
                                 sent[2 * i] += k.bytes / 2;
                             }
                         });
        break;
    default: break;
    }
    return p;
}

// Open MPI 4.1's AllGather algorithms as tokenwire schedules.
Prediction predictAllGather(const Case& c)
{
    using A = Algorithm;
    const u64 n = c.ranks;
    Prediction p;
    switch (c.algorithmId) {
    case 1:
        p = excluded("linear is a gather to rank 0 then the tuned module's bcast (picked by the fixed decision rules)");
        break;
    case 2: p = fromSchedule(c, A::Bruck, "bruck: ceil(log2 N) steps, (N−1)/N·M per rank"); break;
    case 3:
        // coll_base_allgather_intra_recursivedoubling: "does not support non-power-of-two", falls back to bruck.
        if (isPowerOfTwo(n))
            p = fromSchedule(c, A::RecursiveDoubling, "recursive-doubling");
        else
            p = fromSchedule(c, A::Bruck, "recursive_doubling falls back to bruck for N not a power of two");
        break;
    case 4: p = fromSchedule(c, A::Ring, "ring"); break;
    case 5:
        // coll_base_allgather_intra_neighborexchange: odd N falls back to ring; even N sends one block then N/2 − 1
        // pairs of blocks: N − 1 blocks per rank, the bytes of ring (tokenwire has no neighbor-exchange schedule).
        p = fromSchedule(c, A::Ring, "neighbor exchange: N−1 blocks per rank like ring (odd N: Open MPI runs ring)");
        break;
    case 6:
        // two_proc is for 2 ranks (each sends its block once); Open MPI 4.1.4 fails the call on other N.
        p = n == 2 ? fromSchedule(c, A::Ring, "two_proc: each rank sends its half once")
                   : excluded("two_proc is for 2 ranks only (Open MPI fails the call on other N)");
        break;
    default: break;
    }
    return p;
}

// Open MPI 4.1's ReduceScatter algorithms as tokenwire schedules.
Prediction predictReduceScatter(const Case& c)
{
    using A = Algorithm;
    Prediction p;
    switch (c.algorithmId) {
    case 1:
        p = excluded("non-overlapping is the tuned module's reduce (fixed decision rules) then a linear scatterv");
        break;
    case 2:
        p = fromSchedule(c, A::RecursiveHalving, "recursive halving with the MPICH fold (whole buffer in, one slice out)");
        break;
    case 3: p = fromSchedule(c, A::Ring, "ring"); break;
    case 4: p = excluded("butterfly is not measured yet (tokenwire has no butterfly reduce-scatter)"); break;
    default: break;
    }
    return p;
}

// Open MPI 4.1's Broadcast algorithms as tokenwire schedules.
Prediction predictBroadcast(const Case& c)
{
    using A = Algorithm;
    // Every tree broadcast delivers the buffer once to each of the N−1 other ranks: (N−1)·M in total whatever
    // the tree; the mapped tokenwire schedule has that total (the per-rank split differs where noted).
    Prediction p;
    switch (c.algorithmId) {
    case 1: p = fromSchedule(c, A::Flat, "basic_linear: the root sends M to each rank"); break;
    case 2:
        p = fromSchedule(c, A::Chain, "chain: Open MPI runs 4 chains from the root (chain_fanout 4), tokenwire one; "
                                      "(N−1)·M in total either way");
        break;
    case 3: p = fromSchedule(c, A::Chain, "pipeline: one segmented chain"); break;
    case 4:
        p = fromSchedule(c, A::Binomial, "split_binary_tree: each half goes down one subtree, then pairs swap halves: "
                                         "(N−1)·M in total like any broadcast tree (tokenwire's binomial)");
        break;
    case 5:
        p = fromSchedule(c, A::Binomial, "binary_tree: (N−1)·M in total like any broadcast tree (tokenwire's binomial)");
        break;
    case 6: p = fromSchedule(c, A::Binomial, "binomial"); break;
    default: p = excluded("knomial and the scatter-allgather broadcasts are not measured yet"); break;
    }
    return p;
}

// Open MPI 4.1's Reduce algorithms as tokenwire schedules.
Prediction predictReduce(const Case& c)
{
    using A = Algorithm;
    const u64 n = c.ranks;
    Prediction p;
    switch (c.algorithmId) {
    case 1: p = fromSchedule(c, A::Flat, "linear: each rank sends M to the root"); break;
    case 2:
        p = fromSchedule(c, A::Chain, "chain: Open MPI runs 4 chains into the root (chain_fanout 4), tokenwire one; "
                                      "(N−1)·M in total either way");
        break;
    case 3: p = fromSchedule(c, A::Chain, "pipeline: one segmented chain"); break;
    case 4: p = fromSchedule(c, A::Binomial, "binary: (N−1)·M in total like any reduction tree (tokenwire's binomial)"); break;
    case 5: p = fromSchedule(c, A::Binomial, "binomial"); break;
    case 6:
        // coll_base_reduce_intra_in_order_binary: the tree is rooted at rank N−1 (so the operands stay in order);
        // when the root is another rank, rank N−1 sends it the result: one more M.
        p = fromSchedule(c, A::Binomial,
                         "in-order binary: a tree rooted at rank N−1, which then sends the result (M) to root 0",
                         [](std::vector<double>& sent, const Case& k) {
                             if (k.ranks > 1)
                                 sent[k.ranks - 1] += k.bytes;
                         },
                         static_cast<std::uint32_t>(n - 1));
        break;
    default: p = excluded("rabenseifner reduce is not measured yet"); break;
    }
    return p;
}

// Open MPI 4.1's All-to-All algorithms as tokenwire schedules.
Prediction predictAllToAll(const Case& c)
{
    using A = Algorithm;
    const u64 n = c.ranks;
    Prediction p;
    switch (c.algorithmId) {
    case 1: p = fromSchedule(c, A::Pairwise, "linear: each rank posts all N−1 blocks at once ((N−1)/N·M per rank, as pairwise)"); break;
    case 2: p = fromSchedule(c, A::Pairwise, "pairwise"); break;
    case 3: p = fromSchedule(c, A::Bruck, "modified_bruck: Bruck's blocks with bit k set, ceil(log2 N) steps"); break;
    case 4: p = fromSchedule(c, A::Pairwise, "linear_sync: linear with a bounded number of requests ((N−1)/N·M per rank)"); break;
    case 5:
        p = n == 2 ? fromSchedule(c, A::Pairwise, "two_proc: one exchange of M/2 each")
                   : excluded("two_proc is for 2 ranks only (Open MPI fails the call on other N)");
        break;
    default: break;
    }
    return p;
}

} // namespace

// The prediction for one measured case: Open MPI's algorithm mapped to a tokenwire schedule (with its
// documented differences), or why it is excluded.
Prediction predict(const Case& c)
{
    const auto name = algorithmName(c.op, c.algorithmId);
    if (!name) {
        Prediction p = excluded("Open MPI 4.1 has no " + std::string(toString(c.op)) + " algorithm "
                                + std::to_string(c.algorithmId));
        return p;
    }
    Prediction p;
    switch (c.op) {
    case Op::AllReduce: p = predictAllReduce(c); break;
    case Op::AllGather: p = predictAllGather(c); break;
    case Op::ReduceScatter: p = predictReduceScatter(c); break;
    case Op::Broadcast: p = predictBroadcast(c); break;
    case Op::Reduce: p = predictReduce(c); break;
    case Op::AllToAll: p = predictAllToAll(c); break;
    case Op::SendRecv: break;
    }
    p.algorithmName = std::string(*name);
    return p;
}

Result<std::vector<MeasuredRow>> parseDataset(std::string_view text)
{
    const nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded())
        return makeError("the dataset is not JSON");
    if (!doc.is_object() || !doc.contains("rows") || !doc["rows"].is_array())
        return errorAt("rows", "the dataset has no \"rows\" array");
    if (doc.value("schema", std::string()) != "tokenwire-measurements/1")
        return errorAt("schema", "expected \"tokenwire-measurements/1\"");
    std::vector<MeasuredRow> rows;
    const auto& list = doc["rows"];
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& j = list[i];
        const std::string at = "rows[" + std::to_string(i) + "]";
        auto number = [&](const char* key, double& out) -> bool {
            if (!j.contains(key) || !j[key].is_number())
                return false;
            out = j[key].get<double>();
            return std::isfinite(out) && out >= 0;
        };
        if (!j.is_object())
            return errorAt(at, "a row must be an object");
        MeasuredRow row;
        row.library = j.value("library", std::string());
        const auto op = opFromString(j.value("op", std::string()));
        if (!op)
            return errorAt(at + ".op", "unknown collective \"" + j.value("op", std::string()) + "\"");
        row.measuredCase.op = *op;
        double id = 0, ranks = 0;
        if (!number("algorithm_id", id) || id != std::floor(id))
            return errorAt(at + ".algorithm_id", "must be a whole number");
        if (!number("ranks", ranks) || ranks < 1 || ranks != std::floor(ranks) || ranks > 16384)
            return errorAt(at + ".ranks", "must be a whole number 1 … 16,384");
        row.measuredCase.algorithmId = static_cast<int>(id);
        row.measuredCase.ranks = static_cast<u64>(ranks);
        if (!number("bytes", row.measuredCase.bytes) || row.measuredCase.bytes != std::floor(row.measuredCase.bytes))
            return errorAt(at + ".bytes", "must be a whole number of bytes ≥ 0");
        if (!number("payload_bytes", row.payloadBytes))
            return errorAt(at + ".payload_bytes", "must be a number ≥ 0");
        number("lo_bytes", row.loBytes);
        number("lo_packets", row.loPackets);
        if (j.contains("retransmitted_bytes") && j["retransmitted_bytes"].is_number()) // counter noise can be < 0
            row.retransmittedBytes = j["retransmitted_bytes"].get<double>();
        number("time_seconds", row.timeSeconds);
        row.algorithmName = j.value("algorithm", std::string());
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<Comparison> compare(const std::vector<MeasuredRow>& rows)
{
    std::vector<Comparison> out;
    out.reserve(rows.size());
    for (const MeasuredRow& row : rows) {
        Comparison c;
        c.row = row;
        c.prediction = row.library == "openmpi" ? predict(row.measuredCase)
                                                : excluded("library \"" + row.library + "\" is not modelled");
        c.excluded = !c.prediction.modelled;
        if (c.prediction.modelled && c.prediction.payloadBytes > 0) {
            c.ratio = row.payloadBytes / c.prediction.payloadBytes;
            c.error = c.ratio - 1;
        }
        c.pass = c.excluded || (c.prediction.payloadBytes > 0 && std::fabs(c.error) <= kTolerance)
              || (c.prediction.payloadBytes == 0 && row.payloadBytes == 0);
        out.push_back(std::move(c));
    }
    return out;
}

std::string_view embeddedDataset() { return embedded::openmpiLoopback(); }

LoopbackHeader loopbackHeader(const std::vector<MeasuredRow>& rows)
{
    std::vector<double> perPacket;
    for (const MeasuredRow& r : rows)
        if (r.loPackets > 0 && std::isfinite(r.retransmittedBytes))
            perPacket.push_back((r.loBytes - r.payloadBytes - r.retransmittedBytes) / r.loPackets);
    LoopbackHeader out;
    out.rows = perPacket.size();
    if (perPacket.empty())
        return out;
    std::sort(perPacket.begin(), perPacket.end());
    const std::size_t n = perPacket.size();
    out.medianBytes = n % 2 ? perPacket[n / 2] : (perPacket[n / 2 - 1] + perPacket[n / 2]) / 2;
    for (double h : perPacket)
        if (std::abs(h - out.medianBytes) <= 0.5)
            ++out.exact;
    return out;
}

} // namespace tw::collective::openmpi
