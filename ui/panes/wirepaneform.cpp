// WirePane's form: the fabric, its links and NICs, the cluster's shape (buildForm, chooseFabric) and
// the form brought back in line with the document's scenario (showScenario).
#include "wirepane.h"

#include "document/document.h"
#include "collective/openmpi.h"
#include "network/overhead.h"
#include "panes/panekit.h"
#include "settings/theme.h"

#include "base/unitparse.h"
#include "base/units.h"
#include "views/qtstrings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {

using network::Protocol;
using network::TopologyKind;

const TopologyKind kKinds[] = {TopologyKind::PcieServer, TopologyKind::NvSwitchNode, TopologyKind::LeafSpine,
                               TopologyKind::ThreeTier, TopologyKind::PaperTestbed};
const char* const kKindNames[] = {QT_TRANSLATE_NOOP("WirePane", "PCIe server (one node)"),
                                  QT_TRANSLATE_NOOP("WirePane", "NVSwitch node (DGX-like)"),
                                  QT_TRANSLATE_NOOP("WirePane", "Leaf–spine of nodes"),
                                  QT_TRANSLATE_NOOP("WirePane", "Three-tier (pods and a core)"),
                                  QT_TRANSLATE_NOOP("WirePane", "Paper testbed (10 GbE)")};
static_assert(std::size(kKindNames) == std::size(kKinds));
const Protocol kPcie[] = {Protocol::PcieGen3, Protocol::PcieGen4, Protocol::PcieGen5};
const Protocol kNics[] = {Protocol::InfinibandHdr, Protocol::InfinibandNdr, Protocol::RoCEv2,
                          Protocol::Ethernet10G,   Protocol::Ethernet25G,   Protocol::Ethernet100G,
                          Protocol::Ethernet400G};

// "Model: 90 B per 1,448-B TCP segment …" for the NICs' protocol, then the loopback measurement beside
// the model's TCP-over-loopback format.
QString overheadNoteText(std::optional<Protocol> nic)
{
    QString text;
    if (nic)
        text = QObject::tr("Network packets (model): %1.").arg(qs(network::packetFormat(*nic).formula));
    static const collective::openmpi::LoopbackHeader measured = [] {
        const auto rows = collective::openmpi::parseDataset(collective::openmpi::embeddedDataset());
        return rows ? collective::openmpi::loopbackHeader(rows.value()) : collective::openmpi::LoopbackHeader{};
    }();
    if (measured.rows > 0) {
        const network::PacketFormat lo = network::packetFormat(Protocol::TcpLoopback);
        if (!text.isEmpty())
            text += QLatin1Char(' ');
        text += QObject::tr("Measured on loopback (Open MPI over TCP, %1 calls): %2 B of headers per packet "
                            "(median; %3 calls exactly), against the model's %4 B for TCP over loopback.")
                    .arg(measured.rows)
                    .arg(QString::number(measured.medianBytes, 'f', 1))
                    .arg(measured.exact)
                    .arg(QString::number(lo.overhead, 'f', 0));
    }
    return text;
}

} // namespace

void WirePane::buildForm(QWidget* form)
{
    auto* layout = new QVBoxLayout(form);
    auto addForm = [&](const QString& title) { return panekit::formGroup(layout, title); };
    auto spin = [&](const char* name, int lo, int hi, const QString& tip) {
        auto* s = new QSpinBox(form);
        s->setObjectName(QString::fromLatin1(name));
        s->setRange(lo, hi);
        s->setKeyboardTracking(false);
        s->setToolTip(tip);
        return s;
    };
    auto combo = [&](const char* name, const QString& tip) {
        auto* c = new QComboBox(form);
        c->setObjectName(QString::fromLatin1(name));
        c->setToolTip(tip);
        return c;
    };

    QFormLayout* fabric = addForm(tr("Fabric"));
    m_kind = combo("fabricKind", tr("What connects the GPUs: one server, or servers on a network"));
    for (const char* name : kKindNames)
        m_kind->addItem(tr(name));
    fabric->addRow(tr("Kind"), m_kind);
    m_nodes = spin("wireNodes", 1, 16384, tr("Servers in the cluster (stage 3's nodes; the plan follows)"));
    fabric->addRow(tr("Nodes"), m_nodes);
    m_clusterLabel = new QLabel(form);
    m_clusterLabel->setObjectName(QStringLiteral("wireCluster"));
    m_clusterLabel->setWordWrap(true);
    fabric->addRow(m_clusterLabel);
    m_fabricProblem = panekit::problemLabel(form, "fabricProblem");
    fabric->addRow(m_fabricProblem);

    QFormLayout* server = addForm(tr("Inside a server"));
    m_serverBox = static_cast<QGroupBox*>(server->parentWidget());
    m_pcie = combo("pcieGeneration", tr("The PCIe generation of the x16 links (GPUs, switches, NICs): auto follows the "
                                        "GPU (A100: Gen4, H100: Gen5)"));
    m_pcie->addItem(tr("auto"), -1);
    for (Protocol p : kPcie)
        m_pcie->addItem(qs(network::displayName(p)), int(p));
    server->addRow(tr("PCIe"), m_pcie);
    m_gpusPerSwitch = spin("gpusPerPcieSwitch", 0, 16, tr("GPUs behind each PCIe switch (0: on the CPU's own lanes)"));
    m_gpusPerSwitch->setSpecialValueText(tr("on the CPU"));
    server->addRow(tr("GPUs per PCIe switch"), m_gpusPerSwitch);
    m_gpuDirect = new QCheckBox(tr("GPUDirect peer-to-peer and RDMA"), form);
    m_gpuDirect->setObjectName(QStringLiteral("gpuDirect"));
    m_gpuDirect->setToolTip(tr("Off: GPU data crossing PCIe is staged through host memory"));
    server->addRow(m_gpuDirect);
    m_intraNode = combo("intraNode", tr("How the GPUs of one server of a leaf–spine fabric talk"));
    m_intraNode->addItem(tr("PCIe only"), int(network::IntraNode::Pcie));
    m_intraNode->addItem(tr("NVLink / NVSwitch"), int(network::IntraNode::NvSwitch));
    server->addRow(tr("Servers"), m_intraNode);
    m_nvlink = combo("nvlinkGeneration", tr("NVLink generation: auto follows the GPU (A100: NVLink 3, H100: NVLink 4)"));
    m_nvlink->addItem(tr("auto"), -1);
    m_nvlink->addItem(qs(network::displayName(Protocol::NvLink3)), int(Protocol::NvLink3));
    m_nvlink->addItem(qs(network::displayName(Protocol::NvLink4)), int(Protocol::NvLink4));
    server->addRow(tr("NVLink"), m_nvlink);

    QFormLayout* net = addForm(tr("Network"));
    m_networkBox = static_cast<QGroupBox*>(net->parentWidget());
    m_testbedNote = new QLabel(tr("The paper's appendix A.3: one GPU per server on the CPU's PCIe lanes, one "
                                  "10 Gb/s Ethernet NIC each, one switch; PyTorch over TCP sockets, so every byte "
                                  "is staged through host memory (no GPUDirect)."),
                               form);
    m_testbedNote->setObjectName(QStringLiteral("testbedNote"));
    m_testbedNote->setWordWrap(true);
    layout->insertWidget(layout->indexOf(m_networkBox), m_testbedNote);
    m_nicPlacement = combo("nicPlacement", tr("One NIC per GPU (rail-optimized) or one per server"));
    m_nicPlacement->addItem(tr("one per GPU (rails)"), int(network::NicPlacement::PerGpu));
    m_nicPlacement->addItem(tr("one per server"), int(network::NicPlacement::PerNode));
    net->addRow(tr("NICs"), m_nicPlacement);
    m_nicProtocol = combo("nicProtocol", tr("The NICs' protocol and rate"));
    for (Protocol p : kNics)
        m_nicProtocol->addItem(qs(network::displayName(p)), int(p));
    net->addRow(tr("NIC protocol"), m_nicProtocol);
    // The protocol's modelled packet overhead, and beside it what real TCP on this machine's loopback
    // carries per packet (issue #10: the committed Open MPI measurements).
    m_overheadNote = new QLabel(form);
    m_overheadNote->setObjectName(QStringLiteral("overheadNote"));
    m_overheadNote->setWordWrap(true);
    m_overheadNote->setForegroundRole(QPalette::PlaceholderText);
    m_overheadNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_overheadNote->setContentsMargins(6, 0, 6, 0);
    m_nicRate = new QLineEdit(form);
    m_nicRate->setObjectName(QStringLiteral("nicRate"));
    m_nicRate->setToolTip(tr("Each NIC's rate per direction: auto (the protocol's, RoCEv2's by the servers), or e.g. 100Gb/s, 12.5GB/s"));
    net->addRow(tr("NIC rate"), m_nicRate);
    m_nicRateProblem = panekit::problemLabel(form, "nicRateProblem");
    net->addRow(m_nicRateProblem);
    m_oversubscription = new QDoubleSpinBox(form);
    m_oversubscription->setObjectName(QStringLiteral("oversubscription"));
    m_oversubscription->setRange(1, 64);
    m_oversubscription->setDecimals(1);
    m_oversubscription->setSingleStep(0.5);
    m_oversubscription->setSuffix(QStringLiteral(" : 1"));
    m_oversubscription->setKeyboardTracking(false);
    m_oversubscription->setToolTip(tr("A leaf's downlink : uplink capacity (1 : 1 is non-blocking)"));
    net->addRow(tr("Oversubscription"), m_oversubscription);
    m_nicsPerLeaf = spin("nicsPerLeaf", 1, 512, tr("NIC ports per leaf switch"));
    net->addRow(tr("NICs per leaf"), m_nicsPerLeaf);
    m_spines = spin("spines", 1, 256, tr("Spine switches (every leaf has one uplink to each)"));
    net->addRow(tr("Spines"), m_spines);

    buildPodsForm(layout);
    layout->insertWidget(layout->indexOf(m_networkBox) + 1, m_overheadNote); // shown with every kind

    QFormLayout* sim = addForm(tr("The simulated step"));
    m_status = new QLabel(form);
    m_status->setObjectName(QStringLiteral("wireStatus"));
    m_status->setWordWrap(true);
    sim->addRow(m_status);
    m_summary = new QLabel(form);
    m_summary->setObjectName(QStringLiteral("wireSummary"));
    m_summary->setWordWrap(true);
    sim->addRow(m_summary);
    layout->addStretch(1);

    // Edits: each one undoable command; the kind may reshape the cluster (chooseFabric).
    connect(m_kind, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (!m_updating)
            chooseFabric(index);
    });
    connect(m_nodes, &QSpinBox::valueChanged, this, [this](int nodes) {
        if (!m_updating)
            m_document->setCluster(std::uint64_t(nodes), m_document->scenario().hardware.gpusPerNode);
    });
    auto edit = [this](auto apply, const QString& text, EditMerge merge = EditMerge::None) {
        if (m_updating)
            return;
        network::TopologySpec spec = m_document->scenario().topology;
        apply(spec);
        editTopology(spec, text, merge);
    };
    connect(m_pcie, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) {
            const int v = m_pcie->currentData().toInt();
            s.pcie = v < 0 ? std::nullopt : std::optional<Protocol>(Protocol(v));
        },
             tr("Choose PCIe generation"));
    });
    connect(m_gpusPerSwitch, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.gpusPerPcieSwitch = std::uint64_t(v); }, tr("Set GPUs per PCIe switch"), EditMerge::GpusPerPcieSwitch);
    });
    connect(m_gpuDirect, &QCheckBox::toggled, this, [edit](bool on) {
        edit([on](network::TopologySpec& s) { s.gpuDirectP2P = on; },
             on ? tr("Turn GPUDirect on") : tr("Turn GPUDirect off"));
    });
    connect(m_intraNode, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) { s.intraNode = network::IntraNode(m_intraNode->currentData().toInt()); },
             tr("Choose servers' interconnect"));
    });
    connect(m_nvlink, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) {
            const int v = m_nvlink->currentData().toInt();
            s.nvlink = v < 0 ? std::nullopt : std::optional<Protocol>(Protocol(v));
        }, tr("Choose NVLink generation"));
    });
    connect(m_nicRate, &QLineEdit::editingFinished, this, [this, edit] {
        // "auto" (or nothing) follows the protocol; anything else must parse as a rate.
        const QString text = m_nicRate->text().trimmed();
        std::optional<BytesPerSecond> rate;
        if (!text.isEmpty() && !text.startsWith(QStringLiteral("auto"), Qt::CaseInsensitive)) {
            const auto parsed = parseBandwidth(text.toStdString());
            if (!parsed) {
                m_nicRateProblem->setText(tr("NIC rate: %1").arg(qs(parsed.error().message)));
                m_nicRateProblem->show();
                return; // what was typed stays in the field
            }
            rate = parsed.value();
        }
        m_nicRateProblem->hide();
        edit([rate](network::TopologySpec& s) { s.nicBandwidth = rate; }, tr("Set NIC rate"));
    });
    connect(m_nicPlacement, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) {
            s.nicPlacement = network::NicPlacement(m_nicPlacement->currentData().toInt());
        }, tr("Choose NIC placement"));
    });
    connect(m_nicProtocol, &QComboBox::currentIndexChanged, this, [this, edit](int) {
        edit([this](network::TopologySpec& s) { s.nicProtocol = Protocol(m_nicProtocol->currentData().toInt()); },
             tr("Choose NIC protocol"));
    });
    connect(m_oversubscription, &QDoubleSpinBox::valueChanged, this, [edit](double v) {
        edit([v](network::TopologySpec& s) { s.oversubscription = v; }, tr("Set oversubscription"), EditMerge::Oversubscription);
    });
    connect(m_nicsPerLeaf, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.nicsPerLeaf = std::uint64_t(v); }, tr("Set NICs per leaf"), EditMerge::NicsPerLeaf);
    });
    connect(m_spines, &QSpinBox::valueChanged, this, [edit](int v) {
        edit([v](network::TopologySpec& s) { s.spines = std::uint64_t(v); }, tr("Set spines"), EditMerge::Spines);
    });
}

void WirePane::editTopology(const network::TopologySpec& spec, const QString& text, EditMerge merge)
{
    m_document->setTopology(spec, text, merge);
}

void WirePane::chooseFabric(int index)
{
    if (index < 0 || index >= int(std::size(kKinds)))
        return;
    // The kind decides the cluster's shape (scenario::withFabric): one server holds every GPU; the
    // testbed has one GPU per server; a leaf–spine keeps the servers.
    m_fabricProblem->hide();
    const auto changed = scenario::withFabric(m_document->scenario(), kKinds[index]);
    if (!changed) {
        m_fabricProblem->setText(qs(changed.error().message));
        m_fabricProblem->show();
        showScenario(); // the combo goes back to the scenario's kind
        return;
    }
    const scenario::Scenario& s = changed.value();
    m_document->editPlan(s.hardware, s.parallel, tr("Choose fabric: %1").arg(tr(kKindNames[index])), EditMerge::None, &s.topology);
}

void WirePane::showScenario()
{
    const scenario::Scenario& s = m_document->scenario();
    const network::TopologySpec& t = s.topology;
    m_updating = true;
    for (int i = 0; i < int(std::size(kKinds)); ++i)
        if (kKinds[i] == t.kind)
            m_kind->setCurrentIndex(i);
    m_nodes->setValue(int(s.hardware.nodes));
    m_clusterLabel->setText(tr("%1 × %2 GPUs (%3) = %4 GPUs")
                                .arg(s.hardware.nodes)
                                .arg(s.hardware.gpusPerNode)
                                .arg(qs(s.hardware.gpu))
                                .arg(s.hardware.nodes * s.hardware.gpusPerNode));
    const scenario::PcieChoice pcieNow = scenario::pcieChoice(s);
    m_pcie->setItemText(0, tr("auto (%1)").arg(qs(network::displayName(pcieNow.generation))));
    m_pcie->setItemData(0, qs(pcieNow.why), Qt::ToolTipRole);
    m_pcie->setCurrentIndex(t.pcie ? std::max(0, m_pcie->findData(int(*t.pcie))) : 0);
    m_gpusPerSwitch->setValue(int(t.gpusPerPcieSwitch));
    m_gpuDirect->setChecked(t.gpuDirectP2P);
    m_intraNode->setCurrentIndex(std::max(0, m_intraNode->findData(int(t.intraNode))));
    const Protocol nvlinkNow = scenario::resolvedTopology(s).nvlink.value_or(network::kUnresolvedNvLink);
    m_nvlink->setItemText(0, tr("auto (%1)").arg(qs(network::displayName(nvlinkNow))));
    m_nvlink->setCurrentIndex(t.nvlink ? std::max(0, m_nvlink->findData(int(*t.nvlink))) : 0);
    const scenario::NicRate nic = scenario::nicRate(s);
    if (!m_nicRate->hasFocus() && m_nicRateProblem->isHidden())
        m_nicRate->setText(t.nicBandwidth ? qs(formatBytes(*t.nicBandwidth, units())) + QStringLiteral("/s")
                                          : tr("auto (%1/s)").arg(qs(formatBytes(nic.bytesPerSecond, units()))));
    m_nicRate->setToolTip(tr("Each NIC's rate per direction: auto, or e.g. 100Gb/s, 12.5GB/s. Now: %1").arg(qs(nic.why)));
    m_nicPlacement->setCurrentIndex(std::max(0, m_nicPlacement->findData(int(t.nicPlacement))));
    m_nicProtocol->setCurrentIndex(std::max(0, m_nicProtocol->findData(int(t.nicProtocol))));
    m_overheadNote->setText(overheadNoteText(t.kind == TopologyKind::PaperTestbed ? std::optional(Protocol::Ethernet10G)
                                             : network::isSwitchedFabric(t.kind)   ? std::optional(t.nicProtocol)
                                                                                   : std::nullopt));
    m_oversubscription->setValue(t.oversubscription);
    m_nicsPerLeaf->setValue(int(t.nicsPerLeaf));
    m_spines->setValue(int(t.spines));
    // Fields a kind does not use are disabled, not hidden (the form keeps its shape).
    const bool multi = network::isSwitchedFabric(t.kind);
    const bool testbed = t.kind == TopologyKind::PaperTestbed;
    // What a kind does not use is hidden: the network only exists between servers of a leaf–spine, and
    // the testbed is fixed by the paper (its note says what it is).
    m_nodes->setEnabled(multi || testbed);
    m_networkBox->setVisible(multi);
    m_testbedNote->setVisible(testbed);
    m_serverBox->setVisible(!testbed);
    m_intraNode->setEnabled(multi);
    showPods(s);
    if (m_sweepGpus->text().isEmpty() || !m_sweepGpus->isModified()) // core's sizes that this plan can run
        m_sweepGpus->setText(qs(scenario::gpuListText(scenario::defaultSweepSizes(s))));
    m_caption->setText(
        tr("<b>5 · Wire.</b> The fabric under the %1 GPUs of stage 3 and one training step on it: every "
           "collective's transfers routed over the links, sharing them fairly, with the compute of stage 2 "
           "between them. Press play to watch the bits move; hover a link for its bytes, a GPU for the kernels it runs now.")
            .arg(s.hardware.nodes * s.hardware.gpusPerNode));
    m_updating = false;
}

} // namespace tw::ui
