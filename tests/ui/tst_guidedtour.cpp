// Help → Guided tour (issue 22) driven with presentation mode's keys on the real window offscreen at a
// projector's 1280×720: every stage is visited in story order, each step outlines the widget it talks
// about (the overlay's hole is that widget's rectangle), the AllReduce step plays the schedule one step
// per key, ← goes back, Esc ends and the overlay goes. Also inside presentation mode, whose own → would
// change stage: the tour keeps the keys. With TOKENWIRE_TOUR_SHOTS set, steps are saved as PNGs.

#include "document/document.h"
#include "mainwindow.h"
#include "panes/collectivepane.h"
#include "panes/parallelpane.h"
#include "panes/tensorpane.h"
#include "panes/textpane.h"
#include "shell/guidedtour.h"
#include "shell/presentation.h"
#include "views/meshview.h"
#include "views/transformerview.h"
#include "views/scheduleview.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QStandardPaths>
#include <QTest>
#include <QUndoStack>

using tw::ui::GuidedTour;
using tw::ui::MainWindow;

class TestGuidedTour : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void keysVisitEveryStage();
    void clickingTheCardAndGoingBack();
    void keysStayTheToursInPresentationMode();

private:
    void shot(const QString& name);
    MainWindow* m_window = nullptr;
};

void TestGuidedTour::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestGuidedTour::init()
{
    m_window = new MainWindow;
    m_window->resize(1280, 720);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window));
    QVERIFY(m_window->document()->waitForDerivation(60000));
}

void TestGuidedTour::cleanup()
{
    if (m_window->presentation()->isActive())
        m_window->presentation()->leave();
    m_window->document()->undoStack()->setClean();
    delete m_window;
    m_window = nullptr;
}

void TestGuidedTour::shot(const QString& name)
{
    const QString dir = qEnvironmentVariable("TOKENWIRE_TOUR_SHOTS");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QVERIFY(m_window->grab().save(QDir(dir).filePath(name)));
}

namespace {

QWidget* focused(QWidget* window)
{
    return QApplication::focusWidget() ? QApplication::focusWidget() : window;
}

} // namespace

void TestGuidedTour::keysVisitEveryStage()
{
    GuidedTour* tour = m_window->guidedTour();
    QAction* action = m_window->findChild<QAction*>(QStringLiteral("guidedTourAction"));
    QVERIFY(action);
    action->trigger();
    QVERIFY(tour->isActive());
    QCOMPARE(tour->currentStep(), 0);
    QCOMPARE(tour->stepCount(), 6);
    QVERIFY(tour->overlay()->isVisible());
    QVERIFY(tour->cardFrame()->isVisible());

    QList<int> stagesSeen;
    int scheduleSteps = 0, rightPresses = 0;
    for (int guard = 0; tour->isActive() && guard < 500; ++guard) {
        QTest::qWait(1); // the deferred placement after a stage change
        const int step = tour->currentStep();
        QCOMPARE(m_window->stage(), tour->stageOfStep(step));
        if (stagesSeen.isEmpty() || stagesSeen.last() != m_window->stage())
            stagesSeen << m_window->stage();
        // The outline is the talked-about widget, shown, inside the window, and the card does not hide it all.
        QWidget* target = tour->target();
        QVERIFY2(target && target->isVisible(), qPrintable(tour->title(step)));
        QTRY_COMPARE(tour->highlight(), QRect(target->mapTo(m_window, QPoint(0, 0)), target->size()).intersected(m_window->rect()));
        QVERIFY(tour->highlight().width() > 200 && tour->highlight().height() > 100);
        QVERIFY(m_window->rect().contains(tour->cardFrame()->geometry()));
        // At 1280×720 every step's card finds a side with room: it covers nothing of the outlined widget.
        QVERIFY2(!tour->cardFrame()->geometry().intersects(tour->highlight()), qPrintable(tour->title(step)));
        QVERIFY(tour->card()->text().contains(tour->title(step).toHtmlEscaped()));
        // The overlay dims the window around the outline and leaves the widget itself clear.
        const QImage dim = tour->overlay()->grab().toImage();
        QVERIFY(!tour->highlight().contains(QPoint(2, 2)));
        QVERIFY(qAlpha(dim.pixel(2, 2)) > 0);
        QCOMPARE(qAlpha(dim.pixel(tour->highlight().center())), 0);
        if (step == 1) {
            QVERIFY(m_window->document()->followedToken() >= 0); // the live thread starts here
            shot(QStringLiteral("tour-2-token.png"));
        }
        if (step == 2)
            shot(QStringLiteral("tour-3-tensors.png"));
        if (step == 3)
            shot(QStringLiteral("tour-4-gpus.png"));
        if (step == 4) {
            tw::ui::ScheduleView* view = m_window->collectivePane()->view();
            QVERIFY(view->stepCount() > 1);
            if (view->currentStep() == 0) // issue 34: not "Now: step 0 of 14 ()."
                QVERIFY2(!tour->card()->text().contains(QStringLiteral("step 0")) && !tour->card()->text().contains(QStringLiteral("()")),
                         qPrintable(tour->card()->text()));
            if (view->currentStep() == 2)
                shot(QStringLiteral("tour-5-allreduce.png"));
            if (view->currentStep() < view->stepCount()) {
                // Space plays one step of the schedule; the tour stays on its step.
                const int before = view->currentStep();
                QTest::keyClick(focused(m_window), Qt::Key_Space);
                QCOMPARE(tour->currentStep(), 4);
                QCOMPARE(view->currentStep(), before + 1);
                QVERIFY2(tour->card()->text().contains(QStringLiteral("Now: step %1 of %2").arg(before + 1).arg(view->stepCount())),
                         qPrintable(tour->card()->text()));
                ++scheduleSteps;
                continue;
            }
        }
        QTest::keyClick(focused(m_window), Qt::Key_Right);
        ++rightPresses;
    }
    QVERIFY(!tour->isActive()); // → after the last step ends the tour
    QCOMPARE(stagesSeen, (QList<int>{0, 1, 2, 3, 4}));
    QCOMPARE(scheduleSteps, m_window->collectivePane()->view()->stepCount());
    // → is the tour's own key on every step, the AllReduce's included: six presses walk the six steps.
    QCOMPARE(rightPresses, tour->stepCount());
    QVERIFY(!tour->overlay()->isVisible());
    QVERIFY(!tour->cardFrame()->isVisible());
}

void TestGuidedTour::clickingTheCardAndGoingBack()
{
    GuidedTour* tour = m_window->guidedTour();
    tour->start();
    auto* next = tour->cardFrame()->findChild<QPushButton*>(QStringLiteral("tourNext"));
    auto* back = tour->cardFrame()->findChild<QPushButton*>(QStringLiteral("tourBack"));
    QVERIFY(next && back);
    QVERIFY(!back->isEnabled());
    QTest::mouseClick(next, Qt::LeftButton);
    QTest::mouseClick(next, Qt::LeftButton);
    QCOMPARE(tour->currentStep(), 2);
    QCOMPARE(m_window->stage(), 1);
    QTest::keyClick(focused(m_window), Qt::Key_Left);
    QCOMPARE(tour->currentStep(), 1);
    QCOMPARE(m_window->stage(), 0);
    QTest::mouseClick(back, Qt::LeftButton);
    QCOMPARE(tour->currentStep(), 0);
    // Esc ends it: the overlay and the card go, and a later → is not the tour's.
    QTest::keyClick(focused(m_window), Qt::Key_Escape);
    QVERIFY(!tour->isActive());
    QCOMPARE(tour->currentStep(), -1);
    QVERIFY(!tour->overlay()->isVisible());
    QVERIFY(!tour->cardFrame()->isVisible());
    QTest::keyClick(focused(m_window), Qt::Key_Right);
    QCOMPARE(tour->currentStep(), -1);
}

void TestGuidedTour::keysStayTheToursInPresentationMode()
{
    GuidedTour* tour = m_window->guidedTour();
    m_window->presentation()->enter();
    tour->start();
    QTest::keyClick(focused(m_window), Qt::Key_Right); // the token step: still stage 1 (index 0)
    QCOMPARE(tour->currentStep(), 1);
    QCOMPARE(m_window->stage(), 0);
    QTest::keyClick(focused(m_window), Qt::Key_Right);
    QCOMPARE(m_window->stage(), 1);
    QCOMPARE(tour->target(), static_cast<QWidget*>(m_window->tensorPane()->diagram()));
    QVERIFY(tour->target()->isVisible());
    QWidget* target = tour->target();
    QTRY_COMPARE(tour->highlight(), QRect(target->mapTo(m_window, QPoint(0, 0)), target->size()).intersected(m_window->rect()));
    QVERIFY(m_window->rect().contains(tour->cardFrame()->geometry()));
    // The whole card is there at presentation's larger font: the key hint, its last line, too.
    QLabel* text = tour->card();
    QVERIFY(text->height() >= text->heightForWidth(text->width()));
    shot(QStringLiteral("tour-presenting-tensors.png"));
    QTest::keyClick(focused(m_window), Qt::Key_Escape); // ends the tour, not the presentation
    QVERIFY(!tour->isActive());
    QVERIFY(m_window->presentation()->isActive());
    QTest::keyClick(focused(m_window), Qt::Key_Right); // presentation's own key again
    QCOMPARE(m_window->stage(), 2);
}

QTEST_MAIN(TestGuidedTour)
#include "tst_guidedtour.moc"
