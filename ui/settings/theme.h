#pragma once
// The viewer's appearance applied to the running application: the Fusion style (radio and check
// box outlines made visible on dark) with a light or a dark QPalette, the application font scaled
// from the font the application started with (never cumulatively), and the drawings' colour scheme
// (views/palette.h). followAppSettings() keeps it in step with AppSettings; after every change
// each widget repaints.
//
// The drawings (stage views, charts) keep their light "paper" canvas in the dark theme: their ink
// is dark on white in both themes, like a printed figure on a dark desk.

#include "appsettings.h"

#include <QFont>
#include <QPalette>
#include <QString>

#include <functional>

class QApplication;
class QWidget;

namespace tw::ui::theme {

// The application font as it was before the first scaling (captured on the first call of any
// function here).
[[nodiscard]] QFont baseFont();
// baseFont() scaled by AppSettings' font scale times `extra` (presentation mode passes its zoom).
[[nodiscard]] QFont scaledFont(double extra = 1.0);
// The Fusion palette of a theme.
[[nodiscard]] QPalette paletteFor(AppSettings::Theme theme);

// Colours for text a widget writes itself (rich-text labels, style sheets) on the window's
// background, readable in the current theme (at least 5.5:1 on Window, WCAG AA asks 4.5): links,
// secondary text, errors. Light: #0B4F8A, #475569, #B91C1C; dark: #7CC0FF, #A3AAB5, #FF8A80.
// They follow the palette in use (a dark Window: the dark colours). Widgets that bake them into HTML or
// style sheets rebuild them on AppSettings::themeChanged (followTheme below does it for a style sheet).
[[nodiscard]] QColor linkColor();
[[nodiscard]] QColor mutedTextColor();
[[nodiscard]] QColor errorColor();
// Links in captions drawn on the drawings' light paper (the token captions): #0B4F8A in both themes.
[[nodiscard]] QColor paperLinkColor();

// Sets widget's style sheet to make(), now and again after every change of theme (the widget's own
// connection: it ends with the widget). For text colours from the functions above.
void followTheme(QWidget* widget, std::function<QString()> make);
// `QLabel { color: <errorColor> }` plus `extra` declarations, following the theme (a label that shows
// problems).
void styleErrorLabel(QWidget* label, const QString& extra = {});
// A status line that is sometimes a problem: in errorColor while `problem`, in the default colour
// otherwise, following the theme (calling it again only changes the state).
void showProblem(QWidget* label, bool problem);

// Applies AppSettings' theme, font scale and palette scheme to `app`, then repaints every widget.
void applyAppearance(QApplication& app);
// applyAppearance now and again whenever the theme, the font scale or the palette scheme changes.
void followAppSettings(QApplication& app);

} // namespace tw::ui::theme
