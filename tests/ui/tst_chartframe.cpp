// Every chart keeps a readable plot area (charts/chartframe.h, issue #34), with real widgets shown in
// a window: a framed chart under a tall sibling in a window with room for both gets an axis rect of
// at least 120 px (the sibling yields); a chart asking 16 px for each of 12 rows gets 192 px; a chart
// shown later (another tab) is laid out again for its size; and a chart whose row is capped by another
// element (an empty legend beside the axes) raises its minimum once, not forever.

#include "charts/chartframe.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QLabel>
#include <QTabWidget>
#include <QTest>
#include <QVBoxLayout>
#include <QWidget>

#include <memory>

using tw::ui::frameChart;
using tw::ui::keepPlotRoom;
using tw::ui::setMinimumPlotHeight;

class TestChartFrame : public QObject {
    Q_OBJECT
private slots:
    void aSiblingYieldsTheRoom();
    void rowsAskForTheirHeight();
    void aChartShownLaterIsLaidOutAgain();
    void aCappedRowStopsAsking();
};

namespace {

// Runs the event loop until the layouts and the queued replots are done.
void settle()
{
    for (int round = 0; round < 10; ++round) {
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        QCoreApplication::processEvents();
        QTest::qWait(5);
    }
}

QCustomPlot* framedChart(QWidget* parent)
{
    auto* plot = new QCustomPlot(parent);
    frameChart(plot, parent->font(), QStringLiteral("A title\non two lines"));
    plot->xAxis->setLabel(QStringLiteral("x"));
    plot->yAxis->setLabel(QStringLiteral("y"));
    plot->addGraph()->setName(QStringLiteral("series"));
    plot->graph(0)->setData({0, 1, 2}, {1, 3, 2});
    keepPlotRoom(plot);
    return plot;
}

// A window of 400×`height` px: a stretchy label above `plot`, which gets no stretch.
std::unique_ptr<QWidget> window(int height, QWidget** label)
{
    auto w = std::make_unique<QWidget>();
    w->resize(400, height);
    auto* layout = new QVBoxLayout(w.get());
    *label = new QLabel(QStringLiteral("a drawing"), w.get());
    (*label)->setMinimumHeight(50);
    layout->addWidget(*label, 1);
    return w;
}

} // namespace

void TestChartFrame::aSiblingYieldsTheRoom()
{
    QWidget* label = nullptr;
    auto w = window(500, &label);
    QCustomPlot* plot = framedChart(w.get());
    w->layout()->addWidget(plot);
    plot->setMinimumHeight(60); // what a squeezed chart had: its axes ~0 px tall
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    settle();
    // The chart's own 60 px is only a floor; the axes got 120 px, the rest went to the title, the
    // legend and the tick labels; the label kept its 50 px minimum.
    QVERIFY2(plot->axisRect()->height() >= 120, qPrintable(QString::number(plot->axisRect()->height())));
    QVERIFY(plot->minimumHeight() > 120 + 40); // a title of two lines and an axis cannot take less
    QVERIFY(label->height() >= 50);
}

void TestChartFrame::rowsAskForTheirHeight()
{
    QWidget* label = nullptr;
    auto w = window(700, &label);
    QCustomPlot* plot = framedChart(w.get());
    setMinimumPlotHeight(plot, 12 * 16); // 12 stages at 16 px each = 192 px
    w->layout()->addWidget(plot);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    settle();
    QVERIFY2(plot->axisRect()->height() >= 192, qPrintable(QString::number(plot->axisRect()->height())));
}

void TestChartFrame::aChartShownLaterIsLaidOutAgain()
{
    auto w = std::make_unique<QWidget>();
    w->resize(400, 400);
    auto* layout = new QVBoxLayout(w.get());
    auto* tabs = new QTabWidget(w.get());
    layout->addWidget(tabs);
    auto* first = new QLabel(QStringLiteral("first tab"), tabs);
    auto* page = new QWidget(tabs);
    auto* pageLayout = new QVBoxLayout(page);
    auto* drawing = new QLabel(QStringLiteral("a drawing"), page);
    pageLayout->addWidget(drawing, 1);
    QCustomPlot* plot = framedChart(page);
    pageLayout->addWidget(plot);
    tabs->addTab(first, QStringLiteral("one"));
    tabs->addTab(page, QStringLiteral("two"));
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    plot->replot(); // drawn while hidden, at a size it will not have
    settle();
    tabs->setCurrentIndex(1);
    settle();
    QVERIFY2(plot->axisRect()->height() >= 120, qPrintable(QString::number(plot->axisRect()->height())));
}

void TestChartFrame::aCappedRowStopsAsking()
{
    auto w = std::make_unique<QWidget>();
    w->resize(400, 300);
    auto* layout = new QVBoxLayout(w.get());
    auto* plot = new QCustomPlot(w.get());
    plot->xAxis->setLabel(QStringLiteral("x"));
    plot->yAxis->setLabel(QStringLiteral("y"));
    // An empty legend beside the axes in their row: the row is no taller than the legend's maximum.
    plot->axisRect()->insetLayout()->take(plot->legend);
    plot->plotLayout()->addElement(0, 1, plot->legend);
    plot->legend->setVisible(true);
    keepPlotRoom(plot);
    layout->addWidget(plot);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    settle();
    const int once = plot->minimumHeight();
    settle();
    settle();
    // Raised at most once from what it had, then no more: the row does not follow the plot's height.
    QCOMPARE(plot->minimumHeight(), once);
    QVERIFY2(once < 2000, qPrintable(QString::number(once)));
}

QTEST_MAIN(TestChartFrame)
#include "tst_chartframe.moc"
