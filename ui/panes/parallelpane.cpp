#include "parallelpane.h"

#include "charts/memorychart.h"
#include "charts/pipelinechart.h"
#include "document/document.h"
#include "panes/fitplansdialog.h"
#include "panes/panekit.h"
#include "settings/appsettings.h"
#include "settings/theme.h"
#include "views/figuretablemodel.h"
#include "views/meshview.h"
#include "views/partitioneditor.h"
#include "views/signaturemodel.h"
#include "views/tokenchipview.h"

#include "base/units.h"
#include "parallel/plan.h"
#include "scenario/derive.h"
#include "scenario/nearestvalid.h"
#include "scenario/tokentrace.h"
#include "views/qtstrings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

#include <climits>
#include <utility>

namespace tw::ui {

namespace {

using parallel::PipelineSchedule;
using parallel::Sharding;
using parallel::Strategy;

constexpr const char* kInvalidStyle = "QSpinBox, QComboBox { border: 2px solid #b91c1c; border-radius: 3px; }";

QString count(double v)
{
    return qs(formatCount(v, 0));
}

QString bytes(double v)
{
    return qs(formatBytes(v, AppSettings::instance()->displayUnits()));
}

struct ShardingChoice {
    Sharding value;
    const char* label;
};
constexpr ShardingChoice kShardings[] = {
    {Sharding::Ddp, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "DDP (replicate everything)")},
    {Sharding::Zero1, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "ZeRO-1 (shard optimizer state)")},
    {Sharding::Zero2, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "ZeRO-2 (+ gradients)")},
    {Sharding::Zero3, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "ZeRO-3 (+ parameters)")},
    {Sharding::FsdpFull, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "FSDP full shard")},
    {Sharding::FsdpHybrid, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "FSDP hybrid shard")},
};

struct ScheduleChoice {
    PipelineSchedule value;
    const char* label;
};
constexpr ScheduleChoice kSchedules[] = {
    {PipelineSchedule::GPipe, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "GPipe (all forward, then all backward)")},
    {PipelineSchedule::OneFOneB, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "1F1B")},
    {PipelineSchedule::Interleaved, QT_TRANSLATE_NOOP("tw::ui::ParallelPane", "Interleaved 1F1B")},
};

QSpinBox* countBox(QWidget* parent, const QString& tip, int maximum = INT_MAX)
{
    auto* s = new QSpinBox(parent);
    s->setRange(1, maximum);
    s->setToolTip(tip);
    s->setProperty("normalToolTip", tip);
    s->setKeyboardTracking(false); // typing "16" is one edit, not "1" then "16"
    s->setAccelerated(true);
    return s;
}

} // namespace

ParallelPane::ParallelPane(Document* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
{
    setObjectName(QStringLiteral("parallelPane"));
    m_caption = panekit::caption(this, "parallelCaption");
    auto* form = new QWidget(this);
    buildForm(form);
    QScrollArea* formScroll = panekit::formScroll(form, this);

    m_mesh = new MeshView(this);
    m_mesh->setObjectName(QStringLiteral("meshView"));

    m_tabs = new QTabWidget(this);
    m_signature = new SignatureModel(this);
    m_signatureTable = panekit::table(this, m_signature, "signatureTable");
    m_signatureTable->horizontalHeader()->setStretchLastSection(false);
    m_signatureTable->horizontalHeader()->setSectionResizeMode(SignatureModel::FrequencyColumn, QHeaderView::Stretch);
    m_signatureTable->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_signatureTable->setWordWrap(true);
    m_tabs->addTab(m_signatureTable, tr("Signature"));

    m_calls = new CallListModel(this);
    m_callTable = panekit::table(this, m_calls, "callTable");
    m_tabs->addTab(m_callTable, tr("Calls"));

    m_pipeline = new PipelineChart(this);
    m_partition = new PartitionEditor(this);
    auto* pipeSplit = new QSplitter(Qt::Vertical, this);
    pipeSplit->addWidget(m_pipeline->widget());
    // The editor scrolls rather than being cut when the tab is short (1280×720, presentation mode).
    auto* partitionScroll = new QScrollArea(this);
    partitionScroll->setObjectName(QStringLiteral("partitionScroll"));
    partitionScroll->setWidget(m_partition);
    partitionScroll->setWidgetResizable(true);
    partitionScroll->setFrameShape(QFrame::NoFrame);
    partitionScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    pipeSplit->addWidget(partitionScroll);
    pipeSplit->setSizes({330, 170});
    // The chart keeps its rows readable (keepPlotRoom); the partition editor scrolls.
    partitionScroll->setMinimumHeight(70);
    m_tabs->addTab(pipeSplit, tr("Pipeline"));

    m_figures = new FigureTableModel(this);
    QSplitter* figureSplit = panekit::figurePage(
        this, m_figures, "stage3", tr("Click a figure (or a cell of the signature) to see where its number comes from."),
        Qt::Vertical, &m_figureTable, &m_chain);
    figureSplit->setSizes({300, 200});
    m_tabs->addTab(figureSplit, tr("Figures"));

    m_memory = new MemoryChart(this);
    m_tabs->addTab(m_memory->widget(), tr("Memory"));

    // The mesh on top across the full width (it is what a drag changes), the tables and charts below.
    m_followChip = panekit::followChip(this, m_document);
    panekit::stageLayout(this, m_caption, formScroll, m_mesh, m_tabs, 540, 280, m_followChip);

    // The drawing asks; the document decides (an undoable command) and the new mesh comes back.
    connect(m_mesh, &MeshView::swapRequested, this, [this](int a, int b) { m_document->swapGpus(a, b); });
    connect(m_partition, &PartitionEditor::partitionEdited, this,
            [this](const std::vector<std::uint64_t>& p) { m_document->setLayerPartition(p); });
    connect(m_figureTable, &QAbstractItemView::clicked, this, [this](const QModelIndex& index) {
        showFigure(m_figures->data(index, FigureTableModel::FigureIdRole).toString());
    });
    connect(m_signatureTable, &QAbstractItemView::clicked, this, [this](const QModelIndex& index) {
        const QString id = m_signature->data(index, SignatureModel::FigureIdRole).toString();
        if (!id.isEmpty() && showFigure(id))
            m_tabs->setCurrentIndex(3);
    });
    connect(m_document, &Document::scenarioChanged, this, &ParallelPane::showScenario);
    connect(m_document, &Document::derived, this, &ParallelPane::onDerived);
    // The live thread: the spin box shows the document's followed token and sets it.
    connect(m_document, &Document::followedTokenChanged, this, [this](qint64 index) {
        {
            const QSignalBlocker block(m_token);
            m_token->setValue(int(std::clamp<qint64>(index, -1, m_token->maximum())));
        }
        // Hovering in stage 1 moves it often: traced when this pane is on screen.
        if (isVisible())
            updateToken();
        else
            m_tokenStale = true;
    });
    auto openFigure = [this](const QString& id) {
        if (showFigure(id))
            m_tabs->setCurrentIndex(3);
    };
    auto chainSet = [this] { return &m_chainFigures; };
    auto unitsNow = [this] { return units(); };
    panekit::wireFigureLinks(m_tokenLine, chainSet, openFigure, unitsNow);
    panekit::wireFigureLinks(m_caption, chainSet, openFigure, unitsNow);
    connect(AppSettings::instance(), &AppSettings::displayUnitsChanged, this, [this] { applyUnits(); });
    m_signature->setDisplayUnits(units());
    m_calls->setDisplayUnits(units());
    m_figures->setDisplayUnits(units());

    showScenario();
    if (m_document->derivation())
        onDerived(m_document->derivation());
    else
        m_caption->setText(tr("Deriving the parallel plan…"));
}

void ParallelPane::buildForm(QWidget* form)
{
    auto* layout = new QVBoxLayout(form);
    auto addForm = [&](const QString& title) { return panekit::formGroup(layout, title); };
    auto track = [this](QWidget* w, const char* path) { m_fieldPaths.emplace_back(w, QString::fromLatin1(path)); };

    QFormLayout* cluster = addForm(tr("Cluster"));
    m_nodes = countBox(form, tr("Machines in the job"), 1 << 20);
    m_nodes->setObjectName(QStringLiteral("nodes"));
    m_gpusPerNode = countBox(form, tr("GPUs in each machine (NVLink/PCIe inside, the network between)"), 1024);
    m_gpusPerNode->setObjectName(QStringLiteral("gpusPerNode"));
    cluster->addRow(tr("Nodes"), m_nodes);
    cluster->addRow(tr("GPUs per node"), m_gpusPerNode);
    track(m_nodes, "hardware.nodes");
    track(m_gpusPerNode, "hardware.gpus_per_node");
    connect(m_nodes, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_updating)
            m_document->setCluster(std::uint64_t(v), m_document->scenario().hardware.gpusPerNode);
    });
    connect(m_gpusPerNode, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_updating)
            m_document->setCluster(m_document->scenario().hardware.nodes, std::uint64_t(v));
    });

    QFormLayout* degrees = addForm(tr("Parallel degrees"));
    static const char* const labels[] = {QT_TR_NOOP("Data parallel (DP)"), QT_TR_NOOP("Pipeline stages (PP)"),
                                         QT_TR_NOOP("Tensor parallel (TP)"), QT_TR_NOOP("Expert parallel (EP)")};
    static const char* const tips[] = {
        QT_TR_NOOP("Model replicas, each on its share of the batch; gradients are averaged every optimizer step"),
        QT_TR_NOOP("Consecutive groups of layers on different GPUs; activations pass stage to stage per micro-batch"),
        QT_TR_NOOP("Each layer's matrices split over GPUs (Megatron); AllReduces inside every layer"),
        QT_TR_NOOP("Experts spread over GPUs, carved out of DP; tokens travel by All-to-All")};
    static const char* const paths[] = {"parallel.dp", "parallel.pp", "parallel.tp", "parallel.ep"};
    static const char* const names[] = {"dpDegree", "ppDegree", "tpDegree", "epDegree"};
    for (int i = 0; i < parallel::kStrategyCount; ++i) {
        m_degrees[i] = countBox(form, tr(tips[i]), 1 << 20);
        m_degrees[i]->setObjectName(QString::fromLatin1(names[i]));
        degrees->addRow(tr(labels[i]), m_degrees[i]);
        track(m_degrees[i], paths[i]);
        connect(m_degrees[i], &QSpinBox::valueChanged, this, [this, i](int v) {
            if (!m_updating)
                m_document->setDegree(static_cast<Strategy>(i), std::uint64_t(v));
        });
    }
    m_product = new QLabel(form);
    m_product->setObjectName(QStringLiteral("degreeProduct"));
    m_product->setWordWrap(true);
    degrees->addRow(m_product);
    m_findPlans = new QPushButton(tr("Find plans that fit…"), form);
    m_findPlans->setObjectName(QStringLiteral("findPlans"));
    m_findPlans->setToolTip(tr("Search the layouts of the model on this cluster (degrees, sharding, sequence parallelism, "
                               "recomputation, micro-batch, schedule) for those whose every GPU fits, ranked by "
                               "simulated step time; apply one as an undoable edit."));
    degrees->addRow(m_findPlans);
    connect(m_findPlans, &QPushButton::clicked, this, [this] { openFitPlans(); });

    QFormLayout* state = addForm(tr("Model state"));
    m_sharding = new QComboBox(form);
    m_sharding->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_sharding->setMinimumContentsLength(12);
    m_sharding->setObjectName(QStringLiteral("sharding"));
    for (const ShardingChoice& c : kShardings)
        m_sharding->addItem(tr(c.label), QString::fromLatin1(parallel::toString(c.value).data()));
    state->addRow(tr("Sharding"), m_sharding);
    track(m_sharding, "parallel.sharding");
    connect(m_sharding, &QComboBox::currentIndexChanged, this, [this](int) {
        if (!m_updating)
            m_document->setField(Field::Sharding, FieldValue(m_sharding->currentData().toString().toStdString()));
    });
    m_shardGroup = new QSpinBox(form);
    m_shardGroup->setObjectName(QStringLiteral("shardGroup"));
    m_shardGroup->setRange(0, 1 << 20);
    m_shardGroup->setSpecialValueText(tr("one node"));
    m_shardGroup->setKeyboardTracking(false);
    m_shardGroup->setToolTip(tr("FSDP hybrid shard: DP ranks that shard the model among themselves (0: the DP ranks of one node)"));
    state->addRow(tr("Shard group"), m_shardGroup);
    track(m_shardGroup, "parallel.shard_group_size");
    connect(m_shardGroup, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_updating)
            m_document->setField(Field::ShardGroupSize, FieldValue(std::uint64_t(v)));
    });
    m_sequenceParallel = new QCheckBox(tr("Sequence parallelism"), form);
    m_sequenceParallel->setObjectName(QStringLiteral("sequenceParallel"));
    m_sequenceParallel->setToolTip(tr("Megatron SP: each TP AllReduce becomes a ReduceScatter + AllGather (same bytes, "
                                      "activations between layers split over the TP ranks)"));
    m_sequenceParallel->setProperty("normalToolTip", m_sequenceParallel->toolTip());
    state->addRow(m_sequenceParallel);
    track(m_sequenceParallel, "parallel.sequence_parallel");
    connect(m_sequenceParallel, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_updating)
            m_document->setField(Field::SequenceParallel, FieldValue(on));
    });

    QFormLayout* pipe = addForm(tr("Pipeline"));
    m_schedule = new QComboBox(form);
    m_schedule->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_schedule->setMinimumContentsLength(12);
    m_schedule->setObjectName(QStringLiteral("schedule"));
    for (const ScheduleChoice& c : kSchedules)
        m_schedule->addItem(tr(c.label), QString::fromLatin1(parallel::toString(c.value).data()));
    pipe->addRow(tr("Schedule"), m_schedule);
    track(m_schedule, "parallel.schedule");
    m_virtualStages = countBox(form, tr("Model chunks per GPU with interleaving (v): the bubble shrinks by v"), 1024);
    m_virtualStages->setObjectName(QStringLiteral("virtualStages"));
    pipe->addRow(tr("Virtual stages v"), m_virtualStages);
    track(m_virtualStages, "parallel.virtual_stages");
    auto pushSchedule = [this] {
        if (m_updating)
            return;
        const auto schedule = parallel::scheduleFromString(m_schedule->currentData().toString().toStdString());
        const bool interleaved = schedule == PipelineSchedule::Interleaved;
        m_document->setPipelineSchedule(schedule.value_or(PipelineSchedule::OneFOneB),
                                        interleaved ? std::uint64_t(m_virtualStages->value()) : 1);
    };
    connect(m_schedule, &QComboBox::currentIndexChanged, this, pushSchedule);
    connect(m_virtualStages, &QSpinBox::valueChanged, this, pushSchedule);
    m_efficiency = new QDoubleSpinBox(form);
    m_efficiency->setObjectName(QStringLiteral("computeEfficiency"));
    // 0 = auto: the per-layer times come from the layer's kernels (docs/compute.md); a percentage fixes
    // one achieved share of the GPU's peak instead.
    m_efficiency->setRange(0, 100);
    m_efficiency->setDecimals(0);
    m_efficiency->setSuffix(QStringLiteral(" %"));
    m_efficiency->setSpecialValueText(tr("auto (kernels)"));
    m_efficiency->setKeyboardTracking(false);
    m_efficiency->setToolTip(tr("Achieved share of the GPU's peak FLOP/s for the per-layer times. \"auto (kernels)\" (0): "
                                "each layer's time comes from its kernels (GEMM shapes, attention, memory-bound ops); "
                                "a percentage fixes one share for every layer (Megatron-LM reaches 44–52 %)"));
    pipe->addRow(tr("Achieved FLOP/s"), m_efficiency);
    track(m_efficiency, "parallel.compute_efficiency");
    connect(m_efficiency, &QDoubleSpinBox::valueChanged, this, [this](double percent) {
        if (!m_updating)
            m_document->setField(Field::ComputeEfficiency, FieldValue(percent / 100.0));
    });

    m_layerTime = new QDoubleSpinBox(form);
    m_layerTime->setObjectName(QStringLiteral("layerForwardTime"));
    m_layerTime->setRange(0, 1e6);
    m_layerTime->setDecimals(3);
    m_layerTime->setSuffix(QStringLiteral(" ms"));
    m_layerTime->setSpecialValueText(tr("computed"));
    m_layerTime->setKeyboardTracking(false);
    m_layerTime->setToolTip(tr("Forward time of one layer for one micro-batch, overriding the computed time (the kernels, "
                               "or FLOPs ÷ achieved FLOP/s; backward = 2 × forward). The paper's Example 5.2 implies "
                               "80 ms, Example 5.3 3 ms."));
    m_layerTime->setProperty("normalToolTip", m_layerTime->toolTip());
    pipe->addRow(tr("Layer forward time"), m_layerTime);
    track(m_layerTime, "parallel.layer_forward_time_s");
    connect(m_layerTime, &QDoubleSpinBox::valueChanged, this, [this](double ms) {
        if (m_updating)
            return;
        parallel::ParallelPlan plan = m_document->scenario().parallel;
        plan.layerForwardSeconds = ms > 0 ? std::vector<double>{ms / 1000.0} : std::vector<double>{};
        m_document->editPlan(m_document->scenario().hardware, plan,
                             ms > 0 ? tr("Set layer forward time") : tr("Use the compute model for layer times"),
                             EditMerge::LayerForwardTime);
    });

    QFormLayout* view = addForm(tr("View"));
    m_colorBy = new QComboBox(form);
    m_colorBy->setObjectName(QStringLiteral("colorBy"));
    m_colorBy->addItem(tr("DP replica"), int(MeshView::ColorBy::DpReplica));
    m_colorBy->addItem(tr("PP stage"), int(MeshView::ColorBy::PpStage));
    m_colorBy->addItem(tr("TP group"), int(MeshView::ColorBy::TpGroup));
    m_colorBy->addItem(tr("EP group"), int(MeshView::ColorBy::EpGroup));
    m_colorBy->addItem(tr("memory"), int(MeshView::ColorBy::Memory));
    view->addRow(tr("Color GPUs by"), m_colorBy);
    connect(m_colorBy, &QComboBox::currentIndexChanged, this, [this](int) {
        if (!m_updating)
            m_colorChosen = true;
        m_mesh->setColorBy(static_cast<MeshView::ColorBy>(m_colorBy->currentData().toInt()));
    });
    m_token = new QSpinBox(form);
    m_token->setObjectName(QStringLiteral("followToken"));
    m_token->setRange(-1, INT_MAX);
    m_token->setSpecialValueText(tr("none"));
    m_token->setValue(int(std::max<qint64>(-1, m_document->followedToken())));
    m_token->setKeyboardTracking(false);
    m_token->setToolTip(tr("A token of the text (0-based) followed through the five stages: where it is trained "
                           "(hover or click one in stage 1 to choose it there)"));
    view->addRow(tr("Follow token #"), m_token);
    // Where the token is trained: below its spin box, wrapped in the form's width (the form scrolls).
    m_tokenLine = new QLabel(form);
    m_tokenLine->setObjectName(QStringLiteral("tokenLine"));
    m_tokenLine->setWordWrap(true);
    m_tokenLine->setTextInteractionFlags(Qt::TextSelectableByMouse);
    view->addRow(m_tokenLine);
    connect(m_token, &QSpinBox::valueChanged, this, [this](int v) { m_document->setFollowedToken(v); });

    m_problems = panekit::problemLabel(form, "planProblems");
    layout->insertWidget(2, m_problems); // right under the degrees, where most reasons point
    // Under the reasons: for each input that alone makes the plan impossible, its nearest valid value.
    m_offers = new QWidget(form);
    m_offers->setObjectName(QStringLiteral("planOffers"));
    new QVBoxLayout(m_offers);
    m_offers->layout()->setContentsMargins(0, 0, 0, 0);
    m_offers->hide();
    layout->insertWidget(3, m_offers);
    layout->addStretch(1);
}

void ParallelPane::showScenario()
{
    const scenario::Scenario& s = m_document->scenario();
    const parallel::ParallelPlan& p = s.parallel;
    m_updating = true;
    const QSignalBlocker b1(m_nodes), b2(m_gpusPerNode), b3(m_sharding), b4(m_shardGroup), b5(m_sequenceParallel),
        b6(m_schedule), b7(m_virtualStages), b8(m_efficiency), b9(m_layerTime);
    m_nodes->setValue(int(std::min<std::uint64_t>(s.hardware.nodes, INT_MAX)));
    m_gpusPerNode->setValue(int(std::min<std::uint64_t>(s.hardware.gpusPerNode, INT_MAX)));
    const std::uint64_t values[] = {p.dp, p.pp, p.tp, p.ep};
    for (int i = 0; i < parallel::kStrategyCount; ++i) {
        const QSignalBlocker block(m_degrees[i]);
        m_degrees[i]->setValue(int(std::min<std::uint64_t>(values[i], INT_MAX)));
    }
    m_sharding->setCurrentIndex(m_sharding->findData(QString::fromLatin1(parallel::toString(p.sharding).data())));
    m_shardGroup->setValue(int(std::min<std::uint64_t>(p.shardGroupSize, INT_MAX)));
    m_shardGroup->setEnabled(p.sharding == Sharding::FsdpHybrid);
    m_sequenceParallel->setChecked(p.sequenceParallel);
    m_sequenceParallel->setEnabled(p.tp > 1 || p.sequenceParallel);
    m_schedule->setCurrentIndex(m_schedule->findData(QString::fromLatin1(parallel::toString(p.schedule).data())));
    m_virtualStages->setValue(int(std::min<std::uint64_t>(p.virtualStages, INT_MAX)));
    m_virtualStages->setEnabled(p.schedule == PipelineSchedule::Interleaved);
    m_efficiency->setValue(p.computeEfficiency * 100.0);
    // One override for every layer is editable here; per-layer lists (from a file) show their first value.
    m_layerTime->setValue(p.layerForwardSeconds.empty() ? 0.0 : p.layerForwardSeconds.front() * 1000.0);
    m_layerTime->setToolTip(p.layerForwardSeconds.size() > 1
                                ? tr("This scenario sets %1 per-layer times (shown: layer 0); editing sets one time for every layer.")
                                      .arg(p.layerForwardSeconds.size())
                                : m_layerTime->property("normalToolTip").toString());
    const std::uint64_t product = p.dp * p.pp * p.tp, gpus = s.hardware.gpuCount();
    m_product->setText(tr("dp × pp × tp = %1 × %2 × %3 = %4 of %5 GPUs")
                           .arg(p.dp)
                           .arg(p.pp)
                           .arg(p.tp)
                           .arg(product)
                           .arg(gpus));
    m_product->setStyleSheet(product == gpus ? QString() : QStringLiteral("QLabel { color: %1; }").arg(theme::errorColor().name()));
    m_updating = false;
}

void ParallelPane::onDerived(const std::shared_ptr<const scenario::Derivation>& derivation)
{
    m_derivation = derivation;
    showProblems();
    const parallel::PlanDerivation* plan = derivation ? derivation->stage3.get() : nullptr;
    if (plan && !m_colorChosen) {
        // Until the user picks one: colour by the dimension that splits the GPUs first (DP, then PP, then TP).
        const MeshView::ColorBy by = plan->plan.dp > 1   ? MeshView::ColorBy::DpReplica
                                     : plan->plan.pp > 1 ? MeshView::ColorBy::PpStage
                                                         : MeshView::ColorBy::TpGroup;
        m_updating = true;
        m_colorBy->setCurrentIndex(m_colorBy->findData(int(by)));
        m_updating = false;
    }
    if (plan) {
        // The mesh is drawn when the pane is on screen: 98,304 cards took 20–60 ms of every derivation's
        // delivery with another stage shown.
        m_meshPending = derivation;
        if (isVisible())
            showMesh();
        m_signature->setCommPlan(plan->comm, plan->figures);
        m_chainFigures = derivation->figures;
        m_calls->shareCommPlan(std::shared_ptr<const parallel::CommPlan>(derivation->stage3, &plan->comm));
        m_pipeline->setTimeline(plan->timeline, plan->kernels.optimizer.seconds);
        showMemory();
        // The chart's makespan and bubble are figures: their formulas on hover.
        QStringList tips;
        for (const char* id : {"pp.makespan", "pp.bubble_fraction"})
            if (const QString e = figureExplanation(derivation->figures, id, units()); !e.isEmpty())
                tips << e;
        m_pipeline->widget()->setToolTip(tips.join(QStringLiteral("\n\n")));
        const std::uint64_t v = plan->plan.schedule == PipelineSchedule::Interleaved ? plan->plan.virtualStages : 1;
        m_partition->setPartition(plan->plan.layerPartition, derivation->model.layers, v);
        m_partition->setEnabled(plan->plan.pp > 1);
        m_figures->setFigures(plan->figures);
        const QString shown = m_chain->property("figureId").toString();
        if (!shown.isEmpty() && !showFigure(shown))
            m_chain->clear();
        if (m_derivation) {
            const std::size_t tokens = m_derivation->tokens().size();
            const QSignalBlocker block(m_token);
            m_token->setMaximum(int(std::min<std::size_t>(tokens == 0 ? 0 : tokens - 1, INT_MAX)));
            m_token->setValue(int(std::clamp<qint64>(m_document->followedToken(), -1, m_token->maximum())));
        }
    }
    // An impossible plan keeps the last valid drawing; the caption and the red notes say why.
    updateCaption();
    if (isVisible() || m_document->followedToken() < 0)
        updateToken();
    else
        m_tokenStale = true;
}

FitPlansDialog* ParallelPane::openFitPlans()
{
    if (!m_fitDialog)
        m_fitDialog = new FitPlansDialog(m_document, this);
    m_fitDialog->show();
    m_fitDialog->raise();
    m_fitDialog->startSearch();
    return m_fitDialog;
}

// The memory of every GPU (core's PlanMemory): the mesh's memory colouring and the stacked bars.
void ParallelPane::showMemory()
{
    const parallel::PlanMemory* memory = m_derivation ? m_derivation->memory.get() : nullptr;
    if (!memory) {
        m_mesh->setMemory({}, 0);
        m_memory->clear();
        return;
    }
    std::vector<double> perGpu(memory->roleOfGpu.size(), 0.0);
    for (std::size_t g = 0; g < perGpu.size(); ++g)
        perGpu[g] = memory->roles[memory->roleOfGpu[g]].total + memory->keptFreeBytes();
    m_mesh->setMemory(std::move(perGpu), memory->capacityBytes, units());
    m_memory->setMemory(*memory, units());
    QStringList tips;
    for (const char* id : {"memory.plan.peak_bytes", "memory.plan.fits"})
        if (const QString e = figureExplanation(m_derivation->figures, id, units()); !e.isEmpty())
            tips << e;
    m_memory->widget()->setToolTip(tips.join(QStringLiteral("\n\n")));
}

void ParallelPane::showProblems()
{
    QHash<QString, QStringList> byPath;
    QStringList all;
    if (m_derivation)
        for (const Error& e : m_derivation->planErrors) {
            byPath[qs(e.where.jsonPath)] << qs(e.message);
            all << qs(e.toString());
        }
    // A path like "parallel.assignment[5]" belongs to the drawing; "parallel.layer_partition[2]" to the editor.
    for (const auto& [widget, path] : m_fieldPaths) {
        const QStringList messages = byPath.value(path);
        widget->setStyleSheet(messages.isEmpty() ? QString() : QString::fromLatin1(kInvalidStyle));
        widget->setToolTip(messages.isEmpty() ? widget->property("normalToolTip").toString() : messages.join(QLatin1Char('\n')));
        widget->setProperty("invalid", !messages.isEmpty());
    }
    m_problems->setText(all.isEmpty() ? QString() : tr("This plan cannot run:\n• %1").arg(all.join(QStringLiteral("\n• "))));
    m_problems->setVisible(!all.isEmpty());
    showOffers(byPath);
}

void ParallelPane::showOffers(const QHash<QString, QStringList>& problemsByPath)
{
    for (QPushButton* old : m_offers->findChildren<QPushButton*>(Qt::FindDirectChildrenOnly))
        old->deleteLater();
    const scenario::Scenario& s = m_document->scenario();
    bool any = false;
    for (const std::string_view path : scenario::nearestValidPaths()) {
        const QString qpath = QString::fromLatin1(path.data(), qsizetype(path.size()));
        if (!problemsByPath.contains(qpath))
            continue;
        const std::optional<std::uint64_t> value = scenario::nearestValidValue(s, path);
        if (!value)
            continue;
        const QString name = qpath.mid(qpath.indexOf(QLatin1Char('.')) + 1);
        // When pp or tp changes, dp takes the rest of the GPUs: the button says so.
        const std::uint64_t dp = scenario::withPlanInput(s, path, *value).parallel.dp;
        const QString text = dp != s.parallel.dp && path != "parallel.dp" ? tr("Use %1 = %2 (dp = %3)").arg(name).arg(*value).arg(dp)
                                                                          : tr("Use %1 = %2").arg(name).arg(*value);
        auto* use = new QPushButton(text, m_offers);
        use->setObjectName(QStringLiteral("useNearest:") + qpath);
        use->setToolTip(tr("The value of %1 nearest to the one typed that makes the plan run, the other inputs as they are")
                            .arg(qpath));
        const std::string key(path);
        const std::uint64_t v = *value;
        connect(use, &QPushButton::clicked, this, [this, key, v] {
            const scenario::Scenario fixed = scenario::withPlanInput(m_document->scenario(), key, v);
            m_document->editPlan(fixed.hardware, fixed.parallel, tr("Use the nearest valid %1").arg(QString::fromStdString(key)));
        });
        m_offers->layout()->addWidget(use);
        any = true;
    }
    m_offers->setVisible(any);
}

QString ParallelPane::problemAt(const QString& jsonPath) const
{
    QStringList out;
    if (m_derivation)
        for (const Error& e : m_derivation->planErrors)
            if (qs(e.where.jsonPath) == jsonPath)
                out << qs(e.message);
    return out.join(QLatin1Char('\n'));
}

void ParallelPane::updateCaption()
{
    if (!m_derivation) {
        m_caption->setText(tr("Deriving the parallel plan…"));
        return;
    }
    const scenario::Derivation& d = *m_derivation;
    const parallel::PlanDerivation* plan = d.stage3.get();
    if (!plan) {
        m_caption->setText(tr("This arrangement of %1 GPUs cannot train %2: the reasons are in red on the left. "
                              "The drawing shows the last plan that could.")
                               .arg(d.cluster.gpuCount())
                               .arg(qs(d.model.name)));
        return;
    }
    const parallel::ParallelPlan& p = plan->plan;
    QStringList parts;
    parts << tr("%1 GPUs on %2 node(s): %3 data-parallel replica(s) × %4 pipeline stage(s) × %5-way tensor parallelism%6.")
                 .arg(d.cluster.gpuCount())
                 .arg(d.cluster.nodes)
                 .arg(p.dp)
                 .arg(p.pp)
                 .arg(p.tp)
                 .arg(p.ep > 1 ? tr(", experts over %1 GPUs").arg(p.ep) : QString());
    parts.back() = parts.back().toHtmlEscaped();
    // Every number is a link: hover for its formula, click for its chain.
    const double nacc = plan->figures.valueOf("dp.n_acc");
    if (nacc == nacc)
        parts << tr("Each replica runs %1 micro-batch(es) per optimizer step.")
                     .arg(panekit::figureLink(m_chainFigures, "dp.n_acc", count(nacc)));
    for (const parallel::StrategySignature& r : plan->comm.signature) {
        if (!r.present)
            continue;
        const std::string id = qs(parallel::toString(r.strategy).data()).toLower().toStdString() + ".bytes_per_gpu_per_step";
        parts << tr("%1: %2 per GPU per step — %3%4.")
                     .arg(strategyName(r.strategy), panekit::figureLink(m_chainFigures, id, bytes(r.bytesPerGpuPerStep)),
                          qs(r.frequency).toHtmlEscaped(),
                          r.groupsCrossingNodes > 0 ? tr(", %1 of %2 groups leave their node").arg(r.groupsCrossingNodes).arg(r.groups)
                                                    : QString());
    }
    m_caption->setText(parts.join(QLatin1Char(' ')));
}

void ParallelPane::showMesh()
{
    const auto derivation = std::exchange(m_meshPending, nullptr);
    if (const parallel::PlanDerivation* plan = derivation ? derivation->stage3.get() : nullptr)
        m_mesh->setMesh(derivation->cluster, plan->mesh, plan->plan, &plan->comm.groups);
}

void ParallelPane::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_meshPending)
        showMesh();
    if (m_tokenStale)
        updateToken();
}

void ParallelPane::updateToken()
{
    m_tokenStale = false;
    const parallel::PlanDerivation* plan = m_derivation ? m_derivation->stage3.get() : nullptr;
    const qint64 index = m_document->followedToken();
    FigureSet figures = m_derivation ? m_derivation->figures : FigureSet{};
    m_mesh->setTokenGpus({});
    if (!plan || m_derivation->tokens().empty() || index < 0 || std::size_t(index) >= m_derivation->tokens().size()) {
        m_chainFigures = std::move(figures);
        m_tokenLine->setText(m_derivation && !m_derivation->tokens().empty()
                                 ? tr("No token followed: choose one above, or hover (click to pin) a token in stage 1.")
                                 : QString());
        return;
    }
    auto trace = scenario::traceToken(*m_derivation, m_document->resolvedScenario(), std::uint64_t(index));
    if (!trace) {
        m_tokenLine->setText(qs(trace.error().toString()).toHtmlEscaped());
        return;
    }
    const scenario::TokenTrace& t = trace.value();
    for (const Figure& fig : t.figures.all())
        figures.add(fig);
    m_chainFigures = std::move(figures);
    const FigureSet& f = m_chainFigures;
    auto link = [&](const char* id, const QString& text) { return panekit::figureLink(f, id, text); };
    const parallel::TokenPlacement& p = t.placement;
    QStringList gpus;
    for (std::size_t i = 0; i < p.gpus.size() && i < 8; ++i)
        gpus << QString::number(p.gpus[i]);
    if (p.gpus.size() > 8)
        gpus << tr("… (%1 GPUs)").arg(p.gpus.size());
    QString line = tr("Token #%1 <b>“%2”</b> (id %3) is position %4 of sequence %5: optimizer step %6, DP replica %7, "
                      "micro-batch %8, row %9. Its activations live on GPUs %10.")
                       .arg(link("trace.token", QString::number(index)), visiblePiece(t.piece).toHtmlEscaped(),
                            link("trace.token_id", QString::number(t.span.id)),
                            link("trace.position", QString::number(t.position)),
                            link("trace.sequence", QString::number(t.sequence)),
                            link("trace.step", QString::number(p.step)), link("trace.replica", QString::number(p.dpReplica)),
                            link("trace.micro_batch", QString::number(p.microBatch)),
                            link("trace.row", QString::number(p.row)))
                       .arg(link("trace.gpus", gpus.join(QStringLiteral(", "))));
    if (p.slices.size() > 1) {
        const auto& s0 = p.slices.front();
        line += tr(" Inside each layer, tensor-parallel rank 0 of %1 computes heads %2–%3 and columns %4–%5 of its hidden vector.")
                    .arg(p.slices.size())
                    .arg(s0.headBegin)
                    .arg(s0.headEnd - 1)
                    .arg(s0.colBegin)
                    .arg(s0.colEnd - 1);
    }
    if (t.stageGpus.size() > 1) {
        QStringList stages;
        for (std::size_t s = 0; s < t.stageGpus.size() && s < 8; ++s) {
            // A run of GPUs as a range ("GPUs 24576–24583"), else a list that wraps: "24576+24577+…" was one
            // unbreakable word wider than the form's column.
            const std::vector<std::uint32_t>& v = t.stageGpus[s];
            if (v.size() == 1) {
                stages << tr("stage %1: GPU %2").arg(s).arg(v.front());
            } else if (std::is_sorted(v.begin(), v.end()) && v.back() - v.front() + 1 == v.size()) {
                stages << tr("stage %1: GPUs %2–%3").arg(s).arg(v.front()).arg(v.back());
            } else {
                QStringList g;
                for (std::uint32_t x : v)
                    g << QString::number(x);
                stages << tr("stage %1: GPUs %2").arg(s).arg(g.join(QStringLiteral(", ")));
            }
        }
        line += tr(" Pipeline: %1.").arg(stages.join(QStringLiteral("; ")));
    }
    line += tr(" Its row x[b,t,:] is %1.").arg(link("trace.row_bytes", qs(formatBytes(t.rowBytes, units()))));
    m_tokenLine->setText(line);
    std::vector<int> marked(p.gpus.begin(), p.gpus.end());
    m_mesh->setTokenGpus(std::move(marked));
}

bool ParallelPane::followToken(std::uint64_t index)
{
    if (!m_derivation || index >= m_derivation->tokens().size())
        return false;
    m_document->setFollowedToken(qint64(index));
    if (m_tokenStale)
        updateToken(); // asked for directly: traced now, shown or not
    return true;
}

DisplayUnits ParallelPane::units() const
{
    return AppSettings::instance()->displayUnits();
}

void ParallelPane::applyUnits()
{
    const DisplayUnits u = units();
    m_signature->setDisplayUnits(u);
    m_calls->setDisplayUnits(u);
    m_figures->setDisplayUnits(u);
    showMemory();
    updateCaption();
    updateToken();
    const QString shown = m_chain->property("figureId").toString();
    if (!shown.isEmpty())
        showFigure(shown);
}

bool ParallelPane::showFigure(const QString& id)
{
    if (!m_derivation || !panekit::showFigureChain(m_chain, m_chainFigures, id, units()))
        return false;
    panekit::selectFigureRow(m_figureTable, id);
    return true;
}

QWidget* ParallelPane::drawing() const
{
    return m_mesh;
}

} // namespace tw::ui
