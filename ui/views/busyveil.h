#pragma once
// A veil over a drawing while its next picture is computed: the old picture dimmed under it, and where the
// eye is, a card that says what is being computed for which scenario ("Simulating the step of gpt3-175b…"),
// its progress and a Cancel button. It follows the drawing's size, never moves or resizes anything else,
// and lets no click through to the stale picture beneath.

#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace tw::ui {

class BusyVeil : public QWidget {
    Q_OBJECT
public:
    // Covers `drawing` (a child of it, raised above its other children).
    explicit BusyVeil(QWidget* drawing);

    // Shows the veil with `text` (rich text); progress starts at 0 and is shown once setProgress() is called.
    void showBusy(const QString& text, bool cancellable = true);
    void setProgress(double fraction); // 0…1
    void hideBusy();
    [[nodiscard]] bool isBusy() const { return isVisible(); }
    [[nodiscard]] QString text() const;
    [[nodiscard]] QPushButton* cancelButton() const { return m_cancel; }
    [[nodiscard]] QProgressBar* progressBar() const { return m_progress; }

signals:
    void cancelRequested();
    void busyShown();  // showBusy() was called
    void busyHidden(); // hideBusy() was called

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private:
    QWidget* m_card;
    QLabel* m_text;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
};

} // namespace tw::ui
