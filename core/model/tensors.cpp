// Why ~810 lines: the tensor inventory of every block family (dense, GQA, SwiGLU, MoE, embedding,
// head) with each tensor's formula and chain, read top to bottom against docs/model.md §2.
#include "tensors.h"

#include "base/enumnames.h"
#include "base/units.h"
#include "model/kernels.h"

#include <array>
#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

// Stage 2 of "The Life of a Token" (Avesani et al., §2 and the worked examples of §5): from the
// token ids [B,T] to the Transformer's tensors, parameters, memory and FLOPs. Formulas: docs/model.md
// "Stage 2"; Megatron-LM (Narayanan et al., arXiv 2104.04473); Korthikanti et al. (arXiv 2205.05198);
// ZeRO (Rajbhandari et al., arXiv 1910.02054).

namespace tw::model {

namespace {

constexpr std::array kTensorKindNames{
    EnumName{TensorKind::Input, "input"},       EnumName{TensorKind::Weight, "weight"},
    EnumName{TensorKind::Activation, "activation"}, EnumName{TensorKind::Gradient, "gradient"},
    EnumName{TensorKind::OptimizerState, "optimizer_state"}};
constexpr std::array kPhaseNames{EnumName{Phase::Forward, "forward"}, EnumName{Phase::Backward, "backward"},
                                 EnumName{Phase::Optimizer, "optimizer"}};

} // namespace

std::string_view tensorKindId(TensorKind k) { return nameOf(kTensorKindNames, k); }
std::string_view phaseId(Phase p) { return nameOf(kPhaseNames, p); }

namespace {

constexpr double kMaxBytes = 9.223372036854775807e18; // 2^63

std::string I(std::uint64_t v) { return formatInteger(static_cast<std::int64_t>(v)); }
std::string N(double v, int decimals = 2) { return formatCount(v, decimals); }
std::string Bytes(double v) { return formatCount(v, 2) + " B"; }

// Parameters by component, in the number type T (uint64 for the exact count, double to test for
// overflow before the exact count is taken).
template <class T>
struct Params {
    T embedding{}, positions{}, attention{}, mlpPerLayer{}, mlp{}, experts{}, router{}, norms{}, head{};
    T total() const { return embedding + positions + attention + mlp + experts + router + norms + head; }
};

// GPT-2 block: W_qkv [d, d+2·d_kv] + b_qkv, W_o [d,d] + b_o, LayerNorm γ,β ×2, MLP W_fc [d,d_ff] + b_fc,
// W_proj [d_ff,d] + b_proj (d_ff = 4d gives 12·d² + 13·d per layer; Radford et al. 2019).
// Llama block: W_q, W_o [d,d], W_k, W_v [d,d_kv], RMSNorm γ ×2, SwiGLU W_gate, W_up [d,d_ff],
// W_down [d_ff,d], no biases (Touvron et al. 2023). MoE layers: E expert MLPs and a router [d,E]
// (Mixtral, Jiang et al. 2024). Untied heads add V·d.
template <class T>
Params<T> params(const ModelConfig& m)
{
    const bool gpt = m.family == Family::Gpt2;
    const T L = m.layers, d = m.hiddenSize, dkv = m.kvDim(), ff = m.ffnSize, V = m.paddedVocab();
    const T E = m.moe.experts, Lm = m.moeLayers(), Ld = L - Lm;
    Params<T> p;
    p.embedding = V * d;
    p.positions = gpt ? T(m.maxPositions) * d : T(0);
    p.attention = gpt ? L * (d * (d + 2 * dkv) + (d + 2 * dkv) + d * d + d) : L * (2 * d * d + 2 * d * dkv);
    p.mlpPerLayer = gpt ? 2 * d * ff + ff + d : 3 * d * ff;
    p.mlp = Ld * p.mlpPerLayer;
    p.experts = Lm * E * p.mlpPerLayer;
    p.router = Lm * d * E;
    p.norms = gpt ? L * 4 * d + 2 * d : L * 2 * d + d;
    p.head = m.tiedEmbeddings ? T(0) : V * d;
    return p;
}

// Activation bytes kept for the backward pass (Korthikanti et al. 2022, Table 2 with t = 1 and
// §4.3), scaled from their 16-bit constants by s_act / 2.
struct Activations {
    double perLayer = 0;
    double embedding = 0;
    double output = 0;
    double total = 0;
};

Activations activations(const ModelConfig& m, const BatchShape& b)
{
    const double T = static_cast<double>(b.sequenceLength), B = static_cast<double>(b.microBatch);
    const double d = static_cast<double>(m.hiddenSize), a = static_cast<double>(m.heads);
    const double s = bytesPerElement(m.activations);
    Activations x;
    switch (m.recompute) {
    case Recompute::None: x.perLayer = s / 2 * T * B * d * (34 + 5 * a * T / d); break;
    case Recompute::Selective: x.perLayer = s / 2 * 34 * T * B * d; break;
    case Recompute::Full: x.perLayer = s / 2 * 2 * T * B * d; break;
    }
    x.embedding = m.family == Family::Gpt2 ? B * T * d : 0; // the embedding dropout mask, 1 B per element
    x.output = s / 2 * 4 * B * T * d + 4 * B * T * static_cast<double>(m.paddedVocab());
    x.total = static_cast<double>(m.layers) * x.perLayer + x.embedding + x.output;
    return x;
}

// The tensor inventory: one entry per tensor, bytes = product of the shape × bytes per element.
class Inventory {
public:
    explicit Inventory(std::vector<TensorInfo>& out) : m_out(out) {}

    TensorInfo& add(std::string_view name, const char* component, std::string_view symbols,
                    std::initializer_list<std::uint64_t> shape, Precision dtype, TensorKind kind, Phase phase,
                    int layer)
    {
        TensorInfo& t = m_out.emplace_back();
        t.name = name;
        t.component = component;
        t.shapeSymbols = symbols;
        t.shape.assign(shape.begin(), shape.end());
        t.dtype = dtype;
        t.dtypeName = toString(dtype);
        t.kind = kind;
        t.phase = phase;
        t.layer = layer;
        double elements = 1;
        for (std::uint64_t n : shape)
            elements *= static_cast<double>(n);
        t.bytes = elements * bytesPerElement(dtype);
        return t;
    }

private:
    std::vector<TensorInfo>& m_out;
};

// Appends a copy of src named head + tail (src may be an entry of out: push_back copies it first).
TensorInfo& appendCopy(std::vector<TensorInfo>& out, const TensorInfo& src, std::string_view head, std::string_view tail)
{
    std::string name;
    name.reserve(head.size() + tail.size());
    name.append(head).append(tail);
    out.push_back(src);
    out.back().name = std::move(name);
    return out.back();
}

// The sizes and precisions the inventory's shapes use.
struct InventoryDims {
    bool gpt = true;
    std::uint64_t B = 0, T = 0, d = 0, a = 0, dkv = 0, ff = 0, V = 0, E = 0, C = 0;
    Precision act = Precision::Fp32, w = Precision::Fp32;
    bool padded = false;       // "V_p" in the symbols, else "V"
    const char* kvSym = "";    // [B,T,d] or [B,T,d_kv]
};

InventoryDims inventoryDims(const ModelConfig& m, const BatchShape& b)
{
    InventoryDims D;
    D.gpt = m.family == Family::Gpt2;
    D.B = b.microBatch;
    D.T = b.sequenceLength;
    D.d = m.hiddenSize;
    D.a = m.heads;
    D.dkv = m.kvDim();
    D.ff = m.ffnSize;
    D.V = m.paddedVocab();
    D.E = m.moe.experts;
    const std::uint64_t k = m.moe.topK;
    // Expert capacity C = ⌈CF·k·B·T/E⌉ tokens per expert (Switch Transformer, Fedus et al. 2021).
    D.C = D.E == 0 ? 0
                   : static_cast<std::uint64_t>(std::ceil(m.moe.capacityFactor * static_cast<double>(k)
                                                          * static_cast<double>(D.B * D.T) / static_cast<double>(D.E)));
    D.act = m.activations;
    D.w = m.weights;
    D.padded = m.paddedVocab() != m.vocabSize;
    D.kvSym = D.dkv == D.d ? "[B,T,d]" : "[B,T,d_kv]";
    return D;
}

constexpr auto Fw = Phase::Forward;
constexpr auto A = TensorKind::Activation;
constexpr auto W = TensorKind::Weight;

// One block's forward tensors, names relative to "layerN." (layer filled in when copied).
void blockForward(const InventoryDims& D, bool moe, std::vector<TensorInfo>& block)
{
    const bool gpt = D.gpt;
    const std::uint64_t B = D.B, T = D.T, d = D.d, a = D.a, dkv = D.dkv, ff = D.ff, E = D.E, C = D.C;
    const Precision act = D.act;
    Inventory inv(block);
    inv.add(gpt ? "ln1" : "attn_norm", "norm", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
    inv.add("attn.q", "attention", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
    inv.add("attn.k", "attention", D.kvSym, {B, T, dkv}, act, A, Fw, 0);
    inv.add("attn.v", "attention", D.kvSym, {B, T, dkv}, act, A, Fw, 0);
    inv.add("attn.scores", "attention", "[B,a,T,T]", {B, a, T, T}, act, A, Fw, 0);
    inv.add("attn.softmax", "attention", "[B,a,T,T]", {B, a, T, T}, act, A, Fw, 0);
    inv.add("attn.context", "attention", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
    inv.add("attn.out", "attention", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
    inv.add("residual", "attention", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
    inv.add(gpt ? "ln2" : "mlp_norm", "norm", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
    if (moe) {
        inv.add("router.logits", "router", "[B,T,E]", {B, T, E}, act, A, Fw, 0);
        inv.add("experts.dispatch", "experts", "[E,C,d]", {E, C, d}, act, A, Fw, 0);
        if (!gpt)
            inv.add("experts.gate", "experts", "[E,C,d_ff]", {E, C, ff}, act, A, Fw, 0);
        inv.add("experts.up", "experts", "[E,C,d_ff]", {E, C, ff}, act, A, Fw, 0);
        inv.add(gpt ? "experts.gelu" : "experts.swiglu", "experts", "[E,C,d_ff]", {E, C, ff}, act, A, Fw, 0);
        inv.add("experts.down", "experts", "[E,C,d]", {E, C, d}, act, A, Fw, 0);
        inv.add("experts.combine", "experts", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
    } else {
        if (!gpt)
            inv.add("mlp.gate", "mlp", "[B,T,d_ff]", {B, T, ff}, act, A, Fw, 0);
        inv.add("mlp.up", "mlp", "[B,T,d_ff]", {B, T, ff}, act, A, Fw, 0);
        inv.add(gpt ? "mlp.gelu" : "mlp.swiglu", "mlp", "[B,T,d_ff]", {B, T, ff}, act, A, Fw, 0);
        inv.add("mlp.down", "mlp", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
    }
    inv.add("output", moe ? "experts" : "mlp", "[B,T,d]", {B, T, d}, act, A, Fw, 0);
}

// One block's weights, in the order of the forward pass.
void blockWeights(const InventoryDims& D, bool moe, std::vector<TensorInfo>& block)
{
    const std::uint64_t d = D.d, dkv = D.dkv, ff = D.ff, E = D.E;
    const Precision w = D.w;
    Inventory inv(block);
    if (D.gpt) {
        inv.add("ln1.weight", "norm", "[d]", {d}, w, W, Fw, 0);
        inv.add("ln1.bias", "norm", "[d]", {d}, w, W, Fw, 0);
        inv.add("attn.qkv.weight", "attention", dkv == d ? "[d,3d]" : "[d,d+2·d_kv]", {d, d + 2 * dkv}, w, W, Fw, 0);
        inv.add("attn.qkv.bias", "attention", dkv == d ? "[3d]" : "[d+2·d_kv]", {d + 2 * dkv}, w, W, Fw, 0);
        inv.add("attn.proj.weight", "attention", "[d,d]", {d, d}, w, W, Fw, 0);
        inv.add("attn.proj.bias", "attention", "[d]", {d}, w, W, Fw, 0);
        inv.add("ln2.weight", "norm", "[d]", {d}, w, W, Fw, 0);
        inv.add("ln2.bias", "norm", "[d]", {d}, w, W, Fw, 0);
        if (moe) {
            inv.add("router.weight", "router", "[d,E]", {d, E}, w, W, Fw, 0);
            inv.add("experts.fc.weight", "experts", "[E,d,d_ff]", {E, d, ff}, w, W, Fw, 0);
            inv.add("experts.fc.bias", "experts", "[E,d_ff]", {E, ff}, w, W, Fw, 0);
            inv.add("experts.proj.weight", "experts", "[E,d_ff,d]", {E, ff, d}, w, W, Fw, 0);
            inv.add("experts.proj.bias", "experts", "[E,d]", {E, d}, w, W, Fw, 0);
        } else {
            inv.add("mlp.fc.weight", "mlp", "[d,d_ff]", {d, ff}, w, W, Fw, 0);
            inv.add("mlp.fc.bias", "mlp", "[d_ff]", {ff}, w, W, Fw, 0);
            inv.add("mlp.proj.weight", "mlp", "[d_ff,d]", {ff, d}, w, W, Fw, 0);
            inv.add("mlp.proj.bias", "mlp", "[d]", {d}, w, W, Fw, 0);
        }
        return;
    }
    inv.add("attn_norm.weight", "norm", "[d]", {d}, w, W, Fw, 0);
    inv.add("attn.wq", "attention", "[d,d]", {d, d}, w, W, Fw, 0);
    inv.add("attn.wk", "attention", "[d,d_kv]", {d, dkv}, w, W, Fw, 0);
    inv.add("attn.wv", "attention", "[d,d_kv]", {d, dkv}, w, W, Fw, 0);
    inv.add("attn.wo", "attention", "[d,d]", {d, d}, w, W, Fw, 0);
    inv.add("mlp_norm.weight", "norm", "[d]", {d}, w, W, Fw, 0);
    if (moe) {
        inv.add("router.weight", "router", "[d,E]", {d, E}, w, W, Fw, 0);
        inv.add("experts.w_gate", "experts", "[E,d,d_ff]", {E, d, ff}, w, W, Fw, 0);
        inv.add("experts.w_up", "experts", "[E,d,d_ff]", {E, d, ff}, w, W, Fw, 0);
        inv.add("experts.w_down", "experts", "[E,d_ff,d]", {E, ff, d}, w, W, Fw, 0);
    } else {
        inv.add("mlp.w_gate", "mlp", "[d,d_ff]", {d, ff}, w, W, Fw, 0);
        inv.add("mlp.w_up", "mlp", "[d,d_ff]", {d, ff}, w, W, Fw, 0);
        inv.add("mlp.w_down", "mlp", "[d_ff,d]", {ff, d}, w, W, Fw, 0);
    }
}

// A block's tensors with empty names (a copy then costs no allocation for the name) and the
// names relative to "layerN.".
struct Block {
    std::vector<TensorInfo> protos;
    std::vector<std::string> tails;
};

Block makeBlock(std::vector<TensorInfo> tensors)
{
    Block block;
    block.tails.reserve(tensors.size());
    for (TensorInfo& t : tensors) {
        block.tails.push_back(t.name.str());
        t.name = TensorName();
    }
    block.protos = std::move(tensors);
    return block;
}

// The blocks' tensors of each kind (dense, MoE), built once: forward tensors and weights.
struct Blocks {
    Block denseFwd, moeFwd, denseW, moeW;
};

Blocks makeBlocks(const InventoryDims& D, std::uint64_t denseBlocks, std::uint64_t moeBlocks)
{
    Blocks out;
    if (denseBlocks > 0) {
        std::vector<TensorInfo> fwd, weights;
        blockForward(D, false, fwd);
        blockWeights(D, false, weights);
        out.denseFwd = makeBlock(std::move(fwd));
        out.denseW = makeBlock(std::move(weights));
    }
    if (moeBlocks > 0) {
        std::vector<TensorInfo> fwd, weights;
        blockForward(D, true, fwd);
        blockWeights(D, true, weights);
        out.moeFwd = makeBlock(std::move(fwd));
        out.moeW = makeBlock(std::move(weights));
    }
    return out;
}

// Every layer's copy of its kind's block, named "layerN." + tail.
void addBlocks(std::vector<TensorInfo>& out, const ModelConfig& m, const std::vector<std::string>& prefix,
               const Block& dense, const Block& moe)
{
    for (std::uint64_t l = 0; l < m.layers; ++l) {
        const Block& block = m.isMoeLayer(l) ? moe : dense;
        const std::string& head = prefix[l];
        const int li = static_cast<int>(l);
        for (std::size_t i = 0; i < block.protos.size(); ++i) {
            TensorInfo& t = out.emplace_back(block.protos[i]);
            const std::string& tail = block.tails[i];
            t.name.append(head).append(tail);
            t.layer = li;
        }
    }
}

// Where the weights sit in the inventory: the head weights, the blocks' and the tail weights.
struct WeightRanges {
    std::size_t firstWeight = 0, endHeadWeights = 0, firstTailWeight = 0, endWeight = 0;
};

// One tensor derived from each weight (suffix, dtype, kind, phase): the head and tail weights' from
// out, the blocks' from the blocks' weights once per kind, then copied into each block.
void addDerived(std::vector<TensorInfo>& out, const ModelConfig& m, const std::vector<std::string>& prefix,
                const Blocks& blocks, const WeightRanges& r, const char* suffix, Precision dtype, TensorKind kind,
                Phase phase)
{
    const std::string_view tail(suffix);
    const std::string_view dtypeName = toString(dtype);
    const double scale = bytesPerElement(dtype);
    const double weightScale = bytesPerElement(m.weights);
    auto from = [&](TensorInfo& t, const TensorInfo& weight) {
        t.dtype = dtype;
        t.dtypeName = dtypeName;
        t.kind = kind;
        t.phase = phase;
        t.bytes = weight.bytes / weightScale * scale;
    };
    auto fromWeights = [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
            const TensorInfo& weight = out[i]; // out has capacity for every entry: no reallocation
            from(appendCopy(out, weight, weight.name, tail), weight);
        }
    };
    auto derivedBlock = [&](const Block& weightsBlock) {
        Block block = weightsBlock;
        for (std::size_t i = 0; i < block.protos.size(); ++i) {
            from(block.protos[i], weightsBlock.protos[i]);
            block.tails[i] += tail;
        }
        return block;
    };
    fromWeights(r.firstWeight, r.endHeadWeights);
    addBlocks(out, m, prefix, derivedBlock(blocks.denseW), derivedBlock(blocks.moeW));
    fromWeights(r.firstTailWeight, r.endWeight);
}

// The forward pass's tensors, layer by layer: inputs, embeddings, the blocks, final norm, logits, loss.
void addForward(std::vector<TensorInfo>& out, const ModelConfig& m, const InventoryDims& D,
                const std::vector<std::string>& prefix, const Blocks& blocks)
{
    const std::uint64_t B = D.B, T = D.T, d = D.d, V = D.V;
    const Precision act = D.act;
    Inventory inv(out);
    TensorInfo& ids = inv.add("input.ids", "embedding", "[B,T]", {B, T}, Precision::Fp32, TensorKind::Input, Fw, -1);
    ids.dtypeName = "int64";
    ids.bytes = static_cast<double>(B * T) * 8;
    TensorInfo& targets = inv.add("input.targets", "loss", "[B,T]", {B, T}, Precision::Fp32, TensorKind::Input, Fw, -1);
    targets.dtypeName = "int64";
    targets.bytes = static_cast<double>(B * T) * 8;
    inv.add("embedding.tokens", "embedding", "[B,T,d]", {B, T, d}, act, A, Fw, -1);
    if (D.gpt)
        inv.add("embedding.positions", "embedding", "[T,d]", {T, d}, act, A, Fw, -1);
    inv.add("embedding.output", "embedding", "[B,T,d]", {B, T, d}, act, A, Fw, -1);
    addBlocks(out, m, prefix, blocks.denseFwd, blocks.moeFwd);
    inv.add("final_norm.output", "norm", "[B,T,d]", {B, T, d}, act, A, Fw, -1);
    inv.add("logits", "head", D.padded ? "[B,T,V_p]" : "[B,T,V]", {B, T, V}, act, A, Fw, -1);
    inv.add("loss.logits_fp32", "loss", D.padded ? "[B,T,V_p]" : "[B,T,V]", {B, T, V}, Precision::Fp32, A, Fw, -1);
    inv.add("loss", "loss", "[1]", {1}, Precision::Fp32, A, Fw, -1);
}

// The weights, in the order of the forward pass; returns where they sit.
WeightRanges addWeights(std::vector<TensorInfo>& out, const ModelConfig& m, const InventoryDims& D,
                        const std::vector<std::string>& prefix, const Blocks& blocks)
{
    const std::uint64_t d = D.d, V = D.V;
    const Precision w = D.w;
    Inventory inv(out);
    WeightRanges r;
    r.firstWeight = out.size();
    inv.add("embedding.wte", "embedding", D.padded ? "[V_p,d]" : "[V,d]", {V, d}, w, W, Fw, -1);
    if (D.gpt)
        inv.add("embedding.wpe", "embedding", "[T_max,d]", {m.maxPositions, d}, w, W, Fw, -1);
    r.endHeadWeights = out.size();
    addBlocks(out, m, prefix, blocks.denseW, blocks.moeW);
    r.firstTailWeight = out.size();
    inv.add("final_norm.weight", "norm", "[d]", {d}, w, W, Fw, -1);
    if (D.gpt)
        inv.add("final_norm.bias", "norm", "[d]", {d}, w, W, Fw, -1);
    if (!m.tiedEmbeddings)
        inv.add("head.weight", "head", D.padded ? "[V_p,d]" : "[V,d]", {V, d}, w, W, Fw, -1);
    r.endWeight = out.size();
    return r;
}

// The inventory is large (7,133 tensors for GPT-3 175B) and every block of a kind (dense or MoE)
// holds the same tensors apart from the layer in the name: each kind's forward tensors and weights
// are built once, named relative to "layerN.", and copied into each block with the prefix added.
void buildInventory(const ModelConfig& m, const BatchShape& b, std::vector<TensorInfo>& out)
{
    const InventoryDims D = inventoryDims(m, b);
    const std::uint64_t moeBlocks = m.moeLayers(), denseBlocks = m.layers - moeBlocks;
    const Blocks blocks = makeBlocks(D, denseBlocks, moeBlocks);

    // Room for every entry up front (the gradients and optimizer states of the weights outside the
    // blocks are copied from entries of out while out grows).
    const std::size_t topForward = D.gpt ? 9 : 8;                                 // ids … embedding.output, final norm … loss
    const std::size_t topWeights = (D.gpt ? 4 : 2) + (m.tiedEmbeddings ? 0 : 1); // wte, wpe, final norm γ, β, head
    const std::size_t weights =
        topWeights + denseBlocks * blocks.denseW.protos.size() + moeBlocks * blocks.moeW.protos.size();
    const std::size_t perWeight = D.w != Precision::Fp32 ? 5 : 4; // weight, gradient, m, v (, master)
    out.reserve(out.size() + topForward + denseBlocks * blocks.denseFwd.protos.size()
                + moeBlocks * blocks.moeFwd.protos.size() + perWeight * weights);

    // The "layerN." prefixes, formatted once.
    std::vector<std::string> prefix(m.layers);
    for (std::uint64_t l = 0; l < m.layers; ++l)
        prefix[l] = "layer" + std::to_string(l) + ".";
    addForward(out, m, D, prefix, blocks);
    const WeightRanges r = addWeights(out, m, D, prefix, blocks);
    out.reserve(out.size() + (perWeight - 1) * (r.endWeight - r.firstWeight)); // a no-op: addDerived keeps references into out

    // One gradient per weight (backward), then Adam's m and v and, when the weights are not fp32,
    // the fp32 master copy (mixed precision, Micikevicius et al. 2018; ZeRO §3.1).
    addDerived(out, m, prefix, blocks, r, ".grad", m.gradients, TensorKind::Gradient, Phase::Backward);
    addDerived(out, m, prefix, blocks, r, ".adam_m", m.optimizerState, TensorKind::OptimizerState, Phase::Optimizer);
    addDerived(out, m, prefix, blocks, r, ".adam_v", m.optimizerState, TensorKind::OptimizerState, Phase::Optimizer);
    if (D.w != Precision::Fp32)
        addDerived(out, m, prefix, blocks, r, ".master", Precision::Fp32, TensorKind::OptimizerState, Phase::Optimizer);
}

std::string precisionText(Precision p) { return N(bytesPerElement(p)) + " B (" + std::string(toString(p)) + ")"; }

} // namespace

std::uint64_t parameterCount(const ModelConfig& model) { return params<std::uint64_t>(model).total(); }

ParameterBreakdown parameterBreakdown(const ModelConfig& m)
{
    const Params<std::uint64_t> p = params<std::uint64_t>(m);
    const bool gpt = m.family == Family::Gpt2;
    const std::uint64_t d = m.hiddenSize;
    ParameterBreakdown b;
    b.embedding = p.embedding;
    b.positions = p.positions;
    b.attentionPerLayer = m.layers == 0 ? 0 : p.attention / m.layers;
    b.mlpPerLayer = p.mlpPerLayer;
    b.routerPerMoeLayer = d * m.moe.experts;
    b.normsPerLayer = gpt ? 4 * d : 2 * d;
    b.finalNorm = gpt ? 2 * d : d;
    b.head = p.head;
    b.rowParallelBiasesPerLayer = gpt ? 2 * d : 0;
    return b;
}

std::uint64_t ParameterBreakdown::layer(const ModelConfig& m, std::uint64_t index) const
{
    const bool moe = m.moe.experts > 0 && m.isMoeLayer(index);
    return attentionPerLayer + normsPerLayer + (moe ? m.moe.experts * mlpPerLayer + routerPerMoeLayer : mlpPerLayer);
}

double parameterCountAsDouble(const ModelConfig& model) { return params<double>(model).total(); }

std::vector<Error> validate(const BatchShape& batch, const ModelConfig& model)
{
    std::vector<Error> errors;
    auto fail = [&](const char* path, std::string message) {
        Location where;
        where.jsonPath = path;
        errors.push_back(makeError(std::move(message), std::move(where)));
    };
    auto range = [&](const char* path, std::uint64_t v, std::uint64_t lo, std::uint64_t hi) {
        if (v < lo || v > hi) {
            fail(path, "must be between " + I(lo) + " and " + I(hi) + ", got " + I(v));
            return false;
        }
        return true;
    };
    bool ok = range("batch.sequence_length", batch.sequenceLength, 1, 16'777'216);
    if (ok && model.family == Family::Gpt2 && batch.sequenceLength > model.maxPositions) {
        fail("batch.sequence_length", "must be at most model.max_positions (" + I(model.maxPositions)
                                          + "): a GPT-2 model learns one position vector per position, got "
                                          + I(batch.sequenceLength));
        ok = false;
    }
    ok = range("batch.micro_batch", batch.microBatch, 1, 16'777'216) && ok;
    ok = range("batch.global_batch_tokens", batch.globalBatchTokens, 1, 1ULL << 50) && ok;
    if (!ok)
        return errors;
    // Byte counts of the batch: the scores [B,a,T,T] of one layer, the logits, all activations.
    const double B = static_cast<double>(batch.microBatch), T = static_cast<double>(batch.sequenceLength);
    const double scores = B * static_cast<double>(model.heads) * T * T * 4;
    const Activations x = activations(model, batch);
    if (!(scores < kMaxBytes && x.total < kMaxBytes && x.perLayer * static_cast<double>(model.layers) < kMaxBytes))
        fail("batch", "batch is too large for this model: activation byte counts overflow 64 bits (activations ≈ "
                          + N(x.total, 0) + " B ≥ 2^63 B)");
    return errors;
}

namespace {

using S = std::vector<std::string>;

// The symbols deriveModel's formulas use: the shape and batch as numbers and as text.
struct ModelSymbols {
    bool gpt = true, moe = false;
    double L = 0, d = 0, a = 0, ff = 0, V = 0, T = 0, B = 0, G = 0, E = 0, k = 0, Lm = 0;
    double sw = 0, sa = 0, sg = 0, so = 0; // bytes per weight, activation, gradient, Adam moment
    std::string sL, sd, sdkv, sff, sV, sE, sLm, sLd, sB, sT, sa_;
};

ModelSymbols modelSymbols(const ModelConfig& m, const BatchShape& b)
{
    ModelSymbols y;
    y.gpt = m.family == Family::Gpt2;
    y.moe = m.moe.experts > 0 && m.moeLayers() > 0;
    y.L = static_cast<double>(m.layers);
    y.d = static_cast<double>(m.hiddenSize);
    y.a = static_cast<double>(m.heads);
    y.ff = static_cast<double>(m.ffnSize);
    y.V = static_cast<double>(m.paddedVocab());
    y.T = static_cast<double>(b.sequenceLength);
    y.B = static_cast<double>(b.microBatch);
    y.G = static_cast<double>(b.globalBatchTokens);
    y.E = static_cast<double>(m.moe.experts);
    y.k = static_cast<double>(m.moe.topK);
    y.Lm = static_cast<double>(m.moeLayers());
    y.sw = bytesPerElement(m.weights);
    y.sa = bytesPerElement(m.activations);
    y.sg = bytesPerElement(m.gradients);
    y.so = bytesPerElement(m.optimizerState);
    y.sL = I(m.layers);
    y.sd = I(m.hiddenSize);
    y.sdkv = I(m.kvDim());
    y.sff = I(m.ffnSize);
    y.sV = I(m.paddedVocab());
    y.sE = I(m.moe.experts);
    y.sLm = I(m.moeLayers());
    y.sLd = I(m.layers - m.moeLayers());
    y.sB = N(y.B);
    y.sT = N(y.T);
    y.sa_ = N(y.sa);
    return y;
}

// Inputs of this stage: the model's shape, the batch, the precisions.
void addModelInputs(FigureSet& f, const ModelConfig& m, const ModelSymbols& y, const FigureSet& inputs)
{
    const bool gpt = y.gpt, moe = y.moe;
    const double L = y.L, d = y.d, a = y.a, ff = y.ff, V = y.V, T = y.T, B = y.B, G = y.G, E = y.E, k = y.k, Lm = y.Lm, sw = y.sw, sa = y.sa, sg = y.sg, so = y.so;
    f.add({"model.layers", "Layers L", L, "", "input: L = " + I(m.layers) + " Transformer blocks", {}});
    f.add({"model.hidden_size", "Hidden size d", d, "", "input: d = " + I(m.hiddenSize), {}});
    f.add({"model.heads", "Attention heads a", a, "", "input: a = " + I(m.heads), {}});
    f.add({"model.kv_heads", "Key/value heads n_kv", static_cast<double>(m.kvHeads), "",
           m.kvHeads == m.heads ? "input: n_kv = a = " + I(m.kvHeads) + " (multi-head attention)"
                                : "input: n_kv = " + I(m.kvHeads) + " (grouped-query attention: "
                                      + I(m.kvHeads == 0 ? 0 : m.heads / m.kvHeads) + " query heads share each key/value head)",
           {}});
    f.add({"model.ffn_size", "MLP size d_ff", ff, "",
           "input: d_ff = " + I(m.ffnSize) + (m.ffnSize == 4 * m.hiddenSize ? " (4·d)" : ""), {}});
    if (const Figure* tok = inputs.find("tokenizer.vocab_size");
        tok && tok->value == static_cast<double>(m.vocabSize)) {
        f.add({"model.vocab_size", "Vocabulary size V", static_cast<double>(m.vocabSize), "tokens",
               "V = the tokenizer's vocabulary = " + I(m.vocabSize), {"tokenizer.vocab_size"}});
    } else {
        f.add({"model.vocab_size", "Vocabulary size V", static_cast<double>(m.vocabSize), "tokens",
               "input: V = " + I(m.vocabSize)
                   + (tok ? " (set on the model; the tokenizer has " + N(tok->value) + ")" : std::string()),
               {}});
    }
    f.add({"model.vocab_padded", "Vocabulary rows V_p (padded)", V, "tokens",
           m.vocabPadMultiple == 0
               ? "no padding: V_p = V = " + I(m.vocabSize)
               : "V_p = ⌈V / " + I(m.vocabPadMultiple) + "⌉·" + I(m.vocabPadMultiple) + " = ⌈" + I(m.vocabSize) + " / "
                     + I(m.vocabPadMultiple) + "⌉·" + I(m.vocabPadMultiple) + " = " + I(m.paddedVocab())
                     + " (padded rows for GPU-friendly shapes)",
           {"model.vocab_size"}});
    if (gpt)
        f.add({"model.max_positions", "Learned positions T_max", static_cast<double>(m.maxPositions), "tokens",
               "input: T_max = " + I(m.maxPositions) + " rows of the position table", {}});
    f.add({"model.head_dim", "Head size d/a", static_cast<double>(m.headDim()), "",
           "d / a = " + I(m.hiddenSize) + " / " + I(m.heads) + " = " + I(m.headDim()), {"model.hidden_size", "model.heads"}});
    f.add({"model.kv_dim", "Key/value width d_kv", static_cast<double>(m.kvDim()), "",
           "d_kv = n_kv·d/a = " + I(m.kvHeads) + "·" + I(m.headDim()) + " = " + I(m.kvDim()),
           {"model.kv_heads", "model.head_dim"}});
    f.add({"model.moe.experts", "Experts E", E, "",
           m.moe.experts == 0 ? "input: E = 0 (a dense model)" : "input: E = " + I(m.moe.experts) + " experts per MoE layer", {}});
    f.add({"model.moe.layers", "MoE layers L_moe", Lm, "",
           m.moe.experts == 0 ? "dense model: L_moe = 0"
                              : "L_moe = ⌊L / interval⌋ = ⌊" + I(m.layers) + " / " + I(m.moe.layerInterval)
                                    + "⌋ = " + I(m.moeLayers())
                                    + (m.moe.layerInterval == 1 ? " (every layer)"
                                                                : " (every " + I(m.moe.layerInterval) + "-th layer)"),
           {"model.layers", "model.moe.experts"}});
    if (moe) {
        f.add({"model.moe.top_k", "Experts per token k", k, "", "input: each token is routed to k = " + I(m.moe.topK) + " experts", {}});
        f.add({"model.moe.capacity_factor", "Capacity factor CF", m.moe.capacityFactor, "",
               "input: CF = " + N(m.moe.capacityFactor), {}});
    }
    f.add({"model.bytes.weights", "Bytes per weight s_w", sw, "B", "input: weights in " + precisionText(m.weights), {}});
    f.add({"model.bytes.activations", "Bytes per activation s_act", sa, "B",
           "input: activations in " + precisionText(m.activations), {}});
    f.add({"model.bytes.gradients", "Bytes per gradient s_g", sg, "B", "input: gradients in " + precisionText(m.gradients), {}});
    f.add({"model.bytes.optimizer_state", "Bytes per Adam moment s_opt", so, "B",
           "input: Adam m and v in " + precisionText(m.optimizerState), {}});
    auto batchInput = [&](const char* id, const char* label, double value, const char* unit, const char* symbol,
                          const char* stage1) {
        if (const Figure* s1 = inputs.find(stage1); s1 && s1->value == value)
            f.add({id, label, value, unit, std::string(symbol) + " = the dataset's " + symbol + " = " + N(value), {stage1}});
        else
            f.add({id, label, value, unit, "input: " + std::string(symbol) + " = " + N(value), {}});
    };
    batchInput("batch.T", "Sequence length T", T, "tokens", "T", "dataset.T");
    batchInput("batch.B", "Micro-batch B", B, "sequences", "B", "dataset.B");
    batchInput("batch.G", "Global batch G", G, "tokens", "G", "dataset.G");

}

// The parameter counts the later figures use: by component, P and those active per token.
struct ParamCounts {
    Params<std::uint64_t> pc;
    std::uint64_t P = 0;
    double Pa = 0;
};

// Parameters by component (docs/model.md §2), P with its closed form, and those active per token.
ParamCounts addParameterFigures(FigureSet& f, const ModelConfig& m, const ModelSymbols& y)
{
    const bool gpt = y.gpt, moe = y.moe;
    const std::string &sL = y.sL, &sd = y.sd, &sdkv = y.sdkv, &sff = y.sff, &sV = y.sV, &sE = y.sE, &sLm = y.sLm, &sLd = y.sLd;
    const Params<std::uint64_t> pc = params<std::uint64_t>(m);
    f.add({"model.params.embedding", "Parameters: token embedding", static_cast<double>(pc.embedding), "params",
           "V_p·d = " + sV + "·" + sd + " = " + I(pc.embedding), {"model.vocab_padded", "model.hidden_size"}});
    if (gpt)
        f.add({"model.params.positions", "Parameters: position embedding", static_cast<double>(pc.positions), "params",
               "T_max·d = " + I(m.maxPositions) + "·" + sd + " = " + I(pc.positions), {"model.max_positions", "model.hidden_size"}});
    else
        f.add({"model.params.positions", "Parameters: position embedding", 0, "params",
               "RoPE rotates q and k: no learned positions, 0", {}});
    if (gpt && m.kvDim() == m.hiddenSize)
        f.add({"model.params.attention", "Parameters: attention", static_cast<double>(pc.attention), "params",
               "L·(4·d² + 4·d) (W_qkv, b_qkv, W_o, b_o) = " + sL + "·(4·" + sd + "² + 4·" + sd + ") = " + I(pc.attention),
               {"model.layers", "model.hidden_size"}});
    else if (gpt)
        f.add({"model.params.attention", "Parameters: attention", static_cast<double>(pc.attention), "params",
               "L·(d·(d + 2·d_kv) + d + 2·d_kv + d² + d) = " + sL + "·(" + sd + "·(" + sd + " + 2·" + sdkv + ") + " + sd
                   + " + 2·" + sdkv + " + " + sd + "² + " + sd + ") = " + I(pc.attention),
               {"model.layers", "model.hidden_size", "model.kv_dim"}});
    else
        f.add({"model.params.attention", "Parameters: attention", static_cast<double>(pc.attention), "params",
               "L·(2·d² + 2·d·d_kv) (W_q, W_o; W_k, W_v) = " + sL + "·(2·" + sd + "² + 2·" + sd + "·" + sdkv
                   + ") = " + I(pc.attention),
               {"model.layers", "model.hidden_size", "model.kv_dim"}});
    const std::string mlpSym = gpt ? "(2·d·d_ff + d_ff + d)" : "3·d·d_ff";
    const std::string mlpNum = gpt ? "(2·" + sd + "·" + sff + " + " + sff + " + " + sd + ")" : "3·" + sd + "·" + sff;
    const std::string mlpWhat = gpt ? " (W_fc, b_fc, W_proj, b_proj)" : " (W_gate, W_up, W_down)";
    f.add({"model.params.mlp", "Parameters: MLP", static_cast<double>(pc.mlp), "params",
           (moe ? "(L − L_moe)·" + mlpSym + mlpWhat + " = " + sLd + "·" + mlpNum
                : "L·" + mlpSym + mlpWhat + " = " + sL + "·" + mlpNum)
               + " = " + I(pc.mlp),
           moe ? S{"model.layers", "model.moe.layers", "model.hidden_size", "model.ffn_size"}
               : S{"model.layers", "model.hidden_size", "model.ffn_size"}});
    f.add({"model.params.experts", "Parameters: experts", static_cast<double>(pc.experts), "params",
           moe ? "L_moe·E·" + mlpSym + " = " + sLm + "·" + sE + "·" + mlpNum + " = " + I(pc.experts)
               : "dense model (E = 0): no experts, 0",
           moe ? S{"model.moe.layers", "model.moe.experts", "model.hidden_size", "model.ffn_size"} : S{"model.moe.experts"}});
    f.add({"model.params.router", "Parameters: routers", static_cast<double>(pc.router), "params",
           moe ? "L_moe·d·E = " + sLm + "·" + sd + "·" + sE + " = " + I(pc.router) : "dense model (E = 0): no router, 0",
           moe ? S{"model.moe.layers", "model.hidden_size", "model.moe.experts"} : S{"model.moe.experts"}});
    f.add({"model.params.norms", "Parameters: norms", static_cast<double>(pc.norms), "params",
           gpt ? "LayerNorm γ and β, two per block and a final one: L·4·d + 2·d = " + sL + "·4·" + sd + " + 2·" + sd + " = "
                     + I(pc.norms)
               : "RMSNorm γ, two per block and a final one: L·2·d + d = " + sL + "·2·" + sd + " + " + sd + " = " + I(pc.norms),
           {"model.layers", "model.hidden_size"}});
    f.add({"model.params.head", "Parameters: output head", static_cast<double>(pc.head), "params",
           m.tiedEmbeddings ? "tied: the head reuses the token embedding table, 0"
                            : "untied: V_p·d = " + sV + "·" + sd + " = " + I(pc.head),
           {"model.vocab_padded", "model.hidden_size"}});

    const std::uint64_t P = pc.total();
    std::string pFormula = "P = embedding + positions + attention + MLP + experts + routers + norms + head = "
                           + I(pc.embedding) + " + " + I(pc.positions) + " + " + I(pc.attention) + " + " + I(pc.mlp)
                           + " + " + I(pc.experts) + " + " + I(pc.router) + " + " + I(pc.norms) + " + " + I(pc.head)
                           + " = " + I(P);
    if (gpt && !moe && m.ffnSize == 4 * m.hiddenSize && m.kvHeads == m.heads) {
        pFormula += "; GPT-2 closed form: P = 12·L·d² + 13·L·d + (V+T)·d + 2·d" + std::string(m.tiedEmbeddings ? "" : " + V·d")
                    + " = 12·" + sL + "·" + sd + "² + 13·" + sL + "·" + sd + " + (" + sV + "+" + I(m.maxPositions) + ")·"
                    + sd + " + 2·" + sd + (m.tiedEmbeddings ? "" : " + " + sV + "·" + sd) + " = " + I(P);
    } else if (!gpt && (!moe || m.moe.layerInterval == 1)) {
        const std::string tiedSym = m.tiedEmbeddings ? "V·d + d" : "2·V·d + d";
        const std::string tiedNum = (m.tiedEmbeddings ? "" : "2·") + sV + "·" + sd + " + " + sd;
        if (moe)
            pFormula += "; Llama/Mixtral closed form: P = L·(2·d² + 2·d·d_kv + E·3·d·d_ff + d·E + 2·d) + " + tiedSym
                        + " = " + sL + "·(2·" + sd + "² + 2·" + sd + "·" + sdkv + " + " + sE + "·3·" + sd + "·" + sff
                        + " + " + sd + "·" + sE + " + 2·" + sd + ") + " + tiedNum + " = " + I(P);
        else
            pFormula += "; Llama closed form: P = L·(2·d² + 2·d·d_kv + 3·d·d_ff + 2·d) + " + tiedSym + " = " + sL
                        + "·(2·" + sd + "² + 2·" + sd + "·" + sdkv + " + 3·" + sd + "·" + sff + " + 2·" + sd + ") + "
                        + tiedNum + " = " + I(P);
    }
    f.add({"model.parameters", "Parameters P", static_cast<double>(P), "params", pFormula,
           {"model.params.embedding", "model.params.positions", "model.params.attention", "model.params.mlp",
            "model.params.experts", "model.params.router", "model.params.norms", "model.params.head"}});
    // Each token runs k of the E experts of a MoE layer: the others add parameters but no FLOPs.
    const std::uint64_t idle = moe ? m.moeLayers() * (m.moe.experts - m.moe.topK) * pc.mlpPerLayer : 0;
    const double Pa = static_cast<double>(P - idle);
    f.add({"model.active_parameters", "Parameters active per token", Pa, "params",
           moe ? "P − L_moe·(E − k)·" + mlpSym + " = " + I(P) + " − " + sLm + "·(" + sE + " − " + I(m.moe.topK) + ")·"
                     + I(pc.mlpPerLayer) + " = " + I(P - idle) + " (each token uses k of the E experts)"
               : "dense model: every parameter is used by every token, P = " + I(P),
           moe ? S{"model.parameters", "model.moe.layers", "model.moe.experts", "model.moe.top_k", "model.hidden_size",
                   "model.ffn_size"}
               : S{"model.parameters"}});

    return {pc, P, Pa};
}

// Tensor sizes of one micro-batch (the paper's §5.2 boundary activation is B·T·d·s).
void addTensorFigures(FigureSet& f, const ModelConfig& m, const ModelSymbols& y)
{
    const double d = y.d, a = y.a, ff = y.ff, V = y.V, T = y.T, B = y.B, sa = y.sa;
    const std::string &sd = y.sd, &sdkv = y.sdkv, &sff = y.sff, &sV = y.sV, &sB = y.sB, &sT = y.sT, &sa_ = y.sa_;
    f.add({"tensor.ids_bytes", "Token ids [B,T] (int64)", B * T * 8, "B",
           "B·T·8 = " + sB + "·" + sT + "·8 = " + Bytes(B * T * 8) + " (int64 ids, as PyTorch's embedding takes them)",
           {"batch.B", "batch.T"}});
    f.add({"tensor.hidden_bytes", "Hidden state [B,T,d]", B * T * d * sa, "B",
           "B·T·d·s_act = " + sB + "·" + sT + "·" + sd + "·" + sa_ + " = " + Bytes(B * T * d * sa)
               + " (the activation between two blocks: the paper's pipeline boundary, §5.2)",
           {"batch.B", "batch.T", "model.hidden_size", "model.bytes.activations"}});
    f.add({"tensor.kv_bytes", "Keys (or values) [B,T,d_kv]", B * T * static_cast<double>(m.kvDim()) * sa, "B",
           "B·T·d_kv·s_act = " + sB + "·" + sT + "·" + sdkv + "·" + sa_ + " = "
               + Bytes(B * T * static_cast<double>(m.kvDim()) * sa),
           {"batch.B", "batch.T", "model.kv_dim", "model.bytes.activations"}});
    f.add({"tensor.scores_bytes", "Attention scores [B,a,T,T]", B * a * T * T * sa, "B",
           "B·a·T²·s_act = " + sB + "·" + I(m.heads) + "·" + sT + "²·" + sa_ + " = " + Bytes(B * a * T * T * sa)
               + " per layer (not materialized by fused attention kernels)",
           {"batch.B", "model.heads", "batch.T", "model.bytes.activations"}});
    f.add({"tensor.mlp_bytes", "MLP hidden [B,T,d_ff]", B * T * ff * sa, "B",
           "B·T·d_ff·s_act = " + sB + "·" + sT + "·" + sff + "·" + sa_ + " = " + Bytes(B * T * ff * sa),
           {"batch.B", "batch.T", "model.ffn_size", "model.bytes.activations"}});
    f.add({"tensor.logits_bytes", "Logits [B,T,V_p]", B * T * V * sa, "B",
           "B·T·V_p·s_act = " + sB + "·" + sT + "·" + sV + "·" + sa_ + " = " + Bytes(B * T * V * sa),
           {"batch.B", "batch.T", "model.vocab_padded", "model.bytes.activations"}});

}

// Memory of one GPU holding the whole model (later stages divide it by the parallel layout); returns
// whether it fits.
bool addMemoryFigures(FigureSet& f, const ModelConfig& m, const BatchShape& b, const GpuSpec& gpu, const ModelSymbols& y,
                      std::uint64_t P)
{
    const bool gpt = y.gpt;
    const double sw = y.sw, sg = y.sg, so = y.so;
    const std::string &sL = y.sL, &sd = y.sd, &sV = y.sV, &sB = y.sB, &sT = y.sT, &sa_ = y.sa_;
    const double sP = static_cast<double>(P);
    const std::string sPs = I(P);
    const double wBytes = sP * sw, gBytes = sP * sg;
    const double master = m.weights == Precision::Fp32 ? 0.0 : 4.0;
    const double oBytes = sP * (2 * so + master);
    f.add({"memory.weights_bytes", "Memory: weights", wBytes, "B", "P·s_w = " + sPs + "·" + N(sw) + " = " + Bytes(wBytes),
           {"model.parameters", "model.bytes.weights"}});
    f.add({"memory.gradients_bytes", "Memory: gradients", gBytes, "B",
           "P·s_g = " + sPs + "·" + N(sg) + " = " + Bytes(gBytes), {"model.parameters", "model.bytes.gradients"}});
    f.add({"memory.optimizer_bytes", "Memory: optimizer state", oBytes, "B",
           master > 0 ? "Adam m and v plus an fp32 master copy of the weights: P·(2·s_opt + 4) = " + sPs + "·(2·" + N(so)
                            + " + 4) = " + Bytes(oBytes) + " (mixed precision; ZeRO arXiv 1910.02054 §3.1)"
                      : "Adam m and v (fp32 weights are their own master copy): P·2·s_opt = " + sPs + "·2·" + N(so) + " = "
                            + Bytes(oBytes),
           {"model.parameters", "model.bytes.optimizer_state", "model.bytes.weights"}});
    const double states = wBytes + gBytes + oBytes;
    f.add({"memory.model_states_bytes", "Memory: weights, gradients and optimizer", states, "B",
           "weights + gradients + optimizer = " + Bytes(wBytes) + " + " + Bytes(gBytes) + " + " + Bytes(oBytes) + " = "
               + Bytes(states) + " = " + N(states / sP) + "·P (16·P for bf16 mixed-precision Adam, ZeRO §3.1)",
           {"memory.weights_bytes", "memory.gradients_bytes", "memory.optimizer_bytes"}});

    const Activations x = activations(m, b);
    const std::string scale = "(s_act/2)·";
    const std::string scaleNum = "(" + sa_ + "/2)·";
    const std::string blockNote = gpt ? "" : " (constants of a GPT block with a 4d MLP: an estimate for this block)";
    std::string layerFormula;
    switch (m.recompute) {
    case Recompute::None:
        layerFormula = scale + "T·B·d·(34 + 5·a·T/d) = " + scaleNum + sT + "·" + sB + "·" + sd + "·(34 + 5·" + I(m.heads)
                       + "·" + sT + "/" + sd + ") = " + Bytes(x.perLayer)
                       + " (Korthikanti et al. 2022 Table 2, no recomputation, constants for 16-bit activations)";
        break;
    case Recompute::Selective:
        layerFormula = scale + "34·T·B·d = " + scaleNum + "34·" + sT + "·" + sB + "·" + sd + " = " + Bytes(x.perLayer)
                       + " (Korthikanti et al. 2022 Table 2, selective recomputation of attention)";
        break;
    case Recompute::Full:
        layerFormula = scale + "2·T·B·d = " + scaleNum + "2·" + sT + "·" + sB + "·" + sd + " = " + Bytes(x.perLayer)
                       + " (Korthikanti et al. 2022 Table 2, full recomputation: only the layer input is kept)";
        break;
    }
    f.add({"memory.activations.layer_bytes", "Activations kept per layer", x.perLayer, "B", layerFormula + blockNote,
           {"batch.T", "batch.B", "model.hidden_size", "model.heads", "model.bytes.activations"}});
    f.add({"memory.activations.embedding_bytes", "Activations kept: embedding", x.embedding, "B",
           gpt ? "embedding dropout mask, 1 B per element: B·T·d = " + sB + "·" + sT + "·" + sd + " = " + Bytes(x.embedding)
                     + " (Korthikanti et al. 2022 §4.3)"
               : "no dropout after the embedding: 0",
           gpt ? S{"batch.B", "batch.T", "model.hidden_size"} : S{}});
    f.add({"memory.activations.output_bytes", "Activations kept: final norm, head and loss", x.output, "B",
           "final norm and head inputs " + scale + "4·B·T·d + fp32 logits for the cross-entropy 4·B·T·V_p = " + scaleNum
               + "4·" + sB + "·" + sT + "·" + sd + " + 4·" + sB + "·" + sT + "·" + sV + " = " + Bytes(x.output)
               + " (Korthikanti et al. 2022 §4.3)",
           {"batch.B", "batch.T", "model.hidden_size", "model.vocab_padded", "model.bytes.activations"}});
    f.add({"memory.activations_bytes", "Memory: activations", x.total, "B",
           "L·per layer + embedding + output = " + sL + "·" + Bytes(x.perLayer) + " + " + Bytes(x.embedding) + " + "
               + Bytes(x.output) + " = " + Bytes(x.total) + " (one micro-batch in flight)",
           {"model.layers", "memory.activations.layer_bytes", "memory.activations.embedding_bytes",
            "memory.activations.output_bytes"}});
    const double total = states + x.total;
    f.add({"memory.total_bytes", "Memory per GPU", total, "B",
           "weights + gradients + optimizer + activations = " + Bytes(wBytes) + " + " + Bytes(gBytes) + " + "
               + Bytes(oBytes) + " + " + Bytes(x.total) + " = " + Bytes(total)
               + " (one GPU holds the whole model; framework workspace and fragmentation not counted)",
           {"memory.model_states_bytes", "memory.activations_bytes"}});
    f.add({"memory.gpu_capacity_bytes", "GPU memory", gpu.memoryBytes, "B",
           (gpu.name.empty() ? gpu.id : gpu.name) + ": " + Bytes(gpu.memoryBytes) + " (" + N(gpu.memoryBytes / 1073741824.0)
               + " GiB, datasheet)",
           {}});
    const bool fits = total <= gpu.memoryBytes;
    f.add({"memory.headroom_bytes", "Memory left on the GPU", gpu.memoryBytes - total, "B",
           "capacity − total = " + Bytes(gpu.memoryBytes) + " − " + Bytes(total) + " = " + Bytes(gpu.memoryBytes - total)
               + (fits ? "" : " (negative: it does not fit)"),
           {"memory.gpu_capacity_bytes", "memory.total_bytes"}});
    f.add({"memory.fits", "Fits in one GPU's memory", fits ? 1.0 : 0.0, "",
           "total ≤ capacity: " + Bytes(total) + (fits ? " ≤ " : " > ") + Bytes(gpu.memoryBytes) + " → "
               + (fits ? "fits (1)" : "does not fit (0)"),
           {"memory.total_bytes", "memory.gpu_capacity_bytes"}});

    return fits;
}

// FLOPs per token, micro-batch and step (≈ 6·P per token, 2 forward + 4 backward, plus attention
// 12·B·T²·d per layer per micro-batch; recomputation adds forward work: docs/model.md; arXiv 2104.04473
// §5.1), Megatron's closed forms as a cross-check, and the step time at the GPU's peak.
void addComputeFigures(FigureSet& f, const ModelConfig& m, const GpuSpec& gpu, const ModelSymbols& y,
                       const ParamCounts& counts)
{
    const Params<std::uint64_t>& pc = counts.pc;
    const double Pa = counts.Pa;
    const bool gpt = y.gpt, moe = y.moe;
    const double L = y.L, d = y.d, V = y.V, T = y.T, B = y.B, G = y.G;
    const std::string &sL = y.sL, &sd = y.sd, &sV = y.sV, &sB = y.sB, &sT = y.sT;
    const double tokensMb = B * T;
    f.add({"compute.tokens_per_microbatch", "Tokens per micro-batch", tokensMb, "tokens",
           "B·T = " + sB + "·" + sT + " = " + N(tokensMb), {"batch.B", "batch.T"}});
    f.add({"compute.tokens_per_step", "Tokens per optimizer step", G, "tokens",
           "G = " + N(G) + " tokens per optimizer step", {"batch.G"}});
    f.add({"compute.microbatches_per_step", "Micro-batches per step (one GPU)", G / tokensMb, "",
           "G / (B·T) = " + N(G) + " / " + N(tokensMb) + " = " + N(G / tokensMb)
               + " (gradient accumulation on a single GPU)",
           {"batch.G", "compute.tokens_per_microbatch"}});
    const bool fullRe = m.recompute == Recompute::Full;
    const double cA = m.recompute == Recompute::None ? 12 : 16;
    // Full recomputation re-runs each block's forward (2·P_blocks per token); the embedding and the
    // head are not checkpointed (Korthikanti et al. 2022 §5; Megatron's 96·… form counts the same).
    const std::uint64_t blockNorms = gpt ? 4 * m.layers * m.hiddenSize : 2 * m.layers * m.hiddenSize;
    const std::uint64_t activeExperts = moe ? m.moeLayers() * m.moe.topK * pc.mlpPerLayer : 0;
    const std::uint64_t Pb = pc.attention + pc.mlp + activeExperts + pc.router + blockNorms;
    const double denseTok = 6 * Pa + (fullRe ? 2 * static_cast<double>(Pb) : 0.0);
    f.add({"compute.flops.params_per_token", "FLOPs per token: parameters", denseTok, "FLOP",
           (fullRe ? "6·P_active + 2·P_blocks (2 forward + 4 backward per parameter, + 2 for the blocks' recomputed "
                     "forward; P_blocks = attention + MLP + active experts + routers + block norms = "
                         + I(Pb) + ") = 6·" + N(Pa) + " + 2·" + I(Pb)
                   : "6·P_active (2 forward + 4 backward per parameter) = 6·" + N(Pa))
               + " = " + N(denseTok) + (moe ? " (MoE: only the k routed experts count)" : ""),
           fullRe ? S{"model.active_parameters", "model.params.attention", "model.params.mlp", "model.params.experts",
                      "model.params.router", "model.params.norms"}
                  : S{"model.active_parameters"}});
    const double attnMb = cA * B * T * T * d * L;
    f.add({"compute.flops.attention_per_microbatch", "FLOPs per micro-batch: attention scores", attnMb, "FLOP",
           N(cA) + "·B·T²·d·L = " + N(cA) + "·" + sB + "·" + sT + "²·" + sd + "·" + sL + " = " + N(attnMb)
               + (m.recompute == Recompute::None ? " (QKᵀ and scores·V: 4·B·T²·d forward per layer, ×3 with backward)"
                                                 : " (QKᵀ and scores·V: 4·B·T²·d forward per layer, ×3 with backward, +1 recomputed)"),
           {"batch.B", "batch.T", "model.hidden_size", "model.layers"}});
    const double mbFlops = denseTok * tokensMb + attnMb;
    f.add({"compute.flops_per_microbatch", "FLOPs per micro-batch", mbFlops, "FLOP",
           "B·T·(parameters per token) + attention = " + N(tokensMb) + "·" + N(denseTok) + " + " + N(attnMb) + " = "
               + N(mbFlops) + " (forward and backward)",
           {"compute.tokens_per_microbatch", "compute.flops.params_per_token", "compute.flops.attention_per_microbatch"}});
    const double perToken = mbFlops / tokensMb;
    f.add({"compute.flops_per_token", "FLOPs per token", perToken, "FLOP",
           "FLOPs per micro-batch / (B·T) = " + N(mbFlops) + " / " + N(tokensMb) + " = " + N(perToken),
           {"compute.flops_per_microbatch", "compute.tokens_per_microbatch"}});
    const double stepFlops = perToken * G;
    f.add({"compute.flops_per_step", "FLOPs per optimizer step (executed, with recomputation)", stepFlops, "FLOP",
           "FLOPs per token·G = " + N(perToken) + "·" + N(G) + " = " + N(stepFlops)
               + (m.recompute == Recompute::None ? std::string(" (no recomputation: the model FLOPs)")
                                                 : std::string(" (the recomputed forward included: HFU's numerator)")),
           {"compute.flops_per_token", "compute.tokens_per_step"}});
    // The model's FLOPs, MFU's numerator (PaLM, Chowdhery et al. 2022, App. B: "the observed throughput
    // ... relative to the theoretical maximum ... excluding rematerialization"): 6·P_active per token and
    // the attention scores, 12·T·d·L per token, whatever is recomputed.
    const double modelTok = 6 * Pa + 12 * T * d * L;
    f.add({"compute.model_flops_per_token", "Model FLOPs per token (no recomputation)", modelTok, "FLOP",
           "6·P_active + 12·T·d·L = 6·" + N(Pa) + " + 12·" + sT + "·" + sd + "·" + sL + " = " + N(modelTok)
               + " (forward and backward, nothing recomputed)",
           {"model.active_parameters", "batch.T", "model.hidden_size", "model.layers"}});
    f.add({"compute.model_flops_per_step", "Model FLOPs per optimizer step (no recomputation)", modelTok * G, "FLOP",
           "model FLOPs per token·G = " + N(modelTok) + "·" + N(G) + " = " + N(modelTok * G)
               + " (MFU's numerator; recomputation is not the model's work)",
           {"compute.model_flops_per_token", "compute.tokens_per_step"}});

    // Megatron-LM's closed forms (arXiv 2104.04473 §5.1, dense GPT block), per micro-batch.
    const double base = B * T * L * d * d;
    const double f72 = 1 + T / (6 * d) + V / (12 * L * d);
    const double f96 = 1 + T / (6 * d) + V / (16 * L * d);
    const std::string denseNote = moe || !gpt ? " (a dense GPT-block formula: a cross-check only for this model)" : "";
    f.add({"compute.flops_crosscheck_72", "FLOPs per micro-batch, Megatron form (no recomputation)", 72 * base * f72, "FLOP",
           "72·B·T·L·d²·(1 + T/(6·d) + V_p/(12·L·d)) = 72·" + sB + "·" + sT + "·" + sL + "·" + sd + "²·(1 + " + sT + "/"
               + N(6 * d) + " + " + sV + "/" + N(12 * L * d) + ") = 72·" + N(base) + "·" + N(f72, 4) + " = "
               + N(72 * base * f72) + " (arXiv 2104.04473 §5.1 without the recomputed forward)" + denseNote,
           {"batch.B", "batch.T", "model.layers", "model.hidden_size", "model.vocab_padded"}});
    f.add({"compute.flops_crosscheck_96", "FLOPs per micro-batch, Megatron form (full recomputation)", 96 * base * f96, "FLOP",
           "96·B·T·L·d²·(1 + T/(6·d) + V_p/(16·L·d)) = 96·" + sB + "·" + sT + "·" + sL + "·" + sd + "²·(1 + " + sT + "/"
               + N(6 * d) + " + " + sV + "/" + N(16 * L * d) + ") = 96·" + N(base) + "·" + N(f96, 4) + " = "
               + N(96 * base * f96) + " (arXiv 2104.04473 §5.1, with full recomputation)" + denseNote,
           {"batch.B", "batch.T", "model.layers", "model.hidden_size", "model.vocab_padded"}});
    const double check = fullRe ? 96 * base * f96 : 72 * base * f72;
    f.add({"compute.flops_crosscheck_ratio", "FLOPs: ours / Megatron form", mbFlops / check, "",
           std::string("FLOPs per micro-batch / ") + (fullRe ? "96" : "72") + "·… form = " + N(mbFlops) + " / " + N(check)
               + " = " + N(mbFlops / check, 4)
               + " (6·P also counts biases, norms and position rows; the 72·… form counts only the matrix products)",
           {"compute.flops_per_microbatch", fullRe ? "compute.flops_crosscheck_96" : "compute.flops_crosscheck_72"}});

    const Precision mathPrecision = gemmPrecision(m);
    const double peak = gemmPeak(gpu, m);
    f.add({"compute.gpu_peak_flops", "GPU peak FLOP/s (GEMM precision)", peak, "FLOP/s",
           gemmPeakText(gpu, m) + " (datasheet; the GEMMs run at the activations' precision)"
               + (peak > 0 ? "" : " — none at this precision"),
           {"model.bytes.activations"}});
    f.add({"compute.step_time_at_peak", "Step time at 100% of peak", peak > 0 ? stepFlops / peak : 0, "s",
           peak > 0 ? "FLOPs per step / peak = " + N(stepFlops) + " / " + N(peak) + " = " + formatSeconds(stepFlops / peak)
                          + " (a lower bound: no GPU reaches its peak)"
                    : "undefined: the GPU has no " + std::string(toString(mathPrecision)) + " peak (0)",
           {"compute.flops_per_step", "compute.gpu_peak_flops"}});

}

} // namespace

// Stage 2's figures: the inputs, the parameters, the tensor sizes, the memory of one GPU, the FLOPs,
// and the tensor inventory.
ModelDerivation deriveModel(const ModelConfig& m, const BatchShape& b, const GpuSpec& gpu, const FigureSet& inputs)
{
    ModelDerivation out;
    FigureSet& f = out.figures;
    const ModelSymbols y = modelSymbols(m, b);
    addModelInputs(f, m, y, inputs);
    const ParamCounts counts = addParameterFigures(f, m, y);
    out.parameters = static_cast<double>(counts.P);
    addTensorFigures(f, m, y);
    out.fitsInMemory = addMemoryFigures(f, m, b, gpu, y, counts.P);
    addComputeFigures(f, m, gpu, y, counts);
    buildInventory(m, b, out.tensors);
    f.add({"tensor.count", "Tensors in the inventory", static_cast<double>(out.tensors.size()), "",
           "forward tensors of L = " + y.sL + " blocks, weights, gradients and optimizer states: "
               + I(out.tensors.size()),
           {"model.layers"}});
    return out;
}

} // namespace tw::model
