#include "textpane.h"

#include "charts/tokencharts.h"
#include "document/document.h"
#include "panes/panekit.h"
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

namespace {
using scenario::TextSource;
using scenario::TokenizerChoice;

constexpr int kVocabSliderSteps = 1000;

// The chooser's names for the shipped samples (core's title for any other).
QString sampleTitle(const text::Sample& sample)
{
    if (sample.id == "inferno-canto1-it")
        return TextPane::tr("Dante, Inferno I (Italian)");
    if (sample.id == "inferno-canto1-en")
        return TextPane::tr("Longfellow, Inferno I (English)");
    return qs(sample.title);
}

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

// The V slider is logarithmic: 257 … 65,536 over kVocabSliderSteps.
int vocabFromSlider(int position)
{
    const double lo = std::log(static_cast<double>(text::kMinTrainVocab));
    const double hi = std::log(static_cast<double>(text::kMaxTrainVocab));
    return static_cast<int>(std::lround(std::exp(lo + (hi - lo) * position / kVocabSliderSteps)));
}

int sliderFromVocab(int vocab)
{
    const double lo = std::log(static_cast<double>(text::kMinTrainVocab));
    const double hi = std::log(static_cast<double>(text::kMaxTrainVocab));
    return static_cast<int>(std::lround((std::log(static_cast<double>(vocab)) - lo) / (hi - lo) * kVocabSliderSteps));
}

QSpinBox* shapeSpin(int min, int max, const QString& tip, QWidget* parent)
{
    auto* spin = new QSpinBox(parent);
    spin->setRange(min, max);
    spin->setGroupSeparatorShown(true);
    spin->setToolTip(tip);
    spin->setKeyboardTracking(false);
    return spin;
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

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setChildrenCollapsible(false);
    split->addWidget(buildSourceAndTokens());
    split->addWidget(buildStatistics());
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({800, 560});

    m_followChip = panekit::followChip(this, m_doc);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 8);
    layout->addWidget(controls);
    // On its own row: beside the controls it would widen the window past 1280 px.
    layout->addWidget(m_followChip, 0, Qt::AlignLeft);
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

QWidget* TextPane::buildControls()
{
    auto* box = new QWidget(this);
    m_sample = new QComboBox(box);
    m_sample->setObjectName(QStringLiteral("sampleChooser"));
    for (const text::Sample& sample : text::samples())
        m_sample->addItem(sampleTitle(sample), QString::fromUtf8(sample.id.data(), static_cast<qsizetype>(sample.id.size())));
    m_sample->setPlaceholderText(tr("Your own text"));
    auto* open = new QPushButton(tr("Open text…"), box);
    open->setObjectName(QStringLiteral("openText"));
    open->setToolTip(tr("Tokenize a text file (undoable); large files are shown read-only, a page at a time"));
    connect(open, &QPushButton::clicked, this, &TextPane::chooseAndOpenFile);

    m_gpt2Radio = new QRadioButton(tr("GPT-2"), box);
    m_gpt2Radio->setObjectName(QStringLiteral("tokenizerGpt2"));
    m_gpt2Radio->setToolTip(tr("GPT-2's byte-level BPE: 50,257 tokens, the ids tiktoken gives"));
    m_trainedRadio = new QRadioButton(tr("BPE trained on this text"), box);
    m_trainedRadio->setObjectName(QStringLiteral("tokenizerTrained"));
    m_trainedRadio->setToolTip(tr("Learn merges from the text itself, up to a vocabulary of V tokens"));
    m_tokenizerGroup = new QButtonGroup(this);
    m_tokenizerGroup->addButton(m_gpt2Radio, static_cast<int>(TokenizerChoice::Kind::Gpt2));
    m_tokenizerGroup->addButton(m_trainedRadio, static_cast<int>(TokenizerChoice::Kind::Trained));

    m_vocabSlider = new QSlider(Qt::Horizontal, box);
    m_vocabSlider->setObjectName(QStringLiteral("vocabSlider"));
    m_vocabSlider->setRange(0, kVocabSliderSteps);
    m_vocabSlider->setMinimumWidth(100);
    m_vocabSpin = new QSpinBox(box);
    m_vocabSpin->setObjectName(QStringLiteral("vocabSpin"));
    m_vocabSpin->setRange(static_cast<int>(text::kMinTrainVocab), static_cast<int>(text::kMaxTrainVocab));
    m_vocabSpin->setGroupSeparatorShown(true);
    m_vocabSpin->setKeyboardTracking(false);
    m_vocabSpin->setToolTip(tr("Target vocabulary V: 256 byte tokens + V−257 merges + <|endoftext|>"));
    m_vocabActual = new QLabel(box);
    m_vocabActual->setObjectName(QStringLiteral("vocabActual"));

    m_replay = new QSlider(Qt::Horizontal, box);
    m_replay->setObjectName(QStringLiteral("replaySlider"));
    m_replay->setRange(0, 0);
    m_replay->setMinimumWidth(200);
    m_replay->setToolTip(tr("Merge replay: apply only the first k merges and watch bytes fuse into tokens"));
    m_play = new QPushButton(tr("▶ Play"), box);
    m_play->setObjectName(QStringLiteral("replayPlay"));
    m_play->setCheckable(true);
    m_replayLabel = new QLabel(box);
    m_replayLabel->setObjectName(QStringLiteral("replayLabel"));
    m_replayLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    auto* row1 = new QHBoxLayout;
    row1->addWidget(new QLabel(tr("Sample:"), box));
    row1->addWidget(m_sample);
    row1->addWidget(open);
    row1->addSpacing(24);
    row1->addWidget(new QLabel(tr("Tokenizer:"), box));
    row1->addWidget(m_gpt2Radio);
    row1->addWidget(m_trainedRadio);
    row1->addSpacing(8);
    row1->addWidget(new QLabel(tr("V"), box));
    row1->addWidget(m_vocabSlider, 1);
    row1->addWidget(m_vocabSpin);
    row1->addWidget(m_vocabActual);
    auto* row2 = new QHBoxLayout;
    row2->addWidget(new QLabel(tr("Merge replay:"), box));
    row2->addWidget(m_play);
    row2->addWidget(m_replay, 1);
    row2->addWidget(m_replayLabel, 1);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row1);
    layout->addLayout(row2);
    return box;
}

QWidget* TextPane::buildSourceAndTokens()
{
    m_source = new QStackedWidget(this);
    m_editor = new QPlainTextEdit(m_source);
    m_editor->setObjectName(QStringLiteral("textEditor"));
    m_editor->setPlaceholderText(tr("Type or paste some text…"));
    // One history: the document's (see the header). Ctrl+Z / Ctrl+Y here are the document's.
    m_editor->setUndoRedoEnabled(false);
    m_editor->installEventFilter(this);
    QFont editorFont = m_editor->font();
    editorFont.setPointSizeF(editorFont.pointSizeF() * 1.25);
    m_editor->setFont(editorFont);
    m_paged = new PagedTextView(m_source);
    m_paged->setObjectName(QStringLiteral("pagedView"));
    m_paged->textView()->setFont(editorFont);
    m_source->addWidget(m_editor);
    m_source->addWidget(m_paged);

    m_chips = new TokenChipView(TokenChipView::Mode::Pieces, this);
    m_chips->setObjectName(QStringLiteral("tokenChips"));
    QFont chipFont = m_chips->font();
    chipFont.setPointSizeF(chipFont.pointSizeF() * 1.25);
    m_chips->setFont(chipFont);
    m_chips->setPlaceholderText(tr("Type some text above: its tokens appear here."));
    m_ids = new TokenChipView(TokenChipView::Mode::Ids, this);
    m_ids->setObjectName(QStringLiteral("idStrip"));
    m_ids->setPlaceholderText(tr("The token ids appear here."));
    m_chipInfo = new QLabel(this);
    m_chipInfo->setObjectName(QStringLiteral("chipInfo"));
    m_chipInfo->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    auto* tokensBox = new QWidget(this);
    auto* tokensLayout = new QVBoxLayout(tokensBox);
    tokensLayout->setContentsMargins(0, 0, 0, 0);
    auto* heading = new QLabel(tr("<b>Tokens</b> <span style='color:gray'>· space ↵ newline → tab ⟨hex⟩ one byte "
                                  "(hover a chip)</span>"),
                               this);
    // Both labels may be cut rather than widen the column.
    heading->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_chipInfo->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto* headRow = new QHBoxLayout;
    headRow->addWidget(heading, 3);
    headRow->addWidget(m_chipInfo, 2);
    tokensLayout->addLayout(headRow);
    tokensLayout->addWidget(m_chips, 1);

    auto* idsBox = new QWidget(this);
    auto* idsLayout = new QVBoxLayout(idsBox);
    idsLayout->setContentsMargins(0, 0, 0, 0);
    idsLayout->addWidget(new QLabel(tr("<b>Token ids</b> <span style='color:gray'>(what the model reads)</span>"), this));
    idsLayout->addWidget(m_ids, 1);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->setChildrenCollapsible(false);
    split->addWidget(m_source);
    split->addWidget(tokensBox);
    split->addWidget(idsBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 4);
    split->setStretchFactor(2, 2);
    split->setSizes({260, 330, 170});
    return split;
}

QWidget* TextPane::buildStatistics()
{
    m_figures = new FigureTableModel(this);
    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("figureTable"));
    m_table->setModel(m_figures);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(FigureTableModel::LabelColumn, QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(FigureTableModel::ValueColumn, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(FigureTableModel::IdColumn, QHeaderView::Interactive);
    m_table->setColumnHidden(FigureTableModel::IdColumn, true);
    m_table->setWordWrap(false);

    m_detail = new QLabel(tr("Click a figure to see its formula and the numbers it comes from."), this);
    m_detail->setObjectName(QStringLiteral("figureDetail"));
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_detail->setTextFormat(Qt::PlainText);
    m_detail->setMinimumHeight(QFontMetrics(font()).lineSpacing() * 4);
    m_detail->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_detail->setStyleSheet(QStringLiteral("QLabel { background: palette(alternate-base); padding: 6px; }"));

    m_seqLen = shapeSpin(1, static_cast<int>(scenario::kMaxSequenceLength), tr("T: tokens per training sequence"), this);
    m_seqLen->setObjectName(QStringLiteral("shapeT"));
    m_microBatch = shapeSpin(1, static_cast<int>(scenario::kMaxMicroBatch), tr("B: sequences per micro-batch"), this);
    m_microBatch->setObjectName(QStringLiteral("shapeB"));
    // G goes past an int (2^40): a whole-number double spin box, as in the stage 2 form.
    m_globalBatch = new QDoubleSpinBox(this);
    m_globalBatch->setObjectName(QStringLiteral("shapeG"));
    m_globalBatch->setDecimals(0);
    m_globalBatch->setRange(1, static_cast<double>(scenario::kMaxGlobalBatchTokens));
    m_globalBatch->setGroupSeparatorShown(true);
    m_globalBatch->setKeyboardTracking(false);
    m_globalBatch->setToolTip(tr("G: tokens per optimizer step (global batch)"));
    auto* shapeRow = new QHBoxLayout;
    shapeRow->addWidget(new QLabel(tr("Training shape:"), this));
    shapeRow->addWidget(new QLabel(tr("T"), this));
    shapeRow->addWidget(m_seqLen);
    shapeRow->addWidget(new QLabel(tr("B"), this));
    shapeRow->addWidget(m_microBatch);
    shapeRow->addWidget(new QLabel(tr("G"), this));
    shapeRow->addWidget(m_globalBatch);
    shapeRow->addStretch(1);

    auto* statsBox = new QWidget(this);
    auto* statsLayout = new QVBoxLayout(statsBox);
    statsLayout->setContentsMargins(0, 0, 0, 0);
    statsLayout->addWidget(new QLabel(tr("<b>Dataset figures</b> <span style='color:gray'>(click one for its "
                                         "formula)</span>"),
                                      this));
    statsLayout->addLayout(shapeRow);
    statsLayout->addWidget(m_table, 1);
    statsLayout->addWidget(m_detail);

    m_charts = new TokenCharts(this);
    m_charts->setObjectName(QStringLiteral("tokenCharts"));

    auto* split = new QSplitter(Qt::Vertical, this);
    split->setChildrenCollapsible(false);
    split->addWidget(statsBox);
    split->addWidget(m_charts);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({430, 330});
    return split;
}

void TextPane::wire()
{
    // Widgets → document. m_updating is set while the widgets follow the document.
    connect(m_editor, &QPlainTextEdit::textChanged, this, [this] {
        if (m_updating)
            return;
        m_typingPending = true;
        m_typing->start();
    });
    connect(m_typing, &QTimer::timeout, this, &TextPane::flushTyping);
    connect(m_doc, &Document::pendingEditsRequested, this, &TextPane::flushTyping);
    connect(m_sample, &QComboBox::activated, this, &TextPane::selectSample);
    connect(m_tokenizerGroup, &QButtonGroup::idToggled, this, [this](int id, bool checked) {
        if (checked && !m_updating)
            setTokenizer(static_cast<TokenizerChoice::Kind>(id));
    });
    connect(m_vocabSlider, &QSlider::valueChanged, this, &TextPane::setVocabFromSlider);
    connect(m_vocabSpin, &QSpinBox::valueChanged, this, [this](int v) {
        {
            const QSignalBlocker block(m_vocabSlider);
            m_vocabSlider->setValue(sliderFromVocab(v));
        }
        if (!m_updating)
            m_doc->setField(Field::TrainedVocab, FieldValue(static_cast<std::uint64_t>(v)));
    });
    connect(m_seqLen, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_updating)
            m_doc->setField(Field::SequenceLength, FieldValue(static_cast<std::uint64_t>(v)));
    });
    connect(m_microBatch, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_updating)
            m_doc->setField(Field::MicroBatch, FieldValue(static_cast<std::uint64_t>(v)));
    });
    connect(m_globalBatch, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        if (!m_updating)
            m_doc->setField(Field::GlobalBatchTokens, FieldValue(static_cast<std::uint64_t>(std::llround(v))));
    });

    // The merge replay: a view setting, not a document edit.
    connect(m_replay, &QSlider::valueChanged, this, [this](int value) {
        m_replayAtEnd = value == m_replay->maximum();
        updateReplay();
        scheduleReplay();
    });
    connect(m_play, &QPushButton::toggled, this, [this](bool on) {
        m_play->setText(on ? tr("❚❚ Pause") : tr("▶ Play"));
        if (on && m_replay->value() == m_replay->maximum())
            m_replay->setValue(0);
        on ? m_playTimer->start() : m_playTimer->stop();
    });
    connect(m_playTimer, &QTimer::timeout, this, &TextPane::tickReplay);

    // Document → widgets.
    connect(m_doc, &Document::scenarioChanged, this, &TextPane::syncFromScenario);
    connect(m_doc, &Document::derived, this, &TextPane::onDerived);
    connect(m_doc, &Document::problemsChanged, this, &TextPane::onProblems);
    connect(m_doc, &Document::derivingChanged, this, [this](bool deriving) {
        if (deriving) {
            m_revealProgress->start();
            m_progress->setValue(0);
            return;
        }
        if (!m_runner->isBusy() && !m_loader->isBusy()) {
            m_revealProgress->stop();
            setBusy({}, false);
        }
        updateVocabLabel();
        finishIfIdle();
    });
    connect(m_doc, &Document::derivationProgressed, this, [this](double f) { m_progress->setValue(static_cast<int>(f * 1000)); });
    connect(m_doc, &Document::derivationCancelled, this, [this] {
        setBusy({}, false);
        m_message->showMessage(MessageBar::Severity::Info, tr("Tokenizing cancelled: the tokens shown are from "
                                                              "before the last change."));
        updateVocabLabel();
        emit workFinished();
    });

    connect(m_runner, &TokenizationRunner::started, this, [this] {
        m_revealProgress->start();
        m_progress->setValue(0);
    });
    connect(m_revealProgress, &QTimer::timeout, this, [this] {
        if (m_runner->isBusy() || m_doc->isDeriving())
            setBusy(tr("Tokenizing…"), true);
    });
    connect(m_runner, &TokenizationRunner::progressed, this,
            [this](double f) { m_progress->setValue(static_cast<int>(f * 1000)); });
    connect(m_runner, &TokenizationRunner::finished, this, &TextPane::onReplayed);
    connect(m_runner, &TokenizationRunner::cancelled, this, [this] {
        setBusy({}, false);
        m_message->showMessage(MessageBar::Severity::Info, tr("Tokenizing cancelled: the tokens shown are from "
                                                              "before the last change."));
        emit workFinished();
    });

    connect(m_loader, &FileLoader::progressed, this, [this](double f) { m_progress->setValue(static_cast<int>(f * 1000)); });
    connect(m_loader, &FileLoader::loaded, this, &TextPane::onFileLoaded);
    connect(m_loader, &FileLoader::failed, this, [this](const Error& error) {
        setBusy({}, false);
        m_message->showMessage(MessageBar::Severity::Error,
                               m_openingFile ? tr("Could not open %1\nThe text shown is unchanged.")
                                                   .arg(QString::fromStdString(error.toString()))
                                             : tr("Could not show %1").arg(QString::fromStdString(error.toString())));
        m_openingFile = false;
        emit workFinished();
    });
    connect(m_loader, &FileLoader::cancelled, this, [this](const QString& path) {
        setBusy({}, false);
        m_message->showMessage(MessageBar::Severity::Info,
                               tr("Opening %1 cancelled. The text shown is unchanged.").arg(path));
        m_openingFile = false;
        emit workFinished();
    });

    connect(m_paged, &PagedTextView::pageChanged, this, &TextPane::showChips);
    connect(m_paged, &PagedTextView::backToEditorRequested, this, &TextPane::showEditor);
    connect(m_chips, &TokenChipView::hovered, m_ids, &TokenChipView::setHighlighted);
    connect(m_ids, &TokenChipView::hovered, m_chips, &TokenChipView::setHighlighted);
    // The live thread: hovering a chip follows its token through the stages, clicking pins it.
    for (TokenChipView* view : {m_chips, m_ids}) {
        connect(view, &TokenChipView::hovered, this, &TextPane::onChipHovered);
        connect(view, &TokenChipView::clicked, this, &TextPane::onChipClicked);
    }
    connect(m_doc, &Document::followedTokenChanged, this, [this](qint64 index) {
        if (!m_followingHover)
            m_followPinned = index >= 0; // chosen elsewhere (stage 3) or stopped
        showFollowed();
    });
    // The viewer's byte units (MB or MiB), live.
    m_figures->setDisplayUnits(AppSettings::instance()->displayUnits());
    connect(AppSettings::instance(), &AppSettings::displayUnitsChanged, this, [this](DisplayUnits units) {
        m_figures->setDisplayUnits(units);
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid())
            m_detail->setText(m_figures->explain(current));
    });

    auto showDetail = [this](const QModelIndex& index) {
        m_selectedFigure = index.data(FigureTableModel::FigureIdRole).toString();
        m_detail->setText(m_figures->explain(index));
    };
    connect(m_table, &QTableView::clicked, this, showDetail);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, showDetail);
}

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

} // namespace tw::ui
