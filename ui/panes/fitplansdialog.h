#pragma once
// Stage 3's "Find plans that fit…": asks the document's results for core's plan search
// (scenario/fitsearch.h, off the GUI thread) on the document's scenario, shows progress and the plans as they come (the coarse ranking first, then
// each simulated one), can be cancelled, and applies the chosen plan to the document as one undoable
// edit (degrees, sharding, schedule, micro-batch and recomputation together).

#include "scenario/fitsearch.h"

#include <QDialog>

#include <memory>

class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace tw::ui {

class Document;

class FitPlansDialog : public QDialog {
    Q_OBJECT
public:
    explicit FitPlansDialog(Document* document, QWidget* parent = nullptr);
    ~FitPlansDialog() override;

    // Starts (or restarts) the search on the document's scenario.
    void startSearch(const scenario::FitOptions& options = {});
    void cancelSearch();
    // Applies plans()[row] to the document (one undo step); false when there is no such row.
    bool applyPlan(int row);
    [[nodiscard]] bool isSearching() const;
    // Processes events until the search is done; false on timeout (tests).
    bool waitUntilIdle(int timeoutMs = 60000);

    [[nodiscard]] const std::vector<scenario::FitPlan>& plans() const { return m_plans; }
    [[nodiscard]] QTableWidget* table() const { return m_table; }
    [[nodiscard]] QLabel* status() const { return m_status; }
    [[nodiscard]] QProgressBar* progressBar() const { return m_progress; }
    [[nodiscard]] QPushButton* applyButton() const { return m_apply; }
    [[nodiscard]] QPushButton* cancelButton() const { return m_cancel; }
    [[nodiscard]] int partialUpdates() const { return m_partials; }

private:
    void showPlans(const scenario::FitSearch& search, bool done);

    Document* m_document;
    scenario::Scenario m_searched; // the scenario the listed plans belong to
    std::vector<scenario::FitPlan> m_plans;
    QLabel* m_status = nullptr;
    QProgressBar* m_progress = nullptr;
    QTableWidget* m_table = nullptr;
    QPushButton* m_apply = nullptr;
    QPushButton* m_cancel = nullptr;
    int m_partials = 0;
    bool m_searching = false;             // this dialog's search runs (the results' fit job is shared)
    std::uint64_t m_searchedGeneration = 0; // the document generation it searches
};

} // namespace tw::ui
