// Loading GPT-2, the largest vocabulary the program ships (issue 42), in-process, Release build:
//   first   the first gpt2() of this process: its prebuilt tables checked and viewed in place (page
//           faults of the image included), what every start of the CLI, the GUI and the tests pays;
//   encode  then the first encode of a short text (the pre-tokenizer's set-up included);
//   image   `runs` more loads of the same tables (BpeModel::fromImage), warm;
//   text    `runs` parses of encoder.json and vocab.bpe (gpt2FromText), what each start paid before.
// scripts/bench.sh starts it once per run for the first load's median. Target: first ≤ 5 ms. The
// first load's CPU time (this thread's, kernel included) is printed too: on a shared machine the wall
// time also holds the waits for a CPU.
// Usage: bench_vocabload [--runs N]   (default 10)

#include "text/bpe.h"
#include "text/gpt2.h"

#include "benchutil.h"

#include <time.h>

#include <cstdio>
#include <vector>

namespace {

// CPU time of this thread in milliseconds (user and system).
double threadCpuMs()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

} // namespace

int main(int argc, char** argv)
{
    int runs = 10;
    if (!tw::bench::parseRuns(argc, argv, "bench_vocabload", runs))
        return 2;
    using tw::bench::Clock;
    using tw::bench::msSince;
    const double cpu0 = threadCpuMs();
    auto t0 = Clock::now();
    auto model = tw::text::gpt2();
    const double firstMs = msSince(t0);
    const double firstCpuMs = threadCpuMs() - cpu0;
    if (!model) {
        std::fprintf(stderr, "bench_vocabload: %s\n", model.error().toString().c_str());
        return 1;
    }
    if (!tw::text::gpt2Note().empty())
        std::fprintf(stderr, "bench_vocabload: %s\n", tw::text::gpt2Note().c_str());
    t0 = Clock::now();
    tw::text::Encoder encoder(model.value());
    const std::size_t tokens = encoder.encode("Nel mezzo del cammin di nostra vita").size();
    const double encodeMs = msSince(t0);

    std::vector<double> image, text;
    for (int r = 0; r < runs; ++r) {
        t0 = Clock::now();
        auto m = tw::text::BpeModel::fromImage(tw::text::gpt2Image(), tw::text::gpt2SourceSha256(), "GPT-2");
        image.push_back(msSince(t0));
        if (!m) {
            std::fprintf(stderr, "bench_vocabload: %s\n", m.error().toString().c_str());
            return 1;
        }
    }
    for (int r = 0; r < runs; ++r) {
        t0 = Clock::now();
        auto m = tw::text::gpt2FromText();
        text.push_back(msSince(t0));
        if (!m)
            return 1;
    }
    const tw::bench::Stats si = tw::bench::stats(image), st = tw::bench::stats(text);
    std::printf("GPT-2 (%zu ids, tables image %zu bytes): first load %.3f ms (CPU %.3f ms, %s), first encode %.3f ms (%zu tokens)\n",
                model->vocabSize(), tw::text::gpt2Image().size(), firstMs, firstCpuMs,
                tw::text::gpt2Note().empty() ? "prebuilt tables" : "text parsed", encodeMs, tokens);
    std::printf("  prebuilt tables, %d loads: median %.3f ms (%.3f-%.3f)\n", runs, si.median, si.min, si.max);
    std::printf("  text files parsed, %d loads: median %.3f ms (%.3f-%.3f)\n", runs, st.median, st.min, st.max);
    std::printf("RESULT name=vocab_load first_ms=%.4f first_cpu_ms=%.4f first_encode_ms=%.4f image_median_ms=%.4f image_min_ms=%.4f "
                "image_max_ms=%.4f text_median_ms=%.4f text_min_ms=%.4f text_max_ms=%.4f ids=%zu image_bytes=%zu\n",
                firstMs, firstCpuMs, encodeMs, si.median, si.min, si.max, st.median, st.min, st.max, model->vocabSize(),
                tw::text::gpt2Image().size());
    return 0;
}
