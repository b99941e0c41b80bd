// Why ~800 lines: one step generator per (operation, algorithm) pair, each a few dozen lines; the
// generators share the rank arithmetic below and are chosen in one switch near the end (makeGenerator).
// Stage 4: the step generators, one per (operation, algorithm), under the single-port convention of
// the MPICH analyses (Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
// Operations in MPICH", IJHPCA 2005): in one step a rank sends at most one message and receives at
// most one. Stateless generators compute step s directly in O(N) (O(N²/2) blocks for Bruck
// All-to-All); the pipelined trees are list-scheduled step by step with O(N) state.

#include "algorithms_p.h"

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

namespace tw::collective::detail {

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

u32 U(u64 v) { return static_cast<u32>(v); }

// ceil(log2 n) for n ≥ 1.
u64 ceilLog2(u64 n) { return n <= 1 ? 0 : static_cast<u64>(std::bit_width(n - 1)); }

// Step s of up to two phases of n − 1 steps each (those that run): the first's name, then the
// second's; empty past the end.
std::string twoPhases(u64 s, u64 n, bool first, bool second, const char* firstName, const char* secondName)
{
    if (s >= (u64(first) + u64(second)) * (n - 1))
        return {};
    return first && s < n - 1 ? firstName : secondName;
}

// The power-of-two core of an MPICH fold (Thakur et al. 2005 §4.1): p' = largest power of two ≤ N,
// rem = N − p'; ranks 2i and 2i+1 (i < rem) pair up, the odd one stands for both as new rank i;
// new rank i ≥ rem is old rank i + rem.
struct Fold {
    u64 p = 1, rem = 0, lg = 0;
    explicit Fold(u64 n) : p(std::bit_floor(n)), rem(n - std::bit_floor(n)), lg(static_cast<u64>(std::countr_zero(std::bit_floor(n)))) {}
    [[nodiscard]] u64 old(u64 newRank) const { return newRank < rem ? 2 * newRank + 1 : newRank + rem; }
    // The first of the original ranks' slices new rank i stands for (i = p gives N).
    [[nodiscard]] u64 firstSlice(u64 newRank) const { return newRank < rem ? 2 * newRank : newRank + rem; }
    // Step s of `steps` (the fold's extra first and last included when rem > 0): "" past the end,
    // "fold in" / "fold out" at those two, else `core`.
    [[nodiscard]] std::string phase(u64 s, u64 steps, const char* core) const
    {
        if (s >= steps)
            return {};
        if (rem && (s == 0 || s + 1 == steps))
            return s == 0 ? "fold in" : "fold out";
        return core;
    }
};

class EmptyGen final : public Generator {
public:
    using Generator::Generator;
    u64 stepCount() const override { return 0; }
    std::string phaseOf(u64) const override { return {}; }
    u32 atomCount() const override { return 1; }
    u32 chunkCount() const override { return 0; }
    AtomRange atoms(u32) const override { return {0, 1}; }
};

// One chunk: the whole buffer (naive, reduce-broadcast, recursive doubling, flat, binomial, send/recv).
class WholeBufferGen : public Generator {
public:
    using Generator::Generator;
    u32 atomCount() const override { return 1; }
    u32 chunkCount() const override { return 1; }
    AtomRange atoms(u32) const override { return {0, 1}; }
};

// AllReduce by direct exchange: step k = 1…N−1, rank r sends its own buffer to (r+k) mod N, which adds
// it into its result (docs/model.md: N(N−1)·M in total).
class NaiveGen final : public WholeBufferGen {
public:
    using WholeBufferGen::WholeBufferGen;
    u64 stepCount() const override { return m_n - 1; }
    std::string phaseOf(u64 s) const override { return s < stepCount() ? "direct exchange" : ""; }
    bool sendsInput() const override { return true; }

protected:
    void emitStep(u64 s, std::vector<Transfer>& out) const override
    {
        for (u64 r = 0; r < m_n; ++r)
            out.push_back(transfer(r, (r + s + 1) % m_n, 0, true));
    }
};

// Flat: each other rank sends to the root in turn (reduce), then the root sends to each in turn
// (broadcast); reduce-broadcast AllReduce is both, 2(N−1) steps.
class FlatGen final : public WholeBufferGen {
public:
    FlatGen(const ScheduleSpec& spec, bool reduce, bool broadcast) : WholeBufferGen(spec), m_reduce(reduce), m_bcast(broadcast) {}
    u64 stepCount() const override { return (m_reduce + m_bcast) * (m_n - 1); }
    std::string phaseOf(u64 s) const override { return twoPhases(s, m_n, m_reduce, m_bcast, "reduce", "broadcast"); }

protected:
    void emitStep(u64 s, std::vector<Transfer>& out) const override
    {
        const u64 root = m_spec.root;
        if (m_reduce && s < m_n - 1)
            out.push_back(transfer((root + s + 1) % m_n, root, 0, true));
        else
            out.push_back(transfer(root, (root + (m_reduce ? s - (m_n - 1) : s) + 1) % m_n, 0, false));
    }

private:
    bool m_reduce, m_bcast;
};

// Binomial tree (MPICH): relative rank v = (r − root) mod N. Broadcast step k: v < 2^k sends to v + 2^k;
// Reduce step k: v ≡ 2^k (mod 2^(k+1)) sends its subtree's sum to v − 2^k. ceil(log2 N) steps.
class BinomialGen final : public WholeBufferGen {
public:
    BinomialGen(const ScheduleSpec& spec, bool reduce) : WholeBufferGen(spec), m_reduce(reduce) {}
    u64 stepCount() const override { return ceilLog2(m_n); }
    std::string phaseOf(u64 s) const override { return s < stepCount() ? (m_reduce ? "reduce" : "broadcast") : ""; }

protected:
    void emitStep(u64 k, std::vector<Transfer>& out) const override
    {
        const u64 root = m_spec.root, d = u64(1) << k;
        auto rank = [&](u64 v) { return (v + root) % m_n; };
        if (m_reduce) {
            for (u64 v = d; v < m_n; v += 2 * d)
                out.push_back(transfer(rank(v), rank(v - d), 0, true));
        } else {
            for (u64 v = 0; v < d && v + d < m_n; ++v)
                out.push_back(transfer(rank(v), rank(v + d), 0, false));
        }
    }

private:
    bool m_reduce;
};

// Recursive doubling AllReduce (Thakur et al. 2005 §4.1): fold the extra ranks in, log2 p' rounds in
// which new rank i swaps its whole buffer with i XOR 2^k and both add, fold out.
class RecursiveDoublingGen final : public WholeBufferGen {
public:
    explicit RecursiveDoublingGen(const ScheduleSpec& spec) : WholeBufferGen(spec), m_f(m_n) {}
    u64 stepCount() const override { return m_f.lg + (m_f.rem ? 2 : 0); }
    std::string phaseOf(u64 s) const override { return m_f.phase(s, stepCount(), "recursive doubling"); }

protected:
    void emitStep(u64 s, std::vector<Transfer>& out) const override
    {
        if (m_f.rem && s == 0) {
            for (u64 i = 0; i < m_f.rem; ++i)
                out.push_back(transfer(2 * i, 2 * i + 1, 0, true));
            return;
        }
        if (m_f.rem && s + 1 == stepCount()) {
            for (u64 i = 0; i < m_f.rem; ++i)
                out.push_back(transfer(2 * i + 1, 2 * i, 0, false));
            return;
        }
        const u64 mask = u64(1) << (s - (m_f.rem ? 1 : 0));
        for (u64 i = 0; i < m_f.p; ++i)
            out.push_back(transfer(m_f.old(i), m_f.old(i ^ mask), 0, true));
    }

private:
    Fold m_f;
};

// Ring (Patarasuk & Yuan 2009): N slices; reduce-scatter step s, rank r sends slice (r − s − 1) mod N
// to r + 1 which adds it (rank r ends with slice r); all-gather step s, rank r sends slice (r − s) mod N.
class RingGen final : public Generator {
public:
    RingGen(const ScheduleSpec& spec, bool rs, bool ag) : Generator(spec), m_rs(rs), m_ag(ag) {}
    u64 stepCount() const override { return (m_rs + m_ag) * (m_n - 1); }
    std::string phaseOf(u64 s) const override { return twoPhases(s, m_n, m_rs, m_ag, "reduce-scatter", "all-gather"); }
    u32 atomCount() const override { return U(m_n); }
    u32 chunkCount() const override { return U(m_n); }
    AtomRange atoms(u32 c) const override { return {c, 1}; }

protected:
    void emitStep(u64 s, std::vector<Transfer>& out) const override
    {
        const bool reduce = m_rs && s < m_n - 1;
        const u64 shift = reduce ? s + 1 : (m_rs ? s - (m_n - 1) : s); // slice = r − shift (mod N)
        const u64 base = m_bytes / m_n, extra = m_bytes % m_n;
        out.resize(m_n);
        Transfer* t = out.data();
        u64 c = m_n - shift; // slice of rank 0, then +1 per rank (mod N)
        if (c >= m_n)
            c -= m_n;
        for (u64 r = 0; r < m_n; ++r) {
            t[r] = Transfer{U(r), U(r + 1 == m_n ? 0 : r + 1), U(c), static_cast<double>(base + (c < extra)), reduce};
            if (++c == m_n)
                c = 0;
        }
    }

private:
    bool m_rs, m_ag;
};

// Recursive halving / doubling on the folded power-of-two core. Chunks 0…2p'−2 are the nodes of a
// segment tree over the p' new ranks (heap index h = chunk + 1; the root is the whole buffer).
// Rabenseifner (AllReduce): atoms = p' pieces; fold in (whole buffer, reduce), reduce-scatter by
// recursive halving (distance p'/2 first: new rank i keeps the half holding its piece), all-gather by
// recursive doubling, fold out. ReduceScatter: atoms = the N slices (new rank i stands for its
// original ranks' slices, MPICH's reduce_scatter), fold in, halving, then odd rank 2i+1 sends slice 2i
// back to 2i (chunks 2p'−1+j are the single slices). AllGather: even rank 2i sends its slice to 2i+1,
// recursive doubling, fold out.
class HalvingDoublingGen final : public Generator {
public:
    enum class Mode { Rabenseifner, ReduceScatter, AllGather };
    HalvingDoublingGen(const ScheduleSpec& spec, Mode mode) : Generator(spec), m_mode(mode), m_f(m_n) {}
    u64 stepCount() const override
    {
        return (m_mode == Mode::Rabenseifner ? 2 : 1) * m_f.lg + (m_f.rem ? 2 : 0);
    }
    std::string phaseOf(u64 s) const override
    {
        const u64 k = s - (m_f.rem && s > 0 ? 1 : 0);
        const bool halving = m_mode == Mode::ReduceScatter || (m_mode == Mode::Rabenseifner && k < m_f.lg);
        return m_f.phase(s, stepCount(), halving ? "reduce-scatter (recursive halving)" : "all-gather (recursive doubling)");
    }
    u32 atomCount() const override { return U(m_mode == Mode::Rabenseifner ? m_f.p : m_n); }
    u32 chunkCount() const override { return U(2 * m_f.p - 1 + (m_mode == Mode::Rabenseifner ? 0 : m_n)); }
    AtomRange atoms(u32 c) const override
    {
        if (c >= 2 * m_f.p - 1)
            return {U(c - (2 * m_f.p - 1)), 1};
        const u64 h = u64(c) + 1;
        const u64 level = static_cast<u64>(std::bit_width(h)) - 1;
        const u64 width = m_f.p >> level, lo = (h - (u64(1) << level)) * width, hi = lo + width;
        if (m_mode == Mode::Rabenseifner)
            return {U(lo), U(width)};
        return {U(m_f.firstSlice(lo)), U(m_f.firstSlice(hi) - m_f.firstSlice(lo))};
    }
    u32 chunkOfAtom(u32 a) const override
    {
        return m_mode == Mode::Rabenseifner ? U(m_f.p + a - 1) : U(2 * m_f.p - 1 + a);
    }

protected:
    void emitStep(u64 s, std::vector<Transfer>& out) const override
    {
        const u64 p = m_f.p, lg = m_f.lg;
        if (m_f.rem && s == 0) { // fold in
            for (u64 i = 0; i < m_f.rem; ++i) {
                if (m_mode == Mode::AllGather)
                    out.push_back(transfer(2 * i, 2 * i + 1, U(2 * p - 1 + 2 * i), false));
                else
                    out.push_back(transfer(2 * i, 2 * i + 1, 0, true));
            }
            return;
        }
        if (m_f.rem && s + 1 == stepCount()) { // fold out
            for (u64 i = 0; i < m_f.rem; ++i)
                out.push_back(transfer(2 * i + 1, 2 * i, m_mode == Mode::ReduceScatter ? U(2 * p - 1 + 2 * i) : 0, false));
            return;
        }
        const u64 k = s - (m_f.rem ? 1 : 0);
        const bool halving = m_mode == Mode::ReduceScatter || (m_mode == Mode::Rabenseifner && k < lg);
        if (halving) {
            const u64 mask = p >> (k + 1);
            for (u64 i = 0; i < p; ++i) {
                const u64 partner = i ^ mask;
                const u64 node = (p + partner) >> (lg - k - 1); // the half that holds the partner's piece
                out.push_back(transfer(m_f.old(i), m_f.old(partner), U(node - 1), true));
            }
        } else {
            const u64 j = m_mode == Mode::Rabenseifner ? k - lg : k;
            const u64 mask = u64(1) << j;
            for (u64 i = 0; i < p; ++i) {
                const u64 node = (p + i) >> j; // the 2^j pieces new rank i holds
                out.push_back(transfer(m_f.old(i), m_f.old(i ^ mask), U(node - 1), false));
            }
        }
    }

private:
    Mode m_mode;
    Fold m_f;
};

// Hierarchical AllReduce, NCCL-like per slice: G = ranksPerNode consecutive ranks per node, K = N/G
// nodes. Intra-node ring reduce-scatter of G slices (local rank i ends with slice i), inter-node ring
// AllReduce of slice i among the K ranks of local index i (slice i cut into K atoms), intra-node ring
// all-gather. Steps 2(G−1) + 2(K−1). Chunks 0…G−1 are the slices, G + a the atoms.
class HierarchicalGen final : public Generator {
public:
    explicit HierarchicalGen(const ScheduleSpec& spec)
        : Generator(spec), m_g(spec.ranksPerNode == 0 ? m_n : spec.ranksPerNode), m_k(m_n / m_g)
    {
    }
    u64 stepCount() const override { return 2 * (m_g - 1) + 2 * (m_k - 1); }
    std::string phaseOf(u64 s) const override
    {
        if (s >= stepCount())
            return {};
        if (s < m_g - 1)
            return "intra-node reduce-scatter";
        s -= m_g - 1;
        if (s < m_k - 1)
            return "inter-node reduce-scatter";
        s -= m_k - 1;
        return s < m_k - 1 ? "inter-node all-gather" : "intra-node all-gather";
    }
    u32 atomCount() const override { return U(m_n); }
    u32 chunkCount() const override { return U(m_g + m_n); }
    AtomRange atoms(u32 c) const override { return c < m_g ? AtomRange{U(c * m_k), U(m_k)} : AtomRange{U(c - m_g), 1}; }
    u32 chunkOfAtom(u32 a) const override { return U(m_g + a); }

protected:
    void emitStep(u64 s, std::vector<Transfer>& out) const override
    {
        const u64 G = m_g, K = m_k;
        int phase = 0;
        if (s >= G - 1) {
            s -= G - 1, phase = 1;
            if (s >= K - 1) {
                s -= K - 1, phase = 2;
                if (s >= K - 1)
                    s -= K - 1, phase = 3;
            }
        }
        for (u64 n = 0; n < K; ++n)
            for (u64 i = 0; i < G; ++i) {
                const u64 r = n * G + i;
                switch (phase) {
                case 0: out.push_back(transfer(r, n * G + (i + 1) % G, U((i + G - s - 1) % G), true)); break;
                case 1: out.push_back(transfer(r, ((n + 1) % K) * G + i, U(G + i * K + (n + K - s - 1) % K), true)); break;
                case 2: out.push_back(transfer(r, ((n + 1) % K) * G + i, U(G + i * K + (n + K - s) % K), false)); break;
                default: out.push_back(transfer(r, n * G + (i + 1) % G, U((i + G - s) % G), false)); break;
                }
            }
    }

private:
    u64 m_g, m_k;
};

// Bruck AllGather (Bruck et al., IEEE TPDS 1997): step k, rank r sends the slices r … r+c−1 (mod N) it
// holds, c = min(2^k, N − 2^k), to rank r − 2^k; ceil(log2 N) steps for any N. Chunk k·N + s is the
// cyclic run of c slices from slice s (it may wrap past the end of the buffer).
class BruckAllGatherGen final : public Generator {
public:
    using Generator::Generator;
    u64 stepCount() const override { return ceilLog2(m_n); }
    std::string phaseOf(u64 s) const override { return s < stepCount() ? "bruck (distance " + std::to_string(u64(1) << s) + ")" : ""; }
    u32 atomCount() const override { return U(m_n); }
    u32 chunkCount() const override { return U(ceilLog2(m_n) * m_n); }
    AtomRange atoms(u32 c) const override
    {
        const u64 k = c / m_n, d = u64(1) << k;
        return {U(c % m_n), U(std::min(d, m_n - d))};
    }

protected:
    void emitStep(u64 k, std::vector<Transfer>& out) const override
    {
        const u64 d = u64(1) << k;
        for (u64 r = 0; r < m_n; ++r)
            out.push_back(transfer(r, (r + m_n - d) % m_n, U(k * m_n + r), false));
    }
};

// All-to-All: chunk o·N + d is the block rank o sends to rank d (M/N bytes, uneven by ≤ 1; offset in
// the sender's buffer). Pairwise: step k = 1…N−1, rank r sends block (r, r+k) to r + k. Bruck (Bruck et
// al. 1997, as in MPICH): a block from o to d sits in slot j = (d − o) mod N after the local rotation;
// step k, rank r sends every block whose slot has bit k set to r + 2^k — one message of several
// transfers (the only algorithm whose messages carry more than one chunk).
class AllToAllGen final : public Generator {
public:
    AllToAllGen(const ScheduleSpec& spec, bool bruck) : Generator(spec), m_bruck(bruck) {}
    u64 stepCount() const override { return m_bruck ? ceilLog2(m_n) : m_n - 1; }
    std::string phaseOf(u64 s) const override
    {
        if (s >= stepCount())
            return {};
        return m_bruck ? "bruck (distance " + std::to_string(u64(1) << s) + ")" : "pairwise exchange";
    }
    u32 atomCount() const override { return U(m_n * m_n); }
    u32 chunkCount() const override { return U(m_n * m_n); }
    AtomRange atoms(u32 c) const override { return {c, 1}; }
    u64 atomBytes(u32 a) const override { return evenSize(m_bytes, m_n, a % m_n); }
    Chunk chunk(u32 c) const override
    {
        const u64 o = c / m_n, d = c % m_n;
        return Chunk{static_cast<double>(evenOffset(m_bytes, m_n, d)), static_cast<double>(evenSize(m_bytes, m_n, d)), U(o), U(d)};
    }

protected:
    void emitStep(u64 s, std::vector<Transfer>& out) const override
    {
        if (!m_bruck) {
            for (u64 r = 0; r < m_n; ++r) {
                const u64 d = (r + s + 1) % m_n;
                out.push_back(transfer(r, d, U(r * m_n + d), false));
            }
            return;
        }
        const u64 dist = u64(1) << s;
        for (u64 r = 0; r < m_n; ++r)
            for (u64 j = dist; j < m_n; ++j) {
                if (!(j & dist))
                    continue;
                const u64 o = (r + m_n - (j & (dist - 1))) % m_n, d = (o + j) % m_n;
                out.push_back(transfer(r, (r + dist) % m_n, U(o * m_n + d), false));
            }
    }

private:
    bool m_bruck;
};

// Pipelined chain (Broadcast: root → root+1 → … ; Reduce: toward the root): C chunks, position p sends
// chunk s − p at step s, C + N − 2 steps.
class ChainGen final : public Generator {
public:
    ChainGen(const ScheduleSpec& spec, bool reduce) : Generator(spec), m_reduce(reduce), m_c(pipelineChunksFor(spec)) {}
    u64 stepCount() const override { return m_n < 2 ? 0 : m_c + m_n - 2; }
    std::string phaseOf(u64 s) const override { return s < stepCount() ? (m_reduce ? "reduce (chain)" : "broadcast (chain)") : ""; }
    u32 atomCount() const override { return U(m_c); }
    u32 chunkCount() const override { return U(m_c); }
    AtomRange atoms(u32 c) const override { return {c, 1}; }

protected:
    void emitStep(u64 s, std::vector<Transfer>& out) const override
    {
        auto rank = [&](u64 pos) { return (m_spec.root + pos) % m_n; };
        // Hop h (0 … N−2) carries chunk s − h; broadcast hop h is position h → h+1, reduce hop h is
        // position N−1−h → N−2−h.
        const u64 lo = s + 1 > m_c ? s + 1 - m_c : 0, hi = std::min<u64>(s, m_n - 2);
        for (u64 h = lo; h <= hi; ++h) {
            const u32 c = U(s - h);
            if (m_reduce)
                out.push_back(transfer(rank(m_n - 1 - h), rank(m_n - 2 - h), c, true));
            else
                out.push_back(transfer(rank(h), rank(h + 1), c, false));
        }
    }

private:
    bool m_reduce;
    u64 m_c;
};

class SendRecvGen final : public WholeBufferGen {
public:
    using WholeBufferGen::WholeBufferGen;
    u64 stepCount() const override { return m_n == 2 ? 1 : 0; }
    std::string phaseOf(u64 s) const override { return s < stepCount() ? "send" : ""; }

protected:
    void emitStep(u64, std::vector<Transfer>& out) const override { out.push_back(transfer(0, 1, 0, false)); }
};

// NCCL's binary tree (ncclGetBtree, src/graph/trees.cc): the lowest set bit b of r gives its parent
// (r XOR b) | 2b, or r XOR b when that is out of range; rank 0 is the root with one child.
std::int64_t btreeParent(u64 n, u64 r)
{
    if (r == 0)
        return -1;
    const u64 b = r & (~r + 1);
    u64 up = (r ^ b) | (b << 1);
    if (up >= n)
        up = r ^ b;
    return static_cast<std::int64_t>(up);
}

// AllReduce on one binary tree or on NCCL's double binary tree (the second tree mirrors the first,
// rank r ↔ N−1−r, for even N and shifts it by one for odd N, so every rank is a leaf in one of
// them; each tree carries half the buffer). Each tree's data is cut into C pipeline chunks: chunk
// t·C + c. Reduce goes up (a rank sends chunk c to its parent once both children's chunk c arrived),
// broadcast comes down (the root's chunk c is final once reduced). Steps are list-scheduled: each
// step every ready message is a candidate and they are granted oldest chunk first (ties: broadcast
// before reduce, the first tree, the lower rank) while sender and receiver are free — so a parent takes
// its two children's chunks in different steps and the broadcast of early chunks overlaps the reduce
// of later ones, as NCCL pipelines. O(N log N) per step; one dry run at construction counts the steps.
class TreeGen final : public Generator {
public:
    TreeGen(const ScheduleSpec& spec, bool twoTrees)
        : Generator(spec), m_t(twoTrees ? 2 : 1), m_c(pipelineChunksFor(spec))
    {
        for (u32 t = 0; t < m_t; ++t) {
            auto& tr = m_tree[t];
            tr.parent.assign(m_n, -1);
            tr.kids.assign(m_n, {-1, -1});
            tr.slot.assign(m_n, 0);
            for (u64 r = 0; r < m_n; ++r) {
                // Tree 1: rank r plays the role of rank role(r) in tree 0.
                const u64 role = t == 0 ? r : (m_n % 2 == 0 ? m_n - 1 - r : (r + m_n - 1) % m_n);
                const std::int64_t up = btreeParent(m_n, role);
                if (up < 0) {
                    tr.root = r;
                    continue;
                }
                const u64 real = t == 0 ? u64(up) : (m_n % 2 == 0 ? m_n - 1 - u64(up) : (u64(up) + 1) % m_n);
                tr.parent[r] = static_cast<std::int64_t>(real);
            }
            for (u64 r = 0; r < m_n; ++r) // children in rank order (each rank has at most two)
                if (tr.parent[r] >= 0) {
                    auto& k = tr.kids[static_cast<std::size_t>(tr.parent[r])];
                    const u32 s = k[0] < 0 ? 0 : 1;
                    k[s] = static_cast<std::int64_t>(r);
                    tr.slot[r] = static_cast<std::uint8_t>(s);
                }
        }
        // Run once to know the step count and where reduce and broadcast overlap.
        reset();
        std::vector<Transfer> step;
        while (advance(step)) {
            for (const Transfer& x : step) {
                if (x.reduce)
                    m_lastUp = m_steps;
                else if (m_firstDown == kNever)
                    m_firstDown = m_steps;
            }
            m_step = ++m_steps;
        }
        reset();
    }

    bool next(std::vector<Transfer>& step) override
    {
        if (m_step >= m_steps) {
            step.clear();
            return false;
        }
        advance(step);
        ++m_step;
        return true;
    }
    void reset() override
    {
        m_step = 0;
        m_done = 0;
        for (u32 t = 0; t < m_t; ++t) {
            auto& tr = m_tree[t];
            tr.upRecv.assign(2 * m_n, 0);
            tr.upSent.assign(m_n, 0);
            tr.downRecv.assign(m_n, 0);
            tr.downSent.assign(2 * m_n, 0);
        }
        m_sendBusy.assign(m_n, 0);
        m_recvBusy.assign(m_n, 0);
    }
    u64 stepCount() const override { return m_steps; }
    std::string phaseOf(u64 s) const override
    {
        if (s >= m_steps)
            return {};
        if (s < m_firstDown)
            return "reduce";
        return s <= m_lastUp && m_lastUp != kNever ? "reduce + broadcast" : "broadcast";
    }
    u32 atomCount() const override { return U(m_t * m_c); }
    u32 chunkCount() const override { return U(m_t * m_c); }
    AtomRange atoms(u32 c) const override { return {c, 1}; }

private:
    static constexpr u64 kNever = ~u64(0);
    struct Tree {
        std::vector<std::int64_t> parent;
        std::vector<std::array<std::int64_t, 2>> kids;
        std::vector<std::uint8_t> slot; // which child of its parent a rank is
        u64 root = 0;
        std::vector<u64> upRecv, upSent, downRecv, downSent; // chunks counted per edge
    };

    // Chunks rank v holds final in tree t (the root: what both children have sent up).
    u64 have(const Tree& tr, u64 v) const
    {
        if (v != tr.root)
            return tr.downRecv[v];
        u64 h = m_c;
        for (u32 s = 0; s < 2; ++s)
            if (tr.kids[v][s] >= 0)
                h = std::min(h, tr.upRecv[2 * v + s]);
        return h;
    }
    bool upReady(const Tree& tr, u64 v) const
    {
        if (v == tr.root || tr.upSent[v] >= m_c)
            return false;
        for (u32 s = 0; s < 2; ++s)
            if (tr.kids[v][s] >= 0 && tr.upRecv[2 * v + s] <= tr.upSent[v])
                return false;
        return true;
    }

    // One step from the current state; false when every rank holds every chunk.
    bool advance(std::vector<Transfer>& out)
    {
        out.clear();
        if (m_done == m_t * (m_n - 1) * m_c)
            return false;
        // Every ready message, then granted oldest chunk first (ties: broadcast before reduce, lower rank).
        m_ready.clear();
        for (u64 v = 0; v < m_n; ++v)
            for (u32 t = 0; t < m_t; ++t) {
                const Tree& tr = m_tree[t];
                const u64 h = have(tr, v);
                for (u32 s = 0; s < 2; ++s) {
                    const std::int64_t ch = tr.kids[v][s];
                    if (ch >= 0 && tr.downSent[2 * v + s] < h)
                        m_ready.push_back({key(tr.downSent[2 * v + s], false, t), v, u64(ch), U(t * m_c + tr.downSent[2 * v + s]), false});
                }
                if (upReady(tr, v))
                    m_ready.push_back({key(tr.upSent[v], true, t), v, u64(tr.parent[v]), U(t * m_c + tr.upSent[v]), true});
            }
        std::stable_sort(m_ready.begin(), m_ready.end(), [](const Ready& a, const Ready& b) { return a.key < b.key; });
        for (const Ready& r : m_ready)
            if (!m_sendBusy[r.src] && !m_recvBusy[r.dst])
                take(out, r.src, r.dst, r.chunk, r.reduce);
        for (const Transfer& x : out) { // a step reads the state at its start: apply afterwards
            Tree& tr = m_tree[x.chunk / m_c];
            m_sendBusy[x.src] = m_recvBusy[x.dst] = 0;
            if (x.reduce) {
                ++tr.upSent[x.src];
                ++tr.upRecv[2 * u64(x.dst) + tr.slot[x.src]];
            } else {
                ++tr.downSent[2 * u64(x.src) + tr.slot[x.dst]];
                ++tr.downRecv[x.dst];
                ++m_done;
            }
        }
        return true;
    }
    struct Ready {
        u64 key, src, dst;
        u32 chunk;
        bool reduce;
    };
    static u64 key(u64 c, bool reduce, u32 t) { return 4 * c + 2 * u64(reduce) + t; }
    void take(std::vector<Transfer>& out, u64 src, u64 dst, u32 c, bool reduce)
    {
        m_sendBusy[src] = m_recvBusy[dst] = 1;
        out.push_back(transfer(src, dst, c, reduce));
    }

    u32 m_t;
    u64 m_c;
    std::array<Tree, 2> m_tree;
    std::vector<std::uint8_t> m_sendBusy, m_recvBusy;
    std::vector<Ready> m_ready;
    u64 m_done = 0, m_steps = 0, m_firstDown = kNever, m_lastUp = kNever;
};

class DefectGen final : public Generator {
public:
    DefectGen(std::unique_ptr<Generator> inner, Defect d, u64 step, std::size_t index)
        : Generator(ScheduleSpec{}), m_inner(std::move(inner)), m_defect(d), m_at(step), m_index(index)
    {
        m_n = m_inner->ranks();
        m_bytes = m_inner->bytes();
    }
    bool next(std::vector<Transfer>& step) override
    {
        if (!m_inner->next(step))
            return false;
        if (m_step++ == m_at && m_index < step.size()) {
            switch (m_defect) {
            case Defect::Drop: step.erase(step.begin() + static_cast<std::ptrdiff_t>(m_index)); break;
            case Defect::Duplicate: step.push_back(step[m_index]); break;
            case Defect::FlipReduce: step[m_index].reduce = !step[m_index].reduce; break;
            }
        }
        return true;
    }
    void reset() override
    {
        m_step = 0;
        m_inner->reset();
    }
    u64 stepCount() const override { return m_inner->stepCount(); }
    std::string phaseOf(u64 s) const override { return m_inner->phaseOf(s); }
    u32 atomCount() const override { return m_inner->atomCount(); }
    u32 chunkCount() const override { return m_inner->chunkCount(); }
    AtomRange atoms(u32 c) const override { return m_inner->atoms(c); }
    u32 chunkOfAtom(u32 a) const override { return m_inner->chunkOfAtom(a); }
    Chunk chunk(u32 c) const override { return m_inner->chunk(c); }
    u64 atomBytes(u32 a) const override { return m_inner->atomBytes(a); }
    bool sendsInput() const override { return m_inner->sendsInput(); }

private:
    std::unique_ptr<Generator> m_inner;
    Defect m_defect;
    u64 m_at;
    std::size_t m_index;
};

} // namespace

Generator::Generator(const ScheduleSpec& spec)
    : m_spec(spec), m_n(std::max<u64>(1, spec.ranks)), m_bytes(spec.bytes > 0 ? static_cast<u64>(spec.bytes) : 0)
{
}

bool Generator::next(std::vector<Transfer>& step)
{
    step.clear();
    if (m_step >= stepCount())
        return false;
    emitStep(m_step++, step);
    return true;
}

void Generator::emitStep(u64, std::vector<Transfer>&) const {}

Chunk Generator::chunk(u32 index) const
{
    const AtomRange r = atoms(index);
    const u64 a = atomCount(), first = r.first, last = u64(r.first) + r.count;
    const u64 off = evenOffset(m_bytes, a, first);
    u64 bytes = evenOffset(m_bytes, a, std::min(last, a)) - off;
    if (last > a)
        bytes += evenOffset(m_bytes, a, last - a);
    return Chunk{static_cast<double>(off), static_cast<double>(bytes), 0, 0};
}

u64 Generator::atomBytes(u32 atom) const { return evenSize(m_bytes, atomCount(), atom); }

u64 pipelineChunksFor(const ScheduleSpec& spec)
{
    if (spec.pipelineChunks > 0)
        return spec.pipelineChunks;
    const u64 m = spec.bytes > 0 ? static_cast<u64>(spec.bytes) : 0;
    const u64 share = spec.algorithm == Algorithm::DoubleBinaryTree ? (m + 1) / 2 : m;
    constexpr u64 kPiece = 64 * 1024;
    return std::clamp<u64>((share + kPiece - 1) / kPiece, 1, 64);
}

std::unique_ptr<Generator> makeGenerator(const ScheduleSpec& spec)
{
    if (!validate(spec).empty())
        return std::make_unique<EmptyGen>(spec);
    using A = Algorithm;
    const A a = spec.algorithm;
    switch (spec.op) {
    case Op::AllReduce:
        switch (a) {
        case A::Naive: return std::make_unique<NaiveGen>(spec);
        case A::ReduceBroadcast: return std::make_unique<FlatGen>(spec, true, true);
        case A::Ring: return std::make_unique<RingGen>(spec, true, true);
        case A::RecursiveDoubling: return std::make_unique<RecursiveDoublingGen>(spec);
        case A::Rabenseifner: return std::make_unique<HalvingDoublingGen>(spec, HalvingDoublingGen::Mode::Rabenseifner);
        case A::BinaryTree: return std::make_unique<TreeGen>(spec, false);
        case A::DoubleBinaryTree: return std::make_unique<TreeGen>(spec, true);
        case A::Hierarchical: return std::make_unique<HierarchicalGen>(spec);
        default: break;
        }
        break;
    case Op::ReduceScatter:
        if (a == A::Ring)
            return std::make_unique<RingGen>(spec, true, false);
        if (a == A::RecursiveHalving)
            return std::make_unique<HalvingDoublingGen>(spec, HalvingDoublingGen::Mode::ReduceScatter);
        break;
    case Op::AllGather:
        if (a == A::Ring)
            return std::make_unique<RingGen>(spec, false, true);
        if (a == A::RecursiveDoubling)
            return std::make_unique<HalvingDoublingGen>(spec, HalvingDoublingGen::Mode::AllGather);
        if (a == A::Bruck)
            return std::make_unique<BruckAllGatherGen>(spec);
        break;
    case Op::Broadcast:
    case Op::Reduce: {
        const bool reduce = spec.op == Op::Reduce;
        if (a == A::Flat)
            return std::make_unique<FlatGen>(spec, reduce, !reduce);
        if (a == A::Binomial)
            return std::make_unique<BinomialGen>(spec, reduce);
        if (a == A::Chain)
            return std::make_unique<ChainGen>(spec, reduce);
        break;
    }
    case Op::AllToAll:
        if (a == A::Pairwise || a == A::Bruck)
            return std::make_unique<AllToAllGen>(spec, a == A::Bruck);
        break;
    case Op::SendRecv:
        if (a == A::Direct)
            return std::make_unique<SendRecvGen>(spec);
        break;
    }
    return std::make_unique<EmptyGen>(spec);
}

std::unique_ptr<Generator> withDefect(std::unique_ptr<Generator> inner, Defect defect, u64 step, std::size_t index)
{
    return std::make_unique<DefectGen>(std::move(inner), defect, step, index);
}

} // namespace tw::collective::detail
