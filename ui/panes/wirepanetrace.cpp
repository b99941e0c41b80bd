// Stage 5's part of the story's live thread: the followed token's transfers routed onto the drawn fabric
// off the GUI thread (routing the rings of thousands of GPUs takes a second or more on the largest
// presets), then drawn: its links glowing, its GPUs yellow, the caption saying what it crosses.
// Latest wins: a newer token (or a new step) supersedes a running trace, Cancel stops it.

#include "wirepane.h"

#include "document/document.h"
#include "document/results.h"
#include "panes/panekit.h"
#include "settings/theme.h"
#include "views/qtstrings.h"
#include "views/wireview.h"
#include "workers/backgroundjob.h"

#include "base/units.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace tw::ui {

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

    BackgroundJob* job = m_results->traceJob();
    connect(job, &BackgroundJob::progressed, this, [this](double f) {
        m_tokenCaption->setText(tr("Routing <b>%1</b>'s traffic onto the fabric… %2 %")
                                    .arg(panekit::followedTokenCaption(m_document).toHtmlEscaped())
                                    .arg(int(f * 100)));
    });
    connect(m_results, &Results::traced, this, &WirePane::showTrace);
    connect(job, &BackgroundJob::cancelled, this, [this] {
        m_traceCancel->hide();
        if (!m_results->isStepCurrent())
            return; // the scenario changed: traced again on its step
        m_tokenCaption->setText(tr("Tracing cancelled: the followed token's links are not drawn. Follow a token "
                                   "again to trace it."));
        m_tokenCaption->show();
    });
    connect(m_traceCancel, &QPushButton::clicked, m_results, &Results::cancelTrace);
    return row;
}

const scenario::TokenTrace* WirePane::tokenTrace() const
{
    return m_drawnTrace && m_drawnTrace->trace ? &m_drawnTrace->trace.value() : nullptr;
}

void WirePane::updateTrace()
{
    m_traceStale = false;
    const qint64 index = m_document->followedToken();
    m_drawnTrace.reset();
    m_view->clearTracedLinks();
    const bool ready = isCurrent() && m_drawn->derivation->stage3;
    if (index < 0 || !ready || std::size_t(index) >= m_drawn->derivation->tokens().size()) {
        m_results->requestTrace(-1); // a trace of the previous token is no longer wanted
        m_traceCancel->hide();
        m_view->setHighlightedGpus({});
        m_tokenCaption->hide();
        fillFigures();
        return;
    }
    m_tokenCaption->setText(tr("Routing <b>%1</b>'s traffic onto the fabric…")
                                .arg(panekit::followedTokenCaption(m_document).toHtmlEscaped()));
    m_tokenCaption->show();
    m_traceCancel->show();
    fillFigures();
    m_results->requestTrace(index);
}

void WirePane::showTrace(const std::shared_ptr<const TraceResult>& result)
{
    if (result->step != m_drawn)
        return; // traced on a step this pane does not draw (it draws it as soon as it is delivered)
    const Result<scenario::TokenTrace>& trace = result->trace;
    m_traceCancel->hide();
    if (!trace) {
        m_view->clearTracedLinks();
        m_tokenCaption->setText(tr("The followed token cannot be traced on this fabric: %1")
                                    .arg(qs(trace.error().toString()).toHtmlEscaped()));
        m_tokenCaption->show();
        return;
    }
    m_drawnTrace = result;
    fillFigures();
    const scenario::TokenTrace& t = trace.value();
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
