#pragma once
// Runs the built tokenwire-cli (path in the TOKENWIRE_CLI define) to its end, for the CLI tests.

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <initializer_list>

struct CliRun {
    bool finished = false; // false: timed out or crashed
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
    QString describe() const
    {
        return QStringLiteral("exit %1\n--- stdout ---\n%2\n--- stderr ---\n%3")
            .arg(exitCode)
            .arg(QString::fromUtf8(out.left(3000)), QString::fromUtf8(err.left(3000)));
    }
};

// The arguments of a run, from C strings.
inline QStringList args(std::initializer_list<const char*> list)
{
    QStringList out;
    for (const char* s : list)
        out << QString::fromUtf8(s);
    return out;
}

// Runs tokenwire-cli with args (and stdin bytes when given) to its end.
inline CliRun runCli(const QStringList& args, const QByteArray* stdinData = nullptr)
{
    QProcess p;
    p.setProgram(QStringLiteral(TOKENWIRE_CLI));
    p.setArguments(args);
    p.start();
    CliRun r;
    if (!p.waitForStarted(10000))
        return r;
    if (stdinData)
        p.write(*stdinData);
    p.closeWriteChannel();
    r.finished = p.waitForFinished(300000) && p.exitStatus() == QProcess::NormalExit;
    r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// The JSON a run printed; a discarded value (is_discarded()) when it is not JSON.
inline nlohmann::json parseJson(const QByteArray& bytes)
{
    return nlohmann::json::parse(bytes.constBegin(), bytes.constEnd(), nullptr, false);
}

// Why a run is not the expected failure (exit code, "tokenwire-cli: " on stderr containing every
// fragment, nothing on stdout); empty when it is.
inline QString cliErrorMismatch(const CliRun& r, int exitCode, const QStringList& fragments)
{
    if (!r.finished || r.exitCode != exitCode)
        return r.describe();
    const QString err = QString::fromUtf8(r.err);
    if (!err.startsWith(QStringLiteral("tokenwire-cli: ")))
        return QStringLiteral("stderr does not start with \"tokenwire-cli: \":\n") + err;
    for (const QString& f : fragments)
        if (!err.contains(f))
            return QStringLiteral("expected \"%1\" in stderr:\n%2").arg(f, err);
    if (!r.out.isEmpty())
        return QStringLiteral("unexpected stdout:\n") + QString::fromUtf8(r.out);
    return {};
}
