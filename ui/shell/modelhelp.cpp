#include "modelhelp.h"

#include "screenfit.h"

#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QShortcut>
#include <QSplitter>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>

namespace tw::ui {

namespace {

const QString kRoot = QStringLiteral(":/docs/");

// A heading's text as the rendered document shows it: markdown emphasis and code marks dropped.
QString plainHeading(QString line)
{
    line.remove(QRegularExpression(QStringLiteral("^#+\\s*")));
    line.remove(QLatin1Char('`'));
    line.remove(QLatin1Char('*'));
    return line.trimmed();
}

} // namespace

QStringList ModelHelp::pages()
{
    QStringList out = QDir(kRoot).entryList({QStringLiteral("*.md")}, QDir::Files, QDir::Name);
    // model.md first: the entry page.
    if (out.removeOne(QStringLiteral("model.md")))
        out.prepend(QStringLiteral("model.md"));
    return out;
}

ModelHelp::ModelHelp(QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("modelHelp"));
    setWindowTitle(tr("How the numbers are computed"));
    screenfit::resizeToFit(this, {1100, 760}); // a 1280×720 projector included

    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("modelHelpSearch"));
    m_search->setPlaceholderText(tr("Search the model (Enter: next, Shift+Enter: previous)"));
    m_search->setClearButtonEnabled(true);
    auto* prev = new QPushButton(tr("Previous"), this);
    auto* next = new QPushButton(tr("Next"), this);
    // Enter in the search field searches once: no button of the dialog is its default.
    prev->setAutoDefault(false);
    next->setAutoDefault(false);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("modelHelpStatus"));

    m_sections = new QListWidget(this);
    m_sections->setObjectName(QStringLiteral("modelHelpSections"));
    m_sections->setWordWrap(true); // long headings wrap instead of being cut
    m_sections->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_browser = new QTextBrowser(this);
    m_browser->setObjectName(QStringLiteral("modelHelpBrowser"));
    m_browser->setOpenLinks(false);
    m_browser->setSearchPaths({kRoot});

    auto* split = new QSplitter(this);
    split->addWidget(m_sections);
    split->addWidget(m_browser);
    split->setStretchFactor(1, 1);
    split->setSizes({300, 800});

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_search, 1);
    bar->addWidget(prev);
    bar->addWidget(next);
    bar->addWidget(m_status);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(split, 1);

    connect(m_browser, &QTextBrowser::anchorClicked, this, &ModelHelp::openUrl);
    connect(m_search, &QLineEdit::returnPressed, this, [this] { find(m_search->text()); });
    connect(next, &QPushButton::clicked, this, [this] { find(m_search->text()); });
    connect(prev, &QPushButton::clicked, this, [this] { find(m_search->text(), true); });
    auto* back = new QShortcut(QKeySequence(Qt::SHIFT | Qt::Key_Return), m_search);
    back->setContext(Qt::WidgetShortcut);
    connect(back, &QShortcut::activated, this, [this] { find(m_search->text(), true); });
    auto* focusSearch = new QShortcut(QKeySequence::Find, this);
    connect(focusSearch, &QShortcut::activated, this, [this] {
        m_search->setFocus();
        m_search->selectAll();
    });
    connect(m_sections, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { scrollToHeading(item->data(Qt::UserRole).toString()); });
    connect(m_sections, &QListWidget::itemClicked, this,
            [this](QListWidgetItem* item) { scrollToHeading(item->data(Qt::UserRole).toString()); });

    loadPage(QStringLiteral("model.md"));
}

void ModelHelp::loadPage(const QString& page)
{
    QFile file(kRoot + page);
    if (!file.open(QIODevice::ReadOnly))
        return;
    const QString markdown = QString::fromUtf8(file.readAll());
    m_page = page;
    m_browser->document()->setMarkdown(markdown, QTextDocument::MarkdownDialectGitHub);
    m_browser->moveCursor(QTextCursor::Start); // a new page is read, and searched, from its top
    m_headings.clear();
    m_sections->clear();
    bool inCode = false;
    for (const QString& line : markdown.split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("```")))
            inCode = !inCode;
        if (inCode || !line.startsWith(QLatin1Char('#')))
            continue;
        const int level = static_cast<int>(line.indexOf(QRegularExpression(QStringLiteral("[^#]"))));
        const QString text = plainHeading(line);
        m_headings << text;
        auto* item = new QListWidgetItem(QString(std::max(0, level - 1) * 2, QLatin1Char(' ')) + text, m_sections);
        item->setData(Qt::UserRole, text);
    }
    m_status->clear();
}

bool ModelHelp::scrollToHeading(const QString& prefix)
{
    QTextDocument* doc = m_browser->document();
    for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
        if (b.blockFormat().headingLevel() > 0 && b.text().trimmed().startsWith(prefix)) {
            // The heading at the top of the view (as far as the document's length allows).
            m_browser->setTextCursor(QTextCursor(b));
            QScrollBar* bar = m_browser->verticalScrollBar();
            bar->setValue(bar->value() + m_browser->cursorRect().top() - 4);
            return true;
        }
    }
    return false;
}

bool ModelHelp::showSection(const QString& page, const QString& section)
{
    if (!pages().contains(page))
        return false;
    if (page != m_page)
        loadPage(page);
    if (section.isEmpty()) {
        m_browser->moveCursor(QTextCursor::Start);
        return true;
    }
    return scrollToHeading(section);
}

bool ModelHelp::find(const QString& text, bool backward)
{
    if (text.isEmpty()) {
        m_status->clear();
        return false;
    }
    const QTextDocument::FindFlags flags = backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    if (m_browser->find(text, flags)) {
        m_status->clear();
        return true;
    }
    // Wrap around once.
    QTextCursor c = m_browser->textCursor();
    c.movePosition(backward ? QTextCursor::End : QTextCursor::Start);
    m_browser->setTextCursor(c);
    if (m_browser->find(text, flags)) {
        m_status->setText(tr("wrapped around"));
        return true;
    }
    m_status->setText(tr("“%1” is not on this page").arg(text));
    return false;
}

void ModelHelp::openUrl(const QUrl& url)
{
    if (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https")) {
        QDesktopServices::openUrl(url);
        return;
    }
    // A page of ours ("memory.md", "nccl.md#…") or an anchor on this page ("#3-stage-3…").
    const QString page = url.path().isEmpty() ? m_page : QFileInfo(url.path()).fileName();
    if (!pages().contains(page))
        return;
    if (page != m_page)
        loadPage(page);
    const QString fragment = url.fragment();
    if (fragment.isEmpty()) {
        m_browser->moveCursor(QTextCursor::Start);
        return;
    }
    // GitHub-style anchors: "3-stage-3--the-parallel-plan" → the heading whose slug it is.
    auto slug = [](const QString& heading) {
        QString s = heading.toLower();
        s.remove(QRegularExpression(QStringLiteral("[^\\w\\- ]"), QRegularExpression::UseUnicodePropertiesOption));
        s.replace(QLatin1Char(' '), QLatin1Char('-'));
        return s;
    };
    for (const QString& h : m_headings)
        if (slug(h) == fragment) {
            scrollToHeading(h);
            return;
        }
}

} // namespace tw::ui
