#include "pagedtextview.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace tw::ui {

namespace {
// Page starts: every ~kPageBytes, moved forward to just after a newline when one is near, and
// never inside a UTF-8 sequence.
std::vector<std::size_t> pageStarts(const std::string& s, std::size_t pageBytes)
{
    std::vector<std::size_t> starts{0};
    std::size_t pos = 0;
    while (s.size() - pos > pageBytes) {
        std::size_t cut = pos + pageBytes;
        const std::size_t nl = s.rfind('\n', cut);
        if (nl != std::string::npos && nl > pos && cut - nl < pageBytes / 8)
            cut = nl + 1;
        else
            while (cut > pos + 1 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80)
                --cut;
        starts.push_back(cut);
        pos = cut;
    }
    return starts;
}
} // namespace

PagedTextView::PagedTextView(QWidget* parent)
    : QWidget(parent)
{
    m_title = new QLabel(this);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_indicator = new QLabel(this);
    m_indicator->setObjectName(QStringLiteral("pageIndicator"));
    m_prev = new QPushButton(tr("◀ Previous"), this);
    m_prev->setObjectName(QStringLiteral("previousPage"));
    m_next = new QPushButton(tr("Next ▶"), this);
    m_next->setObjectName(QStringLiteral("nextPage"));
    auto* back = new QPushButton(tr("Back to the editor"), this);
    back->setObjectName(QStringLiteral("backToEditor"));
    back->setToolTip(tr("Return to the text you typed; this file stays loaded until you go back"));
    m_view = new QPlainTextEdit(this);
    m_view->setReadOnly(true);
    m_view->setObjectName(QStringLiteral("pagedText"));

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_title, 1);
    bar->addWidget(m_prev);
    bar->addWidget(m_indicator);
    bar->addWidget(m_next);
    bar->addSpacing(12);
    bar->addWidget(back);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    connect(m_prev, &QPushButton::clicked, this, [this] { setPage(m_page - 1); });
    connect(m_next, &QPushButton::clicked, this, [this] { setPage(m_page + 1); });
    connect(back, &QPushButton::clicked, this, &PagedTextView::backToEditorRequested);
}

void PagedTextView::setText(std::shared_ptr<const std::string> bytes, const QString& title)
{
    m_bytes = std::move(bytes);
    m_pageStarts = m_bytes ? pageStarts(*m_bytes, kPageBytes) : std::vector<std::size_t>{0};
    m_title->setText(title);
    m_page = -1;
    setPage(0);
}

void PagedTextView::setPage(int page)
{
    page = std::clamp(page, 0, pageCount() - 1);
    const bool changed = page != m_page;
    m_page = page;
    const auto [begin, end] = pageRange();
    QString text = m_bytes ? QString::fromUtf8(m_bytes->data() + begin, static_cast<qsizetype>(end - begin)) : QString();
    text.replace(QChar(u'\0'), QStringLiteral("⟨00⟩"));
    m_view->setPlainText(text);
    m_indicator->setText(pageLabel());
    m_prev->setEnabled(m_page > 0);
    m_next->setEnabled(m_page + 1 < pageCount());
    if (changed)
        emit pageChanged(m_page);
}

std::pair<std::size_t, std::size_t> PagedTextView::pageRange() const
{
    if (!m_bytes)
        return {0, 0};
    const auto i = static_cast<std::size_t>(m_page);
    const std::size_t begin = m_pageStarts[i];
    const std::size_t end = i + 1 < m_pageStarts.size() ? m_pageStarts[i + 1] : m_bytes->size();
    return {begin, end};
}

QString PagedTextView::pageLabel() const
{
    return tr("Page %1 of %2").arg(QLocale().toString(m_page + 1), QLocale().toString(pageCount()));
}

} // namespace tw::ui
