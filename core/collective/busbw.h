#pragma once
// nccl-tests' sweep with NCCL's model (issue #17): one collective over a system, predicted at sizes
// min, min·factor, … ≤ max, each size rounded as nccl-tests rounds its element count
// (NVIDIA/nccl-tests src/common.cu). `tokenwire-cli busbw` prints it; stage 4's bus-bandwidth chart draws it.

#include "base/error.h"
#include "collective/nccl.h"
#include "collective/ncclgraph.h"

#include <optional>
#include <vector>

namespace tw::nccl {

// nccl-tests' buffer for a size: whole elements of `typeSize` bytes; AllGather, ReduceScatter and
// All-to-All split the buffer evenly over the ranks (count rounded down to a multiple of n).
[[nodiscard]] double nccltestsBytes(collective::Op op, double bytes, int typeSize, int ranks);

struct Sweep {
    collective::Op op = collective::Op::AllReduce;
    double minBytes = 8;
    double maxBytes = 8.0 * 1024 * 1024 * 1024; // 8 GiB, nccl-tests' -e 8G
    double factor = 2;
    int typeSize = 2;                            // bf16
    std::optional<Algorithm> algorithm;          // nullopt: auto
    std::optional<Protocol> protocol;            // nullopt: auto (the best protocol per size)
    bool operator==(const Sweep&) const = default;
};

// One prediction per size; the first refusal of predict (a pair NCCL lacks or has off here) as the error.
[[nodiscard]] Result<std::vector<Prediction>> sweep(const Tuning& tuning, const System& system, const Graphs& graphs,
                                                    const Sweep& request);

} // namespace tw::nccl
