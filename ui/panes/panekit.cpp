#include "panekit.h"

#include "document/document.h"
#include "settings/fontfollow.h"
#include "settings/theme.h"
#include "views/figuretablemodel.h"
#include "views/tokenchipview.h"

#include "scenario/derive.h"

#include <QCursor>
#include <QFormLayout>
#include <QLayout>
#include <QHBoxLayout>
#include <QPushButton>
#include <QToolTip>
#include <QCoreApplication>
#include <QFrame>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QTabWidget>
#include <QStyle>
#include <QTabBar>
#include <QTimer>
#include <QStackedWidget>
#include <QToolButton>
#include <QEvent>
#include <QVBoxLayout>

#include <algorithm>

namespace tw::ui::panekit {

QLabel* caption(QWidget* pane, const char* objectName)
{
    auto* label = new QLabel(pane);
    label->setObjectName(QString::fromLatin1(objectName));
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setProperty("stageCaption", true); // gives way to the narration band (MainWindow)
    fontfollow::followAppFont(label, 1.15); // presentation mode and the font scale enlarge it too
    return label;
}

namespace {

// A scroll area sizes its widget by the minimum size, which knows nothing of word-wrapped labels that
// grow taller as the form gets narrower: the form is kept as tall as its layout needs at its width.
class FormHeight : public QObject {
public:
    explicit FormHeight(QWidget* form)
        : QObject(form)
        , m_form(form)
    {
        form->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == m_form && (event->type() == QEvent::Resize || event->type() == QEvent::LayoutRequest)) {
            QLayout* layout = m_form->layout();
            if (layout && layout->hasHeightForWidth()) {
                const int need = layout->totalHeightForWidth(m_form->width());
                if (need > 0 && need != m_form->minimumHeight())
                    m_form->setMinimumHeight(need);
            }
        }
        return QObject::eventFilter(watched, event);
    }

private:
    QWidget* m_form;
};

} // namespace

QScrollArea* formScroll(QWidget* form, QWidget* pane, int minWidth)
{
    new FormHeight(form);
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

bool selectFigureRow(QTableView* table, const QString& id)
{
    const QAbstractItemModel* figures = table->model();
    for (int r = 0; r < figures->rowCount(); ++r) {
        const QModelIndex index = figures->index(r, FigureTableModel::LabelColumn);
        if (figures->data(index, FigureTableModel::FigureIdRole).toString() == id) {
            table->selectRow(r);
            table->scrollTo(index);
            return true;
        }
    }
    return false;
}

bool showFigureChain(QTextBrowser* chain, const FigureSet& figures, const QString& id, const DisplayUnits& units)
{
    if (!figures.find(id.toStdString()))
        return false;
    chain->setHtml(derivationChainHtml(figures, id, units));
    chain->setProperty("figureId", id);
    return true;
}

void reveal(QWidget* w, const QWidget* root)
{
    for (QWidget* page = w; page && page != root; page = page->parentWidget()) {
        auto* stack = qobject_cast<QStackedWidget*>(page->parentWidget());
        if (!stack)
            continue;
        if (auto* tabs = qobject_cast<QTabWidget*>(stack->parentWidget()))
            tabs->setCurrentWidget(page);
        else if (stack != root)
            stack->setCurrentWidget(page);
    }
}

QFormLayout* formGroup(QVBoxLayout* formLayout, const QString& title)
{
    auto* box = new QGroupBox(title, formLayout->parentWidget());
    auto* f = new QFormLayout(box);
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A row too long for the form's column puts its field under its label: the column scrolls only
    // vertically, and a wider form was cut on the right (stage 5's three-tier rows).
    f->setRowWrapPolicy(QFormLayout::WrapLongRows);
    formLayout->addWidget(box);
    return f;
}

QLabel* problemLabel(QWidget* parent, const char* objectName)
{
    auto* label = new QLabel(parent);
    label->setObjectName(QString::fromLatin1(objectName));
    label->setWordWrap(true);
    theme::styleErrorLabel(label);
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

namespace {

// Keeps the toggle's check and text on the form's visibility.
class FormToggleSync : public QObject {
public:
    FormToggleSync(QToolButton* button, QWidget* form)
        : QObject(button)
        , m_button(button)
        , m_form(form)
    {
        form->installEventFilter(this);
        sync();
    }
    void sync()
    {
        const bool shown = !m_form->isHidden();
        const QSignalBlocker block(m_button);
        m_button->setChecked(shown);
        m_button->setText(shown ? QCoreApplication::translate("tw::ui::panekit", "◂ Form")
                                : QCoreApplication::translate("tw::ui::panekit", "▸ Form"));
        m_button->setToolTip(shown ? QCoreApplication::translate("tw::ui::panekit", "Fold the form away: the drawing gets the room")
                                   : QCoreApplication::translate("tw::ui::panekit", "Show the form again"));
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == m_form && (event->type() == QEvent::ShowToParent || event->type() == QEvent::HideToParent))
            sync();
        return QObject::eventFilter(watched, event);
    }

private:
    QToolButton* m_button;
    QWidget* m_form;
};

} // namespace

QWidget* formToggle(QWidget* pane, QWidget* form)
{
    auto* button = new QToolButton(pane);
    button->setObjectName(QStringLiteral("formToggle"));
    button->setCheckable(true);
    button->setAutoRaise(true);
    auto* sync = new FormToggleSync(button, form);
    QObject::connect(button, &QToolButton::toggled, form, [form, sync](bool on) {
        form->setVisible(on);
        sync->sync();
    });
    return button;
}

namespace {

// The height a tab page needs: a scrolled page, what its content needs at least (a chart at its readable
// minimum, keepPlotRoom), else the page's own minimum.
int pageNeed(QWidget* page)
{
    if (!page)
        return 0;
    page->ensurePolished(); // a page never shown yet: its fonts and style as they will be
    if (auto* scroll = qobject_cast<QScrollArea*>(page); scroll && scroll->widget())
        return std::max(scroll->minimumHeight(), scroll->widget()->minimumSizeHint().height() + 2 * scroll->frameWidth());
    return std::max(page->minimumHeight(), page->minimumSizeHint().height());
}

// giveTabsTheirRoom's state: the tabs' minimum is the current page's, and the splitter's sizes the user had
// before a tab took room.
class TabRoom : public QObject {
public:
    TabRoom(QSplitter* split, QWidget* drawing, QTabWidget* tabs)
        : QObject(tabs)
        , m_split(split)
        , m_drawing(drawing)
        , m_tabs(tabs)
    {
        tabs->installEventFilter(this);
        connect(split, &QSplitter::splitterMoved, this, [this] { m_saved.clear(); });
        connect(tabs, &QTabWidget::currentChanged, this, [this](int index) {
            fit();
            // Charts drawn on demand (stage 4's comparison) know their minimum once drawn.
            QTimer::singleShot(400, this, [this, index] {
                if (m_tabs->currentIndex() == index)
                    fit();
            });
        });
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == m_tabs && event->type() == QEvent::Show)
            QTimer::singleShot(0, this, [this] { fit(); });
        return QObject::eventFilter(watched, event);
    }

private:
    void fit()
    {
        if (!m_tabs->isVisible())
            return;
        QWidget* page = m_tabs->currentWidget();
        // The tab bar and the frame (a page not shown yet has no height of its own to subtract).
        const int chrome = m_tabs->tabBar()->sizeHint().height() + 2 * m_tabs->style()->pixelMetric(QStyle::PM_DefaultFrameWidth) + 2;
        // The tabs ask for the current page's minimum only: a stack asks for its largest page's, so a hidden
        // tab's chart (at its readable minimum) squeezed the drawing above to its own minimum.
        const int pageMinimum = !page ? 0 : page->minimumHeight() > 0 ? page->minimumHeight() : page->minimumSizeHint().height();
        m_tabs->setMinimumHeight(chrome + pageMinimum);
        QList<int> sizes = m_split->sizes();
        if (sizes.size() != 2)
            return;
        // The room is the largest page's need, whichever tab is shown: the tab bar stays where it is when
        // another tab is clicked (a bar moving under the pointer, the drawing resizing with it).
        int need = 0;
        for (int i = 0; i < m_tabs->count(); ++i)
            need = std::max(need, pageNeed(m_tabs->widget(i)) + chrome);
        if (need > sizes[1]) {
            const int spare = sizes[0] - std::max(m_drawing->minimumHeight(), m_drawing->minimumSizeHint().height());
            const int give = std::min(need - sizes[1], spare);
            if (give <= 0)
                return;
            if (m_saved.isEmpty())
                m_saved = sizes;
            sizes[0] -= give;
            sizes[1] += give;
            m_split->setSizes(sizes);
        } else if (!m_saved.isEmpty() && need <= m_saved.at(1)) {
            m_split->setSizes(m_saved);
            m_saved.clear();
        }
    }

    QSplitter* m_split;
    QWidget* m_drawing;
    QTabWidget* m_tabs;
    QList<int> m_saved;
};

} // namespace

void giveTabsTheirRoom(QSplitter* split, QWidget* drawing, QTabWidget* tabs)
{
    new TabRoom(split, drawing, tabs);
}

void stageLayout(QWidget* pane, QWidget* caption, QWidget* form, QWidget* drawing, QWidget* tabs, int drawingHeight,
                 int tabsHeight, QWidget* chip)
{
    auto* right = new QSplitter(Qt::Vertical, pane);
    right->setChildrenCollapsible(false);
    right->addWidget(drawing);
    right->addWidget(tabs);
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 1);
    right->setSizes({drawingHeight, tabsHeight});
    if (auto* tabWidget = qobject_cast<QTabWidget*>(tabs))
        giveTabsTheirRoom(right, drawing, tabWidget);
    auto* split = new QSplitter(Qt::Horizontal, pane);
    split->setChildrenCollapsible(false);
    split->addWidget(form);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    split->setSizes({330, 1070});
    auto* layout = new QVBoxLayout(pane);
    auto* top = new QHBoxLayout;
    // The toggle on the left, the chip on the right, also while the caption gives way to the narration.
    top->addWidget(formToggle(pane, form), 0, Qt::AlignLeft | Qt::AlignTop);
    top->addWidget(caption, 1);
    if (chip) {
        // Its room kept while hidden: following a token (a hover in stage 1) moves nothing below it.
        QSizePolicy policy = chip->sizePolicy();
        policy.setRetainSizeWhenHidden(true);
        chip->setSizePolicy(policy);
        top->addWidget(chip, 0, Qt::AlignRight | Qt::AlignTop);
    }
    layout->addLayout(top);
    layout->addWidget(split, 1);
}

QString scenarioName(const Document* document)
{
    const std::string& name = document->scenario().name;
    return name.empty() ? document->displayName() : QString::fromStdString(name);
}

QString followedTokenCaption(const Document* document)
{
    if (!document || document->followedToken() < 0 || !document->derivation())
        return {};
    const scenario::Derivation& d = *document->derivation();
    const auto index = static_cast<std::size_t>(document->followedToken());
    if (index >= d.tokens().size())
        return {};
    const text::TokenSpan& span = d.tokens()[index];
    const std::string& text = d.stage1->tokenized->text;
    const std::string_view piece = span.end <= text.size() ? std::string_view(text).substr(span.begin, span.end - span.begin)
                                                           : std::string_view();
    return QCoreApplication::translate("tw::ui::panekit", "token #%1 “%2”").arg(index).arg(visiblePiece(piece));
}

QWidget* followChip(QWidget* pane, Document* document)
{
    auto* chip = new QFrame(pane);
    chip->setObjectName(QStringLiteral("followChip"));
    // Its own width, also when the caption beside it gives way to the narration.
    chip->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Preferred);
    chip->setStyleSheet(QStringLiteral("#followChip { background: #fff7d6; border: 2px solid #111827; border-radius: 12px; }"
                                       "#followChip QLabel { color: #111827; }"));
    auto* label = new QLabel(chip);
    label->setObjectName(QStringLiteral("followChipLabel"));
    fontfollow::followAppFont(label, 1.0, true);
    auto* stop = new QPushButton(QCoreApplication::translate("tw::ui::panekit", "✕ Stop following"), chip);
    stop->setObjectName(QStringLiteral("stopFollowing"));
    stop->setToolTip(QCoreApplication::translate("tw::ui::panekit", "Stop following the token through the stages"));
    stop->setCursor(Qt::PointingHandCursor);
    auto* row = new QHBoxLayout(chip);
    row->setContentsMargins(10, 3, 4, 3);
    row->addWidget(label);
    row->addWidget(stop);
    auto update = [chip, label, document] {
        const QString caption = followedTokenCaption(document);
        label->setText(QCoreApplication::translate("tw::ui::panekit", "● Following %1").arg(caption));
        label->setToolTip(QCoreApplication::translate("tw::ui::panekit",
                                                      "The token followed through the five stages: hover or click a "
                                                      "token in stage 1, or choose it in stage 3"));
        chip->setVisible(!caption.isEmpty());
    };
    QObject::connect(stop, &QPushButton::clicked, chip, [document] { document->setFollowedToken(-1); });
    QObject::connect(document, &Document::followedTokenChanged, chip, update);
    QObject::connect(document, &Document::derived, chip, update);
    update();
    return chip;
}

QString figureLink(const FigureSet& figures, const std::string& id, const QString& text)
{
    return figureLink(figures, id, text, theme::linkColor());
}

QString figureLink(const FigureSet& figures, const std::string& id, const QString& text, const QColor& color)
{
    if (!figures.find(id))
        return text.toHtmlEscaped();
    return QStringLiteral("<a href=\"fig:%1\" style=\"color:%3; text-decoration:none\">%2</a>")
        .arg(QString::fromStdString(id).toHtmlEscaped(), text.toHtmlEscaped(), color.name());
}

void wireFigureLinks(QLabel* label, std::function<const FigureSet*()> figures, std::function<void(const QString&)> open,
                     std::function<DisplayUnits()> units)
{
    label->setTextFormat(Qt::RichText);
    label->setTextInteractionFlags(Qt::TextBrowserInteraction);
    label->setOpenExternalLinks(false);
    QObject::connect(label, &QLabel::linkHovered, label, [label, figures, units](const QString& link) {
        const FigureSet* set = figures ? figures() : nullptr;
        if (!link.startsWith(QLatin1String("fig:")) || !set) {
            QToolTip::hideText();
            return;
        }
        const QString text = figureExplanation(*set, link.mid(4).toStdString(), units ? units() : DisplayUnits{});
        QToolTip::showText(QCursor::pos(), text, label);
        label->setProperty("hoveredFigure", link.mid(4));
    });
    QObject::connect(label, &QLabel::linkActivated, label, [open](const QString& link) {
        if (link.startsWith(QLatin1String("fig:")) && open)
            open(link.mid(4));
    });
}

} // namespace tw::ui::panekit
