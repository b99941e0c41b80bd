// Stage 5's part of the story's live thread: the followed token's transfers routed onto the drawn fabric
// off the GUI thread (routing the rings of thousands of GPUs takes a second or more on the largest
// presets), then drawn: its links glowing, its GPUs yellow, the caption saying what it crosses.
// Latest wins: a newer token (or a new step) supersedes a running trace, Cancel stops it.

#include "wirepane.h"

#include "document/document.h"
#include "panes/panekit.h"
#include "settings/theme.h"
#include "views/qtstrings.h"
#include "views/wireview.h"
#include "workers/backgroundjob.h"

#include "base/units.h"
#include "network/routing.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

#include <mutex>
#include <optional>

namespace tw::ui {

// The routes of one drawn topology, cached across traces; a superseded trace may still be routing
// when the next one starts, so they take turns.
struct WirePane::TraceRouter {
    std::mutex mutex;
    std::optional<network::Router> router; // made by the first trace, on its pool thread (40 ms at 98,304 GPUs)
};

namespace {

// What one trace job returns (through std::any, which needs a copyable value).
struct TraceOutcome {
    std::shared_ptr<const Result<scenario::TokenTrace>> trace;
};

} // namespace

QWidget* WirePane::buildTraceRow(QWidget* parent)
{
    auto* row = new QWidget(parent);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tokenCaption, 1);
    m_traceCancel = new QPushButton(tr("Cancel"), row);
    m_traceCancel->setObjectName(QStringLiteral("wireTraceCancel"));
    m_traceCancel->setToolTip(tr("Stop routing the followed token's traffic"));
    m_traceCancel->hide();
    layout->addWidget(m_traceCancel, 0, Qt::AlignTop);

    m_traceJob = new BackgroundJob(this);
    connect(m_traceJob, &BackgroundJob::progressed, this, [this](double f) {
        m_tokenCaption->setText(tr("Routing <b>%1</b>'s traffic onto the fabric… %2 %")
                                    .arg(panekit::followedTokenCaption(m_document).toHtmlEscaped())
                                    .arg(int(f * 100)));
    });
    connect(m_traceJob, &BackgroundJob::finished, this, &WirePane::showTrace);
    connect(m_traceJob, &BackgroundJob::cancelled, this, [this] {
        m_traceCancel->hide();
        m_tokenCaption->setText(tr("Tracing cancelled: the followed token's links are not drawn. Follow a token "
                                   "again to trace it."));
        m_tokenCaption->show();
    });
    connect(m_traceCancel, &QPushButton::clicked, m_traceJob, &BackgroundJob::cancel);
    return row;
}

void WirePane::updateTrace()
{
    m_traceStale = false;
    const qint64 index = m_document->followedToken();
    m_trace.reset();
    m_view->clearTracedLinks();
    const bool ready = m_result.network && m_result.derivation && m_result.scenario && m_result.derivation->stage3;
    if (index < 0 || !ready || std::size_t(index) >= m_result.derivation->tokens().size()) {
        m_traceJob->cancel(); // a trace of the previous token is no longer wanted
        m_traceCancel->hide();
        m_view->setHighlightedGpus({});
        m_tokenCaption->hide();
        fillFigures();
        return;
    }
    if (!m_router)
        m_router = std::make_shared<TraceRouter>();
    m_tokenCaption->setText(tr("Routing <b>%1</b>'s traffic onto the fabric…")
                                .arg(panekit::followedTokenCaption(m_document).toHtmlEscaped()));
    m_tokenCaption->show();
    m_traceCancel->show();
    fillFigures();
    // The job holds what it reads: the step's derivation, scenario and fabric stay alive while it runs.
    m_traceJob->schedule([derivation = m_result.derivation, scenario = m_result.scenario, network = m_result.network,
                          router = m_router, token = std::uint64_t(index)](const Progress& progress) -> std::any {
        const std::lock_guard lock(router->mutex);
        if (progress.stopRequested())
            return TraceOutcome{};
        if (!router->router)
            router->router.emplace(*network->topology);
        return TraceOutcome{std::make_shared<const Result<scenario::TokenTrace>>(scenario::traceToken(
            *derivation, *scenario, token, network->topology.get(), progress, &*router->router))};
    });
}

void WirePane::showTrace(const std::any& result)
{
    const auto& outcome = std::any_cast<const TraceOutcome&>(result);
    if (!outcome.trace)
        return; // stopped before it started (a newer request replaces it)
    const Result<scenario::TokenTrace>& trace = *outcome.trace;
    m_traceCancel->hide();
    if (!trace) {
        m_view->clearTracedLinks();
        m_tokenCaption->setText(tr("The followed token cannot be traced on this fabric: %1")
                                    .arg(qs(trace.error().toString()).toHtmlEscaped()));
        m_tokenCaption->show();
        return;
    }
    m_trace = trace.value();
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

} // namespace tw::ui
