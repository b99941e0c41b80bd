#pragma once
// The GPT-2 tokenizer embedded at build time (when scripts/fetch-gpt2.sh brought its files): the text
// files, and the tables built from them once by tools/bpeimage.cpp (bpeimage.h), which gpt2() views.

#include "bpe.h"

#include <array>
#include <span>
#include <string_view>

namespace tw::text {

// True when this build embeds GPT-2's encoder.json and vocab.bpe.
[[nodiscard]] bool gpt2Embedded();
// The embedded GPT-2 model, loaded once on first use (thread-safe): a view onto its prebuilt tables,
// or, when those are refused, parsed from the text files (gpt2Note() says why).
[[nodiscard]] Result<BpeModel> gpt2();
// Empty when gpt2() views the prebuilt tables; else a note on why they were refused and the text
// files parsed instead. Calls gpt2() first.
[[nodiscard]] const std::string& gpt2Note();
// GPT-2 parsed from the embedded encoder.json and vocab.bpe at each call: the source of truth.
[[nodiscard]] Result<BpeModel> gpt2FromText();
// A model and, when it was parsed because the tables were refused, the note saying why.
struct Gpt2Load {
    Result<BpeModel> model;
    std::string note;
};
// GPT-2 viewing image when BpeModel::fromImage accepts it for GPT-2's files, else gpt2FromText() with
// a note: what gpt2() does once with the embedded image (tests pass damaged ones).
[[nodiscard]] Gpt2Load loadGpt2(std::span<const unsigned char> image);
// GPT-2's prebuilt tables as embedded (empty without GPT-2), and the sha256 of encoder.json and
// vocab.bpe they must record (the files cmake/EmbedGpt2.cmake checked and embedded).
[[nodiscard]] std::span<const unsigned char> gpt2Image();
[[nodiscard]] std::array<std::string_view, 2> gpt2SourceSha256();
// A sentence telling a user how to get GPT-2 into a build that lacks it.
[[nodiscard]] std::string gpt2HowToGet();

} // namespace tw::text
