// GPT-2 encoding throughput: encodes FILE `runs` times, a fresh Encoder (empty piece cache) each run.
// Usage: bench_tokenizer FILE [runs] [--spans]   (Release build; run by scripts/bench.sh)

#include "text/bpe.h"
#include "text/gpt2.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace {

// Peak resident set size of this process in MiB (Linux reports ru_maxrss in KiB).
double peakRssMiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string_view> positional;
    bool spans = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--spans")
            spans = true;
        else
            positional.push_back(a);
    }
    if (positional.empty() || positional.size() > 2) {
        std::fprintf(stderr, "usage: bench_tokenizer FILE [runs] [--spans]\n");
        return 2;
    }
    const int runs = positional.size() > 1 ? std::atoi(std::string(positional[1]).c_str()) : 10;
    if (runs < 1) {
        std::fprintf(stderr, "bench_tokenizer: runs must be a positive number\n");
        return 2;
    }
    const std::string path(positional[0]);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "bench_tokenizer: cannot read %s\n", path.c_str());
        return 1;
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

    const auto tLoad = std::chrono::steady_clock::now();
    auto model = tw::text::gpt2();
    const double loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tLoad).count();
    if (!model) {
        std::fprintf(stderr, "bench_tokenizer: %s\n", model.error().toString().c_str());
        return 1;
    }

    std::vector<double> rates;
    std::size_t tokens = 0;
    std::vector<tw::text::TokenId> ids;
    ids.reserve(text.size() / 2);
    for (int r = 0; r < runs; ++r) {
        tw::text::Encoder encoder(model.value()); // fresh: the piece cache starts empty
        ids.clear();
        const auto t0 = std::chrono::steady_clock::now();
        if (spans) {
            auto s = encoder.encodeWithSpans(text);
            if (!s) {
                std::fprintf(stderr, "bench_tokenizer: %s\n", s.error().toString().c_str());
                return 1;
            }
            tokens = s->size();
        } else {
            encoder.encode(text, ids);
            tokens = ids.size();
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rates.push_back(static_cast<double>(text.size()) / 1e6 / seconds);
    }
    const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
    const double med = median(rates);
    const char* name = spans ? "tokenwire-spans" : "tokenwire";
    std::printf("%s (native): %zu bytes, %zu tokens, %d runs, GPT-2 loaded in %.1f ms\n", name, text.size(), tokens,
                runs, loadSeconds * 1e3);
    std::printf("  median %.2f MB/s, min %.2f MB/s, max %.2f MB/s, peak RSS %.1f MiB\n", med, *lo, *hi, peakRssMiB());
    std::printf("RESULT name=%s median_mbps=%.3f min_mbps=%.3f max_mbps=%.3f tokens=%zu peak_rss_mib=%.1f\n", name,
                med, *lo, *hi, tokens, peakRssMiB());
    return 0;
}
