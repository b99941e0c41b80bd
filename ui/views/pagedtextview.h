#pragma once
// A large text shown read-only one page (~64 KB) at a time, with previous/next and a page
// indicator: no widget has to hold megabytes of text.

#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace tw::ui {

class PagedTextView : public QWidget {
    Q_OBJECT
public:
    static constexpr std::size_t kPageBytes = 64 * 1024;

    explicit PagedTextView(QWidget* parent = nullptr);

    // Shows bytes (any bytes: invalid UTF-8 appears as U+FFFD, NUL as ⟨00⟩), from page 0.
    void setText(std::shared_ptr<const std::string> bytes, const QString& title);
    void setPage(int page);
    [[nodiscard]] int page() const { return m_page; }
    [[nodiscard]] int pageCount() const { return static_cast<int>(m_pageStarts.size()); }
    // Byte range [begin, end) of the page shown.
    [[nodiscard]] std::pair<std::size_t, std::size_t> pageRange() const;
    [[nodiscard]] QString pageLabel() const;
    [[nodiscard]] QPlainTextEdit* textView() const { return m_view; }

signals:
    void pageChanged(int page);
    void backToEditorRequested();

private:
    std::shared_ptr<const std::string> m_bytes;
    std::vector<std::size_t> m_pageStarts;
    int m_page = 0;
    QLabel* m_title = nullptr;
    QLabel* m_indicator = nullptr;
    QPushButton* m_prev = nullptr;
    QPushButton* m_next = nullptr;
    QPlainTextEdit* m_view = nullptr;
};

} // namespace tw::ui
