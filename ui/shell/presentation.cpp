#include "presentation.h"

#include "mainwindow.h"
#include "narrationbar.h"
#include "panes/stagepane.h"
#include "settings/appsettings.h"

#include <QAction>
#include <QApplication>
#include <QKeyEvent>
#include <QStatusBar>
#include <QMenuBar>
#include <QProgressBar>
#include <QSplitter>
#include <QTimer>
#include <QToolBar>
#include <QWindow>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {

QFont scaled(QFont font, double factor)
{
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    else if (font.pixelSize() > 0)
        font.setPixelSize(std::max(1, int(std::lround(font.pixelSize() * factor))));
    return font;
}

} // namespace

Presentation::Presentation(MainWindow* window)
    : QObject(window)
    , m_window(window)
{
    setObjectName(QStringLiteral("presentation"));
    m_action = new QAction(tr("&Presentation mode"), this);
    m_action->setObjectName(QStringLiteral("presentationAction"));
    m_action->setCheckable(true);
    m_action->setShortcut(QKeySequence(Qt::Key_F5));
    m_action->setShortcutContext(Qt::WindowShortcut);
    m_action->setStatusTip(tr("Full screen, large fonts, keyboard only: ← → stages, space plays, + − zoom, Esc leaves"));
    connect(m_action, &QAction::toggled, this, &Presentation::setActive);
    // The menu bar is hidden while presenting: the window carries the action so F5 still works.
    m_window->addAction(m_action);
    // The settings re-apply the appearance (the application font included) on these: present that font.
    auto later = [this] { QTimer::singleShot(0, this, &Presentation::onAppearanceChanged); };
    connect(AppSettings::instance(), &AppSettings::fontScaleChanged, this, later);
    connect(AppSettings::instance(), &AppSettings::themeChanged, this, later);
    connect(AppSettings::instance(), &AppSettings::paletteSchemeChanged, this, later);
}

Presentation::~Presentation()
{
    // Only the application-wide parts: the window is being destroyed with its widgets.
    if (m_active) {
        qApp->removeEventFilter(this);
        if (QApplication::font() == m_presentingFont)
            QApplication::setFont(m_baseFont);
    }
}

void Presentation::setActive(bool active)
{
    if (active == m_active)
        return;
    m_active = active;
    {
        const QSignalBlocker block(m_action);
        m_action->setChecked(active);
    }
    NarrationBar* narration = m_window->narrationBar();
    if (active) {
        m_baseFont = QApplication::font();
        m_savedState = m_window->windowState();
        m_savedGeometry = m_window->geometry();
        // Full screen first: the window's normal geometry is remembered before the big font can widen it.
        m_window->setWindowState(m_savedState | Qt::WindowFullScreen);
        // Put away what the projector does not need: the menus, the toolbars, what surrounds each
        // stage's drawing (putAway).
        m_hidden.clear();
        auto hide = [this](QWidget* w) {
            if (w && !w->isHidden()) {
                w->hide();
                m_hidden.emplace_back(w);
            }
        };
        hide(m_window->menuBar());
        hide(m_window->statusBar());
        for (QToolBar* bar : m_window->findChildren<QToolBar*>())
            hide(bar);
        for (QWidget* w : putAway())
            hide(w);
        // A pane's followed-token chip keeps its natural width when the row beside it is put away.
        for (QWidget* pane : m_window->panes()) {
            for (QWidget* chip : pane->findChildren<QWidget*>(QStringLiteral("followChip"), Qt::FindDirectChildrenOnly)) {
                m_policies.emplace_back(chip, chip->sizePolicy());
                QSizePolicy fixed = chip->sizePolicy();
                fixed.setHorizontalPolicy(QSizePolicy::Maximum);
                chip->setSizePolicy(fixed);
            }
        }
        m_narrationWasHidden = narration->isHidden();
        narration->show();
        narration->setLarge(true);
        applyPresentingFont();
        qApp->installEventFilter(this);
    } else {
        qApp->removeEventFilter(this);
        restoreZoom(); // before the font: the chips' zoomed font gives way to the font they follow
        // The settings' font exactly, unless someone (the settings dialog) replaced ours meanwhile.
        if (QApplication::font() == m_presentingFont)
            QApplication::setFont(m_baseFont);
        narration->setLarge(false);
        narration->setHidden(m_narrationWasHidden);
        for (const QPointer<QWidget>& w : m_hidden)
            if (w)
                w->show();
        m_hidden.clear();
        for (const auto& [w, policy] : m_policies)
            if (w)
                w->setSizePolicy(policy);
        m_policies.clear();
        m_window->setWindowState(m_savedState);
        // The window's size from before, once the normal font has reached every widget and the layouts
        // have shrunk (posted events, some panes relayout later): until then the minimum size is still
        // the large font's and keeps the window wide. Retried for a moment, then left as it is.
        if (!(m_savedState & (Qt::WindowMaximized | Qt::WindowFullScreen)))
            restoreGeometrySoon(m_savedGeometry, 40);
    }
    emit activeChanged(active);
}

std::vector<QWidget*> Presentation::putAway() const
{
    // Around each stage's drawing: every splitter on the way from the drawing up to its pane keeps only
    // the side holding the drawing (stage 1 keeps the token ids too: what the model reads), and the pane's
    // plain control rows go (stage 1's sample, tokenizer and replay row). Captions, the followed-token
    // chip, message bars and progress rows stay.
    std::vector<QWidget*> out;
    const QList<QWidget*> panes = m_window->panes();
    for (int i = 0; i < panes.size(); ++i) {
        QWidget* pane = panes[i];
        const StagePane* stage = m_window->stagePane(*stageAtIndex(i));
        QWidget* drawing = stage->drawing();
        if (!drawing || !pane->isAncestorOf(drawing))
            continue;
        QWidget* keep = stage->drawingCompanion();
        for (QWidget* w = drawing; w && w != pane; w = w->parentWidget()) {
            auto* split = qobject_cast<QSplitter*>(w->parentWidget());
            if (!split)
                continue;
            for (int i = 0; i < split->count(); ++i) {
                QWidget* side = split->widget(i);
                if (side != w && !(keep && (side == keep || side->isAncestorOf(keep))))
                    out.push_back(side);
            }
        }
        for (QWidget* child : pane->findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
            if (child->metaObject() == &QWidget::staticMetaObject && !child->isAncestorOf(drawing)
                && !child->findChild<QProgressBar*>())
                out.push_back(child);
    }
    return out;
}

void Presentation::restoreGeometrySoon(QRect geometry, int tries)
{
    QTimer::singleShot(10, this, [this, geometry, tries] {
        if (m_active || (m_window->windowState() & (Qt::WindowMaximized | Qt::WindowFullScreen)))
            return;
        m_window->setGeometry(geometry);
        if (m_window->geometry().size() != geometry.size() && tries > 1)
            restoreGeometrySoon(geometry, tries - 1);
    });
}

void Presentation::applyPresentingFont()
{
    m_presentingFont = scaled(m_baseFont, kFontScale);
    QApplication::setFont(m_presentingFont);
}

void Presentation::onAppearanceChanged()
{
    // The settings applied their font while presenting (a new scale, a new theme): present it, enlarged.
    if (!m_active || QApplication::font() == m_presentingFont)
        return;
    m_baseFont = QApplication::font();
    applyPresentingFont();
}

void Presentation::nextStage()
{
    m_window->setStage(std::min(m_window->stage() + 1, m_window->stageCount() - 1));
}

void Presentation::previousStage()
{
    m_window->setStage(std::max(m_window->stage() - 1, 0));
}

bool Presentation::isPlaying() const
{
    return m_window->currentPane()->isPlaying();
}

void Presentation::togglePlaying()
{
    StagePane* pane = m_window->currentPane();
    pane->setPlaying(!pane->isPlaying());
}

void Presentation::zoomBy(double factor)
{
    m_window->currentPane()->zoomDrawing(factor);
}

void Presentation::resetZoom()
{
    m_window->currentPane()->fitDrawing();
}

void Presentation::restoreZoom()
{
    for (int i = 0; i < kStageCount; ++i)
        m_window->stagePane(*stageAtIndex(i))->restoreDrawing(); // the views fit themselves again when the window leaves full screen
}

bool isEventOfWindow(const QObject* watched, const QWidget* window)
{
    if (watched->isWidgetType())
        return static_cast<const QWidget*>(watched)->window() == window;
    if (auto* handle = qobject_cast<const QWindow*>(watched))
        return handle == window->windowHandle();
    return false;
}

bool Presentation::isOurs(QObject* watched) const
{
    return isEventOfWindow(watched, m_window);
}

bool Presentation::eventFilter(QObject* watched, QEvent* event)
{
    if (!m_active || event->type() != QEvent::KeyPress || !isOurs(watched))
        return QObject::eventFilter(watched, event);
    auto* key = static_cast<QKeyEvent*>(event);
    // Keys with Ctrl, Alt or Meta are the menus' (Ctrl+Z, Ctrl+1 …).
    if (key->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))
        return QObject::eventFilter(watched, event);
    const bool repeat = key->isAutoRepeat();
    switch (key->key()) {
    case Qt::Key_Right:
    case Qt::Key_PageDown:
        if (!repeat)
            nextStage();
        return true;
    case Qt::Key_Left:
    case Qt::Key_PageUp:
        if (!repeat)
            previousStage();
        return true;
    case Qt::Key_Space:
        if (!repeat)
            togglePlaying();
        return true;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(kZoomStep);
        return true;
    case Qt::Key_Minus:
    case Qt::Key_Underscore:
        zoomBy(1 / kZoomStep);
        return true;
    case Qt::Key_0:
        resetZoom();
        return true;
    case Qt::Key_Escape:
        leave();
        return true;
    default: return QObject::eventFilter(watched, event);
    }
}

} // namespace tw::ui
