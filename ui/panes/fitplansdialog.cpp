#include "fitplansdialog.h"

#include "document/commands.h"
#include "document/document.h"
#include "document/results.h"
#include "settings/appsettings.h"
#include "shell/screenfit.h"
#include "workers/backgroundjob.h"

#include "base/units.h"
#include "views/qtstrings.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QUndoStack>
#include <QVBoxLayout>

namespace tw::ui {

FitPlansDialog::FitPlansDialog(Document* document, QWidget* parent)
    : QDialog(parent)
    , m_document(document)
{
    setObjectName(QStringLiteral("fitPlansDialog"));
    setWindowTitle(tr("Plans that fit"));
    auto* layout = new QVBoxLayout(this);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("fitStatus"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    layout->addWidget(m_progress);
    m_table = new QTableWidget(0, 12, this);
    m_table->setObjectName(QStringLiteral("fitTable"));
    m_table->setHorizontalHeaderLabels({tr("dp × pp × tp"), tr("EP"), tr("Sharding"), tr("SP"), tr("Schedule"), tr("B"),
                                        tr("N_acc"), tr("Recompute"), tr("Step time"), tr("MFU"), tr("Exposed comm."),
                                        tr("Peak memory")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setVisible(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setToolTip(tr("Step time: simulated on the scenario's fabric (as tokenwire-cli simulate); \"~\" marks the "
                           "coarse estimate (compute, pipeline bubble, communication at nominal rates) of a plan not simulated yet. Peak memory: "
                           "the plan's largest GPU with the framework reserve and the allocator headroom."));
    layout->addWidget(m_table, 1);
    auto* buttons = new QDialogButtonBox(this);
    m_apply = buttons->addButton(tr("Apply plan"), QDialogButtonBox::AcceptRole);
    m_apply->setObjectName(QStringLiteral("fitApply"));
    m_apply->setEnabled(false);
    m_cancel = buttons->addButton(tr("Stop search"), QDialogButtonBox::ActionRole);
    m_cancel->setObjectName(QStringLiteral("fitCancel"));
    QPushButton* close = buttons->addButton(QDialogButtonBox::Close);
    layout->addWidget(buttons);
    screenfit::resizeToFit(this, {1000, 480}); // a 1280×720 projector included

    // The search runs on the document's results; this dialog shows what it finds.
    Results* results = m_document->results();
    connect(results->fitJob(), &BackgroundJob::progressed, this,
            [this](double f) { m_progress->setValue(int(std::clamp(f, 0.0, 1.0) * 1000)); });
    connect(results, &Results::fitFound, this, [this](const std::shared_ptr<const FitResult>& found) {
        if (!m_searching)
            return; // another dialog's search, or one this dialog stopped
        const Result<scenario::FitSearch>& r = found->search;
        if (!found->final) {
            if (r)
                showPlans(r.value(), false);
            return;
        }
        m_searching = false;
        m_cancel->setEnabled(false);
        if (!r) {
            m_status->setText(r.error().message == "cancelled" ? tr("Search stopped; the plans found so far are listed.")
                                                               : tr("The search failed: %1").arg(qs(r.error().toString())));
            return;
        }
        m_progress->setValue(1000);
        showPlans(r.value(), true);
    });
    connect(results->fitJob(), &BackgroundJob::cancelled, this, [this] {
        if (!m_searching)
            return;
        m_searching = false;
        m_cancel->setEnabled(false);
        m_status->setText(m_document->generation() == m_searchedGeneration
                              ? tr("Search stopped; the plans found so far are listed.")
                              : tr("The scenario changed, so the search stopped: the plans listed were found for the "
                                   "scenario as it was. Search again for the current one."));
    });
    connect(m_cancel, &QPushButton::clicked, this, &FitPlansDialog::cancelSearch);
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    connect(m_apply, &QPushButton::clicked, this, [this] {
        if (applyPlan(m_table->currentRow()))
            accept();
    });
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
            [this] { m_apply->setEnabled(m_table->currentRow() >= 0 && m_table->currentRow() < int(m_plans.size())); });
}

FitPlansDialog::~FitPlansDialog() = default;

void FitPlansDialog::startSearch(const scenario::FitOptions& options)
{
    m_searched = m_document->scenario();
    m_plans.clear();
    m_table->setRowCount(0);
    m_partials = 0;
    m_progress->setValue(0);
    m_cancel->setEnabled(true);
    m_apply->setEnabled(false);
    m_status->setText(tr("Searching the layouts of %1 GPUs: degrees, sharding, sequence parallelism, recomputation, "
                         "micro-batch, schedule…")
                          .arg(m_searched.hardware.gpuCount()));
    m_searching = true;
    m_searchedGeneration = m_document->generation();
    m_document->results()->requestFit(options);
}

void FitPlansDialog::cancelSearch()
{
    if (m_searching)
        m_document->results()->cancelFit();
    m_cancel->setEnabled(false);
}

bool FitPlansDialog::isSearching() const
{
    return m_searching;
}

bool FitPlansDialog::waitUntilIdle(int timeoutMs)
{
    const bool idle = m_document->results()->fitJob()->waitUntilIdle(timeoutMs);
    QCoreApplication::processEvents();
    return idle && !m_searching;
}

void FitPlansDialog::showPlans(const scenario::FitSearch& search, bool done)
{
    ++m_partials;
    const DisplayUnits units = AppSettings::instance()->displayUnits();
    const int selected = m_table->currentRow();
    m_plans = search.plans;
    m_table->setRowCount(int(m_plans.size()));
    for (int row = 0; row < int(m_plans.size()); ++row) {
        const scenario::FitPlan& f = m_plans[std::size_t(row)];
        const parallel::ParallelPlan& p = f.plan;
        const QString schedule = p.pp == 1 ? QStringLiteral("—")
                                 : p.schedule == parallel::PipelineSchedule::Interleaved
                                     ? tr("interleaved, v = %1").arg(p.virtualStages)
                                     : qs(std::string(parallel::toString(p.schedule)));
        const QStringList cells{tr("%1 × %2 × %3").arg(p.dp).arg(p.pp).arg(p.tp),
                                QString::number(p.ep),
                                qs(std::string(parallel::toString(p.sharding))),
                                p.sequenceParallel ? tr("yes") : tr("no"),
                                schedule,
                                QString::number(f.microBatch),
                                QString::number(f.accumulation),
                                qs(std::string(model::toString(f.recompute))),
                                (f.simulated ? QString() : QStringLiteral("~")) + qs(formatSeconds(f.stepSeconds)),
                                f.simulated ? QStringLiteral("%1 %").arg(f.mfu * 100, 0, 'f', 1) : QStringLiteral("—"),
                                f.simulated ? qs(formatSeconds(f.exposedCommSeconds)) : QStringLiteral("—"),
                                qs(formatBytes(f.peakBytes, units))};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c >= 5 && c != 7)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, c, item);
        }
    }
    if (selected >= 0 && selected < m_table->rowCount())
        m_table->selectRow(selected);
    const double capacity = search.fitting.empty() ? 0.0 : search.fitting.front().capacityBytes;
    QString text = tr("%1 layouts looked at%2, %3 valid, %4 fit in %5 per GPU.")
                       .arg(search.candidates)
                       .arg(search.truncated ? tr(" (stopped at the bound)") : QString())
                       .arg(search.valid)
                       .arg(search.fitting.size())
                       .arg(qs(formatBytes(capacity, units)));
    if (search.fitting.empty())
        text += QLatin1Char(' ') + tr("No plan fits: every valid layout needs more memory than one GPU has.");
    else
        text += QLatin1Char(' ') + (done ? tr("Ranked by simulated step time; choose one and apply it (undoable).")
                                         : tr("Simulating the best layouts…"));
    if (done && search.budgetReached)
        text += QLatin1Char(' ') + tr("The time budget for simulations ran out: plans marked ~ keep their coarse estimate.");
    m_status->setText(text);
}

bool FitPlansDialog::applyPlan(int row)
{
    if (row < 0 || row >= int(m_plans.size()))
        return false;
    const scenario::FitPlan& f = m_plans[std::size_t(row)];
    // The plan applies to the scenario it was found for, edits made since then kept only where the
    // plan does not set them.
    scenario::Scenario s = scenario::applyFitPlan(m_document->scenario(), f);
    m_document->undoStack()->push(new ReplaceScenarioCommand(
        m_document, std::move(s), tr("Apply plan %1 × %2 × %3").arg(f.plan.dp).arg(f.plan.pp).arg(f.plan.tp)));
    return true;
}

} // namespace tw::ui
