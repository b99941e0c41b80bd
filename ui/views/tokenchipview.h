#pragma once
// Tokens drawn as chips in reading order, wrapping at the view's width and breaking lines where
// the text has newlines. Shows either the decoded pieces or the ids (the id strip).

#include "text/bpe.h"

#include <QAbstractScrollArea>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tw::ui {

// A token's bytes made visible: space ·, newline ↵, tab →, bytes that are not whole UTF-8 as ⟨hex⟩.
[[nodiscard]] QString visiblePiece(std::string_view bytes);
// "4e 65 6c" for a token's bytes.
[[nodiscard]] QString hexBytes(std::string_view bytes);

class TokenChipView : public QAbstractScrollArea {
    Q_OBJECT
public:
    enum class Mode { Pieces, Ids };
    explicit TokenChipView(Mode mode, QWidget* parent = nullptr);

    // Shows tokens [first, first + count) of spans over text (both shared, never copied).
    void setTokens(std::shared_ptr<const std::string> text,
                   std::shared_ptr<const std::vector<text::TokenSpan>> spans, std::size_t first, std::size_t count);
    void clear();
    void setPlaceholderText(const QString& text);
    void setHighlighted(int chip); // -1 for none
    // The chip of the token followed through the stages (drawn with a thick outline and a dot); -1 for
    // none. pinned: the user clicked it (the outline is solid), else it follows the pointer (dashed).
    void setFollowed(int chip, bool pinned);
    [[nodiscard]] int followedChip() const { return m_followed; }
    // Index in the text of chip 0 (chip c is token firstToken() + c).
    [[nodiscard]] std::size_t firstToken() const { return m_first; }

    [[nodiscard]] int chipCount() const { return static_cast<int>(m_chips.size()); }
    [[nodiscard]] QString chipText(int chip) const;
    [[nodiscard]] text::TokenSpan chipSpan(int chip) const;
    [[nodiscard]] QRect chipRect(int chip) const; // in viewport coordinates
    [[nodiscard]] QString toolTipFor(int chip) const;
    [[nodiscard]] int chipAt(QPoint viewportPos) const; // -1 when none
    [[nodiscard]] int contentHeight() const { return m_contentHeight; }

signals:
    void hovered(int chip); // -1 when the mouse leaves the chips
    void clicked(int chip); // a left click on a chip

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool viewportEvent(QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Chip {
        QString label;
        QRect rect; // content coordinates
    };
    void relayout();
    void updateScrollBar();

    Mode m_mode;
    std::shared_ptr<const std::string> m_text;
    std::shared_ptr<const std::vector<text::TokenSpan>> m_spans;
    std::size_t m_first = 0;
    std::vector<Chip> m_chips;
    QString m_placeholder;
    int m_contentHeight = 0;
    int m_highlighted = -1;
    int m_hovered = -1;
    int m_followed = -1;
    bool m_pinned = false;
};

} // namespace tw::ui
