// Layouts at projector sizes (issue 22): every stage, every tab of its pane, at 1280×720, 1366×768,
// 1920×1080 and in presentation mode, on the paper's reference scenario and on GPT-3 175B. The checks
// read the widgets themselves, not pictures:
//   - no label is clipped: a word-wrapped label is as tall as its text at its width (heightForWidth),
//     any other label as wide and tall as its text (sizeHint); labels that elide on purpose carry the
//     property "elides" and are left out;
//   - no visible widget lies outside its parent (what a scroll area scrolls is left out: it is meant to),
//     none is squeezed below the minimum size set on it (then the layout overlaps its neighbours);
//   - every chart (QCustomPlot) has a visible legend with an entry, or is a documented single-series
//     chart (property "singleSeries": its one series named by its axis titles), and every shown axis has
//     a title; its plotting area keeps room to draw (at least 60 × 30 px).
// Fonts: presentation mode and the settings' font scale enlarge pane captions, token chips and chart
// text as they enlarge the application font (they were fixed at construction before).
// Real widgets, offscreen.

#include "document/document.h"
#include "mainwindow.h"
#include "document/results.h"
#include "scenario/presets.h"
#include "charts/collectivecharts.h"
#include "panes/collectivepane.h"
#include "panes/parallelpane.h"
#include "panes/tensorpane.h"
#include "panes/textpane.h"
#include "panes/wirepane.h"
#include "settings/appsettings.h"
#include "settings/fontfollow.h"
#include "settings/theme.h"
#include "shell/narrationbar.h"
#include "shell/presentation.h"
#include "stagenavigator.h"
#include "views/tokenchipview.h"

#include <qcustomplot.h>

#include <cmath>

#include <QAbstractScrollArea>
#include <QApplication>
#include <QLabel>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTextDocument>
#include <QScrollArea>
#include <QTest>
#include <QToolBar>
#include <QUndoStack>

using tw::ui::MainWindow;
using tw::ui::Presentation;

class TestLayout : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanupTestCase();
    // One function per preset (each loads its preset and simulates its step once), a row per size.
    void paperReferenceHolds_data() { sizes(); }
    void paperReferenceHolds() { holds(QStringLiteral("paper-reference")); }
    void gpt3Holds_data() { sizes(); }
    void gpt3Holds() { holds(QStringLiteral("gpt3-175b")); }
    void captionsChipsAndChartsFollowTheFont();
    void formsFitTheirColumnInEveryPreset();

private:
    static void sizes();
    void holds(const QString& preset);
    // Shows `preset` (loading it only when another one is shown) and waits for its derivation and
    // for the wire's simulation.
    void usePreset(const QString& preset);
    // Every problem of the current stage (its visible tab) as "where: what".
    QStringList problems(const QString& where) const;

    MainWindow* m_window = nullptr;
    QString m_preset;
};

namespace {

double pointSize(const QFont& f)
{
    return f.pointSizeF() > 0 ? f.pointSizeF() : f.pixelSize() * 0.75;
}

QString nameOf(const QWidget* w)
{
    QString path;
    for (const QWidget* p = w; p && !p->isWindow(); p = p->parentWidget()) {
        const QString n = p->objectName().isEmpty() ? QString::fromLatin1(p->metaObject()->className()) : p->objectName();
        path = path.isEmpty() ? n : n + QLatin1Char('/') + path;
        if (!p->objectName().isEmpty() && p != w)
            break; // the nearest named ancestor is enough to find it
    }
    return path;
}

// Whether `w` is (inside) what a scroll area scrolls: its viewport's content may be larger.
bool scrolled(const QWidget* w)
{
    for (const QWidget* p = w->parentWidget(); p; p = p->parentWidget()) {
        const QWidget* up = p->parentWidget();
        if (auto* area = qobject_cast<const QAbstractScrollArea*>(up); area && area->viewport() == p)
            return true;
    }
    return false;
}

// A label whose text does not fit its rectangle (sizes in px).
QString clippedLabel(const QLabel* label)
{
    if (label->text().isEmpty() || label->property("elides").toBool())
        return {};
    constexpr int slack = 1;
    if (label->wordWrap()) {
        const int need = label->heightForWidth(label->width());
        if (need > label->height() + slack)
            return QStringLiteral("wraps to %1 px at width %2 but is %3 px tall").arg(need).arg(label->width()).arg(label->height());
        return {};
    }
    const QSize need = label->sizeHint();
    if (need.width() > label->width() + slack || need.height() > label->height() + slack)
        return QStringLiteral("needs %1×%2 px, has %3×%4")
            .arg(need.width()).arg(need.height()).arg(label->width()).arg(label->height());
    return {};
}

// Lets the layouts settle: a label's height follows its width, the narration's height its text, and
// each change asks the parent's layout again (a few rounds of posted layout requests).
void settle()
{
    for (int round = 0; round < 4; ++round) {
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        QCoreApplication::processEvents();
    }
}

QString chartProblem(const QCustomPlot* plot)
{
    QStringList out;
    const bool single = plot->property("singleSeries").toBool();
    // An empty chart (nothing run yet) has nothing to name; one with data names it.
    if (!single && (!plot->legend || !plot->legend->visible() || (plot->legend->itemCount() == 0 && plot->plottableCount() > 0)))
        out << QStringLiteral("no legend");
    for (QCPAxisRect* rect : plot->axisRects()) {
        for (QCPAxis* axis : rect->axes(QCPAxis::atBottom | QCPAxis::atLeft))
            if (axis->visible() && axis->label().trimmed().isEmpty())
                out << QStringLiteral("an axis without a title");
        // Issue #34: every plot area at least 120 px tall at 1280×720 and up, normal and presenting.
        if (rect->width() < 60 || rect->height() < 120)
            out << QStringLiteral("no room to draw (%1×%2 px)").arg(rect->width()).arg(rect->height());
    }
    return out.join(QStringLiteral(", "));
}

} // namespace

void TestLayout::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    m_window = new MainWindow;
    m_window->resize(1280, 720);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
}

void TestLayout::cleanupTestCase()
{
    m_window->presentation()->leave();
    m_window->document()->undoStack()->setClean();
    delete m_window;
}

void TestLayout::usePreset(const QString& preset)
{
    if (m_preset == preset)
        return;
    QString error;
    QVERIFY2(m_window->document()->loadPreset(preset, &error), qPrintable(error));
    QVERIFY(m_window->document()->waitForDerivation(60000));
    // The story's thread as a class follows it: a token followed through the stages (its chips and
    // captions take room in every pane).
    m_window->parallelPane()->followToken(70);
    m_window->setStage(4);
    QVERIFY(m_window->wirePane()->waitForSimulation(120000));
    m_preset = preset;
}

QStringList TestLayout::problems(const QString& where) const
{
    QStringList out;
    QWidget* pane = m_window->panes()[m_window->stage()];
    QList<QWidget*> roots = {pane, m_window->narrationBar(), m_window->navigator()};
    for (QWidget* root : roots) {
        if (!root->isVisible())
            continue;
        QList<QWidget*> widgets = root->findChildren<QWidget*>();
        widgets.prepend(root);
        for (QWidget* w : widgets) {
            if (!w->isVisible())
                continue;
            if (auto* label = qobject_cast<QLabel*>(w)) {
                const QString clip = clippedLabel(label);
                if (!clip.isEmpty())
                    out << QStringLiteral("%1: label %2 “%3” %4").arg(where, nameOf(label), label->text().left(40), clip);
            }
            if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
                const QString problem = chartProblem(plot);
                if (!problem.isEmpty())
                    out << QStringLiteral("%1: chart %2: %3").arg(where, nameOf(plot), problem);
            }
            // A minimum size set on purpose (a drawing's, a chart's) is kept: below it the window was
            // too small for the layout, which then squeezes widgets over each other.
            if (!w->isWindow() && (w->height() < w->minimumHeight() || w->width() < w->minimumWidth()))
                out << QStringLiteral("%1: %2 squeezed to %3×%4 below its minimum %5×%6")
                           .arg(where, nameOf(w))
                           .arg(w->width()).arg(w->height())
                           .arg(w->minimumWidth()).arg(w->minimumHeight());
            QWidget* parent = w->parentWidget();
            if (w == root || !parent || w->isWindow() || scrolled(w) || qobject_cast<QAbstractScrollArea*>(parent)
                || qobject_cast<QTabBar*>(parent) || qobject_cast<QCustomPlot*>(parent))
                continue;
            if (!parent->rect().adjusted(-1, -1, 1, 1).contains(w->geometry()))
                out << QStringLiteral("%1: %2 at (%3,%4 %5×%6) lies outside its parent (%7×%8)")
                           .arg(where, nameOf(w))
                           .arg(w->x()).arg(w->y()).arg(w->width()).arg(w->height())
                           .arg(parent->width()).arg(parent->height());
        }
    }
    // The narration has no scroll bar: it must be as tall as its sentences.
    QTextBrowser* narration = m_window->narrationBar()->browser();
    if (narration->isVisible()) {
        const int need = int(std::ceil(narration->document()->size().height()));
        if (need > narration->viewport()->height() + 1)
            out << QStringLiteral("%1: the narration needs %2 px, shows %3").arg(where).arg(need).arg(narration->viewport()->height());
    }
    return out;
}

void TestLayout::sizes()
{
    QTest::addColumn<QSize>("size");
    QTest::addColumn<bool>("presenting");
    for (const QSize size : {QSize(1280, 720), QSize(1366, 768), QSize(1920, 1080)})
        QTest::addRow("%dx%d", size.width(), size.height()) << size << false;
    QTest::addRow("presenting 1280x720") << QSize(1280, 720) << true;
}

void TestLayout::holds(const QString& preset)
{
    QFETCH(QSize, size);
    QFETCH(bool, presenting);
    usePreset(preset);
    m_window->presentation()->setActive(presenting);
    // Full screen offscreen is the screen's size: the projector's size is the window's here.
    m_window->setWindowState(Qt::WindowNoState);
    m_window->resize(size);
    settle();
    QStringList found;
    QStringList grew;
    for (int stage = 0; stage < m_window->stageCount(); ++stage) {
        m_window->setStage(stage);
        settle();
        QWidget* pane = m_window->panes()[stage];
        const QList<QTabWidget*> tabs = pane->findChildren<QTabWidget*>();
        bool anyTabs = false;
        for (QTabWidget* tab : tabs) {
            if (!tab->isVisible())
                continue;
            anyTabs = true;
            const int was = tab->currentIndex();
            for (int i = 0; i < tab->count(); ++i) {
                tab->setCurrentIndex(i);
                QCoreApplication::processEvents();
                // Stage 4's algorithm charts are drawn on demand (as --screenshot does).
                if (stage == 3)
                    m_window->collectivePane()->charts()->setSpec(m_window->collectivePane()->spec(),
                                                                  m_window->document()->scenario().collectives.link);
                settle();
                found << problems(QStringLiteral("stage %1, tab “%2”").arg(stage + 1).arg(tab->tabText(i)));
            }
            // Every page seen (a chart knows its readable minimum once drawn): the tab bar stays under the
            // pointer as tabs are clicked — a page asking for more height than the others would move the
            // bar (and the drawing above) at each click.
            const QPoint barAt = tab->tabBar()->mapTo(m_window, QPoint(0, 0));
            for (int i = 0; i < tab->count(); ++i) {
                tab->setCurrentIndex(i);
                settle();
                if (const QPoint now = tab->tabBar()->mapTo(m_window, QPoint(0, 0)); now != barAt)
                    found << QStringLiteral("stage %1: showing tab “%2” moved the tab bar from (%3,%4) to (%5,%6)")
                                 .arg(stage + 1).arg(tab->tabText(i)).arg(barAt.x()).arg(barAt.y()).arg(now.x()).arg(now.y());
            }
            tab->setCurrentIndex(was);
        }
        if (!anyTabs)
            found << problems(QStringLiteral("stage %1").arg(stage + 1));
        // The projector's size holds: no stage asks for a larger window (which a screen cannot give).
        if (m_window->size() != size)
            grew << QStringLiteral("stage %1: the window grew to %2×%3").arg(stage + 1).arg(m_window->width()).arg(m_window->height());
    }
    found.removeDuplicates();
    QVERIFY2(found.isEmpty(), qPrintable(QStringLiteral("\n") + found.join(QLatin1Char('\n'))));
    QVERIFY2(grew.isEmpty(), qPrintable(QStringLiteral("\n") + grew.join(QLatin1Char('\n'))));
    m_window->presentation()->leave();
}

void TestLayout::captionsChipsAndChartsFollowTheFont()
{
    usePreset(QStringLiteral("paper-reference"));
    m_window->resize(1280, 720);
    m_window->setStage(1);
    QCoreApplication::processEvents();
    QLabel* caption = m_window->findChild<QLabel*>(QStringLiteral("parallelCaption"));
    QVERIFY(caption);
    tw::ui::TokenChipView* chips = m_window->textPane()->chipView();
    QCustomPlot* chart = nullptr;
    for (QCustomPlot* plot : m_window->tensorPane()->findChildren<QCustomPlot*>())
        if (!chart && plot->xAxis)
            chart = plot;
    QVERIFY(chart);
    const double app = pointSize(QApplication::font());
    // Before: the caption 1.15×, the chips 1.25× the application font (panekit, textpanebuild).
    QCOMPARE(pointSize(caption->font()), app * 1.15);
    QCOMPARE(pointSize(chips->font()), app * 1.25);
    const double tick = pointSize(chart->xAxis->tickLabelFont());
    const double legend = pointSize(chart->legend->font());

    // Presentation mode: 1.6× the application font, and the same 1.6× on each of them.
    m_window->presentation()->enter();
    QTRY_COMPARE(pointSize(caption->font()), app * Presentation::kFontScale * 1.15);
    QCOMPARE(pointSize(chips->font()), app * Presentation::kFontScale * 1.25);
    chart->replot();
    QCOMPARE(tw::ui::fontfollow::chartFontFactor(chart), Presentation::kFontScale);
    QCOMPARE(pointSize(chart->xAxis->tickLabelFont()), tick * Presentation::kFontScale);
    QCOMPARE(pointSize(chart->legend->font()), legend * Presentation::kFontScale);
    // Leaving: back exactly.
    m_window->presentation()->leave();
    QTRY_COMPARE(pointSize(caption->font()), app * 1.15);
    QCOMPARE(pointSize(chips->font()), app * 1.25);
    chart->replot();
    QCOMPARE(pointSize(chart->xAxis->tickLabelFont()), tick);
    QCOMPARE(pointSize(chart->legend->font()), legend);

    // The settings' font scale (125 %): the application font and, with it, the caption and the chart.
    tw::ui::AppSettings::instance()->setFontScale(1.0);
    tw::ui::theme::followAppSettings(*qApp);
    const double settingsApp = pointSize(QApplication::font());
    chart->replot();
    const double settingsTick = pointSize(chart->xAxis->tickLabelFont());
    tw::ui::AppSettings::instance()->setFontScale(1.25);
    QTRY_COMPARE(pointSize(caption->font()), settingsApp * 1.25 * 1.15);
    QCOMPARE(pointSize(chips->font()), settingsApp * 1.25 * 1.25);
    chart->replot();
    QCOMPARE(pointSize(chart->xAxis->tickLabelFont()), settingsTick * 1.25);
    tw::ui::AppSettings::instance()->setFontScale(1.0);
}

// Every stage's form fits its column at 1280×720 in every preset: a form wider than its scroll area (which
// scrolls only vertically) was cut on the right (llama3-405b-98k's three-tier rows in stage 5). Long rows
// put the field under its label instead, and long lines wrap. Only the derivation is waited for; the
// steps are cancelled.
void TestLayout::formsFitTheirColumnInEveryPreset()
{
    m_window->setWindowState(Qt::WindowNoState);
    m_window->resize(1280, 720);
    QStringList found;
    for (const std::string& name : tw::scenario::presetNames()) {
        const QString preset = QString::fromStdString(name);
        QString error;
        QVERIFY2(m_window->document()->loadPreset(preset, &error), qPrintable(error));
        QVERIFY(m_window->document()->waitForDerivation(60000));
        m_window->document()->results()->cancelStep();
        // A token followed: stage 3's form says where it is trained, GPU by GPU (the numbers of a 16-stage
        // pipeline were once one unbreakable word).
        m_window->parallelPane()->followToken(70);
        for (int stage = 0; stage < m_window->stageCount(); ++stage) {
            m_window->setStage(stage);
            settle();
            for (QScrollArea* scroll : m_window->panes()[stage]->findChildren<QScrollArea*>()) {
                if (!scroll->isVisible() || !scroll->widget() || scroll->horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff)
                    continue;
                if (scroll->widget()->width() > scroll->viewport()->width())
                    found << QStringLiteral("%1, stage %2: %3 is %4 px wide in a %5 px column")
                                 .arg(preset).arg(stage + 1).arg(nameOf(scroll))
                                 .arg(scroll->widget()->width()).arg(scroll->viewport()->width());
            }
        }
    }
    m_preset.clear();
    m_window->setStage(0);
    QVERIFY2(found.isEmpty(), qPrintable(QStringLiteral("\n") + found.join(QLatin1Char('\n'))));
}

QTEST_MAIN(TestLayout)
#include "tst_layout.moc"
