#pragma once
// The five stages of the story as a row of buttons joined by arrows; the current one is marked.

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

private:
    QButtonGroup* m_group = nullptr;
};

} // namespace tw::ui
