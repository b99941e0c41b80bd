#pragma once
// The whole derivation of a scenario: stage 1 (text → tokens → dataset figures), stage 2 (model,
// tensors, memory, FLOPs), stage 3 (parallel plan, communication, pipeline) and stage 4 (each call's
// schedule counted), every number a Figure in one closed provenance graph. Pure and
// deterministic; a Deriver memoizes each stage on its inputs so an edit of the model does not
// re-tokenize the text.

#include "base/error.h"
#include "base/figure.h"
#include "base/progress.h"
#include "collective/binding.h"
#include "model/tensors.h"
#include "network/linkload.h"
#include "network/simulate.h"
#include "fabric/topology.h"
#include "parallel/memory.h"
#include "parallel/plan.h"
#include "scenario.h"
#include "text/bpe.h"
#include "text/dataset.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tw::scenario {

// Stage 1's text and its tokens; shared by every derivation with the same text and tokenizer.
struct TokenizedText {
    std::string text;                                // the bytes tokenized
    std::string textName;                            // a sample id, a path or "<inline>"
    std::shared_ptr<const text::BpeModel> tokenizer; // GPT-2, trained on the text, or a tokenizer.json
    std::vector<text::TokenSpan> tokens;
    std::vector<Error> warnings;                     // empty text, invalid UTF-8, NUL bytes, V smaller than asked
};

// Stage 1: the tokens cut into the training shape (T, B, G, documents).
struct TextStage {
    std::shared_ptr<const TokenizedText> tokenized;
    text::TrainingShape shape;
    text::DatasetStats stats; // figures "text.*", "tokenizer.*", "tokens.*", "dataset.*"
};

struct Derivation {
    std::shared_ptr<const TextStage> stage1;
    model::ModelConfig model;      // as derived: V from the tokenizer when the scenario says so
    model::GpuSpec gpu;            // the catalog entry or the custom one
    std::shared_ptr<const model::ModelDerivation> stage2; // figures "model.*", "memory.*", "compute.*"; tensors
    // Stage 3, or null when the plan cannot run (planErrors says why, each naming its "parallel.*" path).
    std::shared_ptr<const parallel::PlanDerivation> stage3;
    std::vector<Error> planErrors;
    // Stage 3's memory of every GPU under the plan (null without a stage 3); figures "memory.plan.*".
    std::shared_ptr<const parallel::PlanMemory> memory;
    // Stage 4: every call of stage 3 counted with its algorithm's schedule (null without a stage 3).
    std::shared_ptr<const collective::CollectiveDerivation> stage4;
    parallel::Cluster cluster;
    FigureSet figures;             // stage 1 + the scenario's other inputs + stages 2 and 3: a closed graph
    std::vector<Error> problems;   // warnings and notes (nothing here stops the derivation)
    std::shared_ptr<const void> anchor; // keeps the memoized stage this derivation was keyed on alive

    [[nodiscard]] const text::DatasetStats& dataset() const { return stage1->stats; }
    [[nodiscard]] const std::vector<text::TokenSpan>& tokens() const { return stage1->tokenized->tokens; }
    [[nodiscard]] const text::BpeModel& tokenizer() const { return *stage1->tokenized->tokenizer; }
};

// Derives scenarios, remembering the last results of each stage keyed by that stage's inputs:
// tokenization by text source + tokenizer (files by path, size and modification time), dataset
// figures by tokens + training shape, stage 2 by stage 1 + model + batch + GPU, stage 3 by stage 2 +
// cluster + plan. Thread-safe.
class Deriver {
public:
    Deriver();
    ~Deriver();
    Deriver(const Deriver&) = delete;
    Deriver& operator=(const Deriver&) = delete;

    // An invalid scenario, an unreadable file or a cancellation is an Error (invalid scenarios
    // list every problem, one per line); warnings go to Derivation::problems.
    [[nodiscard]] Result<std::shared_ptr<const Derivation>> derive(const Scenario& scenario, const Progress& progress = {});

    // How many times each stage actually ran (for tests and benchmarks).
    struct Counters {
        std::size_t tokenizations = 0;
        std::size_t datasets = 0;
        std::size_t models = 0;
        std::size_t plans = 0;
        bool operator==(const Counters&) const = default;
    };
    [[nodiscard]] Counters counters() const;
    void clear();

private:
    struct Cache;
    std::unique_ptr<Cache> m_cache;
};

// One derivation without memoization.
[[nodiscard]] Result<std::shared_ptr<const Derivation>> derive(const Scenario& scenario, const Progress& progress = {});

// Stage 5's first part: the scenario's fabric built for its cluster and the step's traffic mapped onto
// its links (every transfer of every scheduled call, routed). Separate from derive() because it is
// the costly part (≈0.2 s for 1,024 GPUs) and only stage 5 needs it. Errors: a topology that cannot
// hold the cluster (paths "topology.*"), no stage 3 plan, a disconnected pair, a stop request.
struct NetworkStage {
    std::shared_ptr<const network::Topology> topology;
    network::LinkLoads loads;
    FigureSet figures; // "net.*": the busiest link, bytes entering the network by strategy, wire overhead
};
[[nodiscard]] Result<std::shared_ptr<const NetworkStage>> deriveNetwork(const Scenario& scenario, const Derivation& derivation,
                                                                      const Progress& progress = {});

// The options every simulation of a derived scenario uses (the CLI, the sweep, the stage 5 pane): MFU
// from "compute.flops_per_step" and "compute.gpu_peak_flops" when both are known, intervals kept for every
// GPU up to network::kMaxRecordedGpus (else GPU 0 and one GPU per pipeline stage), link rate samples
// recorded or not.
[[nodiscard]] network::SimulationOptions simulationOptions(const Derivation& derivation, bool recordLinks);

// Stage 5 of a derived scenario, the one way every caller runs it (the CLI, the sweep, the comparison,
// the plan search, the stage 5 pane): deriveNetwork (the first fifth of the progress), then
// network::simulateStep with simulationOptions(derivation, recordLinks) (the rest). Errors: deriveNetwork's,
// then the simulation's (a stop request included).
struct SimulatedStep {
    std::shared_ptr<const NetworkStage> network;
    std::shared_ptr<const network::StepSimulation> simulation;
};
[[nodiscard]] Result<SimulatedStep> simulateDerived(const Scenario& scenario, const Derivation& derivation, bool recordLinks,
                                                    const Progress& progress = {});

// A figure's derivation tree back to the inputs, depth first: each figure once (a figure met again
// comes back with repeated = true and no children).
struct ChainStep {
    const Figure* figure = nullptr;
    int depth = 0;
    bool repeated = false;
};
[[nodiscard]] std::vector<ChainStep> derivationTree(const FigureSet& figures, const std::string& id);

// Ids of the set close to a mistyped id (edit distance or substring), best first.
[[nodiscard]] std::vector<std::string> closeIds(const FigureSet& figures, const std::string& id, std::size_t max = 5);

} // namespace tw::scenario
