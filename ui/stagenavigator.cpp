#include "stagenavigator.h"

#include <QButtonGroup>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace tw::ui {

namespace {

constexpr double kLabelScale = 1.15;

QStringList stageHints()
{
    return {StageNavigator::tr("bytes → tokens → sequences of T"),
            StageNavigator::tr("token ids → activations, parameters, memory"),
            StageNavigator::tr("the GPUs in a DP × PP × TP (× EP) plan"),
            StageNavigator::tr("the plan's collectives as step-by-step schedules"),
            StageNavigator::tr("the step's traffic on the fabric's links")};
}

} // namespace

QStringList StageNavigator::stageNames()
{
    return {tr("Text"), tr("Tensors"), tr("GPUs"), tr("Collectives"), tr("Wire")};
}

StageNavigator::StageNavigator(QWidget* parent)
    : QWidget(parent)
    , m_group(new QButtonGroup(this))
{
    setObjectName(QStringLiteral("stageNavigator"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 6);
    layout->setSpacing(6);
    const QStringList names = stageNames();
    const QStringList hints = stageHints();
    for (int i = 0; i < names.size(); ++i) {
        if (i > 0) {
            auto* arrow = new QLabel(QStringLiteral("→"), this);
            arrow->setObjectName(QStringLiteral("stageArrow%1").arg(i));
            arrow->setForegroundRole(QPalette::PlaceholderText);
            layout->addWidget(arrow);
            m_labels << arrow;
        }
        auto* button = new QToolButton(this);
        button->setText(QStringLiteral("%1  %2").arg(i + 1).arg(names[i]));
        button->setToolTip(tr("Stage %1: %2 — %3 (Ctrl+%1)").arg(i + 1).arg(names[i], hints[i]));
        button->setCheckable(true);
        button->setAutoRaise(true);
        button->setObjectName(QStringLiteral("stage%1").arg(i + 1));
        button->setToolButtonStyle(Qt::ToolButtonTextOnly);
        button->setFocusPolicy(Qt::TabFocus);
        // Every stage outlined, the current one filled.
        button->setStyleSheet(QStringLiteral(
            "QToolButton { padding: 3px 14px; border-radius: 6px; border: 1px solid palette(mid); }"
            "QToolButton:hover { border-color: #2b6cb0; }"
            "QToolButton:checked { background: #2b6cb0; border-color: #2b6cb0; color: white; font-weight: bold; }"));
        m_group->addButton(button, i);
        layout->addWidget(button);
        m_labels << button;
    }
    layout->addStretch(1);
    m_group->button(0)->setChecked(true);
    connect(m_group, &QButtonGroup::idClicked, this, &StageNavigator::stageSelected);
    applyFonts();
}

int StageNavigator::currentStage() const
{
    return m_group->checkedId();
}

void StageNavigator::setCurrentStage(int stage)
{
    if (auto* button = m_group->button(stage))
        button->setChecked(true);
}

void StageNavigator::applyFonts()
{
    // From the navigator's own (inherited) font, so a new application font reaches the labels.
    QFont f = font();
    if (f.pointSizeF() > 0)
        f.setPointSizeF(f.pointSizeF() * kLabelScale);
    else if (f.pixelSize() > 0)
        f.setPixelSize(int(f.pixelSize() * kLabelScale + 0.5));
    for (QWidget* w : m_labels)
        w->setFont(f);
}

void StageNavigator::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        applyFonts();
}

} // namespace tw::ui
