#include "scenariotoolbar.h"

#include "document/commands.h"
#include "document/document.h"
#include "document/documentactions.h"
#include "settings/theme.h"

#include "model/model.h"
#include "scenario/presets.h"
#include "views/qtstrings.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QUndoStack>

namespace tw::ui {

namespace {

const char* const kFabricNames[] = {QT_TRANSLATE_NOOP("tw::ui::ScenarioToolbar", "PCIe server"),
                                    QT_TRANSLATE_NOOP("tw::ui::ScenarioToolbar", "NVSwitch node"),
                                    QT_TRANSLATE_NOOP("tw::ui::ScenarioToolbar", "Leaf–spine"),
                                    QT_TRANSLATE_NOOP("tw::ui::ScenarioToolbar", "Three-tier (pods)"),
                                    QT_TRANSLATE_NOOP("tw::ui::ScenarioToolbar", "Paper testbed (10 GbE)")};
static_assert(std::size(kFabricNames) == std::size(ScenarioToolbar::kFabrics));

// A labelled group of the toolbar: "Model [combo]".
QWidget* labelled(QWidget* parent, const QString& label, std::initializer_list<QWidget*> widgets)
{
    auto* box = new QWidget(parent);
    auto* layout = new QHBoxLayout(box);
    layout->setContentsMargins(6, 0, 6, 0);
    layout->setSpacing(4);
    auto* caption = new QLabel(label, box);
    caption->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(caption);
    for (QWidget* w : widgets)
        layout->addWidget(w);
    if (widgets.size() > 0)
        caption->setBuddy(*widgets.begin());
    return box;
}

} // namespace

ScenarioToolbar::ScenarioToolbar(Document* document, DocumentActions* actions, QWidget* parent)
    : QToolBar(tr("Scenario"), parent)
    , m_document(document)
    , m_actions(actions)
{
    setObjectName(QStringLiteral("scenarioToolbar"));
    setMovable(false);
    setFloatable(false);

    m_preset = new QComboBox(this);
    m_preset->setObjectName(QStringLiteral("toolbarPreset"));
    m_preset->setToolTip(tr("Load a shipped scenario (undoable)"));
    m_preset->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_preset->addItem(QString()); // the document's own scenario when it is no preset (showScenario names it)
    for (const scenario::PresetInfo& info : scenario::presetList()) {
        m_preset->addItem(qs(info.name), qs(info.name));
        m_preset->setItemData(m_preset->count() - 1, qs(info.description), Qt::ToolTipRole);
    }
    addWidget(labelled(this, tr("Preset"), {m_preset}));

    m_model = new QComboBox(this);
    m_model->setObjectName(QStringLiteral("toolbarModel"));
    m_model->setToolTip(tr("A published model shape; precisions and the rest of the scenario stay"));
    m_model->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_model->addItem(QString());
    for (const std::string& id : model::knownModelIds())
        m_model->addItem(qs(model::knownModel(id)->name), qs(id));
    addWidget(labelled(this, tr("Model"), {m_model}));

    m_nodes = new QSpinBox(this);
    m_nodes->setObjectName(QStringLiteral("toolbarNodes"));
    m_nodes->setRange(1, int(scenario::kMaxGpuCount));
    m_nodes->setKeyboardTracking(false);
    m_nodes->setToolTip(tr("Nodes (servers) in the cluster"));
    m_gpusPerNode = new QSpinBox(this);
    m_gpusPerNode->setObjectName(QStringLiteral("toolbarGpusPerNode"));
    m_gpusPerNode->setRange(1, int(scenario::kMaxGpusPerNode));
    m_gpusPerNode->setKeyboardTracking(false);
    m_gpusPerNode->setToolTip(tr("GPUs per node"));
    auto* times = new QLabel(QStringLiteral("×"), this);
    m_total = new QLabel(this);
    m_total->setObjectName(QStringLiteral("toolbarGpuTotal"));
    addWidget(labelled(this, tr("GPUs"), {m_nodes, times, m_gpusPerNode, m_total}));

    m_fabric = new QComboBox(this);
    m_fabric->setObjectName(QStringLiteral("toolbarFabric"));
    m_fabric->setToolTip(tr("The network under the GPUs (stage 5); it may reshape the cluster"));
    m_fabric->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    for (const char* name : kFabricNames)
        m_fabric->addItem(tr(name));
    addWidget(labelled(this, tr("Fabric"), {m_fabric}));

    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("toolbarProblem"));
    theme::styleErrorLabel(m_problem, QStringLiteral("padding-left: 6px;"));
    m_problem->setWordWrap(false);
    // A toolbar shows and hides its widgets through their actions.
    m_problemAction = addWidget(m_problem);
    m_problemAction->setVisible(false);

    // Only the user's choices edit (activated, valueChanged from the user): showScenario blocks signals.
    connect(m_preset, &QComboBox::activated, this, &ScenarioToolbar::choosePreset);
    connect(m_model, &QComboBox::activated, this, &ScenarioToolbar::chooseModel);
    connect(m_nodes, &QSpinBox::valueChanged, this, &ScenarioToolbar::chooseCluster);
    connect(m_gpusPerNode, &QSpinBox::valueChanged, this, &ScenarioToolbar::chooseCluster);
    connect(m_fabric, &QComboBox::activated, this, &ScenarioToolbar::chooseFabric);
    connect(m_document, &Document::scenarioChanged, this, &ScenarioToolbar::showScenario);
    showScenario();
}

QString ScenarioToolbar::problem() const
{
    return m_problemAction->isVisible() ? m_problem->text() : QString();
}

void ScenarioToolbar::showProblem(const QString& text)
{
    m_problem->setText(text);
    m_problem->setToolTip(text);
    m_problemAction->setVisible(!text.isEmpty());
}

void ScenarioToolbar::showScenario()
{
    const scenario::Scenario& s = m_document->scenario();
    {
        const QSignalBlocker block(m_preset);
        const QString name = qs(s.name);
        const int index = m_preset->findData(name);
        bool isPreset = false;
        if (index > 0) {
            const auto shipped = scenario::preset(s.name);
            isPreset = shipped && shipped.value() == s;
        }
        if (isPreset) {
            m_preset->setItemText(0, tr("Custom"));
            m_preset->setCurrentIndex(index);
        } else {
            m_preset->setItemText(0, name.isEmpty() ? tr("Custom") : tr("%1 (edited)").arg(name));
            m_preset->setCurrentIndex(0);
        }
    }
    {
        const QSignalBlocker block(m_model);
        const int index = m_model->findData(qs(scenario::catalogueModelOf(s.model)));
        m_model->setItemText(0, tr("Custom: %1").arg(qs(s.model.name)));
        m_model->setCurrentIndex(index > 0 ? index : 0);
    }
    {
        const QSignalBlocker blockNodes(m_nodes);
        const QSignalBlocker blockGpus(m_gpusPerNode);
        m_nodes->setValue(int(s.hardware.nodes));
        m_gpusPerNode->setValue(int(s.hardware.gpusPerNode));
        const std::uint64_t gpus = s.hardware.gpuCount();
        m_total->setText(gpus == 1 ? tr("= 1 GPU") : tr("= %1 GPUs").arg(gpus));
    }
    {
        const QSignalBlocker block(m_fabric);
        for (int i = 0; i < int(std::size(kFabrics)); ++i)
            if (kFabrics[i] == s.topology.kind)
                m_fabric->setCurrentIndex(i);
    }
}

void ScenarioToolbar::choosePreset(int index)
{
    if (index <= 0) {
        showScenario(); // the placeholder is no choice
        return;
    }
    showProblem({});
    m_actions->loadPreset(m_preset->itemData(index).toString());
    showScenario(); // also when the load was refused or cancelled
}

void ScenarioToolbar::chooseModel(int index)
{
    const QString id = m_model->itemData(index).toString();
    if (index <= 0 || id.isEmpty()) {
        showScenario();
        return;
    }
    auto changed = scenario::withCatalogueModel(m_document->scenario(), id.toStdString());
    if (!changed) {
        showProblem(qs(changed.error().toString()));
        showScenario();
        return;
    }
    showProblem({});
    if (changed.value() == m_document->scenario())
        return;
    m_document->flushPendingEdits();
    m_document->undoStack()->push(new ReplaceScenarioCommand(m_document, std::move(changed).value(),
                                                             tr("Choose model %1").arg(m_model->itemText(index))));
}

void ScenarioToolbar::chooseCluster()
{
    showProblem({});
    if (!m_document->setCluster(std::uint64_t(m_nodes->value()), std::uint64_t(m_gpusPerNode->value()))) {
        const std::uint64_t gpus = std::uint64_t(m_nodes->value()) * std::uint64_t(m_gpusPerNode->value());
        if (gpus > scenario::kMaxGpuCount)
            showProblem(tr("hardware: %1 × %2 = %3 GPUs is more than %4")
                            .arg(m_nodes->value())
                            .arg(m_gpusPerNode->value())
                            .arg(gpus)
                            .arg(scenario::kMaxGpuCount));
        showScenario();
    }
}

void ScenarioToolbar::chooseFabric(int index)
{
    if (index < 0 || index >= int(std::size(kFabrics)))
        return;
    auto changed = scenario::withFabric(m_document->scenario(), kFabrics[index]);
    if (!changed) {
        showProblem(qs(changed.error().toString()));
        showScenario(); // the combo goes back to the scenario's fabric
        return;
    }
    showProblem({});
    const scenario::Scenario& s = changed.value();
    m_document->editPlan(s.hardware, s.parallel, tr("Choose fabric: %1").arg(tr(kFabricNames[index])), EditMerge::None, &s.topology);
}

} // namespace tw::ui
