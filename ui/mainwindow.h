#pragma once
// The shell: menus, the stage navigator and one pane per stage. Panes wire their own widgets.

#include <QMainWindow>

class QStackedWidget;

namespace tw::ui {

class StageNavigator;
class TextPane;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    void setStage(int stage);
    [[nodiscard]] int stage() const;
    [[nodiscard]] int stageCount() const;
    [[nodiscard]] TextPane* textPane() const { return m_textPane; }
    [[nodiscard]] StageNavigator* navigator() const { return m_navigator; }

private:
    void buildMenus();
    void showAbout();

    StageNavigator* m_navigator = nullptr;
    QStackedWidget* m_stages = nullptr;
    TextPane* m_textPane = nullptr;
};

// Renders the window with each stage selected to dir/stage1.png … (offscreen is fine); false and
// a message when it cannot.
bool saveStageScreenshots(MainWindow& window, const QString& dir, QString* error);

} // namespace tw::ui
