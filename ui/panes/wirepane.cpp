#include "wirepane.h"

#include "collective/openmpi.h"
#include "network/overhead.h"
#include "settings/theme.h"

#include "charts/wirecharts.h"
#include "document/document.h"
#include "panes/panekit.h"
#include "scenario/sweep.h"
#include "views/figuretablemodel.h"
#include "views/tokenchipview.h"
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
// The largest server the one-server fabrics hold (a DGX has 8 GPUs; HGX-2 class machines 16).

const TopologyKind kKinds[] = {TopologyKind::PcieServer, TopologyKind::NvSwitchNode, TopologyKind::LeafSpine,
                               TopologyKind::PaperTestbed};
const char* const kKindNames[] = {QT_TRANSLATE_NOOP("WirePane", "PCIe server (one node)"),
                                  QT_TRANSLATE_NOOP("WirePane", "NVSwitch node (DGX-like)"),
                                  QT_TRANSLATE_NOOP("WirePane", "Leaf–spine of nodes"),
                                  QT_TRANSLATE_NOOP("WirePane", "Paper testbed (10 GbE)")};
const Protocol kPcie[] = {Protocol::PcieGen3, Protocol::PcieGen4, Protocol::PcieGen5};
const Protocol kNics[] = {Protocol::InfinibandHdr, Protocol::InfinibandNdr, Protocol::RoCEv2,
                          Protocol::Ethernet10G,   Protocol::Ethernet25G,   Protocol::Ethernet100G,
                          Protocol::Ethernet400G};
// The animation plays one step in this many seconds of wall time.
const double kPlayDurations[] = {5, 10, 30, 60, 120};

const char* const kOpNames[network::kLinkOps] = {"AllReduce", "ReduceScatter", "AllGather", "Broadcast",
                                                 "Reduce", "All-to-All", "Send/Recv"};
const char* const kStrategyNames[4] = {"DP", "PP", "TP", "EP"};

// Tooltip lines per link: "DP AllReduce: 435.5 MB per step", largest first.
std::vector<QStringList> callersOf(const network::LinkLoads& loads, const DisplayUnits& units)
{
    std::vector<QStringList> out(loads.links.size());
    for (std::size_t l = 0; l < loads.links.size(); ++l) {
        std::vector<std::pair<double, QString>> parts;
        for (int s = 0; s < 4; ++s)
            for (int o = 0; o < network::kLinkOps; ++o)
                if (const double b = loads.links[l].opBytes[s][o]; b > 0)
                    parts.emplace_back(b, QStringLiteral("%1 %2: %3 per step")
                                              .arg(QLatin1String(kStrategyNames[s]), QLatin1String(kOpNames[o]),
                                                   qs(formatBytes(b, units))));
        std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        for (auto& p : parts)
            out[l] << p.second;
    }
    return out;
}

} // namespace

WireResult simulateWire(const scenario::Scenario& scenario, std::shared_ptr<const scenario::Derivation> derivation,
                        const Progress& progress)
{
    WireResult out;
    out.scenario = std::make_shared<const scenario::Scenario>(scenario);
    out.derivation = derivation;
    if (!derivation) {
        out.error = makeError("nothing to simulate: the scenario has not been derived");
        return out;
    }
    // The fabric and its link loads: the first 20 % of the progress bar, the simulation the rest.
    Progress first;
    first.stop = progress.stop;
    first.report = [&](double f) { progress(0.2 * f); };
    auto network = scenario::deriveNetwork(scenario, *derivation, first);
    if (!network) {
        out.cancelled = progress.stopRequested();
        out.error = network.error();
        return out;
    }
    out.network = network.value();
    const network::SimulationOptions options = scenario::simulationOptions(*derivation, true); // the animation's samples
    Progress rest;
    rest.stop = progress.stop;
    rest.report = [&](double f) { progress(0.2 + 0.8 * f); };
    auto sim = network::simulateStep(*out.network->topology, *derivation->stage3, *derivation->stage4, options, rest);
    if (!sim) {
        out.cancelled = progress.stopRequested();
        out.error = sim.error();
        return out;
    }
    out.simulation = std::make_shared<const network::StepSimulation>(std::move(sim).value());
    progress(1.0);
    return out;
}

WirePane::WirePane(Document* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_clock(std::make_unique<QElapsedTimer>())
{
    setObjectName(QStringLiteral("wirePane"));
    m_caption = panekit::caption(this, "wireCaption");
    auto* form = new QWidget(this);
    buildForm(form);
    QScrollArea* formScroll = panekit::formScroll(form, this);

    m_view = new WireView(this);
    m_view->setObjectName(QStringLiteral("wireView"));
    m_view->setMinimumHeight(260);

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
    topLayout->addWidget(m_tokenCaption);
    topLayout->addWidget(transport);

    m_charts = new WireCharts(this);
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("wireTabs"));
    m_tabs->addTab(m_charts->throughputPlot(), tr("Link throughput"));
    m_tabs->addTab(m_charts->breakdownPlot(), tr("Where the step goes"));
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
    m_figures = new FigureTableModel(this);
    m_tabs->addTab(panekit::figurePage(this, m_figures, "stage5", tr("Click a figure to see where its number comes from."),
                                       Qt::Horizontal, &m_figureTable, &m_chain),
                   tr("Figures"));
    m_tabs->setMinimumHeight(180);
    m_followChip = panekit::followChip(this, m_document);
    panekit::stageLayout(this, m_caption, formScroll, top, m_tabs, 470, 380, m_followChip);

    m_job = new BackgroundJob(this);
    m_sweepJob = new BackgroundJob(this);
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
        if (m_updating || !m_result.simulation)
            return;
        setTime(m_result.simulation->stepSeconds * double(v) / kSliderSteps);
    });
    connect(m_view, &WireView::linkHovered, this, [this](int link) {
        if (link >= 0)
            setChartLink(network::LinkId(link));
    });
    connect(m_job, &BackgroundJob::started, this, [this] {
        m_progress->setValue(0);
        m_progress->show();
        m_cancel->show();
        showStatus(m_result.simulation ? tr("Simulating the new step… (the drawing shows the previous one)")
                                       : tr("Simulating the step…"),
                   false);
    });
    connect(m_job, &BackgroundJob::progressed, this, [this](double f) { m_progress->setValue(int(f * 100)); });
    connect(m_job, &BackgroundJob::finished, this,
            [this](const std::any& r) { applyResult(std::any_cast<WireResult>(r)); });
    connect(m_job, &BackgroundJob::cancelled, this, [this] {
        m_progress->hide();
        m_cancel->hide();
        m_current = false;
        showStatus(tr("Simulation cancelled: the drawing shows the previous step. Edit anything to simulate again."),
                   true);
    });
    connect(m_cancel, &QPushButton::clicked, m_job, &BackgroundJob::cancel);

    connect(m_sweepRun, &QPushButton::clicked, this, [this] { runSweep(m_sweepGpus->text()); });
    connect(m_sweepGpus, &QLineEdit::returnPressed, this, [this] { runSweep(m_sweepGpus->text()); });
    connect(m_sweepCancel, &QPushButton::clicked, m_sweepJob, &BackgroundJob::cancel);
    connect(m_sweepJob, &BackgroundJob::started, this, [this] {
        m_sweepCancel->setEnabled(true);
        m_sweepStatus->setText(tr("Simulating the sizes…"));
    });
    connect(m_sweepJob, &BackgroundJob::progressed, this, [this](double f) {
        m_sweepStatus->setText(tr("Simulating the sizes… %1 %").arg(int(f * 100)));
    });
    connect(m_sweepJob, &BackgroundJob::cancelled, this, [this] {
        m_sweepCancel->setEnabled(false);
        m_sweepStatus->setText(tr("Sweep cancelled."));
    });
    connect(m_sweepJob, &BackgroundJob::finished, this, [this](const std::any& r) {
        m_sweepCancel->setEnabled(false);
        const auto& result = std::any_cast<const Result<scenario::Sweep>&>(r);
        if (!result) {
            m_sweepStatus->setText(tr("The sweep stopped: %1").arg(qs(result.error().toString())));
            return;
        }
        const scenario::Sweep& sweep = result.value();
        m_charts->setSweep(sweep);
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
        for (const Figure& f : sweep.figures.all())
            m_allFigures.add(f);
        fillFigures();
    });

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
    m_view->setDisplayUnits(units());
    m_charts->setDisplayUnits(units());
    connect(m_document, &Document::problemsChanged, this, [this] {
        if (!m_document->problems().empty())
            showStatus(tr("The scenario cannot be derived (see the other stages): the drawing shows the last "
                          "step that could."),
                       true);
    });

    showScenario();
    updateTimeLabel();
}

WirePane::~WirePane() = default;

void WirePane::buildForm(QWidget* form)
{
    auto* layout = new QVBoxLayout(form);
    auto addForm = [&](const QString& title) { return panekit::formGroup(layout, title); };
    auto spin = [&](const char* name, int lo, int hi, const QString& tip) {
        auto* s = new QSpinBox(form);
        s->setObjectName(QString::fromLatin1(name));
        s->setRange(lo, hi);
        s->setKeyboardTracking(false);
        s->setToolTip(tip);
        return s;
    };
    auto combo = [&](const char* name, const QString& tip) {
        auto* c = new QComboBox(form);
        c->setObjectName(QString::fromLatin1(name));
        c->setToolTip(tip);
        return c;
    };

    QFormLayout* fabric = addForm(tr("Fabric"));
    m_kind = combo("fabricKind", tr("What connects the GPUs: one server, or servers on a network"));
    for (const char* name : kKindNames)
        m_kind->addItem(tr(name));
    fabric->addRow(tr("Kind"), m_kind);
    m_nodes = spin("wireNodes", 1, 16384, tr("Servers in the cluster (stage 3's nodes; the plan follows)"));
    fabric->addRow(tr("Nodes"), m_nodes);
    m_clusterLabel = new QLabel(form);
    m_clusterLabel->setObjectName(QStringLiteral("wireCluster"));
    m_clusterLabel->setWordWrap(true);
    fabric->addRow(m_clusterLabel);
    m_fabricProblem = panekit::problemLabel(form, "fabricProblem");
    fabric->addRow(m_fabricProblem);

    QFormLayout* server = addForm(tr("Inside a server"));
    m_serverBox = static_cast<QGroupBox*>(server->parentWidget());
    m_pcie = combo("pcieGeneration", tr("The PCIe generation of the x16 links (GPUs, switches, NICs)"));
    for (Protocol p : kPcie)
        m_pcie->addItem(qs(network::displayName(p)), int(p));
    server->addRow(tr("PCIe"), m_pcie);
    m_gpusPerSwitch = spin("gpusPerPcieSwitch", 0, 16, tr("GPUs behind each PCIe switch (0: on the CPU's own lanes)"));
    m_gpusPerSwitch->setSpecialValueText(tr("on the CPU"));
    server->addRow(tr("GPUs per PCIe switch"), m_gpusPerSwitch);
    m_gpuDirect = new QCheckBox(tr("GPUDirect peer-to-peer and RDMA"), form);
    m_gpuDirect->setObjectName(QStringLiteral("gpuDirect"));
    m_gpuDirect->setToolTip(tr("Off: GPU data crossing PCIe is staged through host memory"));
    server->addRow(m_gpuDirect);
    m_intraNode = combo("intraNode", tr("How the GPUs of one server of a leaf–spine fabric talk"));
    m_intraNode->addItem(tr("PCIe only"), int(network::IntraNode::Pcie));
    m_intraNode->addItem(tr("NVLink / NVSwitch"), int(network::IntraNode::NvSwitch));
    server->addRow(tr("Servers"), m_intraNode);
    m_nvlink = combo("nvlinkGeneration", tr("NVLink generation: auto follows the GPU (A100: NVLink 3, H100: NVLink 4)"));
    m_nvlink->addItem(tr("auto"), -1);
    m_nvlink->addItem(qs(network::displayName(Protocol::NvLink3)), int(Protocol::NvLink3));
    m_nvlink->addItem(qs(network::displayName(Protocol::NvLink4)), int(Protocol::NvLink4));
    server->addRow(tr("NVLink"), m_nvlink);

    QFormLayout* net = addForm(tr("Network"));
    m_networkBox = static_cast<QGroupBox*>(net->parentWidget());
    m_testbedNote = new QLabel(tr("The paper's appendix A.3: one GPU per server on the CPU's PCIe lanes, one "
                                  "10 Gb/s Ethernet NIC each, one switch; PyTorch over TCP sockets, so every byte "
                                  "is staged through host memory (no GPUDirect)."),
                               form);
    m_testbedNote->setObjectName(QStringLiteral("testbedNote"));
    m_testbedNote->setWordWrap(true);
    layout->insertWidget(layout->indexOf(m_networkBox), m_testbedNote);
    m_nicPlacement = combo("nicPlacement", tr("One NIC per GPU (rail-optimized) or one per server"));
    m_nicPlacement->addItem(tr("one per GPU (rails)"), int(network::NicPlacement::PerGpu));
    m_nicPlacement->addItem(tr("one per server"), int(network::NicPlacement::PerNode));
    net->addRow(tr("NICs"), m_nicPlacement);
    m_nicProtocol = combo("nicProtocol", tr("The NICs' protocol and rate"));
    for (Protocol p : kNics)
        m_nicProtocol->addItem(qs(network::displayName(p)), int(p));
    net->addRow(tr("NIC protocol"), m_nicProtocol);
    // The protocol's modelled packet overhead, and beside it what real TCP on this machine's loopback
    // carries per packet (issue #10: the committed Open MPI measurements).
    m_overheadNote = new QLabel(form);
    m_overheadNote->setObjectName(QStringLiteral("overheadNote"));
    m_overheadNote->setWordWrap(true);
    m_overheadNote->setForegroundRole(QPalette::PlaceholderText);
    m_overheadNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_overheadNote->setContentsMargins(6, 0, 6, 0);
    m_nicRate = new QLineEdit(form);
    m_nicRate->setObjectName(QStringLiteral("nicRate"));
    m_nicRate->setToolTip(tr("Each NIC's rate per direction: auto (the protocol's), or e.g. 100Gb/s, 12.5GB/s"));
    net->addRow(tr("NIC rate"), m_nicRate);
    m_nicRateProblem = panekit::problemLabel(form, "nicRateProblem");
    net->addRow(m_nicRateProblem);
    m_oversubscription = new QDoubleSpinBox(form);
    m_oversubscription->setObjectName(QStringLiteral("oversubscription"));
    m_oversubscription->setRange(1, 64);
    m_oversubscription->setDecimals(1);
    m_oversubscription->setSingleStep(0.5);
    m_oversubscription->setSuffix(QStringLiteral(" : 1"));
    m_oversubscription->setKeyboardTracking(false);
    m_oversubscription->setToolTip(tr("A leaf's downlink : uplink capacity (1 : 1 is non-blocking)"));
    net->addRow(tr("Oversubscription"), m_oversubscription);
    m_nicsPerLeaf = spin("nicsPerLeaf", 1, 512, tr("NIC ports per leaf switch"));
    net->addRow(tr("NICs per leaf"), m_nicsPerLeaf);
    m_spines = spin("spines", 1, 256, tr("Spine switches (every leaf has one uplink to each)"));
    net->addRow(tr("Spines"), m_spines);

    layout->insertWidget(layout->indexOf(m_networkBox) + 1, m_overheadNote); // shown with every kind

    QFormLayout* sim = addForm(tr("The simulated step"));
    m_status = new QLabel(form);
    m_status->setObjectName(QStringLiteral("wireStatus"));
    m_status->setWordWrap(true);
    sim->addRow(m_status);
    m_progress = new QProgressBar(form);
    m_progress->setObjectName(QStringLiteral("wireProgress"));
    m_progress->setRange(0, 100);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), form);
    m_cancel->setObjectName(QStringLiteral("wireCancel"));
    m_cancel->hide();
    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_cancel);
    sim->addRow(progressRow);
    m_summary = new QLabel(form);
    m_summary->setObjectName(QStringLiteral("wireSummary"));
    m_summary->setWordWrap(true);
    sim->addRow(m_summary);
    layout->addStretch(1);

    // Edits: each one undoable command; the kind may reshape the cluster (chooseFabric).
    connect(m_kind, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (!m_updating)
            chooseFabric(index);
    });
    connect(m_nodes, &QSpinBox::valueChanged, this, [this](int nodes) {
        if (!m_updating)
            m_document->setCluster(std::uint64_t(nodes), m_document->scenario().hardware.gpusPerNode);
    });
    auto edit = [this](auto apply, const QString& text, int mergeKey = 0) {
        if (m_updating)
            return;
        network::TopologySpec spec = m_document->scenario().topology;
        apply(spec);
        editTopology(spec, text, mergeKey);
    };
    connect(m_pcie, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) { s.pcie = Protocol(m_pcie->currentData().toInt()); },
             tr("Choose PCIe generation"));
    });
    connect(m_gpusPerSwitch, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.gpusPerPcieSwitch = std::uint64_t(v); }, tr("Set GPUs per PCIe switch"), 1);
    });
    connect(m_gpuDirect, &QCheckBox::toggled, this, [edit](bool on) {
        edit([on](network::TopologySpec& s) { s.gpuDirectP2P = on; },
             on ? tr("Turn GPUDirect on") : tr("Turn GPUDirect off"));
    });
    connect(m_intraNode, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) { s.intraNode = network::IntraNode(m_intraNode->currentData().toInt()); },
             tr("Choose servers' interconnect"));
    });
    connect(m_nvlink, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) {
            const int v = m_nvlink->currentData().toInt();
            s.nvlink = v < 0 ? std::nullopt : std::optional<Protocol>(Protocol(v));
        }, tr("Choose NVLink generation"));
    });
    connect(m_nicRate, &QLineEdit::editingFinished, this, [this, edit] {
        // "auto" (or nothing) follows the protocol; anything else must parse as a rate.
        const QString text = m_nicRate->text().trimmed();
        std::optional<BytesPerSecond> rate;
        if (!text.isEmpty() && !text.startsWith(QStringLiteral("auto"), Qt::CaseInsensitive)) {
            const auto parsed = parseBandwidth(text.toStdString());
            if (!parsed) {
                m_nicRateProblem->setText(tr("NIC rate: %1").arg(qs(parsed.error().message)));
                m_nicRateProblem->show();
                return; // what was typed stays in the field
            }
            rate = parsed.value();
        }
        m_nicRateProblem->hide();
        edit([rate](network::TopologySpec& s) { s.nicBandwidth = rate; }, tr("Set NIC rate"));
    });
    connect(m_nicPlacement, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) {
            s.nicPlacement = network::NicPlacement(m_nicPlacement->currentData().toInt());
        }, tr("Choose NIC placement"));
    });
    connect(m_nicProtocol, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) { s.nicProtocol = Protocol(m_nicProtocol->currentData().toInt()); },
             tr("Choose NIC protocol"));
    });
    connect(m_oversubscription, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit([v](network::TopologySpec& s) { s.oversubscription = v; }, tr("Set oversubscription"), 2);
    });
    connect(m_nicsPerLeaf, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.nicsPerLeaf = std::uint64_t(v); }, tr("Set NICs per leaf"), 3);
    });
    connect(m_spines, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.spines = std::uint64_t(v); }, tr("Set spines"), 4);
    });
}

void WirePane::editTopology(const network::TopologySpec& spec, const QString& text, int mergeKey)
{
    m_document->setTopology(spec, text, mergeKey);
}

void WirePane::chooseFabric(int index)
{
    if (index < 0 || index >= int(std::size(kKinds)))
        return;
    // The kind decides the cluster's shape (scenario::withFabric): one server holds every GPU; the
    // testbed has one GPU per server; a leaf–spine keeps the servers.
    m_fabricProblem->hide();
    const auto changed = scenario::withFabric(m_document->scenario(), kKinds[index]);
    if (!changed) {
        m_fabricProblem->setText(qs(changed.error().message));
        m_fabricProblem->show();
        showScenario(); // the combo goes back to the scenario's kind
        return;
    }
    const scenario::Scenario& s = changed.value();
    m_document->editPlan(s.hardware, s.parallel, tr("Choose fabric: %1").arg(tr(kKindNames[index])), 0, &s.topology);
}

namespace {
// "Model: 90 B per 1,448-B TCP segment …" for the NICs' protocol, then the loopback measurement beside
// the model's TCP-over-loopback format.
QString overheadNoteText(std::optional<Protocol> nic)
{
    QString text;
    if (nic)
        text = QObject::tr("Network packets (model): %1.").arg(qs(network::packetFormat(*nic).formula));
    static const collective::openmpi::LoopbackHeader measured = [] {
        const auto rows = collective::openmpi::parseDataset(collective::openmpi::embeddedDataset());
        return rows ? collective::openmpi::loopbackHeader(rows.value()) : collective::openmpi::LoopbackHeader{};
    }();
    if (measured.rows > 0) {
        const network::PacketFormat lo = network::packetFormat(Protocol::TcpLoopback);
        if (!text.isEmpty())
            text += QLatin1Char(' ');
        text += QObject::tr("Measured on loopback (Open MPI over TCP, %1 calls): %2 B of headers per packet "
                            "(median; %3 calls exactly), against the model's %4 B for TCP over loopback.")
                    .arg(measured.rows)
                    .arg(QString::number(measured.medianBytes, 'f', 1))
                    .arg(measured.exact)
                    .arg(QString::number(lo.overhead, 'f', 0));
    }
    return text;
}
} // namespace

void WirePane::showScenario()
{
    const scenario::Scenario& s = m_document->scenario();
    const network::TopologySpec& t = s.topology;
    m_updating = true;
    for (int i = 0; i < int(std::size(kKinds)); ++i)
        if (kKinds[i] == t.kind)
            m_kind->setCurrentIndex(i);
    m_nodes->setValue(int(s.hardware.nodes));
    m_clusterLabel->setText(tr("%1 × %2 GPUs (%3) = %4 GPUs")
                                .arg(s.hardware.nodes)
                                .arg(s.hardware.gpusPerNode)
                                .arg(qs(s.hardware.gpu))
                                .arg(s.hardware.nodes * s.hardware.gpusPerNode));
    m_pcie->setCurrentIndex(std::max(0, m_pcie->findData(int(t.pcie))));
    m_gpusPerSwitch->setValue(int(t.gpusPerPcieSwitch));
    m_gpuDirect->setChecked(t.gpuDirectP2P);
    m_intraNode->setCurrentIndex(std::max(0, m_intraNode->findData(int(t.intraNode))));
    const Protocol nvlinkNow = scenario::resolvedTopology(s).nvlink.value_or(network::kUnresolvedNvLink);
    m_nvlink->setItemText(0, tr("auto (%1)").arg(qs(network::displayName(nvlinkNow))));
    m_nvlink->setCurrentIndex(t.nvlink ? std::max(0, m_nvlink->findData(int(*t.nvlink))) : 0);
    if (!m_nicRate->hasFocus() && m_nicRateProblem->isHidden())
        m_nicRate->setText(t.nicBandwidth ? qs(formatBytes(*t.nicBandwidth, units())) + QStringLiteral("/s")
                                          : tr("auto (%1/s)").arg(qs(formatBytes(network::nicBandwidthOf(t), units()))));
    m_nicPlacement->setCurrentIndex(std::max(0, m_nicPlacement->findData(int(t.nicPlacement))));
    m_nicProtocol->setCurrentIndex(std::max(0, m_nicProtocol->findData(int(t.nicProtocol))));
    m_overheadNote->setText(overheadNoteText(t.kind == TopologyKind::PaperTestbed ? std::optional(Protocol::Ethernet10G)
                                             : t.kind == TopologyKind::LeafSpine   ? std::optional(t.nicProtocol)
                                                                                   : std::nullopt));
    m_oversubscription->setValue(t.oversubscription);
    m_nicsPerLeaf->setValue(int(t.nicsPerLeaf));
    m_spines->setValue(int(t.spines));
    // Fields a kind does not use are disabled, not hidden (the form keeps its shape).
    const bool multi = t.kind == TopologyKind::LeafSpine;
    const bool testbed = t.kind == TopologyKind::PaperTestbed;
    // What a kind does not use is hidden: the network only exists between servers of a leaf–spine, and
    // the testbed is fixed by the paper (its note says what it is).
    m_nodes->setEnabled(multi || testbed);
    m_networkBox->setVisible(multi);
    m_testbedNote->setVisible(testbed);
    m_serverBox->setVisible(!testbed);
    m_intraNode->setEnabled(multi);
    if (m_sweepGpus->text().isEmpty() || !m_sweepGpus->isModified()) // core's sizes that this plan can run
        m_sweepGpus->setText(qs(scenario::gpuListText(scenario::defaultSweepSizes(s))));
    m_caption->setText(
        tr("<b>5 · Wire.</b> The fabric under the %1 GPUs of stage 3 and one training step on it: every "
           "collective's transfers routed over the links, sharing them fairly, with the compute of stage 2 "
           "between them. Press play to watch the bits move; hover a link for its bytes.")
            .arg(s.hardware.nodes * s.hardware.gpusPerNode));
    m_updating = false;
    m_current = false;
}

void WirePane::onDerived()
{
    m_stale = true;
    if (isVisible())
        startSimulation();
}

void WirePane::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale)
        startSimulation();
    if (m_traceStale)
        updateTrace();
}

void WirePane::startSimulation()
{
    const auto derivation = m_document->derivation();
    if (!derivation)
        return;
    m_stale = false;
    m_current = false;
    if (!derivation->stage3) {
        m_job->cancel();
        m_progress->hide();
        m_cancel->hide();
        QStringList why;
        for (const Error& e : derivation->planErrors)
            why << qs(e.toString());
        showStatus(tr("The stage 3 plan cannot run, so there is no step to put on the wire: %1")
                       .arg(why.join(QStringLiteral("; "))),
                   true);
        return;
    }
    const scenario::Scenario scenario = m_document->resolvedScenario();
    m_job->schedule([scenario, derivation](const Progress& progress) -> std::any {
        return simulateWire(scenario, derivation, progress);
    }, 120);
}

void WirePane::applyResult(WireResult result)
{
    m_progress->hide();
    m_cancel->hide();
    if (result.error) {
        m_current = false;
        showStatus(tr("This scenario cannot be simulated: %1. The drawing shows the last step that could.")
                       .arg(qs(result.error->toString())),
                   true);
        return;
    }
    const bool sameShape = m_result.network && result.network
                           && m_result.network->topology->links().size() == result.network->topology->links().size();
    m_router.reset(); // it refers to the old topology
    m_result = std::move(result);
    m_current = true;
    const network::StepSimulation& sim = *m_result.simulation;
    const network::Topology& topology = *m_result.network->topology;
    auto loads = std::shared_ptr<const network::LinkLoads>(m_result.network, &m_result.network->loads);
    m_view->setNetwork(m_result.network->topology, loads, m_result.simulation);
    m_view->setLinkCallers(callersOf(m_result.network->loads, units()));

    // The throughput chart: the hovered link survives when the fabric kept its shape, else the busiest.
    if (!sameShape || !m_chartLink || *m_chartLink >= topology.links().size()) {
        // The most utilized link (payload over capacity × step): the bottleneck, not the widest pipe.
        std::optional<network::LinkId> busiest;
        double best = 0;
        for (network::LinkId l = 0; l < sim.linkPayloadBytes.size(); ++l) {
            const double use = sim.linkPayloadBytes[l] / std::max(topology.link(l).bandwidth, 1.0);
            if (sim.linkPayloadBytes[l] > 0 && use > best) {
                best = use;
                busiest = l;
            }
        }
        m_chartLink = busiest;
    }
    m_charts->setThroughput(&topology, &sim, m_chartLink);
    std::vector<std::uint32_t> stageOf;
    if (m_result.derivation && m_result.derivation->stage3)
        for (const parallel::MeshCoord& c : m_result.derivation->stage3->mesh)
            stageOf.push_back(c.pp);
    m_charts->setBreakdown(sim, stageOf);
    setTime(std::min(m_time, sim.stepSeconds));

    auto percent = [](double x) {
        return qs(formatCount(100.0 * x, x > 0 && x < 0.01 ? 3 : 1)) + QStringLiteral(" %");
    };
    // Idle below a millionth of the step is rounding, not a bubble.
    const double idle = sim.idleSeconds < 1e-6 * sim.stepSeconds ? 0.0 : sim.idleSeconds;
    // Every number a link to its figure: hover for the formula, click for the chain.
    const FigureSet& sf = sim.figures;
    QString summary = tr("Step time <b>%1</b>: compute %2, exposed communication %3 (%4 of the step), idle %5.")
                          .arg(panekit::figureLink(sf, "sim.step_time_s", qs(formatSeconds(sim.stepSeconds))),
                               panekit::figureLink(sf, "sim.compute_s", qs(formatSeconds(sim.computeSeconds))),
                               panekit::figureLink(sf, "sim.exposed_comm_s", qs(formatSeconds(sim.exposedCommSeconds))),
                               panekit::figureLink(sf, "sim.comm_share", percent(sim.commShare)),
                               panekit::figureLink(sf, "sim.bubble_s", qs(formatSeconds(idle))));
    if (sim.mfu > 0)
        summary += tr(" MFU %1.").arg(panekit::figureLink(sf, "sim.mfu", percent(sim.mfu)));
    summary += tr(" %1 flows on %2 links").arg(qs(formatInteger(std::int64_t(sim.flows)))).arg(topology.links().size());
    if (sim.symmetryFactor > 1 || sim.closedFormInstances > 0)
        summary += tr(" (%1 simulated: symmetric GPUs share one simulation, private collectives in closed form)")
                       .arg(qs(formatInteger(std::int64_t(sim.simulatedFlows))));
    summary += QLatin1Char('.');
    m_summary->setText(summary);
    if (sim.linkTimelineTruncated) {
        // The rate samples have a budget (SimulationOptions::maxLinkSamples); past it the totals are still
        // exact but the animation has nothing to draw. Say where that is rather than show idle links.
        double until = 0;
        for (const network::LinkTimeline& t : sim.linkTimelines)
            if (!t.samples.empty())
                until = std::max(until, t.samples.back().time);
        showStatus(tr("Simulated. The link rates are recorded up to t = %1 of %2 (%3 rate changes, the recording "
                      "budget): later traffic is in every total and chart of bytes, but the animation shows the links "
                      "idle after that time.")
                       .arg(qs(formatSeconds(until)), qs(formatSeconds(sim.stepSeconds)),
                            qs(formatInteger(std::int64_t(network::SimulationOptions{}.maxLinkSamples)))),
                   true);
    } else {
        showStatus(tr("Simulated: the drawing is the current scenario's step."), false);
    }
    fillFigures();
    updateTrace();
}

void WirePane::fillFigures()
{
    // The table lists stage 5's figures; the chains can walk back through every stage.
    m_allFigures = FigureSet();
    FigureSet shown;
    if (m_result.derivation)
        for (const Figure& f : m_result.derivation->figures.all())
            m_allFigures.add(f);
    auto addBoth = [&](const FigureSet& set) {
        for (const Figure& f : set.all()) {
            m_allFigures.add(f);
            shown.add(f);
        }
    };
    if (m_result.network)
        addBoth(m_result.network->figures);
    if (m_result.simulation)
        addBoth(m_result.simulation->figures);
    if (m_trace)
        addBoth(m_trace->figures);
    m_figures->setFigures(std::move(shown));
}

bool WirePane::showFigure(const QString& id)
{
    if (!m_allFigures.find(id.toStdString()))
        return false;
    m_chain->setHtml(derivationChainHtml(m_allFigures, id, units()));
    m_chain->setProperty("figureId", id);
    return true;
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
    if (m_result.simulation)
        m_charts->setThroughput(m_result.network->topology.get(), m_result.simulation.get(), m_chartLink);
    m_charts->setTime(m_time);
}

double WirePane::busiestTime() const
{
    return m_result.simulation ? network::busiestTime(*m_result.simulation) : 0.0;
}

bool WirePane::waitForSimulation(int timeoutMs)
{
    const bool a = m_job->waitUntilIdle(timeoutMs);
    const bool b = m_sweepJob->waitUntilIdle(timeoutMs);
    return a && b;
}

void WirePane::setTime(double seconds)
{
    const double step = m_result.simulation ? m_result.simulation->stepSeconds : 0.0;
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
    if (playing == isPlaying())
        return;
    if (playing && m_result.simulation && m_result.simulation->stepSeconds > 0) {
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
    if (!m_result.simulation)
        return;
    const double step = m_result.simulation->stepSeconds;
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
    m_view->setDisplayUnits(u);
    m_charts->setDisplayUnits(u);
    if (m_result.network) {
        m_view->setLinkCallers(callersOf(m_result.network->loads, u));
        m_charts->setThroughput(m_result.network->topology.get(), m_result.simulation.get(), m_chartLink);
        m_charts->setTime(m_time);
    }
    showScenario(); // the NIC rate's text
    updateTrace();
    const QString shown = m_chain->property("figureId").toString();
    if (!shown.isEmpty())
        showFigure(shown);
}

void WirePane::updateTrace()
{
    m_traceStale = false;
    const qint64 index = m_document->followedToken();
    m_trace.reset();
    const bool ready = m_result.network && m_result.derivation && m_result.scenario && m_result.derivation->stage3;
    if (index < 0 || !ready || std::size_t(index) >= m_result.derivation->tokens().size()) {
        m_view->clearTracedLinks();
        m_view->setHighlightedGpus({});
        m_tokenCaption->hide();
        fillFigures();
        return;
    }
    if (!m_router)
        m_router = std::make_unique<network::Router>(*m_result.network->topology);
    auto trace = scenario::traceToken(*m_result.derivation, *m_result.scenario, std::uint64_t(index),
                                      m_result.network->topology.get(), {}, m_router.get());
    if (!trace) {
        m_view->clearTracedLinks();
        m_tokenCaption->setText(tr("The followed token cannot be traced on this fabric: %1")
                                    .arg(qs(trace.error().toString()).toHtmlEscaped()));
        m_tokenCaption->show();
        return;
    }
    m_trace = std::move(trace).value();
    fillFigures();
    const scenario::TokenTrace& t = *m_trace;
    std::vector<std::pair<network::LinkId, double>> row;
    std::vector<network::LinkId> gradient;
    for (const scenario::TokenTraceLink& l : t.links) {
        if (l.rowBytes > 0)
            row.emplace_back(l.link, l.rowBytes);
        else if (l.gradients)
            gradient.push_back(l.link);
    }
    const QString name = panekit::followedTokenCaption(m_document);
    m_view->setTracedLinks(row, gradient, name);
    m_view->setHighlightedGpus(std::vector<int>(t.placement.gpus.begin(), t.placement.gpus.end()));
    const FigureSet& f = m_allFigures;
    auto link = [&](const char* id, const QString& text) { // on the caption's light paper in either theme
        return panekit::figureLink(f, id, text, theme::paperLinkColor());
    };
    QString text;
    if (!row.empty())
        text = tr("<b>%1</b> (its GPUs in yellow): its row crosses %2 link directions (glowing), %3 on the wire in the "
                  "step, %4 summed over the links.")
                   .arg(name.toHtmlEscaped(), link("trace.links", QString::number(row.size())),
                        link("trace.wire_bytes", qs(formatBytes(f.valueOf("trace.wire_bytes"), units()))),
                        link("trace.link_bytes", qs(formatBytes(f.valueOf("trace.link_bytes"), units()))));
    else
        text = tr("<b>%1</b> (its GPUs in yellow): no collective moves its row between GPUs in this plan (pure data "
                  "parallelism keeps it on one GPU).")
                   .arg(name.toHtmlEscaped());
    if (!gradient.empty())
        text += tr(" The gradient reductions it feeds (with every other token: no byte is its own) cross %1 more "
                   "(dashed).")
                    .arg(link("trace.gradient_links", QString::number(gradient.size())));
    m_tokenCaption->setText(text);
    m_tokenCaption->show();
}

void WirePane::updateTimeLabel()
{
    const double step = m_result.simulation ? m_result.simulation->stepSeconds : 0.0;
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
    const scenario::Scenario scenario = m_document->resolvedScenario();
    m_sweepJob->schedule([scenario, options](const Progress& progress) -> std::any {
        return scenario::runSweep(scenario, options, progress);
    });
    return true;
}

} // namespace tw::ui
