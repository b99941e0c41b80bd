#include "documentactions.h"

#include "document.h"

#include "scenario/presets.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QUndoStack>

namespace tw::ui {

DocumentActions::DocumentActions(Document* document, QWidget* dialogParent)
    : QObject(dialogParent)
    , m_document(document)
    , m_parent(dialogParent)
{
    askUnsaved = [this] {
        const auto answer = QMessageBox::warning(
            m_parent, tr("Unsaved changes"),
            tr("%1 has changes that are not saved. Save them first?").arg(m_document->displayName()),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        return answer == QMessageBox::Save      ? UnsavedChoice::Save
               : answer == QMessageBox::Discard ? UnsavedChoice::Discard
                                                : UnsavedChoice::Cancel;
    };
    askOpenPath = [this] {
        return QFileDialog::getOpenFileName(m_parent, tr("Open scenario"), QString(),
                                            tr("TokenWire scenarios (*.tokenwire.json);;JSON (*.json);;All files (*)"));
    };
    askSavePath = [this] {
        QString path = QFileDialog::getSaveFileName(
            m_parent, tr("Save scenario"),
            m_document->filePath().isEmpty()
                ? QString::fromStdString(m_document->scenario().name) + QLatin1String(Document::kFileSuffix)
                : m_document->filePath(),
            tr("TokenWire scenarios (*.tokenwire.json)"));
        if (!path.isEmpty() && !path.endsWith(QLatin1String(".json")))
            path += QLatin1String(Document::kFileSuffix);
        return path;
    };
    showError = [this](const QString& title, const QString& message) { QMessageBox::warning(m_parent, title, message); };

    m_new = new QAction(tr("&New scenario"), this);
    m_new->setShortcut(QKeySequence::New);
    connect(m_new, &QAction::triggered, this, &DocumentActions::newDocument);
    m_open = new QAction(tr("&Open scenario…"), this);
    m_open->setShortcut(QKeySequence::Open);
    connect(m_open, &QAction::triggered, this, [this] { open(); });
    m_save = new QAction(tr("&Save"), this);
    m_save->setShortcut(QKeySequence::Save);
    connect(m_save, &QAction::triggered, this, [this] { save(); });
    m_saveAs = new QAction(tr("Save &As…"), this);
    m_saveAs->setShortcut(QKeySequence::SaveAs);
    connect(m_saveAs, &QAction::triggered, this, [this] { saveAs(); });
    // Undo and redo go through the document so that a pane's debounced edit (typing) lands first.
    QUndoStack* stack = document->undoStack();
    m_undo = new QAction(this);
    m_undo->setShortcut(QKeySequence::Undo);
    m_redo = new QAction(this);
    m_redo->setShortcut(QKeySequence::Redo);
    auto label = [](QAction* action, const QString& verb, const QString& command) {
        action->setText(command.isEmpty() ? verb : tr("%1 %2").arg(verb, command));
    };
    auto update = [this, stack, label] {
        m_undo->setEnabled(stack->canUndo());
        m_redo->setEnabled(stack->canRedo());
        label(m_undo, tr("&Undo"), stack->undoText());
        label(m_redo, tr("&Redo"), stack->redoText());
    };
    connect(stack, &QUndoStack::indexChanged, this, update);
    connect(stack, &QUndoStack::cleanChanged, this, update);
    connect(stack, &QUndoStack::canUndoChanged, this, update);
    connect(stack, &QUndoStack::canRedoChanged, this, update);
    update();
    connect(m_undo, &QAction::triggered, document, &Document::undo);
    connect(m_redo, &QAction::triggered, document, &Document::redo);
    for (const scenario::PresetInfo& info : scenario::presetList()) {
        const QString name = QString::fromStdString(info.name);
        auto* action = new QAction(name, this);
        action->setObjectName(QStringLiteral("preset-") + name);
        action->setToolTip(QString::fromStdString(info.description));
        action->setStatusTip(action->toolTip());
        connect(action, &QAction::triggered, this, [this, name] { loadPreset(name); });
        m_presets << action;
    }
}

void DocumentActions::addPresetsTo(QMenu* menu) const
{
    menu->setToolTipsVisible(true);
    for (QAction* action : m_presets)
        menu->addAction(action);
}

bool DocumentActions::maybeKeepWork()
{
    m_document->flushPendingEdits();
    if (!m_document->isModified())
        return true;
    switch (askUnsaved()) {
    case UnsavedChoice::Save: return save();
    case UnsavedChoice::Discard: return true;
    case UnsavedChoice::Cancel: return false;
    }
    return false;
}

void DocumentActions::newDocument()
{
    if (maybeKeepWork())
        m_document->newDocument();
}

bool DocumentActions::open()
{
    if (!maybeKeepWork())
        return false;
    const QString path = askOpenPath();
    return !path.isEmpty() && openPath(path);
}

bool DocumentActions::openPath(const QString& path)
{
    QString error;
    if (m_document->open(path, &error))
        return true;
    showError(tr("Cannot open the scenario"), error);
    return false;
}

bool DocumentActions::save()
{
    if (m_document->filePath().isEmpty())
        return saveAs();
    QString error;
    if (m_document->save(&error))
        return true;
    showError(tr("Cannot save the scenario"), error);
    return false;
}

bool DocumentActions::saveAs()
{
    const QString path = askSavePath();
    if (path.isEmpty())
        return false;
    QString error;
    if (m_document->saveAs(path, &error))
        return true;
    showError(tr("Cannot save the scenario"), error);
    return false;
}

void DocumentActions::loadPreset(const QString& name)
{
    QString error;
    if (!m_document->loadPreset(name, &error))
        showError(tr("Cannot load the preset"), error);
}

} // namespace tw::ui
