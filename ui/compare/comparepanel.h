#pragma once
// Compare: scenario A pinned beside scenario B, the document as it is now (issue 8: "pin the current
// scenario as A, change things, and see B beside A"). "Pin as A" keeps the document's scenario, its
// derivation and its simulated step; B follows the document live (Document::derived). For the current
// stage (or all of them) a table of core's key figures (scenario::compare): A | B | Δ | Δ% | B is,
// the differences highlighted (better bluish green, worse vermillion, with ▲▼ and the word, so never
// by colour alone), every value's formula as its tooltip; and three grouped-bar charts, A beside B:
// bytes per GPU per step by strategy, where the step time goes, memory per GPU by kind, in the
// viewer's units. "Swap" makes A the document's scenario (one undoable step) and pins B; "Clear"
// forgets A. Nothing is computed here: the figures, their differences and directions come from core.
//
// Stage 5 needs a simulated step, which the document's results own: B's is the document's own step
// (asked for after every derivation, only while the panel is visible and something is pinned; shared
// with stage 5), A's a pinned step (Results::requestPinnedStep), simulated once when it is pinned unless
// the document's step of the same derivation is already there.

#include "base/units.h"
#include "stage.h"
#include "scenario/compare.h"
#include "scenario/scenario.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTableView;

namespace tw::scenario {
struct Derivation;
}

namespace tw::ui {

class Document;
struct StepResult;

// The comparison as a table, one key figure per row: Figure | A | B | Δ | Δ% | B is. Rows of one
// stage, or of every stage (the vertical header then names the stage). A side whose step is still
// being simulated reads "simulating…", never "only in A".
class CompareTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { FigureColumn, AColumn, BColumn, DeltaColumn, RelativeColumn, VerdictColumn, ColumnCount };
    static constexpr int FigureIdRole = Qt::UserRole + 1;
    static constexpr int VerdictRole = Qt::UserRole + 2;  // int(scenario::Verdict)
    static constexpr int PresenceRole = Qt::UserRole + 3; // int(scenario::Presence)

    explicit CompareTableModel(QObject* parent = nullptr);

    // stage: 1…5, or 0 for every stage. pendingA/B: that side's stage 5 is being simulated.
    // `stage`: the rows of that stage only; nullopt: every stage's.
    void setComparison(const scenario::Comparison* comparison, std::optional<Stage> stage, bool pendingA, bool pendingB,
                       const QString& noteA, const QString& noteB);
    void setDisplayUnits(DisplayUnits units);
    [[nodiscard]] const scenario::FigureDelta* rowAt(int row) const;
    // The row of a figure id (-1 when not shown).
    [[nodiscard]] int rowOf(const QString& id) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    [[nodiscard]] bool pendingSide(const scenario::FigureDelta& row, bool sideA) const;

    std::vector<scenario::FigureDelta> m_rows;
    std::optional<Stage> m_stage; // nullopt: all stages
    bool m_pendingA = false, m_pendingB = false;
    QString m_noteA, m_noteB;
    DisplayUnits m_units;
};

class ComparePanel : public QWidget {
    Q_OBJECT
public:
    enum class Chart { Bytes, Step, Memory };

    explicit ComparePanel(Document* document, QWidget* parent = nullptr);
    ~ComparePanel() override;

    // The stage whose key figures the table shows: 0 = stage 1 Text … 4 = stage 5 Wire (as
    // MainWindow::setStage); out of range is clamped.
    void setStage(int stage);
    [[nodiscard]] int stage() const { return m_stage; }
    void setAllStages(bool all);
    [[nodiscard]] bool allStages() const;

    // Pins the document's scenario as A (when the document is still deriving, as soon as it is done).
    void pin();
    // A becomes the document's scenario (one undoable step, "Swap A and B"); the document's becomes A.
    void swap();
    // Forgets A.
    void clear();
    [[nodiscard]] bool isPinned() const { return m_pinned; }
    // The height the panel needs with nothing pinned (its bar and the one-line hint) at its width.
    [[nodiscard]] int compactHeight() const;
    [[nodiscard]] QDateTime pinnedAt() const { return m_pinnedAt; }
    [[nodiscard]] const scenario::Scenario& pinnedScenario() const { return m_aScenario; }

    // The last comparison (none until something is pinned) and its two sides.
    [[nodiscard]] const std::optional<scenario::Comparison>& comparison() const { return m_comparison; }
    [[nodiscard]] const scenario::KeyFigures& sideA() const { return m_a; }
    [[nodiscard]] const scenario::KeyFigures& sideB() const { return m_b; }
    [[nodiscard]] bool isPendingA() const { return m_aPending; }
    [[nodiscard]] bool isPendingB() const { return m_bPending; }
    // Processes events until the document, A's and B's simulations are idle; false on timeout.
    bool waitUntilIdle(int timeoutMs = 60000);

    [[nodiscard]] QPushButton* pinButton() const { return m_pin; }
    [[nodiscard]] QPushButton* swapButton() const { return m_swap; }
    [[nodiscard]] QPushButton* clearButton() const { return m_clear; }
    [[nodiscard]] QPushButton* cancelButton() const { return m_cancel; }
    [[nodiscard]] QCheckBox* allStagesBox() const { return m_all; }
    [[nodiscard]] QLabel* hintLabel() const { return m_hint; }
    [[nodiscard]] QLabel* sidesLabel() const { return m_sides; }
    [[nodiscard]] QLabel* statusLabel() const { return m_status; }
    [[nodiscard]] QTableView* table() const { return m_table; }
    [[nodiscard]] CompareTableModel* model() const { return m_model; }
    [[nodiscard]] QCustomPlot* plot(Chart chart) const;
    // What a bar of `chart` is drawn at = value in base units / chartScale (GB, ms … on the axis).
    [[nodiscard]] double chartScale(Chart chart) const;
    [[nodiscard]] QStringList chartCategories(Chart chart) const;

signals:
    // Something was pinned, or A was forgotten: the dock grows to show the comparison or shrinks to the hint.
    void pinnedChanged(bool pinned);

protected:
    void showEvent(QShowEvent* event) override;
    void hideEvent(QHideEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void onDerived();
    void pinNow();
    void requestB();
    void applyA(const std::shared_ptr<const StepResult>& step);
    void applyB(const std::shared_ptr<const StepResult>& step);
    void refresh();
    void fillTable();
    void fillCharts();
    void fillChart(Chart chart, const scenario::Series& series);
    void updateSides();
    void showPlotTip(Chart chart, QMouseEvent* event);
    void fitTicks(Chart chart);
    [[nodiscard]] std::string describe(const scenario::Derivation& d) const;

    Document* m_document;
    int m_stage = 0;
    // A
    bool m_pinned = false;
    bool m_shownPinned = false; // as last announced by pinnedChanged
    bool m_pinRequested = false;
    scenario::Scenario m_aScenario;
    std::shared_ptr<const scenario::Derivation> m_aDerivation;
    scenario::KeyFigures m_a;
    bool m_aPending = false;
    QDateTime m_pinnedAt;
    std::string m_aDescription;
    // B
    std::shared_ptr<const scenario::Derivation> m_bDerivation;
    scenario::KeyFigures m_b;
    bool m_bPending = false;
    bool m_bStale = false;
    bool m_bCancelled = false;
    std::optional<scenario::Comparison> m_comparison;
    double m_scale[3] = {1, 1, 1};
    QStringList m_categories[3];

    QPushButton* m_pin = nullptr;
    QPushButton* m_swap = nullptr;
    QPushButton* m_clear = nullptr;
    QPushButton* m_cancel = nullptr;
    QCheckBox* m_all = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_sides = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_hint = nullptr;
    QStackedWidget* m_pages = nullptr;
    QSplitter* m_split = nullptr;
    bool m_splitMoved = false; // the user dragged the splitter: keep their sizes
    QTableView* m_table = nullptr;
    CompareTableModel* m_model = nullptr;
    QCustomPlot* m_plots[3] = {nullptr, nullptr, nullptr};
};

} // namespace tw::ui
