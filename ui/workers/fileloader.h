#pragma once
// Reads a text file off the GUI thread in chunks, with progress and cancel, and checks its bytes
// (UTF-8 validity, NUL bytes, CR line ends) through core.

#include "base/error.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

template <class T>
class QFutureWatcher;

namespace tw::ui {

// A file read into memory and what the UI must know about its bytes.
struct LoadedFile {
    QString path;
    std::shared_ptr<const std::string> bytes;
    std::optional<Error> invalidUtf8; // the first invalid sequence, with line/column
    std::uint64_t nulBytes = 0;
    bool hasCarriageReturn = false;
};

struct LoadResult {
    std::optional<LoadedFile> file;
    std::optional<Error> error; // unreadable path, empty file, too large, cancelled
    bool cancelled = false;
};

// The work itself (runs on a pool thread).
[[nodiscard]] LoadResult loadTextFile(const QString& path, std::stop_token stop,
                                      const std::function<void(double)>& progress);

class BackgroundJob;

// Runs one load at a time (a BackgroundJob); a new load or cancel() drops the previous one.
class FileLoader : public QObject {
    Q_OBJECT
public:
    explicit FileLoader(QObject* parent = nullptr);
    ~FileLoader() override;

    void load(const QString& path);
    void cancel();
    [[nodiscard]] bool isBusy() const;

signals:
    void progressed(double fraction);
    void loaded(const tw::ui::LoadedFile& file);
    void failed(const tw::Error& error);
    void cancelled(const QString& path);

private:
    BackgroundJob* m_job = nullptr;
    QString m_path;
};

} // namespace tw::ui
