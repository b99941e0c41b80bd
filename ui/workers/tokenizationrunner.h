#pragma once
// Runs the merge replay off the GUI thread: the document's text encoded with only the first k merges
// of the document's tokenizer. One job at a time; the superseded job is stopped and stale results
// are dropped by generation. (The tokens of the scenario itself come from the document's
// Derivation: this runner never picks a text or a tokenizer of its own.)

#include "text/bpe.h"

#include <QObject>

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace tw::ui {

class BackgroundJob;

// One replay: shared pointers into the document's derivation, nothing copied.
struct TokenizeRequest {
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const text::BpeModel> model;
    std::size_t mergeLimit = SIZE_MAX; // SIZE_MAX = all merges
};

// What a job produced. error is set when it failed or was cancelled.
struct TokenizeResult {
    std::uint64_t generation = 0;
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const text::BpeModel> model;
    std::size_t mergeLimit = SIZE_MAX;
    std::shared_ptr<const std::vector<text::TokenSpan>> spans;
    std::optional<Error> error;
    bool cancelled = false;
};

// The work itself (runs on a pool thread); pure apart from reporting progress.
[[nodiscard]] TokenizeResult runTokenization(const TokenizeRequest& request, const Progress& progress);

// Debounces requests, runs the latest on the thread pool, cancels the one it supersedes (a
// BackgroundJob whose work is runTokenization).
class TokenizationRunner : public QObject {
    Q_OBJECT
public:
    explicit TokenizationRunner(QObject* parent = nullptr);
    ~TokenizationRunner() override;

    // Runs request after the debounce delay; a newer request replaces a pending or running one.
    void schedule(TokenizeRequest request, int delayMs = 0);
    // Stops the running job and forgets the pending one.
    void cancel();
    [[nodiscard]] bool isBusy() const;
    [[nodiscard]] std::uint64_t generation() const;

signals:
    void started();
    void progressed(double fraction);
    void finished(const tw::ui::TokenizeResult& result);
    void cancelled();

private:
    BackgroundJob* m_job = nullptr;
};

} // namespace tw::ui

Q_DECLARE_METATYPE(tw::ui::TokenizeResult)
