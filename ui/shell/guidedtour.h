#pragma once
// Help → "Guided tour": the paper's story told in the five panes, one step per key or click — the text,
// a token of it (the live thread: the document follows it from here on), its tensors, the strategies
// on the GPUs, the ring AllReduce step by step (space plays one step of the schedule) and the wire. Each step shows its stage, outlines the widget it talks about (an overlay that dims the
// rest of the window) and puts a card beside it with what to look at; the narration band above tells the
// stage's numbers. The keys are presentation mode's (→ / PgDn next, ← / PgUp back, Esc ends; space plays
// one step of a stage that has its own, stage 4's schedule, and is "next" elsewhere), and they work with
// or without presentation mode; the card has Back, Next and End buttons.

#include "stage.h"

#include <QObject>
#include <QPointer>
#include <QRect>
#include <QString>

#include <functional>
#include <vector>

class QLabel;
class QPushButton;
class QTimer;
class QWidget;

namespace tw::ui {

class MainWindow;
class TourOverlay;

class GuidedTour : public QObject {
    Q_OBJECT
public:
    explicit GuidedTour(MainWindow* window);
    ~GuidedTour() override;

    void start();  // from the first step
    void stop();
    [[nodiscard]] bool isActive() const { return m_active; }
    // Next / back: one step of the tour. stepStage(): one step of the current stage's own (stage 4's
    // schedule), else next().
    void next();
    void back();
    void stepStage();

    [[nodiscard]] int stepCount() const { return int(m_steps.size()); }
    [[nodiscard]] int currentStep() const { return m_current; } // -1 when not active
    [[nodiscard]] int stageOfStep(int step) const;
    [[nodiscard]] QString title(int step) const;
    // The widget the current step talks about, and its outline in window coordinates.
    [[nodiscard]] QWidget* target() const;
    [[nodiscard]] QRect highlight() const { return m_highlight; }
    [[nodiscard]] QWidget* overlay() const;
    [[nodiscard]] QLabel* card() const { return m_text; }
    [[nodiscard]] QWidget* cardFrame() const { return m_card; }

signals:
    void stepChanged(int step); // -1: the tour ended

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Step {
        Stage stage = Stage::Text;
        QString title;
        std::function<QWidget*()> target;
        std::function<QString()> text; // the card's words, with the live numbers
        std::function<void()> enter;    // run when the step is shown (may be empty)
    };
    void buildSteps();
    void show(int step);
    void place();
    void installFilter();
    [[nodiscard]] QRect targetRect() const; // the target in window coordinates, clipped to the window

    MainWindow* m_window;
    std::vector<Step> m_steps;
    int m_current = -1;
    bool m_active = false;
    bool m_narrationWasHidden = false;
    QRect m_highlight;
    TourOverlay* m_overlay = nullptr;
    QTimer* m_follow = nullptr;
    QWidget* m_card = nullptr;
    QLabel* m_text = nullptr;
    QPushButton* m_back = nullptr;
    QPushButton* m_next = nullptr;
};

} // namespace tw::ui
