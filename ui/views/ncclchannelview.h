#pragma once
// Stage 4, "How NCCL runs it" (issue #17): the played call as NCCL runs it on the call's group — the
// algorithm and protocol of NCCL's pick (or the scenario's NCCL algorithm), and the channels of its graph
// (collective/ncclgraph.h searchGraphs): each ring channel in its own colour with the NIC (rail) it
// leaves and enters a node by, tree channels as their chain from the head plus the double binary tree
// across nodes, NVLS as each GPU's traffic into the NVSwitch and out of it (nvlsBytesPerGpuLink). Every
// node runs the same layout (NCCL's graphs are per node), so one node is drawn, with the hop to the next.

#include "base/units.h"
#include "collective/nccl.h"
#include "collective/ncclgraph.h"

#include <QWidget>

#include <optional>
#include <vector>

namespace tw::ui {

class NcclChannelView : public QWidget {
    Q_OBJECT
public:
    // One drawn row: a ring or tree channel, or a group of channels with the same layout.
    struct Row {
        std::vector<int> channels; // the graph's channel indices drawn by this row
        nccl::Channel layout;
        QColor color;
    };

    explicit NcclChannelView(QWidget* parent = nullptr);

    // The call `prediction` (algorithm, protocol, channels) of `bytes` on `system`; `context` (if any) is
    // the first note ("the scenario pins a textbook schedule; this is NCCL's pick").
    void setCall(const nccl::System& system, const nccl::Prediction& prediction, double bytes, const QString& context = {});
    void clear(const QString& why);
    void setDisplayUnits(DisplayUnits units);

    [[nodiscard]] QString headline() const { return m_headline; }
    [[nodiscard]] QString protocolLine() const { return m_protocolLine; }
    [[nodiscard]] const std::vector<Row>& rows() const { return m_rows; }
    [[nodiscard]] bool drawsSwitch() const { return m_switch; } // NVLS: traffic into and out of the NVSwitch
    [[nodiscard]] std::optional<nccl::Prediction> prediction() const { return m_prediction; }
    [[nodiscard]] QSize sizeHint() const override;
    [[nodiscard]] QSize minimumSizeHint() const override { return {480, 160}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    [[nodiscard]] int contentHeight() const;

    nccl::System m_system;
    nccl::Graphs m_graphs;
    std::optional<nccl::Prediction> m_prediction;
    double m_bytes = 0;
    QString m_context;
    std::vector<Row> m_rows;
    bool m_switch = false;
    QString m_headline, m_protocolLine;
    QStringList m_notes;
    DisplayUnits m_units;
};

} // namespace tw::ui
