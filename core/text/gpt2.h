#pragma once
// The GPT-2 tokenizer files embedded at build time (when scripts/fetch-gpt2.sh brought them).

#include "bpe.h"

namespace tw::text {

// True when this build embeds GPT-2's encoder.json and vocab.bpe.
[[nodiscard]] bool gpt2Embedded();
// The embedded GPT-2 model, parsed once on first use (thread-safe).
[[nodiscard]] Result<BpeModel> gpt2();
// A sentence telling a user how to get GPT-2 into a build that lacks it.
[[nodiscard]] std::string gpt2HowToGet();

} // namespace tw::text
