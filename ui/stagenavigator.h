#pragma once
// The five stages of the story as a row of numbered buttons joined by arrows (1 Text → 2 Tensors →
// 3 GPUs → 4 Collectives → 5 Wire); the current one is filled, so the viewer always sees where they are.
// The labels are 15 % larger than the window's font and follow it (presentation mode scales it).

#include <QWidget>

class QButtonGroup;

namespace tw::ui {

class StageNavigator : public QWidget {
    Q_OBJECT
public:
    explicit StageNavigator(QWidget* parent = nullptr);

    [[nodiscard]] static QStringList stageNames();
    [[nodiscard]] int currentStage() const;
    void setCurrentStage(int stage);

signals:
    void stageSelected(int stage);

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyFonts();

    QButtonGroup* m_group = nullptr;
    QList<QWidget*> m_labels; // the buttons and the arrows
};

} // namespace tw::ui
