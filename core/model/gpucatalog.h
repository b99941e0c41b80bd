#pragma once
// Accelerators a scenario can name: memory capacity and peak dense FLOP/s per precision.
// Sources: vendor datasheets (dense, without sparsity), cited per entry in gpucatalog.cpp.

#include "model.h"

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
    bool operator==(const GpuSpec&) const = default;

    [[nodiscard]] double peak(Precision p) const;
};

// V100, A100 40/80 GB, H100 SXM/PCIe, H200, MI300X, L40S, RTX 4090.
[[nodiscard]] const std::vector<GpuSpec>& gpuCatalog();
[[nodiscard]] std::optional<GpuSpec> findGpu(std::string_view id);
// Problems with a user-defined entry (memory and the bf16 peak must be positive and finite).
[[nodiscard]] std::vector<Error> validate(const GpuSpec& gpu, const std::string& path);

} // namespace tw::model
