#include "stagepane.h"

#include <QGraphicsView>

#include <algorithm>

namespace tw::ui {

void StagePane::zoomDrawing(double factor)
{
    auto* view = qobject_cast<QGraphicsView*>(drawing());
    if (!view)
        return;
    if (!m_transformBeforeZoom)
        m_transformBeforeZoom = view->transform();
    const double now = view->transform().m11();
    const double target = std::clamp(now * factor, kMinViewScale, kMaxViewScale);
    if (now > 0)
        view->scale(target / now, target / now);
}

void StagePane::fitDrawing()
{
    restoreDrawing();
}

void StagePane::restoreDrawing()
{
    auto* view = qobject_cast<QGraphicsView*>(drawing());
    if (view && m_transformBeforeZoom)
        view->setTransform(*m_transformBeforeZoom);
    m_transformBeforeZoom.reset();
}

} // namespace tw::ui
