#pragma once
// Stage 2 derived from stage 1: parameters, the tensor inventory of one training step, memory per
// GPU and FLOPs — every number a Figure with its formula (docs/model.md §2).

#include "base/figure.h"
#include "gpucatalog.h"
#include "model.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <compare>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace tw::model {

// The batch one GPU processes (from stage 1): B sequences of T tokens; G tokens per optimizer step.
struct BatchShape {
    std::uint64_t sequenceLength = 1024; // T
    std::uint64_t microBatch = 32;       // B
    std::uint64_t globalBatchTokens = 524288; // G
    bool operator==(const BatchShape&) const = default;
};

enum class TensorKind { Input, Weight, Activation, Gradient, OptimizerState };
enum class Phase { Forward, Backward, Optimizer };
// The JSON / CLI names. Not toString: QTest's QCOMPARE finds a toString of the enum's namespace by ADL
// and wants a char* from it, so QCOMPARE on a Phase or a TensorKind would no longer compile.
[[nodiscard]] std::string_view tensorKindId(TensorKind k); // "input", "weight", "activation", "gradient", "optimizer_state"
[[nodiscard]] std::string_view phaseId(Phase p);           // "forward", "backward", "optimizer"

// A tensor's name, kept inline: a GPT-3 175B inventory holds 7,133 tensors, and a heap string per
// name (most exceed std::string's 15-byte small buffer) made allocation half the cost of a derive
// after an edit. The inventory's longest name is "layer99999." (model.layers ≤ 100,000) plus
// "experts.proj.weight.master", 37 bytes, well inside kCapacity (tst_model checks it); a longer
// append is cut at kCapacity bytes (and asserts in a debug build).
class TensorName {
public:
    static constexpr std::size_t kCapacity = 63;
    TensorName() = default;
    TensorName(std::string_view s) { append(s); }  // NOLINT(google-explicit-constructor): a string-like value
    TensorName(const char* s) : TensorName(std::string_view(s)) {} // NOLINT(google-explicit-constructor)
    TensorName(const std::string& s) : TensorName(std::string_view(s)) {} // NOLINT(google-explicit-constructor)

    TensorName& append(std::string_view s)
    {
        assert(m_size + s.size() <= kCapacity);
        const std::size_t n = std::min(s.size(), kCapacity - m_size);
        std::memcpy(m_buf.data() + m_size, s.data(), n);
        m_size = static_cast<std::uint8_t>(m_size + n);
        return *this;
    }
    [[nodiscard]] std::string_view view() const { return {m_buf.data(), m_size}; }
    operator std::string_view() const { return view(); } // NOLINT(google-explicit-constructor)
    [[nodiscard]] std::string str() const { return std::string(view()); }
    [[nodiscard]] std::size_t size() const { return m_size; }
    [[nodiscard]] bool empty() const { return m_size == 0; }

    friend bool operator==(const TensorName& a, const TensorName& b) { return a.view() == b.view(); }
    friend bool operator==(const TensorName& a, std::string_view b) { return a.view() == b; }
    friend bool operator==(const TensorName& a, const std::string& b) { return a.view() == b; }
    friend bool operator==(const TensorName& a, const char* b) { return a.view() == b; }
    friend auto operator<=>(const TensorName& a, const TensorName& b) { return a.view() <=> b.view(); }

private:
    std::array<char, kCapacity> m_buf{};
    std::uint8_t m_size = 0;
};

// A tensor's shape, inline (at most kMaxRank dimensions; the inventory's largest is [B,a,T,T]; more
// are cut, and assert in a debug build).
class TensorShape {
public:
    static constexpr std::size_t kMaxRank = 6;
    TensorShape() = default;
    TensorShape(std::initializer_list<std::uint64_t> dims) { assign(dims.begin(), dims.end()); }
    template <typename It>
    void assign(It first, It last)
    {
        m_rank = 0;
        for (; first != last && m_rank < kMaxRank; ++first)
            m_dims[m_rank++] = *first;
        assert(first == last);
    }
    [[nodiscard]] const std::uint64_t* begin() const { return m_dims.data(); }
    [[nodiscard]] const std::uint64_t* end() const { return m_dims.data() + m_rank; }
    [[nodiscard]] std::size_t size() const { return m_rank; }
    [[nodiscard]] bool empty() const { return m_rank == 0; }
    [[nodiscard]] std::uint64_t operator[](std::size_t i) const { return m_dims[i]; }
    [[nodiscard]] std::vector<std::uint64_t> toVector() const { return {begin(), end()}; }
    friend bool operator==(const TensorShape& a, const TensorShape& b)
    {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    std::array<std::uint64_t, kMaxRank> m_dims{};
    std::size_t m_rank = 0;
};

struct TensorInfo {
    TensorName name;                  // "layer3.attn.q", "embedding.wte", "logits"
    // component, shapeSymbols and dtypeName view static strings (literals and toString(Precision)).
    std::string_view component;       // "embedding", "attention", "mlp", "experts", "router", "norm", "head", "loss"
    std::string_view shapeSymbols;    // "[B,T,d]"
    TensorShape shape;                // [32,1024,768]
    Precision dtype = Precision::Bf16;
    std::string_view dtypeName = "bf16"; // as shown: toString(dtype), or "int64" for token ids (dtype then unused)
    TensorKind kind = TensorKind::Activation;
    Phase phase = Phase::Forward;
    int layer = -1;                   // 0-based block index; -1 outside the blocks
    double bytes = 0;
    bool operator==(const TensorInfo&) const = default;
};

struct ModelDerivation {
    FigureSet figures;                // ids "model.*", "memory.*", "compute.*"
    std::vector<TensorInfo> tensors;  // forward pass layer by layer, then weights, gradients, optimizer
    double parameters = 0;            // P (exact integer as double)
    bool fitsInMemory = false;        // memory.total_bytes <= gpu.memory
};

// Pure. Expects a validated model. `inputs` are figures from earlier stages this one may cite
// (e.g. "tokens.count", "tokenizer.vocab_size", "dataset.T"); ids not present are not cited.
[[nodiscard]] ModelDerivation deriveModel(const ModelConfig& model, const BatchShape& batch, const GpuSpec& gpu,
                                          const FigureSet& inputs = {});

// Exact parameter count (docs/model.md §2 formulas; e.g. GPT-2 small tied 124,439,808).
[[nodiscard]] std::uint64_t parameterCount(const ModelConfig& model);
// Parameters by where they sit, exact (the same formulas as parameterCount; docs/model.md §2).
// Per-layer parts are for one block of the kind; the MoE parts for one MoE layer.
struct ParameterBreakdown {
    std::uint64_t embedding = 0;          // V_p·d (the head reuses it when tied)
    std::uint64_t positions = 0;          // T_max·d (GPT-2), 0 with RoPE
    std::uint64_t attentionPerLayer = 0;  // with its biases
    std::uint64_t mlpPerLayer = 0;        // a dense layer's MLP, or one expert's MLP
    std::uint64_t routerPerMoeLayer = 0;  // d·E
    std::uint64_t normsPerLayer = 0;      // GPT-2: 4·d (two LayerNorms), Llama: 2·d
    std::uint64_t finalNorm = 0;          // GPT-2: 2·d, Llama: d
    std::uint64_t head = 0;               // V_p·d when untied, else 0
    std::uint64_t rowParallelBiasesPerLayer = 0; // b_o and b_proj (GPT-2: 2·d): replicated under TP
    [[nodiscard]] std::uint64_t layer(const ModelConfig& m, std::uint64_t index) const; // one block, experts included
};
[[nodiscard]] ParameterBreakdown parameterBreakdown(const ModelConfig& model);
// The same count in floating point: never wraps, for any model whose fields are in range
// (validate() uses it to refuse models whose byte counts would overflow).
[[nodiscard]] double parameterCountAsDouble(const ModelConfig& model);

// Problems with the batch for this model, each naming its field ("batch.sequence_length",
// "batch.micro_batch", "batch.global_batch_tokens"): ranges, T ≤ model.max_positions for learned
// positions, and activation byte counts below 2^63. Expects a validated model.
[[nodiscard]] std::vector<Error> validate(const BatchShape& batch, const ModelConfig& model);

} // namespace tw::model
