#pragma once
// An inline message bar: what went wrong (or what the program did) and where, without a modal
// dialog; the text stays readable until the next message or the user closes it.

#include <QFrame>

class QLabel;

namespace tw::ui {

class MessageBar : public QFrame {
    Q_OBJECT
public:
    enum class Severity { Info, Warning, Error };
    explicit MessageBar(QWidget* parent = nullptr);

    void showMessage(Severity severity, const QString& text);
    void clearMessage();
    [[nodiscard]] QString text() const;
    [[nodiscard]] Severity severity() const { return m_severity; }

signals:
    void messageShown(const QString& text);

private:
    QLabel* m_label = nullptr;
    Severity m_severity = Severity::Info;
};

} // namespace tw::ui
