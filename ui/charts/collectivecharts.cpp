#include "collectivecharts.h"
#include "charts/chartframe.h"
#include "views/qtstrings.h"

#include <qcustomplot.h>

#include <QElapsedTimer>
#include <QFont>

#include <algorithm>
#include <cmath>
#include <functional>

namespace tw::ui {

using collective::Algorithm;
using collective::Op;

namespace {

// Okabe–Ito with black in 7th place (yellow, the faintest on white, last); each line also has its
// own marker shape, so colour is never the only cue.
const QColor kLineColors[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73),
                              QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00),
                              QColor(0x00, 0x00, 0x00), QColor(0xC8, 0xB4, 0x00)};
const QCPScatterStyle::ScatterShape kShapes[] = {QCPScatterStyle::ssDisc,     QCPScatterStyle::ssSquare,
                                                 QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond,
                                                 QCPScatterStyle::ssCross,    QCPScatterStyle::ssPlus,
                                                 QCPScatterStyle::ssStar,     QCPScatterStyle::ssTriangleInverted};
const QColor kInk(0x11, 0x18, 0x27);

// A log ticker whose labels are written by a function (bytes, seconds, plain counts).
class FormattedLogTicker : public QCPAxisTickerLog {
public:
    explicit FormattedLogTicker(std::function<QString(double)> format) : m_format(std::move(format)) {}

protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override { return m_format(tick); }

private:
    std::function<QString(double)> m_format;
};

bool cappedAlgorithm(Op op, Algorithm a)
{
    return a == Algorithm::BinaryTree || a == Algorithm::DoubleBinaryTree || (op == Op::AllToAll && a == Algorithm::Bruck);
}

// The call with another algorithm, N or M; hierarchical gets a node size that divides N.
collective::ScheduleSpec variant(const collective::ScheduleSpec& base, Algorithm a)
{
    collective::ScheduleSpec s = base;
    s.algorithm = a;
    if (a != Algorithm::Hierarchical)
        s.ranksPerNode = 0;
    else if (s.ranksPerNode == 0)
        s.ranksPerNode = CollectiveCharts::kDefaultRanksPerNode;
    if (a != Algorithm::BinaryTree && a != Algorithm::DoubleBinaryTree && a != Algorithm::Chain)
        s.pipelineChunks = 0;
    return s;
}

} // namespace

CollectiveCharts::CollectiveCharts(QWidget* parent)
    : QObject(parent)
{
    const QFont base = parent ? parent->font() : QFont();
    QFont heading = base;
    heading.setPointSizeF(base.pointSizeF() * 1.15);
    heading.setBold(true);
    static const char* const names[] = {"collectiveBytesChart", "collectiveBusiestChart", "collectiveTimeChart"};
    for (int m = 0; m < MetricCount; ++m) {
        auto* plot = new QCustomPlot(parent);
        plot->setObjectName(QString::fromLatin1(names[m]));
        plot->setMinimumHeight(240);
        keepPlotRoom(plot);
        plot->plotLayout()->clear();
        m_titles[std::size_t(m)] = new QCPTextElement(plot, QString(), heading);
        plot->plotLayout()->addElement(0, 0, m_titles[std::size_t(m)]);
        auto* panels = new QCPLayoutGrid;
        plot->plotLayout()->addElement(1, 0, panels);
        for (int s = 0; s < SweepCount; ++s) {
            auto* rect = new QCPAxisRect(plot);
            panels->addElement(0, s, rect);
            for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
                axis->setScaleType(QCPAxis::stLogarithmic);
                axis->setTickLabelFont(base);
                axis->setLabelFont(base);
                axis->grid()->setSubGridVisible(false);
                axis->grid()->setPen(QPen(QColor(0xd1, 0xd5, 0xdb), 1, Qt::DotLine));
            }
            rect->setupFullAxesBox(false);
        }
        // The legend in its own row under both panels, several columns wide.
        plot->legend = new QCPLegend;
        plot->legend->setVisible(true);
        plot->legend->setFont(base);
        plot->legend->setBorderPen(Qt::NoPen);
        plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
        plot->legend->setWrap(4);
        plot->plotLayout()->addElement(2, 0, plot->legend);
        plot->plotLayout()->setRowStretchFactor(0, 0.001);
        plot->plotLayout()->setRowStretchFactor(2, 0.001);
        plot->legend->setLayer(QStringLiteral("legend"));
        plot->addLayer(QStringLiteral("chosen"), plot->layer(QStringLiteral("main")), QCustomPlot::limAbove);
        m_plots[std::size_t(m)] = plot;
    }
}

CollectiveCharts::~CollectiveCharts() = default;

QString CollectiveCharts::title(Metric metric) const
{
    return m_titles[std::size_t(metric)]->text();
}

QCPGraph* CollectiveCharts::graph(Metric metric, Sweep sweep, Algorithm algorithm) const
{
    const auto& series = m_series[std::size_t(metric)][std::size_t(sweep)];
    const auto& graphs = m_graphs[std::size_t(metric)][std::size_t(sweep)];
    for (std::size_t i = 0; i < series.size() && i < graphs.size(); ++i)
        if (series[i].algorithm == algorithm)
            return graphs[i];
    return nullptr;
}

void CollectiveCharts::setSpec(const collective::ScheduleSpec& spec, const collective::LinkModel& link)
{
    m_spec = spec;
    m_link = link;
    QElapsedTimer clock;
    clock.start();

    m_rankSamples.clear();
    for (std::uint64_t n = 2; n <= 16; ++n)
        m_rankSamples.push_back(n);
    for (std::uint64_t n = 16; n < kMaxRanks; n *= 2) {
        m_rankSamples.push_back(n * 3 / 2);
        m_rankSamples.push_back(n * 2);
    }
    m_byteSamples.clear();
    for (int e = 10; e <= 30; e += 2)
        m_byteSamples.push_back(std::ldexp(1.0, e)); // 1 KiB … 1 GiB

    const auto& algorithms = collective::algorithmsFor(spec.op);
    for (auto& perMetric : m_series)
        for (auto& perSweep : perMetric)
            perSweep.clear();
    for (Algorithm a : algorithms) {
        const bool capped = cappedAlgorithm(spec.op, a);
        const collective::ScheduleSpec base = variant(spec, a);
        QString name = qs(collective::toString(a));
        if (a == Algorithm::Hierarchical)
            name += tr(" (%1 per node)").arg(base.ranksPerNode);
        QString nameN = name;
        if (capped)
            nameN += tr(" (N ≤ %1)").arg(kTreeMaxRanks);
        std::array<std::array<Series, SweepCount>, MetricCount> made;
        for (int m = 0; m < MetricCount; ++m)
            for (int s = 0; s < SweepCount; ++s) {
                made[std::size_t(m)][std::size_t(s)].algorithm = a;
                made[std::size_t(m)][std::size_t(s)].name = nameN;
                made[std::size_t(m)][std::size_t(s)].highlighted = a == spec.algorithm;
            }
        auto add = [&](Sweep sweep, double x, const collective::Counts& c) {
            const double values[] = {c.totalBytes, c.maxRankSentBytes, c.timeSeconds};
            for (int m = 0; m < MetricCount; ++m) {
                if (!(values[m] > 0))
                    continue;
                Series& s = made[std::size_t(m)][std::size_t(sweep)];
                s.x.push_back(x);
                s.y.push_back(values[m]);
            }
        };
        if (spec.bytes > 0)
            for (std::uint64_t n : m_rankSamples) {
                if (capped && n > kTreeMaxRanks)
                    break;
                collective::ScheduleSpec s = base;
                s.ranks = n;
                s.root = 0;
                if (collective::validate(s).empty())
                    add(VersusRanks, double(n), collective::count(s, link));
            }
        for (double bytes : m_byteSamples) {
            collective::ScheduleSpec s = base;
            s.bytes = bytes;
            if (collective::validate(s).empty())
                add(VersusBytes, bytes, collective::count(s, link));
        }
        for (int m = 0; m < MetricCount; ++m)
            for (int s = 0; s < SweepCount; ++s)
                m_series[std::size_t(m)][std::size_t(s)].push_back(std::move(made[std::size_t(m)][std::size_t(s)]));
    }
    m_computeMs = double(clock.nsecsElapsed()) * 1e-6;
    redraw();
}

void CollectiveCharts::setDisplayUnits(DisplayUnits units)
{
    if (units == m_units)
        return;
    m_units = units;
    redraw();
}

void CollectiveCharts::redraw()
{
    const QString op = qs(collective::displayName(m_spec.op));
    const QString heads[] = {tr("%1: total bytes on the wire").arg(op), tr("%1: bytes sent by the busiest rank").arg(op),
                             tr("%1: time, α–β model (α = %2, β = %3/s)")
                                 .arg(op, qs(formatSeconds(m_link.alphaSeconds)), qs(formatBytes(m_link.bandwidth, m_units)))};
    const QString yLabels[] = {tr("bytes"), tr("bytes"), tr("time")};
    auto bytesLabel = [](double v) { return QString::fromStdString(formatBytes(v, {ByteUnits::Binary, 3})); };
    const DisplayUnits units = m_units;
    auto decimalBytes = [units](double v) { return QString::fromStdString(formatBytes(v, units)); };
    auto secondsLabel = [](double v) { return QString::fromStdString(formatSeconds(v, 2)); };
    auto countLabel = [](double v) { return QString::number(std::llround(v)); };

    for (int m = 0; m < MetricCount; ++m) {
        QCustomPlot* plot = m_plots[std::size_t(m)];
        plot->clearPlottables();
        plot->clearItems();
        m_titles[std::size_t(m)]->setText(heads[m]);
        const auto rects = plot->axisRects();
        for (int s = 0; s < SweepCount; ++s) {
            QCPAxisRect* rect = rects[s];
            QCPAxis* x = rect->axis(QCPAxis::atBottom);
            QCPAxis* y = rect->axis(QCPAxis::atLeft);
            auto xt = QSharedPointer<FormattedLogTicker>::create(s == VersusRanks ? std::function<QString(double)>(countLabel)
                                                                                  : std::function<QString(double)>(bytesLabel));
            xt->setLogBase(s == VersusRanks ? 2 : 4);
            xt->setSubTickCount(0);
            x->setTicker(xt);
            auto yt = QSharedPointer<FormattedLogTicker>::create(m == Time ? std::function<QString(double)>(secondsLabel)
                                                                           : std::function<QString(double)>(decimalBytes));
            yt->setLogBase(10);
            yt->setSubTickCount(0);
            y->setTicker(yt);
            x->setLabel(s == VersusRanks ? tr("ranks N (M = %1)").arg(qs(formatBytes(m_spec.bytes, m_units)))
                                         : tr("message size M (N = %1)").arg(m_spec.ranks));
            y->setLabel(yLabels[m]);

            auto& graphs = m_graphs[std::size_t(m)][std::size_t(s)];
            graphs.clear();
            const auto& series = m_series[std::size_t(m)][std::size_t(s)];
            QCPGraph* chosen = nullptr;
            const Series* chosenSeries = nullptr;
            double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
            for (std::size_t i = 0; i < series.size(); ++i) {
                const Series& se = series[i];
                auto* g = new QCPGraph(x, y);
                QColor color = kLineColors[i % std::size(kLineColors)];
                if (!se.highlighted)
                    color.setAlpha(190);
                g->setPen(QPen(color, se.highlighted ? 4.0 : 1.6));
                g->setScatterStyle(QCPScatterStyle(kShapes[i % std::size(kShapes)], color, color, se.highlighted ? 8 : 5));
                g->setName(se.highlighted ? se.name + tr("  ◀ chosen") : se.name);
                g->setData(QVector<double>(se.x.begin(), se.x.end()), QVector<double>(se.y.begin(), se.y.end()), true);
                if (s != VersusRanks)
                    g->removeFromLegend(); // one legend entry per algorithm
                graphs.push_back(g);
                for (std::size_t k = 0; k < se.x.size(); ++k) {
                    xmin = std::min(xmin, se.x[k]);
                    xmax = std::max(xmax, se.x[k]);
                    ymin = std::min(ymin, se.y[k]);
                    ymax = std::max(ymax, se.y[k]);
                }
                if (se.highlighted) {
                    chosen = g;
                    chosenSeries = &se;
                }
            }
            if (xmax > 0) {
                x->setRange(xmin / 1.15, xmax * 1.15);
                y->setRange(ymin / 2, ymax * 4);
            } else {
                x->setRange(s == VersusRanks ? 2 : 1024, s == VersusRanks ? 1024 : 1 << 30);
                y->setRange(1, 10);
            }
            if (chosen && chosenSeries && !chosenSeries->x.empty()) {
                chosen->setLayer(QStringLiteral("chosen")); // over the other lines
                // Its name at its last point, and a ring on the call itself (N or M of the spec).
                auto* label = new QCPItemText(plot);
                label->setClipAxisRect(rect);
                label->setClipToAxisRect(true);
                label->position->setAxes(x, y);
                label->position->setAxisRect(rect);
                label->position->setCoords(chosenSeries->x.back(), chosenSeries->y.back());
                label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
                label->setPadding(QMargins(2, 0, 6, 6));
                QFont f = x->tickLabelFont();
                f.setBold(true);
                label->setFont(f);
                label->setColor(kInk);
                label->setText(qs(collective::toString(chosenSeries->algorithm)));
                const double at = s == VersusRanks ? double(m_spec.ranks) : m_spec.bytes;
                if (at >= chosenSeries->x.front() && at <= chosenSeries->x.back()) {
                    auto* tracer = new QCPItemTracer(plot);
                    tracer->setClipAxisRect(rect);
                    tracer->setGraph(chosen);
                    tracer->setGraphKey(at);
                    tracer->setInterpolating(true);
                    tracer->setStyle(QCPItemTracer::tsCircle);
                    tracer->setSize(16);
                    tracer->setPen(QPen(kInk, 2));
                    tracer->setBrush(Qt::NoBrush);
                }
            }
        }
        plot->replot();
    }
}

// ---------------------------------------------------------------------------------------------

AlgorithmTableModel::AlgorithmTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void AlgorithmTableModel::setSpec(const collective::ScheduleSpec& spec, const collective::LinkModel& link)
{
    beginResetModel();
    m_spec = spec;
    m_rows.clear();
    for (Algorithm a : collective::algorithmsFor(spec.op)) {
        Row row;
        row.algorithm = a;
        collective::ScheduleSpec s = variant(spec, a);
        if (a == spec.algorithm)
            s = spec; // the call exactly as given
        const auto errors = collective::validate(s);
        if (errors.empty()) {
            row.counts = collective::count(s, link);
            row.formula = qs(collective::closedForm(s).formula);
        } else {
            row.error = qs(errors.front().toString());
        }
        m_rows.push_back(std::move(row));
    }
    endResetModel();
}

void AlgorithmTableModel::setDisplayUnits(DisplayUnits units)
{
    if (units == m_units)
        return;
    m_units = units;
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1), {Qt::DisplayRole});
}

Algorithm AlgorithmTableModel::algorithmAt(int row) const
{
    return row >= 0 && row < rowCount() ? m_rows[std::size_t(row)].algorithm : Algorithm{};
}

int AlgorithmTableModel::rowOf(Algorithm algorithm) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].algorithm == algorithm)
            return int(i);
    return -1;
}

const std::optional<collective::Counts>& AlgorithmTableModel::countsAt(int row) const
{
    static const std::optional<collective::Counts> none;
    return row >= 0 && row < rowCount() ? m_rows[std::size_t(row)].counts : none;
}

int AlgorithmTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int AlgorithmTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AlgorithmTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const Row& row = m_rows[std::size_t(index.row())];
    const bool selected = row.algorithm == m_spec.algorithm;
    const auto& c = row.counts;
    auto raw = [&]() -> QVariant {
        if (index.column() == AlgorithmColumn)
            return qs(collective::toString(row.algorithm));
        if (!c)
            return {};
        switch (index.column()) {
        case StepsColumn: return qulonglong(c->steps);
        case TotalBytesColumn: return c->totalBytes;
        case BusiestRankColumn: return c->maxRankSentBytes;
        case TimeColumn: return c->timeSeconds;
        case BusBwColumn: return c->busbw ? QVariant(*c->busbw) : QVariant();
        }
        return {};
    };
    switch (role) {
    case Qt::DisplayRole: {
        if (index.column() == AlgorithmColumn)
            return qs(collective::toString(row.algorithm));
        if (!c)
            return QStringLiteral("—");
        switch (index.column()) {
        case StepsColumn: return qs(formatInteger(std::int64_t(c->steps)));
        case TotalBytesColumn: return qs(formatBytes(c->totalBytes, m_units));
        case BusiestRankColumn: return qs(formatBytes(c->maxRankSentBytes, m_units));
        case TimeColumn: return qs(formatSeconds(c->timeSeconds));
        case BusBwColumn: return c->busbw ? qs(formatBytes(*c->busbw, m_units)) + QStringLiteral("/s") : QStringLiteral("—");
        }
        break;
    }
    case RawValueRole: return raw();
    case SelectedRole: return selected;
    case Qt::FontRole:
        if (selected) {
            QFont f;
            f.setBold(true);
            return f;
        }
        break;
    case Qt::TextAlignmentRole:
        return index.column() == AlgorithmColumn ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
                                                 : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ToolTipRole:
        if (!c)
            return row.error;
        if (index.column() == AlgorithmColumn)
            return qs(collective::describe(m_spec.op, row.algorithm));
        if (index.column() == TimeColumn)
            return tr("Σ over steps of (α + the step's largest message / β), counted from the schedule");
        if (index.column() == BusBwColumn)
            return tr("nccl-tests: algbw = M / time, busbw = algbw × %1").arg(c->busbwFactor ? QString::number(*c->busbwFactor, 'g', 4) : QStringLiteral("—"));
        return row.formula.isEmpty() ? tr("Counted from the schedule's transfers") : tr("Counted from the schedule; closed form: %1").arg(row.formula);
    default: break;
    }
    return {};
}

QVariant AlgorithmTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case AlgorithmColumn: return tr("Algorithm");
    case StepsColumn: return tr("Steps");
    case TotalBytesColumn: return tr("Total bytes");
    case BusiestRankColumn: return tr("Busiest rank sends");
    case TimeColumn: return tr("Time (α–β)");
    case BusBwColumn: return tr("busbw");
    }
    return {};
}

} // namespace tw::ui
