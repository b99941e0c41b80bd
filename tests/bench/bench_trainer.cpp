// Times BPE training: bench_trainer FILE V [runs]. Prints the first, median and fastest run
// (single thread, each run from scratch) and the process's peak resident memory (getrusage).
// Target (issue 2): V = 8,192 on the full Divina Commedia in under 0.6 s, peak RSS under 100 MB.

#include "text/bpetrainer.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_trainer FILE VOCAB_SIZE [RUNS]\n");
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "bench_trainer: cannot read %s\n", argv[1]);
        return 1;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    const std::size_t vocab = std::strtoull(argv[2], nullptr, 10);
    const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;

    std::vector<double> seconds;
    std::size_t merges = 0;
    bool exhausted = false;
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        auto trained = tw::text::trainBpe(text, vocab);
        const auto stop = std::chrono::steady_clock::now();
        if (!trained) {
            std::fprintf(stderr, "bench_trainer: %s\n", trained.error().toString().c_str());
            return 1;
        }
        merges = trained->merges.size();
        exhausted = trained->exhausted;
        seconds.push_back(std::chrono::duration<double>(stop - start).count());
    }
    const double first = seconds.front();
    std::sort(seconds.begin(), seconds.end());
    const double median = runs % 2 ? seconds[runs / 2] : (seconds[runs / 2 - 1] + seconds[runs / 2]) / 2;

    rusage usage{};
    getrusage(RUSAGE_SELF, &usage); // ru_maxrss is in KiB on Linux
    std::printf("file %s: %zu bytes, V = %zu: %zu merges%s\n", argv[1], text.size(), vocab, merges,
                exhausted ? " (text exhausted)" : "");
    std::printf("runs %d: first %.4f s, median %.4f s, min %.4f s (%.2f MB/s at median)\n", runs, first, median,
                seconds.front(), static_cast<double>(text.size()) / median / 1e6);
    std::printf("peak RSS %.1f MB\n", static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e6);
    return 0;
}
