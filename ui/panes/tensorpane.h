#pragma once
// Stage 2, "Tensors": the document's scenario drawn as a Transformer whose edges carry the live
// tensor shapes and bytes, a sentence that ties them to the text's tokens, the model form, the
// parameter and memory charts and the figure table with each figure's derivation chain. The pane
// wires widgets to the Document; every number comes from the Derivation.

#include "document/scenariofield.h"
#include "panes/stagepane.h"

#include "base/figure.h"
#include "base/units.h"

#include <QWidget>

#include <memory>

class QLabel;
class QTabWidget;
class QTableView;
class QTextBrowser;

namespace tw::scenario {
struct Derivation;
}

namespace tw::ui {

class Document;
class FigureTableModel;
class KernelChart;
class MessageBar;
class ModelCharts;
class ModelForm;
class TransformerView;

class TensorPane : public QWidget, public StagePane {
    Q_OBJECT
public:
    explicit TensorPane(Document* document, QWidget* parent = nullptr);

    // Shows a tensor's details (false when the derivation has no tensor of that name).
    bool showTensor(const QString& name);
    // Selects a figure in the table and shows its derivation chain (false when unknown).
    bool showFigure(const QString& id) override;
    [[nodiscard]] QWidget* drawing() const override; // the transformer

    [[nodiscard]] Document* document() const { return m_document; }
    [[nodiscard]] TransformerView* diagram() const { return m_diagram; }
    [[nodiscard]] ModelForm* form() const { return m_form; }
    [[nodiscard]] ModelCharts* charts() const { return m_charts; }
    // The "Kernels" tab: one layer's time by kernel, and the step's MFU / HFU as figure links.
    [[nodiscard]] KernelChart* kernelChart() const { return m_kernels; }
    [[nodiscard]] QLabel* kernelSummary() const { return m_kernelSummary; }
    [[nodiscard]] QLabel* caption() const { return m_caption; }
    [[nodiscard]] QTextBrowser* details() const { return m_details; }
    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
    [[nodiscard]] QTableView* figureTable() const { return m_table; }
    [[nodiscard]] FigureTableModel* figureModel() const { return m_figures; }
    [[nodiscard]] QTextBrowser* chain() const { return m_chain; }
    [[nodiscard]] MessageBar* messageBar() const { return m_message; }
    [[nodiscard]] QWidget* followChip() const { return m_followChip; }
    // The followed token's caption on the diagram ("token #12 “·che” = row (b, t) of x [B,T,d] …"),
    // as plain text; empty when no token is followed.
    [[nodiscard]] QString followCaptionText() const;
    // The figures the chains walk: the derivation's and the followed token's ("trace.*").
    [[nodiscard]] const FigureSet& chainFigures() const { return m_chainFigures; }

protected:
    void showEvent(QShowEvent* event) override;

private:
    void updateFollow();
    void applyUnits();
    [[nodiscard]] DisplayUnits units() const;
    void onEdited(Field field, const FieldValue& value);
    void onDerived(const std::shared_ptr<const scenario::Derivation>& derivation);
    void onProblems();
    void updateCaption();
    void updateKernels();

    Document* m_document;
    std::shared_ptr<const scenario::Derivation> m_derivation;
    ModelForm* m_form = nullptr;
    TransformerView* m_diagram = nullptr;
    ModelCharts* m_charts = nullptr;
    KernelChart* m_kernels = nullptr;
    QLabel* m_kernelSummary = nullptr;
    QLabel* m_caption = nullptr;
    QLabel* m_status = nullptr;
    MessageBar* m_message = nullptr;
    QTextBrowser* m_details = nullptr;
    QTabWidget* m_tabs = nullptr;
    QTableView* m_table = nullptr;
    FigureTableModel* m_figures = nullptr;
    QTextBrowser* m_chain = nullptr;
    QString m_tensor;
    QWidget* m_followChip = nullptr;
    FigureSet m_chainFigures;
    bool m_followStale = true;
};

} // namespace tw::ui
