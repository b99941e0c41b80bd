// Fuzz target: BpeModel::fromGpt2Files on encoder.json + vocab.bpe taken from one input (split at
// the first NUL byte). It returns a model or an Error, never crashes; a loaded model round-trips.

#include "fuzzcheck.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace tw;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto nul = input.find('\0');
    const std::string_view encoderJson = input.substr(0, nul);
    const std::string_view vocabBpe = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
    auto loaded = text::BpeModel::fromGpt2Files(encoderJson, vocabBpe, "fuzz");
    if (!loaded) {
        fuzz::check(!loaded.error().message.empty(), "an Error without a message");
        return 0;
    }
    const text::BpeModel& model = loaded.value();
    fuzz::checkLoadedModel(model);
    for (text::TokenId id = 0; id < model.vocabSize(); ++id)
        fuzz::check(!model.bytesOf(id).empty(), "a token without bytes");
    text::Encoder encoder(model);
    fuzz::checkRoundTrip(encoder, "Nel mezzo del cammin di nostra vita\nmi ritrovai per una selva oscura");
    fuzz::checkRoundTrip(encoder, input);
    return 0;
}
