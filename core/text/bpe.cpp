#include "bpe.h"

#include "pretokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>

namespace tw::text {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kEndOfText = "<|endoftext|>";
constexpr std::uint32_t kNoRank = std::numeric_limits<std::uint32_t>::max();

// A fast 64-bit hash of a byte string (multiply-xorshift over 8-byte words).
inline std::uint64_t hashBytes(const unsigned char* p, std::size_t n)
{
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
    while (n >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    if (n) {
        std::uint64_t w = 0;
        for (std::size_t k = 0; k < n; ++k)
            w |= std::uint64_t(p[k]) << (8 * k);
        h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    }
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
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

// Mixes a (left, right) key so that its high bits, used as the slot index, depend on all its bits.
inline std::uint64_t hashPair(std::uint64_t key)
{
    key ^= key >> 29;
    key *= 0xBF58476D1CE4E5B9ull;
    key ^= key >> 32;
    return key * 0x9E3779B97F4A7C15ull;
}

std::size_t capacityFor(std::size_t n)
{
    std::size_t cap = 16;
    while (cap < 2 * n + 2)
        cap <<= 1;
    return cap;
}

// Open-addressing map (left id, right id) → (rank, merged id).
class PairMap {
public:
    struct Slot {
        std::uint64_t key = kEmpty;
        std::uint32_t rank = 0;
        TokenId id = 0;
    };
    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

    void reserve(std::size_t n)
    {
        m_slots.assign(capacityFor(n), Slot{});
        m_mask = m_slots.size() - 1;
        m_shift = 64 - std::countr_zero(m_slots.size());
    }
    // Inserts unless the pair is present (the first insertion, lowest rank when sorted, wins).
    void insert(TokenId left, TokenId right, std::uint32_t rank, TokenId id)
    {
        const std::uint64_t key = (std::uint64_t(left) << 32) | right;
        for (std::size_t i = hashPair(key) >> m_shift;; i = (i + 1) & m_mask) {
            if (m_slots[i].key == key)
                return;
            if (m_slots[i].key == kEmpty) {
                m_slots[i] = {key, rank, id};
                return;
            }
        }
    }
    [[nodiscard]] const Slot* find(TokenId left, TokenId right) const
    {
        const std::uint64_t key = (std::uint64_t(left) << 32) | right;
        for (std::size_t i = hashPair(key) >> m_shift;; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.key == key)
                return &s;
            if (s.key == kEmpty)
                return nullptr;
        }
    }

private:
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
    }
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

    void buildTokenIndex()
    {
        tokenSlots.assign(capacityFor(tokens.size()), {0, 0});
        tokenMask = tokenSlots.size() - 1;
        for (TokenId id = 0; id < tokens.size(); ++id) {
            if (endOfText && id == *endOfText)
                continue;
            const auto& t = tokens[id];
            const auto h = hashBytes(reinterpret_cast<const unsigned char*>(t.data()), t.size());
            for (std::size_t i = h & tokenMask;; i = (i + 1) & tokenMask) {
                auto& s = tokenSlots[i];
                if (s.second == 0) {
                    s = {h, id + 1};
                    break;
                }
                if (s.first == h && tokens[s.second - 1] == t)
                    break; // duplicate bytes: the lower id wins
            }
        }
    }
    [[nodiscard]] std::optional<TokenId> findToken(const unsigned char* p, std::size_t n, std::uint64_t h) const
    {
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

std::optional<std::string> unicodeToBytes(std::string_view mapped)
{
    const auto& table = byteTable();
    std::string out;
    out.reserve(mapped.size());
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
            return std::nullopt; // every mapped code point is below U+0800
        }
        if (cp >= table.fromCode.size() || table.fromCode[cp] < 0)
            return std::nullopt;
        out += char(table.fromCode[cp]);
    }
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

Result<BpeModel> BpeModel::fromGpt2Files(std::string_view encoderJson, std::string_view vocabBpe, std::string sourceName)
{
    const std::string encName = sourceName + " encoder.json";
    const std::string vocName = sourceName + " vocab.bpe";
    auto parsed = parseJson(encoderJson, encName);
    if (!parsed)
        return parsed.error();
    const Json& enc = parsed.value();
    if (!enc.is_object())
        return makeError("encoder.json must be an object mapping tokens to ids, found " + std::string(enc.type_name()),
                         Location{encName, 0, 0, "$", {}});

    auto data = std::make_shared<Data>();
    data->name = sourceName;
    data->tiktoken = true;
    data->tokens.resize(enc.size());
    std::vector<bool> seen(enc.size(), false);
    for (const auto& [key, value] : enc.items()) {
        const std::string path = jsonKeyPath("$", key);
        if (!value.is_number_integer())
            return makeError("the id of a token must be an integer, found " + std::string(value.type_name()),
                             Location{encName, 0, 0, path, {}});
        const auto id = value.get<std::int64_t>();
        if (id < 0 || std::size_t(id) >= enc.size())
            return makeError("id " + std::to_string(id) + " is outside 0…" + std::to_string(enc.size() - 1),
                             Location{encName, 0, 0, path, {}});
        if (seen[id])
            return makeError("id " + std::to_string(id) + " is used twice", Location{encName, 0, 0, path, {}});
        seen[id] = true;
        if (key == kEndOfText) {
            data->endOfText = TokenId(id);
            data->tokens[id] = key;
            continue;
        }
        auto bytes = unicodeToBytes(key);
        if (!bytes || bytes->empty())
            return makeError("token is not written in GPT-2's byte↔unicode alphabet", Location{encName, 0, 0, path, {}});
        data->tokens[id] = std::move(*bytes);
    }
    data->buildTokenIndex();
    if (auto missing = data->fillByteTokens())
        return makeError(*missing, Location{encName, 0, 0, "$", {}});

    // vocab.bpe: "#version: 0.2" then one merge "left right" per line, in rank order.
    int lineNo = 0;
    std::size_t pos = 0;
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
            const auto bytes = unicodeToBytes(parts[k]);
            const auto id = bytes ? data->findToken(*bytes) : std::nullopt;
            if (!id)
                return makeError("merge names the token \"" + std::string(parts[k]) + "\", which encoder.json does not have",
                                 Location{vocName, lineNo, k == 0 ? 1 : int(space) + 2, {}, {}});
            ids[k] = *id;
        }
        const auto merged = data->findToken(data->tokens[ids[0]] + data->tokens[ids[1]]);
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
    std::size_t pairCount = 0;
    for (TokenId id = 0; id < data->tokens.size(); ++id)
        if (data->tokens[id].size() >= 2 && !(data->endOfText && id == *data->endOfText))
            pairCount += data->tokens[id].size() - 1;
    data->pairs.reserve(pairCount);
    for (TokenId id = 0; id < data->tokens.size(); ++id) {
        const std::string& t = data->tokens[id];
        if (t.size() < 2 || (data->endOfText && id == *data->endOfText))
            continue;
        data->rank[id] = id >= 256 ? id - 256 : 0;
        for (std::size_t k = 1; k < t.size(); ++k) {
            const auto left = data->findToken(std::string_view(t).substr(0, k));
            if (!left)
                continue;
            const auto right = data->findToken(std::string_view(t).substr(k));
            if (right)
                data->pairs.insert(*left, *right, data->rank[id], id);
        }
    }
    return BpeModel(std::move(data));
}

namespace {

// Builds the merge-rank model shared by fromMerges and fromHuggingFaceJson: tokens and merges set.
void buildMergeRankPairs(BpeModel::Data& data)
{
    data.rank.assign(data.tokens.size(), kNoRank);
    data.pairs.reserve(data.merges.size());
    for (std::size_t k = 0; k < data.merges.size(); ++k) {
        const Merge& m = data.merges[k];
        data.pairs.insert(m.left, m.right, std::uint32_t(k), m.id);
        if (data.rank[m.id] == kNoRank)
            data.rank[m.id] = std::uint32_t(k);
    }
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
        return fail("only BPE models are supported, found " + model["type"].dump(), "model.type");

    // The pre-tokenizer must be byte-level (alone or inside a Sequence).
    auto isByteLevel = [](const Json& p) {
        return p.is_object() && p.contains("type") && p["type"] == "ByteLevel";
    };
    const Json pre = root.value("pre_tokenizer", Json());
    bool byteLevel = isByteLevel(pre);
    if (!byteLevel && pre.is_object() && pre.value("type", Json()) == "Sequence" && pre.contains("pretokenizers")
        && pre["pretokenizers"].is_array())
        for (const auto& p : pre["pretokenizers"])
            byteLevel = byteLevel || isByteLevel(p);
    if (!byteLevel)
        return fail("the pre-tokenizer must be ByteLevel (GPT-2 style), found " + pre.dump(), "pre_tokenizer");
    if (pre.is_object() && pre.value("add_prefix_space", false) == true)
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
        const auto id = value.get<std::int64_t>();
        if (id < 0 || std::size_t(id) >= vocab.size())
            return fail("id " + std::to_string(id) + " is outside 0…" + std::to_string(vocab.size() - 1), path);
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
            const auto id = a["id"].get<std::int64_t>();
            const auto content = a["content"].get<std::string>();
            if (content != kEndOfText)
                return fail("only the added token " + std::string(kEndOfText) + " is supported, found " + content, path);
            if (id < 0 || std::size_t(id) > data->tokens.size())
                return fail("id " + std::to_string(id) + " leaves a gap after the vocabulary", path + ".id");
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
            return fail("a merge must be \"left right\" or [\"left\", \"right\"], found " + m.dump(), path);
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

// Piece bytes → ids, open addressing over arenas: no allocation per lookup.
class PieceCache {
public:
    struct Slot {
        std::uint64_t hash = 0;
        std::uint32_t keyOff = 0, keyLen = 0; // keyLen 0 = empty (cached pieces have ≥ 2 bytes)
        std::uint32_t idsOff = 0, idsLen = 0;
    };

    PieceCache() { clear(); }
    void clear()
    {
        m_slots.assign(1 << 14, Slot{});
        m_mask = m_slots.size() - 1;
        m_used = 0;
        m_keys.clear();
        m_ids.clear();
    }
    [[nodiscard]] const Slot* find(const unsigned char* p, std::size_t n, std::uint64_t h) const
    {
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.keyLen == 0)
                return nullptr;
            if (s.hash == h && s.keyLen == n && sameBytes(m_keys.data() + s.keyOff, p, n))
                return &s;
        }
    }
    void insert(const unsigned char* p, std::size_t n, std::uint64_t h, const TokenId* ids, std::size_t count)
    {
        if (m_keys.size() + n > kMaxArena || m_ids.size() + count > kMaxArena / 4)
            clear(); // bounded memory on huge texts: start over
        if (2 * (m_used + 1) > m_slots.size())
            grow();
        Slot s{h, std::uint32_t(m_keys.size()), std::uint32_t(n), std::uint32_t(m_ids.size()), std::uint32_t(count)};
        m_keys.append(reinterpret_cast<const char*>(p), n);
        m_ids.insert(m_ids.end(), ids, ids + count);
        place(s);
        ++m_used;
    }
    [[nodiscard]] const TokenId* ids(const Slot& s) const { return m_ids.data() + s.idsOff; }

private:
    static constexpr std::size_t kMaxArena = std::size_t{64} << 20;
    void place(const Slot& s)
    {
        for (std::size_t i = s.hash & m_mask;; i = (i + 1) & m_mask)
            if (m_slots[i].keyLen == 0) {
                m_slots[i] = s;
                return;
            }
    }
    void grow()
    {
        std::vector<Slot> old(m_slots.size() * 2);
        old.swap(m_slots);
        m_mask = m_slots.size() - 1;
        for (const Slot& s : old)
            if (s.keyLen)
                place(s);
    }
    std::vector<Slot> m_slots;
    std::size_t m_mask = 0;
    std::size_t m_used = 0;
    std::string m_keys;
    std::vector<TokenId> m_ids;
};

} // namespace

struct Encoder::Impl {
    BpeModel model;
    const BpeModel::Data* d = nullptr;
    std::uint32_t rankLimit = kNoRank; // pairs with rank < rankLimit merge
    PieceCache cache;
    // Reused work buffers.
    std::vector<TokenId> part;
    std::vector<TokenId> mergedId;
    std::vector<std::uint32_t> pairRank;
    std::vector<std::uint32_t> next, prev;
    struct HeapEntry {
        std::uint32_t rank, pos;
        TokenId left, right, merged;
    };
    std::vector<HeapEntry> heap;
    std::vector<TokenId> scratch;

    explicit Impl(BpeModel m) : model(std::move(m)), d(&model.data()) {}

    [[nodiscard]] const PairMap::Slot* pair(TokenId left, TokenId right) const
    {
        const auto* s = d->pairs.find(left, right);
        return (s && s->rank < rankLimit) ? s : nullptr;
    }

    // Appends the ids of one piece (2+ bytes) to out, computing BPE; no cache involved.
    void bpe(const unsigned char* p, std::size_t n, std::vector<TokenId>& out);
    void bpeSmall(const unsigned char* p, std::size_t n, std::vector<TokenId>& out);
    void bpeLarge(const unsigned char* p, std::size_t n, std::vector<TokenId>& out);

    // Appends the ids of one piece, through the cache.
    void encodePiece(const unsigned char* p, std::size_t n, std::vector<TokenId>& out)
    {
        if (n == 1) {
            out.push_back(d->byteToken[*p]);
            return;
        }
        const std::uint64_t h = hashBytes(p, n);
        if (const auto* hit = cache.find(p, n, h)) {
            const TokenId* ids = cache.ids(*hit);
            out.insert(out.end(), ids, ids + hit->idsLen);
            return;
        }
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
            cache.insert(p, n, h, out.data() + before, out.size() - before);
    }
};

void Encoder::Impl::bpe(const unsigned char* p, std::size_t n, std::vector<TokenId>& out)
{
    if (n <= 64)
        bpeSmall(p, n, out);
    else
        bpeLarge(p, n, out);
}

// Quadratic merging as in tiktoken's byte_pair_merge: fine for the short pieces of real text.
void Encoder::Impl::bpeSmall(const unsigned char* p, std::size_t n, std::vector<TokenId>& out)
{
    part.resize(n);
    pairRank.resize(n);
    mergedId.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        part[i] = d->byteToken[p[i]];
    std::size_t m = n;
    auto setPair = [&](std::size_t i) {
        const auto* s = pair(part[i], part[i + 1]);
        pairRank[i] = s ? s->rank : kNoRank;
        mergedId[i] = s ? s->id : 0;
    };
    for (std::size_t i = 0; i + 1 < m; ++i)
        setPair(i);
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
    out.insert(out.end(), part.begin(), part.begin() + std::ptrdiff_t(m));
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
        if (const auto* s = pair(part[i], part[next[i]])) {
            heap.push_back({s->rank, i, part[i], part[next[i]], s->id});
            std::push_heap(heap.begin(), heap.end(), later);
        }
    };
    for (std::size_t i = 0; i + 1 < n; ++i)
        if (const auto* s = pair(part[i], part[i + 1]))
            heap.push_back({s->rank, std::uint32_t(i), part[i], part[i + 1], s->id});
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
    const auto* base = reinterpret_cast<const unsigned char*>(text.data());
    PreTokenizer::Cursor cursor(PreTokenizer::gpt2(), text);
    Piece piece;
    while (cursor.next(piece))
        m_impl->encodePiece(base + piece.begin, piece.end - piece.begin, out);
}

std::vector<TokenId> Encoder::encode(std::string_view text)
{
    std::vector<TokenId> out;
    out.reserve(text.size() / 3 + 16);
    encode(text, out);
    return out;
}

Result<std::vector<TokenSpan>> Encoder::encodeWithSpans(std::string_view text, const Progress& progress)
{
    if (text.size() > kMaxTextBytes)
        return makeError("the text is " + std::to_string(text.size()) + " bytes; the tokenizer takes at most "
                         + std::to_string(kMaxTextBytes) + " bytes at once");
    Impl& impl = *m_impl;
    const auto* base = reinterpret_cast<const unsigned char*>(text.data());
    std::vector<TokenSpan> spans;
    spans.reserve(text.size() / 3 + 16);
    std::vector<TokenId>& ids = impl.scratch;
    PreTokenizer::Cursor cursor(PreTokenizer::gpt2(), text);
    constexpr std::size_t kReportEvery = std::size_t{1} << 20;
    std::size_t nextReport = kReportEvery;
    Piece piece;
    if (progress.stopRequested())
        return makeError("cancelled");
    progress(0.0);
    while (cursor.next(piece)) {
        ids.clear();
        impl.encodePiece(base + piece.begin, piece.end - piece.begin, ids);
        std::uint32_t at = std::uint32_t(piece.begin);
        for (TokenId id : ids) {
            const auto len = std::uint32_t(impl.d->tokens[id].size());
            spans.push_back({id, at, at + len});
            at += len;
        }
        if (piece.end >= nextReport) {
            if (progress.stopRequested())
                return makeError("cancelled");
            progress(double(piece.end) / double(text.size()));
            nextReport = piece.end + kReportEvery;
        }
    }
    if (progress.stopRequested())
        return makeError("cancelled");
    progress(1.0);
    return spans;
}

} // namespace tw::text
