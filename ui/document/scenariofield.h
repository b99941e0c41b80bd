#pragma once
// The scenario's editable fields as one table: each has a JSON path (to match core's error
// locations), an undo-command name ("Set hidden size") and a typed value read from and written to
// a Scenario. Commands, the form and the tests all go through this table.

#include "scenario/scenario.h"

#include <optional>

#include <QString>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tw::ui {

// The control a plan or fabric edit comes from, for the undo stack (EditPlanCommand): edits of one control
// within the merge window become one step (a spin box typed or dragged through); None never merges. The
// fields of the table below merge by their Field instead.
enum class EditMerge {
    None,
    Nodes,
    GpusPerNode,
    DpDegree, // the degrees in parallel::Strategy's order (Document::setDegree)
    PpDegree,
    TpDegree,
    EpDegree,
    LayerPartition,
    PipelineSchedule,
    LayerForwardTime,
    GpusPerPcieSwitch,
    Oversubscription,
    NicsPerLeaf,
    Spines,
    GpusPerPod,
    LeavesPerPod,
    SpinesPerPod,
    CoreSwitches,
    CoreOversubscription,
};

enum class Field {
    TextSample,
    Documents,
    TokenizerKind,
    TrainedVocab,
    Family,
    Layers,
    HiddenSize,
    Heads,
    KvHeads,
    FfnSize,
    VocabFromTokenizer,
    VocabSize,
    VocabPadMultiple,
    TiedEmbeddings,
    MaxPositions,
    MoeExperts,
    MoeTopK,
    MoeCapacityFactor,
    MoeLayerInterval,
    WeightsPrecision,
    ActivationsPrecision,
    GradientsPrecision,
    OptimizerPrecision,
    Recompute,
    Fp8Recipe,
    Gpu,
    CustomGpuName,       // the user-defined catalog entry (hardware.gpu == "custom"), in base units
    CustomGpuMemory,     // B
    CustomGpuPeakFp32,   // FLOP/s
    CustomGpuPeakBf16,
    CustomGpuPeakFp16,
    CustomGpuPeakFp8,
    Nodes,               // the cluster: edits go through Document::setCluster (the plan follows)
    GpusPerNode,
    SequenceLength,
    MicroBatch,
    GlobalBatchTokens,
    Sharding,            // stage 3's plan fields that change nothing else
    SequenceParallel,
    ShardGroupSize,
    ComputeEfficiency,
    AllReduceAlgorithm,  // stage 4: the algorithm each collective of the plan runs with (JSON names)
    ReduceScatterAlgorithm,
    AllGatherAlgorithm,
    AllToAllAlgorithm,
    BroadcastAlgorithm,
    LinkAlpha,           // s
    LinkBandwidth,       // B/s
    RunTokens,           // the whole run (stage 5's Run tab): edits keep every result current (Document::runChanged)
    RunPricePerGpuHour,
    RunPue,
    RunRestartSeconds,
    RunStorageGBpsPerGpu,
};

// Counts, fractions and base-unit quantities (B, FLOP/s), switches and names (enums travel as their
// JSON names: "llama", "bf16", "a100-80gb").
using FieldValue = std::variant<std::uint64_t, double, bool, std::string>;

[[nodiscard]] const std::vector<Field>& allFields();
[[nodiscard]] QString fieldJsonPath(Field field);   // "model.hidden_size"
[[nodiscard]] QString fieldCommandName(Field field); // "Set hidden size", "Choose GPU"
[[nodiscard]] QString fieldLabel(Field field);       // "Hidden size d"
[[nodiscard]] FieldValue fieldValue(const scenario::Scenario& scenario, Field field);
// Writes value into scenario; false (scenario untouched) when the value has the wrong type or
// names no known enum value.
bool setFieldValue(scenario::Scenario& scenario, Field field, const FieldValue& value);
[[nodiscard]] QString toDisplayString(const FieldValue& value);
// The field holding the scenario's algorithm for a collective (none for Reduce and Send/Recv).
[[nodiscard]] std::optional<Field> algorithmField(collective::Op op);

} // namespace tw::ui
