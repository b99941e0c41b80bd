#pragma once
// Help → "How the numbers are computed": the model's own documentation (docs/model.md and the pages it
// links: memory.md, nccl.md …, compiled into the program) rendered inside the app, with its sections
// listed beside the text and a search field. Links between the pages open in place; links to the web
// open in the browser.

#include <QDialog>
#include <QStringList>

class QLineEdit;
class QListWidget;
class QLabel;
class QTextBrowser;
class QUrl;

namespace tw::ui {

class ModelHelp : public QDialog {
    Q_OBJECT
public:
    explicit ModelHelp(QWidget* parent = nullptr);

    // Shows page `page` ("model.md", "memory.md" …) scrolled to the heading that starts with `section`
    // ("§3", "§5.4"; empty: the top). False when the page or the section does not exist.
    bool showSection(const QString& page, const QString& section = {});
    // Selects the next (or previous) occurrence of `text` in the shown page, wrapping around; false when
    // the page does not contain it.
    bool find(const QString& text, bool backward = false);

    [[nodiscard]] QString currentPage() const { return m_page; }
    [[nodiscard]] QStringList sections() const { return m_headings; } // the shown page's headings
    [[nodiscard]] QTextBrowser* browser() const { return m_browser; }
    [[nodiscard]] QLineEdit* searchField() const { return m_search; }
    [[nodiscard]] QListWidget* sectionList() const { return m_sections; }
    // The pages compiled into the program (resource names under :/docs/).
    [[nodiscard]] static QStringList pages();

private:
    void openUrl(const QUrl& url);
    void loadPage(const QString& page);
    bool scrollToHeading(const QString& prefix);

    QTextBrowser* m_browser = nullptr;
    QLineEdit* m_search = nullptr;
    QListWidget* m_sections = nullptr;
    QLabel* m_status = nullptr;
    QString m_page;
    QStringList m_headings;
};

} // namespace tw::ui
