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

std::vector<GpuSpec> buildCatalog()
{
    std::vector<GpuSpec> c;
    // NVIDIA V100 SXM2 32 GB datasheet: 15.7 TFLOP/s fp32, 125 TFLOP/s tensor (fp16).
    // Volta has no bf16 and no fp8: those peaks are 0 (a bf16 model cannot run at tensor speed).
    c.push_back({"v100-32gb", "NVIDIA V100 SXM2 32 GB", 32 * kGiB, 15.7 * kTera, 0, 125 * kTera, 0});
    // NVIDIA A100 datasheet (SXM): 19.5 TFLOP/s fp32, 312 TFLOP/s bf16/fp16 dense (624 sparse); no fp8.
    c.push_back({"a100-40gb", "NVIDIA A100 SXM 40 GB", 40 * kGiB, 19.5 * kTera, 312 * kTera, 312 * kTera, 0});
    c.push_back({"a100-80gb", "NVIDIA A100 SXM 80 GB", 80 * kGiB, 19.5 * kTera, 312 * kTera, 312 * kTera, 0});
    // NVIDIA H100 datasheet, SXM5 80 GB: 67 TFLOP/s fp32; bf16/fp16 1,979 and fp8 3,958 with
    // sparsity → 989.5 and 1,979 dense.
    c.push_back({"h100-sxm", "NVIDIA H100 SXM 80 GB", 80 * kGiB, 67 * kTera, 989.5 * kTera, 989.5 * kTera,
                 1979 * kTera});
    // NVIDIA H100 datasheet, PCIe 80 GB: 51 TFLOP/s fp32; bf16/fp16 1,513 and fp8 3,026 with
    // sparsity → 756.5 and 1,513 dense.
    c.push_back({"h100-pcie", "NVIDIA H100 PCIe 80 GB", 80 * kGiB, 51 * kTera, 756.5 * kTera, 756.5 * kTera,
                 1513 * kTera});
    // NVIDIA H200 datasheet (SXM): 141 GB HBM3e; compute as H100 SXM: 67 fp32, 989.5 bf16/fp16 and
    // 1,979 fp8 dense (1,979 / 3,958 with sparsity).
    c.push_back({"h200", "NVIDIA H200 SXM 141 GB", 141 * kGiB, 67 * kTera, 989.5 * kTera, 989.5 * kTera,
                 1979 * kTera});
    // AMD Instinct MI300X datasheet: 192 GB HBM3; 81.7 TFLOP/s fp32 vector (163.4 matrix);
    // 1,307.4 TFLOP/s bf16/fp16 and 2,614.9 fp8 dense (twice that with sparsity).
    c.push_back({"mi300x", "AMD Instinct MI300X 192 GB", 192 * kGiB, 81.7 * kTera, 1307.4 * kTera, 1307.4 * kTera,
                 2614.9 * kTera});
    // NVIDIA L40S datasheet: 48 GB GDDR6; 91.6 TFLOP/s fp32; bf16/fp16 362.05 dense (733 sparse);
    // fp8 733 dense (1,466 sparse).
    c.push_back({"l40s", "NVIDIA L40S 48 GB", 48 * kGiB, 91.6 * kTera, 362.05 * kTera, 362.05 * kTera,
                 733 * kTera});
    // NVIDIA Ada whitepaper (appendix), GeForce RTX 4090 24 GB: 82.6 TFLOP/s fp32; tensor rates
    // with fp32 accumulate (as training uses): bf16/fp16 165.2, fp8 330.3 dense (GeForce halves
    // the fp32-accumulate rate; fp16 accumulate gives 330.3 / 660.6).
    c.push_back({"rtx4090", "NVIDIA GeForce RTX 4090 24 GB", 24 * kGiB, 82.6 * kTera, 165.2 * kTera, 165.2 * kTera,
                 330.3 * kTera});
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
    return errors;
}

} // namespace tw::model
