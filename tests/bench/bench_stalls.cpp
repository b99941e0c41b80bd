// Every operation on the GUI thread longer than 50 ms, on every preset (issue 21), Release build,
// offscreen. A QApplication whose notify() times each outermost event delivery (a click, a timer, a
// queued result of a background job, a paint) sees everything the GUI thread does while the event
// loop runs; the tour's own calls (what a menu action or a typed value would run) are timed too. Per
// preset, a MainWindow at 1280×720 goes through the tour a user takes:
//   load the preset (as File → Presets does) and let its derivation arrive;
//   show stages 1 to 5 in turn (stage 5: until its simulation's result is drawn);
//   edit the model's hidden size (d + 2·heads, as typed in stage 2) with stage 5 on screen, and let
//   the new derivation and simulation arrive;
//   open the first group (pod, leaf group or server) of the drawn fabric and close it again;
//   follow token 5 from stage 1 into stage 5 (its trace runs off the GUI thread) and drop it;
//   play the animation for 1 s.
// For each step: the longest stretch the GUI thread was busy (the tour's call or one event), what it
// was (receiver class and event type), and how many stretches exceeded the threshold.
// Usage: QT_QPA_PLATFORM=offscreen bench_stalls [--preset NAME]... [--threshold MS]
//        Prints a table and RESULT lines for scripts/bench.sh.

#include "document/document.h"
#include "document/results.h"
#include "document/scenariofield.h"
#include "mainwindow.h"
#include "panes/wirepane.h"
#include "views/wireview.h"
#include "workers/backgroundjob.h"

#include "scenario/presets.h"

#include "benchutil.h"

#include <QApplication>
#include <QDeadlineTimer>
#include <QEvent>
#include <QMetaEnum>
#include <QPushButton>
#include <QTimer>
#include <QUndoStack>

#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Stretch {
    double ms = 0;
    QString what;
};

// Times every outermost event delivery; the tour reads the longest since its last reset.
class TimedApp : public QApplication {
public:
    using QApplication::QApplication;
    double threshold = 50;
    Stretch longest;
    int over = 0;

    void reset()
    {
        longest = {};
        over = 0;
    }
    void note(double ms, const QString& what)
    {
        over += ms > threshold;
        if (ms > longest.ms)
            longest = {ms, what};
    }
    bool notify(QObject* receiver, QEvent* event) override
    {
        if (m_depth > 0)
            return QApplication::notify(receiver, event);
        ++m_depth;
        const auto t0 = tw::bench::Clock::now();
        const bool done = QApplication::notify(receiver, event);
        const double ms = tw::bench::msSince(t0);
        --m_depth;
        if (ms > threshold / 4 && ms > longest.ms) {
            const char* type = QMetaEnum::fromType<QEvent::Type>().valueToKey(event->type());
            // The receiver's class, and its object name when it has one ("MetaCall to QCustomPlot (pipelineChart)").
            QString to = QString::fromLatin1(receiver->metaObject()->className());
            if (!receiver->objectName().isEmpty())
                to += QStringLiteral(" (%1)").arg(receiver->objectName());
            note(ms, QStringLiteral("%1 to %2").arg(QString::fromLatin1(type ? type : "event"), to));
        } else {
            over += ms > threshold;
        }
        return done;
    }

private:
    int m_depth = 0;
};

TimedApp* timed() { return static_cast<TimedApp*>(QCoreApplication::instance()); }

// Runs the event loop (every delivery timed) until done() or the deadline.
template <typename Done>
bool pumpUntil(Done done, int timeoutMs = 600000)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!done()) {
        if (deadline.hasExpired())
            return false;
        // Sleeps until an event comes (at most 20 ms): processEvents(flags, ms) would spin and take a core
        // from the background jobs.
        QEventLoop loop;
        QTimer::singleShot(20, &loop, &QEventLoop::quit);
        loop.exec();
    }
    // What the last result posted (its repaint) runs too.
    for (int i = 0; i < 5; ++i)
        QApplication::processEvents(QEventLoop::AllEvents, 10);
    return true;
}

struct Step {
    std::string name;
    Stretch longest;
    int over = 0;
    bool ok = true;
};

// One step of the tour: the call (timed as one stretch), then the events until done().
template <typename Call, typename Done>
Step step(const char* name, Call call, Done done)
{
    timed()->reset();
    const auto t0 = tw::bench::Clock::now();
    call();
    timed()->note(tw::bench::msSince(t0), QStringLiteral("the call itself"));
    Step s{name, {}, 0, pumpUntil(done)};
    s.longest = timed()->longest;
    s.over = timed()->over;
    return s;
}

bool idle(tw::ui::MainWindow& w)
{
    const tw::ui::Results* results = w.document()->results();
    return !w.document()->isDeriving() && !results->stepJob()->isBusy() && !results->traceJob()->isBusy();
}

std::vector<Step> tour(tw::ui::MainWindow& w, const QString& preset)
{
    std::vector<Step> steps;
    tw::ui::Document* doc = w.document();
    auto settled = [&] { return idle(w); };
    steps.push_back(step("load the preset", [&] { doc->loadPreset(preset); }, settled));
    for (int stage = 0; stage < 5; ++stage) {
        const std::string name = "show stage " + std::to_string(stage + 1);
        steps.push_back(step(name.c_str(), [&] { w.setStage(stage); }, [&] {
            return settled() && (stage < 4 || w.wirePane()->isCurrent());
        }));
    }
    const auto& model = doc->scenario().model;
    const std::uint64_t d = model.hiddenSize + 2 * model.heads;
    steps.push_back(step("edit the hidden size (stage 5 shown)",
                         [&] { doc->setField(tw::ui::Field::HiddenSize, tw::ui::FieldValue{d}); },
                         [&] { return settled() && w.wirePane()->isCurrent(); }));
    tw::ui::WireView* view = w.wirePane()->view();
    if (view->groupCount() > 0) {
        steps.push_back(step("open the first group", [&] { view->openGroup(0); }, settled));
        steps.push_back(step("close it", [&] { view->openGroup(-1); }, settled));
    }
    w.setStage(0);
    pumpUntil(settled);
    steps.push_back(step("follow token 5 (stage 1)", [&] { doc->setFollowedToken(5); }, settled));
    steps.push_back(step("show stage 5 with the token", [&] { w.setStage(4); }, settled));
    steps.push_back(step("drop the token", [&] { doc->setFollowedToken(-1); }, settled));
    QPushButton* play = w.wirePane()->playButton();
    steps.push_back(step("play 1 s of animation", [&] { play->click(); }, [&, t0 = QDeadlineTimer(1000)] {
        return t0.hasExpired();
    }));
    play->click();
    return steps;
}

} // namespace

int main(int argc, char** argv)
{
    TimedApp app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("TokenWire"));
    std::vector<std::string> presets;
    const QStringList args = QApplication::arguments();
    for (int i = 1; i < args.size(); ++i) {
        const bool hasValue = i + 1 < args.size();
        if (args[i] == QStringLiteral("--preset") && hasValue)
            presets.push_back(args[++i].toStdString());
        else if (args[i] == QStringLiteral("--threshold") && hasValue)
            app.threshold = args[++i].toDouble();
        else {
            std::fprintf(stderr, "usage: bench_stalls [--preset NAME]... [--threshold MS]\n");
            return 2;
        }
    }
    if (presets.empty())
        presets = tw::scenario::presetNames();
    std::printf("%-18s %-38s %10s %6s  %s\n", "preset", "step", "longest ms", "> thr", "what");
    int stalls = 0;
    double worst = 0;
    for (const std::string& preset : presets) {
        tw::ui::MainWindow window;
        window.resize(1280, 720);
        window.show();
        pumpUntil([&] { return idle(window); });
        for (const Step& s : tour(window, QString::fromStdString(preset))) {
            std::printf("%-18s %-38s %10.1f %6d  %s%s\n", preset.c_str(), s.name.c_str(), s.longest.ms, s.over,
                        qPrintable(s.longest.what), s.ok ? "" : "  (DID NOT SETTLE)");
            std::printf("RESULT name=stall preset=%s step=\"%s\" longest_ms=%.1f over=%d what=\"%s\" settled=%d\n",
                        preset.c_str(), s.name.c_str(), s.longest.ms, s.over, qPrintable(s.longest.what), int(s.ok));
            stalls += s.longest.ms > app.threshold;
            worst = std::max(worst, s.longest.ms);
        }
        std::fflush(stdout);
    }
    std::printf("RESULT name=stalls threshold_ms=%.0f steps_over=%d worst_ms=%.1f\n", app.threshold, stalls, worst);
    return 0;
}
