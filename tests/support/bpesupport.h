#pragma once
// A byte-level BPE model the tokenizer suites share (header-only, Qt-free).

#include "text/bpe.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace tw::test {

// A model made by fromMerges from `count` random merges without duplicate byte strings (at most 12
// bytes each), the same for the same seed; a model that does not build stops the test program.
inline text::BpeModel randomMergeModel(int count, unsigned seed, bool withEndOfText = true)
{
    std::mt19937 rng(seed);
    std::vector<std::string> bytes;
    for (int b = 0; b < 256; ++b)
        bytes.emplace_back(1, char(b));
    std::set<std::string> seen(bytes.begin(), bytes.end());
    std::vector<text::Merge> merges;
    // Favour printable bytes so that merges fire on text-like input.
    auto pick = [&]() -> text::TokenId {
        if (rng() % 2)
            return text::TokenId(' ' + rng() % 95);
        return text::TokenId(rng() % bytes.size());
    };
    while (int(merges.size()) < count) {
        const text::TokenId l = pick(), r = pick();
        const std::string joined = bytes[l] + bytes[r];
        if (joined.size() > 12 || !seen.insert(joined).second)
            continue;
        merges.push_back({l, r, text::TokenId(bytes.size()), 0});
        bytes.push_back(joined);
    }
    auto model = text::BpeModel::fromMerges(merges, withEndOfText, "random");
    if (!model) {
        std::fprintf(stderr, "fromMerges: %s\n", model.error().toString().c_str());
        std::abort();
    }
    return model.value();
}

} // namespace tw::test
