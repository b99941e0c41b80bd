#include "bpe.h"

#include "pretokenizer.h"
#include "pretokenizer_p.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <limits>

namespace tw::text {

namespace {
// The text limit in force. Atomic: derivations read it on worker threads while a test may lower it.
std::atomic<std::size_t> g_maxTextBytes{kMaxTextBytes};
} // namespace

std::size_t maxTextBytes()
{
    return g_maxTextBytes.load(std::memory_order_relaxed);
}

ScopedTextLimit::ScopedTextLimit(std::size_t bytes)
    : m_previous(g_maxTextBytes.exchange(std::min(bytes, kMaxTextBytes))) // never above the program's limit
{
}

ScopedTextLimit::~ScopedTextLimit()
{
    g_maxTextBytes.store(m_previous);
}

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kEndOfText = "<|endoftext|>";
constexpr std::uint32_t kNoRank = std::numeric_limits<std::uint32_t>::max();

// Hashing of byte strings (pieces and tokens). Strings of up to 16 bytes are hashed from two
// zero-padded little-endian words, which the encoder also keeps to compare cache keys without
// touching memory elsewhere; longer strings go through a 16-bytes-a-step loop. Both ways give the
// same value for the same bytes, whatever the memory after them.
constexpr std::uint64_t kHash0 = 0xA0761D6478BD642Full;
constexpr std::uint64_t kHash1 = 0xE7037ED1A0B428DBull;
constexpr std::uint64_t kHash2 = 0x8EBC6AF09C88C6E3ull;

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

std::uint64_t hashLong(const unsigned char* p, std::size_t n)
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

std::size_t capacityFor(std::size_t n)
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

// The GPT-2 byte ↔ unicode table of encoder.py's bytes_to_unicode(): printable bytes map to
// themselves, the others to U+0100 onwards in byte order.
struct ByteTable {
    std::array<char32_t, 256> toCode{};
    std::array<std::int16_t, 324> fromCode{}; // code point → byte, -1 when none
    ByteTable()
    {
        fromCode.fill(-1);
        int extra = 0;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            toCode[b] = printable ? char32_t(b) : char32_t(256 + extra++);
            fromCode[toCode[b]] = std::int16_t(b);
        }
    }
};
const ByteTable& byteTable()
{
    static const ByteTable table;
    return table;
}

void appendUtf8(std::string& out, char32_t c)
{
    if (c < 0x80) {
        out += char(c);
    } else if (c < 0x800) {
        out += char(0xC0 | (c >> 6));
        out += char(0x80 | (c & 0x3F));
    } else {
        out += char(0xE0 | (c >> 12));
        out += char(0x80 | ((c >> 6) & 0x3F));
        out += char(0x80 | (c & 0x3F));
    }
}

// 1-based line and column (in bytes) of a byte offset.
std::pair<int, int> lineColumn(std::string_view text, std::size_t offset)
{
    offset = std::min(offset, text.size());
    int line = 1;
    std::size_t lineStart = 0;
    for (std::size_t i = 0; i < offset; ++i)
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    return {line, int(offset - lineStart) + 1};
}

// Parses JSON; a syntax error becomes an Error with the line and column where parsing stopped.
Result<Json> parseJson(std::string_view text, const std::string& sourceName)
{
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        return makeError("the file is empty", Location{sourceName, 1, 1, {}, {}});
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        // e.byte is the 1-based index of the last byte read (the offending one).
        const auto [line, column] = lineColumn(text, e.byte > 0 ? e.byte - 1 : 0);
        std::string what = e.what();
        const auto cut = what.find("syntax error");
        if (cut != std::string::npos)
            what = what.substr(cut);
        const bool truncated = e.byte >= text.size();
        return makeError((truncated ? "invalid JSON (the file ends too early): " : "invalid JSON: ") + what,
                         Location{sourceName, line, column, {}, {}});
    } catch (const Json::out_of_range& e) {
        // A number too large for a double (406). nlohmann gives no position: find the literal.
        std::string what = e.what();
        const auto cut = what.find("] ");
        if (cut != std::string::npos)
            what = what.substr(cut + 2);
        const auto q0 = what.find('\''), q1 = what.rfind('\'');
        const auto at = q0 < q1 ? text.find(what.substr(q0 + 1, q1 - q0 - 1)) : std::string_view::npos;
        const auto [line, column] = at == std::string_view::npos ? std::pair{0, 0} : lineColumn(text, at);
        return makeError("invalid JSON: " + what, Location{sourceName, line, column, {}, {}});
    }
}

// A JSON value for a message: its text when short and shallow, else its type (dump() recurses).
std::string shortJson(const Json& v)
{
    auto shallow = [](auto&& self, const Json& j, int depth) -> bool {
        if (!j.is_structured())
            return true;
        if (depth == 0 || j.size() > 16)
            return false;
        for (const auto& e : j)
            if (!self(self, e, depth - 1))
                return false;
        return true;
    };
    if (!shallow(shallow, v, 4))
        return "a large " + std::string(v.type_name());
    std::string text = v.dump();
    if (text.size() > 120)
        text = text.substr(0, 117) + "...";
    return text;
}

// The integer id of a JSON number as text (uint64 ids above INT64_MAX included).
std::string idText(const Json& v)
{
    return v.dump();
}

// True when an integer JSON value is a valid index below size.
bool idBelow(const Json& v, std::size_t size)
{
    if (v.is_number_unsigned())
        return v.get<std::uint64_t>() < size;
    const auto id = v.get<std::int64_t>();
    return id >= 0 && std::uint64_t(id) < size;
}

std::string jsonKeyPath(const std::string& parent, const std::string& key)
{
    Json k = key;
    return parent + "[" + k.dump() + "]";
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Model data

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

BpeModel::BpeModel(std::shared_ptr<const Data> data) : m_data(std::move(data)) {}

std::size_t BpeModel::vocabSize() const { return m_data->tokens.size(); }

std::string_view BpeModel::bytesOf(TokenId id) const
{
    return id < m_data->tokens.size() ? std::string_view(m_data->tokens[id]) : std::string_view();
}

std::optional<TokenId> BpeModel::endOfText() const { return m_data->endOfText; }
const std::vector<Merge>& BpeModel::merges() const { return m_data->merges; }
const std::string& BpeModel::name() const { return m_data->name; }

std::string BpeModel::displayForm(TokenId id) const
{
    std::string out;
    for (unsigned char b : bytesOf(id))
        out += byteToUnicode(b);
    return out;
}

std::string byteToUnicode(unsigned char byte)
{
    std::string out;
    appendUtf8(out, byteTable().toCode[byte]);
    return out;
}

namespace {

// GPT-2's printable form back to bytes, appended to out; false when mapped is not in the alphabet.
bool appendMappedBytes(std::string_view mapped, std::string& out)
{
    const auto& table = byteTable();
    const std::size_t start = out.size();
    out.resize(start + mapped.size()); // at most one byte per byte of mapped
    char* w = out.data() + start;
    for (std::size_t i = 0; i < mapped.size();) {
        const auto c = static_cast<unsigned char>(mapped[i]);
        char32_t cp = 0;
        if (c < 0x80) {
            cp = c;
            i += 1;
        } else if ((c & 0xE0) == 0xC0 && i + 1 < mapped.size()
                   && (static_cast<unsigned char>(mapped[i + 1]) & 0xC0) == 0x80) {
            cp = (char32_t(c & 0x1F) << 6) | (static_cast<unsigned char>(mapped[i + 1]) & 0x3F);
            i += 2;
        } else {
            return false; // every mapped code point is below U+0800
        }
        if (cp >= table.fromCode.size() || table.fromCode[cp] < 0)
            return false;
        *w++ = char(table.fromCode[cp]);
    }
    out.resize(std::size_t(w - out.data()));
    return true;
}

} // namespace

std::optional<std::string> unicodeToBytes(std::string_view mapped)
{
    std::string out;
    out.reserve(mapped.size());
    if (!appendMappedBytes(mapped, out))
        return std::nullopt;
    return out;
}

std::string decode(const BpeModel& model, std::span<const TokenId> ids)
{
    std::string out;
    for (TokenId id : ids)
        out += model.bytesOf(id);
    return out;
}

// ---------------------------------------------------------------------------------------------
// Loading

namespace {

// encoder.json as GPT-2 ships it: one flat object of "token": id with ids 0…n−1, each token in
// GPT-2's byte↔unicode alphabet, no two tokens alike. Reads it straight into data (tokens,
// endOfText, token index) without building a JSON tree; returns false on anything else, and then
// the JSON library reads the file again and reports what is wrong.
bool readGpt2EncoderFast(std::string_view json, BpeModel::Data& data)
{
    const auto& table = byteTable();
    const char* p = json.data();
    const char* const end = p + json.size();
    auto skipSpace = [&] {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
            ++p;
    };
    auto hex = [&](char32_t& v) {
        if (end - p < 4)
            return false;
        v = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = *p++;
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= char32_t(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= char32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= char32_t(c - 'A' + 10);
            else
                return false;
        }
        return true;
    };
    std::vector<std::string> tokens;
    std::vector<std::uint32_t> ids;
    tokens.reserve(json.size() / 12);
    ids.reserve(json.size() / 12);
    skipSpace();
    if (p == end || *p++ != '{')
        return false;
    skipSpace();
    for (;;) {
        if (p == end || *p++ != '"')
            return false;
        char bytes[1024]; // GPT-2's longest token has 128 bytes; longer keys take the general path
        std::size_t size = 0;
        for (;;) {
            if (p == end || size == sizeof bytes)
                return false;
            const auto c = static_cast<unsigned char>(*p++);
            if (c == '"')
                break;
            char32_t cp = c;
            if (c < 0x20) {
                return false;
            } else if (c == '\\') {
                if (p == end)
                    return false;
                switch (*p++) {
                case '"': cp = '"'; break;
                case '\\': cp = '\\'; break;
                case '/': cp = '/'; break;
                case 'b': cp = '\b'; break;
                case 'f': cp = '\f'; break;
                case 'n': cp = '\n'; break;
                case 'r': cp = '\r'; break;
                case 't': cp = '\t'; break;
                case 'u':
                    if (!hex(cp))
                        return false;
                    break;
                default: return false;
                }
            } else if (c >= 0x80) {
                if (c < 0xC2 || c > 0xDF || p == end || (static_cast<unsigned char>(*p) & 0xC0) != 0x80)
                    return false; // GPT-2's alphabet is below U+0800
                cp = (char32_t(c & 0x1F) << 6) | (static_cast<unsigned char>(*p++) & 0x3F);
            }
            if (cp >= table.fromCode.size() || table.fromCode[cp] < 0)
                return false;
            bytes[size++] = char(table.fromCode[cp]);
        }
        skipSpace();
        if (p == end || *p++ != ':')
            return false;
        skipSpace();
        const char* digits = p;
        std::uint64_t id = 0;
        while (p < end && *p >= '0' && *p <= '9' && id <= 0xFFFFFFFF)
            id = id * 10 + std::uint64_t(*p++ - '0');
        if (p == digits || id > 0xFFFFFFFF || (p - digits > 1 && *digits == '0'))
            return false;
        if (size == 0)
            return false;
        tokens.emplace_back(bytes, size);
        ids.push_back(std::uint32_t(id));
        skipSpace();
        if (p == end)
            return false;
        const char sep = *p++;
        if (sep == '}')
            break;
        if (sep != ',')
            return false;
        skipSpace();
    }
    skipSpace();
    if (p != end)
        return false;
    const std::size_t count = tokens.size();
    data.tokens.assign(count, {});
    std::vector<bool> seen(count, false);
    for (std::size_t k = 0; k < count; ++k) {
        const std::uint32_t id = ids[k];
        if (id >= count || seen[id])
            return false;
        seen[id] = true;
        if (tokens[k] == kEndOfText)
            data.endOfText = TokenId(id);
        data.tokens[id] = std::move(tokens[k]);
    }
    return data.buildTokenIndex() == 0;
}

// encoder.json through the JSON library, with precise errors.
Result<std::shared_ptr<BpeModel::Data>> readGpt2EncoderJson(std::string_view encoderJson, const std::string& encName)
{
    auto parsed = parseJson(encoderJson, encName);
    if (!parsed)
        return parsed.error();
    const Json& enc = parsed.value();
    if (!enc.is_object())
        return makeError("encoder.json must be an object mapping tokens to ids, found " + std::string(enc.type_name()),
                         Location{encName, 0, 0, "$", {}});
    auto data = std::make_shared<BpeModel::Data>();
    data->tokens.resize(enc.size());
    std::vector<bool> seen(enc.size(), false);
    for (const auto& [key, value] : enc.items()) {
        auto where = [&, &key = key] { return Location{encName, 0, 0, jsonKeyPath("$", key), {}}; };
        if (!value.is_number_integer())
            return makeError("the id of a token must be an integer, found " + std::string(value.type_name()), where());
        if (!idBelow(value, enc.size()))
            return makeError("id " + idText(value) + " is outside 0…" + std::to_string(enc.size() - 1), where());
        const auto id = value.get<std::int64_t>();
        if (seen[id])
            return makeError("id " + std::to_string(id) + " is used twice", where());
        seen[id] = true;
        if (key == kEndOfText) {
            data->endOfText = TokenId(id);
            data->tokens[id] = key;
            continue;
        }
        std::string bytes;
        if (!appendMappedBytes(key, bytes) || bytes.empty())
            return makeError("token is not written in GPT-2's byte↔unicode alphabet", where());
        data->tokens[id] = std::move(bytes);
    }
    data->buildTokenIndex();
    return data;
}

} // namespace

Result<BpeModel> BpeModel::fromGpt2Files(std::string_view encoderJson, std::string_view vocabBpe, std::string sourceName)
{
    const std::string encName = sourceName + " encoder.json";
    const std::string vocName = sourceName + " vocab.bpe";
    std::shared_ptr<Data> data = std::make_shared<Data>();
    if (!readGpt2EncoderFast(encoderJson, *data)) {
        auto read = readGpt2EncoderJson(encoderJson, encName);
        if (!read)
            return read.error();
        data = std::move(read.value());
    }
    data->name = sourceName;
    data->tiktoken = true;
    if (auto missing = data->fillByteTokens())
        return makeError(*missing, Location{encName, 0, 0, "$", {}});

    // vocab.bpe: "#version: 0.2" then one merge "left right" per line, in rank order.
    int lineNo = 0;
    std::size_t pos = 0;
    std::string partBytes[2];
    std::string joined;
    data->merges.reserve(std::size_t(std::count(vocabBpe.begin(), vocabBpe.end(), '\n')) + 1);
    while (pos < vocabBpe.size()) {
        std::size_t end = vocabBpe.find('\n', pos);
        if (end == std::string_view::npos)
            end = vocabBpe.size();
        std::string_view line = vocabBpe.substr(pos, end - pos);
        pos = end + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (line.empty() || (lineNo == 1 && line.starts_with("#version")))
            continue;
        const auto space = line.find(' ');
        if (space == std::string_view::npos || space == 0 || space + 1 == line.size()
            || line.find(' ', space + 1) != std::string_view::npos)
            return makeError("expected a merge written as two tokens separated by one space, found \""
                                 + std::string(line.substr(0, 80)) + "\"",
                             Location{vocName, lineNo, 1, {}, {}});
        const std::string_view parts[2] = {line.substr(0, space), line.substr(space + 1)};
        TokenId ids[2];
        for (int k = 0; k < 2; ++k) {
            partBytes[k].clear();
            const auto id = appendMappedBytes(parts[k], partBytes[k]) ? data->findToken(partBytes[k]) : std::nullopt;
            if (!id)
                return makeError("merge names the token \"" + std::string(parts[k]) + "\", which encoder.json does not have",
                                 Location{vocName, lineNo, k == 0 ? 1 : int(space) + 2, {}, {}});
            ids[k] = *id;
        }
        joined.assign(partBytes[0]).append(partBytes[1]);
        const auto merged = data->findToken(joined);
        if (!merged)
            return makeError("the merge of \"" + std::string(parts[0]) + "\" and \"" + std::string(parts[1])
                                 + "\" is not a token of encoder.json",
                             Location{vocName, lineNo, 1, {}, {}});
        data->merges.push_back(Merge{ids[0], ids[1], *merged, 0});
    }

    // tiktoken's semantics (tiktoken/src/lib.rs byte_pair_merge): two adjacent parts merge when
    // their concatenation is a token, lowest rank first, and the rank of a token is its id. So
    // every split of a token into two tokens is a pair; merge k of vocab.bpe makes id 256 + k.
    data->rank.assign(data->tokens.size(), kNoRank);
    std::vector<Merge> pairs; // (left, right, merged id); frequency holds the rank
    pairs.reserve(data->tokens.size() * 3);
    std::uint32_t maxRank = 0;
    for (TokenId id = 0; id < data->tokens.size(); ++id) {
        const std::string& t = data->tokens[id];
        if (t.size() < 2 || (data->endOfText && id == *data->endOfText))
            continue;
        data->rank[id] = id >= 256 ? id - 256 : 0;
        maxRank = std::max(maxRank, data->rank[id]);
        for (std::size_t k = 1; k < t.size(); ++k) {
            const auto left = data->findToken(std::string_view(t).substr(0, k));
            if (!left)
                continue;
            const auto right = data->findToken(std::string_view(t).substr(k));
            if (right)
                pairs.push_back(Merge{*left, *right, id, data->rank[id]});
        }
    }
    data->pairs.reserve(pairs.size(), data->tokens.size() < 0xFFFF && maxRank < 0xFFFF);
    for (const Merge& m : pairs)
        data->pairs.insert(m.left, m.right, std::uint32_t(m.frequency), m.id);
    data->buildBytePairs();
    return BpeModel(std::move(data));
}

namespace {

// Builds the merge-rank model shared by fromMerges and fromHuggingFaceJson: tokens and merges set.
void buildMergeRankPairs(BpeModel::Data& data)
{
    data.rank.assign(data.tokens.size(), kNoRank);
    data.pairs.reserve(data.merges.size(), data.tokens.size() < 0xFFFF && data.merges.size() < 0xFFFF);
    for (std::size_t k = 0; k < data.merges.size(); ++k) {
        const Merge& m = data.merges[k];
        data.pairs.insert(m.left, m.right, std::uint32_t(k), m.id);
        if (data.rank[m.id] == kNoRank)
            data.rank[m.id] = std::uint32_t(k);
    }
    data.buildBytePairs();
}

} // namespace

Result<BpeModel> BpeModel::fromMerges(std::vector<Merge> merges, bool withEndOfText, std::string sourceName)
{
    auto data = std::make_shared<Data>();
    data->name = sourceName;
    data->tokens.reserve(256 + merges.size() + 1);
    for (int b = 0; b < 256; ++b)
        data->tokens.emplace_back(1, char(b));
    for (std::size_t k = 0; k < merges.size(); ++k) {
        const Merge& m = merges[k];
        const auto next = TokenId(256 + k);
        const Location where{sourceName, 0, 0, "merges[" + std::to_string(k) + "]", {}};
        if (m.id != next)
            return makeError("merge " + std::to_string(k) + " must make id " + std::to_string(next) + ", not "
                                 + std::to_string(m.id),
                             where);
        if (m.left >= next || m.right >= next)
            return makeError("merge " + std::to_string(k) + " names a token not defined before it", where);
        data->tokens.push_back(data->tokens[m.left] + data->tokens[m.right]);
    }
    if (withEndOfText) {
        data->endOfText = TokenId(data->tokens.size());
        data->tokens.emplace_back(kEndOfText);
    }
    data->merges = std::move(merges);
    data->buildTokenIndex();
    for (int b = 0; b < 256; ++b)
        data->byteToken[b] = TokenId(b);
    buildMergeRankPairs(*data);
    return BpeModel(std::move(data));
}

Result<BpeModel> BpeModel::fromHuggingFaceJson(std::string_view json, std::string sourceName)
{
    auto parsed = parseJson(json, sourceName);
    if (!parsed)
        return parsed.error();
    const Json& root = parsed.value();
    auto fail = [&](std::string message, std::string path) {
        return makeError(std::move(message), Location{sourceName, 0, 0, std::move(path), {}});
    };
    if (!root.is_object())
        return fail("a tokenizer.json must be an object, found " + std::string(root.type_name()), "$");
    if (!root.contains("model") || !root["model"].is_object())
        return fail("missing the \"model\" object", "model");
    const Json& model = root["model"];
    if (model.contains("type") && !(model["type"].is_string() && model["type"] == "BPE"))
        return fail("only BPE models are supported, found " + shortJson(model["type"]), "model.type");

    // The pre-tokenizer must be byte-level (alone or inside a Sequence).
    auto isByteLevel = [](const Json& p) {
        return p.is_object() && p.contains("type") && p["type"] == "ByteLevel";
    };
    static const Json kNone;
    const Json& pre = root.contains("pre_tokenizer") ? root["pre_tokenizer"] : kNone;
    bool byteLevel = isByteLevel(pre);
    if (!byteLevel && pre.is_object() && pre.contains("type") && pre["type"] == "Sequence" && pre.contains("pretokenizers")
        && pre["pretokenizers"].is_array())
        for (const auto& p : pre["pretokenizers"])
            byteLevel = byteLevel || isByteLevel(p);
    if (!byteLevel)
        return fail("the pre-tokenizer must be ByteLevel (GPT-2 style), found " + shortJson(pre), "pre_tokenizer");
    if (pre.is_object() && pre.contains("add_prefix_space") && !pre["add_prefix_space"].is_boolean())
        return fail("add_prefix_space must be true or false, found " + std::string(pre["add_prefix_space"].type_name()),
                    "pre_tokenizer.add_prefix_space");
    if (pre.is_object() && pre.contains("add_prefix_space") && pre["add_prefix_space"] == true)
        return fail("add_prefix_space = true is not supported", "pre_tokenizer.add_prefix_space");

    if (!model.contains("vocab") || !model["vocab"].is_object())
        return fail("missing the \"vocab\" object (token → id)", "model.vocab");
    const Json& vocab = model["vocab"];
    auto data = std::make_shared<Data>();
    data->name = sourceName;
    data->tokens.resize(vocab.size());
    std::vector<bool> seen(vocab.size(), false);
    std::vector<std::string> keyOf(vocab.size());
    for (const auto& [key, value] : vocab.items()) {
        const std::string path = jsonKeyPath("model.vocab", key);
        if (!value.is_number_integer())
            return fail("the id of a token must be an integer, found " + std::string(value.type_name()), path);
        if (!idBelow(value, vocab.size()))
            return fail("id " + idText(value) + " is outside 0…" + std::to_string(vocab.size() - 1), path);
        const auto id = value.get<std::int64_t>();
        if (seen[id])
            return fail("id " + std::to_string(id) + " is used twice", path);
        seen[id] = true;
        keyOf[id] = key;
        if (key == kEndOfText) {
            data->tokens[id] = key;
            data->endOfText = TokenId(id);
            continue;
        }
        auto bytes = unicodeToBytes(key);
        if (!bytes || bytes->empty())
            return fail("token is not written in the byte-level alphabet", path);
        data->tokens[id] = std::move(*bytes);
    }
    // Added tokens: <|endoftext|> may live only here, with an id after the vocabulary.
    if (root.contains("added_tokens") && !root["added_tokens"].is_null()) {
        const Json& added = root["added_tokens"];
        if (!added.is_array())
            return fail("must be an array", "added_tokens");
        for (std::size_t k = 0; k < added.size(); ++k) {
            const std::string path = "added_tokens[" + std::to_string(k) + "]";
            const Json& a = added[k];
            if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content")
                || !a["content"].is_string())
                return fail("an added token needs an integer \"id\" and a string \"content\"", path);
            const auto content = a["content"].get<std::string>();
            if (content != kEndOfText)
                return fail("only the added token " + std::string(kEndOfText) + " is supported, found " + content, path);
            if (!a["id"].is_number_unsigned() && a["id"].get<std::int64_t>() < 0)
                return fail("id " + idText(a["id"]) + " is outside 0…" + std::to_string(data->tokens.size()), path + ".id");
            if (!idBelow(a["id"], data->tokens.size() + 1))
                return fail("id " + idText(a["id"]) + " leaves a gap after the vocabulary", path + ".id");
            const auto id = a["id"].get<std::int64_t>();
            if (std::size_t(id) == data->tokens.size()) {
                data->tokens.emplace_back(kEndOfText);
                keyOf.emplace_back(kEndOfText);
            } else if (data->tokens[id] != kEndOfText) {
                return fail("id " + std::to_string(id) + " is already the token " + keyOf[id], path + ".id");
            }
            data->endOfText = TokenId(id);
        }
    }
    data->buildTokenIndex();
    if (auto missing = data->fillByteTokens())
        return fail(*missing, "model.vocab");

    if (!model.contains("merges") || !model["merges"].is_array())
        return fail("missing the \"merges\" array", "model.merges");
    const Json& merges = model["merges"];
    data->merges.reserve(merges.size());
    for (std::size_t k = 0; k < merges.size(); ++k) {
        const std::string path = "model.merges[" + std::to_string(k) + "]";
        const Json& m = merges[k];
        std::string parts[2];
        if (m.is_string()) {
            const auto s = m.get<std::string>();
            const auto space = s.find(' ');
            if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
                return fail("a merge string must be two tokens separated by one space, found \"" + s + "\"", path);
            parts[0] = s.substr(0, space);
            parts[1] = s.substr(space + 1);
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            parts[0] = m[0].get<std::string>();
            parts[1] = m[1].get<std::string>();
        } else {
            return fail("a merge must be \"left right\" or [\"left\", \"right\"], found " + shortJson(m), path);
        }
        TokenId ids[2];
        for (int j = 0; j < 2; ++j) {
            const auto id = vocab.find(parts[j]);
            if (id == vocab.end())
                return fail("merge names the token \"" + parts[j] + "\", which the vocabulary does not have", path);
            ids[j] = TokenId(id->get<std::int64_t>());
        }
        const auto merged = vocab.find(parts[0] + parts[1]);
        if (merged == vocab.end())
            return fail("the merge of \"" + parts[0] + "\" and \"" + parts[1] + "\" is not in the vocabulary", path);
        data->merges.push_back(Merge{ids[0], ids[1], TokenId(merged->get<std::int64_t>()), 0});
    }
    buildMergeRankPairs(*data);
    return BpeModel(std::move(data));
}

std::string BpeModel::toHuggingFaceJson() const
{
    const Data& d = *m_data;
    OrderedJson root;
    root["version"] = "1.0";
    root["truncation"] = nullptr;
    root["padding"] = nullptr;
    OrderedJson added = OrderedJson::array();
    if (d.endOfText)
        added.push_back({{"id", *d.endOfText}, {"content", kEndOfText}, {"single_word", false}, {"lstrip", false},
                         {"rstrip", false}, {"normalized", true}, {"special", true}});
    root["added_tokens"] = added;
    root["normalizer"] = nullptr;
    const OrderedJson byteLevel = {
        {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    root["pre_tokenizer"] = byteLevel;
    root["post_processor"] = byteLevel;
    root["decoder"] = byteLevel;
    OrderedJson vocab = OrderedJson::object();
    for (TokenId id = 0; id < d.tokens.size(); ++id)
        vocab[(d.endOfText && id == *d.endOfText) ? std::string(kEndOfText) : displayForm(id)] = id;
    OrderedJson merges = OrderedJson::array();
    for (const Merge& m : d.merges)
        merges.push_back(OrderedJson::array({displayForm(m.left), displayForm(m.right)}));
    root["model"] = {{"type", "BPE"},        {"dropout", nullptr},          {"unk_token", nullptr},
                     {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}, {"fuse_unk", false},
                     {"byte_fallback", false}, {"vocab", std::move(vocab)}, {"merges", std::move(merges)}};
    return root.dump(1) + "\n";
}

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

Result<std::vector<TokenSpan>> Encoder::encodeWithSpans(std::string_view text, const Progress& progress)
{
    if (const std::size_t limit = maxTextBytes(); text.size() > limit)
        return makeError("the text is " + std::to_string(text.size()) + " bytes; the tokenizer takes at most "
                         + std::to_string(limit) + " bytes at once");
    Impl& impl = *m_impl;
    std::vector<TokenSpan> spans;
    spans.reserve(text.size() / 3 + 16);
    std::vector<TokenId>& ids = impl.scratch;
    const std::uint32_t* tokenSize = impl.d->tokenSize.data();
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
            const std::uint32_t len = tokenSize[id];
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
