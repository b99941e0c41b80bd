// Fuzz target: BpeModel::fromHuggingFaceJson on any bytes returns a model or an Error; a loaded model
// round-trips text and survives toHuggingFaceJson → fromHuggingFaceJson with the same encoding.

#include "fuzzcheck.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace tw;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    auto loaded = text::BpeModel::fromHuggingFaceJson(input, "fuzz.json");
    if (!loaded) {
        fuzz::check(!loaded.error().message.empty(), "an Error without a message");
        return 0;
    }
    const text::BpeModel& model = loaded.value();
    fuzz::checkLoadedModel(model);
    constexpr std::string_view kText = "Nel mezzo del cammin di nostra vita\nmi ritrovai per una selva oscura, "
                                       "ché la diritta via era smarrita. <|endoftext|> 1234 \xff\xfe";
    text::Encoder encoder(model);
    fuzz::checkRoundTrip(encoder, kText);
    fuzz::checkRoundTrip(encoder, input);
    auto reloaded = text::BpeModel::fromHuggingFaceJson(model.toHuggingFaceJson(), "again.json");
    fuzz::check(reloaded.ok(), "toHuggingFaceJson output does not load"); // checked in full above
    text::Encoder again(reloaded.value());
    fuzz::check(again.encode(kText) == encoder.encode(kText), "reloaded tokenizer encodes differently");
    return 0;
}
