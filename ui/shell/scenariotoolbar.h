#pragma once
// The scenario toolbar common to all panes: the preset, the model, the GPUs (nodes × GPUs per node)
// and the fabric. Each choice is one undoable Document edit (a preset through DocumentActions, so it
// goes where the File → Presets menu goes); the toolbar follows the document, so an undo or an edit in
// any pane shows here without pushing anything back.

#include "base/error.h"
#include "fabric/topology.h"
#include "scenario/scenario.h"

#include <QToolBar>

#include <string>

class QAction;
class QComboBox;
class QLabel;
class QSpinBox;

namespace tw::ui {

class Document;
class DocumentActions;

// withCatalogueModel, withFabric and catalogueModelOf live in core (scenario/scenario.h).


class ScenarioToolbar : public QToolBar {
    Q_OBJECT
public:
    ScenarioToolbar(Document* document, DocumentActions* actions, QWidget* parent = nullptr);

    [[nodiscard]] QComboBox* presetBox() const { return m_preset; }
    [[nodiscard]] QComboBox* modelBox() const { return m_model; }
    [[nodiscard]] QSpinBox* nodesBox() const { return m_nodes; }
    [[nodiscard]] QSpinBox* gpusPerNodeBox() const { return m_gpusPerNode; }
    [[nodiscard]] QComboBox* fabricBox() const { return m_fabric; }
    [[nodiscard]] QLabel* gpuTotalLabel() const { return m_total; }
    // Why the last choice could not be applied (empty when it was).
    [[nodiscard]] QString problem() const;

    // The fabric kinds in the combo's order.
    static constexpr network::TopologyKind kFabrics[] = {network::TopologyKind::PcieServer,
                                                         network::TopologyKind::NvSwitchNode,
                                                         network::TopologyKind::LeafSpine,
                                                         network::TopologyKind::ThreeTier,
                                                         network::TopologyKind::PaperTestbed};

private:
    void showScenario();
    void choosePreset(int index);
    void chooseModel(int index);
    void chooseCluster();
    void chooseFabric(int index);
    void showProblem(const QString& text);

    Document* m_document;
    DocumentActions* m_actions;
    QComboBox* m_preset = nullptr;
    QComboBox* m_model = nullptr;
    QSpinBox* m_nodes = nullptr;
    QSpinBox* m_gpusPerNode = nullptr;
    QLabel* m_total = nullptr;
    QComboBox* m_fabric = nullptr;
    QLabel* m_problem = nullptr;
    QAction* m_problemAction = nullptr;
};

} // namespace tw::ui
