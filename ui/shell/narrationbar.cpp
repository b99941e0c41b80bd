#include "narrationbar.h"

#include "document/document.h"
#include "document/results.h"
#include "settings/appsettings.h"
#include "settings/theme.h"
#include "stage.h"

#include "scenario/derive.h"
#include "views/qtstrings.h"

#include <QCursor>
#include <QEvent>
#include <QHBoxLayout>
#include <QTextBrowser>
#include <QTimer>
#include <QToolTip>
#include <QUrl>

#include <algorithm>
#include <array>
#include <cmath>

namespace tw::ui {

namespace {

constexpr double kLargeScale = 1.15;
const QString kScheme = QStringLiteral("figure");

} // namespace

NarrationBar::NarrationBar(Document* document, QWidget* parent)
    : QFrame(parent)
    , m_document(document)
{
    setObjectName(QStringLiteral("narrationBar"));
    setFrameShape(QFrame::NoFrame);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::AlternateBase);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(12, 4, 12, 4);
    m_browser = new QTextBrowser(this);
    m_browser->setObjectName(QStringLiteral("narration"));
    m_browser->setOpenLinks(false);
    m_browser->setOpenExternalLinks(false);
    m_browser->setFrameShape(QFrame::NoFrame);
    m_browser->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_browser->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_browser->setFocusPolicy(Qt::NoFocus); // the keyboard stays with the panes (and presentation mode)
    m_browser->viewport()->setAutoFillBackground(false);
    m_browser->setStyleSheet(QStringLiteral("QTextBrowser { background: transparent; }"));
    m_browser->document()->setDocumentMargin(2);
    layout->addWidget(m_browser);
    m_browser->viewport()->installEventFilter(this); // its width sets the height (fitHeight)
    connect(m_browser, &QTextBrowser::highlighted, this, &NarrationBar::onHighlighted);
    connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme() == kScheme)
            emit figureActivated(url.path());
    });

    connect(m_document, &Document::derived, this, &NarrationBar::refresh);
    // Stage 5's sentences tell the simulated step when it is the current scenario's.
    connect(m_document->results(), &Results::stepFinished, this, &NarrationBar::refresh);
    connect(m_document->results(), &Results::outdated, this, &NarrationBar::refresh);
    connect(AppSettings::instance(), &AppSettings::displayUnitsChanged, this, &NarrationBar::refresh);
    applyFont();
    refresh();
}

void NarrationBar::setStage(int index)
{
    if (index == m_stage)
        return;
    m_stage = index;
    m_hovered.clear();
    render();
}

void NarrationBar::setLarge(bool large)
{
    if (large == m_large)
        return;
    m_large = large;
    applyFont();
}

QString NarrationBar::text() const
{
    const auto stage = stageAtIndex(m_stage);
    const scenario::StageNarration* s = stage ? m_narration.stage(*stage) : nullptr;
    return s ? qs(s->text()) : QString();
}

QString NarrationBar::figureToolTip(const QString& id) const
{
    const Figure* f = m_narration.figures.find(id.toStdString());
    if (!f)
        return {};
    const DisplayUnits units = AppSettings::instance()->displayUnits();
    return QStringLiteral("<b>%1</b> = %2<br/>%3")
        .arg(qs(f->label).toHtmlEscaped(), qs(formatValue(f->value, f->unit, units)).toHtmlEscaped(),
             qs(f->formula).toHtmlEscaped());
}

void NarrationBar::refresh()
{
    const Document::DerivationPtr d = m_document->derivation();
    m_usesSimulation = false;
    if (!d) {
        m_narration = {};
        render();
        return;
    }
    const scenario::NetworkStage* network = nullptr;
    const network::StepSimulation* simulation = nullptr;
    const Results* results = m_document->results();
    if (const auto step = results->step(); step && results->isStepCurrent() && step->derivation == d) {
        network = step->network.get();
        simulation = step->simulation.get();
        m_usesSimulation = true;
    }
    m_narration = scenario::narrate(m_document->scenario(), *d, network, simulation, AppSettings::instance()->displayUnits());
    render();
}

void NarrationBar::render()
{
    const auto stage = stageAtIndex(m_stage);
    const scenario::StageNarration* s = stage ? m_narration.stage(*stage) : nullptr;
    const QString link = theme::linkColor().name(); // readable on the window in either theme
    QString html;
    if (s) {
        for (const scenario::NarrationSentence& sentence : s->sentences) {
            for (const scenario::NarrationSpan& span : sentence.spans) {
                const QString text = qs(span.text).toHtmlEscaped();
                if (span.figure.empty())
                    html += text;
                else
                    html += QStringLiteral("<a href=\"%1:%2\" style=\"color:%3; text-decoration:none; font-weight:bold\">%4</a>")
                                .arg(kScheme, qs(span.figure), link, text);
            }
            html += QLatin1Char(' ');
        }
    }
    m_browser->setHtml(html);
    setToolTip(QString());
    fitHeight();
}

void NarrationBar::applyFont()
{
    QFont f = font();
    if (m_large) {
        if (f.pointSizeF() > 0)
            f.setPointSizeF(f.pointSizeF() * kLargeScale);
        else if (f.pixelSize() > 0)
            f.setPixelSize(int(std::lround(f.pixelSize() * kLargeScale)));
    }
    m_browser->setFont(f);
    fitHeight();
}

void NarrationBar::fitHeight()
{
    // As tall as the sentences at the current width (no scroll bar). On one stage, at one width and font,
    // it never shrinks: a shorter sentence (a step of the schedule played, a new preset) must not move
    // the pane below it under the pointer; a new stage, width or font starts again from its text.
    QTextDocument* doc = m_browser->document();
    const int width = m_browser->viewport()->width() > 0 ? m_browser->viewport()->width() : m_browser->width();
    doc->setTextWidth(width);
    const int need = int(std::ceil(doc->size().height())) + 2 * m_browser->frameWidth();
    const std::array<int, 3> key = {m_stage, width, m_browser->fontInfo().pixelSize()};
    if (key != m_heightKey) {
        m_heightKey = key;
        m_keptHeight = 0;
    }
    m_keptHeight = std::max({need, m_keptHeight, m_browser->fontMetrics().lineSpacing()});
    if (m_browser->height() != m_keptHeight)
        m_browser->setFixedHeight(m_keptHeight);
}

void NarrationBar::onHighlighted(const QUrl& url)
{
    m_hovered = url.scheme() == kScheme ? url.path() : QString();
    if (m_hovered.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(QCursor::pos(), figureToolTip(m_hovered), m_browser);
}

void NarrationBar::resizeEvent(QResizeEvent* event)
{
    QFrame::resizeEvent(event);
    fitHeight();
}

bool NarrationBar::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_browser->viewport() && event->type() == QEvent::Resize)
        fitHeight();
    return QFrame::eventFilter(watched, event);
}

bool NarrationBar::event(QEvent* event)
{
    if (event->type() == QEvent::ShowToParent || event->type() == QEvent::HideToParent)
        emit shownChanged(event->type() == QEvent::ShowToParent);
    return QFrame::event(event);
}

void NarrationBar::changeEvent(QEvent* event)
{
    QFrame::changeEvent(event);
    if (!m_browser) // changes during construction
        return;
    if (event->type() == QEvent::FontChange)
        applyFont();
    else if (event->type() == QEvent::PaletteChange)
        render();
}

} // namespace tw::ui
