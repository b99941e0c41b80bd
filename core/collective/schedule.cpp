// Stage 4: names, validation, the Schedule facade over the step generators (algorithms.cpp), and the
// three consumers that read the same generator: count() (bytes, steps, Hockney α–β time, nccl-tests
// algbw/busbw), checkSchedule() (real numbers pushed through the schedule) and the closed forms of
// docs/model.md §4 the tests compare count() against.

#include "schedule.h"

#include "algorithms_p.h"
#include "base/enumnames.h"
#include "base/units.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <unordered_set>
#include <utility>

namespace tw::collective {

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

// Limits this program schedules: 16,384 ranks (every transfer is generated: a ring AllReduce of
// 16,384 ranks is 5.4·10^8 transfers, a few seconds; 2^20 would take hours; All-to-All's N² blocks
// stay within 32-bit indices); pipelined trees and chains take at most 4,096 chunks; M < 2^53 so bytes
// stay exact in double.
constexpr u64 kMaxRanks = u64(1) << 14;
constexpr u64 kMaxPipelineChunks = 4096;
constexpr double kMaxBytes = 9007199254740992.0; // 2^53

constexpr std::array kOps{
    EnumName{Op::AllReduce, "allreduce", "AllReduce"},   EnumName{Op::ReduceScatter, "reducescatter", "ReduceScatter"},
    EnumName{Op::AllGather, "allgather", "AllGather"},   EnumName{Op::Broadcast, "broadcast", "Broadcast"},
    EnumName{Op::Reduce, "reduce", "Reduce"},            EnumName{Op::AllToAll, "alltoall", "All-to-All"},
    EnumName{Op::SendRecv, "sendrecv", "Send/Recv"},
};

constexpr std::array kAlgs{
    EnumName{Algorithm::Naive, "naive"},
    EnumName{Algorithm::ReduceBroadcast, "reduce-broadcast"},
    EnumName{Algorithm::Ring, "flat-ring"},
    EnumName{Algorithm::RecursiveDoubling, "recursive-doubling"},
    EnumName{Algorithm::Rabenseifner, "rabenseifner"},
    EnumName{Algorithm::BinaryTree, "binary-tree"},
    EnumName{Algorithm::DoubleBinaryTree, "double-binary-tree"},
    EnumName{Algorithm::Hierarchical, "hierarchical"},
    EnumName{Algorithm::RecursiveHalving, "recursive-halving"},
    EnumName{Algorithm::Bruck, "bruck"},
    EnumName{Algorithm::Pairwise, "pairwise"},
    EnumName{Algorithm::Flat, "flat"},
    EnumName{Algorithm::Binomial, "binomial"},
    EnumName{Algorithm::Chain, "chain"},
    EnumName{Algorithm::Direct, "direct"},
};

std::string I(u64 v) { return formatInteger(static_cast<std::int64_t>(v)); }

bool usesRoot(const ScheduleSpec& s)
{
    return s.op == Op::Broadcast || s.op == Op::Reduce
        || (s.op == Op::AllReduce && s.algorithm == Algorithm::ReduceBroadcast);
}

bool pipelined(const ScheduleSpec& s)
{
    return s.algorithm == Algorithm::BinaryTree || s.algorithm == Algorithm::DoubleBinaryTree
        || s.algorithm == Algorithm::Chain;
}

bool isPowerOfTwo(u64 n) { return n > 0 && (n & (n - 1)) == 0; }
double log2i(u64 n) { return static_cast<double>(std::countr_zero(n)); }
u64 ceilLog2(u64 n) { return n <= 1 ? 0 : static_cast<u64>(std::bit_width(n - 1)); }

// The checker's start values: a bijection of [0, 2^bits) (multiply by an odd constant, xor-shift,
// multiply), plus 1, so every (rank, atom) gets a distinct non-zero integer and N of them sum exactly
// in double (bits = min(40, 52 − ceil(log2 N))).
double startValue(u64 index, u32 bits)
{
    const u64 mask = (u64(1) << bits) - 1;
    u64 x = (index * 0x9E3779B97F4A7C15ull) & mask;
    x ^= x >> (bits / 2);
    x = (x * 0xBF58476D1CE4E5B9ull) & mask;
    x ^= x >> (bits / 3);
    return static_cast<double>(x + 1);
}

std::string where(u64 step) { return "step " + I(step) + ": "; }

} // namespace

std::string_view toString(Op op) { return nameOf(kOps, op); }
std::optional<Op> opFromString(std::string_view s) { return valueOf(kOps, s); }

const std::vector<Op>& allOps()
{
    static const std::vector<Op> ops = [] {
        const auto all = valuesOf(kOps);
        return std::vector<Op>(all.begin(), all.end());
    }();
    return ops;
}

std::string_view displayName(Op op) { return displayOf(kOps, op); }
std::string_view toString(Algorithm a) { return nameOf(kAlgs, a); }

std::optional<Algorithm> algorithmFromString(std::string_view s)
{
    if (const auto a = valueOf(kAlgs, s))
        return a;
    if (s == "ring") // the textbook ring's name before NCCL's ring took it (tokenwire-cli collective, Open MPI rows)
        return Algorithm::Ring;
    return std::nullopt;
}

const std::vector<Algorithm>& algorithmsFor(Op op)
{
    using A = Algorithm;
    static const std::vector<A> allReduce{A::Ring, A::Naive, A::ReduceBroadcast, A::RecursiveDoubling, A::Rabenseifner,
                                          A::BinaryTree, A::DoubleBinaryTree, A::Hierarchical};
    static const std::vector<A> reduceScatter{A::Ring, A::RecursiveHalving};
    static const std::vector<A> allGather{A::Ring, A::RecursiveDoubling, A::Bruck};
    static const std::vector<A> rooted{A::Binomial, A::Flat, A::Chain};
    static const std::vector<A> allToAll{A::Pairwise, A::Bruck};
    static const std::vector<A> sendRecv{A::Direct};
    switch (op) {
    case Op::AllReduce: return allReduce;
    case Op::ReduceScatter: return reduceScatter;
    case Op::AllGather: return allGather;
    case Op::Broadcast:
    case Op::Reduce: return rooted;
    case Op::AllToAll: return allToAll;
    case Op::SendRecv: break;
    }
    return sendRecv;
}

std::string describe(Op op, Algorithm a)
{
    using A = Algorithm;
    const bool reduce = op == Op::Reduce;
    switch (a) {
    case A::Naive: return "Direct exchange: every rank sends its whole buffer to every other rank, one partner per step (N−1 steps, N(N−1)·M in total).";
    case A::ReduceBroadcast: return "Flat reduce to the root, one rank per step, then flat broadcast from it (2(N−1) steps; the root sends and receives (N−1)·M).";
    case A::Ring:
        if (op == Op::ReduceScatter)
            return "Ring (Patarasuk & Yuan 2009): N−1 steps, each rank adds one slice from its left neighbour and passes it on; rank r ends with slice r.";
        if (op == Op::AllGather)
            return "Ring: N−1 steps, each rank forwards the slice it received last to its right neighbour ((N−1)/N·M per rank).";
        return "Ring (Patarasuk & Yuan 2009): reduce-scatter in N−1 steps, then all-gather in N−1 steps; 2(N−1)/N·M per rank.";
    case A::RecursiveDoubling:
        if (op == Op::AllGather)
            return "Recursive doubling: log2 N steps, partners at distance 1, 2, 4 … swap everything they hold; other N fold the extra ranks in and out (MPICH).";
        return "Recursive doubling: log2 N rounds in which partners at distance 1, 2, 4 … swap and add the whole buffer; other N fold the extra ranks in and out (MPICH).";
    case A::Rabenseifner: return "Rabenseifner: reduce-scatter by recursive halving, then all-gather by recursive doubling (Thakur, Rabenseifner & Gropp 2005); 2·log2 N steps, 2(N−1)/N·M per rank.";
    case A::BinaryTree: return "Binary tree (NCCL's): chunks are reduced up to the root and broadcast back down, pipelined, one message per rank and direction per step.";
    case A::DoubleBinaryTree: return "NCCL's double binary tree: two complementary trees (every rank a leaf in one), each reducing and broadcasting half of the buffer, pipelined.";
    case A::Hierarchical: return "Hierarchical (NCCL-like): ring reduce-scatter inside each node, ring AllReduce of each slice across nodes, ring all-gather inside each node.";
    case A::RecursiveHalving: return "Recursive halving (MPICH): log2 N steps, partners at distance N/2, N/4 … exchange and add half of what they hold; rank r ends with slice r.";
    case A::Bruck:
        if (op == Op::AllToAll)
            return "Bruck (1997): ceil(log2 N) steps; step k forwards every block whose distance to its destination has bit k set to the rank 2^k further on.";
        return "Bruck (1997): ceil(log2 N) steps for any N; step k each rank passes the 2^k slices it holds to the rank 2^k before it.";
    case A::Pairwise: return "Pairwise exchange: N−1 steps; step k each rank sends the block for rank r+k straight to it ((N−1)/N·M per rank).";
    case A::Flat: return reduce ? "Flat: each rank sends its buffer to the root in turn, which adds it (N−1 steps)."
                                : "Flat: the root sends its buffer to each rank in turn (N−1 steps).";
    case A::Binomial: return reduce ? "Binomial tree: ceil(log2 N) steps; each step half of the ranks still holding partial sums send them on."
                                    : "Binomial tree: ceil(log2 N) steps; every rank that has the data sends it to one more rank each step.";
    case A::Chain: return reduce ? "Pipelined chain toward the root: C chunks, C + N − 2 steps."
                                 : "Pipelined chain from the root: C chunks, C + N − 2 steps.";
    case A::Direct: return "Rank 0 sends the message to rank 1 in one step.";
    }
    return {};
}

std::vector<Error> validate(const ScheduleSpec& spec)
{
    std::vector<Error> errors;
    auto fail = [&](const char* field, std::string message) {
        Location w;
        w.field = field;
        errors.push_back(makeError(std::move(message), std::move(w)));
    };
    const auto& algs = algorithmsFor(spec.op);
    if (std::find(algs.begin(), algs.end(), spec.algorithm) == algs.end()) {
        std::string list;
        for (Algorithm a : algs)
            list += (list.empty() ? "" : ", ") + std::string(toString(a));
        fail("algorithm", std::string(toString(spec.algorithm)) + " is not an algorithm for " + std::string(displayName(spec.op))
                              + "; available: " + list);
    }
    const u64 n = spec.ranks;
    if (n == 0)
        fail("ranks", "must be at least 1, got 0");
    else if (n > kMaxRanks)
        fail("ranks", I(n) + " is more than this program schedules (" + I(kMaxRanks) + ")");
    if (spec.op == Op::SendRecv && n != 2)
        fail("ranks", "Send/Recv needs exactly 2 ranks (rank 0 sends to rank 1), got " + I(n));

    const double m = spec.bytes;
    if (std::isnan(m))
        fail("bytes", "must be a number of bytes, got NaN");
    else if (m < 0)
        fail("bytes", "must be ≥ 0, got " + formatCount(m));
    else if (!(m < kMaxBytes))
        fail("bytes", "must be below 2^53 = 9,007,199,254,740,992 B (exact in double), got " + formatCount(m, 0));
    else if (m != std::floor(m))
        fail("bytes", "must be a whole number of bytes, got " + formatCount(m, 3));

    if (usesRoot(spec) && n > 0 && spec.root >= n)
        fail("root", "rank " + I(spec.root) + " does not exist: ranks are 0 … " + I(n - 1));

    if (spec.op == Op::AllReduce && spec.algorithm == Algorithm::Hierarchical && n > 0) {
        const u64 g = spec.ranksPerNode;
        if (g > n)
            fail("ranks_per_node", I(g) + " ranks per node, but there are only " + I(n) + " ranks");
        else if (g > 0 && n % g != 0)
            fail("ranks_per_node", I(g) + " does not divide " + I(n) + " ranks: the hierarchical AllReduce needs whole nodes of "
                                       "equal size (the per-slice rings across nodes pair ranks of the same local index)");
    }
    if (pipelined(spec) && spec.pipelineChunks > kMaxPipelineChunks)
        fail("pipeline_chunks", I(spec.pipelineChunks) + " chunks: at most " + I(kMaxPipelineChunks));
    return errors;
}

struct Schedule::Impl {
    ScheduleSpec spec;
    std::unique_ptr<detail::Generator> gen;
};

Schedule::Schedule(const ScheduleSpec& spec) : m(std::make_unique<Impl>(Impl{spec, detail::makeGenerator(spec)})) {}
Schedule::~Schedule() = default;
Schedule::Schedule(Schedule&&) noexcept = default;
Schedule& Schedule::operator=(Schedule&&) noexcept = default;

bool Schedule::next(std::vector<Transfer>& step) { return m->gen->next(step); }
void Schedule::reset() { m->gen->reset(); }
std::uint64_t Schedule::stepCount() const { return m->gen->stepCount(); }
std::uint32_t Schedule::chunkCount() const { return m->gen->chunkCount(); }
Chunk Schedule::chunk(std::uint32_t index) const { return index < chunkCount() ? m->gen->chunk(index) : Chunk{}; }
const ScheduleSpec& Schedule::spec() const { return m->spec; }
std::string Schedule::phaseOf(std::uint64_t step) const { return m->gen->phaseOf(step); }
bool Schedule::sendsInput() const { return m->gen->sendsInput(); }

Counts count(const ScheduleSpec& spec, const LinkModel& link)
{
    Counts c;
    auto gen = detail::makeGenerator(spec);
    const u64 n = gen->ranks();
    c.sentPerRank.assign(n, 0);
    c.receivedPerRank.assign(n, 0);
    // Bruck All-to-All sends several blocks in one message: its step's largest message is a sum.
    const bool multi = spec.op == Op::AllToAll && spec.algorithm == Algorithm::Bruck;
    std::vector<double> message(multi ? n : 0, 0.0);
    std::vector<Transfer> step;
    double* sent = c.sentPerRank.data();
    double* received = c.receivedPerRank.data();
    while (gen->next(step)) {
        double largest = 0;
        for (const Transfer& t : step) {
            sent[t.src] += t.bytes;
            received[t.dst] += t.bytes;
            largest = std::max(largest, t.bytes);
        }
        if (multi) {
            largest = 0;
            for (const Transfer& t : step)
                largest = std::max(largest, message[t.src] += t.bytes);
            for (const Transfer& t : step)
                message[t.src] = 0;
        }
        ++c.steps;
        c.transfers += step.size();
        c.timeSeconds += link.alphaSeconds + largest / link.bandwidth; // Hockney: α + largest message / β
    }
    for (double s : c.sentPerRank) {
        c.totalBytes += s;
        c.maxRankSentBytes = std::max(c.maxRankSentBytes, s);
    }
    // nccl-tests doc/PERFORMANCE.md: algbw = M / t; busbw = algbw × factor.
    if (n > 1 && validate(spec).empty()) {
        const double N = static_cast<double>(n);
        switch (spec.op) {
        case Op::AllReduce: c.busbwFactor = 2 * (N - 1) / N; break;
        case Op::ReduceScatter:
        case Op::AllGather:
        case Op::AllToAll: c.busbwFactor = (N - 1) / N; break;
        case Op::Broadcast:
        case Op::Reduce:
        case Op::SendRecv: c.busbwFactor = 1.0; break;
        }
        if (c.timeSeconds > 0) {
            c.algbw = spec.bytes / c.timeSeconds;
            c.busbw = *c.algbw * *c.busbwFactor;
        }
    }
    return c;
}

namespace detail {

namespace {

// Plays a generator on numbered pieces and checks every step and the final state (checkGenerator).
class GeneratorCheck {
public:
    GeneratorCheck(const ScheduleSpec& spec, Generator& gen)
        : m_spec(spec), m_gen(gen), n(gen.ranks()), A(gen.atomCount()), C(gen.chunkCount()),
          bits(static_cast<u32>(std::min<u64>(40, 52 - ceilLog2(n))))
    {
    }

    // Rank r's slice r of the even N-way split must be a whole run of atoms (ReduceScatter, AllGather);
    // an All-to-All needs N² blocks.
    Status checkPieces() const
    {
        const bool slices = m_spec.op == Op::ReduceScatter || m_spec.op == Op::AllGather;
        if (slices) {
            if (A % n != 0)
                return fail("internal: " + I(A) + " pieces do not split into " + I(n) + " slices");
            const u64 per = A / n;
            for (u64 r = 0; r < n; ++r) {
                u64 b = 0;
                for (u64 a = r * per; a < (r + 1) * per; ++a)
                    b += m_gen.atomBytes(static_cast<u32>(a));
                if (b != detail::evenSize(m_gen.bytes(), n, r))
                    return fail("slice " + I(r) + " has " + I(b) + " B, the even split gives "
                                + I(detail::evenSize(m_gen.bytes(), n, r)));
            }
        }
        if (m_spec.op == Op::AllToAll && A != n * n)
            return fail("internal: All-to-All needs N² blocks, the schedule has " + I(A));
        return Ok{};
    }

    // Start state: a NaN is a piece the rank does not hold.
    void start()
    {
        m_val.assign(n * A, std::numeric_limits<double>::quiet_NaN());
        for (u64 r = 0; r < n; ++r)
            for (u64 a = 0; a < A; ++a) {
                bool holds = false;
                switch (m_spec.op) {
                case Op::AllReduce:
                case Op::ReduceScatter:
                case Op::Reduce: holds = true; break;
                case Op::AllGather: holds = a / (A / n) == r; break;
                case Op::Broadcast: holds = r == m_spec.root; break;
                case Op::SendRecv: holds = r == 0; break;
                case Op::AllToAll: holds = a / n == r; break;
                }
                if (holds)
                    m_val[r * A + a] = init(r, a);
            }
    }

    // Every step: its transfers valid (ranks, chunks, sizes, one port per rank, pieces held), then applied.
    Status play()
    {
        std::vector<Transfer> step;
        m_sendTo.assign(n, -1);
        m_recvFrom.assign(n, -1);
        u64 s = 0;
        m_gen.reset();
        for (; m_gen.next(step); ++s) {
            if (s >= m_gen.stepCount())
                return fail("the generator yields more steps than stepCount() = " + I(m_gen.stepCount()));
            if (Status st = takePayloads(s, step); !st.ok())
                return st;
            if (Status st = deliver(s, step); !st.ok())
                return st;
        }
        if (s != m_gen.stepCount())
            return fail("the generator yields " + I(s) + " steps, stepCount() says " + I(m_gen.stepCount()));
        return Ok{};
    }

    // Final state per operation.
    Status checkFinal() const
    {
        std::vector<double> sum(A, 0.0);
        for (u64 a = 0; a < A; ++a)
            for (u64 r = 0; r < n; ++r)
                sum[a] += init(r, a);
        for (u64 r = 0; r < n; ++r)
            for (u64 a = 0; a < A; ++a) {
                Status st = Ok{};
                switch (m_spec.op) {
                case Op::AllReduce: st = expect(r, a, sum[a], "the sum over all ranks"); break;
                case Op::ReduceScatter:
                    if (a / (A / n) == r)
                        st = expect(r, a, sum[a], "its slice reduced over all ranks");
                    break;
                case Op::Reduce:
                    if (r == m_spec.root)
                        st = expect(r, a, sum[a], "the root holds the sum over all ranks");
                    break;
                case Op::AllGather: st = expect(r, a, init(a / (A / n), a), "the slice of its owner"); break;
                case Op::Broadcast: st = expect(r, a, init(m_spec.root, a), "the root's data"); break;
                case Op::SendRecv:
                    if (r == 1)
                        st = expect(r, a, init(0, a), "rank 0's message");
                    break;
                case Op::AllToAll:
                    if (a % n == r)
                        st = expect(r, a, init(a / n, a), "the block its origin sent it");
                    break;
                }
                if (!st.ok())
                    return st;
            }
        return Ok{};
    }

private:
    static Status fail(std::string message) { return makeError(std::move(message)); }
    [[nodiscard]] double init(u64 r, u64 a) const { return startValue(r * A + a, bits); }
    [[nodiscard]] std::string atomName(u64 a) const { return "chunk " + I(m_gen.chunkOfAtom(static_cast<u32>(a))); }

    // Step s's transfers checked, and what each sender holds at the start of the step taken.
    Status takePayloads(u64 s, const std::vector<Transfer>& step)
    {
        m_payload.clear();
        m_start.clear();
        m_sentChunks.clear();
        const bool fromInput = m_gen.sendsInput();
        for (const Transfer& t : step) {
            if (t.src >= n || t.dst >= n)
                return fail(where(s) + "transfer " + I(t.src) + " → " + I(t.dst) + " names a rank outside 0 … " + I(n - 1));
            if (t.src == t.dst)
                return fail(where(s) + "rank " + I(t.src) + " sends chunk " + I(t.chunk) + " to itself");
            if (t.chunk >= C)
                return fail(where(s) + "rank " + I(t.src) + " sends chunk " + I(t.chunk) + ", but the table has " + I(C) + " chunks");
            const Chunk ch = m_gen.chunk(t.chunk);
            if (t.bytes != ch.bytes)
                return fail(where(s) + "rank " + I(t.src) + ", chunk " + I(t.chunk) + ": the transfer says " + formatCount(t.bytes)
                            + " B, the chunk has " + formatCount(ch.bytes) + " B");
            // Single port: one destination and one source per rank per step (several chunks between the
            // same pair form one message, as in Bruck's All-to-All, but never the same chunk twice).
            if (m_sendTo[t.src] >= 0 && m_sendTo[t.src] != std::int64_t(t.dst))
                return fail(where(s) + "rank " + I(t.src) + " sends to two ranks (" + I(u64(m_sendTo[t.src])) + " and "
                            + I(t.dst) + "): one send per rank per step");
            if (m_recvFrom[t.dst] >= 0 && m_recvFrom[t.dst] != std::int64_t(t.src))
                return fail(where(s) + "rank " + I(t.dst) + " receives from two ranks (" + I(u64(m_recvFrom[t.dst]))
                            + " and " + I(t.src) + "): one receive per rank per step");
            m_sendTo[t.src] = t.dst;
            m_recvFrom[t.dst] = t.src;
            if (!m_sentChunks.insert(u64(t.src) * C + t.chunk).second)
                return fail(where(s) + "rank " + I(t.src) + " sends chunk " + I(t.chunk) + " twice");
            // What the sender holds at the start of the step.
            m_start.push_back(m_payload.size());
            const detail::AtomRange range = m_gen.atoms(t.chunk);
            for (u64 i = 0; i < range.count; ++i) {
                const u64 a = (u64(range.first) + i) % A;
                const double v = fromInput ? init(t.src, a) : m_val[t.src * A + a];
                if (std::isnan(v))
                    return fail(where(s) + "rank " + I(t.src) + " sends chunk " + I(t.chunk) + " but does not hold its piece ("
                                + atomName(a) + ")");
                m_payload.push_back(v);
            }
        }
        return Ok{};
    }

    // Step s's payloads written (or, reducing, added) into the receivers' pieces.
    Status deliver(u64 s, const std::vector<Transfer>& step)
    {
        for (std::size_t k = 0; k < step.size(); ++k) {
            const Transfer& t = step[k];
            m_sendTo[t.src] = m_recvFrom[t.dst] = -1;
            const detail::AtomRange range = m_gen.atoms(t.chunk);
            for (u64 i = 0; i < range.count; ++i) {
                const u64 a = (u64(range.first) + i) % A;
                double& d = m_val[t.dst * A + a];
                if (t.reduce) {
                    if (std::isnan(d))
                        return fail(where(s) + "rank " + I(t.dst) + " adds chunk " + I(t.chunk)
                                    + " into a piece it does not hold (" + atomName(a) + ")");
                    d += m_payload[m_start[k] + i];
                } else {
                    d = m_payload[m_start[k] + i];
                }
            }
        }
        return Ok{};
    }

    Status expect(u64 r, u64 a, double want, const char* what) const
    {
        const double got = m_val[r * A + a];
        if (got == want)
            return Ok{};
        return fail("rank " + I(r) + ", " + atomName(a) + ": "
                    + (std::isnan(got) ? std::string("missing") : "holds " + formatCount(got, 0)) + ", expected "
                    + formatCount(want, 0) + " (" + what + ")");
    }

    const ScheduleSpec& m_spec;
    Generator& m_gen;
    const u64 n, A, C;
    const u32 bits;
    std::vector<double> m_val; // per rank and piece
    std::vector<std::int64_t> m_sendTo, m_recvFrom;
    std::vector<double> m_payload;
    std::vector<std::size_t> m_start;
    std::unordered_set<u64> m_sentChunks;
};

} // namespace

// Plays the generator on numbered pieces: the pieces split right, every step valid, the final state
// what the operation promises.
Status checkGenerator(const ScheduleSpec& spec, Generator& gen)
{
    GeneratorCheck check(spec, gen);
    if (Status st = check.checkPieces(); !st.ok())
        return st;
    check.start();
    if (Status st = check.play(); !st.ok())
        return st;
    if (Status st = check.checkFinal(); !st.ok())
        return st;
    gen.reset();
    return Ok{};
}

} // namespace detail

Status checkSchedule(const ScheduleSpec& spec)
{
    auto errors = validate(spec);
    if (!errors.empty())
        return errors.front();
    auto gen = detail::makeGenerator(spec);
    return detail::checkGenerator(spec, *gen);
}

ClosedForm closedForm(const ScheduleSpec& spec)
{
    ClosedForm f;
    if (!validate(spec).empty())
        return f;
    const u64 n = spec.ranks;
    const double N = static_cast<double>(n), M = spec.bytes;
    auto set = [&](double perRank, double total, u64 steps, std::string formula) {
        f.perRankSentBytes = perRank;
        f.totalBytes = total;
        f.steps = steps;
        f.formula = std::move(formula);
    };
    using A = Algorithm;
    const A a = spec.algorithm;
    const bool pow2 = isPowerOfTwo(n);
    switch (spec.op) {
    case Op::AllReduce:
        if (a == A::Naive)
            set((N - 1) * M, N * (N - 1) * M, n - 1, "(N−1)·M per rank, N(N−1)·M in total, N−1 steps");
        else if (a == A::ReduceBroadcast)
            set((N - 1) * M, 2 * (N - 1) * M, 2 * (n - 1), "the root sends (N−1)·M, 2(N−1)·M in total, 2(N−1) steps");
        else if (a == A::Ring)
            set(2 * (N - 1) / N * M, 2 * (N - 1) * M, 2 * (n - 1), "2(N−1)/N·M per rank, 2(N−1) steps");
        else if (a == A::RecursiveDoubling && pow2)
            set(log2i(n) * M, N * log2i(n) * M, static_cast<u64>(log2i(n)), "log2 N·M per rank, N·log2 N·M in total, log2 N steps");
        else if (a == A::Rabenseifner && pow2)
            set(2 * (N - 1) / N * M, 2 * (N - 1) * M, 2 * static_cast<u64>(log2i(n)), "2(N−1)/N·M per rank, 2·log2 N steps");
        break;
    case Op::ReduceScatter:
    case Op::AllGather:
        if (a == A::Ring)
            set((N - 1) / N * M, (N - 1) * M, n - 1, "(N−1)/N·M per rank, N−1 steps");
        else if ((a == A::RecursiveHalving || a == A::RecursiveDoubling) && pow2)
            set((N - 1) / N * M, (N - 1) * M, static_cast<u64>(log2i(n)), "(N−1)/N·M per rank, log2 N steps");
        else if (a == A::Bruck)
            set((N - 1) / N * M, (N - 1) * M, ceilLog2(n), "(N−1)/N·M per rank, ceil(log2 N) steps");
        break;
    case Op::AllToAll:
        if (a == A::Pairwise)
            set((N - 1) / N * M, (N - 1) * M, n - 1, "(N−1)/N·M per rank, N−1 steps");
        break;
    case Op::Broadcast:
        if (a == A::Flat)
            set((N - 1) * M, (N - 1) * M, n - 1, "the root sends M to each of the N−1 others, N−1 steps");
        break;
    case Op::Reduce:
        if (a == A::Flat)
            set(n > 1 ? M : 0, (N - 1) * M, n - 1, "each non-root sends M to the root, N−1 steps");
        break;
    case Op::SendRecv: set(M, M, 1, "M, one step"); break;
    }
    return f;
}

std::vector<std::string> differencesFromClosedForm(const ClosedForm& cf, const Counts& c)
{
    std::vector<std::string> out;
    auto near = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); };
    auto bytesDiff = [&](const char* what, double counted, double closed) {
        out.push_back(std::string(what) + ": counted " + formatCount(counted) + " B, closed form " + formatCount(closed)
                      + " B (" + (counted > closed ? "+" : "") + formatCount(counted - closed) + " B)");
    };
    if (cf.perRankSentBytes && !near(c.maxRankSentBytes, *cf.perRankSentBytes))
        bytesDiff("most bytes one rank sends", c.maxRankSentBytes, *cf.perRankSentBytes);
    if (cf.totalBytes && !near(c.totalBytes, *cf.totalBytes))
        bytesDiff("total bytes", c.totalBytes, *cf.totalBytes);
    if (cf.steps && c.steps != *cf.steps)
        out.push_back("steps: counted " + formatInteger(static_cast<std::int64_t>(c.steps)) + ", closed form "
                      + formatInteger(static_cast<std::int64_t>(*cf.steps)));
    return out;
}

} // namespace tw::collective
