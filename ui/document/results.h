#pragma once
// Every result computed from the open scenario beyond its derivation — the simulated step, the scaling
// sweep, the followed token's trace, the pinned comparison's step and the plan search — owned in one
// place beside the Document, each run on a BackgroundJob (debounced, latest request wins, stop token)
// and tagged with the scenario generation it was computed for (Document::generation()).
//
// Panes are views: they ask for work (requestStep(), requestSweep() …) and render what the typed
// signals give them (stepFinished, swept, traced, fitFound …). A result of an older generation is never
// delivered as current: when the scenario changes, the work for it stops and outdated() tells the views
// that what they hold (step(), sweep() …, still readable) belongs to an older scenario.
// See docs/architecture.md, "Who owns a result".

#include "base/error.h"
#include "scenario/fitsearch.h"
#include "scenario/run.h"
#include "scenario/sweep.h"
#include "scenario/tokentrace.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace tw::network {
struct StepSimulation;
}
namespace tw::scenario {
struct Derivation;
struct NetworkStage;
struct Scenario;
} // namespace tw::scenario

namespace tw::ui {

class BackgroundJob;
class Document;
class WireLayout;
struct WireGroups;

// The scenario generation a result was computed for (Document::generation()).
using Generation = std::uint64_t;

// One simulated step of the scenario: its fabric with the step's link loads, the flow-level simulation
// (link samples recorded for the animation), and what stage 5 prepared for its drawing on the same thread.
struct StepResult {
    Generation generation = 0;
    std::shared_ptr<const scenario::Scenario> scenario; // the scenario simulated (paths resolved)
    std::shared_ptr<const scenario::Derivation> derivation;
    std::shared_ptr<const scenario::NetworkStage> network;
    std::shared_ptr<const network::StepSimulation> simulation;
    std::shared_ptr<const WireGroups> groups; // the fabric's groups as stage 5 draws them (null: not prepared)
    std::shared_ptr<WireLayout> layout;       // its first layout for stage 5's drawing area (null: none)
    std::optional<Error> error;               // why there is no step
    bool cancelled = false;
    [[nodiscard]] bool ok() const { return !error && simulation && network; }
};

// The scaling sweep of one scenario.
struct SweepResult {
    Generation generation = 0;
    std::string scenarioName; // whose sweep it is ("paper-testbed"), for "run again" notes
    scenario::SweepOptions options;
    Result<scenario::Sweep> sweep = makeError("not run");
};

// The followed token traced onto one simulated step's fabric.
struct TraceResult {
    Generation generation = 0;
    std::uint64_t token = 0;
    std::shared_ptr<const StepResult> step; // the step it was traced on
    Result<scenario::TokenTrace> trace = makeError("not traced");
};

// A plan search (partial while it runs, then final).
struct FitResult {
    Generation generation = 0;
    std::shared_ptr<const scenario::Scenario> scenario; // the scenario searched
    Result<scenario::FitSearch> search = makeError("not run");
    bool final = false;
};

// The steps of the batch ramp's phases (run.batch_ramp), each simulated with its batch and cluster on the
// scenario of one generation.
struct RampResult {
    Generation generation = 0;
    std::vector<scenario::BatchPhase> ramp; // the phases simulated
    Result<std::vector<scenario::PhaseStep>> steps = makeError("not run");
    bool cancelled = false;
};

// Runs on the step's job thread after the step is simulated (stage 5 reads its groups and first layout
// off the GUI thread there). Made on the GUI thread when the job starts, so it can capture the view's area.
using StepPreparation = std::function<void(StepResult& result)>;

// The simulation of one step, as every view of it runs it: scenario::simulateDerived with the link
// samples the animation plays, then `prepare` (may be empty). Runs on any thread.
[[nodiscard]] StepResult simulateStep(const scenario::Scenario& scenario,
                                      std::shared_ptr<const scenario::Derivation> derivation, const Progress& progress,
                                      const StepPreparation& prepare = {});

// The whole run of a simulated step with the document's run settings (the run block moves without a
// new step, Document::runChanged): scenario::estimateRun, 20 tokens per parameter when none are given;
// with a batch ramp, on `ramp`'s phase steps (an error when they are not those of run.batch_ramp).
[[nodiscard]] Result<scenario::RunEstimate> runOfStep(const StepResult& step, const scenario::RunSettings& run,
                                                      const RampResult* ramp = nullptr);

class Results : public QObject {
    Q_OBJECT
public:
    explicit Results(Document* document);
    ~Results() override;

    [[nodiscard]] Generation generation() const; // the document's scenario generation now
    // Whether a result was computed for the scenario as it is now.
    [[nodiscard]] bool isCurrent(Generation generation) const { return generation == this->generation(); }

    // Stage 5's step. step(): the last step simulated without error (of any generation; null before the
    // first). requestStep(): asks for the current scenario's step — nothing when it is already simulated
    // or running; started once the current derivation is there; refused (stepProblem() says why) when
    // the scenario cannot be derived or its plan cannot run.
    [[nodiscard]] std::shared_ptr<const StepResult> step() const { return m_step; }
    [[nodiscard]] bool isStepCurrent() const { return m_step && isCurrent(m_step->generation); }
    [[nodiscard]] QString stepProblem() const { return m_stepProblem; }
    void requestStep();
    void cancelStep();
    [[nodiscard]] BackgroundJob* stepJob() const { return m_stepJob; }
    // The preparation every step job runs after its simulation (set by stage 5; the factory is called on
    // the GUI thread when the job is scheduled).
    void setStepPreparation(std::function<StepPreparation()> factory) { m_prepare = std::move(factory); }

    // The batch ramp's phase steps for the Run tab. ramp(): the last delivered (any generation and ramp;
    // null before the first). isRampCurrent(): it is this generation's and the document's run.batch_ramp
    // as it is now. requestRamp(): simulates the phases on the current step's scenario — nothing when
    // the ramp is empty or current or already on its way, and nothing before the current step is there.
    [[nodiscard]] std::shared_ptr<const RampResult> ramp() const { return m_ramp; }
    [[nodiscard]] bool isRampCurrent() const;
    void requestRamp();
    [[nodiscard]] BackgroundJob* rampJob() const { return m_rampJob; }

    // The scaling sweep of the current scenario (false when the scenario cannot be derived now).
    bool requestSweep(const scenario::SweepOptions& options);
    void cancelSweep();
    [[nodiscard]] std::shared_ptr<const SweepResult> sweep() const { return m_sweep; }
    [[nodiscard]] BackgroundJob* sweepJob() const { return m_sweepJob; }

    // The followed token traced onto the current step (token < 0, or no current step: the trace is
    // dropped and nothing runs). The routes of the step's fabric are kept across traces.
    void requestTrace(std::int64_t token);
    void cancelTrace();
    [[nodiscard]] std::shared_ptr<const TraceResult> trace() const { return m_trace; }
    [[nodiscard]] BackgroundJob* traceJob() const { return m_traceJob; }

    // A pinned scenario's step (the comparison's A): runs to its end whatever the document does next,
    // until the next pin or cancelPinnedStep(). Delivered by pinnedStepFinished.
    void requestPinnedStep(const scenario::Scenario& resolved, std::shared_ptr<const scenario::Derivation> derivation);
    void cancelPinnedStep();
    [[nodiscard]] BackgroundJob* pinnedJob() const { return m_pinnedJob; }

    // The plan search of the current scenario: partial lists while it runs, then the final one.
    void requestFit(const scenario::FitOptions& options);
    void cancelFit();
    [[nodiscard]] BackgroundJob* fitJob() const { return m_fitJob; }

    // Processes events until no job runs (and the document is not deriving); false on timeout.
    bool waitUntilIdle(int timeoutMs = 60000);

signals:
    // The current scenario's step, simulated or failed (error set); step() is updated first when it is ok.
    void stepFinished(std::shared_ptr<const tw::ui::StepResult> result);
    // requestStep() could not start a step: the scenario cannot be derived or its plan cannot run.
    void stepRefused(const QString& reason);
    // The batch ramp's phase steps, simulated or failed (steps holds the error); ramp() is updated first.
    void rampFinished(std::shared_ptr<const tw::ui::RampResult> result);
    void swept(std::shared_ptr<const tw::ui::SweepResult> result);
    void traced(std::shared_ptr<const tw::ui::TraceResult> result);
    void pinnedStepFinished(std::shared_ptr<const tw::ui::StepResult> result);
    void fitFound(std::shared_ptr<const tw::ui::FitResult> result);
    // The scenario changed: the work for the old one has stopped, and every result held is of an older
    // generation now (views dim it, clear it or say "run again").
    void outdated();

private:
    void onScenarioChanged();
    void onDerived();
    void startStep();
    void refuseStep();

    Document* m_document;
    BackgroundJob* m_stepJob;
    BackgroundJob* m_rampJob;
    BackgroundJob* m_sweepJob;
    BackgroundJob* m_traceJob;
    BackgroundJob* m_pinnedJob;
    BackgroundJob* m_fitJob;
    std::function<StepPreparation()> m_prepare;
    Generation m_knownGeneration = 0; // the scenario generation onScenarioChanged() last saw
    std::shared_ptr<const StepResult> m_step;
    std::shared_ptr<const RampResult> m_ramp;
    // What the ramp job works on: its generation and phases (nullopt: nothing running).
    std::optional<std::pair<Generation, std::vector<scenario::BatchPhase>>> m_rampRunning;
    std::shared_ptr<const SweepResult> m_sweep;
    std::shared_ptr<const TraceResult> m_trace;
    std::optional<Generation> m_stepWanted;  // asked for before its derivation was there
    std::optional<Generation> m_stepRunning; // the generation the step job works on
    std::optional<Generation> m_stepDone;    // the generation of the last step outcome delivered
    QString m_stepProblem;
    struct TraceRouter;
    std::shared_ptr<TraceRouter> m_router; // routes of m_step's fabric, kept across traces
};

} // namespace tw::ui
