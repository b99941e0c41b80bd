#include "stagenavigator.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace tw::ui {

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
    QFont font = this->font();
    font.setPointSizeF(font.pointSizeF() * 1.15);
    const QStringList names = stageNames();
    for (int i = 0; i < names.size(); ++i) {
        if (i > 0) {
            auto* arrow = new QLabel(QStringLiteral("→"), this);
            arrow->setFont(font);
            arrow->setForegroundRole(QPalette::PlaceholderText);
            layout->addWidget(arrow);
        }
        auto* button = new QToolButton(this);
        button->setText(QStringLiteral("%1  %2").arg(i + 1).arg(names[i]));
        button->setCheckable(true);
        button->setAutoRaise(true);
        button->setFont(font);
        button->setObjectName(QStringLiteral("stage%1").arg(i + 1));
        button->setToolButtonStyle(Qt::ToolButtonTextOnly);
        button->setStyleSheet(QStringLiteral(
            "QToolButton { padding: 4px 14px; border-radius: 6px; }"
            "QToolButton:checked { background: #2b6cb0; color: white; font-weight: bold; }"));
        m_group->addButton(button, i);
        layout->addWidget(button);
    }
    layout->addStretch(1);
    m_group->button(0)->setChecked(true);
    connect(m_group, &QButtonGroup::idClicked, this, &StageNavigator::stageSelected);
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

} // namespace tw::ui
