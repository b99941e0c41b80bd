#pragma once
// The shell: menus, the stage navigator and one pane per stage. Panes wire their own widgets; the
// document and its File/Edit actions live in ui/document.

#include <QMainWindow>

class QStackedWidget;

namespace tw::ui {

class Document;
class DocumentActions;
class StageNavigator;
class CollectivePane;
class ParallelPane;
class TensorPane;
class TextPane;
class WirePane;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    void setStage(int stage);
    [[nodiscard]] int stage() const;
    [[nodiscard]] int stageCount() const;
    [[nodiscard]] TextPane* textPane() const { return m_textPane; }
    [[nodiscard]] TensorPane* tensorPane() const { return m_tensorPane; }
    [[nodiscard]] ParallelPane* parallelPane() const { return m_parallelPane; }
    [[nodiscard]] CollectivePane* collectivePane() const { return m_collectivePane; }
    [[nodiscard]] WirePane* wirePane() const { return m_wirePane; }
    [[nodiscard]] StageNavigator* navigator() const { return m_navigator; }
    [[nodiscard]] Document* document() const { return m_document; }
    [[nodiscard]] DocumentActions* actions() const { return m_actions; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void showAbout();
    void updateTitle();

    Document* m_document = nullptr;
    DocumentActions* m_actions = nullptr;
    StageNavigator* m_navigator = nullptr;
    QStackedWidget* m_stages = nullptr;
    TextPane* m_textPane = nullptr;
    TensorPane* m_tensorPane = nullptr;
    ParallelPane* m_parallelPane = nullptr;
    CollectivePane* m_collectivePane = nullptr;
    WirePane* m_wirePane = nullptr;
};

// Renders the window with each stage selected to dir/stage1.png … (offscreen is fine); false and
// a message when it cannot.
bool saveStageScreenshots(MainWindow& window, const QString& dir, QString* error);

} // namespace tw::ui
