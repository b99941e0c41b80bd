#pragma once
// Autosave and crash recovery of the open scenario. While the document is modified its scenario is
// written (the JSON a save writes, inside a small envelope that records the scenario's own file, if
// any, and the time) to `<dir>/<session>.autosave.json`, atomically (temporary file + rename), every
// interval (AppSettings' autosave interval, 30 s by default) and once a burst of edits has settled.
// The file goes away when the document is clean again (saved, or undone back to the saved state),
// when New/Open replace it, and on a clean quit (this object's destruction).
//
// Each session holds a QLockFile `<session>.autosave.lock` for as long as it runs. At the next start
// recoverIfAny() finds autosave files whose session is gone (lock free or stale: its process died)
// and asks — through a hook, so tests answer without a modal dialog — "Recover the unsaved scenario
// from <time>?". Recovery loads it as a *modified* document with an empty undo stack, saving to the
// scenario's own file when it had one. An autosave file that cannot be read is reported by name and
// set aside as `.corrupt`; startup goes on.

#include <QDateTime>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>

class QLockFile;
class QTimer;
class QWidget;

namespace tw::scenario {
struct Scenario;
} // namespace tw::scenario

namespace tw::ui {

class Document;

class Autosave : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultSettleMs = 2000; // quiet time after the last edit before a write
    static constexpr const char* kSuffix = ".autosave.json";

    // An autosave file left by a session that is gone.
    struct Orphan {
        QString autosavePath;
        QString originalPath; // the scenario's own file; empty: it was untitled
        QDateTime savedAt;    // UTC
    };

    // dir: where autosave files live; empty = QStandardPaths::AppDataLocation/autosave. The interval
    // follows AppSettings::autosaveIntervalSeconds() until setIntervalMs() is called.
    Autosave(Document* document, QString dir = QString(), QObject* parent = nullptr);
    // A clean quit: the session's autosave file and lock are removed.
    ~Autosave() override;

    // Hooks; the defaults show a QMessageBox on dialogParent (may be null).
    std::function<bool(const Orphan& orphan)> askRecover; // true: recover it; false: delete it
    std::function<void(const QString& title, const QString& message)> showError;
    void setDialogParent(QWidget* parent);

    [[nodiscard]] QString directory() const { return m_dir; }
    // This session's autosave file (it exists only while the document is modified and written).
    [[nodiscard]] QString filePath() const { return m_path; }
    [[nodiscard]] bool isActive() const { return m_lock != nullptr; } // false: the folder could not be used
    [[nodiscard]] QString lastError() const { return m_lastError; }
    [[nodiscard]] int intervalMs() const { return m_intervalMs; }
    [[nodiscard]] int settleMs() const { return m_settleMs; }
    void setIntervalMs(int ms);
    void setSettleMs(int ms);
    // Writes now when the document is modified (and removes the file when it is not); false on a
    // failed write (lastError() says why).
    bool writeNow();

    // Autosave files of sessions that are gone, newest first; unreadable ones are reported through
    // showError and renamed to `<file>.corrupt`. A session still running is never listed.
    [[nodiscard]] QList<Orphan> orphans();
    // Offers each orphan (newest first) through askRecover until one is recovered; declined ones
    // are deleted. True when the document now holds a recovered scenario.
    bool recoverIfAny();
    // Loads `orphan` into the document (modified, empty undo stack, the original file as its save
    // target when it still exists), writes this session's autosave and deletes the orphan's files.
    bool recover(const Orphan& orphan, QString* error = nullptr);

signals:
    void written(const QString& path);
    void failed(const QString& message); // a write that did not succeed

private:
    void documentChanged();
    void modifiedChanged(bool modified);
    void removeFile();
    // Reads an autosave file; false with a reason when it is not one we can load.
    static bool read(const QString& path, Orphan* orphan, scenario::Scenario* scenario, QString* error);
    // Renames an unreadable autosave file to `.corrupt` (kept, never deleted) and says so.
    void setAside(const QString& path, const QString& reason);

    QPointer<Document> m_document;
    QString m_dir;
    QString m_path;
    QString m_lockPath;
    std::unique_ptr<QLockFile> m_lock;
    QTimer* m_interval = nullptr;
    QTimer* m_settle = nullptr;
    int m_intervalMs = 30000;
    int m_settleMs = kDefaultSettleMs;
    bool m_intervalFromSettings = true;
    bool m_dirty = false; // changed since the last write
    QString m_lastError;
    QPointer<QWidget> m_dialogParent;
};

} // namespace tw::ui
