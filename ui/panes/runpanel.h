#pragma once
// Stage 5's "Run" tab (issue #40): the whole training run of the simulated step — its inputs (tokens to
// train, price per GPU-hour, PUE, restart time, checkpoint storage), the "run.*" figures with their
// chains back through every stage, and goodput against the cluster size (1,000 to 100,000 GPUs) with each
// size's checkpoint interval.
//
// A view: it computes scenario::estimateRun from the document's run settings and the current step
// (Results::step()); nothing is simulated for it but the batch ramp's phases (run.batch_ramp), each a step of
// its own (Results::requestRamp), while the tab is shown. An edit of the run block keeps every result current
// (Document::runChanged), so the run follows a typed count at once; any other edit clears the run until
// that scenario's step arrives (never a previous scenario's run beside the current inputs).

#include "base/figure.h"
#include "scenario/run.h"

#include <QWidget>

#include <optional>

class QCPTextElement;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTextBrowser;

namespace tw::ui {

class Document;
class FigureTableModel;

class RunPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunPanel(Document* document, QWidget* parent = nullptr);
    ~RunPanel() override;

    [[nodiscard]] QLineEdit* tokensEdit() const { return m_tokens; }
    [[nodiscard]] QLabel* tokensProblem() const { return m_tokensProblem; }
    [[nodiscard]] QDoubleSpinBox* priceBox() const { return m_price; }
    [[nodiscard]] QDoubleSpinBox* pueBox() const { return m_pue; }
    [[nodiscard]] QDoubleSpinBox* restartBox() const { return m_restart; }
    [[nodiscard]] QDoubleSpinBox* storageBox() const { return m_storage; }
    [[nodiscard]] QCustomPlot* goodputPlot() const { return m_plot; }
    [[nodiscard]] QTableView* figureTable() const { return m_table; }
    [[nodiscard]] QLabel* statusLabel() const { return m_status; }
    // The run shown (nullopt: none, the status says why) and every figure its chains walk through.
    [[nodiscard]] const std::optional<scenario::RunEstimate>& run() const { return m_run; }
    [[nodiscard]] const FigureSet& allFigures() const { return m_all; }
    [[nodiscard]] QString chartTitle() const;
    // Shows a figure's chain (false: no such figure in the run).
    bool showFigure(const QString& id);

protected:
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    QWidget* buildInputs();
    void reserveStatusLines();
    static QString rampWaitText(int phases, double fraction);
    void refresh();                        // from the document's run settings and the current step
    void clearRun(const QString& why);
    void drawGoodput(const scenario::RunEstimate& run, double gpusPerNode);
    void setInputs(const scenario::RunSettings& run);
    void commitTokens();
    void applyUnits();

    Document* m_document;
    QLineEdit* m_tokens = nullptr;
    QLabel* m_tokensProblem = nullptr;
    QDoubleSpinBox* m_price = nullptr;
    QDoubleSpinBox* m_pue = nullptr;
    QDoubleSpinBox* m_restart = nullptr;
    QDoubleSpinBox* m_storage = nullptr;
    QLabel* m_status = nullptr;
    FigureTableModel* m_figures = nullptr;
    QTableView* m_table = nullptr;
    QTextBrowser* m_chain = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    std::optional<scenario::RunEstimate> m_run;
    FigureSet m_all;
};

} // namespace tw::ui
