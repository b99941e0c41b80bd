#include "wheelguard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QWidget>

namespace tw::ui {

namespace {

bool isField(const QObject* o)
{
    return qobject_cast<const QComboBox*>(o) || qobject_cast<const QAbstractSpinBox*>(o);
}

bool insideScrollArea(const QWidget* w)
{
    for (const QWidget* p = w->parentWidget(); p && !p->isWindow(); p = p->parentWidget())
        if (qobject_cast<const QAbstractScrollArea*>(p))
            return true;
    return false;
}

class WheelGuard : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        const QEvent::Type type = event->type();
        if ((type != QEvent::Wheel && type != QEvent::Polish && type != QEvent::Show) || !isField(watched))
            return false;
        auto* field = static_cast<QWidget*>(watched);
        if (!insideScrollArea(field))
            return false;
        if (type != QEvent::Wheel) {
            // The wheel would give it the focus first (Qt::WheelFocus), and then it would take the wheel.
            if (field->focusPolicy() == Qt::WheelFocus)
                field->setFocusPolicy(Qt::StrongFocus);
            return false;
        }
        if (!wheelScrollsTheForm(field))
            return false;
        // Ignored and handled here: QApplication passes the wheel on to the parents, up to the scroll area.
        event->ignore();
        return true;
    }
};

} // namespace

bool wheelScrollsTheForm(const QWidget* widget)
{
    return widget && isField(widget) && !widget->hasFocus() && insideScrollArea(widget);
}

void installWheelGuard()
{
    static bool installed = false;
    if (installed || !qApp)
        return;
    installed = true;
    qApp->installEventFilter(new WheelGuard(qApp));
}

} // namespace tw::ui
