// The tables image of a BpeModel (bpeimage.h): written by toImage, viewed in place by fromImage.
// After the header, the tables in this order, each at a multiple of 64 bytes: the tokens' bytes,
// tokenStart (vocabSize + 1 offsets), rank, merges (Merge as laid out in memory, padding zeroed),
// byteToken (256 ids), the pair map's slots, the token index's slots, the token filter, bytePairs.
#include "bpe.h"

#include "bpe_p.h"
#include "bpeimage.h"

#include <cstddef>
#include <type_traits>

namespace tw::text {

namespace {

constexpr char kMagic[8] = {'T', 'W', 'B', 'P', 'E', 'I', 'M', 'G'};
constexpr std::uint32_t kByteOrder = 0x01020304;
constexpr std::size_t kAlign = 64;
constexpr std::size_t kFilterWords = std::size_t{1} << BpeModel::Data::kFilterWordBits;
constexpr std::size_t kBytePairs = std::size_t{1} << 16;

// The tables are copied and viewed as bytes: no padding may hide in them (Merge's is zeroed by hand).
static_assert(std::has_unique_object_representations_v<PairMap::Small>);
static_assert(std::has_unique_object_representations_v<PairMap::Slot>);
static_assert(std::has_unique_object_representations_v<PairMap::Found>);
static_assert(std::has_unique_object_representations_v<TokenSlot>);
static_assert(std::is_trivially_copyable_v<Merge> && std::is_standard_layout_v<Merge>);
static_assert(sizeof(BpeImageHeader) % 8 == 0);

enum TableId : std::size_t { kTokenBytes, kTokenStart, kRank, kMerges, kByteToken, kPairs, kTokenSlots, kFilter, kBytePairsTable, kTables };
constexpr const char* kTableNames[kTables] = {"tokenBytes", "tokenStart", "rank",    "merges",   "byteToken",
                                              "pairs",      "tokenSlots", "tokenFilter", "bytePairs"};

// Where each table starts and how many bytes it has, from the header's counts.
struct Layout {
    std::size_t offset[kTables] = {};
    std::size_t bytes[kTables] = {};
    std::uint64_t total = 0;
};

Layout layoutOf(const BpeImageHeader& h)
{
    const bool compact = h.flags & kBpeImageCompactPairs;
    const std::uint64_t sizes[kTables] = {
        h.tokenBytes,
        (std::uint64_t(h.vocabSize) + 1) * sizeof(std::uint32_t),
        std::uint64_t(h.vocabSize) * sizeof(std::uint32_t),
        std::uint64_t(h.mergeCount) * sizeof(Merge),
        256 * sizeof(TokenId),
        std::uint64_t(h.pairSlots) * (compact ? sizeof(PairMap::Small) : sizeof(PairMap::Slot)),
        std::uint64_t(h.tokenSlots) * sizeof(TokenSlot),
        kFilterWords * sizeof(std::uint64_t),
        kBytePairs * sizeof(PairMap::Found),
    };
    Layout l;
    std::uint64_t at = sizeof(BpeImageHeader);
    for (std::size_t t = 0; t < kTables; ++t) {
        at = (at + kAlign - 1) / kAlign * kAlign;
        l.offset[t] = std::size_t(at);
        l.bytes[t] = std::size_t(sizes[t]);
        at += sizes[t]; // at most 2^32 × 24 bytes a table: no overflow
    }
    l.total = at;
    return l;
}

// A 64-bit checksum of bytes: four independent lanes of hashBytes' mixing, 64 bytes a step.
std::uint64_t checksum(const unsigned char* p, std::size_t n)
{
    std::uint64_t lane[4] = {kHash0, kHash1, kHash2, kHash0 ^ kHash1};
    const std::size_t total = n;
    while (n >= 64) {
        for (int k = 0; k < 4; ++k) {
            std::uint64_t w0, w1;
            std::memcpy(&w0, p + 16 * k, 8);
            std::memcpy(&w1, p + 16 * k + 8, 8);
            lane[k] = mum(w0 ^ kHash0 ^ lane[k], w1 ^ kHash1);
        }
        p += 64;
        n -= 64;
    }
    std::uint64_t h = hashBytes(p, n) ^ total;
    for (int k = 0; k < 4; ++k)
        h = mum(h ^ lane[k], kHash2 + std::uint64_t(k));
    return h;
}

// What the tables' bytes depend on besides the model: element sizes, the token hash, the pair
// map's slot hash and the filter's bits. A build that changes any of them refuses older images.
std::uint64_t layoutFingerprint()
{
    const std::uint64_t parts[] = {
        sizeof(BpeImageHeader),
        sizeof(Merge),
        offsetof(Merge, frequency),
        sizeof(PairMap::Small),
        sizeof(PairMap::Slot),
        sizeof(PairMap::Found),
        sizeof(TokenSlot),
        std::uint64_t(BpeModel::Data::kFilterWordBits),
        hashBytes(reinterpret_cast<const unsigned char*>("Nel mezzo del cammin di nostra vita"), 35),
        hashBytes(reinterpret_cast<const unsigned char*>("selva"), 5),
        PairMap::mix(0x0001000200030004ull),
        BpeModel::Data::filterBits(0x0123456789ABCDEFull),
    };
    return checksum(reinterpret_cast<const unsigned char*>(parts), sizeof parts);
}

std::uint64_t headerChecksumOf(BpeImageHeader h)
{
    h.headerChecksum = 0;
    return checksum(reinterpret_cast<const unsigned char*>(&h), sizeof h);
}

// 64 lowercase hex digits → 32 bytes; false when it is not that.
bool sha256FromHex(std::string_view hex, std::uint8_t (&out)[32])
{
    if (hex.size() != 64)
        return false;
    for (std::size_t k = 0; k < 32; ++k) {
        int v = 0;
        for (char c : hex.substr(2 * k, 2)) {
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= c - '0';
            else if (c >= 'a' && c <= 'f')
                v |= c - 'a' + 10;
            else
                return false;
        }
        out[k] = std::uint8_t(v);
    }
    return true;
}

std::string hexOf(const std::uint8_t* bytes, std::size_t n)
{
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (std::size_t k = 0; k < n; ++k) {
        s += digits[bytes[k] >> 4];
        s += digits[bytes[k] & 15];
    }
    return s;
}

std::string hex64(std::uint64_t v)
{
    std::uint8_t bytes[8];
    for (int k = 0; k < 8; ++k)
        bytes[k] = std::uint8_t(v >> (56 - 8 * k));
    return hexOf(bytes, 8);
}

template <class T>
std::span<const T> tableOf(std::span<const unsigned char> image, const Layout& l, TableId t)
{
    return {reinterpret_cast<const T*>(image.data() + l.offset[t]), l.bytes[t] / sizeof(T)};
}

bool powerOfTwoSlots(std::uint32_t n) { return n >= 16 && std::has_single_bit(n); }

} // namespace

void sealBpeImage(std::span<unsigned char> image)
{
    if (image.size() < sizeof(BpeImageHeader))
        return;
    BpeImageHeader h;
    std::memcpy(&h, image.data(), sizeof h);
    h.tablesChecksum = checksum(image.data() + sizeof h, image.size() - sizeof h);
    h.headerChecksum = headerChecksumOf(h);
    std::memcpy(image.data(), &h, sizeof h);
}

Result<std::string> BpeModel::toImage(std::span<const std::string_view> sourceSha256) const
{
    const Data& d = *m_data;
    BpeImageHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kBpeImageVersion;
    h.byteOrder = kByteOrder;
    h.layout = layoutFingerprint();
    if (sourceSha256.size() > kBpeImageMaxSources)
        return makeError("an image records at most " + std::to_string(kBpeImageMaxSources) + " source files, got "
                         + std::to_string(sourceSha256.size()));
    h.sourceCount = std::uint32_t(sourceSha256.size());
    for (std::size_t k = 0; k < sourceSha256.size(); ++k)
        if (!sha256FromHex(sourceSha256[k], h.sourceSha256[k]))
            return makeError("source " + std::to_string(k + 1) + ": \"" + std::string(sourceSha256[k])
                             + "\" is not a sha256 in 64 lowercase hex digits");
    if (d.vocabSize() >= kNoRank || d.tokenBytes.size() >= kNoRank || d.merges.size() >= kNoRank)
        return makeError("the model is too large for an image (2^32 ids, bytes or merges)");
    h.flags = (d.tiktoken ? kBpeImageTiktoken : 0) | (d.endOfText ? kBpeImageEndOfText : 0)
        | (d.pairs.compact() ? kBpeImageCompactPairs : 0);
    h.vocabSize = std::uint32_t(d.vocabSize());
    h.endOfText = d.endOfText.value_or(0);
    h.mergeCount = std::uint32_t(d.merges.size());
    h.tokenBytes = std::uint32_t(d.tokenBytes.size());
    h.pairSlots = std::uint32_t(d.pairs.compact() ? d.pairs.compactSlots().size() : d.pairs.wideSlots().size());
    h.tokenSlots = std::uint32_t(d.tokenSlots.size());
    const Layout l = layoutOf(h);
    h.imageBytes = l.total;

    std::string image(std::size_t(l.total), '\0');
    auto put = [&](TableId t, const void* bytes, std::size_t n) {
        if (n)
            std::memcpy(image.data() + l.offset[t], bytes, n);
    };
    put(kTokenBytes, d.tokenBytes.data(), d.tokenBytes.size());
    put(kTokenStart, d.tokenStart.data(), d.tokenStart.size() * sizeof(std::uint32_t));
    put(kRank, d.rank.data(), d.rank.size() * sizeof(std::uint32_t));
    for (std::size_t k = 0; k < d.merges.size(); ++k) { // field by field: the padding stays zero
        char* at = image.data() + l.offset[kMerges] + k * sizeof(Merge);
        const Merge& m = d.merges[k];
        std::memcpy(at + offsetof(Merge, left), &m.left, sizeof m.left);
        std::memcpy(at + offsetof(Merge, right), &m.right, sizeof m.right);
        std::memcpy(at + offsetof(Merge, id), &m.id, sizeof m.id);
        std::memcpy(at + offsetof(Merge, frequency), &m.frequency, sizeof m.frequency);
    }
    put(kByteToken, d.byteToken.data(), sizeof d.byteToken);
    if (d.pairs.compact())
        put(kPairs, d.pairs.compactSlots().data(), d.pairs.compactSlots().size_bytes());
    else
        put(kPairs, d.pairs.wideSlots().data(), d.pairs.wideSlots().size_bytes());
    put(kTokenSlots, d.tokenSlots.data(), d.tokenSlots.size() * sizeof(TokenSlot));
    put(kFilter, d.tokenFilter.data(), d.tokenFilter.size() * sizeof(std::uint64_t));
    put(kBytePairsTable, d.bytePairs.data(), d.bytePairs.size() * sizeof(PairMap::Found));
    std::memcpy(image.data(), &h, sizeof h);
    sealBpeImage(std::span(reinterpret_cast<unsigned char*>(image.data()), image.size()));
    return image;
}

namespace {

// The checks of fromImage that need only the header; the layout computed from it.
Result<Layout> checkHeader(std::span<const unsigned char> image, const BpeImageHeader& h,
                           std::span<const std::string_view> sourceSha256, const std::string& name)
{
    auto fail = [&](const std::string& path, std::string message) {
        return makeError(std::move(message), Location{name, 0, 0, path, {}});
    };
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
        return fail("header.magic", "not a tables image: it does not start with TWBPEIMG");
    if (h.byteOrder != kByteOrder)
        return fail("header.byteOrder", "the image was written on a machine of the other byte order");
    if (h.version != kBpeImageVersion)
        return fail("header.version", "the image has format version " + std::to_string(h.version) + "; this program reads version "
                                          + std::to_string(kBpeImageVersion));
    if (const std::uint64_t sum = headerChecksumOf(h); sum != h.headerChecksum)
        return fail("header.headerChecksum", "the header is damaged: its checksum is " + hex64(sum) + ", the header says "
                                                 + hex64(h.headerChecksum));
    if (h.layout != layoutFingerprint())
        return fail("header.layout", "the image was written by a build with another layout of the tables");
    if (h.imageBytes != image.size())
        return fail("header.imageBytes", "the image is " + std::to_string(image.size()) + " bytes, its header says "
                                             + std::to_string(h.imageBytes));
    if (h.sourceCount > kBpeImageMaxSources)
        return fail("header.sourceCount", "the header names " + std::to_string(h.sourceCount) + " source files; at most "
                                              + std::to_string(kBpeImageMaxSources));
    if (h.vocabSize < 256 || h.vocabSize >= kNoRank)
        return fail("header.vocabSize", "a vocabulary of " + std::to_string(h.vocabSize) + " ids; a byte-level BPE has 256 to 2^32 − 2");
    if ((h.flags & kBpeImageEndOfText) && h.endOfText >= h.vocabSize)
        return fail("header.endOfText", "<|endoftext|> is id " + std::to_string(h.endOfText) + ", beyond the vocabulary");
    if ((h.flags & kBpeImageCompactPairs) && h.vocabSize >= 0xFFFF)
        return fail("header.flags", "compact pair slots hold ids below 65,535, the vocabulary has " + std::to_string(h.vocabSize));
    if (!powerOfTwoSlots(h.pairSlots) || !powerOfTwoSlots(h.tokenSlots))
        return fail("header.pairSlots", "the pair map and the token index need a power of two of at least 16 slots");
    const Layout l = layoutOf(h);
    if (l.total != h.imageBytes)
        return fail("header.imageBytes", "the tables the header describes take " + std::to_string(l.total) + " bytes, the header says "
                                             + std::to_string(h.imageBytes));
    if (sourceSha256.size() != h.sourceCount)
        return fail("header.sourceCount", "the image was built from " + std::to_string(h.sourceCount) + " file"
                                              + (h.sourceCount == 1 ? "" : "s") + ", expected " + std::to_string(sourceSha256.size()));
    for (std::size_t k = 0; k < sourceSha256.size(); ++k) {
        std::uint8_t want[32];
        if (!sha256FromHex(sourceSha256[k], want))
            return fail("header.sourceSha256[" + std::to_string(k) + "]",
                        "the expected sha256 \"" + std::string(sourceSha256[k]) + "\" is not 64 lowercase hex digits");
        if (std::memcmp(want, h.sourceSha256[k], 32) != 0)
            return fail("header.sourceSha256[" + std::to_string(k) + "]",
                        "the image was built from another file: its sha256 is " + hexOf(h.sourceSha256[k], 32) + ", expected "
                            + std::string(sourceSha256[k]));
    }
    if (const std::uint64_t sum = checksum(image.data() + sizeof h, image.size() - sizeof h); sum != h.tablesChecksum)
        return fail("header.tablesChecksum", "the tables are damaged: their checksum is " + hex64(sum) + ", the header says "
                                                 + hex64(h.tablesChecksum));
    return l;
}

// The first index i < count where bad(i) holds, or count: a first pass without branches (which the
// compiler vectorizes: a sound image costs one sweep at memory speed), a second only when one holds.
template <class Bad>
std::size_t firstWhere(std::size_t count, Bad bad)
{
    bool any = false;
    for (std::size_t i = 0; i < count; ++i)
        any |= bad(i);
    if (!any)
        return count;
    std::size_t i = 0;
    while (!bad(i))
        ++i;
    return i;
}

// One sweep of a hash table: the first non-empty slot whose id is n or more (slots.size() when
// none), and whether a slot is empty (a search ends there).
template <class Slot, class IsEmpty, class IdOf>
std::pair<std::size_t, bool> sweepSlots(std::span<const Slot> slots, IsEmpty isEmpty, IdOf idOf, std::size_t n)
{
    bool anyEmpty = false;
    const std::size_t bad = firstWhere(slots.size(), [&](std::size_t i) {
        const bool none = isEmpty(slots[i]);
        anyEmpty |= none;
        return !none & (idOf(slots[i]) >= n);
    });
    return {bad, anyEmpty};
}

// Every id the encoder may follow stays inside the vocabulary, every token's bytes inside the table,
// and each hash table has an empty slot to end a search: a checksummed image that breaks one of
// these was not written by toImage. Returns the first violation.
std::optional<Error> checkTables(const BpeModel::Data& d, const BpeImageHeader& h, const std::string& name)
{
    auto fail = [&](TableId t, std::size_t index, std::string message) {
        return makeError(std::move(message),
                         Location{name, 0, 0, std::string("tables.") + kTableNames[t] + "[" + std::to_string(index) + "]", {}});
    };
    const std::size_t n = h.vocabSize;
    auto beyond = [&](TokenId id) { return "id " + std::to_string(id) + " is beyond the vocabulary of " + std::to_string(n); };
    const std::uint32_t* start = d.tokenStart.data();
    if (start[0] != 0)
        return fail(kTokenStart, 0, "the first token does not start at byte 0");
    if (const std::size_t id = firstWhere(n, [&](std::size_t i) { return (start[i + 1] < start[i]) | (start[i + 1] > h.tokenBytes); });
        id < n)
        return fail(kTokenStart, id + 1, "token " + std::to_string(id) + " does not end inside the tokens' bytes");
    if (start[n] != h.tokenBytes)
        return fail(kTokenStart, n, "the tokens do not end at the end of their bytes");
    for (int b = 0; b < 256; ++b) {
        const char byte = char(b);
        if (d.byteToken[b] >= n || d.token(d.byteToken[b]) != std::string_view(&byte, 1))
            return fail(kByteToken, std::size_t(b), "the token of byte " + std::to_string(b) + " is not that byte");
    }
    const Merge* merges = d.merges.data();
    if (const std::size_t k = firstWhere(d.merges.size(), [&](std::size_t i) {
            return (merges[i].left >= n) | (merges[i].right >= n) | (merges[i].id >= n);
        });
        k < d.merges.size())
        return fail(kMerges, k, beyond(std::max({merges[k].left, merges[k].right, merges[k].id})));
    if (d.pairs.compact()) {
        const auto [bad, empty] = sweepSlots(
            d.pairs.compactSlots(), [](const PairMap::Small& s) { return s.key == PairMap::kEmptySmall; },
            [](const PairMap::Small& s) { return s.value & 0xFFFF; }, n);
        if (bad < d.pairs.compactSlots().size())
            return fail(kPairs, bad, beyond(d.pairs.compactSlots()[bad].value & 0xFFFF));
        if (!empty)
            return fail(kPairs, 0, "the pair map has no empty slot");
    } else {
        const auto [bad, empty] = sweepSlots(
            d.pairs.wideSlots(), [](const PairMap::Slot& s) { return s.key == PairMap::kEmpty; },
            [](const PairMap::Slot& s) { return s.id; }, n);
        if (bad < d.pairs.wideSlots().size())
            return fail(kPairs, bad, beyond(d.pairs.wideSlots()[bad].id));
        if (!empty)
            return fail(kPairs, 0, "the pair map has no empty slot");
    }
    const auto [bad, empty] = sweepSlots(
        d.tokenSlots.span(), [](const TokenSlot& s) { return s.idPlusOne == 0; },
        [](const TokenSlot& s) { return s.idPlusOne - 1; }, n);
    if (bad < d.tokenSlots.size())
        return fail(kTokenSlots, bad, beyond(d.tokenSlots[bad].idPlusOne - 1));
    if (!empty)
        return fail(kTokenSlots, 0, "the token index has no empty slot");
    const PairMap::Found* bytePairs = d.bytePairs.data();
    if (const std::size_t i = firstWhere(d.bytePairs.size(), [&](std::size_t i) { return bytePairs[i].id >= n; });
        i < d.bytePairs.size())
        return fail(kBytePairsTable, i, beyond(bytePairs[i].id));
    return std::nullopt;
}

} // namespace

Result<BpeModel> BpeModel::fromImage(std::span<const unsigned char> image, std::span<const std::string_view> sourceSha256,
                                     std::string sourceName)
{
    const std::string name = sourceName + " tables image";
    BpeImageHeader h;
    if (image.size() < sizeof h)
        return makeError("the image is " + std::to_string(image.size()) + " bytes, shorter than its header ("
                             + std::to_string(sizeof h) + " bytes)",
                         Location{name, 0, 0, "header", {}});
    if (reinterpret_cast<std::uintptr_t>(image.data()) % alignof(std::uint64_t) != 0)
        return makeError("the image is not aligned to 8 bytes in memory", Location{name, 0, 0, "header", {}});
    std::memcpy(&h, image.data(), sizeof h);
    auto layout = checkHeader(image, h, sourceSha256, name);
    if (!layout)
        return layout.error();
    const Layout& l = layout.value();

    // The tables are read in place: the image's bytes provide their storage (C++20 [intro.object]/13).
    auto data = std::make_shared<Data>();
    data->name = std::move(sourceName);
    data->tiktoken = h.flags & kBpeImageTiktoken;
    if (h.flags & kBpeImageEndOfText)
        data->endOfText = h.endOfText;
    data->tokenBytes.view(tableOf<char>(image, l, kTokenBytes));
    data->tokenStart.view(tableOf<std::uint32_t>(image, l, kTokenStart));
    data->rank.view(tableOf<std::uint32_t>(image, l, kRank));
    const std::span<const Merge> merges = tableOf<Merge>(image, l, kMerges);
    data->merges.assign(merges.begin(), merges.end());
    const std::span<const TokenId> byteToken = tableOf<TokenId>(image, l, kByteToken);
    std::copy(byteToken.begin(), byteToken.end(), data->byteToken.begin());
    if (h.flags & kBpeImageCompactPairs)
        data->pairs.view(tableOf<PairMap::Small>(image, l, kPairs), {});
    else
        data->pairs.view({}, tableOf<PairMap::Slot>(image, l, kPairs));
    data->tokenSlots.view(tableOf<TokenSlot>(image, l, kTokenSlots));
    data->tokenMask = data->tokenSlots.size() - 1;
    data->tokenFilter.view(tableOf<std::uint64_t>(image, l, kFilter));
    data->bytePairs.view(tableOf<PairMap::Found>(image, l, kBytePairsTable));
    if (auto bad = checkTables(*data, h, name))
        return *bad;
    return BpeModel(std::move(data));
}

} // namespace tw::text
