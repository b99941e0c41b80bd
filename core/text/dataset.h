#pragma once
// The text as training data: dataset figures with provenance (stage 1 of the paper).

#include "base/figure.h"
#include "bpe.h"
#include "utf8.h"

#include <cstdint>
#include <span>
#include <vector>

namespace tw::text {

// How the text is cut into training batches (stage 1 inputs).
struct TrainingShape {
    std::uint64_t sequenceLength = 1024; // T
    std::uint64_t microBatch = 32;       // B, sequences per micro-batch
    std::uint64_t globalBatchTokens = 524288; // G, tokens per optimizer step
    std::uint64_t documents = 1;         // documents packed, separated by <|endoftext|>
    bool operator==(const TrainingShape&) const = default;
};

struct RankedToken {
    TokenId id = 0;
    std::uint64_t count = 0;
};

struct DatasetStats {
    TextCounts text;
    std::uint64_t tokens = 0;
    std::uint64_t uniqueTokens = 0;
    std::vector<std::uint64_t> lengthHistogram; // [k] = tokens of k bytes
    std::vector<RankedToken> rankFrequency;     // most frequent first; ties by smaller id
    FigureSet figures;                          // ids "text.*", "tokens.*", "dataset.*"
};

// Everything stage 1 shows about a tokenized text. Pure; figures carry formula and inputs.
[[nodiscard]] DatasetStats computeDataset(std::string_view text, std::span<const TokenSpan> tokens,
                                          const BpeModel& model, const TrainingShape& shape);

} // namespace tw::text
