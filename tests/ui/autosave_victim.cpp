// tokenwire_autosave_victim DIR [SAVE_AS]: a TokenWire session that tst_autosave kills. It opens a
// Document (saved first as SAVE_AS when given, so the autosave records a file of its own), makes two
// edits through the document's edit API — layers L = 12 → 7 and stage 1's text typed inline — lets
// Autosave write DIR/session-….autosave.json, prints "autosaved <path>" and then idles until it is
// killed (SIGKILL: no destructor runs, so the autosave and its lock stay behind, as after a crash).
// It quits by itself after two minutes so that a failed test leaves no process behind.

#include "document/autosave.h"
#include "document/document.h"

#include <QCoreApplication>
#include <QStandardPaths>
#include <QTextStream>
#include <QTimer>

#include <cstdint>
#include <cstdio>

int main(int argc, char* argv[])
{
    QStandardPaths::setTestModeEnabled(true); // AppSettings reads the test settings, not the user's
    QCoreApplication app(argc, argv);
    const QStringList args = QCoreApplication::arguments();
    QTextStream err(stderr);
    if (args.size() < 2 || args.size() > 3) {
        err << "usage: tokenwire_autosave_victim DIR [SAVE_AS]\n";
        return 2;
    }
    tw::ui::Document document;
    if (args.size() == 3) {
        QString error;
        if (!document.saveAs(args[2], &error)) {
            err << "victim: " << error << '\n';
            return 1;
        }
    }
    tw::ui::Autosave autosave(&document, args[1]);
    if (!autosave.isActive()) {
        err << "victim: " << autosave.lastError() << '\n';
        return 1;
    }
    autosave.setSettleMs(50);
    QObject::connect(&autosave, &tw::ui::Autosave::failed, &app, [&](const QString& message) {
        err << "victim: " << message << '\n';
        err.flush();
        QCoreApplication::exit(1);
    });
    bool announced = false;
    QObject::connect(&autosave, &tw::ui::Autosave::written, &app, [&](const QString& path) {
        if (announced)
            return;
        announced = true;
        QTextStream out(stdout);
        out << "autosaved " << path << '\n';
        out.flush();
    });
    if (!document.setField(tw::ui::Field::Layers, std::uint64_t{7})) {
        err << "victim: setField(Layers, 7) pushed nothing\n";
        return 1;
    }
    tw::scenario::TextSource typed;
    typed.kind = tw::scenario::TextSource::Kind::Inline;
    typed.text = "Nel mezzo del cammin di nostra vita\nmi ritrovai per una selva oscura,\n";
    if (!document.setText(typed, true)) {
        err << "victim: setText pushed nothing\n";
        return 1;
    }
    QTimer::singleShot(120000, &app, [] { QCoreApplication::exit(3); });
    return QCoreApplication::exec();
}
