#include "gpucatalog.h"

#include "base/units.h"

#include <cmath>

// Peak FLOP/s are the vendors' dense figures: where a datasheet prints "with sparsity" (2:4
// structured), the dense figure is half of it. fp32 is the plain (non-tensor, non-TF32) rate.
// Memory: vendors' "GB" for HBM/GDDR capacity is binary (an A100 80GB shows 81,920 MiB in
// nvidia-smi), so capacities are n · 2^30 B.

namespace tw::model {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kTera = 1e12;

// Kernel-model constants of one GPU generation (docs/compute.md, "Constants per generation").
struct Generation {
    double gemmFraction, memoryFraction, gemmMemoryFraction, flashForward, flashBackward;
};
// Ampere (A100): two constants calibrated on Korthikanti et al. 2022 Table 4 (22B layer, t = 8, A100 SXM,
// Megatron 2022; its times include the layer's TP communication, the backward's input-gradient
// AllReduces overlapped with the weight-gradient GEMMs, §6.2), the others measured:
//  - framework streaming kernels 0.65: selective recomputation re-runs exactly the attention core
//    (QKᵀ, scale-mask-softmax, dropout, scores·V: all memory-bound at T = 2,048), and Table 4's backward
//    grows by 1.3 ms with it (11.9 → 13.2 ms; 11.8 → 13.1 with SP). Its two batched GEMMs stream 0.587 GB
//    at the GEMM rate below (0.37 ms), so softmax and dropout's 1.208 GB take the 0.91 ms left: 0.65 of
//    2.039 TB/s. Megatron's own kernels of 2022 (fused softmax, dropout, apex LayerNorm, multi-tensor
//    Adam); torch.compile'd kernels of today reach 0.77 (LLMCompass GeLU/LayerNorm, below).
//  - GEMM ceiling 0.73: with the streaming rate fixed, the value that minimizes the largest error over
//    Table 4's ten forward and backward times (all within 3.3 %; docs/compute.md). A 2022 software
//    stack's GEMM rate: below today's best shapes, the "maximum achievable matmul FLOPS" search's 0.869 on
//    A100 SXM (271.2 of 312 TFLOP/s, torch 2.6) and 0.811 on A100 PCIe (252.9) (stas00/ml-engineering @
//    744d01e1, compute/accelerator/README.md), and LLMCompass's 8192×2048×2048 (0.78).
//  - GEMM operand streaming 0.77 (a thin GEMM's memory bound): torch.compile'd GeLU on 2^29 fp16
//    elements, 390.3 Gelem/s · 4 B = 1.56 TB/s, and LayerNorm 32768×4096, 385.9 Gelem/s · 4 B = 1.54 TB/s,
//    of 2.039 TB/s (PrincetonUniversity/LLMCompass @ 2e015fd2, ae/figure5/g and ae/figure5/ef
//    real_hardware CSVs); LLMCompass's 64 × 12,288 × 12,288 GEMM (memory-bound) lands within 10 % of it.
//  - flash attention 0.497 forward and backward: FlashAttention-2 fwd+bwd, causal, head dim 128, T = 2048,
//    155 of 312 TFLOP/s (Dao-AILab/flash-attention @ 4f285b35, assets/flash2_a100_fwd_bwd_benchmark.png;
//    arXiv 2307.08691 Fig. 4).
constexpr Generation kAmpere{0.73, 0.65, 0.77, 0.497, 0.497};
// Hopper (H100, H200), measured (no per-layer Megatron times on H100 in our sources to calibrate on):
//  - GEMM ceiling 0.803: the same search on H100 SXM, 794.5 of 989 TFLOP/s (ml-engineering, as above);
//    XLA's H100 table (openxla/xla matmul_perf_table_gen) tops out at 0.82 for > 128 GFLOP.
//  - streaming 0.77, for the framework's kernels and a GEMM's operands alike: the middle of the H100
//    measurements, 0.56 (torch.compile softmax) to 0.90 (hand-written CuTe kernels: Dao-AILab/quack @
//    ca5369be, media/2025-07-10-membound-sol.md), and today's A100 value.
//  - flash attention: FlashAttention-3 forward, causal, head dim 128, T = 2048: 521 of 989 TFLOP/s = 0.527;
//    backward (head dim 64, T = 2048): 422 of 989 = 0.427 (arXiv 2407.08608 Figs. 5 and 6).
constexpr Generation kHopper{0.803, 0.77, 0.77, 0.527, 0.427};

// Sets the kernel-model fields of one catalog entry.
GpuSpec withKernels(GpuSpec g, double memoryBandwidth, std::uint64_t sms, double l2Bytes, double l2Bandwidth,
                    const Generation& gen)
{
    g.memoryBandwidth = memoryBandwidth;
    g.smCount = sms;
    g.l2Bytes = l2Bytes;
    g.l2Bandwidth = l2Bandwidth;
    g.gemmFraction = gen.gemmFraction;
    g.memoryFraction = gen.memoryFraction;
    g.gemmMemoryFraction = gen.gemmMemoryFraction;
    g.flashForwardFraction = gen.flashForward;
    g.flashBackwardFraction = gen.flashBackward;
    return g;
}

std::vector<GpuSpec> buildCatalog()
{
    constexpr double kMB = 1e6, kTBs = 1e12;
    std::vector<GpuSpec> c;
    // NVIDIA V100 SXM2 32 GB datasheet: 15.7 TFLOP/s fp32, 125 TFLOP/s tensor (fp16).
    // Volta has no bf16 and no fp8: those peaks are 0 (a bf16 model cannot run at tensor speed).
    // Kernels: 900 GB/s HBM2, 80 SMs, 6 MB L2 (V100 datasheet, Volta whitepaper); L2 2048 B/clk
    // (A100 whitepaper's comparison) at 1.53 GHz = 3.1 TB/s. No flash attention (pre-Ampere):
    // Ampere's constants are assumed for the rest.
    c.push_back(withKernels({"v100-32gb", "NVIDIA V100 SXM2 32 GB", 32 * kGiB, 15.7 * kTera, 0, 125 * kTera, 0},
                            0.9 * kTBs, 80, 6 * kMB, 3.1 * kTBs, kAmpere));
    // NVIDIA A100 datasheet (SXM): 19.5 TFLOP/s fp32, 312 TFLOP/s bf16/fp16 dense (624 sparse); no fp8.
    // HBM2 1.555 TB/s (40 GB), HBM2e 2.039 TB/s (80 GB); 108 SMs, 40 MB L2; L2 5120 B/clk at 1.41 GHz
    // = 7.2 TB/s (NVIDIA A100 Tensor Core GPU Architecture whitepaper, "L2 cache").
    c.push_back(withKernels({"a100-40gb", "NVIDIA A100 SXM 40 GB", 40 * kGiB, 19.5 * kTera, 312 * kTera, 312 * kTera, 0},
                            1.555 * kTBs, 108, 40 * kMB, 7.2 * kTBs, kAmpere));
    c.push_back(withKernels({"a100-80gb", "NVIDIA A100 SXM 80 GB", 80 * kGiB, 19.5 * kTera, 312 * kTera, 312 * kTera, 0},
                            2.039 * kTBs, 108, 40 * kMB, 7.2 * kTBs, kAmpere));
    // NVIDIA H100 datasheet, SXM5 80 GB: 67 TFLOP/s fp32; bf16/fp16 1,979 and fp8 3,958 with
    // sparsity → 989.5 and 1,979 dense. HBM3 3.35 TB/s, 132 SMs, 50 MiB L2 at 12 TB/s
    // (arXiv 2407.08608, Table 1).
    c.push_back(withKernels({"h100-sxm", "NVIDIA H100 SXM 80 GB", 80 * kGiB, 67 * kTera, 989.5 * kTera, 989.5 * kTera,
                             1979 * kTera},
                            3.35 * kTBs, 132, 50 * kMB, 12 * kTBs, kHopper));
    // NVIDIA H100 datasheet, PCIe 80 GB: 51 TFLOP/s fp32; bf16/fp16 1,513 and fp8 3,026 with
    // sparsity → 756.5 and 1,513 dense. HBM2e 2.0 TB/s, 114 SMs, 50 MB L2; L2 bandwidth scaled from
    // the SXM5's 12 TB/s by the SM count (114/132).
    c.push_back(withKernels({"h100-pcie", "NVIDIA H100 PCIe 80 GB", 80 * kGiB, 51 * kTera, 756.5 * kTera, 756.5 * kTera,
                             1513 * kTera},
                            2.0 * kTBs, 114, 50 * kMB, 10.4 * kTBs, kHopper));
    // NVIDIA H200 datasheet (SXM): 141 GB HBM3e at 4.8 TB/s; compute as H100 SXM: 67 fp32, 989.5 bf16/fp16 and
    // 1,979 fp8 dense (1,979 / 3,958 with sparsity); 132 SMs, 50 MB L2 as H100 SXM.
    c.push_back(withKernels({"h200", "NVIDIA H200 SXM 141 GB", 141 * kGiB, 67 * kTera, 989.5 * kTera, 989.5 * kTera,
                             1979 * kTera},
                            4.8 * kTBs, 132, 50 * kMB, 12 * kTBs, kHopper));
    // AMD Instinct MI300X datasheet: 192 GB HBM3; 81.7 TFLOP/s fp32 vector (163.4 matrix);
    // 1,307.4 TFLOP/s bf16/fp16 and 2,614.9 fp8 dense (twice that with sparsity). 5.3 TB/s, 304 CUs,
    // 4 MB L2 per XCD × 8 = 32 MB, L2 128 B/clk/CU at 2.1 GHz = 81.7 TB/s (AMD CDNA 3 whitepaper).
    // No public kernel sweep in our data: Hopper's fractions are assumed (docs/compute.md).
    c.push_back(withKernels({"mi300x", "AMD Instinct MI300X 192 GB", 192 * kGiB, 81.7 * kTera, 1307.4 * kTera,
                             1307.4 * kTera, 2614.9 * kTera},
                            5.3 * kTBs, 304, 32 * kMB, 81.7 * kTBs, kHopper));
    // NVIDIA L40S datasheet: 48 GB GDDR6 at 864 GB/s; 91.6 TFLOP/s fp32; bf16/fp16 362.05 dense (733 sparse);
    // fp8 733 dense (1,466 sparse). 142 SMs, 96 MB L2 (Ada whitepaper); L2 bandwidth assumed 64 B/clk/SM
    // at 2.52 GHz = 22.9 TB/s. Ada kernels: Ampere's fractions are assumed.
    c.push_back(withKernels({"l40s", "NVIDIA L40S 48 GB", 48 * kGiB, 91.6 * kTera, 362.05 * kTera, 362.05 * kTera,
                             733 * kTera},
                            0.864 * kTBs, 142, 96 * kMB, 22.9 * kTBs, kAmpere));
    // NVIDIA Ada whitepaper (appendix), GeForce RTX 4090 24 GB: 82.6 TFLOP/s fp32; tensor rates
    // with fp32 accumulate (as training uses): bf16/fp16 165.2, fp8 330.3 dense (GeForce halves
    // the fp32-accumulate rate; fp16 accumulate gives 330.3 / 660.6). GDDR6X 1,008 GB/s, 128 SMs,
    // 72 MB L2; L2 as L40S, 64 B/clk/SM at 2.52 GHz = 20.6 TB/s.
    c.push_back(withKernels({"rtx4090", "NVIDIA GeForce RTX 4090 24 GB", 24 * kGiB, 82.6 * kTera, 165.2 * kTera,
                             165.2 * kTera, 330.3 * kTera},
                            1.008 * kTBs, 128, 72 * kMB, 20.6 * kTBs, kAmpere));
    return c;
}

Error fieldError(const std::string& path, std::string message)
{
    Location where;
    where.jsonPath = path;
    return makeError(std::move(message), std::move(where));
}

} // namespace

double GpuSpec::peak(Precision p) const
{
    switch (p) {
    case Precision::Fp32: return peakFp32;
    case Precision::Bf16: return peakBf16;
    case Precision::Fp16: return peakFp16;
    case Precision::Fp8: return peakFp8;
    }
    return 0;
}

const std::vector<GpuSpec>& gpuCatalog()
{
    static const std::vector<GpuSpec> catalog = buildCatalog();
    return catalog;
}

std::optional<GpuSpec> findGpu(std::string_view id)
{
    for (const GpuSpec& g : gpuCatalog())
        if (g.id == id)
            return g;
    return std::nullopt;
}

std::vector<Error> validate(const GpuSpec& gpu, const std::string& path)
{
    std::vector<Error> errors;
    // 1 PB of memory and 1 EFLOP/s per device are far beyond any accelerator: beyond them a typo.
    auto check = [&](const char* field, double v, bool required, double max) {
        const std::string where = path.empty() ? std::string(field) : path + "." + field;
        if (!std::isfinite(v) || v < 0 || (required && v == 0) || v > max)
            errors.push_back(fieldError(where, std::string(required ? "must be positive" : "must be 0 or positive")
                                                   + " and at most " + formatCount(max, 0) + ", got "
                                                   + formatCount(v, 2)));
    };
    check("memory_bytes", gpu.memoryBytes, true, 1e15);
    check("peak_fp32", gpu.peakFp32, false, 1e18);
    check("peak_bf16", gpu.peakBf16, true, 1e18);
    check("peak_fp16", gpu.peakFp16, false, 1e18);
    check("peak_fp8", gpu.peakFp8, false, 1e18);
    check("memory_bandwidth", gpu.memoryBandwidth, true, 1e15);
    check("l2_bytes", gpu.l2Bytes, false, 1e12);
    check("l2_bandwidth", gpu.l2Bandwidth, true, 1e16);
    check("sm_count", static_cast<double>(gpu.smCount), true, 1e6);
    check("kernel_seconds", gpu.kernelSeconds, false, 1);
    auto fraction = [&](const char* field, double v) {
        const std::string where = path.empty() ? std::string(field) : path + "." + field;
        if (!(v > 0 && v <= 1))
            errors.push_back(fieldError(where, "must be in (0, 1] (achieved / peak), got " + formatCount(v, 3)));
    };
    fraction("gemm_fraction", gpu.gemmFraction);
    fraction("memory_fraction", gpu.memoryFraction);
    fraction("gemm_memory_fraction", gpu.gemmMemoryFraction);
    fraction("flash_forward_fraction", gpu.flashForwardFraction);
    fraction("flash_backward_fraction", gpu.flashBackwardFraction);
    return errors;
}

} // namespace tw::model
