#include "measuredchart.h"
#include "charts/chartframe.h"

#include "views/palette.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace tw::ui {


MeasuredChart::MeasuredChart(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("measuredChart"));
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("measuredSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("measuredPlot"));
    keepPlotRoom(m_plot);
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_plot->xAxis->setLabel(tr("ranks N"));
    m_plot->legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    m_plot->legend->setFont(small);
    // The legend beside the axes, not over the points.
    auto* legendRect = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(0, 1, legendRect);
    legendRect->addElement(0, 0, m_plot->legend);
    // An empty row under the legend: the column's height is not capped at the legend's (an empty
    // legend held the axes to ~100 px however tall the chart).
    legendRect->addElement(1, 0, new QCPLayoutElement(m_plot));
    legendRect->setRowStretchFactor(0, 0.001);
    legendRect->setMargins(QMargins(0, 8, 8, 8));
    m_plot->plotLayout()->setColumnStretchFactor(1, 0.001);
    m_plot->legend->setBorderPen(Qt::NoPen);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_plot, 1);

    const auto rows = collective::openmpi::parseDataset(collective::openmpi::embeddedDataset());
    if (rows)
        m_all = collective::openmpi::compare(rows.value());
    else
        m_datasetError = qs(rows.error().toString());
}

void MeasuredChart::setCall(collective::Op op, collective::Algorithm algorithm)
{
    m_op = op;
    m_algorithm = algorithm;
    m_shown.clear();
    for (const auto& c : m_all)
        if (c.row.measuredCase.op == op && !c.excluded && c.prediction.modelled && c.prediction.spec.algorithm == algorithm)
            m_shown.push_back(c);
    redraw();
}

void MeasuredChart::setDisplayUnits(DisplayUnits units)
{
    if (units == m_units)
        return;
    m_units = units;
    redraw();
}

QString MeasuredChart::summary() const
{
    return m_summary->text();
}

void MeasuredChart::redraw()
{
    m_plot->clearGraphs();
    const QString op = qs(collective::toString(m_op));
    const QString algo = qs(collective::toString(m_algorithm));
    if (!m_datasetError.isEmpty()) {
        m_summary->setText(tr("The measured dataset cannot be read: %1").arg(m_datasetError));
        m_plot->replot();
        return;
    }
    if (m_shown.empty()) {
        m_summary->setText(tr("No Open MPI measurement maps onto %1 %2: Open MPI 4.1's coll/tuned has no such "
                              "algorithm, or its version differs from tokenwire's in a way the model excludes "
                              "(tokenwire-cli validate lists every row).")
                               .arg(op, algo));
        m_plot->replot();
        return;
    }
    // One predicted curve (N = 2 … 8) and one set of measured points per (Open MPI algorithm, S).
    std::map<std::pair<int, double>, std::vector<const collective::openmpi::Comparison*>> groups;
    std::set<std::string> names;
    double lo = 1e300, hi = 0, minRatio = 1e300, maxRatio = 0;
    for (const auto& c : m_shown) {
        groups[{c.row.measuredCase.algorithmId, c.row.measuredCase.bytes}].push_back(&c);
        names.insert(c.row.algorithmName);
        minRatio = std::min(minRatio, c.ratio);
        maxRatio = std::max(maxRatio, c.ratio);
    }
    // Colour = message size S, marker = Open MPI's algorithm; the legend names each once.
    std::map<double, QColor> inkOf;
    std::map<int, QCPScatterStyle::ScatterShape> shapeOf;
    const QCPScatterStyle::ScatterShape shapes[] = {QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare,
                                                    QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond};
    for (const auto& [key, rows] : groups) {
        inkOf.try_emplace(key.second, palette::categorical(int(inkOf.size()) % palette::kCategoricalSize));
        shapeOf.try_emplace(key.first, shapes[shapeOf.size() % std::size(shapes)]);
    }
    std::set<double> sizesNamed;
    std::set<int> algorithmsNamed;
    for (const auto& [key, rows] : groups) {
        const auto& [id, bytes] = key;
        const QColor ink = inkOf[bytes];
        QCPGraph* predicted = m_plot->addGraph();
        predicted->setName(tr("predicted, S = %1").arg(QString::fromStdString(formatBytes(bytes, {ByteUnits::Binary, 3}))));
        predicted->setPen(QPen(ink, 1.6));
        for (std::uint64_t n = 2; n <= 8; ++n) {
            const auto p = collective::openmpi::predict({m_op, id, n, bytes});
            if (p.modelled && p.payloadBytes > 0) {
                predicted->addData(double(n), p.payloadBytes);
                lo = std::min(lo, p.payloadBytes);
                hi = std::max(hi, p.payloadBytes);
            }
        }
        if (!sizesNamed.insert(bytes).second)
            predicted->removeFromLegend();
        QCPGraph* measured = m_plot->addGraph();
        measured->setName(tr("measured: %1 (coll/tuned %2)")
                              .arg(QString::fromStdString(rows.front()->row.algorithmName))
                              .arg(id));
        measured->setLineStyle(QCPGraph::lsNone);
        measured->setScatterStyle(QCPScatterStyle(shapeOf[id], ink, Qt::white, 9));
        for (const auto* c : rows) {
            measured->addData(double(c->row.measuredCase.ranks), c->row.payloadBytes);
            lo = std::min(lo, c->row.payloadBytes);
            hi = std::max(hi, c->row.payloadBytes);
        }
        if (!algorithmsNamed.insert(id).second)
            measured->removeFromLegend();
    }
    m_plot->xAxis->setRange(1.5, 8.5);
    m_plot->yAxis->setRange(lo / 2, hi * 4);
    m_plot->yAxis->setLabel(tr("bytes to TCP per call"));
    QStringList algorithms;
    for (const std::string& n : names)
        algorithms << QString::fromStdString(n);
    m_summary->setText(tr("<b>%1 %2, measured</b>: Open MPI 4.1 (%3) over TCP on loopback, %4 calls. Markers: the "
                          "bytes its ranks handed to TCP; lines: tokenwire's prediction. Measured/predicted "
                          "%5 – %6 (scripts/measure.sh; tokenwire-cli validate lists every row).")
                           .arg(op, algo, algorithms.join(QStringLiteral(", ")))
                           .arg(m_shown.size())
                           .arg(QString::number(minRatio, 'f', 4), QString::number(maxRatio, 'f', 4)));
    m_plot->setToolTip(tr("Measured/predicted over these calls: %1 – %2 (the model is held to within 2 %)")
                           .arg(QString::number(minRatio, 'f', 4), QString::number(maxRatio, 'f', 4)));
    m_plot->replot();
}

} // namespace tw::ui
