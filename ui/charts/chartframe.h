#pragma once
// The frame the stage charts share: a bold title row above the axis rect, the base font on both axes,
// and the legend in its own centred row under the chart (so it never covers a bar or block).

#include <QFont>
#include <QString>
#include <QStringList>

#include <optional>

class QCPTextElement;
class QCustomPlot;

namespace tw::ui {

// Sets up `plot` and returns its title element (owned by the plot).
QCPTextElement* frameChart(QCustomPlot* plot, const QFont& base, const QString& title);

// The legend alone: visible, in `font`, taken out of the axis rect into a centred row 2 under the chart
// (rows 0 and 1, the title and the axis rect, must exist).
void legendBelow(QCustomPlot* plot, const QFont& font);

// Every chart's plot area stays readable (issue #34): at least kMinPlotHeight px tall for each row of
// axis rects, or `minimumPlotHeight` when set larger (a chart with many rows, the pipeline's). After
// each layout the plot's minimum height becomes what its title, legend and axes take plus that, so
// a splitter or a layout gives it the room and, where the window has none, the stage scrolls instead
// of squeezing the chart. Follows the fonts (presentation mode) as they change the axes' room.
inline constexpr int kMinPlotHeight = 120;
void keepPlotRoom(QCustomPlot* plot);
void setMinimumPlotHeight(QCustomPlot* plot, int pixels);

// The names of the plottables in the plot's legend, in its order.
[[nodiscard]] QStringList legendNames(const QCustomPlot* plot);

// A chart that draws a result of the document's Results (a step, a sweep) carries the scenario
// generation of that result, so a report can leave out a chart of an older scenario (0: none drawn).
void setResultGeneration(QCustomPlot* plot, quint64 generation);
[[nodiscard]] std::optional<quint64> resultGeneration(const QCustomPlot* plot);

} // namespace tw::ui
