#include "results.h"

#include "document.h"

#include "scenario/derive.h"
#include "network/routing.h"
#include "network/simulate.h"
#include "views/qtstrings.h"
#include "workers/backgroundjob.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QPointer>

#include <mutex>

namespace tw::ui {

namespace {

// The debounce of a step request: edits arriving in a burst (a slider, typing) simulate once.
constexpr int kStepDelayMs = 120;

// What a job returns through std::any (a copyable value): the result, shared.
template <typename T>
struct Shared {
    std::shared_ptr<const T> value;
};

} // namespace

// The routes of one step's fabric, kept across traces; a superseded trace may still be routing when
// the next one starts, so they take turns.
struct Results::TraceRouter {
    std::shared_ptr<const scenario::NetworkStage> network; // the fabric they route on
    std::mutex mutex;
    std::optional<network::Router> router; // made by the first trace, on its pool thread (40 ms at 98,304 GPUs)
};

StepResult simulateStep(const scenario::Scenario& scenario, std::shared_ptr<const scenario::Derivation> derivation,
                        const Progress& progress, const StepPreparation& prepare)
{
    StepResult out;
    out.scenario = std::make_shared<const scenario::Scenario>(scenario);
    out.derivation = derivation;
    if (!derivation) {
        out.error = makeError("nothing to simulate: the scenario has not been derived");
        return out;
    }
    // The fabric and its link loads, then the step with the animation's link samples (core's one way).
    auto step = scenario::simulateDerived(scenario, *derivation, true, progress);
    if (!step) {
        out.cancelled = progress.stopRequested();
        out.error = step.error();
        return out;
    }
    out.network = step.value().network;
    out.simulation = step.value().simulation;
    if (prepare)
        prepare(out);
    progress(1.0);
    return out;
}

Results::Results(Document* document)
    : QObject(document)
    , m_document(document)
    , m_stepJob(new BackgroundJob(this))
    , m_rampJob(new BackgroundJob(this))
    , m_sweepJob(new BackgroundJob(this))
    , m_traceJob(new BackgroundJob(this))
    , m_pinnedJob(new BackgroundJob(this))
    , m_fitJob(new BackgroundJob(this))
{
    setObjectName(QStringLiteral("results"));
    m_knownGeneration = generation();
    connect(m_document, &Document::scenarioChanged, this, &Results::onScenarioChanged);
    connect(m_document, &Document::derived, this, &Results::onDerived);
    // A step asked for before its derivation: none comes when the derivation fails or is stopped.
    connect(m_document, &Document::problemsChanged, this, [this] {
        if (m_stepWanted && !m_document->isDeriving() && !m_document->problems().empty())
            refuseStep();
    });
    connect(m_document, &Document::derivationCancelled, this, [this] { m_stepWanted.reset(); });

    connect(m_stepJob, &BackgroundJob::finished, this, [this](const std::any& r) {
        auto result = std::any_cast<const Shared<StepResult>&>(r).value;
        m_stepRunning.reset();
        if (!isCurrent(result->generation))
            return; // cannot happen (the job drops superseded work), kept as the rule's guard
        m_stepDone = result->generation;
        if (result->ok()) {
            // The previous step (a million links and their routes at 98,304 GPUs) is freed on a pool thread.
            releaseLater(std::exchange(m_step, result), std::exchange(m_router, nullptr));
        }
        emit stepFinished(result);
    });
    connect(m_stepJob, &BackgroundJob::cancelled, this, [this] { m_stepRunning.reset(); });

    connect(m_rampJob, &BackgroundJob::finished, this, [this](const std::any& r) {
        auto result = std::any_cast<const Shared<RampResult>&>(r).value;
        m_rampRunning.reset();
        if (!isCurrent(result->generation))
            return;
        m_ramp = result;
        emit rampFinished(result);
    });
    connect(m_rampJob, &BackgroundJob::cancelled, this, [this] { m_rampRunning.reset(); });

    connect(m_sweepJob, &BackgroundJob::finished, this, [this](const std::any& r) {
        m_sweep = std::any_cast<const Shared<SweepResult>&>(r).value;
        emit swept(m_sweep);
    });
    connect(m_traceJob, &BackgroundJob::finished, this, [this](const std::any& r) {
        auto result = std::any_cast<const Shared<TraceResult>&>(r).value;
        if (!result)
            return; // stopped before it started (a newer request replaces it)
        m_trace = std::move(result);
        emit traced(m_trace);
    });
    connect(m_pinnedJob, &BackgroundJob::finished, this, [this](const std::any& r) {
        emit pinnedStepFinished(std::any_cast<const Shared<StepResult>&>(r).value);
    });
    connect(m_fitJob, &BackgroundJob::finished, this, [this](const std::any& r) {
        emit fitFound(std::any_cast<const Shared<FitResult>&>(r).value);
    });
}

Results::~Results() = default;

Generation Results::generation() const
{
    return m_document->generation();
}

Result<scenario::RunEstimate> runOfStep(const StepResult& step, const scenario::RunSettings& run, const RampResult* ramp)
{
    if (!step.ok() || !step.scenario || !step.derivation)
        return makeError("no simulated step");
    scenario::Scenario s = *step.scenario;
    s.run = run;
    std::vector<scenario::PhaseStep> phases;
    if (!run.batchRamp.empty() && ramp && ramp->ramp == run.batchRamp) {
        if (!ramp->steps)
            return ramp->steps.error();
        phases = ramp->steps.value();
    }
    return scenario::estimateRun(s, *step.derivation, *step.simulation, std::nullopt, scenario::UnsetTokens::Chinchilla,
                                 phases);
}

bool Results::isRampCurrent() const
{
    return m_ramp && isCurrent(m_ramp->generation) && m_ramp->ramp == m_document->scenario().run.batchRamp;
}

void Results::requestRamp()
{
    const auto& wanted = m_document->scenario().run.batchRamp;
    if (wanted.empty() || isRampCurrent() || !isStepCurrent() || !m_step->ok())
        return;
    const Generation now = generation();
    if (m_rampRunning && m_rampRunning->first == now && m_rampRunning->second == wanted)
        return; // on its way
    m_rampRunning.emplace(now, wanted);
    scenario::Scenario scenario = *m_step->scenario; // resolved, as the step simulated it
    scenario.run.batchRamp = wanted;
    m_rampJob->schedule([scenario, now, deriver = m_document->deriver()](const Progress& progress) -> std::any {
        auto result = std::make_shared<RampResult>();
        result->generation = now;
        result->ramp = scenario.run.batchRamp;
        result->steps = scenario::simulateRamp(scenario, deriver.get(), progress);
        result->cancelled = progress.stopRequested();
        return Shared<RampResult>{std::move(result)};
    }, kStepDelayMs);
}

void Results::onScenarioChanged()
{
    // An edit of the run block alone keeps the generation (Document::runChanged): every result held is
    // still the current scenario's, and what runs for it runs on.
    if (generation() == m_knownGeneration)
        return;
    m_knownGeneration = generation();
    // Work for the old scenario stops: its results would be of an older generation. (The pinned step is
    // a snapshot of its own and runs on.)
    m_stepWanted.reset();
    m_stepRunning.reset();
    m_rampRunning.reset();
    m_stepProblem.clear();
    for (BackgroundJob* job : {m_stepJob, m_rampJob, m_sweepJob, m_traceJob, m_fitJob})
        if (job->isBusy())
            job->cancel();
    m_trace.reset();
    emit outdated();
}

void Results::onDerived()
{
    if (m_stepWanted && isCurrent(*m_stepWanted))
        startStep();
}

void Results::requestStep()
{
    const Generation now = generation();
    if (m_stepRunning == now)
        return; // on its way
    if (m_stepDone == now) {
        if (!m_stepProblem.isEmpty())
            emit stepRefused(m_stepProblem); // asked again: the same answer
        return;
    }
    m_stepWanted = now;
    if (m_document->isDeriving())
        return; // started by onDerived() when the current derivation is there
    if (!m_document->problems().empty() || m_document->derivationGeneration() != now) {
        refuseStep();
        return;
    }
    startStep();
}

void Results::refuseStep()
{
    m_stepWanted.reset();
    m_stepProblem = m_document->problems().empty()
                        ? tr("The scenario's derivation was stopped; edit anything to derive it again")
                        : tr("The scenario cannot be derived (see the other stages)");
    emit stepRefused(m_stepProblem);
}

void Results::startStep()
{
    const Generation now = generation();
    m_stepWanted.reset();
    const auto derivation = m_document->derivation();
    if (!derivation)
        return;
    if (!derivation->stage3) {
        QStringList why;
        for (const Error& e : derivation->planErrors)
            why << qs(e.toString());
        m_stepProblem = tr("The stage 3 plan cannot run, so there is no step to put on the wire: %1")
                            .arg(why.join(QStringLiteral("; ")));
        m_stepDone = now;
        emit stepRefused(m_stepProblem);
        return;
    }
    m_stepProblem.clear();
    m_stepRunning = now;
    const scenario::Scenario scenario = m_document->resolvedScenario();
    StepPreparation prepare = m_prepare ? m_prepare() : StepPreparation();
    m_stepJob->schedule([scenario, derivation, now, prepare](const Progress& progress) -> std::any {
        auto result = std::make_shared<StepResult>(simulateStep(scenario, derivation, progress, prepare));
        result->generation = now;
        return Shared<StepResult>{std::move(result)};
    }, kStepDelayMs);
}

void Results::cancelStep()
{
    m_stepWanted.reset();
    m_stepRunning.reset();
    m_stepJob->cancel();
}

bool Results::requestSweep(const scenario::SweepOptions& options)
{
    if (!m_document->problems().empty())
        return false;
    const Generation now = generation();
    const scenario::Scenario scenario = m_document->resolvedScenario();
    m_sweepJob->schedule([scenario, options, now](const Progress& progress) -> std::any {
        auto result = std::make_shared<SweepResult>();
        result->generation = now;
        result->scenarioName = scenario.name;
        result->options = options;
        result->sweep = scenario::runSweep(scenario, options, progress);
        return Shared<SweepResult>{std::move(result)};
    });
    return true;
}

void Results::cancelSweep()
{
    m_sweepJob->cancel();
}

void Results::requestTrace(std::int64_t token)
{
    m_trace.reset();
    const auto step = m_step;
    const bool ready = step && isCurrent(step->generation) && step->derivation && step->derivation->stage3;
    if (token < 0 || !ready || std::uint64_t(token) >= step->derivation->tokens().size()) {
        m_traceJob->cancel(); // a trace of the previous token is no longer wanted
        return;
    }
    if (!m_router || m_router->network != step->network) {
        m_router = std::make_shared<TraceRouter>();
        m_router->network = step->network;
    }
    // The job holds what it reads: the step (derivation, scenario, fabric) stays alive while it runs.
    m_traceJob->schedule([step, router = m_router, token = std::uint64_t(token)](const Progress& progress) -> std::any {
        const std::lock_guard lock(router->mutex);
        if (progress.stopRequested())
            return Shared<TraceResult>{};
        if (!router->router)
            router->router.emplace(*step->network->topology);
        auto result = std::make_shared<TraceResult>();
        result->generation = step->generation;
        result->token = token;
        result->step = step;
        result->trace = scenario::traceToken(*step->derivation, *step->scenario, token, step->network->topology.get(),
                                             progress, &*router->router);
        return Shared<TraceResult>{std::move(result)};
    });
}

void Results::cancelTrace()
{
    m_traceJob->cancel();
}

void Results::requestPinnedStep(const scenario::Scenario& resolved, std::shared_ptr<const scenario::Derivation> derivation)
{
    const Generation now = generation();
    m_pinnedJob->schedule([resolved, derivation, now](const Progress& progress) -> std::any {
        auto result = std::make_shared<StepResult>(simulateStep(resolved, derivation, progress));
        result->generation = now;
        return Shared<StepResult>{std::move(result)};
    });
}

void Results::cancelPinnedStep()
{
    m_pinnedJob->cancel();
}

void Results::requestFit(const scenario::FitOptions& options)
{
    const Generation now = generation();
    auto searched = std::make_shared<const scenario::Scenario>(m_document->scenario());
    QPointer<Results> self(this);
    const std::uint64_t job = m_fitJob->generation() + 1; // the generation schedule() gives this request
    m_fitJob->schedule([searched, options, now, self, job](const Progress& progress) -> std::any {
        auto partial = [self, searched, now, job](const scenario::FitSearch& list) {
            // First results early: each partial list goes to the GUI thread (dropped when superseded).
            auto result = std::make_shared<FitResult>();
            result->generation = now;
            result->scenario = searched;
            result->search = list;
            QMetaObject::invokeMethod(
                self.data(),
                [self, result, job] {
                    if (self && self->m_fitJob->generation() == job && self->m_fitJob->isBusy())
                        emit self->fitFound(result);
                },
                Qt::QueuedConnection);
        };
        auto result = std::make_shared<FitResult>();
        result->generation = now;
        result->scenario = searched;
        result->search = scenario::searchFittingPlans(*searched, options, progress, partial);
        result->final = true;
        return Shared<FitResult>{std::move(result)};
    });
}

void Results::cancelFit()
{
    m_fitJob->cancel();
}

bool Results::waitUntilIdle(int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    auto busy = [this] {
        if (m_document->isDeriving() || (m_stepWanted && isCurrent(*m_stepWanted)))
            return true;
        for (BackgroundJob* job : {m_stepJob, m_rampJob, m_sweepJob, m_traceJob, m_pinnedJob, m_fitJob})
            if (job->isBusy())
                return true;
        return false;
    };
    while (busy() && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QCoreApplication::processEvents(); // what the last job's result set off
    return !busy();
}

} // namespace tw::ui
