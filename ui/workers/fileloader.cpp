#include "fileloader.h"

#include "backgroundjob.h"

#include "base/units.h"
#include "text/bpe.h"
#include "text/utf8.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <cstring>

namespace tw::ui {

namespace {
constexpr qint64 kChunk = qint64{1} << 20; // 1 MiB per read: progress and cancel in between

Error fileError(const QString& path, const std::string& message)
{
    Location where;
    where.file = path.toStdString();
    return makeError(message, where);
}
} // namespace

LoadResult loadTextFile(const QString& path, std::stop_token stop, const std::function<void(double)>& progress)
{
    LoadResult out;
    const QFileInfo info(path);
    if (!info.exists()) {
        out.error = fileError(path, "no such file");
        return out;
    }
    if (info.isDir()) {
        out.error = fileError(path, "is a folder, not a text file");
        return out;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        out.error = fileError(path, "cannot be read: " + file.errorString().toStdString());
        return out;
    }
    const qint64 size = file.size();
    if (const std::size_t limit = text::maxTextBytes(); static_cast<std::uint64_t>(size) > limit) {
        out.error = fileError(path, "is " + formatBytes(static_cast<double>(size), {ByteUnits::Binary, 4}) + ", larger than the "
                                        + formatBytes(static_cast<double>(limit), {ByteUnits::Binary, 4})
                                        + " the program reads in one piece");
        return out;
    }
    auto bytes = std::make_shared<std::string>();
    bytes->reserve(static_cast<std::size_t>(size));
    std::string chunk(static_cast<std::size_t>(kChunk), '\0');
    for (;;) {
        if (stop.stop_requested()) {
            out.cancelled = true;
            out.error = fileError(path, "opening cancelled");
            return out;
        }
        const qint64 n = file.read(chunk.data(), kChunk);
        if (n < 0) {
            out.error = fileError(path, "read error: " + file.errorString().toStdString());
            return out;
        }
        if (n == 0)
            break;
        bytes->append(chunk.data(), static_cast<std::size_t>(n));
        if (size > 0 && progress)
            progress(std::min(1.0, static_cast<double>(bytes->size()) / static_cast<double>(size)));
    }
    if (bytes->empty()) {
        out.error = fileError(path, "the file is empty");
        return out;
    }
    LoadedFile loaded;
    loaded.path = path;
    loaded.invalidUtf8 = text::firstInvalidUtf8(*bytes, path.toStdString());
    loaded.nulBytes = text::countText(*bytes).nulBytes;
    loaded.hasCarriageReturn = bytes->find('\r') != std::string::npos;
    loaded.bytes = std::move(bytes);
    out.file = std::move(loaded);
    return out;
}

FileLoader::FileLoader(QObject* parent)
    : QObject(parent)
    , m_job(new BackgroundJob(this))
{
    connect(m_job, &BackgroundJob::progressed, this, &FileLoader::progressed);
    connect(m_job, &BackgroundJob::cancelled, this, [this] { emit cancelled(m_path); });
    connect(m_job, &BackgroundJob::finished, this, [this](const std::any& r) {
        const auto& result = std::any_cast<const LoadResult&>(r);
        if (result.file)
            emit loaded(*result.file);
        else if (result.cancelled)
            emit cancelled(m_path);
        else
            emit failed(result.error.value_or(makeError("unknown error")));
    });
}

FileLoader::~FileLoader() = default; // the job stops and waits for its work

void FileLoader::load(const QString& path)
{
    m_path = path;
    m_job->schedule([path](const Progress& progress) -> std::any {
        return loadTextFile(path, progress.stop, [&progress](double f) { progress(f); });
    });
}

void FileLoader::cancel()
{
    m_job->cancel();
}

bool FileLoader::isBusy() const
{
    return m_job->isBusy();
}

} // namespace tw::ui
