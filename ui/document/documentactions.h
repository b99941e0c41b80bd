#pragma once
// The File and Edit actions of a Document: New, Open…, Save, Save As…, the presets, Undo and Redo,
// with a prompt before unsaved work is lost. The dialogs are hooks (std::function) so tests drive
// the same paths without modal windows.

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

    // True when the document may be dropped: it is unmodified, saved now, or the user discards it.
    bool maybeKeepWork();
    void newDocument();
    bool open();                      // asks for a file
    bool openPath(const QString& path);
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

private:
    Document* m_document;
    QWidget* m_parent;
    QAction* m_new = nullptr;
    QAction* m_open = nullptr;
    QAction* m_save = nullptr;
    QAction* m_saveAs = nullptr;
    QAction* m_undo = nullptr;
    QAction* m_redo = nullptr;
    QList<QAction*> m_presets;
};

} // namespace tw::ui
