// tokenwire: the GUI. `tokenwire --screenshot DIR` renders each stage to DIR/stageN.png and exits.

#include "mainwindow.h"

#include <QApplication>
#include <QTextStream>

int main(int argc, char* argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("TokenWire"));
    tw::ui::MainWindow window;
    const QStringList args = QApplication::arguments();
    if (const auto at = args.indexOf(QStringLiteral("--screenshot")); at > 0) {
        QString error;
        if (at + 1 >= args.size() || !tw::ui::saveStageScreenshots(window, args.at(at + 1), &error)) {
            QTextStream(stderr) << "tokenwire: --screenshot: " << (error.isEmpty() ? QStringLiteral("needs a folder") : error) << '\n';
            return 1;
        }
        return 0;
    }
    window.show();
    return QApplication::exec();
}
