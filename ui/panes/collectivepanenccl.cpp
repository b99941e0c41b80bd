// Stage 4's NCCL side of the played call (issue #17): NCCL's view of the call's group, where the α–β
// inputs come from (the group's fabric, the paper's example, the scenario's link or the user's values),
// and the two NCCL tabs — bus bandwidth against size and the channels. Part of CollectivePane.

#include "collectivepane.h"

#include "charts/busbwchart.h"
#include "charts/collectivecharts.h"
#include "document/document.h"
#include "views/ncclchannelview.h"
#include "views/qtstrings.h"

#include "base/units.h"
#include "collective/binding.h"
#include "collective/fabriclink.h"
#include "scenario/derive.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTabWidget>

#include <algorithm>
#include <climits>
#include <tuple>

namespace tw::ui {

namespace {

} // namespace

void CollectivePane::buildLinkSources(QFormLayout* link, QWidget* form)
{
    // A hand edit of α or β becomes the scenario's link (both values as shown, undoably) and stays until
    // the user picks a source again.
    auto handEdit = [this] {
        if (m_updating)
            return;
        m_linkChoice = LinkChoice::Hand;
        const double alpha = m_alpha->value() * 1e-6, bandwidth = m_bandwidth->value() * 1e9 / 8;
        if (m_document->scenario().collectives.link.alphaSeconds != alpha)
            m_document->setField(Field::LinkAlpha, FieldValue(alpha));
        if (m_document->scenario().collectives.link.bandwidth != bandwidth)
            m_document->setField(Field::LinkBandwidth, FieldValue(bandwidth));
        updateLink();
        linkChanged();
    };
    connect(m_alpha, &QDoubleSpinBox::valueChanged, this, handEdit);
    connect(m_bandwidth, &QDoubleSpinBox::valueChanged, this, handEdit);
    auto* sources = new QWidget(form);
    auto* sourceRow = new QHBoxLayout(sources);
    sourceRow->setContentsMargins(0, 0, 0, 0);
    m_fabricLink = new QPushButton(tr("From the fabric"), sources);
    m_fabricLink->setObjectName(QStringLiteral("linkFromFabric"));
    m_fabricLink->setToolTip(tr("α and β of the call's group as NCCL sees it: NVLink or PCIe inside a node, the NICs "
                                "(every rail NCCL's ring channels use) across nodes, NCCL's per-hop latency"));
    m_paperLink = new QPushButton(tr("The paper's example"), sources);
    m_paperLink->setObjectName(QStringLiteral("linkPapersExample"));
    m_paperLink->setToolTip(tr("The paper's testbed link: α = 10 µs, β = 10 Gb/s (also the scenario's link, which "
                               "stage 3/4 time textbook schedules with)"));
    sourceRow->addWidget(m_fabricLink);
    sourceRow->addWidget(m_paperLink);
    link->addRow(sources);
    m_linkNote = new QLabel(form);
    m_linkNote->setObjectName(QStringLiteral("linkNote"));
    m_linkNote->setWordWrap(true);
    m_linkNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    link->addRow(m_linkNote);
    connect(m_fabricLink, &QPushButton::clicked, this, [this] {
        m_linkChoice = LinkChoice::Fabric;
        updateLink();
        linkChanged();
    });
    connect(m_paperLink, &QPushButton::clicked, this, [this] {
        m_linkChoice = LinkChoice::Paper;
        const collective::LinkModel paper = collective::papersExampleLink();
        if (m_document->scenario().collectives.link.alphaSeconds != paper.alphaSeconds)
            m_document->setField(Field::LinkAlpha, FieldValue(paper.alphaSeconds));
        if (m_document->scenario().collectives.link.bandwidth != paper.bandwidth)
            m_document->setField(Field::LinkBandwidth, FieldValue(paper.bandwidth));
        updateLink();
        linkChanged();
    });

}

QWidget* CollectivePane::busBwPage() const
{
    return m_busbwScroll;
}

QWidget* CollectivePane::channelPage() const
{
    return m_channelScroll;
}

QString CollectivePane::linkWhy() const
{
    return m_linkDetail;
}

void CollectivePane::updateGroup()
{
    // The played call's group: the plan's (the nodes its GPUs span × its GPUs per node), or for the user's
    // own call N ranks packed onto the scenario's nodes.
    const scenario::Scenario& s = m_document->scenario();
    const parallel::Cluster cluster = s.hardware.cluster();
    int nodes = 1, perNode = 1;
    const parallel::PlanDerivation* plan = m_derivation ? m_derivation->stage3.get() : nullptr;
    const int entry = m_call->currentIndex();
    const int n = int(std::min<std::uint64_t>(m_spec.ranks, INT_MAX));
    if (!m_custom && plan && entry >= 0 && entry < int(m_planCalls.size())
        && std::size_t(m_planCalls[std::size_t(entry)]) < plan->comm.calls.size()) {
        const parallel::CollectiveCall& c = plan->comm.calls[std::size_t(m_planCalls[std::size_t(entry)])];
        if (c.firstGroup < plan->comm.groups.size())
            std::tie(nodes, perNode) = collective::groupShape(plan->comm.groups[c.firstGroup].members, cluster);
    } else {
        perNode = std::max(1, std::min(n, int(std::min<std::uint64_t>(cluster.gpusPerNode, INT_MAX))));
        nodes = (std::max(1, n) + perNode - 1) / perNode;
    }
    m_group.reset();
    m_ncclPrediction.reset();
    m_groupProblem.clear();
    m_ncclProblem.clear();
    auto g = collective::groupSystem({s.hardware.gpu, scenario::resolvedTopology(s)}, cluster, nodes, perNode);
    if (!g) {
        m_groupProblem = qs(g.error().message);
        return;
    }
    m_group = g.value();
    m_groupGraphs = nccl::searchGraphs(*m_group);
    m_groupTuning = nccl::tuneModel(*m_group, m_groupGraphs);
    // What NCCL runs for the call: the scenario's NCCL algorithm, else its own pick (also shown beside a
    // textbook schedule, as what NCCL would do).
    nccl::Request q;
    q.op = m_spec.op;
    q.bytes = m_spec.bytes;
    if (const collective::AlgorithmPick pick = s.collectives.pick(m_spec.op); pick.kind == collective::AlgorithmPick::Kind::Nccl)
        q.algorithm = pick.nccl;
    if (auto p = nccl::predict(m_groupTuning, *m_group, m_groupGraphs, q))
        m_ncclPrediction = p.value();
    else
        m_ncclProblem = qs(p.error().message);
}

void CollectivePane::updateLink()
{
    const collective::AlgorithmChoice& c = m_document->scenario().collectives;
    const collective::LinkModel paper = collective::papersExampleLink();
    LinkChoice choice = m_linkChoice;
    if (choice == LinkChoice::Auto)
        // A call NCCL runs: its group's fabric; a textbook schedule the scenario pins: the scenario's link,
        // which stage 3/4 time it with (the paper's presets: the paper's example).
        choice = c.pick(m_spec.op).usesNccl() ? LinkChoice::Fabric : c.link == paper ? LinkChoice::Paper : LinkChoice::Hand;
    switch (choice) {
    case LinkChoice::Fabric:
        if (m_group) {
            const collective::FabricLink f = collective::linkFromFabric(*m_group);
            m_link = f.link;
            m_linkSource = LinkSource::Fabric;
            m_linkFrom = tr("from the fabric of the call's group (%1 × %2 GPUs)")
                             .arg(m_group->nodes == 1 ? tr("1 node") : tr("%1 nodes").arg(m_group->nodes))
                             .arg(m_group->gpusPerNode);
            m_linkDetail = tr("From the fabric of the call's group (%1): %2.").arg(qs(m_group->gpu.id.empty() ? std::string("custom GPU") : m_group->gpu.id), qs(f.why));
            break;
        }
        m_link = paper;
        m_linkSource = LinkSource::PapersExample;
        m_linkFrom = tr("the paper's example (the group's fabric is unavailable)");
        m_linkDetail = tr("The paper's example: the call's group has no fabric NCCL can see (%1).").arg(m_groupProblem);
        break;
    case LinkChoice::Paper:
    case LinkChoice::Auto:
        m_link = paper;
        m_linkSource = LinkSource::PapersExample;
        m_linkFrom = tr("the paper's example");
        m_linkDetail = tr("The paper's example: β = 10 Gb/s (its testbed's Ethernet) and α = 10 µs per message, the "
                          "scenario's link, which stage 3/4 time textbook schedules with.");
        break;
    case LinkChoice::Hand:
        m_link = c.link;
        m_linkSource = m_linkChoice == LinkChoice::Hand ? LinkSource::Hand : LinkSource::Scenario;
        m_linkFrom = m_linkChoice == LinkChoice::Hand ? tr("your values") : tr("the scenario's link");
        m_linkDetail = m_linkChoice == LinkChoice::Hand
                           ? tr("Your values (kept as the scenario's link, collectives.alpha_s and bandwidth, until you "
                                "choose a source below).")
                           : tr("The scenario's link (collectives.alpha_s and bandwidth), which stage 3/4 time its "
                                "textbook schedules with.");
        break;
    }
    const bool was = m_updating;
    m_updating = true;
    {
        const QSignalBlocker b1(m_alpha), b2(m_bandwidth);
        m_alpha->setValue(m_link.alphaSeconds * 1e6);
        m_bandwidth->setValue(m_link.bandwidth * 8 / 1e9);
    }
    m_updating = was;
    m_linkNote->setText(m_linkDetail);
    m_alpha->setToolTip(tr("Latency α per message (Hockney model). %1").arg(m_linkDetail));
    m_bandwidth->setToolTip(tr("Bandwidth β of every link (10 Gb/s = 1.25 GB/s). %1").arg(m_linkDetail));
}

void CollectivePane::linkChanged()
{
    m_algorithms->setSpec(m_spec, m_link);
    updateCounts();
    scheduleCharts();
}

void CollectivePane::updateNccl()
{
    // Each is drawn when its tab shows (after an edit, only the visible one).
    QWidget* current = m_tabs->currentWidget();
    const bool busbw = current == m_busbwScroll && m_busbwStale, channels = current == m_channelScroll && m_channelsStale;
    if (!busbw && !channels)
        return;
    (busbw ? m_busbwStale : m_channelsStale) = false;
    const QString unavailable = tr("NCCL's view of this call's group is unavailable: %1").arg(m_groupProblem);
    const collective::AlgorithmPick pick = m_document->scenario().collectives.pick(m_spec.op);
    if (busbw) {
        if (!m_group)
            return m_busbw->clear(unavailable);
        const std::optional<nccl::Algorithm> chosen =
            pick.kind == collective::AlgorithmPick::Kind::Nccl ? std::optional<nccl::Algorithm>(pick.nccl) : std::nullopt;
        m_busbw->setCall(*m_group, m_spec.op, m_spec.bytes, chosen);
        return;
    }
    if (!m_group)
        return m_channelView->clear(unavailable);
    if (!m_ncclPrediction)
        return m_channelView->clear(tr("NCCL cannot run this call as asked: %1").arg(m_ncclProblem));
    m_channelView->setCall(*m_group, *m_ncclPrediction, m_spec.bytes,
                           pick.usesNccl() ? QString()
                                           : tr("The scenario pins the textbook %1 schedule for this collective; "
                                                "below is what NCCL's own pick would run.")
                                                 .arg(qs(collective::toString(pick))));
}

} // namespace tw::ui
