#include "dataset.h"

#include "base/units.h"

#include <algorithm>

// Stage 1 of "The Life of a Token" (Avesani et al.): the text as training data. Conventions
// (docs/model.md §1): documents are packed GPT-style into sequences of T tokens
// separated by <|endoftext|>, without padding; fractions stay fractions.

namespace tw::text {

namespace {

std::string num(double v) { return formatCount(v, 2); }
std::string integer(std::uint64_t v) { return formatInteger(static_cast<std::int64_t>(v)); }

// a / b, or 0 when b is 0 (the formula then says the figure is undefined).
double ratio(double a, double b) { return b == 0 ? 0.0 : a / b; }

// One side of a quotient figure: its symbol in the formula, its value and how the value is written.
struct Operand {
    std::string_view symbol;
    double value;
    std::string text;
};

// The figure a / b. Its formula: "a / b = 12 / 4 = 3", or "a / b: undefined<why>" when b is 0.
Figure quotient(std::string id, std::string label, std::string unit, const Operand& a, const Operand& b,
                std::string_view whyUndefined, std::vector<std::string> inputs)
{
    const double q = ratio(a.value, b.value);
    std::string formula = std::string(a.symbol) + " / " + std::string(b.symbol);
    formula += b.value == 0 ? ": undefined" + std::string(whyUndefined) : " = " + a.text + " / " + b.text + " = " + num(q);
    return {std::move(id), std::move(label), q, std::move(unit), std::move(formula), std::move(inputs)};
}

} // namespace

DatasetStats computeDataset(std::string_view text, std::span<const TokenSpan> tokens, const BpeModel& model,
                            const TrainingShape& shape)
{
    DatasetStats s;
    s.text = countText(text);
    s.tokens = tokens.size();

    // Per-id counts and the token-length histogram (length = bytes of input the token covers).
    std::vector<std::uint64_t> perId(model.vocabSize(), 0);
    for (const TokenSpan& t : tokens) {
        if (t.id >= perId.size())
            perId.resize(std::size_t{t.id} + 1, 0);
        ++perId[t.id];
        const std::size_t length = t.end >= t.begin ? t.end - t.begin : 0;
        if (length >= s.lengthHistogram.size())
            s.lengthHistogram.resize(length + 1, 0);
        ++s.lengthHistogram[length];
    }
    for (TokenId id = 0; id < perId.size(); ++id)
        if (perId[id] > 0)
            s.rankFrequency.push_back({id, perId[id]});
    std::sort(s.rankFrequency.begin(), s.rankFrequency.end(), [](const RankedToken& a, const RankedToken& b) {
        return a.count != b.count ? a.count > b.count : a.id < b.id;
    });
    s.uniqueTokens = s.rankFrequency.size();

    FigureSet& f = s.figures;
    const double bytes = static_cast<double>(s.text.bytes);
    const double words = static_cast<double>(s.text.words);
    const double n = static_cast<double>(s.tokens);
    const double V = static_cast<double>(model.vocabSize());
    const double T = static_cast<double>(shape.sequenceLength);
    const double B = static_cast<double>(shape.microBatch);
    const double G = static_cast<double>(shape.globalBatchTokens);
    const double D = static_cast<double>(shape.documents);

    // The text, counted (utf8.h: code points count each invalid byte as one; words as `wc -w`).
    f.add({"text.bytes", "Bytes of UTF-8 text", bytes, "B", "counted in the text: " + integer(s.text.bytes) + " B", {}});
    f.add({"text.code_points", "Unicode code points", static_cast<double>(s.text.codePoints), "",
           "UTF-8 sequences decoded in the text (an invalid byte counts as one): " + integer(s.text.codePoints), {}});
    f.add({"text.words", "Words", words, "",
           "maximal runs of non-white-space code points (as wc -w): " + integer(s.text.words), {}});
    f.add({"text.lines", "Lines", static_cast<double>(s.text.lines), "",
           "'\\n' count, plus one if the text does not end with '\\n': " + integer(s.text.lines), {}});

    // The tokenizer and the tokens.
    f.add({"tokenizer.vocab_size", "Vocabulary size V", V, "tokens",
           "tokens in " + model.name() + ": V = " + integer(model.vocabSize()), {}});
    f.add({"tokens.count", "Tokens", n, "tokens",
           "BPE encoding of the text with " + model.name() + ": n_tokens = " + integer(s.tokens),
           {"text.bytes", "tokenizer.vocab_size"}});
    f.add({"tokens.unique", "Distinct token ids used", static_cast<double>(s.uniqueTokens), "tokens",
           "distinct ids among the n_tokens = " + integer(s.tokens) + " tokens: " + integer(s.uniqueTokens) + " of V = "
               + integer(model.vocabSize()),
           {"tokens.count", "tokenizer.vocab_size"}});
    const Operand tokensOperand{"n_tokens", n, integer(s.tokens)};
    f.add(quotient("tokens.per_word", "Tokens per word", "", tokensOperand, {"n_words", words, integer(s.text.words)},
                   ", the text has no words", {"tokens.count", "text.words"}));
    f.add(quotient("tokens.bytes_per_token", "Bytes per token", "B", {"n_bytes", bytes, integer(s.text.bytes)},
                   tokensOperand, ", there are no tokens", {"text.bytes", "tokens.count"}));

    // The training shape (inputs of the scenario).
    f.add({"dataset.T", "Sequence length T", T, "tokens", "input: T = " + integer(shape.sequenceLength), {}});
    f.add({"dataset.B", "Micro-batch B", B, "sequences", "input: B = " + integer(shape.microBatch), {}});
    f.add({"dataset.G", "Global batch G", G, "tokens", "input: G = " + integer(shape.globalBatchTokens) + " tokens per optimizer step", {}});
    f.add({"dataset.documents", "Documents", D, "", "input: documents = " + integer(shape.documents), {}});

    // GPT-style packing: the documents are concatenated with one <|endoftext|> between two documents
    // (documents − 1 separators, none after the last), then cut into sequences of T tokens without
    // padding. The text is taken as `documents` documents whose tokens add up to n_tokens.
    const std::uint64_t separators = shape.documents > 0 ? shape.documents - 1 : 0;
    const std::uint64_t packed = s.tokens + separators;
    const double P = static_cast<double>(packed);
    f.add({"dataset.packed_tokens", "Packed tokens", P, "tokens",
           "n_tokens + (documents − 1) <|endoftext|> = " + integer(s.tokens) + " + " + integer(separators) + " = "
               + integer(packed),
           {"tokens.count", "dataset.documents"}});

    const Operand packedOperand{"packed tokens", P, integer(packed)};
    const double sequences =
        f.add(quotient("dataset.sequences", "Sequences of T tokens", "sequences", packedOperand,
                       {"T", T, integer(shape.sequenceLength)}, " for T = 0", {"dataset.packed_tokens", "dataset.T"}))
            .value;
    f.add(quotient("dataset.micro_batches", "Micro-batches of B sequences", "", {"sequences", sequences, num(sequences)},
                   {"B", B, integer(shape.microBatch)}, " for B = 0", {"dataset.sequences", "dataset.B"}));
    f.add(quotient("dataset.steps_per_epoch", "Optimizer steps per epoch", "", packedOperand,
                   {"G", G, integer(shape.globalBatchTokens)}, " for G = 0", {"dataset.packed_tokens", "dataset.G"}));

    // Ids are stored as uint16 while every id fits 16 bits (V ≤ 65,536), else uint32 (nanoGPT's
    // prepare.py stores GPT-2 ids as np.uint16).
    const double idBytes = model.vocabSize() <= 65536 ? 2 : 4;
    f.add({"dataset.id_bytes_per_token", "Bytes per stored id", idBytes, "B",
           model.vocabSize() <= 65536 ? "V = " + integer(model.vocabSize()) + " ≤ 65,536: uint16, 2 B"
                                      : "V = " + integer(model.vocabSize()) + " > 65,536: uint32, 4 B",
           {"tokenizer.vocab_size"}});
    f.add({"dataset.ids_bytes", "Bytes to store the ids", P * idBytes, "B",
           "packed tokens × bytes per id = " + integer(packed) + " × " + num(idBytes) + " = "
               + integer(static_cast<std::uint64_t>(P * idBytes)) + " B",
           {"dataset.packed_tokens", "dataset.id_bytes_per_token"}});
    return s;
}

} // namespace tw::text
