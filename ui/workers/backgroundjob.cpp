#include "backgroundjob.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFutureWatcher>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <memory>

namespace tw::ui {

QThreadPool* releasePool()
{
    static QThreadPool pool; // its destructor, at exit, waits for a release still running
    static const bool configured = [] {
        pool.setMaxThreadCount(1);
        pool.setThreadPriority(QThread::IdlePriority);
        return true;
    }();
    (void)configured;
    return &pool;
}

BackgroundJob::BackgroundJob(QObject* parent)
    : QObject(parent)
{
    m_debounce.setSingleShot(true);
    connect(&m_debounce, &QTimer::timeout, this, &BackgroundJob::start);
}

BackgroundJob::~BackgroundJob()
{
    m_stop.request_stop();
    for (auto* watcher : findChildren<QFutureWatcher<std::any>*>())
        watcher->waitForFinished();
}

void BackgroundJob::schedule(Work work, int delayMs)
{
    m_pending = std::move(work);
    ++m_generation; // anything running is stale from now on
    m_stop.request_stop();
    m_debounce.start(delayMs);
}

void BackgroundJob::cancel()
{
    const bool wasBusy = isBusy();
    m_debounce.stop();
    m_pending.reset();
    ++m_generation;
    m_stop.request_stop();
    m_watcher = nullptr; // still finishing, but no longer our work; it deletes itself
    if (wasBusy)
        emit cancelled();
}

bool BackgroundJob::isBusy() const
{
    // Busy until the latest work's finished() has been delivered: the future stops running on its pool
    // thread before the watcher's finished event reaches the GUI thread, so isRunning() alone would
    // say idle while the result is still on its way (waitUntilIdle then returned without it).
    return m_pending.has_value() || m_watcher != nullptr;
}

bool BackgroundJob::waitUntilIdle(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (isBusy() && !deadline.hasExpired())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QCoreApplication::processEvents(); // the finished() of the last job
    return !isBusy();
}

void BackgroundJob::start()
{
    if (!m_pending)
        return;
    Work work = std::move(*m_pending);
    m_pending.reset();
    m_stop = std::stop_source();
    const std::uint64_t generation = m_generation;

    // Progress arrives on a pool thread: throttled to whole percents, queued to the GUI thread.
    auto lastPercent = std::make_shared<std::atomic<int>>(-1);
    Progress progress;
    progress.stop = m_stop.get_token();
    progress.report = [this, generation, lastPercent](double f) {
        const int percent = static_cast<int>(f * 100.0);
        if (lastPercent->exchange(percent) == percent)
            return;
        QMetaObject::invokeMethod(this, [this, generation, f] {
            if (m_generation == generation)
                emit progressed(f);
        }, Qt::QueuedConnection);
    };

    auto* watcher = new QFutureWatcher<std::any>(this);
    m_watcher = watcher;
    connect(watcher, &QFutureWatcher<std::any>::finished, this, [this, watcher, generation] {
        std::any result = watcher->result();
        if (m_watcher == watcher)
            m_watcher = nullptr;
        watcher->deleteLater();
        if (generation != m_generation)
            return; // superseded or cancelled
        emit finished(result);
    });
    emit started();
    watcher->setFuture(QtConcurrent::run([work = std::move(work), progress] { return work(progress); }));
}

} // namespace tw::ui
