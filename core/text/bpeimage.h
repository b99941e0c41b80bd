#pragma once
// The prebuilt tables of a BpeModel as one image (issue 42). tools/bpeimage.cpp parses a vocabulary's
// text files once at build time (with bpe.cpp's parser) and writes BpeModel::toImage(); the program
// embeds it and BpeModel::fromImage() views it in place at run time: loading is a lookup, not a
// parse. The image is this header, then each table 64-byte aligned in a fixed order (bpeimage.cpp).
// The text files stay the source of truth: an image whose version, byte order, layout, size,
// checksums, source files or ids do not hold is refused with an Error, never used.

#include <cstddef>
#include <cstdint>
#include <span>

namespace tw::text {

// The format of the image; an image of another version is refused.
inline constexpr std::uint32_t kBpeImageVersion = 1;
// How many source files (their sha256) an image records at most.
inline constexpr std::size_t kBpeImageMaxSources = 4;

// The first bytes of an image. Numbers are in the byte order of the machine that wrote it.
struct BpeImageHeader {
    char magic[8];                // "TWBPEIMG"
    std::uint32_t version;        // kBpeImageVersion
    std::uint32_t byteOrder;      // 0x01020304 as the writer stored it
    std::uint64_t layout;         // fingerprint of the tables' layout and hashing (element sizes, hash probes)
    std::uint64_t imageBytes;     // header and tables
    std::uint64_t headerChecksum; // of the header with this field 0
    std::uint64_t tablesChecksum; // of every byte after the header
    std::uint32_t flags;          // kBpeImageTiktoken | kBpeImageEndOfText | kBpeImageCompactPairs
    std::uint32_t sourceCount;    // the files the tables were parsed from
    std::uint8_t sourceSha256[kBpeImageMaxSources][32];
    std::uint32_t vocabSize;  // ids 0 … vocabSize − 1
    std::uint32_t endOfText;  // its id when kBpeImageEndOfText
    std::uint32_t mergeCount; // entries of the merges table
    std::uint32_t tokenBytes; // bytes of all tokens together
    std::uint32_t pairSlots;  // slots of the pair map (a power of two)
    std::uint32_t tokenSlots; // slots of the token index (a power of two)
};

inline constexpr std::uint32_t kBpeImageTiktoken = 1;     // GPT-2 semantics (BpeModel::Data::tiktoken)
inline constexpr std::uint32_t kBpeImageEndOfText = 2;    // the model has <|endoftext|>
inline constexpr std::uint32_t kBpeImageCompactPairs = 4; // pair slots of 8 bytes, else 16

// Recomputes both checksums of an image after its bytes were changed (tests, the fuzz target); an
// image shorter than its header is left alone.
void sealBpeImage(std::span<unsigned char> image);

} // namespace tw::text
