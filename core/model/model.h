#pragma once
// The Transformer being trained (stage 2): GPT-2 style, Llama style and Mixture-of-Experts layers,
// with the precisions of weights, activations, gradients and optimizer state.

#include "base/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::model {

// GPT-2: learned positions, LayerNorm, GELU MLP (d_ff = 4d), biases, tied or untied head.
// Llama: RoPE, RMSNorm, SwiGLU MLP with d_ff, grouped-query attention (n_kv_heads), no biases.
enum class Family { Gpt2, Llama };
enum class Precision { Fp32, Bf16, Fp16, Fp8 };
// Activation recomputation after Korthikanti et al. 2022 (arXiv 2205.05198).
enum class Recompute { None, Selective, Full };
// Attention kernel: fused (flash attention) keeps no [B,a,T,T] scores for the backward pass, unfused
// does; Auto = fused where the GPU supports it (parallel/memory.h: attentionScoresStored).
enum class Attention { Auto, Fused, Unfused };
// FP8 training as Transformer Engine runs it with 16-bit activations (docs/compute.md, "FP8 recipes"):
// the linear layers' GEMMs (forward, ∂input, ∂weight) in FP8, each input cast to FP8 with its scale
// first; attention, the head, norms and everything stored or sent stay 16-bit. Delayed: TE's
// DelayedScaling (the scale from the amax history); Current: Float8CurrentScaling (an amax pass over
// each tensor before its cast). None: no FP8 (fp8 activations instead run everything in FP8).
enum class Fp8Recipe { None, Delayed, Current };

[[nodiscard]] double bytesPerElement(Precision p); // 4, 2, 2, 1
[[nodiscard]] std::string_view toString(Precision p); // "fp32", "bf16", "fp16", "fp8"
[[nodiscard]] std::optional<Precision> precisionFromString(std::string_view s);
[[nodiscard]] std::string_view toString(Family f);    // "gpt2", "llama"
[[nodiscard]] std::optional<Family> familyFromString(std::string_view s);
[[nodiscard]] std::string_view toString(Recompute r); // "none", "selective", "full"
[[nodiscard]] std::optional<Recompute> recomputeFromString(std::string_view s);
[[nodiscard]] std::string_view toString(Attention a); // "auto", "fused", "unfused"
[[nodiscard]] std::optional<Attention> attentionFromString(std::string_view s);
[[nodiscard]] std::string_view toString(Fp8Recipe r); // "none", "delayed", "current"
[[nodiscard]] std::optional<Fp8Recipe> fp8RecipeFromString(std::string_view s);

struct MoeConfig {
    std::uint64_t experts = 0;       // E; 0 = a dense model
    std::uint64_t topK = 1;          // experts each token is routed to
    double capacityFactor = 1.0;     // CF: expert buffer = CF · tokens · k / E
    std::uint64_t layerInterval = 1; // every k-th layer is MoE (1 = every layer, 2 = every second …)
    bool operator==(const MoeConfig&) const = default;
};

struct ModelConfig {
    std::string name = "GPT-2 small";
    Family family = Family::Gpt2;
    std::uint64_t layers = 12;         // L
    std::uint64_t hiddenSize = 768;    // d
    std::uint64_t heads = 12;          // a
    std::uint64_t kvHeads = 12;        // n_kv_heads (grouped-query attention); = a for GPT-2
    std::uint64_t ffnSize = 3072;      // d_ff (4d for GPT-2; per expert in MoE layers)
    std::uint64_t vocabSize = 50257;   // V, from the tokenizer of stage 1 unless overridden
    std::uint64_t maxPositions = 1024; // learned position table (GPT-2); unused with RoPE
    bool tiedEmbeddings = true;        // the head reuses the embedding table
    std::uint64_t vocabPadMultiple = 0; // 0 = no padding; 64 pads 50,257 → 50,304
    MoeConfig moe;
    Precision weights = Precision::Bf16;
    Precision activations = Precision::Bf16;
    Precision gradients = Precision::Bf16;
    Precision optimizerState = Precision::Fp32; // Adam m and v (and the master copy when weights are not fp32)
    Recompute recompute = Recompute::None;
    Attention attention = Attention::Auto; // stage 3's memory only (stage 2 keeps the scores, Table 2)
    Fp8Recipe fp8Recipe = Fp8Recipe::None;
    bool operator==(const ModelConfig&) const = default;

    [[nodiscard]] std::uint64_t paddedVocab() const;   // V rounded up to vocabPadMultiple
    [[nodiscard]] std::uint64_t headDim() const;        // d / a
    [[nodiscard]] std::uint64_t kvDim() const;          // d_kv = n_kv_heads · d / a
    [[nodiscard]] bool isMoeLayer(std::uint64_t layer) const; // 0-based layer index
    [[nodiscard]] std::uint64_t moeLayers() const;
};

// Bytes per parameter of the master copy: the optimizer's precision when the weights are narrower (ZeRO
// §3.1: mixed-precision Adam keeps fp32 weights beside fp16/bf16 ones), else 0.
[[nodiscard]] double masterBytes(const ModelConfig& m);

// Every problem with a model, each naming its field ("model.hidden_size: must be a positive
// multiple of model.heads (12), got 770"); empty when the model is valid. Ranges keep every byte
// count below 2^63.
[[nodiscard]] std::vector<Error> validate(const ModelConfig& model);

// Published model shapes (GPT-2 small/medium/large/XL, Llama-2-7B, Llama-3-8B, Llama-3-70B,
// GPT-3 175B, Mixtral-8x7B); ids "gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl",
// "llama2-7b", "llama3-8b", "llama3-70b", "gpt3-175b", "mixtral-8x7b".
[[nodiscard]] std::optional<ModelConfig> knownModel(std::string_view id);
[[nodiscard]] std::vector<std::string> knownModelIds();

} // namespace tw::model
