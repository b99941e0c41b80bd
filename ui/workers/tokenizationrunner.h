#pragma once
// Runs core's tokenizer, trainer and dataset figures off the GUI thread: one job at a time, the
// superseded job is stopped, stale results are dropped by generation.

#include "text/bpe.h"
#include "text/bpetrainer.h"
#include "text/dataset.h"

#include <QObject>
#include <QTimer>

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

template <class T>
class QFutureWatcher;

namespace tw::ui {

enum class TokenizerKind { Gpt2, Trained };

// Everything one tokenization needs; shared pointers let a job reuse what has not changed.
struct TokenizeRequest {
    std::shared_ptr<const std::string> text;
    TokenizerKind kind = TokenizerKind::Gpt2;
    std::size_t vocabSize = 1024;                   // trained tokenizer only
    std::size_t mergeLimit = SIZE_MAX;              // merge replay; SIZE_MAX = all merges
    text::TrainingShape shape;
    std::shared_ptr<const text::TrainedBpe> trained; // reuse when text and V are unchanged
    std::shared_ptr<const std::vector<text::TokenSpan>> spans; // reuse when only the shape changed
};

// What a job produced. error is set when it failed or was cancelled.
struct TokenizeResult {
    std::uint64_t generation = 0;
    std::shared_ptr<const std::string> text;
    TokenizerKind kind = TokenizerKind::Gpt2;
    std::size_t mergeLimit = SIZE_MAX;
    std::optional<text::BpeModel> model;
    std::shared_ptr<const text::TrainedBpe> trained;
    std::shared_ptr<const std::vector<text::TokenSpan>> spans;
    std::shared_ptr<const text::DatasetStats> stats;
    std::optional<Error> error;
    bool cancelled = false;
};

// The work itself (runs on a pool thread); pure apart from reporting progress.
[[nodiscard]] TokenizeResult runTokenization(const TokenizeRequest& request, const Progress& progress);

// Debounces requests, runs the latest on the thread pool, cancels the one it supersedes.
class TokenizationRunner : public QObject {
    Q_OBJECT
public:
    explicit TokenizationRunner(QObject* parent = nullptr);
    ~TokenizationRunner() override;

    // Runs request after the debounce delay; a newer request replaces a pending or running one.
    void schedule(TokenizeRequest request, int delayMs = 150);
    // Stops the running job and forgets the pending one.
    void cancel();
    [[nodiscard]] bool isBusy() const;
    [[nodiscard]] std::uint64_t generation() const { return m_generation; }

signals:
    void started();
    void progressed(double fraction);
    void finished(const tw::ui::TokenizeResult& result);
    void cancelled();

private:
    void start();

    QTimer m_debounce;
    std::optional<TokenizeRequest> m_pending;
    std::stop_source m_stop;
    std::uint64_t m_generation = 0;
    QFutureWatcher<TokenizeResult>* m_watcher = nullptr;
};

} // namespace tw::ui

Q_DECLARE_METATYPE(tw::ui::TokenizeResult)
