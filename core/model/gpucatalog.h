#pragma once
// Accelerators a scenario can name: memory capacity and peak dense FLOP/s per precision.
// Sources: vendor datasheets (dense, without sparsity), cited per entry in gpucatalog.cpp.

#include "model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::model {

struct GpuSpec {
    std::string id;             // "a100-80gb"
    std::string name;           // "NVIDIA A100 SXM 80 GB"
    double memoryBytes = 0;     // B
    double peakFp32 = 0;        // FLOP/s (plain fp32, not TF32)
    double peakBf16 = 0;        // FLOP/s, dense tensor cores
    double peakFp16 = 0;        // FLOP/s
    double peakFp8 = 0;         // FLOP/s; 0 when the GPU has no fp8
    // Kernel model (model/kernels.h, docs/compute.md). Defaults: an A100-like GPU, so a custom GPU
    // without these keys gets sensible kernel times.
    double memoryBandwidth = 2.0e12;  // B/s, HBM / GDDR peak
    double l2Bytes = 40e6;            // B, last-level on-chip cache
    double l2Bandwidth = 7.2e12;      // B/s, L2 → SMs (bounds small GEMM tiles)
    std::uint64_t smCount = 108;      // SMs (CUs on AMD): one GEMM tile per SM per wave
    double gemmFraction = 0.79;       // best large GEMM / tensor-core peak (the size-independent ceiling)
    double memoryFraction = 0.77;     // the framework's streaming kernels (element-wise, norm, softmax, optimizer)
                                      // / memory bandwidth
    double gemmMemoryFraction = 0.77; // a GEMM's operand streaming (its memory bound) / memory bandwidth
    double flashForwardFraction = 0.5;  // flash attention forward / peak (causal, head dim 128, T = 2048)
    double flashBackwardFraction = 0.5; // flash attention backward / peak
    double kernelSeconds = 3.7e-6;    // fixed cost per kernel (launch, prologue, tail)
    bool operator==(const GpuSpec&) const = default;

    [[nodiscard]] double peak(Precision p) const;
};

// V100, A100 40/80 GB, H100 SXM/PCIe, H200, MI300X, L40S, RTX 4090.
[[nodiscard]] const std::vector<GpuSpec>& gpuCatalog();
[[nodiscard]] std::optional<GpuSpec> findGpu(std::string_view id);
// Problems with a user-defined entry (memory and the bf16 peak must be positive and finite; the
// kernel-model fields positive, fractions in (0, 1]).
[[nodiscard]] std::vector<Error> validate(const GpuSpec& gpu, const std::string& path);

} // namespace tw::model
