#include "textpane.h"

#include "charts/tokencharts.h"
#include "text/bpetrainer.h"
#include "text/gpt2.h"
#include "views/figuretablemodel.h"
#include "views/messagebar.h"
#include "views/pagedtextview.h"
#include "views/tokenchipview.h"
#include "workers/fileloader.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
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
constexpr int kVocabSliderSteps = 1000;
constexpr int kDefaultVocab = 1024;

struct Sample {
    const char* title;
    const char* resource;
};
constexpr Sample kSamples[] = {
    {QT_TRANSLATE_NOOP("tw::ui::TextPane", "Dante, Inferno I (Italian)"), ":/text/inferno-canto1-it.txt"},
    {QT_TRANSLATE_NOOP("tw::ui::TextPane", "Longfellow, Inferno I (English)"), ":/text/inferno-canto1-en.txt"},
};

QString readResource(const char* path)
{
    QFile file(QString::fromLatin1(path));
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
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

QSpinBox* shapeSpin(int min, int max, int value, const QString& tip, QWidget* parent)
{
    auto* spin = new QSpinBox(parent);
    spin->setRange(min, max);
    spin->setValue(value);
    spin->setGroupSeparatorShown(true);
    spin->setToolTip(tip);
    spin->setKeyboardTracking(false);
    return spin;
}
} // namespace

TextPane::TextPane(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("textPane"));
    m_runner = new TokenizationRunner(this);
    m_loader = new FileLoader(this);
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

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 8);
    layout->addWidget(controls);
    layout->addWidget(m_gpt2Banner);
    layout->addWidget(m_message);
    layout->addWidget(m_progressRow);
    layout->addWidget(split, 1);

    wire();

    if (text::gpt2Embedded()) {
        m_gpt2Banner->hide();
        m_gpt2Radio->setChecked(true);
    } else {
        m_gpt2Banner->setText(tr("GPT-2's tokenizer is not in this build: the tokens below come from a BPE trained "
                                 "on the text itself.\n%1")
                                  .arg(QString::fromStdString(text::gpt2HowToGet())));
        m_gpt2Radio->setEnabled(false);
        m_trainedRadio->setChecked(true);
    }
    updateVocabLabel();
    selectSample(0);
}

TextPane::~TextPane() = default;

QWidget* TextPane::buildControls()
{
    auto* box = new QWidget(this);
    m_sample = new QComboBox(box);
    m_sample->setObjectName(QStringLiteral("sampleChooser"));
    for (const auto& sample : kSamples)
        m_sample->addItem(tr(sample.title));
    auto* open = new QPushButton(tr("Open text…"), box);
    open->setObjectName(QStringLiteral("openText"));
    connect(open, &QPushButton::clicked, this, &TextPane::chooseAndOpenFile);

    m_gpt2Radio = new QRadioButton(tr("GPT-2"), box);
    m_gpt2Radio->setObjectName(QStringLiteral("tokenizerGpt2"));
    m_gpt2Radio->setToolTip(tr("GPT-2's byte-level BPE: 50,257 tokens, the ids tiktoken gives"));
    m_trainedRadio = new QRadioButton(tr("BPE trained on this text"), box);
    m_trainedRadio->setObjectName(QStringLiteral("tokenizerTrained"));
    m_trainedRadio->setToolTip(tr("Learn merges from the text itself, up to a vocabulary of V tokens"));
    m_tokenizerGroup = new QButtonGroup(this);
    m_tokenizerGroup->addButton(m_gpt2Radio, static_cast<int>(TokenizerKind::Gpt2));
    m_tokenizerGroup->addButton(m_trainedRadio, static_cast<int>(TokenizerKind::Trained));

    m_vocabSlider = new QSlider(Qt::Horizontal, box);
    m_vocabSlider->setObjectName(QStringLiteral("vocabSlider"));
    m_vocabSlider->setRange(0, kVocabSliderSteps);
    m_vocabSlider->setMinimumWidth(100);
    m_vocabSpin = new QSpinBox(box);
    m_vocabSpin->setObjectName(QStringLiteral("vocabSpin"));
    m_vocabSpin->setRange(static_cast<int>(text::kMinTrainVocab), static_cast<int>(text::kMaxTrainVocab));
    m_vocabSpin->setGroupSeparatorShown(true);
    m_vocabSpin->setKeyboardTracking(false);
    m_vocabSpin->setValue(kDefaultVocab);
    m_vocabSpin->setToolTip(tr("Target vocabulary V: 256 byte tokens + V−257 merges + <|endoftext|>"));
    m_vocabSlider->setValue(sliderFromVocab(kDefaultVocab));
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

    m_seqLen = shapeSpin(1, 1 << 20, 1024, tr("T: tokens per training sequence"), this);
    m_seqLen->setObjectName(QStringLiteral("shapeT"));
    m_microBatch = shapeSpin(1, 1 << 16, 32, tr("B: sequences per micro-batch"), this);
    m_microBatch->setObjectName(QStringLiteral("shapeB"));
    m_globalBatch = shapeSpin(1, 1 << 30, 524288, tr("G: tokens per optimizer step (global batch)"), this);
    m_globalBatch->setObjectName(QStringLiteral("shapeG"));
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
    connect(m_editor, &QPlainTextEdit::textChanged, this, [this] {
        m_editorText = std::make_shared<const std::string>(m_editor->toPlainText().toStdString());
        if (!m_document)
            scheduleTokenize(150);
    });
    connect(m_sample, &QComboBox::activated, this, &TextPane::selectSample);
    connect(m_tokenizerGroup, &QButtonGroup::idToggled, this, [this](int, bool checked) {
        if (!checked)
            return;
        m_replayAtEnd = true;
        updateVocabLabel();
        scheduleTokenize(0);
    });
    connect(m_vocabSlider, &QSlider::valueChanged, this, &TextPane::setVocabFromSlider);
    connect(m_vocabSpin, &QSpinBox::valueChanged, this, [this](int v) {
        const QSignalBlocker block(m_vocabSlider);
        m_vocabSlider->setValue(sliderFromVocab(v));
        if (kind() == TokenizerKind::Trained) {
            m_replayAtEnd = true;
            scheduleTokenize(250);
        }
    });
    connect(m_replay, &QSlider::valueChanged, this, [this](int value) {
        m_replayAtEnd = value == m_replay->maximum();
        updateReplay();
        scheduleTokenize(0);
    });
    connect(m_play, &QPushButton::toggled, this, [this](bool on) {
        m_play->setText(on ? tr("❚❚ Pause") : tr("▶ Play"));
        if (on && m_replay->value() == m_replay->maximum())
            m_replay->setValue(0);
        on ? m_playTimer->start() : m_playTimer->stop();
    });
    connect(m_playTimer, &QTimer::timeout, this, &TextPane::tickReplay);
    for (QSpinBox* spin : {m_seqLen, m_microBatch, m_globalBatch})
        connect(spin, &QSpinBox::valueChanged, this, [this] { scheduleTokenize(100); });

    connect(m_runner, &TokenizationRunner::started, this, [this] {
        m_revealProgress->start();
        m_progress->setValue(0);
    });
    connect(m_revealProgress, &QTimer::timeout, this, [this] {
        if (m_runner->isBusy())
            setBusy(tr("Tokenizing…"), true);
    });
    connect(m_runner, &TokenizationRunner::progressed, this,
            [this](double f) { m_progress->setValue(static_cast<int>(f * 1000)); });
    connect(m_runner, &TokenizationRunner::finished, this, &TextPane::applyResult);
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
                               tr("Could not open %1\nThe text shown is unchanged.").arg(QString::fromStdString(error.toString())));
        emit workFinished();
    });
    connect(m_loader, &FileLoader::cancelled, this, [this](const QString& path) {
        setBusy({}, false);
        m_message->showMessage(MessageBar::Severity::Info,
                               tr("Opening %1 cancelled. The text shown is unchanged.").arg(path));
        emit workFinished();
    });

    connect(m_paged, &PagedTextView::pageChanged, this, &TextPane::showChips);
    connect(m_paged, &PagedTextView::backToEditorRequested, this, &TextPane::showEditor);
    connect(m_chips, &TokenChipView::hovered, m_ids, &TokenChipView::setHighlighted);
    connect(m_ids, &TokenChipView::hovered, m_chips, &TokenChipView::setHighlighted);

    auto showDetail = [this](const QModelIndex& index) {
        m_selectedFigure = index.data(FigureTableModel::FigureIdRole).toString();
        m_detail->setText(m_figures->explain(index));
    };
    connect(m_table, &QTableView::clicked, this, showDetail);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, showDetail);
}

std::shared_ptr<const std::string> TextPane::currentText() const
{
    return m_document ? m_document : m_editorText;
}

TokenizerKind TextPane::kind() const
{
    return m_trainedRadio->isChecked() ? TokenizerKind::Trained : TokenizerKind::Gpt2;
}

std::size_t TextPane::mergeLimit() const
{
    if (m_replayAtEnd || m_replay->maximum() == 0)
        return SIZE_MAX;
    return static_cast<std::size_t>(m_replay->value());
}

text::TrainingShape TextPane::shape() const
{
    text::TrainingShape s;
    s.sequenceLength = static_cast<std::uint64_t>(m_seqLen->value());
    s.microBatch = static_cast<std::uint64_t>(m_microBatch->value());
    s.globalBatchTokens = static_cast<std::uint64_t>(m_globalBatch->value());
    return s;
}

void TextPane::scheduleTokenize(int delayMs)
{
    TokenizeRequest request;
    request.text = currentText();
    if (!request.text)
        request.text = std::make_shared<const std::string>();
    request.kind = kind();
    request.vocabSize = static_cast<std::size_t>(m_vocabSpin->value());
    request.mergeLimit = mergeLimit();
    request.shape = shape();
    // Reuse what the last result already holds when its inputs are the same.
    const bool sameText = m_last.text == request.text && !m_last.error;
    if (sameText && request.kind == TokenizerKind::Trained && m_last.trained
        && m_last.trained->requestedVocab == request.vocabSize)
        request.trained = m_last.trained;
    const bool sameModel = request.kind == m_last.kind
                           && (request.kind == TokenizerKind::Gpt2 || (request.trained && request.trained == m_last.trained));
    if (sameText && sameModel && request.mergeLimit == m_last.mergeLimit)
        request.spans = m_last.spans;
    m_runner->schedule(std::move(request), delayMs);
}

void TextPane::applyResult(const TokenizeResult& result)
{
    m_revealProgress->stop();
    setBusy({}, false);
    if (result.error) {
        if (!result.cancelled)
            m_message->showMessage(MessageBar::Severity::Error,
                                   tr("Tokenizing failed: %1").arg(QString::fromStdString(result.error->toString())));
        emit workFinished();
        return;
    }
    m_last = result;
    showChips();
    m_figures->setFigures(result.stats ? result.stats->figures : FigureSet{});
    m_charts->setStats(result.stats.get());
    // Keep the figure the user was reading in the detail label.
    for (int row = 0; row < m_figures->rowCount(); ++row) {
        const QModelIndex index = m_figures->index(row, 0);
        if (index.data(FigureTableModel::FigureIdRole).toString() == m_selectedFigure)
            m_detail->setText(m_figures->explain(index));
    }
    updateVocabLabel();
    // The replay slider spans the merges of the model just used.
    const int merges = result.model ? static_cast<int>(result.model->merges().size()) : 0;
    {
        const QSignalBlocker block(m_replay);
        m_replay->setMaximum(merges);
        m_replay->setPageStep(std::max(1, merges / 20));
        if (m_replayAtEnd)
            m_replay->setValue(merges);
    }
    updateReplay();
    emit tokenized();
    emit workFinished();
}

void TextPane::showChips()
{
    if (!m_last.spans || !m_last.text) {
        m_chips->clear();
        m_ids->clear();
        m_chipInfo->clear();
        return;
    }
    const auto& spans = *m_last.spans;
    std::size_t first = 0, last = spans.size();
    if (m_document && m_last.text == m_document) {
        // The paged view shows one page: draw the tokens that overlap it.
        const auto [begin, end] = m_paged->pageRange();
        first = static_cast<std::size_t>(std::lower_bound(spans.begin(), spans.end(), begin,
                                                          [](const text::TokenSpan& s, std::size_t b) { return s.end <= b; })
                                         - spans.begin());
        last = static_cast<std::size_t>(std::lower_bound(spans.begin() + static_cast<std::ptrdiff_t>(first), spans.end(), end,
                                                         [](const text::TokenSpan& s, std::size_t e) { return s.begin < e; })
                                        - spans.begin());
    }
    const std::size_t count = std::min(last - first, kMaxChips);
    m_chips->setTokens(m_last.text, m_last.spans, first, count);
    m_ids->setTokens(m_last.text, m_last.spans, first, count);
    if (spans.empty())
        m_chipInfo->setText(tr("no tokens"));
    else if (first == 0 && count == spans.size())
        m_chipInfo->setText(tr("%1 tokens").arg(loc(spans.size())));
    else
        m_chipInfo->setText(tr("tokens %1–%2 of %3%4")
                                .arg(loc(first + 1), loc(first + count), loc(spans.size()),
                                     count == kMaxChips ? tr(" (first %1 drawn)").arg(loc(kMaxChips)) : QString()));
    m_chipInfo->setToolTip(m_chipInfo->text());
}

void TextPane::updateReplay()
{
    const int max = m_replay->maximum();
    const int k = m_replay->value();
    if (!m_last.model || max == 0) {
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
    const auto& merge = m_last.model->merges()[static_cast<std::size_t>(k - 1)];
    const auto& model = *m_last.model;
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
    const bool trained = kind() == TokenizerKind::Trained;
    m_vocabSlider->setEnabled(trained);
    m_vocabSpin->setEnabled(trained);
    if (!trained) {
        m_vocabActual->setText(tr("(GPT-2: V = 50,257)"));
        return;
    }
    if (!m_last.trained || m_last.kind != TokenizerKind::Trained) {
        m_vocabActual->setText(tr("training…"));
        return;
    }
    const auto& t = *m_last.trained;
    const auto actual = static_cast<std::uint64_t>(t.model.vocabSize());
    m_vocabActual->setText(t.exhausted ? tr("→ V = %1 (ran out of pairs)").arg(loc(actual)) : tr("→ V = %1").arg(loc(actual)));
    m_vocabActual->setToolTip(t.exhausted ? tr("The text has no pair left that occurs twice: the trainer stopped at %1 "
                                               "merges instead of %2.")
                                                .arg(loc(t.merges.size()), loc(t.requestedVocab - text::kMinTrainVocab))
                                          : QString());
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

void TextPane::setTokenizer(TokenizerKind k)
{
    (k == TokenizerKind::Gpt2 ? m_gpt2Radio : m_trainedRadio)->setChecked(true);
}

void TextPane::selectSample(int index)
{
    if (index < 0 || index >= static_cast<int>(std::size(kSamples)))
        return;
    const QSignalBlocker block(m_sample);
    m_sample->setCurrentIndex(index);
    m_message->clearMessage();
    m_document.reset();
    m_source->setCurrentWidget(m_editor);
    // One undoable edit: Ctrl+Z brings back what was typed before.
    QTextCursor cursor(m_editor->document());
    cursor.select(QTextCursor::Document);
    cursor.insertText(readResource(kSamples[index].resource));
    m_editor->moveCursor(QTextCursor::Start);
}

void TextPane::showEditor()
{
    m_message->clearMessage();
    m_document.reset();
    m_paged->setText(nullptr, {});
    m_source->setCurrentWidget(m_editor);
    scheduleTokenize(0);
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
    {
        const QSignalBlocker quiet(m_runner); // superseded, not cancelled by the user: no message
        m_runner->cancel();
    }
    m_revealProgress->stop();
    setBusy(tr("Reading %1…").arg(QFileInfo(path).fileName()), true);
    m_loader->load(path);
}

void TextPane::onFileLoaded(const LoadedFile& file)
{
    setBusy({}, false);
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
        // bytes; the editor keeps what was typed.
        m_document = file.bytes;
        m_documentName = name;
        m_paged->setText(m_document, tr("%1 · %2 bytes · read-only").arg(name, loc(size)));
        m_source->setCurrentWidget(m_paged);
        if (size > kEditorLimitBytes)
            notes.prepend(tr("%1 is %2 bytes: shown read-only one page at a time. Your typed text is kept: "
                             "“Back to the editor” returns to it.").arg(name, loc(size)));
        else
            notes << tr("Shown read-only so that nothing changes the bytes; “Back to the editor” returns to your text.");
        m_message->showMessage(file.invalidUtf8 || file.nulBytes ? MessageBar::Severity::Warning : MessageBar::Severity::Info,
                               notes.join(QLatin1Char('\n')));
        setBusy(tr("Tokenizing %1…").arg(name), true);
        scheduleTokenize(0);
    } else {
        m_document.reset();
        m_source->setCurrentWidget(m_editor);
        QTextCursor cursor(m_editor->document());
        cursor.select(QTextCursor::Document);
        cursor.insertText(QString::fromUtf8(file.bytes->data(), static_cast<qsizetype>(file.bytes->size())));
        m_editor->moveCursor(QTextCursor::Start);
        m_message->showMessage(MessageBar::Severity::Info,
                               tr("Opened %1 (%2 bytes). Undo (Ctrl+Z) in the editor brings back the previous text.")
                                   .arg(name, loc(size)));
    }
    emit fileOpened(file.path);
}

void TextPane::cancelWork()
{
    m_playTimer->stop();
    if (m_loader->isBusy())
        m_loader->cancel();
    if (m_runner->isBusy())
        m_runner->cancel();
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
    return m_loader->isBusy() || m_runner->isBusy();
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
