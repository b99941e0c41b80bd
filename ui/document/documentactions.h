#pragma once
// The File and Edit actions of a Document: New, Open…, Open Recent, Save, Save As…, the presets,
// Undo and Redo, with a prompt before unsaved work is lost (New, Open, Open Recent; the window's
// close calls maybeKeepWork too; a preset is an undoable edit, so it needs none). Opening and saving
// put the file first in AppSettings' recent files. The dialogs are hooks (std::function) so tests
// drive the same paths without modal windows.

#include <QList>
#include <QObject>

#include <functional>

class QAction;
class QMenu;
class QWidget;

namespace tw::ui {

class Document;

class DocumentActions : public QObject {
    Q_OBJECT
public:
    enum class UnsavedChoice { Save, Discard, Cancel };

    DocumentActions(Document* document, QWidget* dialogParent);

    // Hooks; the defaults show QMessageBox / QFileDialog on dialogParent.
    std::function<UnsavedChoice()> askUnsaved;
    std::function<QString()> askOpenPath;  // empty: cancelled
    std::function<QString()> askSavePath;  // empty: cancelled
    std::function<void(const QString& title, const QString& message)> showError;
    // A file opened with problems (it reads but does not validate): they are listed here and marked
    // beside their fields, to fix and save.
    std::function<void(const QString& title, const QString& message)> showProblems;

    // True when the document may be dropped: it is unmodified, saved now, or the user discards it.
    bool maybeKeepWork();
    void newDocument();
    bool open();                      // asks for a file
    bool openPath(const QString& path);  // no prompt: the caller asked maybeKeepWork() when it had to
    // A recent file: a missing one is reported by its path and dropped from the list; otherwise the
    // prompt, then openPath.
    bool openRecent(const QString& path);
    bool save();                      // Save As when the document has no file yet
    bool saveAs();
    void loadPreset(const QString& name);

    [[nodiscard]] QAction* newAction() const { return m_new; }
    [[nodiscard]] QAction* openAction() const { return m_open; }
    [[nodiscard]] QAction* saveAction() const { return m_save; }
    [[nodiscard]] QAction* saveAsAction() const { return m_saveAs; }
    [[nodiscard]] QAction* undoAction() const { return m_undo; }
    [[nodiscard]] QAction* redoAction() const { return m_redo; }
    // One action per preset (from core's presetList), descriptions as tooltips.
    [[nodiscard]] const QList<QAction*>& presetActions() const { return m_presets; }
    void addPresetsTo(QMenu* menu) const;
    // Keeps `menu` (File → Open Recent) filled with AppSettings' recent files, newest first
    // ("&1 name — folder"), then "Clear Recent Files"; "No recent files" (disabled) when empty.
    void addRecentFilesTo(QMenu* menu);

private:
    void fillRecentMenu(QMenu* menu);

    Document* m_document;
    QWidget* m_parent;
    QAction* m_new = nullptr;
    QAction* m_open = nullptr;
    QAction* m_save = nullptr;
    QAction* m_saveAs = nullptr;
    QAction* m_undo = nullptr;
    QAction* m_redo = nullptr;
    QList<QAction*> m_presets;
    QList<QMenu*> m_recentMenus; // each leaves the list when destroyed
};

} // namespace tw::ui
