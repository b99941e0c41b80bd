#pragma once
// The open scenario: the one source of truth the panes edit. Owns the Scenario, its QUndoStack,
// a memoizing Deriver and the last Derivation; re-derives off the GUI thread after every change
// (a newer change supersedes and stops the older job) and reports why a scenario cannot be derived
// as core's errors, each with its JSON path. Files are scenario JSON (.tokenwire.json), written
// atomically. No widgets: tested without a window.
//
// Panes that debounce an edit (stage 1's typing) listen to pendingEditsRequested(): the document
// emits it before every other edit, undo, redo, save and replacement, so the debounced edit lands
// first, in order, and nothing typed is lost or undone out of turn.

#include "scenariofield.h"

#include "base/error.h"
#include "scenario/scenario.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <any>
#include <chrono>
#include <memory>
#include <vector>

class QUndoStack;

namespace tw::scenario {
class Deriver;
struct Derivation;
} // namespace tw::scenario

namespace tw::ui {

class BackgroundJob;
class Results;

class Document : public QObject {
    Q_OBJECT
public:
    using DerivationPtr = std::shared_ptr<const scenario::Derivation>;
    static constexpr const char* kFileSuffix = ".tokenwire.json";

    // Starts as the paper-reference preset, untitled and unmodified, and derives it.
    explicit Document(QObject* parent = nullptr);
    ~Document() override;

    [[nodiscard]] const scenario::Scenario& scenario() const { return m_scenario; }
    // The scenario as derived: file paths relative to the scenario file made absolute.
    [[nodiscard]] scenario::Scenario resolvedScenario() const;
    [[nodiscard]] QUndoStack* undoStack() const { return m_undo; }
    // Every result computed from the scenario beyond its derivation (the step, the sweep, the trace …).
    [[nodiscard]] Results* results() const { return m_results; }
    // The scenario's generation: it moves with every change of the scenario (an edit, undo, redo, a
    // file or preset) that a derived or simulated result depends on. Every result is tagged with the
    // generation it was computed for. An edit of the run block alone (scenario::RunSettings: tokens,
    // power, price, failures, checkpoints) keeps the generation and every result current while the
    // current step is there or on its way: only the run estimate reads it, from scenario().run and the
    // current step, and runChanged() says it moved.
    [[nodiscard]] quint64 generation() const { return m_generation; }
    // The generation derivation() was derived for (it lags generation() while deriving or invalid).
    [[nodiscard]] quint64 derivationGeneration() const { return m_derivationGeneration; }
    // The memoizing deriver of the document's derivations (thread-safe; the batch ramp's phases reuse its
    // tokenized text).
    [[nodiscard]] std::shared_ptr<scenario::Deriver> deriver() const { return m_deriver; }
    // The last successful derivation (it stays while the scenario is invalid; see problems()).
    [[nodiscard]] DerivationPtr derivation() const { return m_derivation; }
    // Why the current scenario cannot be derived (empty when derivation() is current).
    [[nodiscard]] const std::vector<Error>& problems() const { return m_problems; }
    // The messages of the problems located at jsonPath ("model.hidden_size").
    [[nodiscard]] QStringList problemsAt(const QString& jsonPath) const;
    [[nodiscard]] bool isDeriving() const { return m_deriving; }
    // False after cancelDerivation(): derivation() is from before the last edit (until the next one).
    [[nodiscard]] bool isDerivationCurrent() const { return m_current; }
    // Derivations applied so far (tests wait for it to move).
    [[nodiscard]] int derivationCount() const { return m_derivationCount; }

    [[nodiscard]] QString filePath() const { return m_filePath; }
    [[nodiscard]] QString displayName() const; // the file name, or "Untitled"
    [[nodiscard]] bool isModified() const;
    [[nodiscard]] QString title() const;       // "name.tokenwire.json*" when modified

    // Consecutive edits of one field closer than this merge into one undo step.
    [[nodiscard]] std::chrono::milliseconds mergeWindow() const { return m_mergeWindow; }
    void setMergeWindow(std::chrono::milliseconds window) { m_mergeWindow = window; }

    // Edits: each pushes one named command; false (nothing pushed) when the value is the current
    // one or does not fit the field.
    bool setField(Field field, const FieldValue& value);
    // Sets stage 1's text source (its documents count is kept). typing: consecutive calls within
    // the merge window are one undo step. False when unchanged, or a sample or file name is empty
    // or unknown.
    bool setText(const scenario::TextSource& source, bool typing = false);
    // Stage 3 edits (EditPlanCommand): the cluster's size (DP takes the GPUs when pp·tp divides them),
    // one degree (DP takes the rest when pp or tp changes), a swap of two GPUs' mesh places, the
    // layer partition (empty = the default), the pipeline schedule and its virtual stages.
    bool setCluster(std::uint64_t nodes, std::uint64_t gpusPerNode);
    bool setDegree(parallel::Strategy strategy, std::uint64_t degree);
    bool swapGpus(int a, int b);
    bool setLayerPartition(const std::vector<std::uint64_t>& partition);
    bool setPipelineSchedule(parallel::PipelineSchedule schedule, std::uint64_t virtualStages);
    // Any other plan: pushed as one command named `text` (false when nothing changes). The fabric
    // stays unless `topology` is given.
    bool editPlan(const scenario::Hardware& hardware, const parallel::ParallelPlan& plan, const QString& text,
                  EditMerge merge = EditMerge::None, const network::TopologySpec* topology = nullptr);
    // Stage 5: the fabric under the cluster ("Choose fabric", "Set NIC protocol" … as `text`; edits
    // from the same control within the window merge). False when unchanged.
    bool setTopology(const network::TopologySpec& topology, const QString& text, EditMerge merge = EditMerge::None);
    // Replaces the scenario with a shipped preset as one undoable step.
    bool loadPreset(const QString& name, QString* error = nullptr);

    // Files. Each replaces the scenario and clears the undo history only when it succeeds; a
    // failure leaves the document (and, for saves, the file on disk) as it was and says why.
    // open() also takes a file that reads but does not validate: problems() then says why.
    void newDocument();
    bool open(const QString& path, QString* error);
    bool save(QString* error);
    bool saveAs(const QString& path, QString* error);

    // Undo and redo, after the panes have pushed their pending edits (the Edit menu's actions).
    void undo();
    void redo();
    // Asks the panes to push the edits they are still debouncing (emits pendingEditsRequested).
    void flushPendingEdits();
    // Stops the running derivation; the last one stays, no longer current, until the next edit.
    void cancelDerivation();

    // For the commands only: change the scenario without pushing anything.
    void applyField(Field field, const FieldValue& value);
    void applyText(const scenario::TextSource& source);
    void applyScenario(const scenario::Scenario& scenario);
    void applyPlan(const scenario::Hardware& hardware, const parallel::ParallelPlan& plan,
                   const network::TopologySpec& topology);

    // Processes events until no derivation is running; false on timeout.
    bool waitForDerivation(int timeoutMs = 30000);

    // The story's live thread: the token of the text the user follows through the five stages
    // (hovered or chosen in stage 1, chosen in stage 3). View state: not part of the scenario, not
    // undoable, not saved. -1: none. Setting the current value emits nothing.
    [[nodiscard]] qint64 followedToken() const { return m_followedToken; }
    void setFollowedToken(qint64 index);

signals:
    void scenarioChanged();
    void runChanged(); // the run block changed (after scenarioChanged()), the generation did not
    void derived(std::shared_ptr<const tw::scenario::Derivation> derivation);
    void problemsChanged();
    void derivingChanged(bool deriving);
    void derivationProgressed(double fraction); // of the running derivation, 0…1
    void derivationCancelled();
    void pendingEditsRequested();
    void modifiedChanged(bool modified);
    void titleChanged(const QString& title);
    void followedTokenChanged(qint64 index); // -1: none

private:
    void replaceAll(const scenario::Scenario& scenario, const QString& path);
    void changed(); // the scenario changed: a new generation, scenarioChanged(), rederive()
    void rederive();
    void applyOutcome(const std::any& result); // the derivation job's, on the GUI thread
    void setDeriving(bool deriving);

    scenario::Scenario m_scenario;
    scenario::Scenario m_basis; // the scenario as of the current generation (changed() compares with it)
    QUndoStack* m_undo = nullptr;
    std::shared_ptr<scenario::Deriver> m_deriver;
    DerivationPtr m_derivation;
    std::vector<Error> m_problems;
    QString m_filePath;
    std::chrono::milliseconds m_mergeWindow{1500};

    BackgroundJob* m_job = nullptr; // the derivation's
    Results* m_results = nullptr;
    quint64 m_generation = 1; // the first scenario's (0: none)
    quint64 m_derivationGeneration = 0;
    bool m_deriving = false;
    bool m_current = true;
    bool m_flushing = false;
    int m_derivationCount = 0;
    qint64 m_followedToken = -1;
};

} // namespace tw::ui
