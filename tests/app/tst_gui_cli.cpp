// The GUI executable from the outside, as a user or a script starts it: --version, --help, usage
// errors (exit 2 naming the option), --screenshot at an exact size, and --scenario with bad files
// (exit 1 naming the file). Runs the built `tokenwire` (TOKENWIRE_GUI) offscreen through QProcess.

#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

} // namespace

class TstGuiCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void versionPrintsTheProjectVersion();
    void versionAndHelpNeedNoDisplay();
    void helpListsEveryOptionOnOneLine();
    void usageErrorsExitTwoNamingTheOption_data();
    void usageErrorsExitTwoNamingTheOption();
    void badScenarioExitsOneNamingTheFile_data();
    void badScenarioExitsOneNamingTheFile();
    void badFileForTheWindowKeepsItOpen();
    void goodScenarioAndStageStart();
    void screenshotsAreFiveStagesAtTheGivenSize();

private:
    // Runs tokenwire with `args` (offscreen unless `env` says otherwise) and waits for it to end.
    Run run(const QStringList& args, QProcessEnvironment env = {}, int timeoutMs = 120000);
    // Writes `bytes` to `name` in the scratch folder; its absolute path.
    QString writeFile(const QString& name, const QByteArray& bytes);

    QTemporaryDir m_home; // XDG folders of the runs: the tests never touch the real settings
    QTemporaryDir m_scratch;
};

void TstGuiCli::initTestCase()
{
    QVERIFY2(QFile::exists(QStringLiteral(TOKENWIRE_GUI)), TOKENWIRE_GUI);
    QVERIFY(m_home.isValid());
    QVERIFY(m_scratch.isValid());
}

Run TstGuiCli::run(const QStringList& args, QProcessEnvironment env, int timeoutMs)
{
    if (env.isEmpty()) {
        env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    }
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.filePath(QStringLiteral("data")));
    env.insert(QStringLiteral("XDG_CACHE_HOME"), m_home.filePath(QStringLiteral("cache")));
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(TOKENWIRE_GUI), args);
    Run r;
    if (!p.waitForStarted(10000)) {
        r.err = QStringLiteral("did not start: ") + p.errorString();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        r.err = QStringLiteral("did not finish within %1 ms").arg(timeoutMs);
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = QString::fromLocal8Bit(p.readAllStandardOutput());
    r.err = QString::fromLocal8Bit(p.readAllStandardError());
    return r;
}

QString TstGuiCli::writeFile(const QString& name, const QByteArray& bytes)
{
    const QString path = m_scratch.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        return {};
    return path;
}

void TstGuiCli::versionPrintsTheProjectVersion()
{
    // TOKENWIRE_VERSION is CMake's PROJECT_VERSION (project(TokenWire VERSION 0.1.0)).
    for (const QString& flag : {QStringLiteral("--version"), QStringLiteral("-v")}) {
        const Run r = run({flag});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QStringLiteral("tokenwire " TOKENWIRE_VERSION "\n"));
        QCOMPARE(r.err, QString());
    }
    QCOMPARE(QStringLiteral(TOKENWIRE_VERSION), QStringLiteral("0.1.0"));
}

void TstGuiCli::versionAndHelpNeedNoDisplay()
{
    // No platform chosen and no display: answering --version or --help must not start a GUI.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
        env.remove(QString::fromLatin1(name));
    env.insert(QStringLiteral("TOKENWIRE_TEST_NO_DISPLAY"), QStringLiteral("1")); // keeps env non-empty
    Run r = run({QStringLiteral("--version")}, env);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out, QStringLiteral("tokenwire " TOKENWIRE_VERSION "\n"));
    r = run({QStringLiteral("--help")}, env);
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(QStringLiteral("--screenshot")));
    // And an unknown option is reported as such, not as a missing display.
    r = run({QStringLiteral("--no-such-flag")}, env);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QStringLiteral("no-such-flag")), qPrintable(r.err));
}

void TstGuiCli::helpListsEveryOptionOnOneLine()
{
    const Run r = run({QStringLiteral("--help")});
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.err, QString());
    QVERIFY(r.out.startsWith(QStringLiteral("Usage: ")));
    const QStringList lines = r.out.split(QLatin1Char('\n'));
    // Each option: its line names the option, its value and says what it does.
    const QStringList options = {QStringLiteral("--help"),          QStringLiteral("--version"),
                                 QStringLiteral("--scenario <FILE>"), QStringLiteral("--preset <NAME>"),
                                 QStringLiteral("--stage <N>"),       QStringLiteral("--size <WxH>"),
                                 QStringLiteral("--screenshot <DIR>"), QStringLiteral("--startup-timing")};
    for (const QString& option : options) {
        const QStringList hits = lines.filter(option);
        QVERIFY2(hits.size() == 1, qPrintable(option + QStringLiteral(" on ") + QString::number(hits.size()) + QStringLiteral(" lines")));
        const QString description = hits[0].section(option, 1).trimmed();
        QVERIFY2(description.size() > 8 && description.endsWith(QLatin1Char('.')), qPrintable(hits[0]));
    }
    // No description wraps onto a second line: between "Options:" and "Arguments:", every line is an option.
    const qsizetype from = lines.indexOf(QStringLiteral("Options:"));
    const qsizetype to = lines.indexOf(QStringLiteral("Arguments:"));
    QVERIFY(from > 0 && to > from);
    for (qsizetype i = from + 1; i < to; ++i)
        if (!lines[i].isEmpty())
            QVERIFY2(lines[i].trimmed().startsWith(QLatin1Char('-')), qPrintable(lines[i]));
    QVERIFY(lines.mid(to).filter(QStringLiteral("FILE")).size() == 1); // the positional FILE
}

void TstGuiCli::usageErrorsExitTwoNamingTheOption_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("named");
    QTest::newRow("unknown long option") << QStringList{QStringLiteral("--frobnicate")} << QStringLiteral("frobnicate");
    QTest::newRow("unknown after good ones")
        << QStringList{QStringLiteral("--stage"), QStringLiteral("2"), QStringLiteral("--colour"), QStringLiteral("red")}
        << QStringLiteral("colour");
    QTest::newRow("value missing") << QStringList{QStringLiteral("--preset")} << QStringLiteral("--preset");
    QTest::newRow("stage 0") << QStringList{QStringLiteral("--stage"), QStringLiteral("0")} << QStringLiteral("--stage");
    QTest::newRow("stage 6") << QStringList{QStringLiteral("--stage"), QStringLiteral("6")} << QStringLiteral("--stage");
    QTest::newRow("stage not a number") << QStringList{QStringLiteral("--stage"), QStringLiteral("two")} << QStringLiteral("two");
    QTest::newRow("size without x") << QStringList{QStringLiteral("--size"), QStringLiteral("1280")} << QStringLiteral("--size");
    QTest::newRow("size negative") << QStringList{QStringLiteral("--size"), QStringLiteral("-5x720")} << QStringLiteral("--size");
    QTest::newRow("two files") << QStringList{QStringLiteral("a.tokenwire.json"), QStringLiteral("b.tokenwire.json")}
                               << QStringLiteral("b.tokenwire.json");
    QTest::newRow("preset and scenario")
        << QStringList{QStringLiteral("--preset"), QStringLiteral("paper-dp"), QStringLiteral("--scenario"), QStringLiteral("x.json")}
        << QStringLiteral("--preset");
}

void TstGuiCli::usageErrorsExitTwoNamingTheOption()
{
    QFETCH(QStringList, args);
    QFETCH(QString, named);
    const Run r = run(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(named), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("tokenwire --help")), qPrintable(r.err));
    QCOMPARE(r.out, QString());
}

void TstGuiCli::badScenarioExitsOneNamingTheFile_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("bytes"); // empty name: the file does not exist
    QTest::addColumn<QString>("reason");   // a word of the reason
    QTest::newRow("malformed JSON") << QStringLiteral("broken.tokenwire.json")
                                    << QByteArray("{\n  \"schema_version\": 4,\n  \"model\": {\n") << QString();
    QTest::newRow("newer schema") << QStringLiteral("future.tokenwire.json")
                                  << QByteArray("{\"schema_version\": 999, \"name\": \"x\"}") << QStringLiteral("schema_version");
    QTest::newRow("missing file") << QStringLiteral("absent.tokenwire.json") << QByteArray() << QString();
}

void TstGuiCli::badScenarioExitsOneNamingTheFile()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, reason);
    const QString path = bytes.isEmpty() ? m_scratch.filePath(name) : writeFile(name, bytes);
    QVERIFY(!path.isEmpty());
    QVERIFY(bytes.isEmpty() != QFile::exists(path));
    const QString shots = m_scratch.filePath(QStringLiteral("shots-") + name);
    // As a batch run, as a window, and as the positional FILE of a batch run.
    const QList<QStringList> runs = {
        {QStringLiteral("--screenshot"), shots, QStringLiteral("--scenario"), path},
        {QStringLiteral("--scenario"), path},
        {path, QStringLiteral("--startup-timing")},
    };
    for (const QStringList& args : runs) {
        const Run r = run(args);
        QVERIFY2(r.exitCode == 1, qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(" → ") + QString::number(r.exitCode) + QLatin1Char(' ') + r.err));
        QVERIFY2(r.err.contains(path), qPrintable(r.err));
        if (!reason.isEmpty())
            QVERIFY2(r.err.contains(reason), qPrintable(r.err));
        QVERIFY2(!r.err.contains(QStringLiteral("shown with its derivation")), qPrintable(r.err));
    }
    QVERIFY(!QFile::exists(QDir(shots).filePath(QStringLiteral("stage1.png"))));
}

void TstGuiCli::badFileForTheWindowKeepsItOpen()
{
    // A bad FILE given to the window itself (not a batch run, not --scenario: "Open with" from a file
    // manager) opens the window on the default scenario with the reason in a message box: the
    // program is still running after 3 s, where a batch run exits 1 at once (above).
    const QString path = writeFile(QStringLiteral("window.tokenwire.json"), QByteArray("{ not json"));
    QVERIFY(!path.isEmpty());
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
    env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.filePath(QStringLiteral("data")));
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(TOKENWIRE_GUI), {path});
    QVERIFY(p.waitForStarted(10000));
    const bool ended = p.waitForFinished(3000);
    if (ended)
        QFAIL(qPrintable(QStringLiteral("exited %1: %2").arg(p.exitCode()).arg(QString::fromLocal8Bit(p.readAllStandardError()))));
    p.kill();
    QVERIFY(p.waitForFinished(10000));
}

void TstGuiCli::goodScenarioAndStageStart()
{
    // A shipped preset is a valid scenario file (schema 2, migrated on load); the window opens it on
    // the stage asked for and reports that stage painted.
    QFile preset(QStringLiteral(TOKENWIRE_SOURCE_DIR "/resources/presets/paper-tp.json"));
    QVERIFY(preset.open(QIODevice::ReadOnly));
    const QString path = writeFile(QStringLiteral("tp.tokenwire.json"), preset.readAll());
    QVERIFY(!path.isEmpty());
    for (const QStringList& args : {QStringList{QStringLiteral("--scenario"), path}, QStringList{path}}) {
        const Run r = run(args + QStringList{QStringLiteral("--stage"), QStringLiteral("3"), QStringLiteral("--startup-timing")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("tokenwire: stage 3 shown with its derivation after ")), qPrintable(r.err));
    }
    const Run r = run({QStringLiteral("--preset"), QStringLiteral("paper-dp"), QStringLiteral("--startup-timing")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("tokenwire: stage 1 shown")), qPrintable(r.err));
    const Run bad = run({QStringLiteral("--preset"), QStringLiteral("no-such-preset"), QStringLiteral("--startup-timing")});
    QCOMPARE(bad.exitCode, 1);
    QVERIFY2(bad.err.contains(QStringLiteral("no-such-preset")), qPrintable(bad.err));
}

void TstGuiCli::screenshotsAreFiveStagesAtTheGivenSize()
{
    const QString dir = m_scratch.filePath(QStringLiteral("shots/at 1280x720")); // created by the program, space included
    const Run r = run({QStringLiteral("--screenshot"), dir, QStringLiteral("--size"), QStringLiteral("1280x720")}, {}, 570000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QSet<quint64> digests;
    for (int stage = 1; stage <= 5; ++stage) {
        const QString path = QDir(dir).filePath(QStringLiteral("stage%1.png").arg(stage));
        QVERIFY2(QFileInfo(path).size() > 0, qPrintable(path));
        const QImage image(path);
        QVERIFY2(!image.isNull(), qPrintable(path));
        QCOMPARE(image.size(), QSize(1280, 720));
        // Not one flat colour: a pane with text, charts and widgets has many colours; count those of
        // every 4th pixel of every 4th row.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 4)
            for (int x = 0; x < image.width(); x += 4)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() >= 32, qPrintable(path + QStringLiteral(": %1 colours").arg(colours.size())));
        // And each stage is a different picture.
        digests.insert(qHashBits(image.constBits(), size_t(image.sizeInBytes())));
    }
    QCOMPARE(digests.size(), 5);
    // Stage 2's whole diagram, and one picture per tab after the first of stages 2-5 (stage<N>-tab<K>.png,
    // K from 2 without a gap; stage 1 has no tabs), each the window's size and unlike the stage's own.
    QVERIFY(!QImage(QDir(dir).filePath(QStringLiteral("stage2-diagram.png"))).isNull());
    const QStringList files = QDir(dir).entryList({QStringLiteral("*.png")}, QDir::Files);
    for (int stage = 1; stage <= 5; ++stage) {
        const QStringList tabs = files.filter(QRegularExpression(QStringLiteral("^stage%1-tab\\d+\\.png$").arg(stage)));
        QCOMPARE(tabs.isEmpty(), stage == 1);
        const QImage stageImage(QDir(dir).filePath(QStringLiteral("stage%1.png").arg(stage)));
        for (int tab = 2; tab < 2 + tabs.size(); ++tab) {
            const QString path = QDir(dir).filePath(QStringLiteral("stage%1-tab%2.png").arg(stage).arg(tab));
            const QImage image(path);
            QVERIFY2(!image.isNull(), qPrintable(path));
            QCOMPARE(image.size(), QSize(1280, 720));
            QVERIFY2(image != stageImage, qPrintable(path));
        }
    }
}

QTEST_GUILESS_MAIN(TstGuiCli)
#include "tst_gui_cli.moc"
