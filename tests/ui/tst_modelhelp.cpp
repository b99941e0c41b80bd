// Help → "How the numbers are computed" (issue 22): the model's documentation compiled into the program,
// rendered inside the app with its sections listed and a search field. The expected headings and words
// are read from the docs in the source tree (TOKENWIRE_SOURCE_DIR), never from the program's output, so a
// page that is not compiled in, or renders without its headings, fails here. Real widgets, offscreen,
// driven with QTest keys and mouse clicks.

#include "mainwindow.h"
#include "document/document.h"
#include "panes/parallelpane.h"
#include "views/figuretablemodel.h"
#include "shell/modelhelp.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTest>
#include <QTextBlock>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTextCursor>
#include <QUrl>

using tw::ui::MainWindow;
using tw::ui::ModelHelp;

class TestModelHelp : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void everyDocIsCompiledIn();
    void sectionsAreTheHeadingsOfTheSource();
    void showSectionScrollsToItsHeading();
    void searchFindsNextAndWrapsAndSaysWhenAbsent();
    void clickingASectionMovesThere();
    void linksBetweenPagesOpenInPlace();
    void helpMenuAndF1OpenIt();
    void figureChainLinksToItsSection();
    void architecturePageOpensWithItsSections();
};

namespace {

QString sourceDoc(const QString& name)
{
    QFile f(QStringLiteral(TOKENWIRE_SOURCE_DIR "/docs/") + name);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

// The text of the block the browser's cursor is in.
QString cursorBlock(QTextBrowser* b)
{
    return b->textCursor().block().text().trimmed();
}

} // namespace

void TestModelHelp::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestModelHelp::everyDocIsCompiledIn()
{
    // The pages docs/model.md links to are the ones the dialog must be able to open.
    const QString model = sourceDoc(QStringLiteral("model.md"));
    QVERIFY(!model.isEmpty());
    QStringList linked;
    const QRegularExpression link(QStringLiteral("\\]\\(([a-z]+\\.md)\\)"));
    for (auto it = link.globalMatch(model); it.hasNext();)
        linked << it.next().captured(1);
    linked.removeDuplicates();
    QVERIFY2(linked.contains(QStringLiteral("memory.md")), qPrintable(linked.join(u',')));
    const QStringList pages = ModelHelp::pages();
    QCOMPARE(pages.value(0), QStringLiteral("model.md"));
    for (const QString& page : linked)
        QVERIFY2(pages.contains(page), qPrintable(page + QStringLiteral(" is linked from model.md but not compiled in")));
}

void TestModelHelp::sectionsAreTheHeadingsOfTheSource()
{
    ModelHelp help;
    // model.md's "## §N …" headings, from the source file: every one is listed.
    const QString model = sourceDoc(QStringLiteral("model.md"));
    QStringList expected;
    for (const QString& line : model.split(u'\n'))
        if (line.startsWith(QStringLiteral("## ")))
            expected << line.mid(3).remove(u'`').trimmed();
    QVERIFY(expected.size() >= 8); // §0 … §7
    const QStringList shown = help.sections();
    for (const QString& h : expected)
        QVERIFY2(shown.contains(h), qPrintable(QStringLiteral("missing section: ") + h));
    QCOMPARE(help.sectionList()->count(), shown.size());
    // And they render as headings, not as "## " text.
    QVERIFY(!help.browser()->toPlainText().contains(QStringLiteral("## ")));
}

void TestModelHelp::showSectionScrollsToItsHeading()
{
    ModelHelp help;
    help.resize(900, 600);
    help.show();
    QVERIFY(QTest::qWaitForWindowExposed(&help));
    QVERIFY(help.showSection(QStringLiteral("model.md"), QStringLiteral("§5.4")));
    QVERIFY2(cursorBlock(help.browser()).startsWith(QStringLiteral("§5.4")), qPrintable(cursorBlock(help.browser())));
    QVERIFY(help.browser()->textCursor().block().blockFormat().headingLevel() > 0);
    // Scrolled so the heading is at the top of the view, not merely somewhere on screen.
    QVERIFY(help.browser()->cursorRect().top() < 40);
    QVERIFY(!help.showSection(QStringLiteral("model.md"), QStringLiteral("§99")));
    QVERIFY(!help.showSection(QStringLiteral("no-such-page.md")));
}

void TestModelHelp::searchFindsNextAndWrapsAndSaysWhenAbsent()
{
    ModelHelp help;
    help.show();
    QVERIFY(QTest::qWaitForWindowExposed(&help));
    const QString page = help.browser()->toPlainText();
    const QString word = QStringLiteral("Korthikanti");
    const int occurrences = static_cast<int>(page.count(word));
    QVERIFY(occurrences >= 2); // §2.2 and §3.2 of model.md cite the paper
    QLineEdit* search = help.searchField();
    search->setFocus();
    QTest::keyClicks(search, word);
    QTest::keyClick(search, Qt::Key_Return);
    QCOMPARE(help.browser()->textCursor().selectedText(), word);
    const int first = help.browser()->textCursor().selectionStart();
    QCOMPARE(first, static_cast<int>(page.indexOf(word)));
    QTest::keyClick(search, Qt::Key_Return);
    const int second = help.browser()->textCursor().selectionStart();
    QCOMPARE(second, static_cast<int>(page.indexOf(word, first + 1)));
    // Past the last occurrence it wraps to the first.
    for (int i = 2; i < occurrences; ++i)
        QTest::keyClick(search, Qt::Key_Return);
    QTest::keyClick(search, Qt::Key_Return);
    QCOMPARE(help.browser()->textCursor().selectionStart(), first);
    // A word the page does not hold: the status says so, the cursor stays.
    search->clear();
    QTest::keyClicks(search, QStringLiteral("qwertyzzz"));
    QTest::keyClick(search, Qt::Key_Return);
    QVERIFY(help.findChild<QLabel*>(QStringLiteral("modelHelpStatus"))->text().contains(QStringLiteral("qwertyzzz")));
}

void TestModelHelp::clickingASectionMovesThere()
{
    ModelHelp help;
    help.resize(900, 600);
    help.show();
    QVERIFY(QTest::qWaitForWindowExposed(&help));
    QListWidget* list = help.sectionList();
    QListWidgetItem* target = nullptr;
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->text().trimmed().startsWith(QStringLiteral("§4 ")))
            target = list->item(i);
    QVERIFY(target);
    list->scrollToItem(target);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(target).center());
    QVERIFY2(cursorBlock(help.browser()).startsWith(QStringLiteral("§4 ")), qPrintable(cursorBlock(help.browser())));
}

void TestModelHelp::linksBetweenPagesOpenInPlace()
{
    ModelHelp help;
    // model.md links memory.md: the link opens it in the dialog, its first heading is the source's.
    emit help.browser()->anchorClicked(QUrl(QStringLiteral("memory.md")));
    QCOMPARE(help.currentPage(), QStringLiteral("memory.md"));
    const QString memory = sourceDoc(QStringLiteral("memory.md"));
    const QString firstHeading = memory.section(u'\n', 0, 0).remove(QRegularExpression(QStringLiteral("^#+\\s*"))).remove(u'`');
    QCOMPARE(help.sections().value(0), firstHeading.trimmed());
    // An anchor of model.md (GitHub's slug of "§3 Stage 3 — the parallel plan") scrolls to its heading.
    emit help.browser()->anchorClicked(QUrl(QStringLiteral("model.md#3-stage-3--the-parallel-plan")));
    QCOMPARE(help.currentPage(), QStringLiteral("model.md"));
    QVERIFY2(cursorBlock(help.browser()).startsWith(QStringLiteral("§3 ")), qPrintable(cursorBlock(help.browser())));
}

void TestModelHelp::helpMenuAndF1OpenIt()
{
    MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QVERIFY(!window.findChild<ModelHelp*>());
    auto* action = window.findChild<QAction*>(QStringLiteral("modelHelpAction"));
    QVERIFY(action);
    QTest::keyClick(&window, Qt::Key_F1);
    auto* help = window.findChild<ModelHelp*>();
    QVERIFY(help);
    QVERIFY(help->isVisible());
    QCOMPARE(help->currentPage(), QStringLiteral("model.md"));
    help->hide();
    action->trigger();
    QVERIFY(help->isVisible());
    QCOMPARE(window.findChildren<ModelHelp*>().size(), 1); // one dialog, shown again
}

// A figure's tooltip names its docs/model.md section and its chain links there: stage 3's DP gradient
// AllReduce payload is explained in §3.2 ("Collective calls of one optimizer step", read from the
// source page); clicking the chain's link opens Help scrolled to that heading.
void TestModelHelp::figureChainLinksToItsSection()
{
    const QString source = sourceDoc(QStringLiteral("model.md"));
    const QRegularExpressionMatch heading = QRegularExpression(QStringLiteral("^### (§3\\.2 [^\\n]*)$"),
                                                               QRegularExpression::MultilineOption)
                                                .match(source);
    QVERIFY(heading.hasMatch());
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.document()->waitForDerivation(60000));
    window.setStage(2);
    tw::ui::ParallelPane* pane = window.parallelPane();
    const QString id = QStringLiteral("dp.grad_allreduce_bytes");
    tw::ui::FigureTableModel* model = pane->figureModel();
    QModelIndex row;
    for (int r = 0; r < model->rowCount() && !row.isValid(); ++r)
        if (model->data(model->index(r, 0), tw::ui::FigureTableModel::FigureIdRole).toString() == id)
            row = model->index(r, 0);
    QVERIFY(row.isValid());
    const QString tip = model->data(row, Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("docs/model.md §3.2")), qPrintable(tip));

    QVERIFY(pane->showFigure(id));
    QTextBrowser* chain = pane->chain();
    for (int tab = 0; tab < pane->tabs()->count(); ++tab) // the figures tab, where the chain is
        if (pane->tabs()->widget(tab)->isAncestorOf(chain))
            pane->tabs()->setCurrentIndex(tab);
    QTRY_VERIFY(chain->isVisible());
    const QTextCursor link = chain->document()->find(QStringLiteral("How it is computed"));
    QVERIFY(!link.isNull());
    QTextCursor inside(chain->document());
    inside.setPosition(link.selectionStart() + 3);
    const QPoint at = chain->cursorRect(inside).center();
    const QUrl href(chain->anchorAt(at));
    QCOMPARE(href.scheme(), QStringLiteral("tokenwire-help"));
    QCOMPARE(href.path(), QStringLiteral("model.md"));
    QCOMPARE(href.fragment(), QStringLiteral("§3.2"));
    QTest::mouseClick(chain->viewport(), Qt::LeftButton, {}, at);
    ModelHelp* help = window.findChild<ModelHelp*>();
    QVERIFY(help);
    QTRY_VERIFY(help->isVisible());
    QCOMPARE(help->currentPage(), QStringLiteral("model.md"));
    QCOMPARE(cursorBlock(help->browser()), heading.captured(1).trimmed());
    // The chain itself stays (the link did not navigate the chain's browser away).
    QVERIFY(chain->toPlainText().contains(id));
}

void TestModelHelp::architecturePageOpensWithItsSections()
{
    // docs/architecture.md (the layers, the folders, one edit's data flow) is compiled in: it opens, and
    // its headings, read from the source file, are the dialog's sections in order.
    // TOKENWIRE_HELP_SHOTS=DIR saves the page as shown (to look at it).
    QVERIFY(ModelHelp::pages().contains(QStringLiteral("architecture.md")));
    const QString source = sourceDoc(QStringLiteral("architecture.md"));
    QVERIFY(!source.isEmpty());
    QStringList headings;
    const QRegularExpression heading(QStringLiteral("^#{1,2} (.+)$"), QRegularExpression::MultilineOption);
    for (auto it = heading.globalMatch(source); it.hasNext();)
        headings << it.next().captured(1).remove(u'`').trimmed();
    QCOMPARE(headings.size(), 5); // the title, "Three layers", "Each folder's job", "Who owns a result", "One edit, …"
    ModelHelp help;
    help.resize(1100, 760);
    help.show();
    QVERIFY(QTest::qWaitForWindowExposed(&help));
    QVERIFY(help.showSection(QStringLiteral("architecture.md")));
    QCOMPARE(help.currentPage(), QStringLiteral("architecture.md"));
    QCOMPARE(help.sections(), headings);
    QVERIFY(help.showSection(QStringLiteral("architecture.md"), headings.last()));
    QVERIFY2(cursorBlock(help.browser()).startsWith(QStringLiteral("One edit")), qPrintable(cursorBlock(help.browser())));
    const QString shots = qEnvironmentVariable("TOKENWIRE_HELP_SHOTS");
    if (!shots.isEmpty()) {
        QDir().mkpath(shots);
        QVERIFY(help.showSection(QStringLiteral("architecture.md")));
        QVERIFY(help.grab().save(shots + QStringLiteral("/help-architecture-top.png")));
        QVERIFY(help.showSection(QStringLiteral("architecture.md"), headings.last()));
        QVERIFY(help.grab().save(shots + QStringLiteral("/help-architecture-flow.png")));
    }
}

QTEST_MAIN(TestModelHelp)
#include "tst_modelhelp.moc"
