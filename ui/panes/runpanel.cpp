#include "runpanel.h"

#include "base/unitparse.h"
#include "base/units.h"
#include "charts/chartframe.h"
#include "document/document.h"
#include "document/results.h"
#include "network/simulate.h"
#include "panes/panekit.h"
#include "scenario/derive.h"
#include "settings/appsettings.h"
#include "settings/theme.h"
#include "views/figuretablemodel.h"
#include "views/palette.h"
#include "views/qtstrings.h"
#include "workers/backgroundjob.h"

#include <qcustomplot.h>

#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {

// A token count as people write it: "15.6T", "300B", "2.49B", "950M" (parseCount reads it back).
QString compactCount(double v)
{
    struct Unit {
        double scale;
        const char* suffix;
    };
    for (const Unit u : {Unit{1e12, "T"}, Unit{1e9, "B"}, Unit{1e6, "M"}, Unit{1e3, "k"}})
        if (v >= u.scale)
            return QString::number(v / u.scale, 'g', 6) + QLatin1String(u.suffix);
    return QString::number(v, 'g', 12);
}

QDoubleSpinBox* spin(QWidget* parent, const char* name, double lo, double hi, int decimals, double step,
                     const QString& suffix, const QString& tip)
{
    auto* box = new QDoubleSpinBox(parent);
    box->setObjectName(QString::fromLatin1(name));
    box->setRange(lo, hi);
    box->setDecimals(decimals);
    box->setSingleStep(step);
    box->setSuffix(suffix);
    box->setToolTip(tip);
    box->setKeyboardTracking(false); // one edit per value typed, not one per digit
    return box;
}

} // namespace

RunPanel::RunPanel(Document* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
{
    // The run in a sentence over the inputs and the figures (their chain below them); beside them, on a
    // splitter, the goodput chart at the tab's full height (the sentence over everything made this tab
    // the tallest of stage 5's: at 1280×720 it moved the tab bar and scrolled the stage).
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* left = new QWidget(this);
    auto* column = new QVBoxLayout(left);
    column->setContentsMargins(0, 0, 0, 0);
    m_status = new QLabel(left);
    m_status->setObjectName(QStringLiteral("runStatus"));
    m_status->setWordWrap(true);
    // Three lines reserved: a longer sentence (a cost added) must not move the inputs under the pointer.
    m_status->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    reserveStatusLines();
    column->addWidget(m_status);
    auto* layout = new QHBoxLayout;
    layout->setContentsMargins(0, 0, 0, 0);
    column->addLayout(layout, 1);
    layout->addWidget(buildInputs());
    m_figures = new FigureTableModel(this);
    auto* figures = panekit::figurePage(left, m_figures, "run", tr("Click a figure to see where its number comes from."),
                                        Qt::Vertical, &m_table, &m_chain);
    layout->addWidget(figures, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("runSplit"));
    split->setChildrenCollapsible(false);
    split->addWidget(left);
    outer->addWidget(split, 1);

    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("runGoodputChart"));
    keepPlotRoom(m_plot);
    m_title = frameChart(m_plot, font(), tr("Goodput against the cluster size"));
    m_plot->legend->setWrap(3);
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    // Decades as people say them (1k, 10k, 100k): short labels that never run into each other.
    auto ticker = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
    double decade = 1;
    for (const char* label : {"1", "10", "100", "1k", "10k", "100k", "1M"}) {
        ticker->addTick(decade, QString::fromLatin1(label));
        decade *= 10;
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setLabel(tr("GPUs"));
    m_plot->yAxis->setLabel(tr("goodput (%)"));
    m_plot->yAxis2->setLabel(tr("checkpoint interval (min)"));
    m_plot->yAxis2->setTickLabelFont(font());
    m_plot->yAxis2->setLabelFont(font());
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis})
        axis->grid()->setPen(QPen(QColor(0xd1, 0xd5, 0xdb), 1, Qt::DotLine));
    split->addWidget(m_plot);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    connect(m_table, &QAbstractItemView::clicked, this, [this](const QModelIndex& index) {
        showFigure(index.data(FigureTableModel::FigureIdRole).toString());
    });
    connect(m_document, &Document::scenarioChanged, this, [this] {
        setInputs(m_document->scenario().run);
        refresh();
    });
    connect(m_document, &Document::runChanged, this, &RunPanel::refresh);
    connect(m_document, &Document::problemsChanged, this, &RunPanel::refresh);
    Results* results = m_document->results();
    connect(results, &Results::stepFinished, this, &RunPanel::refresh);
    connect(results, &Results::outdated, this, &RunPanel::refresh);
    connect(results, &Results::rampFinished, this, &RunPanel::refresh);
    connect(results->rampJob(), &BackgroundJob::progressed, this, [this](double f) {
        if (!m_run && !m_document->scenario().run.batchRamp.empty())
            m_status->setText(rampWaitText(int(m_document->scenario().run.batchRamp.size()), f));
    });
    connect(AppSettings::instance(), &AppSettings::displayUnitsChanged, this, &RunPanel::applyUnits);
    applyUnits();
    setInputs(m_document->scenario().run);
    refresh();
}

RunPanel::~RunPanel() = default;

void RunPanel::reserveStatusLines()
{
    m_status->setFixedHeight(3 * m_status->fontMetrics().lineSpacing() + 2);
}

void RunPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_run && !m_document->scenario().run.batchRamp.empty())
        refresh(); // the ramp's phases are simulated when the run is looked at
}

QString RunPanel::rampWaitText(int phases, double fraction)
{
    return (phases == 1 ? tr("Simulating the batch ramp's phase (run.batch_ramp) with its own batch and GPUs: %1 %")
                        : tr("Simulating the %1 phases of the batch ramp (run.batch_ramp), each with its own batch and "
                             "GPUs: %2 %")
                              .arg(phases))
        .arg(int(100 * fraction));
}

void RunPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange && m_status)
        reserveStatusLines(); // presentation mode's larger font keeps its three lines
}

QWidget* RunPanel::buildInputs()
{
    auto* box = new QWidget(this);
    auto* form = new QFormLayout(box);
    form->setContentsMargins(0, 0, 6, 0);
    form->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
    m_tokens = new QLineEdit(box);
    m_tokens->setObjectName(QStringLiteral("runTokens"));
    m_tokens->setToolTip(tr("Tokens to train D: a number or a count with its unit (15.6T, 300B, 2e12). Empty: 20 "
                            "tokens per parameter, Chinchilla's compute-optimal ratio."));
    m_tokensProblem = new QLabel(box);
    m_tokensProblem->setObjectName(QStringLiteral("runTokensProblem"));
    m_tokensProblem->setWordWrap(true);
    m_tokensProblem->hide();
    m_price = spin(box, "runPrice", 0, 10000, 2, 0.25, QString(),
                   tr("Price of one GPU-hour (any currency); none: no cost is computed"));
    m_price->setSpecialValueText(tr("none"));
    m_pue = spin(box, "runPue", 1, 3, 2, 0.05, QString(),
                 tr("The facility's power usage effectiveness: total power / IT power (1.10: a hyperscale data centre)"));
    m_restart = spin(box, "runRestart", 0, 604800, 0, 60, tr(" s"),
                     tr("From an interruption to training again, before the checkpoint is read: detect, replace, "
                        "relaunch, re-form the collectives"));
    m_storage = spin(box, "runStorage", 0.001, 1000, 3, 0.05, tr(" GB/s"),
                     tr("Storage bandwidth per GPU for writing and reading checkpoints (Llama 3: 2 TB/s for 16,384 "
                        "GPUs, 0.122 GB/s each)"));
    form->addRow(tr("Tokens D"), m_tokens);
    form->addRow(m_tokensProblem);
    form->addRow(tr("Price / GPU-h"), m_price);
    form->addRow(tr("PUE"), m_pue);
    form->addRow(tr("Restart"), m_restart);
    form->addRow(tr("Storage / GPU"), m_storage);
    // The tab is short on a projector: where the other inputs are goes in the tooltip, not in a line.
    box->setToolTip(tr("Failure rates and the other inputs: the scenario file's run block (docs/scenario.md). "
                       "Formulas: Help → How the numbers are computed, §5.6 and §5.7."));
    box->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Preferred);

    connect(m_tokens, &QLineEdit::editingFinished, this, &RunPanel::commitTokens);
    auto edit = [this](QDoubleSpinBox* box, Field field) {
        connect(box, &QDoubleSpinBox::valueChanged, this, [this, field](double v) { m_document->setField(field, v); });
    };
    edit(m_price, Field::RunPricePerGpuHour);
    edit(m_pue, Field::RunPue);
    edit(m_restart, Field::RunRestartSeconds);
    edit(m_storage, Field::RunStorageGBpsPerGpu);
    return box;
}

void RunPanel::setInputs(const scenario::RunSettings& run)
{
    // The count as typed stays while it is being typed or refused; otherwise the edit shows the scenario's.
    if (!m_tokens->hasFocus() && m_tokensProblem->isHidden()) {
        const QSignalBlocker block(m_tokens);
        m_tokens->setText(run.tokens > 0 ? compactCount(run.tokens) : QString());
    }
    for (const auto& [box, value] : {std::pair{m_price, run.pricePerGpuHour}, std::pair{m_pue, run.pue},
                                     std::pair{m_restart, run.checkpoint.restartSeconds},
                                     std::pair{m_storage, run.checkpoint.storageGBpsPerGpu}}) {
        const QSignalBlocker block(box);
        box->setValue(value);
    }
}

void RunPanel::commitTokens()
{
    const QString text = m_tokens->text().trimmed();
    double tokens = 0;
    if (!text.isEmpty()) {
        const auto parsed = parseCount(text.toStdString());
        const bool ok = parsed.ok() && parsed.value() >= 1 && parsed.value() <= scenario::kMaxRunTokens;
        if (!ok) {
            m_tokensProblem->setText(
                tr("run.tokens: %1").arg(parsed.ok() ? tr("between 1 and 10^16 tokens, got %1").arg(text)
                                                     : qs(parsed.error().message)));
            theme::showProblem(m_tokensProblem, true);
            m_tokensProblem->show();
            return; // what was typed stays, the run keeps its tokens
        }
        tokens = parsed.value();
    }
    m_tokensProblem->hide();
    if (!m_document->setField(Field::RunTokens, tokens))
        setInputs(m_document->scenario().run); // unchanged: the edit shows the count as the scenario has it
}

void RunPanel::clearRun(const QString& why)
{
    m_run.reset();
    m_all = FigureSet();
    m_figures->setFigures(FigureSet());
    m_chain->clear();
    m_status->setText(why);
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_title->setText(tr("Goodput against the cluster size"));
    setResultGeneration(m_plot, 0);
    m_plot->replot();
}

void RunPanel::refresh()
{
    Results* results = m_document->results();
    const auto step = results->step();
    const QString name = panekit::scenarioName(m_document);
    if (!m_document->problems().empty()) {
        clearRun(tr("The run needs a scenario without problems: %1.")
                     .arg(qs(m_document->problems().front().toString())));
        return;
    }
    if (!step || !results->isStepCurrent() || !step->ok()) {
        clearRun(results->stepProblem().isEmpty()
                     ? tr("The run repeats the simulated step: it appears when %1's step is simulated.").arg(name)
                     : results->stepProblem());
        return;
    }
    const auto& ramp = m_document->scenario().run.batchRamp;
    if (!ramp.empty() && !results->isRampCurrent()) {
        // Each phase is a simulation of its own: run while the tab is looked at (or a report asks).
        if (isVisible())
            results->requestRamp();
        clearRun(rampWaitText(int(ramp.size()), 0));
        return;
    }
    auto run = runOfStep(*step, m_document->scenario().run, ramp.empty() ? nullptr : results->ramp().get());
    if (!run) {
        clearRun(qs(run.error().toString()));
        return;
    }
    m_run = std::move(run).value();
    const scenario::RunEstimate& r = *m_run;
    m_all = FigureSet();
    for (const FigureSet* set : {&step->derivation->figures, &step->simulation->figures, &r.figures})
        for (const Figure& f : set->all())
            m_all.add(f);
    m_figures->setFigures(r.figures);
    const QString current = m_chain->property("figureId").toString();
    if (current.isEmpty() || !showFigure(current))
        m_chain->clear();
    m_tokens->setPlaceholderText(r.chinchilla ? tr("20·P = %1").arg(compactCount(r.tokens)) : QString());
    const scenario::Resilience& x = r.resilience;
    m_status->setText(
        tr("<b>%1</b> back to back, <b>%2</b> with failures (%3 % goodput, a checkpoint every %8) on %4 GPUs: %5 "
           "GPU-hours%6%7")
            .arg(qs(formatDuration(r.seconds)), qs(formatDuration(r.secondsWithFailures)), qs(formatCount(100 * x.goodput, 1)),
                 qs(formatCount(r.gpus, 0)), qs(formatCount(r.gpuHoursWithFailures, 0)),
                 r.cost ? tr(", cost %1").arg(qs(formatCount(*r.cost, 0))) : QString(),
                 (r.chinchilla ? tr(". No tokens given: 20 per parameter (Chinchilla)") : QString())
                     + (r.phases.empty() ? QString()
                                         : tr(". The batch ramp's first %1 steps (%2) before the batch's G")
                                               .arg(qs(formatCount(r.steps - r.phases.back().steps, 0)),
                                                    qs(formatDuration(r.seconds - r.phases.back().steps
                                                                                      * r.phases.back().stepSeconds)))),
                 qs(formatDuration(x.intervalSeconds))));
    drawGoodput(r, double(step->scenario->hardware.gpusPerNode));
    setResultGeneration(m_plot, step->generation);
}

void RunPanel::drawGoodput(const scenario::RunEstimate& r, double gpusPerNode)
{
    const scenario::Resilience& x = r.resilience;
    // 1,000 to 100,000 GPUs, reaching down (by decades) or up to this cluster when it is outside.
    const double from = x.gpus < 1000 ? std::pow(10.0, std::floor(std::log10(x.gpus))) : 1000;
    const double to = std::max(1e5, x.gpus);
    const auto curve = scenario::goodputAgainstClusterSize(m_document->scenario().run, gpusPerNode, x.checkpointBytes,
                                                           r.stepSeconds, from, to);
    QVector<double> gpus, goodput, interval;
    for (const scenario::GoodputPoint& p : curve) {
        gpus << p.gpus;
        goodput << 100 * p.at.goodput;
        interval << p.at.intervalSeconds / 60;
    }
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_plot->yAxis2->setVisible(true);
    QCPGraph* g = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    g->setPen(QPen(palette::categorical(0), 2.2));
    g->setName(tr("goodput"));
    g->setData(gpus, goodput, true);
    QCPGraph* t = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    t->setPen(QPen(palette::kMuted, 2, Qt::DashLine));
    t->setName(tr("interval →"));
    t->setData(gpus, interval, true);
    // This cluster: a ringed point on the goodput line.
    QCPGraph* here = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    here->setLineStyle(QCPGraph::lsNone);
    here->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(palette::categorical(1), 3), Qt::white, 12));
    here->setName(tr("%1 GPUs").arg(qs(formatCount(x.gpus, 0)))); // short: the legend's width is the chart's minimum
    here->setData({x.gpus}, {100 * x.goodput});
    const double lo = from / 1.25, hi = to * 1.25;
    m_plot->xAxis->setRange(lo, hi);
    double minGoodput = 100 * x.goodput;
    for (double v : goodput)
        minGoodput = std::min(minGoodput, v);
    m_plot->yAxis->setRange(std::max(0.0, std::floor(minGoodput / 5) * 5 - 5), 100);
    double maxInterval = 0;
    for (double v : interval)
        maxInterval = std::max(maxInterval, v);
    m_plot->yAxis2->setRange(0, std::max(1.0, maxInterval * 1.1));
    // Short: the title's width is the chart's minimum, and the tab shares the stage's width.
    m_title->setText(tr("Goodput against the cluster size"));
    m_plot->replot();
}

QString RunPanel::chartTitle() const
{
    return m_title->text();
}

bool RunPanel::showFigure(const QString& id)
{
    if (!m_run || !m_run->figures.find(id.toStdString()))
        return false;
    panekit::selectFigureRow(m_table, id);
    return panekit::showFigureChain(m_chain, m_all, id, AppSettings::instance()->displayUnits());
}

void RunPanel::applyUnits()
{
    m_figures->setDisplayUnits(AppSettings::instance()->displayUnits());
    if (const QString id = m_chain->property("figureId").toString(); !id.isEmpty())
        showFigure(id);
}

} // namespace tw::ui
