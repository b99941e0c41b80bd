#include "panekit.h"

#include "views/figuretablemodel.h"

#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QTableView>

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

} // namespace tw::ui::panekit
