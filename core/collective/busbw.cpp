#include "busbw.h"

#include <cmath>

namespace tw::nccl {

double nccltestsBytes(collective::Op op, double bytes, int typeSize, int ranks)
{
    double count = std::floor(bytes / typeSize);
    if (op == collective::Op::AllGather || op == collective::Op::ReduceScatter || op == collective::Op::AllToAll)
        count = std::floor(count / ranks) * ranks;
    return count * typeSize;
}

Result<std::vector<Prediction>> sweep(const Tuning& tuning, const System& system, const Graphs& graphs, const Sweep& s)
{
    Request req;
    req.op = s.op;
    req.algorithm = s.algorithm;
    req.protocol = s.protocol;
    std::vector<Prediction> rows;
    for (double size = s.minBytes; size <= s.maxBytes; size *= s.factor) {
        req.bytes = nccltestsBytes(s.op, size, s.typeSize, system.ranks());
        auto p = predict(tuning, system, graphs, req);
        if (!p)
            return p.error();
        rows.push_back(p.value());
        if (size <= 0 || !(s.factor > 1))
            break;
    }
    return rows;
}

} // namespace tw::nccl
