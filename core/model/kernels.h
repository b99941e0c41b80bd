#pragma once
// Compute time from the kernels of a Transformer block (issue #19): every GEMM by its (M, N, K) on a
// shape-aware roofline (tensor-core peak derated by tile and wave quantization, the L2 bandwidth a
// tile needs and a per-generation ceiling, or the operands' bytes at the memory bandwidth), attention
// as flash attention (fused) or score GEMMs + softmax + dropout (unfused), element-wise and norm kernels
// by bytes moved ÷ achievable bandwidth, the head and the loss, the optimizer step. Per GPU after
// tensor / sequence / expert parallel splitting, forward, backward and recomputation.
// docs/compute.md explains each term and the constants; docs/model.md §2.4 the FLOPs.

#include "model/gpucatalog.h"
#include "model/model.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tw::model {

enum class KernelClass { Gemm, Attention, MemoryBound };
enum class KernelPass { Forward, Backward, Recompute };
[[nodiscard]] std::string_view toString(KernelClass k); // "gemm", "attention", "memory"
[[nodiscard]] std::string_view toString(KernelPass p);  // "forward", "backward", "recompute"

// One GEMM C[M,N] = A[M,K]·B[K,N] (batch independent ones) on one GPU.
struct GemmTime {
    double flops = 0;          // 2·batch·M·N·K
    double bytes = 0;          // s·batch·(M·K + K·N + M·N): each operand read or written once
    double computeSeconds = 0; // waves × one wave of tiles at the tile's rate
    double memorySeconds = 0;  // bytes / (bandwidth · gemmMemoryFraction)
    double seconds = 0;        // max(compute, memory) + the fixed kernel cost
    std::uint64_t tileM = 0, tileN = 0; // the tile that gives the shortest time
    double tiles = 0, waves = 0;        // batch·⌈M/tileM⌉·⌈N/tileN⌉; ⌈tiles / SMs⌉
    bool computeBound = true;
    bool operator==(const GemmTime&) const = default;
};
[[nodiscard]] GemmTime gemmTime(double batch, double M, double N, double K, Precision precision, const GpuSpec& gpu);

// The tensor-core peak the kernel model uses for a precision: the GPU's dense peak, or (a GPU without
// tensor cores for it, e.g. bf16 on V100) its fp16 peak, or fp32.
[[nodiscard]] double mathPeak(const GpuSpec& gpu, Precision precision);

// The precision of the model's GEMMs: FP8 under an FP8 recipe (its linear layers; attention and the head
// stay at the activations' precision), else the activations' (fp8 activations: every GEMM and attention
// in FP8). MFU and HFU are measured against its peak (docs/compute.md, "MFU and HFU", "FP8 recipes").
[[nodiscard]] inline Precision gemmPrecision(const ModelConfig& m)
{
    return m.fp8Recipe != Fp8Recipe::None ? Precision::Fp8 : m.activations;
}
// mathPeak at the GEMMs' precision: the denominator of MFU and HFU, per GPU.
[[nodiscard]] inline double gemmPeak(const GpuSpec& gpu, const ModelConfig& m) { return mathPeak(gpu, gemmPrecision(m)); }
// "H100 SXM, dense bf16 peak 989 TFLOP/s" (and the fallback, when the GPU has no peak at that precision).
[[nodiscard]] std::string gemmPeakText(const GpuSpec& gpu, const ModelConfig& m);

struct Kernel {
    std::string name;       // "QKV projection", "QKV projection ∂input"
    std::string shape;      // "8192×2304×6144", "32×[2048×2048×96]", "50,331,648 elements"
    KernelClass kind = KernelClass::Gemm;
    KernelPass pass = KernelPass::Forward;
    double count = 1;       // launches (MoE: one per local expert)
    double flops = 0;       // model FLOPs of all launches (flash backward: 2× forward, as Megatron counts)
    double hardwareFlops = 0; // FLOPs the GPU executes (flash: causal tiles only, half; backward 2.5× forward)
    double bytes = 0;       // memory traffic of all launches
    double seconds = 0;     // all launches
    bool computeBound = true;
    bool operator==(const Kernel&) const = default;
};

// How one GPU runs a block: the micro-batch, the parallel splits, the attention kernel.
struct KernelSetup {
    std::uint64_t microBatch = 1;     // B
    std::uint64_t sequenceLength = 1; // T
    std::uint64_t tp = 1;             // t: heads, QKV/MLP columns and rows split t ways
    bool sequenceParallel = false;    // norms, dropouts and residual adds on T/t rows
    std::uint64_t ep = 1;             // experts spread over ep GPUs (E/ep local)
    bool fusedAttention = true;       // flash attention; false = score GEMMs + softmax + dropout
    bool operator==(const KernelSetup&) const = default;
};

struct KernelList {
    std::vector<Kernel> kernels; // forward, then backward (reverse order), then recomputed forward kernels
    [[nodiscard]] double seconds(KernelPass pass) const;
    [[nodiscard]] double seconds(KernelClass kind, KernelPass pass) const;
    [[nodiscard]] double flops(KernelPass pass) const;
    [[nodiscard]] double hardwareFlops() const;  // every pass
    [[nodiscard]] double forwardSeconds() const { return seconds(KernelPass::Forward); }
    // Backward as the pipeline sees it: the backward kernels plus what recomputation re-runs before them.
    [[nodiscard]] double backwardSeconds() const
    {
        return seconds(KernelPass::Backward) + seconds(KernelPass::Recompute);
    }
};

// One Transformer block (dense or MoE) on one GPU, one micro-batch, with model.recompute applied.
[[nodiscard]] KernelList layerKernels(const ModelConfig& model, const GpuSpec& gpu, const KernelSetup& setup,
                                      bool moeLayer = false);
// The embedding lookup (first pipeline stage).
[[nodiscard]] KernelList embeddingKernels(const ModelConfig& model, const GpuSpec& gpu, const KernelSetup& setup);
// Final norm, output projection (logits B·T·V_p/t) and cross-entropy loss (last pipeline stage).
[[nodiscard]] KernelList headKernels(const ModelConfig& model, const GpuSpec& gpu, const KernelSetup& setup);
// The optimizer step of one GPU over the `parameters` whose optimizer state it holds, as Megatron-LM's
// optimizer runs it (docs/compute.md "The optimizer step").
[[nodiscard]] Kernel optimizerKernel(double parameters, const ModelConfig& precisions, const GpuSpec& gpu);

} // namespace tw::model
