#include "guidedtour.h"

#include "document/document.h"
#include "mainwindow.h"
#include "panes/collectivepane.h"
#include "panes/panekit.h"
#include "panes/parallelpane.h"
#include "panes/stagepane.h"
#include "panes/tensorpane.h"
#include "panes/textpane.h"
#include "panes/wirepane.h"
#include "shell/narrationbar.h"
#include "shell/presentation.h"
#include "views/meshview.h"
#include "views/pagedtextview.h"
#include "views/scheduleview.h"
#include "views/tokenchipview.h"
#include "views/transformerview.h"
#include "views/wireview.h"

#include "scenario/derive.h"

#include <QAction>
#include <QApplication>
#include <QEvent>
#include <QFrame>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QRegion>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace tw::ui {

// Dims the window except the highlighted rectangle and outlines it; never takes the mouse.
class TourOverlay : public QWidget {
public:
    explicit TourOverlay(QWidget* parent)
        : QWidget(parent)
    {
        setObjectName(QStringLiteral("tourOverlay"));
        setAttribute(Qt::WA_TransparentForMouseEvents);
        setAttribute(Qt::WA_NoSystemBackground);
    }
    void setHole(const QRect& hole)
    {
        m_hole = hole;
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.save();
        p.setClipRegion(QRegion(rect()).subtracted(QRegion(m_hole)));
        p.fillRect(rect(), QColor(17, 24, 39, 130));
        p.restore();
        p.setPen(QPen(QColor(245, 158, 11), 5));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(QRectF(m_hole).adjusted(-2.5, -2.5, 2.5, 2.5), 9, 9);
    }

private:
    QRect m_hole;
};

namespace {

QString number(double v)
{
    return QLocale().toString(qlonglong(std::llround(v)));
}

// The first of the widgets that is shown (a pane shows its editor or its paged view, not both).
QWidget* firstVisible(std::initializer_list<QWidget*> widgets)
{
    for (QWidget* w : widgets)
        if (w && w->isVisible() && w->width() > 0 && w->height() > 0)
            return w;
    return nullptr;
}

} // namespace

GuidedTour::GuidedTour(MainWindow* window)
    : QObject(window)
    , m_window(window)
{
    buildSteps();
    // Presentation mode installs its key filter when it starts: the tour's must stay in front of it.
    connect(m_window->presentation(), &Presentation::activeChanged, this, [this] {
        if (m_active)
            installFilter();
        QTimer::singleShot(0, this, [this] { place(); });
    });
    connect(m_window, &MainWindow::stageChanged, this, [this] { QTimer::singleShot(0, this, [this] { place(); }); });
}

GuidedTour::~GuidedTour()
{
    qApp->removeEventFilter(this);
}

void GuidedTour::buildSteps()
{
    MainWindow* w = m_window;
    Document* doc = w->document();
    auto figure = [doc](const char* id) {
        const auto d = doc->derivation();
        return d ? d->figures.valueOf(id) : 0.0;
    };
    m_steps = {
        {Stage::Text, tr("The text"),
         [w] {
             TextPane* t = w->textPane();
             return firstVisible({t->editor(), t->pagedView(), t->chipView()});
         },
         [figure] {
             return tr("Everything starts from this text: the training data the model reads. Stage 1 cuts it into "
                       "%1 tokens, %2 per word — the pieces of text a GPT model sees.")
                 .arg(number(figure("tokens.count")), QLocale().toString(figure("tokens.per_word"), 'f', 2));
         },
         {}},
        {Stage::Text, tr("A token"), [w] { return static_cast<QWidget*>(w->textPane()->chipView()); },
         [doc] {
             return tr("Each coloured chip is one token and its id. We follow %1 from here on: every stage shows where it "
                       "goes (the yellow chip), down to the GPUs that train it and the bytes it causes.")
                 .arg(panekit::followedTokenCaption(doc));
         },
         [doc] {
             const auto d = doc->derivation();
             const std::size_t tokens = d ? d->tokens().size() : 0;
             if (doc->followedToken() < 0 && tokens > 0)
                 doc->setFollowedToken(qint64(std::min<std::size_t>(70, tokens - 1)));
         }},
        {Stage::Tensors, tr("Its tensors"), [w] { return static_cast<QWidget*>(w->tensorPane()->diagram()); },
         [figure] {
             return tr("The token ids [B,T] become activations [B,T,d] = [%1, %2, %3] that flow through the L = %4 blocks. "
                       "The model holds P = %5 parameters; the memory and the FLOPs follow from these shapes.")
                 .arg(number(figure("batch.B")), number(figure("batch.T")), number(figure("model.hidden_size")),
                      number(figure("model.layers")), number(figure("model.parameters")));
         },
         {}},
        {Stage::Gpus, tr("The strategies on the GPUs"), [w] { return static_cast<QWidget*>(w->parallelPane()->meshView()); },
         [doc] {
             const scenario::Scenario& s = doc->scenario();
             return tr("%1 GPUs share the work three ways: data parallelism copies the model (dp = %2), pipeline "
                       "parallelism cuts its layers into stages (pp = %3), tensor parallelism splits each layer's matrices "
                       "(tp = %4); the framed GPU trains the followed token. "
                       "Each way has its own traffic: what, how big, how often, between whom. The presets paper-dp, "
                       "paper-pp and paper-tp show each way alone on 8 GPUs.")
                 .arg(s.hardware.gpuCount())
                 .arg(s.parallel.dp)
                 .arg(s.parallel.pp)
                 .arg(s.parallel.tp);
         },
         {}},
        {Stage::Collectives, tr("The AllReduce, step by step"), [w] { return static_cast<QWidget*>(w->collectivePane()->view()); },
         [w] {
             ScheduleView* v = w->collectivePane()->view();
             const QString intro = tr("The plan's largest collective over %1 ranks: in each of its %2 steps every rank "
                                      "sends one chunk to its neighbour and adds what it receives.")
                                       .arg(v->rankCount())
                                       .arg(v->stepCount());
             if (v->currentStep() == 0)
                 return intro + QLatin1Char(' ') + tr("Press space to play it one step at a time.");
             const QString phase = v->phase();
             return intro + QLatin1Char(' ')
                    + (phase.isEmpty() ? tr("Now: step %1 of %2.").arg(v->currentStep()).arg(v->stepCount())
                                       : tr("Now: step %1 of %2 (%3).")
                                             .arg(v->currentStep())
                                             .arg(v->stepCount())
                                             .arg(phase.toHtmlEscaped()));
         },
         [w] {
             w->collectivePane()->choosePlanCall(0);
             w->collectivePane()->view()->setStep(0);
         }},
        // The drawing with the followed token's sentence and the play controls under it (the outline around
        // the drawing alone crossed that sentence).
        {Stage::Wire, tr("The wire"), [w] { return w->wirePane()->view()->parentWidget(); },
         [doc] {
             return tr("Those bytes leave the GPUs over NVLink, PCIe and the network: the fabric under the %1 GPUs with one "
                       "training step simulated on it. Space plays it; hover a link for its bytes.")
                 .arg(doc->scenario().hardware.gpuCount());
         },
         {}},
    };
}

int GuidedTour::stageOfStep(int step) const
{
    return step >= 0 && step < stepCount() ? indexOf(m_steps[std::size_t(step)].stage) : -1;
}

QString GuidedTour::title(int step) const
{
    return step >= 0 && step < stepCount() ? m_steps[std::size_t(step)].title : QString();
}

QWidget* GuidedTour::overlay() const
{
    return m_overlay;
}

QWidget* GuidedTour::target() const
{
    return m_active && m_current >= 0 ? m_steps[std::size_t(m_current)].target() : nullptr;
}

void GuidedTour::start()
{
    if (!m_overlay) {
        m_overlay = new TourOverlay(m_window);
        m_card = new QFrame(m_window);
        m_card->setObjectName(QStringLiteral("tourCard"));
        m_card->setStyleSheet(QStringLiteral("#tourCard { background: #fffbeb; border: 3px solid #f59e0b; border-radius: 10px; }"
                                             "#tourCard QLabel { color: #111827; }"));
        auto* layout = new QVBoxLayout(m_card);
        m_text = new QLabel(m_card);
        m_text->setObjectName(QStringLiteral("tourText"));
        m_text->setWordWrap(true);
        m_text->setTextFormat(Qt::RichText);
        layout->addWidget(m_text);
        auto* buttons = new QHBoxLayout;
        m_back = new QPushButton(tr("‹ Back"), m_card);
        m_back->setObjectName(QStringLiteral("tourBack"));
        m_next = new QPushButton(tr("Next ›"), m_card);
        m_next->setObjectName(QStringLiteral("tourNext"));
        auto* end = new QPushButton(tr("End tour"), m_card);
        end->setObjectName(QStringLiteral("tourEnd"));
        for (QPushButton* b : {m_back, m_next, end})
            b->setFocusPolicy(Qt::NoFocus); // the keys stay the tour's
        buttons->addWidget(m_back);
        buttons->addStretch(1);
        buttons->addWidget(end);
        buttons->addWidget(m_next);
        layout->addLayout(buttons);
        connect(m_back, &QPushButton::clicked, this, &GuidedTour::back);
        connect(m_next, &QPushButton::clicked, this, &GuidedTour::next);
        connect(end, &QPushButton::clicked, this, &GuidedTour::stop);
        m_window->installEventFilter(this); // resizes move the outline
        // The panes settle their layouts after a stage change (the narration's height, a splitter): the
        // outline follows the widget whenever it has moved.
        m_follow = new QTimer(this);
        m_follow->setInterval(100);
        connect(m_follow, &QTimer::timeout, this, [this] {
            if (targetRect() != m_highlight)
                place();
        });
    }
    m_follow->start();
    if (!m_active) {
        m_active = true;
        m_narrationWasHidden = !m_window->showNarrationAction()->isChecked();
        m_window->showNarrationAction()->setChecked(true); // the stage's story, above the drawing
        installFilter();
    }
    show(0);
}

void GuidedTour::stop()
{
    if (!m_active)
        return;
    m_active = false;
    m_current = -1;
    qApp->removeEventFilter(this);
    m_follow->stop();
    m_overlay->hide();
    m_card->hide();
    if (m_narrationWasHidden)
        m_window->showNarrationAction()->setChecked(false);
    emit stepChanged(-1);
}

void GuidedTour::installFilter()
{
    qApp->removeEventFilter(this);
    qApp->installEventFilter(this); // the last installed sees the keys first
}

void GuidedTour::next()
{
    if (!m_active)
        return;
    if (m_current + 1 < stepCount())
        show(m_current + 1);
    else
        stop();
}

void GuidedTour::back()
{
    if (!m_active)
        return;
    if (m_current > 0)
        show(m_current - 1);
}

void GuidedTour::stepStage()
{
    // A stage with steps of its own (stage 4's schedule) plays one; elsewhere space is the next step.
    if (m_active && m_window->stagePane(m_steps[std::size_t(m_current)].stage)->stepForward())
        place();
    else
        next();
}

void GuidedTour::show(int step)
{
    m_current = step;
    const Step& s = m_steps[std::size_t(step)];
    m_window->setStage(s.stage);
    if (s.enter)
        s.enter();
    m_overlay->show();
    m_card->show();
    place();
    // The pane lays itself out for the new stage after this event: place again then.
    QTimer::singleShot(0, this, [this] { place(); });
    emit stepChanged(step);
}

void GuidedTour::place()
{
    if (!m_active || m_current < 0)
        return;
    const Step& s = m_steps[std::size_t(m_current)];
    const QRect area = m_window->rect();
    m_highlight = targetRect();
    m_overlay->setGeometry(area);
    m_overlay->setHole(m_highlight);
    m_overlay->raise();
    const bool ownSteps = m_window->stagePane(s.stage)->hasOwnSteps();
    m_text->setText(tr("<p><b>%1 · %2</b></p><p>%3</p><p><small>Step %4 of %5 · → next · ← back%6 · Esc ends</small></p>")
                        .arg(m_current + 1)
                        .arg(s.title.toHtmlEscaped(), s.text())
                        .arg(m_current + 1)
                        .arg(stepCount())
                        .arg(ownSteps ? tr(" · space plays one step") : QString()));
    m_back->setEnabled(m_current > 0);
    // The card: a third of the window wide, beside the outline — below, right, left (narrowed to the room
    // there, down to kNarrowest), above (over the narration: last) — and inside the outline's bottom-right
    // corner only when no side has room.
    constexpr int gap = 12, margin = 8, kNarrowest = 300;
    const int wide = std::min(std::clamp(area.width() / 3, kNarrowest, 520), area.width() - 2 * margin);
    const QRect frame = m_highlight.isValid() ? m_highlight : area;
    auto fit = [this](int width) {
        // The wrapped text's height at this width (a wrapped label's size hint assumes another width).
        m_card->setFixedWidth(width);
        const int height = std::max(m_card->heightForWidth(width), m_card->minimumSizeHint().height());
        m_card->resize(width, height);
        return m_card->size();
    };
    auto clampX = [&](int x, int w) { return std::clamp(x, margin, std::max(margin, area.width() - w - margin)); };
    auto clampY = [&](int y, int h) { return std::clamp(y, margin, std::max(margin, area.height() - h - margin)); };
    const int roomRight = area.width() - margin - (frame.right() + gap);
    const int roomLeft = frame.left() - gap - margin;
    QSize size = fit(wide);
    QPoint at;
    if (frame.bottom() + gap + size.height() <= area.height() - margin) {
        at = {clampX(frame.right() - size.width(), size.width()), frame.bottom() + gap};
    } else if (roomRight >= kNarrowest && (size = fit(std::min(wide, roomRight))).height() <= area.height() - 2 * margin) {
        at = {frame.right() + gap, clampY(frame.top(), size.height())};
    } else if (roomLeft >= kNarrowest && (size = fit(std::min(wide, roomLeft))).height() <= area.height() - 2 * margin) {
        at = {frame.left() - gap - size.width(), clampY(frame.top(), size.height())};
    } else if (size = fit(wide); frame.top() - gap - size.height() >= margin) {
        at = {clampX(frame.right() - size.width(), size.width()), frame.top() - gap - size.height()};
    } else {
        at = {clampX(frame.right() - size.width() - 16, size.width()), clampY(frame.bottom() - size.height() - 16, size.height())};
    }
    m_card->move(at);
    m_card->raise();
}

QRect GuidedTour::targetRect() const
{
    QWidget* t = target();
    return t ? QRect(t->mapTo(m_window, QPoint(0, 0)), t->size()).intersected(m_window->rect()) : QRect();
}

bool GuidedTour::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_window && (event->type() == QEvent::Resize || event->type() == QEvent::LayoutRequest)) {
        QTimer::singleShot(0, this, [this] { place(); });
        return QObject::eventFilter(watched, event);
    }
    if (!m_active || event->type() != QEvent::KeyPress || !isEventOfWindow(watched, m_window))
        return QObject::eventFilter(watched, event);
    auto* key = static_cast<QKeyEvent*>(event);
    if (key->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))
        return QObject::eventFilter(watched, event);
    switch (key->key()) {
    case Qt::Key_Right:
    case Qt::Key_PageDown:
        if (!key->isAutoRepeat())
            next();
        return true;
    case Qt::Key_Space:
        if (!key->isAutoRepeat())
            stepStage();
        return true;
    case Qt::Key_Left:
    case Qt::Key_PageUp:
        if (!key->isAutoRepeat())
            back();
        return true;
    case Qt::Key_Escape:
        stop();
        return true;
    default: return QObject::eventFilter(watched, event);
    }
}

} // namespace tw::ui
