// WirePane's three-tier fields (issue: a three-tier scenario showed as "NVSwitch node"): the pods and the
// core of a "three-tier" fabric (fabric/topology.h, TopologySpec's three-tier fields: GPUs per pod, leaves
// and spines per pod, core switches, the spine tier's oversubscription; the leaf tier's is the Network
// box's), each edit one undoable Document command, and the shape they give (pods, servers per pod, cores
// per plane) under them.
#include "wirepane.h"

#include "document/document.h"
#include "panes/panekit.h"
#include "views/qtstrings.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

namespace tw::ui {

void WirePane::buildPodsForm(QVBoxLayout* layout)
{
    QFormLayout* pods = panekit::formGroup(layout, tr("Pods and core (three-tier)"));
    m_podsBox = static_cast<QGroupBox*>(pods->parentWidget());
    m_podsBox->setObjectName(QStringLiteral("podsBox"));
    // After the network box, whatever order formGroup added it in.
    layout->removeWidget(m_podsBox);
    layout->insertWidget(layout->indexOf(m_networkBox) + 1, m_podsBox);
    auto spin = [&](const char* name, int lo, int hi, const QString& tip) {
        auto* s = new QSpinBox(m_podsBox);
        s->setObjectName(QString::fromLatin1(name));
        s->setRange(lo, hi);
        s->setKeyboardTracking(false);
        s->setToolTip(tip);
        return s;
    };
    m_gpusPerPod = spin("gpusPerPod", 1, int(network::kMaxTopologyGpus),
                        tr("GPUs in one pod (whole servers; the last pod may be partial)"));
    pods->addRow(tr("GPUs per pod"), m_gpusPerPod);
    m_leavesPerPod = spin("leavesPerPod", 1, 4096, tr("Leaf switches in one pod"));
    pods->addRow(tr("Leaves per pod"), m_leavesPerPod);
    m_spinesPerPod = spin("spinesPerPod", 1, 1024, tr("Spine switches in one pod (every leaf of the pod has an uplink to each)"));
    pods->addRow(tr("Spines per pod"), m_spinesPerPod);
    m_coreSwitches = spin("coreSwitches", 1, 16384,
                          tr("Core switches: spines-per-pod planes; spine j of every pod links to every core of plane j"));
    pods->addRow(tr("Core switches"), m_coreSwitches);
    m_coreOversubscription = new QDoubleSpinBox(m_podsBox);
    m_coreOversubscription->setObjectName(QStringLiteral("coreOversubscription"));
    m_coreOversubscription->setRange(1, 64);
    m_coreOversubscription->setDecimals(1);
    m_coreOversubscription->setSingleStep(0.5);
    m_coreOversubscription->setSuffix(QStringLiteral(" : 1"));
    m_coreOversubscription->setKeyboardTracking(false);
    m_coreOversubscription->setToolTip(tr("A spine's downlink : uplink capacity (the leaves' is Oversubscription above)"));
    pods->addRow(tr("Core oversubscription"), m_coreOversubscription);
    m_podsShape = new QLabel(m_podsBox);
    m_podsShape->setObjectName(QStringLiteral("podsShape"));
    m_podsShape->setWordWrap(true);
    pods->addRow(m_podsShape);

    auto edit = [this](auto apply, const QString& text, EditMerge merge) {
        if (m_updating)
            return;
        network::TopologySpec spec = m_document->scenario().topology;
        apply(spec);
        editTopology(spec, text, merge);
    };
    connect(m_gpusPerPod, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.gpusPerPod = std::uint64_t(v); }, tr("Set GPUs per pod"), EditMerge::GpusPerPod);
    });
    connect(m_leavesPerPod, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.leavesPerPod = std::uint64_t(v); }, tr("Set leaves per pod"), EditMerge::LeavesPerPod);
    });
    connect(m_spinesPerPod, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.spinesPerPod = std::uint64_t(v); }, tr("Set spines per pod"), EditMerge::SpinesPerPod);
    });
    connect(m_coreSwitches, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.coreSwitches = std::uint64_t(v); }, tr("Set core switches"), EditMerge::CoreSwitches);
    });
    connect(m_coreOversubscription, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit([v](network::TopologySpec& s) { s.coreOversubscription = v; }, tr("Set core oversubscription"), EditMerge::CoreOversubscription);
    });
}

void WirePane::showPods(const scenario::Scenario& s)
{
    const network::TopologySpec& t = s.topology;
    const bool threeTier = t.kind == network::TopologyKind::ThreeTier;
    m_podsBox->setVisible(threeTier);
    // The leaf–spine fields a three-tier fabric does not read (its leaves and spines are per pod).
    if (auto* net = qobject_cast<QFormLayout*>(m_networkBox->layout())) {
        net->setRowVisible(m_nicsPerLeaf, !threeTier);
        net->setRowVisible(m_spines, !threeTier);
        if (auto* label = qobject_cast<QLabel*>(net->labelForField(m_oversubscription)))
            label->setText(threeTier ? tr("Leaf oversubscription") : tr("Oversubscription"));
    }
    m_gpusPerPod->setValue(int(t.gpusPerPod));
    m_leavesPerPod->setValue(int(t.leavesPerPod));
    m_spinesPerPod->setValue(int(t.spinesPerPod));
    m_coreSwitches->setValue(int(t.coreSwitches));
    m_coreOversubscription->setValue(t.coreOversubscription);
    if (!threeTier)
        return;
    const parallel::Cluster cluster{s.hardware.nodes, s.hardware.gpusPerNode};
    if (!network::validate(t, cluster).empty()) {
        m_podsShape->clear(); // the status line names the field
        return;
    }
    const network::ThreeTierShape shape = network::threeTierShape(t, cluster);
    m_podsShape->setText(tr("%1 pods of %2 servers; %3 planes of %4 cores")
                             .arg(shape.pods)
                             .arg(shape.serversPerPod)
                             .arg(t.spinesPerPod)
                             .arg(shape.coresPerPlane));
}

} // namespace tw::ui
