#include "tensorpane.h"

#include "charts/kernelchart.h"
#include "charts/modelcharts.h"
#include "document/document.h"
#include "panes/panekit.h"
#include "settings/appsettings.h"
#include "settings/fontfollow.h"
#include "settings/theme.h"
#include "views/figuretablemodel.h"
#include "views/messagebar.h"
#include "views/modelform.h"
#include "views/tokenchipview.h"
#include "views/transformerview.h"

#include "base/units.h"
#include "model/kernels.h"
#include "parallel/memory.h"
#include "parallel/plan.h"
#include "scenario/derive.h"
#include "scenario/tokentrace.h"
#include "views/qtstrings.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTextDocument>
#include <QUndoStack>
#include <QVBoxLayout>

#include <optional>

namespace tw::ui {

namespace {
QString count(double v)
{
    return qs(formatCount(v));
}

const char* kindName(model::TensorKind k)
{
    switch (k) {
    case model::TensorKind::Input: return QT_TRANSLATE_NOOP("tw::ui::TensorPane", "input");
    case model::TensorKind::Weight: return QT_TRANSLATE_NOOP("tw::ui::TensorPane", "weight");
    case model::TensorKind::Activation: return QT_TRANSLATE_NOOP("tw::ui::TensorPane", "activation");
    case model::TensorKind::Gradient: return QT_TRANSLATE_NOOP("tw::ui::TensorPane", "gradient");
    case model::TensorKind::OptimizerState: return QT_TRANSLATE_NOOP("tw::ui::TensorPane", "optimizer state");
    }
    return "";
}

const char* phaseName(model::Phase p)
{
    switch (p) {
    case model::Phase::Forward: return QT_TRANSLATE_NOOP("tw::ui::TensorPane", "forward pass");
    case model::Phase::Backward: return QT_TRANSLATE_NOOP("tw::ui::TensorPane", "backward pass");
    case model::Phase::Optimizer: return QT_TRANSLATE_NOOP("tw::ui::TensorPane", "optimizer step");
    }
    return "";
}

// A GPU's memory in the viewer's units and, when those are decimal, in GiB too (vendors' "80 GB" is 80 GiB).
QString capacityText(double bytes, const DisplayUnits& units)
{
    QString text = qs(formatBytes(bytes, units));
    if (units.bytes == ByteUnits::Decimal)
        text += QStringLiteral(" = ") + qs(formatBytes(bytes, DisplayUnits{ByteUnits::Binary, units.significantDigits}));
    return text;
}

} // namespace

TensorPane::TensorPane(Document* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
{
    setObjectName(QStringLiteral("tensorPane"));
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("tensorCaption"));
    m_caption->setWordWrap(true);
    fontfollow::followAppFont(m_caption, 1.15);
    m_caption->setProperty("stageCaption", true); // gives way to the narration band (MainWindow)
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("tensorStatus"));
    m_status->setWordWrap(true);
    theme::styleErrorLabel(m_status);
    m_status->hide();
    m_message = new MessageBar(this);

    m_form = new ModelForm(this);
    auto* formScroll = new QScrollArea(this);
    formScroll->setWidget(m_form);
    formScroll->setWidgetResizable(true);
    formScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    formScroll->setMinimumWidth(250);

    m_diagram = new TransformerView(this);

    m_details = new QTextBrowser(this);
    m_details->setObjectName(QStringLiteral("tensorDetails"));
    m_details->setPlaceholderText(tr("Click a tensor or an operation in the diagram to see its shape, type, bytes, "
                                     "layer and phase."));
    m_tabs = new QTabWidget(this);
    m_charts = new ModelCharts(m_tabs);
    m_tabs->addTab(m_charts->parametersWidget(), tr("Parameters"));
    m_tabs->addTab(m_charts->memoryWidget(), tr("Memory per GPU"));
    m_figures = new FigureTableModel(this);
    m_table = panekit::figureTable(this, m_figures, "stage2Figures");
    m_chain = new QTextBrowser(this);
    m_chain->setObjectName(QStringLiteral("figureChain"));
    m_chain->setPlaceholderText(tr("Click a figure (or a bar of a chart) to see where its number comes from."));
    auto* figureSplit = new QSplitter(Qt::Vertical, this);
    figureSplit->addWidget(m_table);
    figureSplit->addWidget(m_chain);
    figureSplit->setSizes({300, 200});
    m_tabs->addTab(figureSplit, tr("Figures"));
    // Tab 3: one layer's kernels (core's kernel model) and the step's MFU / HFU with their chains.
    auto* kernelTab = new QWidget(m_tabs);
    m_kernels = new KernelChart(kernelTab);
    m_kernelSummary = new QLabel(kernelTab);
    m_kernelSummary->setObjectName(QStringLiteral("kernelSummary"));
    m_kernelSummary->setWordWrap(true);
    auto* kernelLayout = new QVBoxLayout(kernelTab);
    kernelLayout->setContentsMargins(4, 4, 4, 4);
    kernelLayout->addWidget(m_kernels->widget(), 1);
    kernelLayout->addWidget(m_kernelSummary);
    m_tabs->addTab(kernelTab, tr("Kernels"));

    auto* right = new QSplitter(Qt::Vertical, this);
    right->addWidget(m_details);
    right->addWidget(m_tabs);
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 3);
    right->setSizes({170, 500});

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setChildrenCollapsible(false);
    split->addWidget(formScroll);
    split->addWidget(m_diagram);
    split->addWidget(right);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    split->setSizes({300, 600, 480});

    m_followChip = panekit::followChip(this, m_document);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 8);
    auto* top = new QHBoxLayout;
    top->addWidget(panekit::formToggle(this, formScroll), 0, Qt::AlignLeft | Qt::AlignTop);
    top->addWidget(m_caption, 1);
    top->addWidget(m_followChip, 0, Qt::AlignRight | Qt::AlignTop);
    layout->addLayout(top);
    layout->addWidget(m_status);
    layout->addWidget(m_message);
    layout->addWidget(split, 1);

    connect(m_form, &ModelForm::edited, this, &TensorPane::onEdited);
    connect(m_document, &Document::scenarioChanged, this, [this] { m_form->setScenario(m_document->scenario()); });
    connect(m_document, &Document::problemsChanged, this, &TensorPane::onProblems);
    connect(m_document, &Document::derived, this, &TensorPane::onDerived);
    connect(m_document, &Document::derivingChanged, this, [this](bool) { onProblems(); });
    connect(m_diagram, &TransformerView::tensorClicked, this, [this](const QString& name) { showTensor(name); });
    connect(m_charts, &ModelCharts::figureClicked, this, [this](const QString& id) {
        m_tabs->setCurrentIndex(2);
        showFigure(id);
    });
    connect(m_table, &QAbstractItemView::clicked, this, [this](const QModelIndex& index) {
        showFigure(m_figures->data(index, FigureTableModel::FigureIdRole).toString());
    });
    // The live thread: the followed token's row in the drawn block; its numbers open their chains.
    connect(m_document, &Document::followedTokenChanged, this, [this] {
        m_followStale = true;
        if (isVisible())
            updateFollow();
    });
    connect(m_diagram, &TransformerView::figureLinkActivated, this, [this](const QString& id) {
        m_tabs->setCurrentIndex(2);
        showFigure(id);
    });
    panekit::wireFigureLinks(
        m_diagram->followCaption(), [this] { return &m_chainFigures; }, [this](const QString& id) {
            m_tabs->setCurrentIndex(2);
            showFigure(id);
        },
        [this] { return units(); });
    // The caption's and the kernel tab's numbers too.
    panekit::wireFigureLinks(
        m_kernelSummary, [this] { return &m_chainFigures; }, [this](const QString& id) {
            m_tabs->setCurrentIndex(2);
            showFigure(id);
        },
        [this] { return units(); });
    panekit::wireFigureLinks(
        m_caption, [this] { return &m_chainFigures; }, [this](const QString& id) {
            m_tabs->setCurrentIndex(2);
            showFigure(id);
        },
        [this] { return units(); });
    connect(AppSettings::instance(), &AppSettings::displayUnitsChanged, this, [this] { applyUnits(); });
    m_figures->setDisplayUnits(units());
    m_diagram->setDisplayUnits(units());
    m_charts->setDisplayUnits(units());

    m_form->setScenario(m_document->scenario());
    onProblems();
    if (m_document->derivation())
        onDerived(m_document->derivation());
    else
        m_caption->setText(tr("Deriving the model's tensors from the text…"));
}

void TensorPane::onEdited(Field field, const FieldValue& value)
{
    const scenario::Hardware& hw = m_document->scenario().hardware;
    const auto* id = std::get_if<std::string>(&value);
    const std::optional<model::GpuSpec> from = model::findGpu(hw.gpu);
    if (field != Field::Gpu || !id || *id != "custom" || hw.custom != model::GpuSpec{} || !from) {
        m_document->setField(field, value);
        return;
    }
    // A first "Custom…" starts from the GPU chosen so far rather than from zeros that core refuses:
    // one undo step that chooses the entry and fills it.
    QUndoStack* stack = m_document->undoStack();
    stack->beginMacro(fieldCommandName(Field::Gpu));
    m_document->setField(Field::Gpu, value);
    m_document->setField(Field::CustomGpuName, FieldValue(tr("Custom (from %1)").arg(qs(from->name)).toStdString()));
    m_document->setField(Field::CustomGpuMemory, FieldValue(from->memoryBytes));
    m_document->setField(Field::CustomGpuPeakFp32, FieldValue(from->peakFp32));
    m_document->setField(Field::CustomGpuPeakBf16, FieldValue(from->peakBf16));
    m_document->setField(Field::CustomGpuPeakFp16, FieldValue(from->peakFp16));
    m_document->setField(Field::CustomGpuPeakFp8, FieldValue(from->peakFp8));
    stack->endMacro();
}

void TensorPane::onDerived(const std::shared_ptr<const scenario::Derivation>& d)
{
    m_derivation = d;
    if (d) {
        // The V the model is built with when it follows the tokenizer (stage 1's figure).
        const Figure* v = d->figures.find("tokenizer.vocab_size");
        m_form->setTokenizerVocab(v ? std::uint64_t(v->value) : d->model.vocabSize);
    }
    m_chainFigures = d ? d->figures : FigureSet{};
    m_diagram->setDerivation(d.get());
    m_charts->setDerivation(d.get());
    m_figures->setFigures(m_chainFigures);
    m_followStale = true;
    if (isVisible() || m_document->followedToken() < 0)
        updateFollow();
    updateCaption();
    updateKernels();
    if (d && !d->problems.empty()) {
        QStringList lines;
        for (const Error& e : d->problems)
            lines << qs(e.toString());
        m_message->showMessage(MessageBar::Severity::Warning, lines.join(QLatin1Char('\n')));
    } else {
        m_message->clearMessage();
    }
    if (!m_tensor.isEmpty() && !showTensor(m_tensor))
        m_details->clear();
    const QString figure = m_chain->property("figureId").toString();
    if (!figure.isEmpty())
        showFigure(figure);
}

void TensorPane::onProblems()
{
    m_form->setProblems(m_document->problems());
    if (!m_document->problems().empty()) {
        m_status->setText(tr("This model cannot be derived: fix the fields marked in red (Undo takes the last edit "
                             "back). The diagram still shows the last valid model."));
        m_status->show();
    } else {
        m_status->hide();
    }
}

void TensorPane::updateCaption()
{
    if (!m_derivation) {
        m_caption->clear();
        return;
    }
    const FigureSet& f = m_derivation->figures;
    const double tokens = f.valueOf("tokens.count");
    const double packed = f.valueOf("dataset.packed_tokens");
    const double T = f.valueOf("batch.T");
    const double B = f.valueOf("batch.B");
    QString text;
    if (packed <= T)
        text = tr("Your %1 tokens fill %2 of the T = %3 positions of one sequence; in training the rest is packed with "
                  "the next documents. B = %4 such sequences make the batch [B,T] = [%5, %6] that enters the model.")
                   .arg(count(tokens), count(packed), count(T), count(B))
                   .arg(B)
                   .arg(T);
    else
        text = tr("Your %1 tokens fill %2 sequences of T = %3 positions; B = %4 sequences make one batch [B,T] = "
                  "[%5, %6] that enters the model.")
                   .arg(count(tokens), count(f.valueOf("dataset.sequences")), count(T), count(B))
                   .arg(B)
                   .arg(T);
    const Figure* fits = f.find("memory.fits");
    text = text.toHtmlEscaped();
    text += QLatin1Char(' ')
            + tr("P = %1 parameters; one GPU needs %2 for a training step, %3 the %4 (%5).")
                  .arg(panekit::figureLink(f, "model.parameters", count(f.valueOf("model.parameters"))),
                       panekit::figureLink(f, "memory.total_bytes", qs(formatBytes(f.valueOf("memory.total_bytes"), units()))),
                       fits && fits->value > 0 ? tr("within") : tr("more than"),
                       qs(m_derivation->gpu.name.empty() ? m_derivation->gpu.id : m_derivation->gpu.name).toHtmlEscaped(),
                       panekit::figureLink(f, "memory.gpu_capacity_bytes", capacityText(m_derivation->gpu.memoryBytes, units())));
    // Plan-aware: what stage 3's plan leaves on its largest GPU.
    if (const parallel::PlanMemory* pm = m_derivation->memory.get())
        text += QLatin1Char(' ')
                + (pm->fits ? tr("Under stage 3's plan the largest GPU holds %1 (+ %2 reserve and allocator headroom): it fits.")
                            : tr("Under stage 3's plan the largest GPU holds %1 (+ %2 reserve and allocator headroom): it still does not fit."))
                      .arg(panekit::figureLink(f, "memory.plan.peak_bytes", qs(formatBytes(pm->peakBytes, units()))),
                           qs(formatBytes(pm->keptFreeBytes(), units())));
    m_caption->setText(text);
}

void TensorPane::updateKernels()
{
    const parallel::PlanDerivation* plan = m_derivation ? m_derivation->stage3.get() : nullptr;
    if (!plan) {
        m_kernels->clear();
        m_kernelSummary->setText(tr("No plan: the kernels need stage 3's micro-batch and splits."));
        return;
    }
    const model::ModelConfig& m = m_derivation->model;
    const parallel::ComputeKernels& k = plan->kernels;
    // The layer stage 3's figures describe (plan.kernel.*): a dense one when the model has any.
    const bool dense = k.moe.kernels.empty() || m.moeLayers() < m.layers;
    QString what = dense ? tr("One dense layer") : tr("One MoE layer");
    if (k.setup.tp > 1)
        what += tr(" (t = %1%2)").arg(k.setup.tp).arg(k.setup.sequenceParallel ? tr(", SP") : QString());
    const model::GpuSpec& gpu = m_derivation->gpu;
    m_kernels->setKernels(dense ? k.dense : k.moe, model::gemmPeak(gpu, m), gpu.memoryBandwidth, what,
                          k.timed);
    const FigureSet& f = m_derivation->figures;
    auto percent = [&](const char* id) {
        return panekit::figureLink(f, id, QString::number(100.0 * f.valueOf(id), 'f', 1) + QStringLiteral(" %"));
    };
    m_kernelSummary->setText(
        tr("The step on the compute timeline (no communication): MFU %1 (the model's FLOPs, nothing recomputed), "
           "HFU %2 (recomputation added) — FLOPs over GPUs · the GEMM precision's peak · (pipeline makespan + "
           "optimizer step %3). Stage 5 gives the simulated step's.")
            .arg(percent("plan.mfu"), percent("plan.hfu"),
                 panekit::figureLink(f, "plan.optimizer_step_seconds", qs(formatSeconds(f.valueOf("plan.optimizer_step_seconds"))))));
}

bool TensorPane::showTensor(const QString& name)
{
    if (!m_derivation)
        return false;
    const std::string key = name.toStdString();
    const std::vector<model::TensorInfo>& all = m_derivation->stage2->tensors;
    const model::TensorInfo* t = nullptr;
    for (const model::TensorInfo& x : all)
        if (x.name == key) {
            t = &x;
            break;
        }
    if (!t)
        return false;
    m_tensor = name;
    m_diagram->selectTensor(name);
    auto row = [muted = theme::mutedTextColor().name()](const QString& k, const QString& v) {
        return QStringLiteral("<tr><td style='color:%3;padding-right:10px'>%1</td><td>%2</td></tr>").arg(k, v, muted);
    };
    QString html = QStringLiteral("<h3 style='margin:0'>%1</h3><table>").arg(name.toHtmlEscaped());
    html += row(tr("shape"), QStringLiteral("<b>%1 = %2</b>").arg(qs(t->shapeSymbols).toHtmlEscaped(), shapeNumbers(*t)));
    html += row(tr("type"), qs(t->dtypeName));
    html += row(tr("bytes"), QStringLiteral("%1 (%2 B)").arg(qs(formatBytes(t->bytes, units())), count(t->bytes)));
    html += row(tr("kind"), tr(kindName(t->kind)) + QStringLiteral(" · ") + qs(t->component));
    html += row(tr("layer"), t->layer < 0 ? tr("outside the blocks")
                                          : tr("%1 (the same tensor exists in each of the L = %2 blocks)")
                                                .arg(t->layer)
                                                .arg(m_derivation->model.layers));
    html += row(tr("phase"), tr(phaseName(t->phase)));
    if (t->kind == model::TensorKind::Weight) {
        // The copies training keeps of a weight: its gradient and the optimizer's states.
        QString extra;
        for (const char* suffix : {".grad", ".adam_m", ".adam_v", ".master"})
            for (const model::TensorInfo& x : all)
                if (x.name == key + suffix) {
                    extra += QStringLiteral("<br>%1: %2 %3").arg(qs(x.name).toHtmlEscaped(), qs(formatBytes(x.bytes, units())), qs(x.dtypeName));
                    break;
                }
        if (!extra.isEmpty())
            html += row(tr("training keeps"), extra.mid(4));
    }
    html += QStringLiteral("</table>");
    m_details->setHtml(html);
    return true;
}

bool TensorPane::showFigure(const QString& id)
{
    if (!m_derivation || !panekit::showFigureChain(m_chain, m_chainFigures, id, units()))
        return false;
    panekit::selectFigureRow(m_table, id);
    return true;
}

DisplayUnits TensorPane::units() const
{
    return AppSettings::instance()->displayUnits();
}

void TensorPane::applyUnits()
{
    const DisplayUnits u = units();
    m_figures->setDisplayUnits(u);
    m_diagram->setDisplayUnits(u);
    m_charts->setDisplayUnits(u);
    m_diagram->setDerivation(m_derivation.get());
    m_charts->setDerivation(m_derivation.get());
    m_followStale = true;
    updateFollow();
    updateCaption();
    updateKernels();
    if (!m_tensor.isEmpty())
        showTensor(m_tensor);
    const QString figure = m_chain->property("figureId").toString();
    if (!figure.isEmpty())
        showFigure(figure);
}

void TensorPane::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_followStale)
        updateFollow();
}

QString TensorPane::followCaptionText() const
{
    const auto& row = m_diagram->followedRow();
    if (!row)
        return {};
    QTextDocument doc;
    doc.setHtml(row->caption);
    return doc.toPlainText();
}

void TensorPane::updateFollow()
{
    m_followStale = false;
    const qint64 index = m_document->followedToken();
    FigureSet figures = m_derivation ? m_derivation->figures : FigureSet{};
    if (!m_derivation || index < 0 || std::size_t(index) >= m_derivation->tokens().size()) {
        if (m_chainFigures.size() != figures.size()) {
            m_chainFigures = std::move(figures);
            m_figures->setFigures(m_chainFigures);
        }
        m_diagram->setFollowedRow(std::nullopt);
        return;
    }
    auto trace = scenario::traceToken(*m_derivation, m_document->resolvedScenario(), std::uint64_t(index));
    if (!trace) {
        m_diagram->setFollowedRow(std::nullopt);
        return;
    }
    const scenario::TokenTrace& tt = trace.value();
    for (const Figure& fig : tt.figures.all())
        figures.add(fig);
    m_chainFigures = std::move(figures);
    m_figures->setFigures(m_chainFigures);
    const FigureSet& f = m_chainFigures;
    TransformerView::FollowedRow row;
    row.b = tt.row;
    row.t = tt.position;
    row.B = tt.B;
    row.T = tt.T;
    // "token #12 “·che” = row (b, t) of x [B,T,d]: d values, N bytes", every number a link to its chain.
    // On the diagram's light paper in either theme: the paper's link colour.
    auto link = [&](const char* id, const QString& text) {
        return panekit::figureLink(f, id, text, theme::paperLinkColor());
    };
    row.caption = tr("<b>token #%1 “%2”</b> = row (b, t) = (%3, %4) of x [B,T,d] = [%5, %6, %7]: %8 values, %9")
                      .arg(link("trace.token", QString::number(index)),
                           visiblePiece(tt.piece).toHtmlEscaped(), link("trace.row", QString::number(tt.row)),
                           link("trace.position", QString::number(tt.position)),
                           link("batch.B", QString::number(tt.B)),
                           link("batch.T", QString::number(tt.T)),
                           link("model.hidden_size", QString::number(tt.d)),
                           link("trace.row_values", QString::number(tt.d)),
                           link("trace.row_bytes", qs(formatBytes(tt.rowBytes, units()))
                                                                          + QStringLiteral(" (") + qs(tt.activationType) + QLatin1Char(')')));
    if (tt.placed)
        row.caption += tr(" — sequence %1, optimizer step %2, DP replica %3, micro-batch %4.")
                           .arg(link("trace.sequence", QString::number(tt.sequence)),
                                link("trace.step", QString::number(tt.placement.step)),
                                link("trace.replica", QString::number(tt.placement.dpReplica)),
                                link("trace.micro_batch", QString::number(tt.placement.microBatch)));
    m_diagram->setFollowedRow(row);
}

QWidget* TensorPane::drawing() const
{
    return m_diagram;
}

} // namespace tw::ui
