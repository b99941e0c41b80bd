// Every figure links to the section of docs/model.md that explains it (issue 22): the prefix table's
// sections are headings of the page, and every figure of every preset's derivation — and of stage 5's
// fabric and simulated step for the paper reference — has a section. The page is read from the source
// tree, so a renamed heading fails here.

#include "../support/testsupport.h"
#include "network/simulate.h"
#include "scenario/derive.h"
#include "scenario/figuresection.h"
#include "scenario/presets.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace tw;
using namespace tw::scenario;
using tw::test::presetOrDie;

class TestFigureSection : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void tableSectionsAreHeadings();
    void longestPrefixWins_data();
    void longestPrefixWins();
    void everyFigureOfEveryPresetHasASection();
    void stageFiveFiguresHaveASection();

private:
    void checkAll(const FigureSet& figures, const QString& where);
    QSet<QString> m_headings; // "§2.4"
};

void TestFigureSection::initTestCase()
{
    QFile page(QStringLiteral(TOKENWIRE_SOURCE_DIR "/docs/model.md"));
    QVERIFY(page.open(QIODevice::ReadOnly));
    // "## §3 Stage 3 — …", "### §3.1 The mesh".
    const QRegularExpression heading(QStringLiteral("^#{2,4} (§[0-9]+(?:\\.[0-9]+)*) "), QRegularExpression::MultilineOption);
    auto it = heading.globalMatch(QString::fromUtf8(page.readAll()));
    while (it.hasNext())
        m_headings.insert(it.next().captured(1));
    QVERIFY(m_headings.contains(QStringLiteral("§2.4")));
    QVERIFY(!m_headings.contains(QStringLiteral("§9")));
}

void TestFigureSection::tableSectionsAreHeadings()
{
    for (const auto& [prefix, section] : modelSectionTable())
        QVERIFY2(m_headings.contains(QString::fromUtf8(section.data(), qsizetype(section.size()))),
                 qPrintable(QString::fromUtf8(prefix.data(), qsizetype(prefix.size()))));
}

void TestFigureSection::longestPrefixWins_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QString>("section");
    QTest::newRow("family") << "memory.weights_bytes" << "§2.3";           // model states
    QTest::newRow("sub-family") << "memory.plan.peak_bytes" << "§3.4";     // memory per GPU under the plan
    QTest::newRow("id start") << "memory.activations_bytes" << "§2.2";    // activations kept for backward
    QTest::newRow("pipeline") << "pp.bubble_fraction" << "§3.3";
    QTest::newRow("pipeline calls") << "pp.boundary_bytes_fwd" << "§3.2";
    QTest::newRow("overhead") << "net.overhead_share" << "§5.2";
    QTest::newRow("unknown") << "nothing.here" << "";
    QTest::newRow("no dot match") << "modelx.a" << "";
}

void TestFigureSection::longestPrefixWins()
{
    QFETCH(QString, id);
    QFETCH(QString, section);
    const std::string key = id.toStdString();
    const std::string_view got = modelSectionOf(key);
    QCOMPARE(QString::fromUtf8(got.data(), qsizetype(got.size())), section);
}

void TestFigureSection::checkAll(const FigureSet& figures, const QString& where)
{
    QVERIFY(!figures.all().empty());
    for (const Figure& f : figures.all()) {
        const std::string_view s = modelSectionOf(f.id);
        QVERIFY2(!s.empty(), qPrintable(where + QStringLiteral(": ") + QString::fromStdString(f.id)));
        QVERIFY(m_headings.contains(QString::fromUtf8(s.data(), qsizetype(s.size()))));
    }
}

void TestFigureSection::everyFigureOfEveryPresetHasASection()
{
    for (const std::string& name : presetNames()) {
        const auto d = derive(presetOrDie(name));
        QVERIFY2(d, name.c_str());
        checkAll(d.value()->figures, QString::fromStdString(name));
    }
}

void TestFigureSection::stageFiveFiguresHaveASection()
{
    const Scenario s = presetOrDie("paper-reference");
    const auto d = derive(s);
    QVERIFY(d);
    const auto net = deriveNetwork(s, *d.value());
    QVERIFY(net);
    checkAll(net.value()->figures, QStringLiteral("net"));
    const auto sim = network::simulateStep(*net.value()->topology, *d.value()->stage3, *d.value()->stage4,
                                           simulationOptions(*d.value(), false));
    QVERIFY(sim);
    checkAll(sim.value().figures, QStringLiteral("sim"));
}

QTEST_GUILESS_MAIN(TestFigureSection)
#include "tst_figuresection.moc"
