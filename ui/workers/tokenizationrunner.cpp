#include "tokenizationrunner.h"

#include "backgroundjob.h"

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
    , m_job(new BackgroundJob(this))
{
    qRegisterMetaType<tw::ui::TokenizeResult>();
    connect(m_job, &BackgroundJob::started, this, &TokenizationRunner::started);
    connect(m_job, &BackgroundJob::progressed, this, &TokenizationRunner::progressed);
    connect(m_job, &BackgroundJob::cancelled, this, &TokenizationRunner::cancelled);
    connect(m_job, &BackgroundJob::finished, this, [this](const std::any& r) {
        TokenizeResult result = std::any_cast<TokenizeResult>(r);
        result.generation = m_job->generation();
        emit finished(result);
    });
}

TokenizationRunner::~TokenizationRunner() = default; // the job stops and waits for its work

void TokenizationRunner::schedule(TokenizeRequest request, int delayMs)
{
    m_job->schedule([request = std::move(request)](const Progress& progress) -> std::any {
        return runTokenization(request, progress);
    }, delayMs);
}

void TokenizationRunner::cancel()
{
    m_job->cancel();
}

bool TokenizationRunner::isBusy() const
{
    return m_job->isBusy();
}

std::uint64_t TokenizationRunner::generation() const
{
    return m_job->generation();
}

} // namespace tw::ui
