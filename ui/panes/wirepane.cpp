#include "wirepane.h"

#include "collective/openmpi.h"
#include "network/overhead.h"
#include "settings/theme.h"

#include "charts/chartframe.h"
#include "charts/wirecharts.h"
#include "document/document.h"
#include "document/results.h"
#include "panes/panekit.h"
#include "panes/runpanel.h"
#include "scenario/sweep.h"
#include "views/busyveil.h"
#include "views/collectivebreakdownmodel.h"
#include "views/figuretablemodel.h"
#include "views/tokenchipview.h"
#include "views/wiregpuhover.h"
#include "views/wiregroups.h"
#include "views/wirelayout.h"
#include "views/wireview.h"
#include "settings/appsettings.h"
#include "workers/backgroundjob.h"

#include "base/unitparse.h"
#include "base/units.h"
#include "network/linkload.h"
#include "network/simresults.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QHeaderView>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {

using network::Protocol;
using network::TopologyKind;

constexpr int kSliderSteps = 1000;

// The animation plays one step in this many seconds of wall time.
const double kPlayDurations[] = {5, 10, 30, 60, 120};

const char* const kOpNames[network::kLinkOps] = {"AllReduce", "ReduceScatter", "AllGather", "Broadcast",
                                                 "Reduce", "All-to-All", "Send/Recv"};

// Tooltip lines per link: "DP AllReduce: 435.5 MB per step", largest first.
// The collectives using each link of the step's loads, largest first, when a tooltip asks (formatting
// them for every link of a 16,384-GPU fabric took 120 ms of the GUI thread at each new step).
LinkCallers callersOf(std::shared_ptr<const scenario::NetworkStage> network, const DisplayUnits& units)
{
    return [network = std::move(network), units](network::LinkId l) {
        QStringList out;
        if (!network || l >= network->loads.links.size())
            return out;
        std::vector<std::pair<double, QString>> parts;
        for (int s = 0; s < parallel::kStrategyCount; ++s)
            for (int o = 0; o < network::kLinkOps; ++o)
                if (const double b = network->loads.links[l].opBytes[s][o]; b > 0)
                    parts.emplace_back(b, QStringLiteral("%1 %2: %3 per step")
                                              .arg(qs(parallel::toString(parallel::Strategy(s))), QLatin1String(kOpNames[o]),
                                                   qs(formatBytes(b, units))));
        std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        for (auto& p : parts)
            out << p.second;
        return out;
    };
}

} // namespace

WirePane::WirePane(Document* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_clock(std::make_unique<QElapsedTimer>())
    , m_results(document->results())
{
    setObjectName(QStringLiteral("wirePane"));
    m_caption = panekit::caption(this, "wireCaption");
    auto* form = new QWidget(this);
    buildForm(form);
    QScrollArea* formScroll = panekit::formScroll(form, this);

    m_view = new WireView(this);
    m_view->setObjectName(QStringLiteral("wireView"));
    m_view->setMinimumHeight(200); // with the transport and the tabs, it fits 1280×720 unsqueezed
    // Hovering a GPU: what it does at the animation's time (issue #19), from the step drawn.
    m_view->setGpuToolTips([this](int gpu, double time) {
        const StepResult& r = result();
        const scenario::Derivation* d = r.derivation.get();
        return gpuToolTip({r.simulation.get(), d ? d->stage3.get() : nullptr, d ? &d->model : nullptr, time},
                          std::uint32_t(gpu));
    });

    // The transport under the drawing: play, the step's time line, the playing speed.
    auto* transport = new QWidget(this);
    auto* t = new QHBoxLayout(transport);
    t->setContentsMargins(0, 0, 0, 0);
    m_play = new QPushButton(tr("▶ Play"), transport);
    m_play->setObjectName(QStringLiteral("wirePlay"));
    m_play->setToolTip(tr("Play the simulated step (space)"));
    m_slider = new QSlider(Qt::Horizontal, transport);
    m_slider->setObjectName(QStringLiteral("wireTime"));
    m_slider->setRange(0, kSliderSteps);
    m_slider->setToolTip(tr("Scrub through the step"));
    m_timeLabel = new QLabel(transport);
    m_timeLabel->setObjectName(QStringLiteral("wireTimeLabel"));
    m_timeLabel->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("t = 888.8 ms of 888.8 ms")));
    m_speed = new QComboBox(transport);
    m_speed->setObjectName(QStringLiteral("wireSpeed"));
    for (double d : kPlayDurations)
        m_speed->addItem(tr("step in %1 s").arg(d), d);
    m_speed->setCurrentIndex(1);
    m_speed->setToolTip(tr("How long one training step takes to play"));
    t->addWidget(m_play);
    t->addWidget(m_slider, 1);
    t->addWidget(m_timeLabel);
    t->addWidget(m_speed);

    // What the followed token crosses (shown while a token is followed), its numbers linked to their chains.
    m_tokenCaption = new QLabel(this);
    m_tokenCaption->setObjectName(QStringLiteral("wireTokenCaption"));
    m_tokenCaption->setWordWrap(true);
    m_tokenCaption->setStyleSheet(QStringLiteral("QLabel { background: #fff7d6; color: #111827; border: 1px solid #111827; "
                                                 "border-radius: 6px; padding: 4px; }"));
    m_tokenCaption->hide();

    auto* top = new QWidget(this);
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(m_view, 1);
    topLayout->addWidget(buildTraceRow(top));
    topLayout->addWidget(transport);

    m_charts = new WireCharts(this);
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("wireTabs"));
    m_tabs->addTab(m_charts->throughputPlot(), tr("Link throughput"));
    m_tabs->addTab(m_charts->breakdownPlot(), tr("Where the step goes"));
    m_tabs->addTab(buildCollectiveTable(), tr("By collective"));
    // Scaling: the GPU list, run/cancel, the chart, the gaps to the paper's measurements.
    auto* scaling = new QWidget(this);
    auto* sl = new QVBoxLayout(scaling);
    sl->setContentsMargins(0, 0, 0, 0);
    auto* sweepBar = new QHBoxLayout;
    m_sweepGpus = new QLineEdit(scaling);
    m_sweepGpus->setObjectName(QStringLiteral("sweepGpus"));
    m_sweepGpus->setToolTip(tr("Cluster sizes to simulate: 1-7, or 1,2,4,8 (at most %1 sizes of at most %2 GPUs)")
                                .arg(scenario::kMaxSweepPoints)
                                .arg(scenario::kMaxSweepGpus));
    m_sweepStrong = new QCheckBox(tr("Strong scaling (fixed global batch)"), scaling);
    m_sweepStrong->setObjectName(QStringLiteral("sweepStrong"));
    m_sweepRun = new QPushButton(tr("Run sweep"), scaling);
    m_sweepRun->setObjectName(QStringLiteral("sweepRun"));
    m_sweepCancel = new QPushButton(tr("Cancel"), scaling);
    m_sweepCancel->setEnabled(false);
    m_sweepStatus = new QLabel(scaling);
    m_sweepStatus->setObjectName(QStringLiteral("sweepStatus"));
    m_sweepStatus->setWordWrap(true);
    sweepBar->addWidget(new QLabel(tr("GPUs"), scaling));
    sweepBar->addWidget(m_sweepGpus, 1);
    sweepBar->addWidget(m_sweepStrong);
    sweepBar->addWidget(m_sweepRun);
    sweepBar->addWidget(m_sweepCancel);
    sl->addLayout(sweepBar);
    sl->addWidget(m_sweepStatus);
    // The chart, and beside it what the model does not explain (the paper's measurements).
    m_sweepGaps = new QTextBrowser(scaling);
    m_sweepGaps->setObjectName(QStringLiteral("sweepGaps"));
    m_sweepGaps->setPlaceholderText(tr("For the paper testbed preset, the gaps between the model and the paper's "
                                       "measurements appear here."));
    auto* scalingSplit = new QSplitter(Qt::Horizontal, scaling);
    scalingSplit->setChildrenCollapsible(false);
    scalingSplit->addWidget(m_charts->scalingPlot());
    scalingSplit->addWidget(m_sweepGaps);
    scalingSplit->setStretchFactor(0, 3);
    scalingSplit->setStretchFactor(1, 2);
    sl->addWidget(scalingSplit, 1);
    m_tabs->addTab(scaling, tr("Scaling"));
    m_runPanel = new RunPanel(m_document, this);
    m_tabs->addTab(m_runPanel, tr("Run"));
    m_figures = new FigureTableModel(this);
    m_tabs->addTab(panekit::figurePage(this, m_figures, "stage5", tr("Click a figure to see where its number comes from."),
                                       Qt::Horizontal, &m_figureTable, &m_chain),
                   tr("Figures"));
    // No minimum of its own: its charts' (keepPlotRoom) reach the stage, which scrolls when the window
    // cannot give them their room.
    m_followChip = panekit::followChip(this, m_document);
    panekit::stageLayout(this, m_caption, formScroll, top, m_tabs, 470, 380, m_followChip);

    m_timer = new QTimer(this);
    m_timer->setInterval(16);
    connect(m_timer, &QTimer::timeout, this, &WirePane::tick);

    connect(m_play, &QPushButton::clicked, this, [this] { setPlaying(!isPlaying()); });
    // Space plays and pauses anywhere in the pane (a line edit still types its spaces: it claims the
    // key through ShortcutOverride).
    auto* space = new QShortcut(QKeySequence(Qt::Key_Space), this);
    space->setContext(Qt::WidgetWithChildrenShortcut);
    connect(space, &QShortcut::activated, this, [this] { setPlaying(!isPlaying()); });
    connect(m_slider, &QSlider::valueChanged, this, [this](int v) {
        if (m_updating || !m_drawn)
            return;
        setTime(m_drawn->simulation->stepSeconds * double(v) / kSliderSteps);
    });
    connect(m_view, &WireView::linkHovered, this, [this](int link) {
        if (link >= 0)
            setChartLink(network::LinkId(link));
    });
    // The document's results: the step (its progress here, over the drawing's caption), the sweep.
    m_results->setStepPreparation([view = QPointer<WireView>(m_view)]() -> StepPreparation {
        const QSizeF area = view ? view->drawingArea() : QSizeF();
        return [area](StepResult& r) {
            // The drawing's groups (every node and link read: 10 ms of the GUI thread at 98,304 GPUs) and
            // its first layout (a million links: 30 ms and its memory's page faults), off the GUI thread.
            r.groups = std::make_shared<const WireGroups>(groupNodes(*r.network->topology));
            if (area.isValid() && !area.isEmpty())
                r.layout = std::make_shared<WireLayout>(WireLayout::compute(*r.network->topology, area, -1, true, -1, r.groups));
        };
    });
    // While the current scenario's step is simulated, the veil over the drawing says so where the eye is,
    // with its progress and Cancel (the previous picture dimmed under it).
    m_veil = new BusyVeil(m_view);
    BackgroundJob* stepJob = m_results->stepJob();
    connect(stepJob, &BackgroundJob::started, this, [this] {
        const QString name = panekit::scenarioName(m_document).toHtmlEscaped();
        m_veil->showBusy(m_drawn ? tr("Simulating the step of <b>%1</b>…<br>Under this veil: the previous scenario's step.").arg(name)
                                 : tr("Simulating the step of <b>%1</b>…").arg(name));
        showStatus(m_drawn ? tr("Simulating the new step… (the drawing shows the previous one)") : tr("Simulating the step…"),
                   false);
    });
    connect(stepJob, &BackgroundJob::progressed, m_veil, &BusyVeil::setProgress);
    // The charts and tables under the drawing are the previous step's too: veiled with it.
    m_chartVeil = new BusyVeil(m_tabs);
    m_chartVeil->setObjectName(QStringLiteral("wireChartVeil"));
    connect(m_veil, &BusyVeil::busyShown, m_chartVeil, [this] {
        m_chartVeil->showBusy(tr("The charts of <b>%1</b> come with its step.").arg(panekit::scenarioName(m_document).toHtmlEscaped()),
                              false);
    });
    connect(m_veil, &BusyVeil::busyHidden, m_chartVeil, &BusyVeil::hideBusy);
    // The previous step does not play on under the veil (its time line moved under the pointer): paused,
    // its play and time line disabled until the new step is drawn (or the simulation is cancelled).
    connect(m_veil, &BusyVeil::busyShown, this, [this] {
        setPlaying(false);
        m_play->setEnabled(false);
        m_slider->setEnabled(false);
    });
    connect(m_veil, &BusyVeil::busyHidden, this, [this] {
        m_play->setEnabled(true);
        m_slider->setEnabled(true);
    });
    connect(stepJob, &BackgroundJob::cancelled, this, [this] {
        m_veil->hideBusy();
        if (m_document->isDeriving() || m_document->derivationGeneration() != m_document->generation())
            return; // superseded by an edit: the next step is on its way
        showStatus(tr("Simulation cancelled: the drawing shows the previous step. Edit anything to simulate again."),
                   true);
    });
    connect(m_veil, &BusyVeil::cancelRequested, m_results, &Results::cancelStep);
    connect(m_results, &Results::stepFinished, this, &WirePane::applyStep);
    connect(m_results, &Results::stepRefused, this, [this](const QString& reason) {
        m_veil->hideBusy();
        showStatus(reason + QLatin1Char('.'), true);
    });
    connect(m_results, &Results::outdated, this, &WirePane::showOutdated);

    connect(m_sweepRun, &QPushButton::clicked, this, [this] { runSweep(m_sweepGpus->text()); });
    connect(m_sweepGpus, &QLineEdit::returnPressed, this, [this] { runSweep(m_sweepGpus->text()); });
    BackgroundJob* sweepJob = m_results->sweepJob();
    connect(m_sweepCancel, &QPushButton::clicked, m_results, &Results::cancelSweep);
    connect(sweepJob, &BackgroundJob::started, this, [this] {
        m_sweepCancel->setEnabled(true);
        m_sweepStatus->setText(tr("Simulating the sizes…"));
    });
    connect(sweepJob, &BackgroundJob::progressed, this, [this](double f) {
        m_sweepStatus->setText(tr("Simulating the sizes… %1 %").arg(int(f * 100)));
    });
    connect(sweepJob, &BackgroundJob::cancelled, this, [this] {
        m_sweepCancel->setEnabled(false);
        const bool edited = m_document->isDeriving() || m_document->derivationGeneration() != m_document->generation();
        m_sweepStatus->setText(edited ? tr("The scenario changed, so the sweep stopped: press Run sweep to simulate these "
                                           "sizes for it.")
                                      : tr("Sweep cancelled."));
    });
    connect(m_results, &Results::swept, this, &WirePane::applySweep);

    connect(m_figureTable, &QAbstractItemView::clicked, this, [this](const QModelIndex& index) {
        showFigure(m_figures->data(index, FigureTableModel::FigureIdRole).toString());
    });
    connect(m_document, &Document::scenarioChanged, this, &WirePane::showScenario);
    connect(m_document, &Document::derived, this, &WirePane::onDerived);
    // The live thread: the followed token's links on the drawn fabric.
    connect(m_document, &Document::followedTokenChanged, this, [this] {
        // Hovering in stage 1 moves it often: routed when this pane is on screen.
        if (isVisible())
            updateTrace();
        else
            m_traceStale = true;
    });
    panekit::wireFigureLinks(
        m_summary, [this] { return &m_allFigures; },
        [this](const QString& id) {
            if (showFigure(id))
                m_tabs->setCurrentIndex(3);
        },
        [this] { return units(); });
    panekit::wireFigureLinks(
        m_tokenCaption, [this] { return &m_allFigures; },
        [this](const QString& id) {
            if (showFigure(id))
                m_tabs->setCurrentIndex(3);
        },
        [this] { return units(); });
    // The viewer's preferences, live.
    connect(AppSettings::instance(), &AppSettings::displayUnitsChanged, this, [this] { applyUnits(); });
    connect(AppSettings::instance(), &AppSettings::animationSpeedChanged, this, [this] { updateTimeLabel(); });
    m_figures->setDisplayUnits(units());
    m_byCollective->setDisplayUnits(units());
    m_view->setDisplayUnits(units());
    m_charts->setDisplayUnits(units());
    connect(m_document, &Document::problemsChanged, this, [this] {
        if (!m_document->problems().empty())
            m_veil->hideBusy(); // no step comes: the status says why
        if (!m_document->problems().empty())
            showStatus(tr("The scenario cannot be derived (see the other stages): the drawing shows the last "
                          "step that could."),
                       true);
    });

    showScenario();
    updateTimeLabel();
}

WirePane::~WirePane() = default;

const StepResult& WirePane::result() const
{
    static const StepResult none;
    return m_drawn ? *m_drawn : none;
}

bool WirePane::isCurrent() const
{
    return m_drawn && m_results->isCurrent(m_drawn->generation);
}

void WirePane::onDerived()
{
    if (isVisible())
        requestStep();
}

void WirePane::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    requestStep(); // nothing when the current step is drawn or on its way
    if (m_traceStale)
        updateTrace();
}

void WirePane::requestStep()
{
    if (!m_document->derivation())
        return;
    m_results->requestStep();
}

void WirePane::showOutdated()
{
    // The scenario changed: what is drawn is the previous scenario's until the new step arrives, and the
    // veil over it says so.
    const QString name = panekit::scenarioName(m_document);
    if (m_drawn) {
        showStatus(tr("The drawing shows the previous scenario's step; the current one is simulated when it is derived."),
                   false);
        m_veil->showBusy(tr("The scenario changed: <b>%1</b>'s step is simulated next.<br>Under this veil: the previous "
                            "scenario's step.")
                             .arg(name.toHtmlEscaped()),
                         false);
    }
    if (const auto sweep = m_results->sweep(); sweep && !m_results->isCurrent(sweep->generation) && m_charts->hasSweep()) {
        m_charts->clearSweep(tr("Scaling: run the sweep again for this scenario"));
        m_sweepGaps->clear();
        m_sweepStatus->setText(tr("The sweep shown before was run for %1; the scenario has changed since. Press Run sweep "
                                  "to simulate these sizes for %2.")
                                   .arg(qs(sweep->scenarioName.empty() ? std::string("another scenario") : sweep->scenarioName),
                                        name));
        m_sweepCancel->setEnabled(false);
        fillFigures();
    }
}

QPushButton* WirePane::cancelButton() const
{
    return m_veil->cancelButton();
}

// "By collective": which collective the step's communication goes to (StepSimulation::byCollective).
QWidget* WirePane::buildCollectiveTable()
{
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* caption = new QLabel(tr("Calls and bytes on the wire per step; in flight and exposed (what compute waited on): "
                                  "means per GPU. Bold: the largest wait."),
                               page);
    caption->setWordWrap(true);
    m_byCollective = new CollectiveBreakdownModel(this);
    auto* table = new QTableView(page);
    table->setObjectName(QStringLiteral("byCollectiveTable"));
    table->setModel(m_byCollective);
    table->verticalHeader()->hide();
    // Compact rows: a 1280×720 window shows five or six of them under the fabric.
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(caption);
    layout->addWidget(table, 1);
    return page;
}

void WirePane::applyStep(const std::shared_ptr<const StepResult>& result)
{
    m_veil->hideBusy();
    if (!result->ok()) {
        if (result->cancelled)
            return; // the job's cancelled() said it
        showStatus(tr("This scenario cannot be simulated: %1. The drawing shows the last step that could.")
                       .arg(qs(result->error ? result->error->toString() : std::string("no step"))),
                   true);
        return;
    }
    const bool sameShape = m_drawn && m_drawn->network->topology->links().size() == result->network->topology->links().size();
    // The previous step outlives the view's switch to the new one and is freed on a pool thread.
    std::shared_ptr<const StepResult> previous = std::exchange(m_drawn, result);
    std::shared_ptr<const TraceResult> previousTrace = std::exchange(m_drawnTrace, nullptr);
    const StepResult& r = *m_drawn;
    const network::StepSimulation& sim = *r.simulation;
    const network::Topology& topology = *r.network->topology;
    auto loads = std::shared_ptr<const network::LinkLoads>(r.network, &r.network->loads);
    m_view->setNetwork(r.network->topology, loads, r.simulation, r.groups, r.layout);
    m_view->setLinkCallers(callersOf(r.network, units()));
    releaseLater(std::move(previous), std::move(previousTrace));

    // The throughput chart: the hovered link survives when the fabric kept its shape, else the most
    // utilized one (the bottleneck).
    if (!sameShape || !m_chartLink || *m_chartLink >= topology.links().size())
        m_chartLink = network::mostUtilizedLink(topology, sim);
    m_charts->setThroughput(&topology, &sim, m_chartLink);
    std::vector<std::uint32_t> stageOf;
    if (r.derivation && r.derivation->stage3)
        for (const parallel::MeshCoord& c : r.derivation->stage3->mesh)
            stageOf.push_back(c.pp);
    m_charts->setBreakdown(sim, stageOf);
    m_byCollective->setStep(sim.byCollective, sim.figures);
    for (QCustomPlot* plot : {m_charts->throughputPlot(), m_charts->breakdownPlot()})
        setResultGeneration(plot, r.generation);
    setTime(std::min(m_time, sim.stepSeconds));

    auto percent = [](double x) {
        return qs(formatCount(100.0 * x, x > 0 && x < 0.01 ? 3 : 1)) + QStringLiteral(" %");
    };
    const double idle = sim.idleSeconds; // core rounds a difference below a billionth of the step to 0
    // Every number a link to its figure: hover for the formula, click for the chain.
    const FigureSet& sf = sim.figures;
    QString summary = tr("Step time <b>%1</b>: compute %2, exposed communication %3 (%4 of the step), idle %5.")
                          .arg(panekit::figureLink(sf, "sim.step_time_s", qs(formatSeconds(sim.stepSeconds))),
                               panekit::figureLink(sf, "sim.compute_s", qs(formatSeconds(sim.computeSeconds))),
                               panekit::figureLink(sf, "sim.exposed_comm_s", qs(formatSeconds(sim.exposedCommSeconds))),
                               panekit::figureLink(sf, "sim.comm_share", percent(sim.commShare)),
                               panekit::figureLink(sf, "sim.bubble_s", qs(formatSeconds(idle))));
    if (sim.mfu > 0)
        summary += tr(" MFU %1, HFU %2.")
                       .arg(panekit::figureLink(sf, "sim.mfu", percent(sim.mfu)),
                            panekit::figureLink(sf, "sim.hfu", percent(sim.hfu)));
    summary += tr(" %1 flows on %2 links").arg(qs(formatInteger(std::int64_t(sim.flows)))).arg(topology.links().size());
    if (sim.symmetryFactor > 1 || sim.closedFormInstances > 0)
        summary += tr(" (%1 simulated: symmetric GPUs share one simulation, private collectives in closed form)")
                       .arg(qs(formatInteger(std::int64_t(sim.simulatedFlows))));
    summary += QLatin1Char('.');
    m_summary->setText(summary);
    showStatus(tr("Simulated: the drawing is the current scenario's step."), false);
    fillFigures();
    updateTrace();
}

void WirePane::applySweep(const std::shared_ptr<const SweepResult>& result)
{
    m_sweepCancel->setEnabled(false);
    if (!result->sweep) {
        m_sweepStatus->setText(tr("The sweep stopped: %1").arg(qs(result->sweep.error().toString())));
        return;
    }
    const scenario::Sweep& sweep = result->sweep.value();
    m_charts->setSweep(sweep);
    setResultGeneration(m_charts->scalingPlot(), result->generation);
    QStringList failed;
    for (const scenario::SweepPoint& p : sweep.points)
        if (!p.ok)
            failed << tr("%1 GPUs: %2").arg(p.gpus).arg(qs(p.error.toString()));
    m_sweepStatus->setText(failed.isEmpty() ? tr("%1 sizes simulated.").arg(sweep.points.size())
                                            : tr("Not simulated — %1").arg(failed.join(QStringLiteral("; "))));
    QString gaps;
    for (const std::string& g : sweep.gaps)
        gaps += QStringLiteral("<p>%1</p>").arg(qs(g).toHtmlEscaped());
    m_sweepGaps->setHtml(gaps);
    fillFigures();
}

void WirePane::fillFigures()
{
    // The table lists stage 5's figures; the chains can walk back through every stage.
    m_allFigures = FigureSet();
    FigureSet shown;
    const StepResult& r = result();
    if (r.derivation)
        for (const Figure& f : r.derivation->figures.all())
            m_allFigures.add(f);
    auto addBoth = [&](const FigureSet& set) {
        for (const Figure& f : set.all()) {
            m_allFigures.add(f);
            shown.add(f);
        }
    };
    if (r.network)
        addBoth(r.network->figures);
    if (r.simulation)
        addBoth(r.simulation->figures);
    if (const scenario::TokenTrace* trace = tokenTrace())
        addBoth(trace->figures);
    // The sweep's figures when it is the current scenario's.
    if (const auto sweep = m_results->sweep(); sweep && m_results->isCurrent(sweep->generation) && sweep->sweep)
        for (const Figure& f : sweep->sweep.value().figures.all())
            m_allFigures.add(f);
    m_figures->setFigures(std::move(shown));
}

bool WirePane::showFigure(const QString& id)
{
    if (m_runPanel->showFigure(id)) { // a "run.*" figure: its own tab
        panekit::reveal(m_runPanel, this);
        return true;
    }
    return panekit::showFigureChain(m_chain, m_allFigures, id, units());
}

void WirePane::showStatus(const QString& text, bool problem)
{
    m_status->setText(text);
    theme::showProblem(m_status, problem);
}

void WirePane::setChartLink(std::optional<network::LinkId> link)
{
    if (link == m_chartLink)
        return;
    m_chartLink = link;
    if (m_drawn)
        m_charts->setThroughput(m_drawn->network->topology.get(), m_drawn->simulation.get(), m_chartLink);
    m_charts->setTime(m_time);
}

double WirePane::busiestTime() const
{
    return m_drawn ? network::busiestTime(*m_drawn->simulation) : 0.0;
}

bool WirePane::waitForSimulation(int timeoutMs)
{
    return m_results->waitUntilIdle(timeoutMs); // the followed token too, traced once the step is drawn
}

void WirePane::setTime(double seconds)
{
    const double step = m_drawn ? m_drawn->simulation->stepSeconds : 0.0;
    m_time = std::clamp(seconds, 0.0, step);
    m_view->setTime(m_time);
    m_charts->setTime(m_time);
    m_updating = true;
    m_slider->setValue(step > 0 ? int(std::lround(m_time / step * kSliderSteps)) : 0);
    m_updating = false;
    updateTimeLabel();
}

double WirePane::time() const
{
    return m_time;
}

void WirePane::setPlaying(bool playing)
{
    if (playing == isPlaying() || (playing && !m_play->isEnabled())) // disabled: veiled (a step on its way)
        return;
    if (playing && m_drawn && m_drawn->simulation->stepSeconds > 0) {
        m_clock->start();
        m_timer->start();
    } else {
        m_timer->stop();
    }
    m_play->setText(isPlaying() ? tr("❚❚ Pause") : tr("▶ Play"));
}

bool WirePane::isPlaying() const
{
    return m_timer->isActive();
}

void WirePane::tick()
{
    if (!m_drawn)
        return;
    const double step = m_drawn->simulation->stepSeconds;
    const double wall = playSeconds();
    const double dt = double(m_clock->restart()) / 1000.0;
    double t = m_time + dt * step / std::max(wall, 1e-3);
    if (t > step)
        t = 0; // loop
    setTime(t);
}

double WirePane::playSeconds() const
{
    return m_speed->currentData().toDouble() / std::max(AppSettings::instance()->animationSpeed(), 1e-3);
}

DisplayUnits WirePane::units() const
{
    return AppSettings::instance()->displayUnits();
}

void WirePane::applyUnits()
{
    const DisplayUnits u = units();
    m_figures->setDisplayUnits(u);
    m_byCollective->setDisplayUnits(u);
    m_view->setDisplayUnits(u);
    m_charts->setDisplayUnits(u);
    if (m_drawn) {
        m_view->setLinkCallers(callersOf(m_drawn->network, u));
        m_charts->setThroughput(m_drawn->network->topology.get(), m_drawn->simulation.get(), m_chartLink);
        m_charts->setTime(m_time);
    }
    showScenario(); // the NIC rate's text
    updateTrace();
    const QString shown = m_chain->property("figureId").toString();
    if (!shown.isEmpty())
        showFigure(shown);
}

void WirePane::updateTimeLabel()
{
    const double step = m_drawn ? m_drawn->simulation->stepSeconds : 0.0;
    m_timeLabel->setText(step > 0 ? tr("t = %1 of %2").arg(qs(formatSeconds(m_time)), qs(formatSeconds(step)))
                                  : tr("no step yet"));
}

bool WirePane::runSweep(const QString& gpus)
{
    auto list = scenario::parseGpuList(gpus.toStdString());
    if (!list) {
        m_sweepStatus->setText(tr("GPUs: %1").arg(qs(list.error().toString())));
        theme::showProblem(m_sweepStatus, true);
        return false;
    }
    theme::showProblem(m_sweepStatus, false);
    scenario::SweepOptions options;
    options.gpus = std::move(list).value();
    options.strong = m_sweepStrong->isChecked();
    if (!m_results->requestSweep(options)) {
        m_sweepStatus->setText(tr("The scenario cannot be derived (see the other stages): fix it to run a sweep."));
        theme::showProblem(m_sweepStatus, true);
        return false;
    }
    return true;
}

QWidget* WirePane::drawing() const
{
    return m_view;
}

void WirePane::zoomDrawing(double factor)
{
    if (!m_zoomBeforeZoom)
        m_zoomBeforeZoom = m_view->zoom();
    m_view->setZoom(m_view->zoom() * factor);
}

void WirePane::fitDrawing()
{
    m_view->fitToView(); // the zoom from before stays remembered for restoreDrawing
}

void WirePane::restoreDrawing()
{
    if (m_zoomBeforeZoom)
        m_view->setZoom(*m_zoomBeforeZoom);
    m_zoomBeforeZoom.reset();
}

} // namespace tw::ui
