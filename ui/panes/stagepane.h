#pragma once
// What the window, presentation mode and the narration ask of every stage's pane, so none of them
// switches on the stage: the pane's main drawing (kept on the projector, zoomed by + and −), its
// figures (a narration number clicked), and its animation if it has one (space). The five panes
// derive from it beside QWidget.
//
// Zoom: by default the drawing is a QGraphicsView scaled between 0.1× and 12×; the view as it was
// before the first zoom is remembered and put back by fitDrawing (key 0) and restoreDrawing (leaving
// presentation mode). Panes whose drawing is no QGraphicsView override the three.

#include <QTransform>

#include <optional>

class QString;
class QWidget;

namespace tw::ui {

class StagePane {
public:
    virtual ~StagePane() = default;

    // The stage's drawing: token chips, transformer, mesh, schedule, wire.
    [[nodiscard]] virtual QWidget* drawing() const = 0;
    // A widget presentation mode keeps beside the drawing (stage 1's token ids); null: none.
    [[nodiscard]] virtual QWidget* drawingCompanion() const { return nullptr; }
    // Selects figure `id` and explains it; false when the pane has no such figure.
    virtual bool showFigure(const QString& id) = 0;

    virtual void zoomDrawing(double factor);
    virtual void fitDrawing();
    virtual void restoreDrawing();

    // The stage's animation (stages 4 and 5); the others have none and ignore setPlaying.
    [[nodiscard]] virtual bool isPlaying() const { return false; }
    virtual void setPlaying(bool playing) { (void)playing; }
    // Steps of the drawing's own, walked by hand (stage 4's schedule, for the guided tour): one step
    // forward or back, false when there is none that way (or no steps at all).
    virtual bool stepForward() { return false; }
    virtual bool stepBack() { return false; }
    [[nodiscard]] virtual bool canStepBack() const { return false; }
    [[nodiscard]] virtual bool hasOwnSteps() const { return false; }

    static constexpr double kMinViewScale = 0.1, kMaxViewScale = 12.0;

protected:
    StagePane() = default;
    StagePane(const StagePane&) = default;
    StagePane& operator=(const StagePane&) = default;

private:
    std::optional<QTransform> m_transformBeforeZoom;
};

} // namespace tw::ui
