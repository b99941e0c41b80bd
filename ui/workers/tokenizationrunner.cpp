#include "tokenizationrunner.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>

namespace tw::ui {

TokenizeResult runTokenization(const TokenizeRequest& request, const Progress& progress)
{
    TokenizeResult out;
    out.text = request.text;
    out.model = request.model;
    out.mergeLimit = request.mergeLimit;
    if (!request.text || !request.model) {
        out.error = makeError("nothing to replay: no text or no tokenizer");
        return out;
    }
    text::Encoder encoder(*request.model);
    encoder.setMergeLimit(request.mergeLimit);
    auto spans = encoder.encodeWithSpans(*request.text, progress);
    if (!spans || progress.stopRequested()) {
        out.cancelled = progress.stopRequested();
        out.error = spans ? makeError("cancelled") : spans.error();
        return out;
    }
    out.spans = std::make_shared<const std::vector<text::TokenSpan>>(std::move(spans).value());
    progress(1.0);
    return out;
}

TokenizationRunner::TokenizationRunner(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<tw::ui::TokenizeResult>();
    m_debounce.setSingleShot(true);
    connect(&m_debounce, &QTimer::timeout, this, &TokenizationRunner::start);
}

TokenizationRunner::~TokenizationRunner()
{
    m_stop.request_stop();
    // Jobs report to this object: wait for every one still running (each was asked to stop).
    for (auto* watcher : findChildren<QFutureWatcher<TokenizeResult>*>())
        watcher->waitForFinished();
}

void TokenizationRunner::schedule(TokenizeRequest request, int delayMs)
{
    m_pending = std::move(request);
    ++m_generation; // anything still running is stale from now on
    m_stop.request_stop();
    m_debounce.start(delayMs);
}

void TokenizationRunner::cancel()
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

bool TokenizationRunner::isBusy() const
{
    return m_pending.has_value() || (m_watcher && m_watcher->isRunning());
}

void TokenizationRunner::start()
{
    if (!m_pending)
        return;
    TokenizeRequest request = std::move(*m_pending);
    m_pending.reset();
    m_stop = std::stop_source();
    const std::uint64_t generation = m_generation;

    // Progress arrives on a pool thread: throttle to whole percents and queue it to the GUI.
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

    auto* watcher = new QFutureWatcher<TokenizeResult>(this);
    m_watcher = watcher;
    connect(watcher, &QFutureWatcher<TokenizeResult>::finished, this, [this, watcher, generation] {
        TokenizeResult result = watcher->result();
        result.generation = generation;
        if (m_watcher == watcher)
            m_watcher = nullptr;
        watcher->deleteLater();
        if (generation != m_generation)
            return; // superseded or cancelled: drop it
        emit finished(result);
    });
    emit started();
    watcher->setFuture(QtConcurrent::run([request = std::move(request), progress] {
        return runTokenization(request, progress);
    }));
}

} // namespace tw::ui
