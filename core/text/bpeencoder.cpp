// The encoder: pieces from the pre-tokenizer merged by rank (tiktoken's byte_pair_merge, and a heap
// for long pieces), with a cache of the pieces already seen.
#include "bpe.h"

#include "bpe_p.h"
#include "pretokenizer.h"
#include "pretokenizer_p.h"

#include <algorithm>
#include <cstring>

namespace tw::text {

// ---------------------------------------------------------------------------------------------
// Encoder

namespace {

// Piece bytes → ids, open addressing. A slot holds the first 16 bytes of its key and, for a piece
// of one token, the id: a hit on a short piece reads one 32-byte slot and nothing else. Longer
// keys keep their tail in an arena, and pieces of several tokens their ids in another.
class PieceCache {
public:
    struct Slot {
        std::uint64_t w0 = 0, w1 = 0; // bytes 0–15 of the key, zero-padded
        std::uint32_t len = 0;        // key length; 0 = empty (cached pieces have ≥ 2 bytes)
        std::uint32_t count = 0;      // number of ids
        std::uint32_t ids = 0;        // the id when count == 1, else the offset of the ids in m_ids
        std::uint32_t tail = 0;       // offset of key bytes 16… in m_keys when len > 16
    };
    static_assert(sizeof(Slot) == 32);

    PieceCache() { clear(); }
    void clear()
    {
        m_slots.assign(kInitialSlots, Slot{});
        m_mask = m_slots.size() - 1;
        m_used = 0;
        m_keys.clear();
        m_ids.clear();
    }
    [[nodiscard]] const Slot* find(std::uint64_t w0, std::uint64_t w1, const unsigned char* p, std::size_t n,
                                   std::uint64_t h) const
    {
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.len == n && s.w0 == w0 && s.w1 == w1
                && (n <= 16 || sameBytes(m_keys.data() + s.tail, p + 16, n - 16)))
                return &s;
            if (s.len == 0)
                return nullptr;
        }
    }
    void insert(std::uint64_t w0, std::uint64_t w1, const unsigned char* p, std::size_t n, std::uint64_t h,
                const TokenId* ids, std::size_t count)
    {
        if (m_used >= kMaxEntries || m_keys.size() + n > kMaxArena || m_ids.size() + count > kMaxArena / 4)
            clear(); // bounded memory on huge texts: start over
        if (2 * (m_used + 1) > m_slots.size())
            grow();
        Slot s{w0, w1, std::uint32_t(n), std::uint32_t(count), 0, 0};
        if (count == 1) {
            s.ids = ids[0];
        } else {
            s.ids = std::uint32_t(m_ids.size());
            m_ids.insert(m_ids.end(), ids, ids + count);
        }
        if (n > 16) {
            s.tail = std::uint32_t(m_keys.size());
            m_keys.append(reinterpret_cast<const char*>(p + 16), n - 16);
        }
        place(s, h);
        ++m_used;
    }
    [[nodiscard]] const TokenId* ids(const Slot& s) const { return s.count == 1 ? &s.ids : m_ids.data() + s.ids; }
    void prefetch(std::uint64_t h) const
    {
#if defined(__GNUC__)
        __builtin_prefetch(&m_slots[h & m_mask]);
#else
        (void)h;
#endif
    }

private:
    static constexpr std::size_t kInitialSlots = std::size_t{1} << 12;
    static constexpr std::size_t kMaxEntries = std::size_t{1} << 19;
    static constexpr std::size_t kMaxArena = std::size_t{64} << 20;
    void place(const Slot& s, std::uint64_t h)
    {
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask)
            if (m_slots[i].len == 0) {
                m_slots[i] = s;
                return;
            }
    }
    [[nodiscard]] std::uint64_t hashOf(const Slot& s) const
    {
        if (s.len <= 16)
            return hashShort(s.w0, s.w1, s.len);
        std::string key(s.len, '\0');
        for (std::size_t k = 0; k < 8; ++k) {
            key[k] = char(s.w0 >> (8 * k));
            key[8 + k] = char(s.w1 >> (8 * k));
        }
        std::memcpy(key.data() + 16, m_keys.data() + s.tail, s.len - 16);
        return hashLong(reinterpret_cast<const unsigned char*>(key.data()), key.size());
    }
    void grow()
    {
        std::vector<Slot> old(m_slots.size() * 2);
        old.swap(m_slots);
        m_mask = m_slots.size() - 1;
        for (const Slot& s : old)
            if (s.len)
                place(s, hashOf(s));
    }
    std::vector<Slot> m_slots;
    std::size_t m_mask = 0;
    std::size_t m_used = 0;
    std::string m_keys;
    std::vector<TokenId> m_ids;
};

constexpr std::size_t kSmallPiece = 64; // bpeSmall's limit

} // namespace

struct Encoder::Impl {
    BpeModel model;
    const BpeModel::Data* d = nullptr;
    std::uint32_t rankLimit = kNoRank; // pairs with rank < rankLimit merge
    PieceCache cache;
    // Reused work buffers.
    std::vector<TokenId> part;
    std::vector<std::uint32_t> next, prev;
    struct HeapEntry {
        std::uint32_t rank, pos;
        TokenId left, right, merged;
    };
    std::vector<HeapEntry> heap;
    std::vector<TokenId> scratch;

    explicit Impl(BpeModel m) : model(std::move(m)), d(&model.data()) {}

    // The rank and merged id of a pair; rank kNoRank when it does not merge (under the limit).
    [[nodiscard]] PairMap::Found pair(TokenId left, TokenId right) const
    {
        PairMap::Found f = d->pairs.find(left, right);
        if (f.rank >= rankLimit)
            f.rank = kNoRank;
        return f;
    }

    // Appends the ids of one piece (2+ bytes) to out, computing BPE; no cache involved.
    void bpe(const unsigned char* p, std::size_t n, std::vector<TokenId>& out);
    void bpeSmall(const unsigned char* p, std::size_t n, std::vector<TokenId>& out);
    void bpeLarge(const unsigned char* p, std::size_t n, std::vector<TokenId>& out);

    // The cache key of a piece of 2+ bytes: its first 16 bytes and its hash.
    struct Key {
        std::uint64_t w0, w1, h;
    };
    static Key keyOf(const unsigned char* p, std::size_t n, const unsigned char* limit)
    {
        Key k;
        loadWords(p, n, limit, k.w0, k.w1);
        k.h = n <= 16 ? hashShort(k.w0, k.w1, n) : hashLong(p, n);
        return k;
    }

    // Appends the ids of the piece [p, p + n) (n ≥ 2) with its key to out, through the cache.
    void encodePiece(const unsigned char* p, std::size_t n, const Key& key, std::vector<TokenId>& out)
    {
        if (const auto* hit = cache.find(key.w0, key.w1, p, n, key.h)) [[likely]] {
            if (hit->count == 1) {
                out.push_back(hit->ids);
            } else {
                const TokenId* ids = cache.ids(*hit);
                for (std::uint32_t k = 0; k < hit->count; ++k)
                    out.push_back(ids[k]);
            }
            return;
        }
        encodeMiss(p, n, key.w0, key.w1, key.h, out);
    }

    void encodeMiss(const unsigned char* p, std::size_t n, std::uint64_t w0, std::uint64_t w1, std::uint64_t h,
                    std::vector<TokenId>& out)
    {
        const std::size_t before = out.size();
        bool whole = false;
        if (d->tiktoken) { // tiktoken returns a piece that is itself a token directly
            if (const auto id = d->findToken(p, n, h); id && d->rank[*id] < rankLimit) {
                out.push_back(*id);
                whole = true;
            }
        }
        if (!whole)
            bpe(p, n, out);
        if (n <= 1024) // huge pieces are rare; caching them would only fill the arena
            cache.insert(w0, w1, p, n, h, out.data() + before, out.size() - before);
    }

    // Encodes text piece by piece, the pieces coming in batches from the pre-tokenizer: the keys of
    // a batch are computed first and their cache slots prefetched, so that the lookups that follow
    // overlap their memory latency. sink(piece, offset in out of its ids) after each piece, in
    // order; encoding stops when it returns false.
    template <class Sink>
    void encodeText(std::string_view text, std::vector<TokenId>& out, Sink&& sink)
    {
        constexpr std::size_t kBatch = 128;
        constexpr std::size_t kAhead = 8; // prefetch distance, in pieces
        const auto* base = reinterpret_cast<const unsigned char*>(text.data());
        const auto* limit = base + text.size();
        detail::PieceScanner scanner(PreTokenizer::gpt2(), text);
        Piece pieces[kBatch];
        Key keys[kBatch];
        while (const std::size_t k = scanner.next(pieces, kBatch)) {
            for (std::size_t i = 0; i < k; ++i) {
                const std::size_t n = pieces[i].end - pieces[i].begin;
                keys[i] = n >= 2 ? keyOf(base + pieces[i].begin, n, limit) : Key{0, 0, 0};
            }
            for (std::size_t i = 0; i < k; ++i) {
                if (i + kAhead < k)
                    cache.prefetch(keys[i + kAhead].h);
                const unsigned char* p = base + pieces[i].begin;
                const std::size_t n = pieces[i].end - pieces[i].begin;
                const std::size_t before = out.size();
                if (n == 1)
                    out.push_back(d->byteToken[*p]);
                else
                    encodePiece(p, n, keys[i], out);
                if (!sink(pieces[i], before))
                    return;
            }
        }
    }
};

void Encoder::Impl::bpe(const unsigned char* p, std::size_t n, std::vector<TokenId>& out)
{
    if (n <= kSmallPiece)
        bpeSmall(p, n, out);
    else
        bpeLarge(p, n, out);
}

// Quadratic merging as in tiktoken's byte_pair_merge: fine for the short pieces of real text.
void Encoder::Impl::bpeSmall(const unsigned char* p, std::size_t n, std::vector<TokenId>& out)
{
    TokenId part[kSmallPiece];
    TokenId mergedId[kSmallPiece];
    std::uint32_t pairRank[kSmallPiece];
    for (std::size_t i = 0; i < n; ++i)
        part[i] = d->byteToken[p[i]];
    std::size_t m = n;
    auto setPair = [&](std::size_t i) {
        const PairMap::Found f = pair(part[i], part[i + 1]);
        pairRank[i] = f.rank;
        mergedId[i] = f.id;
    };
    for (std::size_t i = 0; i + 1 < m; ++i) { // first round: byte pairs
        PairMap::Found f = d->bytePairs[std::size_t(p[i]) << 8 | p[i + 1]];
        pairRank[i] = f.rank < rankLimit ? f.rank : kNoRank;
        mergedId[i] = f.id;
    }
    while (m > 1) {
        std::size_t best = 0;
        std::uint32_t bestRank = kNoRank;
        for (std::size_t i = 0; i + 1 < m; ++i)
            if (pairRank[i] < bestRank) { // strict: the leftmost of equal ranks wins
                bestRank = pairRank[i];
                best = i;
            }
        if (bestRank == kNoRank)
            break;
        part[best] = mergedId[best];
        for (std::size_t i = best + 1; i + 1 < m; ++i) {
            part[i] = part[i + 1];
            pairRank[i] = pairRank[i + 1];
            mergedId[i] = mergedId[i + 1];
        }
        --m;
        if (best + 1 < m)
            setPair(best);
        if (best > 0)
            setPair(best - 1);
    }
    out.insert(out.end(), part, part + m);
}

// O(n log n) merging for long pieces: a linked list of parts and a min-heap of candidate pairs
// ordered by (rank, position); stale entries are skipped when popped.
void Encoder::Impl::bpeLarge(const unsigned char* p, std::size_t n, std::vector<TokenId>& out)
{
    constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
    part.resize(n);
    next.resize(n);
    prev.resize(n);
    heap.clear();
    for (std::size_t i = 0; i < n; ++i) {
        part[i] = d->byteToken[p[i]];
        next[i] = i + 1 < n ? std::uint32_t(i + 1) : kNone;
        prev[i] = i > 0 ? std::uint32_t(i - 1) : kNone;
    }
    auto later = [](const HeapEntry& a, const HeapEntry& b) {
        return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
    };
    auto push = [&](std::uint32_t i) {
        if (i == kNone || next[i] == kNone)
            return;
        if (const PairMap::Found f = pair(part[i], part[next[i]]); f.rank != kNoRank) {
            heap.push_back({f.rank, i, part[i], part[next[i]], f.id});
            std::push_heap(heap.begin(), heap.end(), later);
        }
    };
    for (std::size_t i = 0; i + 1 < n; ++i)
        if (const PairMap::Found f = pair(part[i], part[i + 1]); f.rank != kNoRank)
            heap.push_back({f.rank, std::uint32_t(i), part[i], part[i + 1], f.id});
    std::make_heap(heap.begin(), heap.end(), later);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        const HeapEntry e = heap.back();
        heap.pop_back();
        const std::uint32_t i = e.pos;
        const std::uint32_t j = next[i];
        // Removed nodes get part = kNone, so a stale entry fails one of these checks.
        if (part[i] != e.left || j == kNone || part[j] != e.right)
            continue;
        part[i] = e.merged;
        part[j] = kNone;
        next[i] = next[j];
        if (next[j] != kNone)
            prev[next[j]] = i;
        push(prev[i]);
        push(i);
    }
    for (std::uint32_t i = 0; i != kNone; i = next[i])
        out.push_back(part[i]);
}

Encoder::Encoder(BpeModel model) : m_impl(std::make_unique<Impl>(std::move(model))) {}
Encoder::~Encoder() = default;
Encoder::Encoder(Encoder&&) noexcept = default;
Encoder& Encoder::operator=(Encoder&&) noexcept = default;

const BpeModel& Encoder::model() const { return m_impl->model; }

void Encoder::clearCache() { m_impl->cache.clear(); }

void Encoder::setMergeLimit(std::size_t count)
{
    const std::uint32_t limit = count >= kNoRank ? kNoRank : std::uint32_t(count);
    if (limit != m_impl->rankLimit) {
        m_impl->rankLimit = limit;
        m_impl->cache.clear();
    }
}

void Encoder::encode(std::string_view text, std::vector<TokenId>& out)
{
    // GPT-2 makes about one token per 3–4 bytes; grow geometrically so that many small calls stay linear.
    const std::size_t want = out.size() + text.size() / 3 + 16;
    if (want > out.capacity())
        out.reserve(std::max(want, 2 * out.capacity()));
    m_impl->encodeText(text, out, [](const Piece&, std::size_t) { return true; });
}

std::vector<TokenId> Encoder::encode(std::string_view text)
{
    std::vector<TokenId> out;
    encode(text, out);
    return out;
}

std::size_t Encoder::count(std::string_view text)
{
    // The ids of each piece go to a scratch vector, counted and dropped after the piece.
    std::vector<TokenId>& ids = m_impl->scratch;
    ids.clear();
    std::size_t total = 0;
    m_impl->encodeText(text, ids, [&](const Piece&, std::size_t) {
        total += ids.size();
        ids.clear();
        return true;
    });
    return total;
}

Result<std::vector<TokenSpan>> Encoder::encodeWithSpans(std::string_view text, const Progress& progress)
{
    if (const std::size_t limit = maxTextBytes(); text.size() > limit)
        return makeError("the text is " + std::to_string(text.size()) + " bytes; the tokenizer takes at most "
                         + std::to_string(limit) + " bytes at once");
    Impl& impl = *m_impl;
    std::vector<TokenSpan> spans;
    spans.reserve(text.size() / 3 + 16);
    std::vector<TokenId>& ids = impl.scratch;
    const std::uint32_t* tokenStart = impl.d->tokenStart.data();
    constexpr std::size_t kReportEvery = std::size_t{1} << 20;
    std::size_t nextReport = kReportEvery;
    bool cancelled = false;
    if (progress.stopRequested())
        return makeError("cancelled");
    progress(0.0);
    // Ids go to a scratch vector, emptied after each piece becomes spans.
    ids.clear();
    impl.encodeText(text, ids, [&](const Piece& piece, std::size_t before) {
        std::uint32_t at = std::uint32_t(piece.begin);
        for (std::size_t k = before; k < ids.size(); ++k) {
            const TokenId id = ids[k];
            const std::uint32_t len = tokenStart[id + 1] - tokenStart[id];
            spans.push_back({id, at, at + len});
            at += len;
        }
        ids.clear();
        if (piece.end >= nextReport) {
            if (progress.stopRequested()) {
                cancelled = true;
                return false;
            }
            progress(double(piece.end) / double(text.size()));
            nextReport = piece.end + kReportEvery;
        }
        return true;
    });
    if (cancelled || progress.stopRequested())
        return makeError("cancelled");
    progress(1.0);
    return spans;
}

} // namespace tw::text
