// Presentation mode (issue 8): F5 enters (full screen, the font 1.6× larger, menus and forms put away,
// the narration large), the keyboard alone drives the story whichever widget has the focus (← → and
// PgUp/PgDn change stage, space plays stage 4 and 5, + − zoom the drawing), Esc leaves and restores
// the font exactly. The narration follows the stage and the model, and a hovered number shows its
// formula. Real widgets, offscreen, driven with QTest key and mouse events.

#include "document/document.h"
#include "mainwindow.h"
#include "panes/collectivepane.h"
#include "panes/parallelpane.h"
#include "panes/stagepane.h"
#include "panes/tensorpane.h"
#include "panes/textpane.h"
#include "panes/wirepane.h"
#include "shell/narrationbar.h"
#include "shell/presentation.h"
#include "settings/appsettings.h"
#include "settings/theme.h"
#include "shell/scenariotoolbar.h"
#include "stagenavigator.h"
#include "views/meshview.h"
#include "views/modelform.h"
#include "views/scheduleview.h"
#include "views/tokenchipview.h"
#include "views/transformerview.h"
#include "views/wireview.h"

#include <QAction>
#include <QApplication>
#include <QLineEdit>
#include <QMenuBar>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QToolButton>
#include <QUndoStack>

using tw::ui::Document;
using tw::ui::Field;
using tw::ui::MainWindow;
using tw::ui::Presentation;

class TestPresentation : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void f5EntersAndEscRestoresExactly();
    void arrowsChangeStageWhateverHasTheFocus();
    void keysAreNotStolenOutsidePresentation();
    void spacePlaysStagesFourAndFive();
    void plusZoomsTheDrawing();
    void navigatorFollowsAndCtrlDigitsGo();
    void narrationFollowsTheModel();
    void hoveringANumberShowsItsFormula();
    void stagesAreOneTypeAndEachPaneAStagePane();
    void settingsFontWhilePresenting(); // last: it turns the settings' appearance on for the process

private:
    MainWindow* m_window = nullptr;
    Document* m_doc = nullptr;
};

namespace {

double pointSize(const QFont& f)
{
    return f.pointSizeF() > 0 ? f.pointSizeF() : f.pixelSize();
}

// The viewport rectangle of the first occurrence of `text` in the narration (for the mouse).
QRect textRect(QTextBrowser* browser, const QString& text)
{
    QTextCursor found = browser->document()->find(text);
    if (found.isNull())
        return {};
    QTextCursor start(browser->document());
    start.setPosition(found.selectionStart() + 1);
    QTextCursor end(browser->document());
    end.setPosition(found.selectionEnd() - 1);
    return browser->cursorRect(start).united(browser->cursorRect(end));
}

} // namespace

void TestPresentation::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestPresentation::init()
{
    m_window = new MainWindow;
    m_window->resize(1280, 720);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window));
    m_doc = m_window->document();
    QVERIFY(m_doc->waitForDerivation(60000));
}

void TestPresentation::cleanup()
{
    m_doc->undoStack()->setClean();
    delete m_window;
    m_window = nullptr;
}

void TestPresentation::f5EntersAndEscRestoresExactly()
{
    const QFont before = QApplication::font();
    const QRect geometry = m_window->geometry();

    Presentation* p = m_window->presentation();
    QVERIFY(!p->isActive());
    QVERIFY(!m_window->menuBar()->isHidden());
    QVERIFY(!m_window->scenarioToolbar()->isHidden());
    QTest::keyClick(m_window, Qt::Key_F5);
    QVERIFY(p->isActive());
    QVERIFY(p->action()->isChecked());
    QVERIFY(m_window->windowState() & Qt::WindowFullScreen);
    // The font 1.6× the one the application had (the settings' font).
    QCOMPARE(pointSize(QApplication::font()), pointSize(before) * Presentation::kFontScale);
    QCOMPARE(p->restoreFont(), before);
    QVERIFY(m_window->menuBar()->isHidden());
    QVERIFY(m_window->scenarioToolbar()->isHidden());
    QVERIFY(m_window->narrationBar()->isVisible());
    QVERIFY(m_window->narrationBar()->isLarge());
    // The panes' forms are put away; the drawings stay.
    QVERIFY(!m_window->tensorPane()->form()->isVisibleTo(m_window->tensorPane()));
    QVERIFY(m_window->tensorPane()->diagram()->isVisibleTo(m_window->tensorPane()));
    QVERIFY(!m_window->parallelPane()->nodesBox()->isVisibleTo(m_window->parallelPane()));
    QVERIFY(m_window->parallelPane()->meshView()->isVisibleTo(m_window->parallelPane()));
    // The navigator's labels grew with the font.
    auto* stage1 = m_window->navigator()->findChild<QToolButton*>(QStringLiteral("stage1"));
    QVERIFY(stage1);
    QTRY_VERIFY(pointSize(stage1->font()) > pointSize(before) * Presentation::kFontScale);

    // Esc leaves, from wherever the focus is.
    m_window->narrationBar()->browser()->setFocus();
    QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : m_window, Qt::Key_Escape);
    QVERIFY(!p->isActive());
    QVERIFY(!p->action()->isChecked());
    QCOMPARE(QApplication::font(), before);
    QVERIFY(!(m_window->windowState() & Qt::WindowFullScreen));
    QTRY_COMPARE(m_window->geometry().size(), geometry.size());
    QVERIFY(!m_window->menuBar()->isHidden());
    QVERIFY(!m_window->scenarioToolbar()->isHidden());
    QVERIFY(!m_window->narrationBar()->isLarge());
    QVERIFY(m_window->tensorPane()->form()->isVisibleTo(m_window->tensorPane()));
    QVERIFY(m_window->parallelPane()->nodesBox()->isVisibleTo(m_window->parallelPane()));
    QTRY_COMPARE(pointSize(stage1->font()), pointSize(before) * 1.15);

    // F5 again enters, F5 leaves; the font is still the one from before.
    QTest::keyClick(m_window, Qt::Key_F5);
    QVERIFY(p->isActive());
    QTest::keyClick(m_window, Qt::Key_F5);
    QVERIFY(!p->isActive());
    QCOMPARE(QApplication::font(), before);
}

void TestPresentation::arrowsChangeStageWhateverHasTheFocus()
{
    QTest::keyClick(m_window, Qt::Key_F5);
    QVERIFY(m_window->presentation()->isActive());
    QCOMPARE(m_window->stage(), 0);
    // The focus in stage 1's token chips.
    m_window->textPane()->chipView()->setFocus();
    QTest::keyClick(m_window->textPane()->chipView(), Qt::Key_Right);
    QCOMPARE(m_window->stage(), 1);
    QCOMPARE(m_window->navigator()->currentStage(), 1);
    QCOMPARE(m_window->narrationBar()->stage(), 1);
    // A spin box would step its value with the arrows; in presentation the arrows are the story's.
    QSpinBox* layers = qobject_cast<QSpinBox*>(m_window->tensorPane()->form()->editor(Field::Layers));
    QVERIFY(layers);
    const int value = layers->value();
    QTest::keyClick(layers, Qt::Key_Right);
    QCOMPARE(m_window->stage(), 2);
    QTest::keyClick(layers, Qt::Key_Left);
    QCOMPARE(m_window->stage(), 1);
    QCOMPARE(layers->value(), value);
    // Presenter clickers send PgDn / PgUp.
    QTest::keyClick(m_window, Qt::Key_PageDown);
    QTest::keyClick(m_window, Qt::Key_PageDown);
    QTest::keyClick(m_window, Qt::Key_PageDown);
    QCOMPARE(m_window->stage(), 4);
    QTest::keyClick(m_window, Qt::Key_PageDown); // the last stage stays
    QCOMPARE(m_window->stage(), 4);
    QTest::keyClick(m_window, Qt::Key_PageUp);
    QCOMPARE(m_window->stage(), 3);
    for (int i = 0; i < 5; ++i)
        QTest::keyClick(m_window, Qt::Key_Left);
    QCOMPARE(m_window->stage(), 0);
    // Ctrl-keys stay the menus' (Ctrl+Right is not a stage change).
    QTest::keyClick(m_window, Qt::Key_Right, Qt::ControlModifier);
    QCOMPARE(m_window->stage(), 0);
}

void TestPresentation::keysAreNotStolenOutsidePresentation()
{
    m_window->setStage(3);
    QLineEdit* payload = m_window->collectivePane()->bytesEdit();
    payload->setFocus();
    payload->setCursorPosition(0);
    QTest::keyClick(payload, Qt::Key_Right);
    QCOMPARE(payload->cursorPosition(), 1); // the edit moved its cursor
    QCOMPARE(m_window->stage(), 3);         // and the stage stayed
    QTest::keyClick(payload, Qt::Key_Escape);
    QVERIFY(!m_window->presentation()->isActive());
}

void TestPresentation::spacePlaysStagesFourAndFive()
{
    QTest::keyClick(m_window, Qt::Key_F5);
    m_window->setStage(3);
    tw::ui::ScheduleView* schedule = m_window->collectivePane()->view();
    QVERIFY(schedule->hasSchedule());
    QVERIFY(!schedule->isPlaying());
    m_window->navigator()->setFocus();
    QTest::keyClick(m_window->navigator(), Qt::Key_Space);
    QVERIFY(schedule->isPlaying());
    QTest::keyClick(m_window->navigator(), Qt::Key_Space);
    QVERIFY(!schedule->isPlaying());

    QTest::keyClick(m_window, Qt::Key_Right);
    QCOMPARE(m_window->stage(), 4);
    tw::ui::WirePane* wire = m_window->wirePane();
    QVERIFY(wire->waitForSimulation(120000));
    QVERIFY(wire->isCurrent());
    QVERIFY(!wire->isPlaying());
    QTest::keyClick(m_window->navigator(), Qt::Key_Space);
    QVERIFY(wire->isPlaying());
    // Also with the focus inside the pane (its own space shortcut and presentation's filter: one toggle).
    wire->view()->setFocus();
    QTest::keyClick(wire->view(), Qt::Key_Space);
    QVERIFY(!wire->isPlaying());

    // Stage 3 has no animation: space changes nothing there.
    m_window->setStage(2);
    QTest::keyClick(m_window->navigator(), Qt::Key_Space);
    QVERIFY(!schedule->isPlaying() && !wire->isPlaying());
}

void TestPresentation::plusZoomsTheDrawing()
{
    const QFont chipsBefore = m_window->textPane()->chipView()->font();
    QTest::keyClick(m_window, Qt::Key_F5);
    // Stage 2: the Transformer drawing's scale grows by 1.25 per +, shrinks per −.
    m_window->setStage(1);
    QApplication::processEvents();
    auto* diagram = m_window->tensorPane()->diagram();
    const double s0 = diagram->transform().m11();
    QTest::keyClick(m_window->navigator(), Qt::Key_Plus);
    QVERIFY(qAbs(diagram->transform().m11() - s0 * Presentation::kZoomStep) < 1e-9);
    QTest::keyClick(m_window->navigator(), Qt::Key_Minus);
    QVERIFY(qAbs(diagram->transform().m11() - s0) < 1e-9);
    // Stage 4: the schedule; "=" (the unshifted + key) zooms too.
    m_window->setStage(3);
    QApplication::processEvents();
    auto* schedule = m_window->collectivePane()->view();
    const double c0 = schedule->transform().m11();
    QTest::keyClick(m_window->navigator(), Qt::Key_Equal);
    QVERIFY(schedule->transform().m11() > c0 * 1.2);
    QTest::keyClick(m_window->navigator(), Qt::Key_0); // back to the fitted drawing
    QVERIFY(qAbs(schedule->transform().m11() - c0) < 1e-9);
    // Stage 3: the mesh.
    m_window->setStage(2);
    QApplication::processEvents();
    auto* mesh = m_window->parallelPane()->meshView();
    const double m0 = mesh->transform().m11();
    QTest::keyClick(m_window->navigator(), Qt::Key_Plus);
    QVERIFY(mesh->transform().m11() > m0 * 1.2);
    // Stage 5: the fabric's own zoom.
    m_window->setStage(4);
    QVERIFY(m_window->wirePane()->waitForSimulation(120000));
    auto* wire = m_window->wirePane()->view();
    const double w0 = wire->zoom();
    QTest::keyClick(m_window->navigator(), Qt::Key_Plus);
    QTest::keyClick(m_window->navigator(), Qt::Key_Plus);
    QVERIFY(qAbs(wire->zoom() - w0 * Presentation::kZoomStep * Presentation::kZoomStep) < 1e-6);
    // Stage 1: the token chips' text.
    m_window->setStage(0);
    auto* chips = m_window->textPane()->chipView();
    const double f0 = pointSize(chips->font());
    QTest::keyClick(m_window->navigator(), Qt::Key_Plus);
    QVERIFY(pointSize(chips->font()) > f0 * 1.2);
    // Leaving puts the zoom back: the chips' font as before, the fabric's zoom as before.
    QTest::keyClick(m_window->navigator(), Qt::Key_Escape);
    QVERIFY(!m_window->presentation()->isActive());
    QTRY_COMPARE(chips->font(), chipsBefore);
    QVERIFY(qAbs(wire->zoom() - w0) < 1e-6);
}

void TestPresentation::navigatorFollowsAndCtrlDigitsGo()
{
    // Clicking a stage button shows the pane; setStage moves the button; Ctrl+3 goes to stage 3.
    auto* button = m_window->navigator()->findChild<QToolButton*>(QStringLiteral("stage4"));
    QVERIFY(button);
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(m_window->stage(), 3);
    QVERIFY(button->isChecked());
    QCOMPARE(m_window->narrationBar()->stage(), 3);
    m_window->setStage(1);
    QCOMPARE(m_window->navigator()->currentStage(), 1);
    QVERIFY(m_window->navigator()->findChild<QToolButton*>(QStringLiteral("stage2"))->isChecked());
    QVERIFY(!button->isChecked());
    QTest::keyClick(m_window, Qt::Key_3, Qt::ControlModifier);
    QCOMPARE(m_window->stage(), 2);
    QCOMPARE(m_window->navigator()->currentStage(), 2);
    // Also while presenting (the menu bar is hidden; the window carries the shortcuts).
    QTest::keyClick(m_window, Qt::Key_F5);
    QTest::keyClick(m_window, Qt::Key_5, Qt::ControlModifier);
    QCOMPARE(m_window->stage(), 4);
    QTest::keyClick(m_window, Qt::Key_F5);
}

void TestPresentation::narrationFollowsTheModel()
{
    tw::ui::NarrationBar* bar = m_window->narrationBar();
    m_window->setStage(1);
    // GPT-2 small: d = 768, 2 bytes per bf16 number → 1,536 bytes per token.
    QVERIFY2(bar->text().contains(QStringLiteral("d = 768")), qPrintable(bar->text()));
    QVERIFY2(bar->text().contains(QStringLiteral("1,536 bytes")), qPrintable(bar->text()));
    // d = 1,536 (a multiple of the 12 heads) typed into stage 2's form: 2 · 1,536 = 3,072 bytes per token.
    QSpinBox* hidden = qobject_cast<QSpinBox*>(m_window->tensorPane()->form()->editor(Field::HiddenSize));
    QVERIFY(hidden);
    hidden->setFocus();
    hidden->selectAll();
    QTest::keyClicks(hidden, QStringLiteral("1536"));
    QTest::keyClick(hidden, Qt::Key_Return);
    QVERIFY(m_doc->waitForDerivation(60000));
    QTRY_VERIFY2(bar->text().contains(QStringLiteral("d = 1,536")), qPrintable(bar->text()));
    QVERIFY2(bar->text().contains(QStringLiteral("3,072 bytes")), qPrintable(bar->text()));
    // Stage 3's narration is another text, and stage 5's gets the simulation's numbers once it ran.
    m_window->setStage(2);
    QVERIFY2(bar->text().contains(QStringLiteral("8-way data parallelism")), qPrintable(bar->text()));
    m_window->setStage(4);
    QVERIFY(m_window->wirePane()->waitForSimulation(120000));
    QTRY_VERIFY(bar->usesSimulation());
    QVERIFY2(bar->text().contains(QStringLiteral("one training step takes")), qPrintable(bar->text()));
}

void TestPresentation::hoveringANumberShowsItsFormula()
{
    tw::ui::NarrationBar* bar = m_window->narrationBar();
    m_window->setStage(1);
    QApplication::processEvents();
    QTextBrowser* browser = bar->browser();
    const QRect rect = textRect(browser, QStringLiteral("1,536 bytes"));
    QVERIFY(rect.isValid());
    QTest::mouseMove(browser->viewport(), rect.center());
    QTRY_COMPARE(bar->hoveredFigure(), QStringLiteral("narration.activation_bytes_per_token"));
    const QString tip = bar->figureToolTip(bar->hoveredFigure());
    QVERIFY2(tip.contains(QStringLiteral("d·s_act = 768·2 = 1,536 B")), qPrintable(tip));
    // A click asks stage 2's pane to explain it: the narration's own figure is not the pane's, so the
    // pane shows its first input, d.
    // Issue 34: also while another of the pane's tabs is open (Parameters), the click opens the chain's.
    QVERIFY(!m_window->tensorPane()->chain()->toPlainText().contains(QStringLiteral("Hidden size d")));
    auto* tabs = m_window->tensorPane()->findChild<QTabWidget*>();
    QVERIFY(tabs);
    tabs->setCurrentIndex(0);
    QApplication::processEvents();
    QVERIFY(!m_window->tensorPane()->chain()->isVisible());
    QTest::mouseClick(browser->viewport(), Qt::LeftButton, {}, rect.center());
    QTRY_VERIFY2(m_window->tensorPane()->chain()->toPlainText().contains(QStringLiteral("Hidden size d")),
                 qPrintable(m_window->tensorPane()->chain()->toPlainText()));
    QTRY_VERIFY(m_window->tensorPane()->chain()->isVisible());
    // Plain words are no figure.
    const QRect words = textRect(browser, QStringLiteral("each token becomes"));
    QVERIFY(words.isValid());
    QTest::mouseMove(browser->viewport(), words.center());
    QTRY_VERIFY(bar->hoveredFigure().isEmpty());
    // A derivation figure: the hidden state [B,T,d] of 50.33 MB (32·1,024·768·2 B).
    const QRect hiddenState = textRect(browser, QStringLiteral("50.33 MB"));
    QTest::mouseMove(browser->viewport(), hiddenState.center());
    QTRY_COMPARE(bar->hoveredFigure(), QStringLiteral("tensor.hidden_bytes"));
    QVERIFY(bar->figureToolTip(bar->hoveredFigure()).contains(QStringLiteral("50,331,648")));
}

void TestPresentation::settingsFontWhilePresenting()
{
    // The application follows the settings as the GUI does; the font scale starts at 1.
    tw::ui::AppSettings* settings = tw::ui::AppSettings::instance();
    settings->setFontScale(1.0);
    tw::ui::theme::followAppSettings(*qApp);
    const QFont settingsFont = QApplication::font();
    QCOMPARE(settingsFont, tw::ui::theme::scaledFont());
    QTest::keyClick(m_window, Qt::Key_F5);
    QCOMPARE(pointSize(QApplication::font()), pointSize(settingsFont) * Presentation::kFontScale);
    // The viewer changes the font scale while presenting: the settings apply 1.25× the base font, and
    // presentation mode presents that, 1.6× larger (from the settings' font, not from its own).
    settings->setFontScale(1.25);
    QTRY_COMPARE(pointSize(QApplication::font()), pointSize(tw::ui::theme::scaledFont()) * Presentation::kFontScale);
    QCOMPARE(pointSize(tw::ui::theme::scaledFont()), pointSize(settingsFont) * 1.25);
    // Leaving restores the settings' font as it is now (1.25×), exactly.
    QTest::keyClick(m_window, Qt::Key_Escape);
    QCOMPARE(QApplication::font(), tw::ui::theme::scaledFont());
    // A theme change while presenting does not lose the presentation font either.
    QTest::keyClick(m_window, Qt::Key_F5);
    const double presenting = pointSize(QApplication::font());
    settings->setTheme(tw::ui::AppSettings::Theme::Dark);
    QTest::qWait(50);
    QTRY_COMPARE(pointSize(QApplication::font()), presenting);
    QTest::keyClick(m_window, Qt::Key_Escape);
    QCOMPARE(QApplication::font(), tw::ui::theme::scaledFont());
    settings->setTheme(tw::ui::AppSettings::Theme::Light);
    settings->setFontScale(1.0);
    QCOMPARE(QApplication::font(), settingsFont);
}

void TestPresentation::stagesAreOneTypeAndEachPaneAStagePane()
{
    using tw::ui::Stage;
    // ui/stage.h: widgets count 0–4, people and the command line 1–5.
    QCOMPARE(tw::ui::stageNumbered(1), std::optional<Stage>(Stage::Text));
    QCOMPARE(tw::ui::stageNumbered(5), std::optional<Stage>(Stage::Wire));
    QVERIFY(!tw::ui::stageNumbered(0) && !tw::ui::stageNumbered(6));
    QVERIFY(!tw::ui::stageAtIndex(-1) && !tw::ui::stageAtIndex(5));
    QCOMPARE(tw::ui::indexOf(Stage::Wire), 4);
    QCOMPARE(tw::ui::numberOf(Stage::Gpus), 3);
    // Each stage's pane, its drawing (what presentation mode keeps and zooms) and its animation.
    const QList<QWidget*> drawings{m_window->textPane()->chipView(), m_window->tensorPane()->diagram(),
                                   m_window->parallelPane()->meshView(), m_window->collectivePane()->view(),
                                   m_window->wirePane()->view()};
    for (int i = 0; i < 5; ++i) {
        const Stage stage = *tw::ui::stageAtIndex(i);
        m_window->setStage(stage);
        QCOMPARE(m_window->stage(), i);
        QCOMPARE(m_window->currentStage(), stage);
        tw::ui::StagePane* pane = m_window->currentPane();
        QCOMPARE(dynamic_cast<QWidget*>(pane), m_window->panes()[i]);
        QCOMPARE(pane->drawing(), drawings[i]);
        QVERIFY(!pane->isPlaying());
    }
    QCOMPARE(m_window->stagePane(Stage::Text)->drawingCompanion(), m_window->textPane()->idStrip());
    QVERIFY(!m_window->stagePane(Stage::Wire)->drawingCompanion());
    // Stages 1–3 have no animation: setPlaying does nothing there; stage 4's schedule plays.
    m_window->stagePane(Stage::Gpus)->setPlaying(true);
    QVERIFY(!m_window->stagePane(Stage::Gpus)->isPlaying());
    m_window->stagePane(Stage::Collectives)->setPlaying(true);
    QVERIFY(m_window->collectivePane()->view()->isPlaying());
    m_window->stagePane(Stage::Collectives)->setPlaying(false);
    QVERIFY(!m_window->collectivePane()->view()->isPlaying());
}

QTEST_MAIN(TestPresentation)
#include "tst_presentation.moc"
