// Fuzz target: GPT-2 encode then decode gives back any bytes, with spans that tile the input.

#include "fuzzcheck.h"

#include "text/gpt2.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace tw;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
#ifdef TOKENWIRE_FUZZ_GPT2
    static const text::BpeModel model = [] {
        auto m = text::gpt2();
        if (!m)
            fuzz::fail("the embedded GPT-2 tokenizer does not load", m.error().toString());
        return m.value();
    }();
    // A fresh encoder per input keeps a crash reproducible from its input alone.
    text::Encoder encoder(model);
    fuzz::checkRoundTrip(encoder, input);
#else
    (void)input;
    fuzz::fail("this build does not embed GPT-2 (configure with TOKENWIRE_GPT2_DIR)");
#endif
    return 0;
}
