// Fuzz target: BpeModel::fromImage, the loader of the prebuilt tables (issue 42). The first input byte
// chooses what the rest is: bit 0 clear, patches to a sound image of a small GPT-2-style tokenizer (5
// bytes each: a little-endian offset taken modulo the image size, and the byte written there); bit 0
// set, the image itself. Bit 1 recomputes the image's checksums before loading (sealBpeImage), so that
// the checks behind them are reached. An image is refused with an Error, or loads into a model that
// encodes the input and a fixed text without a crash, every id inside its vocabulary; the sound image
// must load and round-trip.

#include "fuzzcheck.h"

#include "text/bpeimage.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr std::string_view kSha = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

// The image of a tokenizer in GPT-2's files (tiktoken semantics, <|endoftext|>), written once.
const std::string& soundImage()
{
    static const std::string image = [] {
        // A token in GPT-2's printable form (its byte↔unicode alphabet).
        auto shown = [](const std::string& bytes) {
            std::string out;
            for (unsigned char b : bytes)
                out += tw::text::byteToUnicode(b);
            return out;
        };
        std::string encoder = "{";
        int id = 0;
        auto add = [&](const std::string& bytes) {
            std::string key;
            for (char c : shown(bytes)) // '"' and '\\' map to themselves: escaped in JSON
                key += (c == '"' || c == '\\') ? std::string{'\\', c} : std::string(1, c);
            encoder += (id ? ",\"" : "\"") + key + "\":" + std::to_string(id);
            ++id;
        };
        for (int b = 0; b < 256; ++b)
            add(std::string(1, char(b)));
        std::string vocab = "#version: 0.2\n";
        const std::pair<const char*, const char*> merges[] = {{" ", "t"}, {" t", "h"}, {" th", "e"}, {"i", "n"},
                                                              {"in", "g"}, {"e", "r"},  {"er", "e"},  {"v", "i"},
                                                              {"vi", "t"}, {"vit", "a"}};
        for (const auto& [left, right] : merges) {
            add(std::string(left) + right);
            vocab += shown(left) + " " + shown(right) + "\n";
        }
        encoder += ",\"<|endoftext|>\":" + std::to_string(id) + "}";
        auto model = tw::text::BpeModel::fromGpt2Files(encoder, vocab, "fuzz");
        if (!model)
            tw::fuzz::fail("the base tokenizer does not load", model.error().toString());
        const std::string_view sources[] = {kSha};
        auto image = model->toImage(sources);
        if (!image)
            tw::fuzz::fail("the base image is not written", image.error().toString());
        return image.value();
    }();
    return image;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace tw;
    if (size == 0)
        return 0;
    const std::uint8_t mode = data[0];
    const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::string& sound = soundImage();
    std::string bytes = (mode & 1) ? std::string(rest) : sound;
    if (!(mode & 1) && !bytes.empty())
        for (std::size_t k = 0; k + 5 <= rest.size(); k += 5) {
            std::uint32_t offset = 0;
            std::memcpy(&offset, rest.data() + k, 4);
            bytes[offset % bytes.size()] = rest[k + 4];
        }
    // Aligned like the embedded image (a std::string's short buffer is not).
    std::vector<std::uint64_t> words(bytes.size() / 8 + 1);
    auto* base = reinterpret_cast<unsigned char*>(words.data());
    std::memcpy(base, bytes.data(), bytes.size());
    const std::span<unsigned char> image(base, bytes.size());
    if (mode & 2)
        text::sealBpeImage(image);
    const bool unchanged = image.size() == sound.size() && std::memcmp(image.data(), sound.data(), sound.size()) == 0;

    const std::string_view sources[] = {kSha};
    auto loaded = text::BpeModel::fromImage(image, sources, "fuzz");
    if (!loaded) {
        fuzz::check(!unchanged, "the sound image is refused", loaded.error().toString());
        fuzz::check(!loaded.error().message.empty(), "an Error without a message");
        fuzz::check(loaded.error().where.file == "fuzz tables image", "an Error without the image's name");
        return 0;
    }
    const text::BpeModel& model = loaded.value();
    text::Encoder encoder(model);
    if (unchanged) {
        fuzz::checkLoadedModel(model);
        fuzz::checkRoundTrip(encoder, "Nel mezzo del cammin di nostra vita, the thing <|endoftext|>");
        fuzz::checkRoundTrip(encoder, rest);
        return 0;
    }
    // A checksummed image with other tables: whatever it encodes, no id leaves the vocabulary.
    for (const std::string_view text : {std::string_view("the viewing vita there"), rest}) {
        const std::vector<text::TokenId> ids = encoder.encode(text);
        for (const text::TokenId id : ids)
            fuzz::check(id < model.vocabSize(), "an id outside the vocabulary", std::to_string(id));
        auto spans = encoder.encodeWithSpans(text);
        fuzz::check(spans.ok(), "encodeWithSpans failed");
        fuzz::check(spans->size() == ids.size(), "encode() and encodeWithSpans() disagree on the count");
        (void)text::decode(model, ids);
    }
    for (const text::Merge& m : model.merges())
        fuzz::check(m.left < model.vocabSize() && m.right < model.vocabSize() && m.id < model.vocabSize(),
                    "a merge names an id outside the vocabulary");
    return 0;
}
