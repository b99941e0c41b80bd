#pragma once
// One kind of long work run off the GUI thread, latest request wins: schedule() debounces, starts
// the work on the thread pool with a stop token and a progress callback, stops the job it
// supersedes and drops stale results by generation. The work returns any value (std::any); the
// owner knows its type. Progress and results arrive on the GUI thread.

#include "base/progress.h"

#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <any>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>

template <class T>
class QFutureWatcher;

namespace tw::ui {

// The pool releaseLater frees on: one thread at idle priority (it runs when the cores are otherwise idle).
QThreadPool* releasePool();

// Drops `values` on releasePool()'s thread: when they hold the last references to a large result (a
// fabric of a million links and its routes) it is freed there, not on the GUI thread (90 ms at 98,304
// GPUs). At idle priority, because freeing gigabytes next to the GUI thread slowed it: the chart replot
// that follows a new 98,304-GPU step took 9 ms alone and 40–75 ms while the previous step was freed on
// a normal pool thread.
template <typename... T>
void releaseLater(T... values)
{
    releasePool()->start([... kept = std::move(values)]() mutable { ((void)kept, ...); });
}

class BackgroundJob : public QObject {
    Q_OBJECT
public:
    using Work = std::function<std::any(const Progress& progress)>;

    explicit BackgroundJob(QObject* parent = nullptr);
    ~BackgroundJob() override; // stops the running work and waits for it

    // Runs `work` after delayMs; a newer request replaces a pending or running one (stopped).
    void schedule(Work work, int delayMs = 0);
    // Stops the running work and forgets the pending one (emits cancelled() when there was one).
    void cancel();
    [[nodiscard]] bool isBusy() const;
    [[nodiscard]] std::uint64_t generation() const { return m_generation; }
    // Processes events until idle; false on timeout (tests).
    bool waitUntilIdle(int timeoutMs = 60000);

signals:
    void started();
    void progressed(double fraction);
    void finished(const std::any& result); // only the latest request's
    void cancelled();

private:
    void start();

    QTimer m_debounce;
    std::optional<Work> m_pending;
    std::stop_source m_stop;
    std::uint64_t m_generation = 0;
    QFutureWatcher<std::any>* m_watcher = nullptr;
};

} // namespace tw::ui
