#include "comparepanel.h"
#include "charts/chartframe.h"

#include "document/commands.h"
#include "document/document.h"
#include "document/results.h"
#include "settings/appsettings.h"
#include "settings/theme.h"
#include "stage.h"
#include "views/palette.h"
#include "workers/backgroundjob.h"

#include "scenario/derive.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QDeadlineTimer>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QToolTip>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <any>
#include <cmath>

namespace tw::ui {

using scenario::FigureDelta;
using scenario::Presence;
using scenario::Verdict;

namespace {

// The bars' colours: A, the pinned baseline, in a neutral grey; B, the live scenario, in blue.
QColor colourA()
{
    return QColor(0x9a, 0xa5, 0xb1);
}
QColor colourB()
{
    return palette::categorical(0);
}

// The unit a chart's axis is written in: the largest value's magnitude, in the viewer's byte units.
struct AxisUnit {
    double scale = 1;
    QString name;
};
AxisUnit axisUnit(const std::string& unit, double largest, const DisplayUnits& units)
{
    if (unit == "B") {
        const bool binary = units.bytes == ByteUnits::Binary;
        const double base = binary ? 1024.0 : 1000.0;
        static const char* const dec[] = {"B", "kB", "MB", "GB", "TB", "PB"};
        static const char* const bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int k = 0;
        double scale = 1;
        while (largest / scale >= base && k < 5) {
            scale *= base;
            ++k;
        }
        return {scale, QString::fromLatin1(binary ? bin[k] : dec[k])};
    }
    if (unit == "s") {
        if (largest >= 1 || largest == 0)
            return {1, QStringLiteral("s")};
        if (largest >= 1e-3)
            return {1e-3, QStringLiteral("ms")};
        if (largest >= 1e-6)
            return {1e-6, QStringLiteral("µs")};
        return {1e-9, QStringLiteral("ns")};
    }
    return {1, qs(unit)};
}

// A square of a bar colour, the charts' legend in the lines naming A and B.
QString square(const QColor& colour)
{
    return QStringLiteral("<span style='color:%1'>■</span>").arg(colour.name());
}

} // namespace

// ---------------------------------------------------------------------------------------------------
// ComparePanel

namespace {

// The key figures of a derivation with its simulated step (as scenario::measureKeyFigures gives them): a
// step that could not be simulated leaves stage 5 out with the reason.
scenario::KeyFigures figuresOf(const StepResult& step, const std::string& name)
{
    if (step.ok())
        return scenario::keyFigures(*step.derivation, step.simulation.get(), name);
    scenario::KeyFigures k = scenario::keyFigures(*step.derivation, nullptr, name);
    if (step.cancelled)
        k.stage5Note = "the simulation of the step was cancelled";
    else if (step.error && step.derivation->stage3)
        k.stage5Note = "the step cannot be simulated: " + step.error->toString();
    return k;
}

} // namespace

ComparePanel::ComparePanel(Document* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
{
    setObjectName(QStringLiteral("comparePanel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->setSpacing(4);

    // The bar: pin, swap, clear, all stages, the two sides, the simulation's progress.
    auto* bar = new QHBoxLayout;
    m_pin = new QPushButton(tr("Pin as A"), this);
    m_pin->setObjectName(QStringLiteral("comparePin"));
    m_pin->setToolTip(tr("Keep the current scenario, its figures and its simulated step as A; then edit the stages: B "
                         "follows your edits"));
    m_swap = new QPushButton(tr("⇄ Swap"), this);
    m_swap->setObjectName(QStringLiteral("compareSwap"));
    m_swap->setToolTip(tr("Open A's scenario in the stages (undoable) and pin the current one as A"));
    m_clear = new QPushButton(tr("Clear"), this);
    m_clear->setObjectName(QStringLiteral("compareClear"));
    m_clear->setToolTip(tr("Forget A"));
    m_all = new QCheckBox(tr("All stages"), this);
    m_all->setObjectName(QStringLiteral("compareAllStages"));
    m_all->setToolTip(tr("Show the key figures of every stage, not only the current one's"));
    m_sides = new QLabel(this);
    m_sides->setObjectName(QStringLiteral("compareSides"));
    m_sides->setTextFormat(Qt::RichText);
    m_sides->setWordWrap(true);
    m_sides->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("compareProgress"));
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(120);
    m_progress->setFormat(tr("step %p%"));
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("compareCancel"));
    m_cancel->setToolTip(tr("Stop simulating the step (stage 5's figures stay missing until the next edit)"));
    m_cancel->hide();
    bar->addWidget(m_pin);
    bar->addWidget(m_swap);
    bar->addWidget(m_clear);
    bar->addWidget(m_all);
    bar->addSpacing(8);
    bar->addWidget(m_sides, 1);
    bar->addWidget(m_progress);
    bar->addWidget(m_cancel);
    layout->addLayout(bar);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("compareStatus"));
    m_status->setWordWrap(true);
    m_status->hide();
    layout->addWidget(m_status);

    // Page 0: how to use it. Page 1: the table beside (or above) the charts.
    m_pages = new QStackedWidget(this);
    m_hint = new QLabel(this);
    m_hint->setObjectName(QStringLiteral("compareHint"));
    m_hint->setWordWrap(true);
    m_hint->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_hint->setContentsMargins(4, 2, 4, 2);
    // Short: with nothing pinned the dock is only as tall as this line and the bar (MainWindow), so that the
    // stage keeps the window; the whole explanation is the tooltip.
    m_hint->setText(tr("<b>Compare two scenarios:</b> <b>Pin as A</b> keeps the scenario you have now; then change "
                       "anything in the stages — <b>B</b> is always the scenario in the stages, shown beside A with "
                       "the differences (▲▼)."));
    m_hint->setToolTip(tr("<p>Press <b>Pin as A</b> to keep the scenario you have now as <b>A</b>. Then change anything "
                          "in the stages — the model, the batch, the GPUs, the parallel plan, the fabric: <b>B</b> is "
                          "always the scenario in the stages, and every key figure of the current stage and the charts "
                          "show B beside A, the difference highlighted (▲▼, <i>better</i> or <i>worse</i>).</p>"
                          "<p><b>Swap</b> exchanges A and B (undoable), <b>Clear</b> forgets A.</p>"));
    m_pages->addWidget(m_hint);

    m_model = new CompareTableModel(this);
    m_model->setDisplayUnits(AppSettings::instance()->displayUnits());
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("compareTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(CompareTableModel::FigureColumn, QHeaderView::Stretch);
    m_table->horizontalHeader()->setMinimumSectionSize(40);
    m_table->setMinimumWidth(420);

    auto* charts = new QWidget(this);
    auto* chartRow = new QHBoxLayout(charts);
    chartRow->setContentsMargins(0, 0, 0, 0);
    chartRow->setSpacing(4);
    const char* const names[3] = {"compareBytesChart", "compareStepChart", "compareMemoryChart"};
    for (int i = 0; i < 3; ++i) {
        auto* plot = new QCustomPlot(charts);
        plot->setObjectName(QString::fromLatin1(names[i]));
        plot->setMinimumSize(170, 170);
        keepPlotRoom(plot);
        QFont heading = font();
        heading.setBold(true);
        plot->plotLayout()->insertRow(0);
        plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, QString(), heading));
        for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
            axis->setTickLabelFont(font());
            axis->setLabelFont(font());
        }
        // One legend for the three charts: the coloured squares of A and B in the lines above them.
        plot->legend->setVisible(false);
        QFont ticks = font();
        ticks.setPointSizeF(font().pointSizeF() * 0.9);
        plot->xAxis->setTickLabelFont(ticks);
        plot->setMouseTracking(true);
        plot->installEventFilter(this);
        plot->xAxis->grid()->setVisible(false);
        new QCPBarsGroup(plot); // the A/B group, reused by every redraw
        const auto chart = Chart(i);
        connect(plot, &QCustomPlot::mouseMove, this, [this, chart](QMouseEvent* e) { showPlotTip(chart, e); });
        m_plots[i] = plot;
        chartRow->addWidget(plot, 1);
    }

    m_split = new QSplitter(Qt::Horizontal, this);
    m_split->setObjectName(QStringLiteral("compareSplit"));
    m_split->setChildrenCollapsible(false);
    m_split->addWidget(m_table);
    m_split->addWidget(charts);
    m_split->setStretchFactor(0, 1);
    m_split->setStretchFactor(1, 1);
    connect(m_split, &QSplitter::splitterMoved, this, [this] { m_splitMoved = true; });
    m_pages->addWidget(m_split);
    m_split->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Ignored); // until something is pinned (refresh)
    layout->addWidget(m_pages, 1);

    // The steps come from the document's results: B's is the document's own step, A's a pinned one.
    Results* results = m_document->results();
    for (BackgroundJob* job : {results->pinnedJob(), results->stepJob()}) {
        connect(job, &BackgroundJob::started, this, [this] {
            if (!m_aPending && !m_bPending)
                return;
            m_progress->setValue(0);
            m_progress->show();
            m_cancel->show();
        });
        connect(job, &BackgroundJob::progressed, this, [this](double f) { m_progress->setValue(int(f * 100)); });
    }
    connect(results, &Results::pinnedStepFinished, this, &ComparePanel::applyA);
    connect(results, &Results::stepFinished, this, &ComparePanel::applyB);
    connect(results, &Results::stepRefused, this, [this] {
        if (!m_bPending)
            return;
        m_bPending = false; // B has no step: its plan cannot run (its key figures say so) or it cannot be derived
        refresh();
    });
    connect(results->stepJob(), &BackgroundJob::cancelled, this, [this] {
        if (!m_bPending || m_document->isDeriving() || m_document->derivationGeneration() != m_document->generation())
            return; // stopped by an edit: B follows the next derivation
        m_bPending = false;
        m_bCancelled = true;
        m_b.stage5Note = "the simulation of the step was cancelled";
        refresh();
    });
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        Results* results = m_document->results();
        if (m_aPending) {
            results->cancelPinnedStep();
            m_aPending = false;
            m_a.stage5Note = "the simulation of the step was cancelled";
        }
        if (m_bPending && results->stepJob()->isBusy()) {
            results->cancelStep(); // its cancelled() marks B
        } else if (m_bPending) { // B waited for A's step
            m_bPending = false;
            m_bCancelled = true;
            m_b.stage5Note = "the simulation of the step was cancelled";
        }
        refresh();
    });

    connect(m_pin, &QPushButton::clicked, this, &ComparePanel::pin);
    connect(m_swap, &QPushButton::clicked, this, &ComparePanel::swap);
    connect(m_clear, &QPushButton::clicked, this, &ComparePanel::clear);
    connect(m_all, &QCheckBox::toggled, this, [this](bool on) {
        m_table->verticalHeader()->setVisible(on);
        fillTable();
    });
    connect(m_document, &Document::derived, this, &ComparePanel::onDerived);
    connect(m_document, &Document::problemsChanged, this, [this] { updateSides(); });
    AppSettings* settings = AppSettings::instance();
    connect(settings, &AppSettings::displayUnitsChanged, this, [this](DisplayUnits units) {
        m_model->setDisplayUnits(units);
        fillCharts();
    });
    connect(settings, &AppSettings::themeChanged, this, [this] { refresh(); });
    connect(settings, &AppSettings::paletteSchemeChanged, this, [this] { refresh(); });

    onDerived();
}

ComparePanel::~ComparePanel() = default;

QCustomPlot* ComparePanel::plot(Chart chart) const
{
    return m_plots[int(chart)];
}

double ComparePanel::chartScale(Chart chart) const
{
    return m_scale[int(chart)];
}

QStringList ComparePanel::chartCategories(Chart chart) const
{
    return m_categories[int(chart)];
}

void ComparePanel::setStage(int stage)
{
    stage = std::clamp(stage, 0, 4);
    if (stage == m_stage)
        return;
    m_stage = stage;
    fillTable();
}

void ComparePanel::setAllStages(bool all)
{
    m_all->setChecked(all);
}

bool ComparePanel::allStages() const
{
    return m_all->isChecked();
}

std::string ComparePanel::describe(const scenario::Derivation& d) const
{
    std::string gpu = d.gpu.name.empty() ? d.gpu.id : d.gpu.name;
    if (gpu.rfind("NVIDIA ", 0) == 0)
        gpu.erase(0, 7); // "A100 SXM 80 GB": the line stays one line in a dock
    std::string s = d.model.name + ", " + formatUnsigned(d.cluster.nodes * d.cluster.gpusPerNode) + " × " + gpu;
    if (d.stage3) {
        const parallel::ParallelPlan& p = d.stage3->plan;
        s += ", dp " + std::to_string(p.dp) + " · pp " + std::to_string(p.pp) + " · tp " + std::to_string(p.tp);
        if (p.ep > 1)
            s += " · ep " + std::to_string(p.ep);
    } else {
        s += ", a plan that cannot run";
    }
    return s;
}

void ComparePanel::pin()
{
    if (!m_document->problems().empty()) {
        m_status->setText(tr("The scenario cannot be derived (see the stages), so it cannot be pinned as A: fix it "
                             "first. %1 was kept.")
                              .arg(m_pinned ? tr("The A you pinned before") : tr("Nothing")));
        m_status->setStyleSheet(QStringLiteral("QLabel { color: %1; }").arg(theme::errorColor().name()));
        m_status->show();
        return;
    }
    if (m_document->isDeriving() || !m_document->derivation()) {
        m_pinRequested = true; // as soon as the derivation of the current scenario is done
        updateSides();
        return;
    }
    pinNow();
}

void ComparePanel::pinNow()
{
    const auto d = m_document->derivation();
    if (!d)
        return;
    m_pinRequested = false;
    m_pinned = true;
    m_pinnedAt = QDateTime::currentDateTime();
    m_aScenario = m_document->scenario();
    const scenario::Scenario resolved = m_document->resolvedScenario();
    m_aDerivation = d;
    m_aDescription = describe(*d);
    m_status->hide();
    // The document's step of this very derivation is already simulated: that is A's step.
    Results* results = m_document->results();
    if (const auto step = results->step(); step && results->isStepCurrent() && step->derivation == d) {
        m_a = figuresOf(*step, resolved.name);
        m_aPending = false;
        results->cancelPinnedStep();
        if (m_bDerivation == d) {
            m_b = figuresOf(*step, m_document->scenario().name);
            m_bPending = false;
        }
    } else {
        m_a = scenario::keyFigures(*d, nullptr, resolved.name);
        m_aPending = true;
        results->requestPinnedStep(resolved, d);
        if (m_bDerivation == d) { // B is the same scenario: it takes A's step when it comes (applyA)
            m_bPending = true;
            m_bCancelled = false;
        }
    }
    refresh();
}

void ComparePanel::swap()
{
    if (!m_pinned)
        return;
    m_document->flushPendingEdits();
    // The document's scenario becomes A (its figures move over as they are), A's goes to the document.
    const scenario::Scenario oldA = m_aScenario;
    m_aScenario = m_document->scenario();
    m_aDerivation = m_bDerivation;
    m_a = m_b;
    m_aDescription = m_bDerivation ? describe(*m_bDerivation) : std::string();
    m_pinnedAt = QDateTime::currentDateTime();
    Results* results = m_document->results();
    results->cancelPinnedStep();
    m_aPending = false;
    if (m_bPending && m_bDerivation) {
        // B's step was still being simulated: simulate it for A now (the document's stops with the swap).
        m_bPending = false;
        m_aPending = true;
        results->requestPinnedStep(m_document->resolvedScenario(), m_bDerivation);
    }
    if (!(oldA == m_document->scenario()))
        m_document->undoStack()->push(new ReplaceScenarioCommand(m_document, oldA, tr("Swap A and B")));
    refresh(); // the document re-derives; B follows in onDerived()
}

void ComparePanel::clear()
{
    m_document->results()->cancelPinnedStep();
    m_pinned = false;
    m_pinRequested = false;
    m_aPending = false;
    m_bPending = false;
    m_aDerivation.reset();
    m_aScenario = {};
    m_a = {};
    m_aDescription.clear();
    m_comparison.reset();
    m_status->hide();
    refresh();
}

bool ComparePanel::waitUntilIdle(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (m_pinRequested && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return m_document->results()->waitUntilIdle(int(std::max<qint64>(deadline.remainingTime(), 0))) && !m_pinRequested;
}

void ComparePanel::onDerived()
{
    const auto d = m_document->derivation();
    if (!d)
        return;
    m_bDerivation = d;
    m_b = scenario::keyFigures(*d, nullptr, m_document->scenario().name);
    m_bCancelled = false;
    if (m_pinRequested) {
        m_bPending = false;
        pinNow();
        return;
    }
    m_bPending = m_pinned;
    requestB();
    refresh();
}

void ComparePanel::requestB()
{
    if (!m_pinned || !m_bDerivation || !m_bPending)
        return;
    if (!isVisible()) {
        m_bStale = true; // simulated when the panel is shown again (only a visible panel spends the time)
        return;
    }
    m_bStale = false;
    Results* results = m_document->results();
    if (const auto step = results->step(); step && results->isStepCurrent() && step->derivation == m_bDerivation) {
        applyB(step); // stage 5 simulated it already
        return;
    }
    if (m_aPending && m_aDerivation == m_bDerivation)
        return; // A's step is B's: applyA gives it to both
    results->requestStep();
}

void ComparePanel::applyA(const std::shared_ptr<const StepResult>& step)
{
    if (step->derivation != m_aDerivation)
        return;
    m_aPending = false;
    m_a = figuresOf(*step, m_a.scenarioName);
    // B waiting on the same derivation: the same step.
    if (m_bPending && step->derivation == m_bDerivation && m_document->results()->isCurrent(step->generation)) {
        m_b = m_a;
        m_b.scenarioName = m_document->scenario().name;
        m_bPending = false;
    }
    refresh();
}

void ComparePanel::applyB(const std::shared_ptr<const StepResult>& step)
{
    if (step->derivation != m_bDerivation || !m_document->results()->isCurrent(step->generation))
        return; // a newer edit is on its way
    if (!m_bPending && (m_b.simulated || !m_pinned))
        return;
    m_bPending = false;
    m_bCancelled = step->cancelled;
    m_b = figuresOf(*step, m_document->scenario().name);
    refresh();
}

void ComparePanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_bStale)
        requestB();
}

void ComparePanel::hideEvent(QHideEvent* event)
{
    QWidget::hideEvent(event);
    // Hidden: B's step is asked for again when shown (the document's step runs on for stage 5, and A's,
    // pinned once, to its end).
    if (m_bPending)
        m_bStale = true;
}

int ComparePanel::compactHeight() const
{
    const QMargins m = layout()->contentsMargins();
    const int hintWidth = std::max(200, width() - m.left() - m.right());
    return m.top() + m.bottom() + layout()->itemAt(0)->sizeHint().height() + layout()->spacing() +
           m_hint->heightForWidth(hintWidth);
}

void ComparePanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // Wide and low (a dock under the stages): the table beside the charts; else the table above them.
    const Qt::Orientation o = width() > 2 * height() ? Qt::Horizontal : Qt::Vertical;
    if (m_split->orientation() != o || !m_splitMoved) {
        m_split->setOrientation(o);
        if (o == Qt::Horizontal)
            m_split->setSizes({width() / 2, width() / 2});
        else
            m_split->setSizes({height() / 2, height() / 2});
    }
}

void ComparePanel::refresh()
{
    m_pages->setCurrentIndex(m_pinned ? 1 : 0);
    // The table and the charts ask no room while the hint is shown (a stack asks its largest page's).
    m_split->setSizePolicy(QSizePolicy::Preferred, m_pinned ? QSizePolicy::Preferred : QSizePolicy::Ignored);
    if (m_pinned != m_shownPinned) {
        m_shownPinned = m_pinned;
        emit pinnedChanged(m_pinned);
    }
    m_swap->setEnabled(m_pinned);
    m_clear->setEnabled(m_pinned);
    m_all->setEnabled(m_pinned);
    const Results* results = m_document->results();
    const bool busy = (m_aPending && results->pinnedJob()->isBusy()) || (m_bPending && results->stepJob()->isBusy());
    if (!busy) {
        m_progress->hide();
        m_cancel->hide();
    }
    if (m_pinned)
        m_comparison = scenario::compare(m_a, m_b);
    else
        m_comparison.reset();
    fillTable();
    fillCharts();
    updateSides();
}

void ComparePanel::updateSides()
{
    const auto b = m_document->derivation();
    const QString bName = qs(m_document->scenario().name);
    const QString bWhat = b ? qs(describe(*b)) : tr("not derived yet");
    QString text;
    if (m_pinRequested) {
        text = tr("<b>A</b>: waiting for the derivation of the current scenario to pin it…");
    } else if (m_pinned) {
        text = tr("%5 <b>A</b> · pinned %1: <b>%2</b> — %3%4")
                   .arg(m_pinnedAt.toString(QStringLiteral("HH:mm:ss")), qs(m_a.scenarioName).toHtmlEscaped(),
                        qs(m_aDescription).toHtmlEscaped(),
                        m_aPending                                        ? tr(" <i>(simulating its step…)</i>")
                        : !m_a.simulated && !m_a.stage5Note.empty() ? tr(" <i>(no simulated step: %1)</i>")
                                                                          .arg(qs(m_a.stage5Note).toHtmlEscaped())
                                                                    : QString(),
                        square(colourA()));
    } else {
        text = tr("<b>A</b>: nothing pinned yet");
    }
    QString bLine = tr("%3 <b>B</b> · the stages now: <b>%1</b> — %2")
                        .arg(bName.toHtmlEscaped(), bWhat.toHtmlEscaped(), square(colourB()));
    if (!m_document->problems().empty())
        bLine += QStringLiteral(" <span style='color:%1'>%2</span>")
                     .arg(theme::errorColor().name(), tr("(the scenario cannot be derived: B shows its last derivation)"));
    else if (m_pinned && m_bPending && m_bStale)
        bLine += tr(" <i>(its step is simulated when this panel is shown)</i>");
    else if (m_pinned && m_bPending)
        bLine += tr(" <i>(simulating its step…)</i>");
    else if (m_bCancelled)
        bLine += tr(" <i>(simulation cancelled: stage 5 waits for the next edit)</i>");
    else if (m_pinned && !m_b.simulated && !m_b.stage5Note.empty())
        bLine += tr(" <i>(no simulated step: %1)</i>").arg(qs(m_b.stage5Note).toHtmlEscaped());
    m_sides->setText(text + QStringLiteral("<br>") + bLine);
    m_sides->setToolTip(m_sides->text());
}

void ComparePanel::fillTable()
{
    const std::optional<Stage> stage = m_all->isChecked() ? std::nullopt : stageAtIndex(m_stage);
    const QString noteA = m_aPending ? QString() : qs(m_a.stage5Note);
    const QString noteB = m_bPending ? QString() : qs(m_b.stage5Note);
    m_model->setComparison(m_comparison ? &*m_comparison : nullptr, stage, m_aPending, m_bPending, noteA, noteB);
}

void ComparePanel::fillCharts()
{
    static const scenario::Series empty;
    fillChart(Chart::Bytes, m_comparison ? m_comparison->bytesByStrategy : empty);
    fillChart(Chart::Step, m_comparison ? m_comparison->stepSplit : empty);
    fillChart(Chart::Memory, m_comparison ? m_comparison->memoryByKind : empty);
}

void ComparePanel::fillChart(Chart chart, const scenario::Series& series)
{
    QCustomPlot* plot = m_plots[int(chart)];
    plot->clearPlottables();
    plot->clearItems();
    m_categories[int(chart)].clear();
    auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
    static const char* const kTitles[3] = {QT_TR_NOOP("Bytes per GPU per step"), QT_TR_NOOP("Where the step goes"),
                                           QT_TR_NOOP("Memory per GPU")};
    QString heading = tr(kTitles[int(chart)]);
    if (chart == Chart::Step && (m_aPending || m_bPending))
        heading += tr(" — simulating %1…").arg(m_aPending && m_bPending ? tr("A and B") : m_aPending ? tr("A") : tr("B"));
    if (title)
        title->setText(heading);

    const std::string unit = series.unit.empty() ? (chart == Chart::Step ? "s" : "B") : series.unit;
    double largest = 0;
    for (const scenario::SeriesBar& b : series.bars)
        for (const auto& v : {b.a, b.b})
            if (v && std::isfinite(*v))
                largest = std::max(largest, *v);
    const AxisUnit axis = axisUnit(unit, largest, AppSettings::instance()->displayUnits());
    m_scale[int(chart)] = axis.scale;

    auto* group = plot->findChild<QCPBarsGroup*>();
    auto makeBars = [&](const QString& name, const QColor& colour) {
        auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
        bars->setName(name);
        bars->setWidth(0.36);
        bars->setPen(QPen(colour.darker(130)));
        bars->setBrush(colour);
        if (group)
            bars->setBarsGroup(group);
        return bars;
    };
    QCPBars* a = makeBars(tr("A (pinned)"), colourA());
    QCPBars* b = makeBars(tr("B (now)"), colourB());
    a->setObjectName(QStringLiteral("A"));
    b->setObjectName(QStringLiteral("B"));
    if (group)
        group->setSpacing(2);

    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int i = 0; i < int(series.bars.size()); ++i) {
        const scenario::SeriesBar& bar = series.bars[std::size_t(i)];
        QString label = qs(bar.label);
        label.replace(QLatin1Char(' '), QLatin1Char('\n')); // "exposed DP" on two short lines
        if (bar.a && !bar.b)
            label += tr("\n(only A)");
        else if (bar.b && !bar.a)
            label += tr("\n(only B)");
        ticker->addTick(i, label);
        m_categories[int(chart)] << qs(bar.label);
        if (bar.a)
            a->addData(i, *bar.a / axis.scale);
        if (bar.b)
            b->addData(i, *bar.b / axis.scale);
    }
    plot->xAxis->setTicker(ticker);
    plot->xAxis->setTickLength(0, 0);
    plot->xAxis->setRange(-0.6, std::max(0.6, double(series.bars.size()) - 0.4));
    plot->yAxis->setRange(0, largest > 0 ? largest / axis.scale * 1.3 : 1.0);
    static const char* const kAxes[3] = {QT_TR_NOOP("%1 per GPU per step"), QT_TR_NOOP("%1 per GPU (mean)"),
                                         QT_TR_NOOP("%1 on the plan's largest GPU")};
    plot->yAxis->setLabel(tr(kAxes[int(chart)]).arg(axis.name));
    fitTicks(chart);
    if (series.bars.empty()) {
        auto* note = new QCPItemText(plot);
        note->position->setType(QCPItemPosition::ptAxisRectRatio);
        note->position->setCoords(0.5, 0.5);
        note->setColor(palette::kMuted);
        note->setText(!m_pinned                       ? tr("Pin a scenario as A")
                      : chart == Chart::Step && (m_aPending || m_bPending) ? tr("simulating…")
                      : chart == Chart::Step          ? tr("no simulated step")
                                                      : tr("nothing on either side"));
    }
    plot->replot();
}

void ComparePanel::fitTicks(Chart chart)
{
    // Category names slanted when they do not fit side by side under their bars.
    QCustomPlot* plot = m_plots[int(chart)];
    const auto ticker = plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
    if (!ticker)
        return;
    const QFontMetrics metrics(plot->xAxis->tickLabelFont());
    int widest = 0;
    for (const QString& label : ticker->ticks())
        for (const QString& line : label.split(QLatin1Char('\n')))
            widest = std::max(widest, metrics.horizontalAdvance(line));
    const int n = int(ticker->ticks().size());
    const int axisWidth = plot->axisRect()->width() > 0 ? plot->axisRect()->width() : plot->width() - 70;
    const int room = n > 0 ? axisWidth / n : axisWidth;
    const double rotation = widest + 6 > room ? -30.0 : 0.0;
    if (plot->xAxis->tickLabelRotation() != rotation) {
        plot->xAxis->setTickLabelRotation(rotation);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

bool ComparePanel::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Resize)
        for (int i = 0; i < 3; ++i)
            if (watched == m_plots[i])
                fitTicks(Chart(i));
    return QWidget::eventFilter(watched, event);
}

void ComparePanel::showPlotTip(Chart chart, QMouseEvent* event)
{
    QCustomPlot* plot = m_plots[int(chart)];
    int index = -1;
    auto* bars = qobject_cast<QCPBars*>(plot->plottableAt(event->position(), false, &index));
    if (!bars || index < 0 || index >= bars->data()->size() || !m_comparison) {
        QToolTip::hideText();
        return;
    }
    const scenario::Series& series = chart == Chart::Bytes  ? m_comparison->bytesByStrategy
                                     : chart == Chart::Step ? m_comparison->stepSplit
                                                            : m_comparison->memoryByKind;
    const int key = int(std::lround((bars->data()->constBegin() + index)->key));
    if (key < 0 || key >= int(series.bars.size()))
        return;
    const scenario::SeriesBar& bar = series.bars[std::size_t(key)];
    const bool sideA = bars->objectName() == QStringLiteral("A");
    const scenario::KeyFigures& side = sideA ? m_a : m_b;
    const Figure* f = side.figures.find(bar.id);
    if (!f)
        return;
    const QString text = tr("%1 · %2 = %3\n%4")
                             .arg(sideA ? QStringLiteral("A") : QStringLiteral("B"), qs(f->label),
                                  qs(formatValue(f->value, f->unit, AppSettings::instance()->displayUnits())),
                                  qs(f->formula));
    QToolTip::showText(event->globalPosition().toPoint(), text, plot);
}

} // namespace tw::ui
