#include "bpetrainer.h"

#include "pretokenizer.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

// Byte-level BPE training (Sennrich et al. 2016, "Neural Machine Translation of Rare Words with
// Subword Units"; byte-level variant of GPT-2, Radford et al. 2019) with the incremental pair
// bookkeeping of Hugging Face tokenizers' BpeTrainer and SentencePiece's bpe_model_trainer:
//  1. the text is cut by GPT-2's pre-tokenizer; identical pieces become one "word" with a count;
//  2. pair counts are computed once; each pair keeps the list of words it occurs in;
//  3. each merge rewrites only the words that hold the best pair and applies the pair-count
//     deltas; a max-heap with lazy invalidation finds the next best pair.
//
// Stopping rule: a pair seen once is still a valid merge, so training stops early only when no
// adjacent pair remains anywhere (every word is a single token); `exhausted` then says so.
//
// Equivalence with the encoder: merges are applied to every word in learning order, left to right,
// non-overlapping — exactly what a rank-ordered BPE encoder does on each piece. A pair, once merged,
// never reappears (later merges only create pairs that contain the newer token), so replaying the
// merges by rank on a training piece yields the trainer's final segmentation of that piece.

namespace tw::text {

namespace {

using PairKey = std::uint64_t;

inline PairKey keyOf(TokenId left, TokenId right) { return (PairKey{left} << 32) | right; }
inline TokenId leftOf(PairKey k) { return static_cast<TokenId>(k >> 32); }
inline TokenId rightOf(PairKey k) { return static_cast<TokenId>(k & 0xFFFFFFFFu); }

// Open-addressing hash map PairKey → dense pair index (pairs are never erased during training).
class PairIndex {
public:
    explicit PairIndex(std::size_t expected)
    {
        std::size_t cap = 1024;
        while (cap < expected * 2)
            cap <<= 1;
        m_keys.assign(cap, kEmpty);
        m_values.assign(cap, 0);
    }
    // The index of key, inserting `next` when absent; `inserted` tells which happened.
    std::uint32_t findOrInsert(PairKey key, std::uint32_t next, bool& inserted)
    {
        if ((m_size + 1) * 10 > m_keys.size() * 7)
            grow();
        std::size_t i = slot(key);
        while (m_keys[i] != kEmpty) {
            if (m_keys[i] == key) {
                inserted = false;
                return m_values[i];
            }
            i = (i + 1) & (m_keys.size() - 1);
        }
        m_keys[i] = key;
        m_values[i] = next;
        ++m_size;
        inserted = true;
        return next;
    }

private:
    static constexpr PairKey kEmpty = ~PairKey{0};
    std::size_t slot(PairKey key) const
    {
        // Fibonacci hashing of the 64-bit key.
        return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & (m_keys.size() - 1);
    }
    void grow()
    {
        std::vector<PairKey> keys(m_keys.size() * 2, kEmpty);
        std::vector<std::uint32_t> values(keys.size(), 0);
        keys.swap(m_keys);
        values.swap(m_values);
        for (std::size_t j = 0; j < keys.size(); ++j) {
            if (keys[j] == kEmpty)
                continue;
            std::size_t i = slot(keys[j]);
            while (m_keys[i] != kEmpty)
                i = (i + 1) & (m_keys.size() - 1);
            m_keys[i] = keys[j];
            m_values[i] = values[j];
        }
    }
    std::vector<PairKey> m_keys;
    std::vector<std::uint32_t> m_values;
    std::size_t m_size = 0;
};

// A heap entry: the pair's count when pushed. Stale entries are detected on pop.
struct HeapEntry {
    std::uint64_t count;
    PairKey key;
};
// Max-heap order: higher count first; among equal counts the smaller (left, right) first.
struct HeapLess {
    bool operator()(const HeapEntry& a, const HeapEntry& b) const
    {
        return a.count != b.count ? a.count < b.count : a.key > b.key;
    }
};

struct Trainer {
    // Words: the symbols of each unique piece, stored back to back; a merge shrinks a word in place.
    std::vector<TokenId> symbols;
    std::vector<std::uint32_t> wordBegin; // start of word w in `symbols`
    std::vector<std::uint32_t> wordSize;  // current number of symbols of word w
    std::vector<std::uint64_t> wordCount; // occurrences of the piece in the text
    std::vector<std::uint32_t> wordStamp; // last merge that visited word w (deduplicates lists)

    // Pairs: dense index → count and the words that (may) contain it; lists are cleaned lazily.
    PairIndex index{1 << 16};
    std::vector<PairKey> pairKey;
    std::vector<std::int64_t> pairCount;
    std::vector<std::vector<std::uint32_t>> pairWords;
    std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapLess> heap;

    // Pairs whose count rose during the current merge (they contain the new token): pushed after it.
    std::vector<std::uint32_t> touched;
    std::vector<std::uint32_t> touchedStamp;
    std::uint32_t currentMerge = 0;

    std::uint32_t pairOf(PairKey key)
    {
        bool inserted = false;
        const std::uint32_t p = index.findOrInsert(key, static_cast<std::uint32_t>(pairKey.size()), inserted);
        if (inserted) {
            pairKey.push_back(key);
            pairCount.push_back(0);
            pairWords.emplace_back();
            touchedStamp.push_back(0);
        }
        return p;
    }

    // Adds `delta` occurrences of (left, right) found in word w.
    void add(TokenId left, TokenId right, std::int64_t delta, std::uint32_t w)
    {
        const std::uint32_t p = pairOf(keyOf(left, right));
        pairCount[p] += delta;
        if (delta > 0) {
            auto& words = pairWords[p];
            if (words.empty() || words.back() != w)
                words.push_back(w);
            if (touchedStamp[p] != currentMerge + 1) {
                touchedStamp[p] = currentMerge + 1;
                touched.push_back(p);
            }
        }
    }

    // Merges every (a, b) in word w into z, left to right without overlap, updating pair counts.
    // Neighbour changes follow Hugging Face tokenizers' Word::merge: the (prev, z) / (z, a)
    // transients of two adjacent occurrences cancel, so the net deltas are exact.
    void mergeWord(std::uint32_t w, TokenId a, TokenId b, TokenId z, PairKey merged)
    {
        TokenId* s = symbols.data() + wordBegin[w];
        const std::uint32_t n = wordSize[w];
        const auto f = static_cast<std::int64_t>(wordCount[w]);
        std::uint32_t out = 0;
        std::uint32_t i = 0;
        while (i < n) {
            if (i + 1 < n && s[i] == a && s[i + 1] == b) {
                if (out > 0) {
                    const TokenId prev = s[out - 1];
                    if (keyOf(prev, a) != merged)
                        add(prev, a, -f, w);
                    add(prev, z, f, w);
                }
                if (i + 2 < n) {
                    const TokenId next = s[i + 2];
                    if (keyOf(b, next) != merged)
                        add(b, next, -f, w);
                    add(z, next, f, w);
                }
                s[out++] = z;
                i += 2;
            } else {
                s[out++] = s[i++];
            }
        }
        wordSize[w] = out;
    }
};

} // namespace

Result<TrainedBpe> trainBpe(std::string_view text, std::size_t vocabSize, const Progress& progress)
{
    if (vocabSize < kMinTrainVocab || vocabSize > kMaxTrainVocab) {
        Location where;
        where.field = "vocab size";
        return makeError("vocab size must be between " + std::to_string(kMinTrainVocab) + " and "
                             + std::to_string(kMaxTrainVocab) + ", got " + std::to_string(vocabSize),
                         std::move(where));
    }
    if (const std::size_t limit = maxTextBytes(); text.size() > limit)
        return makeError("text of " + std::to_string(text.size()) + " bytes is larger than the "
                         + std::to_string(limit) + " bytes the trainer accepts");

    const std::size_t wantedMerges = vocabSize - kMinTrainVocab;
    const Error cancelled = makeError("cancelled");
    // Share of the progress bar given to pre-tokenizing (the rest goes to the merges).
    constexpr double kPieceShare = 0.3;

    Trainer t;

    // 1. Unique pieces with their counts, in order of first appearance (deterministic).
    {
        std::unordered_map<std::string_view, std::uint32_t> wordOf;
        wordOf.reserve(1 << 14);
        PreTokenizer::Cursor cursor(PreTokenizer::gpt2(), text);
        Piece piece;
        std::size_t seen = 0;
        while (cursor.next(piece)) {
            const std::string_view bytes = text.substr(piece.begin, piece.end - piece.begin);
            auto [it, inserted] = wordOf.try_emplace(bytes, static_cast<std::uint32_t>(t.wordCount.size()));
            if (inserted) {
                t.wordBegin.push_back(static_cast<std::uint32_t>(t.symbols.size()));
                t.wordSize.push_back(static_cast<std::uint32_t>(bytes.size()));
                t.wordCount.push_back(1);
                for (const char c : bytes)
                    t.symbols.push_back(static_cast<unsigned char>(c));
            } else {
                ++t.wordCount[it->second];
            }
            if ((++seen & 0x3FFF) == 0) {
                if (progress.stopRequested())
                    return cancelled;
                progress(kPieceShare * static_cast<double>(piece.end) / static_cast<double>(text.size()));
            }
        }
        if (progress.stopRequested())
            return cancelled;
    }
    t.wordStamp.assign(t.wordCount.size(), 0);

    // 2. Initial pair counts and the word lists.
    for (std::uint32_t w = 0; w < t.wordCount.size(); ++w) {
        const TokenId* s = t.symbols.data() + t.wordBegin[w];
        for (std::uint32_t i = 0; i + 1 < t.wordSize[w]; ++i)
            t.add(s[i], s[i + 1], static_cast<std::int64_t>(t.wordCount[w]), w);
    }
    for (const std::uint32_t p : t.touched)
        t.heap.push({static_cast<std::uint64_t>(t.pairCount[p]), t.pairKey[p]});
    t.touched.clear();

    // 3. Merges: best pair first; stale heap entries are re-queued with their current count.
    std::vector<Merge> merges;
    merges.reserve(wantedMerges);
    bool exhausted = false;
    std::vector<std::uint32_t> words;
    const std::size_t reportEvery = std::max<std::size_t>(1, wantedMerges / 200);
    while (merges.size() < wantedMerges) {
        if (t.heap.empty()) {
            exhausted = true;
            break;
        }
        const HeapEntry top = t.heap.top();
        t.heap.pop();
        const std::uint32_t p = t.pairOf(top.key);
        const auto current = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.pairCount[p]));
        if (current != top.count) {
            // Counts of existing pairs only fall, so the entry overstates: re-queue the truth.
            if (current > 0)
                t.heap.push({current, top.key});
            continue;
        }
        const TokenId a = leftOf(top.key);
        const TokenId b = rightOf(top.key);
        const auto z = static_cast<TokenId>(256 + merges.size());
        merges.push_back(Merge{a, b, z, current});

        t.currentMerge = static_cast<std::uint32_t>(merges.size());
        words = std::move(t.pairWords[p]);
        t.pairWords[p] = {};
        for (const std::uint32_t w : words) {
            if (t.wordStamp[w] == t.currentMerge)
                continue;
            t.wordStamp[w] = t.currentMerge;
            t.mergeWord(w, a, b, z, top.key);
        }
        t.pairCount[p] = 0; // every occurrence is gone
        for (const std::uint32_t q : t.touched)
            if (t.pairCount[q] > 0)
                t.heap.push({static_cast<std::uint64_t>(t.pairCount[q]), t.pairKey[q]});
        t.touched.clear();

        if (merges.size() % reportEvery == 0) {
            if (progress.stopRequested())
                return cancelled;
            progress(kPieceShare + (1 - kPieceShare) * static_cast<double>(merges.size())
                         / static_cast<double>(wantedMerges));
        }
    }
    if (progress.stopRequested())
        return cancelled;

    auto model = BpeModel::fromMerges(merges, true, "BPE trained (V = " + std::to_string(vocabSize) + ")");
    if (!model)
        return model.error();
    progress(1.0);
    return TrainedBpe{std::move(model).value(), std::move(merges), vocabSize, exhausted};
}

} // namespace tw::text
