#include "documentactions.h"

#include "document.h"

#include "settings/appsettings.h"

#include "scenario/presets.h"

#include <QAction>
#include <QFileDialog>
#include <QDir>
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
    showProblems = [this](const QString& title, const QString& message) { QMessageBox::information(m_parent, title, message); };

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
    connect(AppSettings::instance(), &AppSettings::recentFilesChanged, this, [this] {
        for (QMenu* menu : std::as_const(m_recentMenus))
            fillRecentMenu(menu);
    });
}

void DocumentActions::addPresetsTo(QMenu* menu) const
{
    menu->setToolTipsVisible(true);
    for (QAction* action : m_presets)
        menu->addAction(action);
}

void DocumentActions::addRecentFilesTo(QMenu* menu)
{
    menu->setObjectName(QStringLiteral("recentFilesMenu"));
    m_recentMenus << menu;
    connect(menu, &QObject::destroyed, this, [this, menu] { m_recentMenus.removeAll(menu); });
    fillRecentMenu(menu);
}

void DocumentActions::fillRecentMenu(QMenu* menu)
{
    // The old entries go later, not now: this may run inside one of their triggered() signals.
    for (QAction* action : menu->actions()) {
        menu->removeAction(action);
        if (action->parent() == menu)
            action->deleteLater();
    }
    const QStringList files = AppSettings::instance()->recentFiles();
    for (int i = 0; i < files.size(); ++i) {
        const QString path = files[i];
        const QFileInfo info(path);
        // "&1 name — folder": the number is the accelerator; & in names would be eaten, so doubled.
        QString name = info.fileName();
        name.replace(QLatin1Char('&'), QStringLiteral("&&"));
        QString folder = QDir::toNativeSeparators(info.absolutePath());
        folder.replace(QLatin1Char('&'), QStringLiteral("&&"));
        auto* action = new QAction(tr("&%1 %2 — %3").arg(i + 1).arg(name, folder), menu);
        action->setObjectName(QStringLiteral("recentFile%1").arg(i + 1));
        action->setData(path);
        action->setStatusTip(path);
        action->setToolTip(path);
        connect(action, &QAction::triggered, this, [this, path] { openRecent(path); });
        menu->addAction(action);
    }
    if (files.isEmpty()) {
        QAction* none = menu->addAction(tr("No recent files"));
        none->setEnabled(false);
    }
    menu->addSeparator();
    QAction* clear = menu->addAction(tr("&Clear Recent Files"));
    clear->setObjectName(QStringLiteral("clearRecentFiles"));
    clear->setEnabled(!files.isEmpty());
    connect(clear, &QAction::triggered, AppSettings::instance(), &AppSettings::clearRecentFiles);
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
    if (m_document->open(path, &error)) {
        AppSettings::instance()->addRecentFile(m_document->filePath());
        if (!m_document->problems().empty()) {
            QStringList lines;
            for (const Error& e : m_document->problems())
                lines << QStringLiteral("• ") + QString::fromStdString(e.toString());
            showProblems(tr("The scenario has problems"),
                         tr("%1 opened, but it cannot be derived as it is. Fix the fields marked in red, then save:\n%2")
                             .arg(m_document->displayName(), lines.join(QLatin1Char('\n'))));
        }
        return true;
    }
    showError(tr("Cannot open the scenario"), error);
    return false;
}

bool DocumentActions::openRecent(const QString& path)
{
    if (!QFileInfo(path).isFile()) {
        AppSettings::instance()->removeRecentFile(path);
        showError(tr("Recent file not found"),
                  tr("%1 no longer exists (moved, renamed or deleted); it was removed from the recent files.")
                      .arg(QDir::toNativeSeparators(path)));
        return false;
    }
    return maybeKeepWork() && openPath(path);
}

bool DocumentActions::save()
{
    if (m_document->filePath().isEmpty())
        return saveAs();
    QString error;
    if (m_document->save(&error)) {
        AppSettings::instance()->addRecentFile(m_document->filePath());
        return true;
    }
    showError(tr("Cannot save the scenario"), error);
    return false;
}

bool DocumentActions::saveAs()
{
    const QString path = askSavePath();
    if (path.isEmpty())
        return false;
    QString error;
    if (m_document->saveAs(path, &error)) {
        AppSettings::instance()->addRecentFile(m_document->filePath());
        return true;
    }
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
