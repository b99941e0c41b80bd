#include "kernels.h"

#include "base/enumnames.h"
#include "base/units.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

// docs/compute.md derives every formula of this file; the constants per GPU are in gpucatalog.cpp.

namespace tw::model {

namespace {

std::string dims(double a, double b, double c)
{
    return formatCount(a, 0) + "×" + formatCount(b, 0) + "×" + formatCount(c, 0);
}

// Builds a kernel list pass by pass.
class ListBuilder {
public:
    ListBuilder(const GpuSpec& gpu, const ModelConfig& m)
        : g(gpu), prec(m.activations), s(bytesPerElement(m.activations)), recipe(m.fp8Recipe),
          linearPrec(m.fp8Recipe != Fp8Recipe::None ? Precision::Fp8 : m.activations)
    {
    }

    // `count` GEMMs of batch × (M, N, K); a linear layer's at the FP8 recipe's precision.
    Kernel gemm(std::string name, double batch, double M, double N, double K, double count = 1, bool linear = false) const
    {
        const GemmTime t = gemmTime(batch, M, N, K, linear ? linearPrec : prec, g);
        Kernel k;
        k.name = std::move(name);
        k.shape = batch > 1 ? formatCount(batch, 0) + "×[" + dims(M, N, K) + "]" : dims(M, N, K);
        if (count > 1)
            k.shape = formatCount(count, 0) + "× " + k.shape;
        k.kind = KernelClass::Gemm;
        k.count = count;
        k.flops = k.hardwareFlops = count * t.flops;
        k.bytes = count * t.bytes;
        k.seconds = count * t.seconds;
        k.computeBound = t.computeBound;
        return k;
    }
    // A streaming kernel moving `bytes` (reads + writes) over `elements` elements, in `count` launches.
    Kernel memory(std::string name, double elements, double bytes, double count = 1) const
    {
        Kernel k;
        k.name = std::move(name);
        k.shape = formatCount(elements, 0) + " elements";
        k.kind = KernelClass::MemoryBound;
        k.bytes = bytes;
        k.count = count;
        k.seconds = bytes / (g.memoryBandwidth * g.memoryFraction) + count * g.kernelSeconds;
        k.computeBound = false;
        return k;
    }

    const GpuSpec& g;
    Precision prec; // the activations': attention, memory-bound kernels, the head
    double s;
    Fp8Recipe recipe;
    Precision linearPrec; // the linear layers' GEMMs
};

// One forward kernel and how its backward runs.
enum class Backward { Gemm, Scaled, Flash, None };
struct Step {
    Kernel forward;
    std::array<double, 4> gemm{};  // batch, M, N, K for GEMMs
    Backward backward = Backward::Gemm;
    double backwardBytes = 0;      // memory-bound backward traffic
    bool weights = true;           // GEMM: B is a weight matrix
    bool attentionCore = false;    // recomputed by selective recomputation
    bool linear = false;           // a linear layer's GEMM (FP8 under a recipe)
};

// A linear layer Y[M×N] = X[M×K]·W[K×N] (`count` of them, each GPU's share). Under an FP8 recipe its
// GEMMs run in FP8, after Transformer Engine's casts: forward, X and W cast to FP8 row-wise and
// transposed (read s, write 1 + 1 bytes per element; current scaling first reads each once more for
// its amax); backward, ∂Y likewise. docs/compute.md, "FP8 recipes".
void linearSteps(std::vector<Step>& steps, const ListBuilder& lb, const std::string& name, double M, double N, double K,
                 double count = 1)
{
    if (lb.recipe != Fp8Recipe::None) {
        const double perElement = lb.s + 2 + (lb.recipe == Fp8Recipe::Current ? lb.s : 0);
        const double inputs = M * K + K * N;
        Kernel cast = lb.memory(name + " FP8 casts", count * inputs, count * perElement * inputs, 2 * count);
        steps.push_back({cast, {}, Backward::Scaled, count * perElement * M * N});
    }
    Step st{lb.gemm(name, 1, M, N, K, count, true), {1, M, N, K}};
    st.linear = true;
    steps.push_back(st);
}

double flashSeconds(double flops, double fraction, const GpuSpec& gpu, Precision p)
{
    // Causal masks skip half of the score tiles; the FlashAttention benchmarks report causal
    // throughput on the halved FLOPs (docs/compute.md, "Attention").
    return 0.5 * flops / (mathPeak(gpu, p) * fraction) + gpu.kernelSeconds;
}

KernelList expand(const std::vector<Step>& steps, const ListBuilder& lb, const ModelConfig& m, Recompute recompute)
{
    KernelList out;
    double weights = 0; // weight elements of the GEMMs on this GPU
    for (const Step& st : steps)
        out.kernels.push_back(st.forward);
    // Backward in reverse order: a GEMM C = A·B gives ∂A = ∂C·Bᵀ [M×K, reduction N] and
    // ∂B = Aᵀ·∂C [K×N, reduction M] (2× the forward FLOPs).
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
        const Step& st = *it;
        const Kernel& f = st.forward;
        switch (st.backward) {
        case Backward::None: break;
        case Backward::Gemm: {
            const auto [b, M, N, K] = st.gemm;
            Kernel da = lb.gemm(f.name + (st.weights ? " ∂input" : " ∂A"), b, M, K, N, f.count, st.linear);
            Kernel db = lb.gemm(f.name + (st.weights ? " ∂weight" : " ∂B"), b, K, N, M, f.count, st.linear);
            da.pass = db.pass = KernelPass::Backward;
            da.kind = db.kind = f.kind; // attention's batched GEMMs stay attention
            out.kernels.push_back(std::move(da));
            out.kernels.push_back(std::move(db));
            break;
        }
        case Backward::Scaled: {
            Kernel k = lb.memory(f.name + " backward", 0, st.backwardBytes, f.count);
            k.shape = f.shape;
            k.kind = f.kind;
            k.pass = KernelPass::Backward;
            out.kernels.push_back(std::move(k));
            break;
        }
        case Backward::Flash: {
            Kernel k = f;
            k.name = f.name + " backward";
            k.pass = KernelPass::Backward;
            k.flops = 2 * f.flops;
            k.hardwareFlops = 2.5 * f.hardwareFlops; // FlashAttention-2 §3.1.2: the backward recomputes S and P
            k.bytes = 2 * f.bytes;
            k.seconds = flashSeconds(2.5 * f.flops, lb.g.flashBackwardFraction, lb.g, lb.prec);
            out.kernels.push_back(std::move(k));
            break;
        }
        }
    }
    // The weight gradients are added to their accumulator (PyTorch's AccumulateGrad across micro-batches;
    // Megatron's fp32 main_grad): read the new gradient and the accumulator, write the accumulator.
    for (const Step& st : steps)
        if (st.backward == Backward::Gemm && st.weights)
            weights += st.forward.count * st.gemm[2] * st.gemm[3];
    if (weights > 0) {
        Kernel k = lb.memory("weight-gradient accumulation", weights,
                             weights * (lb.s + 2 * bytesPerElement(m.gradients)));
        k.pass = KernelPass::Backward;
        out.kernels.push_back(std::move(k));
    }
    // Recomputation (Korthikanti et al. 2022 §5): full re-runs the block's forward before its backward;
    // selective only attention's core (scores, softmax, dropout, scores·V — or the flash kernel).
    for (const Step& st : steps) {
        if (recompute == Recompute::Full || (recompute == Recompute::Selective && st.attentionCore)) {
            Kernel k = st.forward;
            k.pass = KernelPass::Recompute;
            out.kernels.push_back(std::move(k));
        }
    }
    return out;
}

// The MLP of a dense block, or one expert's (count = experts on this GPU, rows = its tokens).
void mlpSteps(std::vector<Step>& steps, const ModelConfig& m, const ListBuilder& lb, double rows, double t,
              double count, const std::string& prefix)
{
    const double d = static_cast<double>(m.hiddenSize), f = static_cast<double>(m.ffnSize) / t, s = lb.s;
    if (m.family == Family::Llama) {
        linearSteps(steps, lb, prefix + "gate + up projection", rows, 2 * f, d, count);
        // SwiGLU: read gate and up, write their product; backward reads gate, up and ∂out, writes ∂gate, ∂up.
        Kernel act = lb.memory(prefix + "SwiGLU", count * rows * f, count * 3 * rows * f * s, count);
        steps.push_back({act, {}, Backward::Scaled, count * 5 * rows * f * s});
    } else {
        linearSteps(steps, lb, prefix + "MLP up (h→4h)", rows, f, d, count);
        // Megatron's fused bias + GeLU: read and write the d_ff activations; backward reads input and ∂out.
        Kernel act = lb.memory(prefix + "bias + GeLU", count * rows * f, count * 2 * rows * f * s, count);
        steps.push_back({act, {}, Backward::Scaled, count * 3 * rows * f * s});
    }
    linearSteps(steps, lb, prefix + "MLP down", rows, d, f, count);
}

constexpr std::array kKernelClassNames{EnumName{KernelClass::Gemm, "gemm"},
                                      EnumName{KernelClass::Attention, "attention"},
                                      EnumName{KernelClass::MemoryBound, "memory"}};
constexpr std::array kKernelPassNames{EnumName{KernelPass::Forward, "forward"}, EnumName{KernelPass::Backward, "backward"},
                                      EnumName{KernelPass::Recompute, "recompute"}};

} // namespace

std::string_view toString(KernelClass k) { return nameOf(kKernelClassNames, k); }
std::string_view toString(KernelPass p) { return nameOf(kKernelPassNames, p); }

double mathPeak(const GpuSpec& gpu, Precision precision)
{
    const double p = gpu.peak(precision);
    if (p > 0)
        return p;
    return gpu.peakFp16 > 0 && precision != Precision::Fp32 ? gpu.peakFp16 : gpu.peakFp32;
}

std::string gemmPeakText(const GpuSpec& gpu, const ModelConfig& m)
{
    const Precision p = gemmPrecision(m);
    const double peak = gemmPeak(gpu, m);
    std::string text = (gpu.name.empty() ? gpu.id : gpu.name) + ", dense " + std::string(toString(p)) + " peak ";
    text += formatCount(peak / 1e12, 1) + " TFLOP/s";
    if (gpu.peak(p) <= 0 && peak > 0)
        text += std::string(" (no ") + std::string(toString(p)) + " tensor cores: its "
                + (gpu.peakFp16 > 0 && p != Precision::Fp32 ? "fp16" : "fp32") + " peak)";
    return text;
}

GemmTime gemmTime(double batch, double M, double N, double K, Precision precision, const GpuSpec& gpu)
{
    GemmTime r;
    const double s = bytesPerElement(precision);
    r.flops = 2 * batch * M * N * K;
    r.bytes = s * batch * (M * K + K * N + M * N);
    r.memorySeconds = r.bytes / (gpu.memoryBandwidth * gpu.gemmMemoryFraction);
    const double ceiling = mathPeak(gpu, precision) * gpu.gemmFraction;
    const double sms = static_cast<double>(std::max<std::uint64_t>(1, gpu.smCount));
    // cuBLAS thread-block tiles, most to least efficient (NVIDIA, "Matrix Multiplication Background",
    // §2.3). A tile of mt×nt streams (mt + nt)·s bytes from L2 per 2·mt·nt FLOPs of each k step, so
    // small tiles are bounded by the L2 bandwidth; every wave runs one tile per SM.
    static constexpr std::array<std::array<std::uint64_t, 2>, 6> kTiles{
        {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}}};
    r.computeSeconds = std::numeric_limits<double>::infinity();
    for (const auto& [mt, nt] : kTiles) {
        const double tm = static_cast<double>(mt), tn = static_cast<double>(nt);
        const double rate = std::min(ceiling, gpu.l2Bandwidth * 2 * tm * tn / ((tm + tn) * s));
        const double tiles = batch * std::ceil(M / tm) * std::ceil(N / tn);
        const double waves = std::ceil(tiles / sms);
        const double seconds = rate > 0 ? waves * sms * 2 * tm * tn * K / rate : 0;
        if (seconds < r.computeSeconds) {
            r.computeSeconds = seconds;
            r.tileM = mt;
            r.tileN = nt;
            r.tiles = tiles;
            r.waves = waves;
        }
    }
    r.computeBound = r.computeSeconds >= r.memorySeconds;
    r.seconds = std::max(r.computeSeconds, r.memorySeconds) + gpu.kernelSeconds;
    return r;
}

namespace {

// Σ field(k) over the kernels k that `keep` accepts.
template <class Keep, class Field>
double sumOf(const std::vector<Kernel>& kernels, Keep keep, Field field)
{
    double sum = 0;
    for (const Kernel& k : kernels)
        if (keep(k))
            sum += field(k);
    return sum;
}

} // namespace

double KernelList::seconds(KernelPass pass) const
{
    return sumOf(kernels, [pass](const Kernel& k) { return k.pass == pass; }, [](const Kernel& k) { return k.seconds; });
}

double KernelList::seconds(KernelClass kind, KernelPass pass) const
{
    return sumOf(kernels, [pass, kind](const Kernel& k) { return k.pass == pass && k.kind == kind; },
                 [](const Kernel& k) { return k.seconds; });
}

double KernelList::flops(KernelPass pass) const
{
    return sumOf(kernels, [pass](const Kernel& k) { return k.pass == pass; }, [](const Kernel& k) { return k.flops; });
}

double KernelList::hardwareFlops() const
{
    return sumOf(kernels, [](const Kernel&) { return true; }, [](const Kernel& k) { return k.hardwareFlops; });
}

KernelList layerKernels(const ModelConfig& m, const GpuSpec& gpu, const KernelSetup& setup, bool moeLayer)
{
    const ListBuilder lb(gpu, m);
    const double s = lb.s;
    const double B = static_cast<double>(setup.microBatch), T = static_cast<double>(setup.sequenceLength);
    const double t = static_cast<double>(std::max<std::uint64_t>(1, setup.tp));
    const double d = static_cast<double>(m.hiddenSize), hd = static_cast<double>(m.headDim());
    const double kv = static_cast<double>(m.kvDim());
    const double heads = static_cast<double>(m.heads) / t;
    const double rows = B * T;                                   // tokens of the micro-batch
    const double normRows = setup.sequenceParallel ? rows / t : rows; // SP: norms and dropouts on T/t
    const double E = normRows * d;
    const double scores = B * heads * T * T;
    const bool gpt = m.family == Family::Gpt2;
    const std::string norm = gpt ? "LayerNorm" : "RMSNorm";

    std::vector<Step> steps;
    // Norm: read x, write y (2Es); backward reads x and ∂y, writes ∂x (3Es).
    steps.push_back({lb.memory("input " + norm, E, 2 * E * s), {}, Backward::Scaled, 3 * E * s});
    linearSteps(steps, lb, "QKV projection", rows, (d + 2 * kv) / t, d);
    if (!gpt) {
        const double qk = rows * (d + kv) / t; // rotary embedding on Q and K: read and write
        steps.push_back({lb.memory("rotary embedding", qk, 2 * qk * s), {}, Backward::Scaled, 2 * qk * s});
    }
    if (setup.fusedAttention) {
        // Flash attention: QKᵀ and scores·V, 4·B·T²·hd per head (Megatron counts the full square).
        Kernel k;
        k.name = "flash attention";
        k.shape = formatCount(B * heads, 0) + " heads × " + formatCount(T, 0) + "² × " + formatCount(hd, 0);
        k.kind = KernelClass::Attention;
        k.flops = 4 * B * heads * T * T * hd;
        k.hardwareFlops = 0.5 * k.flops; // the causal mask skips half the score tiles
        k.bytes = rows * (2 * d + 2 * kv) / t * s; // read Q, K, V, write O
        k.seconds = flashSeconds(k.flops, gpu.flashForwardFraction, gpu, m.activations);
        k.computeBound = true;
        Step st{k, {}, Backward::Flash};
        st.attentionCore = true;
        steps.push_back(st);
    } else {
        // Unfused (Megatron 2021–22): QKᵀ batched over B·a/t heads, fused scale-mask-softmax, dropout,
        // scores·V (Korthikanti et al. 2022 §4.1 lists the same tensors).
        Step qk{lb.gemm("attention scores QKᵀ", B * heads, T, T, hd), {B * heads, T, T, hd}};
        qk.weights = false;
        qk.forward.kind = KernelClass::Attention;
        qk.attentionCore = true;
        steps.push_back(qk);
        Step sm{lb.memory("softmax (scale, mask)", scores, 2 * scores * s), {}, Backward::Scaled, 3 * scores * s};
        sm.forward.kind = KernelClass::Attention;
        sm.attentionCore = true;
        steps.push_back(sm);
        if (gpt) { // dropout on the probabilities: read, write and a 1-byte mask; backward reads ∂ and mask
            Step dr{lb.memory("attention dropout", scores, scores * (2 * s + 1)), {}, Backward::Scaled, scores * (2 * s + 1)};
            dr.forward.kind = KernelClass::Attention;
            dr.attentionCore = true;
            steps.push_back(dr);
        }
        Step av{lb.gemm("scores·V", B * heads, T, hd, T), {B * heads, T, hd, T}};
        av.weights = false;
        av.forward.kind = KernelClass::Attention;
        av.attentionCore = true;
        steps.push_back(av);
    }
    linearSteps(steps, lb, "attention output projection", rows, d, d / t);
    // Residual: read the branch and the residual, write the sum; GPT adds bias and dropout (1-byte mask).
    const std::string residual = gpt ? "bias + dropout + residual" : "residual add";
    const double resBytes = gpt ? E * (3 * s + 1) : 3 * E * s;
    steps.push_back({lb.memory(residual, E, resBytes), {}, Backward::Scaled, gpt ? E * (2 * s + 1) : 0});
    if (!gpt)
        steps.back().backward = Backward::None; // the gradient passes through a plain sum
    steps.push_back({lb.memory("post-attention " + norm, E, 2 * E * s), {}, Backward::Scaled, 3 * E * s});
    if (moeLayer && m.moe.experts > 0) {
        const double experts = static_cast<double>(m.moe.experts);
        const double ep = static_cast<double>(std::max<std::uint64_t>(1, setup.ep));
        steps.push_back({lb.gemm("router", 1, rows, experts, d), {1, rows, experts, d}});
        // Each of the E/ep local experts gets CF·k·rows·ep/E tokens (uniform routing, padded to capacity).
        const double perExpert =
            std::ceil(m.moe.capacityFactor * static_cast<double>(m.moe.topK) * rows * ep / experts);
        mlpSteps(steps, m, lb, perExpert, t, experts / ep, "expert ");
    } else {
        mlpSteps(steps, m, lb, rows, t, 1, "");
    }
    steps.push_back({lb.memory(residual, E, resBytes), {}, gpt ? Backward::Scaled : Backward::None,
                     gpt ? E * (2 * s + 1) : 0});
    return expand(steps, lb, m, m.recompute);
}

KernelList embeddingKernels(const ModelConfig& m, const GpuSpec& gpu, const KernelSetup& setup)
{
    const ListBuilder lb(gpu, m);
    const double rows = static_cast<double>(setup.microBatch * setup.sequenceLength);
    const double E = rows * static_cast<double>(m.hiddenSize);
    std::vector<Step> steps;
    // Gather one row per token (+ positions for GPT-2) and write [B,T,d]; backward scatter-adds ∂rows.
    const double reads = m.family == Family::Gpt2 ? 3 : 2;
    steps.push_back({lb.memory("embedding lookup", E, reads * E * lb.s), {}, Backward::Scaled, 3 * E * lb.s});
    return expand(steps, lb, m, Recompute::None);
}

KernelList headKernels(const ModelConfig& m, const GpuSpec& gpu, const KernelSetup& setup)
{
    const ListBuilder lb(gpu, m);
    const double s = lb.s;
    const double rows = static_cast<double>(setup.microBatch * setup.sequenceLength);
    const double t = static_cast<double>(std::max<std::uint64_t>(1, setup.tp));
    const double d = static_cast<double>(m.hiddenSize), v = static_cast<double>(m.paddedVocab()) / t;
    const double E = (setup.sequenceParallel ? rows / t : rows) * d;
    std::vector<Step> steps;
    steps.push_back({lb.memory(std::string("final ") + (m.family == Family::Gpt2 ? "LayerNorm" : "RMSNorm"), E, 2 * E * s),
                     {}, Backward::Scaled, 3 * E * s});
    steps.push_back({lb.gemm("output projection (logits)", 1, rows, v, d), {1, rows, v, d}});
    // Cross-entropy on the B·T·V_p/t logits, as Megatron-LM runs it (megatron/model/gpt_model.py casts the
    // logits with .float() unless --fp16-lm-cross-entropy; megatron/core/tensor_parallel/cross_entropy.py,
    // _VocabParallelCrossEntropy): forward = cast (read s, write 4), max (read 4), subtract (read 4,
    // write 4), exp (read 4, write 4), sum (read 4), divide into the saved softmax (read 4, write 4):
    // s + 36 bytes per logit; backward = multiply the softmax by ∂loss in place (read 4, write 4) and
    // the cast's backward (read 4, write s): 12 + s. docs/compute.md.
    const double logits = rows * v;
    steps.push_back({lb.memory("cross-entropy loss (fp32)", logits, logits * (s + 36)), {}, Backward::Scaled,
                     logits * (12 + s)});
    return expand(steps, lb, m, Recompute::None);
}

Kernel optimizerKernel(double parameters, const ModelConfig& m, const GpuSpec& gpu)
{
    Kernel k;
    k.name = "optimizer step (Adam)";
    k.shape = formatCount(parameters, 0) + " parameters";
    k.kind = KernelClass::MemoryBound;
    k.pass = KernelPass::Backward;
    const double sw = bytesPerElement(m.weights), sg = bytesPerElement(m.gradients);
    const double so = bytesPerElement(m.optimizerState), master = masterBytes(m);
    // Megatron-LM's optimizer step (megatron/optimizer/optimizer.py, FP16OptimizerWithFP16Params.step and
    // FP32Optimizer.step; Adam is apex's FusedAdam), bytes per parameter, each pass streaming HBM:
    //  - with a master copy (16-bit weights): copy the model gradients into fp32 main gradients (read s_g,
    //    write master), unscale them and check for inf/NaN (read and write master), the gradient norm for
    //    clipping (read master), Adam (read main weight, main gradient, m, v; write weight, m, v:
    //    3·master + 4·s_opt), copy the main weights to the model's (read master, write s_w):
    //    s_g + s_w + 8·master + 4·s_opt — 52 B for fp16 weights and fp32 states;
    //  - without (fp32 training): the gradient norm (read s_g), Adam (read w, g, m, v; write w, m, v):
    //    2·s_g + 2·s_w + 4·s_opt.
    const double perParameter = master > 0 ? sg + sw + 8 * master + 4 * so : 2 * sg + 2 * sw + 4 * so;
    k.count = master > 0 ? 5 : 2;
    k.bytes = parameters * perParameter;
    k.seconds = k.bytes / (gpu.memoryBandwidth * gpu.memoryFraction) + k.count * gpu.kernelSeconds;
    k.computeBound = false;
    return k;
}

} // namespace tw::model
