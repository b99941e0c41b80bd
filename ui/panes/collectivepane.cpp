#include "collectivepane.h"

#include "charts/busbwchart.h"
#include "charts/collectivecharts.h"
#include "charts/measuredchart.h"
#include "document/document.h"
#include "panes/panekit.h"
#include "views/figuretablemodel.h"
#include "views/ncclchannelview.h"
#include "views/qtstrings.h"
#include "views/scheduleview.h"
#include "views/signaturemodel.h"
#include "views/steplistmodel.h"
#include "settings/appsettings.h"

#include "base/unitparse.h"
#include "base/units.h"
#include "collective/binding.h"
#include "collective/fabriclink.h"
#include "scenario/derive.h"
#include "scenario/tokentrace.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPainter>
#include <QPixmap>
#include <QStandardItemModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QToolButton>
#include <QStackedWidget>
#include <QButtonGroup>
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
#include <climits>
#include <cmath>

namespace tw::ui {

namespace {

using collective::Algorithm;
using collective::Op;

QString bytes(double v)
{
    return qs(formatBytes(v, AppSettings::instance()->displayUnits()));
}

// The mark of a call that carries the followed token: a yellow dot with a dark rim.
QIcon tokenDot()
{
    QPixmap pm(14, 14);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(QColor(0x11, 0x18, 0x27), 2));
    p.setBrush(QColor(0xF0, 0xE4, 0x42));
    p.drawEllipse(QRectF(2, 2, 10, 10));
    return QIcon(pm);
}

} // namespace

CollectivePane::CollectivePane(Document* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
{
    setObjectName(QStringLiteral("collectivePane"));
    m_caption = panekit::caption(this, "collectiveCaption");
    auto* form = new QWidget(this);
    buildForm(form);
    QScrollArea* formScroll = panekit::formScroll(form, this);

    m_view = new ScheduleView(this);
    m_view->setObjectName(QStringLiteral("scheduleView"));
    m_view->setMinimumHeight(200);

    m_tabs = new QTabWidget(this);
    m_steps = new StepListModel(this);
    m_steps->follow(m_view);
    m_tabs->addTab(panekit::table(this, m_steps, "stepTable"), tr("This step"));
    m_charts = new CollectiveCharts(this);
    m_tabs->addTab(buildComparePage(), tr("Compare algorithms"));
    m_algorithms = new AlgorithmTableModel(this);
    m_tabs->addTab(panekit::table(this, m_algorithms, "algorithmTable"), tr("Algorithms"));
    m_figures = new FigureTableModel(this);
    m_tabs->addTab(panekit::figurePage(this, m_figures, "stage4", tr("Click a figure to see where its number comes from."),
                                       Qt::Horizontal, &m_figureTable, &m_chain),
                   tr("Plan traffic"));
    // The followed token's calls: which collectives of the step carry it, and its bytes in them.
    m_tokenCalls = new QStandardItemModel(0, 4, this);
    m_tokenCalls->setHorizontalHeaderLabels({tr("Call of the plan"), tr("Calls"), tr("Its bytes per call"), tr("On the wire per step")});
    m_tokenTable = panekit::table(this, m_tokenCalls, "tokenCallTable");
    m_tokenTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_tokenTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_tokenTable->horizontalHeader()->setStretchLastSection(false);
    m_tokenTable->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_tokenTab = m_tabs->addTab(m_tokenTable, tr("Followed token"));
    // Real Open MPI traffic on loopback beside the prediction (issue #10).
    m_measured = new MeasuredChart(this);
    m_tabs->addTab(m_measured, tr("Measured"));
    // NCCL's view of the call (issue #17): busbw against size on the group's fabric, and the channels.
    m_busbw = new BusBwChart(this);
    auto* busbwScroll = new QScrollArea(this);
    busbwScroll->setObjectName(QStringLiteral("busBwScroll"));
    busbwScroll->setWidget(m_busbw);
    busbwScroll->setWidgetResizable(true);
    busbwScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_busbwScroll = busbwScroll;
    m_tabs->addTab(busbwScroll, tr("Bus bandwidth (NCCL)"));
    m_channelView = new NcclChannelView(this);
    auto* channelScroll = new QScrollArea(this);
    channelScroll->setObjectName(QStringLiteral("ncclChannelScroll"));
    channelScroll->setWidget(m_channelView);
    channelScroll->setWidgetResizable(true);
    m_channelScroll = channelScroll;
    m_tabs->addTab(channelScroll, tr("How NCCL runs it"));
    m_followChip = panekit::followChip(this, m_document);
    panekit::stageLayout(this, m_caption, formScroll, m_view, m_tabs, 480, 300, m_followChip);

    // The comparison charts count hundreds of schedules: only when shown, and after edits settle.
    m_chartTimer = new QTimer(this);
    m_chartTimer->setSingleShot(true);
    m_chartTimer->setInterval(200);
    connect(m_chartTimer, &QTimer::timeout, this, [this] {
        if (m_tabs->currentIndex() == 1 && collective::validate(m_spec).empty())
            m_charts->setSpec(m_spec, m_link);
    });
    connect(m_tabs, &QTabWidget::currentChanged, this, [this](int) {
        scheduleCharts();
        updateNccl();
    });
    connect(m_view, &ScheduleView::stepChanged, this, [this](int, int) { updateStepLabel(); });
    connect(m_view, &ScheduleView::playingChanged, this,
            [this](bool playing) { m_play->setText(playing ? tr("❚❚ Pause") : tr("▶ Play")); });
    connect(m_figureTable, &QAbstractItemView::clicked, this, [this](const QModelIndex& index) {
        showFigure(m_figures->data(index, FigureTableModel::FigureIdRole).toString());
    });
    connect(m_document, &Document::scenarioChanged, this, &CollectivePane::showScenario);
    connect(m_document, &Document::derived, this, &CollectivePane::onDerived);
    // The live thread.
    connect(m_document, &Document::followedTokenChanged, this, [this] {
        m_followStale = true;
        if (isVisible())
            updateFollow();
    });
    connect(m_tokenTable, &QAbstractItemView::clicked, this, [this](const QModelIndex& index) { playTokenCall(index.row()); });
    // The viewer's preferences, live: byte units and the animation speed.
    connect(AppSettings::instance(), &AppSettings::displayUnitsChanged, this, [this] { applyUnits(); });
    connect(AppSettings::instance(), &AppSettings::animationSpeedChanged, this, [this] { applySpeed(); });
    m_steps->setDisplayUnits(units());
    m_algorithms->setDisplayUnits(units());
    m_figures->setDisplayUnits(units());
    m_view->setDisplayUnits(units());
    m_charts->setDisplayUnits(units());
    m_busbw->setDisplayUnits(units());
    m_channelView->setDisplayUnits(units());
    applySpeed();

    showScenario();
    if (m_document->derivation())
        onDerived(m_document->derivation());
}

// The Compare algorithms tab: the three comparisons one at a time, chosen above the chart, which takes
// the whole tab (stacked at a readable height they sat in a ~160 px scroll area at 1280×720). The page
// scrolls only when even one chart does not fit (keepPlotRoom's minimum).
QScrollArea* CollectivePane::buildComparePage()
{
    auto* chartsPage = new QWidget(this);
    auto* chartsLayout = new QVBoxLayout(chartsPage);
    chartsLayout->setContentsMargins(0, 2, 0, 0);
    chartsLayout->setSpacing(2);
    auto* chooser = new QHBoxLayout;
    chooser->addWidget(new QLabel(tr("Compare:"), chartsPage));
    auto* chosen = new QButtonGroup(chartsPage);
    auto* stack = new QStackedWidget(chartsPage);
    const QString names[CollectiveCharts::MetricCount] = {tr("Bytes on the wire"), tr("Busiest rank's bytes"),
                                                         tr("α–β time")};
    const char* const ids[CollectiveCharts::MetricCount] = {"compareTotalBytes", "compareBusiestRank", "compareTime"};
    for (int m = 0; m < CollectiveCharts::MetricCount; ++m) {
        auto* button = new QToolButton(chartsPage);
        button->setObjectName(QString::fromLatin1(ids[m]));
        button->setText(names[m]);
        button->setCheckable(true);
        button->setChecked(m == 0);
        button->setAutoRaise(true);
        button->setToolButtonStyle(Qt::ToolButtonTextOnly);
        chosen->addButton(button, m);
        chooser->addWidget(button);
        stack->addWidget(m_charts->plot(CollectiveCharts::Metric(m)));
    }
    chooser->addStretch(1);
    chartsLayout->addLayout(chooser);
    chartsLayout->addWidget(stack, 1);
    connect(chosen, &QButtonGroup::idClicked, stack, &QStackedWidget::setCurrentIndex);
    // A stack asks for its largest page's room: the hidden charts ask none.
    auto onlyShownAsks = [stack] {
        for (int i = 0; i < stack->count(); ++i)
            stack->widget(i)->setSizePolicy(QSizePolicy::Expanding,
                                            i == stack->currentIndex() ? QSizePolicy::Expanding : QSizePolicy::Ignored);
    };
    onlyShownAsks();
    connect(stack, &QStackedWidget::currentChanged, this, onlyShownAsks);
    m_chartChooser = chosen;
    auto* chartsScroll = new QScrollArea(this);
    chartsScroll->setObjectName(QStringLiteral("compareAlgorithmsScroll"));
    chartsScroll->setWidget(chartsPage);
    chartsScroll->setWidgetResizable(true);
    chartsScroll->setFrameShape(QFrame::NoFrame);
    chartsScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    return chartsScroll;
}

void CollectivePane::buildForm(QWidget* form)
{
    auto* layout = new QVBoxLayout(form);
    auto addForm = [&](const QString& title) { return panekit::formGroup(layout, title); };

    QFormLayout* call = addForm(tr("The call"));
    m_call = new QComboBox(form);
    m_call->setObjectName(QStringLiteral("planCall"));
    m_call->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_call->setMinimumContentsLength(14);
    m_call->setToolTip(tr("A collective of the stage 3 plan (its payload and group), or your own"));
    call->addRow(tr("From the plan"), m_call);
    connect(m_call, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (!m_updating && index >= 0 && index < int(m_planCalls.size()))
            choosePlanCall(index);
    });
    m_op = new QComboBox(form);
    m_op->setObjectName(QStringLiteral("collectiveOp"));
    for (Op op : collective::allOps())
        m_op->addItem(qs(collective::displayName(op)), int(op));
    call->addRow(tr("Collective"), m_op);
    m_algorithm = new QComboBox(form);
    m_algorithm->setObjectName(QStringLiteral("collectiveAlgorithm"));
    m_algorithm->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_algorithm->setMinimumContentsLength(14);
    call->addRow(tr("Algorithm"), m_algorithm);
    m_ranks = new QSpinBox(form);
    m_ranks->setObjectName(QStringLiteral("ranks"));
    m_ranks->setRange(1, 16384);
    m_ranks->setKeyboardTracking(false);
    call->addRow(tr("Ranks N"), m_ranks);
    m_bytes = new QLineEdit(form);
    m_bytes->setObjectName(QStringLiteral("payload"));
    m_bytes->setToolTip(tr("The payload M: 256MB, 48MiB, 1.5 GB or plain bytes"));
    call->addRow(tr("Payload M"), m_bytes);
    m_bytesProblem = panekit::problemLabel(form, "payloadProblem");
    call->addRow(m_bytesProblem);
    m_ranksPerNode = new QSpinBox(form);
    m_ranksPerNode->setObjectName(QStringLiteral("ranksPerNode"));
    m_ranksPerNode->setRange(0, 16384);
    m_ranksPerNode->setSpecialValueText(tr("one node"));
    m_ranksPerNode->setKeyboardTracking(false);
    m_ranksPerNode->setToolTip(tr("Hierarchical: consecutive ranks per node"));
    call->addRow(tr("Ranks per node"), m_ranksPerNode);
    m_root = new QSpinBox(form);
    m_root->setObjectName(QStringLiteral("root"));
    m_root->setRange(0, 16383);
    m_root->setKeyboardTracking(false);
    call->addRow(tr("Root"), m_root);

    connect(m_op, &QComboBox::currentIndexChanged, this, [this](int) {
        if (m_updating)
            return;
        fillAlgorithms();
        editSpec();
    });
    connect(m_algorithm, &QComboBox::currentIndexChanged, this, [this](int) {
        if (m_updating)
            return;
        const Op op = static_cast<Op>(m_op->currentData().toInt());
        // The scenario's algorithm for this collective ("auto", NCCL's or a textbook one; stage 3/4's totals
        // for the plan follow, undoably); Reduce and Send/Recv have no scenario field and stay local.
        if (const auto field = algorithmField(op))
            m_document->setField(*field, FieldValue(m_algorithm->currentData().toString().toStdString()));
        editSpec();
    });
    connect(m_ranks, &QSpinBox::valueChanged, this, [this](int) {
        if (!m_updating)
            editSpec();
    });
    connect(m_ranksPerNode, &QSpinBox::valueChanged, this, [this](int) {
        if (!m_updating)
            editSpec();
    });
    connect(m_root, &QSpinBox::valueChanged, this, [this](int) {
        if (!m_updating)
            editSpec();
    });
    connect(m_bytes, &QLineEdit::editingFinished, this, [this] {
        if (!m_updating)
            editSpec();
    });

    QFormLayout* link = addForm(tr("Link (α–β)"));
    m_alpha = new QDoubleSpinBox(form);
    m_alpha->setObjectName(QStringLiteral("alpha"));
    m_alpha->setRange(0, 1e6);
    m_alpha->setDecimals(3);
    m_alpha->setSuffix(QStringLiteral(" µs"));
    m_alpha->setKeyboardTracking(false);
    m_alpha->setToolTip(tr("Latency α per message (Hockney model)"));
    link->addRow(tr("Latency α"), m_alpha);
    m_bandwidth = new QDoubleSpinBox(form);
    m_bandwidth->setObjectName(QStringLiteral("bandwidth"));
    m_bandwidth->setRange(0.001, 1e6);
    m_bandwidth->setDecimals(3);
    m_bandwidth->setSuffix(QStringLiteral(" Gb/s"));
    m_bandwidth->setKeyboardTracking(false);
    m_bandwidth->setToolTip(tr("Bandwidth β of every link (10 Gb/s = 1.25 GB/s)"));
    link->addRow(tr("Bandwidth β"), m_bandwidth);
    buildLinkSources(link, form);

    QFormLayout* play = addForm(tr("Play"));
    auto* buttons = new QWidget(form);
    auto* row = new QHBoxLayout(buttons);
    row->setContentsMargins(0, 0, 0, 0);
    m_back = new QPushButton(tr("◀ Step"), buttons);
    m_back->setObjectName(QStringLiteral("stepBack"));
    m_play = new QPushButton(tr("▶ Play"), buttons);
    m_play->setObjectName(QStringLiteral("play"));
    m_forward = new QPushButton(tr("Step ▶"), buttons);
    m_forward->setObjectName(QStringLiteral("stepForward"));
    row->addWidget(m_back);
    row->addWidget(m_play);
    row->addWidget(m_forward);
    play->addRow(buttons);
    m_speed = new QSlider(Qt::Horizontal, form);
    m_speed->setObjectName(QStringLiteral("speed"));
    m_speed->setRange(1, 40); // tenths of a step per second … 4 steps per second
    m_speed->setValue(10);
    play->addRow(tr("Speed"), m_speed);
    m_stepLabel = new QLabel(form);
    m_stepLabel->setObjectName(QStringLiteral("stepLabel"));
    play->addRow(m_stepLabel);
    connect(m_back, &QPushButton::clicked, this, [this] { m_view->stepBack(); });
    connect(m_forward, &QPushButton::clicked, this, [this] { m_view->stepForward(); });
    connect(m_play, &QPushButton::clicked, this, [this] { m_view->isPlaying() ? m_view->pause() : m_view->play(); });
    m_speed->setToolTip(tr("Schedule steps per second (× the animation speed of the settings)"));
    connect(m_speed, &QSlider::valueChanged, this, [this](int) { applySpeed(); });

    QFormLayout* counts = addForm(tr("Counted from the schedule"));
    m_counts = new QLabel(form);
    m_counts->setObjectName(QStringLiteral("counts"));
    m_counts->setWordWrap(true);
    m_counts->setTextInteractionFlags(Qt::TextSelectableByMouse);
    counts->addRow(m_counts);
    layout->addStretch(1);
}

void CollectivePane::fillAlgorithms()
{
    const Op op = static_cast<Op>(m_op->currentData().toInt());
    const QSignalBlocker block(m_algorithm);
    m_algorithm->clear();
    const collective::AlgorithmChoice& choice = m_document->scenario().collectives;
    if (algorithmField(op)) {
        // The scenario's choices: auto (NCCL's pick), NCCL's algorithms, then the textbook schedules.
        for (const std::string& name : collective::pickNamesFor(op)) {
            const auto pick = collective::pickFromString(name);
            const bool textbook = pick && pick->kind == collective::AlgorithmPick::Kind::Textbook;
            const QString standIn = qs(collective::toString(scheduleFor(op, qs(name))));
            if (textbook) {
                m_algorithm->addItem(qs(name), qs(name));
                m_algorithm->setItemData(m_algorithm->count() - 1, qs(collective::describe(op, pick->textbook)),
                                         Qt::ToolTipRole);
            } else {
                m_algorithm->addItem(name == "auto" ? tr("auto (NCCL's pick)") : tr("NCCL %1").arg(qs(name)), qs(name));
                m_algorithm->setItemData(
                    m_algorithm->count() - 1,
                    tr("%1: the plan's time and bytes for this collective come from NCCL's own model on the call's "
                       "group (docs/nccl.md); the animation plays the textbook %2 schedule")
                        .arg(name == "auto" ? tr("NCCL's pick for each call") : tr("NCCL's %1").arg(qs(name)), standIn),
                    Qt::ToolTipRole);
            }
        }
        const int at = m_algorithm->findData(qs(collective::toString(choice.pick(op))));
        m_algorithm->setCurrentIndex(at >= 0 ? at : 0);
        return;
    }
    for (Algorithm a : collective::algorithmsFor(op)) {
        m_algorithm->addItem(qs(collective::toString(a)), qs(collective::toString(a)));
        m_algorithm->setItemData(m_algorithm->count() - 1, qs(collective::describe(op, a)), Qt::ToolTipRole);
    }
    const int at = m_algorithm->findData(qs(collective::toString(choice.forOp(op))));
    m_algorithm->setCurrentIndex(at >= 0 ? at : 0);
}

Algorithm CollectivePane::scheduleFor(Op op, const QString& name)
{
    // A textbook name plays itself; auto and NCCL's algorithms play their textbook stand-in.
    const std::string n = name.toStdString();
    if (const auto pick = collective::pickFromString(n); pick && algorithmField(op)) {
        collective::AlgorithmChoice c;
        c.set(op, *pick);
        return c.forOp(op);
    }
    return collective::algorithmFromString(n).value_or(m_spec.algorithm);
}

void CollectivePane::showScenario()
{
    const collective::AlgorithmChoice& c = m_document->scenario().collectives;
    m_updating = true;
    if (m_linkChoice == LinkChoice::Hand && c.link == collective::papersExampleLink())
        m_linkChoice = LinkChoice::Auto; // the hand edit was undone, or another scenario came
    updateGroup(); // the hardware may have changed
    updateLink();
    fillAlgorithms();
    m_updating = false;
    // The scenario's algorithm for the played collective may have changed (undo): play that one.
    const Algorithm chosen = c.forOp(m_spec.op);
    if (algorithmField(m_spec.op) && chosen != m_spec.algorithm) {
        collective::ScheduleSpec s = m_spec;
        s.algorithm = chosen;
        applySpec(s);
    } else {
        linkChanged(); // α or β, the fabric
        m_busbwStale = m_channelsStale = true;
        updateNccl();
    }
}

void CollectivePane::onDerived(const std::shared_ptr<const scenario::Derivation>& derivation)
{
    m_derivation = derivation;
    const parallel::PlanDerivation* plan = derivation ? derivation->stage3.get() : nullptr;
    const collective::CollectiveDerivation* bound = derivation ? derivation->stage4.get() : nullptr;
    m_figures->setFigures(bound ? bound->figures : FigureSet{});
    // The plan's calls, one entry per distinct (strategy, collective, what, group size, payload), the
    // ones moving the most bytes first.
    struct Entry {
        int call;
        double weight;
        QString text;
    };
    std::vector<Entry> entries;
    if (plan && bound) {
        for (const collective::BoundCall& b : bound->calls) {
            const parallel::CollectiveCall& c = plan->comm.calls[b.call];
            const QString text = tr("%1 · %2 · %3 · %4 over %5 GPUs")
                                     .arg(strategyName(c.strategy), collectiveName(c.kind), qs(c.what),
                                          bytes(c.payloadBytes))
                                     .arg(b.spec.ranks);
            const bool seen = std::any_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.text == text; });
            if (!seen)
                entries.push_back({int(b.call), b.stepWireBytes, text});
        }
    }
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.weight > b.weight; });
    // Every call of the plan belongs to the entry with its text (the token's calls are marked there).
    m_entryOfCall.assign(plan ? plan->comm.calls.size() : 0, -1);
    if (plan && bound)
        for (const collective::BoundCall& b : bound->calls) {
            const parallel::CollectiveCall& c = plan->comm.calls[b.call];
            const QString text = tr("%1 · %2 · %3 · %4 over %5 GPUs")
                                     .arg(strategyName(c.strategy), collectiveName(c.kind), qs(c.what), bytes(c.payloadBytes))
                                     .arg(b.spec.ranks);
            for (std::size_t e = 0; e < entries.size(); ++e)
                if (entries[e].text == text)
                    m_entryOfCall[b.call] = int(e);
        }
    const QString previous = m_call->currentText();
    const int previousIndex = m_call->currentIndex();
    const int previousCall = previousIndex >= 0 && previousIndex < int(m_planCalls.size()) ? m_planCalls[std::size_t(previousIndex)] : -1;
    m_updating = true;
    m_call->clear();
    m_planCalls.clear();
    for (const Entry& e : entries) {
        m_planCalls.push_back(e.call);
        m_call->addItem(e.text);
        m_call->setItemData(m_call->count() - 1, e.text, Qt::ToolTipRole);
    }
    m_call->addItem(tr("Your own call"));
    m_updating = false;
    m_chainFigures = derivation ? derivation->figures : FigureSet{};
    if (!m_custom && !m_planCalls.empty()) {
        int again = m_call->findText(previous);
        // The same call under other units ("48 MB" → "45.78 MiB"): found by its place in the plan.
        for (std::size_t e = 0; again < 0 && previousCall >= 0 && e < m_planCalls.size(); ++e)
            if (m_planCalls[e] == previousCall)
                again = int(e);
        choosePlanCall(again >= 0 && again < int(m_planCalls.size()) ? again : 0);
    } else if (m_custom || m_planCalls.empty()) {
        const QSignalBlocker block(m_call);
        m_call->setCurrentIndex(m_call->count() - 1);
        if (!collective::validate(m_spec).empty() || m_spec.bytes == 0) {
            collective::ScheduleSpec s; // a first custom call: a ring AllReduce of 8 ranks
            s.bytes = 64e6;
            applySpec(s);
        }
    }    m_followStale = true;
    if (isVisible() || m_document->followedToken() < 0)
        updateFollow();
}

bool CollectivePane::choosePlanCall(int index)
{
    if (!m_derivation || !m_derivation->stage4 || index < 0 || index >= int(m_planCalls.size()))
        return false;
    const collective::BoundCall& b = m_derivation->stage4->calls[std::size_t(m_planCalls[std::size_t(index)])];
    m_custom = false;
    {
        const QSignalBlocker block(m_call);
        m_call->setCurrentIndex(index);
    }
    applySpec(b.spec);
    return true;
}

void CollectivePane::editSpec()
{
    collective::ScheduleSpec s = m_spec;
    s.op = static_cast<Op>(m_op->currentData().toInt());
    if (m_algorithm->currentIndex() >= 0)
        s.algorithm = scheduleFor(s.op, m_algorithm->currentData().toString());
    s.ranks = std::uint64_t(m_ranks->value());
    s.ranksPerNode = std::uint64_t(m_ranksPerNode->value());
    s.root = std::uint32_t(m_root->value());
    const auto parsed = parseBytes(m_bytes->text().toStdString());
    if (!parsed) {
        m_bytesProblem->setText(qs(parsed.error().message));
        m_bytesProblem->show();
        m_bytes->setStyleSheet(QStringLiteral("QLineEdit { border: 2px solid #b91c1c; }"));
        return; // the last valid call keeps playing
    }
    m_bytesProblem->hide();
    m_bytes->setStyleSheet(QString());
    s.bytes = parsed.value();
    if (s == m_spec)
        return;
    m_custom = true;
    {
        const QSignalBlocker block(m_call);
        m_call->setCurrentIndex(m_call->count() - 1);
    }
    applySpec(s);
}

void CollectivePane::applySpec(const collective::ScheduleSpec& spec)
{
    m_spec = spec;
    m_measured->setCall(spec.op, spec.algorithm);
    m_updating = true;
    {
        const QSignalBlocker b1(m_op), b2(m_ranks), b3(m_ranksPerNode), b4(m_root), b5(m_bytes);
        m_op->setCurrentIndex(m_op->findData(int(spec.op)));
        fillAlgorithms();
        const QSignalBlocker b6(m_algorithm);
        // The scenario's pick when it plays this schedule (auto → its stand-in), else the textbook name.
        if (m_algorithm->currentIndex() < 0 || scheduleFor(spec.op, m_algorithm->currentData().toString()) != spec.algorithm)
            m_algorithm->setCurrentIndex(m_algorithm->findData(qs(collective::toString(spec.algorithm))));
        m_ranks->setValue(int(std::min<std::uint64_t>(spec.ranks, INT_MAX)));
        m_ranksPerNode->setValue(int(std::min<std::uint64_t>(spec.ranksPerNode, INT_MAX)));
        m_ranksPerNode->setEnabled(spec.algorithm == Algorithm::Hierarchical);
        m_root->setValue(int(spec.root));
        m_root->setEnabled(spec.op == Op::Broadcast || spec.op == Op::Reduce || spec.algorithm == Algorithm::ReduceBroadcast);
        m_bytes->setText(QString::number(spec.bytes, 'f', 0));
    }
    m_updating = false;
    m_bytesProblem->hide();
    m_bytes->setStyleSheet(QString());
    m_view->setSpec(spec);
    updateGroup();
    updateLink();
    m_algorithms->setSpec(spec, m_link);
    updateCounts();
    updateStepLabel();
    scheduleCharts();
    m_busbwStale = m_channelsStale = true;
    updateNccl();
}

void CollectivePane::scheduleCharts()
{
    if (m_tabs->currentIndex() == 1)
        m_chartTimer->start();
}

void CollectivePane::updateCounts()
{
    const collective::LinkModel link = m_link;
    if (const auto errors = collective::validate(m_spec); !errors.empty()) {
        m_counts->setText(qs(errors.front().toString()));
        m_caption->setText(tr("This call cannot be scheduled: %1").arg(qs(errors.front().message)));
        return;
    }
    const collective::Counts c = collective::count(m_spec, link);
    const collective::ClosedForm closed = collective::closedForm(m_spec);
    QStringList lines;
    if (algorithmField(m_spec.op) && m_algorithm->currentIndex() >= 0) {
        const auto pick = collective::pickFromString(m_algorithm->currentData().toString().toStdString());
        if (pick && pick->kind != collective::AlgorithmPick::Kind::Textbook)
            lines << tr("%1 in the scenario: the plan's times and bytes come from NCCL's model (stage 3); shown here "
                        "is the textbook %2 schedule it stands for")
                         .arg(m_algorithm->currentText(), qs(collective::toString(m_spec.algorithm)));
    }
    lines << tr("%1 steps, %2 transfers").arg(c.steps).arg(c.transfers);
    lines << tr("Bytes on the wire: %1").arg(bytes(c.totalBytes));
    lines << tr("Busiest rank sends: %1").arg(bytes(c.maxRankSentBytes));
    lines << tr("α–β time: %1").arg(qs(formatSeconds(c.timeSeconds)));
    if (c.busbw)
        lines << tr("algbw %1/s, busbw %2/s (× %3)")
                     .arg(bytes(*c.algbw), bytes(*c.busbw))
                     .arg(*c.busbwFactor, 0, 'g', 4);
    if (!closed.formula.empty()) {
        const std::vector<std::string> differences = collective::differencesFromClosedForm(closed, c);
        QStringList why;
        for (const std::string& d : differences)
            why << qs(d);
        lines << tr("Closed form (Help → How the numbers are computed, §4): %1 — %2")
                     .arg(qs(closed.formula), differences.empty() ? tr("the schedule matches")
                                                                  : tr("differs: %1").arg(why.join(QStringLiteral("; "))));
    }
    m_counts->setText(lines.join(QLatin1Char('\n')));
    const QString from = m_custom || m_call->currentIndex() < 0 || m_call->currentIndex() >= int(m_planCalls.size())
                             ? tr("your own call")
                             : m_call->currentText();
    QString nccl;
    const collective::AlgorithmPick pick = m_document->scenario().collectives.pick(m_spec.op);
    if (m_ncclPrediction && pick.usesNccl())
        nccl = tr(" NCCL's model on this group: %1 (%2/%3, %4 channels; tab \"How NCCL runs it\").")
                   .arg(qs(formatSeconds(m_ncclPrediction->time)), qs(nccl::algorithmLabel(*m_ncclPrediction)),
                        qs(nccl::toString(m_ncclPrediction->protocol)))
                   .arg(m_ncclPrediction->channels);
    m_caption->setText(tr("%1 %2 of %3 over %4 ranks (%5): %6 steps; each rank sends up to %7, %8 cross the wire in "
                          "all; %9 at α = %10 µs and β = %11 Gb/s — %12.%13")
                           .arg(qs(collective::toString(m_spec.algorithm)), qs(collective::displayName(m_spec.op)),
                                bytes(m_spec.bytes))
                           .arg(m_spec.ranks)
                           .arg(from)
                           .arg(c.steps)
                           .arg(bytes(c.maxRankSentBytes), bytes(c.totalBytes), qs(formatSeconds(c.timeSeconds)))
                           .arg(link.alphaSeconds * 1e6, 0, 'g', 4)
                           .arg(link.bandwidth * 8 / 1e9, 0, 'g', 4)
                           .arg(m_linkFrom, nccl));
}

void CollectivePane::updateStepLabel()
{
    m_stepLabel->setText(tr("Step %1 of %2%3")
                             .arg(m_view->currentStep())
                             .arg(m_view->stepCount())
                             .arg(m_view->phase().isEmpty() ? QString() : QStringLiteral(" · ") + m_view->phase()));
    m_back->setEnabled(m_view->currentStep() > 0);
    m_forward->setEnabled(m_view->currentStep() < m_view->stepCount());
}

bool CollectivePane::showFigure(const QString& id)
{
    return m_derivation && panekit::showFigureChain(m_chain, m_chainFigures, id, units());
}

DisplayUnits CollectivePane::units() const
{
    return AppSettings::instance()->displayUnits();
}

void CollectivePane::applyUnits()
{
    const DisplayUnits u = units();
    m_steps->setDisplayUnits(u);
    m_algorithms->setDisplayUnits(u);
    m_figures->setDisplayUnits(u);
    m_view->setDisplayUnits(u);
    m_charts->setDisplayUnits(u);
    m_measured->setDisplayUnits(u);
    m_busbw->setDisplayUnits(u);
    m_channelView->setDisplayUnits(u);
    // The "Call" list and the token's table name payloads: rebuilt in the new units.
    if (m_derivation)
        onDerived(m_derivation);
    updateCounts();
    const QString shown = m_chain->property("figureId").toString();
    if (!shown.isEmpty())
        showFigure(shown);
}

void CollectivePane::applySpeed()
{
    // The slider's steps per second, times the viewer's animation speed.
    m_view->setSpeed(m_speed->value() / 10.0 * AppSettings::instance()->animationSpeed());
}

void CollectivePane::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_followStale)
        updateFollow();
}

QList<int> CollectivePane::tokenEntries() const
{
    QList<int> out;
    for (int i = 0; i < int(m_planCalls.size()) && i < m_call->count(); ++i)
        if (m_call->itemData(i, CarriesTokenRole).isValid())
            out << i;
    return out;
}

bool CollectivePane::playTokenCall(int row)
{
    if (row < 0 || row >= m_tokenCalls->rowCount())
        return false;
    const int entry = m_tokenCalls->item(row, 0)->data(EntryRole).toInt();
    if (!choosePlanCall(entry))
        return false;
    m_view->setStep(0);
    m_view->play();
    return true;
}

void CollectivePane::updateFollow()
{
    m_followStale = false;
    for (int i = 0; i < m_call->count(); ++i) {
        m_call->setItemData(i, QVariant(), Qt::DecorationRole);
        m_call->setItemData(i, QVariant(), CarriesTokenRole);
        if (i < int(m_planCalls.size()))
            m_call->setItemData(i, m_call->itemText(i), Qt::ToolTipRole);
    }
    m_tokenCalls->removeRows(0, m_tokenCalls->rowCount());
    FigureSet figures = m_derivation ? m_derivation->figures : FigureSet{};
    const qint64 index = m_document->followedToken();
    const parallel::PlanDerivation* plan = m_derivation ? m_derivation->stage3.get() : nullptr;
    m_tabs->setTabText(m_tokenTab, tr("Followed token"));
    if (!plan || index < 0 || std::size_t(index) >= m_derivation->tokens().size()) {
        m_chainFigures = std::move(figures);
        return;
    }
    auto trace = scenario::traceToken(*m_derivation, m_document->resolvedScenario(), std::uint64_t(index));
    if (!trace) {
        m_chainFigures = std::move(figures);
        return;
    }
    const scenario::TokenTrace& t = trace.value();
    for (const Figure& f : t.figures.all())
        figures.add(f);
    m_chainFigures = std::move(figures);
    // Per entry of the "Call" list: how many of its calls carry the token, its bytes.
    struct PerEntry {
        int calls = 0;
        double rowBytes = 0, wire = 0;
        bool gradients = false;
        std::string rowFigure, wireFigure;
    };
    std::map<int, PerEntry> byEntry;
    for (const scenario::TokenTraceCall& c : t.calls) {
        const int entry = c.call < m_entryOfCall.size() ? m_entryOfCall[c.call] : -1;
        if (entry < 0)
            continue;
        PerEntry& e = byEntry[entry];
        ++e.calls;
        e.rowBytes = c.rowBytes;
        e.wire += c.wireBytes;
        e.gradients = c.carries == scenario::TokenTraceCall::Carries::Gradients;
        e.rowFigure = c.rowFigure;
        e.wireFigure = c.wireFigure;
    }
    const QString who = panekit::followedTokenCaption(m_document);
    const QIcon dot = tokenDot();
    for (const auto& [entry, e] : byEntry) {
        const QString what = e.gradients ? tr("%1 feeds this gradient reduction with every other token: no byte is its own").arg(who)
                                         : tr("carries %1: its row is %2 of each call's payload, %3 on the wire in the step")
                                               .arg(who, bytes(e.rowBytes), bytes(e.wire));
        m_call->setItemData(entry, dot, Qt::DecorationRole);
        m_call->setItemData(entry, e.gradients ? 0.0 : e.rowBytes, CarriesTokenRole);
        m_call->setItemData(entry, m_call->itemText(entry) + QLatin1Char('\n') + what, Qt::ToolTipRole);
        QList<QStandardItem*> row;
        auto* name = new QStandardItem(dot, m_call->itemText(entry));
        name->setData(entry, EntryRole);
        name->setToolTip(what + tr("\nClick to play it."));
        row << name << new QStandardItem(QString::number(e.calls));
        auto* own = new QStandardItem(e.gradients ? tr("— (every token)") : bytes(e.rowBytes));
        auto* wire = new QStandardItem(e.gradients ? tr("— (summed gradients)") : bytes(e.wire));
        own->setToolTip(e.gradients ? what : figureExplanation(m_chainFigures, e.rowFigure, units()));
        wire->setToolTip(e.gradients ? what : figureExplanation(m_chainFigures, e.wireFigure, units()));
        for (QStandardItem* item : {own, wire})
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        row << own << wire;
        m_tokenCalls->appendRow(row);
    }
    m_tabs->setTabText(m_tokenTab, byEntry.size() == 1 ? tr("Token #%1: 1 call").arg(index)
                                                       : tr("Token #%1: %2 calls").arg(index).arg(byEntry.size()));
}

// StagePane: the schedule, its animation and its steps.
QWidget* CollectivePane::drawing() const { return m_view; }
bool CollectivePane::isPlaying() const { return m_view->isPlaying(); }
void CollectivePane::setPlaying(bool playing) { playing ? m_view->play() : m_view->pause(); }
bool CollectivePane::canStepBack() const { return m_view->currentStep() > 0; }

bool CollectivePane::stepForward()
{
    const bool can = m_view->currentStep() < m_view->stepCount();
    if (can)
        m_view->stepForward();
    return can;
}

bool CollectivePane::stepBack()
{
    const bool can = canStepBack();
    if (can)
        m_view->stepBack();
    return can;
}

} // namespace tw::ui
