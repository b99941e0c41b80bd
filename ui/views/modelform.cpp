#include "modelform.h"

#include "model/gpucatalog.h"
#include "settings/theme.h"
#include "text/samples.h"
#include "views/qtstrings.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>

#include <climits>

namespace tw::ui {

namespace {
const char* const kInvalidStyle = "border: 2px solid #c53030; background: #fff5f5; color: #1a1a1a;";

// Display scales of the user-defined GPU's fields: the scenario holds B and FLOP/s; the form shows
// GiB (as the pane shows every catalog capacity, which vendors quote in binary GB) and TFLOP/s.
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kTera = 1e12;
const char* const kDisplayScale = "displayScale";

} // namespace

// A titled group of rows under the form's other groups.
QFormLayout* ModelForm::addGroup(QVBoxLayout* layout, const QString& title)
{
    auto* box = new QGroupBox(title, this);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setContentsMargins(6, 6, 6, 6);
    form->setVerticalSpacing(4);
    layout->addWidget(box);
    return form;
}

// A whole-number editor of `field` that reports each committed value.
QSpinBox* ModelForm::spinFor(Field field, int min, int max, const QString& tip)
{
    auto* s = new QSpinBox(this);
    s->setRange(min, max);
    s->setGroupSeparatorShown(true);
    s->setKeyboardTracking(false);
    s->setAccelerated(true);
    s->setToolTip(tip);
    connect(s, &QSpinBox::valueChanged, this,
            [this, field](int v) { emit edited(field, FieldValue(std::uint64_t(std::max(v, 0)))); });
    return s;
}

// A choice of `field` among (text, id) items that reports the id chosen.
QComboBox* ModelForm::comboFor(Field field, const QList<QPair<QString, QString>>& items)
{
    auto* c = new QComboBox(this);
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(8);
    for (const auto& [text, id] : items)
        c->addItem(text, id);
    connect(c, &QComboBox::activated, this,
            [this, field, c](int index) { emit edited(field, FieldValue(c->itemData(index).toString().toStdString())); });
    return c;
}

// A check box of `field` that reports each toggle.
QCheckBox* ModelForm::checkFor(Field field, const QString& text)
{
    auto* b = new QCheckBox(text, this);
    connect(b, &QCheckBox::toggled, this, [this, field](bool on) { emit edited(field, FieldValue(on)); });
    return b;
}

// Stage 1's text and documents, and the model's shape.
void ModelForm::addTextAndModel(QVBoxLayout* layout)
{
    QFormLayout* text = addGroup(layout, tr("Text (stage 1)"));
    QList<QPair<QString, QString>> samples;
    for (const text::Sample& s : text::samples())
        samples.append({tr("Inferno I, %1").arg(qs(s.title).section(QLatin1Char('('), -1).chopped(1)), qs(s.id)});
    addRow(text, Field::TextSample, comboFor(Field::TextSample, samples));
    m_editors.value(Field::TextSample)->setToolTip(tr("The text of stage 1 whose tokens fill the batch"));
    addRow(text, Field::Documents, spinFor(Field::Documents, 0, INT_MAX, tr("Documents packed, separated by <|endoftext|>")));


    QFormLayout* model = addGroup(layout, tr("Model"));
    addRow(model, Field::Family, comboFor(Field::Family, {{tr("GPT-2"), QStringLiteral("gpt2")}, {tr("Llama"), QStringLiteral("llama")}}));
    addRow(model, Field::Layers, spinFor(Field::Layers, 0, INT_MAX, tr("Transformer blocks L")));
    addRow(model, Field::HiddenSize, spinFor(Field::HiddenSize, 0, INT_MAX, tr("Width of every token's vector d; a multiple of the heads")));
    addRow(model, Field::Heads, spinFor(Field::Heads, 0, INT_MAX, tr("Attention heads a; each has d/a dimensions")));
    addRow(model, Field::KvHeads, spinFor(Field::KvHeads, 0, INT_MAX, tr("Key/value heads (grouped-query attention); divides a")));
    addRow(model, Field::FfnSize, spinFor(Field::FfnSize, 0, INT_MAX, tr("MLP width d_ff (4·d for GPT-2; per expert in MoE)")));
    addRow(model, Field::VocabFromTokenizer, checkFor(Field::VocabFromTokenizer, tr("V from the stage 1 tokenizer")));
    addRow(model, Field::VocabSize, spinFor(Field::VocabSize, 0, INT_MAX, tr("Vocabulary V when it is not the tokenizer's")));
    addRow(model, Field::VocabPadMultiple, spinFor(Field::VocabPadMultiple, 0, INT_MAX, tr("0: no padding; 64 pads 50,257 to 50,304")));
    addRow(model, Field::TiedEmbeddings, checkFor(Field::TiedEmbeddings, tr("tied head (reuses wte)")));
    addRow(model, Field::MaxPositions, spinFor(Field::MaxPositions, 0, INT_MAX, tr("Rows of the learned position table (GPT-2)")));

}

// The mixture of experts, and the precisions and recomputation.
void ModelForm::addMoeAndPrecision(QVBoxLayout* layout)
{
    const QList<QPair<QString, QString>> precisions = {{QStringLiteral("fp32 (4 B)"), QStringLiteral("fp32")},
                                                       {QStringLiteral("bf16 (2 B)"), QStringLiteral("bf16")},
                                                       {QStringLiteral("fp16 (2 B)"), QStringLiteral("fp16")},
                                                       {QStringLiteral("fp8 (1 B)"), QStringLiteral("fp8")}};

    QFormLayout* moe = addGroup(layout, tr("Mixture of experts"));
    addRow(moe, Field::MoeExperts, spinFor(Field::MoeExperts, 0, INT_MAX, tr("0: a dense model")));
    addRow(moe, Field::MoeTopK, spinFor(Field::MoeTopK, 0, INT_MAX, tr("Experts each token is routed to")));
    auto* cf = new QDoubleSpinBox(this);
    cf->setRange(0, 1000);
    cf->setDecimals(2);
    cf->setSingleStep(0.05);
    cf->setKeyboardTracking(false);
    connect(cf, &QDoubleSpinBox::valueChanged, this, [this](double v) { emit edited(Field::MoeCapacityFactor, FieldValue(v)); });
    addRow(moe, Field::MoeCapacityFactor, cf);
    addRow(moe, Field::MoeLayerInterval, spinFor(Field::MoeLayerInterval, 0, INT_MAX, tr("1: every layer; 2: every second layer")));


    QFormLayout* precision = addGroup(layout, tr("Precision and memory"));
    addRow(precision, Field::WeightsPrecision, comboFor(Field::WeightsPrecision, precisions));
    addRow(precision, Field::ActivationsPrecision, comboFor(Field::ActivationsPrecision, precisions));
    addRow(precision, Field::GradientsPrecision, comboFor(Field::GradientsPrecision, precisions));
    addRow(precision, Field::OptimizerPrecision, comboFor(Field::OptimizerPrecision, precisions));
    addRow(precision, Field::Recompute, comboFor(Field::Recompute, {{tr("none"), QStringLiteral("none")},
                                                                 {tr("selective (attention)"), QStringLiteral("selective")},
                                                                 {tr("full (per block)"), QStringLiteral("full")}}));
    // FP8 the way Transformer Engine trains: the linear layers' GEMMs in FP8 beside bf16 activations.
    QComboBox* fp8 = comboFor(Field::Fp8Recipe, {{tr("none"), QStringLiteral("none")},
                                                {tr("delayed scaling"), QStringLiteral("delayed")},
                                                {tr("current scaling"), QStringLiteral("current")}});
    fp8->setToolTip(tr("Linear layers' GEMMs in FP8, after casting their inputs (the cast kernels are timed); "
                       "attention, the head and what is stored or sent stay 16-bit. Delayed scaling is Transformer "
                       "Engine's default. Needs bf16 or fp16 activations and a GPU with FP8 tensor cores (H100, H200, "
                       "L40S, RTX 4090, MI300X)."));
    addRow(precision, Field::Fp8Recipe, fp8);

}

// The batch, the GPU and the cluster's size.
void ModelForm::addBatchAndGpu(QVBoxLayout* layout)
{
    QFormLayout* batch = addGroup(layout, tr("Batch and GPU"));
    addRow(batch, Field::SequenceLength, spinFor(Field::SequenceLength, 0, INT_MAX, tr("Tokens per sequence T")));
    addRow(batch, Field::MicroBatch, spinFor(Field::MicroBatch, 0, INT_MAX, tr("Sequences per micro-batch B")));
    auto* global = new QDoubleSpinBox(this);
    global->setRange(0, 1e15);
    global->setDecimals(0);
    global->setGroupSeparatorShown(true);
    global->setSingleStep(65536);
    global->setKeyboardTracking(false);
    global->setToolTip(tr("Tokens per optimizer step G"));
    connect(global, &QDoubleSpinBox::valueChanged, this,
            [this](double v) { emit edited(Field::GlobalBatchTokens, FieldValue(std::uint64_t(std::max(v, 0.0)))); });
    addRow(batch, Field::GlobalBatchTokens, global);
    QList<QPair<QString, QString>> gpus;
    for (const model::GpuSpec& g : model::gpuCatalog())
        gpus.append({qs(g.name), qs(g.id)});
    gpus.append({tr("Custom…"), QStringLiteral("custom")});
    addRow(batch, Field::Gpu, comboFor(Field::Gpu, gpus));
    m_editors.value(Field::Gpu)->setToolTip(tr("The accelerator whose memory and peak FLOP/s the model is measured "
                                                "against; Custom… defines your own"));
    m_editors.value(Field::Gpu)->setProperty("normalToolTip", m_editors.value(Field::Gpu)->toolTip());
    addRow(batch, Field::Nodes, spinFor(Field::Nodes, 0, INT_MAX, tr("Machines in the job (arranged in stage 3)")));
    addRow(batch, Field::GpusPerNode, spinFor(Field::GpusPerNode, 0, INT_MAX, tr("GPUs in each machine")));

}

// The user-defined catalog entry, stored in B and FLOP/s, shown in GiB and TFLOP/s (the labels name the units).
void ModelForm::addCustomGpu(QVBoxLayout* layout)
{
    QFormLayout* custom = addGroup(layout, tr("Custom GPU"));
    m_customGpu = custom->parentWidget();
    m_customGpu->setObjectName(QStringLiteral("customGpu"));
    auto* name = new QLineEdit(this);
    name->setPlaceholderText(tr("e.g. My accelerator"));
    name->setToolTip(tr("The name the captions and charts give this GPU"));
    connect(name, &QLineEdit::editingFinished, this, [this, name] {
        emit edited(Field::CustomGpuName, FieldValue(name->text().toStdString()));
    });
    addRow(custom, Field::CustomGpuName, name);
    auto scaled = [&](Field field, double scale, double max, int decimals, const QString& tip) {
        auto* s = new QDoubleSpinBox(this);
        s->setRange(0, max);
        s->setDecimals(decimals);
        s->setGroupSeparatorShown(true);
        s->setKeyboardTracking(false);
        s->setToolTip(tip);
        s->setProperty(kDisplayScale, scale);
        connect(s, &QDoubleSpinBox::valueChanged, this,
                [this, field, scale](double v) { emit edited(field, FieldValue(v * scale)); });
        addRow(custom, field, s);
    };
    // Ranges reach past core's limits (1 PB, 1 EFLOP/s) so that a typo is refused with core's reason.
    scaled(Field::CustomGpuMemory, kGiB, 1e7, 2, tr("Memory of one GPU in GiB (2^30 B)"));
    const QString peakTip = tr("Peak dense FLOP/s at %1 in TFLOP/s (10^12 FLOP/s), without sparsity; %2");
    scaled(Field::CustomGpuPeakFp32, kTera, 1e7, 1, peakTip.arg(QStringLiteral("fp32"), tr("0 if unknown")));
    scaled(Field::CustomGpuPeakBf16, kTera, 1e7, 1, peakTip.arg(QStringLiteral("bf16"), tr("must be positive")));
    scaled(Field::CustomGpuPeakFp16, kTera, 1e7, 1, peakTip.arg(QStringLiteral("fp16"), tr("0 if unknown")));
    scaled(Field::CustomGpuPeakFp8, kTera, 1e7, 1, peakTip.arg(QStringLiteral("fp8"), tr("0 when the GPU has no fp8")));
}

// The form: general problems on top, then the groups of editors, each with its problem label.
ModelForm::ModelForm(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("modelForm"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_general = new QLabel(this);
    m_general->setObjectName(QStringLiteral("generalProblems"));
    m_general->setWordWrap(true);
    theme::styleErrorLabel(m_general);
    m_general->hide();
    layout->addWidget(m_general);
    addTextAndModel(layout);
    addMoeAndPrecision(layout);
    addBatchAndGpu(layout);
    addCustomGpu(layout);
    m_customGpu->hide();
    layout->addStretch(1);
}

void ModelForm::addRow(QFormLayout* form, Field field, QWidget* editor)
{
    editor->setObjectName(fieldJsonPath(field));
    editor->setMinimumWidth(90);
    editor->setProperty("normalToolTip", editor->toolTip());
    auto* problem = new QLabel(this);
    problem->setObjectName(fieldJsonPath(field) + QStringLiteral(".problem"));
    problem->setWordWrap(true);
    theme::styleErrorLabel(problem);
    problem->hide();
    auto* cell = new QWidget(this);
    auto* v = new QVBoxLayout(cell);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(editor);
    v->addWidget(problem);
    if (qobject_cast<QCheckBox*>(editor))
        form->addRow(cell);
    else
        form->addRow(fieldLabel(field), cell);
    m_editors.insert(field, editor);
    m_problemLabels.insert(field, problem);
}

void ModelForm::setScenario(const scenario::Scenario& s)
{
    for (Field field : allFields()) {
        QWidget* w = m_editors.value(field);
        if (!w)
            continue;
        const QSignalBlocker block(w);
        const FieldValue v = fieldValue(s, field);
        if (auto* spin = qobject_cast<QSpinBox*>(w))
            spin->setValue(int(std::min<std::uint64_t>(std::get<std::uint64_t>(v), INT_MAX)));
        else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w)) {
            const double x = std::holds_alternative<double>(v) ? std::get<double>(v) : double(std::get<std::uint64_t>(v));
            const QVariant scale = dspin->property(kDisplayScale);
            dspin->setValue(scale.isValid() ? x / scale.toDouble() : x);
        } else if (auto* line = qobject_cast<QLineEdit*>(w))
            line->setText(QString::fromStdString(std::get<std::string>(v)));
        else if (auto* box = qobject_cast<QCheckBox*>(w))
            box->setChecked(std::get<bool>(v));
        else if (auto* combo = qobject_cast<QComboBox*>(w)) {
            const QString id = QString::fromStdString(std::get<std::string>(v));
            int index = combo->findData(id);
            if (index < 0) { // an unknown GPU id or a text that is not a sample
                combo->addItem(id, id);
                index = combo->count() - 1;
            }
            combo->setCurrentIndex(index);
        }
    }
    if (auto* text = qobject_cast<QComboBox*>(m_editors.value(Field::TextSample))) {
        // Typed text or a file: the chooser names it instead of a sample it is not.
        const bool sample = s.text.kind == scenario::TextSource::Kind::Sample;
        text->setEnabled(sample);
        if (!sample) {
            const QSignalBlocker block(text);
            text->setPlaceholderText(s.text.kind == scenario::TextSource::Kind::File
                                         ? QFileInfo(QString::fromStdString(s.text.path)).fileName()
                                         : tr("typed in stage 1"));
            text->setCurrentIndex(-1);
        }
    }
    m_scenarioVocab = s.model.vocabSize;
    showVocab();
    updateEnabled();
}

void ModelForm::setTokenizerVocab(std::uint64_t vocab)
{
    m_tokenizerVocab = vocab;
    showVocab();
}

void ModelForm::showVocab()
{
    // While V follows the tokenizer, the greyed field shows the V the derivation uses, not the
    // scenario's own (kept for when the box is unticked); nothing is edited.
    auto* spin = static_cast<QSpinBox*>(m_editors.value(Field::VocabSize));
    const bool follows = static_cast<QCheckBox*>(m_editors.value(Field::VocabFromTokenizer))->isChecked();
    const std::uint64_t v = follows && m_tokenizerVocab > 0 ? m_tokenizerVocab : m_scenarioVocab;
    const QSignalBlocker block(spin);
    spin->setValue(int(std::min<std::uint64_t>(v, INT_MAX)));
}

void ModelForm::updateEnabled()
{
    auto checked = [this](Field f) { return static_cast<QCheckBox*>(m_editors.value(f))->isChecked(); };
    m_editors.value(Field::VocabSize)->setEnabled(!checked(Field::VocabFromTokenizer));
    m_customGpu->setVisible(static_cast<QComboBox*>(m_editors.value(Field::Gpu))->currentData().toString()
                            == QLatin1String("custom"));
    const bool moe = static_cast<QSpinBox*>(m_editors.value(Field::MoeExperts))->value() > 0;
    for (Field f : {Field::MoeTopK, Field::MoeCapacityFactor, Field::MoeLayerInterval})
        m_editors.value(f)->setEnabled(moe);
    const bool gpt = static_cast<QComboBox*>(m_editors.value(Field::Family))->currentData().toString() == QLatin1String("gpt2");
    m_editors.value(Field::MaxPositions)->setEnabled(gpt);
}

void ModelForm::setProblems(const std::vector<Error>& problems)
{
    QHash<QString, QStringList> byPath;
    QStringList general;
    for (const Error& e : problems) {
        const QString path = QString::fromStdString(e.where.jsonPath);
        bool known = false;
        for (Field f : allFields())
            known = known || (fieldJsonPath(f) == path && m_editors.contains(f));
        // Core joins several problems into one error: one line each, "path: message".
        if (known)
            byPath[path] << QString::fromStdString(e.message).split(QLatin1Char('\n')).first();
        else
            general << QString::fromStdString(e.toString());
    }
    for (Field f : allFields()) {
        QWidget* w = m_editors.value(f);
        if (!w)
            continue;
        const QStringList messages = byPath.value(fieldJsonPath(f));
        const bool invalid = !messages.isEmpty();
        w->setProperty("invalid", invalid);
        w->setStyleSheet(invalid ? QString::fromLatin1(kInvalidStyle) : QString());
        w->setToolTip(invalid ? messages.join(QLatin1Char('\n')) : w->property("normalToolTip").toString());
        QLabel* label = m_problemLabels.value(f);
        label->setText(messages.join(QLatin1Char('\n')));
        label->setVisible(invalid);
    }
    m_general->setText(general.join(QLatin1Char('\n')));
    m_general->setVisible(!general.isEmpty());
}

bool ModelForm::isInvalid(Field field) const
{
    const QWidget* w = m_editors.value(field);
    return w && w->property("invalid").toBool();
}

} // namespace tw::ui
