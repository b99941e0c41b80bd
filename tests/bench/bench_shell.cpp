// The shell as a user meets it (issue 8), Release build, offscreen:
//   (a) cold start — `tokenwire --preset paper-reference --startup-timing` started N times as a new
//       process: the program's own "shown with its derivation after X ms" (from main() to stage 1
//       painted with the derivation) and the wall time of the whole process; target < 1 s;
//   (b) switching stages — in this process, a MainWindow (1280×720) on the reference preset:
//       setStage(i) + processEvents + one synchronous repaint of the window, for each of the five
//       stages, many rounds; median and worst per stage, first visits apart; target < 50 ms. Stage 5
//       starts its simulation (off the GUI thread) the first time it is shown: the switch is timed
//       until its frame is painted, not until the simulation ends (waited for, untimed, after it);
//   (c) resident memory — a fresh process of this program opens the full Divina Commedia in stage 1
//       (File → Open text), waits for its tokens, visits all five panes, then reads VmRSS and VmHWM
//       from /proc/self/status; target < 300 MB.
// Usage: QT_QPA_PLATFORM=offscreen bench_shell --gui PATH [--text FILE] [--runs N] [--rounds N]
//        (FILE defaults to $TOKENWIRE_BENCH_TEXT; without a text (c) is skipped with a message;
//        scripts/bench.sh passes both). Prints a table and RESULT lines for scripts/bench.sh.

#include "document/document.h"
#include "mainwindow.h"
#include "panes/textpane.h"
#include "panes/wirepane.h"

#include "benchutil.h"

#include <QApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStackedWidget>
#include <QUndoStack>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr const char* kPreset = "paper-reference";
constexpr int kStages = 5;

int fail(const QString& what)
{
    std::fprintf(stderr, "bench_shell: %s\n", qPrintable(what));
    return 1;
}

// VmRSS and VmHWM of this process in MiB, from /proc/self/status (kB there).
struct Memory {
    double rssMiB = -1, hwmMiB = -1;
};

Memory memoryNow()
{
    Memory m;
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return m;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QList<QByteArray> parts = line.simplified().split(' ');
        if (parts.size() < 2)
            continue;
        if (parts[0] == "VmRSS:")
            m.rssMiB = parts[1].toDouble() / 1024.0;
        else if (parts[0] == "VmHWM:")
            m.hwmMiB = parts[1].toDouble() / 1024.0;
    }
    return m;
}

// Counts the paint events a widget receives (did the switch really paint the stage?).
class PaintCounter : public QObject {
public:
    int paints = 0;
    bool eventFilter(QObject*, QEvent* event) override
    {
        paints += event->type() == QEvent::Paint;
        return false;
    }
};

// The window of (b) and (c): the reference preset at 1280×720, shown, its derivation done.
bool openWindow(tw::ui::MainWindow& window)
{
    QString error;
    if (!window.document()->loadPreset(QString::fromLatin1(kPreset), &error))
        return fail(QStringLiteral("--preset %1: %2").arg(QString::fromLatin1(kPreset), error)) == 0;
    window.document()->undoStack()->clear();
    window.resize(1280, 720);
    window.show();
    window.document()->waitForDerivation(120000);
    QApplication::processEvents();
    return true;
}

// One stage switch as the user sees it: select, let the events run, paint the window once.
double switchMs(tw::ui::MainWindow& window, int stage)
{
    const auto t0 = tw::bench::Clock::now();
    window.setStage(stage);
    QApplication::processEvents();
    window.repaint();
    return tw::bench::msSince(t0);
}

// After a visit to stage 5, the simulation it started runs to its end (not timed).
void settle(tw::ui::MainWindow& window)
{
    window.wirePane()->waitForSimulation(300000);
    window.document()->waitForDerivation(120000);
    QApplication::processEvents();
}

// (a): one start of the GUI; the program's own figure and the process's wall time, < 0 on failure.
struct Start {
    double shownMs = -1, processMs = -1;
};

Start coldStart(const QString& gui)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    const auto t0 = tw::bench::Clock::now();
    p.start(gui, {QStringLiteral("--preset"), QString::fromLatin1(kPreset), QStringLiteral("--startup-timing")});
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        std::fprintf(stderr, "bench_shell: %s failed: %s\n", qPrintable(gui), p.readAll().constData());
        return {};
    }
    Start s;
    s.processMs = tw::bench::msSince(t0);
    const QString out = QString::fromLocal8Bit(p.readAll());
    const QString key = QStringLiteral("with its derivation after ");
    const qsizetype at = out.indexOf(key);
    if (at < 0) {
        std::fprintf(stderr, "bench_shell: no start-up figure in: %s\n", qPrintable(out));
        return {};
    }
    s.shownMs = out.mid(at + key.size()).section(QLatin1Char(' '), 0, 0).toDouble();
    return s;
}

// (c), in a fresh process: the whole poem in stage 1, every pane visited; prints "MEMORY ..." lines.
int memoryChild(const QString& text)
{
    tw::ui::MainWindow window;
    if (!openWindow(window))
        return 1;
    const Memory before = memoryNow();
    tw::ui::TextPane* pane = window.textPane();
    bool opened = false;
    QObject::connect(pane, &tw::ui::TextPane::fileOpened, pane, [&] { opened = true; });
    QElapsedTimer clock;
    clock.start();
    pane->openFile(text);
    const QDeadlineTimer deadline(300000);
    while (!deadline.hasExpired()
           && !(opened && !pane->isBusy() && !window.document()->isDeriving() && pane->shownTokens().spans))
        QApplication::processEvents(QEventLoop::AllEvents, 20);
    if (!opened || pane->isBusy())
        return fail(QStringLiteral("%1 was not opened and tokenized within 300 s: %2").arg(text, pane->messageText()));
    const qint64 tokenizedMs = clock.elapsed();
    const std::size_t tokens = pane->shownTokens().spans->size();
    const Memory loaded = memoryNow();
    for (int stage = 0; stage < kStages; ++stage) {
        switchMs(window, stage);
        if (stage == kStages - 1)
            settle(window);
    }
    switchMs(window, 0);
    const Memory visited = memoryNow();
    std::printf("MEMORY text_bytes=%lld tokens=%zu open_ms=%lld rss_start_mib=%.1f rss_loaded_mib=%.1f "
                "rss_visited_mib=%.1f hwm_mib=%.1f paged=%d\n",
                QFileInfo(text).size(), tokens, tokenizedMs, before.rssMiB, loaded.rssMiB, visited.rssMiB,
                visited.hwmMiB, int(pane->showsPagedView()));
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("TokenWire"));
    QString gui;
    QString text = qEnvironmentVariable("TOKENWIRE_BENCH_TEXT");
    QString memoryText;
    int runs = 10;
    int rounds = 40;
    const QStringList args = QApplication::arguments();
    for (int i = 1; i < args.size(); ++i) {
        const bool hasValue = i + 1 < args.size();
        if (args[i] == QStringLiteral("--gui") && hasValue)
            gui = args[++i];
        else if (args[i] == QStringLiteral("--text") && hasValue)
            text = args[++i];
        else if (args[i] == QStringLiteral("--runs") && hasValue)
            runs = args[++i].toInt();
        else if (args[i] == QStringLiteral("--rounds") && hasValue)
            rounds = args[++i].toInt();
        else if (args[i] == QStringLiteral("--memory-child") && hasValue)
            memoryText = args[++i];
        else {
            std::fprintf(stderr, "usage: bench_shell --gui PATH [--text FILE] [--runs N] [--rounds N]\n");
            return 2;
        }
    }
    if (!memoryText.isEmpty())
        return memoryChild(memoryText);
    if (gui.isEmpty() || !QFileInfo(gui).isExecutable())
        return fail(QStringLiteral("--gui PATH: the tokenwire program to start (got \"%1\")").arg(gui));
    if (runs < 1 || rounds < 1)
        return fail(QStringLiteral("--runs and --rounds must be positive numbers"));

    // (a) cold start.
    std::vector<double> shown, process;
    for (int i = 0; i < runs; ++i) {
        const Start s = coldStart(gui);
        if (s.shownMs < 0)
            return 1;
        shown.push_back(s.shownMs);
        process.push_back(s.processMs);
    }
    const tw::bench::Stats sa = tw::bench::stats(shown), pa = tw::bench::stats(process);
    std::printf("(a) cold start, %s, stage 1 painted with its derivation (offscreen, %d processes; target < 1000 ms)\n",
                kPreset, runs);
    std::printf("    shown after   median %6.0f ms  min %6.0f  max %6.0f\n", sa.median, sa.min, sa.max);
    std::printf("    whole process median %6.0f ms  min %6.0f  max %6.0f  (library loading and exit included)\n",
                pa.median, pa.min, pa.max);
    std::printf("RESULT name=cold_start shown_median_ms=%.0f shown_min_ms=%.0f shown_max_ms=%.0f "
                "process_median_ms=%.0f process_min_ms=%.0f process_max_ms=%.0f runs=%d\n",
                sa.median, sa.min, sa.max, pa.median, pa.min, pa.max, runs);

    // (b) stage switches.
    tw::ui::MainWindow window;
    if (!openWindow(window))
        return 1;
    auto* stages = window.findChild<QStackedWidget*>();
    std::array<PaintCounter, kStages> counters;
    for (int s = 0; s < kStages && stages; ++s)
        stages->widget(s)->installEventFilter(&counters[std::size_t(s)]);
    std::array<double, kStages> first{};
    std::array<std::vector<double>, kStages> warm;
    std::array<int, kStages> unpainted{};
    // The order 2,3,4,5,1: stage 1 is the one shown at start, so each first visit is a real first show.
    for (int round = 0; round <= rounds; ++round) {
        for (int k = 1; k <= kStages; ++k) {
            const int s = k % kStages;
            const int paintsBefore = counters[std::size_t(s)].paints;
            const double ms = switchMs(window, s);
            unpainted[std::size_t(s)] += counters[std::size_t(s)].paints == paintsBefore;
            if (round == 0)
                first[std::size_t(s)] = ms;
            else
                warm[std::size_t(s)].push_back(ms);
            if (s == kStages - 1)
                settle(window);
        }
    }
    std::printf("\n(b) switching stages at 1280x720: setStage + processEvents + one repaint (%d rounds; target < 50 ms)\n",
                rounds);
    std::printf("    stage 5 starts its simulation when first shown: its switch is timed until its frame is painted\n");
    double worstMedian = 0, worstAll = 0;
    for (int s = 0; s < kStages; ++s) {
        const tw::bench::Stats w = tw::bench::stats(warm[std::size_t(s)]);
        worstMedian = std::max(worstMedian, w.median);
        worstAll = std::max({worstAll, w.max, first[std::size_t(s)]});
        std::printf("    stage %d  first %6.1f ms   then median %6.2f ms  worst %6.2f ms%s\n", s + 1,
                    first[std::size_t(s)], w.median, w.max,
                    unpainted[std::size_t(s)] ? "  (NOT PAINTED on some switches)" : "");
        std::printf("RESULT name=switch_stage%d first_ms=%.2f median_ms=%.3f worst_ms=%.3f unpainted=%d\n", s + 1,
                    first[std::size_t(s)], w.median, w.max, unpainted[std::size_t(s)]);
    }
    std::printf("RESULT name=switch worst_median_ms=%.3f worst_ms=%.3f rounds=%d\n", worstMedian, worstAll, rounds);

    // (c) memory, in a fresh process of this program.
    if (text.isEmpty() || !QFileInfo(text).isReadable()) {
        std::printf("\n(c) memory: skipped, no text (pass --text FILE or set TOKENWIRE_BENCH_TEXT)\n");
        return 0;
    }
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    child.start(QApplication::applicationFilePath(), {QStringLiteral("--memory-child"), text});
    if (!child.waitForFinished(600000) || child.exitCode() != 0)
        return fail(QStringLiteral("the memory run on %1 failed").arg(text));
    const QString out = QString::fromLocal8Bit(child.readAllStandardOutput());
    const QString line = out.section(QStringLiteral("MEMORY "), 1).section(QLatin1Char('\n'), 0, 0);
    auto field = [&](const char* key) {
        for (const QString& kv : line.split(QLatin1Char(' ')))
            if (kv.section(QLatin1Char('='), 0, 0) == QLatin1String(key))
                return kv.section(QLatin1Char('='), 1);
        return QString();
    };
    std::printf("\n(c) memory with %s (%s bytes, %s tokens) open in stage 1 and all five panes visited (target < 300 MB)\n",
                qPrintable(QFileInfo(text).fileName()), qPrintable(field("text_bytes")), qPrintable(field("tokens")));
    std::printf("    VmRSS  %s MiB at start (reference preset, the Canto I sample), %s MiB with the poem tokenized"
                " (%s ms to open and tokenize), %s MiB after the five panes\n",
                qPrintable(field("rss_start_mib")), qPrintable(field("rss_loaded_mib")), qPrintable(field("open_ms")),
                qPrintable(field("rss_visited_mib")));
    std::printf("    VmHWM  %s MiB = %.0f MB (peak resident)\n", qPrintable(field("hwm_mib")),
                field("hwm_mib").toDouble() * 1.048576);
    std::printf("RESULT name=memory %s\n", qPrintable(line));
    return 0;
}
