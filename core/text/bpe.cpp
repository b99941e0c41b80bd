#include "bpe.h"

#include "bpe_p.h"

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


BpeModel::BpeModel(std::shared_ptr<const Data> data) : m_data(std::move(data)) {}

std::size_t BpeModel::vocabSize() const { return m_data->vocabSize(); }

std::string_view BpeModel::bytesOf(TokenId id) const
{
    return id < m_data->vocabSize() ? m_data->token(id) : std::string_view();
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
    std::vector<std::string> byId(count);
    std::vector<bool> seen(count, false);
    for (std::size_t k = 0; k < count; ++k) {
        const std::uint32_t id = ids[k];
        if (id >= count || seen[id])
            return false;
        seen[id] = true;
        if (tokens[k] == kEndOfText)
            data.endOfText = TokenId(id);
        byId[id] = std::move(tokens[k]);
    }
    return data.setTokens(byId) == 0;
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
    std::vector<std::string> tokens(enc.size());
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
            tokens[id] = key;
            continue;
        }
        std::string bytes;
        if (!appendMappedBytes(key, bytes) || bytes.empty())
            return makeError("token is not written in GPT-2's byte↔unicode alphabet", where());
        tokens[id] = std::move(bytes);
    }
    data->setTokens(tokens);
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
    const std::size_t vocabSize = data->vocabSize();
    const std::span<std::uint32_t> rank = data->rank.assign(vocabSize, kNoRank);
    std::vector<Merge> pairs; // (left, right, merged id); frequency holds the rank
    pairs.reserve(vocabSize * 3);
    std::uint32_t maxRank = 0;
    for (TokenId id = 0; id < vocabSize; ++id) {
        const std::string_view t = data->token(id);
        if (t.size() < 2 || (data->endOfText && id == *data->endOfText))
            continue;
        rank[id] = id >= 256 ? id - 256 : 0;
        maxRank = std::max(maxRank, rank[id]);
        for (std::size_t k = 1; k < t.size(); ++k) {
            const auto left = data->findToken(t.substr(0, k));
            if (!left)
                continue;
            const auto right = data->findToken(t.substr(k));
            if (right)
                pairs.push_back(Merge{*left, *right, id, rank[id]});
        }
    }
    data->pairs.reserve(pairs.size(), vocabSize < 0xFFFF && maxRank < 0xFFFF);
    for (const Merge& m : pairs)
        data->pairs.insert(m.left, m.right, std::uint32_t(m.frequency), m.id);
    data->buildBytePairs();
    return BpeModel(std::move(data));
}

namespace {

// Builds the merge-rank model shared by fromMerges and fromHuggingFaceJson: tokens and merges set.
void buildMergeRankPairs(BpeModel::Data& data)
{
    const std::span<std::uint32_t> rank = data.rank.assign(data.vocabSize(), kNoRank);
    data.pairs.reserve(data.merges.size(), data.vocabSize() < 0xFFFF && data.merges.size() < 0xFFFF);
    for (std::size_t k = 0; k < data.merges.size(); ++k) {
        const Merge& m = data.merges[k];
        data.pairs.insert(m.left, m.right, std::uint32_t(k), m.id);
        if (rank[m.id] == kNoRank)
            rank[m.id] = std::uint32_t(k);
    }
    data.buildBytePairs();
}

} // namespace

Result<BpeModel> BpeModel::fromMerges(std::vector<Merge> merges, bool withEndOfText, std::string sourceName)
{
    auto data = std::make_shared<Data>();
    data->name = sourceName;
    std::vector<std::string> tokens;
    tokens.reserve(256 + merges.size() + 1);
    for (int b = 0; b < 256; ++b)
        tokens.emplace_back(1, char(b));
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
        tokens.push_back(tokens[m.left] + tokens[m.right]);
    }
    if (withEndOfText) {
        data->endOfText = TokenId(tokens.size());
        tokens.emplace_back(kEndOfText);
    }
    data->merges = std::move(merges);
    data->setTokens(tokens);
    for (int b = 0; b < 256; ++b)
        data->byteToken[b] = TokenId(b);
    buildMergeRankPairs(*data);
    return BpeModel(std::move(data));
}

namespace {

// The error of a tokenizer.json at a JSON path.
Error hfError(const std::string& source, std::string message, std::string path)
{
    return makeError(std::move(message), Location{source, 0, 0, std::move(path), {}});
}

// The pre-tokenizer must be byte-level (alone or inside a Sequence), without a prefix space.
std::optional<Error> checkByteLevel(const Json& root, const std::string& sourceName)
{
    auto fail = [&](std::string message, std::string path) { return hfError(sourceName, std::move(message), std::move(path)); };
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

    return std::nullopt;
}

// The vocabulary (token → id): every id once, every token in the byte-level alphabet.
std::optional<Error> readVocab(const Json& vocab, BpeModel::Data& data, std::vector<std::string>& tokens,
                               std::vector<std::string>& keyOf,
                               const std::string& sourceName)
{
    auto fail = [&](std::string message, std::string path) { return hfError(sourceName, std::move(message), std::move(path)); };
    tokens.resize(vocab.size());
    std::vector<bool> seen(vocab.size(), false);
    keyOf.assign(vocab.size(), std::string());
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
            tokens[id] = key;
            data.endOfText = TokenId(id);
            continue;
        }
        auto bytes = unicodeToBytes(key);
        if (!bytes || bytes->empty())
            return fail("token is not written in the byte-level alphabet", path);
        tokens[id] = std::move(*bytes);
    }
    return std::nullopt;
}

// Added tokens: <|endoftext|> may live only here, with an id after the vocabulary.
std::optional<Error> readAddedTokens(const Json& root, BpeModel::Data& data, std::vector<std::string>& tokens,
                                     std::vector<std::string>& keyOf,
                                     const std::string& sourceName)
{
    auto fail = [&](std::string message, std::string path) { return hfError(sourceName, std::move(message), std::move(path)); };
    if (!root.contains("added_tokens") || root["added_tokens"].is_null())
        return std::nullopt;
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
            return fail("id " + idText(a["id"]) + " is outside 0…" + std::to_string(tokens.size()), path + ".id");
        if (!idBelow(a["id"], tokens.size() + 1))
            return fail("id " + idText(a["id"]) + " leaves a gap after the vocabulary", path + ".id");
        const auto id = a["id"].get<std::int64_t>();
        if (std::size_t(id) == tokens.size()) {
            tokens.emplace_back(kEndOfText);
            keyOf.emplace_back(kEndOfText);
        } else if (tokens[id] != kEndOfText) {
            return fail("id " + std::to_string(id) + " is already the token " + keyOf[id], path + ".id");
        }
        data.endOfText = TokenId(id);
    }
    return std::nullopt;
}

// The merges, "left right" or ["left", "right"], each of two tokens whose concatenation is a token.
std::optional<Error> readMerges(const Json& model, const Json& vocab, BpeModel::Data& data, const std::string& sourceName)
{
    auto fail = [&](std::string message, std::string path) { return hfError(sourceName, std::move(message), std::move(path)); };
    const Json& merges = model["merges"];
    data.merges.reserve(merges.size());
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
        data.merges.push_back(Merge{ids[0], ids[1], TokenId(merged->get<std::int64_t>()), 0});
    }
    return std::nullopt;
}

} // namespace

// A Hugging Face tokenizer.json with a byte-level BPE model: checked, its vocabulary, added tokens and
// merges read.
Result<BpeModel> BpeModel::fromHuggingFaceJson(std::string_view json, std::string sourceName)
{
    auto parsed = parseJson(json, sourceName);
    if (!parsed)
        return parsed.error();
    const Json& root = parsed.value();
    auto fail = [&](std::string message, std::string path) { return hfError(sourceName, std::move(message), std::move(path)); };
    if (!root.is_object())
        return fail("a tokenizer.json must be an object, found " + std::string(root.type_name()), "$");
    if (!root.contains("model") || !root["model"].is_object())
        return fail("missing the \"model\" object", "model");
    const Json& model = root["model"];
    if (model.contains("type") && !(model["type"].is_string() && model["type"] == "BPE"))
        return fail("only BPE models are supported, found " + shortJson(model["type"]), "model.type");
    if (auto e = checkByteLevel(root, sourceName))
        return *e;
    if (!model.contains("vocab") || !model["vocab"].is_object())
        return fail("missing the \"vocab\" object (token → id)", "model.vocab");
    const Json& vocab = model["vocab"];
    auto data = std::make_shared<Data>();
    data->name = sourceName;
    std::vector<std::string> tokens, keyOf;
    if (auto e = readVocab(vocab, *data, tokens, keyOf, sourceName))
        return *e;
    if (auto e = readAddedTokens(root, *data, tokens, keyOf, sourceName))
        return *e;
    data->setTokens(tokens);
    if (auto missing = data->fillByteTokens())
        return fail(*missing, "model.vocab");
    if (!model.contains("merges") || !model["merges"].is_array())
        return fail("missing the \"merges\" array", "model.merges");
    if (auto e = readMerges(model, vocab, *data, sourceName))
        return *e;
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
    for (TokenId id = 0; id < d.vocabSize(); ++id)
        vocab[(d.endOfText && id == *d.endOfText) ? std::string(kEndOfText) : displayForm(id)] = id;
    OrderedJson merges = OrderedJson::array();
    for (const Merge& m : d.merges)
        merges.push_back(OrderedJson::array({displayForm(m.left), displayForm(m.right)}));
    root["model"] = {{"type", "BPE"},        {"dropout", nullptr},          {"unk_token", nullptr},
                     {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}, {"fuse_unk", false},
                     {"byte_fallback", false}, {"vocab", std::move(vocab)}, {"merges", std::move(merges)}};
    return root.dump(1) + "\n";
}

} // namespace tw::text
