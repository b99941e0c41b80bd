#pragma once
// Stage 4 beside the wire (issue #10): what Open MPI 4.1's coll/tuned algorithm k sends, built from this
// program's step generators plus the documented places where Open MPI differs from the textbook schedule,
// and the comparison of those predictions with a measured dataset (data/measurements/*.json, written by
// tools/measure/tokenwire-measure). Bytes are payload: what the ranks hand to TCP, Σ over ranks, one call.

#include "base/error.h"
#include "collective/schedule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::collective::openmpi {

// One Open MPI case: the collective, coll/tuned's algorithm id (`ompi_info --param coll tuned --level 9`,
// e.g. allreduce 4 = ring), N ranks and tokenwire's M (schedule.h: the AllReduce buffer, AllGather's
// output, ReduceScatter's input, each rank's All-to-All send buffer, the Broadcast/Reduce root buffer).
// Root 0 for the rooted operations, as the measuring program uses.
struct Case {
    Op op = Op::AllReduce;
    int algorithmId = 4;
    std::uint64_t ranks = 2;
    double bytes = 0;
    bool operator==(const Case&) const = default;
};

struct Prediction {
    bool modelled = false;        // false: an explained exclusion (`how` says why)
    std::string algorithmName;    // Open MPI's name, "ring"; empty for an unknown id
    ScheduleSpec spec;            // the tokenwire schedule the prediction starts from
    double payloadBytes = 0;      // Σ over ranks of bytes sent in one call
    double maxRankSentBytes = 0;  // the most one rank sends
    std::string how;              // one sentence: the mapping and any difference from tokenwire's schedule
};

// Open MPI 4.1's name of coll/tuned algorithm `id` for `op` ("ring"), nullopt for an id it does not have.
[[nodiscard]] std::optional<std::string_view> algorithmName(Op op, int id);

// What Open MPI's algorithm sends for one case (count() over the mapped schedule plus documented extras).
[[nodiscard]] Prediction predict(const Case& c);

// One row of a measured dataset, the fields the comparison needs.
struct MeasuredRow {
    std::string library;          // "openmpi"
    Case measuredCase;
    std::string algorithmName;    // as the dataset names it
    double payloadBytes = 0;      // measured TCP payload, Σ over ranks, one call
    double loBytes = 0, loPackets = 0;
    double retransmittedBytes = 0; // TCP payload sent again (on lo too, not in payloadBytes)
    double timeSeconds = 0;
};

// Every row of a dataset (schema tokenwire-measurements/1); an Error names the row and field that is wrong.
[[nodiscard]] Result<std::vector<MeasuredRow>> parseDataset(std::string_view json);

// Predictions within 2 % of the measured payload pass (issue #10's bar).
inline constexpr double kTolerance = 0.02;

struct Comparison {
    MeasuredRow row;
    Prediction prediction;
    double ratio = 0;             // measured / predicted (0 when nothing was predicted)
    double error = 0;             // ratio − 1
    bool excluded = false;        // not modelled: an explained exclusion
    bool pass = false;            // |error| ≤ kTolerance, or excluded
};
[[nodiscard]] std::vector<Comparison> compare(const std::vector<MeasuredRow>& rows);

// Bytes of headers per packet on loopback, measured: per row (lo bytes − TCP payload − retransmitted) / lo packets (every
// packet, pure ACKs included, carries IPv4 20 + TCP 20 + timestamps 12 = 52 B on `lo`, no Ethernet framing);
// the median over the rows with packets, robust to the rows other traffic on `lo` disturbed.
struct LoopbackHeader {
    double medianBytes = 0;
    std::size_t rows = 0;        // rows that had packets
    std::size_t exact = 0;       // rows within 0.5 B of the median
};
[[nodiscard]] LoopbackHeader loopbackHeader(const std::vector<MeasuredRow>& rows);

// The committed dataset data/measurements/openmpi-loopback.json, compiled into core.
[[nodiscard]] std::string_view embeddedDataset();

} // namespace tw::collective::openmpi
