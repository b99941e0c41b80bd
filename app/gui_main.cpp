// tokenwire: the GUI. `tokenwire [FILE.tokenwire.json] [--scenario FILE | --preset NAME] [--stage N]
// [--size WxH] [--screenshot DIR] [--startup-timing]` (`tokenwire --help` lists them): --screenshot
// renders each stage to DIR/stageN.png and exits; --startup-timing prints how long the window took to
// show the stage with its derivation. Exit codes as tokenwire-cli's: 0 ok, 1 bad input (an unreadable
// scenario, an unknown preset, a folder that cannot be written), 2 bad usage.

#include "document/document.h"
#include "document/documentactions.h"
#include "document/autosave.h"
#include "mainwindow.h"
#include "settings/appsettings.h"
#include "settings/theme.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QIcon>
#include <QSize>
#include <QTextStream>
#include <QUndoStack>

#include <optional>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInput = 1;
constexpr int kExitUsage = 2;

// The options of the GUI; Qt's own (-platform, -style …) are left to QApplication.
struct Options {
    QCommandLineOption help{{QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help and exit.")};
    QCommandLineOption version{{QStringLiteral("v"), QStringLiteral("version")},
                               QStringLiteral("Print \"tokenwire %1\" and exit.").arg(QStringLiteral(TOKENWIRE_VERSION))};
    QCommandLineOption scenario{QStringLiteral("scenario"), QStringLiteral("Open the scenario FILE (.tokenwire.json)."),
                                QStringLiteral("FILE")};
    QCommandLineOption preset{QStringLiteral("preset"), QStringLiteral("Start from the preset NAME (tokenwire-cli presets)."),
                              QStringLiteral("NAME")};
    QCommandLineOption stage{QStringLiteral("stage"), QStringLiteral("Show stage N (1 Text … 5 Wire)."), QStringLiteral("N")};
    QCommandLineOption size{QStringLiteral("size"), QStringLiteral("Window size in pixels, e.g. 1280x720."),
                            QStringLiteral("WxH")};
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("Save each stage as DIR/stage1.png … stage5.png and exit."),
                                  QStringLiteral("DIR")};
    QCommandLineOption startupTiming{QStringLiteral("startup-timing"),
                                     QStringLiteral("Print the ms from start to the painted stage and exit.")};

    // Fills `parser` with every option, the positional FILE and the description.
    void addTo(QCommandLineParser& parser) const
    {
        parser.setApplicationDescription(QStringLiteral("TokenWire %1: from words to bits on the wire.")
                                             .arg(QStringLiteral(TOKENWIRE_VERSION)));
        parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
        parser.addOptions({help, version, scenario, preset, stage, size, screenshot, startupTiming});
        parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("A scenario to open (as --scenario)."),
                                     QStringLiteral("[FILE]"));
    }
};

// Whether `name` (without dashes) is an option QApplication takes itself and removes from the
// arguments (QGuiApplication and QApplication documentation, X11 included).
bool isQtOption(const QString& name)
{
    static const QStringList qt = {QStringLiteral("platform"),   QStringLiteral("platformpluginpath"),
                                   QStringLiteral("platformtheme"), QStringLiteral("plugin"),
                                   QStringLiteral("qmljsdebugger"), QStringLiteral("qwindowgeometry"),
                                   QStringLiteral("qwindowicon"),  QStringLiteral("qwindowtitle"),
                                   QStringLiteral("reverse"),      QStringLiteral("session"),
                                   QStringLiteral("style"),        QStringLiteral("stylesheet"),
                                   QStringLiteral("widgetcount"),  QStringLiteral("display"),
                                   QStringLiteral("geometry"),     QStringLiteral("title"),
                                   QStringLiteral("name"),         QStringLiteral("visual"),
                                   QStringLiteral("ncols"),        QStringLiteral("cmap"),
                                   QStringLiteral("nograb"),       QStringLiteral("dograb"),
                                   QStringLiteral("sync")};
    return qt.contains(name);
}

// The usage, one option a line, to stdout (named "tokenwire" however the program was started).
void printHelp(QCommandLineParser& parser)
{
    const QString text = parser.helpText();
    QTextStream(stdout) << "Usage: tokenwire [options] [FILE]" << text.mid(text.indexOf(QLatin1Char('\n')));
}

// "WxH" with both positive; nullopt otherwise.
std::optional<QSize> parseSize(const QString& text)
{
    const QStringList parts = text.split(QLatin1Char('x'));
    if (parts.size() != 2)
        return std::nullopt;
    bool okW = false;
    bool okH = false;
    const int w = parts[0].toInt(&okW);
    const int h = parts[1].toInt(&okH);
    if (!okW || !okH || w <= 0 || h <= 0 || w > 16384 || h > 16384)
        return std::nullopt;
    return QSize(w, h);
}

// --help, --version and an option neither ours nor Qt's, answered before QApplication (so without a
// display): the exit code, or nothing to go on.
std::optional<int> answerEarly(int argc, char* argv[], const Options& o, QTextStream& err)
{
    QStringList raw;
    for (int i = 0; i < argc; ++i)
        raw << QString::fromLocal8Bit(argv[i]);
    QCommandLineParser early;
    o.addTo(early);
    const bool parsed = early.parse(raw);
    if (parsed && early.isSet(o.help)) {
        printHelp(early);
        return kExitOk;
    }
    if (parsed && early.isSet(o.version)) {
        QTextStream(stdout) << "tokenwire " << TOKENWIRE_VERSION << '\n';
        return kExitOk;
    }
    // An option neither ours nor Qt's: say which, without needing a display.
    bool onlyQtUnknown = true;
    for (const QString& name : early.unknownOptionNames())
        onlyQtUnknown = onlyQtUnknown && isQtOption(name);
    if (!parsed && !onlyQtUnknown) {
        err << "tokenwire: " << early.errorText() << "\nTry 'tokenwire --help'.\n";
        return kExitUsage;
    }
    return std::nullopt;
}

// What the command line asks for once QApplication took its own options.
struct Request {
    QString scenarioPath; // FILE or --scenario
    std::optional<QSize> size;
    std::optional<tw::ui::Stage> stage;
    bool batch = false; // --screenshot or --startup-timing
};

// The request from what QApplication left (help, version and usage errors answered): the exit code
// when it is answered, else nothing.
std::optional<int> readRequest(QCommandLineParser& parser, const Options& o, QTextStream& err, Request& r)
{
    if (!parser.parse(QApplication::arguments())) {
        err << "tokenwire: " << parser.errorText() << "\nTry 'tokenwire --help'.\n";
        return kExitUsage;
    }
    if (parser.isSet(o.help)) {
        printHelp(parser);
        return kExitOk;
    }
    if (parser.isSet(o.version)) {
        QTextStream(stdout) << "tokenwire " << TOKENWIRE_VERSION << '\n';
        return kExitOk;
    }
    auto usage = [&](const QString& message) {
        err << "tokenwire: " << message << "\nTry 'tokenwire --help'.\n";
        return kExitUsage;
    };
    const QStringList files = parser.positionalArguments();
    if (files.size() > 1)
        return usage(QStringLiteral("one scenario FILE at most, got %1: %2").arg(files.size()).arg(files.join(QStringLiteral(", "))));
    if (!files.isEmpty() && parser.isSet(o.scenario))
        return usage(QStringLiteral("give the scenario either as FILE or as --scenario, not both"));
    r.scenarioPath = parser.isSet(o.scenario) ? parser.value(o.scenario) : files.value(0);
    if (!r.scenarioPath.isEmpty() && parser.isSet(o.preset))
        return usage(QStringLiteral("--preset and a scenario file exclude each other: give one"));
    if (parser.isSet(o.size)) {
        r.size = parseSize(parser.value(o.size));
        if (!r.size)
            return usage(QStringLiteral("--size: \"%1\" is not WxH in pixels (e.g. 1280x720)").arg(parser.value(o.size)));
    }
    r.batch = parser.isSet(o.screenshot) || parser.isSet(o.startupTiming);
    if (parser.isSet(o.stage)) {
        bool ok = false;
        r.stage = tw::ui::stageNumbered(parser.value(o.stage).toInt(&ok));
        if (!ok || !r.stage)
            return usage(QStringLiteral("--stage: \"%1\" is not a stage number from 1 to %2")
                             .arg(parser.value(o.stage))
                             .arg(tw::ui::kStageCount));
    }
    return std::nullopt;
}

// The preset or the scenario file the window starts from. A bad --scenario, or a bad FILE in a batch run
// (screenshots, timing), stops with the reason (the exit code); a bad FILE given to the window (a file
// manager's "Open with") is opened later (openLater) on the default scenario, with the reason in a box.
std::optional<int> loadStart(tw::ui::MainWindow& window, const QCommandLineParser& parser, const Options& o,
                             const Request& r, QTextStream& err, bool& openLater)
{
    if (parser.isSet(o.preset)) {
        QString error;
        if (!window.document()->loadPreset(parser.value(o.preset), &error)) {
            err << "tokenwire: --preset: " << error << '\n';
            return kExitInput;
        }
        window.document()->undoStack()->clear();
    }
    if (r.scenarioPath.isEmpty())
        return std::nullopt;
    QString error;
    if (window.document()->open(r.scenarioPath, &error)) {
        if (!r.batch)
            tw::ui::AppSettings::instance()->addRecentFile(r.scenarioPath);
    } else if (!r.batch && !parser.isSet(o.scenario)) {
        openLater = true;
    } else {
        if (!error.contains(r.scenarioPath))
            error = r.scenarioPath + QStringLiteral(": ") + error;
        err << "tokenwire: " << error << '\n';
        return kExitInput;
    }
    return std::nullopt;
}

} // namespace

int main(int argc, char* argv[])
{
    QElapsedTimer clock;
    clock.start();
    QTextStream err(stderr);
    const Options o;
    if (const std::optional<int> answered = answerEarly(argc, argv, o, err))
        return *answered;

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("TokenWire"));
    QApplication::setApplicationVersion(QStringLiteral(TOKENWIRE_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("tokenwire"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/tokenwire.png")));

    // Again on what QApplication left (it removed its own options).
    QCommandLineParser parser;
    o.addTo(parser);
    Request r;
    if (const std::optional<int> answered = readRequest(parser, o, err, r))
        return *answered;

    // The viewer's theme, palette and font scale (batch runs keep the defaults, so pictures and
    // timings do not depend on someone's settings).
    if (!r.batch)
        tw::ui::theme::followAppSettings(app);
    tw::ui::MainWindow window;
    bool openLater = false;
    if (const std::optional<int> failed = loadStart(window, parser, o, r, err, openLater))
        return *failed;
    if (r.size)
        window.resize(*r.size);
    if (r.stage)
        window.setStage(*r.stage);
    if (parser.isSet(o.screenshot)) {
        QString error;
        if (!tw::ui::saveStageScreenshots(window, parser.value(o.screenshot), &error)) {
            err << "tokenwire: --screenshot: " << error << '\n';
            return kExitInput;
        }
        return kExitOk;
    }
    if (!r.batch)
        window.enableAutosave();
    window.show();
    if (parser.isSet(o.startupTiming)) {
        window.document()->waitForDerivation(60000);
        QApplication::processEvents();
        window.grab(); // one full paint of the current stage
        err << "tokenwire: stage " << tw::ui::numberOf(window.currentStage()) << " shown with its derivation after " << clock.elapsed()
            << " ms\n";
        return kExitOk;
    }
    // After a crash: offer the scenario an earlier session autosaved (not when a file or preset was asked for).
    if (r.scenarioPath.isEmpty() && !parser.isSet(o.preset))
        window.autosave()->recoverIfAny();
    if (openLater)
        window.actions()->openPath(r.scenarioPath); // says why in a message box over the window
    return QApplication::exec();
}
