#include "tokencharts.h"
#include "charts/chartframe.h"

#include "text/dataset.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QStackedWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <cmath>

namespace tw::ui {

namespace {
// A plot with a title row, readable fonts and labelled axes.
QCustomPlot* makePlot(const QString& title, const QString& xLabel, const QString& yLabel, QWidget* parent)
{
    auto* plot = new QCustomPlot(parent);
    keepPlotRoom(plot);
    QFont base = parent->font();
    QFont tick = base;
    tick.setPointSizeF(base.pointSizeF() * 0.95);
    QFont label = base;
    QFont heading = base;
    heading.setPointSizeF(base.pointSizeF() * 1.15);
    heading.setBold(true);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, heading));
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setTickLabelFont(tick);
        axis->setLabelFont(label);
    }
    plot->xAxis->setLabel(xLabel);
    plot->yAxis->setLabel(yLabel);
    plot->setMinimumHeight(180);
    // One series, named by the axis titles: no legend to read (tests/ui/tst_layout.cpp checks the titles).
    plot->setProperty("singleSeries", true);
    return plot;
}
} // namespace

TokenCharts::TokenCharts(QWidget* parent)
    : QWidget(parent)
{
    m_stack = new QStackedWidget(this);
    m_empty = new QLabel(tr("Type some text (or open a file) to see how long its tokens are\n"
                            "and how often each one occurs."),
                         this);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setObjectName(QStringLiteral("chartsEmpty"));
    m_empty->setForegroundRole(QPalette::PlaceholderText);

    m_tabs = new QTabWidget(this);
    m_histogram = makePlot(tr("How many bytes each token covers"), tr("token length (bytes)"),
                           tr("number of tokens"), this);
    m_histogram->setObjectName(QStringLiteral("lengthHistogram"));
    auto* bars = new QCPBars(m_histogram->xAxis, m_histogram->yAxis);
    bars->setWidth(0.8);
    bars->setPen(QPen(QColor(0x2b, 0x6c, 0xb0)));
    bars->setBrush(QColor(0x7f, 0xb2, 0xe5));
    auto intTicker = QSharedPointer<QCPAxisTickerFixed>::create();
    intTicker->setTickStep(1.0);
    intTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_histogram->xAxis->setTicker(intTicker);
    // Counts are whole: no "2.5 tokens" tick on a short text.
    auto countTicker = QSharedPointer<QCPAxisTickerFixed>::create();
    countTicker->setTickStep(1.0);
    countTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_histogram->yAxis->setTicker(countTicker);

    m_rank = makePlot(tr("Rank × frequency (Zipf's law)"), tr("rank of the token (1 = most frequent)"),
                      tr("occurrences"), this);
    m_rank->setObjectName(QStringLiteral("rankFrequency"));
    for (QCPAxis* axis : {m_rank->xAxis, m_rank->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
        ticker->setLogBase(10);
        ticker->setSubTickCount(8);
        axis->setTicker(ticker);
        axis->setNumberFormat(QStringLiteral("gb"));
        axis->setNumberPrecision(0);
    }
    auto* graph = m_rank->addGraph();
    graph->setPen(QPen(QColor(0xc0, 0x4a, 0x2b), 2.0));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));

    m_tabs->addTab(m_histogram, tr("Token lengths"));
    m_tabs->addTab(m_rank, tr("Rank × frequency"));
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_tabs);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);
    setStats(nullptr);
}

bool TokenCharts::showsCharts() const
{
    return m_stack->currentWidget() == m_tabs;
}

void TokenCharts::setStats(const text::DatasetStats* stats)
{
    if (!stats || stats->tokens == 0) {
        m_stack->setCurrentWidget(m_empty);
        return;
    }
    m_stack->setCurrentWidget(m_tabs);

    QVector<double> keys, values;
    double maxCount = 0;
    for (std::size_t k = 0; k < stats->lengthHistogram.size(); ++k) {
        if (stats->lengthHistogram[k] == 0 && k == 0)
            continue;
        keys.push_back(static_cast<double>(k));
        values.push_back(static_cast<double>(stats->lengthHistogram[k]));
        maxCount = std::max(maxCount, values.back());
    }
    auto* bars = qobject_cast<QCPBars*>(m_histogram->plottable(0));
    bars->setData(keys, values, true);
    const double maxLen = keys.isEmpty() ? 1.0 : keys.back();
    m_histogram->xAxis->setRange(0.3, maxLen + 0.7);
    static_cast<QCPAxisTickerFixed*>(m_histogram->xAxis->ticker().data())
        ->setTickStep(maxLen > 24 ? 5.0 : (maxLen > 12 ? 2.0 : 1.0));
    m_histogram->yAxis->setRange(0, maxCount * 1.1 + 1);
    m_histogram->replot();

    QVector<double> ranks, counts;
    ranks.reserve(static_cast<qsizetype>(stats->rankFrequency.size()));
    counts.reserve(ranks.capacity());
    for (std::size_t r = 0; r < stats->rankFrequency.size(); ++r) {
        ranks.push_back(static_cast<double>(r + 1));
        counts.push_back(static_cast<double>(stats->rankFrequency[r].count));
    }
    m_rank->graph(0)->setData(ranks, counts, true);
    // Decades that hold the data, so a short text does not sit in a corner.
    const double maxRank = std::max(10.0, std::pow(10.0, std::ceil(std::log10(std::max(1.0, ranks.isEmpty() ? 1.0 : ranks.back())))));
    const double maxOcc = std::max(10.0, std::pow(10.0, std::ceil(std::log10(counts.front() + 1))));
    const double minOcc = std::min(maxOcc / 10.0, std::pow(10.0, std::floor(std::log10(std::max(1.0, counts.back())))));
    m_rank->xAxis->setRange(0.8, maxRank);
    m_rank->yAxis->setRange(minOcc * 0.8, maxOcc);
    m_rank->replot();
}

} // namespace tw::ui
