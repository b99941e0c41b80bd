#pragma once
// Fonts that follow the application font. A widget given its own font (a caption 15 % larger, the
// token chips 25 % larger, the id strip in a fixed-pitch face) keeps that point size when the
// application font changes, so presentation mode (1.6×) and the settings' font scale would pass it
// by. followAppFont keeps such a widget at `scale` × the application font, whatever it becomes; the
// charts' fonts (QCustomPlot's axes, legend, titles and text items) follow it by followAppFontChart.

class QCustomPlot;
class QWidget;

namespace tw::ui::fontfollow {

// Whether the face is the application's or the system's fixed-pitch face (the token ids).
enum class Face { Application, FixedPitch };

// Sets `widget`'s font to `scale` × the application font's size now and whenever the application font
// changes (bold or not; the face as asked). Calling it again replaces the scale.
void followAppFont(QWidget* widget, double scale, bool bold = false, Face face = Face::Application);
// The scale followAppFont keeps for `widget` (0 when it does not follow).
[[nodiscard]] double followedScale(const QWidget* widget);

// Every font of `plot` (axis labels and ticks, the legend and its items, title elements, text items)
// scaled by the application font's size over its size now, whenever it changes; items a chart adds
// later in its construction-time font are scaled before the next replot.
void followAppFontChart(QCustomPlot* plot);
// The factor the chart's fonts carry now (1 until the application font changes).
[[nodiscard]] double chartFontFactor(const QCustomPlot* plot);

} // namespace tw::ui::fontfollow
