#include "screenfit.h"

#include <QGuiApplication>
#include <QScreen>
#include <QWidget>

#include <algorithm>

namespace tw::ui::screenfit {

namespace {

const QScreen* screenOf(const QWidget* widget)
{
    if (widget) {
        if (const QScreen* s = widget->screen())
            return s;
        if (const QWidget* p = widget->parentWidget())
            if (const QScreen* s = p->screen())
                return s;
    }
    return QGuiApplication::primaryScreen();
}

// The room a window manager's frame takes around the client area: measured once the window is shown,
// a typical title bar and border before.
QSize frameExtra(const QWidget* widget)
{
    if (widget && widget->isVisible()) {
        const QSize extra = widget->frameGeometry().size() - widget->geometry().size();
        if (extra.isValid())
            return extra;
    }
    return {0, 0};
}

} // namespace

QSize fitted(const QWidget* widget, QSize wanted)
{
    const QScreen* screen = screenOf(widget);
    if (!screen)
        return wanted;
    const QSize room = screen->availableGeometry().size() - frameExtra(widget);
    return {std::min(wanted.width(), room.width()), std::min(wanted.height(), room.height())};
}

void resizeToFit(QWidget* widget, QSize wanted)
{
    widget->resize(fitted(widget, wanted));
    if (widget->isVisible())
        keepOnScreen(widget);
}

void keepOnScreen(QWidget* widget)
{
    const QScreen* screen = screenOf(widget);
    if (!screen || (widget->windowState() & (Qt::WindowFullScreen | Qt::WindowMaximized)))
        return;
    const QRect avail = screen->availableGeometry();
    const QSize size = fitted(widget, widget->size());
    if (size != widget->size())
        widget->resize(size);
    QRect frame = widget->frameGeometry();
    frame.moveRight(std::min(frame.right(), avail.right()));
    frame.moveBottom(std::min(frame.bottom(), avail.bottom()));
    frame.moveLeft(std::max(frame.left(), avail.left()));
    frame.moveTop(std::max(frame.top(), avail.top()));
    if (frame.topLeft() != widget->frameGeometry().topLeft())
        widget->move(frame.topLeft());
}

} // namespace tw::ui::screenfit
