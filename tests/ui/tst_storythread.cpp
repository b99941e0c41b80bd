// One source of truth across the stages: stage 1's widgets edit the Document and stage 2 draws the
// same Derivation. Typing in stage 1 changes stage 2's caption; undo brings the text back in both;
// a preset, an edit in the stage 2 form or a scenario change updates stage 1's widgets without
// pushing commands back; the trained tokenizer chosen in stage 1 is stage 2's V.

#include "document/document.h"
#include "document/documentactions.h"
#include "mainwindow.h"
#include "panes/tensorpane.h"
#include "panes/textpane.h"
#include "views/figuretablemodel.h"
#include "views/modelform.h"
#include "views/tokenchipview.h"
#include "views/transformerview.h"

#include "scenario/derive.h"
#include "scenario/presets.h"
#include "text/gpt2.h"
#include "text/samples.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QRadioButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using tw::ui::Document;
using tw::ui::Field;
using tw::ui::TensorPane;
using tw::ui::TextPane;
using TextKind = tw::scenario::TextSource::Kind;
using TokenizerKind = tw::scenario::TokenizerChoice::Kind;

namespace {
// GPT-2 ids of "Nel mezzo del cammin" from the npm tiktoken package (gpt2, encode(text, [], [])):
// [45, 417, 502, 47802, 1619, 12172, 1084].
const QString kTyped = QStringLiteral("Nel mezzo del cammin");
constexpr int kTypedTokens = 7;

QString sampleText(const char* id)
{
    const auto sample = tw::text::findSample(id);
    return sample ? QString::fromUtf8(sample->text.data(), static_cast<qsizetype>(sample->text.size())) : QString();
}

QString english(double n)
{
    return QLocale(QLocale::English).toString(static_cast<qlonglong>(n));
}

// Replaces the editor's text the way a user does: select all, delete, type.
void retype(TextPane& pane, const QString& text)
{
    pane.editor()->setFocus();
    pane.editor()->selectAll();
    QTest::keyClick(pane.editor(), Qt::Key_Delete);
    QTest::keyClicks(pane.editor(), text);
}

void typeInto(QAbstractSpinBox* spin, const QString& text)
{
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

// Nothing pending or running, and stage 1 shows the document's current derivation.
bool settle(const TextPane& pane, const Document& doc, int timeoutMs = 30000)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < timeoutMs) {
        QTest::qWait(20);
        if (!pane.isBusy() && !doc.isDeriving() && doc.derivation() && pane.shownTokens().derivation == doc.derivation())
            return true;
    }
    return false;
}

QString captionTokens(const TensorPane& pane)
{
    // "Your 7 tokens fill …"
    const QString caption = pane.caption()->text();
    return caption.section(QLatin1Char(' '), 1, 1);
}

#define REQUIRE_GPT2()                                                                                               \
    if (!tw::text::gpt2Embedded())                                                                                   \
        QFAIL("this build has no GPT-2 tokenizer (run ./scripts/fetch-gpt2.sh and configure with "                   \
              "TOKENWIRE_GPT2_DIR): GPT-2 token counts cannot be checked")
} // namespace

class TestStoryThread : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void typingInStage1ChangesStage2();
    void undoRestoresTheTextInBothStages();
    void undoWithTypingPendingTakesBackTheTyping();
    void editsFromElsewhereUpdateStage1WithoutCommands();
    void presetInTheWindowUpdatesStage1();
    void trainedTokenizerInStage1IsStage2sV();
    void trainingShapeInStage1IsTheDocuments();
    void openedTextFileReachesStage2();

private:
    std::unique_ptr<Document> m_doc;
    std::unique_ptr<QWidget> m_window;
    TextPane* m_text = nullptr;
    TensorPane* m_tensors = nullptr;
    double m_sampleTokens = 0;
};

void TestStoryThread::init()
{
    m_doc = std::make_unique<Document>();
    m_window = std::make_unique<QWidget>();
    m_text = new TextPane(m_doc.get(), m_window.get());
    m_tensors = new TensorPane(m_doc.get(), m_window.get());
    m_text->setGeometry(0, 0, 1300, 850);
    m_tensors->setGeometry(0, 850, 1300, 850);
    m_window->resize(1300, 1700);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QVERIFY(settle(*m_text, *m_doc));
    m_sampleTokens = m_doc->derivation()->figures.valueOf("tokens.count");
    QVERIFY(m_sampleTokens > kTypedTokens);
}

void TestStoryThread::cleanup()
{
    m_window.reset();
    m_doc.reset();
}

void TestStoryThread::typingInStage1ChangesStage2()
{
    REQUIRE_GPT2();
    QCOMPARE(captionTokens(*m_tensors), english(m_sampleTokens));
    retype(*m_text, kTyped);
    QVERIFY(settle(*m_text, *m_doc));
    // The document holds the typed text, as one "Type text" step.
    QVERIFY(m_doc->scenario().text.kind == TextKind::Inline);
    QCOMPARE(QString::fromStdString(m_doc->scenario().text.text), kTyped);
    QCOMPARE(m_doc->undoStack()->count(), 1);
    QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Type text"));
    // Stage 2 speaks of the same 7 tokens stage 1 draws: one derivation for both.
    QVERIFY2(m_tensors->caption()->text().startsWith(
                 QStringLiteral("Your %1 tokens fill %1 of the T = 1,024 positions").arg(kTypedTokens)),
             qPrintable(m_tensors->caption()->text()));
    QCOMPARE(m_text->chipView()->chipCount(), kTypedTokens);
    QCOMPARE(m_text->shownTokens().derivation, m_doc->derivation());
    QCOMPARE(m_text->sampleChooser()->currentIndex(), -1); // no sample any more: "Your own text"
    auto* formText = qobject_cast<QComboBox*>(m_tensors->form()->editor(Field::TextSample));
    QVERIFY(formText && !formText->isEnabled());
    QCOMPARE(formText->currentIndex(), -1);
    QCOMPARE(formText->placeholderText(), QStringLiteral("typed in stage 1"));
}

void TestStoryThread::undoRestoresTheTextInBothStages()
{
    REQUIRE_GPT2();
    const QString italian = sampleText("inferno-canto1-it");
    QCOMPARE(m_text->editor()->toPlainText(), italian);
    retype(*m_text, kTyped);
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(captionTokens(*m_tensors), english(kTypedTokens));

    // Ctrl+Z in the editor is the document's undo: the sample is back in the editor and in stage 2.
    m_text->editor()->setFocus();
    QTest::keyClick(m_text->editor(), Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(m_text->editor()->toPlainText(), italian);
    QVERIFY(m_doc->scenario().text.kind == TextKind::Sample);
    QCOMPARE(m_text->sampleChooser()->currentData().toString(), QStringLiteral("inferno-canto1-it"));
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(captionTokens(*m_tensors), english(m_sampleTokens));
    QCOMPARE(m_text->chipView()->chipCount(), static_cast<int>(m_sampleTokens));
    QCOMPARE(m_doc->undoStack()->count(), 1); // following the document pushed nothing
    QCOMPARE(m_doc->undoStack()->index(), 0);

    // Redo (Ctrl+Shift+Z) brings the typed text back in both.
    QTest::keyClick(m_text->editor(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(m_text->editor()->toPlainText(), kTyped);
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(captionTokens(*m_tensors), english(kTypedTokens));
    QCOMPARE(m_doc->undoStack()->index(), 1);
}

void TestStoryThread::undoWithTypingPendingTakesBackTheTyping()
{
    REQUIRE_GPT2();
    tw::ui::DocumentActions actions(m_doc.get(), m_window.get());
    retype(*m_text, kTyped);
    QVERIFY(settle(*m_text, *m_doc));
    m_doc->setMergeWindow(std::chrono::milliseconds(0)); // the next typing is a step of its own
    QTest::qWait(5);
    // Keys typed and, before the typing pause has passed, Edit ▸ Undo: the typing lands first, and
    // it is what undo takes back.
    QTest::keyClick(m_text->editor(), Qt::Key_End, Qt::ControlModifier);
    QTest::keyClicks(m_text->editor(), QStringLiteral(" di"));
    QVERIFY(m_text->isBusy());
    actions.undoAction()->trigger();
    QCOMPARE(m_doc->undoStack()->count(), 2);
    QCOMPARE(m_doc->undoStack()->index(), 1);
    QCOMPARE(m_text->editor()->toPlainText(), kTyped);
    QCOMPARE(QString::fromStdString(m_doc->scenario().text.text), kTyped);
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(captionTokens(*m_tensors), english(kTypedTokens));
    actions.redoAction()->trigger();
    QCOMPARE(m_text->editor()->toPlainText(), kTyped + QStringLiteral(" di"));
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(captionTokens(*m_tensors), english(kTypedTokens + 1)); // " di" is one more GPT-2 token (1566)
    QCOMPARE(m_text->chipView()->chipCount(), kTypedTokens + 1);
}

void TestStoryThread::editsFromElsewhereUpdateStage1WithoutCommands()
{
    // The stage 2 form chooses the English sample: stage 1's chooser, editor and tokens follow.
    auto* combo = qobject_cast<QComboBox*>(m_tensors->form()->editor(Field::TextSample));
    QVERIFY(combo);
    const int en = combo->findData(QStringLiteral("inferno-canto1-en"));
    QVERIFY(en >= 0);
    combo->setCurrentIndex(en);
    emit combo->activated(en);
    QCOMPARE(m_doc->undoStack()->count(), 1);
    QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Choose text"));
    QCOMPARE(m_text->editor()->toPlainText(), sampleText("inferno-canto1-en"));
    QCOMPARE(m_text->sampleChooser()->currentData().toString(), QStringLiteral("inferno-canto1-en"));
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(*m_text->shownTokens().text, sampleText("inferno-canto1-en").toStdString());
    QCOMPARE(captionTokens(*m_tensors), english(m_doc->derivation()->figures.valueOf("tokens.count")));
    // Stage 1's chooser goes back to Italian; stage 2's form follows.
    m_text->sampleChooser()->setCurrentIndex(0);
    emit m_text->sampleChooser()->activated(0);
    QCOMPARE(m_doc->undoStack()->count(), 2);
    QCOMPARE(combo->currentData().toString(), QStringLiteral("inferno-canto1-it"));
    QCOMPARE(m_text->editor()->toPlainText(), sampleText("inferno-canto1-it"));
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(m_doc->undoStack()->count(), 2); // and nothing echoed back
}

void TestStoryThread::presetInTheWindowUpdatesStage1()
{
    REQUIRE_GPT2();
    m_window.reset();
    tw::ui::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    TextPane* pane = window.textPane();
    Document* doc = window.document();
    QVERIFY(settle(*pane, *doc));
    // In stage 1: typed text, T = 64, the trained tokenizer.
    retype(*pane, kTyped);
    QVERIFY(settle(*pane, *doc));
    typeInto(pane->sequenceLengthSpin(), QStringLiteral("64"));
    QTest::mouseClick(pane->trainedRadio(), Qt::LeftButton);
    QVERIFY(settle(*pane, *doc));
    QCOMPARE(doc->undoStack()->count(), 3);
    QCOMPARE(doc->scenario().batch.sequenceLength, 64u);
    QVERIFY(doc->scenario().tokenizer.kind == TokenizerKind::Trained);

    // File ▸ Presets ▸ gpt3-175b: stage 1 shows the preset's text, tokenizer and shape.
    QAction* preset = window.findChild<QAction*>(QStringLiteral("preset-gpt3-175b"));
    QVERIFY(preset);
    preset->trigger();
    const auto expected = tw::scenario::preset("gpt3-175b").value();
    QCOMPARE(doc->scenario(), expected);
    QCOMPARE(pane->editor()->toPlainText(), sampleText("inferno-canto1-it"));
    QCOMPARE(pane->sampleChooser()->currentData().toString(), QStringLiteral("inferno-canto1-it"));
    QVERIFY(pane->gpt2Radio()->isChecked());
    QVERIFY(!pane->vocabSpin()->isEnabled());
    QCOMPARE(pane->vocabSpin()->value(), static_cast<int>(expected.tokenizer.trainedVocab));
    QCOMPARE(pane->sequenceLengthSpin()->value(), 2048);
    QCOMPARE(pane->microBatchSpin()->value(), 1);
    QCOMPARE(pane->globalBatchSpin()->value(), 3145728.0);
    QVERIFY(settle(*pane, *doc));
    QCOMPARE(*pane->shownTokens().text, sampleText("inferno-canto1-it").toStdString());
    QVERIFY2(window.tensorPane()->caption()->text().contains(QStringLiteral("T = 2,048")),
             qPrintable(window.tensorPane()->caption()->text()));
    QCOMPARE(doc->undoStack()->count(), 4); // the preset; stage 1 following it pushed nothing

    // Edit ▸ Undo: stage 1 is back to the typed text, T = 64 and the trained tokenizer.
    window.actions()->undoAction()->trigger();
    QCOMPARE(pane->editor()->toPlainText(), kTyped);
    QCOMPARE(pane->sequenceLengthSpin()->value(), 64);
    QVERIFY(pane->trainedRadio()->isChecked());
    QVERIFY(pane->vocabSpin()->isEnabled());
    QVERIFY(settle(*pane, *doc));
    QCOMPARE(doc->undoStack()->count(), 4);
    QCOMPARE(doc->undoStack()->index(), 3);
    QVERIFY(pane->shownTokens().tokenizerChoice.kind == TokenizerKind::Trained);
}

void TestStoryThread::trainedTokenizerInStage1IsStage2sV()
{
    QVERIFY(m_doc->scenario().modelVocabFromTokenizer);
    auto* diagram = m_tensors->diagram();
    QVERIFY(diagram->tensorLabel(QStringLiteral("logits")).contains(QLatin1String("[32, 1024, 50257]")));

    // The switch in stage 1 is a document edit; stage 2's V is the trained tokenizer's.
    QTest::mouseClick(m_text->trainedRadio(), Qt::LeftButton);
    QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Choose tokenizer"));
    QVERIFY(settle(*m_text, *m_doc));
    const auto V = m_doc->derivation()->tokenizer().vocabSize();
    QVERIFY(V > 256 && V <= m_doc->scenario().tokenizer.trainedVocab);
    QCOMPARE(m_text->shownTokens().tokenizer->vocabSize(), V);
    QCOMPARE(m_doc->derivation()->model.vocabSize, static_cast<std::uint64_t>(V));
    const QString logits = diagram->tensorLabel(QStringLiteral("logits"));
    QVERIFY2(logits.contains(QStringLiteral("[32, 1024, %1]").arg(V)), qPrintable(logits));
    QVERIFY(m_text->findChild<QLabel*>(QStringLiteral("vocabActual"))->text().contains(QLocale().toString(qulonglong(V))));

    // A smaller V in stage 1: stage 2 follows.
    typeInto(m_text->vocabSpin(), QStringLiteral("300"));
    QCOMPARE(m_doc->scenario().tokenizer.trainedVocab, 300u);
    QCOMPARE(m_doc->undoStack()->undoText(), QStringLiteral("Set trained vocabulary"));
    QVERIFY(settle(*m_text, *m_doc));
    const auto small = m_doc->derivation()->tokenizer().vocabSize();
    QVERIFY(small <= 300);
    QVERIFY2(diagram->tensorLabel(QStringLiteral("logits")).contains(QStringLiteral("[32, 1024, %1]").arg(small)),
             qPrintable(diagram->tensorLabel(QStringLiteral("logits"))));

    // "V from the tokenizer" off in stage 2: the model keeps its own V; stage 1 keeps its tokenizer.
    auto* fromTokenizer = qobject_cast<QCheckBox*>(m_tensors->form()->editor(Field::VocabFromTokenizer));
    QVERIFY(fromTokenizer);
    fromTokenizer->click();
    QVERIFY(!m_doc->scenario().modelVocabFromTokenizer);
    QVERIFY(settle(*m_text, *m_doc));
    QVERIFY(diagram->tensorLabel(QStringLiteral("logits")).contains(QLatin1String("[32, 1024, 50257]")));
    QVERIFY(m_text->trainedRadio()->isChecked());
    QCOMPARE(m_text->shownTokens().tokenizer->vocabSize(), small);

    // Back to GPT-2 in stage 1, V from the tokenizer again: 50,257.
    fromTokenizer->click();
    QTest::mouseClick(m_text->gpt2Radio(), Qt::LeftButton);
    QVERIFY(settle(*m_text, *m_doc));
    QVERIFY(m_doc->scenario().tokenizer.kind == TokenizerKind::Gpt2);
    QCOMPARE(m_doc->derivation()->model.vocabSize, 50257u);
}

void TestStoryThread::trainingShapeInStage1IsTheDocuments()
{
    typeInto(m_text->sequenceLengthSpin(), QStringLiteral("64"));
    QCOMPARE(m_doc->scenario().batch.sequenceLength, 64u);
    typeInto(m_text->microBatchSpin(), QStringLiteral("8"));
    QCOMPARE(m_doc->scenario().batch.microBatch, 8u);
    typeInto(m_text->globalBatchSpin(), QStringLiteral("65536"));
    QCOMPARE(m_doc->scenario().batch.globalBatchTokens, 65536u);
    QCOMPARE(m_doc->undoStack()->count(), 3);
    QCOMPARE(m_doc->undoStack()->text(0), QStringLiteral("Set sequence length"));
    QVERIFY(settle(*m_text, *m_doc));
    // Both stages: stage 1's dataset figures and stage 2's shapes.
    QCOMPARE(m_text->figureModel()->figures().valueOf("dataset.T"), 64.0);
    QVERIFY(m_tensors->diagram()->tensorLabel(QStringLiteral("input.ids")).contains(QLatin1String("[B,T] = [8, 64]")));
    // The stage 2 form shows them too, and an edit there comes back to stage 1.
    auto* formT = qobject_cast<QSpinBox*>(m_tensors->form()->editor(Field::SequenceLength));
    QVERIFY(formT);
    QCOMPARE(formT->value(), 64);
    typeInto(formT, QStringLiteral("128"));
    QCOMPARE(m_text->sequenceLengthSpin()->value(), 128);
    QCOMPARE(m_doc->undoStack()->count(), 4);
    m_doc->undo();
    m_doc->undo();
    QCOMPARE(m_text->sequenceLengthSpin()->value(), 64);
    QCOMPARE(m_text->globalBatchSpin()->value(), 524288.0);
    QCOMPARE(m_doc->undoStack()->count(), 4);
    QVERIFY(settle(*m_text, *m_doc));
}

void TestStoryThread::openedTextFileReachesStage2()
{
    REQUIRE_GPT2();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("canto.txt"));
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(kTyped.toUtf8());
    }
    m_text->openFile(path);
    QTRY_VERIFY_WITH_TIMEOUT(m_doc->scenario().text.kind == TextKind::File, 10000);
    QCOMPARE(QString::fromStdString(m_doc->scenario().text.path), QFileInfo(path).absoluteFilePath());
    QCOMPARE(m_text->editor()->toPlainText(), kTyped);
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(captionTokens(*m_tensors), english(kTypedTokens));
    QCOMPARE(m_text->chipView()->chipCount(), kTypedTokens);
    // Typing into the opened file's text makes it typed text; undo goes back to the file, then the sample.
    QTest::keyClick(m_text->editor(), Qt::Key_End, Qt::ControlModifier);
    QTest::keyClicks(m_text->editor(), QStringLiteral(" di"));
    QVERIFY(settle(*m_text, *m_doc));
    QVERIFY(m_doc->scenario().text.kind == TextKind::Inline);
    QCOMPARE(captionTokens(*m_tensors), english(kTypedTokens + 1));
    m_doc->undo();
    QVERIFY(m_doc->scenario().text.kind == TextKind::File);
    QCOMPARE(m_text->editor()->toPlainText(), kTyped);
    m_doc->undo();
    QVERIFY(m_doc->scenario().text.kind == TextKind::Sample);
    QVERIFY(settle(*m_text, *m_doc));
    QCOMPARE(captionTokens(*m_tensors), english(m_sampleTokens));
}

QTEST_MAIN(TestStoryThread)
#include "tst_storythread.moc"
