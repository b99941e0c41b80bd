#include "autosave.h"

#include "document.h"

#include "settings/appsettings.h"

#include "base/fileio.h"
#include "scenario/scenariojson.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTimer>
#include <QUndoStack>

#include <algorithm>

namespace tw::ui {

namespace {
constexpr qint64 kMaxAutosaveBytes = 64 * 1024 * 1024; // as Document's limit on scenario files
constexpr int kFormatVersion = 1;
const QLatin1String kLockSuffix(".autosave.lock");

// "<dir>/session-….autosave.json" → "<dir>/session-….autosave.lock".
QString lockPathFor(const QString& autosavePath)
{
    QString path = autosavePath;
    path.chop(int(qstrlen(Autosave::kSuffix)));
    return path + kLockSuffix;
}

// A lock probe that calls a lock stale only when its process is gone (never by age: a session
// may run for days without touching its lock file).
std::unique_ptr<QLockFile> claim(const QString& lockPath)
{
    auto lock = std::make_unique<QLockFile>(lockPath);
    lock->setStaleLockTime(0);
    if (!lock->tryLock(0))
        return nullptr;
    return lock;
}

QString displayTime(const QDateTime& utc)
{
    // A no-break space: the date and the time stay on one line in a message box.
    return utc.isValid() ? utc.toLocalTime().toString(QStringLiteral("yyyy-MM-dd\u00A0HH:mm:ss"))
                         : QCoreApplication::translate("tw::ui::Autosave", "an unknown time");
}
} // namespace

Autosave::Autosave(Document* document, QString dir, QObject* parent)
    : QObject(parent)
    , m_document(document)
    , m_dir(std::move(dir))
    , m_interval(new QTimer(this))
    , m_settle(new QTimer(this))
{
    askRecover = [this](const Orphan& orphan) {
        const QString original = QDir::toNativeSeparators(orphan.originalPath);
        const QString what = original.isEmpty() ? tr("It was an untitled scenario.")
                                                : tr("It holds unsaved changes to %1.").arg(original);
        QMessageBox box(QMessageBox::Question, tr("Recover unsaved work"),
                        tr("Recover the unsaved scenario from %1?").arg(displayTime(orphan.savedAt)),
                        QMessageBox::Yes | QMessageBox::No, m_dialogParent);
        box.setInformativeText(tr("TokenWire did not close normally last time. %1\nIf you choose No, it is deleted.")
                                   .arg(what));
        box.setDefaultButton(QMessageBox::Yes);
        return box.exec() == QMessageBox::Yes;
    };
    showError = [this](const QString& title, const QString& message) {
        QMessageBox::warning(m_dialogParent, title, message);
    };

    if (m_dir.isEmpty())
        m_dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave");
    m_dir = QDir(m_dir).absolutePath();
    const QString session = QStringLiteral("session-%1-%2")
                                .arg(QCoreApplication::applicationPid())
                                .arg(QDateTime::currentMSecsSinceEpoch());
    m_path = QDir(m_dir).filePath(session + QLatin1String(kSuffix));
    m_lockPath = lockPathFor(m_path);
    if (!QDir().mkpath(m_dir)) {
        m_lastError = tr("Cannot create the autosave folder %1").arg(m_dir);
    } else {
        auto lock = std::make_unique<QLockFile>(m_lockPath);
        if (lock->tryLock(0))
            m_lock = std::move(lock);
        else
            m_lastError = tr("Cannot create the autosave lock %1").arg(m_lockPath);
    }

    AppSettings* settings = AppSettings::instance();
    m_intervalMs = settings->autosaveIntervalSeconds() * 1000;
    connect(settings, &AppSettings::autosaveIntervalChanged, this, [this](int seconds) {
        if (m_intervalFromSettings) {
            m_intervalMs = seconds * 1000;
            m_interval->start(m_intervalMs);
        }
    });
    m_settle->setSingleShot(true);
    connect(m_settle, &QTimer::timeout, this, [this] {
        if (m_dirty)
            writeNow();
    });
    connect(m_interval, &QTimer::timeout, this, [this] {
        if (!m_document)
            return;
        m_document->flushPendingEdits(); // a pane's debounced typing counts too
        if (m_dirty && m_document->isModified())
            writeNow();
    });
    m_interval->start(m_intervalMs);
    if (document) {
        connect(document, &Document::scenarioChanged, this, &Autosave::documentChanged);
        connect(document, &Document::modifiedChanged, this, &Autosave::modifiedChanged);
        m_dirty = document->isModified();
    }
}

Autosave::~Autosave()
{
    removeFile();
    if (m_lock)
        m_lock->unlock();
}

void Autosave::setDialogParent(QWidget* parent)
{
    m_dialogParent = parent;
}

void Autosave::setIntervalMs(int ms)
{
    m_intervalFromSettings = false;
    m_intervalMs = std::max(ms, 1);
    m_interval->start(m_intervalMs);
}

void Autosave::setSettleMs(int ms)
{
    m_settleMs = std::max(ms, 0);
}

void Autosave::documentChanged()
{
    // The first edit's scenarioChanged comes before the undo stack leaves its clean state, so the
    // settle timer starts either way and checks isModified() when it fires.
    m_dirty = true;
    m_settle->start(m_settleMs);
}

void Autosave::modifiedChanged(bool modified)
{
    if (modified) {
        m_dirty = true;
        m_settle->start(m_settleMs);
    } else {
        m_settle->stop();
        removeFile();
    }
}

void Autosave::removeFile()
{
    if (QFile::exists(m_path))
        QFile::remove(m_path);
}

bool Autosave::writeNow()
{
    if (!m_document)
        return false;
    if (!m_document->isModified()) {
        removeFile();
        m_dirty = false;
        return true;
    }
    if (!m_lock) {
        emit failed(m_lastError);
        return false;
    }
    // The envelope: what it is, the scenario's own file and the time, then the scenario exactly as a
    // save writes it.
    const QJsonObject meta{{QStringLiteral("tokenwire_autosave"), kFormatVersion},
                           {QStringLiteral("original_path"), m_document->filePath()},
                           {QStringLiteral("saved_at"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
                           {QStringLiteral("pid"), QCoreApplication::applicationPid()}};
    QByteArray data = QJsonDocument(meta).toJson(QJsonDocument::Indented).trimmed();
    data.chop(1); // the closing brace
    data = data.trimmed();
    data += ",\n    \"scenario\": ";
    data += QByteArray::fromStdString(scenario::scenarioToJson(m_document->scenario()));
    data += "\n}\n";
    const std::string_view bytes(data.constData(), std::size_t(data.size()));
    if (const Status saved = saveFileAtomically(m_path.toStdString(), bytes); !saved.ok()) {
        m_lastError = tr("Autosave failed: %1").arg(QString::fromStdString(saved.error().message));
        emit failed(m_lastError);
        return false;
    }
    m_dirty = false;
    m_lastError.clear();
    emit written(m_path);
    return true;
}

bool Autosave::read(const QString& path, Orphan* orphan, scenario::Scenario* scenario, QString* error)
{
    auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(tr("cannot open it: %1").arg(file.errorString()));
    if (file.size() > kMaxAutosaveBytes)
        return fail(tr("it is %1 bytes, more than a scenario's %2").arg(file.size()).arg(kMaxAutosaveBytes));
    const QByteArray bytes = file.read(kMaxAutosaveBytes + 1);
    if (file.error() != QFileDevice::NoError)
        return fail(tr("cannot read it: %1").arg(file.errorString()));
    QJsonParseError parse;
    const QJsonDocument json = QJsonDocument::fromJson(bytes, &parse);
    if (parse.error != QJsonParseError::NoError)
        return fail(tr("it is not JSON (%1 at byte %2)").arg(parse.errorString()).arg(parse.offset));
    const QJsonObject root = json.object();
    if (!json.isObject() || root.value(QStringLiteral("tokenwire_autosave")).toInt() != kFormatVersion)
        return fail(tr("it is not a TokenWire autosave (no \"tokenwire_autosave\": %1)").arg(kFormatVersion));
    const QJsonValue scenarioValue = root.value(QStringLiteral("scenario"));
    if (!scenarioValue.isObject())
        return fail(tr("it holds no scenario (\"scenario\" is missing or not an object)"));
    const QByteArray scenarioJson = QJsonDocument(scenarioValue.toObject()).toJson(QJsonDocument::Indented);
    const scenario::ScenarioLoad load = scenario::loadScenario(
        std::string_view(scenarioJson.constData(), std::size_t(scenarioJson.size())), path.toStdString() + ":scenario");
    // A scenario that reads but does not validate is work in the middle of an edit: recovered as it
    // was, its problems shown beside the fields as before the crash.
    if (!load.scenario && !load.unchecked) {
        QStringList lines;
        for (const Error& e : load.errors)
            lines << QString::fromStdString(e.toString());
        return fail(tr("its scenario is not valid: %1").arg(lines.join(QLatin1Char('\n'))));
    }
    if (scenario)
        *scenario = load.scenario ? *load.scenario : *load.unchecked;
    if (orphan) {
        orphan->autosavePath = path;
        orphan->originalPath = root.value(QStringLiteral("original_path")).toString();
        orphan->savedAt = QDateTime::fromString(root.value(QStringLiteral("saved_at")).toString(), Qt::ISODateWithMs);
        if (!orphan->savedAt.isValid())
            orphan->savedAt = QFileInfo(path).lastModified().toUTC();
    }
    return true;
}

void Autosave::setAside(const QString& path, const QString& reason)
{
    QString target = path + QStringLiteral(".corrupt");
    for (int n = 2; QFile::exists(target); ++n)
        target = path + QStringLiteral(".corrupt.%1").arg(n);
    const bool moved = QFile::rename(path, target);
    showError(tr("Autosave file cannot be recovered"),
              moved ? tr("The autosave file %1 cannot be recovered: %2.\nIt was kept as %3.")
                          .arg(QDir::toNativeSeparators(path), reason, QDir::toNativeSeparators(target))
                    : tr("The autosave file %1 cannot be recovered: %2.\nIt could not be renamed to %3 and was left "
                         "where it is.")
                          .arg(QDir::toNativeSeparators(path), reason, QDir::toNativeSeparators(target)));
}

QList<Autosave::Orphan> Autosave::orphans()
{
    QList<Orphan> found;
    const QDir dir(m_dir);
    const QStringList names =
        dir.entryList({QString(QStringLiteral("*") + QLatin1String(kSuffix))}, QDir::Files | QDir::Hidden, QDir::Name);
    for (const QString& name : names) {
        const QString path = dir.filePath(name);
        if (path == m_path)
            continue;
        const std::unique_ptr<QLockFile> lock = claim(lockPathFor(path));
        if (!lock)
            continue; // its session is still running
        Orphan orphan;
        QString error;
        if (read(path, &orphan, nullptr, &error))
            found << orphan;
        else
            setAside(path, error);
        lock->unlock();
    }
    // Locks of sessions that are gone and left no autosave (recovered or discarded elsewhere).
    const QStringList locks = dir.entryList({QString(QStringLiteral("*") + kLockSuffix)}, QDir::Files | QDir::Hidden);
    for (const QString& name : locks) {
        const QString lockPath = dir.filePath(name);
        QString autosavePath = lockPath;
        autosavePath.chop(int(kLockSuffix.size()));
        autosavePath += QLatin1String(kSuffix);
        if (lockPath == m_lockPath || QFile::exists(autosavePath))
            continue;
        if (const std::unique_ptr<QLockFile> lock = claim(lockPath))
            lock->unlock();
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Orphan& a, const Orphan& b) { return a.savedAt > b.savedAt; });
    return found;
}

bool Autosave::recoverIfAny()
{
    for (const Orphan& orphan : orphans()) {
        // Hold its lock while asking, so a second TokenWire starting now does not offer it too.
        const std::unique_ptr<QLockFile> lock = claim(lockPathFor(orphan.autosavePath));
        if (!lock || !QFile::exists(orphan.autosavePath))
            continue;
        if (!askRecover(orphan)) {
            QFile::remove(orphan.autosavePath);
            continue;
        }
        QString error;
        if (recover(orphan, &error))
            return true;
        showError(tr("Cannot recover the scenario"), error);
    }
    return false;
}

bool Autosave::recover(const Orphan& orphan, QString* error)
{
    if (!m_document) {
        if (error)
            *error = tr("No document to recover into");
        return false;
    }
    scenario::Scenario recovered;
    QString why;
    if (!read(orphan.autosavePath, nullptr, &recovered, &why)) {
        if (error)
            *error = tr("The autosave file %1 cannot be recovered: %2")
                         .arg(QDir::toNativeSeparators(orphan.autosavePath), why);
        return false;
    }
    // The document's file decides where Save writes and what relative text/tokenizer paths mean:
    // the original file when it is still there; otherwise untitled, with those paths made absolute.
    bool atOriginal = !orphan.originalPath.isEmpty() && QFileInfo(orphan.originalPath).isFile();
    if (atOriginal) {
        QString openError;
        atOriginal = m_document->open(orphan.originalPath, &openError);
    }
    if (!atOriginal) {
        m_document->newDocument();
        if (!orphan.originalPath.isEmpty())
            recovered = scenario::resolvePaths(std::move(recovered), orphan.originalPath.toStdString());
    }
    m_document->applyScenario(recovered);
    // Modified, with nothing to undo: the recovered state is not the file's, and the edits that led
    // to it are gone with the crashed session.
    m_document->undoStack()->resetClean();
    // This session's autosave holds it before the orphan goes; if that write fails the orphan stays,
    // to be offered again rather than lost.
    if (writeNow())
        QFile::remove(orphan.autosavePath);
    return true;
}

} // namespace tw::ui
