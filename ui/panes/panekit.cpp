#include "panekit.h"

#include "views/figuretablemodel.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace tw::ui::panekit {

QLabel* caption(QWidget* pane, const char* objectName)
{
    auto* label = new QLabel(pane);
    label->setObjectName(QString::fromLatin1(objectName));
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont big = pane->font();
    big.setPointSizeF(big.pointSizeF() * 1.15);
    label->setFont(big);
    return label;
}

QScrollArea* formScroll(QWidget* form, QWidget* pane, int minWidth)
{
    auto* scroll = new QScrollArea(pane);
    scroll->setWidget(form);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(minWidth);
    return scroll;
}

QTableView* table(QWidget* parent, QAbstractItemModel* model, const char* objectName)
{
    auto* t = new QTableView(parent);
    t->setObjectName(QString::fromLatin1(objectName));
    t->setModel(model);
    t->verticalHeader()->hide();
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

QTableView* figureTable(QWidget* parent, QAbstractItemModel* figures, const char* objectName)
{
    QTableView* t = table(parent, figures, objectName);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->horizontalHeader()->setStretchLastSection(false);
    t->horizontalHeader()->setSectionResizeMode(FigureTableModel::LabelColumn, QHeaderView::Stretch);
    t->horizontalHeader()->setSectionResizeMode(FigureTableModel::ValueColumn, QHeaderView::ResizeToContents);
    t->setColumnHidden(FigureTableModel::IdColumn, true);
    return t;
}

QFormLayout* formGroup(QVBoxLayout* formLayout, const QString& title)
{
    auto* box = new QGroupBox(title, formLayout->parentWidget());
    auto* f = new QFormLayout(box);
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    formLayout->addWidget(box);
    return f;
}

QLabel* problemLabel(QWidget* parent, const char* objectName)
{
    auto* label = new QLabel(parent);
    label->setObjectName(QString::fromLatin1(objectName));
    label->setWordWrap(true);
    label->setStyleSheet(QString::fromLatin1(kProblemStyle));
    label->hide();
    return label;
}

QSplitter* figurePage(QWidget* pane, QAbstractItemModel* figures, const char* prefix, const QString& placeholder,
                      Qt::Orientation orientation, QTableView** tableOut, QTextBrowser** chainOut)
{
    const QString name = QString::fromLatin1(prefix);
    QTableView* t = figureTable(pane, figures, (name + QStringLiteral("Figures")).toLatin1().constData());
    auto* chain = new QTextBrowser(pane);
    chain->setObjectName(name + QStringLiteral("Chain"));
    chain->setPlaceholderText(placeholder);
    auto* split = new QSplitter(orientation, pane);
    split->addWidget(t);
    split->addWidget(chain);
    *tableOut = t;
    *chainOut = chain;
    return split;
}

void stageLayout(QWidget* pane, QWidget* caption, QWidget* form, QWidget* drawing, QWidget* tabs, int drawingHeight,
                 int tabsHeight)
{
    auto* right = new QSplitter(Qt::Vertical, pane);
    right->setChildrenCollapsible(false);
    right->addWidget(drawing);
    right->addWidget(tabs);
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 1);
    right->setSizes({drawingHeight, tabsHeight});
    auto* split = new QSplitter(Qt::Horizontal, pane);
    split->setChildrenCollapsible(false);
    split->addWidget(form);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    split->setSizes({330, 1070});
    auto* layout = new QVBoxLayout(pane);
    layout->addWidget(caption);
    layout->addWidget(split, 1);
}

} // namespace tw::ui::panekit
