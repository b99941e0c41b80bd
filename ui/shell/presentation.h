#pragma once
// Presentation mode for a classroom projector: full screen, the application font 1.6× larger, the
// menus, the toolbar and the panes' forms put away so the drawings get the room, the narration large,
// and the keyboard alone drives the story whichever widget has the focus: ← → (and PgUp/PgDn, as
// presenter clickers send) change stage, space plays or pauses stage 4's and stage 5's animations,
// + and − zoom the stage's drawing (0 fits it again), Esc leaves. F5 (the action) enters and leaves.
// Leaving restores the font exactly (the settings' font, whatever its scale), the window state, what
// was hidden and the drawings' zoom. Offscreen, full screen is only a window state.

#include <QFont>
#include <QObject>
#include <QPointer>
#include <QRect>
#include <QSizePolicy>

#include <vector>

class QAction;
class QWidget;

namespace tw::ui {

class MainWindow;

class Presentation : public QObject {
    Q_OBJECT
public:
    static constexpr double kFontScale = 1.6;
    static constexpr double kZoomStep = 1.25;

    explicit Presentation(MainWindow* window);
    ~Presentation() override; // leaves first: the application font is never left scaled

    [[nodiscard]] bool isActive() const { return m_active; }
    void setActive(bool active);
    void enter() { setActive(true); }
    void leave() { setActive(false); }
    // View → Presentation mode: checkable, F5, on the window itself so it works without the menu bar.
    [[nodiscard]] QAction* action() const { return m_action; }
    // The font the application had before presenting (meaningful while active).
    [[nodiscard]] QFont restoreFont() const { return m_baseFont; }

    // What the keys do.
    void nextStage();
    void previousStage();
    void togglePlaying();        // stages 4 and 5; nothing elsewhere
    [[nodiscard]] bool isPlaying() const;
    void zoomBy(double factor);  // the current stage's drawing
    void resetZoom();

signals:
    void activeChanged(bool active);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void applyPresentingFont();
    void onAppearanceChanged();
    void restoreZoom();
    void restoreGeometrySoon(QRect geometry, int tries);
    [[nodiscard]] bool isOurs(QObject* watched) const;
    [[nodiscard]] std::vector<QWidget*> putAway() const;

    MainWindow* m_window;
    QAction* m_action = nullptr;
    bool m_active = false;
    QFont m_baseFont;       // the application font before presenting (the settings' font)
    QFont m_presentingFont; // m_baseFont × kFontScale, as set
    Qt::WindowStates m_savedState;
    QRect m_savedGeometry;
    std::vector<QPointer<QWidget>> m_hidden; // put away while presenting, shown again on leave
    std::vector<std::pair<QPointer<QWidget>, QSizePolicy>> m_policies; // changed while presenting
    bool m_narrationWasHidden = false;
};

// Whether an application event filter's `watched` (a widget or the QWindow under it) belongs to `window`:
// the keys presentation mode and the guided tour take are only their window's.
[[nodiscard]] bool isEventOfWindow(const QObject* watched, const QWidget* window);

} // namespace tw::ui
