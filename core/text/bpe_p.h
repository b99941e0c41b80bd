#pragma once
// What bpe.cpp (the model and its loading) and bpeencoder.cpp (the encoder) share: the byte-string
// hashing, the merge-pair map and the model's data. Private to core/text/bpe*.cpp.

#include "bpe.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tw::text {

namespace bpedetail {

inline constexpr std::string_view kEndOfText = "<|endoftext|>";
inline constexpr std::uint32_t kNoRank = std::numeric_limits<std::uint32_t>::max();

// Hashing of byte strings (pieces and tokens). Strings of up to 16 bytes are hashed from two
// zero-padded little-endian words, which the encoder also keeps to compare cache keys without
// touching memory elsewhere; longer strings go through a 16-bytes-a-step loop. Both ways give the
// same value for the same bytes, whatever the memory after them.
inline constexpr std::uint64_t kHash0 = 0xA0761D6478BD642Full;
inline constexpr std::uint64_t kHash1 = 0xE7037ED1A0B428DBull;
inline constexpr std::uint64_t kHash2 = 0x8EBC6AF09C88C6E3ull;

// 64×64→128-bit multiply folded to 64 bits (wyhash's mum).
inline std::uint64_t mum(std::uint64_t a, std::uint64_t b)
{
#ifdef __SIZEOF_INT128__
    __extension__ using U128 = unsigned __int128;
    const U128 m = U128(a) * U128(b);
    return std::uint64_t(m) ^ std::uint64_t(m >> 64);
#else
    const std::uint64_t m = a * b;
    return m ^ (m >> 29) ^ ((a ^ (a >> 32)) * (b | 1));
#endif
}

// The first min(n, 16) bytes of p as two words, zero-padded; reads p[0, 16) when p + 16 <= limit.
inline void loadWords(const unsigned char* p, std::size_t n, const unsigned char* limit, std::uint64_t& w0,
                      std::uint64_t& w1)
{
    if (n > 16)
        n = 16;
    if (std::endian::native == std::endian::little && limit - p >= 16) {
        std::memcpy(&w0, p, 8);
        std::memcpy(&w1, p + 8, 8);
        if (n <= 8) {
            w1 = 0;
            if (n < 8)
                w0 &= ~std::uint64_t{0} >> (64 - 8 * n);
        } else if (n < 16) {
            w1 &= ~std::uint64_t{0} >> (128 - 8 * n);
        }
        return;
    }
    w0 = w1 = 0;
    for (std::size_t k = 0; k < n; ++k) {
        if (k < 8)
            w0 |= std::uint64_t(p[k]) << (8 * k);
        else
            w1 |= std::uint64_t(p[k]) << (8 * (k - 8));
    }
}

inline std::uint64_t hashShort(std::uint64_t w0, std::uint64_t w1, std::size_t n)
{
    return mum(w0 ^ kHash0, w1 ^ kHash1 ^ (std::uint64_t(n) * kHash2));
}

inline std::uint64_t hashLong(const unsigned char* p, std::size_t n)
{
    std::uint64_t h = kHash2 ^ std::uint64_t(n);
    std::uint64_t w0, w1;
    while (n > 16) {
        std::memcpy(&w0, p, 8);
        std::memcpy(&w1, p + 8, 8);
        h = mum(w0 ^ kHash0 ^ h, w1 ^ kHash1);
        p += 16;
        n -= 16;
    }
    loadWords(p, n, p + n, w0, w1);
    return mum(w0 ^ kHash0 ^ h, w1 ^ kHash1 ^ (std::uint64_t(n) * kHash2));
}

inline std::uint64_t hashBytes(const unsigned char* p, std::size_t n)
{
    if (n > 16)
        return hashLong(p, n);
    std::uint64_t w0, w1;
    loadWords(p, n, p + n, w0, w1);
    return hashShort(w0, w1, n);
}

// Equality of two short byte strings without a call to memcmp (pieces are a few bytes long).
inline bool sameBytes(const char* a, const unsigned char* b, std::size_t n)
{
    while (n >= 8) {
        std::uint64_t x, y;
        std::memcpy(&x, a, 8);
        std::memcpy(&y, b, 8);
        if (x != y)
            return false;
        a += 8;
        b += 8;
        n -= 8;
    }
    for (std::size_t k = 0; k < n; ++k)
        if (a[k] != char(b[k]))
            return false;
    return true;
}

inline std::size_t capacityFor(std::size_t n)
{
    std::size_t cap = 16;
    while (cap < 2 * n + 2)
        cap <<= 1;
    return cap;
}

// One table of a model: elements it owns (a model parsed or built at run time) or a view onto the
// elements of an image that outlives the model (the tables prebuilt at build time, bpeimage.h).
template <class T>
class Table {
public:
    Table() = default;
    Table(const Table&) = delete;
    Table& operator=(const Table&) = delete;

    // Owns n copies of value; returns them to be filled.
    std::span<T> assign(std::size_t n, const T& value)
    {
        m_owned.assign(n, value);
        m_view = m_owned;
        return m_owned;
    }
    // Views elements that outlive the table.
    void view(std::span<const T> elements)
    {
        m_owned = {};
        m_view = elements;
    }
    // The owned elements, to be changed while the model is built (empty for a view).
    [[nodiscard]] std::span<T> owned() { return m_owned; }
    [[nodiscard]] const T& operator[](std::size_t i) const { return m_view[i]; }
    [[nodiscard]] std::size_t size() const { return m_view.size(); }
    [[nodiscard]] const T* data() const { return m_view.data(); }
    [[nodiscard]] std::span<const T> span() const { return m_view; }

private:
    std::vector<T> m_owned;
    std::span<const T> m_view;
};

// Open-addressing map (left id, right id) → (rank, merged id). When ids and ranks fit 16 bits
// (GPT-2: 50,257 ids) a slot is 8 bytes, key and value packed, so that the map of GPT-2's 108,299
// pairs takes 2 MiB; otherwise a slot is 16 bytes.
class PairMap {
public:
    struct Found {
        std::uint32_t rank; // kNoRank when the pair does not merge
        TokenId id;
    };
    static constexpr std::uint32_t kEmptySmall = ~std::uint32_t{0};
    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
    struct Small {
        std::uint32_t key = kEmptySmall; // left << 16 | right
        std::uint32_t value = 0;         // rank << 16 | id
    };
    struct Slot {
        std::uint64_t key = kEmpty;
        std::uint32_t rank = 0;
        TokenId id = 0;
    };

    // n: the number of pairs to insert; compact when every id and rank is below 65535.
    void reserve(std::size_t n, bool compact)
    {
        const std::size_t cap = capacityFor(n);
        m_compact = compact;
        if (compact) {
            m_small.assign(cap, Small{});
            m_slots.view({});
        } else {
            m_slots.assign(cap, Slot{});
            m_small.view({});
        }
        setCapacity(cap);
    }
    // Views the slots of an image (a power of two of them, at least one empty).
    void view(std::span<const Small> small, std::span<const Slot> wide)
    {
        m_compact = !small.empty();
        m_small.view(small);
        m_slots.view(wide);
        setCapacity(m_compact ? small.size() : wide.size());
    }
    // Inserts unless the pair is present (the first insertion, lowest rank when sorted, wins).
    void insert(TokenId left, TokenId right, std::uint32_t rank, TokenId id)
    {
        if (m_compact) {
            const std::span<Small> small = m_small.owned();
            const std::uint32_t key = (left << 16) | right;
            for (std::size_t i = slotOf(key);; i = (i + 1) & m_mask) {
                if (small[i].key == key)
                    return;
                if (small[i].key == kEmptySmall) {
                    small[i] = {key, (rank << 16) | id};
                    return;
                }
            }
        }
        const std::span<Slot> wide = m_slots.owned();
        const std::uint64_t key = (std::uint64_t(left) << 32) | right;
        for (std::size_t i = slotOf(key);; i = (i + 1) & m_mask) {
            if (wide[i].key == key)
                return;
            if (wide[i].key == kEmpty) {
                wide[i] = {key, rank, id};
                return;
            }
        }
    }
    [[nodiscard]] Found find(TokenId left, TokenId right) const
    {
        if (m_compact) {
            const std::uint32_t key = (left << 16) | right;
            for (std::size_t i = slotOf(key);; i = (i + 1) & m_mask) {
                const Small s = m_small[i];
                if (s.key == key)
                    return {s.value >> 16, s.value & 0xFFFF};
                if (s.key == kEmptySmall)
                    return {kNoRank, 0};
            }
        }
        const std::uint64_t key = (std::uint64_t(left) << 32) | right;
        for (std::size_t i = slotOf(key);; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.key == key)
                return {s.rank, s.id};
            if (s.key == kEmpty)
                return {kNoRank, 0};
        }
    }
    [[nodiscard]] bool compact() const { return m_compact; }
    // The slots: compact ones, or wide ones (`slots` is a Qt keyword in the tests that read them).
    [[nodiscard]] std::span<const Small> compactSlots() const { return m_small.span(); }
    [[nodiscard]] std::span<const Slot> wideSlots() const { return m_slots.span(); }
    // Fibonacci hashing of a key (the slot is its high bits): key × 2^64/φ after folding the high bits down.
    static std::uint64_t mix(std::uint64_t key) { return (key ^ (key >> 29)) * 0x9E3779B97F4A7C15ull; }

private:
    void setCapacity(std::size_t cap)
    {
        m_mask = cap - 1;
        m_shift = 64 - std::countr_zero(cap);
    }
    [[nodiscard]] std::size_t slotOf(std::uint64_t key) const { return std::size_t(mix(key) >> m_shift); }
    bool m_compact = false;
    Table<Small> m_small;
    Table<Slot> m_slots;
    std::size_t m_mask = 0;
    int m_shift = 63;
};

// A slot of the token index: the hash of a token's bytes and its id + 1 (0: empty).
struct TokenSlot {
    std::uint64_t hash = 0;
    std::uint32_t idPlusOne = 0;
    std::uint32_t unused = 0; // zero, so that images of equal tables are equal
};

} // namespace bpedetail

using namespace bpedetail; // bpe.cpp and bpeencoder.cpp read these unqualified

// The model's tables. Each is owned (a model parsed or built at run time) or a view onto an image
// prebuilt at build time (bpeimage.cpp): the encoder reads both alike.
struct BpeModel::Data {
    std::string name;
    std::optional<TokenId> endOfText;
    bool tiktoken = false;                 // GPT-2 semantics: whole-piece lookup, any split merges
    std::array<TokenId, 256> byteToken{};  // id of each single byte
    Table<char> tokenBytes;                // every token's bytes, back to back in id order
    Table<std::uint32_t> tokenStart;       // the bytes of id are [tokenStart[id], tokenStart[id + 1])
    Table<std::uint32_t> rank; // rank of the merge that makes each token (kNoRank for bytes/special)
    std::vector<Merge> merges;
    PairMap pairs;                         // (left, right) → (rank, merged id)
    // bytes → id for whole-piece lookup (tiktoken semantics; special tokens excluded).
    Table<TokenSlot> tokenSlots;
    std::size_t tokenMask = 0;
    // A Bloom filter of the token index (one 64-bit word per key, two bits): most pieces missing
    // from the encoder's cache are not tokens, and this answers them from 64 KiB instead of a
    // random read in the index.
    Table<std::uint64_t> tokenFilter;
    // Pairs of two single bytes, indexed by byte values (first << 8 | second): the first round of
    // every BPE reads only these.
    Table<PairMap::Found> bytePairs;

    static constexpr int kFilterWordBits = 13;
    static std::uint64_t filterBits(std::uint64_t h) { return (std::uint64_t{1} << (h & 63)) | (std::uint64_t{1} << ((h >> 6) & 63)); }
    [[nodiscard]] bool mayBeToken(std::uint64_t h) const
    {
        const std::uint64_t bits = filterBits(h);
        return (tokenFilter[h >> (64 - kFilterWordBits)] & bits) == bits;
    }

    [[nodiscard]] std::size_t vocabSize() const { return tokenStart.size() ? tokenStart.size() - 1 : 0; }
    // The bytes of id (id < vocabSize()).
    [[nodiscard]] std::string_view token(TokenId id) const
    {
        return {tokenBytes.data() + tokenStart[id], std::size_t(tokenStart[id + 1] - tokenStart[id])};
    }

    // Packs the bytes of each id and indexes them; returns how many ids repeat the bytes of a lower id.
    std::size_t setTokens(const std::vector<std::string>& tokens)
    {
        std::size_t total = 0;
        for (const std::string& t : tokens)
            total += t.size();
        const std::span<std::uint32_t> start = tokenStart.assign(tokens.size() + 1, 0);
        const std::span<char> bytes = tokenBytes.assign(total, 0);
        std::size_t at = 0;
        for (std::size_t id = 0; id < tokens.size(); ++id) {
            start[id] = std::uint32_t(at);
            std::memcpy(bytes.data() + at, tokens[id].data(), tokens[id].size());
            at += tokens[id].size();
        }
        start[tokens.size()] = std::uint32_t(at);
        return buildTokenIndex();
    }
    // Indexes the tokens by bytes; returns how many ids repeat the bytes of a lower id.
    std::size_t buildTokenIndex()
    {
        std::size_t duplicates = 0;
        const std::size_t n = vocabSize();
        const std::span<TokenSlot> cells = tokenSlots.assign(capacityFor(n), TokenSlot{});
        tokenMask = cells.size() - 1;
        const std::span<std::uint64_t> filter = tokenFilter.assign(std::size_t{1} << kFilterWordBits, 0);
        for (TokenId id = 0; id < n; ++id) {
            if (endOfText && id == *endOfText)
                continue;
            const std::string_view t = token(id);
            const auto h = hashBytes(reinterpret_cast<const unsigned char*>(t.data()), t.size());
            filter[h >> (64 - kFilterWordBits)] |= filterBits(h);
            for (std::size_t i = h & tokenMask;; i = (i + 1) & tokenMask) {
                TokenSlot& s = cells[i];
                if (s.idPlusOne == 0) {
                    s = {h, id + 1, 0};
                    break;
                }
                if (s.hash == h && token(s.idPlusOne - 1) == t) {
                    ++duplicates; // the lower id wins
                    break;
                }
            }
        }
        return duplicates;
    }
    [[nodiscard]] std::optional<TokenId> findToken(const unsigned char* p, std::size_t n, std::uint64_t h) const
    {
        if (!mayBeToken(h))
            return std::nullopt;
        for (std::size_t i = h & tokenMask;; i = (i + 1) & tokenMask) {
            const TokenSlot& s = tokenSlots[i];
            if (s.idPlusOne == 0)
                return std::nullopt;
            if (s.hash == h) {
                const TokenId id = s.idPlusOne - 1;
                const std::uint32_t begin = tokenStart[id];
                if (tokenStart[id + 1] - begin == n && sameBytes(tokenBytes.data() + begin, p, n))
                    return id;
            }
        }
    }
    [[nodiscard]] std::optional<TokenId> findToken(std::string_view bytes) const
    {
        const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
        return findToken(p, bytes.size(), hashBytes(p, bytes.size()));
    }

    // Fills bytePairs from pairs; byteToken must be set.
    void buildBytePairs()
    {
        const std::span<PairMap::Found> table = bytePairs.assign(std::size_t{1} << 16, PairMap::Found{kNoRank, 0});
        for (int a = 0; a < 256; ++a)
            for (int b = 0; b < 256; ++b)
                table[std::size_t(a << 8 | b)] = pairs.find(byteToken[a], byteToken[b]);
    }

    // Byte tokens must exist; fills byteToken.
    std::optional<std::string> fillByteTokens()
    {
        for (int b = 0; b < 256; ++b) {
            const auto id = findToken(std::string_view(reinterpret_cast<const char*>(&b), 1));
            if (!id)
                return "no token for the byte 0x" + std::string(1, "0123456789ABCDEF"[b >> 4])
                    + std::string(1, "0123456789ABCDEF"[b & 15]) + " (" + byteToUnicode(std::uint8_t(b))
                    + "); a byte-level BPE needs all 256";
            byteToken[b] = *id;
        }
        return std::nullopt;
    }
};

} // namespace tw::text
