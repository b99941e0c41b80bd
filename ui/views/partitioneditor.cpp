#include "partitioneditor.h"

#include "settings/theme.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tw::ui {

namespace {
constexpr int kMaxColumns = 8; // spin boxes per row at most
const QColor kBar(0x00, 0x72, 0xB2);  // Okabe–Ito blue
const QColor kChunk(0x56, 0xB4, 0xE9); // Okabe–Ito sky blue: later chunks when interleaved
const QColor kInk(0x11, 0x18, 0x27);
const QColor kWarn(0xB9, 0x1C, 0x1C);
} // namespace

// Layers per stage as bars, stage 0 on the left.
class PartitionBars : public QWidget {
public:
    explicit PartitionBars(QWidget* parent)
        : QWidget(parent)
    {
        setMinimumHeight(96);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }
    QSize sizeHint() const override { return {360, 110}; }
    void set(std::vector<std::uint64_t> values, std::uint64_t pp)
    {
        m_values = std::move(values);
        m_pp = std::max<std::uint64_t>(pp, 1);
        update();
    }
    std::vector<std::uint64_t> m_values;
    std::uint64_t m_pp = 1;

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.fillRect(rect(), Qt::white);
        if (m_values.empty())
            return;
        const QFontMetrics fm(font());
        const int n = int(m_values.size());
        const std::uint64_t top = std::max<std::uint64_t>(1, *std::max_element(m_values.begin(), m_values.end()));
        const QRectF area(4, fm.height() + 2, width() - 8, height() - 2 * fm.height() - 6);
        const qreal slot = area.width() / n;
        const qreal barW = std::max<qreal>(1.5, slot * 0.72);
        // Label every k-th stage so that the numbers never touch.
        const int widest = fm.horizontalAdvance(QString::number(std::max<std::uint64_t>(top, std::uint64_t(n)))) + 4;
        const int every = std::max(1, int(std::ceil(widest / slot)));
        qreal lastValueLabel = -1e9;
        for (int i = 0; i < n; ++i) {
            const qreal h = area.height() * qreal(m_values[std::size_t(i)]) / qreal(top);
            const qreal x = area.left() + slot * i + (slot - barW) / 2;
            const bool laterChunk = std::uint64_t(i) >= m_pp;
            p.fillRect(QRectF(x, area.bottom() - h, barW, h), laterChunk ? kChunk : kBar);
            p.setPen(kInk);
            // Values: every k-th bar, and any bar that differs from its left neighbour when there is room.
            const qreal cx = area.left() + slot * (i + 0.5);
            const bool differs = i > 0 && m_values[std::size_t(i)] != m_values[std::size_t(i) - 1];
            if ((i % every == 0 || differs) && cx - lastValueLabel >= widest) {
                lastValueLabel = cx;
                p.drawText(QRectF(area.left() + slot * i - 20, area.bottom() - h - fm.height() - 1, slot + 40, fm.height()),
                           Qt::AlignHCenter | Qt::AlignBottom, QString::number(m_values[std::size_t(i)]));
            }
            if (i % every == 0) {
                p.setPen(QColor(0x47, 0x55, 0x69));
                p.drawText(QRectF(area.left() + slot * i - 20, area.bottom() + 2, slot + 40, fm.height()),
                           Qt::AlignHCenter | Qt::AlignTop, QString::number(i));
            }
        }
        p.setPen(QColor(0x9c, 0xa3, 0xaf));
        p.drawLine(QPointF(area.left(), area.bottom()), QPointF(area.right(), area.bottom()));
    }
};

PartitionEditor::PartitionEditor(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("partitionEditor"));
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    m_title = new QLabel(tr("Layers per pipeline stage"), this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    outer->addWidget(m_title);
    m_bars = new PartitionBars(this);
    m_bars->setToolTip(tr("Layers each pipeline stage holds (stage 0 on the left)."));
    outer->addWidget(m_bars);

    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* inner = new QWidget(m_scroll);
    m_grid = new QGridLayout(inner);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setHorizontalSpacing(8);
    m_grid->setVerticalSpacing(4);
    m_scroll->setWidget(inner);
    outer->addWidget(m_scroll);

    auto* row = new QHBoxLayout;
    m_sum = new QLabel(this);
    m_sum->setObjectName(QStringLiteral("partitionSum"));
    m_even = new QPushButton(tr("Even (default)"), this);
    m_even->setObjectName(QStringLiteral("partitionEven"));
    m_even->setToolTip(tr("Spread the layers as evenly as possible, the extra layers on the middle stages."));
    row->addWidget(m_sum, 1);
    row->addWidget(m_even);
    outer->addLayout(row);
    outer->addStretch(1);

    connect(m_even, &QPushButton::clicked, this, [this] { emit partitionEdited({}); });
    refresh();
}

void PartitionEditor::setPartition(const std::vector<std::uint64_t>& partition, std::uint64_t layers,
                                   std::uint64_t virtualStages)
{
    m_layers = layers;
    if (partition.size() != m_spins.size() || std::max<std::uint64_t>(virtualStages, 1) != m_virtualStages)
        rebuild(partition.size(), std::max<std::uint64_t>(virtualStages, 1));
    for (std::size_t i = 0; i < m_spins.size(); ++i) {
        const QSignalBlocker block(m_spins[i]);
        m_spins[i]->setMaximum(int(std::max<std::uint64_t>(layers, partition[i])));
        m_spins[i]->setValue(int(partition[i]));
    }
    m_columns = 0; // the spin boxes' width follows the maximum
    regrid();
    m_title->setText(tr("Layers per pipeline stage (L = %1)").arg(layers));
    refresh();
}

void PartitionEditor::rebuild(std::size_t stages, std::uint64_t virtualStages)
{
    for (QSpinBox* s : m_spins)
        delete s;
    for (QLabel* l : m_spinLabels)
        delete l;
    m_spins.clear();
    m_spinLabels.clear();
    m_virtualStages = virtualStages;
    const std::size_t pp = std::max<std::size_t>(1, stages / std::size_t(virtualStages));
    QWidget* inner = m_scroll->widget();
    for (std::size_t i = 0; i < stages; ++i) {
        const QString name = virtualStages > 1 ? tr("S%1.%2").arg(i % pp).arg(i / pp) : tr("S%1").arg(i);
        auto* label = new QLabel(name, inner);
        label->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto* spin = new QSpinBox(inner);
        spin->setObjectName(QStringLiteral("partitionStage%1").arg(i));
        spin->setRange(0, 1 << 20);
        spin->setKeyboardTracking(false); // one edit per Return / arrow click, not per keystroke
        spin->setAccelerated(true);
        spin->setToolTip(virtualStages > 1 ? tr("Layers in model chunk %1 of pipeline stage %2").arg(i / pp).arg(i % pp)
                                           : tr("Layers in pipeline stage %1").arg(i));
        connect(spin, &QSpinBox::valueChanged, this, &PartitionEditor::onUserEdit);
        m_spins.push_back(spin);
        m_spinLabels.push_back(label);
        label->show(); // the editor may be on screen already
        spin->show();
    }
    m_columns = 0;
    regrid();
}

void PartitionEditor::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    regrid();
}

void PartitionEditor::regrid()
{
    if (m_spins.empty())
        return;
    const int cell = m_spinLabels.back()->sizeHint().width() + m_spins.front()->sizeHint().width() + 2 * m_grid->horizontalSpacing();
    const int available = std::max(1, m_scroll->width() - m_scroll->verticalScrollBar()->sizeHint().width() - 4);
    const int columns = std::clamp(available / std::max(cell, 1), 1, kMaxColumns);
    if (columns == m_columns)
        return;
    m_columns = columns;
    for (std::size_t i = 0; i < m_spins.size(); ++i) {
        const int r = int(i) / columns, c = int(i) % columns;
        m_grid->addWidget(m_spinLabels[i], r, 2 * c);
        m_grid->addWidget(m_spins[i], r, 2 * c + 1);
    }
    // Spin boxes keep their natural width; the column after the last takes the slack.
    for (int c = 0; c < 2 * kMaxColumns + 1; ++c)
        m_grid->setColumnStretch(c, 0);
    m_grid->setColumnStretch(2 * std::min(columns, int(m_spins.size())), 1);
    // Up to three rows of spin boxes without scrolling; more scroll and take the editor's height.
    const int rows = (int(m_spins.size()) + columns - 1) / columns;
    const int rowH = m_spins.front()->sizeHint().height() + m_grid->verticalSpacing();
    m_scroll->setMinimumHeight(std::min(rows, 3) * rowH + 2);
    m_scroll->setMaximumHeight(rows <= 3 ? rows * rowH + 4 : QWIDGETSIZE_MAX);
    if (auto* outer = qobject_cast<QVBoxLayout*>(layout())) {
        outer->setStretch(outer->indexOf(m_scroll), rows > 3 ? 1 : 0);
        outer->setStretch(outer->count() - 1, rows > 3 ? 0 : 1);
    }
}

void PartitionEditor::onUserEdit()
{
    refresh();
    emit partitionEdited(partition());
}

std::vector<std::uint64_t> PartitionEditor::partition() const
{
    std::vector<std::uint64_t> out;
    out.reserve(m_spins.size());
    for (const QSpinBox* s : m_spins)
        out.push_back(std::uint64_t(s->value()));
    return out;
}

std::uint64_t PartitionEditor::sum() const
{
    std::uint64_t total = 0;
    for (const QSpinBox* s : m_spins)
        total += std::uint64_t(s->value());
    return total;
}

QSpinBox* PartitionEditor::spinBox(int stage) const
{
    return stage >= 0 && stage < stageCount() ? m_spins[std::size_t(stage)] : nullptr;
}

void PartitionEditor::refresh()
{
    const std::vector<std::uint64_t> values = partition();
    m_bars->set(values, values.size() / std::max<std::size_t>(1, std::size_t(m_virtualStages)));
    if (m_spins.empty()) {
        m_sum->setText(tr("No pipeline stages."));
        m_sum->setStyleSheet(QString());
        return;
    }
    const std::uint64_t total = sum();
    if (total == m_layers) {
        m_sum->setText(tr("Σ = %1 layers = L ✓").arg(total));
        m_sum->setStyleSheet(QString());
    } else {
        m_sum->setText(tr("Σ = %1 layers ≠ L = %2 (%3)")
                           .arg(total)
                           .arg(m_layers)
                           .arg(total > m_layers ? tr("%1 too many").arg(total - m_layers) : tr("%1 missing").arg(m_layers - total)));
        m_sum->setStyleSheet(QStringLiteral("color: %1; font-weight: bold;").arg(theme::errorColor().name()));
    }
    const QString sheet = total == m_layers ? QString() : QStringLiteral("QSpinBox { color: %1; }").arg(theme::errorColor().name());
    for (QSpinBox* s : m_spins)
        if (s->styleSheet() != sheet) // re-polishing 64 spin boxes on every edit would be slow
            s->setStyleSheet(sheet);
}

} // namespace tw::ui
