// Nothing the user receives names a file outside the repository (issue 22): the UI strings, presets,
// comments, docs and scripts cite papers, upstream sources and the project's own docs/ pages — never the
// workbench notes the project was built from, nor the folder beside the repository that holds them. The
// benchmarks are the one exception: they read the whole poem from the data folder they document
// (tests/bench/ and scripts/bench.sh). The test walks the source tree, so a new citation fails here.

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QStringList>
#include <QTest>

class TestCitations : public QObject {
    Q_OBJECT
private slots:
    void noFileOutsideTheRepositoryIsNamed();
    void theWalkSeesTheTree();

private:
    struct Hit {
        QString file;
        int line = 0;
        QString text;
    };
    static QStringList scannedFiles();
    static QList<Hit> hitsIn(const QString& path);
};

namespace {

// Built from pieces so that this file does not match itself.
const QStringList& forbidden()
{
    static const QStringList list{
        QStringLiteral("REFERENCE") + QStringLiteral(".md"),
        QStringLiteral("NCCL_MODEL") + QStringLiteral(".md"),
        QStringLiteral("DESIGN") + QStringLiteral(".md"),
        QStringLiteral("TOOLCHAIN") + QStringLiteral(".md"),
        QStringLiteral("..") + QStringLiteral("/shared"),
        QStringLiteral("/work") + QStringLiteral("/shared"),
        QStringLiteral("/.") + QStringLiteral("library"),
    };
    return list;
}

QString root()
{
    return QDir::cleanPath(QStringLiteral(TOKENWIRE_SOURCE_DIR));
}

// Relative paths (from the source root) that may name the data folder: the benchmarks document it.
bool exempt(const QString& rel)
{
    return rel.startsWith(QLatin1String("tests/bench/")) || rel == QLatin1String("scripts/bench.sh");
}

bool isText(const QByteArray& head)
{
    return !head.contains('\0');
}

} // namespace

QStringList TestCitations::scannedFiles()
{
    const QDir top(root());
    QStringList files;
    // Folders that hold what is shipped or read: sources, resources, docs, scripts, tests, CI and packaging.
    for (const char* name : {"app", "core", "ui", "resources", "docs", "scripts", "tests", "tools", "cmake", "data", ".ci"}) {
        const QString d = QString::fromLatin1(name);
        if (!top.exists(d))
            continue;
        QDirIterator it(top.filePath(d), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            const QString rel = top.relativeFilePath(path);
            if (!exempt(rel))
                files << path;
        }
    }
    for (const char* name : {"README.md", "CMakeLists.txt", "CMakePresets.json", ".gitignore"}) {
        const QString f = QString::fromLatin1(name);
        if (top.exists(f))
            files << top.filePath(f);
    }
    return files;
}

QList<TestCitations::Hit> TestCitations::hitsIn(const QString& path)
{
    QList<Hit> hits;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return hits;
    const QByteArray all = f.readAll();
    if (!isText(all.left(8192)))
        return hits; // PNGs and other binaries carry no citation text
    const QList<QByteArray> lines = all.split('\n');
    for (int i = 0; i < lines.size(); ++i) {
        const QString line = QString::fromUtf8(lines[i]);
        for (const QString& word : forbidden())
            if (line.contains(word)) {
                hits.push_back({QDir(root()).relativeFilePath(path), i + 1, line.trimmed().left(160)});
                break; // one report per line
            }
    }
    return hits;
}

void TestCitations::noFileOutsideTheRepositoryIsNamed()
{
    QStringList report;
    for (const QString& path : scannedFiles())
        for (const Hit& h : hitsIn(path))
            report << QStringLiteral("%1:%2: %3").arg(h.file).arg(h.line).arg(h.text);
    if (!report.isEmpty())
        QFAIL(qPrintable(QStringLiteral("files outside the repository are named:\n") + report.join(QLatin1Char('\n'))));
}

// The walk must really see the tree (a wrong root would make the test above pass on nothing), and it must
// see the files that are known to talk about sources: docs/model.md and a core source file.
void TestCitations::theWalkSeesTheTree()
{
    const QStringList files = scannedFiles();
    QVERIFY2(files.size() > 300, qPrintable(QString::number(files.size())));
    QVERIFY(files.contains(QDir(root()).filePath(QStringLiteral("docs/model.md"))));
    QVERIFY(files.contains(QDir(root()).filePath(QStringLiteral("core/network/simulate.cpp"))));
    // The exemption is narrow: the benchmark script is skipped, the other scripts are read.
    QVERIFY(!files.contains(QDir(root()).filePath(QStringLiteral("scripts/bench.sh"))));
    QVERIFY(files.contains(QDir(root()).filePath(QStringLiteral("scripts/test.sh"))));
}

QTEST_GUILESS_MAIN(TestCitations)
#include "tst_citations.moc"
