#pragma once
// The band under the stage navigator that tells the current stage's story in two to four sentences
// around the live numbers (core's scenario::narrate). Numbers are bold links: hovering one shows its
// figure's formula, clicking it asks the stage's pane to show the figure's chain (figureActivated).
// It follows the document's derivations, the stage 5 pane's simulation and the viewer's units; in
// presentation mode it is set large.

#include "scenario/narration.h"

#include <QFrame>

#include <array>

class QTextBrowser;
class QUrl;

namespace tw::ui {

class Document;

class NarrationBar : public QFrame {
    Q_OBJECT
public:
    // wire may be null (stage 5 then never has the simulation's numbers).
    explicit NarrationBar(Document* document, QWidget* parent = nullptr);

    // The stage narrated, 0 (Text) … 4 (Wire), as MainWindow counts them.
    void setStage(int index);
    [[nodiscard]] int stage() const { return m_stage; }
    // Presentation mode: the sentences 15 % larger than the (already scaled) application font.
    void setLarge(bool large);
    [[nodiscard]] bool isLarge() const { return m_large; }

    [[nodiscard]] const scenario::Narration& narration() const { return m_narration; }
    // The shown stage's sentences as plain text.
    [[nodiscard]] QString text() const;
    [[nodiscard]] QTextBrowser* browser() const { return m_browser; }
    // Whether stage 5's sentences come from the wire pane's simulation of the current derivation.
    [[nodiscard]] bool usesSimulation() const { return m_usesSimulation; }
    // The figure under the pointer (empty when none) and the tooltip a figure gets: its label, value
    // and formula ("" for an id the narration does not cite).
    [[nodiscard]] QString hoveredFigure() const { return m_hovered; }
    [[nodiscard]] QString figureToolTip(const QString& id) const;

    // Narrates again from the document's derivation and the wire pane's result.
    void refresh();

signals:
    void figureActivated(const QString& id);
    // Shown or hidden (View → Show narration, its fold button, presentation mode): the panes' own
    // captions give way to it (MainWindow), so the stage's story is told in one band, not two.
    void shownChanged(bool shown);

protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    bool event(QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void render();
    void applyFont();
    void fitHeight();
    void onHighlighted(const QUrl& url);

    Document* m_document;
    QTextBrowser* m_browser = nullptr;
    scenario::Narration m_narration;
    int m_stage = 0;
    bool m_large = false;
    bool m_usesSimulation = false;
    QString m_hovered;
    std::array<int, 3> m_heightKey = {-1, -1, -1}; // stage, width, font size the kept height is for
    int m_keptHeight = 0;
};

} // namespace tw::ui
