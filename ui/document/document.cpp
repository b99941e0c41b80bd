#include "document.h"

#include "commands.h"
#include "results.h"

#include "base/fileio.h"
#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"
#include "text/samples.h"
#include "views/qtstrings.h"
#include "workers/backgroundjob.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFile>
#include <QFileInfo>
#include <QUndoStack>

#include <algorithm>
#include <optional>

namespace tw::ui {

namespace {
constexpr qint64 kMaxScenarioFileBytes = 64 * 1024 * 1024;

struct Outcome {
    quint64 generation = 0; // of the scenario derived
    Document::DerivationPtr derivation;
    std::optional<Error> error;
};

scenario::Scenario startScenario()
{
    auto reference = scenario::preset("paper-reference");
    return reference ? reference.value() : scenario::Scenario{};
}
} // namespace

Document::Document(QObject* parent)
    : QObject(parent)
    , m_scenario(startScenario())
    , m_basis(m_scenario)
    , m_undo(new QUndoStack(this))
    , m_deriver(std::make_shared<scenario::Deriver>())
    , m_job(new BackgroundJob(this))
{
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool clean) {
        emit modifiedChanged(!clean);
        emit titleChanged(title());
    });
    connect(m_job, &BackgroundJob::progressed, this, [this](double f) {
        if (m_deriving)
            emit derivationProgressed(f);
    });
    connect(m_job, &BackgroundJob::finished, this, [this](const std::any& r) { applyOutcome(r); });
    m_results = new Results(this);
    rederive();
}

Document::~Document() = default;

QStringList Document::problemsAt(const QString& jsonPath) const
{
    QStringList out;
    const std::string path = jsonPath.toStdString();
    for (const Error& e : m_problems)
        if (e.where.jsonPath == path)
            out << qs(e.message);
    return out;
}

QString Document::displayName() const
{
    return m_filePath.isEmpty() ? tr("Untitled") : QFileInfo(m_filePath).fileName();
}

bool Document::isModified() const
{
    return !m_undo->isClean();
}

QString Document::title() const
{
    return displayName() + (isModified() ? QStringLiteral("*") : QString());
}

scenario::Scenario Document::resolvedScenario() const
{
    return m_filePath.isEmpty() ? m_scenario : scenario::resolvePaths(m_scenario, m_filePath.toStdString());
}

void Document::flushPendingEdits()
{
    if (m_flushing)
        return; // a pane pushing its pending edit calls back in here
    m_flushing = true;
    emit pendingEditsRequested();
    m_flushing = false;
}

void Document::undo()
{
    flushPendingEdits();
    m_undo->undo();
}

void Document::redo()
{
    flushPendingEdits();
    m_undo->redo();
}

bool Document::setText(const scenario::TextSource& source, bool typing)
{
    flushPendingEdits();
    scenario::TextSource next = source;
    next.documents = m_scenario.text.documents;
    if (next.kind == scenario::TextSource::Kind::Sample && !text::findSample(next.sample))
        return false;
    if (next.kind == scenario::TextSource::Kind::File && next.path.empty())
        return false;
    if (next == m_scenario.text)
        return false;
    m_undo->push(new SetTextCommand(this, std::move(next), typing));
    return true;
}

bool Document::setField(Field field, const FieldValue& value)
{
    flushPendingEdits();
    if (field == Field::TextSample) {
        // Through SetTextCommand: undo must bring back typed text or a file, not only a sample name.
        const auto* name = std::get_if<std::string>(&value);
        if (!name)
            return false;
        scenario::TextSource source = m_scenario.text;
        source.kind = scenario::TextSource::Kind::Sample;
        source.sample = *name;
        return setText(source);
    }
    if (field == Field::Nodes || field == Field::GpusPerNode) {
        // Through EditPlanCommand: the plan follows the cluster, and undo must restore both.
        scenario::Scenario probe = m_scenario;
        if (!setFieldValue(probe, field, value))
            return false;
        return setCluster(probe.hardware.nodes, probe.hardware.gpusPerNode);
    }
    scenario::Scenario probe = m_scenario;
    if (!setFieldValue(probe, field, value) || probe == m_scenario)
        return false;
    m_undo->push(new SetFieldCommand(this, field, value));
    return true;
}

bool Document::editPlan(const scenario::Hardware& hardware, const parallel::ParallelPlan& plan, const QString& text,
                        EditMerge merge, const network::TopologySpec* topology)
{
    flushPendingEdits();
    const network::TopologySpec& fabric = topology ? *topology : m_scenario.topology;
    if (hardware == m_scenario.hardware && plan == m_scenario.parallel && fabric == m_scenario.topology)
        return false;
    m_undo->push(new EditPlanCommand(this, hardware, plan, fabric, text, merge));
    return true;
}

bool Document::setTopology(const network::TopologySpec& topology, const QString& text, EditMerge merge)
{
    return editPlan(m_scenario.hardware, m_scenario.parallel, text, merge, &topology);
}

bool Document::setCluster(std::uint64_t nodes, std::uint64_t gpusPerNode)
{
    scenario::Scenario probe = m_scenario;
    probe.hardware.nodes = nodes;
    probe.hardware.gpusPerNode = gpusPerNode;
    scenario::fitPlanToCluster(probe);
    const bool nodesChanged = nodes != m_scenario.hardware.nodes;
    return editPlan(probe.hardware, probe.parallel, nodesChanged ? tr("Set nodes") : tr("Set GPUs per node"),
                    nodesChanged ? EditMerge::Nodes : EditMerge::GpusPerNode, &probe.topology);
}

bool Document::setDegree(parallel::Strategy strategy, std::uint64_t degree)
{
    scenario::Scenario probe = m_scenario;
    scenario::setParallelDegree(probe, strategy, degree);
    static const char* const names[] = {QT_TR_NOOP("Set data-parallel degree"), QT_TR_NOOP("Set pipeline-parallel degree"),
                                        QT_TR_NOOP("Set tensor-parallel degree"), QT_TR_NOOP("Set expert-parallel degree")};
    const int which = static_cast<int>(strategy);
    static_assert(int(EditMerge::EpDegree) - int(EditMerge::DpDegree) == int(parallel::Strategy::EP));
    return editPlan(probe.hardware, probe.parallel, tr(names[which]), EditMerge(int(EditMerge::DpDegree) + which));
}

bool Document::swapGpus(int a, int b)
{
    scenario::Scenario probe = m_scenario;
    if (a == b || a < 0 || b < 0 || !scenario::swapGpus(probe, std::uint64_t(a), std::uint64_t(b)))
        return false;
    return editPlan(probe.hardware, probe.parallel, tr("Swap GPU %1 and GPU %2").arg(a).arg(b));
}

bool Document::setLayerPartition(const std::vector<std::uint64_t>& partition)
{
    parallel::ParallelPlan plan = m_scenario.parallel;
    plan.layerPartition = partition;
    return editPlan(m_scenario.hardware, plan, partition.empty() ? tr("Reset layer partition") : tr("Edit layer partition"),
                    partition.empty() ? EditMerge::None : EditMerge::LayerPartition);
}

bool Document::setPipelineSchedule(parallel::PipelineSchedule schedule, std::uint64_t virtualStages)
{
    scenario::Scenario probe = m_scenario;
    probe.parallel.schedule = schedule;
    probe.parallel.virtualStages = virtualStages;
    scenario::dropStalePlanParts(probe);
    return editPlan(probe.hardware, probe.parallel, tr("Choose pipeline schedule"), EditMerge::PipelineSchedule);
}

bool Document::loadPreset(const QString& name, QString* error)
{
    flushPendingEdits();
    auto loaded = scenario::preset(name.toStdString());
    if (!loaded) {
        if (error)
            *error = qs(loaded.error().toString());
        return false;
    }
    m_undo->push(new ReplaceScenarioCommand(this, std::move(loaded).value(), tr("Load preset %1").arg(name)));
    return true;
}

void Document::newDocument()
{
    flushPendingEdits();
    replaceAll(startScenario(), QString());
}

bool Document::open(const QString& path, QString* error)
{
    flushPendingEdits();
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(tr("Cannot open %1: %2").arg(path, file.errorString()));
    if (file.size() > kMaxScenarioFileBytes)
        return fail(tr("%1 is %2 bytes: a scenario file is at most %3").arg(path).arg(file.size()).arg(kMaxScenarioFileBytes));
    const QByteArray bytes = file.read(kMaxScenarioFileBytes + 1);
    if (file.error() != QFileDevice::NoError)
        return fail(tr("Cannot read %1: %2").arg(path, file.errorString()));
    const scenario::ScenarioLoad load = scenario::loadScenario(std::string_view(bytes.constData(), std::size_t(bytes.size())),
                                                               path.toStdString());
    // A scenario that reads but does not validate (saved in the middle of an edit) opens as it is, as a
    // recovered autosave does (Autosave::read): problems() lists why, beside the fields, to fix and save.
    if (!load.scenario && !load.unchecked) {
        QStringList lines;
        for (const Error& e : load.errors)
            lines << qs(e.toString());
        return fail(lines.join(QLatin1Char('\n')));
    }
    replaceAll(load.scenario ? *load.scenario : *load.unchecked, QFileInfo(path).absoluteFilePath());
    return true;
}

bool Document::save(QString* error)
{
    if (m_filePath.isEmpty()) {
        if (error)
            *error = tr("The scenario has no file name yet: use Save As");
        return false;
    }
    return saveAs(m_filePath, error);
}

bool Document::saveAs(const QString& path, QString* error)
{
    flushPendingEdits();
    // core's atomic save: a temporary file beside the target, fsync, rename; a failure (full disk,
    // short write, bad path) leaves the old file as it was. Devices such as /dev/full are written
    // in place rather than replaced (QSaveFile would rename its temporary over the device node).
    const std::string json = scenario::scenarioToJson(m_scenario);
    if (const Status saved = saveFileAtomically(path.toStdString(), json); !saved.ok()) {
        std::string reason = saved.error().message; // "cannot save…: why"
        if (const auto colon = reason.find(": "); reason.rfind("cannot save", 0) == 0 && colon != std::string::npos)
            reason = reason.substr(colon + 2);
        if (error)
            *error = tr("Cannot save %1: %2").arg(path, qs(reason));
        return false;
    }
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const bool renamed = absolute != m_filePath;
    m_filePath = absolute;
    m_undo->setClean();
    if (renamed)
        emit titleChanged(title());
    return true;
}

void Document::applyField(Field field, const FieldValue& value)
{
    if (setFieldValue(m_scenario, field, value)) {
        changed();
    }
}

void Document::applyText(const scenario::TextSource& source)
{
    m_scenario.text = source;
    changed();
}

void Document::setFollowedToken(qint64 index)
{
    index = std::max<qint64>(index, -1);
    if (index == m_followedToken)
        return;
    m_followedToken = index;
    emit followedTokenChanged(index);
}

void Document::cancelDerivation()
{
    if (!m_deriving)
        return;
    m_job->cancel(); // the stopped job's result, if any, is dropped
    m_current = false;
    setDeriving(false);
    emit derivationCancelled();
}

void Document::applyPlan(const scenario::Hardware& hardware, const parallel::ParallelPlan& plan,
                         const network::TopologySpec& topology)
{
    m_scenario.hardware = hardware;
    m_scenario.parallel = plan;
    m_scenario.topology = topology;
    changed();
}

void Document::applyScenario(const scenario::Scenario& scenario)
{
    m_scenario = scenario;
    changed();
}

void Document::replaceAll(const scenario::Scenario& scenario, const QString& path)
{
    const bool wasModified = isModified();
    m_scenario = scenario;
    m_filePath = path;
    m_undo->clear(); // clean again; emits cleanChanged only when it was not
    if (!wasModified)
        emit titleChanged(title());
    changed();
}

void Document::setDeriving(bool deriving)
{
    if (m_deriving == deriving)
        return;
    m_deriving = deriving;
    emit derivingChanged(deriving);
}

void Document::changed()
{
    // The run block alone: nothing derived or simulated reads it, so the results stay current (unless
    // the scenario becomes, or stops being, invalid: the problems are the derivation's to report; or
    // the derivation or the step was cancelled, which any edit starts again).
    scenario::Scenario sameRun = m_basis;
    sameRun.run = m_scenario.run;
    const bool stepThere = m_results->isStepCurrent() || m_results->stepJob()->isBusy();
    if (m_basis.run != m_scenario.run && sameRun == m_scenario && m_problems.empty() && m_current && stepThere
        && scenario::validate(m_scenario).empty()) {
        m_basis = m_scenario;
        emit scenarioChanged();
        emit runChanged();
        return;
    }
    m_basis = m_scenario;
    ++m_generation; // before anyone hears of it: every result held is an older scenario's from now on
    emit scenarioChanged();
    rederive();
}

void Document::rederive()
{
    // A newer scenario supersedes whatever is running: the job stops it and drops its result.
    const quint64 generation = m_generation;
    m_current = true;

    std::vector<Error> problems = scenario::validate(m_scenario);
    if (!problems.empty()) {
        m_job->cancel();
        m_problems = std::move(problems);
        setDeriving(false);
        emit problemsChanged();
        return;
    }

    m_job->schedule([deriver = m_deriver, input = resolvedScenario(), generation](const Progress& progress) -> std::any {
        auto result = deriver->derive(input, progress);
        Outcome out;
        out.generation = generation;
        if (result)
            out.derivation = std::move(result).value();
        else
            out.error = result.error();
        return out;
    });
    setDeriving(true);
}

void Document::applyOutcome(const std::any& result)
{
    const auto& out = std::any_cast<const Outcome&>(result);
    setDeriving(false);
    if (out.error) {
        m_problems = {*out.error};
        emit problemsChanged();
        return;
    }
    m_derivation = out.derivation;
    m_derivationGeneration = out.generation;
    ++m_derivationCount;
    const bool hadProblems = !m_problems.empty();
    m_problems.clear();
    if (hadProblems)
        emit problemsChanged();
    emit derived(m_derivation);
}

bool Document::waitForDerivation(int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (m_deriving && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return !m_deriving;
}

} // namespace tw::ui
