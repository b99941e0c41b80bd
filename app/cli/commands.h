#pragma once
// The commands of tokenwire-cli (tokenize, train-bpe, derive, tensors, explain, plan, collective,
// simulate, sweep, presets), over the Qt-free core.

#include "base/error.h"
#include "scenario/scenario.h"

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace tw::scenario {
struct Derivation;
class Deriver;
struct PhaseStep;
}

namespace tw::cli {

struct Invocation;
struct TokenizeOptions;
struct TrainBpeOptions;
struct ScenarioOptions;
struct CollectiveOptions;
struct SweepCommandOptions;
struct FitCommandOptions;
struct RunCommandOptions;

// Exit statuses: done, unreadable or corrupt input (or output), wrong usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInput = 1;
inline constexpr int kExitUsage = 2;

// Tokenizes one text and prints its dataset figures (table or JSON) or its token count.
[[nodiscard]] int runTokenize(const TokenizeOptions& options, std::ostream& out, std::ostream& err);
// Trains a BPE vocabulary and writes tokenizer.json to a file or to out; a summary goes to err.
[[nodiscard]] int runTrainBpe(const TrainBpeOptions& options, std::ostream& out, std::ostream& err);
// Derives a scenario (file or preset) and prints every figure (table or JSON).
[[nodiscard]] int runDerive(const ScenarioOptions& options, std::ostream& out, std::ostream& err);
// Prints a scenario's tensor inventory (table or JSON).
[[nodiscard]] int runTensors(const ScenarioOptions& options, std::ostream& out, std::ostream& err);
// Prints one figure's derivation chain back to the inputs.
[[nodiscard]] int runExplain(const ScenarioOptions& options, std::ostream& out, std::ostream& err);
// Stage 3: the plan's validation, communication signature and collective calls (table or JSON);
// exit 1 when the plan cannot run.
[[nodiscard]] int runPlan(const ScenarioOptions& options, std::ostream& out, std::ostream& err);
// Stage 4: one collective call scheduled and counted (table or JSON, the schedule with --steps), or
// --list; exit 1 when collective::validate refuses the spec.
[[nodiscard]] int runCollective(const CollectiveOptions& options, std::ostream& out, std::ostream& err);
// Stage 5: one step simulated on the scenario's fabric (table or JSON); exit 1 when the plan or the
// fabric cannot run.
[[nodiscard]] int runSimulate(const ScenarioOptions& options, std::ostream& out, std::ostream& err);
// Stage 5's scaling sweep: the scenario on each size of --gpus (table, JSON or CSV), the paper's measured
// points and the gaps; exit 1 when the scenario is unreadable or a size cannot run.
[[nodiscard]] int runSweep(const SweepCommandOptions& options, std::ostream& out, std::ostream& err);
// Stage 3: the memory of every GPU under the plan, per stage (table or JSON); exit 1 when the plan
// cannot run.
[[nodiscard]] int runMemory(const ScenarioOptions& options, std::ostream& out, std::ostream& err);
// Stage 3: the kernels of one layer on one GPU under the plan (table or JSON), docs/compute.md.
[[nodiscard]] int runKernels(const ScenarioOptions& options, std::ostream& out, std::ostream& err);
// Stage 3: the plans that fit the model on the cluster, best first (table or JSON); exit 1 when the
// scenario does not derive (no fitting plan is not an error).
[[nodiscard]] int runFit(const FitCommandOptions& options, std::ostream& out, std::ostream& err);
// The whole training run of the scenario's simulated step: steps, days, GPU-hours, energy, cost (table
// or JSON); exit 1 when the scenario, the plan or the run's inputs cannot give one.
[[nodiscard]] int runRun(const RunCommandOptions& options, std::ostream& out, std::ostream& err);
struct ValidateOptions;
// Issue #10: tokenwire's predictions against a measured dataset (table or JSON); exit 1 when any modelled
// row misses its measured payload by more than 2 % or the dataset is unreadable.
[[nodiscard]] int runValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err);
struct BusbwOptions;
// Issue #17: one NCCL collective over the scenario's GPUs per message size (cmd_busbw.cpp); exit 1 when the
// scenario is unreadable or NCCL has no such (operation, algorithm, protocol) here.
[[nodiscard]] int runBusbw(const BusbwOptions& options, std::ostream& out, std::ostream& err);
// Lists the presets: names, a blank line, then "name — description" lines.
[[nodiscard]] int runPresets(std::ostream& out);
// The command line's plan overrides, as `plan` applies them: --pp, --tp, --ep, then --dp, then the sharding.
void applyPlanOverrides(const ScenarioOptions& options, scenario::Scenario& s);
// The scenario of --scenario / --preset with the plan overrides applied, derived; nullopt after printing
// why it could not be read or derived (the command then exits kExitInput).
struct DerivedScenario {
    scenario::Scenario scenario;
    std::shared_ptr<const scenario::Derivation> derivation;
    std::shared_ptr<scenario::Deriver> deriver; // the one that derived it (its text tokenized: run's ramp phases reuse it)
};
[[nodiscard]] std::optional<DerivedScenario> deriveScenarioFor(const ScenarioOptions& options, std::ostream& err);
// The steps of the scenario's batch-ramp phases (scenario::simulateRamp; empty without a ramp); nullopt
// after printing why they could not be simulated.
[[nodiscard]] std::optional<std::vector<scenario::PhaseStep>> simulateRampFor(const DerivedScenario& derived,
                                                                              std::ostream& err);
// The whole tool: parses argv, runs the command, writes "tokenwire-cli: …" errors to err.
[[nodiscard]] int runTool(int argc, char** argv, std::ostream& out, std::ostream& err);

} // namespace tw::cli
