// Atomic saves: a failed save leaves the old file intact and no temporary file behind.
#include "base/fileio.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>

#include <sys/stat.h>

using namespace tw;

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

std::string str(const QString& s) { return s.toStdString(); }

} // namespace

class TestFileIo : public QObject {
    Q_OBJECT
private slots:
    void savesNewFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("a.json"));
        const Status s = saveFileAtomically(str(path), "{\"x\": 1}\n");
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().toString().c_str());
        QCOMPARE(readAll(path), QByteArray("{\"x\": 1}\n"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
    }

    void replacesAndKeepsPermissions()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("a.json"));
        QVERIFY(saveFileAtomically(str(path), "old").ok());
        QVERIFY(::chmod(path.toLocal8Bit().constData(), 0640) == 0);
        QVERIFY(saveFileAtomically(str(path), "new contents").ok());
        QCOMPARE(readAll(path), QByteArray("new contents"));
        struct stat st {};
        QVERIFY(::stat(path.toLocal8Bit().constData(), &st) == 0);
        QCOMPARE(int(st.st_mode & 07777), 0640);
    }

    void failingWriterLeavesOldFileIntact()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("doc.tokenwire.json"));
        QVERIFY(saveFileAtomically(str(path), "the previous document").ok());
        // A writer that takes 10 bytes, then reports a full disk.
        int calls = 0;
        FileWriter failing{[&calls](int, const void*, std::size_t size) -> ssize_t {
            if (calls++ == 0)
                return static_cast<ssize_t>(std::min<std::size_t>(size, 10));
            errno = ENOSPC;
            return -1;
        }};
        const Status s = saveFileAtomically(str(path), std::string(1000, 'x'), failing);
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().toString()),
                 path + QStringLiteral(": cannot save: No space left on device"));
        QCOMPARE(readAll(path), QByteArray("the previous document"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{QStringLiteral("doc.tokenwire.json")});
        QVERIFY(calls >= 2);
    }

    void devFullReportsNoSpace()
    {
        const Status s = saveFileAtomically("/dev/full", "bytes");
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().toString()), QStringLiteral("/dev/full: cannot save: No space left on device"));
        struct stat st {};
        QVERIFY(::stat("/dev/full", &st) == 0);
        QVERIFY(S_ISCHR(st.st_mode)); // still the device, not replaced by a file
    }

    void badPaths_data()
    {
        QTest::addColumn<QString>("relative");
        QTest::addColumn<QString>("message");
        QTest::newRow("a directory") << QStringLiteral("sub") << QStringLiteral("cannot save: is a directory, not a file");
        QTest::newRow("through a regular file (ENOTDIR)") << QStringLiteral("plain.txt/x.json")
                                                          << QStringLiteral("cannot save (creating a temporary file beside it): Not a directory");
        QTest::newRow("missing folder") << QStringLiteral("nowhere/x.json")
                                        << QStringLiteral("cannot save (creating a temporary file beside it): No such file or directory");
    }
    void badPaths()
    {
        QFETCH(QString, relative);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("sub")));
        QVERIFY(saveFileAtomically(str(dir.filePath(QStringLiteral("plain.txt"))), "keep me").ok());
        const QString path = dir.filePath(relative);
        const Status s = saveFileAtomically(str(path), "data");
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().toString()), path + QStringLiteral(": ") + message);
        QCOMPARE(readAll(dir.filePath(QStringLiteral("plain.txt"))), QByteArray("keep me"));
    }

    void emptyName()
    {
        const Status s = saveFileAtomically("", "data");
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().message), QStringLiteral("cannot save: the file name is empty"));
    }
};

QTEST_GUILESS_MAIN(TestFileIo)
#include "tst_fileio.moc"
