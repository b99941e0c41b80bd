#pragma once
// Windows and dialogs that fit the screen they open on (a 1280×720 projector included): a wanted size
// bounded by the screen's available geometry, and a placement that keeps the whole frame on it.

#include <QSize>

class QWidget;

namespace tw::ui::screenfit {

// `wanted`, bounded by the available geometry of the screen `widget` is on (or will open on: its
// parent's, else the primary screen), less the frame a window manager adds around it.
[[nodiscard]] QSize fitted(const QWidget* widget, QSize wanted);
// Resizes a top-level `widget` to fitted(wanted) and, when its frame would reach past the available
// geometry, moves it back inside.
void resizeToFit(QWidget* widget, QSize wanted);
// Moves a shown top-level widget so its frame lies within the available geometry (it is resized down
// first when it is larger).
void keepOnScreen(QWidget* widget);

} // namespace tw::ui::screenfit
