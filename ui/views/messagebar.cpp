#include "messagebar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace tw::ui {

MessageBar::MessageBar(QWidget* parent)
    : QFrame(parent)
{
    setObjectName(QStringLiteral("messageBar"));
    m_label = new QLabel(this);
    m_label->setObjectName(QStringLiteral("messageText"));
    m_label->setWordWrap(true);
    m_label->setTextFormat(Qt::PlainText);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* close = new QToolButton(this);
    close->setText(QStringLiteral("✕"));
    close->setAutoRaise(true);
    close->setToolTip(tr("Dismiss"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 6, 6);
    layout->addWidget(m_label, 1);
    layout->addWidget(close, 0, Qt::AlignTop);
    connect(close, &QToolButton::clicked, this, &MessageBar::clearMessage);
    hide();
}

void MessageBar::showMessage(Severity severity, const QString& text)
{
    m_severity = severity;
    static const char* const styles[] = {
        "QFrame#messageBar { background: #e3effb; border: 1px solid #7fa9d6; border-radius: 4px; }",
        "QFrame#messageBar { background: #fff4d6; border: 1px solid #d9a520; border-radius: 4px; }",
        "QFrame#messageBar { background: #fde2e1; border: 1px solid #d05050; border-radius: 4px; }"};
    setStyleSheet(QString::fromLatin1(styles[static_cast<int>(severity)])
                  + QStringLiteral(" QLabel { color: #1a1a1a; }"));
    m_label->setText(text);
    show();
    emit messageShown(text);
}

void MessageBar::clearMessage()
{
    m_label->clear();
    hide();
}

QString MessageBar::text() const
{
    return m_label->text();
}

} // namespace tw::ui
