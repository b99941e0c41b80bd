#include "model.h"

#include "base/enumnames.h"
#include "base/units.h"
#include "tensors.h"

#include <array>
#include <cmath>
#include <string>

// The Transformer being trained (stage 2 of "The Life of a Token"; docs/model.md §2).

namespace tw::model {

namespace {

std::string integer(std::uint64_t v) { return formatUnsigned(v); }

Error fieldError(const std::string& path, std::string message)
{
    Location where;
    where.jsonPath = path;
    return makeError(std::move(message), std::move(where));
}

// "must be between 1 and 100,000, got 0" unless lo ≤ v ≤ hi.
void checkRange(std::vector<Error>& errors, const std::string& path, std::uint64_t v, std::uint64_t lo, std::uint64_t hi)
{
    if (v < lo || v > hi)
        errors.push_back(fieldError(path, "must be between " + integer(lo) + " and " + integer(hi) + ", got " + integer(v)));
}

constexpr std::uint64_t kMaxLayers = 100'000;
constexpr std::uint64_t kMaxHidden = 1'048'576;      // 2^20
constexpr std::uint64_t kMaxFfn = 16'777'216;        // 2^24
constexpr std::uint64_t kMaxVocab = 16'777'216;      // 2^24
constexpr std::uint64_t kMaxPositions = 16'777'216;  // 2^24
constexpr std::uint64_t kMaxPadMultiple = 65'536;
constexpr std::uint64_t kMaxExperts = 4096;
constexpr double kMaxCapacityFactor = 64;
// Byte counts are carried as doubles but must stay exact integers below 2^63 (JSON, int64 users).
constexpr double kMaxBytes = 9.223372036854775807e18;

} // namespace

double bytesPerElement(Precision p)
{
    switch (p) {
    case Precision::Fp32: return 4;
    case Precision::Bf16: return 2;
    case Precision::Fp16: return 2;
    case Precision::Fp8: return 1;
    }
    return 0;
}

double masterBytes(const ModelConfig& m)
{
    const double sw = bytesPerElement(m.weights), so = bytesPerElement(m.optimizerState);
    return sw < so ? so : 0.0;
}

namespace {

constexpr std::array kPrecisionNames{EnumName{Precision::Fp32, "fp32"}, EnumName{Precision::Bf16, "bf16"},
                                     EnumName{Precision::Fp16, "fp16"}, EnumName{Precision::Fp8, "fp8"}};
constexpr std::array kFamilyNames{EnumName{Family::Gpt2, "gpt2"}, EnumName{Family::Llama, "llama"}};
constexpr std::array kFp8RecipeNames{EnumName{Fp8Recipe::None, "none"}, EnumName{Fp8Recipe::Delayed, "delayed"},
                                     EnumName{Fp8Recipe::Current, "current"}};
constexpr std::array kRecomputeNames{EnumName{Recompute::None, "none"}, EnumName{Recompute::Selective, "selective"},
                                     EnumName{Recompute::Full, "full"}};
constexpr std::array kAttentionNames{EnumName{Attention::Auto, "auto"}, EnumName{Attention::Fused, "fused"},
                                     EnumName{Attention::Unfused, "unfused"}};

} // namespace

std::string_view toString(Precision p) { return nameOf(kPrecisionNames, p); }
std::optional<Precision> precisionFromString(std::string_view s) { return valueOf(kPrecisionNames, s); }
std::string_view toString(Family f) { return nameOf(kFamilyNames, f); }
std::optional<Family> familyFromString(std::string_view s) { return valueOf(kFamilyNames, s); }
std::string_view toString(Recompute r) { return nameOf(kRecomputeNames, r); }
std::string_view toString(Fp8Recipe r) { return nameOf(kFp8RecipeNames, r); }
std::optional<Fp8Recipe> fp8RecipeFromString(std::string_view s) { return valueOf(kFp8RecipeNames, s); }
std::optional<Recompute> recomputeFromString(std::string_view s) { return valueOf(kRecomputeNames, s); }
std::string_view toString(Attention a) { return nameOf(kAttentionNames, a); }
std::optional<Attention> attentionFromString(std::string_view s) { return valueOf(kAttentionNames, s); }

std::uint64_t ModelConfig::paddedVocab() const
{
    if (vocabPadMultiple == 0)
        return vocabSize;
    return (vocabSize + vocabPadMultiple - 1) / vocabPadMultiple * vocabPadMultiple;
}

std::uint64_t ModelConfig::headDim() const { return heads == 0 ? 0 : hiddenSize / heads; }

std::uint64_t ModelConfig::kvDim() const { return kvHeads * headDim(); }

// Layers are counted from 1 for the interval: with interval k, layers k, 2k, 3k … (1-based) are
// MoE, so interval 2 makes every second layer MoE (0-based 1, 3, 5 …) and floor(L/k) layers in all.
bool ModelConfig::isMoeLayer(std::uint64_t layer) const
{
    return moe.experts > 0 && moe.layerInterval > 0 && layer < layers && (layer + 1) % moe.layerInterval == 0;
}

std::uint64_t ModelConfig::moeLayers() const
{
    return moe.experts > 0 && moe.layerInterval > 0 ? layers / moe.layerInterval : 0;
}

std::vector<Error> validate(const ModelConfig& m)
{
    std::vector<Error> errors;
    checkRange(errors, "model.layers", m.layers, 1, kMaxLayers);
    checkRange(errors, "model.heads", m.heads, 1, kMaxHidden);
    if (m.hiddenSize == 0 || m.hiddenSize > kMaxHidden) {
        errors.push_back(fieldError("model.hidden_size", "must be between 1 and " + integer(kMaxHidden) + ", got " + integer(m.hiddenSize)));
    } else if (m.heads >= 1 && m.heads <= kMaxHidden && m.hiddenSize % m.heads != 0) {
        errors.push_back(fieldError("model.hidden_size", "must be a positive multiple of model.heads (" + integer(m.heads)
                                                             + "), got " + integer(m.hiddenSize)));
    }
    if (m.kvHeads == 0) {
        errors.push_back(fieldError("model.kv_heads", "must be at least 1, got 0"));
    } else if (m.heads >= 1 && m.heads <= kMaxHidden && m.heads % m.kvHeads != 0) {
        errors.push_back(fieldError("model.kv_heads", "must divide model.heads (" + integer(m.heads) + "), got "
                                                          + integer(m.kvHeads)));
    }
    checkRange(errors, "model.ffn_size", m.ffnSize, 1, kMaxFfn);
    checkRange(errors, "model.vocab_size", m.vocabSize, 1, kMaxVocab);
    if (m.family == Family::Gpt2)
        checkRange(errors, "model.max_positions", m.maxPositions, 1, kMaxPositions);
    checkRange(errors, "model.vocab_pad_multiple", m.vocabPadMultiple, 0, kMaxPadMultiple);

    // Mixture of experts: 0 experts is a dense model; one expert would be a dense MLP with a router.
    if (m.moe.experts == 1 || m.moe.experts > kMaxExperts)
        errors.push_back(fieldError("model.moe.experts", "must be 0 (a dense model) or between 2 and " + integer(kMaxExperts)
                                                             + ", got " + integer(m.moe.experts)));
    if (m.moe.topK == 0)
        errors.push_back(fieldError("model.moe.top_k", "must be at least 1, got 0"));
    else if (m.moe.experts >= 2 && m.moe.experts <= kMaxExperts && m.moe.topK > m.moe.experts)
        errors.push_back(fieldError("model.moe.top_k", "must be between 1 and model.moe.experts (" + integer(m.moe.experts)
                                                           + "), got " + integer(m.moe.topK)));
    if (!(std::isfinite(m.moe.capacityFactor) && m.moe.capacityFactor > 0 && m.moe.capacityFactor <= kMaxCapacityFactor))
        errors.push_back(fieldError("model.moe.capacity_factor",
                                    "must be greater than 0 and at most 64, got " + formatCount(m.moe.capacityFactor, 3)));
    if (m.moe.layerInterval == 0)
        errors.push_back(fieldError("model.moe.layer_interval", "must be at least 1, got 0"));
    else if (m.moe.experts > 0 && m.layers >= 1 && m.layers <= kMaxLayers && m.moe.layerInterval > m.layers)
        errors.push_back(fieldError("model.moe.layer_interval", "must be between 1 and model.layers (" + integer(m.layers)
                                                                    + ") or the model has no MoE layer, got "
                                                                    + integer(m.moe.layerInterval)));

    // fp8 Adam moments lose the small second moments: no framework trains with them.
    if (m.optimizerState == Precision::Fp8)
        errors.push_back(fieldError("model.optimizer_state", "fp8 optimizer state is not supported: use fp32, bf16 or fp16"));
    // A recipe runs the linear layers in FP8 beside 16-bit activations; fp8 activations already run
    // every GEMM (and every stored or sent activation) in FP8.
    if (m.fp8Recipe != Fp8Recipe::None && m.activations != Precision::Bf16 && m.activations != Precision::Fp16)
        errors.push_back(fieldError("model.fp8_recipe", "an FP8 recipe runs the linear layers in FP8 beside bf16 or fp16 "
                                                        "activations (model.activations is "
                                                        + std::string(toString(m.activations)) + "): set it to bf16, or "
                                                        "the recipe to none"));

    if (!errors.empty())
        return errors;

    // Every field is in range: the byte counts that scale with P must stay below 2^63.
    // P in floating point (the exact uint64 count could wrap here), times the bytes each parameter
    // needs for weights, gradients, Adam m and v, and the fp32 master copy.
    const double p = parameterCountAsDouble(m);
    const double perParam = bytesPerElement(m.weights) + bytesPerElement(m.gradients)
                            + 2 * bytesPerElement(m.optimizerState) + (m.weights == Precision::Fp32 ? 0.0 : 4.0);
    if (!(p * perParam < kMaxBytes))
        errors.push_back(fieldError("model", "model is too large: P·bytes overflows 64-bit byte counts (P ≈ "
                                                 + formatCount(p, 0) + " parameters × " + formatCount(perParam, 0)
                                                 + " B per parameter ≥ 2^63 B)"));
    return errors;
}

namespace {

// The shape every catalogue model sets; precisions, recomputation and the rest keep their defaults.
ModelConfig shaped(std::string name, Family family, std::uint64_t layers, std::uint64_t d, std::uint64_t heads,
                   std::uint64_t kvHeads, std::uint64_t ffn, std::uint64_t vocab, std::uint64_t positions, bool tied)
{
    ModelConfig m;
    m.name = std::move(name);
    m.family = family;
    m.layers = layers;
    m.hiddenSize = d;
    m.heads = heads;
    m.kvHeads = kvHeads;
    m.ffnSize = ffn;
    m.vocabSize = vocab;
    m.maxPositions = positions;
    m.tiedEmbeddings = tied;
    return m;
}

// GPT-2's family: multi-head attention, a 4d MLP, GPT-2's 50,257 tokens, tied embeddings.
ModelConfig gpt2Like(std::string name, std::uint64_t layers, std::uint64_t d, std::uint64_t heads,
                     std::uint64_t positions)
{
    return shaped(std::move(name), Family::Gpt2, layers, d, heads, heads, 4 * d, 50257, positions, true);
}

// Llama's family: grouped-query attention, a SwiGLU MLP of its own width, untied embeddings. RoPE has no
// parameters: the context is informational (the trained one).
ModelConfig llamaLike(std::string name, std::uint64_t layers, std::uint64_t d, std::uint64_t heads,
                      std::uint64_t kvHeads, std::uint64_t ffn, std::uint64_t vocab, std::uint64_t context)
{
    return shaped(std::move(name), Family::Llama, layers, d, heads, kvHeads, ffn, vocab, context, false);
}

} // namespace

// Shapes from the published configurations: GPT-2 (Radford et al. 2019, HF config.json), GPT-3
// (Brown et al. 2020, Table 2.1), Llama 2 / Llama 3 (Meta params.json / HF config.json), Mixtral
// (Jiang et al. 2024, HF config.json).
std::optional<ModelConfig> knownModel(std::string_view id)
{
    if (id == "gpt2-small")
        return gpt2Like("GPT-2 small", 12, 768, 12, 1024);
    if (id == "gpt2-medium")
        return gpt2Like("GPT-2 medium", 24, 1024, 16, 1024);
    if (id == "gpt2-large")
        return gpt2Like("GPT-2 large", 36, 1280, 20, 1024);
    if (id == "gpt2-xl")
        return gpt2Like("GPT-2 XL", 48, 1600, 25, 1024);
    if (id == "gpt3-175b")
        return gpt2Like("GPT-3 175B", 96, 12288, 96, 2048);
    if (id == "llama2-7b")
        return llamaLike("Llama-2-7B", 32, 4096, 32, 32, 11008, 32000, 4096);
    if (id == "llama3-8b")
        return llamaLike("Llama-3-8B", 32, 4096, 32, 8, 14336, 128256, 8192);
    if (id == "llama3-70b")
        return llamaLike("Llama-3-70B", 80, 8192, 64, 8, 28672, 128256, 8192);
    if (id == "mixtral-8x7b") {
        ModelConfig m = llamaLike("Mixtral-8x7B", 32, 4096, 32, 8, 14336, 32000, 32768);
        m.moe.experts = 8;
        m.moe.topK = 2;
        m.moe.capacityFactor = 1.0;
        m.moe.layerInterval = 1;
        return m;
    }
    return std::nullopt;
}

std::vector<std::string> knownModelIds()
{
    return {"gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl", "llama2-7b",
            "llama3-8b",  "llama3-70b",  "gpt3-175b",  "mixtral-8x7b"};
}

} // namespace tw::model
