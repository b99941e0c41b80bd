// The document's results (ui/document/results.h) and the job they run on (ui/workers/backgroundjob.h):
// the latest request wins and a cancel stops the work (tested once, here, where the mechanism lives);
// every result carries the scenario generation it was computed for, and a result of an older scenario is
// never delivered as current — not the step, not the sweep, not the trace — whatever the order of edits.

#include "document/document.h"
#include "document/results.h"
#include "panes/wirepane.h"
#include "workers/backgroundjob.h"

#include "charts/wirecharts.h"
#include "scenario/derive.h"

#include <QLabel>
#include <QTextBrowser>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>

using tw::ui::BackgroundJob;
using tw::ui::Document;
using tw::ui::Results;
using tw::ui::StepResult;
using tw::ui::SweepResult;

class TestResults : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void latestRequestWins();
    void cancelStopsTheWorkAndDeliversNothing();
    void stepIsTaggedWithItsGeneration();
    void editWhileSimulatingNeverDeliversTheOldStep();
    void stepWaitsForItsDerivation();
    void planThatCannotRunIsRefusedWithTheReason();
    void sweepOfAnEarlierScenarioIsNotCurrent();
    void traceNeedsTheCurrentStep();
    void hiddenPaneShownAfterAPresetChangeDrawsOnlyTheNewStep();
    void sweepChartOfAnotherPresetIsClearedAndSaysRunAgain();
};

// Two requests in a row: the first is stopped (its stop token fires) and only the second's result
// arrives, once.
void TestResults::latestRequestWins()
{
    BackgroundJob job;
    auto firstStopped = std::make_shared<std::atomic<bool>>(false);
    auto firstStarted = std::make_shared<std::atomic<bool>>(false);
    QSignalSpy finished(&job, &BackgroundJob::finished);
    job.schedule([firstStopped, firstStarted](const tw::Progress& progress) -> std::any {
        firstStarted->store(true);
        while (!progress.stopRequested())
            QThread::msleep(1);
        firstStopped->store(true);
        return 1;
    });
    QTRY_VERIFY_WITH_TIMEOUT(firstStarted->load(), 5000); // running on a pool thread
    job.schedule([](const tw::Progress&) -> std::any { return 2; });
    QVERIFY(job.waitUntilIdle(10000));
    QTRY_VERIFY_WITH_TIMEOUT(firstStopped->load(), 5000);
    QCOMPARE(finished.count(), 1);
    QCOMPARE(std::any_cast<int>(finished.first().first().value<std::any>()), 2);
}

// cancel() stops the running work through its stop token, says cancelled() and delivers no result.
void TestResults::cancelStopsTheWorkAndDeliversNothing()
{
    BackgroundJob job;
    auto started = std::make_shared<std::atomic<bool>>(false);
    auto stopped = std::make_shared<std::atomic<bool>>(false);
    QSignalSpy finished(&job, &BackgroundJob::finished);
    QSignalSpy cancelled(&job, &BackgroundJob::cancelled);
    job.schedule([started, stopped](const tw::Progress& progress) -> std::any {
        started->store(true);
        while (!progress.stopRequested())
            QThread::msleep(1);
        stopped->store(true);
        return 1;
    });
    QTRY_VERIFY_WITH_TIMEOUT(started->load(), 5000);
    QVERIFY(job.isBusy());
    job.cancel();
    QCOMPARE(cancelled.count(), 1);
    QVERIFY(!job.isBusy());
    QTRY_VERIFY_WITH_TIMEOUT(stopped->load(), 5000);
    QTest::qWait(50); // the stopped work's finished event, had it been delivered
    QCOMPARE(finished.count(), 0);
    // A cancel with nothing running says nothing.
    job.cancel();
    QCOMPARE(cancelled.count(), 1);
}

// The step requested for a scenario carries that scenario's generation, and its scenario is the document's.
void TestResults::stepIsTaggedWithItsGeneration()
{
    Document doc;
    Results* results = doc.results();
    QVERIFY(doc.waitForDerivation());
    QVERIFY(doc.loadPreset(QStringLiteral("paper-dp")));
    QSignalSpy finished(results, &Results::stepFinished);
    results->requestStep(); // before the derivation is there: started when it is
    QVERIFY(results->waitUntilIdle(120000));
    QCOMPARE(finished.count(), 1);
    const auto step = finished.first().first().value<std::shared_ptr<const StepResult>>();
    QVERIFY(step->ok());
    QCOMPARE(step->generation, doc.generation());
    QCOMPARE(step->scenario->name, std::string("paper-dp"));
    QCOMPARE(results->step(), step);
    QVERIFY(results->isStepCurrent());
    // Asked again for the same scenario: nothing runs, nothing new arrives.
    results->requestStep();
    QVERIFY(!results->stepJob()->isBusy());
    QVERIFY(results->waitUntilIdle(10000));
    QCOMPARE(finished.count(), 1);
    // Any edit makes it an older scenario's step (still readable, no longer current).
    QSignalSpy outdated(results, &Results::outdated);
    QVERIFY(doc.setField(tw::ui::Field::MicroBatch, tw::ui::FieldValue(std::uint64_t(16))));
    QCOMPARE(outdated.count(), 1);
    QCOMPARE(results->step(), step);
    QVERIFY(!results->isStepCurrent());
    QVERIFY(results->step()->generation < doc.generation());
}

// Edits in a burst while steps are simulated: every step delivered is the scenario's as it is at the
// moment of delivery, and the last one is the last edit's.
void TestResults::editWhileSimulatingNeverDeliversTheOldStep()
{
    Document doc;
    Results* results = doc.results();
    int delivered = 0, stale = 0;
    connect(results, &Results::stepFinished, this, [&](const std::shared_ptr<const StepResult>& r) {
        ++delivered;
        if (r->generation != doc.generation() || r->scenario->name != doc.scenario().name)
            ++stale;
    });
    // Each preset's step is asked for as soon as it is loaded; the next preset comes while it is derived
    // or simulated (gpt2-xl's step takes long enough that the next load lands in its simulation).
    const char* const presets[] = {"gpt2-xl", "paper-dp", "paper-pp", "paper-tp"};
    for (const char* name : presets) {
        QVERIFY(doc.loadPreset(QString::fromLatin1(name)));
        results->requestStep();
        QTest::qWait(name == presets[0] ? 400 : 30);
    }
    QVERIFY(results->waitUntilIdle(180000));
    QCOMPARE(stale, 0);
    QVERIFY(delivered >= 1);
    QVERIFY(results->isStepCurrent());
    QCOMPARE(results->step()->scenario->name, std::string("paper-tp"));
}

// A step asked for while the scenario is still being derived starts when the derivation arrives, on it.
void TestResults::stepWaitsForItsDerivation()
{
    Document doc;
    Results* results = doc.results();
    QVERIFY(doc.waitForDerivation());
    QVERIFY(doc.loadPreset(QStringLiteral("paper-pp")));
    QVERIFY(doc.isDeriving());
    results->requestStep();
    QVERIFY(!results->stepJob()->isBusy()); // waits for the derivation
    QVERIFY(results->waitUntilIdle(120000));
    QVERIFY(results->isStepCurrent());
    QCOMPARE(results->step()->derivation, doc.derivation());
}

// paper-reference at tp = 8 (12 heads): no plan, no step; the refusal names the plan's reason, and the
// last step stays readable as an older scenario's.
void TestResults::planThatCannotRunIsRefusedWithTheReason()
{
    Document doc;
    Results* results = doc.results();
    QVERIFY(doc.waitForDerivation());
    results->requestStep();
    QVERIFY(results->waitUntilIdle(60000));
    const auto before = results->step();
    QVERIFY(before);
    QVERIFY(doc.setDegree(tw::parallel::Strategy::TP, 8));
    QVERIFY(doc.waitForDerivation());
    QVERIFY(!doc.derivation()->stage3);
    QSignalSpy refused(results, &Results::stepRefused);
    QSignalSpy finished(results, &Results::stepFinished);
    results->requestStep();
    QVERIFY(results->waitUntilIdle(10000));
    QCOMPARE(refused.count(), 1);
    QVERIFY2(refused.first().first().toString().contains(QStringLiteral("12")),
             qPrintable(refused.first().first().toString())); // "… 12 heads …"
    QCOMPARE(finished.count(), 0);
    QCOMPARE(results->step(), before);
    QVERIFY(!results->isStepCurrent());
    QVERIFY(!results->stepProblem().isEmpty());
}

// A sweep belongs to the scenario it ran on: after an edit it is an earlier scenario's, and a sweep
// running when the scenario changes is stopped and never delivered.
void TestResults::sweepOfAnEarlierScenarioIsNotCurrent()
{
    Document doc;
    Results* results = doc.results();
    QVERIFY(doc.loadPreset(QStringLiteral("paper-testbed")));
    QVERIFY(doc.waitForDerivation());
    tw::scenario::SweepOptions options;
    options.gpus = {1, 2, 3};
    QSignalSpy swept(results, &Results::swept);
    QVERIFY(results->requestSweep(options));
    QVERIFY(results->waitUntilIdle(120000));
    QCOMPARE(swept.count(), 1);
    const auto sweep = results->sweep();
    QVERIFY(sweep->sweep);
    QCOMPARE(sweep->scenarioName, std::string("paper-testbed"));
    QVERIFY(results->isCurrent(sweep->generation));

    QVERIFY(doc.loadPreset(QStringLiteral("paper-dp")));
    QVERIFY(!results->isCurrent(results->sweep()->generation));
    // A sweep started, then the scenario changes under it: stopped, nothing delivered.
    QVERIFY(doc.waitForDerivation());
    options.gpus = {8, 16, 32, 64};
    QVERIFY(results->requestSweep(options));
    QTRY_VERIFY_WITH_TIMEOUT(results->sweepJob()->isBusy(), 5000);
    QVERIFY(doc.setField(tw::ui::Field::MicroBatch, tw::ui::FieldValue(std::uint64_t(16))));
    QVERIFY(!results->sweepJob()->isBusy());
    QVERIFY(results->waitUntilIdle(60000));
    QCOMPARE(swept.count(), 1);
}

// The followed token is traced on the current step only: without one nothing runs; with it, the trace is
// tagged with the step it was traced on.
void TestResults::traceNeedsTheCurrentStep()
{
    Document doc;
    Results* results = doc.results();
    QVERIFY(doc.waitForDerivation());
    results->requestTrace(3);
    QVERIFY(!results->traceJob()->isBusy()); // no step yet
    results->requestStep();
    QVERIFY(results->waitUntilIdle(60000));
    QSignalSpy traced(results, &Results::traced);
    results->requestTrace(3);
    QVERIFY(results->waitUntilIdle(60000));
    QCOMPARE(traced.count(), 1);
    QVERIFY(results->trace());
    QCOMPARE(results->trace()->step, results->step());
    QCOMPARE(results->trace()->token, std::uint64_t(3));
    QVERIFY2(results->trace()->trace, results->trace()->trace ? "" : results->trace()->trace.error().toString().c_str());
    // The scenario changes: the trace is dropped with it.
    QVERIFY(doc.setField(tw::ui::Field::MicroBatch, tw::ui::FieldValue(std::uint64_t(16))));
    QVERIFY(!results->trace());
    results->requestTrace(3);
    QVERIFY(!results->traceJob()->isBusy());
}

// Stage 5 hidden while the preset changes: shown again, it says its drawing is the previous scenario's
// until the new step arrives, and then draws exactly the current one.
void TestResults::hiddenPaneShownAfterAPresetChangeDrawsOnlyTheNewStep()
{
    Document doc;
    tw::ui::WirePane pane(&doc);
    pane.resize(1280, 720);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QVERIFY(doc.waitForDerivation());
    QVERIFY(pane.waitForSimulation());
    QVERIFY(pane.isCurrent());
    const quint64 first = pane.result().generation;
    pane.hide();
    QVERIFY(doc.loadPreset(QStringLiteral("paper-pp")));
    QVERIFY(doc.waitForDerivation());
    QTest::qWait(300); // longer than a step request's debounce: a hidden pane asks for nothing
    QVERIFY(!doc.results()->stepJob()->isBusy());
    QCOMPARE(pane.result().generation, first);
    QVERIFY(!pane.isCurrent());
    QVERIFY2(pane.statusLabel()->text().contains(QStringLiteral("previous")), qPrintable(pane.statusLabel()->text()));
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QVERIFY(pane.waitForSimulation());
    QVERIFY(pane.isCurrent());
    QCOMPARE(pane.result().generation, doc.generation());
    QCOMPARE(pane.result().scenario->name, std::string("paper-pp"));
}

// Issue 34's sequence: the testbed's sweep, then another preset: the Scaling tab does not keep the
// testbed's curve and measured points under the new preset; it says whose the sweep was and to run it again.
void TestResults::sweepChartOfAnotherPresetIsClearedAndSaysRunAgain()
{
    Document doc;
    tw::ui::WirePane pane(&doc);
    pane.resize(1280, 720);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    QVERIFY(doc.loadPreset(QStringLiteral("paper-testbed")));
    QVERIFY(doc.waitForDerivation());
    QVERIFY(pane.waitForSimulation());
    QVERIFY(pane.runSweep(QStringLiteral("1-3")));
    QVERIFY(pane.waitForSimulation(120000));
    QCOMPARE(pane.charts()->scalingPoints(), 3);
    QVERIFY(pane.charts()->measuredPoints() > 0);

    QVERIFY(doc.loadPreset(QStringLiteral("gpt3-175b")));
    QCOMPARE(pane.charts()->scalingPoints(), 0);
    QCOMPARE(pane.charts()->measuredPoints(), 0);
    QVERIFY2(pane.charts()->scalingTitle().contains(QStringLiteral("again")), qPrintable(pane.charts()->scalingTitle()));
    const QString status = pane.sweepStatus()->text();
    QVERIFY2(status.contains(QStringLiteral("paper-testbed")) && status.contains(QStringLiteral("Run sweep")),
             qPrintable(status));
    QVERIFY(pane.sweepGapText()->toPlainText().isEmpty());
    doc.results()->cancelStep();
}

QTEST_MAIN(TestResults)
#include "tst_results.moc"
