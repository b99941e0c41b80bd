#pragma once
// The shell: menus, the scenario toolbar, the stage navigator with the narration band under it, and
// one pane per stage. Panes wire their own widgets; the document and its File/Edit actions live in
// ui/document; presentation mode, the narration and the toolbar live in ui/shell.

#include "stage.h"

#include <QList>
#include <QMainWindow>
#include <QPointer>

#include <array>

class QAction;
class QStackedWidget;
class QToolButton;
class QUrl;

namespace tw::ui {

class Autosave;
class ComparePanel;
class Document;
class ModelHelp;
class SettingsDialog;
class DocumentActions;
class GuidedTour;
class NarrationBar;
class Presentation;
class ScenarioToolbar;
class StageNavigator;
class StagePane;
class CollectivePane;
class ParallelPane;
class TensorPane;
class TextPane;
class WirePane;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    // Shows `stage`: the pane, the navigator and the narration follow.
    void setStage(Stage stage);
    // The same by index (0 Text … 4 Wire; ui/stage.h); an index outside is ignored.
    void setStage(int index);
    [[nodiscard]] Stage currentStage() const;
    [[nodiscard]] int stage() const; // the current stage's index, 0 … 4
    [[nodiscard]] int stageCount() const;
    // The stage's pane as the window and presentation mode drive it (ui/panes/stagepane.h).
    [[nodiscard]] StagePane* stagePane(Stage stage) const { return m_stagePanes[std::size_t(indexOf(stage))]; }
    [[nodiscard]] StagePane* currentPane() const { return stagePane(currentStage()); }
    [[nodiscard]] TextPane* textPane() const { return m_textPane; }
    [[nodiscard]] TensorPane* tensorPane() const { return m_tensorPane; }
    [[nodiscard]] ParallelPane* parallelPane() const { return m_parallelPane; }
    [[nodiscard]] CollectivePane* collectivePane() const { return m_collectivePane; }
    [[nodiscard]] WirePane* wirePane() const { return m_wirePane; }
    [[nodiscard]] QList<QWidget*> panes() const; // stage order
    [[nodiscard]] StageNavigator* navigator() const { return m_navigator; }
    [[nodiscard]] NarrationBar* narrationBar() const { return m_narration; }
    [[nodiscard]] ScenarioToolbar* scenarioToolbar() const { return m_toolbar; }
    [[nodiscard]] Presentation* presentation() const { return m_presentation; }
    [[nodiscard]] Document* document() const { return m_document; }
    [[nodiscard]] DocumentActions* actions() const { return m_actions; }
    [[nodiscard]] QAction* showNarrationAction() const { return m_showNarration; }
    [[nodiscard]] QToolButton* narrationToggle() const { return m_narrationToggle; } // folds the narration
    [[nodiscard]] ComparePanel* comparePanel() const { return m_comparePanel; }
    [[nodiscard]] QAction* compareAction() const { return m_compareAction; }
    // Autosave of the open scenario (the GUI's main turns it on; tests and --screenshot do not):
    // dir empty = QStandardPaths::AppDataLocation/autosave. Null until enabled.
    Autosave* enableAutosave(const QString& dir = {});
    [[nodiscard]] Autosave* autosave() const { return m_autosave; }
    void showSettings();
    // Help → How the numbers are computed: the model's documentation at `page` ("model.md") and the
    // heading starting with `section` ("§3"; empty: the top).
    ModelHelp* showModelHelp(const QString& page = QStringLiteral("model.md"), const QString& section = {});
    // A figure chain's "How it is computed" link (tokenwire-help:model.md#§2.4): Help at that section.
    // False for any other link.
    bool openHelpLink(const QUrl& url);
    // Help → Guided tour (ui/shell/guidedtour.h).
    [[nodiscard]] GuidedTour* guidedTour() const { return m_tour; }

signals:
    void stageChanged(int stage);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void showAbout();
    void updateTitle();
    void showFigure(const QString& id); // a narration number clicked: the current pane explains it

    Document* m_document = nullptr;
    DocumentActions* m_actions = nullptr;
    StageNavigator* m_navigator = nullptr;
    NarrationBar* m_narration = nullptr;
    ScenarioToolbar* m_toolbar = nullptr;
    Presentation* m_presentation = nullptr;
    QAction* m_showNarration = nullptr;
    QToolButton* m_narrationToggle = nullptr;
    QAction* m_compareAction = nullptr;
    ComparePanel* m_comparePanel = nullptr;
    Autosave* m_autosave = nullptr;
    QPointer<SettingsDialog> m_settings;
    QPointer<ModelHelp> m_modelHelp;
    GuidedTour* m_tour = nullptr;
    QStackedWidget* m_stages = nullptr;
    TextPane* m_textPane = nullptr;
    TensorPane* m_tensorPane = nullptr;
    ParallelPane* m_parallelPane = nullptr;
    CollectivePane* m_collectivePane = nullptr;
    WirePane* m_wirePane = nullptr;
    std::array<StagePane*, kStageCount> m_stagePanes{}; // the five panes above, in stage order
};

// Renders the window with each stage selected to dir/stage1.png … (offscreen is fine); false and
// a message when it cannot.
bool saveStageScreenshots(MainWindow& window, const QString& dir, QString* error);

} // namespace tw::ui
