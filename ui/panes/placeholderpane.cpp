#include "placeholderpane.h"

#include <QLabel>
#include <QVBoxLayout>

namespace tw::ui {

PlaceholderPane::PlaceholderPane(const QString& title, const QString& promise, QWidget* parent)
    : QWidget(parent)
{
    auto* heading = new QLabel(title, this);
    QFont big = heading->font();
    big.setPointSizeF(big.pointSizeF() * 1.8);
    big.setBold(true);
    heading->setFont(big);
    heading->setAlignment(Qt::AlignCenter);
    heading->setObjectName(QStringLiteral("placeholderTitle"));

    auto* body = new QLabel(promise, this);
    QFont text = body->font();
    text.setPointSizeF(text.pointSizeF() * 1.2);
    body->setFont(text);
    body->setWordWrap(true);
    body->setAlignment(Qt::AlignCenter);
    body->setFixedWidth(760);
    body->setMinimumHeight(body->heightForWidth(760)); // a centred word-wrapped label gets no height otherwise

    auto* note = new QLabel(tr("This stage is coming in a later version of TokenWire."), this);
    note->setAlignment(Qt::AlignCenter);
    note->setForegroundRole(QPalette::PlaceholderText);

    auto* layout = new QVBoxLayout(this);
    layout->addStretch(2);
    layout->addWidget(heading);
    layout->addSpacing(16);
    layout->addWidget(body, 0, Qt::AlignHCenter);
    layout->addSpacing(16);
    layout->addWidget(note);
    layout->addStretch(3);
}

} // namespace tw::ui
