#include "textpane.h"

#include "charts/tokencharts.h"
#include "document/document.h"
#include "panes/panekit.h"
#include "panes/vocabslider.h"
#include "settings/appsettings.h"
#include "scenario/derive.h"
#include "text/bpetrainer.h"
#include "text/gpt2.h"
#include "text/samples.h"
#include "views/figuretablemodel.h"
#include "views/messagebar.h"
#include "views/pagedtextview.h"
#include "views/tokenchipview.h"
#include "workers/fileloader.h"
#include "workers/tokenizationrunner.h"
#include "views/qtstrings.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QScopedValueRollback>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTextCursor>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tw::ui {

using scenario::TextSource;
using scenario::TokenizerChoice;
using namespace vocabslider;

namespace {

QString absolutePath(const QString& path)
{
    return QFileInfo(path).absoluteFilePath();
}

// The same text for the editor and the paged view: the fields of the kind, not the documents count.
bool sameSource(const TextSource& a, const TextSource& b)
{
    if (a.kind != b.kind)
        return false;
    switch (a.kind) {
    case TextSource::Kind::Sample:
        return a.sample == b.sample;
    case TextSource::Kind::File:
        return absolutePath(qs(a.path)) == absolutePath(qs(b.path));
    case TextSource::Kind::Inline:
        return a.text == b.text;
    }
    return false;
}

QString loc(std::uint64_t n)
{
    return QLocale().toString(static_cast<qulonglong>(n));
}

int clampToInt(std::uint64_t v)
{
    return static_cast<int>(std::min<std::uint64_t>(v, static_cast<std::uint64_t>(INT_MAX)));
}
} // namespace

TextPane::TextPane(Document* document, QWidget* parent)
    : QWidget(parent)
    , m_doc(document)
{
    setObjectName(QStringLiteral("textPane"));
    m_runner = new TokenizationRunner(this);
    m_loader = new FileLoader(this);
    m_typing = new QTimer(this);
    m_typing->setSingleShot(true);
    m_typing->setInterval(kTypingDelayMs);
    m_playTimer = new QTimer(this);
    m_playTimer->setInterval(70);
    m_revealProgress = new QTimer(this);
    m_revealProgress->setSingleShot(true);
    m_revealProgress->setInterval(250);

    auto* controls = buildControls();
    m_gpt2Banner = new QLabel(this);
    m_gpt2Banner->setObjectName(QStringLiteral("gpt2Banner"));
    m_gpt2Banner->setWordWrap(true);
    m_gpt2Banner->setStyleSheet(QStringLiteral(
        "QLabel { background: #fff4d6; color: #1a1a1a; border: 1px solid #d9a520; border-radius: 4px; padding: 6px; }"));
    m_message = new MessageBar(this);

    m_progressRow = new QWidget(this);
    m_progressLabel = new QLabel(m_progressRow);
    m_progress = new QProgressBar(m_progressRow);
    m_progress->setObjectName(QStringLiteral("workProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    auto* cancel = new QPushButton(tr("Cancel"), m_progressRow);
    cancel->setObjectName(QStringLiteral("cancelWork"));
    auto* progressLayout = new QHBoxLayout(m_progressRow);
    progressLayout->setContentsMargins(0, 0, 0, 0);
    progressLayout->addWidget(m_progressLabel);
    progressLayout->addWidget(m_progress, 1);
    progressLayout->addWidget(cancel);
    m_progressRow->hide();
    connect(cancel, &QPushButton::clicked, this, &TextPane::cancelWork);

    // The followed token's chip sits in the tokens' heading row (buildSourceAndTokens), its room kept
    // while hidden: hovering a chip follows its token, and nothing may move under the pointer.
    m_followChip = panekit::followChip(this, m_doc);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setChildrenCollapsible(false);
    split->addWidget(buildSourceAndTokens());
    split->addWidget(buildStatistics());
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({800, 560});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 8);
    layout->addWidget(controls);
    layout->addWidget(m_gpt2Banner);
    layout->addWidget(m_message);
    layout->addWidget(m_progressRow);
    layout->addWidget(split, 1);

    if (text::gpt2Embedded()) {
        m_gpt2Banner->hide();
    } else {
        m_gpt2Banner->setText(tr("GPT-2's tokenizer is not in this build: choose “BPE trained on this text” to see "
                                 "tokens.\n%1")
                                  .arg(QString::fromStdString(text::gpt2HowToGet())));
        m_gpt2Radio->setEnabled(false);
    }

    wire();
    syncFromScenario();
    onProblems();
    if (m_doc->derivation())
        onDerived(m_doc->derivation());
    if (m_doc->isDeriving())
        m_revealProgress->start();
}

TextPane::~TextPane() = default;

bool TextPane::eventFilter(QObject* watched, QEvent* event)
{
    // The editor's Ctrl+Z / Ctrl+Y are the document's Undo / Redo (its own undo is off).
    if (watched == m_editor && (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress)) {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool undo = key->matches(QKeySequence::Undo);
        const bool redo = key->matches(QKeySequence::Redo);
        if (undo || redo) {
            event->accept();
            if (event->type() == QEvent::KeyPress)
                undo ? m_doc->undo() : m_doc->redo();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void TextPane::flushTyping()
{
    if (!m_typingPending)
        return;
    m_typingPending = false;
    m_typing->stop();
    TextSource typed;
    typed.kind = TextSource::Kind::Inline;
    typed.text = m_editor->toPlainText().toStdString();
    // The editor already shows it: the scenarioChanged that follows must leave the editor alone.
    m_shownSource = typed;
    m_editorSource = typed;
    m_doc->setText(typed, /*typing=*/true);
}

void TextPane::syncFromScenario()
{
    const scenario::Scenario s = m_doc->resolvedScenario();
    const QScopedValueRollback updating(m_updating, true);
    {
        const QSignalBlocker block(m_sample);
        m_sample->setCurrentIndex(s.text.kind == TextSource::Kind::Sample ? m_sample->findData(qs(s.text.sample)) : -1);
    }
    {
        const QSignalBlocker block(m_tokenizerGroup);
        if (s.tokenizer.kind == TokenizerChoice::Kind::File) {
            // A tokenizer.json from a scenario file: neither switch is on.
            m_tokenizerGroup->setExclusive(false);
            m_gpt2Radio->setChecked(false);
            m_trainedRadio->setChecked(false);
            m_tokenizerGroup->setExclusive(true);
        } else {
            (s.tokenizer.kind == TokenizerChoice::Kind::Gpt2 ? m_gpt2Radio : m_trainedRadio)->setChecked(true);
        }
    }
    {
        const QSignalBlocker blockSpin(m_vocabSpin);
        const QSignalBlocker blockSlider(m_vocabSlider);
        m_vocabSpin->setValue(clampToInt(s.tokenizer.trainedVocab));
        m_vocabSlider->setValue(sliderFromVocab(m_vocabSpin->value()));
    }
    {
        const QSignalBlocker b1(m_seqLen);
        const QSignalBlocker b2(m_microBatch);
        const QSignalBlocker b3(m_globalBatch);
        m_seqLen->setValue(clampToInt(s.batch.sequenceLength));
        m_microBatch->setValue(clampToInt(s.batch.microBatch));
        m_globalBatch->setValue(static_cast<double>(s.batch.globalBatchTokens));
    }
    syncText(s.text);
    updateVocabLabel();
}

void TextPane::syncText(const TextSource& source)
{
    if (m_shownSource && sameSource(*m_shownSource, source))
        return; // already on screen (our own edit, or an edit of something else)
    // The text now comes from elsewhere (undo, a preset, a scenario file): what was being typed was
    // pushed before that edit (pendingEditsRequested), so nothing is lost by replacing the editor.
    m_typingPending = false;
    m_typing->stop();
    m_shownSource = source;
    switch (source.kind) {
    case TextSource::Kind::Sample: {
        const auto sample = text::findSample(source.sample);
        m_message->clearMessage();
        setEditorText(sample ? qs(sample->text) : QString());
        m_source->setCurrentWidget(m_editor);
        m_paged->setText(nullptr, {});
        m_editorSource = source;
        break;
    }
    case TextSource::Kind::Inline:
        m_message->clearMessage();
        if (m_editor->toPlainText().toStdString() != source.text)
            setEditorText(QString::fromStdString(source.text));
        m_source->setCurrentWidget(m_editor);
        m_paged->setText(nullptr, {});
        m_editorSource = source;
        break;
    case TextSource::Kind::File: {
        const QString path = absolutePath(qs(source.path));
        if (m_file && absolutePath(m_file->path) == path) {
            showFile(*m_file, false);
        } else {
            // Read it again to show it (the document reads it on its own to tokenize it).
            m_openingFile = false;
            setBusy(tr("Reading %1…").arg(QFileInfo(path).fileName()), true);
            m_loader->load(path);
        }
        break;
    }
    }
}

void TextPane::setEditorText(const QString& text)
{
    const QScopedValueRollback updating(m_updating, true);
    const int position = m_editor->textCursor().position();
    m_editor->setPlainText(text);
    QTextCursor cursor = m_editor->textCursor();
    cursor.setPosition(std::min(position, static_cast<int>(text.size())));
    m_editor->setTextCursor(cursor);
}

void TextPane::onDerived(const std::shared_ptr<const scenario::Derivation>& d)
{
    if (!d)
        return;
    const auto& tokenized = d->stage1->tokenized;
    ShownTokens next;
    next.derivation = d;
    // Aliasing pointers: the chips share the derivation's bytes and spans, nothing is copied.
    next.text = std::shared_ptr<const std::string>(tokenized, &tokenized->text);
    next.spans = std::shared_ptr<const std::vector<text::TokenSpan>>(tokenized, &tokenized->tokens);
    next.tokenizer = tokenized->tokenizer;
    next.tokenizerChoice = m_doc->scenario().tokenizer;
    // The replay keeps its place while the tokenizer stays the same kind with as many merges
    // (GPT-2 while typing); another tokenizer starts it at the end.
    const int merges = static_cast<int>(next.tokenizer->merges().size());
    if (m_base.tokenizerChoice.kind != next.tokenizerChoice.kind || m_replay->maximum() != merges)
        m_replayAtEnd = true;
    m_base = std::move(next);

    m_figures->setFigures(d->dataset().figures);
    m_charts->setStats(&d->dataset());
    // Keep the figure the user was reading in the detail label.
    for (int row = 0; row < m_figures->rowCount(); ++row) {
        const QModelIndex index = m_figures->index(row, 0);
        if (index.data(FigureTableModel::FigureIdRole).toString() == m_selectedFigure)
            m_detail->setText(m_figures->explain(index));
    }
    {
        const QSignalBlocker block(m_replay);
        m_replay->setMaximum(merges);
        m_replay->setPageStep(std::max(1, merges / 20));
        if (m_replayAtEnd)
            m_replay->setValue(merges);
    }
    updateVocabLabel();
    updateReplay();
    scheduleReplay();
}

void TextPane::onProblems()
{
    // Stage 1's own problems (its text or tokenizer); the model's are stage 2's to show.
    QStringList lines;
    for (const Error& e : m_doc->problems())
        if (e.where.jsonPath.starts_with("text") || e.where.jsonPath.starts_with("tokenizer"))
            lines << QString::fromStdString(e.toString());
    if (!lines.isEmpty()) {
        m_message->showMessage(MessageBar::Severity::Error,
                               tr("%1\nThe tokens shown are from before this change.").arg(lines.join(QLatin1Char('\n'))));
        m_problemShown = true;
    } else if (m_problemShown) {
        m_message->clearMessage();
        m_problemShown = false;
    }
}

void TextPane::scheduleReplay()
{
    if (!m_base.spans)
        return;
    if (m_replayAtEnd) {
        {
            const QSignalBlocker quiet(m_runner); // superseded, not cancelled by the user: no message
            m_runner->cancel();
        }
        m_shown = m_base;
        showChips();
        emit tokenized();
        finishIfIdle();
        return;
    }
    TokenizeRequest request;
    request.text = m_base.text;
    request.model = m_base.tokenizer;
    request.mergeLimit = static_cast<std::size_t>(m_replay->value());
    m_runner->schedule(std::move(request), 0);
}

void TextPane::onReplayed(const TokenizeResult& result)
{
    if (!m_runner->isBusy() && !m_doc->isDeriving()) {
        m_revealProgress->stop();
        setBusy({}, false);
    }
    if (result.error) {
        if (!result.cancelled)
            m_message->showMessage(MessageBar::Severity::Error,
                                   tr("Replaying the merges failed: %1").arg(QString::fromStdString(result.error->toString())));
        finishIfIdle();
        return;
    }
    if (result.model != m_base.tokenizer || result.text != m_base.text)
        return; // the document moved on; its derivation schedules a new replay
    m_shown = m_base;
    m_shown.spans = result.spans;
    m_shown.mergeLimit = result.mergeLimit;
    showChips();
    emit tokenized();
    finishIfIdle();
}

void TextPane::finishIfIdle()
{
    if (!isBusy())
        emit workFinished();
}

void TextPane::showChips()
{
    if (!m_shown.spans || !m_shown.text) {
        m_chips->clear();
        m_ids->clear();
        m_chipInfo->clear();
        return;
    }
    const auto& spans = *m_shown.spans;
    std::size_t first = 0, last = spans.size();
    if (showsPagedView() && m_file && m_file->bytes->size() == m_shown.text->size()) {
        // The paged view shows one page of the file: draw the tokens that overlap it.
        const auto [begin, end] = m_paged->pageRange();
        first = static_cast<std::size_t>(std::lower_bound(spans.begin(), spans.end(), begin,
                                                          [](const text::TokenSpan& s, std::size_t b) { return s.end <= b; })
                                         - spans.begin());
        last = static_cast<std::size_t>(std::lower_bound(spans.begin() + static_cast<std::ptrdiff_t>(first), spans.end(), end,
                                                         [](const text::TokenSpan& s, std::size_t e) { return s.begin < e; })
                                        - spans.begin());
    }
    const std::size_t count = std::min(last - first, kMaxChips);
    m_chips->setTokens(m_shown.text, m_shown.spans, first, count);
    m_ids->setTokens(m_shown.text, m_shown.spans, first, count);
    if (spans.empty())
        m_chipInfo->setText(tr("no tokens"));
    else if (first == 0 && count == spans.size())
        m_chipInfo->setText(tr("%1 tokens").arg(loc(spans.size())));
    else
        m_chipInfo->setText(tr("tokens %1–%2 of %3%4")
                                .arg(loc(first + 1), loc(first + count), loc(spans.size()),
                                     count == kMaxChips ? tr(" (first %1 drawn)").arg(loc(kMaxChips)) : QString()));
    m_chipInfo->setToolTip(m_chipInfo->text());
    showFollowed();
}

void TextPane::onChipHovered(int chip)
{
    // Only the document's own tokens are followed (a merge replay shows other tokens).
    if (chip < 0 || m_followPinned || m_shown.mergeLimit != SIZE_MAX || m_shown.spans != m_base.spans)
        return;
    const qint64 index = qint64(m_chips->firstToken()) + chip;
    const QScopedValueRollback hovering(m_followingHover, true);
    m_doc->setFollowedToken(index);
}

void TextPane::onChipClicked(int chip)
{
    if (chip < 0 || m_shown.mergeLimit != SIZE_MAX || m_shown.spans != m_base.spans)
        return;
    const qint64 index = qint64(m_chips->firstToken()) + chip;
    if (m_followPinned && m_doc->followedToken() == index) {
        m_followPinned = false; // a second click lets hovering move it again
        showFollowed();
        return;
    }
    const QScopedValueRollback hovering(m_followingHover, true);
    m_followPinned = true;
    m_doc->setFollowedToken(index);
    showFollowed();
}

void TextPane::showFollowed()
{
    const qint64 index = m_doc->followedToken();
    const bool own = m_shown.mergeLimit == SIZE_MAX && m_shown.spans == m_base.spans;
    const qint64 chip = own && index >= 0 ? index - qint64(m_chips->firstToken()) : -1;
    const int c = chip >= 0 && chip < m_chips->chipCount() ? int(chip) : -1;
    m_chips->setFollowed(c, m_followPinned);
    m_ids->setFollowed(c, m_followPinned);
}

void TextPane::updateReplay()
{
    const int max = m_replay->maximum();
    const int k = m_replay->value();
    if (!m_base.tokenizer || max == 0) {
        m_replayLabel->setText(tr("no merges"));
        return;
    }
    if (k == max) {
        m_replayLabel->setText(tr("all %1 merges applied").arg(loc(static_cast<std::uint64_t>(max))));
        return;
    }
    if (k == 0) {
        m_replayLabel->setText(tr("0 of %1 merges: every token is one byte").arg(loc(static_cast<std::uint64_t>(max))));
        return;
    }
    const text::BpeModel& model = *m_base.tokenizer;
    const auto& merge = model.merges()[static_cast<std::size_t>(k - 1)];
    QString text = tr("merge %1 of %2: %3 + %4 → %5")
                       .arg(loc(static_cast<std::uint64_t>(k)), loc(static_cast<std::uint64_t>(max)),
                            visiblePiece(model.bytesOf(merge.left)), visiblePiece(model.bytesOf(merge.right)),
                            visiblePiece(model.bytesOf(merge.id)));
    if (merge.frequency > 0)
        text += tr(" (pair seen %1×)").arg(loc(merge.frequency));
    m_replayLabel->setText(text);
}

void TextPane::updateVocabLabel()
{
    const TokenizerChoice& choice = m_doc->scenario().tokenizer;
    const bool trained = choice.kind == TokenizerChoice::Kind::Trained;
    m_vocabSlider->setEnabled(trained);
    m_vocabSpin->setEnabled(trained);
    m_vocabActual->setToolTip(QString());
    const bool derived = m_base.tokenizer && m_base.tokenizerChoice == choice;
    switch (choice.kind) {
    case TokenizerChoice::Kind::Gpt2:
        m_vocabActual->setText(derived ? tr("(GPT-2: V = %1)").arg(loc(m_base.tokenizer->vocabSize())) : tr("(GPT-2)"));
        return;
    case TokenizerChoice::Kind::File:
        m_vocabActual->setText(derived ? tr("(%1: V = %2)").arg(QFileInfo(qs(choice.path)).fileName(),
                                                                loc(m_base.tokenizer->vocabSize()))
                                       : QFileInfo(qs(choice.path)).fileName());
        m_vocabActual->setToolTip(qs(choice.path));
        return;
    case TokenizerChoice::Kind::Trained:
        break;
    }
    if (!derived) {
        m_vocabActual->setText(m_doc->isDeriving() ? tr("training…") : QString());
        return;
    }
    const auto actual = static_cast<std::uint64_t>(m_base.tokenizer->vocabSize());
    // Core says when the text ran out of pairs before V (a warning at tokenizer.vocab_size).
    QString shortfall;
    for (const Error& e : m_base.derivation->problems)
        if (e.where.jsonPath == "tokenizer.vocab_size")
            shortfall = QString::fromStdString(e.message);
    m_vocabActual->setText(shortfall.isEmpty() ? tr("→ V = %1").arg(loc(actual))
                                               : tr("→ V = %1 (ran out of pairs)").arg(loc(actual)));
    m_vocabActual->setToolTip(shortfall);
}

void TextPane::setVocabFromSlider(int position)
{
    m_vocabSpin->setValue(vocabFromSlider(position));
}

void TextPane::tickReplay()
{
    const int max = m_replay->maximum();
    const int step = std::max(1, max / 250);
    const int next = std::min(max, m_replay->value() + step);
    m_replay->setValue(next);
    if (next >= max)
        m_play->setChecked(false);
}

void TextPane::setTokenizer(TokenizerChoice::Kind kind)
{
    m_doc->setField(Field::TokenizerKind, FieldValue(std::string(scenario::toString(kind))));
}

void TextPane::selectSample(int index)
{
    if (index < 0 || index >= m_sample->count())
        return;
    TextSource source;
    source.kind = TextSource::Kind::Sample;
    source.sample = m_sample->itemData(index).toString().toStdString();
    if (!m_doc->setText(source))
        syncFromScenario(); // the same sample: the chooser shows the document's text again
}

void TextPane::showEditor()
{
    m_message->clearMessage();
    if (!m_doc->setText(m_editorSource)) {
        m_shownSource.reset();
        syncFromScenario();
    }
}

bool TextPane::selectFigure(const QString& id)
{
    for (int row = 0; row < m_figures->rowCount(); ++row) {
        const QModelIndex index = m_figures->index(row, 0);
        if (index.data(FigureTableModel::FigureIdRole).toString() == id) {
            m_table->setCurrentIndex(index);
            m_table->scrollTo(index);
            return true;
        }
    }
    return false;
}

void TextPane::chooseAndOpenFile()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open text"), QString(),
                                                      tr("Text files (*.txt *.md);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void TextPane::openFile(const QString& path)
{
    m_revealProgress->stop();
    m_openingFile = true;
    setBusy(tr("Reading %1…").arg(QFileInfo(path).fileName()), true);
    m_loader->load(path);
}

void TextPane::onFileLoaded(const LoadedFile& file)
{
    setBusy({}, false);
    m_file = std::make_shared<const LoadedFile>(file);
    if (!m_openingFile) {
        // Read to show the document's text again (undo, a scenario file): only if it still is.
        const TextSource& current = m_doc->scenario().text;
        if (current.kind == TextSource::Kind::File
            && absolutePath(qs(m_doc->resolvedScenario().text.path)) == absolutePath(file.path))
            showFile(file, false);
        finishIfIdle();
        return;
    }
    m_openingFile = false;
    TextSource source;
    source.kind = TextSource::Kind::File;
    source.path = absolutePath(file.path).toStdString();
    m_shownSource = source; // shown just below: the scenarioChanged of the push leaves it alone
    showFile(file, true);
    m_doc->setText(source);
    if (showsPagedView() && m_doc->isDeriving())
        setBusy(tr("Tokenizing %1…").arg(QFileInfo(file.path).fileName()), true);
    emit fileOpened(file.path);
}

void TextPane::showFile(const LoadedFile& file, bool justOpened)
{
    const QString name = QFileInfo(file.path).fileName();
    const auto size = static_cast<std::uint64_t>(file.bytes->size());
    QStringList notes;
    if (file.invalidUtf8)
        notes << tr("%1 — shown with � for the bad bytes; the tokens are those of the file's original bytes.")
                     .arg(QString::fromStdString(file.invalidUtf8->toString()));
    if (file.nulBytes > 0)
        notes << tr("%1 contains %2 NUL byte(s), shown as ⟨00⟩ and tokenized as they are.").arg(name, loc(file.nulBytes));
    if (file.hasCarriageReturn && notes.isEmpty())
        notes << tr("%1 has Windows line ends (CR LF), kept as they are.").arg(name);
    const bool readOnly = size > kEditorLimitBytes || file.invalidUtf8 || file.nulBytes > 0 || file.hasCarriageReturn;

    if (readOnly) {
        // Bytes the editor would change (or too many for it): a read-only paged view of the exact
        // bytes; the editor keeps the text it showed.
        m_paged->setText(file.bytes, tr("%1 · %2 bytes · read-only").arg(name, loc(size)));
        m_source->setCurrentWidget(m_paged);
        if (size > kEditorLimitBytes)
            notes.prepend(tr("%1 is %2 bytes: shown read-only one page at a time. Your text is kept: "
                             "“Back to the editor” returns to it.").arg(name, loc(size)));
        else
            notes << tr("Shown read-only so that nothing changes the bytes; “Back to the editor” returns to your text.");
        m_message->showMessage(file.invalidUtf8 || file.nulBytes ? MessageBar::Severity::Warning : MessageBar::Severity::Info,
                               notes.join(QLatin1Char('\n')));
    } else {
        m_paged->setText(nullptr, {});
        m_source->setCurrentWidget(m_editor);
        setEditorText(QString::fromUtf8(file.bytes->data(), static_cast<qsizetype>(file.bytes->size())));
        TextSource source;
        source.kind = TextSource::Kind::File;
        source.path = absolutePath(file.path).toStdString();
        m_editorSource = source;
        if (justOpened)
            m_message->showMessage(MessageBar::Severity::Info,
                                   tr("Opened %1 (%2 bytes). Undo (Ctrl+Z) brings back the previous text.").arg(name, loc(size)));
        else
            m_message->clearMessage();
    }
    showChips();
}

void TextPane::cancelWork()
{
    m_playTimer->stop();
    if (m_loader->isBusy())
        m_loader->cancel();
    if (m_runner->isBusy())
        m_runner->cancel();
    m_doc->cancelDerivation();
    m_revealProgress->stop();
    setBusy({}, false);
}

void TextPane::setBusy(const QString& what, bool busy)
{
    if (busy) {
        m_progressLabel->setText(what);
        m_progress->setValue(0);
        m_progressRow->show();
    } else {
        m_progressRow->hide();
    }
}

bool TextPane::isBusy() const
{
    return m_loader->isBusy() || m_runner->isBusy() || m_typingPending || m_doc->isDeriving();
}

bool TextPane::showsPagedView() const
{
    return m_source->currentWidget() == m_paged;
}

QString TextPane::messageText() const
{
    return m_message->text();
}

QWidget* TextPane::drawing() const
{
    return m_chips;
}

QWidget* TextPane::drawingCompanion() const
{
    return m_ids; // what the model reads
}

void TextPane::zoomDrawing(double factor)
{
    if (!m_chipFontBeforeZoom) {
        m_chipFontBeforeZoom = m_chips->font();
        m_chipFontWasSet = m_chips->testAttribute(Qt::WA_SetFont);
    }
    const QFont now = m_chips->font();
    const double base = m_chipFontBeforeZoom->pointSizeF() > 0 ? m_chipFontBeforeZoom->pointSizeF() : 10;
    if (now.pointSizeF() > 0) {
        QFont f = now;
        f.setPointSizeF(std::clamp(now.pointSizeF() * factor, base * 0.5, base * 4));
        m_chips->setFont(f);
    }
}

void TextPane::restoreDrawing()
{
    if (!m_chipFontBeforeZoom)
        return;
    m_chips->setFont(m_chipFontWasSet ? *m_chipFontBeforeZoom : QFont());
    if (!m_chipFontWasSet)
        m_chips->setAttribute(Qt::WA_SetFont, false);
    m_chipFontBeforeZoom.reset();
}

} // namespace tw::ui
