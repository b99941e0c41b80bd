// TextPane's widgets: the controls (text source, tokenizer, vocabulary slider), the source and
// token views, the statistics tabs, and the connections between them and the document.
#include "textpane.h"

#include "charts/tokencharts.h"
#include "document/document.h"
#include "panes/panekit.h"
#include "panes/vocabslider.h"
#include "settings/appsettings.h"
#include "settings/fontfollow.h"
#include "scenario/derive.h"
#include "text/bpetrainer.h"
#include "text/gpt2.h"
#include "text/samples.h"
#include "views/elidedlabel.h"
#include "views/figuretablemodel.h"
#include "views/messagebar.h"
#include "views/pagedtextview.h"
#include "views/qtstrings.h"
#include "views/tokenchipview.h"
#include "workers/fileloader.h"
#include "workers/tokenizationrunner.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace tw::ui {

using scenario::TextSource;
using scenario::TokenizerChoice;
using namespace vocabslider;

namespace {
// The chooser's names for the shipped samples (core's title for any other).
QString sampleTitle(const text::Sample& sample)
{
    if (sample.id == "inferno-canto1-it")
        return TextPane::tr("Dante, Inferno I (Italian)");
    if (sample.id == "inferno-canto1-en")
        return TextPane::tr("Longfellow, Inferno I (English)");
    return qs(sample.title);
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
} // namespace

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
    fontfollow::followAppFont(m_editor, 1.25); // presentation mode and the font scale enlarge it too
    m_paged = new PagedTextView(m_source);
    m_paged->setObjectName(QStringLiteral("pagedView"));
    fontfollow::followAppFont(m_paged->textView(), 1.25);
    m_source->addWidget(m_editor);
    m_source->addWidget(m_paged);

    m_chips = new TokenChipView(TokenChipView::Mode::Pieces, this);
    m_chips->setObjectName(QStringLiteral("tokenChips"));
    fontfollow::followAppFont(m_chips, 1.25);
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
    auto* heading = new QLabel(tr("<b>Tokens</b>"), this);
    // The legend gives way (cut with "…") rather than widen the column; the followed token's chip takes
    // its place, in the same cell, whose height is the chip's with or without it: hovering a chip follows
    // its token, and nothing may move under the pointer.
    auto* legend = new ElidedLabel(tr("· space ↵ newline → tab ⟨hex⟩ one byte (hover a chip)"), this);
    legend->setObjectName(QStringLiteral("tokensLegend"));
    legend->setStyleSheet(QStringLiteral("color: gray"));
    m_chipInfo->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    QSizePolicy chipPolicy = m_followChip->sizePolicy();
    chipPolicy.setRetainSizeWhenHidden(true);
    m_followChip->setSizePolicy(chipPolicy);
    auto* headRow = new QGridLayout;
    headRow->setContentsMargins(0, 0, 0, 0);
    headRow->addWidget(heading, 0, 0);
    headRow->addWidget(legend, 0, 1);
    headRow->addWidget(m_followChip, 0, 1, Qt::AlignLeft | Qt::AlignVCenter);
    headRow->addWidget(m_chipInfo, 0, 2);
    headRow->setColumnStretch(1, 3);
    headRow->setColumnStretch(2, 1);
    auto showLegend = [this, legend] { legend->setVisible(panekit::followedTokenCaption(m_doc).isEmpty()); };
    connect(m_doc, &Document::followedTokenChanged, legend, showLegend);
    connect(m_doc, &Document::derived, legend, showLegend);
    showLegend();
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

} // namespace tw::ui
