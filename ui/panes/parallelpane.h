#pragma once
// Stage 3, "GPUs": the cluster and the parallel plan. The GPUs drawn as cards in their nodes (drag
// one onto another to swap their places), the degrees, sharding and pipeline schedule as a form,
// the communication signature, every collective call of one optimizer step, the pipeline timeline
// with its bubbles and the layer-partition editor, the stage's figures with their derivation
// chains, and where a chosen token of the text is trained. Every edit is a Document command; every
// number comes from the Derivation (core's stage 3).

#include "base/figure.h"
#include "base/units.h"
#include "parallel/plan.h"

#include <QHash>
#include <QStringList>
#include "panes/stagepane.h"

#include <QWidget>

#include <cstdint>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTextBrowser;

namespace tw::scenario {
struct Derivation;
}

namespace tw::ui {

class CallListModel;
class Document;
class FitPlansDialog;
class FigureTableModel;
class MemoryChart;
class MeshView;
class PartitionEditor;
class PipelineChart;
class SignatureModel;

class ParallelPane : public QWidget, public StagePane {
    Q_OBJECT
public:
    explicit ParallelPane(Document* document, QWidget* parent = nullptr);

    // Selects a figure in the table and shows its derivation chain (false when unknown).
    bool showFigure(const QString& id) override;
    [[nodiscard]] QWidget* drawing() const override; // the mesh
    // Follows token `index` of the text to its replica, micro-batch and GPUs: the document's followed
    // token becomes `index` (false when out of range).
    bool followToken(std::uint64_t index);
    // The follow-token spin box (-1: "none"); it shows and sets the document's followed token.
    [[nodiscard]] QSpinBox* followTokenBox() const { return m_token; }
    [[nodiscard]] QWidget* followChip() const { return m_followChip; }
    // The figures the chains walk: the derivation's and the followed token's ("trace.*").
    [[nodiscard]] const FigureSet& chainFigures() const { return m_chainFigures; }

    [[nodiscard]] Document* document() const { return m_document; }
    [[nodiscard]] MeshView* meshView() const { return m_mesh; }
    [[nodiscard]] SignatureModel* signatureModel() const { return m_signature; }
    [[nodiscard]] CallListModel* callModel() const { return m_calls; }
    [[nodiscard]] PipelineChart* pipelineChart() const { return m_pipeline; }
    [[nodiscard]] MemoryChart* memoryChart() const { return m_memory; }
    [[nodiscard]] QComboBox* colorByBox() const { return m_colorBy; }
    [[nodiscard]] QPushButton* findPlansButton() const { return m_findPlans; }
    // "Find plans that fit…": opens the dialog and starts the search on the document's scenario.
    FitPlansDialog* openFitPlans();
    [[nodiscard]] PartitionEditor* partitionEditor() const { return m_partition; }
    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
    [[nodiscard]] QSpinBox* degreeBox(int strategy) const { return m_degrees[strategy]; } // parallel::Strategy order
    [[nodiscard]] QSpinBox* nodesBox() const { return m_nodes; }
    [[nodiscard]] QSpinBox* gpusPerNodeBox() const { return m_gpusPerNode; }
    [[nodiscard]] QComboBox* shardingBox() const { return m_sharding; }
    [[nodiscard]] QComboBox* scheduleBox() const { return m_schedule; }
    [[nodiscard]] QDoubleSpinBox* layerTimeBox() const { return m_layerTime; }
    [[nodiscard]] QLabel* caption() const { return m_caption; }
    [[nodiscard]] QLabel* planProblems() const { return m_problems; }
    [[nodiscard]] QWidget* planOffers() const { return m_offers; } // the "Use … = n" buttons
    [[nodiscard]] QLabel* tokenLine() const { return m_tokenLine; }
    [[nodiscard]] QTextBrowser* chain() const { return m_chain; }
    [[nodiscard]] FigureTableModel* figureModel() const { return m_figures; }
    // The problems shown next to a form field (its JSON path, "parallel.tp"); empty when none.
    [[nodiscard]] QString problemAt(const QString& jsonPath) const;

protected:
    void showEvent(QShowEvent* event) override;

private:
    void showMesh(); // draws m_meshPending's mesh
    void buildForm(QWidget* form);
    void onDerived(const std::shared_ptr<const scenario::Derivation>& derivation);
    void showScenario();
    void showProblems();
    void showOffers(const QHash<QString, QStringList>& problemsByPath);
    void updateCaption();
    void updateToken();
    void applyUnits();
    void showMemory();
    [[nodiscard]] DisplayUnits units() const;

    Document* m_document;
    std::shared_ptr<const scenario::Derivation> m_derivation;
    bool m_updating = false; // programmatic widget updates emit no edits
    bool m_colorChosen = false; // the user picked a colouring: keep it
    QSpinBox* m_nodes = nullptr;
    QSpinBox* m_gpusPerNode = nullptr;
    QSpinBox* m_degrees[parallel::kStrategyCount] = {nullptr, nullptr, nullptr, nullptr};
    QLabel* m_product = nullptr;
    QComboBox* m_sharding = nullptr;
    QSpinBox* m_shardGroup = nullptr;
    QCheckBox* m_sequenceParallel = nullptr;
    QComboBox* m_schedule = nullptr;
    QSpinBox* m_virtualStages = nullptr;
    QDoubleSpinBox* m_efficiency = nullptr;
    QDoubleSpinBox* m_layerTime = nullptr; // one forward time per layer for every layer (ms); 0 = the compute model
    QComboBox* m_colorBy = nullptr;
    QSpinBox* m_token = nullptr;
    QLabel* m_tokenLine = nullptr;
    QLabel* m_caption = nullptr;
    QLabel* m_problems = nullptr;
    QWidget* m_offers = nullptr; // "Use tp = 4": the nearest valid value of each input that alone breaks the plan
    std::vector<std::pair<QWidget*, QString>> m_fieldPaths; // editor → JSON path, for problems
    MeshView* m_mesh = nullptr;
    QTabWidget* m_tabs = nullptr;
    SignatureModel* m_signature = nullptr;
    QTableView* m_signatureTable = nullptr;
    CallListModel* m_calls = nullptr;
    QTableView* m_callTable = nullptr;
    PipelineChart* m_pipeline = nullptr;
    MemoryChart* m_memory = nullptr;
    QPushButton* m_findPlans = nullptr;
    FitPlansDialog* m_fitDialog = nullptr;
    PartitionEditor* m_partition = nullptr;
    FigureTableModel* m_figures = nullptr;
    QTableView* m_figureTable = nullptr;
    QTextBrowser* m_chain = nullptr;
    QWidget* m_followChip = nullptr;
    FigureSet m_chainFigures;
    bool m_tokenStale = false; // the followed token changed while the pane was hidden
    // The derivation whose mesh is drawn when the pane is next shown (null: the drawing is current).
    std::shared_ptr<const scenario::Derivation> m_meshPending;
};

} // namespace tw::ui
