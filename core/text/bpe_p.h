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

// Open-addressing map (left id, right id) → (rank, merged id). When ids and ranks fit 16 bits
// (GPT-2: 50,257 ids) a slot is 8 bytes, key and value packed, so that the map of GPT-2's 108,299
// pairs takes 2 MiB; otherwise a slot is 16 bytes.
class PairMap {
public:
    struct Found {
        std::uint32_t rank; // kNoRank when the pair does not merge
        TokenId id;
    };

    // n: the number of pairs to insert; compact when every id and rank is below 65535.
    void reserve(std::size_t n, bool compact)
    {
        const std::size_t cap = capacityFor(n);
        m_compact = compact;
        m_small.clear();
        m_slots.clear();
        if (compact)
            m_small.assign(cap, Small{});
        else
            m_slots.assign(cap, Slot{});
        m_mask = cap - 1;
        m_shift = 64 - std::countr_zero(cap);
    }
    // Inserts unless the pair is present (the first insertion, lowest rank when sorted, wins).
    void insert(TokenId left, TokenId right, std::uint32_t rank, TokenId id)
    {
        if (m_compact) {
            const std::uint32_t key = (left << 16) | right;
            for (std::size_t i = slotOf(key);; i = (i + 1) & m_mask) {
                if (m_small[i].key == key)
                    return;
                if (m_small[i].key == kEmptySmall) {
                    m_small[i] = {key, (rank << 16) | id};
                    return;
                }
            }
        }
        const std::uint64_t key = (std::uint64_t(left) << 32) | right;
        for (std::size_t i = slotOf(key);; i = (i + 1) & m_mask) {
            if (m_slots[i].key == key)
                return;
            if (m_slots[i].key == kEmpty) {
                m_slots[i] = {key, rank, id};
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

private:
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
    // Fibonacci hashing: the high bits of key × 2^64/φ.
    [[nodiscard]] std::size_t slotOf(std::uint64_t key) const
    {
        std::uint64_t h = key ^ (key >> 29);
        return std::size_t((h * 0x9E3779B97F4A7C15ull) >> m_shift);
    }
    bool m_compact = false;
    std::vector<Small> m_small;
    std::vector<Slot> m_slots;
    std::size_t m_mask = 0;
    int m_shift = 63;
};

} // namespace bpedetail

using namespace bpedetail; // bpe.cpp and bpeencoder.cpp read these unqualified

struct BpeModel::Data {
    std::string name;
    std::vector<std::string> tokens; // bytes of each id
    std::vector<std::uint32_t> rank; // rank of the merge that makes each token (kNoRank for bytes/special)
    std::vector<Merge> merges;
    std::optional<TokenId> endOfText;
    bool tiktoken = false;                 // GPT-2 semantics: whole-piece lookup, any split merges
    std::array<TokenId, 256> byteToken{};  // id of each single byte
    PairMap pairs;                         // (left, right) → (rank, merged id)
    // bytes → id for whole-piece lookup (tiktoken semantics; special tokens excluded).
    std::vector<std::pair<std::uint64_t, TokenId>> tokenSlots; // (hash, id + 1); 0 = empty
    std::size_t tokenMask = 0;

    std::vector<std::uint32_t> tokenSize; // bytes of each id, next to each other for spans
    // A Bloom filter of the token index (one 64-bit word per key, two bits): most pieces missing
    // from the encoder's cache are not tokens, and this answers them from 64 KiB instead of a
    // random read in the index.
    std::vector<std::uint64_t> tokenFilter;
    // Pairs of two single bytes, indexed by byte values (first << 8 | second): the first round of
    // every BPE reads only these.
    std::vector<PairMap::Found> bytePairs;

    static constexpr int kFilterWordBits = 13;
    static std::uint64_t filterBits(std::uint64_t h) { return (std::uint64_t{1} << (h & 63)) | (std::uint64_t{1} << ((h >> 6) & 63)); }
    [[nodiscard]] bool mayBeToken(std::uint64_t h) const
    {
        const std::uint64_t bits = filterBits(h);
        return (tokenFilter[h >> (64 - kFilterWordBits)] & bits) == bits;
    }

    // Indexes the tokens by bytes; returns how many ids repeat the bytes of a lower id.
    std::size_t buildTokenIndex()
    {
        std::size_t duplicates = 0;
        tokenSlots.assign(capacityFor(tokens.size()), {0, 0});
        tokenMask = tokenSlots.size() - 1;
        tokenSize.resize(tokens.size());
        tokenFilter.assign(std::size_t{1} << kFilterWordBits, 0);
        for (TokenId id = 0; id < tokens.size(); ++id) {
            const auto& t = tokens[id];
            tokenSize[id] = std::uint32_t(t.size());
            if (endOfText && id == *endOfText)
                continue;
            const auto h = hashBytes(reinterpret_cast<const unsigned char*>(t.data()), t.size());
            tokenFilter[h >> (64 - kFilterWordBits)] |= filterBits(h);
            for (std::size_t i = h & tokenMask;; i = (i + 1) & tokenMask) {
                auto& s = tokenSlots[i];
                if (s.second == 0) {
                    s = {h, id + 1};
                    break;
                }
                if (s.first == h && tokens[s.second - 1] == t) {
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
            const auto& s = tokenSlots[i];
            if (s.second == 0)
                return std::nullopt;
            if (s.first == h) {
                const auto& t = tokens[s.second - 1];
                if (t.size() == n && sameBytes(t.data(), p, n))
                    return s.second - 1;
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
        bytePairs.assign(std::size_t{1} << 16, PairMap::Found{kNoRank, 0});
        for (int a = 0; a < 256; ++a)
            for (int b = 0; b < 256; ++b)
                bytePairs[std::size_t(a << 8 | b)] = pairs.find(byteToken[a], byteToken[b]);
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
