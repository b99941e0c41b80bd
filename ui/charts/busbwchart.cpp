#include "busbwchart.h"
#include "charts/chartframe.h"

#include "views/palette.h"

#include "collective/busbw.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <QElapsedTimer>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tw::ui {

namespace {

// nccl-tests' sizes are powers of two: the size axis keeps binary units whatever the viewer's setting.
QString binarySize(double b)
{
    DisplayUnits u;
    u.bytes = ByteUnits::Binary;
    return qs(formatBytes(b, u));
}

QString gbps(double bytesPerSecond)
{
    return QString::number(bytesPerSecond / 1e9, 'g', 4) + QStringLiteral(" GB/s");
}

// One colour and marker per NCCL algorithm, the same in every chart of the pane.
QColor colorOf(std::optional<nccl::Algorithm> a)
{
    return a ? palette::categorical(static_cast<int>(*a) % palette::kCategoricalSize) : palette::categorical(5);
}
QCPScatterStyle::ScatterShape shapeOf(std::optional<nccl::Algorithm> a)
{
    static const QCPScatterStyle::ScatterShape shapes[] = {QCPScatterStyle::ssDisc,    QCPScatterStyle::ssSquare,
                                                          QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond,
                                                          QCPScatterStyle::ssCross,    QCPScatterStyle::ssPlus,
                                                          QCPScatterStyle::ssStar};
    return a ? shapes[static_cast<int>(*a) % 7] : QCPScatterStyle::ssTriangleInverted;
}

QString pairName(const nccl::Prediction& p)
{
    return qs(nccl::algorithmLabel(p)) + QLatin1Char('/') + qs(nccl::toString(p.protocol));
}

} // namespace

BusBwChart::BusBwChart(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("busBwChart"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("busBwSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("busBwPlot"));
    m_plot->setMinimumHeight(340);
    keepPlotRoom(m_plot);
    layout->addWidget(m_plot, 1);
    const QFont base = font();
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTickLabelFont(base);
        axis->setLabelFont(base);
        axis->grid()->setSubGridVisible(false);
        axis->grid()->setPen(QPen(QColor(0xd1, 0xd5, 0xdb), 1, Qt::DotLine));
    }
    // x: nccl-tests' sizes, every 32× labelled in binary units.
    auto xt = QSharedPointer<QCPAxisTickerText>::create();
    for (int e = 3; e <= 33; e += 5)
        xt->addTick(std::ldexp(1.0, e), binarySize(std::ldexp(1.0, e)));
    m_plot->xAxis->setTicker(xt);
    m_plot->xAxis->setRange(6, 11e9);
    auto yt = QSharedPointer<QCPAxisTickerLog>::create();
    yt->setLogBase(10);
    m_plot->yAxis->setTicker(yt);
    m_plot->yAxis->setNumberFormat(QStringLiteral("gb"));
    m_plot->yAxis->setNumberPrecision(0);
    m_plot->xAxis->setLabel(tr("message size (nccl-tests' buffer, bf16)"));
    m_plot->yAxis->setLabel(tr("bus bandwidth busbw (GB/s)"));
    m_plot->axisRect()->setupFullAxesBox(false);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(base);
    m_plot->legend->setBrush(QColor(255, 255, 255, 225));
    m_plot->legend->setBorderPen(QPen(QColor(0xd1, 0xd5, 0xdb)));
    // Bottom right: large messages have a high busbw, small ones sit at the left.
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    clear(tr("No call yet."));
}

void BusBwChart::setDisplayUnits(DisplayUnits units)
{
    m_units = units;
    redraw();
}

QCPGraph* BusBwChart::graphOf(const QString& name) const
{
    for (std::size_t i = 0; i < m_curves.size() && i < m_graphs.size(); ++i)
        if (m_curves[i].name == name)
            return m_graphs[i];
    return nullptr;
}

QString BusBwChart::summary() const
{
    return m_summary->text();
}

void BusBwChart::clear(const QString& why)
{
    m_curves.clear();
    m_marker.reset();
    m_title = why;
    m_note.clear();
    m_summary->setToolTip(QString());
    redraw();
}

void BusBwChart::setCall(const nccl::System& system, collective::Op op, double callBytes,
                         std::optional<nccl::Algorithm> chosen)
{
    QElapsedTimer timer;
    timer.start();
    m_op = op;
    m_callBytes = callBytes;
    m_curves.clear();
    m_marker.reset();
    if (system.ranks() < 2) {
        clear(tr("One rank: a collective of one GPU moves no bytes between GPUs, so it has no bus bandwidth."));
        return;
    }
    const nccl::Graphs graphs = nccl::searchGraphs(system);
    const nccl::Tuning tuning = nccl::tuneModel(system, graphs);
    nccl::Sweep sweep;
    sweep.op = op;
    QStringList off, offNames;
    auto addCurve = [&](const QString& name, std::optional<nccl::Algorithm> a) {
        sweep.algorithm = a;
        auto rows = nccl::sweep(tuning, system, graphs, sweep);
        if (!rows) {
            const std::string& why = a ? tuning.disabledWhy[static_cast<int>(*a)] : std::string();
            off << (a ? tr("%1 %2").arg(qs(nccl::toString(*a)), qs(why.empty() ? rows.error().message : why)) : qs(rows.error().message));
            offNames << (a ? qs(nccl::toString(*a)) : tr("p2p"));
            return;
        }
        Curve c;
        c.name = name;
        c.algorithm = a;
        c.rows = std::move(rows.value());
        for (const nccl::Prediction& p : c.rows)
            if (p.busbw && *p.busbw > 0) {
                c.bytes.push_back(p.bytes);
                c.busbw.push_back(*p.busbw);
            }
        m_curves.push_back(std::move(c));
    };
    const std::vector<nccl::Algorithm> algorithms = nccl::algorithmsFor(op);
    if (algorithms.empty())
        addCurve(QStringLiteral("p2p"), std::nullopt);
    for (nccl::Algorithm a : algorithms)
        addCurve(qs(nccl::toString(a)), a);
    const std::size_t algorithmCurves = m_curves.size();
    addCurve(tr("NCCL's pick"), std::nullopt);
    if (m_curves.size() == algorithmCurves) { // auto failed too: nothing NCCL can run here
        clear(tr("NCCL cannot run %1 here: %2").arg(qs(collective::displayName(op)), off.join(QStringLiteral("; "))));
        return;
    }
    // NCCL's pick along the sizes: "tree/ll up to 64 KiB, ring/ll128 up to 16 MiB, ring/simple above".
    QStringList segments;
    const std::vector<nccl::Prediction>& pick = m_curves.back().rows;
    for (std::size_t i = 0; i < pick.size(); ++i) {
        const bool last = i + 1 == pick.size();
        if (!last && pairName(pick[i + 1]) == pairName(pick[i]))
            continue;
        const bool first = segments.isEmpty();
        segments << (last && !first ? tr("%1 above").arg(pairName(pick[i]))
                                    : tr("%1 up to %2").arg(pairName(pick[i]), binarySize(pick[i].bytes)));
    }
    // The marker: the played call as NCCL runs it (its pick, or the algorithm the scenario names).
    nccl::Request q;
    q.op = op;
    q.bytes = callBytes;
    q.algorithm = chosen;
    const auto p = nccl::predict(tuning, system, graphs, q);
    if (p && p->busbw)
        m_marker = p.value();
    QString markerProblem;
    if (!p)
        markerProblem = qs(p.error().message);
    m_title = tr("<b>%1 on %2</b>").arg(qs(collective::displayName(op)).toHtmlEscaped(), qs(system.fabric).toHtmlEscaped());
    m_note = tr("NCCL's pick (the thick grey line): %1.").arg(segments.join(QStringLiteral(", ")));
    // The algorithms NCCL has for the op but not here, by name (why in the tooltip).
    if (!offNames.isEmpty())
        m_note += tr(" Off here: %1 (hover for why).").arg(offNames.join(QStringLiteral(", ")));
    if (!markerProblem.isEmpty())
        m_note += tr(" This call cannot run so: %1.").arg(markerProblem.toHtmlEscaped());
    m_summary->setToolTip(off.join(QLatin1Char('\n')));
    m_note += tr(" Each algorithm at its best protocol per size; predictions of NCCL 2.30.7's model, not "
                 "measurements (Help → How the numbers are computed, nccl.md).");
    redraw();
    m_ms = double(timer.nsecsElapsed()) / 1e6;
}

void BusBwChart::redraw()
{
    m_plot->clearGraphs();
    m_graphs.clear();
    m_pickGraph = nullptr;
    m_markerGraph = nullptr;
    m_summary->setText(m_note.isEmpty() ? m_title : m_title + QStringLiteral("<br>") + m_note);
    double lo = 1e300, hi = 0;
    // The pick first, thick and translucent, so the algorithms' curves run on top of it.
    const auto add = [&](const Curve& c) {
        QCPGraph* g = m_plot->addGraph();
        g->setName(c.name);
        QVector<double> x(c.bytes.begin(), c.bytes.end()), y;
        for (double v : c.busbw) {
            y << v / 1e9;
            lo = std::min(lo, v / 1e9);
            hi = std::max(hi, v / 1e9);
        }
        g->setData(x, y, true);
        return g;
    };
    if (!m_curves.empty()) {
        const Curve& pick = m_curves.back();
        m_pickGraph = add(pick);
        QColor ink = palette::kInk;
        ink.setAlpha(70);
        m_pickGraph->setPen(QPen(ink, 10, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        m_pickGraph->setName(tr("NCCL's pick (auto)"));
        for (std::size_t i = 0; i + 1 < m_curves.size(); ++i) {
            const Curve& c = m_curves[i];
            QCPGraph* g = add(c);
            g->setPen(QPen(colorOf(c.algorithm), 2));
            g->setScatterStyle(QCPScatterStyle(shapeOf(c.algorithm), colorOf(c.algorithm), 5));
            m_graphs.push_back(g);
        }
        m_graphs.push_back(m_pickGraph);
    }
    if (m_marker) {
        m_markerGraph = m_plot->addGraph();
        m_markerGraph->setLineStyle(QCPGraph::lsNone);
        m_markerGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(palette::kInk, 2.5), Qt::NoBrush, 15));
        m_markerGraph->setData({m_marker->bytes}, {*m_marker->busbw / 1e9});
        m_markerGraph->setName(tr("this call: %1 → %2, %3")
                                   .arg(qs(formatBytes(m_marker->bytes, m_units)), pairName(*m_marker), gbps(*m_marker->busbw)));
        lo = std::min(lo, *m_marker->busbw / 1e9);
        hi = std::max(hi, *m_marker->busbw / 1e9);
    }
    if (hi > 0)
        m_plot->yAxis->setRange(lo / 2, hi * 3);
    else
        m_plot->yAxis->setRange(1e-3, 1e3);
    m_plot->replot();
}

} // namespace tw::ui
