#pragma once
// Byte-level BPE: the model (vocabulary of byte strings + ranked merges), loading and saving the
// standard files, and an Encoder session that turns text into ids with byte spans.

#include "base/error.h"
#include "base/progress.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tw::text {

using TokenId = std::uint32_t;

// One token of an encoded text: its id and the bytes [begin, end) of the input it covers.
struct TokenSpan {
    TokenId id = 0;
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
    bool operator==(const TokenSpan&) const = default;
};

// One merge: left + right become id. frequency is the pair count when it was learned (0 if unknown).
struct Merge {
    TokenId left = 0;
    TokenId right = 0;
    TokenId id = 0;
    std::uint64_t frequency = 0;
    bool operator==(const Merge&) const = default;
};

// The program's limit: the largest text it tokenizes in one piece, 1 GiB (token spans use 32-bit
// offsets). Every check goes through maxTextBytes(), which is this value outside of tests.
inline constexpr std::size_t kMaxTextBytes = std::size_t{1} << 30; // 1 GiB

// The text limit in force: kMaxTextBytes, or less while a ScopedTextLimit lives.
[[nodiscard]] std::size_t maxTextBytes();

// Tests only: lowers the text limit for its lifetime, so the refusal of a text over the limit can be
// tested with a few bytes instead of a gibibyte; the destructor restores the previous limit. It only
// lowers: a request above kMaxTextBytes keeps kMaxTextBytes. The limit is one atomic for the whole
// process, so scopes must nest (tests that lower it do not run in parallel within one process).
class ScopedTextLimit {
public:
    explicit ScopedTextLimit(std::size_t bytes);
    ~ScopedTextLimit();
    ScopedTextLimit(const ScopedTextLimit&) = delete;
    ScopedTextLimit& operator=(const ScopedTextLimit&) = delete;

private:
    std::size_t m_previous;
};

class BpeModel {
public:
    // GPT-2's original encoder.json + vocab.bpe. Merge priority follows tiktoken's "gpt2" encoding
    // (the rank of a merged token is its id), so encode() gives tiktoken's ids exactly.
    [[nodiscard]] static Result<BpeModel> fromGpt2Files(std::string_view encoderJson, std::string_view vocabBpe,
                                                        std::string sourceName = "GPT-2");
    // A Hugging Face tokenizer.json with a BPE model and a byte-level pre-tokenizer.
    [[nodiscard]] static Result<BpeModel> fromHuggingFaceJson(std::string_view json, std::string sourceName);
    // A vocabulary made of the 256 bytes (ids 0–255, id = byte value), then one token per merge in
    // order (ids 256, 257, …), then <|endoftext|> when withEndOfText. Used by the trainer.
    [[nodiscard]] static Result<BpeModel> fromMerges(std::vector<Merge> merges, bool withEndOfText,
                                                     std::string sourceName);

    // The tables prebuilt at build time (bpeimage.h), viewed in place: no parse, no copy but the merges.
    // Refused with an Error unless the image holds (version, byte order, layout, size, checksums,
    // ids) and records exactly the files of sourceSha256 (64 lowercase hex digits each). The image
    // must outlive the model and its copies.
    [[nodiscard]] static Result<BpeModel> fromImage(std::span<const unsigned char> image,
                                                    std::span<const std::string_view> sourceSha256,
                                                    std::string sourceName);

    // tokenizer.json text that fromHuggingFaceJson reads back to an equal model.
    [[nodiscard]] std::string toHuggingFaceJson() const;
    // The image fromImage reads back to the same tables, recording the sha256 of the files this model
    // was parsed from (at most kBpeImageMaxSources).
    [[nodiscard]] Result<std::string> toImage(std::span<const std::string_view> sourceSha256) const;

    [[nodiscard]] std::size_t vocabSize() const;
    [[nodiscard]] std::string_view bytesOf(TokenId id) const; // empty for an unknown id
    [[nodiscard]] std::optional<TokenId> endOfText() const;
    [[nodiscard]] const std::vector<Merge>& merges() const;
    [[nodiscard]] const std::string& name() const;
    // The printable form used by GPT-2's files: bytes mapped through the byte↔unicode table.
    [[nodiscard]] std::string displayForm(TokenId id) const;

    struct Data;
    [[nodiscard]] const Data& data() const { return *m_data; }

private:
    explicit BpeModel(std::shared_ptr<const Data> data);
    std::shared_ptr<const Data> m_data; // immutable; copies are cheap and thread-safe
};

// An encoding session: holds the piece cache and the regex match state. Use one per thread.
class Encoder {
public:
    explicit Encoder(BpeModel model);
    ~Encoder();
    Encoder(Encoder&&) noexcept;
    Encoder& operator=(Encoder&&) noexcept;

    // Appends the ids of text to out. Special tokens such as <|endoftext|> are plain text here.
    void encode(std::string_view text, std::vector<TokenId>& out);
    [[nodiscard]] std::vector<TokenId> encode(std::string_view text);
    // How many ids encode(text) gives, without keeping them (no memory in proportion to the text).
    [[nodiscard]] std::size_t count(std::string_view text);
    // Ids with the byte span each covers. Returns an Error when cancelled or over maxTextBytes().
    [[nodiscard]] Result<std::vector<TokenSpan>> encodeWithSpans(std::string_view text, const Progress& progress = {});
    // Only the first `count` merges apply (merge replay); SIZE_MAX (the default) means all.
    void setMergeLimit(std::size_t count);
    void clearCache();
    [[nodiscard]] const BpeModel& model() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// The bytes of ids, concatenated; unknown ids are skipped. decode(encode(x)) == x for all bytes x.
[[nodiscard]] std::string decode(const BpeModel& model, std::span<const TokenId> ids);

// GPT-2's reversible map between the 256 byte values and printable code points (encoder.py).
[[nodiscard]] std::string byteToUnicode(unsigned char byte); // UTF-8 of the mapped code point
[[nodiscard]] std::optional<std::string> unicodeToBytes(std::string_view mapped); // inverse, whole string

} // namespace tw::text
