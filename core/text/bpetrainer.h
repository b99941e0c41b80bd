#pragma once
// Trains a byte-level BPE vocabulary on a text with GPT-2's pre-tokenizer. Incremental pair counts
// with a priority queue (no recount per merge). Deterministic tie-break: among pairs with the
// highest count, the one whose (left id, right id) is smallest wins.

#include "bpe.h"

namespace tw::text {

inline constexpr std::size_t kMinTrainVocab = 257;   // 256 byte tokens + <|endoftext|>
inline constexpr std::size_t kMaxTrainVocab = 65536; // ids still fit uint16

struct TrainedBpe {
    BpeModel model;            // 256 bytes, then merges (ids 256…V−2), then <|endoftext|> (id V−1)
    std::vector<Merge> merges; // in learning order, with the pair frequency at that time
    std::size_t requestedVocab = 0;
    // Fewer merges than V−257 when the text ran out of pairs; the vocabulary is then smaller.
    bool exhausted = false;
};

// vocabSize outside [257, 65536] is an Error naming the field; cancel is an Error "cancelled".
[[nodiscard]] Result<TrainedBpe> trainBpe(std::string_view text, std::size_t vocabSize, const Progress& progress = {});

} // namespace tw::text
