// tokenwire: the GUI. `tokenwire [FILE.tokenwire.json] [--preset NAME] [--stage N] [--size WxH]
// [--screenshot DIR] [--startup-timing]`: --screenshot renders each stage to DIR/stageN.png and
// exits; --startup-timing prints how long the window took to show the stage with its derivation.

#include "document/document.h"
#include "document/documentactions.h"
#include "mainwindow.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QTextStream>
#include <QUndoStack>

int main(int argc, char* argv[])
{
    QElapsedTimer clock;
    clock.start();
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("TokenWire"));
    tw::ui::MainWindow window;
    QTextStream err(stderr);
    const QStringList args = QApplication::arguments();
    auto option = [&](const char* name) {
        const auto at = args.indexOf(QLatin1String(name));
        return at > 0 && at + 1 < args.size() ? args.at(at + 1) : QString();
    };
    if (const QString preset = option("--preset"); !preset.isEmpty()) {
        QString error;
        if (!window.document()->loadPreset(preset, &error)) {
            err << "tokenwire: --preset: " << error << '\n';
            return 1;
        }
        window.document()->undoStack()->clear();
    }
    for (int i = 1; i < args.size(); ++i)
        if (!args[i].startsWith(QLatin1String("--")) && !args[i - 1].startsWith(QLatin1String("--")))
            window.actions()->openPath(args[i]);
    if (const QString size = option("--size"); !size.isEmpty())
        window.resize(size.section(QLatin1Char('x'), 0, 0).toInt(), size.section(QLatin1Char('x'), 1, 1).toInt());
    if (const QString stage = option("--stage"); !stage.isEmpty())
        window.setStage(stage.toInt() - 1);
    if (args.contains(QLatin1String("--screenshot"))) {
        QString error;
        const QString dir = option("--screenshot");
        if (dir.isEmpty() || !tw::ui::saveStageScreenshots(window, dir, &error)) {
            err << "tokenwire: --screenshot: " << (error.isEmpty() ? QStringLiteral("needs a folder") : error) << '\n';
            return 1;
        }
        return 0;
    }
    window.show();
    if (args.contains(QLatin1String("--startup-timing"))) {
        window.document()->waitForDerivation(60000);
        QApplication::processEvents();
        window.grab(); // one full paint of the current stage
        err << "tokenwire: stage " << window.stage() + 1 << " shown with its derivation after " << clock.elapsed()
            << " ms\n";
        return 0;
    }
    return QApplication::exec();
}
