// The stage 1 pane driven offscreen on a real Document: typing, chips, tooltips, the trained
// tokenizer and its merge replay, opening good, bad and large files, the figure table and the main
// window shell. (How stage 1's edits reach stage 2 and back: tst_storythread.)

#include "charts/tokencharts.h"
#include "document/document.h"
#include "mainwindow.h"
#include "panes/textpane.h"
#include "stagenavigator.h"
#include "scenario/derive.h"
#include "text/gpt2.h"
#include "views/figuretablemodel.h"
#include "views/pagedtextview.h"
#include "views/tokenchipview.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>
#include <QTimer>
#include <QToolTip>
#include <QUndoStack>

using tw::ui::TextPane;
using tw::ui::TokenChipView;
using TokenizerKind = tw::scenario::TokenizerChoice::Kind;

namespace {
QStringList chipTexts(const TokenChipView* view)
{
    QStringList out;
    for (int i = 0; i < view->chipCount(); ++i)
        out << view->chipText(i);
    return out;
}

// Replaces the editor's text the way a user does: select all, delete, type.
void retype(TextPane& pane, const QString& text)
{
    pane.editor()->setFocus();
    pane.editor()->selectAll();
    QTest::keyClick(pane.editor(), Qt::Key_Delete);
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
        if (i > 0)
            QTest::keyClick(pane.editor(), Qt::Key_Return);
        QTest::keyClicks(pane.editor(), lines[i]);
    }
}

// Waits until the pane has nothing running and a result for the editor's current text.
bool settle(TextPane& pane, int timeoutMs = 20000)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < timeoutMs) {
        QTest::qWait(20);
        if (!pane.isBusy() && pane.shownTokens().spans)
            return true;
    }
    return false;
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        return {};
    return path;
}

#define REQUIRE_GPT2()                                                                                               \
    if (!tw::text::gpt2Embedded())                                                                                   \
        QFAIL("this build has no GPT-2 tokenizer (run ./scripts/fetch-gpt2.sh and configure with "                   \
              "TOKENWIRE_GPT2_DIR): GPT-2 chips cannot be checked")
} // namespace

class TestTextPane : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void typingShowsGpt2Chips();
    void fastTypingKeepsOnlyTheLatestResult();
    void hoverShowsIdBytesAndPiece();
    void trainedTokenizerReplayToZeroGivesBytes();
    void playButtonAdvancesReplay();
    void vocabularyRangeIsTheTrainersRange();
    void missingFileNamesThePathAndKeepsTheEditor();
    void folderAndEmptyFileAreMessages();
    void invalidUtf8NamesLineAndColumnAndTokenizesTheBytes();
    void nulBytesAreReported();
    void smallFileGoesIntoTheEditorUndoably();
    void largeFileLoadsOffThreadIntoPagedView();
    void cancellingAnOpenKeepsTheEditor();
    void figureTableAndDetail();
    void trainingShapeFeedsTheFigures();
    void chartsHaveAnEmptyState();
    void mainWindowShell();

private:
    std::unique_ptr<tw::ui::Document> m_doc;
    std::unique_ptr<TextPane> m_pane;
    QTemporaryDir m_dir;
};

void TestTextPane::init()
{
    QVERIFY(m_dir.isValid());
    m_doc = std::make_unique<tw::ui::Document>();
    m_pane = std::make_unique<TextPane>(m_doc.get());
    m_pane->resize(1300, 850);
    m_pane->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_pane.get()));
    QVERIFY2(settle(*m_pane), "the excerpt shown at start was not tokenized");
}

void TestTextPane::cleanup()
{
    m_pane.reset();
    m_doc.reset();
}

void TestTextPane::typingShowsGpt2Chips()
{
    REQUIRE_GPT2();
    // Expected pieces and ids from the npm tiktoken package (gpt2, encode(text, [], [])), not from
    // our own tokenizer: ids [45, 417, 502, 47802, 1619, 12172, 1084].
    retype(*m_pane, QStringLiteral("Nel mezzo del cammin"));
    const QStringList pieces{QStringLiteral("N"), QStringLiteral("el"), QStringLiteral("·me"), QStringLiteral("zzo"),
                             QStringLiteral("·del"), QStringLiteral("·cam"), QStringLiteral("min")};
    QTRY_COMPARE_WITH_TIMEOUT(chipTexts(m_pane->chipView()), pieces, 10000);
    const QStringList ids{QStringLiteral("45"), QStringLiteral("417"), QStringLiteral("502"), QStringLiteral("47802"),
                          QStringLiteral("1619"), QStringLiteral("12172"), QStringLiteral("1084")};
    QCOMPARE(chipTexts(m_pane->idStrip()), ids);
    QVERIFY(m_pane->chipInfo()->text().contains(QStringLiteral("7 tokens")));

    // A newline ends a line of chips; tab and newline have visible markers.
    retype(*m_pane, QStringLiteral("a\tb"));
    QTest::keyClick(m_pane->editor(), Qt::Key_Return);
    QTest::keyClicks(m_pane->editor(), QStringLiteral("c"));
    QTRY_VERIFY_WITH_TIMEOUT(chipTexts(m_pane->chipView()).join(QString()) == QStringLiteral("a→b↵c"), 10000);
    const auto* view = m_pane->chipView();
    QVERIFY(view->chipRect(view->chipCount() - 1).top() > view->chipRect(0).bottom());
}

void TestTextPane::fastTypingKeepsOnlyTheLatestResult()
{
    REQUIRE_GPT2();
    QSignalSpy spy(m_pane.get(), &TextPane::tokenized);
    retype(*m_pane, QStringLiteral("the quick brown fox jumps over the lazy dog"));
    QVERIFY(settle(*m_pane));
    // Keystrokes 150 ms debounce: far fewer results than keystrokes, and the last one is the text.
    QVERIFY2(spy.count() < 10, qPrintable(QString::number(spy.count())));
    QCOMPARE(QString::fromStdString(*m_pane->shownTokens().text), m_pane->editor()->toPlainText());
    QCOMPARE(m_pane->chipView()->chipText(m_pane->chipView()->chipCount() - 1), QStringLiteral("·dog"));
}

void TestTextPane::hoverShowsIdBytesAndPiece()
{
    REQUIRE_GPT2();
    retype(*m_pane, QStringLiteral("Nel mezzo"));
    QTRY_COMPARE_WITH_TIMEOUT(m_pane->chipView()->chipCount(), 4, 10000);
    auto* view = m_pane->chipView();
    const QRect chip = view->chipRect(2); // " me"
    QVERIFY(chip.isValid());
    QSignalSpy hovered(view, &TokenChipView::hovered);
    QTest::mouseMove(view->viewport(), chip.center());
    QTRY_VERIFY(QToolTip::isVisible());
    const QString tip = QToolTip::text();
    QVERIFY2(tip.contains(QStringLiteral("id 502")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("20 6d 65")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("“·me”")), qPrintable(tip));
    QVERIFY(!hovered.isEmpty());
    QCOMPARE(hovered.last().at(0).toInt(), 2);
}

void TestTextPane::trainedTokenizerReplayToZeroGivesBytes()
{
    const QString text = QStringLiteral("la selva selvaggia e aspra e forte\nche nel pensier rinova la paura");
    retype(*m_pane, text);
    m_pane->setTokenizer(TokenizerKind::Trained);
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().tokenizerChoice.kind == TokenizerKind::Trained
                                 && *m_pane->shownTokens().text == text.toStdString(),
                             20000);
    const int merges = static_cast<int>(m_pane->shownTokens().tokenizer->merges().size());
    QVERIFY(merges > 0);
    QCOMPARE(m_pane->replaySlider()->maximum(), merges);
    const int fused = m_pane->chipView()->chipCount();
    const int bytes = static_cast<int>(text.toUtf8().size());
    QVERIFY(fused < bytes);
    auto* actual = m_pane->findChild<QLabel*>(QStringLiteral("vocabActual"));
    QVERIFY(actual);
    QVERIFY2(actual->text().contains(QString::number(m_pane->shownTokens().tokenizer->vocabSize())),
             qPrintable(actual->text()));

    m_pane->replaySlider()->setValue(0);
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().mergeLimit == 0, 10000);
    QCOMPARE(m_pane->chipView()->chipCount(), bytes);
    for (int i = 0; i < m_pane->chipView()->chipCount(); ++i) {
        const auto span = m_pane->chipView()->chipSpan(i);
        QCOMPARE(span.end - span.begin, 1u);
        QVERIFY(span.id < 256);
    }
    // The first merge fuses one pair: one chip fewer per occurrence, never more chips.
    m_pane->replaySlider()->setValue(1);
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().mergeLimit == 1, 10000);
    QVERIFY(m_pane->chipView()->chipCount() < bytes);
    QVERIFY(m_pane->findChild<QLabel*>(QStringLiteral("replayLabel"))->text().contains(QStringLiteral("merge 1 of")));
    // Back at the end: the full trained encoding again.
    m_pane->replaySlider()->setValue(merges);
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().mergeLimit == SIZE_MAX, 10000);
    QCOMPARE(m_pane->chipView()->chipCount(), fused);
}

void TestTextPane::playButtonAdvancesReplay()
{
    m_pane->setTokenizer(TokenizerKind::Trained);
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().tokenizerChoice.kind == TokenizerKind::Trained,
                             20000);
    m_pane->replaySlider()->setValue(0);
    QTest::mouseClick(m_pane->playButton(), Qt::LeftButton);
    QVERIFY(m_pane->playButton()->isChecked());
    QTRY_VERIFY(m_pane->replaySlider()->value() > 2);
    QTest::mouseClick(m_pane->playButton(), Qt::LeftButton);
    QVERIFY(!m_pane->playButton()->isChecked());
    const int stopped = m_pane->replaySlider()->value();
    QTest::qWait(300);
    QCOMPARE(m_pane->replaySlider()->value(), stopped);
}

void TestTextPane::vocabularyRangeIsTheTrainersRange()
{
    QCOMPARE(m_pane->vocabSpin()->minimum(), 257);
    QCOMPARE(m_pane->vocabSpin()->maximum(), 65536);
    m_pane->setTokenizer(TokenizerKind::Trained);
    m_pane->vocabSpin()->setValue(300);
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().tokenizerChoice.kind == TokenizerKind::Trained
                                 && m_pane->shownTokens().tokenizerChoice.trainedVocab == 300, 20000);
    QVERIFY(m_pane->shownTokens().tokenizer->vocabSize() <= 300);
    QCOMPARE(m_doc->scenario().tokenizer.trainedVocab, 300u);
}

void TestTextPane::missingFileNamesThePathAndKeepsTheEditor()
{
    const QString before = m_pane->editor()->toPlainText();
    const QString path = m_dir.filePath(QStringLiteral("no-such-canto.txt"));
    QSignalSpy done(m_pane.get(), &TextPane::workFinished);
    m_pane->openFile(path);
    QVERIFY(done.wait(10000));
    QVERIFY2(m_pane->messageText().contains(path), qPrintable(m_pane->messageText()));
    QVERIFY(m_pane->messageText().contains(QStringLiteral("no such file")));
    QCOMPARE(m_pane->editor()->toPlainText(), before);
    QVERIFY(!m_pane->showsPagedView());
}

void TestTextPane::folderAndEmptyFileAreMessages()
{
    const QString before = m_pane->editor()->toPlainText();
    QSignalSpy done(m_pane.get(), &TextPane::workFinished);
    m_pane->openFile(m_dir.path());
    QVERIFY(done.wait(10000));
    QVERIFY2(m_pane->messageText().contains(m_dir.path()) && m_pane->messageText().contains(QStringLiteral("folder")),
             qPrintable(m_pane->messageText()));
    const QString empty = writeFile(m_dir, QStringLiteral("empty.txt"), {});
    m_pane->openFile(empty);
    QVERIFY(done.wait(10000));
    QVERIFY2(m_pane->messageText().contains(QStringLiteral("the file is empty"))
                 && m_pane->messageText().contains(empty),
             qPrintable(m_pane->messageText()));
    QCOMPARE(m_pane->editor()->toPlainText(), before);
}

void TestTextPane::invalidUtf8NamesLineAndColumnAndTokenizesTheBytes()
{
    const QString before = m_pane->editor()->toPlainText();
    const QByteArray bytes("Nel mezzo\nab\xff" "cd\n", 14);
    const QString path = writeFile(m_dir, QStringLiteral("bad.txt"), bytes);
    QSignalSpy opened(m_pane.get(), &TextPane::fileOpened);
    m_pane->openFile(path);
    QVERIFY(opened.wait(10000));
    const QString message = m_pane->messageText();
    QVERIFY2(message.contains(path + QStringLiteral(":2:3")), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("invalid UTF-8")), qPrintable(message));
    QVERIFY(m_pane->showsPagedView());
    QVERIFY(m_pane->pagedView()->textView()->toPlainText().contains(QChar(0xfffd)));
    // The tokens are those of the file's bytes, the 0xFF byte included.
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().text
                                 && *m_pane->shownTokens().text == bytes.toStdString(), 20000);
    const auto& spans = *m_pane->shownTokens().spans;
    QVERIFY(!spans.empty());
    QCOMPARE(spans.back().end, static_cast<std::uint32_t>(bytes.size()));
    bool sawFf = false;
    for (int i = 0; i < m_pane->chipView()->chipCount(); ++i)
        sawFf = sawFf || m_pane->chipView()->chipText(i).contains(QStringLiteral("⟨ff⟩"));
    QVERIFY(sawFf);
    QCOMPARE(m_pane->editor()->toPlainText(), before);
    // Back to the editor: the typed text is still there and is what gets tokenized.
    QTest::mouseClick(m_pane->pagedView()->findChild<QPushButton*>(QStringLiteral("backToEditor")), Qt::LeftButton);
    QVERIFY(!m_pane->showsPagedView());
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && QString::fromStdString(*m_pane->shownTokens().text) == before, 20000);
}

void TestTextPane::nulBytesAreReported()
{
    const QByteArray bytes("abc\0def\n", 8);
    const QString path = writeFile(m_dir, QStringLiteral("nul.txt"), bytes);
    QSignalSpy opened(m_pane.get(), &TextPane::fileOpened);
    m_pane->openFile(path);
    QVERIFY(opened.wait(10000));
    QVERIFY2(m_pane->messageText().contains(QStringLiteral("1 NUL byte")), qPrintable(m_pane->messageText()));
    QVERIFY(m_pane->pagedView()->textView()->toPlainText().contains(QStringLiteral("⟨00⟩")));
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().text
                                 && *m_pane->shownTokens().text == bytes.toStdString(), 20000);
}

void TestTextPane::smallFileGoesIntoTheEditorUndoably()
{
    const QString before = m_pane->editor()->toPlainText();
    const QString path = writeFile(m_dir, QStringLiteral("canto.txt"), QByteArray("Per me si va ne la città dolente\n"));
    QSignalSpy opened(m_pane.get(), &TextPane::fileOpened);
    m_pane->openFile(path);
    QVERIFY(opened.wait(10000));
    QCOMPARE(m_pane->editor()->toPlainText(), QStringLiteral("Per me si va ne la città dolente\n"));
    QVERIFY(!m_pane->showsPagedView());
    // The document's text is the file, by path; its tokens are the file's.
    QVERIFY(m_doc->scenario().text.kind == tw::scenario::TextSource::Kind::File);
    QCOMPARE(QString::fromStdString(m_doc->scenario().text.path), QFileInfo(path).absoluteFilePath());
    QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Open text"));
    QVERIFY(settle(*m_pane));
    QCOMPARE(*m_pane->shownTokens().text, std::string("Per me si va ne la città dolente\n"));
    // Ctrl+Z in the editor is the document's undo: the sample comes back.
    m_pane->editor()->setFocus();
    QTest::keyClick(m_pane->editor(), Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(m_pane->editor()->toPlainText(), before);
    QVERIFY(m_doc->scenario().text.kind == tw::scenario::TextSource::Kind::Sample);
    QVERIFY(settle(*m_pane));
    QCOMPARE(QString::fromStdString(*m_pane->shownTokens().text), before);
}

void TestTextPane::largeFileLoadsOffThreadIntoPagedView()
{
    QFile excerpt(QStringLiteral(":/text/inferno-canto1-it.txt"));
    QVERIFY(excerpt.open(QIODevice::ReadOnly));
    const QByteArray canto = excerpt.readAll();
    QByteArray big;
    big.reserve(20 * 1000 * 1000 + canto.size());
    while (big.size() < 20 * 1000 * 1000)
        big += canto;
    const QString path = writeFile(m_dir, QStringLiteral("big.txt"), big);
    QVERIFY(!path.isEmpty());
    const QString before = m_pane->editor()->toPlainText();

    // A timer on the GUI thread keeps firing while the file is read and tokenized.
    QElapsedTimer clock;
    qint64 lastTick = 0, longestGap = 0;
    int ticks = 0;
    QTimer ticker;
    QObject::connect(&ticker, &QTimer::timeout, [&] {
        const qint64 now = clock.elapsed();
        longestGap = std::max(longestGap, now - lastTick);
        lastTick = now;
        ++ticks;
    });
    QSignalSpy opened(m_pane.get(), &TextPane::fileOpened);
    QSignalSpy tokenized(m_pane.get(), &TextPane::tokenized);
    clock.start();
    ticker.start(10);
    m_pane->openFile(path);
    QVERIFY(m_pane->progressBar()->isVisible());
    QVERIFY(opened.wait(30000));
    QVERIFY(m_pane->showsPagedView());
    QVERIFY(m_pane->progressBar()->isVisible()); // now tokenizing
    QVERIFY(tokenized.wait(300000));
    ticker.stop();
    const qint64 elapsed = clock.elapsed();
    qInfo("20 MB: read + tokenized in %lld ms; %d timer ticks, longest gap %lld ms", elapsed, ticks, longestGap);
    QVERIFY2(longestGap < 1000, qPrintable(QStringLiteral("the GUI thread stalled for %1 ms").arg(longestGap)));
    QVERIFY(ticks >= elapsed / 100);

    QCOMPARE(m_pane->shownTokens().text->size(), static_cast<std::size_t>(big.size()));
    QVERIFY(m_pane->pagedView()->pageCount() > 100);
    QVERIFY(m_pane->pagedView()->textView()->toPlainText().size() <= static_cast<qsizetype>(tw::ui::PagedTextView::kPageBytes));
    QVERIFY(m_pane->chipView()->chipCount() > 0);
    QVERIFY(m_pane->chipView()->chipCount() <= static_cast<int>(TextPane::kMaxChips));
    QVERIFY2(m_pane->chipInfo()->text().contains(QStringLiteral("of")), qPrintable(m_pane->chipInfo()->text()));
    QVERIFY(!m_pane->progressBar()->isVisible());
    // The next page draws the tokens of that page.
    const auto firstSpan = m_pane->chipView()->chipSpan(0);
    m_pane->pagedView()->setPage(1);
    QVERIFY(m_pane->chipView()->chipSpan(0).begin > firstSpan.begin);
    QCOMPARE(m_pane->pagedView()->pageLabel(), QStringLiteral("Page 2 of %1").arg(QLocale().toString(m_pane->pagedView()->pageCount())));
    QCOMPARE(m_pane->editor()->toPlainText(), before);

    // Cancelling the tokenization of the big text: a message, and the tokens shown stay.
    const auto shownSpans = m_pane->shownTokens().spans;
    m_pane->setTokenizer(TokenizerKind::Trained);
    m_pane->vocabSpin()->setValue(m_pane->vocabSpin()->value() + 1); // a new V: training starts over
    QTRY_VERIFY_WITH_TIMEOUT(m_pane->progressBar()->isVisible(), 10000); // training 20 MB is under way
    QTest::mouseClick(m_pane->findChild<QPushButton*>(QStringLiteral("cancelWork")), Qt::LeftButton);
    QVERIFY(!m_pane->isBusy());
    QVERIFY2(m_pane->messageText().contains(QStringLiteral("cancelled")), qPrintable(m_pane->messageText()));
    QCOMPARE(m_pane->shownTokens().spans, shownSpans);
    QVERIFY(m_pane->chipView()->chipCount() > 0);
    // The stop request reaches the running job: the pool empties quickly.
    QElapsedTimer stopping;
    stopping.start();
    QVERIFY(QThreadPool::globalInstance()->waitForDone(10000));
    qInfo("the cancelled job stopped %lld ms after Cancel", stopping.elapsed());
}

void TestTextPane::cancellingAnOpenKeepsTheEditor()
{
    QByteArray big(30 * 1000 * 1000, 'a');
    const QString path = writeFile(m_dir, QStringLiteral("cancel.txt"), big);
    const QString before = m_pane->editor()->toPlainText();
    QSignalSpy opened(m_pane.get(), &TextPane::fileOpened);
    m_pane->openFile(path);
    QVERIFY(m_pane->isBusy());
    QTest::mouseClick(m_pane->findChild<QPushButton*>(QStringLiteral("cancelWork")), Qt::LeftButton);
    QVERIFY(!m_pane->isBusy());
    QVERIFY2(m_pane->messageText().contains(QStringLiteral("cancelled")) && m_pane->messageText().contains(path),
             qPrintable(m_pane->messageText()));
    // The cancelled read ends and whatever it posted is delivered: its result must not land.
    QVERIFY(QThreadPool::globalInstance()->waitForDone(60000));
    QCoreApplication::sendPostedEvents();
    QCOMPARE(opened.count(), 0);
    QVERIFY(!m_pane->showsPagedView());
    QCOMPARE(m_pane->editor()->toPlainText(), before);
}

void TestTextPane::figureTableAndDetail()
{
    QAbstractItemModelTester tester(m_pane->figureModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    retype(*m_pane, QStringLiteral("uno due tre"));
    QVERIFY(settle(*m_pane));
    retype(*m_pane, QString());
    QVERIFY(settle(*m_pane));
    retype(*m_pane, QStringLiteral("Nel mezzo del cammin di nostra vita"));
    QVERIFY(settle(*m_pane));
    auto* model = m_pane->figureModel();
    QVERIFY(model->rowCount() > 5);
    int tokensRow = -1;
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->index(row, 0).data(tw::ui::FigureTableModel::FigureIdRole).toString() == QStringLiteral("tokens.count"))
            tokensRow = row;
    QVERIFY(tokensRow >= 0);
    const tw::Figure* figure = model->figures().find("tokens.count");
    QVERIFY(figure);
    QCOMPARE(model->index(tokensRow, tw::ui::FigureTableModel::ValueColumn).data().toString(),
             QString::fromStdString(tw::formatValue(figure->value, figure->unit)));
    // The tooltip: the formula, then the figures it came from with their values.
    const QString tip = model->index(tokensRow, 0).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QString::fromStdString(figure->formula)), qPrintable(tip));
    for (const std::string& in : figure->inputs)
        if (const tw::Figure* input = model->figures().find(in))
            QVERIFY2(tip.contains(QString::fromStdString(input->label)), qPrintable(tip));
    QCOMPARE(static_cast<int>(figure->value), m_pane->chipView()->chipCount());

    auto* table = m_pane->figureTable();
    table->scrollTo(model->index(tokensRow, 0));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(model->index(tokensRow, 0)).center());
    QVERIFY2(m_pane->figureDetail()->text().contains(QString::fromStdString(figure->formula)),
             qPrintable(m_pane->figureDetail()->text()));
}

void TestTextPane::trainingShapeFeedsTheFigures()
{
    QVERIFY(settle(*m_pane));
    const double sequences = m_pane->figureModel()->figures().valueOf("dataset.sequences");
    const double tokens = m_pane->figureModel()->figures().valueOf("tokens.count");
    QVERIFY(tokens > 64);
    m_pane->findChild<QSpinBox*>(QStringLiteral("shapeT"))->setValue(64);
    QTRY_COMPARE_WITH_TIMEOUT(m_pane->figureModel()->figures().valueOf("dataset.T"), 64.0, 10000);
    QVERIFY(m_pane->figureModel()->figures().valueOf("dataset.sequences") > sequences);
    // Only the shape changed: the tokens were reused, not recomputed.
    QCOMPARE(m_pane->figureModel()->figures().valueOf("tokens.count"), tokens);
}

void TestTextPane::chartsHaveAnEmptyState()
{
    QVERIFY(m_pane->charts()->showsCharts());
    retype(*m_pane, QString());
    QTRY_VERIFY_WITH_TIMEOUT(!m_pane->isBusy() && m_pane->shownTokens().spans && m_pane->shownTokens().spans->empty(), 10000);
    QVERIFY(!m_pane->charts()->showsCharts());
    QCOMPARE(m_pane->chipView()->chipCount(), 0);
    QTest::keyClicks(m_pane->editor(), QStringLiteral("ciao"));
    QTRY_VERIFY_WITH_TIMEOUT(m_pane->charts()->showsCharts(), 10000);
}

void TestTextPane::mainWindowShell()
{
    m_pane.reset();
    tw::ui::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QCOMPARE(window.windowTitle(), QStringLiteral("Untitled — TokenWire"));
    QCOMPARE(window.stageCount(), 5);
    // It fits a 1280×720 projector.
    QVERIFY2(window.minimumSizeHint().width() <= 1280 && window.minimumSizeHint().height() <= 720,
             qPrintable(QStringLiteral("%1×%2").arg(window.minimumSizeHint().width()).arg(window.minimumSizeHint().height())));
    window.resize(1280, 720);
    QTRY_COMPARE(window.size(), QSize(1280, 720));
    QCOMPARE(tw::ui::StageNavigator::stageNames().size(), 5);
    auto* stage3 = window.navigator()->findChild<QAbstractButton*>(QStringLiteral("stage3"));
    QVERIFY(stage3);
    QTest::mouseClick(stage3, Qt::LeftButton);
    QCOMPARE(window.stage(), 2);
    QVERIFY(!window.textPane()->isVisible());
    window.setStage(0);
    QVERIFY(window.textPane()->isVisible());
    QCOMPARE(window.navigator()->currentStage(), 0);
    // The editor starts with the Italian excerpt.
    QVERIFY(window.textPane()->editor()->toPlainText().startsWith(QStringLiteral("Nel mezzo del cammin")));
    if (!tw::text::gpt2Embedded())
        QVERIFY(window.textPane()->gpt2Banner()->isVisible());
    else
        QVERIFY(!window.textPane()->gpt2Banner()->isVisible());
}

QTEST_MAIN(TestTextPane)
#include "tst_textpane.moc"
