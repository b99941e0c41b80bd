#pragma once
// Shared checks of the fuzz targets: a failed property prints what broke and aborts, so libFuzzer
// and the corpus replay both report it as a crash with the input that caused it.

#include "text/bpe.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace tw::fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& detail = {})
{
    std::fprintf(stderr, "fuzz check failed: %s%s%s\n", what, detail.empty() ? "" : ": ", detail.c_str());
    std::fflush(stderr);
    std::abort();
}

inline void check(bool ok, const char* what, const std::string& detail = {})
{
    if (!ok)
        fail(what, detail);
}

// Encodes text with spans and checks: decode gives text back, spans tile [0, size) in order, each
// span holds the bytes of its id, the plain encode gives the same ids, and a second encode (cache
// warm) gives them again, and count() their number.
inline void checkRoundTrip(text::Encoder& encoder, std::string_view text)
{
    const text::BpeModel& model = encoder.model();
    auto spans = encoder.encodeWithSpans(text);
    check(spans.ok(), "encodeWithSpans failed", spans.ok() ? std::string() : spans.error().toString());
    std::vector<text::TokenId> ids;
    std::uint32_t at = 0;
    for (const text::TokenSpan& s : spans.value()) {
        check(s.begin == at, "spans are not contiguous", std::to_string(s.begin) + " != " + std::to_string(at));
        check(s.end > s.begin, "empty span");
        check(s.end <= text.size(), "span past the end of the text");
        check(s.id < model.vocabSize(), "id outside the vocabulary", std::to_string(s.id));
        check(model.bytesOf(s.id) == text.substr(s.begin, s.end - s.begin), "span bytes differ from the token's bytes");
        ids.push_back(s.id);
        at = s.end;
    }
    check(at == text.size(), "spans do not cover the text", std::to_string(at) + " of " + std::to_string(text.size()));
    check(text::decode(model, ids) == text, "decode(encode(x)) != x");
    check(encoder.encode(text) == ids, "encode() and encodeWithSpans() disagree");
    check(encoder.encode(text) == ids, "a second encode (warm cache) gives other ids");
    check(encoder.count(text) == ids.size(), "count() and encode() disagree");
}

// A loaded model is whole: the 256 byte tokens, merges inside the vocabulary, and its
// toHuggingFaceJson reads back to the same vocabulary size, merges and <|endoftext|>.
inline void checkLoadedModel(const text::BpeModel& model)
{
    check(model.vocabSize() >= 256, "a loaded model without the 256 byte tokens");
    for (const text::Merge& m : model.merges())
        check(m.left < model.vocabSize() && m.right < model.vocabSize() && m.id < model.vocabSize(),
              "a merge names an id outside the vocabulary");
    auto reloaded = text::BpeModel::fromHuggingFaceJson(model.toHuggingFaceJson(), "again.json");
    check(reloaded.ok(), "toHuggingFaceJson output does not load", reloaded.ok() ? std::string() : reloaded.error().toString());
    check(reloaded->vocabSize() == model.vocabSize(), "reloaded vocabulary size differs");
    check(reloaded->merges() == model.merges(), "reloaded merges differ");
    check(reloaded->endOfText() == model.endOfText(), "reloaded <|endoftext|> differs");
}

} // namespace tw::fuzz
