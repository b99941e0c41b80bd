#include "tokenchipview.h"

#include "settings/fontfollow.h"

#include <QEvent>
#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>

#include <algorithm>
#include <array>

namespace tw::ui {

namespace {
constexpr int kMargin = 8;
constexpr int kPadX = 5;
constexpr int kPadY = 3;
constexpr int kGapX = 3;
constexpr int kGapY = 6;

// Pastels that stay distinct on a washed-out projector, with dark text on all of them.
constexpr std::array<QRgb, 5> kChipColors = {0xffb3d9ff, 0xffffd59e, 0xffb8e6b8, 0xfff5b8d0, 0xffd9c8f5};

// Length of the well-formed UTF-8 sequence at s[i], or 0 when the bytes there are not one.
int utf8SequenceLength(std::string_view s, std::size_t i)
{
    const auto b0 = static_cast<unsigned char>(s[i]);
    int len = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (b0 < 0x80)
        return 1;
    if (b0 >= 0xc2 && b0 <= 0xdf)
        len = 2;
    else if (b0 >= 0xe0 && b0 <= 0xef) {
        len = 3;
        if (b0 == 0xe0)
            lo = 0xa0;
        if (b0 == 0xed)
            hi = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        len = 4;
        if (b0 == 0xf0)
            lo = 0x90;
        if (b0 == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (i + static_cast<std::size_t>(len) > s.size())
        return 0;
    for (int k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
        const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xbf;
        if (b < l || b > h)
            return 0;
    }
    return len;
}
} // namespace

QString visiblePiece(std::string_view bytes)
{
    QString out;
    for (std::size_t i = 0; i < bytes.size();) {
        const int len = utf8SequenceLength(bytes, i);
        if (len == 0) {
            out += QStringLiteral("⟨%1⟩").arg(static_cast<unsigned char>(bytes[i]), 2, 16, QLatin1Char('0'));
            ++i;
            continue;
        }
        const char c = bytes[i];
        if (c == ' ')
            out += QStringLiteral("·");
        else if (c == '\n')
            out += QStringLiteral("↵");
        else if (c == '\t')
            out += QStringLiteral("→");
        else if (len == 1 && (static_cast<unsigned char>(c) < 0x20 || c == 0x7f))
            out += QStringLiteral("⟨%1⟩").arg(static_cast<unsigned char>(c), 2, 16, QLatin1Char('0'));
        else
            out += QString::fromUtf8(bytes.data() + i, len);
        i += static_cast<std::size_t>(len);
    }
    return out;
}

QString hexBytes(std::string_view bytes)
{
    QString out;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (i)
            out += QLatin1Char(' ');
        out += QStringLiteral("%1").arg(static_cast<unsigned char>(bytes[i]), 2, 16, QLatin1Char('0'));
    }
    return out;
}

TokenChipView::TokenChipView(Mode mode, QWidget* parent)
    : QAbstractScrollArea(parent)
    , m_mode(mode)
{
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    viewport()->setMouseTracking(true);
    viewport()->setBackgroundRole(QPalette::Base);
    if (m_mode == Mode::Ids) {
        fontfollow::followAppFont(this, 1.0, false, fontfollow::Face::FixedPitch);
    }
}

void TokenChipView::setTokens(std::shared_ptr<const std::string> text,
                              std::shared_ptr<const std::vector<text::TokenSpan>> spans, std::size_t first,
                              std::size_t count)
{
    m_text = std::move(text);
    m_spans = std::move(spans);
    m_first = first;
    m_chips.clear();
    m_highlighted = m_hovered = m_followed = -1;
    if (m_text && m_spans) {
        const std::size_t last = std::min(m_spans->size(), first + count);
        m_chips.reserve(last > first ? last - first : 0);
        for (std::size_t i = first; i < last; ++i) {
            const auto& span = (*m_spans)[i];
            m_chips.push_back(Chip{m_mode == Mode::Ids
                                       ? QString::number(span.id)
                                       : visiblePiece(std::string_view(*m_text).substr(span.begin, span.end - span.begin)),
                                   {}});
        }
    }
    relayout();
}

void TokenChipView::clear()
{
    setTokens(nullptr, nullptr, 0, 0);
}

void TokenChipView::setPlaceholderText(const QString& text)
{
    m_placeholder = text;
    viewport()->update();
}

void TokenChipView::setHighlighted(int chip)
{
    if (chip == m_highlighted)
        return;
    m_highlighted = chip;
    if (chip >= 0 && chip < chipCount()) {
        const QRect r = m_chips[static_cast<std::size_t>(chip)].rect;
        const int top = verticalScrollBar()->value();
        if (r.top() < top || r.bottom() > top + viewport()->height())
            verticalScrollBar()->setValue(r.top() - viewport()->height() / 3);
    }
    viewport()->update();
}

QString TokenChipView::chipText(int chip) const
{
    return chip >= 0 && chip < chipCount() ? m_chips[static_cast<std::size_t>(chip)].label : QString();
}

text::TokenSpan TokenChipView::chipSpan(int chip) const
{
    return chip >= 0 && chip < chipCount() ? (*m_spans)[m_first + static_cast<std::size_t>(chip)] : text::TokenSpan{};
}

QRect TokenChipView::chipRect(int chip) const
{
    if (chip < 0 || chip >= chipCount())
        return {};
    return m_chips[static_cast<std::size_t>(chip)].rect.translated(0, -verticalScrollBar()->value());
}

QString TokenChipView::toolTipFor(int chip) const
{
    if (chip < 0 || chip >= chipCount())
        return {};
    const auto span = chipSpan(chip);
    const auto bytes = std::string_view(*m_text).substr(span.begin, span.end - span.begin);
    return tr("Token #%1 (%2 of %3)\nid %4\nbytes (hex): %5\npiece: “%6”\nClick to follow it through the five stages")
        .arg(QLocale().toString(static_cast<qulonglong>(m_first) + static_cast<qulonglong>(chip)),
             QLocale().toString(static_cast<qulonglong>(m_first) + static_cast<qulonglong>(chip) + 1),
             QLocale().toString(static_cast<qulonglong>(m_spans->size())), QString::number(span.id),
             hexBytes(bytes), visiblePiece(bytes));
}

int TokenChipView::chipAt(QPoint viewportPos) const
{
    const QPoint p = viewportPos + QPoint(0, verticalScrollBar()->value());
    // Chips are laid out top to bottom: skip the lines above p, then scan one line.
    auto it = std::lower_bound(m_chips.begin(), m_chips.end(), p.y(),
                               [](const Chip& c, int y) { return c.rect.bottom() < y; });
    for (; it != m_chips.end() && it->rect.top() <= p.y(); ++it)
        if (it->rect.contains(p))
            return static_cast<int>(it - m_chips.begin());
    return -1;
}

void TokenChipView::relayout()
{
    const QFontMetrics fm(font());
    const int width = std::max(100, viewport()->width());
    const int chipH = fm.height() + 2 * kPadY;
    int x = kMargin, y = kMargin;
    for (std::size_t i = 0; i < m_chips.size(); ++i) {
        Chip& chip = m_chips[i];
        const int w = fm.horizontalAdvance(chip.label) + 2 * kPadX;
        if (x > kMargin && x + w > width - kMargin) {
            x = kMargin;
            y += chipH + kGapY;
        }
        chip.rect = QRect(x, y, w, chipH);
        x += w + kGapX;
        // A token holding newlines ends the line; blank lines leave a half-line gap each.
        const auto span = (*m_spans)[m_first + i];
        const auto piece = std::string_view(*m_text).substr(span.begin, span.end - span.begin);
        const auto newlines = std::count(piece.begin(), piece.end(), '\n');
        if (newlines > 0) {
            x = kMargin;
            y += chipH + kGapY + static_cast<int>(newlines - 1) * (chipH / 2);
        }
    }
    m_contentHeight = m_chips.empty() ? 0 : m_chips.back().rect.bottom() + kMargin;
    updateScrollBar();
    viewport()->update();
}

void TokenChipView::updateScrollBar()
{
    verticalScrollBar()->setPageStep(viewport()->height());
    verticalScrollBar()->setSingleStep(QFontMetrics(font()).height());
    verticalScrollBar()->setRange(0, std::max(0, m_contentHeight - viewport()->height()));
}

void TokenChipView::paintEvent(QPaintEvent*)
{
    QPainter p(viewport());
    p.setRenderHint(QPainter::Antialiasing);
    if (m_chips.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(viewport()->rect().adjusted(kMargin, kMargin, -kMargin, -kMargin),
                   Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    const int top = verticalScrollBar()->value();
    p.translate(0, -top);
    auto it = std::lower_bound(m_chips.begin(), m_chips.end(), top,
                               [](const Chip& c, int y) { return c.rect.bottom() < y; });
    const int bottom = top + viewport()->height();
    const QColor textColor(0x1a, 0x1a, 0x1a);
    for (; it != m_chips.end() && it->rect.top() <= bottom; ++it) {
        const auto index = static_cast<std::size_t>(it - m_chips.begin());
        const QColor fill = QColor::fromRgb(kChipColors[(m_first + index) % kChipColors.size()]);
        const bool marked = static_cast<int>(index) == m_highlighted || static_cast<int>(index) == m_hovered;
        p.setPen(marked ? QPen(QColor(0x20, 0x20, 0x20), 2.0) : QPen(fill.darker(125), 1.0));
        p.setBrush(fill);
        p.drawRoundedRect(QRectF(it->rect).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
        p.setPen(textColor);
        p.drawText(it->rect, Qt::AlignCenter, it->label);
        if (static_cast<int>(index) == m_followed) {
            // The followed token: a thick ink outline (dashed while it only follows the pointer) and a dot.
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(QColor(0x11, 0x18, 0x27), 3.0, m_pinned ? Qt::SolidLine : Qt::DashLine));
            p.drawRoundedRect(QRectF(it->rect).adjusted(-1.5, -1.5, 1.5, 1.5), 5, 5);
            p.setPen(Qt::NoPen);
            p.setBrush(QColor(0x11, 0x18, 0x27));
            p.drawEllipse(QPointF(it->rect.right() - 1, it->rect.top() + 1), 3.5, 3.5);
        }
    }
}

void TokenChipView::setFollowed(int chip, bool pinned)
{
    if (chip == m_followed && pinned == m_pinned)
        return;
    m_followed = chip;
    m_pinned = pinned;
    viewport()->update();
}

void TokenChipView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        const int chip = chipAt(event->position().toPoint());
        if (chip >= 0) {
            emit clicked(chip);
            event->accept();
            return;
        }
    }
    QAbstractScrollArea::mousePressEvent(event);
}

void TokenChipView::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    relayout();
}

void TokenChipView::mouseMoveEvent(QMouseEvent* event)
{
    const int chip = chipAt(event->position().toPoint());
    if (chip != m_hovered) {
        m_hovered = chip;
        viewport()->update();
        emit hovered(chip);
    }
    // Shown at once (no hover delay): on a projector the audience follows the pointer.
    if (chip >= 0)
        QToolTip::showText(event->globalPosition().toPoint(), toolTipFor(chip), viewport(), chipRect(chip));
    else
        QToolTip::hideText();
}

bool TokenChipView::viewportEvent(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int chip = chipAt(help->pos());
        if (chip >= 0)
            QToolTip::showText(help->globalPos(), toolTipFor(chip), viewport(), chipRect(chip));
        else
            QToolTip::hideText();
        return true;
    }
    if (event->type() == QEvent::Leave && m_hovered != -1) {
        m_hovered = -1;
        viewport()->update();
        emit hovered(-1);
    }
    return QAbstractScrollArea::viewportEvent(event);
}

void TokenChipView::changeEvent(QEvent* event)
{
    QAbstractScrollArea::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        relayout();
}

} // namespace tw::ui
