#pragma once
// Stage 2 derived from stage 1: parameters, the tensor inventory of one training step, memory per
// GPU and FLOPs — every number a Figure with its formula (REFERENCE.md, "Stage 2").

#include "base/figure.h"
#include "gpucatalog.h"
#include "model.h"

#include <cstdint>
#include <string>
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

struct TensorInfo {
    std::string name;                 // "layer3.attn.q", "embedding.wte", "logits"
    std::string component;            // "embedding", "attention", "mlp", "experts", "router", "norm", "head", "loss"
    std::string shapeSymbols;         // "[B,T,d]"
    std::vector<std::uint64_t> shape; // [32,1024,768]
    Precision dtype = Precision::Bf16;
    std::string dtypeName = "bf16";   // as shown: toString(dtype), or "int64" for token ids (dtype then unused)
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

// Exact parameter count (REFERENCE.md formulas; e.g. GPT-2 small tied 124,439,808).
[[nodiscard]] std::uint64_t parameterCount(const ModelConfig& model);
// Parameters by where they sit, exact (the same formulas as parameterCount; REFERENCE.md "Stage 2").
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
