#pragma once
// A one-line plain-text label that gives way rather than widen its column: cut with "…" at its width, the
// whole text in its tooltip. Its minimum width is that of "…", so a layout never grows for it.

#include <QLabel>

namespace tw::ui {

class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    explicit ElidedLabel(const QString& text, QWidget* parent = nullptr);

    void setFullText(const QString& text);
    [[nodiscard]] const QString& fullText() const { return m_full; }
    [[nodiscard]] QSize minimumSizeHint() const override;
    [[nodiscard]] QSize sizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void elide();

    QString m_full;
};

} // namespace tw::ui
