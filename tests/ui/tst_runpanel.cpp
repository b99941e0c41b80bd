// Stage 5's "Run" tab (issue #40) with real widgets and real input: the tab opened by a click, counts
// typed into the tokens field (a bad one refused beside the field, nothing lost), the price changed
// from the keyboard, the run following the plan and never showing a previous scenario's, and the GUI's
// run figures equal to `tokenwire-cli run --json` for two presets (the CLI run as a process).
//
// A batch ramp's phases are simulated when the tab is looked at, and the run counts them as the CLI does.
//
// Hand values: paper-dp trains G = 524,288 tokens per step on 8 GPUs; D = 10^10 tokens take
// ⌈10^10 / 524,288⌉ = 19,074 steps. With no tokens, D = 20 · P = 20 · 124,439,808 = 2,488,796,160
// (GPT-2 small's published parameter count; Chinchilla's 20 tokens per parameter).

#include "../support/testsupport.h"
#include "document/document.h"
#include "document/results.h"
#include "panes/runpanel.h"
#include "panes/wirepane.h"
#include "scenario/run.h"
#include "views/busyveil.h"
#include "workers/backgroundjob.h"

#include <qcustomplot.h>

#include <QDoubleSpinBox>
#include <QTemporaryDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <cmath>

using tw::ui::Document;
using tw::ui::RunPanel;
using tw::ui::WirePane;

class TestRunPanel : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void typedCountsDriveTheRun();
    void otherEditsClearTheRunUntilTheirStep();
    void rampPhasesSimulatedWhenTheTabIsShown();
    void cliJsonEqualsTheGuiFigures_data();
    void cliJsonEqualsTheGuiFigures();

private:
    void loadPreset(const char* name);
    void openRunTab();
    void typeTokens(const QString& text);
    Document* m_doc = nullptr;
    WirePane* m_pane = nullptr;
    RunPanel* m_run = nullptr;
};

void TestRunPanel::init()
{
    m_doc = new Document;
    m_pane = new WirePane(m_doc);
    m_pane->resize(1280, 720);
    m_pane->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_pane));
    m_run = m_pane->runPanel();
    QVERIFY(m_run);
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation());
}

void TestRunPanel::cleanup()
{
    delete m_pane;
    delete m_doc;
    m_pane = nullptr;
    m_doc = nullptr;
}

void TestRunPanel::loadPreset(const char* name)
{
    QVERIFY(m_doc->loadPreset(QString::fromLatin1(name)));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation(300000)); // gpt3-175b's step in a Debug or ASan build on a busy machine
    QVERIFY(m_doc->results()->isStepCurrent());
}

void TestRunPanel::openRunTab()
{
    QTabWidget* tabs = m_pane->tabs();
    int tab = -1;
    for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i) == QStringLiteral("Run"))
            tab = i;
    QVERIFY(tab >= 0);
    QTest::mouseClick(tabs->tabBar(), Qt::LeftButton, {}, tabs->tabBar()->tabRect(tab).center());
    QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(m_run));
    QVERIFY(m_run->isVisible());
}

void TestRunPanel::typeTokens(const QString& text)
{
    QLineEdit* edit = m_run->tokensEdit();
    QTest::mouseDClick(edit, Qt::LeftButton); // focus, as a click does
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Backspace);
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Return);
}

void TestRunPanel::typedCountsDriveTheRun()
{
    loadPreset("paper-dp");
    openRunTab();
    // No tokens in the preset: 20 per parameter, said so.
    QVERIFY2(m_run->run(), qPrintable(m_run->statusLabel()->text()));
    QVERIFY(m_run->run()->chinchilla);
    QCOMPARE(m_run->run()->tokens, 2488796160.0);
    QVERIFY(m_run->statusLabel()->text().contains(QStringLiteral("Chinchilla")));
    QVERIFY(m_run->figureTable()->model()->rowCount() >= 15);

    // A count typed with its unit: the run follows at once, with no new derivation or step.
    const auto generation = m_doc->generation();
    const int derivations = m_doc->derivationCount();
    typeTokens(QStringLiteral("10B"));
    QCOMPARE(m_doc->scenario().run.tokens, 1e10);
    QCOMPARE(m_doc->generation(), generation);
    QCOMPARE(m_doc->derivationCount(), derivations);
    QVERIFY(m_run->run() && !m_run->run()->chinchilla);
    QCOMPARE(m_run->run()->steps, 19074.0);
    QCOMPARE(m_run->tokensEdit()->text(), QStringLiteral("10B"));

    // A bad count: refused next to the field, the text kept, the scenario and the run unchanged.
    typeTokens(QStringLiteral("12 parsecs"));
    QVERIFY(m_run->tokensProblem()->isVisible());
    QVERIFY(m_run->tokensProblem()->text().startsWith(QStringLiteral("run.tokens: ")));
    QCOMPARE(m_run->tokensEdit()->text(), QStringLiteral("12 parsecs"));
    QCOMPARE(m_doc->scenario().run.tokens, 1e10);
    QCOMPARE(m_run->run()->steps, 19074.0);
    typeTokens(QStringLiteral("2e10"));
    QVERIFY(!m_run->tokensProblem()->isVisible());
    QCOMPARE(m_run->run()->steps, std::ceil(2e10 / 524288));

    // A price from the keyboard: the cost is the GPU-hours with failures at that price; undo takes it back.
    QDoubleSpinBox* price = m_run->priceBox();
    QTest::mouseDClick(price, Qt::LeftButton);
    price->selectAll();
    QTest::keyClicks(price, QStringLiteral("2.5"));
    QTest::keyClick(price, Qt::Key_Return);
    QCOMPARE(m_doc->scenario().run.pricePerGpuHour, 2.5);
    QVERIFY(m_run->run()->cost);
    // Nothing is simulated again for it: no veil over the drawing, no step running, the drawing current.
    QVERIFY(!m_pane->veil()->isBusy());
    QVERIFY(!m_doc->results()->stepJob()->isBusy());
    QVERIFY(m_pane->isCurrent());
    QVERIFY(std::fabs(*m_run->run()->cost - 2.5 * m_run->run()->gpuHoursWithFailures) < 1e-6 * *m_run->run()->cost);
    m_doc->undoStack()->undo();
    QCOMPARE(price->value(), 0.0);
    QVERIFY(!m_run->run()->cost);

    // The chart: goodput and interval from 1 GPU (the decade of this 8-GPU cluster) to 100,000, 8 sizes a
    // decade (5 · 8 + 1 = 41), and this cluster's point at its goodput.
    QCustomPlot* plot = m_run->goodputPlot();
    QCOMPARE(plot->graphCount(), 3);
    QCOMPARE(plot->graph(0)->dataCount(), 41);
    QCOMPARE(plot->graph(0)->data()->begin()->key, 1.0);
    QCOMPARE((plot->graph(0)->data()->end() - 1)->key, 100000.0);
    QCOMPARE(plot->graph(2)->data()->begin()->key, 8.0);
    QVERIFY(std::fabs(plot->graph(2)->data()->begin()->value - 100 * m_run->run()->resilience.goodput) < 1e-9);
    QVERIFY(plot->graph(2)->name().contains(QStringLiteral("8 GPUs")));

    // A figure's chain reaches the step and the model's memory: the graph the chains walk is closed.
    const auto missing = m_run->allFigures().missingInputs();
    QVERIFY2(missing.empty(), missing.empty() ? "" : missing.front().c_str());
    QVERIFY(m_run->showFigure(QStringLiteral("run.goodput")));
    QVERIFY(!m_run->showFigure(QStringLiteral("no.such_figure")));
}

void TestRunPanel::otherEditsClearTheRunUntilTheirStep()
{
    loadPreset("paper-dp");
    openRunTab();
    typeTokens(QStringLiteral("1e10"));
    QVERIFY(m_run->run());
    const double step = m_run->run()->stepSeconds;
    // A plan edit: the run of the previous step is gone at once (never beside the new inputs) …
    QVERIFY(m_doc->setField(tw::ui::Field::MicroBatch, std::uint64_t{16}));
    QVERIFY(!m_run->run());
    QCOMPARE(m_run->figureTable()->model()->rowCount(), 0);
    QCOMPARE(m_run->goodputPlot()->graphCount(), 0);
    // … and back with the new step, the tokens kept.
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation(300000));
    QVERIFY2(m_run->run(), qPrintable(m_run->statusLabel()->text()));
    QCOMPARE(m_run->run()->tokens, 1e10);
    QVERIFY(m_run->run()->stepSeconds != step);
}

// paper-dp with a batch ramp: G_1 = 262,144 tokens (half the batch: one micro-step instead of two) until
// 10^9 tokens. D = 10^10: ⌈10^9 / 262,144⌉ = 3,815 steps, then ⌈9·10^9 / 524,288⌉ = 17,167: 20,982.
void TestRunPanel::rampPhasesSimulatedWhenTheTabIsShown()
{
    QVERIFY(m_doc->loadPreset(QStringLiteral("paper-dp")));
    tw::scenario::Scenario s = m_doc->scenario();
    s.run.tokens = 1e10;
    s.run.batchRamp = {{1e9, 262144, 0, 0}};
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("ramp.json"));
    QVERIFY(tw::test::writeScenarioFile(path.toStdString(), s));
    QString error;
    QVERIFY2(m_doc->open(path, &error), qPrintable(error));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_pane->waitForSimulation(300000));
    // Not looked at: no phase is simulated, and the run waits for them (no number without its ramp).
    QVERIFY(!m_doc->results()->rampJob()->isBusy());
    QVERIFY(!m_doc->results()->ramp());
    QVERIFY(!m_run->run());
    openRunTab();
    QVERIFY(m_run->statusLabel()->text().contains(QStringLiteral("batch ramp")));
    QTRY_VERIFY_WITH_TIMEOUT(m_run->run().has_value(), 300000);
    const auto& r = *m_run->run();
    QCOMPARE(r.phases.size(), std::size_t(2));
    QCOMPARE(r.steps, 20982.0);
    QVERIFY(r.phases[0].stepSeconds < r.phases[1].stepSeconds); // one micro-step against two
    QVERIFY(m_run->statusLabel()->text().contains(QStringLiteral("ramp")));
    QVERIFY(m_run->showFigure(QStringLiteral("run.phase1.step_time_s")));
    const auto missing = m_run->allFigures().missingInputs();
    QVERIFY2(missing.empty(), missing.empty() ? "" : missing.front().c_str());
    // Tokens typed: the run follows on the same phase steps, nothing simulated again.
    const auto ramp = m_doc->results()->ramp();
    typeTokens(QStringLiteral("5e8"));
    QVERIFY(!m_doc->results()->rampJob()->isBusy());
    QCOMPARE(m_doc->results()->ramp(), ramp);
    QCOMPARE(m_run->run()->steps, std::ceil(5e8 / 262144));
    typeTokens(QStringLiteral("10B"));

    // The CLI on the same file gives the same run.
    QProcess cli;
    cli.start(QStringLiteral(TOKENWIRE_CLI), {QStringLiteral("run"), QStringLiteral("--scenario"), path, QStringLiteral("--json")});
    QVERIFY(cli.waitForFinished(300000));
    QCOMPARE(cli.exitCode(), 0);
    const QJsonObject json = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
    QCOMPARE(json.value(QStringLiteral("steps")).toDouble(), 20982.0);
    auto same = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); };
    QVERIFY(same(json.value(QStringLiteral("gpu_hours")).toDouble(), m_run->run()->gpuHours));
    QVERIFY(same(json.value(QStringLiteral("gpu_hours_with_failures")).toDouble(), m_run->run()->gpuHoursWithFailures));
    const QJsonArray phases = json.value(QStringLiteral("batch_ramp")).toArray();
    QCOMPARE(phases.size(), 2);
    QVERIFY(same(phases[0].toObject().value(QStringLiteral("step_time_s")).toDouble(), m_run->run()->phases[0].stepSeconds));
}

void TestRunPanel::cliJsonEqualsTheGuiFigures_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("tokens"); // typed in the GUI and given to the CLI; empty: the preset's
    QTest::newRow("paper-dp, 10B typed") << QStringLiteral("paper-dp") << QStringLiteral("10B");
    QTest::newRow("gpt3-175b, its 300B") << QStringLiteral("gpt3-175b") << QString();
}

void TestRunPanel::cliJsonEqualsTheGuiFigures()
{
    QFETCH(QString, preset);
    QFETCH(QString, tokens);
    loadPreset(preset.toLatin1().constData());
    openRunTab();
    if (!tokens.isEmpty())
        typeTokens(tokens);
    QVERIFY2(m_run->run() && !m_run->run()->chinchilla, qPrintable(m_run->statusLabel()->text()));

    QProcess cli;
    QStringList args{QStringLiteral("run"), QStringLiteral("--preset"), preset, QStringLiteral("--json")};
    if (!tokens.isEmpty())
        args << QStringLiteral("--tokens") << tokens;
    cli.start(QStringLiteral(TOKENWIRE_CLI), args);
    QVERIFY(cli.waitForFinished(300000));
    QCOMPARE(cli.exitCode(), 0);
    const QJsonObject json = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
    const auto& r = *m_run->run();
    // The keys, each the GUI's number (the JSON's doubles are printed round-trip exact; the
    // simulation runs in another process, so allow the last digits).
    auto same = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); };
    const std::pair<const char*, double> keys[] = {
        {"steps", r.steps},
        {"days", r.days},
        {"gpu_hours", r.gpuHours},
        {"tokens_per_s_per_gpu", r.tokensPerSecondPerGpu},
        {"energy_kwh", r.energyKwh},
        {"interruptions", r.interruptions},
        {"checkpoint_interval_s", r.resilience.intervalSeconds},
        {"goodput", r.resilience.goodput},
    };
    for (const auto& [key, value] : keys)
        QVERIFY2(json.contains(QLatin1String(key)) && same(json.value(QLatin1String(key)).toDouble(), value),
                 qPrintable(QStringLiteral("%1: CLI %2, GUI %3").arg(QLatin1String(key)).arg(json.value(QLatin1String(key)).toDouble()).arg(value)));
    QVERIFY(json.value(QStringLiteral("cost")).isNull()); // no price given to either
    // Every figure of the CLI's run is the GUI's, id for id.
    const QJsonArray figures = json.value(QStringLiteral("figures")).toArray();
    QCOMPARE(figures.size(), qsizetype(r.figures.size()));
    for (const QJsonValue& v : figures) {
        const QJsonObject f = v.toObject();
        const tw::Figure* gui = r.figures.find(f.value(QStringLiteral("id")).toString().toStdString());
        QVERIFY2(gui, qPrintable(f.value(QStringLiteral("id")).toString()));
        QVERIFY2(same(f.value(QStringLiteral("value")).toDouble(), gui->value), gui->id.c_str());
    }
}

QTEST_MAIN(TestRunPanel)
#include "tst_runpanel.moc"
