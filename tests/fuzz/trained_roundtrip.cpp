// Fuzz target: a small tokenizer trained on the input itself round-trips the input and a fixed text,
// with all merges and with half of them, and its tokenizer.json reads back to the same encoding.

#include "fuzzcheck.h"

#include "text/bpetrainer.h"

#include <cstdint>

namespace {

// Trains V = 257 + 24 on the input, then checks round trips through the trained model.
void checkTrained(std::string_view text)
{
    using namespace tw;
    constexpr std::size_t kVocab = 257 + 24;
    auto trained = text::trainBpe(text, kVocab);
    fuzz::check(trained.ok(), "trainBpe failed", trained.ok() ? std::string() : trained.error().toString());
    const text::TrainedBpe& t = trained.value();
    fuzz::check(t.model.vocabSize() <= kVocab, "trained vocabulary larger than asked");
    fuzz::check(t.model.vocabSize() == 257 + t.merges.size(), "vocabulary size is not 257 + merges");
    fuzz::check(t.exhausted == (t.merges.size() < kVocab - 257), "exhausted flag disagrees with the merge count");
    text::Encoder encoder(t.model);
    fuzz::checkRoundTrip(encoder, text);
    fuzz::checkRoundTrip(encoder, "Nel mezzo del cammin di nostra vita");
    const auto full = encoder.encode(text);
    // Merge replay: fewer merges still round-trip and never give fewer tokens.
    encoder.setMergeLimit(t.merges.size() / 2);
    fuzz::checkRoundTrip(encoder, text);
    fuzz::check(encoder.encode(text).size() >= full.size(), "fewer merges gave fewer tokens");
    // tokenizer.json written and read back encodes the same.
    auto reloaded = text::BpeModel::fromHuggingFaceJson(t.model.toHuggingFaceJson(), "trained.json");
    fuzz::check(reloaded.ok(), "trained tokenizer.json does not load", reloaded.ok() ? std::string() : reloaded.error().toString());
    text::Encoder again(reloaded.value());
    fuzz::check(again.encode(text) == full, "reloaded tokenizer.json encodes differently");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // Training costs milliseconds: small inputs only, which is where the corner cases are.
    if (size <= 256)
        checkTrained(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
