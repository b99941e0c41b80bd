#include "busyveil.h"

#include <QEvent>
#include <QFrame>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace tw::ui {

BusyVeil::BusyVeil(QWidget* drawing)
    : QWidget(drawing)
    , m_card(new QFrame(this))
    , m_text(new QLabel(m_card))
    , m_progress(new QProgressBar(m_card))
    , m_cancel(new QPushButton(tr("Cancel"), m_card))
{
    setObjectName(QStringLiteral("busyVeil"));
    setAttribute(Qt::WA_NoSystemBackground);
    m_card->setObjectName(QStringLiteral("busyVeilCard"));
    m_card->setAutoFillBackground(true);
    static_cast<QFrame*>(m_card)->setFrameShape(QFrame::StyledPanel);
    m_text->setObjectName(QStringLiteral("busyVeilText"));
    m_text->setTextFormat(Qt::RichText);
    m_text->setWordWrap(true);
    m_text->setAlignment(Qt::AlignCenter);
    m_progress->setRange(0, 100);
    m_progress->setTextVisible(true);
    m_cancel->setObjectName(QStringLiteral("busyVeilCancel"));
    auto* layout = new QVBoxLayout(m_card);
    layout->setContentsMargins(18, 14, 18, 14);
    layout->setSpacing(8);
    layout->addWidget(m_text);
    layout->addWidget(m_progress);
    layout->addWidget(m_cancel, 0, Qt::AlignHCenter);
    connect(m_cancel, &QPushButton::clicked, this, &BusyVeil::cancelRequested);
    drawing->installEventFilter(this);
    hide();
}

QString BusyVeil::text() const
{
    return m_text->text();
}

void BusyVeil::showBusy(const QString& text, bool cancellable)
{
    m_text->setText(text);
    m_progress->setValue(0);
    m_progress->hide();
    m_cancel->setVisible(cancellable);
    setGeometry(parentWidget()->rect());
    const int width = std::clamp(parentWidget()->width() * 2 / 3, std::min(260, parentWidget()->width()), 520);
    m_card->setFixedWidth(width);
    m_card->adjustSize();
    m_card->move((this->width() - m_card->width()) / 2, std::max(0, (this->height() - m_card->height()) / 2));
    raise();
    show();
    emit busyShown();
}

void BusyVeil::setProgress(double fraction)
{
    m_progress->setValue(int(std::clamp(fraction, 0.0, 1.0) * 100));
    if (m_progress->isHidden()) {
        m_progress->show();
        m_card->adjustSize();
        m_card->move((width() - m_card->width()) / 2, std::max(0, (height() - m_card->height()) / 2));
    }
}

void BusyVeil::hideBusy()
{
    hide();
    emit busyHidden();
}

bool BusyVeil::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == parentWidget() && event->type() == QEvent::Resize && isVisible()) {
        setGeometry(parentWidget()->rect());
        m_card->move((width() - m_card->width()) / 2, std::max(0, (height() - m_card->height()) / 2));
    }
    return QWidget::eventFilter(watched, event);
}

void BusyVeil::paintEvent(QPaintEvent*)
{
    // The stale picture stays visible, dimmed: the window's own colour at two thirds.
    QPainter p(this);
    QColor veil = palette().color(QPalette::Window);
    veil.setAlphaF(0.66);
    p.fillRect(rect(), veil);
}

} // namespace tw::ui
